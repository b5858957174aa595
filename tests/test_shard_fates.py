"""Fates of SPMD-partitioned programs (issue 9, sharded families), on real XLA dumps.

fixtures/sharded_cpu/<program> holds the module before optimization, the module right after
the SPMD partitioner (``after_spmd-partitioning``) and the final module, all written by XLA
for 8 host CPU devices (fixtures/generate_gpu.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hlodiff.diff import diff_files
from hlodiff.dumps.loader import load
from hlodiff.dumps.partitioning import shard_of
from hlodiff.dumps.passes import trace_directory

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
CPU8 = sorted(p for p in (ROOT / "sharded_cpu").iterdir() if p.is_dir())


def _pair(d: Path) -> tuple[Path, Path]:
    return (next(d.glob("*.before_optimizations.txt")),
            next(d.glob("*after_optimizations.txt")))


@pytest.mark.parametrize("d", CPU8, ids=lambda p: p.name)
def test_oracle_follows_instructions_to_their_shards(d):
    """The oracle's renames across the partitioner land on an instruction of the same
    element type and rank, never on the partitioner's index arithmetic or a reducer's
    scalar parameter that happens to share an op_name (Arg_0.1 f32[128,256] was followed
    to a reducer's f32[] parameter before)."""
    tr = trace_directory(d)
    snap = load(next(d.glob("*after_spmd-partitioning*")))
    top = {i.name: i for c in snap.computations for i in c.instructions}
    before = {i.name: i for c in tr.before.computations for i in c.instructions}
    checked = 0
    for name, f in tr.fates.items():
        if f.fate != "kept" or f.final_name == name or f.final_name not in top:
            continue
        b, a = before[name], top[f.final_name]
        assert shard_of(b.shape, a.shape), (name, b.shape.text, f.final_name, a.shape.text)
        if b.opcode == "constant" and b.shape == a.shape:
            # the round trip merges identical constants and the partitioner clones them;
            # a constant is never followed to another value
            assert b.literal == a.literal, (name, b.literal, f.final_name, a.literal)
        checked += 1
    assert checked


def test_oracle_never_follows_a_constant_to_another_value():
    """The round trip merges identical constants and the partitioner clones them under new
    names; followed by opcode alone, cnn_small's 64 ended on -0.25, its 0.01 on -inf."""
    d = ROOT / "sharded_passes" / "cnn_small"
    tr = trace_directory(d)
    last = load(next(d.glob("*spmd-cleanup.after_pipeline-start*")))
    top = {i.name: i for c in last.computations for i in c.instructions}
    before = {i.name: i for c in tr.before.computations for i in c.instructions}
    kept = 0
    for name, f in tr.fates.items():
        b = before[name]
        if b.opcode != "constant" or f.fate != "kept":
            continue
        a = top[f.final_name]
        assert a.shape != b.shape or a.literal == b.literal, (name, b.literal, a.literal)
        kept += 1
    assert kept >= 5


def test_shard_of():
    from hlodiff.hlo.shapes import array_shape
    assert shard_of(array_shape("f32[128,256]"), array_shape("f32[16,256]"))
    assert not shard_of(array_shape("f32[128,256]"), array_shape("f32[]"))
    assert not shard_of(array_shape("f32[8,16]"), array_shape("s32[]"))
    assert not shard_of(array_shape("f32[8,16]"), array_shape("f32[8,32]"))


@pytest.mark.parametrize("name", ["dp_step", "fsdp_step"])
def test_called_computations_match_across_the_shardy_round_trip(name):
    """The Shardy round trip keeps only an instruction's innermost stack frame: the
    instructions of an inlined call (log_softmax) still match their per-device copies.
    The final module has one exponential, in the fusion the softmax's exp went into."""
    b, a = _pair(ROOT / "sharded_cpu" / name)
    res = diff_files(b, a)
    after = load(a)
    exps = [i for c in after.computations for i in c.instructions if i.opcode == "exponential"]
    assert len(exps) == 1
    f = res.fate_of("log_softmax.5", "exp.1")
    assert f.fate == "fused" and f.after == exps[0].name, f
    assert "partitioned 8 ways" in f.reason


@pytest.mark.parametrize("name", ["dp_step", "fsdp_step"])
def test_squeezed_shard_is_rebuilt_not_kept(name):
    """log.1 is f32[128,1]; the partitioner makes it f32[16,1] (the SPMD snapshot), and a
    later pass rebuilds it on the squeezed f32[16]: rewritten, and still partitioned."""
    d = ROOT / "sharded_cpu" / name
    snap = load(next(d.glob("*after_spmd-partitioning*")))
    logs = [i for c in snap.computations for i in c.instructions if i.opcode == "log"]
    assert [x.shape.dims_text for x in logs] == ["f32[16,1]"]
    res = diff_files(*_pair(d))
    f = res.fate_of("log_softmax.5", "log.1")
    assert f.fate == "rewritten", f
    assert "partitioned 8 ways, size-1 dims squeezed (f32[128,1] global -> f32[16]" in f.reason
    assert "layout" not in f.reason and "bytes" not in f.reason


def test_names_recorded_by_the_round_trip_pair_instructions():
    """The Shardy import records the old name of an instruction without op_name as its
    op_name (remat's ``broadcast.3`` comes back as ``op_name="broadcast.3"``): such an
    instruction is matched to the copy of it at its own (global) rank."""
    d = ROOT / "sharded_passes" / "cnn_small"
    b, a = next(d.glob("*before_optimizations.txt")), next(d.glob("*after_optimizations.txt"))
    res = diff_files(b, a)
    after = load(a)
    by_op: dict[str, list] = {}
    for c in after.computations:
        for i in c.instructions:
            if i.metadata is not None and i.metadata.op_name:
                by_op.setdefault(i.metadata.op_name, []).append(i)
    seen = 0
    for c in load(b).computations:
        for i in c.instructions:
            if i.metadata is not None and i.metadata.op_name or i.opcode == "parameter":
                continue
            copies = [x for x in by_op.get(i.name, ()) if x.opcode == i.opcode]
            if not copies:
                continue
            f = res.fate_of(c.name, i.name)
            names = {x.name for x in copies}
            assert f.after in names, (i.name, f)
            rank = {x.name: x.shape.rank for x in copies}
            if i.shape.rank in rank.values():
                assert rank[f.after] == i.shape.rank, (i.name, f)
            seen += 1
    assert seen >= 2


def test_round_trip_keeps_the_first_identical_constant_in_text_order():
    """cnn_small's constant.23 and constant.21 hold the same value; the Shardy round trip
    keeps the one first in the text (constant.23; XLA's CSE would keep the lower number),
    as the after_shardy-xla snapshot shows: one of the two is left."""
    d = ROOT / "sharded_passes" / "cnn_small"
    b = load(next(d.glob("*before_optimizations.txt")))
    order = [i.name for i in b.by_name["main.12"].instructions]
    assert order.index("constant.23") < order.index("constant.21")
    tr = trace_directory(d)
    assert tr.fates["constant.21"].fate == "merged" and tr.fates["constant.23"].fate == "kept"
    res = diff_files(next(d.glob("*before_optimizations.txt")),
                     next(d.glob("*after_optimizations.txt")))
    f = res.fate_of("main.12", "constant.21")
    assert f.fate == "merged" and f.into == "constant.23", f
    assert res.fate_of("main.12", "constant.23").fate != "merged"


def test_partitioner_clones_keep_the_constant_at_top_level():
    """The partitioner copies constants with Clone (``constant.6`` -> ``constant.6.clone``)
    and makes its own zero constants for padding, which come first in the text. cnn_small's
    constant.27 (0) lives on at top level in constant.6.clone, which fusion copied into
    kernels as constant.6.clone.N: both the oracle and the diff say kept, there."""
    d = ROOT / "sharded_passes" / "cnn_small"
    tr = trace_directory(d)
    f = tr.fates["constant.27"]
    assert (f.fate, f.final_name) == ("kept", "constant.6.clone"), f
    res = diff_files(next(d.glob("*before_optimizations.txt")),
                     next(d.glob("*after_optimizations.txt")))
    e = res.fate_of("main.12", "constant.27")
    assert (e.fate, e.after, e.fusion) == ("kept", "constant.6.clone", None), e


def test_round_trip_merges_identical_broadcasts():
    """relu's max.6 broadcasts 0 like main's broadcast.6; after inlining both are in one
    computation and the round trip keeps broadcast.6 (first in the text), annotating it with
    a sharding: the oracle finds the twin without that attribute (it said "rewritten"
    before), and the diff says merged, naming the round trip."""
    d = ROOT / "sharded_passes" / "cnn_small"
    tr = trace_directory(d)
    assert tr.fates["max.6"].fate == "merged" and tr.fates["broadcast.6"].fate == "kept"
    res = diff_files(next(d.glob("*before_optimizations.txt")),
                     next(d.glob("*after_optimizations.txt")))
    f = res.fate_of("relu_0.2", "max.6")
    assert f.fate == "merged" and f.into == "broadcast.6", f
    assert "Shardy round trip" in f.reason


@pytest.mark.parametrize("name", ["dp_step", "fsdp_step"])
def test_a_dot_kept_at_its_own_shape_is_not_a_transposed_rebuild(name):
    """dot_general.13 (f32[128,256]) feeds transpose.4 (f32[256,128]). After partitioning
    the dot is still dot.6 = f32[128,256] (the SPMD snapshot has it, reading the same
    values) and the transpose lives on: not 'transpose(dot(a, b)) rebuilt as dot(b, a)',
    which would produce the transpose's shape."""
    d = ROOT / "sharded_cpu" / name
    snap = load(next(d.glob("*after_spmd-partitioning*")))
    dots = {i.name: i for c in snap.computations for i in c.instructions if i.opcode == "dot"}
    assert dots["dot.6"].shape.dims_text == "f32[128,256]"
    res = diff_files(*_pair(d))
    f = res.fate_of("main.17", "dot_general.13")
    assert f.fate == "kept" and f.after == "dot.6", f
    t = res.fate_of("main.17", "transpose.4")
    assert "rebuilt as" not in t.reason and t.after != "dot.6", t


def test_collectives_are_not_rewrites_of_the_ops_they_feed():
    """The partitioner's all-gathers carry the op_name of the dot they feed; a dot is never
    reported as 'became all-gather'. Nor is arithmetic 'became slice' or 'became
    get-tuple-element': the slices, pads and all-to-all pieces the partitioner builds to
    reshard an operand carry its op_name too (remat_nothing's mul.29)."""
    gpu8 = [ROOT / "gpu" / n for n in ("mlp_dp8", "tp_mlp8", "tp_mlp_2x4")]
    for d in CPU8 + gpu8 + sorted((ROOT / "sharded_passes").iterdir()):
        res = diff_files(*_pair(d))
        for f in res.instructions:
            if f.opcode not in ("all-gather", "all-reduce", "reduce-scatter", "all-to-all",
                                "collective-permute"):
                assert not any(f"became {c}" in f.reason for c in (
                    "all-gather", "all-reduce", "reduce-scatter", "all-to-all",
                    "collective-permute")), (d.name, f)
            if f.opcode in ("multiply", "add", "subtract", "dot", "divide", "tanh"):
                assert not any(f"became {c} " in f.reason + " " for c in (
                    "slice", "dynamic-slice", "get-tuple-element", "pad",
                    "concatenate")), (d.name, f)


def test_round_trip_forwards_tuple_elements_without_rewriting_their_users():
    """mul.12 reads a get-tuple-element of the inlined log_softmax call's tuple; MLIR has no
    tuples, so after the round trip it reads the element itself. Same multiply, renamed:
    the oracle follows it (it said "rewritten by shardy-xla" before) and so does the diff."""
    d = ROOT / "sharded_passes" / "cnn_small"
    tr = trace_directory(d)
    f = tr.fates["mul.12"]
    assert f.fate != "rewritten" or f.pass_name != "shardy-xla", f
    assert any(ev.startswith("renamed") and p == "shardy-xla" for _, p, ev in f.history), f
    res = diff_files(next(d.glob("*before_optimizations.txt")),
                     next(d.glob("*after_optimizations.txt")))
    # (the fixture keeps only the sharding snapshots; the zoo's full dumps show the fusion
    # pass put mul.24 into multiply_negate_fusion)
    e = res.fate_of("main.12", "mul.12")
    assert (e.fate, e.fusion) == ("fused", "multiply_negate_fusion"), e


def test_constants_merge_at_the_round_trip_before_any_simplification():
    """log_softmax's constant.16 (-inf) feeds max(x, -inf), which algsimp deletes later; the
    round trip had already merged it into its twin constant.18 (-inf): merged, not
    'simplified away'."""
    d = ROOT / "sharded_passes" / "cnn_small"
    tr = trace_directory(d)
    assert tr.fates["constant.16"].fate == "merged"
    res = diff_files(next(d.glob("*before_optimizations.txt")),
                     next(d.glob("*after_optimizations.txt")))
    f = res.fate_of("log_softmax.6", "constant.16")
    assert f.fate == "merged" and f.into == "constant.18", f


def test_dot_rebuilt_on_squeezed_shapes_is_found():
    """gather_embedding's dot_general.2 (f32[8,4]) is f32[1,4] per device; algsimp rebuilt it
    as a new dot without metadata on the squeezed operand, reading the all-gathered weight
    (dot.3). The diff names that dot, not a fusion that reads it."""
    d = ROOT / "sharded_passes" / "gather_embedding"
    res = diff_files(*_pair(d))
    after = load(_pair(d)[1])
    dots = [i for c in after.computations for i in c.instructions if i.opcode == "dot"
            and not (i.metadata and i.metadata.op_name)]
    assert [x.name for x in dots] == ["dot.3"]
    f = res.fate_of("main.8", "dot_general.2")
    assert f.fate == "rewritten" and f.after == "dot.3", f


def test_cse_runs_before_algsimp_in_a_partitioned_module():
    """The partitioner's cleanup (spmd-cleanup: dce, tuple-simplifier, cse) runs CSE on the
    partitioned module before any algebraic simplification. moe_top1's div.16 (a broadcast
    that changes nothing) and div.17 (a reshape back) repeat the forward pass's; XLA's
    dumps show both merged by that CSE (dump 0007), not removed as no-ops by algsimp.
    transformer_layer's sub.32 (a reshape identical to sub.28) is merged there too, before
    algsimp rewrote sub.28."""
    d = ROOT / "sharded_passes" / "moe_top1"
    res = diff_files(*_pair(d))
    for name in ("div.16", "div.17"):
        f = res.fate_of("main.9", name)
        assert f.fate == "merged" and "before algebraic simplification" in f.reason, f
    res = diff_files(*_pair(ROOT / "sharded_passes" / "transformer_layer"))
    f = res.fate_of("main.18", "sub.32")
    assert f.fate == "merged" and f.into == "sub.28", f


def test_which_pipelines_meet_cse_before_simplification():
    """CPU partitions first (spmd-cleanup's CSE sees the partitioned module before any
    algsimp); the GPU pipeline simplifies first (spmd-simplify), so the CSE-first rules
    stay off for 8 H100s, and for unpartitioned programs."""
    from hlodiff.diff.shardmatch import cse_before_simplification
    assert cse_before_simplification(load(_pair(ROOT / "sharded_cpu" / "dp_step")[1]))
    assert not cse_before_simplification(load(_pair(ROOT / "gpu" / "mlp_dp8")[1]))
    assert not cse_before_simplification(load(_pair(ROOT / "gpu" / "mlp_triton")[1]))


def test_look_alike_rebuilt_dots_follow_the_partitioners_channel_order():
    """remat_nothing's first dot (dot_general.11, f32[8,16] = f32[1,16] per device) and its
    rematerialized twin read the same parameters; algsimp rebuilt both without metadata
    (dot.20, dot.25), each reading its own all-gather of the weight. The partitioner numbers
    the collectives it inserts in program order (channel_id 1 for the forward pass, 12 for
    the recomputation), and XLA's pass dumps follow dot_general.11 to dot.20."""
    d = ROOT / "sharded_passes" / "remat_nothing"
    after = load(_pair(d)[1])
    top = {i.name: i for i in after.by_name[after.entry].instructions}
    assert [top[top["dot.20"].operands[1]].attrs.get("channel_id"),
            top[top["dot.25"].operands[1]].attrs.get("channel_id")] == ["1", "12"]
    f = diff_files(*_pair(d)).fate_of("main.2", "dot_general.11")
    assert f.after == "dot.20", f


def test_look_alike_dots_are_paired_with_a_shard_of_their_own_shape():
    """mlp_deep's dot_general.15 (f32[10,128]) and dot_general.16 (f32[32,128]) share an
    op_name and a rank; the partitioner keeps the first whole (dot.10 = f32[10,128]) and
    shards the second (dot.13 = f32[32,16] in a YNNPACK fusion). A dot is never paired with
    an after dot that cannot hold its (per-device) shape when a swap fits both."""
    d = ROOT / "sharded_passes" / "mlp_deep"
    res = diff_files(*_pair(d))
    assert res.fate_of("main.18", "dot_general.15").after == "dot.10"
    assert res.fate_of("main.18", "dot_general.16").after == "dot.13"
