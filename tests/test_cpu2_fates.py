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


def test_recomputed_twin_in_its_own_kernel_is_not_merged_with_the_forward_op():
    """mlp_nothing (jax.checkpoint, nothing saveable): the after module still holds one
    multiply per recomputed ``rematted_computation/mul`` of the before module, each in a
    fusion of its own, so none was computed once with its forward twin. A recomputed op
    whose kernel only the twins leave open (anchors' candidates) stays fused there."""
    from pathlib import Path

    import hlodiff
    from hlodiff.diff import diff_modules

    d = Path(__file__).resolve().parent.parent / "fixtures" / "remat" / "cpu" / "mlp_nothing"
    before = hlodiff.load(next(d.glob("*before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    tag = "rematted_computation/mul"

    def remat_muls(module):
        return [i for i in module.instructions()
                if i.opcode == "multiply" and tag in (i.metadata and i.metadata.op_name or "")]

    fused_in = {}
    for c in after.computations:
        for i in c.instructions:
            if i.opcode == "fusion" and i.calls:
                fused_in[i.calls[0]] = i.name
    kernels = {fused_in[c.name] for c in after.computations for i in c.instructions
               if i.opcode == "multiply" and tag in (i.metadata and i.metadata.op_name or "")
               and c.name in fused_in}
    assert len(remat_muls(before)) == len(remat_muls(after)) == 3
    result = diff_modules(before, after)
    checked = 0
    for rec in result.instructions:
        if rec.opcode == "multiply" and tag in (rec.op_name or ""):
            assert "computed once with" not in rec.reason, rec
            assert rec.fate == "fused", rec
            assert set(rec.candidates or [rec.fusion]) <= kernels, rec
            checked += 1
    assert checked == 3


def test_cse_keeps_the_inlined_copy_that_comes_first_in_post_order():
    """XLA prints a computation in post order, the order CSE walks it in, and the call
    inliner puts a callee's code where the call was. pool_cnn's relu (a call at line 227)
    broadcasts zero before the caller's own identical broadcast.21 (line 269): CSE keeps
    relu's copy (max.2, inlined as max.0) and merges broadcast.21 into it."""
    before, _, oracle, result = _run("pool_cnn")
    entry = before.entry_computation
    calls = [i.name for i in entry.instructions if i.opcode == "call" and list(i.calls) == ["relu.1"]]
    names = [i.name for i in entry.instructions]
    assert calls and names.index(calls[0]) < names.index("broadcast.21")
    f = oracle.info("broadcast.21")
    assert (f.fate, f.pass_name) == ("merged", "cse")
    rec = result.fate_of(f.computation, "broadcast.21")
    assert (rec.fate, rec.into) == ("merged", "max.2"), rec
    rec = result.fate_of("relu.1", "max.2")
    assert rec.fate == oracle.info("max.2").fate == "fused", rec


def test_dot_changed_in_place_by_transpose_folding_then_fused_is_fused():
    """linalg_solve: transpose folding folds an operand transpose into dot_general.5's
    dimension numbers and keeps its name (the dump after transpose-folding still holds
    dot_general.5); the dot-library rewriter then fuses it. The clone in the fusion keeps
    the stem (dot_general.N), unlike a dot a pass creates (dot.N): fused, not rewritten."""
    _, after, oracle, result = _run("linalg_solve")
    f = oracle.info("dot_general.5")
    assert (f.fate, f.pass_name) == ("fused", "dot-library-rewriter")
    rec = result.fate_of(f.computation, "dot_general.5")
    assert rec.fate == "fused" and rec.fusion in oracle.destinations("dot_general.5"), rec
    assert rec.after.startswith("dot_general.") and "transpose folding" in rec.reason, rec


def _fixture_diff(program: str):
    from pathlib import Path

    import hlodiff
    from hlodiff.diff import diff_modules

    d = Path(__file__).resolve().parent.parent / "fixtures" / "cpu2" / program
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*.cpu_after_optimizations.txt")))
    return before, after, diff_modules(before, after)


def test_branches_of_a_conditional_inside_an_inlined_call_are_matched():
    """switch_in_scan: lax.switch inside a scan body that JAX emits as a call. The call
    inliner gives the conditional *and the branch computations it calls* the call's
    op_name prefix (before: ``cond/branch_2_fun/mul``; after, in region_4.8's
    broadcast_add_fusion: ``jit(switch_in_scan)/while/body/closed_call/cond/branch_2_fun/
    mul``). The branch instructions are fused there, not "simplified away"."""
    _, after, result = _fixture_diff("switch_in_scan")
    kernels = {c.name: [i.name for i in c.instructions if i.opcode == "fusion"]
               for c in after.computations}
    for comp, name in (("region_4.8", "mul.1"), ("region_4.8", "add.3"),
                       ("region_3.7", "tanh.1")):
        rec = result.fate_of(comp, name)
        assert rec.fate == "fused" and rec.fusion in kernels[comp], rec
        assert rec.op_name.startswith("jit(switch_in_scan)/while/body/closed_call/cond/"), rec


def test_a_loop_is_paired_with_a_loop_and_nothing_else_with_one():
    """dropout_step: the threefry while inside an inlined call. The rewrite step matched by
    op_name alone paired the while's init tuple (while.11, a tuple) with the after while;
    a while lives on as a while (or goes), and no other instruction becomes one."""
    from hlodiff.diff.match import match
    from hlodiff.diff.view import after_view, before_view
    from hlodiff.diff import _skip_for_rewrites

    before, after, oracle, _ = _run("dropout_step")
    bv, av = before_view(before), after_view(after)
    m = match(bv, av, cse_skip=_skip_for_rewrites)
    loops = ("while", "conditional")
    for n in bv.nodes:
        y = m.b2a[n.idx]
        if y >= 0:
            assert (n.opcode in loops) == (av.nodes[y].opcode in loops), (n, av.nodes[y])
    w = next(n for n in bv.nodes if n.name == "while.12")
    assert w.opcode == "while" and av.nodes[m.b2a[w.idx]].opcode == "while"
