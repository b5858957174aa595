"""Fates of programs partitioned over 8 CPU devices (issue 9, helper cpu8): fixtures/cpu8
(copied unedited from the cpu8 dumps of the held-out program sets by generate_cpu8.py)."""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules

D = Path(__file__).resolve().parent.parent / "fixtures" / "cpu8"


def _pair(name: str):
    d = D / name
    return (hlodiff.load(next(d.glob("*before_optimizations.txt"))),
            hlodiff.load(next(d.glob("*cpu_after_optimizations.txt"))))


def _arity(shape) -> int:
    return len(shape.tuple_shapes)


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
