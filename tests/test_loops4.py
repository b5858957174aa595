"""Fates in rebuilt while loops (issue 9, loops4): fixtures/loops4 (generate_loops4.py)."""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules

D = Path(__file__).resolve().parent.parent / "fixtures" / "loops4"


def _pair(name: str):
    d = D / name
    return (hlodiff.load(next(d.glob("*before_optimizations.txt"))),
            hlodiff.load(next(d.glob("*cpu_after_optimizations.txt"))))


def test_loop_rebuilt_without_metadata_is_paired_by_its_condition():
    """JAX 0.4.30's while-loop simplifier rebuilds the fori loop of ring_buffer_fori on a
    narrower state and the new while carries no metadata; its cloned condition keeps the
    root's op_name and line. The before loop pairs with it, and the instructions of the
    body that read the loop state are "rewritten" (the loop was rebuilt), not "unchanged"."""
    before, after = _pair("old_ring_buffer_fori")
    entry = before.entry_computation
    loops = [i for i in after.entry_computation.instructions if i.opcode == "while"]
    # the premise: one loop after, without metadata, on a narrower state tuple
    assert len(loops) == 1 and loops[0].metadata is None
    w = entry["while.112"]
    assert len(w.shape.tuple_shapes) == 6 and len(loops[0].shape.tuple_shapes) == 5
    cond_b = before.computation(w.called["condition"][0])
    cond_a = after.computation(loops[0].called["condition"][0])
    rb, ra = cond_b[cond_b.root], cond_a[cond_a.root]
    assert rb.metadata.op_name == ra.metadata.op_name
    result = diff_modules(before, after)
    rec = result.fate_of(entry.name, "while.112")
    assert rec.fate == "rewritten" and rec.after == loops[0].name, rec
    body = w.called["body"][0]
    for comp, name in ((body, "get-tuple-element.93"), (body, "get-tuple-element.90"),
                       ("None.51", "dot.69"), ("None.51", "add.63")):
        rec = result.fate_of(comp, name)
        assert rec.fate == "rewritten" and "while loop rebuilt" in (rec.reason or ""), \
            (name, rec)


def test_unused_loop_results_are_removed_not_rewritten():
    """ring_buffer_fori (jax 0.10.2) reads two of the loop's six results; the other
    get-tuple-elements (``while.8``, ``while.9``: the counters) are dead code, which DCE
    deletes. They carry the loop's op_name, as does much of what XLA builds around the
    loop (the init tuple, a dot): they must not be paired with one of those."""
    before, after = _pair("cpu_ring_buffer_fori")
    entry = before.entry_computation
    users = {o for i in entry.instructions for o in i.operands}
    result = diff_modules(before, after)
    for name in ("while.8", "while.9"):
        assert entry[name].opcode == "get-tuple-element" and name not in users
        rec = result.fate_of(entry.name, name)
        assert rec.fate == "removed", (name, rec)
    for name in ("while.10", "while.11"):  # the results the program returns
        rec = result.fate_of(entry.name, name)
        assert rec.fate == "kept", (name, rec)


def _step(name: str):
    """The oracle's view of one pass: the two consecutive snapshots of ``name``."""
    from hlodiff.dumps.loader import load
    from hlodiff.dumps.passes import trace
    from hlodiff.dumps.passfiles import parse_pass_filename

    f0, f1 = sorted((D / name).glob("*.txt"))
    prev, cur = load(f0), load(f1)
    ptop = {i.name: i for c in prev.computations for i in c.instructions}
    ctop = {i.name: i for c in cur.computations for i in c.instructions}
    return f1, ptop, ctop, trace([parse_pass_filename(f1)], before=prev)


