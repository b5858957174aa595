"""The command line as users run it: `show`, help, version, and every kind of bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

import hlodiff
from hlodiff.cli import main

from .conftest import FIXTURES, fixture_pair


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """Run ``python -m hlodiff ARGS`` as a user would, in a fresh process."""
    return subprocess.run([sys.executable, "-m", "hlodiff", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "COLUMNS": "100"})


def test_version_and_help_list_every_command():
    r = CliRunner().invoke(main, ["--version"])
    assert r.exit_code == 0 and hlodiff.__version__ in r.output
    r = CliRunner().invoke(main, ["--help"])
    assert r.exit_code == 0
    for cmd in ("diff", "render", "run", "show"):
        assert f"  {cmd} " in r.output


def test_show_summarizes_a_real_optimized_module():
    _, after = fixture_pair("mlp_step")
    r = CliRunner().invoke(main, ["show", str(after)], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    assert "jit_mlp_step" in r.output and "fusions: kLoop" in r.output
    assert "largest tensors" in r.output and "opcodes" in r.output
    assert max(len(line) for line in r.output.splitlines()) <= 80


def test_show_json_is_the_model():
    before, _ = fixture_pair("fold_cse")
    r = CliRunner().invoke(main, ["show", str(before), "--format", "json"])
    assert r.exit_code == 0
    data = json.loads(r.output)
    assert data["name"] == "jit_fold_cse"
    entry = next(c for c in data["computations"] if c["entry"])
    assert entry["name"] == data["entry"]
    inst = entry["instructions"][-1]
    assert set(inst) >= {"name", "opcode", "shape", "operands", "calls"}
    assert not any(i["name"].startswith("%") for i in entry["instructions"])


def test_show_lists_a_dump_directory():
    r = CliRunner().invoke(main, ["show", str(FIXTURES / "mlp_step")])
    assert r.exit_code == 0 and "jit_mlp_step" in r.output and "before+after" in r.output


def test_diff_of_a_dump_directory_picks_its_module():
    r = CliRunner().invoke(main, [str(FIXTURES / "fold_cse"), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["before"]["module"] == "jit_fold_cse"


def _bad_inputs(tmp_path):
    _, after = fixture_pair("mlp_step")
    text = after.read_text()
    truncated = tmp_path / "truncated.txt"
    truncated.write_text(text[: len(text) // 2])
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)))
    unknown = tmp_path / "unknown.txt"
    unknown.write_text("HloModule m\nENTRY e {\n  ROOT p = f32[] frobnicate(f32[] %x)\n}\n")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    wrong = next((FIXTURES / "mlp_step").glob("*buffer-assignment.txt"))
    return {
        "truncated": (truncated, ":"),
        "binary": (binary, "binary"),
        "unknown": (unknown, ":3:18: expected an HLO opcode, found 'frobnicate'"),
        "empty": (empty, ":1:1: expected an HLO module"),
        "wrong kind": (wrong, "buffer-assignment report"),
        "missing": (tmp_path / "nope.txt", "no such file"),
        "empty dir": (tmp_path, "no HLO dumps found"),
    }


@pytest.mark.parametrize("kind", ["truncated", "binary", "unknown", "empty", "wrong kind",
                                  "missing", "empty dir"])
def test_bad_input_is_one_clear_line_exit_2(kind, tmp_path):
    path, expected = _bad_inputs(tmp_path)[kind]
    good, _ = fixture_pair("fold_cse")
    out = tmp_path / "report.json"
    for args in (["show", str(path)], ["diff", str(good), str(path), "-o", str(out)]):
        if kind == "empty dir" and args[0] == "diff":
            args = [str(path)]
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, (args, r.output)
        assert "Traceback" not in r.output
        lines = [line for line in r.output.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("hlodiff: "), r.output
        assert expected in lines[0], lines[0]
        assert not out.exists()  # nothing written half-way


def test_truncated_file_error_names_its_position(tmp_path):
    path, _ = _bad_inputs(tmp_path)["truncated"]
    r = run_cli("show", str(path))
    assert r.returncode == 2 and r.stdout == ""
    assert "Traceback" not in r.stderr
    line = r.stderr.strip()
    assert line.startswith(f"hlodiff: {path}:") and ": expected " in line
    assert len(r.stderr.strip().splitlines()) == 1


def test_subprocess_show_and_cache(tmp_path):
    _, after = fixture_pair("convnet_step")
    env_cache = tmp_path / "cache"
    env = {**os.environ, "HLODIFF_CACHE_DIR": str(env_cache), "COLUMNS": "100"}
    cmd = [sys.executable, "-m", "hlodiff", "show", str(after)]
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert first.returncode == 0, first.stderr
    assert list(env_cache.glob("*.hlom")), "a large module is cached after the first load"
    second = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert second.stdout == first.stdout
    third = subprocess.run(cmd + ["--no-cache"], capture_output=True, text=True, env=env,
                           timeout=120)
    assert third.stdout == first.stdout


def test_cache_is_keyed_by_content(tmp_path, monkeypatch):
    from hlodiff.dumps.cache import cached_parse

    monkeypatch.setenv("HLODIFF_CACHE_DIR", str(tmp_path))
    _, after = fixture_pair("convnet_step")
    text = after.read_text()
    a = cached_parse(text, "a")
    changed = text.replace("jit_convnet_step", "jit_other_name", 1)
    b = cached_parse(changed, "b")
    assert a.name == "jit_convnet_step" and b.name == "jit_other_name"
    assert len(list(tmp_path.glob("*.hlom"))) == 2
    assert cached_parse(text, "c").path == "c"
