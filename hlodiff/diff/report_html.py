"""One self-contained HTML page. Every name, op_name and path goes through html.escape."""

from __future__ import annotations

from html import escape as _h

from .result import FATES, DiffResult
from .report_text import _FATE_ORDER, _mb

_CSS = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 6px;
font-size:13px;vertical-align:top}th{background:#f0f0f0}code{font-size:12px}
.fate-rewritten{background:#fff3d6}.fate-folded{background:#e8f4ff}.fate-merged{background:#efe}
.fate-removed{background:#fde}.pic svg{max-width:420px;height:auto}"""


def render_html(result: DiffResult, pictures: dict[str, str] | None = None) -> str:
    """The page. ``pictures`` maps a fusion name to inline SVG text shown in its row
    (trusted: produced by hlodiff's own renderer, embedded as is)."""
    pictures = pictures or {}
    s = result.summary
    b, a = result.before_info, result.after_info
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>hlodiff: ",
           _h(str(b["module"])), "</title><style>", _CSS, "</style></head><body>"]
    out.append(f"<h1>hlodiff ({_h(result.mode)} mode)</h1><p><code>{_h(str(b['file']))}</code> "
               f"({b['instructions']} instructions) &rarr; <code>{_h(str(a['file']))}</code> "
               f"({a['instructions']} instructions)</p>")
    keys = FATES if result.mode == "optimization" else ("unchanged", "changed", "only_before", "only_after")
    out.append("<h2>Summary</h2><table><tr>" + "".join(f"<th>{k}</th>" for k in keys) + "</tr><tr>"
               + "".join(f"<td>{s.get(k, 0)}</td>" for k in keys) + "</tr></table>")
    out.append(f"<p>kernels {s['kernels_before']} &rarr; {s['kernels_after']}; bytes moved "
               f"{_mb(s['bytes_before'])} &rarr; {_mb(s['bytes_after'])}; {s['fusions']} fusions, "
               f"{s['added']} added, {s['layout_changes']} layout changes</p>")
    if result.fusions:
        out.append("<h2>Fusions</h2><table><tr><th>fusion</th><th>kind</th><th>holds</th>"
                   "<th>inputs</th><th>read</th><th>written</th><th>unfused</th><th>picture</th></tr>")
        for f in result.fusions:
            pic = pictures.get(f.name, "")
            out.append(f"<tr id='fusion-{_h(f.name)}'><td>{_h(f.name)}</td><td>{_h(f.kind or '')}</td>"
                       f"<td>{_h(', '.join(f.before))}</td><td>{_h(', '.join(f.inputs))}</td>"
                       f"<td>{_mb(f.bytes_read)}</td><td>{_mb(f.bytes_written)}</td>"
                       f"<td>{_mb(f.unfused_bytes)}</td><td class='pic'>{pic}</td></tr>")
        out.append("</table>")
    if result.regression:
        out.append("<h2>Changes</h2><table><tr><th>status</th><th>before</th><th>after</th><th>what</th></tr>")
        for c in result.regression["changes"]:
            out.append(f"<tr><td>{_h(c['status'])}</td><td>{_h(c['before'] or '')}</td>"
                       f"<td>{_h(c['after'] or '')}</td><td>{_h('; '.join(c['what']))}</td></tr>")
        out.append("</table>")
    out.append("<h2>Instructions</h2><table><tr><th>before</th><th>computation</th><th>fate</th>"
               "<th>after</th><th>fusion</th><th>reason</th><th>op_name</th><th>source</th></tr>")
    for f in sorted(result.instructions, key=lambda f: _FATE_ORDER.get(f.fate, 5)):
        out.append(f"<tr class='fate-{_h(f.fate)}'><td>{_h(f.before)}</td><td>{_h(f.computation)}</td>"
                   f"<td>{_h(f.fate)}</td><td>{_h(f.after or '')}</td><td>{_h(f.fusion or '')}</td>"
                   f"<td>{_h(f.reason)}</td><td>{_h(f.op_name or '')}</td><td>{_h(f.source or '')}</td></tr>")
    out.append("</table>")
    if result.added:
        out.append("<h2>Added</h2><table><tr><th>name</th><th>opcode</th><th>shape</th><th>why</th></tr>")
        for x in result.added:
            out.append(f"<tr><td>{_h(x.name)}</td><td>{_h(x.opcode)}</td><td>{_h(x.shape)}</td>"
                       f"<td>{_h(x.reason)}</td></tr>")
        out.append("</table>")
    if result.layouts:
        out.append("<h2>Layout changes</h2><table><tr><th>instruction</th><th>before</th><th>from</th><th>to</th></tr>")
        for lc in result.layouts:
            out.append(f"<tr><td>{_h(str(lc.instruction))}</td><td>{_h(lc.before or '')}</td>"
                       f"<td>{_h(lc.from_)}</td><td>{_h(lc.to)}</td></tr>")
        out.append("</table>")
    if result.by_source:
        out.append("<h2>By source line</h2><table><tr><th>source</th><th>instructions</th><th>kernels</th></tr>")
        for d in result.by_source:
            out.append(f"<tr><td>{_h(d['source'])}</td><td>{d['instructions']}</td>"
                       f"<td>{_h(', '.join(d['kernels']))}</td></tr>")
        out.append("</table>")
    out.append("</body></html>\n")
    return "".join(out)
