"""hlodiff render and the diff pictures: real fixtures, escaping, limits, missing Graphviz."""

from __future__ import annotations

import glob
import re
import shutil
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

import hlodiff
from hlodiff.cli import main
from hlodiff.render import computation_picture, fusion_svgs, render_diff_svgs
from hlodiff.render.escape import dot_string, html_text, safe_filename

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures" / "cpu"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot not installed")
SVG = "{http://www.w3.org/2000/svg}"


def _pair(prog: str) -> tuple[str, str]:
    before = glob.glob(str(FIX / prog / "*.before_optimizations.txt"))[0]
    after = glob.glob(str(FIX / prog / "*.cpu_after_optimizations.txt"))[0]
    return before, after


def _render(args: list[str]):
    return CliRunner().invoke(main, ["render", *args], catch_exceptions=False)


def _texts(svg_path: Path) -> list[str]:
    root = ET.parse(svg_path).getroot()
    return ["".join(t.itertext()) for t in root.iter(SVG + "text")]


def _titles(svg_path: Path) -> list[str]:
    root = ET.parse(svg_path).getroot()
    return [t.text or "" for t in root.iter(SVG + "title")]


EVIL = r'''HloModule evil_module, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

%fused_computation.9 (param_0: f32[4]) -> f32[4] {
  %param_0 = f32[4]{0} parameter(0)
  ROOT %negate.1 = f32[4]{0} negate(%param_0), metadata={op_name="<script>alert(4)</script>"}
}

ENTRY %main.1 (x.1: f32[4]) -> f32[4] {
  %x.1 = f32[4]{0} parameter(0), metadata={op_name="<script>alert(1)</script>" source_file="/tmp/a&b/\"q\"<img src=x onerror=alert(2)>.py" source_line=7}
  %cc.2 = f32[4]{0} custom-call(%x.1), custom_call_target="<b>evil</b>&amp;\"\\N", backend_config="<script>alert(3)</script>", metadata={op_name="jit(f)/\"quoted\" & <i>it</i> \\N -->"}
  %fusion.5 = f32[4]{0} fusion(%cc.2), kind=kLoop, calls=%fused_computation.9
  ROOT %add.3 = f32[4]{0} add(%fusion.5, %x.1)
}
'''


@pytest.fixture
def evil(tmp_path: Path) -> Path:
    p = tmp_path / "evil.txt"
    p.write_text(EVIL)
    return p


# --- escaping -------------------------------------------------------------------------------

def test_escape_helpers():
    assert html_text('<a href="x">&\\N') == "&lt;a href=&quot;x&quot;&gt;&amp;\u29f5N"
    s = dot_string('say "hi" <b> & \\N\nnext\x00')
    assert s.startswith('"') and s.endswith('"') and '"' not in s[1:-1] and "\\" not in s
    assert "&lt;b&gt;" in s and "&amp;" in s and "&#10;" in s and "\x00" not in s
    used: set[str] = set()
    assert safe_filename("../../etc/passwd", used) == "etc_passwd.svg"
    assert safe_filename("a b<c>", used) == "a_b_c.svg"
    assert safe_filename("a b<c>", used) == "a_b_c_2.svg"
    assert safe_filename("...", used) == "unnamed.svg"


def test_markup_escaped_in_dot(evil: Path, tmp_path: Path):
    out = tmp_path / "e.dot"
    r = _render([str(evil), "-o", str(out)])
    assert r.exit_code == 0, r.output
    dot = out.read_text()
    for live in ("<script", "<img", "<i>it", "<b>evil</b>", "-->", "\\N"):
        assert live not in dot, live
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dot
    assert "&lt;b&gt;evil&lt;/b&gt;&amp;amp;&quot;\u29f5N" in dot  # the custom-call label
    # every quoted string closes: no stray quotes from the dump
    for line in dot.splitlines():
        assert len(re.findall(r'(?<!\\)"', line)) % 2 == 0, line


