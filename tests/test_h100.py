"""Single-H100 fates (h100 helper, issue 9): fixtures/h100, copied unedited by
fixtures/generate_h100.py from deviceless jax 0.10.2 dumps."""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.diff.view import after_view

D = Path(__file__).resolve().parent.parent / "fixtures" / "h100"


def _modules(prog: str):
    d = D / prog
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    return before, after


def test_identical_instructions_in_a_diamond_share_a_fingerprint():
    # remat_nothing: the forward dot (dot_general.2 in gemm_fusion_dot_general.13) and its
    # jax.checkpoint recomputation (dot_general.3 in gemm_fusion_dot_general.14, reading
    # through the tuple the barrier left) read the same tanh.1 and parameter 2. The post
    # order walk used to let dot_general.2 go before tanh.1 had its fingerprint.
    _, after = _modules("remat_nothing")
    v = after_view(after)
    live = {n.name: n for n in v.nodes if n.alias < 0}
    a, b = live["dot_general.2"], live["dot_general.3"]
    assert [v.nodes[o].name for o in a.operands] == [v.nodes[o].name for o in b.operands]
    assert a.fp == b.fp


def test_recomputed_twin_stays_in_the_backward_kernel():
    # The barrier is removed only after scheduling (cse_barrier_expander, dump 0061): the
    # forward dot and its recomputation are two gemm kernels; each before dot names its own.
    before, after = _modules("remat_nothing")
    r = diff_modules(before, after)
    f13, f14 = r.fate_of("main.2", "dot_general.13"), r.fate_of("main.2", "dot_general.14")
    assert (f13.fate, f13.fusion) == ("fused", "gemm_fusion_dot_general.13")
    assert (f14.fate, f14.fusion) == ("fused", "gemm_fusion_dot_general.14")
    for fwd in ("sin.8", "mul.21", "tanh.8"):
        g = r.fate_of("main.2", fwd)
        assert (g.fate, g.fusion) == ("fused", "gemm_fusion_dot_general.13"), fwd


def test_fusion_copied_whole_into_two_consumers():
    # hmm_forward_scan dump 0048 -> 0049 (priority-fusion): triton_softmax.3 (the Triton
    # softmax rewriter's max/subtract kernel) is read by exp.6.0 and sub.51.0; priority
    # fusion copies its body into both consumers' kernels, fusion.38 (forward log-softmax)
    # and fusion.52 (backward). Its values live in both.
    from hlodiff.dumps.passes import find_pass_dumps, trace
    d = D / "hmm_forward_scan"
    snaps = find_pass_dumps(d, "jit_hmm_forward_scan")
    t = trace(snaps, hlodiff.load(snaps[0].path))
    assert sorted(t.destinations("triton_softmax.3")) == ["fusion.38", "fusion.52"]
    assert sorted(t.destinations("exp.6.0")) == ["fusion.38", "fusion.52"]


def test_fused_copies_carry_the_constant_name():
    # expert_choice_moe: CSE (dump 0019) merges constant.18/.26/.27/.34 into constant.19;
    # algsimp (dump 0016) had rebuilt its reader broadcast_in_dim.10, so no paired reader
    # leads to it. Priority fusion (dump 0069) copies it into kernels as constant.19.N,
    # sanitized constant_19_N: it is fused there, not "simplified away".
    before, after = _modules("expert_choice_moe")
    r = diff_modules(before, after)
    f = r.fate_of("main.12", "constant.19")
    assert f.fate == "fused" and f.after.startswith("constant_19_"), (f.fate, f.after)
    for n in ("constant.26", "constant.27", "constant.34"):
        g = r.fate_of("main.12", n)
        assert (g.fate, g.into) == ("merged", "constant.19"), (n, g.fate, g.reason)


def test_split_k_dot_lives_in_the_reduce_of_its_partial_products():
    # real H100 mlp_step (jax 0.11.2): autotuning chose split-K (splitk-rewriter, dump
    # 0031). gemm_fusion_dot.3 = f32[8,128,128] holds 8 partial products of dot_general.8;
    # a reduce over dimension 0 (fused into loop_reduce_fusion and loop_select_fusion)
    # sums them. dot_general.14 and .15 share an op_name: each names its own reduce; .15
    # and its transpose (algsimp: transpose(dot) -> dot) live in loop_subtract_fusion.1.
    before, after = _modules("mlp_step")
    r = diff_modules(before, after)
    f8 = r.fate_of("main.17", "dot_general.8")
    assert f8.fate == "rewritten" and f8.fusion in ("loop_reduce_fusion", "loop_select_fusion")
    assert "gemm_fusion_dot.3 computes 8 partial products" in f8.reason
    assert r.fate_of("main.17", "dot_general.14").fusion == "loop_select_fusion"
    for n in ("dot_general.15", "transpose.5"):
        assert r.fate_of("main.17", n).fusion == "loop_subtract_fusion.1", n
    assert r.fate_of("main.17", "dot_general.13").fusion == "loop_subtract_fusion"


def test_metadata_pair_refused_for_a_dot_reading_another_weight():
    # real H100 transformer_block (jax 0.11.2): dot_decomposer (dump 0008) flattens the
    # input-gradient dot_general.43 = f32[2,16,32] dot(transpose.10, params__wv__.1) into
    # dot.43 = f32[32,32] (gemm_fusion_dot.16), reading the weight. Its twin weight-gradient
    # dot_general.42 = f32[32,32] dot(transpose.10, mul.66) (same op_name and line) never
    # reads the weight: the dot merger put it into gemm_fusion_dot.26, sliced out in
    # loop_subtract_fusion. Metadata alone paired dot_general.42 with dot.43.
    before, after = _modules("transformer_block")
    r = diff_modules(before, after)
    assert r.fate_of("main.32", "dot_general.43").fusion == "gemm_fusion_dot.16"
    assert r.fate_of("main.32", "dot_general.45").fusion == "gemm_fusion_dot.17"
    assert r.fate_of("main.32", "dot_general.42").fusion != "gemm_fusion_dot.16"
    assert r.fate_of("main.32", "dot_general.44").fusion in ("loop_subtract_fusion.2",
                                                             "gemm_fusion_dot.26")


def test_structural_pairs_refused_for_a_dot_reading_another_weight():
    # the same for pairs made through users and operands: dot_general.37 (input gradient,
    # flattened by dot_decomposer, reads params__wo__) is dot.41 in gemm_fusion_dot.15; its
    # twin weight gradient dot_general.36 (and its transpose, rebuilt as one dot by
    # algsimp) lives in gemm_fusion_dot.22.
    before, after = _modules("transformer_block")
    r = diff_modules(before, after)
    assert r.fate_of("main.32", "dot_general.37").fusion == "gemm_fusion_dot.15"
    for n in ("dot_general.36", "transpose.9"):
        assert r.fate_of("main.32", n).fusion == "gemm_fusion_dot.22", n
