"""XLA:GPU single-device fates that only the GPU pipeline's own habits explain (issue 9).

Fixtures: fixtures/gpu_cse/{film_conditioned_conv,quasi_rnn_fo_pool,infonce_temperature,
mlp_deep} (fixtures/generate_gpu_cse.py): unedited modules before and after optimization of
programs compiled for one deviceless H100 (jax 0.10.2).
"""

from __future__ import annotations

import functools
from pathlib import Path

from .conftest import load_pair
from hlodiff.diff import diff_modules

FIX = Path(__file__).resolve().parent.parent / "fixtures"


@functools.lru_cache(maxsize=None)
def _diff(d: str):
    return diff_modules(*load_pair(FIX / d))


def test_fused_copy_named_after_the_instruction_holds_its_value():
    """quasi_rnn_fo_pool: rename-instructions makes transpose.13 ``transpose.13.0``;
    priority fusion clones it into a kernel as ``transpose.13.1`` (layout normalization
    gave it another layout and op_name). The pass dumps: fused, not rewritten."""
    r = _diff("gpu_cse/quasi_rnn_fo_pool")
    for name in ("transpose.11", "transpose.12", "transpose.13"):
        f = r.fate_of(name)
        assert f.fate == "fused", (name, f.reason)
        assert f.after == name + ".1", (name, f.after)


def test_survivor_paired_with_a_copy_beside_a_copy_of_its_reader_is_no_lookalike():
    """film_conditioned_conv: relu's ``max.2 = broadcast(0)`` is kept by CSE (dump 0010
    merges main's broadcast.1 into it) and fused. Its partner, a copy in the forward
    reduce kernel, is read by a copy of relu's max.3 (whose own partner is the backward
    kernel's copy): the same value, not a look-alike."""
    r = _diff("gpu_cse/film_conditioned_conv")
    assert r.fate_of("max.2").fate == "fused"
    f = r.fate_of("broadcast.1")
    assert (f.fate, f.into) == ("merged", "max.2")


def test_reshape_of_a_wrapped_iota_is_rewritten_copy_by_copy():
    """infonce_temperature: ``select(iota < 0, iota + 16, iota)`` is an iota to algsimp, and
    the reshape over it becomes an iota too, in every copy, at the first algsimp (dump
    0010), before CSE: broadcast_in_dim.14/15/17 are rewritten, not merged into .16."""
    r = _diff("gpu_cse/infonce_temperature")
    for name in ("broadcast_in_dim.14", "broadcast_in_dim.15", "broadcast_in_dim.17"):
        assert r.fate_of(name).fate == "rewritten", name


def test_literal_of_max_with_minus_inf_goes_with_the_identity():
    """mlp_deep on one H100: log_softmax's ``max.7 = maximum(reduce_max.7, max.6)``, max.6 a
    broadcast of ``constant.14 = -inf``. The first algsimp (dump 0008) replaces max.7 by
    reduce_max.7 and deletes max.6 and constant.14 with it, before CSE: constant.14 is not
    merged into the reduce's -inf (constant.16), which lives on in the softmax kernel."""
    r = _diff("gpu_cse/mlp_deep")
    for name in ("constant.14", "max.6", "max.7"):
        assert r.fate_of(name).fate == "rewritten", name
    assert "max.7" in r.fate_of("constant.14").reason
    assert r.fate_of("constant.16").fate == "fused"
