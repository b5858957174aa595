"""Single-device CPU fates, fourth round (issue 9; cpu4 helper).

Fixtures: fixtures/cpu4 (XLA's pass dumps of zoo programs, written by
fixtures/generate_cpu4.py).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.diff.accuracy import compare, line_end_fates
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

CPU4 = Path(__file__).resolve().parent.parent / "fixtures" / "cpu4"


def _run(program: str):
    snaps = find_pass_dumps(CPU4 / program)
    bp = find_before_file(snaps)
    before = hlodiff.load(bp)
    after = hlodiff.load(next(bp.parent.glob("*cpu_after_optimizations.txt")))
    return before, trace(snaps, before), diff_modules(before, after)


def test_broadcasts_sunk_below_an_add():
    """linalg_qr_svd, jnp.triu's mask: ``add.3 = add(broadcast(iota.4), broadcast(-1))``.
    Algsimp (dump 0008) computes ``add.4 = add(iota.0, broadcast.2)`` on the narrow shape
    and broadcasts the result; the wide add and its scalar broadcast are left without users
    and deleted by DCE (dump 0009); the iota lives on inside slice_select_fusion."""
    before, oracle, result = _run("cpu/linalg_qr_svd")
    for name, fate in (("add.3", "removed"), ("add.2", "removed"), ("iota.4", "fused")):
        assert oracle.info(name).fate == fate
        assert result.fate_of("qr.1", name).fate == fate, result.fate_of("qr.1", name)
    assert "moved" in result.fate_of("qr.1", "add.3").reason
    assert "below the broadcast" in result.fate_of("qr.1", "add.2").reason
    iota = result.fate_of("qr.1", "iota.4")
    assert iota.fusion == oracle.destination("iota.4") == "slice_select_fusion"
    cmp = compare(before, oracle, result)
    assert not [d for d in cmp.disagreements if d[0] == "qr.1"], cmp.disagreements


def _pair(program: str):
    d = CPU4 / program
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    return diff_modules(before, after)


def test_recomputed_twin_of_a_kept_dot_was_merged_by_cse():
    """JAX 0.4.30 remat_nothing: the recomputed ``dot.37`` is identical to the forward
    ``dot.18`` once the barrier is gone; the dot stays a top-level dot after optimization,
    so only CSE can have taken the twin (pass dumps: ``merged@cse``)."""
    r = _pair("old/remat_nothing")
    f = r.fate_of("main.89", "dot.37")
    assert (f.fate, f.into, f.after) == ("merged", "dot.18", "dot.18"), f
    assert "computed once with dot.18" in f.reason


def test_recomputed_twin_of_a_fused_add_is_fused():
    """jax 0.10.2 remat_dots_no_batch: the barrier expander runs after the last CSE before
    fusion (dumps 0023 cse, 0024 cse_barrier_expander); the recomputed ``add.38`` and its
    forward twin ``add.34`` are fused into identical kernels (dump 0034, ``fused@fusion``)
    that the CSE after fusion merges (dump 0036)."""
    r = _pair("cpu/remat_dots_no_batch")
    f, g = r.fate_of("main.20", "add.38"), r.fate_of("main.20", "add.34")
    assert f.fate == g.fate == "fused", (f, g)
    assert f.fusion == g.fusion and f.fusion_kind == "kLoop"
    assert "computed once with add.34" in f.reason


def test_cse_merges_a_commutative_op_with_its_operands_swapped():
    """jax 0.10.2 remat_dots_no_batch, dumps 0022 -> 0023 (cse): ``mul.265 =
    multiply(%broadcast_in_dim.33, %add.46)`` is merged into ``mul.264 = multiply(%add.46,
    %broadcast_in_dim.33)``: XLA's CSE ignores the operand order of commutative ops."""
    r = _pair("cpu/remat_dots_no_batch")
    for gone, kept in (("mul.265", "mul.264"), ("mul.201", "mul.200"), ("mul.233", "mul.232")):
        f = r.fate_of("main.20", gone)
        assert (f.fate, f.into) == ("merged", kept), f
        assert f.fusion == r.fate_of("main.20", kept).fusion


def test_a_literal_held_once_is_fused_where_fusion_copied_it():
    """jax 0.10.2 remat_dots_no_batch: one ``constant.13 = f32[] constant(3)`` before, read by
    three layers' recomputed ops the matcher cannot tell apart; after, three copies of
    ``constant(3)``, each inside a multiply_add_fusion (pass dumps: fused@fusion, dump
    0034). It is fused, not "simplified away", and so is its broadcast."""
    r = _pair("cpu/remat_dots_no_batch")
    c, b = r.fate_of("main.20", "constant.13"), r.fate_of("main.20", "broadcast.9")
    assert c.fate == b.fate == "fused", (c, b)
    kernels = {c.fusion, *c.also_in}
    assert len(kernels) == 3 and all(k.startswith("multiply_add_fusion") for k in kernels)


