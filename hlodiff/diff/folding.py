"""Literals consumed by constant folding.

XLA's constant folder evaluates an instruction whose operands are all compile-time
constants and replaces it by a new literal; the constants (and broadcasts or reshapes of
them) it read die in the same pass. Such a leaf is *folded* even though constant folding
never evaluates a bare constant or broadcast itself: its only job was to feed a value that
now is a literal. A look-alike literal elsewhere after optimization is not it.
"""

from __future__ import annotations

from .identities import ZERO_LITERALS
from .value_facts import NOT_FOLDED
from .view import Node, View

# rewritten by expander passes (scatter expanders build loops) before the folder runs
_EXPANDED = {"scatter", "sort", "select-and-scatter"}


def _ints(text: str | None) -> tuple[int, ...] | None:
    try:
        return tuple(int(x) for x in (text or "").strip("{} ").split(",") if x.strip())
    except ValueError:
        return None


# XLA's ReduceWindowRewriter (CPU and GPU pipelines, base_length 16) runs before the
# simplification pipeline's constant folder.
SCAN_BASE = 16


def _window(text: str | None) -> list[dict[str, str]] | None:
    """``size=1x20 pad=0_0x19_0`` as one dict of fields per dimension."""
    dims: list[dict[str, str]] = []
    for field in (text or "").strip("{} ").split():
        k, _, val = field.partition("=")
        parts = val.split("x")
        if dims and len(parts) != len(dims):
            return None
        dims = dims or [{} for _ in parts]
        for d, part in zip(dims, parts):
            d[k] = part
    return dims or None


def _scan_dim(inst, dims_of_operand: tuple[int, ...]) -> int | None:
    """The dimension a reduce-window scans (a cumulative sum, product, max...): one window
    dimension spans the operand's whole dimension with padding on one side only, stride 1,
    no dilation; every other is trivial. None for any other window."""
    win = _window(inst.attrs.get("window"))
    if not win or len(win) != len(dims_of_operand):
        return None
    scan = None
    for k, (d, n) in enumerate(zip(win, dims_of_operand)):
        if any(d.get(f, "1") != "1" for f in ("stride", "lhs_dilate", "rhs_dilate")) or \
                d.get("rhs_reversal", "0") != "0":
            return None
        if d.get("size", "1") == "1" and d.get("pad", "0_0") == "0_0":
            continue
        lo, _, hi = d.get("pad", "0_0").partition("_")
        if scan is not None or d.get("size") != str(n) or \
                not ((lo in (str(n - 1), str(n)) and hi == "0") or
                     (hi in (str(n - 1), str(n)) and lo == "0")):
            return None
        scan = k
    return scan


def rewritten_scan(v: View, n) -> bool:
    """``n`` is a scan (``jnp.cumsum`` and kin lower to one) longer than the rewriter's base
    length: ReduceWindowRewriter turns it into pad, reshape and two short scans before the
    folder runs, and the folder leaves ``pad(broadcast(c), c')`` alone, so a scan of a
    constant is never evaluated. fresh7 multi_key_sort (jax 0.10.2, CPU): ``cumsum`` of
    ``broadcast(1)``, s32[8,20]: dump 0007 (reduce-window-rewriter) pads it to 32 and scans
    tiles of 16; the broadcast is fused at dump 0021 and is in the optimized module."""
    if n.opcode != "reduce-window" or not n.operands:
        return False
    shape = v.nodes[n.operands[0]].inst.shape
    dims = tuple(shape.dims) if shape is not None else ()
    if not dims:
        return False
    k = _scan_dim(n.inst, dims)
    return k is not None and dims[k] > SCAN_BASE


def scan_rewriter_ran(after) -> bool:
    """The optimized module holds a scan tile of the rewriter (a window of SCAN_BASE
    elements padded SCAN_BASE - 1 on one side): this XLA has the pass (JAX 0.4.30's CPU
    pipeline has none, and its folder evaluates such a scan)."""
    tile = str(SCAN_BASE)
    for c in after.computations:
        for i in c.instructions:
            if i.opcode != "reduce-window":
                continue
            for d in _window(i.attrs.get("window")) or ():
                lo, _, hi = d.get("pad", "0_0").partition("_")
                if d.get("size") == tile and str(SCAN_BASE - 1) in (lo, hi):
                    return True
    return False


