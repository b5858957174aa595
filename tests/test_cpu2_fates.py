"""Single-device CPU fates, second round (issue 9): mechanisms read from XLA's pass dumps.

Each test checks the premise in the dumps (the oracle, ``hlodiff.dumps.passes``) and the
diff engine's answer on committed fixtures (fixtures/cpu, written by fixtures/generate.py).
"""

from __future__ import annotations

from .test_cpu_fates import _run, _target


def test_literal_under_a_rebuilt_broadcast_is_fused():
    """algsimp rebuilds ``broadcast(constant(1))`` to another shape but keeps the literal as
    the new broadcast's operand; fusion then copies the literal into the kernels reading it
    under a new name. The literal is fused there, not "simplified away"."""
    cases = (("rmsnorm_rope", "constant.15"), ("transformer_block", "constant.57"),
             ("transformer_block", "constant.61"))
    for program, name in cases:
        before, _, oracle, result = _run(program)
        f = oracle.info(name)
        assert (f.fate, f.pass_name) == ("fused", "fusion"), (program, name, f)
        comp = before.computation(f.computation)
        # the premise: a literal read by a broadcast, which algsimp rebuilt (not merged)
        users = [i for i in comp.instructions if name in i.operands]
        assert comp[name].opcode == "constant" and users, (program, name)
        assert all(u.opcode == "broadcast" for u in users), (program, name, users)
        rec = result.fate_of(f.computation, name)
        assert rec.fate == "fused" and _target(rec) in oracle.destinations(name), rec
        assert set(rec.also_in) | {rec.fusion} <= set(oracle.destinations(name)), rec


def test_copy_of_a_reshape_the_decomposer_rewrote_after_cse_is_merged():
    """CSE (dump 0028) merges identical reshapes; the reshape decomposer (0032, after
    layout assignment) turns the survivor into a bitcast later. The copy was merged, not
    "rewritten before CSE could merge them"; the survivor's value is in the bitcast's
    consumer fusions, not in a fused copy of the broadcast beside it."""
    _, _, oracle, result = _run("transformer_block")
    s, c = oracle.info("mul.70"), oracle.info("mul.85")
    assert (s.fate, s.pass_name) == ("rewritten", "reshape-decomposer")
    assert (c.fate, c.pass_name) == ("merged", "cse")
    rec = result.fate_of(c.computation, "mul.85")
    assert (rec.fate, rec.into) == ("merged", "mul.70"), rec
    rec = result.fate_of(s.computation, "mul.70")
    assert rec.fate == "rewritten" and "bitcast" in rec.reason, rec
    assert _target(rec) in oracle.destinations("mul.70"), rec
