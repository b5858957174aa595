"""Which fusion pictures an HTML report carries, so that a big model's report stays small.

A 12-layer GPT step has about 950 fusions: laying out and inlining a picture of each took
most of the report's time and 49 MB of its size. So the report inlines pictures only for a
module with few fusions (each picture small); otherwise it carries none, and with
``--svg DIR`` it links to the files written there, loaded by the browser only when a row is
opened (``loading=lazy``): pictures on demand.
"""

from __future__ import annotations

import os
from html import escape
from pathlib import Path
from typing import Any

from .svg import RenderError, find_dot

INLINE_MAX_FUSIONS = 60
INLINE_MAX_NODES = 500


def linked_pictures(fusion_files: dict[str, Path], html_path: str | os.PathLike) -> dict[str, str]:
    """Fusion name -> HTML showing the SVG file (path relative to the report), fetched lazily."""
    base = os.path.dirname(os.path.abspath(html_path))
    out = {}
    for name, path in fusion_files.items():
        rel = Path(os.path.relpath(os.path.abspath(path), base)).as_posix()
        href = escape(rel, quote=True)
        out[name] = (f"<a href='{href}'><img loading='lazy' src='{href}' "
                     f"alt='picture of {escape(name, quote=True)}'></a>")
    return out


def html_pictures(result: Any, before: Any, after: Any,
                  fusion_files: dict[str, Path] | None = None,
                  html_path: str | os.PathLike | None = None) -> tuple[dict[str, str], str | None]:
    """(fusion name -> picture HTML, a note for the reader or None)."""
    if fusion_files and html_path:
        return linked_pictures(fusion_files, html_path), None
    n = len(result.fusions)
    if find_dot() is None:
        return {}, ("no fusion pictures: Graphviz (dot) is not installed" if n else None)
    if n > INLINE_MAX_FUSIONS:
        return {}, (f"{n} fusions: pictures are not inlined (over {INLINE_MAX_FUSIONS}); "
                    "--svg DIR writes them and links them from this report")
    from .diffviews import fusion_svgs

    try:
        return fusion_svgs(result, before, after, max_nodes=INLINE_MAX_NODES), None
    except RenderError as e:
        return {}, f"no fusion pictures: {e}"
