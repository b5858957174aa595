"""Pictures of HLO with Graphviz: one module (``hlodiff render``) and a diff's before/after
and per-fusion SVGs (``hlodiff diff --svg DIR`` and the HTML report)."""

from __future__ import annotations

from .svg import (DEFAULT_MAX_NODES, DEFAULT_TIMEOUT, DotNotFound, GraphTooLarge, RenderError,
                  find_dot, format_for, run_dot, svg_for_html, write_picture)
from .views import computation_picture, focus_picture, fusion_picture, instruction_text
from .diffviews import DiffPictures, diff_pictures, fusion_svgs, render_diff_svgs, add_svg_option

__all__ = ["computation_picture", "focus_picture", "fusion_picture", "instruction_text",
           "render_diff_svgs", "fusion_svgs", "diff_pictures", "DiffPictures", "add_svg_option",
           "run_dot", "write_picture", "find_dot", "format_for", "svg_for_html", "RenderError",
           "DotNotFound", "GraphTooLarge", "DEFAULT_MAX_NODES", "DEFAULT_TIMEOUT"]
