"""fp8 round trips the Triton gemm rewriter takes into the gemm kernel (issue 9, class 9).

``convert(convert(x, f8e4m3fn), f32)`` before a dot is fused into the gemm fusion with the
dot, and simplify-fp-conversions removes it there: fused, not "simplified away".

Fixture: fixtures/gemm_converts (fixtures/generate_gemm_converts.py; fresh 7, XLA's own
modules).
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.diff import diff_modules

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "gemm_converts" / "fp8_scaled_matmul"


def test_round_trip_is_fused_into_the_dots_gemm_kernel():
    before, after = load_pair(D)
    r = diff_modules(before, after)
    kernel = r.fate_of("dot_general.3").fusion
    assert kernel and kernel.startswith("gemm_fusion"), kernel
    for name in ("convert_element_type.8", "convert_element_type.10"):
        f = r.fate_of(name)
        assert (f.fate, f.fusion) == ("fused", kernel), (name, f.fate, f.fusion, f.reason)
        assert "round trip through f8e4m3fn" in f.reason, f.reason


def test_converts_that_are_no_round_trip_are_left_alone():
    before, after = load_pair(D)
    r = diff_modules(before, after)
    # .12/.13 round the result of transpose(dot_general.5): the gemm kernel's epilogue
    # (fused@triton-gemm-rewriter into gemm_fusion_dot in the pass dumps)
    for name in ("convert_element_type.12", "convert_element_type.13"):
        assert "as the epilogue of the dot dot_general.5" in r.fate_of(name).reason
    for f in r.instructions:
        if f.opcode == "convert" and f.before not in (
                "convert_element_type.8", "convert_element_type.10",
                "convert_element_type.9", "convert_element_type.11",
                "convert_element_type.12", "convert_element_type.13"):
            assert "round trip" not in (f.reason or ""), f


def test_round_trip_of_a_gemm_result_is_fused_as_its_epilogue():
    d = D.parent / "bf16_preferred_f32_accum_adam"
    before, after = load_pair(d)
    r = diff_modules(before, after)
    # the pass dumps: triton-gemm-rewriter (0026) fuses convert_element_type.16/.17,
    # rounding transpose(dot_general.15), into gemm_fusion_dot; .12/.14 into
    # gemm_fusion_dot.1; simplify-fp-conversions (0030) removes them inside
    for name, kernel in (("convert_element_type.16", "gemm_fusion_dot"),
                         ("convert_element_type.17", "gemm_fusion_dot"),
                         ("convert_element_type.12", "gemm_fusion_dot.1"),
                         ("convert_element_type.14", "gemm_fusion_dot.1")):
        f = r.fate_of(name)
        assert (f.fate, f.fusion) == ("fused", kernel), (name, f.fate, f.fusion, f.reason)
    # dot_general.12 widens convert_element_type.11, a bf16 weight that dot_general.9 reads
    # as it is: only the widening convert went into the gemm kernel
    assert r.fate_of("dot_general.12").fate == "fused"
    assert r.fate_of("convert_element_type.11").fate != "fused" or \
        "round trip" not in r.fate_of("convert_element_type.11").reason
