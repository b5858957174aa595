"""What a notebook shows for a diff result, a module and a fusion: a compact HTML table (the
whole report of a 30,000-instruction module would be megabytes in a cell) and, where
Graphviz is installed, a picture. Every piece of dump text is escaped."""

from __future__ import annotations

from html import escape
from typing import Any

from ..analysis.summary import summarize
from ..diff.result import DiffResult, FusionInfo, FusionView
from ..hlo.model import Module
from ..units import format_bytes as human_bytes

MAX_SVG_NODES = 300  # larger pictures: use `hlodiff render` with --collapse-fusions or --focus


def _table(rows: list[tuple[str, str]], title: str) -> str:
    body = "".join(f"<tr><th style='text-align:left'>{escape(k)}</th><td style='text-align:left'>"
                   f"{escape(v)}</td></tr>" for k, v in rows)
    return f"<div><b>{escape(title)}</b><table>{body}</table></div>"


def _names(names: list[str], limit: int = 12) -> str:
    more = len(names) - limit
    return ", ".join(names[:limit]) + (f", +{more} more" if more > 0 else "")


def _result_html(r: DiffResult) -> str:
    s = r.summary
    b, a = r.before_info, r.after_info
    fates = ", ".join(f"{s[k]} {k}" for k in s if k in ("kept", "fused", "folded", "merged",
                      "rewritten", "inlined", "removed", "unchanged", "changed",
                      "only_before", "only_after") and s.get(k))
    rows = [("mode", r.mode), ("module", f"{b['module']} -> {a['module']}"),
            ("instructions", f"{b['instructions']} -> {a['instructions']}"),
            ("kernels (what runs)", f"{s.get('kernels_before', 0)} -> {s.get('kernels_after', 0)}"),
            ("bytes moved", f"{human_bytes(s.get('bytes_before', 0))} -> "
                            f"{human_bytes(s.get('bytes_after', 0))}"),
            ("fates", fates),
            ("fusions / added / layout changes",
             f"{s.get('fusions', 0)} / {s.get('added', 0)} / {s.get('layout_changes', 0)}")]
    out = [_table(rows, "hlodiff result")]
    if r.fusions:
        head = "<tr><th>fusion</th><th>kind</th><th>ops</th><th>r+w</th><th>holds</th></tr>"
        body = "".join(
            f"<tr><td>{escape(f.name)}</td><td>{escape(f.kind or '')}</td><td>{len(f.before)}</td>"
            f"<td>{escape(human_bytes(f.bytes_read + f.bytes_written))}</td>"
            f"<td style='text-align:left'>{escape(_names(f.before, 6))}</td></tr>"
            for f in r.fusions[:15])
        more = f"<div>+{len(r.fusions) - 15} more: result.fusions</div>" if len(r.fusions) > 15 else ""
        out.append(f"<div><b>Fusions, most bytes saved first</b><table>{head}{body}</table>{more}</div>")
    out.append("<div><i>result.fate_of(NAME), result.fusion(NAME), result.to_json()</i></div>")
    return "".join(out)


def _module_html(m: Module) -> str:
    s = summarize(m, top=5)
    rows = [("entry", s.entry), ("instructions", f"{s.instructions} in {s.computations} computations"),
            ("kernels (what runs)", str(s.kernels)),
            ("fusions", ", ".join(f"{k} {v}" for k, v in s.fusions_by_kind.most_common(6)) or "none"),
            ("opcodes", ", ".join(f"{k} {v}" for k, v in s.opcodes.most_common(8))),
            ("largest tensors", ", ".join(f"{n} {human_bytes(b)}" for b, _c, n, _s in s.largest))]
    return _table(rows, f"HloModule {m.name}" + (f" ({m.path})" if m.path else ""))


def _fusion_html(v: FusionView | FusionInfo) -> str:
    f = v.info if isinstance(v, FusionView) else v
    rows = [("kind", f.kind or ""), ("computation", f.computation or ""),
            ("before instructions", _names(f.before, 30)),
            ("inputs", _names(f.inputs)), ("outputs", _names(f.outputs)),
            ("bytes read + written", human_bytes(f.bytes_read + f.bytes_written)),
            ("bytes as separate kernels", human_bytes(f.unfused_bytes)),
            ("sources", _names(f.sources, 6))]
    return _table(rows, f"fusion {f.name}")


def to_html(obj: Any) -> str:
    """The notebook HTML of a DiffResult, Module, FusionView or FusionInfo."""
    if isinstance(obj, DiffResult):
        return _result_html(obj)
    if isinstance(obj, Module):
        return _module_html(obj)
    if isinstance(obj, (FusionView, FusionInfo)):
        return _fusion_html(obj)
    return f"<pre>{escape(repr(obj))}</pre>"


def to_svg(obj: Any) -> str | None:
    """A picture of a module's entry (fusions collapsed) or of one fusion; None when Graphviz
    is missing or the picture has more than MAX_SVG_NODES nodes."""
    from ..render import RenderError, computation_picture, find_dot, fusion_picture, run_dot

    if find_dot() is None:
        return None
    if isinstance(obj, Module):
        g = computation_picture(obj, None, collapse_fusions=True)
    elif isinstance(obj, FusionView) and obj.after is not None:
        g = fusion_picture(obj.after, obj.info.name)
    else:
        return None
    if g.node_count > MAX_SVG_NODES:
        return None
    from ..render.fast import fast_layout

    fast_layout(g)
    try:
        return run_dot(g.source(), "svg").decode("utf-8")
    except RenderError:
        return None
