"""Identical copies in partitioned CPU modules, which meet CSE before any simplification
(issue 9, sharded named targets; shard4 helper, hlodiff/diff/cse_first.py).

XLA's CPU pipeline partitions first; spmd-cleanup's CSE then merges identical instructions
(the softmax or L2-norm divisor ``broadcast(sum)`` of the forward pass and its copy in the
backward pass) before algsimp turns the forward ``x / broadcast(s)`` into
``x * broadcast(1/s)``. The survivor (first in the text) lives on for the backward divide;
the forward's reciprocal broadcast is new. Identical copies that the partitioner sharded
differently are never merged. Fixtures: the zoo's transformer_layer and the unseen set's
clip_contrastive on 8 host CPU devices (fixtures/sharded_passes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hlodiff.diff import diff_files
from hlodiff.dumps.loader import load

D = Path(__file__).resolve().parent.parent / "fixtures" / "sharded_passes"


def _load(name: str):
    b = next((D / name).glob("*.before_optimizations.txt"))
    a = next((D / name).glob("*after_optimizations.txt"))
    after = load(a)
    insts = {i.name: (c, i) for c in after.computations for i in c.instructions}
    return diff_files(b, a), insts


@pytest.fixture(scope="module")
def layer():
    return _load("transformer_layer")


@pytest.fixture(scope="module")
def clip():
    return _load("clip_contrastive")


def _fusion_of(insts, comp_name: str) -> str:
    return next(n for n, (_c, i) in insts.items() if i.opcode == "fusion" and
                i.calls and i.calls[0] == comp_name)


def test_divisor_survivor_lives_on_for_the_backward_divide(layer):
    res, insts = layer
    # after: div.60 = broadcast(...) read by the backward divide div.59 (the fused root),
    # and the forward's reciprocal broadcast.103 read by a multiply
    comp, div60 = insts["div.60"]
    assert div60.opcode == "broadcast" and insts["div.59"][1].opcode == "divide"
    assert insts["div.59"][1].operands[1] == "div.60"
    assert _fusion_of(insts, comp.name) == "broadcast_divide_fusion"
    assert insts["multiply.52"][1].operands[1] == "broadcast.103"
    f = res.fate_of("main.18", "div.24")
    assert (f.fate, f.fusion) == ("fused", "broadcast_divide_fusion"), (f.fate, f.fusion, f.reason)
    c = res.fate_of("main.18", "div.35")  # the backward copy, merged into div.24
    assert (c.fate, c.into, c.fusion) == ("merged", "div.24", "broadcast_divide_fusion"), \
        (c.fate, c.into, c.fusion)


@pytest.mark.parametrize("name,kernel", [("sub.30", "multiply_bitcast_fusion.4"),
                                         ("sub.34", "add_rsqrt_fusion")])
def test_copies_sharded_apart_both_live_on(layer, name, kernel):
    """LayerNorm's ``x - mean`` twice: dump 0004 shards one 8 ways and replicates the
    other, so no CSE merges them; each lives on in its own kernel."""
    res, insts = layer
    # per-device f32[2,16,4] in one kernel, the replicated f32[2,16,32] in the other
    assert insts["sub.100"][1].shape.dims_text != insts["sub.102"][1].shape.dims_text
    f = res.fate_of("main.18", name)
    assert (f.fate, f.fusion) == ("fused", kernel), (f.fate, f.fusion, f.reason)


@pytest.mark.parametrize("name,copy,kernel", [("div.27", "div.44", "add_add_fusion.1"),
                                              ("div.32", "div.40", "add_add_fusion")])
def test_paired_survivor_moves_to_its_own_instruction(clip, name, copy, kernel):
    """The metadata step paired the survivor with the forward's reciprocal broadcast (same
    op_name and line); the structure paired its backward copy with the survivor's own
    instruction, which carries the survivor's op_name, not the copy's."""
    res, insts = clip
    own = {"div.27": "div.90", "div.32": "div.86"}[name]  # a broadcast with name's op_name
    comp, a = insts[own]
    assert a.opcode == "broadcast" and a.metadata.op_name.endswith("/jvp()/div")
    assert _fusion_of(insts, comp.name) == kernel
    f = res.fate_of("main.18", name)
    assert (f.fate, f.fusion) == ("fused", kernel), (f.fate, f.fusion, f.reason)
    c = res.fate_of("main.18", copy)
    assert (c.fate, c.into, c.fusion) == ("merged", name, kernel), (c.fate, c.into, c.fusion)


@pytest.mark.parametrize("name", ["broadcast_in_dim.26", "sub.35"])
def test_run_time_value_is_not_named_in_a_constant(layer, name):
    """Softmax's ``reshape(max)`` (and the no-op broadcast of it) share op_name and line
    with ``broadcast.79 = broadcast(constant 1)`` in multiply_divide_fusion; a value
    computed from the parameters is never rewritten into a compile-time constant. algsimp
    turns the reshape into ``reshape.156`` of the max reduce (dump 0015), which lives on in
    select_reduce_fusion (and its bitcast in subtract_exponential_fusion)."""
    res, insts = layer
    comp, b79 = insts["broadcast.79"]
    assert insts[b79.operands[0]][1].opcode == "constant"
    assert _fusion_of(insts, comp.name) == "multiply_divide_fusion"
    assert insts["reduce.20"][1].opcode == "reduce"
    f = res.fate_of("main.18", name)
    assert f.fate == "rewritten" and f.fusion in ("select_reduce_fusion",
                                                  "subtract_exponential_fusion"), \
        (f.fate, f.after, f.fusion)


@pytest.fixture(scope="module")
def adam():
    return _load("mlp_gelu_adam")


@pytest.mark.parametrize("name", ["dot_general.9", "transpose.3"])
def test_flipped_dot_found_through_the_all_to_all(adam, name):
    """algsimp rebuilds the weight gradient ``transpose(dot(g, x))`` as ``dot.5 =
    dot(x', g')`` carrying the transpose's op_name; on 8 devices dot.5 reads ``g`` through
    the partitioner's all-to-all (eight pieces, concatenated and transposed in
    copy_bitcast_fusion, whose transpose carries the *dot's* op_name) and ``x`` through an
    all-gather. The before dot is not "a dot that became a transpose"."""
    res, insts = adam
    d5 = insts["dot.5"][1]
    assert d5.opcode == "dot" and d5.metadata.op_name.endswith("/transpose")
    comp, cbf = insts[d5.operands[0]]
    assert cbf.opcode == "fusion"
    ops = [insts[o][1] for o in cbf.operands]
    assert len(ops) == 8 and all(o.opcode == "get-tuple-element" for o in ops)
    assert {o.operands[0] for o in ops} == {"all-to-all.9"}
    assert insts[d5.operands[1]][1].opcode in ("all-gather", "fusion")
    f = res.fate_of("main.2", name)
    assert (f.fate, f.after) == ("rewritten", "dot.5"), (f.fate, f.after, f.reason)


def test_oracle_follows_an_element_read_back_out_of_a_tuple_taken_apart():
    """gru_scan cpu8, dumps 0019 -> 0020 (algsimp): the forward loop's result element
    ``get-tuple-element.481`` sits at index 8 of ``tuple.21``, read back by
    ``get-tuple-element.929 = get-tuple-element(tuple.21), index=8``; algsimp forwards
    that read-back to the loop in place (``get-tuple-element(while.50), index=2``, same
    name) and both tuple.21 and get-tuple-element.481 go. The value is in
    get-tuple-element.929, not in while.50 (what took tuple.21's place in its users)."""
    from hlodiff.dumps.passes import trace
    from hlodiff.dumps.passfiles import parse_pass_filename

    d = D.parent / "loops3" / "gru_scan_cpu8_algsimp"
    f19, f20 = sorted(d.glob("*.txt"))
    assert "after_algsimp" in f20.name
    prev, cur = load(f19), load(f20)
    ptop = {i.name: i for c in prev.computations for i in c.instructions}
    ctop = {i.name: i for c in cur.computations for i in c.instructions}
    t21 = ptop["tuple.21"]
    assert t21.operands[8] == "get-tuple-element.481"
    g = ptop["get-tuple-element.929"]
    assert (g.operands[0], g.index) == ("tuple.21", 8)
    assert "tuple.21" not in ctop and "get-tuple-element.481" not in ctop
    g2 = ctop["get-tuple-element.929"]
    assert ctop[g2.operands[0]].opcode == "while" and g2.index == 2
    tr = trace([parse_pass_filename(f20)], before=prev)
    f = tr.info("get-tuple-element.481")
    assert f.fate == "rewritten", f
    assert tr.destinations("get-tuple-element.481") == ["get-tuple-element.929"]


@pytest.mark.parametrize("name,conv,wrapper", [
    ("conv_general_dilated.13", "convolution.11", "transpose_copy_fusion.2"),
    ("conv_general_dilated.11", "convolution.12", "transpose_copy_fusion")])
def test_canonicalized_convolution_of_the_same_rank_is_found(name, conv, wrapper):
    """Convolution canonicalization rebuilds a weight gradient (dim_labels
    f01b_i01o->01bf, f32[3,3,8,8]) as ``convolution.11`` (b01f_01io->b01f, f32[8,3,3,8], no
    metadata) under a transpose carrying the old op_name, fused into
    transpose_copy_fusion.2. Per-device shapes make the matcher compare ranks only; the
    rebuilt convolution is still told from its wrapper by its full shape."""
    res, insts = _load("unet_updown")
    c = insts[conv][1]
    assert c.opcode == "convolution" and c.metadata is None
    w = insts[wrapper][1]
    assert w.operands == [conv] and w.metadata.op_name.endswith("/conv_general_dilated")
    assert len(c.shape.dims) == len(w.shape.dims) and c.shape.dims != w.shape.dims
    f = res.fate_of("main.10", name)
    assert (f.fate, f.after) == ("rewritten", conv), (f.fate, f.after, f.fusion)


def test_twin_dots_told_apart_by_per_device_shape():
    """moe_top1 on 8 devices: two weight-gradient dots share op_name and line. The
    partitioner splits one's batch (f32[12,32] per device: no cut of the global f32[16,32]
    gives 12 rows, it is the other dot's squeezed f32[8,12,32]); the matcher compares only
    ranks in partitioned modules and used to take that one for dot_general.16."""
    res, insts = _load("moe_top1")
    assert insts["ynn_fusion.1"][1].shape.dims == (12, 32)
    assert insts["ynn_fusion.2"][1].shape.dims == (16, 32)
    f = res.fate_of("main.9", "dot_general.16")
    assert (f.fate, f.fusion) == ("rewritten", "ynn_fusion.2"), (f.fate, f.after, f.fusion)


def test_result_element_is_named_in_its_slot_of_the_result_tuple():
    """remat_nothing on 8 devices: the gradient ``transpose.3`` (element 3 of the entry's
    result tuple) is gone; its value is element 3 of the after module's result tuple
    (``wrapped_copy.2``, a copy of ``get-tuple-element.62`` of the all-reduce). The tuple
    itself was named before, which says nothing."""
    res, insts = _load("remat_nothing")
    root = insts["tuple.6"][1]
    assert root.opcode == "tuple" and root.operands[3] == "wrapped_copy.2"
    f = res.fate_of("main.2", "transpose.3")
    assert f.fate == "rewritten" and (f.fusion or f.after) in (
        "wrapped_copy.2", "get-tuple-element.62", "bitcast.126"), (f.fate, f.after, f.fusion)


def test_rewrite_step_takes_only_per_device_pieces():
    """remat_nothing on 8 devices: the weight gradient ``dot_general.16`` (f32[8,16])
    shares op_name and line with ``multiply.13`` = f32[16,16] (another dot that algsimp
    turned into a multiply of broadcasts) and with ``dot.27`` = f32[8,2] in ynn_fusion.1,
    its own shard. f32[16,16] is no per-device piece of f32[8,16]: the rewrite step no
    longer weighs it, and the dot is named in its kernel instead of "uncertain"."""
    res, insts = _load("remat_nothing")
    assert insts["multiply.13"][1].shape.dims == (16, 16)
    assert insts["dot.27"][1].shape.dims == (8, 2)
    f = res.fate_of("main.2", "dot_general.16")
    assert (f.fate, f.fusion) == ("fused", "ynn_fusion.1"), (f.fate, f.after, f.fusion)


def test_layout_normalized_dims_are_still_a_piece():
    """Layout normalization gives an array its physical dims: a global f32[32,64]{0,1}
    lives on per device as f32[64,4] (bf16_loss_scaling cpu8, div.9 -> multiply.24)."""
    from hlodiff.diff.partition import may_be_piece
    from hlodiff.hlo.shapes import array_shape as parse_shape

    g = parse_shape("f32[32,64]{0,1}")
    assert may_be_piece(g, parse_shape("f32[64,4]{1,0}"))
    assert may_be_piece(g, parse_shape("f32[8,64]{1,0}"))
    assert not may_be_piece(parse_shape("f32[32,64]{1,0}"), parse_shape("f32[64,4]{1,0}"))
    assert not may_be_piece(parse_shape("f32[16,16]{1,0}"), parse_shape("f32[12,16]{1,0}"))
