"""Reports of one module's memory (``hlodiff memory``): plain text and an HTML page with an
inline SVG plot of bytes in use over the schedule, the peak marked, the top buffers labelled.

All dump text (instruction names, shapes, source paths) is escaped; the page needs no script.
"""

from __future__ import annotations

import html

from ..analysis.memory import MemoryReport
from ..units import format_bytes as fb


def _row(*cells: str, widths=(11, 11, 34, 22, 0)) -> str:
    out = []
    for c, w in zip(cells, widths):
        out.append(c if not w else (c + " " * max(w - len(c), 1)))
    return "".join(out).rstrip()


def _clean(s: str | None) -> str:
    """Terminal-safe: no control characters from the dump."""
    return "".join(ch if ch.isprintable() else "?" for ch in (s or ""))


def render_memory_text(rep: MemoryReport, top: int = 15) -> str:
    """The report as plain text (human units)."""
    L = []
    how = "ESTIMATED by simulating the module's schedule (XLA's memory files not read)" if rep.estimated \
        else "from XLA's buffer assignment / memory-usage report"
    L.append(f"{_clean(rep.module)}: peak {fb(rep.peak_bytes)} ({rep.peak_bytes} bytes), {how}")
    if rep.estimated and rep.peak_bytes_low is not None and rep.peak_bytes_low < rep.peak_bytes:
        L.append(f"  lower estimate {fb(rep.peak_bytes_low)} (if XLA places temporaries in the "
                 "outputs' buffers before the outputs are written)")
    if len(rep.peak_by_space) > 1:
        L.append("  memory spaces: " + ", ".join(f"{_clean(k)} {fb(v)}"
                                                 for k, v in rep.peak_by_space.items()))
    if rep.live_range_peak_bytes is not None:
        L.append(f"  XLA live-range 'peak usage' {fb(rep.live_range_peak_bytes)} at step "
                 f"{rep.peak_time} ({_clean(rep.peak_instruction)}); values updated in place "
                 "count twice there, so the device needs the peak above")
    elif rep.peak_instruction:
        how = " (moment and live set estimated: no live-range file)" \
            if rep.live_set_estimated else ""
        L.append(f"  peak at step {rep.peak_time} ({_clean(rep.peak_instruction)}){how}")
    if rep.by_kind:
        names = [("parameter", "parameters"), ("donated", "donated parameters (aliased by outputs)"),
                 ("output", "outputs"), ("temp", "temporaries"), ("constant", "constants"),
                 ("thread-local", "thread-local")]
        L.append("  " + ", ".join(f"{label} {fb(rep.by_kind[k])}" for k, label in names
                                  if rep.by_kind.get(k)))
    for d in rep.donated:
        L.append(f"  donated: parameter {d['parameter']} ({_clean(d['shape'])}, {fb(d['bytes'])}) "
                 f"is written in place by {_clean(', '.join(d['written_by'][:3])) or 'the output'}")
    if rep.remat:
        r = rep.remat
        L.append(f"  jax.checkpoint: {r['recomputed_kernels']} recomputed kernels, "
                 f"{r['in_forward']} scheduled in the forward pass, {r['in_backward']} in the "
                 f"backward; {r['verdict']}")
    L.append("")
    L.append(f"Live at the peak: {len(rep.live_at_peak)} buffers, largest first")
    L.append(_row("bytes", "kind", "instruction (kernel)", "shape", "source"))
    for b in rep.live_at_peak[:top]:
        name = b.instruction + (f" ({b.kernel})" if b.kernel and b.kernel != b.instruction else "")
        L.append(_row(fb(b.bytes), b.kind, _clean(name), _clean(b.shape), _clean(b.source or "-")))
    if len(rep.live_at_peak) > top:
        L.append(f"  ... {len(rep.live_at_peak) - top} more")
    L.append("")
    L.append("Peak by source line")
    for s, n, k in rep.by_source[:top]:
        L.append(f"  {fb(n):>11}  {k:>3} buffers  {_clean(s)}")
    L.append("")
    L.append("Peak by op_name")
    for s, n in rep.by_op_name[:top]:
        L.append(f"  {fb(n):>11}  {_clean(s)}")
    return "\n".join(L) + "\n"


def _downsample(values: list[int], most: int) -> list[tuple[int, int]]:
    """(step, bytes) points, at most ``most`` of them, each bucket keeping its largest value
    (so the peak survives)."""
    n = len(values)
    if n <= most:
        return list(enumerate(values))
    step = n / most
    out = []
    for k in range(most):
        lo, hi = int(k * step), max(int((k + 1) * step), int(k * step) + 1)
        t = max(range(lo, min(hi, n)), key=values.__getitem__)
        out.append((t, values[t]))
    return out


