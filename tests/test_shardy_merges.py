"""The oracle over the Shardy round trip of a partitioned program (issue 9).

Fixture: fixtures/shardy_merges/performer_favor_causal_lm (fixtures/generate_shardy_merges.py:
pass snapshots 0003/0004 of benchmarks/zoo_fresh13_programs.py on 8 CPU devices, unedited).
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.dumps.passes import find_pass_dumps, trace

D = Path(__file__).resolve().parent.parent / "fixtures" / "shardy_merges" / "performer_favor_causal_lm"


def test_round_trip_merges_identical_broadcasts_of_a_computed_value():
    """Dump 0003 -> 0004 (shardy-xla): Adam's bias correction ``div.143 = f32[16]
    broadcast(sub.114)`` is gone and its reader ``div.144`` now reads ``div.11``, the round
    trip's name for the identical ``div.138``: merged into it, not rewritten."""
    t = trace(find_pass_dumps(D, "jit_performer_favor_causal_lm"))
    step = next(s for s in t.passes if s.name == "shardy-xla")
    got = {r.name: (r.fate, r.into) for r in step.removed}
    assert got["div.143"] == ("merged", step.renamed.get("div.138", "div.138")), got["div.143"]
    assert got["div.145"][0] == "merged"