@needs_dot
def test_markup_escaped_in_svg(evil: Path, tmp_path: Path):
    out = tmp_path / "e.svg"
    r = _render([str(evil), "-o", str(out)])
    assert r.exit_code == 0, r.output
    raw = out.read_text()
    root = ET.parse(out).getroot()  # well-formed XML
    tags = {el.tag.split("}")[-1] for el in root.iter()}
    assert not tags & {"script", "img", "i", "b", "foreignObject"}, tags
    for live in ("<script", "<img", "<i>", "<b>"):
        assert live not in raw
    texts = _texts(out)
    # shown literally (a backslash as the look-alike U+29F5: dot would expand \\N)
    assert any(t == '<b>evil</b>&amp;"\u29f5N' for t in texts), texts
    tips = [el.get("{http://www.w3.org/1999/xlink}title") or "" for el in root.iter(SVG + "a")]
    assert any("op_name: <script>alert(1)</script>" in t for t in tips)
    assert any('/tmp/a&b/"q"<img src=x onerror=alert(2)>.py:7' in t for t in tips)
    assert any("<script>alert(3)</script>" in t for t in tips)  # backend_config, as text
    # dot's ids, titles and comments are ours, never names from the dump
    assert all(re.fullmatch(r"hlo|n\d+|legend|cluster_\d+|n\d+->n\d+|n\d+->legend|", t or "")
               for t in _titles(out)), _titles(out)
    assert "<!-- <" not in raw


# --- real fixtures --------------------------------------------------------------------------

@needs_dot
def test_render_entry_with_fusion_clusters(tmp_path: Path):
    _, after = _pair("convnet_step")
    out = tmp_path / "a.svg"
    r = _render([after, "-o", str(out)])
    assert r.exit_code == 0, r.output
    root = ET.parse(out).getroot()
    clusters = [g for g in root.iter(SVG + "g") if g.get("class") == "cluster"]
    m = hlodiff.load(after)
    fusions = [i for i in m.entry_computation.instructions if i.opcode == "fusion"]
    assert len(clusters) == len(fusions)
    texts = _texts(out)
    assert "%ynn_fusion.6" in texts and "%conv_general_dilated.8" in texts
    assert any("fusion kCustom" in t for t in texts)
    assert "f32[8,16,16,16]" in texts  # shapes without layouts


@needs_dot
def test_render_collapsed_fusion_and_focus(tmp_path: Path):
    before, after = _pair("convnet_step")
    out = tmp_path / "c.svg"
    assert _render([after, "-o", str(out), "--collapse-fusions"]).exit_code == 0
    root = ET.parse(out).getroot()
    assert not [g for g in root.iter(SVG + "g") if g.get("class") == "cluster"]
    assert "fusion kLoop" in _texts(out)

    out = tmp_path / "f.svg"
    r = _render([after, "-o", str(out), "--fusion", "ynn_fusion.5"])
    assert r.exit_code == 0, r.output
    texts = _texts(out)
    assert "parameter 0" in texts and "reduce" in texts and "output of %ynn_fusion.5" in texts
    assert "input %broadcast_maximum_fusion" in texts

    out = tmp_path / "n.svg"
    r = _render([before, "-o", str(out), "--focus", "add.15", "--radius", "1"])
    assert r.exit_code == 0, r.output
    texts = _texts(out)
    assert "%add.15" in texts and "%conv_general_dilated.8" in texts
    assert "%conv_general_dilated.9" not in texts  # two steps away

    out = tmp_path / "w.svg"
    _, wafter = _pair("while_solver")
    wm = hlodiff.load(wafter)
    loop = next(i for i in wm.instructions() if i.opcode == "while")
    body = loop.called["body"][0]
    assert _render([wafter, "-o", str(out), "--computation", body]).exit_code == 0
    ET.parse(out)


def test_render_dot_and_bad_names(tmp_path: Path):
    _, after = _pair("mlp_step")
    out = tmp_path / "m.dot"
    assert _render([after, "-o", str(out)]).exit_code == 0
    assert out.read_text().startswith("digraph hlo {")
    r = _render([after, "-o", str(tmp_path / "x.dot"), "--fusion", "no_such_fusion"])
    assert r.exit_code == 2 and "no fusion %no_such_fusion" in r.output
    r = _render([after, "-o", str(tmp_path / "x.jpgx")])
    assert r.exit_code == 2 and ".svg, .png, .pdf or .dot" in r.output


# --- limits and a missing Graphviz ----------------------------------------------------------

