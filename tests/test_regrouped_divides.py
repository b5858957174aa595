"""Adam's ``(m / c1) / (sqrt(v / c2) + eps)`` regrouped by algebraic simplification as
``m / (c1 * (sqrt(...) + eps))`` under JAX 0.4.30 on CPU (issue 9, class 5).

Fixture: fixtures/regrouped_divides (fixtures/generate_regrouped_divides.py: unedited
modules of an Adam step on a three-layer MLP whose weights share one shape). The expected
fates are those of XLA's pass dumps of the same compilation.
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.diff import diff_modules

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "regrouped_divides"


def test_the_outer_divide_lives_on_and_the_inner_one_is_gone():
    """The pass dumps: each inner ``m / c1`` (divide.85, .94, .103) is rewritten at algsimp,
    its numerator m living on in m's kernel; each outer divide (divide.90, .99, .108) lives
    on, fused into its parameter's update kernel. The engine had paired the inner divide
    with the rebuilt one and called the outer one a broadcast of another kernel."""
    r = diff_modules(*load_pair(D))
    for inner, outer, kernel in (("divide.85", "divide.90", "fusion.6"),
                                 ("divide.94", "divide.99", "fusion.3"),
                                 ("divide.103", "divide.108", "fusion")):
        f = r.fate_of("main.112", outer)
        assert (f.fate, f.fusion) == ("fused", kernel), (outer, f.fate, f.fusion, f.reason)
        g = r.fate_of("main.112", inner)
        assert g.fate == "rewritten" and "A / (B * C)" in g.reason, (inner, g.fate, g.reason)
