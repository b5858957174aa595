"""Twins of two layers on 8 H100s (issue 9, classes 3 and 6): fusion copies each layer's
router softmax into several kernels, and a broadcast both layers read is copied into each
one, so the neighbours paired so far can favour the other layer's copy. The parameters a
value is computed from tell the layers apart (param_deps.far_twin). And a projection the
dot merger combined with dots reading an identical (CSE-merged) layer norm is found in its
slice of the merged dot (dotmerge.py), not named as its own weight.

Fixture: fixtures/merged_twins (fixtures/generate_merged_twins.py: unedited modules of
benchmarks/zoo_fresh19_programs.py mh_moe_subtoken_top2_merge, jax 0.10.2, 8 H100s
deviceless).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from hlodiff.diff import diff_modules

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "merged_twins"


@lru_cache(maxsize=None)
def _result():
    return diff_modules(*load_pair(D / "gpu8_mh_moe_subtoken_top2_merge"))


def _kernel(name: str) -> str | None:
    f = _result().fate_of("main.175", name)
    return f.fusion or f.after


def test_each_layers_router_softmax_in_its_own_kernel():
    """Layer 0's router select, exp and sum are in input_reduce_fusion.52 (XLA's pass
    dumps), layer 1's in input_reduce_fusion.51; the -inf both selects read
    (broadcast.110) had been paired with the copy in layer 1's kernel and pulled layer 0's
    select there."""
    assert [_kernel(n) for n in ("select_n.16", "exp.10", "reduce_sum.1094")] == \
        ["input_reduce_fusion.52"] * 3
    assert _kernel("select_n.17") == "input_reduce_fusion.51"


def test_query_projection_in_its_slice_of_the_merged_dot():
    """dot_general.75 (x @ Wq, x = add.288) is merged with dot_general.76/77 (reading
    add.293, the same layer norm called again) into gemm_fusion_dot.152; its value is
    slice.19.1 in loop_transpose_fusion.11. It had been called simplified away into its
    weight, param.7."""
    f = _result().fate_of("main.175", "dot_general.75")
    assert (f.fate, f.after, f.fusion) == ("rewritten", "slice.19.1", "loop_transpose_fusion.11")
    assert "gemm_fusion_dot.152" in f.reason