def test_oracle_follows_a_loop_wrapped_in_a_call_to_the_loop():
    """XLA:CPU's small-while-loop-hoisting (ring_buffer_fori, dump 0046 -> 0047) replaces
    ``%while.4 = while(%tuple.23)`` by ``%call.2 = call(%tuple.23)`` whose computation's root
    is ``%while.5``, the same loop (same condition and body) on the call's parameter. The
    loop's value is computed by while.5; the call only hands it on."""
    f1, ptop, ctop, tr = _step("cpu_ring_buffer_fori_0046")
    assert "small-while-loop-hoisting" in f1.name
    old, new = ptop["while.4"], ctop["while.5"]
    assert "while.4" not in ctop and old.calls == new.calls
    assert ctop["call.2"].opcode == "call" and ctop["call.2"].operands == old.operands
    f = tr.info("while.4")
    assert f.fate == "rewritten" and tr.destinations("while.4") == ["while.5"], f


def test_oracle_follows_a_loop_cloned_with_its_enclosing_body():
    """while-loop-invariant-code-motion rebuilds kalman_filter_scan's scan (dump 0010 ->
    0011) and clones its body, which holds the LU pivoting loop: ``%while.4 =
    while(%while.3), condition=%region_4.6, body=%region_1.5`` comes back as ``%while.12 =
    while(%while.11)`` with the same condition, body and op_name. Its users now read a
    get-tuple-element of the clone (``%while.13``); the loop is while.12."""
    f1, ptop, ctop, tr = _step("cpu_kalman_filter_scan_0010")
    assert "while-loop-invariant-code-motion" in f1.name
    old, new = ptop["while.4"], ctop["while.12"]
    assert "while.4" not in ctop and old.calls == new.calls
    assert old.metadata.op_name == new.metadata.op_name
    f = tr.info("while.4")
    assert f.fate == "rewritten" and tr.destinations("while.4") == ["while.12"], f


def test_oracle_follows_a_forwarded_loop_result_to_the_loops_element():
    """gru_scan cpu8, dump 0019 -> 0020 (algsimp): the narrowed forward loop's results are
    read through ``%tuple.29``, a tuple of its elements (``%get-tuple-element.702 =
    get-tuple-element(%while.50), index=2``). algsimp forwards ``%get-tuple-element.481 =
    get-tuple-element(%tuple.29), index=2`` and rebuilds the next loop's init tuple on a
    new ``%get-tuple-element.929 = get-tuple-element(%while.50), index=2``. The value is
    that element, not the loop (which the users' replacement gave)."""
    f1, ptop, ctop, tr = _step("cpu8_gru_scan_0019")
    assert "algsimp" in f1.name
    t = ptop[ptop["get-tuple-element.481"].operands[0]]
    assert t.opcode == "tuple" and t.operands[2] == "get-tuple-element.702"
    assert ptop["get-tuple-element.702"].operands == ["while.50"]
    new = ctop["get-tuple-element.929"]
    assert new.operands == ["while.50"] and new.index == 2
    for name in ("get-tuple-element.481", "get-tuple-element.702"):
        assert name not in ctop
        f = tr.info(name)
        assert f.fate == "rewritten" and tr.destinations(name) == ["get-tuple-element.929"], \
            (name, f, tr.destinations(name))


def test_oracle_follows_a_cloned_bodys_constants_into_the_clone():
    """kalman_filter_scan (JAX 0.4.30), dump 0010 -> 0011: while-loop-invariant-code-motion
    rebuilds the scan body ``region_0.218`` as ``wide.region_0.218`` with the same four
    ``s32[] constant(0)``, while the inner loops' bodies (``while_body.2``, ``.3``) lose
    eight identical constants in the same pass. Each constant of the clone is a renamed
    copy of one of region_0.218's, not of another body's: region_0.218's constants live
    on in the clone."""
    from hlodiff.dumps.loopstate import lineage

    f1, ptop, ctop, tr = _step("old_kalman_filter_scan_0010")
    assert "while-loop-invariant-code-motion" in f1.name
    assert lineage("wide.region_0.218") == lineage("region_0.218.clone.clone") == "region_0.218"
    zeros = [n for n, i in ptop.items() if i.opcode == "constant" and i.literal == "0"
             and i.shape.text == "s32[]" and i.computation == "region_0.218"]
    new = [n for n, i in ctop.items() if i.opcode == "constant" and i.literal == "0"
           and i.shape.text == "s32[]" and i.computation == "wide.region_0.218"]
    assert len(zeros) == len(new) == 4 and "constant.235" in zeros
    assert not any(n in ctop for n in zeros)
    step = tr.passes[0]
    assert sorted(step.renamed[n] for n in zeros) == sorted(new)
    for n in zeros:
        assert tr.info(n).fate == "kept", (n, tr.info(n))


