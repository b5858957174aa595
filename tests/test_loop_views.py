"""No-op views merged by the partitioner's cleanup CSE inside a rebuilt loop, on 8 CPU
devices (issue 9).

Fixture: fixtures/loop_views (fixtures/generate_loop_views.py: unedited modules of a rotary
decode loop on 8 CPU devices, jax 0.10.2). The expected fates are those of XLA's pass dumps
of the same compilation.
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.diff import diff_modules

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "loop_views"


def test_no_op_views_merged_before_the_loop_passes_rebuilt_the_loop():
    """The key's rotation repeats the query's ``c[:, None]`` and ``s[:, None]``: a broadcast
    and a reshape that change nothing, which the view sees through. On 8 devices spmd-cleanup
    runs CSE before any algebraic simplification, and the pass dumps show each merged there
    (dump after_cse) into the query's copy, before loop-invariant code motion rebuilt the
    decode loop. The engine had called them rewritten with the rebuilt loop."""
    r = diff_modules(*load_pair(D))
    for name, into in (("mul.82", "mul.59"), ("mul.83", "mul.60"), ("mul.86", "mul.63"),
                       ("mul.87", "mul.64"), ("mul.90", "mul.63"), ("mul.91", "mul.64"),
                       ("mul.94", "mul.59"), ("mul.95", "mul.60")):
        f = r.fate_of("closed_call.4", name)
        assert (f.fate, f.into) == ("merged", into), (name, f.fate, f.into, f.reason)
