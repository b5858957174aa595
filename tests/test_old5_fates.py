"""Fates and the pass-dump oracle under JAX 0.4.30 (old5 helper, issue 9).

Fixtures: fixtures/old5 (fixtures/generate_old5.py: unedited XLA dumps of
benchmarks/zoo_fresh5_programs.py and others, dumped with JAX 0.4.30).
"""

from __future__ import annotations

import functools
from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

OLD5 = Path(__file__).resolve().parent.parent / "fixtures" / "old5"


def _trace(name: str):
    snaps = find_pass_dumps(OLD5 / name, f"jit_{name}")
    before = hlodiff.load(find_before_file(snaps))
    return trace(snaps, before)


def test_inlined_twin_is_told_apart_by_what_its_user_reads_beside_it():
    """Dump 0003 (CallInliner): three log_softmax callees each hold ``broadcast(constant(-inf))``
    without metadata. ``maximum.0 = maximum(reduce.0, broadcast.0)`` reads ``reduce.0`` (the
    renamed ``reduce.150`` of log_softmax_0.144), so ``broadcast.0`` is ``broadcast.147``,
    not the first identical candidate (``broadcast.75``), and maximum.151 is renamed, not
    left behind as "inlined"."""
    t = _trace("kl_distillation")
    step = next(s for s in t.passes if s.name == "CallInliner")
    assert step.renamed.get("broadcast.147") == "broadcast.0"
    assert step.renamed.get("maximum.151") == "maximum.0"
    assert step.renamed.get("maximum.79") == "maximum.3"
    assert t.fate_of("maximum.151")[0] != "inlined"
    assert t.fate_of("maximum.79")[0] != "inlined"


