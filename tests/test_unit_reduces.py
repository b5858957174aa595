"""A reduce summing nothing (unit dimensions only) is a view of its input (unit_reduces.py).

Algebraic simplification replaces such a reduce by a reshape of its input; its value is
its input's. Fixture: fixtures/cpu8/remat_nested_layers (fresh 4 on 8 CPU devices, XLA's
own modules; fixtures/generate_cpu8.py).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules

D = Path(__file__).resolve().parent.parent / "fixtures" / "cpu8" / "remat_nested_layers"


def test_reduce_over_a_unit_dimension_lives_where_its_input_does():
    before = hlodiff.load(next(D.glob("*before_optimizations.txt")))
    after = hlodiff.load(next(D.glob("*cpu_after_optimizations.txt")))
    entry = before.entry_computation
    red = entry["reduce_sum.378"]
    # the premise: f32[8,1] -> f32[8], summing the unit dimension 1 only
    src = entry[red.operands[0]]
    assert red.opcode == "reduce" and src.shape.dims == (8, 1) and red.shape.dims == (8,)
    r = diff_modules(before, after)
    f, g = r.fate_of("reduce_sum.378"), r.fate_of(src.name)
    # the oracle (pass dumps): its value is where div.45's went, never the init constant
    assert f.fate == "rewritten" and (f.after, f.fusion) == (g.after, g.fusion), f.reason
    assert not (f.after or "").startswith("constant"), f.reason
