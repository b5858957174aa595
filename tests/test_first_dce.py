"""Code XLA:CPU's first dead-code elimination removes before the call inliner runs
(diff/first_dce.py): instructions reaching nothing of their own computation's root, and the
computations only they called.

Fixture: fixtures/oldh2/old/slogdet_flow (written by fixtures/generate_oldh2.py; XLA's own
modules, JAX 0.4.30, CPU).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.diff.first_dce import first_dce_dead

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "oldh2" / "old" / "slogdet_flow"


def _modules():
    before = hlodiff.load(next(FIX.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(FIX.glob("*cpu_after_optimizations.txt")))
    return before, after


def test_the_dead_permutation_and_the_computations_only_it_calls():
    """Dump 0000 -> 0001 (sharding-removal dce): slogdet_0.171's while.200 and what feeds
    it go, with region_0.76 and None.42 (the loop's body and what it calls)."""
    before, _ = _modules()
    dead = first_dce_dead(before)
    for x in [("slogdet_0.171", "while.200"), ("slogdet_0.171", "iota.198"),
              ("slogdet_0.171", "call.210"), ("region_0.76", "call.83"),
              ("None.42", "constant.48"), ("None.42", "select.52")]:
        assert x in dead, x
    root = before.by_name["slogdet_0.171"].root
    assert ("slogdet_0.171", root) not in dead


def test_they_are_removed_not_inlined_or_merged():
    before, after = _modules()
    r = diff_modules(before, after)
    want = {"while.200", "subtract.191", "call.210", "iota.198", "constant.48",
            "select.52", "reduce.127", "get-tuple-element.84"}
    fates = {f.before: f.fate for f in r.instructions if f.before in want}
    assert fates and set(fates.values()) == {"removed"}, fates
