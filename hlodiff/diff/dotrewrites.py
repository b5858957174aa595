"""Dots that algebraic simplification rebuilt around a transpose.

XLA's algebraic simplifier rewrites ``transpose(dot(a, b))`` as ``dot(b, a)`` (the dot's
dimension numbers swapped, so it produces the transposed result directly). The new dot is
a new instruction carrying the *transpose's* metadata (op_name), the old dot and the
transpose both disappear in that one pass. Neither was "simplified away": both live on in
the new dot. This module finds those pairs from the two modules alone:

* before: a ``transpose`` whose operand is a ``dot`` read by nothing else;
* after: a ``dot`` with the transpose's dimensions that no other before instruction
  claims (unmatched, or matched to the transpose or the dot), reading the same values as
  the old dot (the after instructions holding the old dot's operands, seen through
  layout-only ops), in either order.

Candidates are scored by shared operands (and the transpose's op_name); repeated code
(layers with one op_name) is told apart by the operands. Ties are reported
``uncertain`` with the tied dots as candidates.
"""

from __future__ import annotations

from . import splitk
from .dot_inputs import Solo, after_inputs, before_inputs, copies_by_fp, strip_after, top_of
from .match import Matching
from .reshard_paths import resharded_sources
from .view import Node, View


def _own_orientation(m: Matching, d: Node, x: Node, dup: dict[int, set[int]]) -> bool:
    """The after dot ``x`` is ``d`` itself, not ``dot(b, a)``: the same dimension numbers
    and each operand read where ``d``'s operand at that position lives (and not where the
    other one does). In a partitioned module names tell nothing (the partitioner renames
    every dot), and a square dot has the transposed shape too (cpu8: zoo mlp_deep on 8 CPU
    devices, ``dot_general.19 = f32[128,128] dot(%select_n.4, %jit_relu_.3),
    lhs_contracting_dims={0}``: the partitioner's ``dot.8 = dot(%select_n.7, %max.21)``,
    the same dims, lives on to the end (dump 0006 to the final module); no algsimp rebuilt it
    around ``transpose.6``)."""
    if d.sig is None or x.sig is None or d.sig[6] != x.sig[6] or \
            len(d.operands) != 2 or len(x.operands) != 2:
        return False
    w0, w1 = (before_inputs(m, Solo(d, k), dup) for k in (0, 1))
    a0 = {strip_after(m.after, x.operands[0]), top_of(m.after, x.operands[0])}
    a1 = {strip_after(m.after, x.operands[1]), top_of(m.after, x.operands[1])}
    return bool(a0 & w0) and bool(a1 & w1) and not (a0 & w1) and not (a1 & w0)


def _returns_transposed(A: View, x: Node, d: Node, t: Node, nparts: int) -> bool:
    """Does the gemm kernel of ``x`` hand on the transposed value (its root a bitcast to
    ``t``'s shape, not ``d``'s), though ``x`` reads ``d``'s operands in ``d``'s order?
    gemm-fusion-swap-operands swaps back the operands algsimp swapped for
    transpose(dot(a, b)) and returns the product through a bitcast in the transposed
    layout (fresh 24 muon on 8 H100s: ``dot.77 = f32[128,512]{0,1}`` in
    ``gemm_fusion_dot.15 = f32[512,128]{1,0}``, the value of ``transpose.9``)."""
    from .partition import holds_shape
    ks = _kernel_shape(A, x)
    if ks is x.inst.shape or ks.dims == d.inst.shape.dims:
        return False
    return holds_shape(t.inst.shape, ks, nparts) and not holds_shape(d.inst.shape, ks, nparts)


def _kernel_shape(A: View, x: Node):
    """The shape of what a dot's value is once it leaves its kernel: a gemm kernel whose
    root is a bitcast of the dot (gemm-fusion-swap-operands computes the transposed
    product in the other layout) returns the bitcast's shape (zoo mlp_gelu_adam on 8 H100s:
    ``dot.14 = f32[256,8]{0,1}``, root ``bitcast.45 = f32[8,256]``; gpu8b)."""
    if x.fusion >= 0 and A.resolve(x.fusion) == x.idx:
        return A.nodes[x.fusion].inst.shape
    return x.inst.shape


