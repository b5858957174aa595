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

from .view import Node, View


def _adds(view: View, n: Node) -> bool:
    """``n`` is a reduce whose reducer adds its two parameters."""
    if n.opcode != "reduce" or len(n.operands) != 2 or not n.inst.calls:
        return False
    comp = view.module.by_name.get(n.inst.calls[0])
    return comp is not None and comp.root_instruction.opcode == "add"


def moved_negation(B: View, A: View, b: Node, r: Node | None) -> Node | None:
    """The after reduce that sums what the before reduce ``b`` summed the negation of,
    when ``r`` (the after node taking ``b``'s place) is a negate reading it; else None."""
    if r is None or r.opcode != "negate" or not r.operands or not _adds(B, b):
        return None
    x = B.nodes[b.operands[0]]
    if x.opcode != "negate" or all(x.inst.shape.dims[d] == 1 for d in b.inst.dimensions or ()):
        return None  # (a reduce over size-1 dimensions only is a reshape: no sum to move)
    s = A.nodes[A.resolve(r.operands[0])]
    if not _adds(A, s) or s.mdims != b.mdims or s.inst.dimensions != b.inst.dimensions:
        return None
    return s
