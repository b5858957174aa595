"""Per jax.checkpoint region: does it still recompute after optimization, and what does it do to
the peak (hlodiff/analysis/remat_regions.py, hlodiff/diff/remat.py). Fixtures:
fixtures/remat/{cpu,gpu} (fixtures/generate_memory.py --programs fixtures/remat_programs.py),
and the 2-layer GPT of fixtures/memory (another generator's programs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from hlodiff.analysis.remat_regions import find_regions
from hlodiff.cli import main
from hlodiff.dumps.loader import load

ROOT = Path(__file__).resolve().parent.parent
REMAT = ROOT / "fixtures" / "remat"
GPT = ROOT / "fixtures" / "memory" / "cpu" / "gpt_remat"


def _file(d: Path, suffix: str) -> Path:
    return next(p for p in sorted(d.iterdir()) if p.name.endswith(suffix))


def _diff_json(d: Path) -> dict:
    r = CliRunner().invoke(main, [str(d), "--format", "json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_regions_of_a_per_layer_loop_are_named_and_ordered():
    regs = find_regions(load(_file(REMAT / "cpu" / "mlp_nothing", "before_optimizations.txt")))
    assert len(regs) == 3
    assert {r.function for r in regs} == {"block"}
    assert sorted(r.index for r in regs) == [0, 1, 2] and {r.count for r in regs} == {3}
    # layer 1 (index 0) saves the program's input x: a parameter
    first = next(r for r in regs if r.index == 0)
    m = load(_file(REMAT / "cpu" / "mlp_nothing", "before_optimizations.txt"))
    assert any(m.entry_computation.by_name[e].opcode == "parameter" and
               m.entry_computation.by_name[e].shape.dims == (16, 32) for e in first.residuals)
    for r in regs:
        assert r.lines and r.lines.startswith("remat_programs.py:")
        assert r.twins and r.cotangents and r.recomputed


def test_cpu_merges_the_recomputed_matmul_into_the_forward_pass():
    """XLA:CPU removes the barriers before CSE: each region's recomputed dot is computed once,
    with its forward twin; the elementwise recomputation stays in backward fusions."""
    doc = _diff_json(REMAT / "cpu" / "mlp_nothing")
    rm = doc["remat"]
    assert rm["count"] == 3 and rm["barriers_left"] == 0
    for x in rm["regions"]:
        assert x["heavy"]["merged"] == 1 and x["heavy"]["backward"] == 0, x
        assert x["outcome"]["backward"] > 0
        assert x["at_peak"] is not None
    # the forward dot and its recomputation name the same kernel (no look-alike of another
    # opcode: the fate engine's answer before this change was a consumer fusion)
    fates = {f["before"]: f for f in doc["instructions"]}
    kernels = {}
    for f in doc["instructions"]:
        if f["opcode"] == "dot" and "transpose(" not in (f["op_name"] or "") or \
                f["opcode"] == "dot" and "rematted_computation" in (f["op_name"] or ""):
            kernels.setdefault(f["fusion"] or f["after"], []).append(f["before"])
    assert len(kernels) == 3 and all(len(v) == 2 for v in kernels.values()), kernels
    assert all(fates[n]["fate"] in ("fused", "kept", "rewritten") for v in kernels.values()
               for n in v)
    # each recomputed instruction's own line says what became of the recomputation
    rec = [f for f in doc["instructions"] if "rematted_computation" in (f["op_name"] or "")
           and f["opcode"] in ("dot", "sine")]
    assert rec and all("jax.checkpoint block" in f["reason"] for f in rec)
    assert {("merged into the forward pass" in f["reason"]) for f in rec
            if f["opcode"] == "dot"} == {True}


def test_gpu_keeps_every_recomputation_in_the_backward_pass():
    """XLA:GPU removes the barriers after scheduling: nothing merges, nothing is hoisted."""
    rm = _diff_json(REMAT / "gpu" / "mlp_nothing")["remat"]
    assert rm["count"] == 3 and rm["still_recompute"] == 3
    for x in rm["regions"]:
        assert x["status"] == "recomputes" and x["recomputes"] is True
        assert x["heavy"]["backward"] == 1 and x["outcome"]["merged"] == 0
        assert x["verdict"].startswith("still recomputes: 7 ops in the backward pass")


def test_scan_and_nested_regions():
    rm = _diff_json(REMAT / "cpu" / "scan_remat")["remat"]
    assert rm["count"] == 1
    x = rm["regions"][0]
    assert x["in_loop"] and x["recomputes"] and x["heavy"]["backward"] == 1
    assert x["verdict"].startswith("still recomputes")
    rm = _diff_json(REMAT / "cpu" / "nested")["remat"]
    depth2 = [x for x in rm["regions"] if x["depth"] == 2]
    assert rm["count"] == 6 and len(depth2) == 4
    assert all(x["parent"] for x in depth2)
    assert all(x["parent"] is None for x in rm["regions"] if x["depth"] == 1)
    # the outer checkpointed function is named from the nested barriers' stacks
    assert {x["function"] for x in rm["regions"] if x["depth"] == 1} == {"outer"}
    assert {x["function"] for x in depth2} == {"inner"}
    assert len({x["call_site"] for x in depth2}) == 2  # inner is called on two lines


def test_dots_saveable_recomputes_only_elementwise_work():
    rm = _diff_json(REMAT / "cpu" / "mlp_dots")["remat"]
    for x in rm["regions"]:
        assert x["recomputed_ops"] > 0 and sum(x["heavy"].values()) == 0


def test_gpt_from_another_generator():
    """The memory fixtures' 2-layer GPT (written for another purpose): both layers found,
    named after the checkpointed function, ordered, and on CPU hoisted or merged."""
    rm = _diff_json(GPT)["remat"]
    assert rm["count"] == 2
    assert {x["function"] for x in rm["regions"]} == {"block"}
    assert [x["index"] for x in rm["regions"]] == [0, 1]
    assert all(x["at_peak"] is not None for x in rm["regions"])


def test_no_regions_no_section():
    d = ROOT / "fixtures" / "memory" / "cpu" / "mlp_b64"
    assert _diff_json(d)["remat"] is None


def test_text_report_and_memory_command(tmp_path):
    r = CliRunner().invoke(main, [str(REMAT / "gpu" / "mlp_nothing")], catch_exceptions=False)
    assert r.exit_code == 0
    assert "3 jax.checkpoint regions: 3 still recompute" in r.output
    out = subprocess.run([sys.executable, "-m", "hlodiff", "memory",
                          str(REMAT / "cpu" / "mlp_nothing"), "--format", "json"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["remat_regions"]["count"] == 3
    r = CliRunner().invoke(main, ["memory", str(REMAT / "cpu" / "mlp_nothing")],
                           catch_exceptions=False)
    assert "jax.checkpoint region" in r.output and "block (remat_programs.py" in r.output
    # the optimized file with its unoptimized sibling: the same regions; alone: none
    after = _file(REMAT / "cpu" / "mlp_nothing", "cpu_after_optimizations.txt")
    doc = json.loads(CliRunner().invoke(main, ["memory", str(after), "--format", "json"],
                                        catch_exceptions=False).output)
    assert doc["remat_regions"]["count"] == 3
    lone = tmp_path / after.name
    lone.write_text(after.read_text())
    doc = json.loads(CliRunner().invoke(main, ["memory", str(lone), "--format", "json"],
                                        catch_exceptions=False).output)
    assert doc["remat_regions"] is None
    html = tmp_path / "r.html"
    r = CliRunner().invoke(main, [str(REMAT / "cpu" / "nested"), "-o", str(html)],
                           catch_exceptions=False)
    assert r.exit_code == 0 and "jax.checkpoint regions" in html.read_text()


def _after_file(d: Path) -> Path:
    return next(p for p in sorted(d.iterdir()) if p.name.endswith("after_optimizations.txt"))


def test_probe_remat_pair_says_why_the_peak_did_not_fall():
    """The issue's probe, on the memory fixtures' GPT (2 layers): two optimized modules,
    without and with jax.checkpoint per layer. On CPU: more kernels, the same peak, because
    the regions no longer recompute in the backward pass. On GPU: the peak falls and every
    region still recomputes (barriers removed after scheduling)."""
    mem = ROOT / "fixtures" / "memory"
    cpu = _diff_json_files(_after_file(mem / "cpu" / "gpt_noremat"),
                           _after_file(mem / "cpu" / "gpt_remat"))
    rm = cpu["remat"]
    assert rm["after"] is not None and rm["before"] is None
    assert rm["kernels_after"] > rm["kernels_before"]
    assert abs(rm["peak_after"] - rm["peak_before"]) < 0.01 * rm["peak_before"]
    assert all(x["recomputes"] is False for x in rm["regions"])
    assert "no longer recompute" in rm["summary"] and "cannot fall" in rm["summary"]
    gpu = _diff_json_files(_after_file(mem / "gpu" / "gpt_noremat"),
                           _after_file(mem / "gpu" / "gpt_remat"))["remat"]
    assert gpu["peak_after"] < gpu["peak_before"]
    assert all(x["status"] == "recomputes" for x in gpu["regions"])
    assert gpu["after"]["barriers_removed_after_scheduling"] is True
    assert rm["after"]["barriers_removed_after_scheduling"] is False


def _diff_json_files(a: Path, b: Path) -> dict:
    r = CliRunner().invoke(main, [str(a), str(b), "--format", "json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_named_scopes_name_the_regions_in_forward_order():
    regs = find_regions(load(_file(REMAT / "cpu" / "scoped", "before_optimizations.txt")))
    assert len(regs) == 3
    # the structural order (forward twins' positions) and the user's scopes agree
    assert sorted((r.index, r.scope) for r in regs) == [(0, "layer_0"), (1, "layer_1"),
                                                        (2, "layer_2")]
    assert all("scope layer_" in r.label for r in regs)


def test_a_users_own_optimization_barrier_is_not_a_region():
    d = REMAT / "cpu" / "user_barrier"
    m = load(_file(d, "before_optimizations.txt"))
    assert any(i.opcode == "opt-barrier" for i in m.instructions())
    assert find_regions(m) == []
    assert _diff_json(d)["remat"] is None
