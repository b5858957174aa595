"""Fates under JAX 0.4.30 (XLA of mid 2024): pass behaviour the current XLA no longer shows.

Fixtures: fixtures/old_passes (fixtures/generate_old_passes.py: snapshots of the zoo dumped
with JAX 0.4.30 by ``benchmarks/zoo.py --mode old``).
"""

from __future__ import annotations

import functools
from pathlib import Path

from click.testing import CliRunner

import hlodiff
from hlodiff.cli import main as cli
from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

OLD = Path(__file__).resolve().parent.parent / "fixtures" / "old_passes"


@functools.lru_cache(maxsize=2)
def _diff(name: str):
    """(before, after, DiffResult) of a fixture kept as modules before/after only."""
    d = OLD / name
    before = hlodiff.load(next(d.glob("*before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    return before, after, diff_modules(before, after)


def _trace(name: str):
    snaps = find_pass_dumps(OLD / name, f"jit_{name}")
    before = hlodiff.load(find_before_file(snaps))
    return trace(snaps, before)


def test_tuple_simplifier_prints_the_survivor_under_the_replaced_name():
    """Dump 0009: LICM left ``get-tuple-element.45 = get-tuple-element(tuple.239), index=6``
    (no metadata), tuple.239's operand 6 being ``get-tuple-element.212 =
    get-tuple-element(while.207), index=4`` (the scan's op_name). Dump 0010, after the tuple
    simplifier: ``get-tuple-element.45 = get-tuple-element(while.207), index=4`` with
    get-tuple-element.212's metadata, and no get-tuple-element.212. Its value was not
    dropped: it is printed under the name it replaced."""
    tr = _trace("rnn_lstm_scan")
    for k in range(12):  # get-tuple-element.212 ... .223 -> get-tuple-element.45 ... .56
        f = tr.fates[f"get-tuple-element.{212 + k}"]
        assert f.fate == "kept", (f.name, f.fate, f.history)
        assert f.final_name == f"get-tuple-element.{45 + k}"
        assert tr.destination(f.name) == f"get-tuple-element.{45 + k}"
    # an instruction the pass did not touch keeps its own name
    f = tr.fates["get-tuple-element.211"]
    assert f.fate == "kept" and f.final_name == "get-tuple-element.211"
    # the replaced get-tuple-element.45 (made by LICM) is no before instruction
    assert "get-tuple-element.45" not in tr.fates


def test_passes_command_follows_the_taken_over_name():
    res = CliRunner().invoke(cli, ["passes", str(OLD / "rnn_lstm_scan"),
                                   "--instruction", "get-tuple-element.212"])
    assert res.exit_code == 0, res.output
    assert "renamed to get-tuple-element.45" in res.output
    assert "removed" not in res.output.splitlines()[0]


def test_operands_the_old_constant_folder_left_for_dce_are_folded():
    """Dump 0005 (algsimp): ``multiply = multiply(constant.13, constant.12)`` (2 * 0.5) and
    ``multiply.2 = multiply(constant.9, constant.7)`` (3 * 4). Dump 0006 (constant_folding):
    both are constants now; constant.13/.12/.9/.7 are still there, without users. Dump 0009
    (dce) drops them. They went into the folded constants (as under the current XLA, whose
    folder drops them itself), so they are folded at constant_folding, not dead code."""
    tr = _trace("fold_identities")
    for c in ("constant.13", "constant.12", "constant.9", "constant.7"):
        f = tr.fates[c]
        assert (f.fate, f.pass_name) == ("folded", "constant_folding"), (c, f.history)
        assert f.into is not None
    # 2 * 0.5 and 3 * 4 were folded into different constants
    assert tr.fates["constant.13"].into == tr.fates["constant.12"].into
    assert tr.fates["constant.9"].into == tr.fates["constant.7"].into
    assert tr.fates["constant.13"].into != tr.fates["constant.9"].into
    # the broadcasts algsimp rebuilt in 0005 are rewritten there, not folded later
    assert tr.fates["broadcast.10"].fate == "rewritten"


def test_regrouped_constant_is_not_paired_with_a_look_alike_its_users_do_not_read():
    """gather_embedding: ``(x * broadcast(constant.6 = 2)) * broadcast(constant.4 =
    0.03125)``; algsimp regroups it and constant folding makes 0.0625 (``constant.113``
    after). Another 0.03125 survives: ``constant.116``, the reciprocal of the divisor 32
    (``multiply.7 = multiply(reduce.3, constant.116)``, op_name .../div), which no partner of
    constant.4's users reads. constant.4 is folded, not that look-alike."""
    d = OLD / "gather_embedding"
    before = hlodiff.load(next(d.glob("*before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    res = diff_modules(before, after)
    entry = before.entry_computation.name
    f = res.fate_of(entry, "constant.4")
    assert f.fate == "folded", (f.fate, f.after, f.reason)
    assert f.after == "constant.113"
    lit = {i.name: i.literal for i in after.instructions()}
    assert str(lit["constant.113"]) == "0.0625" and str(lit["constant.116"]) == "0.03125"
    assert res.fate_of(entry, "constant.6").fate == "folded"


def test_tuple_taken_apart_by_the_tuple_simplifier_is_rewritten_not_dead():
    """Dump 0009 (after cse_barrier_expander): ``tuple.32 = tuple(tanh.17, Arg_2.3,
    multiply.26)`` read by get-tuple-element.34/.35/.36 (the barrier is gone). Dump 0010
    (tuple simplifier): the get-tuple-elements are forwarded to the elements and tuple.32 is
    gone with them. It had users when the pass began: rewritten (like a tuple algsimp takes
    apart), not dead code."""
    tr = _trace("remat_nothing")
    f = tr.fates["tuple.32"]
    assert (f.fate, f.pass_name) == ("rewritten", "tuple-simplifier"), f.history
    for t in ("tuple.51", "tuple.70"):  # the other two checkpoint barriers' tuples
        assert tr.fates[t].fate == "rewritten", tr.fates[t].history


def test_cse_keeps_the_first_copy_in_post_order():
    """vae_step: ``relu.30`` holds ``broadcast.33 = broadcast(constant.32)`` (0), inlined
    at ``call.35 = call(dot.29)`` early in the entry; the entry's own ``broadcast.26 =
    broadcast(constant.25)`` (0) comes later. Dump 0012 (before CSE): the inlined copy is
    ``broadcast.0`` (line 21, read by ``maximum.0``), broadcast.26 at line 54. Dump 0013
    (after cse): broadcast.26 is gone, ``compare.36 = compare(dot.29, broadcast.0)``. CSE
    walks the computation in post order from its root and keeps the copy it meets first:
    broadcast.26 merged into the inlined copy, not the other way round."""
    d = OLD / "vae_step"
    before = hlodiff.load(next(d.glob("*before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    res = diff_modules(before, after)
    f = res.fate_of(before.entry_computation.name, "broadcast.26")
    assert (f.fate, f.into) == ("merged", "broadcast.33"), (f.fate, f.into, f.reason)
    g = res.fate_of("relu.30", "broadcast.33")
    assert g.fate == "fused", (g.fate, g.reason)


def test_identical_copies_pair_the_one_cse_kept():
    """gpt_rope_adamw computes ``negate(iota)`` -> ``convert`` (rotary frequencies) once per
    attention layer: ``negate.197``, ``negate.240``, ``negate.449``, ... identical in the
    entry. CSE (dump after cse) keeps negate.197, the first in post order; after optimization
    one copy is left, in ``fused_computation.164``: ``negate.82 = s32[16] negate(iota.48)``.
    negate.197 is fused there and the other copies are merged into it (before: all
    unpaired, "simplified away")."""
    before, after, res = _diff("gpt_rope_adamw")
    entry = before.entry_computation.name
    for n in ("negate.197", "convert.198", "iota.196"):
        f = res.fate_of(entry, n)
        assert (f.fate, f.fusion) == ("fused", "fusion.164"), (n, f.fate, f.reason)
    for n in ("negate.240", "negate.449", "convert.241"):
        f = res.fate_of(entry, n)
        assert f.fate == "merged" and f.fusion == "fusion.164", (n, f.fate, f.reason)


def test_scalar_constant_under_a_rebuilt_broadcast_lives_in_the_fusion_copy():
    """gpt_rope_adamw, layer norm: ``constant.143 = f32[] constant(1e-05)``,
    ``broadcast.144 = f32[8,16,1] broadcast(constant.143)``, ``add.174 = add(divide.169,
    broadcast.144)``. Algsimp rebuilds the broadcast on the squeezed shape (broadcast.144
    rewritten at algsimp in the pass dumps); the scalar survives and fusion copies it into
    each kernel that adds it (``constant.398 = f32[] constant(1e-05)`` in a kLoop fusion).
    The constant is fused there, not "simplified away"."""
    before, after, res = _diff("gpt_rope_adamw")
    f = res.fate_of(before.entry_computation.name, "constant.143")
    assert f.fate == "fused", (f.fate, f.reason)
    fused = {c.name: c for c in after.computations}
    call = {i.name: i.calls[0] for i in after.entry_computation.instructions if i.calls}
    body = fused[call[f.fusion]]
    assert any(i.opcode == "constant" and str(i.literal) == "1e-05" for i in body.instructions)


def test_dot_with_a_folded_transpose_keeps_its_name_and_is_kept():
    """mlp_transposed: ``dot.6 = dot(transpose.5, Arg_1.2), lhs_contracting_dims={1}``.
    Dump 0010 (after transpose-folding): ``dot.6 = dot(tanh.4, Arg_1.2),
    lhs_contracting_dims={0}``: the same instruction (XLA never reuses a name), its
    dimension numbers changed in place; it is dot.6 after optimization too. Kept (with the
    folded transpose said), not rewritten into something else."""
    before, after, res = _diff("mlp_transposed")
    f = res.fate_of(before.entry_computation.name, "dot.6")
    assert (f.fate, f.after) == ("kept", "dot.6"), (f.fate, f.after, f.reason)
    assert "transpose" in f.reason


def test_folded_constant_names_the_kernel_holding_the_new_literal():
    """gather_embedding: constant.4 (0.03125) is folded with constant.6 (2) into
    ``constant.113 = f32[] constant(0.0625)``, which fusion copied into ``fusion.4`` (the
    pass dumps end its line there). The fate names both: after constant.113, fusion.4."""
    before, after, res = _diff("gather_embedding")
    f = res.fate_of(before.entry_computation.name, "constant.4")
    assert (f.fate, f.after, f.fusion) == ("folded", "constant.113", "fusion.4"), \
        (f.fate, f.after, f.fusion)
    holder = next(i for i in after.entry_computation.instructions if i.name == "fusion.4")
    body = next(c for c in after.computations if c.name == holder.calls[0])
    assert "constant.113" in {i.name for i in body.instructions}


def test_line_ending_in_a_constant_the_folder_left_behind_is_folded():
    """gather_embedding, snapshots 0018-0027: the old gather expander turned a gather of
    constants into a loop that algsimp and the loop simplifier reduce to ``constant.102 =
    s32[1] constant(...)`` (0024, read by a subtract of two constants). Dump 0025
    (constant_folding) folds that subtract and leaves constant.102 without users; dump 0027
    (dce) deletes it. Every instruction whose line of replacements reaches constant.102
    ends folded at 0025 (its value is in the folded constant), not removed by DCE."""
    snaps = find_pass_dumps(OLD / "gather_embedding_loop", "jit_gather_embedding")
    tr = trace(snaps)
    lines = [n for n in tr.fates if any(x[2] == "constant.102" for x in tr.chain(n))]
    assert len(lines) >= 5, lines
    for n in lines:
        fate, pass_name, _ = tr.chain(n)[-1]
        assert (fate, pass_name) == ("folded", "constant_folding"), (n, tr.chain(n))


def test_copies_met_before_the_surviving_copy_were_gone_before_cse():
    """gpt_rope_adamw: identical ``iota()`` of one op_name. ``iota.194`` is read by a
    reshape (algsimp makes the reshape an iota: rewritten at algsimp); ``iota.196`` feeds
    ``negate.197`` and lives on in fused_computation.164 (``iota.48``); ``iota.239`` and
    ``iota.448`` feed identical negates: merged into iota.196 at cse (pass dumps). The
    copy that survived CSE is the one CSE met first among those that reached it: the
    later ones read alike are merged, not "simplified away"."""
    before, after, res = _diff("gpt_rope_adamw")
    entry = before.entry_computation.name
    for n in ("iota.239", "iota.448"):
        f = res.fate_of(entry, n)
        assert (f.fate, f.into, f.fusion) == ("merged", "iota.196", "fusion.164"), \
            (n, f.fate, f.into, f.reason)
    assert res.fate_of(entry, "iota.194").fate == "rewritten"


def test_regrouped_chain_lives_on_as_its_outer_instruction():
    """quant_fake: ``multiply.33 = multiply(call.32, broadcast(constant.5 = 2))``,
    ``multiply.40 = multiply(multiply.33, broadcast(constant.3 = 0.00390625))``. Algsimp
    regroups it as x * (2 * 0.00390625) (pass dumps: multiply.33 rewritten at algsimp,
    dump 0006; multiply.40 lives on and is fused); the kernel multiplies by 0.0078125. The
    after multiply is multiply.40's; multiply.33 was simplified away."""
    before, after, res = _diff("quant_fake")
    entry = before.entry_computation.name
    outer, inner = res.fate_of(entry, "multiply.40"), res.fate_of(entry, "multiply.33")
    assert outer.fate == "fused", (outer.fate, outer.reason)
    assert inner.fate == "rewritten", (inner.fate, inner.reason)
    assert outer.after == "multiply.4"  # multiply(..., broadcast(constant(0.0078125)))
    lits = {str(i.literal) for c in after.computations for i in c.instructions
            if i.opcode == "constant"}
    assert "0.0078125" in lits


def test_broadcast_read_only_by_an_identity_is_no_cse_survivor():
    """topk_ranking_loss: logaddexp (inlined) has ``broadcast.27 = broadcast(Arg_1.24)``
    (bound to 0) read only by ``subtract.28 = subtract(Arg_0.23, broadcast.27)`` and
    ``broadcast.25`` of the same value read by ``maximum.26``; softplus has another,
    ``broadcast.41``. Algsimp removes x - 0 in its first round (pass dumps: broadcast.27
    rewritten at algsimp), so CSE meets broadcast.25 first and merges broadcast.41 into it."""
    before, after, res = _diff("topk_ranking_loss")
    f = res.fate_of("softplus.38", "broadcast.41")
    assert (f.fate, f.into) == ("merged", "broadcast.25"), (f.fate, f.into, f.reason)
