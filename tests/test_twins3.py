"""Attention dots of a tensor-parallel layer rebuilt on squeezed per-device shapes (issue 9,
sharded named targets; twins3 helper).

On the zoo's transformer_layer dumped for 8 host CPU devices (fixtures/sharded_passes). The
heads are sharded, so each device computes f32[2,1,16,16] per attention dot; algsimp drops
the size-1 dimension and rebuilds the dot without metadata (pass dump 0016 -> 0017:
``%reshape.76 = f32[2,1,16,16] reshape(%dot.42)`` carries the op_name, ``%dot.42 =
f32[2,16,16] dot(...)`` none). The new dot reads the query/key projections through the
partitioner's resharding: a tuple all-reduce of the partial sums, a fused dynamic-slice of
the device's shard, a second tuple all-reduce, their get-tuple-elements. The test checks
that chain in the after module, then that the before dot is named in the dot's kernel.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hlodiff.diff import diff_files
from hlodiff.dumps.loader import load

D = Path(__file__).resolve().parent.parent / "fixtures" / "sharded_passes" / "transformer_layer"


@pytest.fixture(scope="module")
def layer():
    b = next(D.glob("*.before_optimizations.txt"))
    a = next(D.glob("*after_optimizations.txt"))
    after = load(a)
    by_a = {i.name: i for c in after.computations for i in c.instructions}
    return diff_files(b, a), by_a


def test_rebuilt_attention_dot_is_named_through_the_resharding_chain(layer):
    res, by_a = layer
    # the after structure: ynn_fusion.11 (calls a computation whose root is dot.67, no
    # metadata) reads get-tuple-element.2 of a tuple all-reduce of a fused dynamic-slice of
    # get-tuple-element of another tuple all-reduce of the query projection ynn_fusion.13
    fus = by_a["ynn_fusion.11"]
    assert by_a["dot.67"].metadata is None or not by_a["dot.67"].metadata.op_name
    g = by_a[fus.operands[0]]
    assert g.opcode == "get-tuple-element"
    ar = by_a[g.operands[0]]
    assert ar.opcode == "all-reduce" and ar.shape.is_tuple
    ds = by_a[ar.operands[g.index]]
    assert ds.opcode == "fusion" and "dynamic-slice" in ds.name
    g1 = by_a[ds.operands[0]]
    ar1 = by_a[g1.operands[0]]
    assert g1.opcode == "get-tuple-element" and ar1.opcode == "all-reduce"
    assert by_a[ar1.operands[g1.index]].operands[0] == "ynn_fusion.13"
    q = res.fate_of("main.18", "dot_general.24")
    assert (q.fate, q.fusion) == ("rewritten", "ynn_fusion.11"), (q.fate, q.after, q.fusion)


@pytest.mark.parametrize("name,kernel", [("dot_general.25", "ynn_fusion.10"),
                                         ("dot_general.36", "ynn_fusion"),
                                         ("dot_general.37", "ynn_fusion.1"),
                                         ("dot_general.38", "ynn_fusion.2")])
def test_other_attention_dots_name_their_own_kernel(layer, name, kernel):
    """The other attention dots (forward and gradient) the same way; dot_general.37/38's
    rebuilt dots carry a reshape's op_name (no before dot has it), which does not make them
    any less the rebuilt dot."""
    res, _ = layer
    f = res.fate_of("main.18", name)
    assert (f.fate, f.fusion) == ("rewritten", kernel), (name, f.fate, f.after, f.fusion)


G = Path(__file__).resolve().parent.parent / "fixtures" / "sharded_passes" / "transformer_layer_gpu8"


def test_dots_the_dot_merger_combined_are_named_in_their_slice():
    """On 8 H100s (zoo transformer_layer, gpu8) the dot merger combines the query, key and
    value projections (one input, three weights) into one dot and a slice each (pass dump
    after_dot-merger: ``%dot.54 = f32[32,96] dot(%reshape.117, %concatenate.1)``,
    ``%slice.1 = slice(%slice.2)`` with dot.28's op_name and stack frame). The merged dot
    keeps dot_general.23's op_name and line; the key and query dots live on in the slices
    carrying theirs, not in the weight-gradient gemm that shares their op_name."""
    b = next(G.glob("*.before_optimizations.txt"))
    a = next(G.glob("*after_optimizations.txt"))
    after = load(a)
    by_a = {i.name: i for c in after.computations for i in c.instructions}
    comps = {c.name: c for c in after.computations}
    res = diff_files(b, a)
    merged = res.fate_of("main.18", "dot_general.23")
    assert merged.fusion == "gemm_fusion_dot.54"
    for name, kernel in (("dot_general.21", "loop_slice_fusion.1"),
                         ("dot_general.22", "loop_slice_fusion.2")):
        fus = by_a[kernel]
        assert fus.operands == ["gemm_fusion_dot.54"]
        root = comps[fus.calls[0]].root_instruction
        assert root.opcode == "slice"
        f = res.fate_of("main.18", name)
        assert (f.fate, f.fusion) == ("rewritten", kernel), (name, f.fate, f.after, f.fusion)
        assert "dot_general.23" in f.reason and "gemm_fusion_dot.54" in f.reason


def test_a_dot_on_flattened_batch_dims_keeps_the_partner_its_metadata_names(layer):
    """dot_general.30 (f32[2,16,128], the gradient through the output projection) is
    computed per device on flattened batch dims as dot.62 = f32[32,16] in ynn_fusion.6,
    which carries its op_name and source line; dot.51 is transpose.13's flipped dot (it
    carries the transpose's op_name). Shapes alone make dot.62 look too large for a shard
    of f32[2,16,128] (32 > 16); that is no reason to swap it with the flipped dot."""
    res, by_a = layer
    before = load(next(D.glob("*.before_optimizations.txt")))
    by_b = {i.name: i for c in before.computations for i in c.instructions}
    assert by_a["dot.62"].metadata.op_name == by_b["dot_general.30"].metadata.op_name
    assert by_a["dot.51"].metadata.op_name == by_b["transpose.13"].metadata.op_name
    f = res.fate_of("main.18", "dot_general.30")
    assert (f.after, f.fusion) == ("dot.62", "ynn_fusion.6"), (f.fate, f.after, f.fusion)
    t = res.fate_of("main.18", "transpose.13")
    assert (t.fate, t.after) == ("rewritten", "dot.51"), (t.fate, t.after)
