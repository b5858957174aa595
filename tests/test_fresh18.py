"""The oracle on fresh 18 programs (issue 9): a conditional the conditional simplifier turned
into selects over copies of both branches.

Fixtures: fixtures/fresh18/* (fixtures/generate_fresh18.py: unedited pass snapshots of
benchmarks/zoo_fresh18_programs.py, jax 0.10.2).
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.dumps.passes import find_pass_dumps, trace

D = Path(__file__).resolve().parent.parent / "fixtures" / "fresh18"


def test_oracle_follows_branches_inlined_into_selects():
    """H100: simplify-conditional (dump 0012) removes cond.22 and copies both branches into
    the entry computation, reading the conditional's operand tuple cond.21 where they read
    their parameter; the results are selected. mul.56 of the true branch is renamed mul.1,
    not "rewritten" with no destination (the trace had stopped there)."""
    snaps = find_pass_dumps(D / "select_branches", "jit_randaugment_vmapped_switch_cond_skip")
    t = trace(snaps)
    f = t.fates["mul.56"]
    assert f.final_name == "mul.1" and f.fate != "rewritten", (f.fate, f.history)
    for name in ("add.69", "mul.48", "sub.38"):
        assert t.fates[name].fate != "rewritten", (name, t.fates[name].history)
