"""Kernel kinds, collectives, shardings and partitioning on real GPU (H100, deviceless)
and 8-CPU-device dumps made by fixtures/generate_gpu.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlodiff.analysis.collectives import analyze_collectives
from hlodiff.analysis.kernels import analyze_kernels
from hlodiff.analysis.sharding import parse_groups, parse_sharding
from hlodiff.cli import main
from hlodiff.diff import diff_files
from hlodiff.dumps.loader import load

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
GPU = sorted(p for p in (ROOT / "gpu").iterdir() if p.is_dir())
CPU8 = sorted(p for p in (ROOT / "sharded_cpu").iterdir() if p.is_dir())
_COLL = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")


def _pair(d: Path) -> tuple[Path, Path]:
    return (next(d.glob("*.before_optimizations.txt")),
            next(d.glob("*after_optimizations.txt")))


def test_fixture_set_is_small_and_complete():
    assert {p.name for p in GPU} >= {"mlp_triton", "mlp_cublas", "conv_step", "attention",
                                     "mlp_dp8", "tp_mlp8"}
    assert {p.name for p in CPU8} >= {"dp_step", "fsdp_step", "tp_mlp", "psum_shmap",
                                      "ppermute_ring", "reduce_scatter"}
    total = sum(f.stat().st_size for d in GPU + CPU8 for f in d.iterdir())
    assert total < 3 * 1024 * 1024


@pytest.mark.parametrize("d", GPU, ids=lambda p: p.name)
def test_every_gpu_kernel_has_a_named_kind(d):
    rep = analyze_kernels(load(str(_pair(d)[1])))
    assert rep.kernels
    for k in rep.kernels:
        assert k.kind.lower() not in ("custom", "custom fusion", "fusion", "custom call"), k
    # every kCustom fusion of the module is named by its emitter
    text = _pair(d)[1].read_text()
    entry = text[text.index("\nENTRY"):]
    n_custom = len(re.findall(r"fusion\([^)]*\), kind=kCustom", entry))
    named = sum(1 for k in rep.kernels if k.opcode == "fusion"
                and k.kind.startswith(("Triton", "cuDNN", "split-K")))
    assert named >= n_custom


def test_triton_gemm_tiles_and_split_k():
    rep = analyze_kernels(load(str(_pair(ROOT / "gpu" / "mlp_triton")[1])))
    gemms = [k for k in rep.kernels if k.kind == "Triton gemm"]
    assert len(gemms) == 8 and all("tile" in k.detail for k in gemms)
    assert all(k.flops > 0 for k in gemms)
    split = [k for k in gemms if k.split_k]
    assert split
    mod = load(str(_pair(ROOT / "gpu" / "mlp_triton")[1]))
    for k in split:  # the parts are the gemm's leading dim, summed by a reduce over dim 0
        assert mod.entry_computation[k.name].shape.dims[0] == k.split_k
    assert any(k.kind == "split-K reduction" for k in rep.kernels)
    assert any(k.kind == "Triton softmax" for k in rep.kernels)


def test_cublas_workspaces_are_not_data_moved():
    after = _pair(ROOT / "gpu" / "mlp_cublas")[1]
    mod = load(str(after))
    rep = analyze_kernels(mod)
    calls = [k for k in rep.kernels if k.kind == "cuBLASLt matmul"]
    assert len(calls) == 8
    ws_total = 0
    for k in calls:
        shape = mod.entry_computation[k.name].shape
        ws = shape.tuple_shapes[-1]
        assert ws.element_type == "s8" and k.workspace_bytes == ws.byte_size
        assert k.bytes_written == shape.tuple_shapes[0].byte_size
        ws_total += ws.byte_size
    assert rep.workspace_bytes == ws_total > 0
    assert rep.bytes_moved == sum(k.bytes_read + k.bytes_written for k in rep.kernels)
    assert any(k.detail == "epilogue BIAS" for k in calls)
    # FLOPs of a gemm: 2*M*N*K; the first layer is 256x784 @ 784x512
    assert max(k.flops for k in calls) == 2 * 256 * 512 * 784


def test_cudnn_convolutions():
    rep = analyze_kernels(load(str(_pair(ROOT / "gpu" / "conv_step")[1])))
    kinds = rep.kinds
    assert kinds["cuDNN convolution (backward filter)"] >= 1
    assert kinds["cuDNN convolution (backward input)"] >= 1
    fwd = [k for k in rep.kernels if k.kind == "cuDNN convolution"]
    # 8x32x32 outputs of 32 features, 3x3x16 window: 2 FLOPs per multiply-add
    assert fwd and fwd[0].flops == 2 * 8 * 32 * 32 * 32 * 3 * 3 * 16


def _xla_collectives(path: Path) -> list[tuple[str, str]]:
    """(name, printed text) of every collective op, as XLA's own parser prints it."""
    from jaxlib import _hlo

    out = []
    for c in _hlo.hlo_module_from_text(path.read_text()).computations():
        for i in c.instructions():
            text = i.to_string()
            m = re.match(r"\s*(?:ROOT )?%?(\S+) = .*? ([a-z-]+)\(", text)
            if m and (m.group(2) in _COLL or (m.group(2).endswith("-start")
                                              and m.group(2)[:-6] in _COLL)):
                out.append((m.group(1), text))
    return out