def svg_timeline(rep: MemoryReport, width: int = 900, height: int = 300, labels: int = 5) -> str:
    """Bytes in use at each step of the schedule as an inline SVG (escaped text)."""
    e = html.escape
    tl = _downsample(rep.timeline or [rep.peak_bytes], 1500)
    n = len(rep.timeline or [0])
    top = max(max(v for _t, v in tl), rep.peak_bytes, 1)
    ml, mr, mt, mb = 70, 20, 20, 40
    w, h = width - ml - mr, height - mt - mb
    x = lambda t: ml + (w * t / max(n - 1, 1))
    y = lambda v: mt + h - h * v / top
    pts = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in tl)
    area = f"{ml},{mt + h} " + pts + f" {x(n - 1):.1f},{mt + h}"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="bytes in use over the schedule">',
           f'<rect x="{ml}" y="{mt}" width="{w}" height="{h}" fill="#fafafa" stroke="#ccc"/>',
           f'<polygon points="{area}" fill="#9ecae1" stroke="none"/>',
           f'<polyline points="{pts}" fill="none" stroke="#3182bd" stroke-width="1.5"/>',
           f'<line x1="{ml}" x2="{ml + w}" y1="{y(rep.peak_bytes):.1f}" y2="{y(rep.peak_bytes):.1f}" '
           f'stroke="#d62728" stroke-dasharray="4 3"/>',
           f'<text x="{ml + 4}" y="{y(rep.peak_bytes) - 4:.1f}" font-size="11" fill="#d62728">'
           f'peak {e(fb(rep.peak_bytes))}{" (estimated)" if rep.estimated else ""}</text>']
    for frac in (0, 0.5, 1):
        out.append(f'<text x="{ml - 6}" y="{y(top * frac) + 4:.1f}" font-size="10" '
                   f'text-anchor="end">{e(fb(top * frac))}</text>')
    out.append(f'<text x="{ml + w / 2}" y="{height - 8}" font-size="11" text-anchor="middle">'
               f'schedule step (0 .. {n - 1})</text>')
    if rep.peak_time is not None and n > 1:
        px = x(min(rep.peak_time, n - 1))
        out.append(f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{mt}" y2="{mt + h}" stroke="#d62728"/>')
        lbl = [f"step {rep.peak_time}: {rep.peak_instruction or ''}"]
        lbl += [f"{fb(b.bytes)} {b.instruction}" for b in rep.live_at_peak[:labels]]
        anchor, tx = ("end", px - 4) if px > ml + w / 2 else ("start", px + 4)
        for i, t in enumerate(lbl):
            out.append(f'<text x="{tx:.1f}" y="{mt + 14 + 13 * i}" font-size="11" '
                       f'text-anchor="{anchor}">{e(t)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def render_memory_html(rep: MemoryReport, top: int = 30) -> str:
    """A self-contained HTML page: the plot, then the tables."""
    e = html.escape
    rows = "\n".join(
        f"<tr><td>{e(fb(b.bytes))}</td><td>{e(b.kind)}</td><td>{e(b.instruction)}</td>"
        f"<td>{e(b.kernel or '')}</td><td>{e(b.shape)}</td><td>{e(b.source or '')}</td>"
        f"<td>{e(b.op_name or '')}</td></tr>" for b in rep.live_at_peak[:top])
    src = "\n".join(f"<tr><td>{e(fb(n))}</td><td>{k}</td><td>{e(s)}</td></tr>"
                    for s, n, k in rep.by_source[:top])
    note = "estimated from the module's schedule" if rep.estimated else "XLA's allocation total"
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>memory: {e(rep.module)}</title>
<style>body{{font-family:sans-serif;margin:1.5em}} table{{border-collapse:collapse}}
td,th{{border:1px solid #ddd;padding:2px 6px;font-size:13px}}</style></head><body>
<h1>Memory of {e(rep.module)}</h1>
<p>Peak <b>{e(fb(rep.peak_bytes))}</b> ({rep.peak_bytes} bytes, {e(note)}).</p>
{svg_timeline(rep)}
<h2>Live at the peak</h2>
<table><tr><th>bytes</th><th>kind</th><th>instruction</th><th>kernel</th><th>shape</th>
<th>source</th><th>op_name</th></tr>
{rows}
</table>
<h2>Peak by source line</h2>
<table><tr><th>bytes</th><th>buffers</th><th>source</th></tr>
{src}
</table>
</body></html>
"""


def _signed(n: int) -> str:
    return ("+" if n > 0 else "") + fb(n)


def memory_diff_text(mem: dict | None, limit: int = 10) -> str:
    """The memory section of a diff report, plain text (empty when there is none)."""
    if not mem:
        return ""
    b, a = mem.get("before"), mem["after"]
    est = lambda s: " (estimated)" if s and s["estimated"] else ""
    L = ["", "Memory (peak = what the device allocates)"]
    if b:
        ch = mem["change_bytes"]
        pct = f" ({100.0 * ch / b['peak_bytes']:+.1f}%)" if b["peak_bytes"] else ""
        L.append(f"  peak {fb(b['peak_bytes'])}{est(b)} -> {fb(a['peak_bytes'])}{est(a)}: "
                 f"{_signed(ch)}{pct}")
    else:  # optimization mode: one line in the summary
        return f"  peak memory  {fb(a['peak_bytes'])}{est(a)} (the optimized module)\n"
    for side, s in (("before", b), ("after", a)):
        p = s and s.get("peak_at")
        if p:
            who = "simulated" if p.get("simulated") else "XLA's live-range"
            L.append(f"  {side}: {who} peak at step {p['step']} ({_clean(p['instruction'])}, "
                     f"{_clean(p['source'] or p['op_name'] or '?')})")
    for side, s in (("before", b), ("after", a)):
        r = s and s.get("remat")
        if r:
            L.append(f"  {side}: jax.checkpoint recomputes {r['recomputed_kernels']} kernels "
                     f"({r['in_forward']} in the forward pass, {r['in_backward']} in the "
                     f"backward): {r['verdict']}")
    if mem.get("peak_moved") is not None:
        L.append("  the peak moved to another point of the program" if mem["peak_moved"]
                 else "  the peak is at the same point of the program")
    if mem["growth_by_source"]:
        L.append("  growth at the peak by source line:")
        for g in mem["growth_by_source"][:limit]:
            L.append(f"    {_signed(g['change']):>11}  "
                     f"{_clean(g['source'])}  ({fb(g['before'])} -> {fb(g['after'])})")
    if mem.get("growth_by_op_name"):
        L.append("  growth at the peak by op_name:")
        for g in mem["growth_by_op_name"][:limit]:
            L.append(f"    {_signed(g['change']):>11}  {_clean(g['op_name'])}")
    if mem.get("growth_by_kernel"):
        L.append("  growth at the peak by kernel:")
        for g in mem["growth_by_kernel"][:min(limit, 5)]:
            L.append(f"    {_signed(g['change']):>11}  {_clean(g['kernel'])}")
    if mem["new_at_peak"]:
        L.append("  new at the peak:")
        for n in mem["new_at_peak"][:limit]:
            L.append(f"    {fb(n['bytes']):>11}  {_clean(n['instruction'])} {_clean(n['shape'])} "
                     f"{_clean(n['source'] or '-')}")
    return "\n".join(L) + "\n"


def svg_two_timelines(before: dict | None, after: dict, width: int = 900,
                      height: int = 260) -> str:
    """Bytes in use over the schedule of both modules (each stretched to the full width: the
    two schedules have different lengths), the two peaks as dashed lines."""
    e = html.escape
    sides = [(s, c, n) for s, c, n in ((before, "#3182bd", "before"), (after, "#e6550d", "after"))
             if s and s.get("timeline")]
    if not sides:
        return ""
    top = max([max(v for _t, v in s["timeline"]) for s, _c, _n in sides]
              + [s["peak_bytes"] for s, _c, _n in sides] + [1])
    ml, mr, mt, mb = 70, 20, 20, 36
    w, h = width - ml - mr, height - mt - mb
    y = lambda v: mt + h - h * v / top
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="bytes in use, before and after">',
           f'<rect x="{ml}" y="{mt}" width="{w}" height="{h}" fill="#fafafa" stroke="#ccc"/>']
    for k, (s, colour, name) in enumerate(sides):
        tl = s["timeline"]
        last = max(tl[-1][0], 1)
        pts = " ".join(f"{ml + w * t / last:.1f},{y(v):.1f}" for t, v in tl)
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        py = y(s["peak_bytes"])
        out.append(f'<line x1="{ml}" x2="{ml + w}" y1="{py:.1f}" y2="{py:.1f}" stroke="{colour}" '
                   f'stroke-dasharray="4 3"/>')
        out.append(f'<text x="{ml + w - 4}" y="{py - 4 - 12 * k:.1f}" font-size="11" '
                   f'text-anchor="end" fill="{colour}">{e(name)} peak '
                   f'{e(fb(s["peak_bytes"]))}{" (estimated)" if s["estimated"] else ""}</text>')
    for frac in (0, 0.5, 1):
        out.append(f'<text x="{ml - 6}" y="{y(top * frac) + 4:.1f}" font-size="10" '
                   f'text-anchor="end">{e(fb(top * frac))}</text>')
    out.append(f'<text x="{ml + w / 2}" y="{height - 8}" font-size="11" text-anchor="middle">'
               'schedule, start to end (each module stretched to the width)</text>')
    out.append("</svg>")
    return "\n".join(out)


def memory_diff_html(mem: dict | None) -> str:
    """The memory section of the HTML diff report (escaped)."""
    if not mem:
        return ""
    return ("<section id='memory'><h2>Memory</h2>" + svg_two_timelines(mem.get("before"),
                                                                      mem["after"])
            + "<pre>" + html.escape(memory_diff_text(mem)) + "</pre></section>")
