"""Computations called from several places (issue 9): XLA's flatten-call-graph keeps the
original at the first call site and clones it for the others; a dead first site's
instructions are removed by DCE, not inlined.

Fixture: fixtures/flat (written by fixtures/generate_flat.py; XLA's own dumps, jax 0.10.2).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules

FLAT = Path(__file__).resolve().parent.parent / "fixtures" / "flat" / "cpu" / "slogdet_flow"


def _diff():
    before = hlodiff.load(next(FLAT.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(FLAT.glob("*cpu_after_optimizations.txt")))
    return before, diff_modules(before, after)


def test_a_dead_first_call_sites_instructions_are_removed_and_the_clones_inlined():
    """The pass dumps: dump 0003 (after flatten-call-graph) calls ``closed_call.3`` from
    ``region_0.4`` and ``closed_call.3.clone`` from ``region_6.11``; ``add.12``, ``lt.8`` ...
    of ``closed_call.3`` disappear at DCE with the dead first loop. The second call's copy
    is inlined into its live loop."""
    _, r = _diff()
    by_site: dict = {}
    for f in r.instructions:
        if f.computation == "closed_call.3" and f.before in ("add.12", "lt.8", "select_n.8"):
            by_site.setdefault(f.call_site, {})[f.before] = f.fate
    assert set(by_site["closed_call.3"].values()) == {"removed"}, by_site
    assert set(by_site["closed_call.9"].values()) == {"inlined"}, by_site
