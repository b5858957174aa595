"""Fates on fresh 16 programs (issue 9): windows of one padded sequence on 8 devices,
shapes that GPU layout normalization permutes onto each other, a oneDNN softmax that takes
its convert along, series terms CSE keeps, and an algsimp rewrite a user absorbed.

Fixtures: fixtures/fresh16/* (fixtures/generate_fresh16.py: unedited modules of
benchmarks/zoo_fresh16_programs.py, jax 0.10.2 and 0.4.30).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_pass_dumps, trace

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "fresh16"


@lru_cache(maxsize=None)
def _diff(name: str):
    return diff_modules(*load_pair(D / name))


def test_windows_of_a_padded_sequence_keep_their_bounds():
    """8 CPU devices: five windows [k:64+k] of one sequence padded by two, each multiplied
    by the attention values. The partitioner cuts the batch, not the sequence: a window is
    the window with the same sequence bounds. mul.910 (window [4:68]) is in ynn_fusion.22,
    which reads pad_slice_fusion.4 ([4:68]); the middle window [2:66] is the sequence
    itself, no slice afterwards (the engine had given it the [4:68] slice and crossed the
    multiplies, and the reduces and all-reduce elements after them)."""
    r = _diff("cpu8_nystromformer_landmark_pinv_attention")
    assert r.fate_of("main.166", "mul.910").fusion == "ynn_fusion.22"
    f = r.fate_of("main.166", "slice.25")
    assert f.fusion != "pad_slice_fusion.4" and f.fate == "rewritten", (f.fate, f.fusion)
    assert r.fate_of("main.166", "slice.21").fusion == "pad_slice_fusion.7"


def test_layout_normalization_does_not_swap_permuted_twins():
    """8 H100s: Adam's update of conv weight cin (f32[3,3,3,32]) runs on f32[32,3,3,3] after
    layout normalization, and that of cout (f32[3,3,32,3]) on f32[3,3,3,32]. cin's b1 * m
    (mul.835, reading parameter a_1___cin__) is in input_select_transpose_fusion, which
    reads that parameter, not in cout's loop_transpose_fusion.3 of cin's own shape."""
    r = _diff("gpu8_bf16_vpred_minsnr_diffusion_unet")
    for name in ("mul.835", "add.318"):
        f = r.fate_of("main.173", name)
        assert f.fusion == "input_select_transpose_fusion", (name, f.fate, f.fusion, f.reason)


def test_onednn_softmax_with_its_convert():
    """JAX 0.4.30 on CPU, bf16: onednn-ops-rewriter takes the softmax and the convert to
    bf16 after it into custom-call.1, which carries the convert's metadata. Two attentions
    share the source line; the call reading this one's scores is its home. Its ops are not
    the rematted copy's kernels ("computed once with its twin across a barrier")."""
    r = _diff("old_remat_nested_pvt_spatial_reduction")
    for name in ("reduce.517", "exponential.524", "divide.534", "convert.535"):
        f = r.fate_of("main.5222", name)
        assert (f.fate, f.after) == ("rewritten", "custom-call.1"), (name, f.fate, f.after,
                                                                     f.reason)


def test_cse_keeps_the_first_series_term():
    """JAX 0.4.30 on CPU: digamma's series repeats lgamma's terms: divide.805 is an identical copy of
    divide.745, and CSE keeps divide.745 (first in post order). divide.745 is computed in
    fusion.321 and divide.805 merged into it (the matcher had reached divide.805 first, and
    divide.745 took a select sharing its op_name)."""
    r = _diff("old_stick_breaking_kumaraswamy_vae")
    f = r.fate_of("main.5813", "divide.745")
    assert (f.fate, f.fusion) == ("fused", "fusion.321"), (f.fate, f.fusion, f.reason)
    f = r.fate_of("main.5813", "divide.805")
    assert (f.fate, f.into) == ("merged", "divide.745"), (f.fate, f.into, f.reason)


def test_oracle_names_the_rewrite_not_the_operand_a_user_absorbed():
    """algsimp rewrites div.327 = reduce_sum.1059 / 512 as multiply.22 = reduce_sum.1059 *
    (1/512), and folds the divide into its user mul.1013 (now reduce_sum.1059 times a merged
    constant). What took div.327's place is multiply.22, not reduce_sum.1059."""
    snaps = find_pass_dumps(D / "absorbed_divide", "jit_hrnet_two_branch_exchange_fusion")
    t = trace(snaps)
    f = t.fates["div.327"]
    assert (f.fate, f.into) == ("rewritten", "multiply.22"), (f.fate, f.into)


def test_oracle_follows_an_inlined_root_read_in_place_of_its_call():
    """JAX 0.4.30 on CPU: twenty jit(_where) callees broadcast one predicate, and the call
    inliner's copies of those broadcasts are interchangeable, so the copy of the root
    select.3155 is not found by its operands. multiply.3260 reads select.100 where it read
    call.3156: select.3155 was inlined as select.100 (the trace had stopped at "inlined")."""
    snaps = find_pass_dumps(D / "inlined_root", "jit_bf16_vpred_minsnr_diffusion_unet")
    t = trace(snaps)
    assert t.fates["select.3155"].final_name == "select.100"


