"""Single-device CPU fates, fourth round (issue 9; cpu4 helper).

Fixtures: fixtures/cpu4 (XLA's pass dumps of zoo programs, written by
fixtures/generate_cpu4.py).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.diff.accuracy import compare
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

CPU4 = Path(__file__).resolve().parent.parent / "fixtures" / "cpu4"


def _run(program: str):
    snaps = find_pass_dumps(CPU4 / program)
    bp = find_before_file(snaps)
    before = hlodiff.load(bp)
    after = hlodiff.load(next(bp.parent.glob("*cpu_after_optimizations.txt")))
    return before, trace(snaps, before), diff_modules(before, after)


def test_broadcasts_sunk_below_an_add():
    """linalg_qr_svd, jnp.triu's mask: ``add.3 = add(broadcast(iota.4), broadcast(-1))``.
    Algsimp (dump 0008) computes ``add.4 = add(iota.0, broadcast.2)`` on the narrow shape
    and broadcasts the result; the wide add and its scalar broadcast are left without users
    and deleted by DCE (dump 0009); the iota lives on inside slice_select_fusion."""
    before, oracle, result = _run("cpu/linalg_qr_svd")
    for name, fate in (("add.3", "removed"), ("add.2", "removed"), ("iota.4", "fused")):
        assert oracle.info(name).fate == fate
        assert result.fate_of("qr.1", name).fate == fate, result.fate_of("qr.1", name)
    assert "moved" in result.fate_of("qr.1", "add.3").reason
    assert "below the broadcast" in result.fate_of("qr.1", "add.2").reason
    iota = result.fate_of("qr.1", "iota.4")
    assert iota.fusion == oracle.destination("iota.4") == "slice_select_fusion"
    cmp = compare(before, oracle, result)
    assert not [d for d in cmp.disagreements if d[0] == "qr.1"], cmp.disagreements