def test_oracle_follows_a_rebuilt_loops_init_tuple_to_the_new_init_tuple():
    """switch_in_scan (jax 0.10.2), dumps 0009 -> 0010 -> 0011: WLICM replaces
    ``%while.6 = while(%while.5)`` (``%while.5`` is the init tuple) by ``%while =
    while(%tuple.14)``; then the while-loop simplifier drops an invariant element and
    replaces the loop by ``%while.1 = while(%tuple.16)``, leaving tuple.14 behind, read only
    by ``get-tuple-element(%tuple.14), index=5``. The loop's initial state is in the new
    init tuples, not in the loop (where the users' replacement led)."""
    from hlodiff.dumps.loader import load
    from hlodiff.dumps.passes import trace
    from hlodiff.dumps.passfiles import parse_pass_filename

    f9, f10, f11 = sorted((D / "cpu_switch_in_scan_0009").glob("*.txt"))
    s10, s11 = load(f10), load(f11)
    e10, e11 = s10.entry_computation, s11.entry_computation
    assert e10["while"].operands == ["tuple.14"] and e11["while.1"].operands == ["tuple.16"]
    assert {i.opcode for i in e11.instructions if "tuple.14" in i.operands} == \
        {"get-tuple-element"}
    tr = trace([parse_pass_filename(f) for f in (f10, f11)], before=load(f9))
    line = tr.chain("while.5")
    assert [x[2] for x in line[:2]] == ["tuple.14", "tuple.16"], line
    assert tr.destinations("while.5") == ["tuple.16"], tr.destinations("while.5")


