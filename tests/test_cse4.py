"""Partitioned CPU programs meet CSE before algebraic simplification (issue 9; cse4 helper).

On one CPU device identical copies of index arithmetic on iotas are each rewritten by
algsimp before CSE runs. Partitioned over 8 CPU devices, the partitioner's ``spmd-cleanup``
pipeline runs CSE right after the Shardy round trip, before any algsimp: the copies are
merged into the first, and only that one is rewritten (hlodiff/diff/spmd_cse.py). Real XLA
dumps (fixtures/cse4, fixtures/sharded_passes); each test checks the dump structure it
relies on.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hlodiff.diff import diff_files

FIX = Path(__file__).resolve().parent.parent / "fixtures"
INFONCE = FIX / "cse4" / "cpu8" / "infonce_temperature"


def _pair(d: Path) -> tuple[Path, Path]:
    return (next(d.glob("*.before_optimizations.txt")),
            next(d.glob("*cpu_after_optimizations.txt")))


@pytest.fixture(scope="module")
def infonce():
    return diff_files(*_pair(INFONCE))


# the four copies of jnp's index normalisation (written by ``[lab, lab]``), first copy first
CHAINS = [("lt.4", "lt.5", "lt.6", "lt.7"), ("add.9", "add.10", "add.11", "add.12"),
          ("select_n.4", "select_n.5", "select_n.6", "select_n.7")]


def test_the_pass_dump_shows_cse_keeping_one_copy_before_algsimp():
    """Dump 0008 (spmd-cleanup, after cse) has one ``compare(iota, ...) direction=LT`` on
    s32[16] where the before module has four: CSE met the copies before any algsimp."""
    before, _ = _pair(INFONCE)
    cse = next(INFONCE.glob("*.spmd-cleanup.after_cse.*.txt"))
    pat = re.compile(r"= pred\[16\]\{0\} compare\(%iota\.\d+, %broadcast\.\d+\), direction=LT")
    assert len(pat.findall(before.read_text())) == 4
    assert len(pat.findall(cse.read_text())) == 1


def test_copies_of_index_arithmetic_are_merged_into_the_first(infonce):
    for first, *copies in CHAINS:
        assert infonce.fate_of("main.18", first).fate == "rewritten"
        for c in copies:
            f = infonce.fate_of("main.18", c)
            assert f.fate == "merged" and f.into == first, (c, f.fate, f.into, f.reason)


def test_copies_identical_only_through_no_op_views_are_not_merged():
    """moe_top1 on 8 CPU devices: ``eq.14 = broadcast(reshape(broadcast(reshape(iota))))``
    has the value of ``iota.3 = broadcast(iota)``, but CSE compares instructions as written:
    algsimp rewrites eq.14 (removing its no-op views) before they become identical."""
    res = diff_files(*_pair(FIX / "sharded_passes" / "moe_top1"))
    f = res.fate_of("_one_hot.5", "eq.14")
    assert f.fate == "rewritten", (f.fate, f.into, f.reason)
