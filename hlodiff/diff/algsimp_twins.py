"""Identical copies that algebraic simplification rewrote one by one before CSE (old5).

On CPU (JAX 0.4.30 and current) the simplification pipeline runs algsimp before CSE, so
every identical copy of an expression (the same jnp.tril in several inlined calls) is
rewritten on its own first, and CSE only meets what the rewrites left. A copy of an
instruction that algsimp left without users is then dead too, not "merged": DCE deletes
each copy.

Evidence, fresh 4 lu_solve_grad (JAX 0.4.30): five inlined tril/triu callees each hold
``add.N = s32[6,6] add(broadcast(iota), broadcast(constant(-1)))``. Dump 0007 -> 0008
(algsimp) sinks the broadcasts below every copy (``broadcast(add(iota, broadcast(-1)))``),
the wide adds and their operand broadcasts (``add.242``, ``broadcast.239``,
``broadcast.241`` of tril_2.237) are left without users, and the DCE of dump 0009 deletes
them; the narrow adds are merged by the CSE of dump 0030. The engine had paired the first
copy's add as sunk (sunk_broadcasts.py) and called the others "merged" into it.
"""

from __future__ import annotations

from .sunk_broadcasts import HOW, _sinkable


def sunk_ops(m) -> set[int]:
    """Before ops paired as sunk below their broadcasts (sunk_broadcasts' step, or an
    earlier step that gave the wide op a narrow partner of its opcode)."""
    B, A = m.before, m.after
    return {b for b, how in m.how.items() if how == HOW or (
        _sinkable(B, B.nodes[b]) is not None and
        B.nodes[b].opcode == A.nodes[m.b2a[b]].opcode and
        A.nodes[m.b2a[b]].inst.shape.num_elements < B.nodes[b].inst.shape.num_elements)}


def sunk_twin_broadcasts(m, survivor: dict[int, int], live: bytearray) -> set[int]:
    """Broadcasts read only by open, live copies of sunk ops (and by sunk ops): algsimp
    sank each copy on its own, leaving these for DCE."""
    B = m.before
    sunk = sunk_ops(m)
    if not sunk:
        return set()
    twins = {i for i, k in survivor.items() if k in sunk and m.b2a[i] < 0 and live[i]
             and _sinkable(B, B.nodes[i]) is not None}
    if not twins:
        return set()
    both = sunk | twins
    out: set[int] = set()
    for t in twins:
        for o in B.nodes[t].operands:
            ob = B.nodes[o]
            if ob.opcode == "broadcast" and ob.operands and m.b2a[o] < 0 and \
                    all(u in both for u in ob.users):
                out.add(o)
    return out


def removed_like_survivor(fb, s: int, sf) -> bool:
    """The copy CSE would keep (``s``) is live but algsimp left it without users (moved
    below a broadcast, fates' "removed"): each identical copy went the same way."""
    return sf.fate == "removed" and bool(fb.live[s]) and not fb.cse_first and \
        not fb.gpu_cse
