"""Text report: a summary first, then details sorted by what matters most."""

from __future__ import annotations

import io

from rich.console import Console
from rich.markup import escape as _e
from rich.table import Table

from .result import FATES, DiffResult

_FATE_ORDER = {"rewritten": 0, "folded": 1, "merged": 2, "removed": 3, "inlined": 4,
               "fused": 5, "kept": 6, "changed": 0, "only_before": 1, "unchanged": 9}


def _mb(n: int) -> str:
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    if n >= 1 << 10:
        return f"{n / 1024:.1f} KiB"
    return f"{n} B"


def render(result: DiffResult, console: Console, limit: int = 40) -> None:
    s = result.summary
    b, a = result.before_info, result.after_info
    console.print(f"[bold]hlodiff[/bold] {result.mode} mode: " + _e(f"{b['module']} "
                  f"({b['instructions']} instructions) -> {a['module']} ({a['instructions']})"))
    if result.mode == "optimization":
        parts = [f"{s[k]} {k}" for k in FATES if s.get(k)]
    else:
        parts = [f"{s[k]} {k}" for k in ("unchanged", "changed", "only_before", "only_after")]
    console.print("  " + ", ".join(parts))
    console.print(f"  kernels {s['kernels_before']} -> {s['kernels_after']}, bytes moved "
                  f"{_mb(s['bytes_before'])} -> {_mb(s['bytes_after'])}; {s['fusions']} fusions, "
                  f"{s['added']} added, {s['layout_changes']} layout changes")
    if result.fusions:
        t = Table(title="Fusions (most bytes saved first)", title_justify="left")
        for c in ("fusion", "kind", "holds", "read", "written", "unfused"):
            t.add_column(c)
        for f in result.fusions[:limit]:
            held = ", ".join(f.before[:6]) + (f" +{len(f.before) - 6}" if len(f.before) > 6 else "")
            t.add_row(_e(f.name), f.kind or "", _e(held), _mb(f.bytes_read), _mb(f.bytes_written),
                      _mb(f.unfused_bytes))
        console.print(t)
    if result.regression:
        t = Table(title="Changes", title_justify="left")
        for c in ("status", "before", "after", "what"):
            t.add_column(c)
        for c in result.regression["changes"][:limit]:
            t.add_row(c["status"], _e(c["before"] or ""), _e(c["after"] or ""), _e("; ".join(c["what"])))
        console.print(t)
        for f in result.regression["fusions"][:limit]:
            console.print(_e(f"  fusion {f['kind']}: {', '.join(f['before'])} -> {', '.join(f['after'])}: {f['what']}"))
    t = Table(title="Instructions (unusual fates first)", title_justify="left")
    for c in ("before", "computation", "fate", "after", "fusion", "reason"):
        t.add_column(c)
    rows = sorted(result.instructions, key=lambda f: _FATE_ORDER.get(f.fate, 5))
    for f in rows[:limit]:
        t.add_row(_e(f.before), _e(f.computation), f.fate, _e(f.after or ""), _e(f.fusion or ""), _e(f.reason))
    console.print(t)
    if len(rows) > limit:
        console.print(f"  ... {len(rows) - limit} more (use --limit 0 or --format json)")
    if result.added:
        console.print("[bold]Added[/bold]")
        for x in result.added[:limit]:
            console.print(_e(f"  {x.name} ({x.opcode} {x.shape}) in {x.computation}: {x.reason}"))
    if result.layouts:
        console.print("[bold]Layout changes[/bold]")
        for lc in result.layouts[:limit]:
            console.print(_e(f"  {lc.instruction} ({lc.before or ''}): {lc.from_} -> {lc.to}"))
    if result.by_source:
        console.print("[bold]By source line[/bold]")
        for d in result.by_source[:limit]:
            console.print(_e(f"  {d['source']}: {d['instructions']} instructions -> "
                             f"{', '.join(d['kernels'][:8]) or '(none)'}"))


def render_plain(result: DiffResult, limit: int = 40, width: int = 160) -> str:
    buf = io.StringIO()
    render(result, Console(file=buf, width=width, no_color=True, highlight=False,
                           markup=True, emoji=False), limit=limit or 10 ** 9)
    return buf.getvalue()
