"""Transposes that move no byte, and a transposed dot that comes back in its own order, on 8
H100s (issue 9).

Fixture: fixtures/muon_layouts (fixtures/generate_muon_layouts.py: unedited modules of a
Muon training step on 8 deviceless H100s, jax 0.10.2). The expected fates are those of
XLA's pass dumps of the same compilation.
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.diff import diff_modules

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "muon_layouts"


def _fates():
    r = diff_modules(*load_pair(D))
    return lambda name: r.fate_of("main.5", name)


def test_transpose_of_a_dot_swapped_back():
    """transpose.9 = f32[512,128]{0,1} of dot_general.25 = f32[128,512]{1,0}: algsimp
    rebuilt the pair as dot(b, a) (pass dumps: both rewritten into dot.1 at algsimp), and
    gemm-fusion-swap-operands swapped it back: gemm_fusion_dot.15's dot.77 =
    f32[128,512]{0,1}, in the dot's own order, returned through a bitcast as f32[512,128].
    The engine had taken it for the dot itself, unrebuilt, and named neither."""
    fate = _fates()
    for name in ("transpose.9", "dot_general.25"):
        f = fate(name)
        assert (f.fate, f.fusion) == ("rewritten", "gemm_fusion_dot.15"), (name, f.fate,
                                                                          f.fusion, f.reason)


def test_transpose_that_moves_no_byte_lives_in_its_operand():
    """transpose.11 = f32[512,128]{0,1} of div.5 = f32[128,512]{1,0}, read by the dot
    x @ x^T: under these layouts it relabels dimensions only. The pass dumps: transpose
    folding and layout normalization leave its value in the divide's kernel
    (input_transpose_fusion.1), not in the dot that reads it."""
    f = _fates()("transpose.11")
    assert f.fate == "rewritten" and f.fusion in (
        "input_transpose_fusion.1", "input_transpose_fusion"), (f.fate, f.fusion, f.reason)
