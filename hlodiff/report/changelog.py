"""The regression report as a changelog: totals before -> after, then grouped changes.

Reads ``result.regression`` (see :mod:`hlodiff.diff.regression`): ``groups`` (one entry per
kind of change, with a count, one example and the source lines), ``per_line`` (source lines
whose kernel count changed). Text goes through rich markup escaping, HTML through
``html.escape``: every name and line comes from the dumps.
"""

from __future__ import annotations

from html import escape as _h

from rich.console import Console
from rich.markup import escape as _e

from ..diff.result import DiffResult

_TITLES = {"changed": "Changed kernels", "only_before": "Only before (gone)",
           "only_after": "Only after (new)", "uncertain": "Pairing uncertain"}


def totals(result: DiffResult) -> list[tuple[str, str, str]]:
    """(what, before, after) rows for the headline: kernels, bytes, FLOPs, peak memory."""
    s = result.summary
    rows = [("kernels", str(s.get("kernels_before", 0)), str(s.get("kernels_after", 0))),
            ("bytes moved", _size(s.get("bytes_before", 0)), _size(s.get("bytes_after", 0)))]
    kinds = (getattr(result, "devices", None) or {}).get("kernels") or {}
    kb, ka = kinds.get("before") or {}, kinds.get("after") or {}
    if kb.get("flops") is not None and ka.get("flops") is not None:  # analysis/kernels.py
        rows.append(("FLOPs", _count(kb["flops"]), _count(ka["flops"])))
    b, a = s.get("peak_bytes_before"), s.get("peak_bytes_after")  # diff/memory.py
    if b is not None and a is not None:
        rows.append(("peak memory", _size(b), _size(a)))
    return rows


def _size(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _count(n: int) -> str:
    for unit, size in (("G", 10 ** 9), ("M", 10 ** 6), ("K", 10 ** 3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def _example(g: dict) -> str:
    ex = g["example"]
    if ex["before"] and ex["after"]:
        return f"{ex['before']} -> {ex['after']}"
    return ex["before"] or ex["after"] or ""


def render_text(result: DiffResult, console: Console, limit: int = 40) -> None:
    """The changelog section of the text report (regression mode)."""
    reg = result.regression or {}
    groups = reg.get("groups", [])
    s = result.summary
    console.print("[bold]Changelog[/bold]")
    for what, b, a in totals(result)[2:]:
        console.print(f"  {what:<12} {b} -> {a}")
    console.print(f"  kernels paired {reg.get('pairs', 0)}, joined {reg.get('joined', 0)}, "
                  f"split {reg.get('split', 0)}, uncertain {reg.get('uncertain', 0)}; "
                  f"unchanged {s.get('unchanged', 0)}")
    if not groups:
        console.print("  nothing changed")
        console.print()
        return
    status = None
    for g in groups[:limit]:
        if g["status"] != status:
            status = g["status"]
            console.print(f"[bold]{_TITLES.get(status, status)}[/bold]")
        console.print(f"  {_e(g['text'])}", overflow="fold")
        lines = ", ".join(g["lines"][:4]) + (" ..." if len(g["lines"]) > 4 else "")
        console.print(_e(f"    e.g. {_example(g)}" + (f"  ({lines})" if lines else "")),
                      style="dim", overflow="fold")
    if len(groups) > limit:
        console.print(f"  ... {len(groups) - limit} more groups (--limit 0 or --format json)")
    per = reg.get("per_line", [])
    if per:
        console.print("[bold]Kernels per source line[/bold] (where the count changed)")
        for p in per[:limit]:
            console.print(_e(f"  {p['line']}: {p['before']} -> {p['after']} kernels"))
        if len(per) > limit:
            console.print(f"  ... {len(per) - limit} more lines")
    console.print()


def render_html(result: DiffResult) -> list[str]:
    """The changelog section of the HTML report (regression mode)."""
    reg = result.regression or {}
    out = ["<section id='changes'><h2>Changelog</h2><table><thead><tr><th></th><th>before</th>"
           "<th>after</th></tr></thead><tbody>"]
    for what, b, a in totals(result):
        out.append(f"<tr><td>{_h(what)}</td><td>{_h(b)}</td><td>{_h(a)}</td></tr>")
    out.append("</tbody></table>")
    groups = reg.get("groups", [])
    if not groups:
        out.append("<p>Nothing changed.</p>")
    status = None
    for g in groups:
        if g["status"] != status:
            if status is not None:
                out.append("</ul>")
            status = g["status"]
            out.append(f"<h3>{_h(_TITLES.get(status, status))}</h3><ul>")
        out.append(f"<li>{_h(g['text'])}<br><span class='muted'>e.g. <code>"
                   f"{_h(_example(g))}</code> {_h(', '.join(g['lines'][:6]))}</span></li>")
    if status is not None:
        out.append("</ul>")
    per = reg.get("per_line", [])
    if per:
        out.append("<h3>Kernels per source line</h3><ul>")
        for p in per:
            out.append(f"<li><code>{_h(p['line'])}</code>: {p['before']} &rarr; {p['after']}</li>")
        out.append("</ul>")
    out.append("</section>")
    return out
