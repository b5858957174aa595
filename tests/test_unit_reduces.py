"""Views and reduces algebraic simplification rewrote, on 8 CPU devices: a reduce summing
nothing (unit dimensions only) is a view of its input (unit_reduces.py); a view of
``reduce(negate(x))`` reads the negate algsimp moved out (meta_survivors.moved_out). Fixture: fixtures/cpu8/remat_nested_layers (fresh 4 on 8 CPU devices, XLA's
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


def test_view_of_a_reduce_whose_negate_moved_out_lives_in_the_new_negate():
    """``reshape.20 = reshape(reduce_sum.366 = reduce(neg))``: algsimp rebuilds
    ``reduce(negate(x))`` as ``negate(reduce(x))``, so the view reads the new negate
    (meta_survivors.moved_out). On 8 CPU devices the rewrite step pairs the before negate
    with it before the moved-negate step runs; the view still follows it (the oracle:
    ``bitcast_bitcast_fusion.5`` among the layers' kernels, not the reduce's own)."""
    before = hlodiff.load(next(D.glob("*before_optimizations.txt")))
    after = hlodiff.load(next(D.glob("*cpu_after_optimizations.txt")))
    entry = before.entry_computation
    red = entry[entry["reshape.20"].operands[0]]
    assert red.opcode == "reduce" and entry[red.operands[0]].opcode == "negate"
    r = diff_modules(before, after)
    f = r.fate_of("reshape.20")
    assert f.fate == "rewritten" and f.fusion == "bitcast_bitcast_fusion.5", f.reason
    assert f.fusion != r.fate_of(red.name).fusion
