"""A literal the before module holds once, found again only inside kernels (cpu4 helper).

Fusion copies a constant into every kernel that reads it; the top-level original is
deleted. When no reader of the constant was paired with one instruction after optimization
(repeated layers: the matcher leaves twins open, or names several equally likely kernels),
nothing leads from the constant to its copies, and it was reported "simplified away".

Evidence, fresh jax 0.10.2 remat_dots_no_batch: the before module holds one
``%constant.13 = f32[] constant(3)`` (gelu's derivative, read through ``broadcast.9`` by
the recomputed ``mul.178``, ``mul.210``, ``mul.242`` of three layers, which the matcher
could not tell apart); the final module holds ``constant(3)`` three times, each inside a
``multiply_add_fusion``; the pass dumps: constant.13 ``fused@fusion`` (dump 0034), its value
in multiply_add_fusion.2, .1 and the unnumbered one. Likewise ndcg_argsort's ``-0.125`` and
triplet_hard_mining's ``2``.

When exactly one live before constant has a (literal, shape), every after constant with it
lives inside a fusion with no before partner, every reader of the constant (through
broadcasts) is paired with an op of its own opcode, and a copy is read by such an op, the
before constant is paired with the first such copy; the other copies are named by the
duplicates step. A reader left open or rebuilt may have taken the literal with it: x / 7
is rewritten x * (1/7), and a 7 folded elsewhere is not this one (fresh
stochastic_round_grads, unseen dropout_ln_rng); such constants are left to the other steps. A literal held twice
before, or also at top level after, is left to the other steps (CSE twins, folding).
"""

from __future__ import annotations

from collections import defaultdict

HOW = "lone literal"


def pair_lone_literals(m) -> int:
    """Pair each unique open before constant with its only-fused copies after."""
    B, A = m.before, m.after
    before: dict[tuple, list[int]] = defaultdict(list)
    for n in B.nodes:
        if n.alias < 0 and n.opcode == "constant" and n.inst.literal is not None:
            before[(n.inst.literal, n.mdims)].append(n.idx)
    after: dict[tuple, list[int]] = defaultdict(list)
    for n in A.nodes:
        if n.alias < 0 and n.opcode == "constant" and n.inst.literal is not None:
            k = (n.inst.literal, n.mdims)
            if k in before:
                after[k].append(n.idx)
    c = 0
    for k, al in after.items():
        bl = before[k]
        if len(bl) != 1:
            continue
        b = bl[0]
        if m.b2a[b] >= 0 or not B.nodes[b].users:
            continue
        if any(A.nodes[a].fusion < 0 or m.a2b[a] >= 0 for a in al):
            continue
        # every reader of the constant lives on with its opcode, and a copy is read by such
        # an op (a literal algsimp replaced, x / c -> x * (1/c), leaves its value only where
        # some other computation made it)
        want = _readers(B, b)
        if not want or any(m.b2a[r] < 0 or A.nodes[m.b2a[r]].opcode != B.nodes[r].opcode
                           for r in want):
            continue  # a reader gone or rebuilt: the literal may have gone with it
        ops = {B.nodes[r].opcode for r in want}
        hits = [a for a in al if {A.nodes[r].opcode for r in _readers(A, a)} & ops]
        if hits:
            c += m.pair(b, hits[0], HOW)
    return c


def _readers(v, i: int) -> set[int]:
    """The instructions reading node ``i``, through broadcasts."""
    out: set[int] = set()
    todo, seen = [i], 0
    while todo and seen < 64:
        n = v.nodes[todo.pop()]
        seen += 1
        for u in n.users:
            un = v.nodes[u]
            if un.opcode == "broadcast":
                todo.append(u)
            else:
                out.add(u)
    return out
