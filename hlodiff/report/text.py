"""Text report: a short summary first, then details sorted by what matters most.

Order: summary (kernels, bytes, fate counts), fusions (most bytes saved first), the rare
fates (folded, merged, removed), rewritten, inlined, added, layout changes, source lines.
Tables fit the console width (80 columns included): names are the key column and are not
cut; long lists are shown as a count and the first few names.
"""

from __future__ import annotations

import io
from collections import Counter

from rich import box
from rich.console import Console
from rich.markup import escape as _e
from rich.table import Table

from ..diff.result import FATES, DiffResult
from ..hlo.frames import display_path
from ..units import format_bytes

# rare, surprising fates first; the bulk (fused, kept) last
FATE_ORDER = {"folded": 0, "merged": 1, "removed": 2, "rewritten": 3, "inlined": 4,
              "fused": 5, "kept": 6,
              "changed": 0, "only_before": 1, "only_after": 2, "unchanged": 9}
_FATE_ORDER = FATE_ORDER  # old name

_WHAT = {"folded": "became constants", "merged": "duplicates removed (CSE)",
         "removed": "dead or no-op", "rewritten": "replaced by other ops",
         "inlined": "calls inlined", "fused": "now inside fusions", "kept": "unchanged"}


def _mb(n: int) -> str:
    """Bytes in the unit that reads best (B, KiB, MiB, GiB): the shared helper's format."""
    return format_bytes(n)


def _short(n: int) -> str:
    """At most 6 characters: 516B, 20.4K, 384K, 1.1M."""
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{v:.1f}{unit}" if v < 100 else f"{v:.0f}{unit}"
    return f"{n}B"


def _pct(before: int, after: int) -> str:
    return f" ({(after - before) * 100.0 / before:+.0f}%)" if before else ""


def _list(names: list[str], width: int) -> str:
    """Names joined by ', ' fitting ``width``: as many as fit, then '+N'."""
    out: list[str] = []
    used = 0
    for k, n in enumerate(names):
        more = len(names) - k - 1
        tail = len(f" +{more}") if more else 0
        if used + len(n) + (2 if out else 0) + tail > width and out:
            return ", ".join(out) + f" +{len(names) - k}"
        out.append(n)
        used += len(n) + (2 if len(out) > 1 else 0)
    return ", ".join(out)


def _before_cell(f, entry: str | None) -> str:
    """``dot.3 (dot)``, with `` [region_2]`` when it is not in the entry computation."""
    cell = f"{f.before} ({f.opcode})" if f.opcode else f.before
    if entry and f.computation and f.computation != entry:
        cell += f" [{f.computation}]"
    return cell


def _table(title: str, width: int) -> Table:
    return Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD,
                 pad_edge=False, padding=0, show_edge=False, expand=False)