def test_narrow_constant_whose_twin_the_matcher_paired_is_folded():
    """mlp_bf16 (jax 0.10.2): ``constant.8`` and ``constant.9`` are both ``bf16[]
    constant(0.01001)``. Float normalization converts each to f32 (dump 0007: ``convert.60 =
    f32[] convert(%constant.8)``) and constant folding folds both (dump 0012); the bf16
    broadcast ``mul.16`` of constant.8 is deleted by DCE (dump 0009). The matcher paired only
    constant.9 with an f32 constant; its CSE twin constant.8 is folded as well, not "fused"."""
    r = _pair("cpu/mlp_bf16")
    for name, fate in (("constant.8", "folded"), ("constant.9", "folded"), ("mul.16", "removed")):
        f = r.fate_of("main.4", name)
        assert f.fate == fate and "float normalization" in f.reason, f


def test_outer_multiply_of_a_regrouped_broadcast_scale_lives_on():
    """int8_per_channel (jax 0.10.2): ``mul.15 = multiply(convert, broadcast(0.05))``,
    ``mul.19 = multiply(mul.15, broadcast(scales))``. Algsimp multiplies the scales first
    (dump 0007): the kernel computes ``mul.0 = multiply(convert, broadcast(multiply.3))``
    with ``multiply.3 = multiply(scales, broadcast(0.05))`` on f32[24]. The pass dumps:
    mul.15 rewritten at algsimp, mul.19 fused (dump 0021) -- not "moved across a broadcast"."""
    r = _pair("cpu/int8_per_channel")
    outer, inner = r.fate_of("main.3", "mul.19"), r.fate_of("main.3", "mul.15")
    assert (outer.fate, outer.after) == ("fused", "mul.0"), outer
    assert inner.fate == "rewritten", inner


def test_transpose_folded_into_a_dot_lives_in_its_operand():
    """mlp_transposed (jax 0.10.2): dump 0009 ``%dot_general.4 = dot(%transpose.4, %a_1_.1),
    lhs_contracting_dims={1}``; transpose-folding (dump 0010) makes it ``dot(%tanh.1,
    %a_1_.1)``. The pass dumps put transpose.4's value where tanh.1 went (wrapped_tanh),
    not in its consumer dot; the reason names the dot it was folded into."""
    r = _pair("cpu/mlp_transposed")
    f = r.fate_of("main.1", "transpose.4")
    assert (f.fate, f.fusion) == ("rewritten", "wrapped_tanh"), f
    assert "folded into dot_general.4" in f.reason and "tanh" in f.reason


def test_operands_left_behind_by_the_old_folder_transitively_are_folded():
    """JAX 0.4.30 fft_conv1d, dump 0008 (constant_folding) folds ``concatenate.0 =
    concatenate(constant.1, broadcast.0, constant.1)``; ``broadcast.0 = broadcast(constant.2)``
    keeps no user and ``constant.2`` is read only by it; DCE deletes both at dump 0011.
    Both went with the fold at 0008 (before instruction constant.38 = constant.2)."""
    before, oracle, result = _run("old/fft_conv1d")
    f = oracle.info("constant.38")
    assert (f.fate, f.pass_name, f.pass_index) == ("folded", "constant_folding", 8), f
    assert oracle.info("broadcast.39").fate == "folded"


def test_a_rewritten_line_whose_folded_constant_was_fused_accepts_folded():
    """JAX 0.4.30 fft_conv1d ``multiply.44``: rewritten by reshape-mover (dump 0007), folded
    by constant_folding (0012) as constant.10, which fusion then copied into a kernel. The
    engine's "evaluated at compile time" is the same history."""
    before, oracle, result = _run("old/fft_conv1d")
    assert [x[:2] for x in oracle.chain("multiply.44")] == [
        ("rewritten", "reshape-mover"), ("folded", "constant_folding"), ("fused", "fusion")]
    assert {"fused", "folded"} <= line_end_fates(oracle, "multiply.44")
    assert result.fate_of("fft_3.34", "multiply.44").fate == "folded"
    cmp = compare(before, oracle, result)
    assert not [d for d in cmp.disagreements if d[0] == "fft_3.34"], cmp.disagreements


def test_wide_broadcast_of_an_iota_under_a_sunk_add_is_removed():
    """JAX 0.4.30 linalg_qr_svd, jnp.triu: ``add.10 = add(broadcast.9, broadcast.7)`` with
    ``broadcast.9 = broadcast(iota.8)``; algsimp computes the add on the narrow iota and
    broadcasts the result (dump 0007); DCE deletes broadcast.9 (dump 0008: removed@dce).
    The matcher had given it the new broadcast of the narrow add ("fused")."""
    r = _pair("old/linalg_qr_svd")
    for name in ("broadcast.9", "add.10"):
        f = r.fate_of("triu.2", name)
        assert f.fate == "removed", f