def expanded_first(v: View, n) -> bool:
    """``n`` is rewritten by an expander pass before constant folding can evaluate it.

    Scatters, sorts and select-and-scatters always. A gather only when it is "simple"
    (XLA's GatherExpander in kEliminateSimpleGathers mode, run in the simplification
    pipeline before the folder): its loop would run once (one index vector) or each slice
    is the whole operand. Any other gather of constants is folded directly (cpu3 helper).
    zoo/old sort_argsort: ``gather(constant({8, 16}), constant({{0}, {1}}))`` (two index
    vectors) is "folded (constant_folding)" at dump 0009 with its literal operands;
    gather_embedding's ``gather(constant({50, 16}), constant({{0}}))`` (one) is
    "rewritten (gather_expander)" at dump 0009 into a one-trip loop."""
    if n.opcode in _EXPANDED:
        return True
    if n.opcode != "gather":
        return False
    inst = n.inst
    if len(inst.operands) < 2:
        return True
    idx_shape = v.nodes[n.operands[1]].inst.shape if len(n.operands) > 1 else None
    op_shape = v.nodes[n.operands[0]].inst.shape if n.operands else None
    ivd = _ints(inst.attrs.get("index_vector_dim"))
    sizes = _ints(inst.attrs.get("slice_sizes"))
    if idx_shape is None or op_shape is None or not ivd or sizes is None:
        return True  # cannot tell: keep the cautious answer
    trips = 1
    for d, size in enumerate(idx_shape.dims):
        if d != ivd[0]:
            trips *= size
    return trips == 1 or tuple(sizes) == tuple(op_shape.dims)


def consumed_by_folding(v: View, fold: bytearray, live: bytearray,
                        after=None) -> bytearray:
    """1 for constant-valued leaves (constants, their broadcasts/reshapes: what the folder
    leaves alone) whose every live user is evaluated by constant folding, directly or
    through other such leaves. ``after``: the optimized module (whether long scans were
    rewritten before the folder ran)."""
    nodes = v.nodes
    out = bytearray(len(nodes))
    folds = bytearray(len(nodes))  # 1: the folder evaluates this node itself
    scans = after is not None and scan_rewriter_ran(after)
    for n in nodes:
        if n.alias < 0 and fold[n.idx] and n.opcode not in NOT_FOLDED and \
                not expanded_first(v, n) and not (scans and rewritten_scan(v, n)):
            folds[n.idx] = 1
    for n in reversed(nodes):  # users before operands
        i = n.idx
        if n.alias >= 0 or not fold[i] or not live[i] or n.opcode not in NOT_FOLDED or \
                n.opcode in ("parameter", "tuple"):
            continue
        users = [u for u in n.users if live[u]]
        if users and all(folds[u] or out[u] for u in users):
            out[i] = 1
        elif n.opcode == "constant" and users and all(negated(v, fold, n.idx, u) for u in users):
            out[i] = 1
    return out


def negated(v: View, fold: bytearray, c: int, u: int) -> bool:
    """Constant ``c``'s user ``u`` subtracts it (directly or as a broadcast) from a value
    that is not a compile-time constant. Algebraic simplification canonicalizes ``x - c``
    to ``x + negate(c)`` (``x - broadcast(c)`` to ``x + broadcast(negate(c))``) and the
    constant folder then evaluates ``negate(c)``: ``c`` dies folded, not "simplified away"
    (cpu3 helper). unseen dropout_ln_rng (jax 0.10.2, CPU), erf_inv: dump 0012 holds
    ``negate.2 = f32[] negate(constant.193)`` (2.5, was ``subtract(erf_inv.88,
    broadcast(2.5))``), dump 0013 (constant_folding) folds it: "folded by constant_folding"."""
    if str(v.nodes[c].inst.literal).strip() in ZERO_LITERALS:
        return False  # x - 0 is x: algsimp removes it with its literal (old3 fixture)
    un = v.nodes[u]
    if un.opcode == "broadcast" and un.alias < 0:
        users = un.users
        return bool(users) and all(_subtracts(v, fold, u, w) for w in users)
    return _subtracts(v, fold, c, u)


def _subtracts(v: View, fold: bytearray, rhs: int, u: int) -> bool:
    un = v.nodes[u]
    return un.opcode == "subtract" and len(un.operands) == 2 and un.operands[1] == rhs and \
        un.operands[0] != rhs and not fold[un.operands[0]]


