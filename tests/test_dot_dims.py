"""Twin dots told apart by the dimensions they contract (issue 9, classes 3 and 6).

Attention's backward pass on 8 H100s computes dQ and dK from one value with one op_name and
line; fusion copies the scaling multiply they read into both gemm kernels, so the paired
neighbours tie and the first candidate used to win, swapped. Which dimension of the shared
operand each dot sums over tells them apart.

Fixture: fixtures/gpu8_dots (written by fixtures/generate_gpu8_dots.py; XLA's own modules).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.diff.dot_dims import _labels, contraction_labels
from hlodiff.diff.view import after_view, before_view

D = Path(__file__).resolve().parent.parent / "fixtures" / "gpu8_dots" / "transformer_layer"


def _modules():
    before = hlodiff.load(next(D.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(D.glob("*gpu_after_optimizations.txt")))
    return before, after


def test_labels_leave_out_batch_and_unit_dimensions():
    dims4 = type("S", (), {"dims": (2, 4, 16, 16), "is_tuple": False})()
    dims3 = type("S", (), {"dims": (2, 1, 16, 16), "is_tuple": False})()
    assert _labels(dims4, {0, 1}, {2}) == "cf"
    assert _labels(dims4, {0, 1}, {3}) == "fc"
    assert _labels(dims3, {0}, {2}) == "cf"  # the unit (sharded-away) dimension is skipped
    assert _labels(dims4, {0}, {9}) is None  # a dimension the shape does not have


def test_the_contracted_dimension_of_the_shared_operand():
    before, after = _modules()
    B, A = before_view(before), after_view(after)
    by_b = {n.name: n for n in B.nodes}
    by_a = {n.name: n for n in A.nodes}
    assert contraction_labels(B, by_b["dot_general.37"])[0] == "cf"  # div.37's dim 2 (q)
    assert contraction_labels(B, by_b["dot_general.38"])[0] == "fc"  # dim 3 (k)
    # in the kernels, the per-device f32[2,16,16] (head dimension sharded away)
    assert contraction_labels(A, by_a["dot.77"])[0] == "cf"  # gemm_fusion_dot.51
    assert contraction_labels(A, by_a["dot.76"])[0] == "fc"  # gemm_fusion_dot.50


def test_twin_backward_dots_name_their_own_kernels():
    before, after = _modules()
    r = diff_modules(before, after)
    # the pass dumps: dot_general.37 (and its transpose) live on in gemm_fusion_dot.51,
    # dot_general.38 in gemm_fusion_dot.50
    for name, kernel in (("dot_general.37", "gemm_fusion_dot.51"),
                         ("transpose.17", "gemm_fusion_dot.51"),
                         ("dot_general.38", "gemm_fusion_dot.50"),
                         ("transpose.18", "gemm_fusion_dot.50")):
        f = r.fate_of(name)
        assert f.fate == "rewritten" and f.fusion == kernel, (name, f.fusion, f.reason)


def test_oracle_a_dot_rebuilt_on_its_own_lives_in_its_own_new_dot():
    # dot_decomposer (dump 0023) rebuilds dot.9 and its user dot.10 in one pass, each as
    # reshape(dot(reshape, reshape)) under its old shape and metadata: dot.9's value is in
    # dot.14, not in its user's dot.15 (the rule for algsimp's transpose(dot) -> dot(b, a))
    from hlodiff.dumps.passes import find_pass_dumps, trace
    d = D.parent / "moe_top1"
    snaps = find_pass_dumps(d, "jit_moe_top1")
    t = trace(snaps, hlodiff.load(snaps[0].path))
    for dot, new in (("dot.9", "dot.14"), ("dot.10", "dot.15")):
        f = t.fates[dot]
        assert (f.fate, f.pass_name) == ("rewritten", "dot_decomposer"), (dot, f)
        assert t.destination(dot) == new, (dot, t.destination(dot))


def test_oracle_shardy_twins_are_renamed_by_their_users():
    # shardy-xla (dump 0017) renames every instruction and renumbers stack frames; the layer
    # norm's two x - mean chains are identical down to the broadcast of the mean. sub.30 is
    # read by the normalizing multiply (mul.55 -> mul.46), sub.34 twice by the variance's
    # square (integer_pow.6 -> integer_pow.0): their trees of users tell them apart
    from hlodiff.dumps.passes import find_pass_dumps, trace
    d = D.parent / "transformer_layer_shardy"
    snaps = find_pass_dumps(d, "jit_transformer_layer")
    t = trace(snaps, hlodiff.load(snaps[0].path))
    got = {n: t.destination(n) for n in ("sub.30", "sub.34", "sub.29", "sub.33")}
    assert got == {"sub.30": "sub.18", "sub.34": "sub.20", "sub.29": "sub.17",
                   "sub.33": "sub.19"}, got
    # the second layer norm, whose copies the partitioner annotated (renamed loosely):
    # sub.42 (read by mul.62 and mul.77) is sub.26, sub.46 (integer_pow.7) is sub.24
    got = {n: t.destination(n) for n in ("sub.41", "sub.42", "sub.45", "sub.46")}
    assert got == {"sub.41": "sub.25", "sub.42": "sub.26", "sub.45": "sub.23",
                   "sub.46": "sub.24"}, got


def test_a_best_only_by_which_copy_was_paired_yields_to_the_fair_score():
    # fresh 7 parallel_attn_mlp_block on 8 H100s: dot_general.38/.39 read one value
    # (mul.56), contracting its dimension 1 and 2; fusion copies mul.56 into both gemm
    # kernels. The pass dumps: dot_general.39 lives on in gemm_fusion_dot.45 (dot.66,
    # contracting the per-device [5,5]'s dimension 1), dot_general.38 in .46
    d = D.parent / "parallel_attn_mlp_block"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    assert r.fate_of("dot_general.39").fusion == "gemm_fusion_dot.45"
    assert r.fate_of("dot_general.38").fusion == "gemm_fusion_dot.46"


def test_a_dot_summing_over_other_dimensions_is_no_partner():
    # fresh 3 vit_patch_step on 8 H100s: dot_general.39 (a weight gradient, f32[16,16],
    # summing batch and sequence) and dot.68 (gemm_fusion_dot.36: the per-device f32[16,16]
    # of the input gradient dot_general.40) share op_name and line. The pass dumps: the dot
    # merger takes dot_general.39 into gemm_fusion_dot.53; dot_general.40 lives in .36
    from hlodiff.diff.dot_dims import contraction_fits
    from hlodiff.diff.match import match
    d = D.parent / "vit_patch_step"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    B, A = before_view(before), after_view(after)
    m = match(B, A)
    by_b = {n.name: n.idx for n in B.nodes}
    by_a = {n.name: n.idx for n in A.nodes}
    assert not contraction_fits(m, by_b["dot_general.39"], by_a["dot.68"])
    assert contraction_fits(m, by_b["dot_general.40"], by_a["dot.68"])
    # no step of the cascade may pair them (a veto in Matching.pair on partitioned GPU)
    assert m.dot_check is not None
    if m.b2a[by_b["dot_general.39"]] < 0 and m.a2b[by_a["dot.68"]] < 0:
        assert not m.pair(by_b["dot_general.39"], by_a["dot.68"], "test")
    assert m.a2b[by_a["dot.68"]] != by_b["dot_general.39"]
    r = diff_modules(before, after)
    assert r.fate_of("dot_general.40").fusion == "gemm_fusion_dot.36"
    f = r.fate_of("dot_general.39")
    assert f.fusion != "gemm_fusion_dot.36"
    assert "dot merger" in f.reason and "gemm_fusion_dot.53" in f.reason, f.reason


def test_a_views_value_is_not_the_bigger_broadcast_that_copies_it_out():
    """8 H100s: the layer norm's mean is reshaped (sub.40 = reshape(broadcast(div.27)),
    f32[2,16]) and broadcast over the features; the gemm kernel gemm_fusion_dot.33 holds a
    new broadcast.110 (f32[32,4] per device) of the same op_name and line. A reshape keeps
    its element count: the rewrite step had made broadcast.110 its partner. The pass dumps
    follow sub.40 into the mean's kernels (loop_multiply_reduce_fusion, loop_reduce_fusion,
    loop_reduce_fusion.1, loop_add_fusion.1)."""
    before, after = _modules()
    r = diff_modules(before, after)
    for name in ("sub.40", "sub.44"):
        f = r.fate_of("main.18", name)
        assert f.fusion in ("loop_multiply_reduce_fusion", "loop_reduce_fusion",
                            "loop_reduce_fusion.1", "loop_add_fusion.1"), \
            (name, f.fate, f.after, f.fusion, f.reason)
