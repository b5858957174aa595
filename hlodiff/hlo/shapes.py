"""Decoding shape text (``f32[2,<=4,?]{1,0:T(8,128)}``) into model Shapes, cached by text.

Optimized modules repeat the same few hundred shapes thousands of times, so each distinct
text is decoded once and the Shape object is shared.
"""

from __future__ import annotations

import re

from .model import Layout, Shape

_ARRAY = re.compile(r"([a-z0-9]+)\[([^\]]*)\](?:\{([^}]*(?:\}[^{}]*)?)\})?", re.DOTALL)
_cache: dict[str, Shape] = {}

UNKNOWN = Shape(text="", element_type=None)  # a shape left out for XLA to infer


def array_shape(text: str) -> Shape:
    """The Shape of one array shape token (always succeeds on lexer output)."""
    s = _cache.get(text)
    if s is not None:
        return s
    m = _ARRAY.fullmatch(text.strip())
    if m is None:  # pragma: no cover - the lexer only hands over matching text
        raise ValueError(f"not an array shape: {text!r}")
    etype, dims_text, layout_text = m.groups()
    dims: list[int] = []
    dyn: list[bool] = []
    for d in dims_text.split(","):
        d = d.strip()
        if not d:
            continue
        if d == "?":
            dims.append(-1)
            dyn.append(True)
        elif d.startswith("<="):
            dims.append(int(d[2:].strip()))
            dyn.append(True)
        else:
            dims.append(int(d))
            dyn.append(False)
    layout = None
    if layout_text is not None:
        mtm, _, extras = layout_text.partition(":")
        layout = Layout(tuple(int(x) for x in mtm.replace(" ", "").split(",") if x.strip()),
                        extras.strip())
    canonical = re.sub(r"\s+", "", text)
    s = Shape(text=canonical, element_type=etype, dims=tuple(dims), dynamic=tuple(dyn),
              layout=layout)
    _cache[text] = s
    return s


def tuple_shape(elements: list[Shape]) -> Shape:
    """A tuple of shapes, printed as XLA prints it."""
    return Shape(text="(" + ", ".join(e.text for e in elements) + ")",
                 element_type=None, tuple_shapes=tuple(elements))
