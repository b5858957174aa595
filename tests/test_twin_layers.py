"""Repeated layers told apart by the slice of a stacked weight each reads, and transposed
dots told apart from a later transpose carrying the same op_name (issue 9, class 6).

Fixtures: fixtures/twin_layers (written by fixtures/generate_twin_layers.py; XLA's own
modules, unedited). Every expected kernel below is the one XLA's pass dumps name (the
oracle in hlodiff/dumps, benchmarks/accuracy.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hlodiff.diff import diff_modules

from .conftest import load_pair
from hlodiff.diff.anchors import local_attrs
from hlodiff.diff.match import match
from hlodiff.diff.stacked_reads import other_layer
from hlodiff.diff.view import after_view, before_view

D = Path(__file__).resolve().parent.parent / "fixtures" / "twin_layers"


def _modules(name: str):
    d = D / name
    before, after = load_pair(d)
    return before, after


@pytest.fixture(scope="module")
def layers():
    before, after = _modules("bf16_layernorm_residual")
    return before, after, diff_modules(before, after)


def test_each_layer_slice_names_the_kernels_that_read_it(layers):
    _, _, r = layers
    # slice(w1, [0:1]) is copied into gemm_fusion_dot.16 and .23, [1:2] into .18 and .21
    # (the pass dumps); both slices share op_name, line, shape and every neighbour
    for name, kernels in (("slice.10", {"gemm_fusion_dot.16", "gemm_fusion_dot.23"}),
                          ("slice.14", {"gemm_fusion_dot.18", "gemm_fusion_dot.21"})):
        f = r.fate_of(name)
        assert f.fate == "fused" and f.fusion in kernels, (name, f.fusion, f.reason)


def test_each_layer_backward_dot_names_its_own_gemm_kernel(layers):
    _, _, r = layers
    # layer 1's dot reads slice(w2, [1:2]) and lives in gemm_fusion_dot.20; layer 0's
    # reads [0:1] and lives in gemm_fusion_dot.22 (before: the two were swapped)
    for name, kernel in (("dot_general.17", "gemm_fusion_dot.20"),
                         ("dot_general.21", "gemm_fusion_dot.22")):
        f = r.fate_of(name)
        assert f.fate == "rewritten" and f.fusion == kernel, (name, f.fusion, f.reason)


def test_other_layer_is_read_through_views_and_fusion_parameters(layers):
    before, after, _ = layers
    B, A = before_view(before), after_view(after)
    m = match(B, A)
    b = {n.name: n.idx for n in B.nodes}
    a = {n.name: n.idx for n in A.nodes}
    # dot.36 (gemm_fusion_dot.20) reads bitcast(slice(param, [1:2])), dot.38 [0:1]
    assert other_layer(m, b["dot_general.17"], a["dot.38"])
    assert not other_layer(m, b["dot_general.17"], a["dot.36"])
    assert other_layer(m, b["dot_general.21"], a["dot.36"])
    assert local_attrs(B.nodes[b["slice.14"]]) == local_attrs(A.nodes[a["slice.30"]])
    assert local_attrs(B.nodes[b["slice.14"]]) != local_attrs(A.nodes[a["slice.26"]])


def test_transposed_dot_is_not_the_later_transpose_with_its_op_name():
    before, after = _modules("soft_moe_slots")
    r = diff_modules(before, after)
    # algsimp makes dot.42 = dot(b, a) carrying transpose.13's op_name; transpose.52.1
    # (loop_transpose_fusion), which also carries it, only reads that dot's result
    for name in ("transpose.13", "dot_general.18"):
        f = r.fate_of(name)
        assert f.fate == "rewritten" and f.fusion == "gemm_fusion_dot.27", (name, f.fusion,
                                                                            f.reason)
        assert "dot.42 = dot(b, a)" in f.reason


def test_a_fused_scalar_copy_does_not_pull_a_layer_into_another_layers_kernel(layers):
    _, _, r = layers
    # both layers' bias-gradient reduces read one before literal constant.25 (their 0);
    # fusion copies it into loop_add_fusion.2 and .3, and the copy it was paired with drew
    # layer 0's reduces into layer 1's kernel (the pass dumps: .131 in .2, .142 in .3)
    for name, kernel in (("reduce_sum.131", "loop_add_fusion.2"),
                         ("reduce_sum.142", "loop_add_fusion.3")):
        f = r.fate_of(name)
        assert f.fate == "fused" and f.fusion == kernel, (name, f.fusion, f.reason)