def test_mutual_rewrites_count_fused_copies_of_a_paired_neighbour():
    """8 H100s, the same program: a neighbour paired with one of fusion's copies counts for
    every copy when the rewrite step looks for mutual best pairs, as in its greedy pass
    (the weight-gradient dot and a reduce had been given the other layer's kernels)."""
    r = _diff("gpu8_nystromformer_landmark_pinv_attention")
    assert r.fate_of("main.166", "dot_general.347").fusion == "gemm_fusion_dot.538"
    assert r.fate_of("main.166", "reduce_sum.1062").fusion == "fusion.274"


def test_strided_window_of_one_element_is_the_same_window():
    """An associative scan slices every other element: slice.47 = [1:2:2] takes one element,
    and algsimp prints it [1:2]. The same window: slice.47 is fused in add_pad_fusion.7 (the
    bounds check had called the windows different)."""
    r = _diff("cpu_linear_recurrence_assoc_scan")
    for name in ("slice.47", "slice.48"):
        f = r.fate_of("main.2", name)
        assert (f.fate, f.fusion) == ("fused", "add_pad_fusion.7"), (name, f.fate, f.reason)


def test_copy_paired_by_its_metadata_stays_paired():
    """convert_element_type.2 (inlined from lu_factor) is an identical copy of
    convert_element_type.3; algsimp rewrites convert_element_type.3 before CSE runs, so
    nothing is merged. Its own metadata pairs convert_element_type.2 with
    convert_element_type.1: the kernel does not move to the copy CSE would have kept."""
    r = _diff("cpu_lu_solve_grad")
    f = r.fate_of("lu_factor.6", "convert_element_type.2")
    assert (f.fate, f.fusion) == ("fused", "convert_add_fusion"), (f.fate, f.fusion, f.reason)


def test_regrouped_bias_corrections_name_their_numerator_not_another_parameters_line():
    """JAX 0.4.30 CPU, Adam written m / c1 / (sqrt(v / c2) + eps) for every parameter:
    algsimp regroups (A / B) / C as A / (B * C), so the inner divide (divide.5659 = m / c1
    of one weight) is gone and its numerator add.5558 is divided once by the outer divide.
    The rewrite step had given it another parameter's broadcast of c1 from the same source
    line (broadcast.433 in fusion); the pass dumps follow it to add.5558, in fusion.44."""
    r = _diff("old_stick_breaking_kumaraswamy_vae")
    got = {n: r.fate_of("main.5813", n).fusion
           for n in ("divide.5659", "divide.5670", "divide.5681", "divide.5692")}
    assert got == {"divide.5659": "fusion.44", "divide.5670": "fusion.41",
                   "divide.5681": "fusion.37", "divide.5692": "fusion.34"}
    f = r.fate_of("main.5813", "divide.5659")
    assert f.fate == "rewritten" and "regrouped" in f.reason, f.reason


def test_a_sum_whose_negation_algsimp_moved_out_is_fused_where_it_now_sums():
    """JAX 0.4.30's algsimp rewrites ``reduce(negate(x))`` as ``negate(reduce(x))``: the reduce
    keeps its name and sums x; a new negate reads it. XLA's pass dumps of this program (zoo
    set fresh 16, JAX 0.4.30) follow reduce.3035 under its name until the fusion pass puts
    it in fusion.314. The engine had said "simplified away; its effect is now in negate.129"
    (negated_sums.py)."""
    r = _diff("old_remat_nested_pvt_spatial_reduction")
    f = r.fate_of("main.5222", "reduce.3035")
    assert (f.fate, f.fusion) == ("fused", "fusion.314"), (f.fate, f.fusion, f.reason)
    assert "moved the negation out of the sum" in f.reason and "negate.129" in f.reason


def test_dot_rebuilt_on_the_squeezed_piece_keeps_its_metadata():
    """8 CPU devices: the pseudo-inverse's dot_general.229 = f32[8,4,8,8] (batch dims 0 and
    1) is one device's f32[1,4,8,8]; batch-dot-simplification squeezes the unit dimension
    (pass dumps: rewritten into dot.261), and the library rewriter puts it in ynn_fusion.189
    as dot.598 = f32[4,8,8], with the dot's op_name and source line. The rebuilt-dot step
    took only dots without metadata and gave it another kernel's dot (ynn_fusion.40)."""
    r = _diff("cpu8_nystromformer_landmark_pinv_attention")
    f = r.fate_of("main.166", "dot_general.229")
    assert (f.fate, f.fusion) == ("rewritten", "ynn_fusion.189"), (f.fate, f.fusion, f.reason)