@functools.lru_cache(maxsize=2)
def _diff(name: str):
    """{before name: fate} of a fixture kept as modules before/after optimization."""
    d = OLD5 / name
    before = hlodiff.load(next(d.glob("*before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    return {f.before: f for f in diff_modules(before, after).instructions}


def test_copies_of_a_sunk_add_are_removed_each_not_merged():
    """lu_solve_grad: algsimp (dump 0008) sinks the broadcasts of every inlined tril/triu
    copy of ``add(broadcast(iota), broadcast(-1))`` before CSE; the DCE of dump 0009
    deletes each wide add and its broadcasts (tril_2.237: add.242, broadcast.239,
    broadcast.241), so none of them is merged into the first copy's add.85."""
    fates = _diff("lu_solve_grad")
    assert fates["add.85"].fate == "removed"
    for name in ("add.242", "broadcast.239", "broadcast.241", "add.251", "broadcast.248"):
        assert fates[name].fate == "removed", (name, fates[name].reason)


def test_broadcast_placed_on_other_dimensions_is_not_paired():
    """``broadcast.87 = broadcast(iota.86), dimensions={1}`` is rebuilt as a wide iota by
    algsimp (dump 0008); the only broadcast the final compare.154 reads is the sunk add's
    ``broadcast.296 = broadcast(add.146), dimensions={0}``: another value, not its partner."""
    f = _diff("lu_solve_grad")["broadcast.87"]
    assert f.after != "broadcast.296"
    assert f.fate == "rewritten"


def test_copies_rewritten_before_cse_pair_the_kept_one_by_metadata():
    """clip_contrastive: ``reduce.194``/``reduce.218 = reduce(negate(Arg_2), 0)`` in two
    inlined log_softmax transposes. Algsimp makes each ``negate(reduce(x))`` keeping the
    reduce's name; CSE keeps reduce.194, fusion puts it in fused_computation.12 as
    ``reduce.19`` (same op_name) on a select algsimp built: no after node has the copies'
    fingerprint. The kept copy is fused, the other merged into it; the negates lost their
    users (DCE), and ``reshape.195 = reshape(reduce.194)`` now reads the new negate."""
    fates = _diff("clip_contrastive")
    assert (fates["reduce.194"].fate, fates["reduce.194"].after) == ("fused", "reduce.19")
    assert (fates["reduce.218"].fate, fates["reduce.218"].into) == ("merged", "reduce.194")
    assert fates["negate.193"].fate == "removed"
    assert fates["negate.217"].fate == "removed"
    assert fates["reshape.195"].fusion == "fusion.10"


def test_rebuilt_loop_init_elements_pair_by_position():
    """searchsorted_bucketize: ``tuple.111 = tuple(constant.106, broadcast.108,
    broadcast.110, Arg_0, Arg_1)`` feeds the while the simplifier rebuilt
    (``body=wide.region_0.81.clone.clone``, init ``tuple.15 = tuple(copy.1, broadcast.27,
    broadcast.28, Arg_1.2, fusion.6)``). The two broadcasts share their op_name; by
    position broadcast.108 (of 0) is broadcast.27 and broadcast.110 (of 9) broadcast.28,
    both kept, as the pass dumps follow them."""
    fates = _diff("searchsorted_bucketize")
    assert (fates["broadcast.108"].fate, fates["broadcast.108"].after) == ("kept", "broadcast.27")
    assert (fates["broadcast.110"].fate, fates["broadcast.110"].after) == ("kept", "broadcast.28")
    assert (fates["constant.109"].fate, fates["constant.109"].after) == ("kept", "constant.24")


def test_identical_loop_merged_into_its_twin_and_its_body_rebuilt():
    """lu_solve_grad: lu_factor's and lu_solve's permutation loops (while.147, while.285)
    are identical; the simplifier rebuilds both (dump 0011) and CSE merges them (0030):
    one loop is left, ``body=region_4.216.clone.clone.clone``. while.147 is merged into
    while.285, and its body's instructions were rebuilt with it."""
    fates = _diff("lu_solve_grad")
    assert (fates["while.147"].fate, fates["while.147"].into) == ("merged", "while.285")
    for name in ("compare.45", "select.47", "dynamic-slice.43", "tuple.146"):
        assert fates[name].fate == "rewritten", (name, fates[name].reason)


def test_inlined_callee_root_tuple_read_through_forwarded_elements_is_rewritten():
    """fori_static_unroll: the loop body calls None.4, whose ``ROOT tuple.16 = tuple(add.10,
    add.15)`` the body reads only through get-tuple-elements; after inlining, algsimp
    forwards them (the pass dumps: tuple.16 rewritten at algsimp). It is plumbing, not
    the rebuilt body's root tuple kept unchanged."""
    f = _diff("fori_static_unroll")["tuple.16"]
    assert f.fate == "rewritten", f.reason


def test_rebuilt_body_literal_pairs_with_the_body_top_level_literal():
    """hmm_forward_scan: the scan body region_13.346 reads ``constant.357 = s32[]
    constant(1)``; the rebuilt body ``wide.wide.wide.region_13.346.clone.clone.clone``
    holds ``constant.124 = s32[] constant(1)`` at top level (read by add.64). The pass
    dumps follow constant.357 there: kept, not fused into a kernel's copy."""
    f = _diff("hmm_forward_scan")["constant.357"]
    assert (f.fate, f.after) == ("kept", "constant.124")


def test_tie_taken_wrongly_is_undone_by_the_user_that_matches_only_the_other():
    """perceiver_cross_attention dump 0003: two inlined integer_pow callees hold
    ``broadcast(constant(1))`` (no metadata) before ``multiply(x, x)`` and ``ROOT
    divide(broadcast, multiply)``. When a broadcast copy is renamed its user's other
    operand is not known yet; the divide copies then match only with the other
    candidate. Both divides are followed (not left "inlined")."""
    t = _trace("perceiver_cross_attention")
    for name in ("divide.50", "divide.86"):
        assert t.fate_of(name)[0] != "inlined", name
    step = next(s for s in t.passes if s.name == "CallInliner")
    assert step.renamed.get("divide.50") and step.renamed.get("divide.86")


def test_softmax_rewritten_into_a_onednn_call_before_cse():
    """kl_distillation dump 0003 -> 0004 (onednn-ops-rewriter): jax.nn.softmax's ops
    (reduce.45 ... divide.62) become ``custom-call(divide.40),
    custom_call_target="__onednn$softmax"`` before CSE; the log_softmax callee's
    identical reduce/exp copies are then not merged into them and are fused."""
    fates = _diff("kl_distillation")
    for name in ("reduce.45", "maximum.46", "subtract.51", "exponential.52", "divide.62"):
        assert (fates[name].fate, fates[name].after) == ("rewritten", "custom-call"), name
    for name in ("exponential.85", "reduce.86"):
        assert fates[name].fate == "fused", (name, fates[name].reason)


def test_identical_inlined_constants_follow_their_readers():
    """sort_rank_correlation (fresh 10) dump 0005 (CallInliner): three ``f32[] constant(1)``
    without metadata, from integer_pow.139 (read by an f32[2,1] broadcast),
    integer_pow_3.145 (f32[1,2]) and clip.151 (f32[2,2]). Each copy must be the one its
    renamed broadcast reads; taken in text order, constant.141 was renamed to the copy
    under the f32[2,2] broadcast, and CSE's later merge fell on the wrong originals."""
    t = _trace("sort_rank_correlation")
    step = next(s for s in t.passes if s.name == "CallInliner")
    for const, bcast in (("constant.141", "broadcast.142"), ("constant.147", "broadcast.148"),
                         ("constant.159", "broadcast.160")):
        new_b = step.renamed[bcast]
        snap = hlodiff.load(step.path)
        reads = next(i for c in snap.computations for i in c.instructions if i.name == new_b)
        assert reads.operands == [step.renamed[const]], (const, bcast)
