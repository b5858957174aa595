"""Telling twins apart by their neighbourhood (issue 9, class 6: repeated code).

Layers of a Python loop, remat copies and vmapped copies share op_names and source lines:
the matcher's keys cannot tell them apart, and once passes rewrote the instructions
between them, neither can their direct operands. What still differs is *which* already
paired instructions lie around each copy: layer 1's normalisation reads layer 1's
residual stream and feeds layer 1's matmul. The anchor score counts, for a before node and
an after candidate, the paired nodes reached from both through not yet paired ones
(operands upward, users downward, a few steps each). Bounded walks: linear overall.
"""

from __future__ import annotations

_DEPTH = 5
_LIMIT = 40


def _reach(nodes, start, other, up: bool) -> set[int]:
    """Paired nodes (as indices on the *after* side, via ``other``) reached from
    ``start`` through unpaired ones. ``other`` maps this side's index to the after index
    (identity on the after side: paired after nodes are their own anchors)."""
    out: set[int] = set()
    seen = {start}
    frontier = [start]
    for _ in range(_DEPTH):
        nxt = []
        for i in frontier:
            n = nodes[i]
            for j in (n.operands if up else n.users):
                if j in seen:
                    continue
                seen.add(j)
                t = other(j)
                if t >= 0:
                    out.add(t)
                elif len(seen) < _LIMIT:
                    nxt.append(j)
        frontier = nxt
        if not frontier:
            break
    return out


def anchor_score(m, b: int, a: int) -> int:
    """How many paired neighbours the before node ``b`` and the after node ``a`` share."""
    Bn, An = m.before.nodes, m.after.nodes
    b2a, a2b = m.b2a, m.a2b

    def from_b(j: int) -> int:
        return b2a[j]

    def from_a(j: int) -> int:
        return j if a2b[j] >= 0 else -1

    s = 0
    for up in (True, False):
        s += len(_reach(Bn, b, from_b, up) & _reach(An, a, from_a, up))
    return s


def best_by_anchors(m, b: int, cands: list[int]) -> list[int]:
    """The candidates with the highest anchor score (all of them when none scores)."""
    if len(cands) < 2:
        return cands
    scored = [(anchor_score(m, b, y), y) for y in cands]
    top = max(s for s, _ in scored)
    return [y for s, y in scored if s == top]
