"""hlodiff.dumps.passes on XLA's real pass-by-pass dumps (fixtures/cpu/mlp_step, fold_cse)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

import hlodiff
from hlodiff.errors import InputError
from hlodiff.dumps.passes import (FATES, PassSnapshot, PassTrace, classify_pass, find_before_file,
                            find_pass_dumps, parse_pass_filename, trace, trace_directory)

CPU = Path(__file__).resolve().parent.parent / "fixtures" / "cpu"
MLP = CPU / "mlp_step"
FOLD = CPU / "fold_cse"


@pytest.fixture(scope="module")
def fold() -> PassTrace:
    return trace_directory(FOLD)


@pytest.fixture(scope="module")
def mlp() -> PassTrace:
    return trace_directory(MLP)


# ---- finding dumps ----------------------------------------------------------------------

def test_filename_parsing():
    s = parse_pass_filename("module_0026.jit_mlp_step.0007.simplification."
                            "after_pipeline-start.before_algsimp.txt")
    assert (s.module_id, s.module_name, s.index) == ("module_0026", "jit_mlp_step", 7)
    assert (s.pipeline, s.after_pass, s.before_pass) == ("simplification", "pipeline-start",
                                                         "algsimp")
    s = parse_pass_filename("module_0026.jit_mlp_step.0025.after_layout_assignment."
                            "after_pipeline-start.before_pipeline-end.txt")
    assert (s.pipeline, s.after_pass, s.before_pass) == ("after_layout_assignment",
                                                         "pipeline-start", "pipeline-end")
    s = parse_pass_filename("module_0026.jit_mlp_step.0029.copy-insertion."
                            "after_adding_copies_to_resolve_interference.txt")
    assert (s.pipeline, s.after_pass, s.before_pass) == (
        "copy-insertion", "adding_copies_to_resolve_interference", None)
    assert parse_pass_filename("module_0026.jit_mlp_step.before_optimizations.txt") is None
    assert parse_pass_filename("module_0026.jit_mlp_step.cpu_after_optimizations.txt") is None


def test_find_pass_dumps_ordered():
    snaps = find_pass_dumps(MLP)
    assert len(snaps) == 34
    assert [s.index for s in snaps] == list(range(34))
    assert all(isinstance(s, PassSnapshot) and s.path.is_file() for s in snaps)
    assert snaps[0].after_pass == "pipeline-start"
    names = [s.after_pass for s in snaps]
    for p in ("call-inliner", "algsimp", "dce", "cse", "fusion", "fusion-wrapper",
              "dot-library-rewriter", "layout-assignment"):
        assert p in names
    assert find_before_file(snaps).name == "module_0026.jit_mlp_step.before_optimizations.txt"


@pytest.mark.parametrize("hint", ["jit_mlp_step", "mlp_step", "module_0026",
                                  str(MLP / "module_0026.jit_mlp_step.before_optimizations.txt")])
def test_module_hint(hint):
    assert len(find_pass_dumps(MLP, hint)) == 34


def test_wrong_hint_names_what_exists():
    with pytest.raises(InputError, match="jit_mlp_step"):
        find_pass_dumps(MLP, "jit_nothing_like_it")


def test_no_pass_dumps_is_input_error(tmp_path):
    shutil.copy(next(CPU.glob("attention/*before_optimizations.txt")), tmp_path)
    with pytest.raises(InputError) as e:
        find_pass_dumps(tmp_path)
    assert str(tmp_path) in str(e.value)
    assert "xla_dump_hlo_pass_re" in str(e.value)


def test_missing_directory_is_input_error(tmp_path):
    with pytest.raises(InputError, match="no such directory"):
        find_pass_dumps(tmp_path / "nope")


def test_several_modules_are_ambiguous(tmp_path):
    for f in list(MLP.glob("*.000[01].*.txt")) + list(FOLD.glob("*.000[01].*.txt")):
        shutil.copy(f, tmp_path)
    with pytest.raises(InputError, match="several modules") as e:
        find_pass_dumps(tmp_path)
    assert "module_0010" in str(e.value) and "module_0026" in str(e.value)
    assert len(find_pass_dumps(tmp_path, "jit_fold_cse")) == 2


def test_every_pass_dump_parses():
    for d in (MLP, FOLD):
        for s in find_pass_dumps(d):
            m = hlodiff.load(s.path)
            assert m.instruction_count > 0


# ---- classifying passes -------------------------------------------------------------------

@pytest.mark.parametrize("name,fate", [
    ("fusion", "fused"), ("cpu-instruction-fusion", "fused"), ("multi_output_fusion", "fused"),
    ("priority-fusion", "fused"), ("horizontal-loop-fusion", "fused"), ("fusion-wrapper", "fused"),
    ("cse", "merged"), ("constant_folding", "folded"), ("algsimp", "rewritten"),
    ("reshape-mover", "rewritten"), ("dot_decomposer", "rewritten"),
    ("cse_barrier_expander", "rewritten"), ("call-inliner", "inlined"), ("dce", "removed"),
    ("hlo-dce", "removed"), ("tuple-simplifier", "removed"),
])
def test_classify_pass(name, fate):
    assert classify_pass(name) == fate


# ---- fold_cse ------------------------------------------------------------------------------

def test_fold_cse_repeated_add_is_merged_at_cse(fold):
    # add.8 and add.9 are both a+b; CSE keeps add.8.
    assert fold.fate_of("add.9") == ("merged", "cse")
    assert fold.info("add.9").into == "add.8"
    assert fold.fate_of("sin.3") == ("merged", "cse")
    assert fold.info("sin.3").into == "sin.2"


def test_fold_cse_constant_folding(fold):
    # (iota*2+1) - 1: algsimp rewrites the subtract; constant_folding folds what it made.
    assert fold.fate_of("sub.1") == ("rewritten", "algsimp")
    folding = [s for s in fold.passes if s.name == "constant_folding" and s.changed]
    assert folding, "constant_folding changed nothing?"
    for s in folding:
        assert s.kind == "folded"
        assert all(r.fate == "folded" for r in s.removed)
        assert any(r.opcode != "constant" for r in s.removed)
    assert fold.changes(7).removed[0].opcode == "negate"
    assert fold.changes(7).removed[0].fate == "folded"


def test_fold_cse_fusion(fold):
    for n in ("add.8", "mul.8", "add.15", "iota.1", "exp.1", "sin.2"):
        assert fold.fate_of(n) == ("fused", "fusion"), n
        assert fold.info(n).fusion == "multiply_add_fusion"
    for p in ("a.1", "b.1", "c.1", "d.1", "x.1"):
        assert fold.fate_of(p) == ("kept", None)
    assert dict(fold.counts()) == {"kept": 5, "fused": 26, "merged": 2, "rewritten": 1}


def test_changes_and_passes(fold):
    assert len(fold.passes) == 31
    cse = fold.changes(17)
    assert cse.name == "cse" and cse.kind == "merged"
    assert sorted(r.name for r in cse.removed) == ["add.9", "sin.3"]
    assert cse.num_removed == 2 and cse.num_added == 0
    assert cse.fates == {"add.9": "merged", "sin.3": "merged"}
    fusion = fold.changes(24)
    assert fusion.added == ["multiply_add_fusion"] and fusion.num_removed == 28
    assert not fold.changes(20).changed
    with pytest.raises(KeyError):
        fold.changes(999)


# ---- mlp_step ------------------------------------------------------------------------------

def test_mlp_elementwise_fused(mlp):
    # The bias add and ReLU of the first layer end up in one loop fusion.
    assert mlp.fate_of("add.15") == ("fused", "fusion")
    assert mlp.info("add.15").fusion == "broadcast_maximum_fusion"
    # relu's maximum, inlined (and renamed) by call-inliner, then fused.
    f = mlp.info("max.3")
    assert f.fate == "fused" and f.fusion == "broadcast_maximum_fusion"
    assert f.was_inlined and f.final_name == "max.5"
    # SGD updates: one multiply_subtract fusion per parameter.
    for n in ("sub.22", "sub.23", "sub.24", "sub.25", "sub.26", "sub.27"):
        assert mlp.fate_of(n)[0] == "fused"
        assert mlp.info(n).fusion.startswith("multiply_subtract_fusion")


def test_mlp_calls_inlined(mlp):
    for n in ("jit_relu_.2", "jit_relu_.3", "jvp_jit_log_softmax__.4", "jvp_jit__one_hot__.1"):
        assert mlp.fate_of(n) == ("inlined", "call-inliner")


def test_mlp_dots_go_to_library_fusions(mlp):
    f = mlp.info("dot_general.8")
    assert (f.fate, f.pass_name) == ("fused", "dot-library-rewriter")
    assert f.fusion.startswith("ynn_fusion")


def test_mlp_cse_and_dce(mlp):
    assert mlp.fate_of("constant.21") == ("merged", "cse")
    assert mlp.fate_of("neg.2") == ("removed", "dce")
    assert mlp.fate_of("tuple.3") == ("kept", None)  # the ROOT tuple
    counts = mlp.counts()
    assert set(counts) <= set(FATES)
    assert sum(counts.values()) == len(mlp.fates)
    # every fused instruction was followed into a named fusion
    assert all(f.fusion for f in mlp.fates.values() if f.fate == "fused")


def test_mlp_chain_follows_replacements(mlp):
    # algsimp turns reduce_sum.83 into reduce_sum.82's work; that then gets fused.
    chain = mlp.chain("reduce_sum.83")
    assert chain[0][:2] == ("rewritten", "algsimp")
    assert chain[-1][0] == "fused"


def test_trace_is_fast():
    t = time.perf_counter()
    trace(find_pass_dumps(MLP), hlodiff.load(MLP / "module_0026.jit_mlp_step.before_optimizations.txt"))
    assert time.perf_counter() - t < 5.0


def test_trace_without_before_uses_the_before_dump():
    tr = trace(find_pass_dumps(FOLD))
    assert tr.fate_of("add.9") == ("merged", "cse")


def test_trace_needs_snapshots():
    with pytest.raises(InputError):
        trace([], hlodiff.load(FOLD / "module_0010.jit_fold_cse.before_optimizations.txt"))
