"""Fates on fresh 15 programs (issue 9): layer twins told apart by their source line,
jax.checkpoint barriers left as a tuple, computations the GPU deduplicator replaced,
instructions a pass re-created, and shapes that cannot be one device's piece.

Fixtures: fixtures/fresh15/* (fixtures/generate_fresh15.py: unedited modules of
benchmarks/zoo_fresh15_programs.py, jax 0.10.2).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_pass_dumps, trace

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "fresh15"


@lru_cache(maxsize=None)
def _diff(name: str):
    return diff_modules(*load_pair(D / name))


def test_source_line_tells_layer_twins_apart():
    """8 H100s: each block's 3x3 and 1x1 branches normalize tensors of one shape with one
    op_name; the batch statistics go through combined reduce-scatters. The stack frames
    differ (block:198 vs block:199), and the partitioned module keeps them: rsqrt.10 (the
    3x3 branch) is in loop_rsqrt_fusion (frame of line 198), rsqrt.11 (1x1) in
    loop_rsqrt_fusion.1; the engine had crossed them."""
    r = _diff("gpu8_repvgg_multibranch_bn_block")
    assert r.fate_of("main.123", "rsqrt.10").fusion == "loop_rsqrt_fusion"
    assert r.fate_of("main.123", "rsqrt.11").fusion == "loop_rsqrt_fusion.1"
    assert r.fate_of("main.123", "add.174").fusion == "loop_rsqrt_fusion"


def test_barrier_elements_kept_where_the_tuple_stays():
    """8 H100s: the GPU pipeline expands the barrier after the last tuple simplification,
    so its operand tuple and the get-tuple-elements reading it stay in the optimized
    module: the barrier's elements are kept, not "simplified away"."""
    r = _diff("gpu8_remat_hourglass_shortened_transformer")
    f = r.fate_of("main.166", "remat2.94")
    assert (f.fate, f.after) == ("kept", "get-tuple-element.66"), (f.fate, f.after, f.reason)
    assert r.fate_of("main.166", "remat2.78").after == "get-tuple-element.10.0"


def test_deduplicated_loop_body_is_removed():
    """One H100: the two layers' backward scans compile to identical bodies; the
    computation deduplicator makes while.111 call region_49.68 and deletes region_93.113
    (the optimized loop runs region_49.68.clone). Its instructions were removed, not
    rebuilt by the loop passes."""
    r = _diff("gpu_rwkv_time_mix_wkv_scan")
    for name in ("get-tuple-element.291", "add.111"):
        f = r.fate_of("region_93.113", name)
        assert f.fate == "removed" and "region_49.68" in f.reason, (name, f.fate, f.reason)
    f = r.fate_of("region_49.68", "add.109")  # the body kept: its counter add is fused
    assert (f.fate, f.fusion) == ("fused", "loop_add_fusion.3"), (f.fate, f.reason)


def test_pass_made_copy_in_a_gemm_kernel_is_rewritten():
    """One H100: layout normalization re-creates mul.839 (f32[8,16,32] with layout
    {2,0,1}) as multiply.121 on its physical shape f32[16,8,32]; the gemm fusion's copy is
    multiply.121.11, a copy of the new instruction: rewritten, not the kernel's copy of
    mul.839."""
    r = _diff("gpu_rwkv_time_mix_wkv_scan")
    f = r.fate_of("main.188", "mul.839")
    assert f.fate == "rewritten" and f.after.startswith("multiply.121."), (f.fate, f.after)


def test_per_device_piece_bounded_by_the_device_count():
    """8 H100s: Adam's b1 * m for the f32[64,32] weight (f32[8,32] per device) lives in
    loop_add_subtract_fusion.12; the f32[8,32] position table's (f32[1,32] per device) in
    loop_add_subtract_fusion.14. f32[1,32] is no piece of f32[64,32] on 8 devices, and the
    table's broadcast of 0.9 having the weight's per-device shape is no evidence."""
    r = _diff("gpu8_stmoe_top2_capacity_zloss")
    assert r.fate_of("main.151", "mul.798").fusion == "loop_add_subtract_fusion.12"
    assert r.fate_of("main.151", "mul.816").fusion == "loop_add_subtract_fusion.14"
    assert r.fate_of("main.151", "mul.511").fusion == "loop_add_subtract_fusion.14"


def test_oracle_round_trip_keeps_shapes():
    """Dump 0004 -> 0005 (the Shardy round trip, 8 CPU devices): every name changes, but
    no shape does. select_n.136 (pred[32,64], the all-finite flag broadcast for one
    parameter) is merged into the identical select_n.241; it was taken as renamed to
    select_n.251, the pred[32,5] broadcast for another (a shape only the partitioner could
    give it, and only as one device's piece)."""
    t = trace(find_pass_dumps(D / "round_trip_shapes", "jit_fp16_dynamic_scale_skip_nonfinite"))
    f = t.fates["select_n.136"]
    assert f.fate == "merged" and f.into == "select_n.241", (f.fate, f.into, f.history)


def test_oracle_pass_through_branch_elements_are_removed():
    """Dump 0012 -> 0013 (loop invariant code motion, which runs the tuple simplifier after
    hoisting): the scan's conditional branch region_19.28 returned tuple(get-tuple-element(p,
    0..12)) of its parameter and now returns p. Replacing the tuple deletes its operands:
    the get-tuple-elements are removed, as when the tuple simplifier runs on its own; only
    the tuple is rewritten (into the parameter)."""
    t = trace(find_pass_dumps(D / "pass_through_branch", "jit_multisteps_scan_cond_apply_update"))
    for k in (63, 70, 75):
        f = t.fates[f"get-tuple-element.{k}"]
        assert f.fate == "removed", (k, f.fate, f.history)
    f = t.fates["tuple.5"]
    assert (f.fate, f.into) == ("rewritten", "arg_tuple.2"), (f.fate, f.into)


def test_pass_through_branch_elements_removed_when_partitioned_and_bf16():
    """8 CPU devices, a bf16 program: the loss-scale cond's skip branch region_12.19 returns
    tuple(get-tuple-element(p, 0..5)) of its parameter; the Shardy round trip imports it
    returning p. Its get-tuple-elements are removed (as with the tuple simplifier), not
    "simplified away" into the parameter."""
    r = _diff("cpu8_bf16_conv_dynamic_loss_scale")
    for k in (6, 7, 11):
        f = r.fate_of("region_12.19", f"get-tuple-element.{k}")
        assert f.fate == "removed", (k, f.fate, f.reason)
