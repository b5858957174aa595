"""Fates on fresh 14 programs (issue 9): twin index chains the call inliner copies, loops
of partitioned programs that the loop passes rebuilt, and nested jax.checkpoint regions.

Fixtures: fixtures/fresh14/* (fixtures/generate_fresh14.py: unedited modules of
benchmarks/zoo_fresh14_programs.py, jax 0.10.2).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_pass_dumps, trace

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "fresh14"


@lru_cache(maxsize=None)
def _diff(name: str):
    return diff_modules(*load_pair(D / name))


def test_oracle_tells_inlined_twin_chains_apart_by_what_reads_them():
    """Dump 0006 -> 0007 (call-inliner): the fori body's call holds two identical ``i * 8``
    chains (mul.86 -> select_n.6 -> the inputs' f32[8,12] dynamic slice, mul.87 -> select_n.7
    -> the labels' s32[8] one). The inliner copies both with new names and renumbered stack
    frames, labels' first. The copy whose readers lead to the f32 slice is mul.86's; taking
    the first copy swapped the chains and left the slice and everything after it without a
    counterpart ("inlined")."""
    t = trace(find_pass_dumps(D / "inliner_twins", "jit_grad_accum_fori_microbatches"))
    step = next(s for s in t.passes if s.name == "call-inliner")
    assert step.renamed["mul.86"] == "mul.2", step.renamed.get("mul.86")
    assert step.renamed["mul.87"] == "mul.1", step.renamed.get("mul.87")
    assert step.renamed.get("dynamic_slice.2") == "dynamic_slice.1"
    assert step.renamed.get("dynamic_slice.3") == "dynamic_slice.0"


def test_partitioned_loop_rebuilt_without_marks_is_rewritten():
    """8 H100s: simplify-while-loops cloned the body and the state lost an element (23 -> 22);
    the Shardy round trip renamed the body ``region_0.22_spmd``, no ``.clone`` left. What
    reads the loop state was rebuilt, not kept or fused as it was."""
    r = _diff("gpu8_grad_accum_fori_microbatches")
    for comp, name in (("closed_call.38", "mul.86"), ("closed_call.38", "dot_general.8"),
                       ("region_0.39", "get-tuple-element.23")):
        f = r.fate_of(comp, name)
        assert f.fate == "rewritten" and "while loop rebuilt" in f.reason, (name, f.fate, f.reason)


def test_partitioner_cse_merges_twin_chains_before_the_loop_passes():
    """8 CPU devices: the partitioner's cleanup CSE runs before the loop passes and merges
    one of the two identical index chains into the other: merged, not "while loop
    rebuilt" for both."""
    r = _diff("cpu8_grad_accum_fori_microbatches")
    for pair in (("mul.86", "mul.87"), ("select_n.6", "select_n.7")):
        fates = sorted(r.fate_of("closed_call.38", n).fate for n in pair)
        assert "merged" in fates, (pair, fates)


def test_nested_remat_recomputations_and_their_views():
    """Nested jax.checkpoint on CPU (dumps 0014, 0023-0025): the outer recomputation's
    reshape.116 of dot_general.173 (which CSE merged into the forward dot in ynn_fusion.102)
    re-views that dot's data; the outer recomputation dot_general.182 has no forward twin
    but an identical inner recomputation, whose kernel computes both; reduce_sum.991 reads
    the inner barrier's element, which hands on the outer recomputation's value."""
    r = _diff("cpu_remat_nested_names_but_these")

    def where(n):
        f = r.fate_of("main.157", n)
        return f.fusion or f.after

    assert where("reshape.116") == where("dot_general.173") == "ynn_fusion.102"
    assert where("dot_general.182") == "ynn_fusion.72"
    assert where("reduce_sum.991") == "multiply_reduce_fusion.27"


def test_oracle_maps_partitioned_twins_by_evidence_first():
    """Dump 0005 -> 0006 (the SPMD partitioner, 8 CPU devices): every name changes. Layer
    0's top-k indices become a per-device get-tuple-element of a new tuple
    (``get-tuple-element.2``, read by ``sort.14``), layer 1's top-k stays whole and its
    index element is ``get-tuple-element.4``. Taken in text order, the first, with nothing
    to go by, took layer 1's element, and the sorts swapped layers."""
    t = trace(find_pass_dumps(D / "partitioner_twins", "jit_mixture_of_depths_topk_router"))
    step = t.passes[-1]
    assert step.renamed.get("top_k.5") == "get-tuple-element.4", step.renamed.get("top_k.5")
    assert step.renamed.get("sort.12") == "sort.14", step.renamed.get("sort.12")
    assert step.renamed.get("sort.13") == "sort.15", step.renamed.get("sort.13")


def test_oracle_keeps_broadcast_dimensions_across_the_round_trip():
    """Dump 0004 -> 0005 (shardy-xla, 8 CPU devices): the round trip copies fresh 9
    siglip_sigmoid_loss's eye, ``eq(broadcast(iota, dimensions={0}), broadcast(iota,
    dimensions={1}))``, for two readers. Its iotas are interchangeable, so a broadcast
    reading the iota taken for ``iota.4`` is no evidence that it is ``iota.5``: each
    broadcast is renamed to one with its own dimensions."""
    t = trace(find_pass_dumps(D / "round_trip_broadcasts", "jit_siglip_sigmoid_loss"))
    step = t.passes[-1]
    text = next((D / "round_trip_broadcasts").glob("*.0005.*")).read_text()
    for before, dims in (("iota.5", "{0}"), ("iota.7", "{1}")):
        new = step.renamed.get(before)
        assert new is not None, before
        line = next(x for x in text.splitlines() if x.strip().startswith(f"%{new} = "))
        assert f"dimensions={dims}" in line, (before, new, line[:120])


def test_resize_weights_from_iotas_are_fused_or_merged():
    """JAX 0.4.30 on CPU: jax.image.resize computes its interpolation weights from iotas
    and normalizes them by their sum. Constant folding never evaluates an iota, and
    algsimp's index arithmetic does not reach past the reduce: the weights of the first
    inlined resize callee are fused (dump 0035), and an identical copy in another callee is
    merged into them by CSE (dump 0028), not "simplified away"."""
    r = _diff("old_unet3plus_full_scale_skips")
    for name in ("broadcast.442", "subtract.446"):
        f = r.fate_of("_resize_5.411", name)
        assert f.fate == "fused", (name, f.fate, f.reason)
    f = r.fate_of("_resize_11.758", "broadcast.789")
    assert f.fate == "merged" and f.fusion == r.fate_of("_resize_5.411", "broadcast.442").fusion, \
        (f.fate, f.fusion, f.reason)
