"""The diff engine and the `hlodiff diff` command on real CPU fixtures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import hlodiff
from hlodiff.cli import main
from hlodiff.diff import DiffResult, diff_files, diff_modules
from hlodiff.report.html import render_html
from hlodiff.diff.gates import GateError, check_gates, parse_gates

ROOT = Path(__file__).resolve().parent.parent
CPU = ROOT / "fixtures" / "cpu"
PROGRAMS = ["mlp_step", "attention", "convnet_step", "scan_rnn", "while_solver", "fold_cse",
            "per_example_grads"]
FATES = {"kept", "fused", "folded", "merged", "rewritten", "inlined", "removed"}


def pair(program: str) -> tuple[Path, Path]:
    d = CPU / program
    b = next(d.glob("module_*.before_optimizations.txt"))
    a = next(d.glob("module_*.cpu_after_optimizations.txt"))
    return b, a


@pytest.fixture(scope="module")
def fold_cse() -> DiffResult:
    return diff_files(*pair("fold_cse"))


@pytest.fixture(scope="module")
def mlp() -> DiffResult:
    return diff_files(*pair("mlp_step"))


def test_fold_cse_exact_fates(fold_cse):
    r = fold_cse
    assert r.mode == "optimization"
    got = {f.before: f.fate for f in r.instructions}
    merged = {f.before: f for f in r.instructions if f.fate == "merged"}
    # (a+b)*c + (a+b)*d: one add merged into the other; sin(x) twice: one merged
    assert set(merged) == {"add.9", "sin.3"}
    assert merged["add.9"].into == "add.8" and merged["add.9"].after == "add.17"
    assert merged["sin.3"].into == "sin.2"
    assert merged["add.9"].fusion == "multiply_add_fusion"
    # (iota*2+1-1)*e^0.5: XLA never constant-folds an iota; the pass dumps show algsimp
    # rewriting sub.1 (x-1 -> x+(-1), then the constants combined into constant.8) and the
    # iota arithmetic computed at run time inside the fusion
    assert not [f for f in r.instructions if f.fate == "folded"]
    assert got["sub.1"] == "rewritten"
    assert r.fate_of("main.1", "sub.1").fusion == "multiply_add_fusion"
    for p in ("a.1", "b.1", "c.1", "d.1", "x.1"):
        assert got[p] == "kept"
    fused = {f.before: f for f in r.instructions if f.fate == "fused"}
    assert len(fused) == 26
    assert fused["add.8"].after == "add.17"
    assert fused["add.10"].after == "add.16" and fused["add.10"].fusion_kind == "kLoop"
    assert fused["mul.9"].after == "mul.6"
    assert fused["broadcast.4"].after == "broadcast.9"  # same literal, not the folded one
    assert fused["add.15"].after == "add.3"
    assert r.summary["kept"] == 5 and r.summary["fused"] == 26 and r.summary["folded"] == 0
    assert r.summary["rewritten"] == 1
    assert r.summary["merged"] == 2 and r.summary["fusions"] == 1
    assert r.fate_of("main.1", "add.9").fate == "merged"
    assert r.fate_of("%main.1", "%sub.1").fate == "rewritten"
    assert r.fate_of("main.1", "nope") is None
    (fi,) = r.fusions
    assert fi.name == "multiply_add_fusion" and fi.kind == "kLoop"
    assert fi.computation == "fused_computation"
    assert "add.8" in fi.before and "add.9" in fi.before
    assert fi.inputs == ["a.1", "x.1", "d.1", "c.1", "b.1"]
    assert fi.bytes_read == 5 * 32 and fi.bytes_written == 32
    assert fi.unfused_bytes > fi.bytes_read + fi.bytes_written
    assert [a.name for a in r.added] == ["constant.8"]
    assert r.added[0].reason == "constant created by folding"


def test_mlp_known_fusions(mlp):
    r = mlp
    s = r.summary
    assert sum(s[k] for k in FATES) == len(r.instructions)
    assert s["fusions"] == 27
    assert s["inlined"] >= 2  # the jit(relu) / log_softmax / one_hot calls
    # the first layer's dot became a YNNPACK kCustom fusion, its relu a kLoop fusion
    dots = [f for f in r.instructions if f.opcode == "dot" and f.fusion == "ynn_fusion.6"]
    assert dots and dots[0].fusion_kind == "kCustom"
    relu = [f for f in r.instructions if f.fusion == "broadcast_maximum_fusion"]
    assert any(f.opcode == "maximum" for f in relu)
    assert all(f.fusion_kind == "kLoop" for f in relu)
    calls = [f for f in r.instructions if f.opcode == "call"]
    assert calls and all(f.fate == "inlined" for f in calls)
    for f in r.instructions:
        assert f.fate in FATES
        if f.fate == "fused":
            assert f.fusion and f.after
        if f.fate == "merged":
            assert f.into
    names = {fi.name for fi in r.fusions}
    assert {"broadcast_maximum_fusion", "multiply_add_fusion", "ynn_fusion.6"} <= names


@pytest.mark.parametrize("program", PROGRAMS)
def test_every_fixture_diffs(program):
    b, a = pair(program)
    r = diff_files(b, a)
    j = r.to_json()
    assert j["mode"] == "optimization"
    assert set(j["summary"]) >= FATES | {"fusions", "added", "layout_changes"}
    assert sum(j["summary"][k] for k in FATES) == len(j["instructions"])
    json.dumps(j)
    assert j["before"]["instructions"] == hlodiff.load(b).instruction_count


def test_regression_mode_same_module_is_unchanged():
    _, a = pair("mlp_step")
    m = hlodiff.load(a)
    r = diff_modules(m, m)
    assert r.mode == "regression"
    assert r.summary["changed"] == 0 and r.summary["only_before"] == 0
    assert r.summary["only_after"] == 0 and r.summary["unchanged"] > 20
    assert r.summary["kernels_before"] == r.summary["kernels_after"]


def test_regression_mode_different_programs():
    _, a1 = pair("mlp_step")
    _, a2 = pair("fold_cse")
    r = diff_files(a1, a2)
    assert r.mode == "regression"
    assert r.summary["only_before"] + r.summary["changed"] > 0
    assert r.summary["only_after"] >= 1


def test_forced_mode_and_bad_mode():
    b, a = pair("fold_cse")
    assert diff_files(b, a, mode="regression").mode == "regression"
    with pytest.raises(hlodiff.InputError):
        diff_files(b, a, mode="bogus")


def test_gates():
    g = parse_gates(["kernels>40,layout_changes>0", "bytes<=5"])
    assert g == [("kernels", ">", 40.0, False), ("layout_changes", ">", 0.0, False),
                 ("bytes", "<=", 5.0, False)]
    assert check_gates(g, {"kernels": 41, "layout_changes": 0, "bytes": 9}) == ["kernels>40 (is 41)"]
    for bad in ("kernels>>1", "kernels", ">3", "kernels>x"):
        with pytest.raises(GateError):
            parse_gates([bad])
    with pytest.raises(GateError):
        parse_gates(["nosuch>1"])
    with pytest.raises(GateError):
        check_gates(parse_gates(["nosuch>1"], known=None), {"kernels": 1})


def test_html_escapes_and_embeds_pictures(fold_cse):
    fold_cse.instructions[0].reason = "<script>alert(1)</script>"
    try:
        page = render_html(fold_cse, {"multiply_add_fusion": "<svg id='pic'></svg>"})
    finally:
        fold_cse.instructions[0].reason = "unchanged"
    assert page.startswith("<!DOCTYPE html>")
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<svg id='pic'></svg>" in page


# ---- the command line -------------------------------------------------------------------

def _run(args):
    return CliRunner().invoke(main, [str(x) for x in args], catch_exceptions=False)


def test_cli_json_long_and_short_form():
    b, a = pair("fold_cse")
    r1 = _run(["diff", b, a, "--format", "json"])
    assert r1.exit_code == 0, r1.output
    j = json.loads(r1.output)
    assert j["summary"]["merged"] == 2 and j["summary"]["folded"] == 0
    assert j["before"]["module"] == "jit_fold_cse" and j["after"]["instructions"] == 39
    i0 = j["instructions"][0]
    assert set(i0) >= {"before", "computation", "fate", "after", "fusion", "into", "reason"}
    r2 = _run([b, a, "--format", "json"])
    assert r2.exit_code == 0 and json.loads(r2.output)["summary"] == j["summary"]


def test_cli_text_and_outputs(tmp_path):
    b, a = pair("mlp_step")
    r = _run([b, a])
    assert r.exit_code == 0, r.output
    assert "optimization mode" in r.output and "fused" in r.output
    out = tmp_path / "r.html"
    r = _run([b, a, "--format", "html", "-o", out])
    assert r.exit_code == 0 and out.read_text().startswith("<!DOCTYPE html>")
    out = tmp_path / "r.json"
    r = _run([b, a, "--format", "json", "-o", out])
    assert r.exit_code == 0 and json.loads(out.read_text())["mode"] == "optimization"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".hlodiff-")]


def test_cli_fail_on():
    b, a = pair("fold_cse")
    assert _run([b, a, "--format", "json", "--fail-on", "kernels>0"]).exit_code == 1
    assert _run([b, a, "--format", "json", "--fail-on", "kernels>5",
                 "--fail-on", "layout_changes>0"]).exit_code == 0
    r = _run([b, a, "--fail-on", "kernels>>0"])
    assert r.exit_code == 2


def test_cli_bad_input_truncated_and_buffer_assignment(tmp_path):
    b, a = pair("fold_cse")
    t = tmp_path / "trunc.txt"
    t.write_text(a.read_text()[:3000])
    r = CliRunner().invoke(main, [str(b), str(t)])
    assert r.exit_code == 2
    msg = r.output.strip()
    assert "\n" not in msg and msg.startswith("hlodiff: ") and "trunc.txt" in msg
    ba = next((CPU / "fold_cse").glob("*buffer-assignment.txt"))
    r = CliRunner().invoke(main, [str(b), str(ba)])
    assert r.exit_code == 2
    msg = r.output.strip()
    assert "\n" not in msg and "buffer-assignment" in msg


def test_cli_subprocess():
    b, a = pair("fold_cse")
    exe = ROOT / ".venv" / "bin" / "hlodiff"
    if not exe.exists():
        pytest.skip("no .venv/bin/hlodiff")
    p = subprocess.run([str(exe), str(b), str(a), "--format", "json"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["summary"]["fused"] == 26


_CSE_BEFORE = '''HloModule jit_cse_first, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

ENTRY %main.1 (x.1: f32[4]) -> f32[4] {
  %x.1 = f32[4]{0} parameter(0)
  %c.1 = f32[] constant(2)
  %b.1 = f32[4]{0} broadcast(%c.1), dimensions={}
  %m.1 = f32[4]{0} multiply(%x.1, %b.1)
  %c.2 = f32[] constant(2)
  %b.2 = f32[4]{0} broadcast(%c.2), dimensions={}
  %a.1 = f32[4]{0} add(%m.1, %b.2)
  ROOT %n.1 = f32[4]{0} negate(%a.1)
}
'''

_CSE_AFTER = '''HloModule jit_cse_first, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

%fused_computation (param_0.1: f32[4]) -> f32[4] {
  %param_0.1 = f32[4]{0} parameter(0)
  %constant.1 = f32[] constant(2)
  %broadcast.1 = f32[4]{0} broadcast(%constant.1), dimensions={}
  %m.2 = f32[4]{0} multiply(%param_0.1, %broadcast.1)
  %a.2 = f32[4]{0} add(%m.2, %broadcast.1)
  ROOT %n.2 = f32[4]{0} negate(%a.2)
}

ENTRY %main.2 (x.1: f32[4]) -> f32[4] {
  %x.1 = f32[4]{0} parameter(0)
  ROOT %negate_add_fusion = f32[4]{0} fusion(%x.1), kind=kLoop, calls=%fused_computation
}
'''


def test_cse_keeps_first_copy_in_instruction_order(tmp_path):
    """XLA's CSE keeps the first of identical instructions in the computation's order; the
    single after instruction belongs to that survivor whichever copy the matcher paired."""
    (tmp_path / "b.txt").write_text(_CSE_BEFORE)
    (tmp_path / "a.txt").write_text(_CSE_AFTER)
    r = diff_files(tmp_path / "b.txt", tmp_path / "a.txt")
    got = {f.before: f for f in r.instructions}
    for kept in ("c.1", "b.1"):
        assert got[kept].fate == "fused", got[kept]
        assert got[kept].fusion == "negate_add_fusion"
    assert got["c.2"].fate == "merged" and got["c.2"].into == "c.1"
    assert got["b.2"].fate == "merged" and got["b.2"].into == "b.1"


def test_divisor_rebuilt_as_reciprocal_and_reshape_chains_collapse():
    """attention: softmax's x / broadcast(sum) became x * broadcast(1 / sum) (algsimp builds
    the reciprocal and a new broadcast, the pass dumps show div.6 rewritten@algsimp); the
    reshape(reshape(sum)) chain in front of it is a no-op algsimp deletes."""
    r = diff_files(*pair("attention"))
    got = {f.before: f.fate for f in r.instructions}
    assert got["div.6"] == "rewritten"  # the divisor broadcast
    assert got["div.7"] == "rewritten"  # divide -> multiply
    assert got["div.5"] == "rewritten" and got["broadcast_in_dim.3"] == "rewritten"
    assert got["sub.6"] == "fused"  # a broadcast that is no divisor lives on
    assert got["reduce_sum.7"] == "fused"
