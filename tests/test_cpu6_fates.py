"""Single-device CPU fates, sixth round (issue 9; cpu6 helper): loop bodies the call inliner
cloned per call site.

Fixtures: fixtures/cpu6 (written by fixtures/generate_cpu6.py; XLA's own dumps, jax 0.10.2).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

CPU6 = Path(__file__).resolve().parent.parent / "fixtures" / "cpu6" / "cpu"


def _pair(program: str):
    d = CPU6 / program
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    return before, after, diff_modules(before, after)


def test_literals_of_a_loop_body_cloned_per_call_are_fused_in_every_copy():
    """mixup_permutation: jax.random.beta calls ``_gamma`` twice with the same op_name
    (``jit(_gamma)``); the loop bodies inside it are cloned for each call and every copy's
    instructions carry ``.../jit(_gamma)/vmap()/while/body/...``. The view instantiates the
    body once; without that shared prefix its literals matched nothing and were "simplified
    away". ``constant.146`` (a literal of erf_inv in ``_normal_real.26``, inlined into the
    nested body ``region_9.28``) and the polynomial coefficients beside it are fused; which
    call's kernel holds the first call's copy the names no longer tell (the loop passes rebuilt
    both bodies), so both kernels are listed and none is named."""
    _, _, r = _pair("mixup_permutation")
    for name in ("constant.146", "constant.147", "constant.150", "constant.169"):
        f = r.fate_of("_normal_real.26", name)
        assert f.fate == "fused", (name, f)
        assert f.fusion is None and len(f.candidates) >= 2, (name, f)
        assert "multiply_select_fusion" in f.candidates, (name, f)


def test_first_call_keeps_the_original_body():
    """two_calls: flatten-call-graph gives the second call ``region_0.1.clone``; the first
    call's loop runs ``region_0.1`` to the end (``while.14``). The oracle (pass dumps) and
    the engine both name the first call's kernels, not withheld as twins."""
    d = CPU6 / "two_calls"
    snaps = find_pass_dumps(d, "jit_two_calls")
    before = hlodiff.load(find_before_file(snaps))
    oracle = trace(snaps, before)
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    for name, where in (("constant.8", "broadcast_multiply_fusion"),
                        ("mul.3", "broadcast_multiply_fusion"), ("add.2", "wrapped_add")):
        assert oracle.destinations(name) == [where], name
        f = r.fate_of("region_0.1", name)
        assert (f.fate, f.fusion, f.candidates) == ("fused", where, []), (name, f)
    f = r.fate_of("region_0.1", "constant.9")
    assert (f.fate, f.after) == ("kept", "constant.9"), f


def test_loop_init_tuple_relaid_out_by_layout_assignment_is_rewritten():
    """viterbi_decode_scan: the forward scan wants element 3 of its state as
    ``f32[8,8,5]{2,1,0}``; ``while.10`` builds it ``{2,0,1}``. Layout assignment (dump 0036)
    copies the tuple apart (get-tuple-elements, ``copy``, ``tuple.23``) and the tuple
    simplifier (0045) forwards while.10's elements; the loop reads ``tuple.24`` in the
    end. ``while.10`` was rebuilt, not "kept: unchanged"."""
    _, _, r = _pair("viterbi_decode_scan")
    f = r.fate_of("main.19", "while.10")
    assert (f.fate, f.after) == ("rewritten", "tuple.24"), f
    assert "layout assignment" in f.reason
    # the backward scan's init tuple kept its layouts: left to the loop rules
    assert r.fate_of("main.19", "while.15").fate == "rewritten"


