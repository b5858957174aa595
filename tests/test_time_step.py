"""`hlodiff.time_step` and `hlodiff run --step FILE:FUNCTION` on CPU: structure, not times."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from hlodiff.cli import main

STEP = Path(__file__).resolve().parent / "steps" / "tiny_step.py"


def _check(d: dict) -> None:
    s = d["steady"]
    assert s["n"] == 4
    assert 0 < s["min_ms"] <= s["p50_ms"] <= s["p90_ms"] <= s["p99_ms"] <= s["max_ms"]
    c = d["compile"]
    assert c["trace_lower_s"] > 0 and c["compile_s"] > 0 and c["first_call_s"] > 0
    assert c["warmup_calls"] == 1
    assert d["device"]["platform"] == "cpu" and d["device"]["kind"]
    x = d["xla"]
    assert x["before_instructions"] > 0 and x["after_instructions"] > 0
    assert x["summary"] is not None and x["summary"]["kernels_after"] >= 1


def test_time_step_in_process():
    import hlodiff
    from hlodiff.jaxrun.timestep import load_step

    fn, args = load_step(f"{STEP}:make_step")
    t = hlodiff.time_step(fn, *args, iters=4, warmup=1)
    _check(t.to_dict())
    text = repr(t)
    assert "step on" in text and "p99" in text and len(text) < 2000


def test_load_step_rejects_wrong_return():
    import pytest

    from hlodiff.errors import InputError
    from hlodiff.jaxrun.timestep import load_step

    with pytest.raises(InputError, match="must return"):
        load_step(f"{STEP}:not_a_pair")


def test_run_step_cli_json():
    r = CliRunner().invoke(main, ["run", "--step", f"{STEP}:make_step", "--platform", "cpu",
                                  "--iters", "4", "--warmup", "1", "--format", "json"])
    assert r.exit_code == 0, r.output
    _check(json.loads(r.stdout))


def test_run_step_text_shows_only_measured():
    r = CliRunner().invoke(main, ["run", "--step", f"{STEP}:make_step", "--platform", "cpu",
                                  "--iters", "4", "--warmup", "1"])
    assert r.exit_code == 0, r.output
    for needle in ("step on CPU", "compile", "first call", "p50", "p90", "p99", "XLA:",
                   "kernels"):
        assert needle in r.stdout, (needle, r.stdout)
    assert "T4" not in r.stdout and "seed" not in r.stdout


def test_run_step_bad_specs_exit_2(tmp_path):
    for spec, needle in ((f"{tmp_path}/missing.py:make_step", "no such file"),
                         (f"{STEP}:nope", "no function"),
                         ("no_colon", "expected FILE.py:FUNCTION")):
        r = CliRunner().invoke(main, ["run", "--step", spec, "--platform", "cpu", "--iters", "1"])
        assert r.exit_code == 2, (spec, r.output)
        assert needle in r.output and "Traceback" not in r.output, (spec, r.output)
