"""A sum whose negation algebraic simplification moved out of it (XLA of JAX 0.4.x).

The algebraic simplifier of older XLA rewrites ``reduce(negate(x))`` with an add reducer as
``negate(reduce(x))``: the reduce keeps its name and now sums ``x``, and a new negate reads
it (fresh 18 unet_deep_supervision_tversky_side_heads under JAX 0.4.30, dump 0007:
``reduce.2031 = reduce(multiply.2025, ...)`` where it read ``negate.2026``). The before
reduce matches nothing (it sums other values), and its value, ``-reduce(x)``, is the new
negate's. XLA's own record follows the reduce under its name into the kernel that sums
``x``; so does the fate, and the reason names the negate.
"""

from __future__ import annotations

from .value_facts import sums_nothing
from .view import Node, View


def _adds(view: View, n: Node) -> bool:
    """``n`` is a reduce whose reducer adds its two parameters."""
    if n.opcode != "reduce" or len(n.operands) != 2 or not n.inst.calls:
        return False
    comp = view.module.by_name.get(n.inst.calls[0])
    return comp is not None and comp.root_instruction.opcode == "add"


def moved_negation(B: View, A: View, b2a: list[int], b: Node, r: Node | None) -> Node | None:
    """The after reduce that sums what the before reduce ``b`` summed the negation of, over
    the same dimensions: the one reading the partner of the negated value or a copy of it
    that fusion made (the same fingerprint), when there is exactly one (a layer norm's
    backward holds several sums of one shape); else the one read by ``r``, the negate that
    took ``b``'s place (algsimp may have rewritten the summed value too); else None."""
    if not _adds(B, b):
        return None
    x = B.nodes[b.operands[0]]
    if x.opcode != "negate" or not x.operands or sums_nothing(B, b):
        return None  # (a reduce over size-1 dimensions only is a reshape: no sum to move)

    def sums(s: Node) -> bool:
        return _adds(A, s) and s.mdims == b.mdims and s.inst.dimensions == b.inst.dimensions
    y = b2a[x.operands[0]]
    if y >= 0:
        by_fp = getattr(A, "_nodes_by_fp", None)
        if by_fp is None:  # (built once per view: fingerprint -> nodes)
            by_fp = A._nodes_by_fp = {}
            for n in A.nodes:
                by_fp.setdefault(n.fp, []).append(n.idx)
        found = {u for i in by_fp.get(A.nodes[y].fp, ()) for u in A.nodes[i].users
                 if sums(A.nodes[u]) and A.nodes[u].operands[0] == i}
        if len(found) == 1:
            return A.nodes[found.pop()]
    if r is not None and r.opcode == "negate" and r.operands:
        s = A.nodes[A.resolve(r.operands[0])]
        if sums(s):
            return s
    return None
