"""`hlodiff passes DIR`: which pass did what, read from XLA's pass-by-pass dumps."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hlodiff.cli import main

from .conftest import FIXTURES


def test_passes_lists_what_each_pass_decided():
    r = CliRunner().invoke(main, ["passes", str(FIXTURES / "fold_cse")], env={"COLUMNS": "100"})
    assert r.exit_code == 0, r.output
    assert "HLO_passes_through_layout_assignment/cse" in r.output and "merged 2" in r.output
    assert "fusion" in r.output and "fused 26" in r.output


def test_passes_json_and_one_instruction_story():
    r = CliRunner().invoke(main, ["passes", str(FIXTURES / "fold_cse"), "--format", "json"])
    data = json.loads(r.output)
    assert data["module"] == "jit_fold_cse"
    cse = [p for p in data["passes"] if p["pass"] == "cse"]
    assert cse and cse[0]["decided"] == {"merged": 2}
    assert all(p["file"].endswith(".txt") for p in data["passes"])
    r = CliRunner().invoke(main, ["passes", str(FIXTURES / "fold_cse"), "--instruction", "add.9",
                                  "--format", "json"])
    story = json.loads(r.output)
    assert story["fate"] == "merged" and story["pass"] == "cse"
    assert [c["fate"] for c in story["chain"]] == ["merged", "fused"]


def test_passes_bad_input_is_one_line_exit_2(tmp_path):
    for args in (["passes", str(tmp_path)],
                 ["passes", str(FIXTURES / "fold_cse"), "--instruction", "no.such"]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2 and "Traceback" not in r.output
        assert len(r.output.strip().splitlines()) == 1 and r.output.startswith("hlodiff: ")