def scaling_op(B: View, cv: bytearray, n) -> str:
    """The opcode algebraic simplification sees when it regroups constant chains: a
    floating-point division by a compile-time constant is a multiplication by its
    reciprocal (``x / c`` -> ``x * (1/c)``), which then joins ``(x * c1) * c2`` regrouping
    and constant folding (bf16_loss_scaling's H100 dump 0009: ``(x / 1024) * 0.01`` becomes
    ``x * 9.76562478e-06``; ``(s / 128) * 1024`` becomes ``s * 8``)."""
    if n.opcode == "divide" and len(n.operands) == 2 and cv[n.operands[1]] and \
            not cv[n.operands[0]] and n.dims.split("[", 1)[0] in ("f16", "bf16", "f32", "f64"):
        return "multiply"
    return n.opcode


def divisor_only(B: View, cv: bytearray, n) -> bool:
    """A constant (or a broadcast of one) read only as the divisor of floating-point
    divisions (directly or through broadcasts): algsimp's first round rewrites each
    ``x / c`` as ``x * (1/c)`` with a new reciprocal constant, so the constant dies there,
    before CSE could merge it (diffusion_block's H100 dumps: ``constant.29`` of ``_var``
    rewritten by algsimp)."""
    if n.opcode not in ("constant", "broadcast") or not cv[n.idx] or not n.users:
        return False
    for u in n.users:
        un = B.nodes[u]
        if un.opcode == "broadcast":
            if not divisor_only(B, cv, un):
                return False
        elif scaling_op(B, cv, un) != "multiply" or un.opcode != "divide" or \
                un.operands[1] != n.idx:
            return False
    return True


def minuend_regrouped(B: View, cv: bytearray, srcs: list[int], un) -> bool:
    """``un`` is ``c1 - x`` (``c1`` among ``srcs``, ``x`` not a constant) on integers, and a
    user of it takes or adds another constant: algsimp regroups ``(c1 - x) - c2`` as
    ``(c1 - c2) - x`` and constant folding evaluates ``c1 - c2`` (loops4). A reverse scan's
    index ``10 - i - 1``: rk4_ode_fori (jax 0.10.2) dump 0017 -> 0018 folds ``%add.20 =
    add(%constant.107, %constant.104.clone.2)`` (10 and -1, hoisted out of the body by
    while-loop-invariant-code-motion) into ``%constant.146 = s32[] constant(9)``."""
    if un.opcode != "subtract" or len(un.operands) != 2 or un.operands[0] not in srcs or \
            cv[un.operands[1]] or un.dims.split("[", 1)[0][:1] not in ("s", "u"):
        return False
    for w in un.users:
        wn = B.nodes[w]
        if wn.opcode in ("subtract", "add") and len(wn.operands) == 2 and \
                (wn.opcode == "add" or wn.operands[0] == un.idx) and \
                any(cv[o] for o in wn.operands if o != un.idx):
            return True
    return False


def reassociated(B: View, cv: bytearray, b: Node) -> bool:
    """b is a constant operand of a chain ``(x op c1) op c2`` (op: multiply or add):
    algsimp regroups it as ``x op (c1 op c2)`` and constant folding evaluates the
    constant part, consuming both literals. (Values computed from iotas are not constants
    to the folder: fresh 6 diffusion_timestep_loss ``(float(iota) * c1) / 8``.)"""
    if not cv[b.idx]:
        return False
    srcs = [b.idx] + [u for u in b.users if B.nodes[u].opcode == "broadcast"]
    op = scaling_op  # gpu2: x / c is x * (1/c) to algsimp
    for u in (u for x in srcs for u in B.nodes[x].users):
        un = B.nodes[u]
        if minuend_regrouped(B, cv, srcs, un):  # loops4: (c1 - x) - c2
            return True
        k = op(B, cv, un)
        if k not in ("multiply", "add") or len(un.operands) != 2 or \
                (un.opcode == "divide" and un.operands[1] in srcs):
            continue  # (a constant divisor becomes its reciprocal first: rewritten)
        other = un.operands[1] if un.operands[0] in srcs else un.operands[0]
        on = B.nodes[other]
        if cv[other]:
            continue
        if op(B, cv, on) == k and any(cv[o] for o in on.operands):
            return True  # (x op c1) op b
        for w in un.users:
            wn = B.nodes[w]
            if op(B, cv, wn) == k and any(cv[o] and o != u for o in wn.operands):
                return True  # (x op b) op c2
    return False
