"""f16 dots that XLA:CPU computes in f32 and converts back (issue 9).

Fixture: fixtures/narrow_dots (fixtures/generate_narrow_dots.py: unedited modules of an f16
MLP over heads on CPU, jax 0.10.2). The expected places are those of XLA's pass dumps of
the same compilation: change-op-data-type replaces each f16 dot by a convert of an f32 dot,
and fusion fuses the convert into the kernels that read it.
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.diff import diff_modules

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "narrow_dots"


def test_an_f16_dot_lives_where_its_convert_back_is_made():
    """Each dot (and the views of it that algsimp folded away) is named in the kernel that
    converts the f32 product back to f16, not in the f32 dot's own kernel."""
    r = diff_modules(*load_pair(D))
    for name, kernel in (("dot_general.5", "convert_tanh_fusion"),
                         ("reshape.4", "convert_tanh_fusion"),
                         ("transpose.6", "convert_tanh_fusion"),
                         ("dot_general.6", "convert_convert_fusion"),
                         ("dot_general.8", "copy_bitcast_fusion"),
                         ("dot_general.9", "copy_subtract_fusion.1"),
                         ("transpose.11", "copy_subtract_fusion.1"),
                         ("dot_general.7", "copy_subtract_fusion")):
        f = r.fate_of("main.1", name)
        assert (f.fate, f.fusion) == ("rewritten", kernel), (name, f.fusion, f.reason)
    f = r.fate_of("main.1", "dot_general.5")
    assert "computed in f32" in f.reason and "change-op-data-type" in f.reason, f.reason
