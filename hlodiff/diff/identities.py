"""Literals algebraic simplification removes with the identity they feed (old2 helper).

``x + broadcast(0)``, ``x - broadcast(0)``, ``x * broadcast(1)``, ``x / broadcast(1)``:
algsimp replaces each by x in its first round, and the broadcast (and its constant) lose
their users before CSE runs. Such a copy is no candidate for the copy CSE keeps.

Evidence (JAX 0.4.30, CPU, topk_ranking_loss): logaddexp's ``broadcast.27 =
broadcast(Arg_1.24)`` with Arg_1.24 bound to ``constant.44 = 0``, read only by
``subtract.28 = subtract(Arg_0.23, broadcast.27)``: rewritten at algsimp in the pass dumps;
``broadcast.25`` (read by ``maximum``) is the copy that reached CSE and was fused.
"""

from __future__ import annotations

from .constvals import literal_through
from .view import View

ZERO_LITERALS = {"0", "-0", "0.0", "-0.0", "false"}
_ONE = {"1", "1.0", "true"}


def _literal(v: View, i: int) -> str | None:
    lit = literal_through(v, i, ("broadcast", "reshape", "bitcast"))
    return None if lit is None else str(lit).strip()


def _identity_use(v: View, u: int, i: int, lit: str, spmd: bool = False) -> bool:
    n = v.nodes[u]
    if len(n.operands) != 2 or n.operands[0] == n.operands[1] or n.dims != v.nodes[i].dims:
        return False
    rhs = n.operands[1] == i
    if n.opcode == "add":
        return lit in ZERO_LITERALS
    if n.opcode == "subtract":
        return rhs and lit in ZERO_LITERALS
    if n.opcode == "multiply":
        return lit in _ONE
    if n.opcode == "divide":
        return rhs and lit in _ONE
    if n.opcode == "maximum" and spmd:  # gpu8b: max(x, -inf) -> x (simclr_nt_xent on 8 H100s,
        # dump 0005: log_softmax's max.2 = broadcast(-inf) rewritten into reduce_max.0)
        return lit == "-inf"
    if n.opcode == "minimum" and spmd:
        return lit in ("inf", "+inf")
    return False


def keeps_infinite_bounds(after: View) -> bool:
    """The compiler's algsimp leaves ``max(x, -inf)`` / ``min(x, inf)`` alone: the module
    after optimization still computes one (cpu6). XLA of JAX 0.4.30 does: zoo/old
    cse_repeated's ``maximum.0 = maximum(param_1.4, broadcast.7)``, ``broadcast.7`` of
    ``constant.0 = -inf``, fused; the pass dumps there merge the before ``-inf`` constants
    by CSE (they were "fused" once the identity rule took them for removed)."""
    for a in after.nodes:
        if a.opcode in ("maximum", "minimum") and len(a.operands) == 2:
            want = ("-inf",) if a.opcode == "maximum" else ("inf", "+inf")
            if any(_literal(after, o) in want for o in a.operands):
                return True
    return False


def removed_with_identities(v: View, after: View | None = None, spmd: bool = False) -> set[int]:
    """Broadcasts of a literal whose every user is an identity on it (see above).

    ``spmd`` (a partitioned module, gpu8b, or XLA:GPU's pipeline): also ``max(x, -inf)``
    and ``min(x, inf)``, and the literal under such a broadcast when nothing else reads it.
    The partitioner's spmd-simplify algsimp removes them before the Shardy round trip,
    which drops what is dead before it merges literals (clip_contrastive on 8 H100s, dumps
    0006/0017). On one GPU the first algsimp replaces the max by ``x`` and deletes the
    operands left unused with it, before the first CSE (zoo mlp_deep on one H100, dump
    0008: log_softmax's ``max.6 = broadcast(constant.14 = -inf)`` gone into
    ``reduce_max.0``; the other ``-inf``, the reduce's init, is the one fused). Not
    elsewhere: XLA:CPU of JAX 0.4.30 keeps log_softmax's max with -inf, and its CSE merges
    a literal whose reader algsimp removed before DCE deletes it (zoo old cnn_small
    constant.55, cse_repeated constant.6: merged at cse). Never where ``after``, the
    module after optimization, still computes such a max or min (cpu6)."""
    spmd = spmd and (after is None or not keeps_infinite_bounds(after))
    out: set[int] = set()
    for n in v.nodes:
        if n.alias >= 0 or n.opcode != "broadcast" or not n.users:
            continue
        lit = _literal(v, n.idx)
        if lit is None:
            continue
        if all(_identity_use(v, u, n.idx, lit, spmd) for u in n.users):
            out.add(n.idx)
    for i in list(out) if spmd else ():  # gpu8b: the literal under it, nothing else reading
        n = v.nodes[i]
        while n.operands and v.nodes[n.operands[0]].opcode in ("constant", "broadcast",
                                                               "reshape", "bitcast"):
            o = v.nodes[n.operands[0]]
            if not o.users or any(u not in out for u in o.users):
                break
            out.add(o.idx)
            n = o
    return out


# (exponent bits, mantissa bits) of each float type: reduce-precision to its own type's
# precision rounds nothing, and algsimp removes it (jax.checkpoint name policies mark the
# values they save with such a reduce-precision: fresh 11 remat_combined_policy_block)
_OWN_BITS = {"f32": ("8", "23"), "bf16": ("8", "7"), "f16": ("5", "10"), "f64": ("11", "52")}


