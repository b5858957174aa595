"""Loops the loop passes rebuilt without metadata, paired by their computations' names
(loop_pairs.pair_named_loops): XLA names a rebuilt loop's body and condition after the
ones it cloned (``wide.<body>``, ``<body>.clone``).

Fixture: fixtures/oldh2/old/matrix_expm_grad (written by fixtures/generate_oldh2.py; XLA's
own modules, JAX 0.4.30, CPU).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.diff.loop_pairs import pair_named_loops
from hlodiff.diff.match import match
from hlodiff.diff.view import after_view, before_view

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "oldh2" / "old" / "matrix_expm_grad"


def _modules():
    before = hlodiff.load(next(FIX.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(FIX.glob("*cpu_after_optimizations.txt")))
    return before, after


def _node(view, name):
    return next(n for n in view.nodes if n.name == name)


def test_a_metadata_less_rebuilt_loop_is_paired_by_its_computations_names():
    """while.126 (body=region_2.85) runs as the metadata-less while.28
    (body=wide.region_2.85.clone.clone.clone); its exit test is the same as other loops'."""
    before, after = _modules()
    B, A = before_view(before), after_view(after)
    m = match(B, A)
    w = _node(B, "while.126")
    assert A.nodes[m.b2a[w.idx]].name == "while.28"
    assert m.how[w.idx] == "loop computations"


def test_only_a_lineage_unique_on_both_sides_pairs():
    before, after = _modules()
    B, A = before_view(before), after_view(after)
    from hlodiff.diff.match import Matching
    m = Matching(B, A)
    assert pair_named_loops(m, partitioned=True) == 0  # renumbered computations: no pairs
    made = pair_named_loops(m, partitioned=False)
    assert made >= 1
    for b, how in m.how.items():
        a = A.nodes[m.b2a[b]]
        body = B.nodes[b].inst.called["body"][0]
        assert body in a.inst.called["body"][0]


def test_the_rebuilt_bodys_instructions_are_rewritten():
    """The pass dumps: dump 0013 (while-loop-invariant-code-motion) rebuilds region_2.85 as
    wide.region_2.85; its get-tuple-element.87 and the inlined add.70 and sign.41 go with
    it (rewritten), they were called unchanged or fused when the loop stayed unpaired."""
    before, after = _modules()
    r = diff_modules(before, after)
    fates = {f.before: f.fate for f in r.instructions
             if f.before in ("get-tuple-element.87", "add.70", "sign.41",
                             "get-tuple-element.102")}
    assert set(fates.values()) == {"rewritten"}, fates
