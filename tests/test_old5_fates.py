"""Fates and the pass-dump oracle under JAX 0.4.30 (old5 helper, issue 9).

Fixtures: fixtures/old5 (fixtures/generate_old5.py: unedited XLA dumps of
benchmarks/zoo_fresh5_programs.py and others, dumped with JAX 0.4.30).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

OLD5 = Path(__file__).resolve().parent.parent / "fixtures" / "old5"


def _trace(name: str):
    snaps = find_pass_dumps(OLD5 / name, f"jit_{name}")
    before = hlodiff.load(find_before_file(snaps))
    return trace(snaps, before)


def test_inlined_twin_is_told_apart_by_what_its_user_reads_beside_it():
    """Dump 0003 (CallInliner): three log_softmax callees each hold ``broadcast(constant(-inf))``
    without metadata. ``maximum.0 = maximum(reduce.0, broadcast.0)`` reads ``reduce.0`` (the
    renamed ``reduce.150`` of log_softmax_0.144), so ``broadcast.0`` is ``broadcast.147``,
    not the first identical candidate (``broadcast.75``), and maximum.151 is renamed, not
    left behind as "inlined"."""
    t = _trace("kl_distillation")
    step = next(s for s in t.passes if s.name == "CallInliner")
    assert step.renamed.get("broadcast.147") == "broadcast.0"
    assert step.renamed.get("maximum.151") == "maximum.0"
    assert step.renamed.get("maximum.79") == "maximum.3"
    assert t.fate_of("maximum.151")[0] != "inlined"
    assert t.fate_of("maximum.79")[0] != "inlined"
