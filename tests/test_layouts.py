"""Layout changes: every instruction whose layout optimization changed, and the entry layout."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hlodiff import parse
from hlodiff.cli import main
from hlodiff.diff import diff_modules

BEFORE = """HloModule jit_lay, entry_computation_layout={(f32[4,8]{1,0}, f32[8,16]{1,0})->f32[4,16]{1,0}}
ENTRY %main (a: f32[4,8], b: f32[8,16]) -> f32[4,16] {
  %a = f32[4,8]{1,0} parameter(0), metadata={op_name="jit(f)/a"}
  %b = f32[8,16]{1,0} parameter(1), metadata={op_name="jit(f)/b"}
  %t = f32[16,8]{1,0} transpose(%b), dimensions={1,0}, metadata={op_name="jit(f)/transpose"}
  ROOT %d = f32[4,16]{1,0} dot(%a, %t), lhs_contracting_dims={1}, rhs_contracting_dims={1}, metadata={op_name="jit(f)/dot_general"}
}
"""

# what layout assignment does: the transpose becomes column-major (free), and so the dot
AFTER = BEFORE.replace("->f32[4,16]{1,0}}", "->f32[4,16]{0,1}}").replace(
    "%t = f32[16,8]{1,0}", "%t = f32[16,8]{0,1}").replace(
    "ROOT %d = f32[4,16]{1,0}", "ROOT %d = f32[4,16]{0,1}")


def test_layout_changes_are_reported_with_from_and_to():
    result = diff_modules(parse(BEFORE), parse(AFTER), mode="optimization")
    changes = {(c["instruction"], c["from"], c["to"]) for c in result.to_json()["layouts"]}
    assert ("t", "{1,0}", "{0,1}") in changes
    assert ("d", "{1,0}", "{0,1}") in changes
    entry = [c for c in result.to_json()["layouts"] if c["instruction"] == "ENTRY"]
    assert entry and entry[0]["to"].endswith("->f32[4,16]{0,1}}")
    assert result.summary["layout_changes"] == 3


def test_no_layout_change_when_layouts_agree():
    result = diff_modules(parse(BEFORE), parse(BEFORE), mode="optimization")
    assert result.summary["layout_changes"] == 0 and result.to_json()["layouts"] == []


def test_layout_gate_trips_in_the_cli(tmp_path):
    b, a = tmp_path / "b.txt", tmp_path / "a.txt"
    b.write_text(BEFORE)
    a.write_text(AFTER)
    r = CliRunner().invoke(main, [str(b), str(a), "--mode", "optimization", "--format", "json",
                                  "--fail-on", "layout_changes>0"])
    assert r.exit_code == 1
    assert json.loads(r.stdout)["summary"]["layout_changes"] == 3
    assert "gate tripped: layout_changes>0" in r.stderr
    text = CliRunner().invoke(main, [str(b), str(a), "--mode", "optimization"],
                              env={"COLUMNS": "100"})
    assert text.exit_code == 0 and "{1,0}" in text.output and "{0,1}" in text.output
