"""fp8 round trips the Triton gemm rewriter takes into the gemm kernel (issue 9, class 9).

``convert(convert(x, f8e4m3fn), f32)`` before a dot is fused into the gemm fusion with the
dot, and simplify-fp-conversions removes it there: fused, not "simplified away".

Fixture: fixtures/gemm_converts (fixtures/generate_gemm_converts.py; fresh 7, XLA's own
modules).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules

D = Path(__file__).resolve().parent.parent / "fixtures" / "gemm_converts" / "fp8_scaled_matmul"


def test_round_trip_is_fused_into_the_dots_gemm_kernel():
    before = hlodiff.load(next(D.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(D.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    kernel = r.fate_of("dot_general.3").fusion
    assert kernel and kernel.startswith("gemm_fusion"), kernel
    for name in ("convert_element_type.8", "convert_element_type.10"):
        f = r.fate_of(name)
        assert (f.fate, f.fusion) == ("fused", kernel), (name, f.fate, f.fusion, f.reason)
        assert "round trip through f8e4m3fn" in f.reason, f.reason


def test_converts_that_are_no_round_trip_are_left_alone():
    before = hlodiff.load(next(D.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(D.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    for f in r.instructions:
        if f.opcode == "convert" and f.before not in (
                "convert_element_type.8", "convert_element_type.10",
                "convert_element_type.9", "convert_element_type.11"):
            assert "round trip" not in (f.reason or ""), f
