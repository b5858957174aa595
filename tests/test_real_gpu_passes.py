"""The pass walk on a real H100 dump written by jax 0.11.2's XLA (fixtures/gpu_real_passes,
fixtures/select_real_gpu_passes.py): what its printer and passes do that older ones did not
(hlodiff/dumps/passorphans.py)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

import hlodiff
from hlodiff.cli import main as cli
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

D = Path(__file__).resolve().parent.parent / "fixtures" / "gpu_real_passes" / "mlp_step"


def _trace():
    snaps = find_pass_dumps(D, "jit_mlp_step")
    return trace(snaps, hlodiff.load(find_before_file(snaps)))


def test_view_whose_users_were_forwarded_is_rewritten_not_dead():
    # dump 0009: add.14 = broadcast(params_0__1_.1), add.13 = reshape(broadcast_in_dim.13)
    # moved to the end without users; dump 0014 (DCE) deletes it
    t = _trace()
    f = t.fates["add.13"]
    assert (f.fate, f.pass_name) == ("rewritten", "dynamic-dimension-simplifier")
    assert f.into == "params_0__1_.1"
    assert t.fates["add.12"].fate == "rewritten"


def test_implicit_get_tuple_element_follows_the_inlined_call():
    # dump 0003: multiply(..., %jvp_jit_log_softmax__.4#0) -> multiply(..., %tuple.0#0)
    t = _trace()
    for k in range(3):
        f = t.fates[f"jvp_jit_log_softmax__.4#{k}"]
        assert f.fate == "rewritten" and f.pass_name == "algsimp", (k, f.fate, f.pass_name)
        assert any("renamed to tuple.0#" in ev for _, _, ev in f.history)
    assert t.fates["jvp_jit_log_softmax__.4"].fate == "inlined"


def test_passes_command_tells_the_forwarded_view():
    r = CliRunner().invoke(cli, ["passes", str(D), "--module", "jit_mlp_step",
                                 "--instruction", "add.13"])
    assert r.exit_code == 0, r.output
    assert "rewritten by dynamic-dimension-simplifier" in r.output
    assert "params_0__1_.1" in r.output


def test_fusion_merged_into_a_multi_output_fusion_names_it():
    # diffusion_block (deviceless H100, fixtures/select_pass_pairs.py) dump 0059:
    # multi_output_fusion removes fusion.28; fusion.5 returns a tuple and fusion.46 reads
    # get-tuple-element.21 (element 1 of fusion.5)
    d = D.parent.parent / "gpu_pass_pairs" / "diffusion_block"
    snaps = find_pass_dumps(d, "jit_diffusion_block")
    t = trace(snaps, hlodiff.load(snaps[0].path))
    f = t.fates["fusion.28"]
    assert (f.fate, f.pass_name) == ("fused", "multi_output_fusion")
    assert f.fusion == "fusion.5"
    assert t.destinations("fusion.28") == ["fusion.5"]


def test_implicit_tuple_element_destination_names_its_instruction_too():
    from hlodiff.dumps.passorphans import implicit_tuple_sources
    assert implicit_tuple_sources(["cudnn-conv-bias-activation.10#0", "fusion.3"]) == \
        ["cudnn-conv-bias-activation.10#0", "cudnn-conv-bias-activation.10", "fusion.3"]
    assert implicit_tuple_sources(["get-tuple-element.15.0"]) == ["get-tuple-element.15.0"]


def test_producer_copied_flattened_into_a_gemm_kernel_is_fused():
    # moe_top1 (deviceless H100, fixtures/select_pass_pairs.py): dump 0042 has
    # sub.12 = f32[1,32,16] subtract(...); the Triton gemm rewriter (dump 0043) takes it
    # into gemm_fusion_dot.8 (an f32[32,16] kernel): fused, not "rebuilt on reshaped operands"
    from hlodiff.diff import diff_modules
    d = D.parent.parent / "gpu_pass_pairs" / "moe_top1"
    snaps = [s for s in find_pass_dumps(d, "jit_moe_top1")]
    t = trace(snaps, hlodiff.load(snaps[0].path))
    assert (t.fates["sub.12"].fate, t.fates["sub.12"].pass_name) == \
        ("fused", "triton-gemm-rewriter")
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    f = diff_modules(before, after).fate_of("sub.12")
    assert (f.fate, f.fusion, f.fusion_kind) == ("fused", "gemm_fusion_dot.8", "kCustom")


def test_constants_of_a_division_chain_are_folded():
    # bf16_loss_scaling (deviceless H100, fixtures/select_pass_pairs.py): algsimp makes
    # x / 1024 a multiplication by 1/1024 and regroups (x * (1/1024)) * 0.01; constant
    # folding (dump 0009) then evaluates the constant part: constant.14 (0.01) and
    # constant.21 (1024, in (s / 128) * 1024) are folded, not fused or merged
    from hlodiff.diff import diff_modules
    d = D.parent.parent / "gpu_pass_pairs" / "bf16_loss_scaling"
    snaps = find_pass_dumps(d, "jit_bf16_loss_scaling")
    t = trace(snaps, hlodiff.load(snaps[0].path))
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    for name in ("constant.13", "constant.14", "constant.21"):
        assert (t.fates[name].fate, t.fates[name].pass_name) == ("folded", "constant_folding")
        assert r.fate_of(name).fate == "folded", (name, r.fate_of(name).fate)


def test_sanitized_constant_is_kept_and_rebuilt_while_is_named():
    # kv_decode_loop (deviceless H100): rename-instructions (dump 0044) makes constant.19
    # constant.19.0, sanitize-constant-names (dump 0068) constant_19_0: kept. The while-loop
    # simplifier (dump 0015) drops an element of while.8's state; the loop lives on as
    # while.1 (the after module's only while)
    from hlodiff.diff import diff_modules
    d = D.parent.parent / "gpu_pass_pairs" / "kv_decode_loop"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    c = r.fate_of("constant.19")
    assert (c.fate, c.after) == ("kept", "constant_19_0")
    w = r.fate_of("while.8")
    assert (w.fate, w.after) == ("rewritten", "while.1")
    assert "while-loop simplifier" in w.reason


def test_divisor_constant_and_inlined_constant_on_gpu():
    # diffusion_block (deviceless H100, jax 0.10.2). _var.6's constant.19 is only a divisor:
    # algsimp (dump 0007) makes x / c a multiplication by a new reciprocal, so it is
    # rewritten there, not folded with a look-alike. _where_3.14's constant.28 is copied by
    # the call inliner and merged by the first CSE (dump 0010), although the select reading
    # it is rebuilt on the inlined call's inputs.
    from hlodiff.diff import diff_modules
    d = D.parent.parent / "gpu_pass_pairs" / "diffusion_block"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    assert r.fate_of("_var.6", "constant.19").fate == "rewritten"
    assert r.fate_of("_where_3.14", "constant.28").fate == "merged"


def test_cse_survivor_of_constants_is_the_one_whose_name_lives_on():
    # moe_capacity (deviceless H100): CSE (dump 0014) merges constant.31 into constant.32
    # (both f32[] 1); priority fusion's copies are constant.32.N, sanitized constant_32_N.
    # The oldest name (constant.31) is not the survivor here.
    from hlodiff.diff import diff_modules
    d = D.parent.parent / "gpu_pass_pairs" / "moe_capacity"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    c31, c32 = r.fate_of("constant.31"), r.fate_of("constant.32")
    assert (c31.fate, c31.into) == ("merged", "constant.32")
    assert c32.fate == "fused" and c32.fusion == "input_add_reduce_fusion"