_BITS = {"f32": 32, "f16": 16, "bf16": 16, "s32": 32, "u32": 32, "s8": 8, "u8": 8, "pred": 8}


def _xla_bytes(text: str) -> int:
    shape = text.split(" = ", 1)[1]
    shape = shape[:shape.index(" ", shape.index("]") if "]" in shape else 0)] if not \
        shape.startswith("(") else shape[:shape.index(") ") + 1]
    total = 0
    for t, dims in re.findall(r"(\w+)\[([\d,]*)\]", shape):
        n = 1
        for d in dims.split(","):
            if d:
                n *= int(d)
        total += n * _BITS[t] // 8
    return total


@pytest.mark.parametrize("d", CPU8 + [ROOT / "gpu" / n for n in ("mlp_dp8", "tp_mlp8", "tp_mlp_2x4")],
                         ids=lambda p: p.parent.name + "/" + p.name)
def test_every_collective_is_reported_with_xla_bytes_and_groups(d):
    before, after = _pair(d)
    rep = analyze_collectives(load(str(after)), load(str(before)))
    xla = _xla_collectives(after)
    assert xla, "every sharded fixture has collectives"
    ours = {c.wrapped or c.name: c for c in rep.collectives}  # async-start: the wrapped op
    assert sorted(ours) == sorted(n for n, _ in xla)
    for name, text in xla:
        c = ours[name]
        if "-start" not in text.split("(")[0]:
            assert c.out_bytes == _xla_bytes(text)
        assert c.bytes > 0
        if c.kind == "collective-permute":
            assert c.pairs
        else:
            assert c.groups and sum(len(g) for g in c.groups) == 8
            assert sorted(x for g in c.groups for x in g) == list(range(8))
            assert c.mesh_axes  # mapped onto the program's mesh
    assert rep.total_bytes == sum(c.bytes for c in rep.collectives)
    assert sum(rep.bytes_by_kind().values()) == rep.total_bytes


def test_data_parallel_gradient_all_reduce_is_all_gradients_merged():
    before, after = _pair(ROOT / "sharded_cpu" / "dp_step")
    b = load(str(before))
    rep = analyze_collectives(load(str(after)), b)
    (ar,) = rep.collectives
    params = [p for p in b.entry_computation.parameters if p.attrs.get("sharding") == "{replicated}"]
    # every replicated parameter's gradient plus the f32[] loss, reduced in one op
    assert ar.kind == "all-reduce" and ar.merged == len(params) + 1
    assert ar.bytes == sum(p.shape.byte_size for p in params) + 4
    assert ar.mesh_axes == ["data"]
    gpu = analyze_collectives(*[load(str(p)) for p in reversed(_pair(ROOT / "gpu" / "mlp_dp8"))])
    (g,) = gpu.collectives
    assert g.is_async and g.done and g.merged == 7 and g.mesh_axes == ["data"]


def test_ring_reduce_scatter_and_psum():
    rep = analyze_collectives(load(str(_pair(ROOT / "sharded_cpu" / "ppermute_ring")[1])))
    assert [c.pattern for c in rep.collectives] == ["ring shift +1"] * 3
    assert all(len(c.pairs) == 8 for c in rep.collectives)
    rs = analyze_collectives(load(str(_pair(ROOT / "sharded_cpu" / "reduce_scatter")[1])))
    (c,) = rs.collectives
    assert c.kind == "reduce-scatter" and c.in_bytes == 8 * c.out_bytes
    ps = analyze_collectives(load(str(_pair(ROOT / "sharded_cpu" / "psum_shmap")[1])))
    assert ps.collectives[0].op_name.endswith("psum_invariant")


def test_replica_group_forms():
    assert parse_groups("[2,4]<=[4,2]T(1,0)")[0] == [[0, 2, 4, 6], [1, 3, 5, 7]]
    assert parse_groups("[4,2]<=[8]")[0] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert parse_groups("{{0,1},{2,3}}")[0] == [[0, 1], [2, 3]]
    groups, mesh, axes = parse_groups("mesh['a'=2,'b'=4] {'a'}")
    assert axes == ["a"] and groups == [[0, 4], [1, 5], [2, 6], [3, 7]]
    s = parse_sharding("{devices=[2,1,4]<=[8] last_tile_dim_replicate}")
    assert s.tile_dims == [2, 1] and s.replicated_ways == 4 and s.ways == 2
    assert parse_sharding("{maximal device=3}").device == 3
    assert parse_sharding("{{replicated}, {devices=[8]<=[8]}}").elements[1].ways == 8


