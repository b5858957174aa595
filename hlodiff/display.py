"""Notebook display (Jupyter's ``_repr_html_`` / ``_repr_svg_``) for the model and results.

Modules, diff results and fusions live in early layers of the pipeline, their pictures and
tables in late ones (``report``, ``render``), and an early layer never imports a later one.
So the objects' ``_repr_*_`` methods call these two functions, which load the one renderer
module, named here, on first use: the dependency is inverted at this single, visible point.
"""

from __future__ import annotations

import importlib
from typing import Any

RENDERER = "hlodiff.report.notebook"  # defines to_html(obj) -> str, to_svg(obj) -> str | None


def html(obj: Any) -> str:
    """HTML for a notebook cell (escaped: dump text never becomes markup)."""
    return importlib.import_module(RENDERER).to_html(obj)


def svg(obj: Any) -> str | None:
    """An SVG picture, or None when Graphviz is missing or the picture would be too large
    (Jupyter then shows the HTML or text form)."""
    return importlib.import_module(RENDERER).to_svg(obj)
