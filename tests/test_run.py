"""`hlodiff run`: options, the measurement's JSON structure, dump discovery, rendering.

Timing figures are never asserted (they go in benchmarks/RESULTS.md): only presence,
positivity and structure.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlodiff.cli import main
from hlodiff.errors import InputError
from hlodiff.jaxrun.runbench import (RunConfig, RunError, child_env, find_step_dumps, hlo_summary,
                              parse_hidden, stats_ms)

REPO = Path(__file__).resolve().parent.parent
MLP = REPO / "fixtures" / "cpu" / "mlp_step"
SMALL = ["run", "--iters", "5", "--warmup", "2", "--batch", "16", "--features", "16",
         "--hidden", "16"]


def _has_gpu() -> bool:
    try:
        import jax
        return any(d.platform == "gpu" for d in jax.devices())
    except Exception:
        return False


# ---- options -------------------------------------------------------------------------

def test_parse_hidden():
    assert parse_hidden("128,128") == (128, 128)
    assert parse_hidden(" 64 , 32 ") == (64, 32)
    assert parse_hidden("7") == (7,)
    for bad in ("12,x", "", "0", "-3", "1,,2", "1.5"):
        with pytest.raises(InputError):
            parse_hidden(bad)


@pytest.mark.parametrize("args, needle", [
    (["--hidden", "12,x"], "hidden"),
    (["--hidden", ""], "hidden"),
    (["--iters", "0"], "iters"),
    (["--batch", "-1"], "batch"),
    (["--warmup", "-1"], "warmup"),
    (["--dtype", "f64"], "dtype"),
    (["--platform", "tpu"], "platform"),
    (["--format", "xml"], "format"),
])
def test_bad_options_exit_2(args, needle):
    r = CliRunner().invoke(main, ["run", *args])
    assert r.exit_code == 2, r.output
    assert needle in r.output.lower()
    assert "Traceback" not in r.output


def test_config_validate():
    RunConfig().validate()
    with pytest.raises(InputError):
        RunConfig(hidden=()).validate()
    with pytest.raises(InputError):
        RunConfig(dtype="f16").validate()


def test_dump_path_that_is_a_file_exit_2(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    r = CliRunner().invoke(main, [*SMALL, "--dump", str(f)])
    assert r.exit_code == 2


# ---- pieces --------------------------------------------------------------------------

def test_stats_ms():
    s = stats_ms([3_000_000, 1_000_000, 2_000_000, 4_000_000, 5_000_000])
    assert s["n"] == 5 and s["median_ms"] == 3.0 and s["min_ms"] == 1.0 and s["max_ms"] == 5.0
    assert s["p10_ms"] <= s["p25_ms"] <= s["median_ms"] <= s["p75_ms"] <= s["p90_ms"]
    assert s["iqr_ms"] == pytest.approx(2.0)
    assert stats_ms([7])["stdev_ms"] == 0.0


def test_child_env_sets_dump_and_platform():
    env = child_env("cpu", "/tmp/d", base={"XLA_FLAGS": "--xla_foo=1", "PATH": "/bin"})
    assert env["JAX_PLATFORMS"] == "cpu"
    flags = env["XLA_FLAGS"].split()
    assert flags[0] == "--xla_foo=1"
    assert "--xla_dump_to=/tmp/d" in flags and "--xla_dump_hlo_as_text" in flags
    assert "JAX_PLATFORMS" not in child_env("gpu", "/tmp/d", base={"JAX_PLATFORMS": "cpu"})
    assert child_env("auto", "/tmp/d", base={"JAX_PLATFORMS": "cpu"})["JAX_PLATFORMS"] == "cpu"


def test_find_step_dumps_on_fixture():
    before, after = find_step_dumps(MLP, module="jit_mlp_step")
    assert before.name == "module_0026.jit_mlp_step.before_optimizations.txt"
    assert after.name == "module_0026.jit_mlp_step.cpu_after_optimizations.txt"
    h = hlo_summary(before, after)
    assert h["before_instructions"] > 0 and h["after_instructions"] > 0
    assert h["after_fusions"] > 0
    assert h["summary"] is not None or "diff_error" in h


def test_find_step_dumps_picks_largest_module(tmp_path):
    for n in ("0003", "0012"):
        for suffix in ("before_optimizations.txt", "sm_9.0_gpu_after_optimizations.txt",
                       "sm_9.0_gpu_after_optimizations-buffer-assignment.txt"):
            (tmp_path / f"module_{n}.jit_train_step.{suffix}").write_text("x")
    (tmp_path / "module_0020.jit_train_step.before_optimizations.txt").write_text("x")  # no pair
    (tmp_path / "module_0030.jit_train_step_other.before_optimizations.txt").write_text("x")
    before, after = find_step_dumps(tmp_path)
    assert before.name == "module_0012.jit_train_step.before_optimizations.txt"
    assert after.name == "module_0012.jit_train_step.sm_9.0_gpu_after_optimizations.txt"
    with pytest.raises(RunError):
        find_step_dumps(tmp_path / "missing")


def test_render_text_from_canned_result():
    from rich.console import Console

    from hlodiff.cli.run import _render_text

    st = lambda m: {"n": 5, "median_ms": m, "p10_ms": m * 0.9, "p90_ms": m * 1.2}  # noqa: E731
    r = {"config": {"layers": [16, 16, 10], "batch": 16, "dtype": "f32", "warmup": 2},
         "device": {"kind": "cpu", "platform": "cpu"}, "jax_version": "0.0",
         "eager": st(20.0), "jit": st(0.2), "floor": st(0.02), "speedup": 100.0,
         "jit_over_floor": 10.0, "jit_above_floor_ms": 0.18,
         "compile": {"total_s": 0.3, "trace_lower_s": 0.05, "compile_s": 0.25},
         "hlo": {"before_instructions": 146, "after_instructions": 164, "after_fusions": 16,
                 "summary": {"fusions": 16, "fused": 30, "folded": 1, "merged": 2}},
         "dump_dir": None}
    buf = io.StringIO()
    _render_text(r, Console(file=buf, width=120))
    out = buf.getvalue()
    for needle in ("eager", "jit", "dispatch floor", "100.0x", "146 instructions before",
                   "fusions 16", "folded 1", "merged 2"):
        assert needle in out, (needle, out)


# ---- end to end (real measurement in a subprocess, CPU) -------------------------------

def test_run_json_cpu():
    r = CliRunner().invoke(main, [*SMALL, "--platform", "cpu", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    for mode in ("eager", "jit", "floor"):
        assert d[mode]["n"] == 5
        assert d[mode]["median_ms"] > 0
        assert d[mode]["p10_ms"] <= d[mode]["median_ms"] <= d[mode]["p90_ms"]
    assert d["speedup"] > 0 and d["jit_over_floor"] > 0
    assert d["compile"]["total_s"] > 0 and d["compile"]["compile_s"] > 0
    assert d["device"]["platform"] == "cpu" and d["platform"] == "cpu"
    assert d["jax_version"] and d["config"]["hidden"] == [16] and d["config"]["layers"] == [16, 16, 10]
    h = d["hlo"]
    assert h["module"] == "jit_train_step"
    assert h["before_instructions"] > 0 and h["after_instructions"] > 0
    assert "summary" in h
    if h["summary"] is not None:
        assert h["summary"]["fusions"] >= 0
    assert d["dump_dir"] is None
    assert d["check"]["max_abs_diff_eager_vs_jit"] < 1e-3  # eager and jit compute the same step


@pytest.mark.slow
def test_run_subprocess_text_and_dump(tmp_path):
    dump = tmp_path / "dumps"
    env = dict(os.environ, COLUMNS="120")
    p = subprocess.run([sys.executable, "-c", "from hlodiff.cli import main; main()", *SMALL, "--dtype", "bf16",
                        "--dump", str(dump)], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    for needle in ("eager", "jit", "dispatch floor", "speedup", "instructions before", str(dump)):
        assert needle in p.stdout, (needle, p.stdout)
    assert list(dump.glob("module_*.jit_train_step.before_optimizations.txt"))
    assert list(dump.glob("module_*.jit_train_step.*after_optimizations.txt"))


@pytest.mark.skipif(_has_gpu(), reason="a GPU is present")
def test_platform_gpu_without_gpu_exit_2():
    r = CliRunner().invoke(main, [*SMALL, "--platform", "gpu"])
    assert r.exit_code == 2, r.output
    assert "no GPU" in r.output and "Traceback" not in r.output
