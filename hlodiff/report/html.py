"""One self-contained HTML page (no external fonts, scripts or style sheets; no JavaScript).

Layout, top to bottom: a summary (kernels and bytes before -> after, what happened to the
before instructions), a legend of the fates, the fusions (each row links to its picture,
which opens under the row via CSS ``:target``), the source lines and the kernels they ended
in, then every instruction grouped by fate (the rare fates first), added instructions and
layout changes.

Every name, op_name, path and reason from a dump goes through ``html.escape``; only the
fusion pictures (SVG produced by hlodiff's own renderer, which escapes dump text itself) are
embedded as they are.
"""

from __future__ import annotations

from collections import Counter
from html import escape as _h

from ..render import palette
from ..diff.result import FATES, DiffResult
from .text import FATE_ORDER, _mb

# fate -> (glyph, fill, border colour, border style, meaning); glyph + word + border style
# tell fates apart without colour
_GLYPH = {"kept": "=", "fused": "+", "folded": "◆", "merged": "⇉", "rewritten": "✎",
          "inlined": "↳", "removed": "✕", "unchanged": "=", "changed": "✎",
          "only_before": "✕", "only_after": "★"}
_STYLE = {"merged": "double", "folded": "dotted", "removed": "dashed", "only_before": "dashed"}
_REGRESSION_LOOK = {"unchanged": "kept", "changed": "rewritten", "only_before": "removed",
                    "only_after": "inlined"}
_REGRESSION_TEXT = {"unchanged": "same in both modules", "changed": "changed between the modules",
                    "only_before": "only in the first module", "only_after": "only in the second module"}
_MEANING = {"kept": "the same instruction is still there after optimization",
            "fused": "now computed inside a fusion (one kernel)",
            "folded": "computed at compile time: became a constant",
            "merged": "a duplicate (CSE): its uses now read the surviving copy",
            "rewritten": "replaced by different ops (algebraic simplifier, layout, …)",
            "inlined": "a call that was inlined into its caller",
            "removed": "dead code or a no-op, deleted"}


def _look(fate: str) -> tuple[str, str, str, str]:
    """(glyph, fill, border colour, border style) for a fate."""
    key = _REGRESSION_LOOK.get(fate, fate)
    fill, border, style, _ = palette.FATES.get(key, palette.FATES["unknown"])
    style = _STYLE.get(fate, style if style in ("dashed", "dotted") else "solid")
    return _GLYPH.get(fate, "?"), fill, border, style


def _chip(fate: str, count: int | None = None) -> str:
    glyph, fill, border, style = _look(fate)
    n = f"<b>{count}</b> " if count is not None else ""
    return (f"<span class='chip' style='background:{fill};border:2px {style} {border}'>"
            f"<span class='g' aria-hidden='true'>{glyph}</span> {n}{_h(fate)}</span>")


def _fate_css() -> str:
    rows = []
    for fate in (*FATES, *_REGRESSION_LOOK):
        _, fill, border, style = _look(fate)
        width = "4px" if style == "double" else "3px"
        rows.append(f"tr.fate-{fate}>td:first-child{{border-left:{width} {style} {border}}}"
                    f"tr.fate-{fate}>td.fate{{background:{fill}}}")
    return "\n".join(rows)


_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;
 color:#1a1a1a;background:#fff;font-size:14px;line-height:1.4}
