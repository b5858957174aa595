"""The jax.checkpoint section of a diff report (text and HTML): per region, whether it still
recomputes after optimization and what it means for the peak (diff/remat.py)."""

from __future__ import annotations

import html


def remat_text(remat: dict | None, limit: int = 20) -> str:
    """Plain lines (the caller escapes them for the terminal)."""
    if not remat:
        return ""
    out = [f"  remat        {remat['summary']}"]
    regs = remat["regions"]
    for x in regs[:limit]:
        out.append(f"    {x['label']}: {x['verdict']}")
    if len(regs) > limit:
        out.append(f"    ... {len(regs) - limit} more regions (--format json lists all)")
    if remat.get("fates_corrected"):
        out.append(f"    ({remat['fates_corrected']} instructions that CSE computes once with "
                   "their twin across a barrier are shown in the twin's kernel)")
    return "\n".join(out) + "\n"


def remat_html(remat: dict | None) -> str:
    if not remat:
        return ""
    e = html.escape
    rows = "".join(
        f"<tr><td>{e(x['label'])}</td><td>{e(x['status'])}</td><td>{e(x['verdict'])}</td></tr>"
        for x in remat["regions"])
    return (f"<section id='remat'><h2>jax.checkpoint regions</h2><p>{e(remat['summary'])}</p>"
            f"<table><tr><th>region</th><th>status</th><th>what XLA did</th></tr>{rows}"
            "</table></section>")
