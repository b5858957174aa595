"""Loops of a program sharded over 8 H100s (gpu4): the partitioner's clones and the Shardy
round trip's reordered loop state (fixtures/gpu_pass_pairs/gru_scan, written by
fixtures/select_pass_pairs.py from deviceless jax 0.10.2 dumps; hlodiff/diff/loop_state.py,
hlodiff/dumps/partitioning.py)."""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_pass_dumps, trace

D = Path(__file__).resolve().parent.parent / "fixtures" / "gpu_pass_pairs" / "gru_scan"


def _diff():
    before = hlodiff.load(next(D.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(D.glob("*gpu_after_optimizations.txt")))
    return after, diff_modules(before, after)


def _renamed_to(t, name: str) -> str | None:
    for _, p, ev in t.fates[name].history:
        if p == "shardy-xla" and ev.startswith("renamed to "):
            return ev[len("renamed to "):]
    return None


def test_round_trip_renames_loop_elements_by_where_they_went():
    # dump 0012 -> 0013 (shardy-xla). region_0: get-tuple-element.19 (index 1) was removed
    # by algsimp (dump 0006); the round trip makes a new index-1 get-tuple-element.1. The
    # index-13 get-tuple-element.31 is get-tuple-element.13 (index 13), not that new one.
    # region_3's state is reordered: index 20 (f32[16,16], read by dot_general.14) comes
    # back as index 14 (get-tuple-element.86, read by dot_general.39), index 18 as 20.
    snaps = find_pass_dumps(D, "jit_gru_scan")
    t = trace(snaps, hlodiff.load(snaps[0].path))
    assert _renamed_to(t, "get-tuple-element.31") == "get-tuple-element.13"
    assert _renamed_to(t, "get-tuple-element.34") == "get-tuple-element.16"
    assert _renamed_to(t, "get-tuple-element.113") == "get-tuple-element.86"
    assert _renamed_to(t, "get-tuple-element.111") == "get-tuple-element.92"


def test_loop_cut_per_device_is_not_a_rebuilt_loop():
    # while.37 (body region_3.11) comes back as while.48 calling region_3.4_spmd: the same
    # 21 elements, cut per device and reordered by the round trip. No loop pass rebuilt
    # it: its instructions keep their fates (the counter is fused, the elements kept).
    after, r = _diff()
    assert after.computation("region_3.4_spmd") is not None
    for name in ("get-tuple-element.93", "get-tuple-element.94", "add.15"):
        f = r.fate_of("region_3.11", name)
        assert "while loop rebuilt" not in (f.reason or ""), (name, f.reason)
    assert r.fate_of("region_3.11", "add.15").fate == "fused"
    g = r.fate_of("region_3.11", "get-tuple-element.94")
    assert (g.fate, g.after) == ("kept", "get-tuple-element.335")


def test_elements_of_a_reordered_state_pair_where_they_fit():
    # the loop parameters pair although the state was reordered; the stacked f32[8,8,16]
    # elements that stayed in place keep their index (index 10: get-tuple-element.103 in
    # region_3.11, get-tuple-element.365 in region_3.4_spmd)
    _after, r = _diff()
    p = r.fate_of("region_3.11", "arg_tuple.5")
    assert p.after == "param.2", (p.fate, p.after, p.reason)
    for b, a in (("get-tuple-element.103", "get-tuple-element.365"),
                 ("get-tuple-element.104", "get-tuple-element.366"),
                 ("get-tuple-element.101", "get-tuple-element.363")):
        f = r.fate_of("region_3.11", b)
        assert (f.fate, f.after) == ("kept", a), (b, f.fate, f.after)


def test_producer_copied_into_a_gemm_kernel_per_device_is_fused():
    # attention_rms_swiglu on 8 H100s: triton-gemm-rewriter (dump 0060) copies the RMS
    # norm's mul.141 = f32[8,12,16] into gemm_fusion_dot.63 as mul.346 = f32[12,16], one
    # device's batch row. It is computed in that kernel, not rebuilt on reshaped operands.
    d = D.parent / "attention_rms_swiglu"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    f = r.fate_of("main.19", "mul.141")
    assert (f.fate, f.fusion) == ("fused", "gemm_fusion_dot.63"), (f.fate, f.fusion, f.reason)
    assert "gemm kernel" in f.reason


def test_copies_merged_before_the_main_simplification_of_a_partitioned_gpu_program():
    # vae_step on 8 H100s: the Shardy round trip (dump 0011) keeps one of the identical
    # broadcasts broadcast.7 and relu's max.2; the main algsimp (after the partitioner)
    # rewrites the survivor later. The copy was merged, not "rewritten before CSE".
    d = D.parent / "vae_step"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    f = r.fate_of("main.4", "broadcast.7")
    assert (f.fate, f.into) == ("merged", "max.2"), (f.fate, f.into, f.reason)
    assert f.fusion == "loop_multiply_fusion"
    # twins that the shardings cut differently are not identical per device: the
    # partitioner's cleanup CSE leaves them (transformer_layer on 8 H100s, dump 0021:
    # sub.29's copy is f32[2,16,4], sub.33's f32[2,16,32]); sub.33 has its own partner
    t = D.parent.parent / "sharded_passes" / "transformer_layer_gpu8"
    r = diff_modules(hlodiff.load(next(t.glob("*.before_optimizations.txt"))),
                     hlodiff.load(next(t.glob("*gpu_after_optimizations.txt"))))
    assert r.fate_of("main.18", "sub.33").fate != "merged"


def test_no_op_chains_of_a_partitioned_gpu_program_are_rewritten_one_by_one():
    # transformer_layer on 8 H100s: the spmd-simplify pipeline runs algsimp to its fixed
    # point before the partitioner's cleanup runs the first CSE; dump 0007 (spmd-simplify
    # algsimp) forwards div.34 = reshape(div.33 = identity broadcast) itself. It is not
    # merged with a twin chain (single H100: CSE right after the first algsimp round).
    t = D.parent.parent / "sharded_passes" / "transformer_layer_gpu8"
    r = diff_modules(hlodiff.load(next(t.glob("*.before_optimizations.txt"))),
                     hlodiff.load(next(t.glob("*gpu_after_optimizations.txt"))))
    f = r.fate_of("main.18", "div.34")
    assert f.fate == "rewritten", (f.fate, f.into, f.reason)


def test_bias_add_inside_cudnn_fused_convolution_names_the_call():
    # real H100, jax 0.11.2 (fixtures/select_real_gpu_passes.py --modules): the
    # cudnn-fused-convolution-rewriter makes add.15 = add(conv_general_dilated.8,
    # add.14 = broadcast(bias)) one __cudnn$convBiasActivationForward call reading the bias
    d = D.parent.parent / "gpu_real_passes" / "convnet_step"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    for name in ("add.15", "add.14", "add.19", "add.18"):
        f = r.fate_of("main.19", name)
        assert f.fate == "rewritten" and f.after.startswith("cudnn-conv-bias-activation."), \
            (name, f.fate, f.after, f.reason)
    assert r.fate_of("main.19", "add.15").after == \
        r.fate_of("main.19", "conv_general_dilated.8").after
