"""Re-pair a constant chain algebraic simplification regrouped (old2 helper).

Algsimp rewrites ``(x * c1) * c2`` as ``x * (c1 * c2)`` (likewise for add) and constant
folding evaluates ``c1 * c2``. The new instruction takes the place, and the name, of the
*outer* one; the inner ``x * c1`` is gone. The matcher, seeing the same op_name and that the
after instruction reads x's partner, may pair it with the inner one instead.

Evidence (JAX 0.4.30, CPU, quant_fake): ``multiply.33 = multiply(call.32, broadcast(2))``,
``multiply.40 = multiply(multiply.33, broadcast(0.00390625))``. The pass dumps: multiply.33
rewritten at algsimp (dump 0006), multiply.40 lives on and is fused; the kernel computes
``multiply.4 = multiply(..., broadcast(constant(0.0078125)))``.

When the after partner of the inner instruction scales by a literal that is not the inner
one's, while the outer one (same opcode, the inner one's only user, a literal operand of its
own) has no partner, the pair belongs to the outer one.
"""

from __future__ import annotations

from .constvals import literal_through

_CARRY = ("broadcast", "reshape", "convert", "bitcast", "copy")


def _literal(v, i: int):
    return literal_through(v, i, _CARRY)


def _split(v, n):
    """(the non-literal operand, the literal) of a binary n with exactly one literal."""
    if len(n.operands) != 2:
        return None
    l0, l1 = _literal(v, n.operands[0]), _literal(v, n.operands[1])
    if (l0 is None) == (l1 is None):
        return None
    return (n.operands[1], l0) if l0 is not None else (n.operands[0], l1)


def _inner_links(m):
    """(b, its only user) for each paired before add or multiply with one user: the inner
    link of a chain algsimp may have regrouped. Checked as the walk reaches b (the repairs
    re-pair as they go)."""
    nodes = m.before.nodes
    for b in nodes:
        if b.alias >= 0 or b.opcode not in ("multiply", "add") or m.b2a[b.idx] < 0 or \
                len(b.users) != 1:
            continue
        yield b, nodes[b.users[0]]


def repair(m) -> int:
    """Move pairs from the inner to the outer instruction of regrouped chains."""
    B, A = m.before, m.after
    c = 0
    for b, o in _inner_links(m):
        inner = _split(B, b)
        if inner is None:
            continue
        if o.opcode != b.opcode or m.b2a[o.idx] >= 0 or o.mdims != b.mdims or \
                len(o.operands) != 2 or b.idx not in o.operands:
            continue
        other = o.operands[1] if o.operands[0] == b.idx else o.operands[0]
        if _literal(B, other) is None:
            continue
        a = A.nodes[m.b2a[b.idx]]
        after = _split(A, a) if a.opcode == b.opcode else None
        if after is None or after[1] == inner[1]:
            continue
        m.b2a[b.idx] = -1
        m.a2b[a.idx] = -1
        m.how.pop(b.idx, None)
        c += m.pair(o.idx, a.idx, "regrouped")
    return c


def repair_broadcast_scale(m) -> int:
    """``(x * broadcast(c)) * broadcast(s)`` regrouped as ``x * broadcast(s * c)`` (cpu4).

    Algsimp multiplies the two scales on their narrow shape and broadcasts the product
    once; the new instruction takes the place of the *outer* multiply. Evidence, jax 0.10.2
    int8_per_channel (unseen zoo): ``mul.15 = multiply(convert, broadcast(0.05))``, ``mul.19 =
    multiply(mul.15, broadcast(scales))``; the pass dumps: mul.15 rewritten at algsimp (dump
    0007), mul.19 fused (0021), computed as ``mul.0 = multiply(convert, broadcast(multiply.3))``
    with ``multiply.3 = multiply(scales, broadcast(0.05))`` on f32[24]. The matcher paired the
    inner one with ``mul.0`` and the outer one with the narrow ``multiply.3``.

    When the partner of the inner instruction reads, through a broadcast, the partner of its
    only user (same opcode, a broadcast operand of its own), that partner being narrower, the
    outer instruction takes the inner one's partner and the narrow product goes unpaired."""
    B, A = m.before, m.after
    c = 0
    for b, o in _inner_links(m):
        z = m.b2a[o.idx]
        if o.opcode != b.opcode or z < 0 or o.mdims != b.mdims or len(o.operands) != 2:
            continue
        other = o.operands[1] if o.operands[0] == b.idx else o.operands[0]
        if B.nodes[other].opcode != "broadcast" or _split(B, b) is None:
            continue
        a = A.nodes[m.b2a[b.idx]]
        zn = A.nodes[z]
        if a.opcode != b.opcode or a.mdims != o.mdims or zn.mdims == o.mdims or \
                not any(A.nodes[w].opcode == "broadcast" and z in A.nodes[w].operands
                        for w in a.operands):
            continue
        for x, y in ((b.idx, a.idx), (o.idx, z)):
            m.b2a[x] = -1
            m.a2b[y] = -1
            m.how.pop(x, None)
        c += m.pair(o.idx, a.idx, "regrouped")
    return c
