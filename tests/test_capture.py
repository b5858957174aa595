"""Live capture: in-process lowering, and running a program with XLA dumping on."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

import hlodiff
from hlodiff.cli import main

PROGRAM = """
import jax, jax.numpy as jnp

@jax.jit
def step(w, x):
    h = jnp.tanh(x @ w)
    return (h * h).sum() + (h * h).mean()

print(step(jnp.ones((8, 8)), jnp.ones((4, 8))))
"""


def test_capture_a_function_in_process():
    jnp = pytest.importorskip("jax.numpy")

    def f(x, y):
        return jnp.sin(x) * 2 + jnp.sin(x) @ y

    cap = hlodiff.capture(f, jnp.ones((4, 4)), jnp.ones((4, 4)))
    assert cap.before.name == cap.after.name == "jit_f"
    assert any(i.opcode == "fusion" for i in cap.after.instructions())
    assert any(i.op_name for i in cap.before.instructions())  # source metadata kept
    summary = cap.diff().summary
    assert summary["merged"] >= 1  # the two sin(x) are one after CSE
    assert summary["fused"] >= 1


@pytest.mark.slow
def test_capture_command_runs_a_program_and_explains_it(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    dumps = tmp_path / "dumps"
    r = CliRunner().invoke(main, ["capture", "--dump", str(dumps), "--format", "json", "--",
                                  sys.executable, str(prog)])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout[r.stdout.index("{"):])
    assert data["before"]["module"] == "jit_step"
    assert data["summary"]["fused"] >= 1
    assert list(dumps.glob("*jit_step.before_optimizations.txt"))


def test_capture_bad_program_is_one_line_exit_2(tmp_path):
    r = CliRunner().invoke(main, ["capture", "--", str(tmp_path / "no-such-program")])
    assert r.exit_code == 2 and r.output.startswith("hlodiff: capture: cannot run")
    assert len(r.output.strip().splitlines()) == 1
