"""The HTML and text reports: summary first, fusion rows linked to their pictures, a legend,
no external resources, dump text escaped, text that fits 80 columns."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from hlodiff.cli import main
from hlodiff.diff import diff_files
from hlodiff.report.html import render_html
from hlodiff.report.text import render, render_plain

ROOT = Path(__file__).resolve().parent.parent
CPU = ROOT / "fixtures" / "cpu"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot not installed")


def pair(program: str) -> tuple[Path, Path]:
    d = CPU / program
    return (next(d.glob("module_*.before_optimizations.txt")),
            next(d.glob("module_*.cpu_after_optimizations.txt")))


# Names may only hold [A-Za-z0-9_.-]; the markup goes where dumps carry free text:
# op_name and source_file in metadata.
EVIL_BEFORE = r'''HloModule jit_evil, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

ENTRY %main.1 (x.1: f32[4]) -> f32[4] {
  %x.1 = f32[4]{0} parameter(0), metadata={op_name="<script>alert(1)</script>" source_file="/tmp/a&b/\"q\"<img src=x onerror=alert(2)>.py" source_line=7}
  %c.1 = f32[] constant(2), metadata={op_name="jit(f)/<b>const</b>" source_file="<i>evil</i>.py" source_line=3}
  %b.1 = f32[4]{0} broadcast(%c.1), dimensions={}, metadata={op_name="jit(f)/<b>bcast</b>" source_file="<i>evil</i>.py" source_line=3}
  %m.1 = f32[4]{0} multiply(%x.1, %b.1), metadata={op_name="jit(f)/\"mul\" & <script>x</script>" source_file="<script>s.py" source_line=9}
  %c.2 = f32[] constant(2)
  %b.2 = f32[4]{0} broadcast(%c.2), dimensions={}
  %a.1 = f32[4]{0} add(%m.1, %b.2), metadata={op_name="jit(f)/add<style>*{}</style>" source_file="<script>s.py" source_line=10}
  ROOT %n.1 = f32[4]{0} negate(%a.1), metadata={op_name="jit(f)/neg<!--" source_file="<script>s.py" source_line=11}
}
'''

EVIL_AFTER = r'''HloModule jit_evil, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

%fused_computation (param_0.1: f32[4]) -> f32[4] {
  %param_0.1 = f32[4]{0} parameter(0)
  %constant.1 = f32[] constant(2)
  %broadcast.1 = f32[4]{0} broadcast(%constant.1), dimensions={}
  %m.2 = f32[4]{0} multiply(%param_0.1, %broadcast.1), metadata={op_name="jit(f)/\"mul\" & <script>x</script>" source_file="<script>s.py" source_line=9}
  %a.2 = f32[4]{0} add(%m.2, %broadcast.1), metadata={op_name="jit(f)/add<style>*{}</style>" source_file="<script>s.py" source_line=10}
  ROOT %n.2 = f32[4]{0} negate(%a.2), metadata={op_name="jit(f)/neg<!--" source_file="<script>s.py" source_line=11}
}

ENTRY %main.2 (x.1: f32[4]) -> f32[4] {
  %x.1 = f32[4]{0} parameter(0), metadata={op_name="<script>alert(1)</script>" source_file="/tmp/a&b/\"q\"<img src=x onerror=alert(2)>.py" source_line=7}
  ROOT %negate_add_fusion = f32[4]{0} fusion(%x.1), kind=kLoop, calls=%fused_computation, metadata={op_name="jit(f)/neg<!--" source_file="<script>s.py" source_line=11}
}
'''

RAW_MARKUP = ["<script", "<img", "<b>const", "<b>bcast", "<i>evil", "<style>*", "neg<!--"]


@pytest.fixture(scope="module")
def evil(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("evil")
    (d / "before.txt").write_text(EVIL_BEFORE)
    (d / "after.txt").write_text(EVIL_AFTER)
    return d / "before.txt", d / "after.txt"


@pytest.fixture(scope="module")
def convnet():
    return diff_files(*pair("convnet_step"))


class _Page(HTMLParser):
    """Ids, local links, tags and attributes of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "a" and "href" in a:
            self.hrefs.append(a["href"])


def _parse(page: str) -> _Page:
    p = _Page()
    p.feed(page)
    return p


def _no_external(page: str, parsed: _Page) -> None:
    assert not re.search(r"""src\s*=\s*["']?\s*(https?:|//)""", page, re.I)
    assert not re.search(r"<link\b", page, re.I)
    assert "@import" not in page and "url(http" not in page
    assert not any(tag in ("script", "img", "iframe", "object", "embed", "link")
                   for tag, _ in parsed.tags)
    assert [tag for tag, _ in parsed.tags].count("style") == 1
    for tag, attrs in parsed.tags:  # no event handlers anywhere (dump text stays text)
        assert not [k for k in attrs if k.startswith("on")], (tag, attrs)
    for href in parsed.hrefs:
        assert href.startswith("#"), href