def transposed_dots(m: Matching) -> tuple[dict[int, int], dict[int, list[int]]]:
    """Before node (the transpose and its dot) -> the after dot that replaced both (-1:
    several candidates tie), and the tied candidates of those nodes."""
    B, A = m.before, m.after
    dots_by_dims: dict[str, list[Node]] = {}
    sums = splitk.units(A)  # h100: a split-K dot's value is the reduce of its partials
    for x in A.nodes:
        if x.opcode == "dot":
            y = A.nodes[sums[x.idx][0]] if x.idx in sums else x
            dots_by_dims.setdefault(y.mdims, []).append(y)
    if not dots_by_dims:
        return {}, {}
    dot_names = {x.op_name for xs in dots_by_dims.values() for x in xs if x.op_name}
    from .partition import holds_shape, num_partitions
    nparts = num_partitions(B.module, A.module)  # shard helper: matching ignores dims then
    scored: list[tuple[float, int, int, int]] = []
    dup: dict[int, set[int]] | None = None
    for t in B.nodes:
        if t.opcode != "transpose" or len(t.operands) != 1:
            continue
        d = B.nodes[t.operands[0]]
        if d.opcode != "dot" or d.users != [t.idx]:
            continue
        yt = m.b2a[t.idx]
        # the transpose lives on as itself (or a bitcast/copy) -- unless it was paired by
        # op_name alone with an after transpose while an after dot carries that op_name
        # too: the partitioner's resharding and layout assignment add transposes that
        # carry the op_name of the value they move (gpu8 fresh 9 soft_moe_slots:
        # transpose.13's value is gemm_fusion_dot.27's dot.42, which carries its op_name;
        # transpose.52.1, also carrying it, reads that dot's result). Without such a dot
        # the transpose is its own (fresh 4 gqa_attention_step: transpose.14 fused into a
        # gemm kernel).
        by_name_only = m.how.get(t.idx) == "rewrite" and t.op_name in dot_names
        if yt >= 0 and A.nodes[yt].opcode != "dot" and not (
                by_name_only and A.nodes[yt].opcode == "transpose"):
            continue
        if dup is None:
            dup = copies_by_fp(A)
        want = before_inputs(m, d, dup)
        same = dots_by_dims.get(t.mdims, [])
        groups = [same]
        if nparts > 1:  # gpu8b: dots of other dims only when none of the transpose's own
            # dims qualifies: a shard whose unit dims algsimp squeezed (gpt_rope_adamw on
            # 8 H100s: transpose.24 = f32[8,16,32] is gemm_fusion_dot.114's f32[16,32]), a
            # gemm kernel returning its dot through a bitcast (_kernel_shape)
            groups.append([x for xs in dots_by_dims.values() if xs is not same for x in xs])
        n0 = len(scored)
        for x in (x for g in groups if len(scored) == n0 for x in g):  # next group if none
            owner = m.a2b[x.idx]
            if owner >= 0 and owner not in (t.idx, d.idx):
                continue
            if x.name == d.name:
                continue  # the dot kept its name: it was kept, not rebuilt
            if nparts > 1 and not holds_shape(t.inst.shape, _kernel_shape(A, x), nparts):
                continue  # (per-device) the dot's own shape, not the transposed one
            if nparts > 1 and _own_orientation(m, d, x, dup) and not (
                    _returns_transposed(A, x, d, t, nparts)):
                continue  # cpu8: the dot itself, partitioned (renamed), in its own order
            xd = A.nodes[x.operands[0]] if x.opcode == "reduce" else x  # (split-K)
            shared: float = len(want & after_inputs(A, xd))
            if shared == 0 and nparts > 1:  # shard4: read through the partitioner's
                # resharding (reshard_paths): weaker evidence than a direct read
                shared = 0.25 * len(want & resharded_sources(A, x))
            if shared == 0 and owner < 0:
                continue
            score = shared + (0.5 if x.op_name == t.op_name else 0.0) + (2 if owner >= 0 else 0)
            scored.append((score, t.idx, d.idx, x.idx))
        if nparts > 1 and len(scored) > n0 and scored[n0][3] not in {x.idx for x in same}:
            top = max(sc[0] for sc in scored[n0:])
            if sum(sc[0] == top for sc in scored[n0:]) > 1:
                del scored[n0:]  # other dims are a guess: one that ties decides nothing
    scored.sort(key=lambda s: -s[0])
    out: dict[int, int] = {}
    ties: dict[int, list[int]] = {}
    taken: set[int] = set()
    best: dict[int, float] = {}
    for score, ti, di, xi in scored:
        if ti in best:
            if best[ti] == score and out.get(ti, -1) != xi:
                # two new dots read the same values: the modules cannot tell which
                lst = ties.setdefault(ti, [out[ti]] if out.get(ti, -1) >= 0 else [])
                lst.append(xi)
                ties[di] = lst
                out[ti] = out[di] = -1
            continue
        if xi in taken:
            continue
        best[ti] = score
        out[ti] = out[di] = xi
        taken.add(xi)
    return out, ties
