"""Regression mode across real JAX upgrades: the same programs dumped by jax 0.4.30, 0.7.2
and 0.10.2 (fixtures/versions, written by fixtures/generate_versions.py).

The truth (benchmarks/versions.py, also in benchmarks/RESULTS.md): a kernel's truth keys are
(primitive of the op_name, innermost source line) of every instruction it holds; a pair is
correct when the two kernels share a key; a before kernel is pairable when some after kernel
shares one. Recall = pairable kernels paired correctly / pairable; precision = correct /
judged pairs ("uncertain" kernels are not pairs).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import pytest
from click.testing import CliRunner

import hlodiff
from hlodiff.cli import main
from hlodiff.diff import diff_modules
from hlodiff.diff.normalize import canon_op_name, primitive

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = ROOT / "fixtures" / "versions"
PROGRAMS = ("mlp_step", "gpt2_step", "convnet_step")
ORDER = ("0.4.30", "0.7.2", "0.10.2")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_versions", ROOT / "benchmarks" / "versions.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BENCH = _bench()


def after(program: str, version: str) -> Path:
    p = BENCH.after_file(VERSIONS / program / version)
    assert p is not None, f"missing fixture {program}/{version}"
    return p


PAIRS = [(p, o, n) for p in PROGRAMS for o, n in combinations(ORDER, 2)]


@pytest.mark.parametrize("program,old,new", PAIRS)
def test_pairing_recall_precision_wrappers_layouts(program, old, new):
    r = BENCH.measure(after(program, old), after(program, new))
    assert r["pairable"] >= 20
    assert r["recall"] >= 0.95, (r["recall"], r["missed"])
    assert r["precision"] >= 0.98, (r["precision"], r["wrong"])
    assert r["wrapper_rows"] == 0
    assert r["false_layout_changes"] == 0


def test_parallel_wrappers_are_seen_through():
    """jax 0.4.30's XLA:CPU wraps kernels in calls to parallel_* computations: neither the
    call nor the kernel inside it is reported unpaired; the kernel inside is paired."""
    old = hlodiff.load(after("gpt2_step", "0.4.30"))
    calls = {i.name: i.calls[0] for c in old.computations for i in c.instructions
             if i.opcode == "call"}
    assert any(c.startswith("parallel_") for c in calls.values())
    res = diff_modules(old, hlodiff.load(after("gpt2_step", "0.10.2")), mode="regression")
    rows = res.regression["kernels"]
    named = {r["before"] for r in rows} | {r["after"] for r in rows}
    assert not named & set(calls)
    inside = {old.by_name[c].root for c in calls.values()}
    status = {r["before"]: r["status"] for r in rows if r["before"] in inside}
    assert set(status) == inside and "only_before" not in status.values()


def test_repeated_changes_are_grouped():
    res = diff_modules(hlodiff.load(after("gpt2_step", "0.4.30")),
                       hlodiff.load(after("gpt2_step", "0.10.2")), mode="regression")
    reg = res.regression
    groups = reg["groups"]
    assert sum(g["count"] for g in groups) == len(reg["changes"])
    assert len(groups) * 2 < len(reg["changes"])  # 2 layers; a deeper GPT adds no groups
    big = max(groups, key=lambda g: g["count"])
    assert big["count"] >= 10 and big["text"].startswith(f"{big['count']} × ")
    assert big["example"]["before"] and big["lines"]
    # every dot became a library (ynn) fusion kernel in the new version
    assert any(g["label_before"] == "dot" and g["label_after"] == "library dot fusion"
               for g in groups)
    texts = [g["text"] for g in groups]
    assert len(texts) == len(set(texts))


def test_no_added_section_and_no_rank_changes_as_layouts():
    res = diff_modules(hlodiff.load(after("gpt2_step", "0.4.30")),
                       hlodiff.load(after("gpt2_step", "0.7.2")), mode="regression")
    assert res.added == [] and res.summary["added"] == 0
    for lc in res.layouts:
        assert lc.from_ != lc.to


@pytest.mark.parametrize("program", ["mlp_step", "convnet_step"])
def test_self_and_redump_report_nothing_changed(program):
    a = after(program, "0.10.2")
    r = after(program, "0.10.2-redump")
    for x, y in ((a, a), (a, r)):
        res = diff_modules(hlodiff.load(x), hlodiff.load(y), mode="regression")
        assert res.regression["changes"] == [] and res.regression["groups"] == []
        assert res.layouts == [] and res.summary["changed"] == 0
        assert res.summary["unchanged"] == res.summary["kernels_before"]


def test_gpt_self_diff_reports_nothing_changed():
    a = after("gpt2_step", "0.4.30")  # the version with parallel_* wrappers
    res = diff_modules(hlodiff.load(a), hlodiff.load(a), mode="regression")
    assert res.regression["changes"] == [] and res.layouts == []


def test_cli_changelog_text_json_and_gate(tmp_path):
    old, new = str(after("mlp_step", "0.4.30")), str(after("mlp_step", "0.10.2"))
    r = CliRunner().invoke(main, [old, new])
    assert r.exit_code == 0, r.output
    assert "Changelog" in r.output and "Added" not in r.output
    assert "× dot → library dot fusion" in r.output
    assert "FLOPs" in r.output and "peak memory" in r.output  # gpu and memory helpers' figures
    r = CliRunner().invoke(main, [old, new, "--format", "json"])
    j = json.loads(r.output)
    assert j["regression"]["groups"] and j["regression"]["kernels"]
    out = tmp_path / "r.html"
    r = CliRunner().invoke(main, [old, new, "--format", "html", "-o", str(out)])
    assert r.exit_code == 0 and "Changelog" in out.read_text()
    redump = str(after("mlp_step", "0.10.2-redump"))
    p = subprocess.run([sys.executable, "-m", "hlodiff", new, redump, "--fail-on",
                        "changed>0,only_before>0,only_after>0,layout_changes>0"],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "COLUMNS": "100"})
    assert p.returncode == 0, p.stdout + p.stderr
    assert "nothing changed" in p.stdout
    p = subprocess.run([sys.executable, "-m", "hlodiff", old, new, "--fail-on", "changed>0"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1


def test_op_name_and_source_normalization():
    # real op_names of the same operation, written by jax 0.4.30 and 0.10.2
    assert canon_op_name("jit(mlp_step)/jit(main)/jvp(jit(relu))/max") == \
        canon_op_name("jit(mlp_step)/jvp()/jit(relu)/max") == "relu/max"
    assert canon_op_name("jit(mlp_step)/jit(main)/transpose(jvp(jit(log_softmax)))/"
                         "reduce_sum[axes=(1,)]") == "log_softmax/reduce_sum"
    assert primitive(canon_op_name("jit(f)/jit(main)/dot_general[dimension_numbers=(((2,), "
                                   "(1,)), ((), ())) precision=None]")) == "dot_general"
    assert primitive(canon_op_name(
        "jit(scan_rnn)/jvp()/while/body/jit(dynamic_index_in_dim)/dynamic_slice")) == \
        "dynamic_slice"
    # source_file/source_line (0.4.30) and the StackFrames table (0.10.2) give one form
    res = diff_modules(hlodiff.load(after("mlp_step", "0.4.30")),
                       hlodiff.load(after("mlp_step", "0.10.2")), mode="regression")
    lines = {ln for r in res.regression["kernels"] for ln in r["lines"] + r.get("lines_after", [])}
    assert lines and all(ln.startswith("generate.py:") for ln in lines)


def test_ci_recipe_relative_gates():
    """The README's CI recipe: relative gates on kernels and peak memory across versions."""
    old, new = str(after("mlp_step", "0.4.30")), str(after("mlp_step", "0.10.2"))
    gate = "kernels>+5%,peak_bytes>+5%,layout_changes>0"
    r = CliRunner().invoke(main, [old, new, "--fail-on", gate])
    assert r.exit_code == 0, r.output  # 33 -> 30 kernels
    r = CliRunner().invoke(main, [new, old, "--fail-on", gate])
    assert r.exit_code == 1 and "kernels" in r.output  # 30 -> 33 kernels: +10%