main{max-width:1500px;margin:0 auto;padding:12px 20px 40px}
h1{font-size:20px;margin:4px 0 2px}h2{font-size:17px;margin:26px 0 6px;padding-bottom:3px;
 border-bottom:2px solid #0072B2}h3{font-size:15px;margin:14px 0 4px}
code,.mono{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12.5px}
.files{color:#444;font-size:12.5px;margin:0 0 6px;overflow-wrap:anywhere}
nav{position:sticky;top:0;z-index:5;background:#fff;border-bottom:1px solid #ddd;
 padding:6px 0;margin-bottom:8px;font-size:13px}
nav a{margin-right:14px;color:#0058a3;text-decoration:none}nav a:hover{text-decoration:underline}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0}
.card{border:1px solid #cfd8e3;border-radius:6px;padding:6px 12px;min-width:150px;background:#f7f9fc}
.card .k{font-size:12px;color:#555;text-transform:uppercase;letter-spacing:.04em}
.card .v{font-size:21px;font-weight:650;white-space:nowrap}
.card .d{font-size:13px;color:#333}
.good{color:#006e4f;font-weight:600}.bad{color:#b34700;font-weight:600}
.fates{margin:8px 0 4px;display:flex;flex-wrap:wrap;gap:6px;align-items:center}
.chip{display:inline-block;border-radius:4px;padding:1px 7px;font-size:13px;white-space:nowrap;
 color:#111}
.chip .g{font-weight:700;display:inline-block;min-width:.9em;text-align:center}
.zero{opacity:.45}
.bar{display:flex;height:14px;border:1px solid #999;border-radius:3px;overflow:hidden;
 max-width:900px;margin:6px 0}
.bar span{display:block;height:100%}
.legend{display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));gap:4px 18px;
 font-size:13px;margin:6px 0}
.legend>div{display:flex;gap:8px;align-items:flex-start;font-size:12.5px}
.legend .chip{min-width:8.5em;flex:none}
details.legend-box{margin:10px 0;border:1px solid #ddd;border-radius:6px;padding:4px 10px;
 background:#fcfcfc}details.legend-box>summary{cursor:pointer;font-weight:600}
table{border-collapse:collapse;margin:6px 0 10px;width:100%}
td,th{border-bottom:1px solid #e3e3e3;padding:4px 8px;font-size:13px;vertical-align:top;
 text-align:left}
th{background:#eef2f6;position:sticky;top:31px;z-index:2;font-weight:600;white-space:nowrap;
 border-bottom:2px solid #b8c4d0}
td.n,th.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.name{white-space:nowrap}
.muted{color:#666;font-size:12px}
.why{min-width:16em;max-width:46em}
td.fate{white-space:nowrap}
td.src{font-size:12px;min-width:9em;overflow-wrap:break-word}
@media (max-width:1150px){.wide-only{display:none}}
.opn{display:inline-block;max-width:28em;overflow:hidden;text-overflow:ellipsis;
 white-space:nowrap;vertical-align:bottom;color:#555}
tr.fusion{position:relative}
tr.fusion:hover>td{background:#f0f6fc}
a.row::after{content:"";position:absolute;inset:0}
a{color:#0058a3}
td.pic-cell{background:#fafcff;border:2px solid #0072B2;padding:8px}
tr.pic{display:none}tr.pic:target{display:table-row}
section,details,tr{scroll-margin-top:70px}
tr.fusion:has(+tr.pic:target)>td{background:#dcebf7;font-weight:600}
.figwrap{overflow:auto;max-height:85vh}
.figwrap svg{max-width:100%;height:auto}
.fig-head{display:flex;justify-content:space-between;gap:12px;margin-bottom:4px;font-size:13px}
details.group{margin:6px 0}details.group>summary{cursor:pointer;font-size:15px;font-weight:600;
 padding:3px 0}
.holds details>summary{cursor:pointer}
.note{color:#444;font-size:13px;margin:4px 0}
"""


def _pct(before: int, after: int) -> str:
    if not before:
        return ""
    p = (after - before) * 100.0 / before
    cls = "good" if p < 0 else "bad" if p > 0 else ""
    return f"<span class='{cls}'>{p:+.0f}%</span>"


def _lines(sources: list[str], shown: int = 6) -> str:
    """'a.py:3', 'a.py:7', 'b.py:1' -> 'a.py:3, 7 b.py:1' (plain text, not escaped)."""
    files: dict[str, list[str]] = {}
    for src in sources[:shown]:
        path, _, line = src.rpartition(":")
        if not path or not line.isdigit():
            path, line = src, ""
        files.setdefault(path, [])
        if line:
            files[path].append(line)
    text = " ".join(f"{p}:{', '.join(sorted(ls, key=int))}" if ls else p for p, ls in files.items())
    return text + (f" +{len(sources) - shown}" if len(sources) > shown else "")


def _names(names: list[str], shown: int = 5) -> str:
    """A list of instruction names: the first few, the rest behind a click."""
    if not names:
        return "<span class='muted'>none (new kernel, e.g. a layout copy)</span>"
    head = ", ".join(_h(n) for n in names[:shown])
    if len(names) <= shown:
        return f"<span class='mono'>{head}</span>"
    rest = ", ".join(_h(n) for n in names[shown:])
    return (f"<details><summary><span class='mono'>{head}</span> "
            f"<span class='muted'>+{len(names) - shown} more</span></summary>"
            f"<span class='mono'>{rest}</span></details>")


def _pic_id(name: str) -> str:
    return "pic-" + name


def _fusion_link(name: str, fusions: set[str], pictures: dict[str, str]) -> str:
    if name in fusions:
        target = _pic_id(name) if name in pictures else "fusion-" + name
        return f"<a href='#{_h(target)}'>{_h(name)}</a>"
    return _h(name)


def _summary(result: DiffResult) -> list[str]:
    s = result.summary
    b, a = result.before_info, result.after_info
    out = ["<section id='summary'><h2>Summary</h2><div class='cards'>"]
    kb, ka = s.get("kernels_before", 0), s.get("kernels_after", 0)
    out.append(f"<div class='card'><div class='k'>kernels</div><div class='v'>{kb} &rarr; {ka}</div>"
               f"<div class='d'>{ka - kb:+d} ({_pct(kb, ka)})</div></div>")
    bb, ba = s.get("bytes_before", 0), s.get("bytes_after", 0)
    out.append(f"<div class='card'><div class='k'>bytes moved by kernels</div><div class='v'>"
               f"{_mb(bb)} &rarr; {_mb(ba)}</div><div class='d'>{_pct(bb, ba)}</div></div>")
    fused = s.get("fused", 0)
    out.append(f"<div class='card'><div class='k'>fusions</div><div class='v'>{s.get('fusions', 0)}</div>"
               f"<div class='d'>{fused} before instructions fused into them</div></div>")
    out.append(f"<div class='card'><div class='k'>instructions</div><div class='v'>"
               f"{b['instructions']} &rarr; {a['instructions']}</div><div class='d'>"
               f"{s.get('added', 0)} added, {s.get('layout_changes', 0)} layout changes</div></div>")
    out.append("</div>")
    keys = list(FATES) if result.mode == "optimization" else list(_REGRESSION_LOOK)
    keys.sort(key=lambda k: FATE_ORDER.get(k, 5))
    total = sum(s.get(k, 0) for k in keys) or 1
    what = "the before instructions" if result.mode == "optimization" else "top-level instructions"
    out.append(f"<div class='note'>What happened to {what} (rarest kinds first):</div>"
               "<div class='fates'>")
    for k in keys:
        n = s.get(k, 0)
        chip = _chip(k, n)
        out.append(f"<a href='#fate-{k}' class='{'zero' if not n else ''}' "
                   f"style='text-decoration:none'>{chip}</a>" if n else
                   f"<span class='zero'>{chip}</span>")
    out.append("</div><div class='bar' role='img' aria-label='share of each fate'>")
    for k in sorted(keys, key=lambda k: -s.get(k, 0)):
        n = s.get(k, 0)
        if n:
            _, fill, border, style = _look(k)
            out.append(f"<span title='{n} {k}' style='width:{100.0 * n / total:.2f}%;"
                       f"background:{fill};border-right:2px {style} {border}'></span>")
    out.append("</div></section>")
    return out


def _legend(result: DiffResult) -> list[str]:
    keys = FATES if result.mode == "optimization" else tuple(_REGRESSION_LOOK)
    meaning = _MEANING if result.mode == "optimization" else _REGRESSION_TEXT
    out = ["<details class='legend-box' id='legend' open><summary>Legend</summary><div class='legend'>"]
    for k in keys:
        _, _, _, style = _look(k)
        extra = f" ({style} border)" if style != "solid" else ""
        out.append(f"<div>{_chip(k)}<span>{_h(meaning.get(k, ''))}{extra}</span></div>")
    out.append("</div><div class='note'>Bytes: what a kernel reads + writes in memory. "
               "<i>unfused</i>: what the ops it holds would move as separate kernels; "
               "<i>saved</i> = unfused &minus; (read + written). Click a fusion row to see its "
               "picture: the before instructions it holds (coloured by fate, left) and its fused "
               "computation (right).</div></details>")
    return out


def _fusions(result: DiffResult, pictures: dict[str, str]) -> list[str]:
    fusions = sorted(result.fusions, key=lambda f: (not f.before,
                     -(f.unfused_bytes - f.bytes_read - f.bytes_written)))
    ops = {(i.before): i.opcode for i in result.instructions}
    out = ["<section id='fusions'><h2>Fusions "
           f"<span class='muted'>({len(fusions)}, most bytes saved first; click a row for its "
           "picture)</span></h2><table><thead><tr><th>fusion</th><th>kind</th>"
           "<th class='n'>ops</th><th>holds (before instructions)</th><th class='n'>read</th>"
           "<th class='n'>written</th><th class='n wide-only'>unfused</th><th class='n'>saved</th>"
           "<th>source lines</th></tr></thead><tbody>"]
    for f in fusions:
        pic = pictures.get(f.name)
        saved = f.unfused_bytes - f.bytes_read - f.bytes_written
        saved_s = (f"<span class='good'>{_mb(saved)}</span>" if saved > 0 else
                   f"<span class='muted'>&minus;{_mb(-saved)}</span>" if saved < 0 else "0")
        if pic:
            name = (f"<a class='row' href='#{_h(_pic_id(f.name))}' title='show the picture'>"
                    f"{_h(f.name)}</a> <span class='muted'>&#9656;</span>")
        else:
            name = _h(f.name)
        kinds = Counter(ops.get(n, "?") for n in f.before)
        mix = ", ".join(f"{c}&times;{_h(o)}" if c > 1 else _h(o) for o, c in kinds.most_common(4))
        mix += ", …" if len(kinds) > 4 else ""
        src = _h(_lines(f.sources))
        out.append(f"<tr class='fusion' id='fusion-{_h(f.name)}'><td class='name mono'>{name}</td>"
                   f"<td>{_h(f.kind or '')}</td><td class='n'>{len(f.before)}</td>"
                   f"<td class='holds'>{_names(f.before) if f.before or result.mode == 'optimization' else ''}"
                   + (f"<div class='muted'>{mix}</div>" if len(f.before) > 1 else "")
                   + f"</td><td class='n'>{_mb(f.bytes_read)}</td><td class='n'>{_mb(f.bytes_written)}</td>"
                   f"<td class='n wide-only'>{_mb(f.unfused_bytes)}</td><td class='n'>{saved_s}</td>"
                   f"<td class='mono src'>{src}</td></tr>")
        if pic:
            inputs = ", ".join(_h(x) for x in f.inputs)
            out.append(f"<tr class='pic' id='{_h(_pic_id(f.name))}'><td class='pic-cell' colspan='9'>"
                       f"<div class='fig-head'><span><b class='mono'>{_h(f.name)}</b> "
                       f"({_h(f.kind or '?')}) &larr; inputs: <span class='mono'>{inputs}</span></span>"
                       f"<a href='#fusion-{_h(f.name)}'>close &#10005;</a></div>"
                       f"<div class='figwrap'>{pic}</div></td></tr>")
    out.append("</tbody></table></section>")
    return out


def _sources(result: DiffResult, fusions: set[str], pictures: dict[str, str]) -> list[str]:
    out = ["<section id='sources'><h2>Source lines &rarr; kernels</h2><table><thead><tr>"
           "<th>source line</th><th class='n'>before instructions</th>"
           "<th>kernels of the optimized module they ended in</th></tr></thead><tbody>"]
    for d in result.by_source:
        ks = ", ".join(_fusion_link(k, fusions, pictures) for k in d["kernels"])
        out.append(f"<tr><td class='mono name'>{_h(d['source'])}</td><td class='n'>"
                   f"{d['instructions']}</td><td class='mono'>{ks or '<i>none</i>'}</td></tr>")
    out.append("</tbody></table></section>")
    return out


def _instructions(result: DiffResult, fusions: set[str], pictures: dict[str, str]) -> list[str]:
    groups: dict[str, list] = {}
    for f in result.instructions:
        groups.setdefault(f.fate, []).append(f)
    comps = Counter(f.computation for f in result.instructions)
    main_comp = comps.most_common(1)[0][0] if comps else ""
    out = ["<section id='instructions'><h2>Every instruction, by fate</h2>"
           "<p class='note'>Rare fates first. Fused instructions are also listed per fusion "
           f"above. A grey <span class='muted'>in %computation</span> marks instructions outside "
           f"<span class='mono'>%{_h(main_comp)}</span>.</p>"]
    for fate in sorted(groups, key=lambda k: FATE_ORDER.get(k, 5)):
        rows = groups[fate]
        is_open = " open" if fate not in ("fused", "kept", "unchanged") else ""
        out.append(f"<details class='group' id='fate-{_h(fate)}'{is_open}><summary>{_chip(fate, len(rows))}"
                   f" <span class='muted'>{_h(_MEANING.get(fate, _REGRESSION_TEXT.get(fate, '')))}"
                   "</span></summary><table><thead><tr><th>before</th><th>fate</th><th>became</th>"
                   "<th>in kernel</th><th>why</th><th>source / op_name</th></tr></thead><tbody>")
        for f in rows:
            where = (f"<div class='muted'>in %{_h(f.computation)}</div>"
                     if f.computation != main_comp else "")
            became = _h(f.after or "")
            if f.fate == "merged" and f.into:
                became = f"= {_h(f.into)}" + (f" <span class='muted'>(now {_h(f.after)})</span>"
                                              if f.after and f.after != f.into else "")
            kernel = _fusion_link(f.fusion, fusions, pictures) if f.fusion else ""
            opn = (f"<br><span class='opn mono' title='{_h(f.op_name)}'>{_h(f.op_name)}</span>"
                   if f.op_name else "")
            out.append(f"<tr class='fate-{_h(fate)}'><td class='mono name'>{_h(f.before)} "
                       f"<span class='muted'>{_h(f.opcode)}</span>{where}</td>"
                       f"<td class='fate'>{_GLYPH.get(fate, '')} {_h(fate)}</td>"
                       f"<td class='mono'>{became}</td><td class='mono'>{kernel}</td>"
                       f"<td class='why'>{_h(f.reason)}</td>"
                       f"<td class='mono'>{_h(f.source or '')}{opn}</td></tr>")
        out.append("</tbody></table></details>")
    out.append("</section>")
    return out


def render_html(result: DiffResult, pictures: dict[str, str] | None = None,
                note: str | None = None) -> str:
    """The page. ``pictures`` maps a fusion name to inline SVG text shown under its row
    (trusted: produced by hlodiff's own renderer, embedded as is)."""
    pictures = pictures or {}
    b, a = result.before_info, result.after_info
    fusion_names = {f.name for f in result.fusions}
    title = str(b["module"])
    out = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
           "<meta name='viewport' content='width=device-width, initial-scale=1'><title>hlodiff: ",
           _h(title), "</title><style>", _CSS, _fate_css(), "</style></head><body><main>"]
    out.append(f"<h1>hlodiff: {_h(title)} <span class='muted'>({_h(result.mode)} mode)</span></h1>"
               f"<div class='files'>before: <code>{_h(str(b['file']))}</code> "
               f"({b['instructions']} instructions)<br>after: <code>{_h(str(a['file']))}</code> "
               f"({a['instructions']} instructions)</div>")
    if note:
        out.append(f"<p class='muted'>{_h(note)}</p>")
    nav = [("summary", "Summary"), ("legend", "Legend")]
    if result.fusions:
        nav.append(("fusions", f"Fusions ({len(result.fusions)})"))
    if result.regression:
        nav.append(("changes", "Changes"))
    if result.by_source:
        nav.append(("sources", "Source lines"))
    nav.append(("instructions", "Every instruction"))
    if result.added:
        nav.append(("added", f"Added ({len(result.added)})"))
    if result.layouts:
        nav.append(("layouts", f"Layout changes ({len(result.layouts)})"))
    out.append("<nav>" + "".join(f"<a href='#{k}'>{v}</a>" for k, v in nav) + "</nav>")
    out += _summary(result)
    out += _legend(result)
    if result.memory:  # report/memory.py
        from .memory import memory_diff_html
        out.append(memory_diff_html(result.memory))
    if result.remat:  # report/remat.py
        from .remat import remat_html
        out.append(remat_html(result.remat))
    if result.fusions:
        out += _fusions(result, pictures)
    if result.regression:  # regression mode: a changelog (report/changelog.py)
        from .changelog import render_html as _changelog
        out += _changelog(result)
    from .devices import devices_html  # gpu helper: kernels, collectives, shards
    out += devices_html(result)
    if result.by_source:
        out += _sources(result, fusion_names, pictures)
    out += _instructions(result, fusion_names, pictures)
    if result.added:
        out.append("<section id='added'><h2>Added by the optimizer</h2><table><thead><tr><th>name</th>"
                   "<th>opcode</th><th>shape</th><th>computation</th><th>why</th></tr></thead><tbody>")
        for x in result.added:
            out.append(f"<tr><td class='mono name'>{_h(x.name)}</td><td>{_h(x.opcode)}</td>"
                       f"<td class='mono'>{_h(x.shape)}</td><td class='mono'>{_h(x.computation)}</td>"
                       f"<td>{_h(x.reason)}</td></tr>")
        out.append("</tbody></table></section>")
    if result.layouts:
        out.append("<section id='layouts'><h2>Layout changes</h2><table><thead><tr><th>instruction</th>"
                   "<th>before</th><th>from</th><th>to</th></tr></thead><tbody>")
        for lc in result.layouts:
            out.append(f"<tr><td class='mono'>{_h(str(lc.instruction))}</td><td class='mono'>"
                       f"{_h(lc.before or '')}</td><td class='mono'>{_h(lc.from_)}</td>"
                       f"<td class='mono'>{_h(lc.to)}</td></tr>")
        out.append("</tbody></table></section>")
    out.append("</main></body></html>\n")
    return "".join(out)
