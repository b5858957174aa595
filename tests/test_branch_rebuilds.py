"""Conditional branches that XLA's conditional simplifier cloned (issue 9, class 4).

Fixture: fixtures/branch_rebuilds/act_ponder_fori_halting (fixtures/generate_branch_rebuilds.py,
unedited CPU modules of benchmarks/zoo_fresh13_programs.py, jax 0.10.2).
"""

from __future__ import annotations

import functools
from pathlib import Path

from hlodiff.diff import diff_modules

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "branch_rebuilds" / "act_ponder_fori_halting"


@functools.lru_cache(maxsize=None)
def _diff():
    return diff_modules(*load_pair(D))


def test_branch_cloned_with_a_narrower_parameter_is_rewritten():
    """simplify-conditional (dump 0015) clones the backward cond's branch region_8.35 as
    region_8.35.clone, dropping parameter elements nobody reads: what reads the parameter
    is rebuilt there on other tuple indices (the dumps: rewritten at simplify-conditional),
    not kept or fused as it stood."""
    r = _diff()
    for name in ("get-tuple-element.199", "mul.28", "reduce_sum.49", "dot_general.18",
                 "add_any.7"):
        f = r.fate_of("region_8.35", name)
        assert f.fate == "rewritten", (name, f.fate)
        assert "region_8.35.clone" in f.reason


def test_branch_clone_that_keeps_its_parameter_is_no_rebuild():
    """The forward cond's branch region_2.7 is cloned too (region_2.7.clone), with the same
    parameter tuple: its instructions are renamed copies, fused or kept as before."""
    r = _diff()
    fates = [f for f in r.instructions if f.computation == "region_2.7"]
    assert fates and not any("conditional simplifier" in (f.reason or "") for f in fates)


OLD = D.parent


def test_branch_handing_back_its_parameter_loses_its_elements():
    """lookahead_radam_step under JAX 0.4.30: Lookahead's skipped sync, region_12.418,
    returns tuple(get-tuple-element(p, 0..7)) of its parameter. The tuple simplifier
    (dump 0010) returns p itself: the get-tuple-elements are removed, and the tuple is
    rewritten into p."""
    r = diff_modules(*load_pair(OLD / "old_lookahead_radam_step"))
    for k in range(420, 428):
        f = r.fate_of("region_12.418", f"get-tuple-element.{k}")
        assert f.fate == "removed", (k, f.fate, f.reason)
    assert r.fate_of("region_12.418", "tuple.428").fate == "rewritten"


def test_divisor_beside_a_copy_of_its_operand_is_no_reciprocal():
    """qlora_int8_frozen_base under JAX 0.4.30: Adam's ``m / broadcast(1 - b1**t)``
    (broadcast.359). algsimp rewrites the divide as (A / B) / C -> A / (B * C) (dump
    0007); the broadcast lives on and is fused (dump 0025). Its partner reads a fusion's
    copy of the subtract under it (the subtract's partner is another kernel's copy): no
    new value, so no reciprocal built from scratch."""
    r = diff_modules(*load_pair(OLD / "old_qlora_int8_frozen_base"))
    f = r.fate_of("broadcast.359")
    assert f.fate == "fused", (f.fate, f.reason)
