"""Scans XLA's ReduceWindowRewriter rebuilds before the constant folder runs (issue 9).

A reduce-window that scans a whole dimension (``jnp.cumsum`` lowers to one) longer than the
rewriter's base length (16) becomes pad, reshape and two short scans in the pipeline before
simplification, and the folder leaves ``pad(broadcast(c), c')`` alone: a scan of a constant
is not evaluated at compile time, and the constants it read are fused, not folded. Where the
optimized module shows no trace of the rewriter (JAX 0.4.30's CPU pipeline has none), the
folder does evaluate it.

Fixture: fixtures/scan (written by fixtures/generate_scan.py; XLA's own dumps).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.diff.folding import _scan_dim, scan_rewriter_ran

SCAN = Path(__file__).resolve().parent.parent / "fixtures" / "scan"


def _diff(mode: str):
    d = SCAN / mode / "multi_key_sort"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    return before, after, {f.before: f for f in diff_modules(before, after).instructions}


def test_a_long_scan_of_a_constant_is_not_folded_where_the_rewriter_ran():
    """jax 0.10.2 dumps: reduce-window-rewriter (dump 0007) pads the s32[8,20] scan to 32;
    ``constant.10`` (1) and its broadcast are fused into ``broadcast_bitcast_fusion`` at
    dump 0021 and stay in the optimized module."""
    _, after, fates = _diff("cpu")
    assert scan_rewriter_ran(after)
    assert fates["constant.10"].fate == "fused", fates["constant.10"]
    assert fates["broadcast_in_dim.3"].fate != "folded", fates["broadcast_in_dim.3"]


def test_without_the_rewriter_the_folder_evaluates_the_scan():
    """jax 0.4.30 dumps: constant_folding (dump 0008) evaluates the cumsum; no scan tile of
    16 is left in the optimized module."""
    _, after, fates = _diff("old")
    assert not scan_rewriter_ran(after)
    folded = [f for f in fates.values() if f.opcode in ("constant", "broadcast")
              and f.fate == "folded"]
    assert folded, "the constants the folded scan read"


def test_only_a_whole_dimension_scan_counts():
    class I:
        def __init__(self, w):
            self.attrs = {"window": w}
    assert _scan_dim(I("size=1x20 pad=0_0x19_0"), (8, 20)) == 1
    assert _scan_dim(I("size=1x20 pad=0_0x0_19"), (8, 20)) == 1  # reverse
    assert _scan_dim(I("size=1x20 pad=0_0x20_0"), (8, 20)) == 1  # exclusive
    assert _scan_dim(I("size=1x3 pad=0_0x1_1"), (8, 20)) is None  # a pooling window
    assert _scan_dim(I("size=1x20 stride=1x2 pad=0_0x19_0"), (8, 20)) is None
    assert _scan_dim(I("size=2x20 pad=1_0x19_0"), (2, 20)) is None  # two scanned dims
