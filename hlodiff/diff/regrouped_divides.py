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

The matcher, seeing a divide that reads A's partner, may also pair the *inner* divide with
the rebuilt one and leave the outer divide to the rewrite step, which names some other
kernel (fresh 27 batchensemble under JAX 0.4.30: ``divide.52 = divide(m, multiply.263)``
in the update kernel, ``multiply.263 = multiply(broadcast(1 - b1^t), add(sqrt(...),
eps))``, had taken the inner ``m / c1``). :func:`repair` moves such a pair to the outer
divide when the rebuilt divide's divisor multiplies the partners of both divisors (the
inner divisor may still be open: then an open node of its opcode).
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


def _chains(m):
    """(inner, outer) before divides: the inner one paired, read only by the outer one as
    its dividend."""
    nodes = m.before.nodes
    for x in nodes:
        if x.alias >= 0 or x.opcode != "divide" or len(x.operands) != 2 or \
                len(x.users) != 1 or m.b2a[x.idx] < 0:
            continue
        y = nodes[x.users[0]]
        if y.opcode == "divide" and len(y.operands) == 2 and y.operands[0] == x.idx != \
                y.operands[1]:
            yield x, y


def _product_of(m, prod, b, c: int) -> bool:
    """``prod`` multiplies the partner of ``c`` by the partner of ``b`` (or fusion's copy of
    it), or (``b`` not paired yet: a divisor's broadcast is often paired later) by a node of
    ``b``'s opcode that is open or paired with an identical copy of ``b``."""
    pc = m.b2a[c]
    if pc < 0 or pc not in prod.operands:
        return False
    o = prod.operands[1] if prod.operands[0] == pc else prod.operands[0]
    pb = m.b2a[b.idx]
    if pb >= 0:  # (or fusion's copy of it in this kernel: 1 - b1**t serves every parameter)
        ck = copy_keys(m)
        return ck[o] == ck[pb]
    if m.after.nodes[o].opcode != b.opcode:
        return False
    q = m.a2b[o]  # open, or taken by a copy of b's own value (another parameter's 1 - b1**t)
    return q < 0 or m.before.nodes[q].vfp == b.vfp


def repair(m) -> int:
    """Move pairs from the inner to the outer divide of regrouped chains; returns the
    number moved."""
    A = m.after
    c = 0
    for x, y in _chains(m):
        d = A.nodes[m.b2a[x.idx]]
        if d.opcode != "divide" or len(d.operands) != 2:
            continue
        prod = A.nodes[d.operands[1]]
        if prod.opcode != "multiply" or len(prod.operands) != 2 or \
                not _product_of(m, prod, m.before.nodes[x.operands[1]], y.operands[1]):
            continue
        if m.b2a[y.idx] >= 0:
            m.unpair(y.idx)
        m.unpair(x.idx)
        c += m.pair(y.idx, d.idx, "nested divide")
    return c
