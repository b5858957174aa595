"""Twins and kernel clones on 8 H100s (gpu8n helper): the post-order walk behind subgraph
fingerprints, the entry parameters a value is computed from (hlodiff/diff/param_deps.py)
and kernels priority fusion clones into a consumer (hlodiff/dumps/fused_bodies.py).
Fixtures: fixtures/gpu_pass_pairs/{gpt_rope_adamw,mlp_mixer,remat_nothing,transformer_layer},
copied by
fixtures/select_pass_pairs.py from deviceless jax 0.10.2 dumps."""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.diff.view import after_view, before_view, operands_first
from hlodiff.dumps.passes import find_pass_dumps, trace

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
D = ROOT / "gpu_pass_pairs"


def _modules(name: str):
    d = D / name
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    return before, after


def test_operands_first_yields_every_operand_before_its_user():
    # An operand a sibling had pushed (on the stack, not yet expanded) used to let its user
    # go first: in the mlp_mixer module of 8 CPU devices, 33 nodes came before an operand,
    # and their subgraph fingerprints were built from a 0 in its place.
    m = hlodiff.load(next((ROOT / "sharded_passes" / "mlp_mixer").glob("*cpu_after_optimizations.txt")))
    for view in (before_view(m), after_view(m)):
        seen: set[int] = set()
        for i in operands_first(view.nodes):
            assert all(o in seen for o in view.nodes[i].operands), view.nodes[i]
            seen.add(i)
        assert seen


def test_recomputed_checkpoint_twins_by_their_own_subgraphs():
    # zoo remat_nothing on one H100 (oracle: triton-gemm-rewriter, dump 0019, fuses
    # dot_general.13 into gemm_fusion_dot_general.13 and .14 into .14; priority fusion puts
    # the recomputed sin.9 into loop_multiply_subtract_fusion.2). With fingerprints built
    # from unfinished operands, the remat copies were paired crosswise.
    before, after = _modules("remat_nothing")
    r = diff_modules(before, after)
    for name, kernel in (("dot_general.13", "gemm_fusion_dot_general.13"),
                         ("dot_general.14", "gemm_fusion_dot_general.14"),
                         ("sin.9", "loop_multiply_subtract_fusion.2")):
        f = r.fate_of("main.2", name)
        assert (f.fate, f.fusion) == ("fused", kernel), (name, f.fate, f.fusion, f.reason)


def test_gradient_dots_of_two_layers_by_the_parameters_they_read():
    # Layer 1's and layer 2's backward dots share op_name, source line and (partitioned:
    # rank-only) shape; their gradients are computed from every parameter. What they read
    # is not: dot_general.80 reads layer 2's rotated queries (concatenate.13, computed from
    # 16 of the 20 parameters), dot_general.92 layer 1's (concatenate.11, 10). The oracle
    # (algsimp, dump 0028: dot.113 and dot.117, then triton-gemm-rewriter) puts them in
    # gemm_fusion_dot.113 and .117; the tied pairs of each layer's two gradient dots are
    # left to later steps instead of taking the other layer's kernel.
    before, after = _modules("gpt_rope_adamw")
    r = diff_modules(before, after)
    for name, kernel in (("dot_general.80", "gemm_fusion_dot.113"),
                         ("dot_general.92", "gemm_fusion_dot.117")):
        f = r.fate_of("main.78", name)
        assert f.fusion == kernel, (name, f.fate, f.fusion, f.reason)


def test_param_deps_see_through_combined_collectives():
    from hlodiff.diff.param_deps import deps
    _, after = _modules("gpt_rope_adamw")
    v = after_view(after)
    d = deps(v)
    # an element of the combined all-gather depends on its own operand's parameter only
    for n in v.nodes:
        if n.opcode == "get-tuple-element" and n.operands and \
                v.nodes[n.operands[0]].opcode == "all-gather-done":
            assert d[n.idx].bit_count() == 1, n
            break
    else:
        raise AssertionError("no element of a combined all-gather")


