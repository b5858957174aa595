"""Fates on fresh 17 programs (issue 9, class 6: repeated code on 8 devices): a rematted
layer norm tied over every layer's kernel, a shared zero taken for a place, and twin
attention layers whose dots were paired before anything around them.

Fixtures: fixtures/fresh17/* (fixtures/generate_fresh17.py: unedited modules of
benchmarks/zoo_fresh17_programs.py, jax 0.10.2).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_pass_dumps, trace

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "fresh17"


@lru_cache(maxsize=None)
def _diff(name: str):
    return diff_modules(*load_pair(D / name))


def _fusions(r, comp: str, names: dict[str, str]) -> dict[str, tuple]:
    """The fates of ``names`` whose kernel is not the expected one."""
    out = {}
    for name, want in names.items():
        f = r.fate_of(comp, name)
        if f.fusion != want:
            out[name] = (f.fate, f.fusion, want)
    return out


def test_rematted_layer_norms_stay_in_their_layers_kernels():
    """8 CPU devices, two checkpointed layers: each recomputes its layer norm in the backward
    pass. The broadcast 1/32 of every layer's mean is one instruction before (CSE) and a
    copy in each layer's kernel after; the copy that got paired said nothing about the
    layer, and a tie over forty kernels was settled before any pair around it was made.
    The last layer's recomputed mean and variance (reduce_sum.857/858) live in the kernels
    that read the previous layer's output (add_reduce_fusion.6, multiply_reduce_fusion.23),
    not in the first layer's (add_reduce_fusion.4, multiply_reduce_fusion.14)."""
    r = _diff("cpu8_remat_timesformer_divided_space_time")
    wrong = _fusions(r, "main.133", {
        "reduce_sum.857": "add_reduce_fusion.6", "reduce_sum.858": "multiply_reduce_fusion.23",
        "square.22": "multiply_reduce_fusion.23", "sub.295": "multiply_reduce_fusion.23",
        "reduce_sum.854": "add_reduce_fusion.5", "reduce_sum.855": "multiply_reduce_fusion.21"})
    assert not wrong, wrong


def test_a_shared_zero_is_no_place():
    """8 CPU devices: every YNN reduce kernel reads the top-level zero constant.31.clone.
    reduce_sum.375 = reduce(neg.7), which algsimp rewrites, shared nothing else with
    ynn_fusion.45's reduce, yet the zero made it the best similarity candidate; that
    pulled reduce_sum.384 and, through it, the two layers' attention scores into each
    other's kernels."""
    r = _diff("cpu8_bf16_geglu_rmsnorm_static_loss_scale")
    f = r.fate_of("main.101", "reduce_sum.375")
    assert f.fusion != "ynn_fusion.45", (f.fate, f.fusion, f.reason)
    wrong = _fusions(r, "main.101", {"reduce_sum.384": "ynn_fusion.45",
                                     "dot_general.93": "ynn_fusion.106",
                                     "dot_general.102": "ynn_fusion.93",
                                     "exp.6": "ynn_fusion.92"})
    assert not wrong, wrong


def test_twin_attention_dots_wait_for_their_neighbours():
    """8 H100s: two attention layers' dots share op_name and source line. Left open while
    tied, they are paired once the kernels around them are: each layer's dots in its own
    gemm kernels (the first tied candidate had been taken, crossing the layers)."""
    r = _diff("gpu8_attention_sink_sliding_window_lm")
    wrong = _fusions(r, "main.93", {
        "dot_general.86": "gemm_fusion_dot.167", "dot_general.94": "gemm_fusion_dot.169",
        "dot_general.109": "gemm_fusion_dot.174", "dot_general.125": "gemm_fusion_dot.178",
        "dot_general.108": "gemm_fusion_dot.171", "dot_general.124": "gemm_fusion_dot.175"})
    assert not wrong, wrong


def test_oracle_follows_copies_of_identical_inlined_callees():
    """JAX 0.4.30 on CPU: the call inliner inlines three identical relu6 callees
    (clip_17.1142, .1257, .1372), each bringing a broadcast of the same constant. Those
    copies are interchangeable: whichever one a callee's broadcast was taken to be, the
    maximum reading it is still found by its operands. maximum.1153 of call.1169 (which
    reads add.1141) is inlined as maximum.6 (the trace had stopped at "inlined")."""
    snaps = find_pass_dumps(D / "inlined_twins", "jit_mobile_unet_separable_transposed_up")
    t = trace(snaps)
    assert t.fates["maximum.1153"].final_name == "maximum.6"
    assert t.fates["maximum.1268"].final_name == "maximum.7"
    for name in ("maximum.1153", "compare.1154", "divide.1159", "divide.1167"):
        assert t.fates[name].fate != "inlined", (name, t.fates[name].history)


def test_rebuilt_twin_loops_are_paired_by_their_computations_first():
    """JAX 0.4.30 on CPU: jax.random.beta runs two threefry loops with one op_name and
    identical bodies up to their names. The loop passes rebuild them as while.75 (body
    region_2.342.clone.clone.clone) and while.82 (body region_2.1488.clone...): the names
    tell while.396 (body region_2.342) from while.1542. They pair by those names before the
    rewrite step settles ties by data flow (which crossed them once ties waited)."""
    r = _diff("old_mixup_permutation")
    for comp, name, want in (("_threefry_split_0.378", "while.396", "while.75"),
                             ("_threefry_split_0.1524", "while.1542", "while.82")):
        f = r.fate_of(comp, name)
        assert f.after == want, (name, f.fate, f.after, f.reason)


def test_oracle_keys_deep_literal_chains_alike_in_every_snapshot():
    """JAX 0.4.30 on CPU: the call inliner copies a bilinear resize's jit(_where) callees,
    whose masks are chains of literals (iotas, compares, ands) many levels deep. Their
    content keys must not depend on the order the walk reaches them: reshape.96 of
    _where_1.91 is inlined as reshape.14, reshape.58 of _where_1.53 as reshape.11 (a
    depth-limited key had lost them at "inlined")."""
    snaps = find_pass_dumps(D / "inlined_masks", "jit_attention_gate_unet_resize")
    t = trace(snaps)
    for name, new in (("reshape.96", "reshape.14"), ("reshape.58", "reshape.11"),
                      ("broadcast.97", "broadcast.40"), ("select.81", "select.9")):
        assert t.fates[name].final_name == new, (name, t.fates[name].history)
