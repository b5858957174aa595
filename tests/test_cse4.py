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


def test_a_divisor_shared_through_cse_lives_where_the_remaining_divide_reads_it(infonce):
    """div.32 (forward) and div.40 (backward) are the same ``broadcast(reshape(broadcast(
    norm)))`` divisor. CSE (first, in a partitioned CPU program) merged div.40 into div.32;
    then algsimp rebuilt only the forward divide as a multiply by a new reciprocal
    (multiply.15 * broadcast.92). The backward divide still divides, by div.86, which carries
    div.32's op_name: that is where div.32 lives, and div.40 is merged into it, not "divisor
    rebuilt as a reciprocal" nor fused in a copy of its own."""
    from hlodiff.dumps.loader import load
    after = {i.name: i for c in load(_pair(INFONCE)[1]).computations for i in c.instructions}
    before = {i.name: i for c in load(_pair(INFONCE)[0]).computations for i in c.instructions}
    assert after["div.85"].opcode == "divide" and after["div.85"].operands[1] == "div.86"
    assert after["div.86"].metadata.op_name == before["div.32"].metadata.op_name
    assert after["multiply.15"].operands[1] == "broadcast.92"
    keep = infonce.fate_of("main.18", "div.32")
    assert keep.fate == "fused" and keep.after == "div.86", (keep.fate, keep.after, keep.reason)
    copy = infonce.fate_of("main.18", "div.40")
    assert copy.fate == "merged" and copy.into == "div.32" and copy.after == "div.86", \
        (copy.fate, copy.into, copy.after, copy.reason)
    assert "Shardy" not in copy.reason  # the round trip keeps one of identical *constants*


def test_twins_the_shardings_cut_apart_are_not_merged(infonce):
    """scatter-add.10/.11 are identical before optimization, but the Shardy round trip gives
    them different shardings and spmd-cleanup's CSE (dump 0008) keeps both, one f32[16,2]
    and one f32[2,16] per device: scatter-add.11 is fused where its own scatter is."""
    cse = next(INFONCE.glob("*.spmd-cleanup.after_cse.*.txt")).read_text()
    assert re.search(r"= f32\[16,2\]\{1,0\} scatter\(", cse)
    assert re.search(r"= f32\[2,16\]\{1,0\} scatter\(", cse)
    a, b = (infonce.fate_of("main.18", n) for n in ("scatter-add.10", "scatter-add.11"))
    assert b.fate == "fused" and b.into is None, (b.fate, b.into, b.reason)
    assert a.fate == "fused" and a.fusion != b.fusion
