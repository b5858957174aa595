"""Narrow-float dots that XLA:CPU computes in f32 (issue 9).

XLA:CPU has no f16/bf16 matmul of its own: ``change-op-data-type`` rebuilds such a dot as a
dot of the operands converted to f32 and a convert of the f32 result back to the narrow
type, which takes the dot's place (its users, its metadata). Fusion then fuses that convert
into its readers' kernels (a transpose or copy kernel, the next elementwise kernel): the
narrow value the program computed is made there, not in the f32 kernel of the dot.

Evidence, fresh 27 float16_t5_style_encoder on CPU (jax 0.10.2): ``dot_general.92 =
f16[16,128,128] dot(...)`` becomes ``dot.2`` (dot_decomposer), then ``convert.8``
(change-op-data-type), fused into ``transpose_copy_fusion.45``, whose ``convert.757 =
f16[...] convert(...)`` reads the f32 ``dot.258`` of ``ynn_fusion.113``. The pass dumps
put the dot's value, and the reshapes and transposes of it, in the transpose kernel.
"""

from __future__ import annotations

from .gemm_converts import through_views

_NARROW = ("f16",)  # bf16: float normalization widens the dot in place (its kernel holds it)
_VIEWS = ("bitcast", "reshape", "copy", "transpose")


def _type(n) -> str | None:
    sh = n.inst.shape
    return None if sh is None or sh.is_tuple else sh.element_type


def _narrowing(A) -> dict[int, list[int]]:
    """After f32 dot -> the converts to a narrow float reading it (through views)."""
    cached = getattr(A, "_narrowing_converts", None)
    if cached is not None:
        return cached
    out: dict[int, list[int]] = {}
    for n in A.nodes:
        if n.alias >= 0 or n.opcode != "convert" or _type(n) not in _NARROW or not n.operands:
            continue
        x = A.nodes[through_views(A, n.operands[0])]
        if x.opcode == "dot" and _type(x) == "f32":
            out.setdefault(x.idx, []).append(n.idx)
    A._narrowing_converts = out
    return out


def _after_dot(fb, b, f):
    """The f32 after dot that ``f`` (the fate of ``b``) names: ``b``'s partner, or what a
    view of the dot folded away now reads."""
    y = fb.m.b2a[b.idx]
    if y >= 0 and fb.A.nodes[y].opcode == "dot":
        return fb.A.nodes[y]
    if b.opcode == "dot" or not f.after:
        return None
    names = getattr(fb.A, "_dots_by_name", None)
    if names is None:
        names = fb.A._dots_by_name = {n.name: n for n in fb.A.nodes if n.opcode == "dot"}
    return names.get(f.after)


def widened(fb, b, f):
    """``f``, the fate of before node ``b``: when ``b`` is a narrow dot (or a view of one
    folded away) whose value an f32 dot computes, named where the convert back to ``b``'s
    type makes it (the first, when fusion copied the convert into several kernels)."""
    if _type(b) not in _NARROW or f.fate not in ("rewritten", "fused", "kept") or \
            (b.opcode != "dot" and b.opcode not in _VIEWS):
        return f
    a = _after_dot(fb, b, f)
    if a is None or _type(a) != "f32":
        return f
    cs = [c for c in _narrowing(fb.A).get(a.idx, ()) if _type(fb.A.nodes[c]) == _type(b)]
    if not cs:
        return f
    kernel = fb.A.nodes[a.fusion].name if a.fusion >= 0 else a.name
    c = fb.A.nodes[cs[0]]
    fb._set_after(f, c)
    f.fate = "rewritten"
    where = f" inside {f.fusion_kind} fusion {f.fusion}" if f.fusion else ""
    if b.opcode == "dot":
        f.reason = (f"{_type(b)} dot computed in f32 by {kernel} (XLA:CPU widens narrow dots, "
                    f"change-op-data-type); its {_type(b)} result is made by {c.name}{where}")
    else:
        f.reason += (f"; that {_type(b)} value is made by {c.name}{where} from the f32 dot "
                     f"of {kernel}")
    return f
