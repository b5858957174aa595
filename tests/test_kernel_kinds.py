"""Every kernel of a real optimized module gets a named kind, library calls included."""

from __future__ import annotations

from pathlib import Path

import pytest

from hlodiff import load
from hlodiff.analysis.kernels import analyze_kernels

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

_PLAIN = ("custom", "custom fusion", "fusion", "custom call")


def _after(d: Path) -> Path:
    return next(p for p in d.glob("*after_optimizations.txt"))


def test_lapack_calls_are_named_by_routine():
    rep = analyze_kernels(load(str(_after(FIXTURES / "cpu" / "linalg_solve"))))
    kinds = {k.kind for k in rep.kernels}
    assert {"LAPACK symmetric eigendecomposition", "LAPACK Cholesky factorization",
            "LAPACK triangular solve"} <= kinds, kinds
    assert not kinds & set(_PLAIN)


@pytest.mark.parametrize("d", sorted((FIXTURES / "memory" / "gpu").iterdir()),
                         ids=lambda p: p.name)
def test_every_kernel_of_gpu_memory_fixtures_is_named(d):
    if not d.is_dir():
        pytest.skip("not a program")
    rep = analyze_kernels(load(str(_after(d))))
    assert rep.kernels
    for k in rep.kernels:
        assert k.kind.lower() not in _PLAIN, k


def test_dynamic_slice_custom_fusion_is_a_dynamic_slice_fusion():
    rep = analyze_kernels(load(str(_after(FIXTURES / "memory" / "gpu" / "scan_rnn"))))
    kinds = {k.kind for k in rep.kernels}
    assert "dynamic-slice fusion" in kinds