def test_a_kernel_cloned_into_a_consumer_holds_its_values_too():
    # dump 0092: integer_pow.32.0 = multiply(triton_softmax.5, triton_softmax.5); priority
    # fusion (0093) fuses it into fusion.186 = fusion(param), whose computation clones the
    # softmax's (reduce.133, div.124, sub.226), and keeps triton_softmax.5 for its other
    # users. Both kernels hold the mean; the variance went into fusion.186 (and a copy of it
    # into fusion.39, which clones the softmax too: integer_pow.32.9).
    snaps = find_pass_dumps(D / "mlp_mixer", "jit_mlp_mixer")
    assert [s.index for s in snaps] == [92, 93]
    text = snaps[1].path.read_text()
    assert "%fusion.186 = f32[1,12]{1,0} fusion(%param)" in text
    assert "%triton_softmax.5 = " in text
    t = trace(snaps, hlodiff.load(snaps[0].path))
    assert "fusion.186" in t.destinations("triton_softmax.5")
    assert sorted(t.destinations("integer_pow.32.0")) == ["fusion.186", "fusion.39"]


def test_a_consumer_fused_with_a_copy_of_its_producers_body_is_found_there():
    # zoo transformer_layer, 1 H100: dump 0069 holds mul.77.0 = multiply(triton_softmax.4,
    # bitcast.143.0); priority fusion (0070) fuses the softmax (x - mean(x)) into each of its
    # consumers and removes it: fusion.71 holds mul.77.9, reading sub.192, its copy of the
    # softmax's body (over param_0.208, the bitcast gemm_fusion_dot.5). Identical copies of
    # the body's first instructions in other removed kernels used to break the chain of
    # per-kernel tokens ("fused", kernel unknown); the body prints of fused_bodies.py follow
    # the copy through them.
    snaps = find_pass_dumps(D / "transformer_layer", "jit_transformer_layer")
    assert [s.index for s in snaps] == [69, 70]
    text = snaps[1].path.read_text()
    assert "%mul.77.9 = f32[2,16,32]{2,1,0} multiply(%sub.192, %bitcast.143.16)" in text
    assert "%triton_softmax.4 = " not in text
    t = trace(snaps, hlodiff.load(snaps[0].path))
    assert t.destinations("mul.77.0") == ["fusion.71"]


def test_convolutions_name_the_element_of_their_cudnn_call_that_holds_them():
    # zoo resnet_block_bn on 8 H100s: conv-rewriter (dump 0052) rewrites the three backward
    # convolutions into get-tuple-element.2/.3/.4 of new cuDNN calls; algsimp rebuilds two
    # of them without metadata (get-tuple-element.28, .30). The after module:
    # get-tuple-element.2.0 = element 0 of cudnn-conv-bw-input.1, .28.0 of
    # cudnn-conv-bw-filter.2, .30.0 of cudnn-conv-bw-filter.3. conv_general_dilated.8 reads
    # the reversed kernel (rev.1): the input gradient. It used to take the weight-gradient
    # call whose paired neighbours scored higher, and the three rotated.
    before, after = _modules("resnet_block_bn")
    text = next((D / "resnet_block_bn").glob("*gpu_after_optimizations.txt")).read_text()
    assert "get-tuple-element(%cudnn-conv-bw-filter.2), index=0" in text
    r = diff_modules(before, after)
    for name, element, call in (("conv_general_dilated.8", "get-tuple-element.2.0",
                                 "cudnn-conv-bw-input.1"),
                                ("conv_general_dilated.9", "get-tuple-element.28.0",
                                 "cudnn-conv-bw-filter.2"),
                                ("conv_general_dilated.7", "get-tuple-element.30.0",
                                 "cudnn-conv-bw-filter.3")):
        f = r.fate_of("main.37", name)
        assert (f.fate, f.after) == ("rewritten", element), (name, f.fate, f.after, f.reason)
        assert call in f.reason
