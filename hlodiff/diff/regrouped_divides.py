"""Divides that algebraic simplification regrouped away (issue 9, classes 5 and 11).

XLA's algebraic simplifier rewrites ``(A / B) / C`` as ``A / (B * C)``: the inner divide
disappears, the outer one now reads ``A`` and a new multiply. The inner divide's value
exists nowhere after optimization; its effect is in the outer divide. Adam's bias
correction is written this way (``m / (1 - b1**t) / (sqrt(v / c2) + eps)``), once per
parameter with one op_name and source line, so the rewrite step (which pairs an open
instruction with an open one carrying its op_name) would give the inner divide another
parameter's instruction of that line.

Evidence: fresh 16 bf16_vpred_minsnr_diffusion_unet under JAX 0.4.30 (CPU), dump 0011
(algsimp): ``divide.3412 = divide(divide.3407, add.3411)`` with
``divide.3407 = divide(add.3159, broadcast.3406)`` becomes
``divide.3412 = divide(add.3159, multiply.174)``; divide.3407 had been paired with
``broadcast.1521``, another parameter's broadcast of 1 - b1**t.
"""

from __future__ import annotations

from .fused_copies import copy_keys
from .view import Node


def regrouped(m, b: Node) -> bool:
    """``b = divide(A, B)`` is read only by ``u = divide(b, C)``, and ``u``'s partner divides
    the partner of ``A`` (or fusion's copy of it) directly: algsimp regrouped ``(A / B) / C`` as ``A / (B * C)`` and
    ``b`` is gone. False when the partners do not tell."""
    if b.opcode != "divide" or len(b.users) != 1 or len(b.operands) != 2:
        return False
    Bn, An = m.before.nodes, m.after.nodes
    u = Bn[b.users[0]]
    if u.opcode != "divide" or not u.operands or u.operands[0] != b.idx:
        return False
    y, x = m.b2a[u.idx], m.b2a[b.operands[0]]
    if y < 0 or x < 0:
        return False
    a = An[y]
    if a.opcode != "divide" or not a.operands:
        return False
    ck = copy_keys(m)  # (fusion may have copied A into the outer divide's kernel)
    return ck[a.operands[0]] == ck[x]


def regrouped_reason(m, b: Node, held) -> str:
    """The sentence for a divide :func:`regrouped` away (``held``: the after node now
    holding its numerator, or None)."""
    u = m.after.nodes[m.b2a[b.users[0]]]
    a = f"A ({held.name})" if held is not None else "A"
    return (f"(A / B) / C regrouped as A / (B * C) by algebraic simplification: this "
            f"divide (A / B) is gone; {u.name} divides {a} once")
