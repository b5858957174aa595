"""Fates of single-H100 programs: what XLA's GPU passes do, read from their pass dumps.

Fixtures: fixtures/gpu_passes (fixtures/generate_gpu_passes.py: zoo programs compiled for
one H100 through deviceless AOT, every changed pass snapshot kept). Each test names the
pass behaviour it pins down; the oracle (``hlodiff.dumps.passes.trace``) and the diff engine
must both tell it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.diff.accuracy import compare
from hlodiff.diff.gpu_cse import cse_in_simplification
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
GPU = ROOT / "gpu_passes"
_CACHE: dict = {}


def _program(name: str):
    if name not in _CACHE:
        d = GPU / name
        snaps = find_pass_dumps(d, f"jit_{name}")
        bf = find_before_file(snaps)
        before = hlodiff.load(bf)
        after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
        _CACHE[name] = (before, trace(snaps, before), diff_modules(before, after))
    return _CACHE[name]


def _engine(name: str, inst: str):
    before, _, result = _program(name)
    for c in before.computations:
        if inst in c.by_name:
            return result.fate_of(c.name, inst)
    raise KeyError(inst)


def test_constant_orphaned_by_priority_fusion_is_fused():
    """Priority fusion copies a constant into the fusions of all its users and leaves the
    top-level original without users; the next DCE deletes it (dumps 0031/0032). Its
    value is computed inside the fusion: fused, not dead code."""
    _, t, _ = _program("fold_identities")
    f = t.info("constant.11")
    assert (f.fate, f.pass_name) == ("fused", "priority-fusion")
    assert t.destination("constant.11") == "input_add_reduce_fusion"
    rec = _engine("fold_identities", "constant.11")
    assert (rec.fate, rec.fusion) == ("fused", "input_add_reduce_fusion")


def test_dead_fusion_bodies_are_not_top_level():
    """Priority fusion leaves the bodies of fusions it merged into bigger ones in the module
    (nothing calls them) until DCE: an iota copied there is not the top-level iota renamed."""
    _, t, _ = _program("fold_identities")
    assert t.info("iota.1").fate == "fused"
    assert _engine("fold_identities", "iota.1").fate == "fused"


def test_broadcast_rebuilt_on_folded_constant_is_rewritten():
    """(x * bcast(3)) * bcast(4): algsimp builds bcast(3 * 4); the old broadcast is
    rewritten, not fused into the kernel that holds the new one."""
    _, t, _ = _program("fold_identities")
    assert t.info("broadcast.6").fate == "rewritten"
    assert _engine("fold_identities", "broadcast.6").fate == "rewritten"


def test_gpu_cse_runs_inside_simplification():
    """GPU: CSE runs right after the first algsimp round, long before reshapes become
    bitcasts and dots gemms; reshape(identity broadcast(x)) copies are merged first."""
    before, t, _ = _program("cse_repeated")
    for name in ("sub.13", "div.13", "broadcast_in_dim.6", "dot_general.5"):
        assert t.info(name).fate == "merged", name
        assert _engine("cse_repeated", name).fate == "merged", name


def test_cse_inside_simplification_only_for_gpu_modules():
    after = hlodiff.load(next((GPU / "cse_repeated").glob("*gpu_after_optimizations.txt")))
    assert cse_in_simplification(after)
    cpu = ROOT / "cpu" / "mlp_step"
    cpu_after = hlodiff.load(next(cpu.glob("*cpu_after_optimizations.txt")))
    assert not cse_in_simplification(cpu_after)


def test_folded_constant_not_matched_to_a_lookalike():
    """0.03125 is folded with 2 into 0.0625; the fused 0.03125 after is 1/32 from a divide
    turned into a multiply. The constant is folded, its broadcast rewritten."""
    _, t, _ = _program("gather_embedding")
    assert t.info("constant.19").fate == "folded"
    rec = _engine("gather_embedding", "constant.19")
    # named: the folded 0.0625 and the kernel fusion copied it into, not the 0.03125 look-alike
    assert rec.fate == "folded" and rec.after == "constant_10_1"
    after = _program("gather_embedding")[2].modules[1]
    fusion = next(i for i in after.entry_computation.instructions if i.name == rec.fusion)
    body = after.by_name[fusion.calls[0]]
    lits = {i.name: str(i.literal) for i in body.instructions if i.opcode == "constant"}
    assert lits.get("constant_10_1") == "0.0625"
    assert _engine("gather_embedding", "broadcast_in_dim.11").fate == "rewritten"


def test_dot_in_triton_gemm_with_swapped_operands_is_fused():
    """triton-gemm-rewriter wraps the dot in gemm_fusion_dot_general.5; a later pass swaps
    its operands inside. No transpose was folded into it: fused."""
    _, t, _ = _program("mlp_gelu_adam")
    assert t.info("dot_general.5").fate == "fused"
    rec = _engine("mlp_gelu_adam", "dot_general.5")
    assert (rec.fate, rec.fusion) == ("fused", t.destination("dot_general.5"))


def test_cse_survivor_after_calls_inlined_in_place():
    """The GPU pipeline inlines calls first; CSE then walks the entry in post order, where
    the inlined callee's broadcast (ge.3, inlined as ge.0) comes before main's identical
    ge.6: ge.6 is merged into it, ge.3 lives on (fused later)."""
    _, t, _ = _program("gnn_segment_sum")
    assert t.info("ge.6").fate == "merged" and t.info("ge.3").fate == "fused"
    assert _engine("gnn_segment_sum", "ge.6").fate == "merged"
    assert _engine("gnn_segment_sum", "ge.3").fate == "fused"


def test_unpaired_constant_found_in_its_users_fusion():
    """constant.14 is copied by priority fusion into the kernels of its users; the matcher
    paired no copy. The copy is the operand of the
    user's partner holding the same literal: fused, not "simplified away"."""
    _, t, _ = _program("scatter_histogram")
    assert t.info("constant.14").fate == "fused"
    rec = _engine("scatter_histogram", "constant.14")
    assert rec.fate == "fused" and rec.fusion in t.destinations("constant.14")
    # constant.18 (10) is read by jnp.remainder's select(eq(10, 0), 1, 10); constant_folding
    # (dump 0009) evaluates the select into constant.5 = 10, which carries the select's
    # op_name: constant.18 was folded with it (cpu5: dumps/foldresults.py), not renamed to
    # constant.5 and merged by the CSE of dump 0010
    assert (t.info("constant.18").fate, t.info("constant.18").pass_name) == (
        "folded", "constant_folding")


