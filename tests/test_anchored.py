"""Repeated layers told apart by the values they read (issue 9, class 6: repeated code).

fixtures/twins4/cpu/alibi_decoder_layers: two decoder layers written by one Python loop, so
their instructions share opcodes, shapes, op_names and source lines. XLA rebuilds each
layer's first dot (``x @ wq``, f32[4,10,16] x f32[16,16]) on the flattened f32[40,16] inside
a library-call fusion, so structure (which demands equal shapes) cannot walk from a layer's
weight parameter into its kernels. The engine used to pair the whole first layer with the
second layer's kernels (named target 60% against XLA's pass dumps).

The check needs no oracle: a named kernel computes (at least) from every entry parameter the
before instruction it names computes from. Layer 2 reads layer 1's weights and layer 1 does
not read layer 2's, so a swap of the layers breaks it for the second layer's instructions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlodiff.cli import main as cli
from hlodiff.dumps.loader import load

D = Path(__file__).resolve().parent.parent / "fixtures" / "twins4" / "cpu" / "alibi_decoder_layers"


def _param_ancestors(module) -> dict[str, frozenset[str]]:
    """Entry instruction -> the entry parameters it computes from (fusions are opaque)."""
    entry = module.entry_computation
    by = {i.name: i for i in entry.instructions}
    memo: dict[str, frozenset[str]] = {}
    for inst in entry.instructions:  # XLA prints operands before their users
        if inst.opcode == "parameter":
            memo[inst.name] = frozenset([inst.name])
        else:
            memo[inst.name] = frozenset().union(*(memo.get(o, frozenset()) for o in inst.operands
                                                  if o in by))
    return memo


@pytest.fixture(scope="module")
def diff():
    b = next(D.glob("*.before_optimizations.txt"))
    a = next(D.glob("*after_optimizations.txt"))
    r = CliRunner().invoke(cli, [str(b), str(a), "--format", "json"])
    assert r.exit_code == 0, r.output
    return load(b), load(a), json.loads(r.output)


def test_named_kernels_compute_from_the_instructions_parameters(diff):
    before, after, js = diff
    anc_b, anc_a = _param_ancestors(before), _param_ancestors(after)
    everything = frozenset().union(*[anc_b[n] for n in anc_b])
    checked, wrong = 0, []
    for rec in js["instructions"]:
        if rec["computation"] != before.entry_computation.name:
            continue
        kernel = rec["fusion"] or rec["after"]
        mine = anc_b.get(rec["before"])
        if not kernel or kernel not in anc_a or not mine or mine == everything:
            continue
        checked += 1
        if not mine <= anc_a[kernel]:
            wrong.append((rec["before"], kernel, sorted(mine), sorted(anc_a[kernel])))
    assert checked >= 40  # both layers' forward instructions
    assert not wrong, wrong[:5]


def test_kernels_inside_parallel_wrapper_calls_count_as_the_call():
    """Scoring (benchmarks/accuracy.py): JAX 0.4.x's XLA:CPU outlines a fusion it splits into
    parallel tasks into ``call(...), to_apply=parallel_fusion.N`` holding ``fusion.N.clone``.
    The engine names the fusion, the oracle the top-level call: the same kernel."""
    from hlodiff.diff.accuracy import wrapper_calls

    f = (Path(__file__).resolve().parent.parent / "fixtures" / "versions" / "gpt2_step" / "0.4.30"
         / "module_0021.jit_gpt2_step.cpu_after_optimizations.txt")
    after = load(f)
    held = wrapper_calls(after)
    calls = {i.name: i for i in after.entry_computation.instructions if i.opcode == "call"}
    clones = [n for n in held if n.endswith(".clone")]
    assert clones
    comps = {c.name: c for c in after.computations}
    for n in clones:
        call = calls[held[n]]
        assert any(i.name == n for c in call.calls for i in comps[c].instructions)
    assert not set(held) & {i.name for i in after.entry_computation.instructions}


def test_kernels_inside_parallel_calls_of_a_loop_body_count_as_the_call():
    """The same outlining inside a scan's loop bodies (fixtures/loop_parallel_calls, JAX
    0.4.30): the body's ``call`` runs the kernel there, and a body instruction's value
    goes to that call. Scoring had looked only at the entry's calls, and counted the
    engine's kernel wrong (fresh 26 remat_gpt_neox under JAX 0.4.30: 86% named)."""
    from hlodiff.diff.accuracy import wrapper_calls

    f = (Path(__file__).resolve().parent.parent / "fixtures" / "loop_parallel_calls"
         / "module_0000.jit_scan_residual_step.cpu_after_optimizations.txt")
    after = load(f)
    held = wrapper_calls(after)
    comps = {c.name: c for c in after.computations}
    entry = after.entry_computation.name
    in_bodies = [(c.name, i) for c in after.computations if c.name != entry
                 for i in c.instructions if i.opcode == "call"]
    assert in_bodies
    for body, call in in_bodies:
        root = comps[call.calls[0]].root_instruction
        assert root.opcode == "fusion" and held[root.name] == call.name, (body, call.name)
