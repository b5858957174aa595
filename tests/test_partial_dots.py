"""A transpose of a partial dot lives in the partials' sum (reshard.summed_transpose).

On 8 devices the SPMD partitioner computes a dot over a sharded contracting dimension as
a per-device partial dot and an all-reduce of the partials; algebraic simplification then
rebuilds ``transpose(dot(a, b))`` as ``dot(b, a)`` and the all-reduce reads it. The
transpose's value is the sum, not the device's partial.

Fixture: fixtures/partial_dots (fixtures/generate_partial_dots.py; fresh 4, XLA's own
modules).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules

D = Path(__file__).resolve().parent.parent / "fixtures" / "partial_dots" / "gqa_attention_step"


def test_transpose_of_a_partial_dot_lives_in_the_all_reduce():
    before = hlodiff.load(next(D.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(D.glob("*cpu_after_optimizations.txt")))
    assert before.entry_computation["transpose.10"].operands == ["dot_general.21"]
    r = diff_modules(before, after)
    f = r.fate_of("transpose.10")
    # the pass dumps: algsimp moves it into the all-reduce's dot; the device's slice of
    # the sum is fused into copy_subtract_fusion.2 (the rebuilt dot's kernel is ynn_fusion.4)
    assert f.fate == "rewritten" and f.fusion == "copy_subtract_fusion.2", (f.after, f.reason)
    assert "summed value" in f.reason
