"""Identical copies that both live on were not merged by CSE (issue 9, class 5).

XLA:CPU runs CSE only after the simplification fixed point; identical before copies may
differ by then and both survive. When each copy has its own partner, the same computation
but not fusion's copy of one value, neither was merged.

Fixture: fixtures/kept_apart (fixtures/generate_kept_apart.py; fresh 12 on one CPU, XLA's
own modules). Expected fates are those of XLA's pass dumps.
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.diff import diff_modules

from .conftest import load_pair

D = (Path(__file__).resolve().parent.parent / "fixtures" / "kept_apart"
     / "schnet_energy_force_matching")


def test_both_copies_live_on_in_their_own_kernels():
    before, after = load_pair(D)
    r = diff_modules(before, after)
    for name, kernel in (("dot_general.102", "ynn_fusion.52"), ("dot_general.114", "ynn_fusion.47"),
                         ("exp.32", "multiply_exponential_fusion.1"),
                         ("exp.33", "multiply_exponential_fusion")):
        f = r.fate_of(name)
        assert (f.fate, f.fusion) == ("fused", kernel), (name, f.fate, f.fusion, f.reason)
    # a literal copied into kernels is no evidence: identical literals are still merged
    assert r.fate_of("constant.117").fate != "fused"
