"""Identical reshapes that the partitioner's spmd-simplify pipeline removes before any CSE
(gpu8b helper, hlodiff/diff/spmd_reshapes.py). Fixture: fixtures/gpu_pass_pairs/
gpt_rope_adamw (8 deviceless H100s, copied by fixtures/select_pass_pairs.py)."""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.diff.spmd_reshapes import removed_early
from hlodiff.diff.view import before_view

D = Path(__file__).resolve().parent.parent / "fixtures" / "gpu_pass_pairs" / "gpt_rope_adamw"


def _modules():
    before = hlodiff.load(next(D.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(D.glob("*gpu_after_optimizations.txt")))
    return before, after


def test_reshapes_spmd_simplify_removes_are_rewritten_not_merged():
    # Oracle (pass dumps of this module): spmd-simplify's algsimp, dump 0008, removes
    # sub.89 and its twin sub.93 (reshape(identity broadcast(div.85)); the reshape mover
    # sank div.85's reshape below it in dump 0007, and the two reshapes cancel) and
    # broadcast_in_dim.99 with its twin .96 (reshape(cos.6), read only by reshapes back to
    # f32[16,16]). The first CSE (spmd-cleanup, dump 0021) comes after: no copy was merged.
    # mul.572 = reshape(identity broadcast(convert(reshape(iota)))) stays until that CSE
    # merges it into mul.549 (algsimp makes reshape(iota) an iota; nothing sinks).
    before, after = _modules()
    r = diff_modules(before, after)
    for name in ("sub.89", "broadcast_in_dim.99", "broadcast_in_dim.104"):
        f = r.fate_of("main.78", name)
        assert f.fate == "rewritten", (name, f.fate, f.reason)
    f = r.fate_of("main.78", "mul.572")
    assert (f.fate, f.into) == ("merged", "mul.549"), (f.fate, f.reason)


def test_removed_early_follows_the_reshape_mover():
    before, _ = _modules()
    B = before_view(before)
    gone = {B.nodes[i].name for i in removed_early(B)}
    assert {"sub.89", "sub.93", "broadcast_in_dim.96", "broadcast_in_dim.99"} <= gone
    # a reshape of an iota is not moved (algsimp rebuilds it as an iota), and its readers
    # keep theirs
    assert not {"mul.549", "mul.572", "broadcast_in_dim.94"} & gone


def test_transposed_dot_found_through_async_resharding_and_swapped_gemm():
    # zoo mlp_gelu_adam on 8 H100s (fixtures/gpu_pass_pairs/mlp_gelu_adam). Oracle: algsimp
    # (dump 0004) rebuilds transpose.3(dot_general.9) as a dot; the final module computes it
    # in gemm_fusion_dot.5, whose dot.14 = f32[256,8]{0,1} (gemm-fusion-swap-operands) is
    # bitcast to the per-device f32[8,256] of the transpose. It reads the dot's operands
    # through the partitioner's resharding: all-gather-start/-done and an all-to-all
    # async-start/-done pair. Before, the engine named consumers of look-alikes
    # (loop_add_fusion, loop_add_subtract_fusion.1).
    d = D.parent / "mlp_gelu_adam"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    for name in ("dot_general.9", "transpose.3"):
        f = r.fate_of("main.2", name)
        assert (f.fate, f.fusion) == ("rewritten", "gemm_fusion_dot.5"), (name, f.fate,
                                                                         f.fusion, f.reason)


def test_transposed_dot_of_a_squeezed_shard():
    # gpt_rope_adamw on 8 H100s: transpose.24 = f32[8,16,32] transpose(dot_general.78) is
    # rebuilt by algsimp as one dot; partitioned 8 ways on the batch, the final module
    # computes it in gemm_fusion_dot.114 = f32[16,32] (the unit dimension squeezed). No dot
    # of the transpose's own rank reads those values; before, the engine named
    # gemm_fusion_dot.115 and input_concatenate_fusion.2.
    before, after = _modules()
    r = diff_modules(before, after)
    for name in ("dot_general.78", "transpose.24"):
        f = r.fate_of("main.78", name)
        assert (f.fate, f.fusion) == ("rewritten", "gemm_fusion_dot.114"), (name, f.fate,
                                                                           f.fusion, f.reason)


def test_reshape_read_only_by_reshapes_back_lives_where_its_operand_does():
    # gpt_rope_adamw on 8 H100s: broadcast_in_dim.96 = f32[1,16,16] reshape(cos.6) is read
    # only (through an identity broadcast) by reshapes back to f32[16,16]; spmd-simplify's
    # algsimp (dump 0008) removes the pair, and the readers read cos.6, which the final
    # module computes in loop_cosine_fusion (oracle). Before, the engine named the bitcast
    # of a look-alike in input_concatenate_fusion.8.
    before, after = _modules()
    r = diff_modules(before, after)
    for name in ("broadcast_in_dim.96", "broadcast_in_dim.99"):
        f = r.fate_of("main.78", name)
        assert (f.fate, f.fusion) == ("rewritten", "loop_cosine_fusion"), (name, f.fate,
                                                                          f.fusion, f.reason)


def test_literal_of_max_with_minus_infinity_goes_with_it():
    # clip_contrastive on 8 H100s (fixtures/gpu_pass_pairs/clip_contrastive): log_softmax's
    # max.3 = maximum(reduce_max, broadcast(constant.12 = -inf)). Algsimp (spmd-simplify,
    # dump 0006) replaces max(x, -inf) by x: constant.12 is "rewritten" there (oracle),
    # before the Shardy round trip (dump 0017) could merge it with the reduce's identical
    # -inf (constant.14). Before, the engine said "merged into constant.14".
    d = D.parent / "clip_contrastive"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    f = r.fate_of("log_softmax.5", "constant.12")
    assert f.fate == "rewritten", (f.fate, f.reason)
    assert r.fate_of("log_softmax.5", "constant.14").fate == "fused"


def test_broadcast_copy_named_after_an_instruction_without_metadata():
    # zoo mlp_deep on 8 H100s (fixtures/gpu_pass_pairs/mlp_deep): broadcast.7 = broadcast(0)
    # has no metadata. The Shardy round trip (dump 0014) merges relu's identical max.2 into
    # it, and priority fusion (dump 0058) fuses it (oracle); the kernels' copies carry
    # op_name="broadcast.7" (broadcast.35 in gemm_fusion_dot.5, beside relu's maximum).
    # Before, that copy was taken for a look-alike (its readers are relu's, not
    # broadcast.7's own), and broadcast.7 was called "simplified away".
    d = D.parent / "mlp_deep"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    f = r.fate_of("main.18", "broadcast.7")
    assert (f.fate, f.after) == ("fused", "broadcast.35"), (f.fate, f.after, f.reason)
    f = r.fate_of("relu.1", "max.2")
    assert (f.fate, f.into) == ("merged", "broadcast.7"), (f.fate, f.reason)


def test_copy_read_by_the_readers_of_what_was_merged_into_it():
    # zoo vae_step on 8 H100s (fixtures/gpu_pass_pairs/vae_step): the Shardy round trip
    # (dump 0011) merges broadcast.7 (read by gt.1, select_n.1) into relu's identical max.2;
    # priority fusion (dump 0065) fuses max.2 into the kernel of broadcast.7's readers,
    # loop_multiply_fusion (oracle). Before, that copy was taken for a look-alike (max.2's
    # own reader, max.3, does not read it) and max.2 was called "simplified away".
    d = D.parent / "vae_step"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    f = r.fate_of("relu.1", "max.2")
    assert (f.fate, f.fusion) == ("fused", "loop_multiply_fusion"), (f.fate, f.fusion, f.reason)


def test_elementwise_rebuilt_by_the_reshape_mover_is_rewritten():
    # gpt_rope_adamw on 8 H100s: add_any.74 adds two values that reach it through
    # reshapes; spmd-simplify's reshape mover (oracle: reshape-mover, dump 0007) rebuilds
    # the add below them as a new instruction. Before, the engine said "removed" (moved
    # across a reduce/broadcast by algsimp, the original dead).
    before, after = _modules()
    r = diff_modules(before, after)
    f = r.fate_of("main.78", "add_any.74")
    assert f.fate == "rewritten", (f.fate, f.reason)