def test_loop_bodies_the_partitioner_renamed_were_not_rebuilt():
    """gru_scan on 8 H100s: the SPMD partitioner renames the scan's body ``region_3.11`` to
    ``region_3.4_spmd`` (the Shardy round trip renumbers it); no loop pass rebuilt the loop
    (no ``wide.``/``.clone`` name), and the oracle keeps its body's instructions. They are
    not "rewritten: while loop rebuilt"."""
    from hlodiff.diff.loop_pairs import renamed_by_loop_pass

    d = D / "gpu8_gru_scan"
    before = hlodiff.load(next(d.glob("*before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    bodies = sorted(c for i in after.instructions() if i.opcode == "while"
                    for c in i.called["body"])
    assert "region_3.4_spmd" in bodies
    assert not renamed_by_loop_pass("region_3.11", "region_3.4_spmd", 8)
    assert renamed_by_loop_pass("region_3.4_spmd", "wide.region_3.4_spmd.clone", 8)
    assert renamed_by_loop_pass("region_3.11", "region_3.12", 1)
    result = diff_modules(before, after)
    body = [f for f in result.instructions if f.computation == "region_3.11"]
    assert len(body) > 20
    rebuilt = [f.before for f in body if "while loop rebuilt" in (f.reason or "")]
    assert not rebuilt, rebuilt
    kept = [f for f in body if f.fate == "kept"]
    assert len(kept) >= 15, len(kept)


def test_oracle_pairs_a_clones_identical_constants_by_their_users():
    """ring_buffer_fori (JAX 0.4.30), dump 0025 -> 0026: the while-loop simplifier clones
    the body and drops a state element. The old body holds six ``s32[] constant(0)``, the
    clone five; the one it dropped, ``constant.4.clone.1``, was read only by the root tuple,
    the other five by compares, dynamic slices and maxima. Each clone constant is a copy of
    an original read the same way; ``constant.88`` (read by two compares) lives on."""
    f1, ptop, ctop, tr = _step("old_ring_buffer_fori_0025")
    assert "simplify-while-loops" in f1.name
    body = "wide.region_0.87.clone.clone.clone.clone"
    zeros = [n for n, i in ptop.items() if i.opcode == "constant" and i.literal == "0"
             and i.shape.text == "s32[]" and i.computation == body]
    assert len(zeros) == 6 and "constant.4.clone.1" in zeros and "constant.88" in zeros
    assert {u.opcode for u in ptop.values() if "constant.4.clone.1" in u.operands} == {"tuple"}
    step = tr.passes[0]
    assert "constant.4.clone.1" not in step.renamed
    for n in zeros:
        if n != "constant.4.clone.1":
            assert n in step.renamed and tr.info(n).fate == "kept", (n, tr.info(n))


def test_get_tuple_element_of_a_call_handing_back_loop_state_is_kept():
    """rk4_ode_fori (jax 0.10.2): the scan body calls ``closed_call.14`` and reads its
    element 1 as ``%closed_call.16``; the callee hands back its parameter's element, which
    the caller passed as ``%get-tuple-element.16 = get-tuple-element(%arg_tuple.1),
    index=1``. After inlining, algsimp keeps closed_call.16 reading the loop state directly
    (pass dump 0009: ``%closed_call.16 = get-tuple-element(%arg_tuple.1), index=1``, .16
    gone); it lives on as the final get-tuple-element of index 1 (copy insertion renames it
    ``get-tuple-element.290``), not "simplified away"."""
    before, after = _pair("cpu_rk4_ode_fori")
    body = before.computation("region_0.3")
    assert body["closed_call.16"].operands == ["closed_call.14"]
    assert body["closed_call.14"].opcode == "call"
    assert body["get-tuple-element.16"].index == 1
    result = diff_modules(before, after)
    rec = result.fate_of("region_0.3", "closed_call.16")
    assert rec.fate == "kept" and rec.after == "get-tuple-element.290", rec
    rec = result.fate_of("region_0.3", "get-tuple-element.16")
    assert rec.fate == "kept" and rec.after == "get-tuple-element.290", rec


def test_reverse_scan_index_constant_is_folded_with_the_other_constant():
    """A reverse scan reads x[N - 1 - i]: rk4_ode_fori's backward loop computes ``%sub.18 =
    subtract(%constant.38, i)`` (10) and ``%sub.19 = subtract(%sub.18, %constant.37)`` (1).
    algsimp regroups the integer chain as ``(10 - 1) - i``; the loop passes hoist ``10 +
    -1`` out of the body and constant folding evaluates it (dump 0018: ``%constant.146 =
    s32[] constant(9)``). constant.38 is folded, not a constant fused into a kernel; 1 is
    still read by ``i + 1`` and is kept."""
    before, after = _pair("cpu_rk4_ode_fori")
    body = before.computation("region_3.8")
    assert body["sub.18"].operands[0] == "constant.38" and body["constant.38"].literal == "10"
    assert body["sub.19"].operands == ["sub.18", "constant.37"]
    result = diff_modules(before, after)
    rec = result.fate_of("region_3.8", "constant.38")
    assert rec.fate == "folded", rec
    assert result.fate_of("region_3.8", "constant.37").fate != "folded"


def test_constants_sharing_an_inlined_calls_op_name_pair_by_literal():
    """stochastic_round_grads (jax 0.10.2): ``threefry2x32.4`` is inlined under the op_name
    ``jit(_threefry_split)/stochastic_round_grads.<locals>.step``; its loop's init
    ``constant.25 = s32[] constant(0)`` shares that op_name and frame with the loop's own
    s32[] constants (the condition's bound, the body's step), which the call inliner also
    prefixes. The final module keeps ``constant.18 = s32[] constant(0)`` with the op_name:
    that is constant.25, kept (the oracle: kept as constant.18)."""
    before, after = _pair("cpu_stochastic_round_grads")
    c = before.computation("threefry2x32.4")["constant.25"]
    assert c.literal == "0" and c.metadata is None
    final = after.entry_computation["constant.18"]
    assert final.literal == "0" and "_threefry_split" in final.metadata.op_name
    result = diff_modules(before, after)
    rec = result.fate_of("threefry2x32.4", "constant.25")
    assert rec.fate == "kept" and rec.after == "constant.18", rec