def test_too_large_graph_is_drawn_collapsed_and_a_large_focus_refused(tmp_path: Path):
    _, after = _pair("convnet_step")
    out = tmp_path / "big.dot"
    r = _render([after, "-o", str(out), "--max-nodes", "50"])
    assert r.exit_code == 0, r.output  # whole entry over 50 nodes: drawn with fusions collapsed
    assert "drawing it with each fusion as one node" in r.output and out.is_file()
    focus = tmp_path / "focus.svg"
    r = _render([after, "-o", str(focus), "--max-nodes", "5", "--focus", "transpose_copy_fusion.4", "--radius", "6"])
    if r.exit_code == 2 and "Graphviz" in r.output and "install" in r.output:
        return  # dot missing
    line = r.output.strip()
    assert r.exit_code == 2 and "\n" not in line and "more than the 5" in line
    for hint in ("--focus", "--fusion", "--collapse-fusions", "--max-nodes"):
        assert hint in line
    assert not focus.exists()


def test_missing_dot(monkeypatch, tmp_path: Path):
    _, after = _pair("attention")
    monkeypatch.setenv("HLODIFF_DOT", "/nonexistent/dot")
    r = _render([after, "-o", str(tmp_path / "a.svg")])
    assert r.exit_code == 2
    assert "apt-get install graphviz" in r.output and "brew install graphviz" in r.output
    assert "Traceback" not in r.output
    r = _render([after, "-o", str(tmp_path / "a.dot")])  # DOT text needs no Graphviz
    assert r.exit_code == 0 and (tmp_path / "a.dot").exists()


def test_dot_timeout(monkeypatch, tmp_path: Path):
    slow = tmp_path / "slowdot"
    slow.write_text("#!/bin/sh\nsleep 5\n")
    slow.chmod(0o755)
    monkeypatch.setenv("HLODIFF_DOT", str(slow))
    _, after = _pair("attention")
    r = _render([after, "-o", str(tmp_path / "a.svg"), "--timeout", "1"])
    assert r.exit_code == 2 and "longer than 1 s" in r.output


# --- diff pictures --------------------------------------------------------------------------

def _diff(prog: str):
    diff = pytest.importorskip("hlodiff.diff")
    before, after = _pair(prog)
    b, a = hlodiff.load(before), hlodiff.load(after)
    return diff.diff_modules(b, a), b, a


@needs_dot
def test_render_diff_svgs_convnet(tmp_path: Path):
    result, b, a = _diff("convnet_step")
    t0 = time.perf_counter()
    pics = render_diff_svgs(result, b, a, tmp_path / "svg")
    elapsed = time.perf_counter() - t0
    assert elapsed < 10, elapsed
    assert pics.before == tmp_path / "svg" / "before.svg" and pics.after.exists()
    assert not pics.skipped
    assert set(pics.fusions) == {f.name for f in result.fusions}
    for path in [pics.before, pics.after, *pics.fusions.values()]:
        ET.parse(path)
        assert path.parent.resolve().is_relative_to((tmp_path / "svg").resolve())
    texts = _texts(pics.before)
    held = [f for f in result.fusions if f.before][0]
    assert any(t.startswith(f"→ %{held.name}") for t in texts)  # the fusion's cluster
    assert "fate" in texts and any(t.startswith("fused into a fusion") for t in texts)
    ftexts = _texts(pics.fusions[held.name])
    for name in held.before:
        assert f"%{name}" in ftexts
    assert any(t.startswith("output of %" + held.name) for t in ftexts)


@needs_dot
def test_fusion_svgs_for_html():
    result, b, a = _diff("mlp_step")
    svgs = fusion_svgs(result, b, a)
    assert set(svgs) == {f.name for f in result.fusions}
    ids: set[str] = set()
    for name, svg in svgs.items():
        assert svg.startswith("<svg") and "<?xml" not in svg and "<!DOCTYPE" not in svg
        ET.fromstring(svg)
        these = set(re.findall(r'\bid="([^"]+)"', svg))
        assert not these & ids  # unique across pictures on one page
        ids |= these


def test_computation_picture_api():
    _, after = _pair("scan_rnn")
    g = computation_picture(hlodiff.load(after))
    assert g.node_count > 10 and g.source().count("subgraph cluster_") >= 1
