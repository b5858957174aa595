"""Single-device CPU fates, fifth round (issue 9; cpu5 helper).

Fixtures: fixtures/cpu5 (XLA's pass dumps of CPU programs, written by
fixtures/generate_cpu5.py).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

CPU5 = Path(__file__).resolve().parent.parent / "fixtures" / "cpu5"


def _run(program: str):
    snaps = find_pass_dumps(CPU5 / program)
    bp = find_before_file(snaps)
    before = hlodiff.load(bp)
    after = hlodiff.load(next(bp.parent.glob("*cpu_after_optimizations.txt")))
    return before, trace(snaps, before), diff_modules(before, after)


def test_folder_result_is_not_a_rename_of_a_consumed_lookalike():
    """asym_uint8_quant: ``round.6 = round-nearest-even(constant.19)`` with ``constant.19 =
    f32[] constant(-0)``; constant_folding (dump 0008) evaluates it into ``constant.8 =
    constant(-0)``, which carries round.6's op_name (.../jit(round)/round). constant.19 was
    folded with its reader, not renamed to the new constant of the same literal."""
    _, oracle, result = _run("cpu/asym_uint8_quant")
    info = oracle.info("constant.19")
    assert (info.fate, info.pass_name) == ("folded", "constant_folding"), info
    assert result.fate_of("main.11", "constant.19").fate == "folded"


def _pair(program: str):
    d = CPU5 / program
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    return diff_modules(before, after)


def test_literal_with_untraced_readers_is_found_by_its_fused_copy():
    """searchsorted_bucketize: ``closed_call.2`` (inlined into a while body) reads
    ``broadcast.3 = broadcast(constant.12 = constant(nan))`` and a broadcast of 0. Its
    readers are hoisted or rebuilt by the loop passes (no partners); the pass dumps follow
    the literals into ``compare_select_fusion.1`` (dump 0044: fused), where copies carry the
    inlined call's op_name. Not "simplified away"; the loop's fusion, not the hoisted
    ``xor_select_fusion`` outside the loop."""
    r = _pair("cpu/searchsorted_bucketize")
    for name in ("constant.12", "broadcast.3", "constant.13", "broadcast.4"):
        f = r.fate_of("closed_call.2", name)
        assert (f.fate, f.fusion) == ("fused", "compare_select_fusion.1"), f


def test_loop_of_nested_same_named_calls_is_found_rebuilt():
    """searchsorted_bucketize: the while sits in ``vmap(jit(f))`` called from ``vmap(jit(f))``.
    XLA's call inliner works bottom-up and writes the segment once (dump 0008:
    ``.../jit(_searchsorted_scan_impl)/vmap(jit(_searchsorted_scan_impl))/while``); the
    before while's composed op_name repeats it, so its rebuilt partner (``while.19``, body
    ``wide.region_0.3.clone.clone`` after loop-invariant code motion, dump 0013) was not
    found and the loop counter was called "unchanged"."""
    r = _pair("cpu/searchsorted_bucketize")
    for comp, name in (("region_0.3", "get-tuple-element.5"), ("region_0.3", "add.4"),
                       ("region_1.4", "lt.2"), ("region_1.4", "get-tuple-element.15")):
        f = r.fate_of(comp, name)
        assert f.fate == "rewritten" and "while loop rebuilt" in f.reason, f


def test_each_copy_of_a_sunk_op_is_sunk_before_cse():
    """lu_solve_grad: jnp.tril's ``add(broadcast(iota), broadcast(-1))`` is inlined six
    times. Algsimp (dump 0009) sinks every copy below its broadcast; dce (dump 0010) removes
    the wide adds and their scalar broadcasts; only then CSE (dump 0039) merges the narrow
    adds. The copies were "merged into add.21 (CSE)"."""
    r = _pair("cpu/lu_solve_grad")
    for comp, name in (("lu_factor.6", "add.23"), ("lu_factor.6", "add.25"),
                       ("lu_factor.6", "add.26"), ("_lu_solve.9", "add.33"),
                       ("_lu_solve.9", "add.34"), ("_lu_solve.9", "broadcast.14")):
        f = r.fate_of(comp, name)
        assert f.fate == "removed", f
    assert "before CSE ran" in r.fate_of("_lu_solve.9", "add.33").reason


def test_iotas_meet_cse_only_through_their_readers():
    """lu_solve_grad: XLA:CPU's first CSE (dump 0039) runs after all simplification.
    ``iota.37 = broadcast(iota.36)`` is rebuilt by algsimp as a wide iota (dump 0009) in
    every copy, before CSE; CSE merges no iota as such: ``iota.26`` (read by the copy of
    jnp.tril's add CSE keeps) lives on and is fused (dump 0048), ``iota.34`` (read only by a
    sunk copy) goes with its reader."""
    r = _pair("cpu/lu_solve_grad")
    f = r.fate_of("lu_factor.6", "iota.37")
    assert f.fate == "rewritten" and "before CSE ran" in f.reason, f
    assert r.fate_of("lu_factor.6", "iota.26").fate == "fused"
    for comp, name in (("lu_factor.6", "iota.34"), ("_lu_solve.9", "iota.55")):
        assert r.fate_of(comp, name).fate == "merged", r.fate_of(comp, name)


def test_barrier_element_is_named_where_its_value_lives():
    """remat_nested_layers: ``remat2.62 = get-tuple-element(opt-barrier(remat2.52)), index=8``.
    cse_barrier_expander (dump 0025) drops the barrier, tuple-simplifier (dump 0026) makes
    the reader read element 8 itself (add.62, fused into tanh_add_fusion.1, dump 0048).
    Nested barriers chain: ``remat2.66`` reads the next barrier, whose element 0 is an
    element of the first (a dot, in ynn_fusion.7). The reader's kernel was named before."""
    r = _pair("cpu/remat_nested_layers")
    for name, where in (("remat2.62", "tanh_add_fusion.1"), ("remat2.66", "ynn_fusion.7")):
        f = r.fate_of("main.51", name)
        assert (f.fate, f.fusion) == ("rewritten", where), f
        assert "barrier" in f.reason
