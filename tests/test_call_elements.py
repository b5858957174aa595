"""Elements of a call's result that the call inliner left without readers (issue 9).

Fixture: fixtures/call_elements/qr_orthogonal_projection (fixtures/generate_call_elements.py,
unedited CPU modules of benchmarks/zoo_fresh10_programs.py, jax 0.10.2).
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.diff import diff_modules

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "call_elements" / "qr_orthogonal_projection"


def test_element_passed_only_to_an_unread_parameter_goes_with_the_inlined_call():
    """``jvp_jit__diag__.8 = get-tuple-element(jvp call), index=2`` is read only by the
    transpose's call, whose callee never reads that parameter. The call inliner (dump 0005)
    leaves it without readers and it goes in that pass: inlined, not "tuple plumbing
    simplified away"."""
    r = diff_modules(*load_pair(D))
    f = r.fate_of("main.13", "jvp_jit__diag__.8")
    assert f.fate == "inlined", (f.fate, f.reason)
    # an element whose reader reads it is still forwarded
    assert r.fate_of("main.13", "jvp_jit__diag__.6").fate != "inlined"
