"""Loops that run once (issue 9): XLA's while-loop simplifier replaces a while whose trip
count is 1 by its body, inlined where the loop stood (`simplify-while-loops`), so every
instruction of the body is rebuilt in the enclosing computation: `rewritten`, not `fused`
or `kept` as the look-alike clone the matcher finds (single_trip.py). JAX 0.4.30 writes
such loops for ``jax.random.gamma``'s one-round loop and for scans of length 1.

Fixture: fixtures/fresh17/old_mixup_permutation (unedited JAX 0.4.30 CPU modules of
benchmarks/zoo_fresh6_programs.py mixup_permutation; XLA's pass dumps, read when the test
was written, rebuild add.1402 and get-tuple-element.1380 at simplify-while-loops).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from hlodiff.diff import diff_modules
from hlodiff.diff.single_trip import trip_count

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "fresh17" / "old_mixup_permutation"


@lru_cache(maxsize=None)
def _pair():
    return load_pair(D)


def _while(comp: str, name: str):
    before = _pair()[0]
    return before, before.computation(comp)[name]


def test_trip_counts_of_the_induction_pattern():
    """_gamma's loop runs once, threefry's five rounds five times; a while_loop whose
    condition reads data (rejection sampling) has no trip count to read."""
    b, w = _while("_gamma.1412", "while.1422")
    assert trip_count(b, "_gamma.1412", w) == 1
    b, w = _while("_threefry_split.112", "while.132")
    assert trip_count(b, "_threefry_split.112", w) == 5
    b, w = _while("region_5.1150", "while.1169")
    assert trip_count(b, "region_5.1150", w) is None


def test_body_of_a_loop_that_runs_once_is_rewritten():
    res = diff_modules(*_pair())
    for name in ("add.1402", "get-tuple-element.1380"):
        f = res.fate_of("region_4.1378", name)
        assert f.fate == "rewritten" and "runs once" in f.reason, (name, f)
