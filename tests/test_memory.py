"""hlodiff memory: XLA's memory files read exactly, the estimate without them, memory in diffs
and the peak gates. Fixtures: fixtures/memory/{cpu,gpu} (fixtures/generate_memory.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlodiff.cli import main
from hlodiff.diff.gates import GateError, check_gates, parse_gates
from hlodiff.units import format_bytes, parse_bytes

ROOT = Path(__file__).resolve().parent.parent
MEM = ROOT / "fixtures" / "memory"
DIRS = sorted(p for p in MEM.glob("*/*") if p.is_dir())


def _after(d: Path) -> Path:
    return next(p for p in d.iterdir() if p.name.endswith("after_optimizations.txt"))


def _run(args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _json(args):
    r = _run(args)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def _xla_total(d: Path) -> int:
    rep = next(d.glob("*-memory-usage-report.txt")).read_text()
    return int(re.search(r"^Total bytes: (\d+)", rep, re.M).group(1))


def _xla_peak_list(d: Path) -> list[tuple[str, int]]:
    text = next(d.glob("*-live-range.txt")).read_text()
    part = text.split("(peak):", 1)[1].split("Stack trace", 1)[0]
    return [(m.group(1), int(m.group(2))) for m in
            re.finditer(r"^\s+(\S+)\{[0-9,]*\}: (\d+) bytes", part, re.M)]


def test_fixtures_cover_cpu_and_gpu():
    assert {p.parent.name for p in DIRS} == {"cpu", "gpu"}
    assert len(DIRS) >= 12


@pytest.mark.parametrize("d", DIRS, ids=lambda d: f"{d.parent.name}-{d.name}")
def test_exact_peak_and_live_buffers(d):
    out = _json(["memory", d, "--format", "json", "--top", "1000"])
    assert out["peak_bytes"] == _xla_total(d)
    assert out["estimated"] is False
    xla = _xla_peak_list(d)
    ours = [(b["instruction"], b["bytes"]) for b in out["live_at_peak"]]
    assert sorted(ours) == sorted(xla)
    # the largest first, with the fields the issue asks for
    assert ours[0][1] == max(b for _, b in xla)
    for b in out["live_at_peak"]:
        assert {"instruction", "bytes", "shape", "source", "kernel", "kind"} <= set(b)
    assert out["live_range_peak_bytes"] == sum(b for _, b in xla)


def test_file_path_and_sources_are_user_lines():
    d = MEM / "cpu" / "gpt_noremat"
    out = _json(["memory", _after(d), "--format", "json"])
    assert out["peak_bytes"] == _xla_total(d)
    srcs = [b["source"] for b in out["live_at_peak"] if b["source"]]
    assert srcs and all(s.startswith("memory_programs.py:") for s in srcs)
    assert out["by_source"][0]["bytes"] >= out["by_source"][-1]["bytes"]


def test_donated_buffers_apart():
    out = _json(["memory", MEM / "cpu" / "adam_donate", "--format", "json"])
    assert out["by_kind"]["donated"] == 3 * 512 * 512 * 4
    assert sorted(d["parameter"] for d in out["donated"]) == [0, 1, 2]


@pytest.mark.parametrize("d", DIRS, ids=lambda d: f"{d.parent.name}-{d.name}")
def test_estimate_without_files(d, tmp_path):
    # the module alone, copied away from XLA's files
    f = tmp_path / _after(d).name
    f.write_bytes(_after(d).read_bytes())
    out = _json(["memory", f, "--format", "json"])
    assert out["estimated"] is True
    xla = _xla_total(d)
    # RESULTS.md has the table; issue 11's goal: within 10% of XLA's total on every fixture
    assert 0.9 * xla <= out["peak_bytes"] <= 1.1 * xla
    assert out["peak_bytes_low"] <= out["peak_bytes"]
    assert out["live_at_peak"]


def test_estimate_median_within_ten_percent(tmp_path):
    from hlodiff.analysis.memory import memory_report
    from hlodiff.dumps.loader import load

    ratios = sorted(memory_report(load(_after(d))).peak_bytes / _xla_total(d) for d in DIRS)
    assert 0.9 <= ratios[len(ratios) // 2] <= 1.1


def test_estimate_platform_rules():
    """XLA's buffer-sharing rule for fusions differs by backend: the simulation tells the
    platform from the module text (GPU backend configs), and only GPU's rule lets a loop
    fusion write over a parameter of another shape (read through bitcasts)."""
    from hlodiff.analysis import memsim
    from hlodiff.analysis.backend import compiled_for_gpu
    from hlodiff.dumps.loader import load

    for d in DIRS:
        assert compiled_for_gpu(load(_after(d))) == (d.parent.name == "gpu"), d
    m = load(_after(MEM / "gpu" / "gpt_noremat"))
    fusions = [(i, m.computation(i.calls[0])) for c in m.computations for i in c.instructions
               if i.opcode == "fusion" and i.fusion_kind == "kLoop" and i.calls]
    extra = 0
    for ins, fc in fusions:
        gpu, cpu = (memsim._elementwise_params(fc, ins.shape, g) for g in (True, False))
        assert cpu <= gpu  # the generic rule is the stricter one
        dims = {p.parameter_number: p.shape.dims for p in fc.parameters}
        assert all(dims[k] == ins.shape.dims for k in cpu)
        extra += len(gpu - cpu)
    assert extra > 0  # some of its loop fusions read a parameter through a bitcast


def test_html_plot_escaped(tmp_path):
    from hlodiff.analysis.memory import LiveBuffer, MemoryReport
    from hlodiff.report.memory import render_memory_html

    rep = MemoryReport("m<script>", 100, True, timeline=[10, 100, 50], peak_time=1,
                       peak_instruction="a<b>",
                       live_at_peak=[LiveBuffer("x{}", "x</svg>", 90, "f32[&]", "temp")])
    page = render_memory_html(rep)
    assert "<script>" not in page and "x&lt;/svg&gt;" in page and "a&lt;b&gt;" in page
    out = tmp_path / "m.html"
    r = _run(["memory", MEM / "gpu" / "gpt_remat", "--format", "html", "-o", out])
    assert r.exit_code == 0
    page = out.read_text()
    assert "<svg" in page and "peak" in page and "<script" not in page
    assert "polyline" in page


def test_diff_reports_both_peaks_and_growth():
    a, b = _after(MEM / "cpu" / "mlp_b64"), _after(MEM / "cpu" / "mlp_b128")
    out = _json([a, b, "--format", "json"])
    mem = out["memory"]
    assert mem["before"]["peak_bytes"] == _xla_total(MEM / "cpu" / "mlp_b64")
    assert mem["after"]["peak_bytes"] == _xla_total(MEM / "cpu" / "mlp_b128")
    assert mem["change_bytes"] == mem["after"]["peak_bytes"] - mem["before"]["peak_bytes"]
    assert mem["growth_by_source"] and mem["growth_by_source"][0]["change"] > 0
    assert out["summary"]["peak_bytes_before"] == mem["before"]["peak_bytes"]
    r = _run([a, b])
    assert "Memory" in r.output and "peak" in r.output


def test_diff_remat_pair_gpu_peak_moves_and_shrinks():
    a, b = _after(MEM / "gpu" / "gpt_noremat"), _after(MEM / "gpu" / "gpt_remat")
    mem = _json([a, b, "--format", "json"])["memory"]
    assert mem["after"]["peak_bytes"] < mem["before"]["peak_bytes"]
    assert mem["growth_by_source"] and mem["new_at_peak"]
    assert mem["peak_moved"] in (True, False)


def test_diff_flag_pair_and_optimization_mode():
    d = MEM / "cpu" / "mlp_b64"
    mem = _json([_after(d), _after(MEM / "cpu" / "mlp_b64_nofusion"), "--format", "json"])["memory"]
    assert mem["after"]["peak_bytes"] > mem["before"]["peak_bytes"]
    before = next(d.glob("*before_optimizations.txt"))
    mem = _json([before, _after(d), "--format", "json"])["memory"]
    assert mem["before"] is None and mem["after"]["peak_bytes"] == _xla_total(d)


def test_gates_units_and_relative():
    assert parse_bytes("16GiB") == 16 * 2 ** 30 and parse_bytes("2 MB") == 2e6
    assert format_bytes(1536) == "1.5 KiB"
    g = parse_gates(["peak_bytes>1MiB,peak_bytes>+5%"])
    s = {"peak_bytes": 2 ** 21, "peak_bytes_before": 2 ** 20}
    assert len(check_gates(g, s)) == 2
    assert check_gates(parse_gates(["peak_bytes>+200%"]), s) == []
    assert check_gates(parse_gates(["kernels<-10%"]), {"kernels": 8, "kernels_before": 10})
    with pytest.raises(GateError):
        parse_gates(["peak_bytes>16XB"])
    a, b = _after(MEM / "cpu" / "mlp_b64"), _after(MEM / "cpu" / "mlp_b128")
    assert _run([a, b, "--format", "json", "--fail-on", "peak_bytes>+5%"]).exit_code == 1
    assert _run([a, b, "--format", "json", "--fail-on", "peak_bytes>16GiB"]).exit_code == 0
    r = _run([a, b, "--fail-on", "peek_bytes>1"])
    assert r.exit_code == 2 and "Memory" not in r.output


def test_bad_input_subprocess(tmp_path):
    bad = tmp_path / "x-buffer-assignment.txt"
    bad.write_text("BufferAssignment:\n")
    r = subprocess.run([sys.executable, "-m", "hlodiff", "memory", str(bad)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "Traceback" not in r.stderr and str(bad) in r.stderr
    r = subprocess.run([sys.executable, "-m", "hlodiff", "memory", str(tmp_path / "none.txt")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and r.stderr.count("\n") == 1


def test_remat_recompute_placement_cpu_vs_gpu():
    cpu = _json(["memory", MEM / "cpu" / "gpt_remat", "--format", "json"])["remat"]
    gpu = _json(["memory", MEM / "gpu" / "gpt_remat", "--format", "json"])["remat"]
    assert _json(["memory", MEM / "cpu" / "gpt_noremat", "--format", "json"])["remat"] is None
    # CPU removes jax.checkpoint's barriers before scheduling: recomputation moves forward
    assert cpu["recomputed_kernels"] > 0 and cpu["in_forward"] > cpu["in_backward"]
    assert gpu["recomputed_kernels"] > 0 and gpu["in_forward"] == 0
    assert cpu["opt_barriers_left"] == 0
    mem = _json([_after(MEM / "cpu" / "gpt_noremat"), _after(MEM / "cpu" / "gpt_remat"),
                 "--format", "json"])["memory"]
    assert abs(mem["change_bytes"]) < 0.001 * mem["before"]["peak_bytes"]
    assert mem["after"]["remat"]["in_forward"] == cpu["in_forward"]


def test_unoptimized_module_refused():
    before = next((MEM / "cpu" / "mlp_b64").glob("*before_optimizations.txt"))
    r = _run(["memory", before])
    assert r.exit_code == 2 and "not an optimized module" in r.output


def test_user_frame_skips_library_frames():
    from hlodiff.analysis.memory import user_source
    from hlodiff.hlo.parser import parse as parse_module

    text = """HloModule m, is_scheduled=true

