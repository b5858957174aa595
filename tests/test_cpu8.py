"""Fates of programs partitioned over 8 CPU devices (issue 9, helper cpu8): fixtures/cpu8
(copied unedited from the cpu8 dumps of the held-out program sets by generate_cpu8.py)."""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_pass_dumps, trace

D = Path(__file__).resolve().parent.parent / "fixtures" / "cpu8"


def _pair(name: str):
    d = D / name
    return (hlodiff.load(next(d.glob("*before_optimizations.txt"))),
            hlodiff.load(next(d.glob("*cpu_after_optimizations.txt"))))


def _arity(shape) -> int:
    return len(shape.tuple_shapes)


def test_loop_results_pair_by_where_the_body_leaves_each_element():
    """seq2seq_two_scans: the encoder scan ``while.36`` (10 state elements) is ``while.65``
    (11) after loop-invariant code motion. Its three scan outputs start as the same zeros
    (init elements 3, 4 and 5 all ``broadcast.7``), so neither the init tuple nor the
    op_name tells ``while.40``/``.41``/``.42`` (elements 3, 4, 5) apart; the body's root
    tuple does: each output's dynamic-update-slice has its partner at the same place of the
    new body's root. The pass dumps keep the three at indices 3, 4, 5."""
    before, after = _pair("seq2seq_two_scans")
    result = diff_modules(before, after)
    by_name = {i.name: i for i in after.entry_computation.instructions}
    for name, k in (("while.40", 3), ("while.41", 4), ("while.42", 5)):
        a = by_name[result.fate_of("main.23", name).after]
        assert a.opcode == "get-tuple-element" and a.index == k, (name, a.name, a.index)


def test_loop_rebuilt_by_licm_back_to_the_same_arity_is_still_rebuilt():
    """seq2seq_two_scans: loop-invariant code motion rebuilds the backward scans
    (``wide.region_7.8_spmd``, one more s32[] element) and the while-loop simplifier drops
    the element again, so the final loop state has the arity of the one before, each element
    a per-device piece of the old one. The body's instructions were still recreated by the
    loop passes (the pass dumps: rewritten at while-loop-invariant-code-motion), not only
    partitioned."""
    before, after = _pair("seq2seq_two_scans")
    entry = before.entry_computation
    w = entry["while.51"]
    body = w.called["body"][0]
    loops = [i for i in after.entry_computation.instructions if i.opcode == "while"
             and i.called["body"][0].startswith("wide.wide.region_7.")]
    # the premise: a loop pass's name, the same arity as before
    assert len(loops) == 1 and _arity(loops[0].shape) == _arity(w.shape) == 9
    result = diff_modules(before, after)
    for name in ("get-tuple-element.129", "add.11", "get-tuple-element.137", "sub.15"):
        rec = result.fate_of(body, name)
        assert rec.fate == "rewritten" and "while loop rebuilt" in (rec.reason or ""), \
            (name, rec)


def test_layers_told_apart_by_their_callers_frame():
    """remat_nested_layers: the LayerNorm multiply of the layer at two:392 (``mul.126``,
    frame 50) and of the one at two:393 (``mul.134``, frame 58) share op_name and the
    innermost frame (_ln:25). The Shardy round trip rebuilds the stack-frame table but keeps
    each chain (after: frames 13 and 25, under two:392 and two:393), so the caller's frame
    tells the layers apart: each lives in the fusion carrying its own chain."""
    before, after = _pair("remat_nested_layers")
    t = after.tables

    def caller_line(inst) -> int:
        return t.stack(inst.metadata.stack_frame_id)[2][2]

    fusions = {i.name: i for i in after.entry_computation.instructions
               if i.name.startswith("bitcast_bitcast_fusion.")}
    # the premise: the innermost frames of the two layers are the same line
    b = before.entry_computation
    sb = [before.tables.stack(b[n].metadata.stack_frame_id) for n in ("mul.126", "mul.134")]
    assert sb[0][0] == sb[1][0] and sb[0][2][2] != sb[1][2][2]
    result = diff_modules(before, after)
    for name, want in (("mul.126", sb[0][2][2]), ("mul.127", sb[0][2][2]),
                       ("mul.134", sb[1][2][2]), ("mul.135", sb[1][2][2])):
        rec = result.fate_of(b.name, name)
        got = rec.fusion or rec.after
        assert got in fusions and caller_line(fusions[got]) == want, (name, rec)


