"""Scale literals that algebraic simplification regrouped into a new constant (old3 helper).

Algsimp reassociates products with literals, ``(x * c1) * (y * c2)`` towards
``(x * y) * (c1 * c2)``, and ``a / c`` becomes ``a * (1 / c)``; constant folding then
evaluates the product of the literals into a new one. The literal ``c1`` is then folded:
its value is a factor of that new constant, not gone.

Evidence (JAX 0.4.30, CPU, fresh 22 multiresunet, dumps 0009-0010): jnp.var's jvp computes
``multiply.3747 = (x - mean) * broadcast(constant.3731 = 2)`` inside its call; after the
call inliner, var's transpose multiplies that by ``g / 16384``. Constant folding makes
``constant.932 = 0.000122070312`` (2 / 16384), fused into the kernels that read it, and
the pass dumps put constant.3731 there. Without this, the engine called the 2 "simplified
away".

Not where CSE meets literals before constant folding: XLA:GPU runs CSE inside its
simplification loop, and a partitioned program's Shardy round trip merges identical
literals first (there the fresh 23 H100 and 8-H100 dumps show such literals merged,
rewritten or removed, not folded).
"""

from __future__ import annotations

import math

from .folded_target import user_partners
from .view import Node

_CARRY = ("broadcast", "reshape", "convert")
_SCALING = _CARRY + ("multiply", "divide", "negate")


def _value(text: str | None) -> float | None:
    """A finite, non-trivial float literal (0, 1 and -1 are identities or negations)."""
    try:
        v = float(text) if text is not None else None
    except ValueError:
        return None
    if v is None or not math.isfinite(v) or v in (0.0, 1.0, -1.0):
        return None
    return v


def _scalar(n: Node) -> bool:
    return n.dims.endswith("[]") and not n.dims.startswith("(")


def _key(v: float) -> str:
    return f"{v:.5e}"  # f32 products agree to about 6 digits


def _scales_something(B, b: Node) -> bool:
    """``b`` is a factor of a multiply, through views/converts of itself. A divisor is
    not: algsimp itself replaces ``x / c`` by ``x * (1 / c)``, a literal it makes without
    constant folding (the divisor is rewritten; fixture old3 ``_var_0``'s N)."""
    todo, seen, found = [b.idx], 0, False
    while todo and seen < 16:
        n = B.nodes[todo.pop()]
        seen += 1
        for u in n.users:
            un = B.nodes[u]
            if un.opcode == "divide" and un.operands[1:2] == [n.idx]:
                return False
            found = found or un.opcode == "multiply"
            if un.opcode in _CARRY:
                todo.append(u)
    return found


def _literals(fb) -> set[str]:
    """Keys of the before module's scalar literal values (cached on ``fb``)."""
    t = getattr(fb, "_scale_literals", None)
    if t is None:
        t = fb._scale_literals = {_key(v) for n in fb.B.nodes if n.opcode == "constant" and
                                  _scalar(n) and (v := _value(n.inst.literal)) is not None}
    return t


def _scale_literals(fb, y: int):
    """New scalar constants that after node ``y`` scales by: through views, multiplies and
    divides of its operands (``x * broadcast(g * broadcast(2 / N))``), four levels deep."""
    A, m = fb.A, fb.m
    todo, seen = [(o, 0) for o in A.nodes[y].operands], set()
    while todo:
        o, d = todo.pop()
        if o in seen:
            continue
        seen.add(o)
        on = A.nodes[o]
        if on.opcode == "constant":
            if m.a2b[o] < 0 and _scalar(on):
                yield on
        elif d < 4 and on.opcode in _SCALING:
            todo.extend((p, d + 1) for p in on.operands)


def folded_scale(fb, b: Node) -> tuple[Node, str] | None:
    """The new after constant that scalar literal ``b`` (a factor of a multiply) was
    folded into, with the product that made it, or None. The new constant is read where
    ``b``'s nearest users went, did not exist before optimization, and equals ``b`` times,
    over or under another literal of the module."""
    if b.opcode != "constant" or not _scalar(b) or not _scales_something(fb.B, b):
        return None
    c = _value(b.inst.literal)
    if c is None:
        return None
    lits = _literals(fb)
    for a in (c for y in user_partners(fb, b, 6, True) for c in _scale_literals(fb, y)):
        v = _value(a.inst.literal)
        if v is None or _key(v) in lits:
            continue
        for t, form in ((c / v, "{c} / {t}"), (v / c, "{c} * {t}"), (v * c, "{t} / {c}")):
            if _key(t) in lits:
                return a, form.format(c=b.inst.literal, t=f"{t:.6g}")
    return None


def fill(f, b: Node, found: tuple[Node, str], set_after):
    """Fill ``b``'s fate from :func:`folded_scale`'s answer."""
    a, how = found  # how: the product, e.g. '2 / 16384'
    f.fate = "folded"
    set_after(f, a)
    f.reason = (f"folded: algebraic simplification regrouped the products of literals and "
                f"constant folding evaluated {how} into {a.name} = "
                f"{a.inst.literal}" + (f" (in {f.fusion})" if f.fusion else ""))
    return f
