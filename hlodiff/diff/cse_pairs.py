"""Pair the copy CSE kept: identical before copies, one identical after instruction (old2).

The fingerprint matcher pairs an exact subgraph only when it is unique on both sides. Code
repeated by layers or by inlined calls (the same rotary position table computed in every
attention layer, say) is several identical copies before; CSE keeps one, and fusion may
copy that one into a kernel. The after instruction with the same exact-subgraph fingerprint
is then the copy CSE met first (XLA's HloCSE walks the computation in post order, see
:mod:`cse_walk`), and the others were merged into it.

Evidence (JAX 0.4.30, CPU, gpt_rope_adamw): five copies of ``negate(iota)`` ->
``convert`` in the entry (``negate.197``, ``negate.240``, ...); the dump after cse keeps
``negate.197`` only, and the module after optimization computes it once, inside
``fused_computation.164`` (``negate.82 = s32[16] negate(iota.48)``). Left unpaired, every
copy looked "simplified away".

Only instructions with operands are paired here: a leaf (iota, constant) has look-alikes
that algebraic simplification rewrote on their own (``reshape(iota)`` becomes an iota);
the matcher's top-down step pairs the leaf of the kept copy from its user. Nor broadcasts of
a constant: algsimp takes many of them away with their users (``x + broadcast(0)``,
regrouped ``(x * c1) * c2``) before CSE meets them (transformer_scan_layers, JAX 0.4.30:
``broadcast.125`` rewritten at algsimp, its twin ``broadcast.97`` fused).
"""

from __future__ import annotations

from collections import defaultdict

from .cse_walk import post_order, reachable

# never merged by CSE (side effects, control flow, calls): value_facts.NO_CSE, which this
# module cannot import (value_facts imports the matcher)
_NO_CSE = {"parameter", "rng", "rng-bit-generator", "custom-call", "infeed", "recv", "send",
           "outfeed", "after-all", "while", "conditional", "call", "all-reduce"}


def _merges(B, n) -> bool:
    """A node whose identical copies CSE merges, as this module pairs them: one with
    operands (no leaf), no side effects or control flow, no broadcast of a constant."""
    return n.alias < 0 and bool(n.operands) and n.opcode not in _NO_CSE and \
        not (n.opcode == "broadcast" and B.nodes[n.operands[0]].opcode == "constant")


def pair_survivors(m) -> int:
    """Pair each open after node whose fingerprint is that of several open, identical
    before nodes of one computation (and of no other open after node) with the one CSE
    kept. Returns the number of pairs made."""
    B, A = m.before, m.after
    groups: dict[int, list[int]] = defaultdict(list)
    for n in B.nodes:
        if m.b2a[n.idx] < 0 and _merges(B, n):
            groups[n.fp].append(n.idx)
    groups = {k: g for k, g in groups.items() if len(g) > 1 and
              len({B.nodes[i].ctx for i in g}) == 1 and len({B.nodes[i].vfp for i in g}) == 1}
    if not groups:
        return 0
    after: dict[int, list[int]] = defaultdict(list)
    for a in A.nodes:
        if a.alias < 0 and m.a2b[a.idx] < 0 and a.fp in groups:
            after[a.fp].append(a.idx)
    live = None
    rank: dict[int, int] = {}
    c = 0
    for fp, al in after.items():
        if len(al) != 1:
            continue
        if live is None:
            live = reachable(B)
            rank = post_order(B, live)
        g = [i for i in groups[fp] if live[i]]
        if not g:
            continue
        keep = min(g, key=lambda i: (rank.get(i, len(B.nodes) + i), i))
        b, a = B.nodes[keep], A.nodes[al[0]]
        if b.opcode == a.opcode and b.mdims == a.mdims:
            c += m.pair(keep, al[0], "cse-copy")
    return c


_REACHED = ("operand", "user")  # how structural propagation pairs (match._propagate)


def move_to_survivor(m) -> int:
    """Give the after node of a paired before node to its identical copy that CSE keeps,
    when that copy is still open: structural propagation reaches copies in whatever order
    their users were paired, and may pair a copy CSE merged away (fresh 16
    stick_breaking_kumaraswamy_vae under JAX 0.4.30: digamma's series term ``divide.805``
    repeats lgamma's ``divide.745``; CSE keeps ``divide.745``, whose kernel the matcher had
    handed to ``divide.805``, and ``divide.745`` then took a look-alike select). Only pairs
    of the same opcode move, made by structural propagation alone (a copy paired by its own
    metadata keeps it: fresh 4 lu_solve_grad's inlined ``convert_element_type.2``, whose
    twin algsimp rewrote before CSE), and none in a partitioned module: there identical copies may
    be sharded differently, and then CSE leaves them apart (gpu4 transformer_layer on 8
    H100s). Returns the number of pairs moved."""
    B = m.before
    if m.parts:
        return 0
    groups: dict[int, list[int]] = defaultdict(list)
    for n in B.nodes:
        if _merges(B, n):
            groups[n.fp].append(n.idx)
    todo = [g for g in groups.values() if len(g) > 1 and len({B.nodes[i].ctx for i in g}) == 1
            and len({B.nodes[i].vfp for i in g}) == 1
            and any(m.b2a[i] < 0 for i in g) and any(m.b2a[i] >= 0 for i in g)]
    if not todo:
        return 0
    live = reachable(B)
    rank = post_order(B, live)
    A = m.after.nodes
    c = 0
    for g in todo:
        g = [i for i in g if live[i]]
        if len(g) < 2:
            continue
        keep = min(g, key=lambda i: (rank.get(i, len(B.nodes) + i), i))
        if m.b2a[keep] >= 0:
            continue
        held = [i for i in g if m.b2a[i] >= 0 and A[m.b2a[i]].opcode == B.nodes[i].opcode
                and m.how.get(i) in _REACHED]
        if len(held) != 1:
            continue
        a = m.b2a[held[0]]
        m.unpair(held[0])
        c += m.pair(keep, a, "cse-copy")
    return c
