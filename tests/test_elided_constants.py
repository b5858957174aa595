"""Constants a dump prints without their values (issue 9): XLA prints no large literal, so
two different tables of one shape both read ``f32[1,64] constant({...})``. Equal printed
text is no evidence of equal values, and XLA's CSE, which sees the values, never merges
them: the engine had called the second table's broadcast "identical to mul.10 (CSE)" and
its reshape "identical to mul.9, folded before CSE could merge them" (view.ELIDED: such a
constant is equal to no other when identity is claimed).

Fixture: fixtures/elided (fixtures/generate_elided.py: fixtures/elided_programs.py run with
XLA's pass dumps on, jax 0.10.2, CPU; copied unedited).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

D = Path(__file__).resolve().parent.parent / "fixtures" / "elided" / "cpu" / "two_tables"


@lru_cache(maxsize=None)
def _run():
    snaps = find_pass_dumps(D, "jit_two_tables")
    bf = find_before_file(snaps)
    before = hlodiff.load(bf)
    af = next(D.glob("*.cpu_after_optimizations.txt"))
    return before, diff_modules(before, hlodiff.load(af)), trace(snaps, before)


def test_the_tables_print_alike():
    before = _run()[0]
    lits = [i.literal for c in before.computations for i in c.instructions
            if i.opcode == "constant" and str(i.shape).startswith("f32[1,64]")]
    assert lits == ["{...}", "{...}"]


def test_the_second_tables_values_are_not_merged_into_the_first():
    """XLA's pass dumps: the sine table's broadcast mul.14 is fused (exponential_add_fusion)
    and its reshape mul.13 folded into constant.1; neither is merged."""
    _, res, orc = _run()
    assert orc.info("mul.14").fate == "fused" and orc.destinations("mul.13") == ["constant.1"]
    f = res.fate_of("main.1", "mul.14")
    assert (f.fate, f.fusion) == ("fused", "exponential_add_fusion"), f
    f = res.fate_of("main.1", "mul.13")
    assert (f.fate, f.after) == ("folded", "constant.1"), f
    assert not any("identical to" in (g.reason or "") for g in res.instructions)