def test_transpose_folded_into_the_partitioners_dot_is_kept():
    """mlp_transposed: the partitioner renames ``dot_general.4`` (which reads ``transpose.4``
    of ``tanh.1``) to ``dot.1``; transpose folding then makes ``dot.1`` read tanh directly
    (lhs_contracting_dims {1} -> {0}) under the same name, kept to the end. On one device
    the same dot is "kept"; partitioned it is too, not "rewritten"."""
    before, after = _pair("mlp_transposed")
    e = before.entry_computation
    assert e["dot_general.4"].operands[0] == "transpose.4"
    a = after.entry_computation["dot.1"]
    assert a.opcode == "dot" and a.operands[0] == "wrapped_tanh"
    rec = diff_modules(before, after).fate_of(e.name, "dot_general.4")
    assert rec.fate == "kept" and rec.after == "dot.1", rec


def test_partitioned_square_dot_in_its_own_order_is_not_a_transposed_rebuild():
    """zoo mlp_deep (fixtures/sharded_passes): ``dot_general.19 = f32[128,128]
    dot(select_n.4, jit_relu_.3)`` is read only by ``transpose.6``. The partitioner's
    ``dot.8`` (renamed, square, so it has the transposed shape too) reads the same values in
    the same order with the same dimension numbers and lives on to the end: the dot itself,
    not algsimp's ``dot(b, a)`` for ``transpose(dot(a, b))``."""
    d = D.parent / "sharded_passes" / "mlp_deep"
    before = hlodiff.load(next(d.glob("*before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    e = before.entry_computation
    assert e["transpose.6"].operands == ["dot_general.19"]
    rec = diff_modules(before, after).fate_of(e.name, "dot_general.19")
    assert rec.fate == "kept" and rec.after == "dot.8", rec


def test_literals_merged_by_the_shardy_round_trip_before_folding():
    """ensemble_vmap: jnp.var's literal ``f32[] constant(5)`` is inlined several times
    (dump 0003, after the call inliner: ``constant.1``, ``.3``, ``.8``, ``.32``); the Shardy
    round trip's import keeps one (dump 0004: ``constant.11``) before any constant folding.
    The copies are merged, not "read only by values constant folding evaluated"."""
    d = D / "ensemble_vmap"
    snaps = sorted(d.glob("*.00*.txt"))
    lits = [sum(1 for c in hlodiff.load(p).computations for i in c.instructions
                if i.opcode == "constant" and str(i.shape) == "f32[]" and i.literal == "5")
            for p in snaps]
    assert lits == [4, 1], lits  # the premise, read from the pass dumps
    before, after = _pair("ensemble_vmap")
    res = diff_modules(before, after)
    for comp, name in (("_var.6", "constant.19"), ("_var.6", "constant.17")):
        rec = res.fate_of(comp, name)
        assert rec.fate == "merged" and "Shardy" in rec.reason, (name, rec)


def test_operands_first_puts_every_node_after_its_operands():
    """A node pushed by one user and still waiting in the stack must come out before any
    other user that reaches it first (a DAG where the walk from ``d`` pushes ``a`` and
    ``c``, and ``c`` reads ``a`` too)."""
    from types import SimpleNamespace

    from hlodiff.diff.view import operands_first

    ops = {0: [3, 1], 1: [3, 2], 2: [3], 3: []}  # d=0 reads a=3 and c=1; c reads a, b=2
    nodes = [SimpleNamespace(idx=i, alias=-1, operands=o) for i, o in ops.items()]
    order = list(operands_first(nodes))
    assert sorted(order) == [0, 1, 2, 3]
    pos = {i: k for k, i in enumerate(order)}
    assert all(pos[o] < pos[i] for i, o_ in ops.items() for o in o_), order


def test_identical_inlined_chains_share_a_fingerprint_and_are_merged():
    """kl_distillation: ``softmax(t / T)`` in the entry and the inlined ``log_softmax(t / T)``
    compute the same ``exp(x - max)`` and its sum (``exp.5``/``exp.2``,
    ``reduce_sum.60``/``reduce_sum.14``); the partitioner's cleanup CSE merges the copies
    (the oracle: merged at cse). Their subgraph fingerprints must agree."""
    from hlodiff.diff.view import before_view

    before, after = _pair("kl_distillation")
    v = before_view(before)
    by = {(n.comp, n.name): n for n in v.nodes}
    main = before.entry_computation.name
    for x, y in ((("log_softmax.6", "exp.2"), (main, "exp.5")),
                 (("log_softmax.6", "reduce_sum.14"), (main, "reduce_sum.60"))):
        assert by[x].fp == by[y].fp, (x, y)
    res = diff_modules(before, after)
    for name in ("exp.2", "reduce_sum.14"):
        rec = res.fate_of("log_softmax.6", name)
        assert rec.fate == "merged", (name, rec)


def test_element_only_passed_to_the_next_remat_region_is_forwarded():
    """remat_nested_layers: ``remat2.56`` (element 2 of the barrier ``remat2.53``) is read
    only by the next region's tuple ``remat2.72``, which feeds another barrier. Once the
    barriers are expanded, the tuple simplifier (post order: the element before its users)
    replaces ``remat2.56`` by the tuple's operand, the parameter ``a[0][2]['b']``, in
    ``remat2.72``, then forwards ``remat2.72``'s readers to it: rewritten, its value in that
    parameter, not removed as dead code (tuplefwd.py has the dumps' evidence)."""
    before, after = _pair("remat_nested_layers")
    e = before.entry_computation
    users = [i for i in e.instructions if "remat2.56" in i.operands]
    assert [u.name for u in users] == ["remat2.72"] and users[0].opcode == "tuple"
    assert {i.opcode for i in e.instructions if "remat2.72" in i.operands} == {"opt-barrier"}
    res = diff_modules(before, after)
    rec = res.fate_of(e.name, "remat2.56")
    assert rec.fate == "rewritten", rec
    p = after.entry_computation[rec.after]
    assert p.opcode == "parameter" and p.metadata.op_name == "a[0][2]['b']", p


def test_oracle_forwards_an_element_whose_user_goes_in_the_same_pass():
    """The 8-device dumps 0032 -> 0033 (tuple-simplifier): ``get-tuple-element.6 =
    get-tuple-element(tuple.2), index=5`` is read only by the nested checkpoint's
    ``tuple.3``, which the same pass takes apart. Its value is ``tuple.2``'s operand 5,
    ``param.11``, which ``tuple.3``'s readers read after the pass. The oracle said "removed"
    (no replacement found in users that went too); and ``tuple.2``, one of whose readers it
    was, "removed" instead of taken apart."""
    snaps = [s for s in find_pass_dumps(D / "remat_nested_layers", "jit_remat_nested_layers")
             if s.index in (32, 33)]
    assert [s.after_pass for s in snaps] == ["cse_barrier_expander", "tuple-simplifier"]
    t = trace(snaps, hlodiff.load(snaps[0].path))
    assert t.chain("get-tuple-element.6")[0] == ("rewritten", "tuple-simplifier", "param.11")
    assert t.chain("get-tuple-element.5")[0] == ("rewritten", "tuple-simplifier", "reshape.112")
    assert t.fate_of("tuple.2")[0] == "rewritten"


def test_scalar_broadcast_to_one_element_per_device_is_folded():
    """diffusion_timestep_loss: ``broadcast.8 = s32[8] broadcast(constant.14)`` (50) is one
    element per device. The pass dumps: algsimp makes it ``s32[1] reshape(constant)`` and
    constant folding evaluates that into ``s32[1] constant({50})``, which the kernels copy.
    The scalar was consumed by folding, not "simplified away". ``constant.13`` (1), whose
    own broadcast goes the same way, is merged by the Shardy round trip with silu's ``1``,
    which lives on in kernels: fused, not folded."""
    before, after = _pair("diffusion_timestep_loss")
    e = before.entry_computation
    assert e["broadcast.8"].operands == ["constant.14"] and e["broadcast.8"].shape.num_elements == 8
    res = diff_modules(before, after)
    for name, value in (("constant.14", "{50}"), ("constant.15", "{0}")):
        rec = res.fate_of(e.name, name)
        assert rec.fate == "folded", (name, rec)
        c = next(i for comp in after.computations for i in comp.instructions
                 if i.name == rec.after)
        assert c.opcode == "constant" and c.literal == value and c.shape.num_elements == 1, c
    assert res.fate_of(e.name, "constant.13").fate == "fused"


def test_mean_scale_folded_not_kept_as_the_forward_reciprocal():
    """diffusion_timestep_loss: the loss's mean divides by 80 forward, which algsimp makes
    ``x * 0.0125`` with a new top-level ``constant.32``; the gradient's ``constant.11 =
    0.0125`` is regrouped with the ``2`` of the square and folded into 0.025 (pass dump
    0015). The same-valued ``constant.32`` is read only by the forward multiply, not by the
    partner of constant.11's reader: a look-alike, not constant.11 kept."""
    before, after = _pair("diffusion_timestep_loss")
    e = before.entry_computation
    assert after.entry_computation["constant.32"].literal == e["constant.11"].literal
    rec = diff_modules(before, after).fate_of(e.name, "constant.11")
    assert rec.fate == "folded" and rec.after != "constant.32", rec


def test_constant_regrouped_with_an_iota_product_is_folded():
    """diffusion_timestep_loss: ``div.4 = (float(iota) * broadcast(constant.17)) / 8``.
    algsimp regroups it as ``float(iota) * (constant.17 * 0.125)`` and constant folding
    evaluates the product (pass dump 0015: ``multiply(constant.3.clone, constant.31)``
    becomes ``constant(-0.863469422)``). A value computed from an iota is no constant to the
    folder, so the chain is regrouped; constant.17 is folded, not fused as the product."""
    before, after = _pair("diffusion_timestep_loss")
    e = before.entry_computation
    assert e["mul.29"].operands == ["convert_element_type.2", "broadcast.11"]
    assert e["convert_element_type.2"].operands == ["iota.1"]
    rec = diff_modules(before, after).fate_of(e.name, "constant.17")
    assert rec.fate == "folded", rec


def test_round_trip_keeps_one_constant_per_computation():
    """viterbi_decode_scan, dumps 0003 -> 0004 (shardy-xla): the round trip renames every
    computation and keeps one ``s32[] constant(0)`` per computation. The entry's
    ``constant.47`` (the first of its zeros) becomes the entry's ``constant.59``, and its
    ``constant.45`` and ``constant.44`` are merged into it; they are not renamed into the
    first loop body's ``constant.49`` (whose state the round trip also reordered)."""
    snaps = [s for s in find_pass_dumps(D / "viterbi_decode_scan", "jit_viterbi_decode_scan")
             if s.index in (3, 4)]
    assert [s.after_pass for s in snaps] == ["call-inliner", "shardy-xla"]
    t = trace(snaps, hlodiff.load(snaps[0].path))
    cur = hlodiff.load(snaps[1].path)
    where = {i.name: c for c in cur.computations for i in c.instructions}
    assert where["constant.59"].is_entry and not where["constant.49"].is_entry
    assert t.info("constant.47").final_name == "constant.59", t.info("constant.47").history
    for name in ("constant.45", "constant.44"):
        assert t.chain(name)[0] == ("merged", "shardy-xla", "constant.59"), (name, t.chain(name))


def test_reshape_of_a_merged_partial_reduce_lives_in_its_own_all_reduce():
    """batchnorm_running_stats: ``reduce_sum.21`` (in ``_var``) and ``reduce_sum.58`` are
    the same per-device partial sum, each summed by an all-reduce of its own. CSE, which
    runs after the partitioner, merges the reduces, never the all-reduces (each has its
    own channel). ``broadcast_in_dim.4 = reshape(reduce_sum.21)`` is the sum: it lives in
    the all-reduce that carries ``_var``'s op_name, not in the partial's kernel."""
    before, after = _pair("batchnorm_running_stats")
    assert before.by_name["_var.5"]["broadcast_in_dim.4"].operands == ["reduce_sum.21"]
    rec = diff_modules(before, after).fate_of("_var.5", "broadcast_in_dim.4")
    a = after.entry_computation[rec.after]
    assert a.opcode == "all-reduce" and a.metadata.op_name.endswith("jvp(jit(_var))/reduce_sum"), a


def test_fused_copy_carrying_the_constants_name_is_no_lookalike():
    """H100 mlp_mixer (fixtures/cpu8/gpu_mlp_mixer): ``constant.35`` sits in a chain the
    regrouping rule matches, and its same-valued copy ``constant_35_5`` lives in a fusion
    and carries its name. The top-level look-alike check (the forward 1/N) must not
    override that: the pass dumps have it fused (priority-fusion), not folded."""
    d = D / "gpu_mlp_mixer"
    before = hlodiff.load(next(d.glob("*before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    rec = diff_modules(before, after).fate_of(before.entry_computation.name, "constant.35")
    assert rec.fate == "fused" and rec.after == "constant_35_5", rec
