"""What XLA:GPU keeps of a jax.checkpoint block (issue 9, classes 2 and 12).

XLA:GPU removes the opt-barrier but keeps the tuple it held and the get-tuple-elements
reading it (renamed ``.0`` by rename-instructions); a name policy's no-op reduce-precision
(to its own type's precision) is removed by algsimp.

Fixture: fixtures/remat_barriers (fixtures/generate_remat_barriers.py; fresh 11 on one
deviceless H100, XLA's own modules). Expected fates are those of XLA's pass dumps.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hlodiff.diff import diff_modules

from .conftest import load_pair

D = (Path(__file__).resolve().parent.parent / "fixtures" / "remat_barriers"
     / "remat_combined_policy_block")


@pytest.fixture(scope="module")
def result():
    before, after = load_pair(D)
    return diff_modules(before, after)


def test_elements_of_a_removed_barrier_are_kept(result):
    for name in ("remat2.40", "remat2.56", "remat2.75"):
        f = result.fate_of(name)
        assert (f.fate, f.after) == ("kept", name + ".0"), (name, f.fate, f.after, f.reason)


def test_the_barrier_is_no_array_sharing_its_op_name(result):
    f = result.fate_of("remat2.39")
    # a tuple lives on as a tuple: the one it held (remat2.38 -> remat2.38.0)
    assert (f.fate, f.after) == ("rewritten", "remat2.38.0"), (f.fate, f.after, f.reason)
    assert "barrier" in f.reason


def test_a_no_op_reduce_precision_is_its_operand(result):
    f = result.fate_of("reduce_precision.13")
    assert (f.fate, f.fusion) == ("rewritten", "gemm_fusion_dot.5"), (f.fate, f.fusion, f.reason)
    assert "identity on dot_general.57" in f.reason


def test_readers_of_barrier_elements_pair_through_the_removed_barrier():
    """zoo remat_nothing on 8 CPU devices (fixtures/sharded_passes/remat_nothing, XLA's own
    modules): the recomputed ``transpose.3`` reads a get-tuple-element of jax.checkpoint's
    barrier. XLA removes the barrier (cse_barrier_expander) and the tuple simplifier hands
    the element's value to the transpose, which algsimp makes ``bitcast.126`` (the pass
    dumps: rewritten at algsimp into bitcast.126). Its partner is found from the partner of
    the value the barrier handed on, not among look-alike transposes of other layers."""
    d = D.parent.parent / "sharded_passes" / "remat_nothing"
    r = diff_modules(*load_pair(d))
    f = r.fate_of("main.2", "transpose.3")
    assert (f.fate, f.after) == ("rewritten", "bitcast.126"), (f.fate, f.after)