def test_dead_instruction_is_removed_not_kept_as_a_look_alike():
    """viterbi_decode_scan ``while.18`` (the backward scan's unused carry) and
    ragged_segment_cumsum ``while.8`` (an inlined searchsorted loop's unused result) are
    read by nothing: DCE deletes them (dump 0003). They were paired, by op_name, with a
    get-tuple-element of the rebuilt loop body and with another result of the loop, and
    called "kept"."""
    _, _, r = _pair("viterbi_decode_scan")
    f = r.fate_of("main.19", "while.18")
    assert (f.fate, f.after) == ("removed", None), f
    assert r.fate_of("main.19", "while.19").fate == "kept"  # the used result stays
    _, _, r = _pair("ragged_segment_cumsum")
    f = r.fate_of("_searchsorted_scan_impl_1.8", "while.8")
    assert f.fate in ("removed", "inlined") and f.after is None, f


def test_dead_copy_of_a_cse_survivor_is_removed_not_merged():
    """lu_solve_grad (fixtures/cpu5): lu_factor's and lu_solve's permutation loops are
    identical; their unused counters ``while.7`` and ``while.17`` (get-tuple-element index
    0) are read by nothing and DCE deletes both at dump 0004, long before CSE (0039). The
    engine called ``while.17`` "merged into while.7"."""
    d = CPU6.parent.parent / "cpu5" / "cpu" / "lu_solve_grad"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    for comp, name in (("lu_solve.10", "while.17"), ("lu_solve.10", "while.18"),
                       ("lu_factor.6", "while.7")):
        f = r.fate_of(comp, name)
        assert (f.fate, f.after) == ("removed", None), (name, f)


def test_literals_of_a_rebuilt_loop_init_tuple_meet_cse():
    """stochastic_round_grads (fixtures/loops4): three inlined threefry loops start from
    ``constant(0)`` counters. The first loop's ``constant.25`` lives on as ``constant.18``;
    the third's ``constant.71`` (read only by its init tuple ``while.55``, which the loop
    passes rebuild) is merged into it by CSE (dump 0023). It was "simplified away" with
    its tuple."""
    d = CPU6.parent.parent / "loops4" / "cpu_stochastic_round_grads"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    for comp, name in (("threefry2x32_3.17", "constant.71"), ("threefry2x32_0.10", "constant.46")):
        f = r.fate_of(comp, name)
        assert (f.fate, f.after) == ("merged", "constant.18"), (name, f)
    assert r.fate_of("threefry2x32.4", "constant.25").after == "constant.18"


def test_argument_no_callee_reads_goes_with_the_call_inliner():
    """fft_conv1d (fixtures/cpu3, every pass): ``constant.23 = s32[] constant(0)`` is
    passed to two ``_pad`` calls whose callees never read that parameter. The calls read
    it, so it is not dead code for DCE; the call inliner (dump 0005) leaves it without
    readers and it goes in that pass. It was "removed: dead"."""
    d = CPU6.parent.parent / "cpu3" / "cpu" / "fft_conv1d"
    snaps = find_pass_dumps(d, "jit_fft_conv1d")
    before = hlodiff.load(find_before_file(snaps))
    info = trace(snaps, before).info("constant.23")
    assert (info.fate, info.pass_name) == ("inlined", "call-inliner"), info
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    f = diff_modules(before, after).fate_of("main.12", "constant.23")
    assert f.fate == "inlined" and "call inliner" in f.reason, f


def test_old_xla_keeps_max_with_minus_inf():
    """zoo cse_repeated, JAX 0.4.30 (fixtures/cpu6/old): that XLA's algsimp leaves
    ``max(x, -inf)`` alone (the final module fuses ``maximum(param_1.4, broadcast.7)`` of
    ``constant(-inf)``), so the before module's ``-inf`` literal ``constant.6`` is not
    removed with an identity: CSE merges it (the oracle, from the pass dumps)."""
    d = CPU6.parent / "old" / "cse_repeated"
    snaps = find_pass_dumps(d, "jit_cse_repeated")
    before = hlodiff.load(find_before_file(snaps))
    assert trace(snaps, before).info("constant.6").fate == "merged"
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    assert diff_modules(before, after).fate_of("main.63", "constant.6").fate == "merged"
