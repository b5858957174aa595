"""Copies of one instruction in several GPU kernels, told by the names XLA gives its clones
(issue 9).

Fixtures: fixtures/kernel_clones/* (fixtures/generate_kernel_clones.py: unedited dumps of
benchmarks/zoo_fresh15_programs.py and zoo_fresh19_programs.py on one deviceless H100, jax
0.10.2).
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_pass_dumps, trace

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "kernel_clones"


def test_oracle_follows_a_kernel_merged_under_clone_names():
    """Dump 0063 -> 0064 (multi_output_fusion): the producer kernel fusion.169 (holding
    slice.8.13) is merged into fusion.156, where its instructions are named
    slice.8.13.clone.1 and so on. The structural match had not found the body there, and
    the trace lost every value the kernel held (fused into nothing)."""
    t = trace(find_pass_dumps(D / "multi_output", "jit_fcos_centerness_giou_head"))
    f = t.fates["fusion.169"]
    assert (f.fate, f.fusion) == ("fused", "fusion.156"), (f.fate, f.fusion, f.history)
    assert t.destinations("fusion.169") == ["fusion.156"]


def test_clones_of_the_copy_cse_kept_go_to_it():
    """The learning rate broadcast(min(...)) is computed once per parameter; CSE keeps
    mul.1368, and fusion clones it into loop_add_subtract_fusion.3 and .4
    (mul.1368.33.clone.1, mul.1368.73.clone.1). Propagation from users had handed the clones
    to the merged copies mul.1438 and mul.1416, and mul.1368 took a f32[32,3,3,3] look-alike
    in another kernel. The pass dumps: mul.1368 fused at priority-fusion into both kernels;
    mul.1370, mul.1416 and mul.1438 merged into it at CSE."""
    r = diff_modules(*load_pair(D / "gpu_ncsn_unet_cond_instancenorm_dsm"))
    kernels = {"loop_add_subtract_fusion.3", "loop_add_subtract_fusion.4"}
    f = r.fate_of("main.353", "mul.1368")
    assert f.fate == "fused" and f.fusion in kernels, (f.fate, f.fusion, f.reason)
    for twin in ("mul.1370", "mul.1416", "mul.1438"):
        f = r.fate_of("main.353", twin)
        assert f.fate == "merged" and f.fusion in kernels, (twin, f.fate, f.fusion, f.reason)
