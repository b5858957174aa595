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
from .view import View


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
