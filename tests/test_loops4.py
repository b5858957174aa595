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
