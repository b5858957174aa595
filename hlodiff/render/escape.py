"""Escaping text from user programs for DOT, SVG and HTML.

Everything that comes from a dump (instruction names, op_name strings, source paths,
custom-call targets, backend configs) goes through one of these before it reaches DOT.
Graphviz 2.43 reads backslashes in *both* quoted strings and HTML-like labels as escapes
(``\\N`` becomes the node's id, ``\\l`` a line break), so backslashes never reach it raw:

* labels are HTML-like: ``html.escape``, and a backslash becomes U+29F5 (⧵): dot 2.43
  expands ``\\N`` even when written ``&#92;N`` in an HTML-like label;
* tooltips are quoted strings: markup and ``&``/``"`` become XML entities (dot copies
  entities through to SVG unchanged), and a backslash becomes U+29F5 (⧵), which looks
  the same, because dot 2.43 mangles every escaped form of it in a tooltip.

Node and cluster ids are generated (``n12``, ``cluster_3``), never taken from the dump,
so the ``<title>`` elements and ``<!-- -->`` comments dot writes into SVG are ours.
"""

from __future__ import annotations

import html
import re

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def clean(text: object, limit: int | None = None) -> str:
    """Text without characters XML cannot hold, cut to ``limit`` characters with '…'."""
    s = _CONTROL.sub("\ufffd", str(text))
    if limit is not None and len(s) > limit:
        s = s[: max(limit - 1, 0)] + "…"
    return s


def html_text(text: object, limit: int | None = None) -> str:
    """Text for inside an HTML-like DOT label: no live markup, no backslash escapes."""
    s = html.escape(clean(text, limit), quote=True).replace("\\", "\u29f5")
    return s.replace("\r\n", "\n").replace("\n", "<br/>")


def dot_string(text: object, limit: int | None = None) -> str:
    """A complete double-quoted DOT string (for tooltips) holding ``text`` literally."""
    s = clean(text, limit).replace("\r\n", "\n")
    s = html.escape(s, quote=True).replace("\\", "\u29f5")
    return '"' + s.replace("\n", "&#10;") + '"'


def html_label(inner: str) -> str:
    """An HTML-like label from already-escaped markup."""
    return "<" + inner + ">"


_SAFE_FILE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_filename(name: str, used: set[str] | None = None, suffix: str = ".svg") -> str:
    """A file name for ``name``: only [A-Za-z0-9_.-], no leading dot, unique within ``used``."""
    base = _SAFE_FILE.sub("_", name).strip("._") or "unnamed"
    base = base[:100]
    cand = base + suffix
    k = 2
    while used is not None and cand.lower() in used:
        cand = f"{base}_{k}{suffix}"
        k += 1
    if used is not None:
        used.add(cand.lower())
    return cand
