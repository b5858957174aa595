"""Fates on fresh 18 programs (issue 9, classes 4, 11 and 12): a conditional that XLA's
conditional simplifier turned into selects over copies of both branches, in the entry
computation, each copy reading the conditional's operand where the branch read its
parameter; and twins the Shardy round trip renumbers, which the oracle tells apart by their
stack frames.

Fixtures: fixtures/fresh18/* (fixtures/generate_fresh18.py: unedited modules and pass
snapshots of benchmarks/zoo_fresh18_programs.py, jax 0.10.2, H100 deviceless).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_pass_dumps, trace

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "fresh18"


@lru_cache(maxsize=None)
def _diff(name: str):
    return diff_modules(*load_pair(D / name))


def test_oracle_follows_branches_inlined_into_selects():
    """H100: simplify-conditional (dump 0012) removes cond.22 and copies both branches into
    the entry computation, reading the conditional's operand tuple cond.21 where they read
    their parameter; the results are selected. mul.56 of the true branch is renamed mul.1,
    not "rewritten" with no destination (the trace had stopped there)."""
    snaps = find_pass_dumps(D / "select_branches", "jit_randaugment_vmapped_switch_cond_skip")
    t = trace(snaps)
    f = t.fates["mul.56"]
    assert f.final_name == "mul.1" and f.fate != "rewritten", (f.fate, f.history)
    for name in ("add.69", "mul.48", "sub.38"):
        assert t.fates[name].fate != "rewritten", (name, t.fates[name].history)


def test_inlined_branch_parameters_are_the_conditionals_operand():
    """The branch's get-tuple-elements of its parameter hand on the elements of cond.21:
    get-tuple-element.59 is the entry parameter a_0___convs___0___b__.1 and
    get-tuple-element.72 the dot that computed it, not a reader of either (the matcher had
    named the kernels mul.2.7 and add.13.7 sit in)."""
    r = _diff("gpu_randaugment_vmapped_switch_cond_skip")
    f = r.fate_of("region_37.49", "get-tuple-element.59")
    assert (f.fate, f.after, f.fusion) == ("rewritten", "a_0___convs___0___b__.1", None), \
        (f.fate, f.after, f.fusion, f.reason)
    assert "conditional" in f.reason
    f = r.fate_of("region_37.49", "get-tuple-element.72")
    assert (f.fate, f.fusion) == ("rewritten", "gemm_fusion_dot"), (f.fate, f.fusion)


def test_inlined_branches_keep_their_layers_apart():
    """The branch applies the same update to three conv layers; with the parameter read as
    the entry's layer weights, each layer's update lands in its own kernel: layer 1's
    (add.63, mul.66) in loop_select_fusion.2, layer 2's (add.65, mul.60) in
    loop_select_fusion.3 (they had been crossed)."""
    r = _diff("gpu_randaugment_vmapped_switch_cond_skip")
    want = {"add.63": "loop_select_fusion.2", "mul.66": "loop_select_fusion.2",
            "add.65": "loop_select_fusion.3", "mul.60": "loop_select_fusion.3"}
    got = {n: r.fate_of("region_37.49", n).fusion for n in want}
    assert got == want


def test_oracle_follows_twins_through_the_shardy_round_trip_by_their_stacks():
    """8 H100s: the Shardy round trip (dump 0046) rebuilds the module under new names. The
    two halves of SwAV's swapped loss reduce with one op_name over look-alike operands;
    reduce_sum.463 is written on line 1348 and comes back as reduce_sum.385 (line 1348),
    reduce_sum.477 (line 1346) as reduce_sum.386. The walk had crossed them."""
    snaps = find_pass_dumps(D / "shardy_stacks", "jit_bf16_swav_sinkhorn_swapped_prototypes")
    t = trace(snaps)
    got = {n: t.fates[n].final_name for n in ("reduce_sum.463", "reduce_sum.477")}
    assert got == {"reduce_sum.463": "reduce_sum.385", "reduce_sum.477": "reduce_sum.386"}