def _merged(console: Console, rows: list, label: str, width: int, limit: int) -> None:
    """CSE: one row per surviving instruction, listing the duplicates merged into it."""
    groups: dict[tuple, list[str]] = {}
    for f in rows:
        groups.setdefault((f.into or f.after or "?", f.fusion or ""), []).append(f.before)
    surv_w = min(max(len(k[0]) for k in groups), max(12, width // 4))
    t = _table(label, width)
    t.add_column("kept copy", no_wrap=True, overflow="ellipsis", max_width=surv_w)
    t.add_column("n", justify="right", no_wrap=True)
    t.add_column("duplicates merged into it", overflow="fold", ratio=1)
    for (into, fusion), names in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:limit]:
        where = f" [in {fusion}]" if fusion else ""
        counts: dict[str, int] = {}
        for n in names:  # a callee's instruction repeats once per call site
            counts[n] = counts.get(n, 0) + 1
        shown = ", ".join(n if k == 1 else f"{n} (at {k} call sites)" for n, k in counts.items())
        t.add_row(_e(into), str(len(names)), _e(shown + where))
    console.print(t)
    console.print()


# Regression changes, most telling first: changed kernels, then kernels only on one side,
# then the plumbing (constants, bitcasts, tuples) that renumbering shuffles.
_KERNEL_OPS = ("fusion", "custom-call", "dot", "convolution", "while", "conditional", "call",
               "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "sort", "scatter")
_PLUMBING_OPS = ("constant", "bitcast", "parameter", "get-tuple-element", "tuple", "copy")
_STATUS_ORDER = {"changed": 0, "only_before": 1, "only_after": 1}


def _change_weight(c: dict) -> tuple:
    what = " ".join(c.get("what") or ())
    op = what.split(" ", 1)[0] if c["status"] != "changed" else ""
    kind = 0 if c["status"] == "changed" or op in _KERNEL_OPS else 2 if op in _PLUMBING_OPS else 1
    return (kind, _STATUS_ORDER.get(c["status"], 2))


def render(result: DiffResult, console: Console, limit: int = 40) -> None:
    s = result.summary
    b, a = result.before_info, result.after_info
    width = console.width
    limit = limit or 10 ** 9  # 0: all
    opt = result.mode == "optimization"
    # ---- summary ----------------------------------------------------------------------
    console.print(f"[bold]hlodiff[/bold] {result.mode} mode: [bold]{_e(str(b['module']))}[/bold]"
                  + (f" vs {_e(str(a['module']))}" if a["module"] != b["module"] else ""))
    kb, ka = s.get("kernels_before", 0), s.get("kernels_after", 0)
    bb, ba = s.get("bytes_before", 0), s.get("bytes_after", 0)
    console.print(f"  kernels      [bold]{kb} -> {ka}[/bold]{_pct(kb, ka)}  [dim]what runs: no "
                  "parameters, constants, tuples[/dim]", overflow="fold")
    console.print(f"  bytes moved  {_mb(bb)} -> {_mb(ba)}{_pct(bb, ba)}")
    console.print(f"  instructions {b.get('ops', b['instructions'])} -> "
                  f"{a.get('ops', a['instructions'])}  [dim]fusion parameters not counted[/dim]")
    console.print(f"  after        {s.get('fusions', 0)} fusions, {s.get('added', 0)} added, "
                  f"{s.get('layout_changes', 0)} layout changes")
    keys = FATES if opt else ("changed", "only_before", "only_after", "unchanged")
    keys = sorted(keys, key=lambda k: FATE_ORDER.get(k, 5))
    parts = [f"{s.get(k, 0)} {k}" for k in keys if s.get(k)]
    head = "  fates        " if opt else "  status       "
    console.print(_e(head + ", ".join(parts)), overflow="fold")
    if result.memory:  # report/memory.py
        from .memory import memory_diff_text
        console.print(_e(memory_diff_text(result.memory).rstrip("\n")), overflow="fold")
    if result.remat:  # report/remat.py: per jax.checkpoint region
        from .remat import remat_text
        console.print(_e(remat_text(result.remat).rstrip("\n")), overflow="fold")
    console.print()
    # ---- fusions (optimization mode: what each kernel holds; regression mode lists the
    # fusions that split, joined or changed below instead) -----------------------------
    if result.fusions and opt:
        fusions = sorted(result.fusions, key=lambda f: (not f.before,
                         -(f.unfused_bytes - f.bytes_read - f.bytes_written)))
        name_w = min(max(len(f.name) for f in fusions[:limit]), max(16, width - 50))
        t = _table(f"Fusions ({len(fusions)}, most bytes saved first)", width)
        # widths are content widths; the box puts one space between columns
        hold_w = max(10, width - name_w - (6 + 3 + 6 + 7) - 5)
        for col, w, right in (("fusion", name_w, False), ("kind", 6, False), ("ops", 3, True),
                              ("r+w", 6, True), ("saved", 7, True), ("holds", hold_w, False)):
            # names wrap (never cut: a cut name cannot be looked up); the list is fitted
            t.add_column(col, width=w, no_wrap=col != "fusion",
                         overflow="fold" if col == "fusion" else "ellipsis",
                         justify="right" if right else "left")
        for f in fusions[:limit]:
            saved = f.unfused_bytes - f.bytes_read - f.bytes_written
            kind = (f.kind or "").removeprefix("k")
            t.add_row(_e(f.name), _e(kind), str(len(f.before)), _short(f.bytes_read + f.bytes_written),
                      ("-" + _short(-saved)) if saved < 0 else _short(saved),
                      _e(_list(f.before, hold_w)) if f.before else "(new kernel)" if opt else "")
        console.print(t)
        if len(fusions) > limit:
            console.print(f"  ... {len(fusions) - limit} more fusions (--limit 0 shows all)")
        console.print("r+w: bytes the kernel reads + writes; saved: bytes its ops would move "
                      "as separate kernels, minus r+w", style="dim", overflow="fold")
        console.print()
    # ---- regression ---------------------------------------------------------------------
    if result.regression:  # regression mode: a changelog (report/changelog.py)
        from .changelog import render_text as _changelog
        _changelog(result, console, limit)
    # ---- instructions by fate ------------------------------------------------------------
    groups: dict[str, list] = {}
    for f in result.instructions:
        groups.setdefault(f.fate, []).append(f)
    if result.regression:
        groups.clear()  # regression mode: the changelog above says it, grouped
    for fate in sorted(groups, key=lambda k: FATE_ORDER.get(k, 5)):
        rows = groups[fate]
        label = f"{fate} ({len(rows)}): {_WHAT.get(fate, '')}".rstrip(": ")
        if fate in ("fused", "kept", "unchanged"):
            names = [f.before for f in rows]
            extra = " (see Fusions)" if fate == "fused" else ""
            console.print(f"[bold]{_e(label)}[/bold]{extra}")
            console.print(_e("  " + _list(names, width - 4)))
            console.print()
            continue
        if fate == "merged":
            _merged(console, rows, label, width, limit)
            continue
        entry = b.get("entry")
        cells = [_before_cell(f, entry) for f in rows[:limit]]
        name_w = min(max(len(c) for c in cells), max(12, width // 3))
        wide = width >= 110
        t = _table(label, width)
        t.add_column("before (opcode)", overflow="fold", max_width=name_w)
        t.add_column("became", overflow="fold", max_width=max(10, width // 5))
        if wide:
            t.add_column("in kernel", no_wrap=True, overflow="ellipsis", max_width=30)
        t.add_column("why", overflow="fold", ratio=1)
        for f, cell in zip(rows[:limit], cells):
            became = f.after or ""
            why = f.reason
            if wide:
                t.add_row(_e(cell), _e(became), _e(f.fusion or ""), _e(why))
                continue
            if f.fusion and f.fusion not in why:
                why += f" [in {f.fusion}]"
            t.add_row(_e(cell), _e(became), _e(why))
        console.print(t)
        if len(rows) > limit:
            console.print(f"  ... {len(rows) - limit} more {fate} (--limit 0 or --format json)")
        console.print()
    # ---- added, layouts, sources ----------------------------------------------------------
    if result.added:
        console.print(f"[bold]Added ({len(result.added)})[/bold]")
        by_reason = Counter(x.reason for x in result.added)
        if len(by_reason) < len(result.added):  # many alike: one line per reason
            for reason, n in by_reason.most_common(limit):
                names = [x.name for x in result.added if x.reason == reason]
                console.print(_e(f"  {reason} ({n}): ") + _e(_list(names, max(10, width - len(reason) - 12))),
                              overflow="fold")
        else:
            for x in result.added[:limit]:
                console.print(_e(f"  {x.name} ({x.opcode} {x.shape}) in {x.computation}: {x.reason}"),
                              overflow="fold")
        console.print()
    if result.layouts:
        console.print(f"[bold]Layout changes ({len(result.layouts)})[/bold]")
        for lc in result.layouts[:limit]:
            console.print(_e(f"  {lc.instruction} ({lc.before or ''}): {lc.from_} -> {lc.to}"),
                          overflow="fold")
        console.print()
    from .devices import render_devices  # gpu helper: kernels, collectives, shards
    render_devices(result, console, limit)
    if result.by_source:
        t = _table("Source lines -> kernels", width)
        t.add_column("source", overflow="fold", max_width=max(16, width // 3))
        t.add_column("ops", justify="right", no_wrap=True)
        t.add_column("kernels", overflow="fold", ratio=1)
        for d in result.by_source[:limit]:
            ks = d["kernels"]
            t.add_row(_e(display_path(d["source"])), str(d["instructions"]),
                      _e(_list(ks, 3 * max(20, width - 30)) if ks else "(none)"))
        console.print(t)
        if len(result.by_source) > limit:
            console.print(f"  ... {len(result.by_source) - limit} more source lines")


def render_plain(result: DiffResult, limit: int = 40, width: int = 160) -> str:
    buf = io.StringIO()
    render(result, Console(file=buf, width=width, no_color=True, highlight=False,
                           markup=True, emoji=False), limit=limit or 10 ** 9)
    return buf.getvalue()