@pytest.mark.parametrize("name", ["dp_step", "fsdp_step", "tp_mlp"])
def test_per_device_shapes_are_not_layout_or_reshape_changes(name):
    before, after = _pair(ROOT / "sharded_cpu" / name)
    res = diff_files(before, after)
    assert res.summary["partitioned"] == 8
    assert not [lc for lc in res.layouts if lc.instruction == "ENTRY"]
    for f in res.instructions:
        if "moved across" in f.reason:
            # algsimp's reduce(neg(x)) -> neg(reduce(x)) changes the rank; partitioning
            # never does, so a per-device shape alone is not reported as a move
            b, a = (s.strip() for s in f.reason.split("(", 1)[1].split(")")[0].split("->"))
            assert b.count(",") != a.count(","), f
        # a shard whose size-1 dims a later pass squeezed is rebuilt, and still partitioned
        # (shard helper: the SPMD snapshot has it at the global rank)
        if "reshaped operands" in f.reason:
            assert "partitioned 8 ways, size-1 dims squeezed" in f.reason, f
    parts = [f for f in res.instructions if "partitioned 8 ways" in f.reason]
    assert parts
    # bytes are compared per device on both sides
    assert res.summary["bytes_before"] < res.summary["bytes_before_global"]
    js = res.to_json()
    assert js["collectives"]["after"]["bytes_per_device"] == res.summary["collective_bytes"] > 0
    assert js["kernels"]["after"]["kinds"]
    roles = {s["role"] for s in js["collectives"]["shardings"]}
    assert "parameter" in roles


def test_cli_show_diff_and_gate(tmp_path):
    r = CliRunner().invoke(main, ["show", str(_pair(ROOT / "gpu" / "mlp_dp8")[1])])
    assert r.exit_code == 0, r.output
    assert "Triton gemm" in r.output and "all-reduce" in r.output and "merged 7" in r.output
    d = str(ROOT / "sharded_cpu" / "fsdp_step")
    r = CliRunner().invoke(main, [d, "--format", "json"])
    assert r.exit_code == 0
    js = json.loads(r.output)
    assert js["summary"]["collective_bytes"] == js["collectives"]["after"]["bytes_per_device"]
    r = CliRunner().invoke(main, [d, "--fail-on", "collective_bytes>0"])
    assert r.exit_code == 1
    r = CliRunner().invoke(main, [d, "--fail-on", "collective_bytes>1e12"])
    assert r.exit_code == 0 and "Collectives" in r.output
    out = tmp_path / "r.html"
    r = CliRunner().invoke(main, [d, "--format", "html", "-o", str(out)])
    assert r.exit_code == 0 and "id='devices'" in out.read_text()


def test_two_dimensional_mesh_groups_with_device_order():
    """mesh[...], device_ids=([2,4]T(1,0)) {'axis_1'}: XLA's form for a 2x4 mesh's axis."""
    before, after = _pair(ROOT / "gpu" / "tp_mlp_2x4")
    rep = analyze_collectives(load(str(after)), load(str(before)))
    (c,) = rep.collectives
    assert "device_ids" in c.groups_text
    # the model axis of a 2x4 mesh over devices 0..7: two groups of four neighbours
    assert sorted(map(sorted, c.groups)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert c.mesh_axes == ["model"]


def test_groups_inside_one_mesh_axis_are_its_sub_axis():
    from hlodiff.analysis.sharding import Mesh

    mesh = Mesh([("data", 8)])
    assert mesh.axes_of([[0, 2, 4, 6], [1, 3, 5, 7]]) == ["data[4 of 8]"]
    assert mesh.axes_of([list(range(8))]) == ["data"]
    assert Mesh([("data", 2), ("model", 4)]).axes_of([[0, 4], [1, 5], [2, 6], [3, 7]]) == ["data"]


def test_show_json_of_an_optimized_module_has_kernels_and_collectives():
    """`show FILE --format json --kernels` of an optimized module carries the same kernel and
    collective sections as the diff's JSON; an unoptimized module has none."""
    before, after = _pair(ROOT / "sharded_cpu" / "dp_step")
    r = CliRunner().invoke(main, ["show", str(after), "--format", "json"])
    assert r.exit_code == 0 and "kernels" not in json.loads(r.output)  # the plain model
    r = CliRunner().invoke(main, ["show", str(after), "--format", "json", "--kernels"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    want = analyze_collectives(load(after)).to_dict()
    assert data["collectives"]["count"] == want["count"] > 0
    assert data["collectives"]["bytes_per_device"] == want["bytes_per_device"]
    assert sum(data["kernels"]["kinds"].values()) == len(data["kernels"]["kernels"]) > 0
    r = CliRunner().invoke(main, ["show", str(before), "--format", "json", "--kernels"])
    assert r.exit_code == 0 and "kernels" not in json.loads(r.output)
