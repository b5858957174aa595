"""Pair the copy CSE kept when the rewrites changed what it reads (old5 helper).

:mod:`cse_pairs` pairs the copy CSE kept with the one after instruction of the copies'
exact-subgraph fingerprint. When algebraic simplification rewrote what the copies read
(each copy on its own, before CSE on CPU), no after instruction has that fingerprint any
more, but the kept copy is still there under its metadata: the one open after instruction
with the copies' opcode, shape, op_name and source line, while the only open before
instructions with that key are the identical copies themselves.

Evidence, unseen clip_contrastive (JAX 0.4.30): two inlined ``log_softmax`` transposes
hold ``reduce.194``/``reduce.218 = f32[16] reduce(negate(Arg_2), constant(0))``,
op_name ``.../transpose(jvp(jit(log_softmax)))/reduce_sum[axes=(1,)]``. Algsimp turns
``reduce(negate(x))`` into ``negate(reduce(x))`` keeping the reduce's name, the CSE of the
pipeline merges reduce.218 into reduce.194, and fusion puts it in
``fused_computation.12`` (``reduce.19``, same op_name) on a select that algsimp built from
the one-hot labels: the oracle says reduce.194 fused, reduce.218 merged. Both were left
open ("simplified away").
"""

from __future__ import annotations

from collections import defaultdict

from .cse_pairs import _NO_CSE
from .cse_walk import post_order, reachable


def _key(n):
    if n.op_name is None or n.src is None:
        return None
    return (n.opcode, n.mdims, n.op_name, n.src)


def pair_meta_survivors(m) -> int:
    """Pair the post-order-first of several open identical before copies (one computation)
    with the only open after node of their metadata key, when no other open before node
    has that key. Returns the number of pairs made."""
    B, A = m.before, m.after
    by_key: dict[tuple, list[int]] = defaultdict(list)
    for n in B.nodes:
        if n.alias < 0 and m.b2a[n.idx] < 0 and n.operands and n.opcode not in _NO_CSE \
                and n.opcode not in ("broadcast", "constant", "iota"):
            k = _key(n)
            if k is not None:
                by_key[k].append(n.idx)
    groups = {k: g for k, g in by_key.items() if len(g) > 1 and
              len({B.nodes[i].vfp for i in g}) == 1 and len({B.nodes[i].ctx for i in g}) == 1}
    if not groups:
        return 0
    after: dict[tuple, list[int]] = defaultdict(list)
    for a in A.nodes:
        if a.alias < 0 and m.a2b[a.idx] < 0:
            k = _key(a)
            if k in groups:
                after[k].append(a.idx)
    live = reachable(B)
    rank = post_order(B, live)
    c = 0
    for k, al in after.items():
        if len(al) != 1:
            continue
        g = [i for i in groups[k] if live[i]]
        if len(g) < 2:
            continue
        keep = min(g, key=lambda i: (rank.get(i, len(B.nodes) + i), i))
        b, a = B.nodes[keep], A.nodes[al[0]]
        if b.inst.dimensions != a.inst.dimensions:
            continue
        c += m.pair(keep, al[0], "cse-copy")
    return c


def pair_moved_negates(m) -> int:
    """``reduce(negate(x))`` -> ``negate(reduce(x))``: an open before negate read only by a
    reduce that is paired pairs with an open after negate of its op_name and source line
    on the reduce partner's shape (the new one algsimp made; the old one lost its users and
    DCE deleted it: clip_contrastive ``negate.193`` removed at dump 0009's dce). Identical
    copies (CSE merged their reduces) take the next such negate."""
    B, A = m.before, m.after
    cands: dict[tuple, list[int]] = defaultdict(list)
    for a in A.nodes:
        if a.opcode == "negate" and a.alias < 0 and m.a2b[a.idx] < 0 and a.op_name:
            cands[(a.op_name, a.src, a.mdims)].append(a.idx)
    if not cands:
        return 0
    c = 0
    for n in B.nodes:
        if n.opcode != "negate" or n.alias >= 0 or m.b2a[n.idx] >= 0 or len(n.users) != 1:
            continue
        r = B.nodes[n.users[0]]
        y = m.b2a[r.idx]
        if r.opcode != "reduce" or not r.operands or r.operands[0] != n.idx or y < 0:
            continue
        for x in cands.get((n.op_name, n.src, A.nodes[y].mdims), ()):
            if m.a2b[x] < 0:
                c += m.pair(n.idx, x, "moved negate")
                break
    return c


def negated(m, src, survivor: dict[int, int]):
    """The after negate now holding the value of ``src`` (or of the copy CSE kept in its
    place), a ``reduce(negate(x))`` whose negate algsimp moved out (``pair_moved_negates``):
    the reduce kept its name but sums ``x``; a view of it reads ``negate(reduce(x))``
    (clip_contrastive ``reshape.195 = reshape(reduce.194)``: the oracle ends it where the
    new negate is fused). None otherwise."""
    B = m.before
    for i in (src.idx, survivor.get(src.idx, -1)):
        if i < 0 or B.nodes[i].opcode != "reduce" or not B.nodes[i].operands:
            continue
        o = B.nodes[i].operands[0]
        if m.how.get(o) == "moved negate" or moved_out(m, i, o):
            return m.after.nodes[m.b2a[o]]
    return None


def moved_out(m, r: int, o: int) -> bool:
    """The before negate ``o`` read by the reduce ``r`` is paired, by whichever step, with an
    after negate that the reduce's partner does not read: algsimp moved it out of the
    reduction. On 8 CPU devices the rewrite step pairs it before ``pair_moved_negates``
    runs (unseen gpt_rope_adamw: ``neg.31`` with ``negate.69`` in ``add_bitcast_fusion.6``,
    ``reduce_sum.518`` with ``reduce.103`` in ``multiply_reduce_fusion.23``)."""
    B, A = m.before, m.after
    y, z = m.b2a[o], m.b2a[r]
    if B.nodes[o].opcode != "negate" or y < 0 or z < 0 or A.nodes[y].opcode != "negate":
        return False
    return y not in A.nodes[z].operands