FileNames
1 "/home/me/train.py"
2 "/usr/lib/python3.11/site-packages/flax/linen/linear.py"

FunctionNames
1 "loss"
2 "__call__"

FileLocations
1 {file_name_id=1 function_name_id=1 line=42}
2 {file_name_id=2 function_name_id=2 line=7}

StackFrames
1 {file_location_id=1 parent_frame_id=0}
2 {file_location_id=2 parent_frame_id=1}

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%p), metadata={op_name="jit(f)/neg" stack_frame_id=2}
}
"""
    m = parse_module(text)
    assert user_source(m, m.entry_computation["n"]) == "/home/me/train.py:42"


def test_hostile_memory_files_are_bounded(tmp_path):
    src = MEM / "cpu" / "mlp_b64"
    for p in src.iterdir():
        (tmp_path / p.name).write_bytes(p.read_bytes())
    lr = next(tmp_path.glob("*-live-range.txt"))
    lr.write_text(lr.read_text().replace("HloLiveRange (max ", "HloLiveRange (max 99999999999")
                  .replace("x.1{}:0-", "x.1{}:0-99999999999"))
    out = _json(["memory", tmp_path, "--format", "json"])
    assert out["peak_bytes"] == _xla_total(src)
    assert len(out["timeline"]["bytes"]) < 1000


def _ba_total(path: Path) -> int:
    text = next(path.parent.glob(path.name[:-4] + "-buffer-assignment.txt")).read_text()
    return sum(int(m) for m in re.findall(r"^allocation \d+: size (\d+)", text, re.M))


def test_jax_upgrade_pair_peaks_exact_from_buffer_assignment():
    v = ROOT / "fixtures" / "versions" / "gpt2_step"
    if not v.is_dir():
        pytest.skip("no version fixtures")
    old, new = _after(v / "0.4.30"), _after(v / "0.10.2")
    out = _json([old, new, "--format", "json"])
    mem = out["memory"]
    assert mem["before"]["peak_bytes"] == _ba_total(old)
    assert mem["after"]["peak_bytes"] == _ba_total(new)
    assert not mem["before"]["estimated"] and not mem["after"]["estimated"]
    assert mem["growth_by_source"] or mem["growth_by_op_name"]
    one = _json(["memory", new, "--format", "json"])
    assert one["peak_bytes"] == _ba_total(new) and one["live_set_estimated"] is True
    assert one["live_at_peak"]


def test_diff_html_draws_both_curves(tmp_path):
    a, b = _after(MEM / "gpu" / "gpt_noremat"), _after(MEM / "gpu" / "gpt_remat")
    out = tmp_path / "d.html"
    assert _run([a, b, "--format", "html", "-o", out]).exit_code == 0
    page = out.read_text()
    sec = page[page.index("<section id='memory'>"):]
    sec = sec[:sec.index("</section>")]
    assert sec.count("<polyline") == 2 and "before peak" in sec and "after peak" in sec


def test_host_memory_space_counts_as_xla_says(tmp_path):
    # a real XLA:CPU dump whose output lives in pinned host memory (layout S(5)): XLA:CPU
    # assigns every buffer to the default space; hlodiff reports one space, XLA's total,
    # from the files and from the estimate alike
    d = MEM / "cpu" / "host_offload"
    after = _after(d)
    assert ":S(5)}" in after.read_text().split("\n", 1)[0]
    out = _json(["memory", d, "--format", "json"])
    assert out["peak_by_space"] == {"default": _xla_total(d)}
    f = tmp_path / after.name
    f.write_bytes(after.read_bytes())
    est = _json(["memory", f, "--format", "json"])
    assert est["estimated"] is True
    assert list(est["peak_by_space"]) == ["default"]
    assert 0.9 * _xla_total(d) <= est["peak_bytes"] <= 1.1 * _xla_total(d)


def test_estimate_replays_xla_assignment_exactly_on_most_fixtures():
    # the estimate replays XLA's buffer assignment (memassign.py): on most fixtures it gives
    # XLA's total to the byte (14 of 18 when written; before it, 2); a rule lost shows here
    from hlodiff.analysis.memsim import simulate
    from hlodiff.dumps.loader import load

    exact = [d.name for d in DIRS if simulate(load(_after(d))).peak_bytes == _xla_total(d)]
    assert len(exact) >= 2 * len(DIRS) // 3, exact


def test_loop_copy_placed_in_another_elements_gap_older_xla(tmp_path):
    """JAX 0.4.30's XLA:CPU copies loop state elements in the body and places such a copy in
    the dead stretch of another element's buffer, which the body's new value then takes over
    (fixtures/memory_old, made by generate_memory.py with that version)."""
    d = ROOT / "fixtures" / "memory_old" / "while_bisect"
    total = int(re.search(r"^Total bytes used: (\d+)",
                          next(d.glob("*-buffer-assignment.txt")).read_text(), re.M).group(1))
    f = tmp_path / _after(d).name
    f.write_bytes(_after(d).read_bytes())
    out = _json(["memory", f, "--format", "json"])
    assert out["estimated"] is True
    assert 0.9 * total <= out["peak_bytes"] <= 1.1 * total, (out["peak_bytes"], total)
