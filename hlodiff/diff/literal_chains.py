"""Literals that survive a rewrite of their readers: pair them across the view ops.

Algebraic simplification rebuilds the data-movement ops reading a literal (a broadcast to
``[1,1,1,8]`` becomes a broadcast to ``[8]``; a reshape of a broadcast becomes one
broadcast) but keeps the literal itself as the new op's operand. Fusion later copies the
literal into the kernels that read it, under a new name, so neither names nor metadata
(literals carry none) pair it. The structure still does: the before chain
``literal -> view ops -> U`` has its counterpart ``literal' -> view ops -> partner(U)``
whenever the literal survived. Walking from the partner of each matched reader down through
open view ops to an open literal of the same value and shape finds it; a literal that
algsimp replaced (``x / 4`` -> ``x * 0.25``) or removed (``x * 1`` -> ``x``) leaves no such
chain, since the new literal has another value or the reader is gone.

(``m`` below is a :class:`hlodiff.diff.match.Matching`; match.py calls this module.)
"""

from __future__ import annotations


# ops that move or replicate a literal without computing with it
_VIEWS = {"broadcast", "reshape", "bitcast", "transpose", "copy", "convert"}
_LITERALS = {"constant", "iota"}
_DEPTH = 4


def _same_literal(b, a) -> bool:
    if b.opcode != a.opcode or b.mdims != a.mdims:
        return False
    if b.opcode == "constant":
        return b.inst.literal == a.inst.literal
    return b.sig == a.sig  # iota: its dimension and type


def _readers(m, b: int) -> list[int]:
    """Matched before nodes reading ``b`` directly or through open view ops."""
    B = m.before.nodes
    out: list[int] = []
    todo, seen = [(b, 0)], {b}
    while todo:
        x, d = todo.pop()
        for u in B[x].users:
            if u in seen:
                continue
            seen.add(u)
            if m.b2a[u] >= 0:
                out.append(u)
            elif d < _DEPTH and B[u].opcode in _VIEWS:
                todo.append((u, d + 1))
    return out


def _sources(m, a: int, b) -> list[int]:
    """Open after literals equal to ``b`` under ``a``'s operands, through open view ops."""
    A = m.after.nodes
    out: list[int] = []
    todo, seen = [(a, 0)], {a}
    while todo:
        y, d = todo.pop()
        for o in A[y].operands:
            if o in seen:
                continue
            seen.add(o)
            on = A[o]
            if m.a2b[o] >= 0:
                continue
            if on.opcode in _LITERALS:
                if _same_literal(b, on):
                    out.append(o)
            elif d < _DEPTH and on.opcode in _VIEWS:
                todo.append((o, d + 1))
    return out


def pair_surviving_literals(m) -> int:
    """Pair open live before literals with the open after literal their readers' partners
    read through view ops; returns the number of pairs."""
    B = m.before.nodes
    c = 0
    for b in B:
        if b.opcode not in _LITERALS or b.alias >= 0 or m.b2a[b.idx] >= 0 or not b.users:
            continue
        found: list[int] = []
        for u in _readers(m, b.idx):
            for y in _sources(m, m.b2a[u], b):
                if y not in found:
                    found.append(y)
        if found:
            # copies fusion made of one literal tell the same story: take the first
            c += m.pair(b.idx, found[0], "literal")
    return c