def identity_operand(v: View, b, spmd: bool, after: View | None = None):
    """The operand ``x`` that the identity ``b`` passes on (``x + 0``, ``x * 1``, a
    reduce-precision to the type's own precision, and on a partitioned module
    ``max(x, -inf)``, ``min(x, inf)``), else None. Algebraic
    simplification replaces ``b`` by ``x``: its value lives where ``x``'s does (fresh 7
    parallel_attn_mlp_block on 8 H100s, dump 0005: softmax's ``max.3 =
    maximum(reduce_max.7, max.2)``, ``max.2`` a broadcast of -inf, is rewritten into
    ``reduce_max.7``)."""
    if b.opcode == "reduce-precision" and len(b.operands) == 1:
        sh, at = b.inst.shape, b.inst.attrs
        own = _OWN_BITS.get(sh.element_type or "") if sh is not None else None
        if own is not None and (at.get("exponent_bits"), at.get("mantissa_bits")) == own:
            return v.nodes[b.operands[0]]
        return None
    if b.opcode not in ("add", "subtract", "multiply", "divide", "maximum", "minimum") or \
            len(b.operands) != 2 or b.operands[0] == b.operands[1]:
        return None
    spmd = spmd and (after is None or not keeps_infinite_bounds(after))
    for k, i in enumerate(b.operands):
        lit = _literal(v, i)
        if lit is not None and _identity_use(v, b.idx, i, lit, spmd):
            x = v.nodes[b.operands[1 - k]]
            return x if _literal(v, x.idx) is None else None
    return None


def removed_fate(fb, f, b) -> None:
    """Fill ``f`` for ``b``, a literal (or a view of one) that algebraic simplification
    deleted with the identity it fed (:func:`removed_with_identities`): the identity was
    replaced by its other operand, and ``b``, left without readers, went with it. The value
    it stood for is that operand's, where the identity's fate names it."""
    v = fb.B
    n, user = b, None
    for _ in range(6):
        ids = [u for u in n.users if v.nodes[u].opcode in _IDENTITY_OPS]
        if ids:
            user = v.nodes[ids[0]]
            break
        nxt = [u for u in n.users if v.nodes[u].opcode in ("broadcast", "reshape", "bitcast")]
        if not nxt:
            break
        n = v.nodes[nxt[0]]
    f.fate = "rewritten"
    f.reason = "removed by algebraic simplification with the identity it fed"
    if user is not None:
        uf = fb._survivor_fate(user)
        f.after, f.fusion, f.fusion_kind = uf.after, uf.fusion, uf.fusion_kind
        f.reason = (f"removed by algebraic simplification with {user.name} "
                    f"({user.opcode} by {_literal(v, b.idx)}, an identity replaced by its other "
                    "operand)")


_IDENTITY_OPS = ("add", "subtract", "multiply", "divide", "maximum", "minimum")


def renamed_survivors(fb, out: list) -> None:
    """Swap the fates of an identity ``b`` and the operand ``x`` it passed on when both
    have one opcode (``subtract(subtract(w, u), 0)``). Algsimp replaces ``b`` by ``x``
    through ``ReplaceInstruction``, and XLA gives the replacement the old name when the
    opcodes agree: from then on ``x`` computes under ``b``'s name, and ``x``'s own name is
    gone. The value is where it was; the records follow the names the dumps carry.

    Evidence (JAX 0.4.30, CPU, fresh 22 remat_nfnet, dump 0009 after algsimp): SGD's
    ``w - lr * (...) - 0.0`` for the biases; ``subtract.8194 = subtract(subtract.8193,
    broadcast(0))`` became ``subtract.8194 = subtract(Arg_0.1, multiply.8192)``, and
    ``subtract.8193`` is gone. Only one such identity per ``x``: with two, which name
    ``x`` ends with depends on the order algsimp visits them."""
    v = fb.B
    pairs: dict[int, list[int]] = {}
    for b in v.nodes:
        f = out[b.idx]
        if f.fate != "rewritten" or b.opcode not in _IDENTITY_OPS or f.after is None:
            continue
        x = identity_operand(v, b, fb.nparts > 1 or fb.gpu_cse, fb.A)
        if x is not None and x.opcode == b.opcode and x.comp == b.comp and x.site == b.site and \
                out[x.idx].fate in ("kept", "fused") and out[x.idx].after == f.after:
            pairs.setdefault(x.idx, []).append(b.idx)
    for xi, bs in pairs.items():
        if len(bs) != 1:
            continue
        fx, fb_ = out[xi], out[bs[0]]
        kernel = fx.fusion or fx.after
        fb_.fate, fb_.fusion, fb_.fusion_kind = fx.fate, fx.fusion, fx.fusion_kind
        fb_.reason = (f"an identity on {fx.before}, which algebraic simplification removed; "
                      f"{fx.before} took its name and computes it " +
                      (f"inside {fx.fusion_kind} fusion {kernel}" if fx.fusion else f"as {kernel}"))
        fx.fate = "rewritten"
        fx.reason = (f"renamed {fb_.before} by algebraic simplification, which replaced that "
                     f"identity by it; the value is in {kernel}")