def test_html_summary_legend_and_fusion_links(convnet):
    pics = {f.name: f"<svg xmlns='http://www.w3.org/2000/svg' class='p'><text>{k}</text></svg>"
            for k, f in enumerate(convnet.fusions)}
    page = render_html(convnet, pics)
    parsed = _parse(page)
    s = convnet.summary
    # the summary comes first: kernels and bytes before -> after, and the fate counts
    head = page[:page.index("id='fusions'")]
    assert "id='summary'" in head and "id='legend'" in head
    assert f"{s['kernels_before']} &rarr; {s['kernels_after']}" in head
    for fate in ("kept", "fused", "merged", "rewritten", "inlined", "removed", "folded"):
        assert f"<b>{s[fate]}</b> {fate}" in head
    legend = page[page.index("id='legend'"):page.index("id='fusions'")]
    for fate in ("kept", "fused", "merged", "rewritten", "inlined", "removed", "folded"):
        assert f"</span> {fate}</span>" in legend  # a chip: glyph, then the word
    assert page.index("id='summary'") < page.index("id='fusions'") < page.index("id='instructions'")
    # every fusion has a row and a picture row; the row links to the picture
    ids = set(parsed.ids)
    assert len(parsed.ids) == len(ids), "duplicate ids"
    for f in convnet.fusions:
        assert f"fusion-{f.name}" in ids and f"pic-{f.name}" in ids
        assert f"#pic-{f.name}" in parsed.hrefs
    # every local link lands somewhere
    for href in parsed.hrefs:
        assert href[1:] in ids, href
    # pictures are embedded (inline SVG), once each
    assert page.count("class='p'") == len(convnet.fusions)
    # fusions with the most bytes saved come first
    order = [h[len("#pic-"):] for h in parsed.hrefs if h.startswith("#pic-")]
    first = order[0]
    best = max((f for f in convnet.fusions if f.before),
               key=lambda f: f.unfused_bytes - f.bytes_read - f.bytes_written)
    assert first == best.name
    # fates also differ without colour: a glyph and the word in every chip, border styles
    assert "dashed" in page and "dotted" in page and "double" in page
    _no_external(page, parsed)


def test_html_without_pictures_links_rows(convnet):
    page = render_html(convnet)
    parsed = _parse(page)
    assert "pic-" not in " ".join(parsed.ids)
    for href in parsed.hrefs:
        assert href[1:] in set(parsed.ids), href
    _no_external(page, parsed)


def test_html_escapes_dump_text(evil):
    r = diff_files(*evil)
    assert any(f.op_name and "<script>" in f.op_name for f in r.instructions)
    page = render_html(r)
    for raw in RAW_MARKUP:
        assert raw not in page, raw
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;i&gt;evil&lt;/i&gt;.py" in page
    _no_external(page, _parse(page))


@needs_dot
def test_html_cli_with_pictures_escapes(evil, tmp_path):
    out = tmp_path / "r.html"
    res = CliRunner().invoke(main, [str(evil[0]), str(evil[1]), "--format", "html", "-o", str(out)],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    page = out.read_text()
    for raw in RAW_MARKUP:
        assert raw not in page, raw
    parsed = _parse(page)
    assert "pic-negate_add_fusion" in parsed.ids and "#pic-negate_add_fusion" in parsed.hrefs
    assert "<svg" in page
    _no_external(page, parsed)


@pytest.mark.parametrize("program", ["convnet_step", "fold_cse", "attention"])
def test_text_fits_80_columns(program):
    r = diff_files(*pair(program))
    for width in (80, 120):
        text = render_plain(r, limit=0, width=width)
        long = [ln for ln in text.splitlines() if len(ln) > width]
        assert not long, long[:3]
    text = render_plain(r, width=80)
    assert text.splitlines()[0].startswith("hlodiff optimization mode")
    assert "kernels" in text.splitlines()[1]


def test_text_summary_first_and_names_not_cut(convnet):
    text = render_plain(convnet, width=80)
    lines = text.splitlines()
    assert f"{convnet.summary['kernels_before']} -> {convnet.summary['kernels_after']}" in lines[1]
    assert lines.index(next(ln for ln in lines if ln.startswith("Fusions"))) < 10
    # the key column shows whole fusion names at 80 columns
    body = text[text.index("Fusions"):text.index("r+w: ")]
    for f in convnet.fusions:
        assert re.search(rf"^{re.escape(f.name)}\s", body, re.M), f.name
    # holds: a few names, then a count
    assert re.search(r"\+\d+\s*$", body, re.M)


def test_text_cli_80_columns_piped(evil):
    res = CliRunner().invoke(main, [str(pair("convnet_step")[0]), str(pair("convnet_step")[1])],
                             env={"COLUMNS": "80"}, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert max(len(ln) for ln in res.output.splitlines()) <= 80
    res = CliRunner().invoke(main, [str(evil[0]), str(evil[1])], env={"COLUMNS": "80"},
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert max(len(ln) for ln in res.output.splitlines()) <= 80


def test_text_markup_in_dump_is_not_rich_markup(evil):
    r = diff_files(*evil)
    # a row whose reason is printed (rewritten rows print theirs), carrying rich markup
    shown = next(f for f in r.instructions if f.opcode != "parameter")
    shown.fate = "rewritten"
    shown.reason = "[bold red]not markup[/bold red]"
    import io
    buf = io.StringIO()
    render(r, Console(file=buf, width=80, no_color=True), limit=0)
    assert "[bold red]not markup[/bold red]" in buf.getvalue()
