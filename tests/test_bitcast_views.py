"""A transpose that became a bitcast is where the bytes it views are written (issue 9).

Fixture: fixtures/twin_layers/soft_moe_slots (fixtures/generate_twin_layers.py; XLA's own
modules). ``transpose.11`` of an einsum's dot is a pure reinterpretation once layouts are
assigned: layout normalization makes it ``bitcast.23.23``, which fusion copies into its
reader ``loop_multiply_fusion.4``; XLA's pass dumps follow it to the bytes
``gemm_fusion_dot.17`` writes.
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.diff import diff_modules

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "twin_layers" / "soft_moe_slots"


def test_transpose_become_bitcast_names_the_kernel_writing_its_bytes():
    before, after = load_pair(D)
    r = diff_modules(before, after)
    f = r.fate_of("transpose.11")
    assert f.fate == "rewritten" and f.fusion == "gemm_fusion_dot.17", (f.fusion, f.reason)
    assert "bitcast.23.23 inside loop_multiply_fusion.4" in f.reason
    g = r.fate_of("transpose.15")
    assert g.fusion == "gemm_fusion_dot.33", (g.fusion, g.reason)
