"""Where a folded value lives: the kernel that holds the new constant (old2 helper).

Constant folding replaces an expression by a new literal; fusion then copies that literal
into the kernels that read it. The fate names the new constant (``after``); like every
other fate whose after instruction sits inside a fusion, it also names that fusion
(``fusion``/``fusion_kind``): the top-level instruction of the optimized module that holds
the value, which is what XLA's pass dumps show at the end of the value's line (the oracle's
destination) and where a user finds it in a profile.
"""

from __future__ import annotations

from .result import InstructionFate
from .view import Node, View


def locate(A: View, fates: list[InstructionFate]) -> None:
    """Fill ``fusion``/``fusion_kind`` of folded fates whose new constant is fused."""
    want = {f.after for f in fates if f.fate == "folded" and f.after and not f.fusion}
    if not want:
        return
    where: dict[str, tuple[str, str | None]] = {}
    for n in A.nodes:
        if n.fusion >= 0 and n.name in want and n.name not in where:
            fu = A.nodes[n.fusion]
            where[n.name] = (fu.name, fu.inst.fusion_kind)
    for f in fates:
        if f.fate == "folded" and f.after in where and not f.fusion:
            f.fusion, f.fusion_kind = where[f.after]


def user_partners(fb, b: Node, depth: int, past_matched: bool = False):
    """Breadth first from ``b`` through its users (``fb``: the FateBuilder): the after
    partners of the users that have one. Users without a partner are walked through;
    ``past_matched``: users with one too."""
    m = fb.m
    frontier, seen = [b.idx], {b.idx}
    for _ in range(depth):
        nxt = []
        for x in frontier:
            for u in fb.B.nodes[x].users:
                if u in seen:
                    continue
                seen.add(u)
                y = m.b2a[u]
                if y >= 0:
                    yield y
                if y < 0 or past_matched:
                    nxt.append(u)
        frontier = nxt


def new_constant(fb, b: Node) -> str | None:
    """The after constant a folded before node ``b`` became part of, found through its
    users' partners (``fb``: the FateBuilder), or None."""
    A, m = fb.A, fb.m
    for y in user_partners(fb, b, 3):
        for o in A.nodes[y].operands:
            on = A.nodes[o]
            if fb.cv_a[o] and m.a2b[o] < 0:
                while on.opcode != "constant" and on.operands:
                    on = A.nodes[on.operands[0]]
                if on.opcode == "constant":
                    return on.name
    return None
