"""Fates in and around while loops (issue 9, loops3): fixtures/cpu2 (generate_cpu2.py), fixtures/loops3."""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules

D = Path(__file__).resolve().parent.parent / "fixtures" / "cpu2" / "rnn_bidirectional"


def test_loops_with_the_same_init_but_different_bodies_are_not_cse_copies():
    """A bidirectional RNN runs two scans on the same init tuple (zeros and the same two
    weight slices) with different bodies (forward and reverse). XLA's CSE compares called
    computations, so the loops and their get-tuple-elements are not merged: the after
    module still holds both forward loops. The engine must not call one loop's results
    "identical (CSE)" to the other's."""
    before = hlodiff.load(next(D.glob("*before_optimizations.txt")))
    after = hlodiff.load(next(D.glob("*cpu_after_optimizations.txt")))
    entry = before.entry_computation
    w1, w2 = entry["while.27"], entry["while.35"]
    # the premise: the init tuples read the same values, the bodies differ
    t1, t2 = entry[w1.operands[0]], entry[w2.operands[0]]
    same = [entry[a].attrs.get("slice") == entry[b].attrs.get("slice") and
            entry[a].operands == entry[b].operands if a != b else True
            for a, b in zip(t1.operands, t2.operands)]
    assert all(same), same
    bodies = [before.computation(w.called["body"][0]) for w in (w1, w2)]
    assert sorted(i.opcode for i in bodies[0].instructions) != \
        sorted(i.opcode for i in bodies[1].instructions)
    loops = [i for c in after.computations if c.is_entry for i in c.instructions
             if i.opcode == "while"]
    assert len(loops) == 4  # two forward scans, two transposed ones
    result = diff_modules(before, after)
    for name in ("while.31", "while.32", "while.33", "while.39", "while.50"):
        rec = result.fate_of(entry.name, name)
        assert rec.fate != "merged", (name, rec)
    for name in ("while.31", "while.32", "while.33"):
        rec = result.fate_of(entry.name, name)
        assert rec.fate == "kept", (name, rec)


def test_oracle_keeps_loop_results_at_their_tuple_index_across_partitioning():
    """The Shardy round trip and the SPMD partitioner rename a loop's get-tuple-elements
    (lstm_clip_scan cpu8: ``while.31``, index 3 of ``while.27``, comes back as ``while.5``
    and then ``get-tuple-element.208``, both index 3); all share the loop's op_name and
    read the same loop. Followed by op_name and operands alone, the results traded places
    (``while.31`` ended on index 15). A renamed element keeps its index."""
    from hlodiff.dumps.loader import load
    from hlodiff.dumps.passes import trace_directory

    d = D.parent.parent / "loops3" / "lstm_clip_scan_cpu8"
    tr = trace_directory(d)
    last = load(next(d.glob("*spmd-cleanup.after_pipeline-start*")))
    top = {i.name: i for c in last.computations for i in c.instructions}
    entry = tr.before.entry_computation
    seen = 0
    for i in entry.instructions:
        if i.opcode != "get-tuple-element" or entry[i.operands[0]].opcode != "while":
            continue
        f = tr.fates[i.name]
        if f.fate != "kept":
            continue
        a = top[f.final_name]
        assert a.opcode == "get-tuple-element" and a.index == i.index, (i.name, f, a.name)
        seen += 1
    assert seen >= 10


def test_oracle_follows_a_loop_result_into_the_rebuilt_loop():
    """WLICM rebuilds lstm_clip_scan's forward loop (cpu8 dumps 0016 -> 0017: ``while.52``
    -> ``while.54``) and reads its results through new get-tuple-elements
    (``get-tuple-element.218``, index 4 -> ``get-tuple-element.392``, index 4). The old
    element's only user, the next loop's init tuple, was rebuilt in the same pass, so
    "what took its place in its users" found nothing and the oracle followed the value
    into the *next* loop (while.55). The new element of the same index holds it."""
    from hlodiff.dumps.loader import load
    from hlodiff.dumps.passes import trace
    from hlodiff.dumps.passfiles import parse_pass_filename

    d = D.parent.parent / "loops3" / "lstm_clip_scan_cpu8_wlicm"
    f16, f17 = sorted(d.glob("*.txt"))
    assert "while-loop-invariant-code-motion" in f17.name
    prev, cur = load(f16), load(f17)
    ptop = {i.name: i for c in prev.computations for i in c.instructions}
    ctop = {i.name: i for c in cur.computations for i in c.instructions}
    # the premise: the loop was rebuilt, the element re-read at the same index
    assert "while.52" in ptop and "while.52" not in ctop
    old, new = ptop["get-tuple-element.218"], ctop["get-tuple-element.392"]
    assert "get-tuple-element.218" not in ctop and old.index == new.index == 4
    assert ctop[new.operands[0]].opcode == "while" and new.operands[0] not in ptop
    assert old.metadata.op_name == new.metadata.op_name == ctop[new.operands[0]].metadata.op_name
    tr = trace([parse_pass_filename(f17)], before=prev)
    for name in ("get-tuple-element.218", "get-tuple-element.214"):
        f = tr.info(name)
        assert f.fate == "rewritten", (name, f)
        dest = tr.destinations(name)
        assert dest[0].startswith("get-tuple-element."), (name, dest)
        assert ctop[dest[0]].index == ptop[name].index, (name, dest)
        assert "while.55" not in dest, (name, dest)


def test_loop_results_pair_by_tuple_index():
    """Sharded scans: the loop's results are get-tuple-elements of the same shape and op_name
    (several f32[...] of one while). The partitioner keeps the loop state in its order, so
    when the two loops have the same arity each result pairs with the after element of
    the same index; before the fix, three of them were swapped among same-shape twins."""
    from hlodiff.diff.match import match
    from hlodiff.diff.view import after_view, before_view

    d = Path(__file__).resolve().parent.parent / "fixtures" / "loops3" / "lstm_clip_scan_cpu8"
    bv = before_view(hlodiff.load(next(d.glob("*before_optimizations.txt"))))
    av = after_view(hlodiff.load(next(d.glob("*cpu_after_optimizations.txt"))))
    m = match(bv, av)
    checked, swapped = 0, []
    for b in bv.nodes:
        a = m.partner(b.idx)
        if b.opcode != "get-tuple-element" or a is None or a.opcode != "get-tuple-element":
            continue
        bo, ao = bv.nodes[b.operands[0]], av.nodes[a.operands[0]]
        if bo.opcode != "while" or m.b2a[bo.idx] != ao.idx:
            continue
        if len(bo.inst.shape.tuple_shapes) != len(ao.inst.shape.tuple_shapes):
            continue
        checked += 1
        if b.inst.index != a.inst.index:
            swapped.append((b.name, b.inst.index, a.name, a.inst.index))
    assert checked >= 6, checked
    assert not swapped, swapped
