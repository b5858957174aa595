"""Single-device CPU fates, third round (issue 9): the oracle's lines of replacements.

Fixtures: fixtures/cpu3 (XLA's pass dumps of zoo programs, written by
fixtures/generate_cpu3.py).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.diff.accuracy import compare, line_end_fates
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

CPU3 = Path(__file__).resolve().parent.parent / "fixtures" / "cpu3"


def _run(program: str):
    snaps = find_pass_dumps(CPU3 / program)
    bp = find_before_file(snaps)
    before = hlodiff.load(bp)
    after = hlodiff.load(next(bp.parent.glob("*cpu_after_optimizations.txt")))
    return before, trace(snaps, before), diff_modules(before, after)


def test_rewritten_then_folded_line_ends_folded_whether_or_not_the_constant_survives():
    """fft_conv1d: both FFT transposes build ``dynamic_update_slice(broadcast(c), ...)``;
    algsimp rewrites both copies (dump 0007), constant_folding folds both (0009). The
    first copy's folded constant is folded again (its line ends "folded"); the second's
    survives as a constant of the final module (its line ended with the closing "kept").
    The same history is judged the same way: "folded" agrees with both lines."""
    before, oracle, result = _run("cpu/fft_conv1d")
    first = ("broadcast.3", "dynamic_update_slice.2", "dynamic_update_slice.3", "broadcast_in_dim.1")
    second = ("broadcast.5", "dynamic_update_slice.6", "dynamic_update_slice.7", "broadcast_in_dim.3")
    for a, b in zip(first, second):
        fa, fb = oracle.info(a), oracle.info(b)
        assert (fa.fate, fa.pass_name) == (fb.fate, fb.pass_name) == ("rewritten", "algsimp")
        line_a, line_b = oracle.chain(a), oracle.chain(b)
        assert [x[:2] for x in line_a] == [("rewritten", "algsimp"), ("folded", "constant_folding")]
        assert [x[:2] for x in line_b] == [("rewritten", "algsimp"), ("folded", "constant_folding"),
                                           ("kept", None)]
        assert "folded" in line_end_fates(oracle, a) and "folded" in line_end_fates(oracle, b)
        # a line that only closes with "kept" still accepts "kept" (tuples copy insertion rebuilt)
        assert "kept" in line_end_fates(oracle, b)
    cmp = compare(before, oracle, result)
    wrong = {d[1] for d in cmp.disagreements}
    for b in second:
        assert result.fate_of(oracle.info(b).computation, b).fate == "folded"
        assert b not in wrong, cmp.disagreements


def test_literals_of_a_gather_the_folder_evaluates_are_folded():
    """Old JAX (0.4.30) sort_argsort, ``take_along_axis``: ``gather(constant({8, 16}),
    constant({{0}, {1}}))`` and ``gather(broadcast(1), same index)`` have two index vectors,
    so the simple-gather expander leaves them alone and constant_folding evaluates them
    (dump 0009); their literal operands die with them ("folded (original left without
    users)"), not "simplified away" by algsimp. A one-index gather of constants is expanded
    into a loop first (gather_embedding, dump 0009): the engine keeps its cautious answer
    there (fixtures/old_passes, tests/test_oldjax_fates.py)."""
    before, oracle, result = _run("old/sort_argsort")
    comp = before.computation(oracle.info("gather.56").computation)
    for g in ("gather.56", "gather.57"):
        f = oracle.info(g)
        assert (f.fate, f.pass_name) == ("folded", "constant_folding")
        assert comp[comp[g].operands[1]].shape.dims == (2, 1)  # two index vectors
    for name in ("constant.43", "constant.42", "broadcast.41"):
        f = oracle.info(name)
        assert (f.fate, f.pass_name) == ("folded", "constant_folding"), (name, f)
        rec = result.fate_of(f.computation, name)
        assert rec.fate == "folded", (name, rec.fate, rec.reason)


def test_a_reshape_of_a_value_the_folder_evaluates_is_folded_through_an_identity_broadcast():
    """The same take_along_axis: ``reshape.62 = s32[2] reshape(broadcast.61)``, where
    ``broadcast.61`` re-broadcasts ``reshape.60 = s32[1,1,2] reshape(subtract.58)`` to its own
    shape and subtract.58 subtracts the two gathers of constants. Algsimp takes out the
    identity broadcast; constant_folding evaluates subtract.58 and the reshapes with it
    (dump 0009: reshape.62 folded into constant.21). The engine's view sees reshape.62 as a
    view of subtract.58 and had said "no-op reshape removed (algebraic simplification)"; it
    is a real reshape (s32[1,1,2] -> s32[2]) of a computed constant, folded with it. (A
    reshape of a literal is made a literal by algsimp first: that stays rewritten.)"""
    before, oracle, result = _run("old/sort_argsort")
    f = oracle.info("reshape.62")
    assert (f.fate, f.pass_name) == ("folded", "constant_folding")
    rec = result.fate_of(f.computation, "reshape.62")
    assert rec.fate == "folded" and "no-op" not in rec.reason, rec.reason


def test_constant_subtracted_from_a_value_is_folded_after_negation():
    """unseen dropout_ln_rng (jax.random.normal's erf_inv): ``erf_inv.90 = subtract(
    erf_inv.88, broadcast(constant.116 = 2.5))``. Algsimp canonicalizes ``x - c`` to
    ``x + negate(c)``; XLA's dump 0012 holds ``negate.2 = f32[] negate(constant.193)``
    (the inlined constant.116) and dump 0013 (constant_folding) folds it: the oracle
    says "folded by constant_folding (dump 0013)" for constant.115 and constant.116. The
    engine said "simplified away (algebraic simplification)"."""
    d = CPU3 / "cpu" / "dropout_ln_rng"
    before = hlodiff.load(next(d.glob("*before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    result = diff_modules(before, after)
    comp = before.computation("_normal_real.16")
    for name in ("constant.115", "constant.116"):
        # the premise: a scalar read by one broadcast, which only subtracts it from a value
        users = [i for i in comp.instructions if name in i.operands]
        assert [u.opcode for u in users] == ["broadcast"], (name, users)
        subs = [i for i in comp.instructions if users[0].name in i.operands]
        assert subs and all(s.opcode == "subtract" and s.operands[1] == users[0].name
                            for s in subs), subs
        rec = result.fate_of("_normal_real.16", name)
        assert rec.fate == "folded", (name, rec.fate, rec.reason)
