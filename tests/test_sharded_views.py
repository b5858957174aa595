"""Views, merged split-K dots and a concatenated all-reduce on 8 H100s (issue 9).

Fixture: fixtures/sharded_views (fixtures/generate_sharded_views.py: unedited modules of
one attention block trained with SGD on 8 deviceless H100s, jax 0.10.2). The expected
fates are those of XLA's pass dumps of the same compilation.
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.diff import diff_modules

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "sharded_views"


def _fates():
    r = diff_modules(*load_pair(D))
    return lambda name: r.fate_of("main.11", name)


def test_a_view_of_a_partitioned_reshape_is_one_of_its_pieces():
    """reshape.12 = f32[16,32,128] (per device f32[2,32,128]) merges the heads of the
    attention's context, a transpose. The pass dumps: algsimp makes the pair one transpose,
    fused as input_transpose_fusion.1. That kernel's f32[64,8,16] bitcast.86.0 feeds a
    gemm; of the same rank, it is no per-device piece of the reshape, which the engine had
    named."""
    f = _fates()("reshape.12")
    assert (f.fate, f.fusion) == ("rewritten", "input_transpose_fusion.1"), (f.after, f.reason)


def test_merged_split_k_projection_slices_go_to_their_dots():
    """The dot merger makes the query/key/value projections one dot of the concatenated
    weights, which the split-K rewriter cuts into 4 partial products (gemm_fusion_dot.47);
    each attention transpose kernel sums them and slices its piece: slice.15 ([0:128],
    dot_general.17's weight) in input_transpose_fusion.4, slice.1.3 ([128:256],
    dot_general.15's) in loop_transpose_fusion.4. The pass dumps: dot-merger makes each
    dot a slice, fused there; the reshapes of the dots, decomposed into copies, live there
    too. The engine had left dot_general.15 without a place and put both reshapes in one
    kernel."""
    fate = _fates()
    for dot, reshape, sl, kernel in (("dot_general.15", "reshape.9", "slice.1.3",
                                      "loop_transpose_fusion.4"),
                                     ("dot_general.17", "reshape.11", "slice.15",
                                      "input_transpose_fusion.4")):
        f = fate(dot)
        assert (f.fate, f.after, f.fusion) == ("rewritten", sl, kernel), (dot, f.after, f.reason)
        assert "gemm_fusion_dot.47" in f.reason, f.reason
        r = fate(reshape)
        assert (r.fate, r.fusion) == ("rewritten", kernel), (reshape, r.after, r.reason)


def test_slices_of_a_concatenated_all_reduce_carry_their_gradients():
    """The four weight gradients are summed by one all-reduce of their concatenation
    (wrapped_concatenate, all-reduce-start/-done) and cut back out by wrapped slices; each
    finiteness check reads its gradient's slice. The pass dumps put is_finite.4 (of
    transpose.16) in input_reduce_fusion.3, is_finite.5 in .2 and is_finite.6 in .1; the
    engine had paired them in a cycle."""
    fate = _fates()
    for name, kernel in (("is_finite.4", "input_reduce_fusion.3"),
                         ("is_finite.5", "input_reduce_fusion.2"),
                         ("is_finite.6", "input_reduce_fusion.1"),
                         ("reduce_and.35", "input_reduce_fusion.3")):
        f = fate(name)
        assert (f.fate, f.fusion) == ("fused", kernel), (name, f.fusion, f.reason)