def test_dot_with_folded_operand_transpose_fused_into_gemm():
    """transpose-folding (dump 0012) folds transpose.4 into dot_general.4 and keeps the
    dot; triton-gemm-rewriter then fuses it: the dot is fused, the transpose rewritten."""
    _, t, _ = _program("mlp_transposed")
    assert t.info("dot_general.4").fate == "fused"
    assert t.info("transpose.4").pass_name == "transpose-folding"
    rec = _engine("mlp_transposed", "dot_general.4")
    assert (rec.fate, rec.fusion) == ("fused", "gemm_fusion_dot_general.4")
    assert _engine("mlp_transposed", "transpose.4").fate == "rewritten"


@pytest.mark.parametrize("name", ["fold_identities", "cse_repeated", "gather_embedding",
                                  "mlp_gelu_adam", "gnn_segment_sum"])
def test_gpu_programs_agree_with_pass_dumps(name):
    before, t, result = _program(name)
    c = compare(before, t, result)
    assert c.rate >= 0.95, (name, c.disagreements)
    assert c.target_rate >= 0.95, (name, c.target_misses)


def test_dot_merger_value_is_in_the_merged_dot():
    """dot-merger turns two dots with a common operand into one dot read back through two
    slices (dump 0013): the old dot's value is computed in the merged dot's gemm kernel,
    and held by the slice's kernel."""
    _, t, _ = _program("cse_repeated")
    dests = t.destinations("dot_general.6")
    assert "gemm_fusion_dot" in dests and "loop_add_fusion" in dests
    assert _engine("cse_repeated", "dot_general.6").fusion in dests


def test_chain_follows_rename_instructions():
    """The GPU pipeline's rename-instructions pass renames almost everything (x -> x.0):
    a line of replacements is followed through it (algsimp's new broadcast, renamed,
    then fused by priority fusion), not cut short as "kept"."""
    _, t, _ = _program("fold_identities")
    assert [c[0] for c in t.chain("broadcast.6")] == ["rewritten", "fused"]
    _, t, _ = _program("mlp_gelu_adam")
    assert t.chain("dot_general.7")[-1][:2] == ("fused", "triton-gemm-rewriter")


def test_value_read_back_through_a_reshape_lives_in_the_new_instruction():
    """gather_simplifier rebuilds gather.3 as reshape(gather.4) (dump 0007); reshape-mover
    then rebuilds select_n.7 as reshape(select_n.5) (dump 0010): the new instruction under
    the reshape computes the value, the reshape only re-views it."""
    _, t, _ = _program("gnn_segment_sum")
    f = t.info("gather.3")
    assert (f.fate, f.pass_name) == ("rewritten", "gather_simplifier")
    assert _engine("gnn_segment_sum", "gather.3").fusion in t.destinations("gather.3")
    f = t.info("select_n.7")
    assert (f.fate, f.pass_name) == ("rewritten", "reshape-mover")
    assert _engine("gnn_segment_sum", "select_n.7").fusion in t.destinations("select_n.7")


def test_layout_op_taken_out_leaves_its_values_in_its_operand():
    """algsimp folds transpose.5 (of the parameter a_0_) into a dot (dump 0006): the
    transpose only re-viewed a_0_'s values, which a_0_ still holds; the dot that now reads
    them, merged by CSE and fused into a gemm, is a destination too."""
    _, t, _ = _program("mlp_transposed")
    dests = t.destinations("transpose.5")
    assert "a_0_.1" in dests and "gemm_fusion_dot_general.3" in dests
    assert _engine("mlp_transposed", "transpose.5").after in dests
