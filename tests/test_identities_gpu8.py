"""An identity algebraic simplification replaced by its operand (issue 9, class 11).

On 8 H100s the partitioner's spmd-simplify pipeline replaces softmax's ``max(x, -inf)`` by
``x``; the value lives where ``x``'s does, not in whatever kernel reads the softmax later.

Fixture: fixtures/gpu8_dots/parallel_attn_mlp_block (fixtures/generate_gpu8_dots.py; fresh 7,
XLA's own modules).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules

D = Path(__file__).resolve().parent.parent / "fixtures" / "gpu8_dots" / "parallel_attn_mlp_block"


def _fates():
    before = hlodiff.load(next(D.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(D.glob("*gpu_after_optimizations.txt")))
    return diff_modules(before, after)


def test_max_with_minus_infinity_lives_in_its_operand():
    r = _fates()
    f = r.fate_of("max.3")
    x = r.fate_of("reduce_max.7")
    assert f.fate == "rewritten" and "identity on reduce_max.7" in f.reason, f.reason
    # the pass dumps: dump 0005 rewrites max.3 into reduce_max.7, fused into
    # loop_reduce_fusion.3 in the end
    assert f.fusion == x.fusion == "loop_reduce_fusion.3", (f.fusion, x.fusion)
    # the views of it that algsimp removed follow it
    assert r.fate_of("broadcast_in_dim.12").fusion == "loop_reduce_fusion.3"


def test_an_operation_that_is_no_identity_is_left_alone():
    r = _fates()
    assert "identity" not in (r.fate_of("reduce_max.7").reason or "")
