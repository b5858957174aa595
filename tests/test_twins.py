"""Repeated code (issue 9, class 6): layers, remat copies and per-parameter updates share
op_names and source lines; structural propagation must not hand an after instruction to
the wrong twin. Fixtures: fixtures/sharded_passes (zoo programs on 8 CPU devices, dumped by
XLA; see fixtures/README.md)."""

from __future__ import annotations

from pathlib import Path

from hlodiff.diff import diff_files
from hlodiff.dumps.loader import load

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "sharded_passes"


def _pair(d: Path) -> tuple[Path, Path]:
    return (next(d.glob("*.before_optimizations.txt")),
            next(d.glob("*after_optimizations.txt")))


def _entry(path: Path) -> dict:
    mod = load(path)
    return {i.name: i for i in mod.by_name[mod.entry].instructions}


def test_a_dot_is_not_paired_with_its_remat_copy_that_reads_the_same_weight():
    """remat_nothing's second forward dot (dot_general.12 = dot(tanh.6, a[0][1])) and the
    transposed gradient dot of the checkpointed recomputation both read a[0][1]; the only
    dot that reads param.2 directly after optimization is the gradient's (dot.26 inside a
    YNNPACK fusion, op_name ".../checkpoint/dot_general"). Its op_name names another before
    dot, so it is not dot_general.12's partner: the forward dot is dot.21, reading its own
    all-gather of param.2 (as XLA's pass dumps follow it)."""
    d = ROOT / "remat_nothing"
    before, after = (_entry(p) for p in _pair(d))
    assert before["dot_general.12"].operands[1] == "a_0__1_.1"
    assert after["dot.21"].operands[1] == "all-gather.1"
    assert after["all-gather.1"].operands == ["param.2"]
    res = diff_files(*_pair(d))
    f = res.fate_of("main.2", "dot_general.12")
    assert (f.fate, f.after, f.fusion) == ("rewritten", "dot.21", None), f
    assert res.fate_of("main.2", "dot_general.13").after == "dot.22"


def test_twin_updates_reading_one_learning_rate_follow_their_own_parameter():
    """transformer_layer's SGD updates sub.48 = a[0][0] - mul.90 and sub.51 = a[0][3] -
    mul.93 (mul.9x = grad * broadcast.9 of the learning rate) are fused into
    multiply_subtract_fusion.5 (reads param, a[0][0]) and .2 (reads param.4, a[0][3]).
    Propagating down from the learning rate's broadcast sees four equal multiplies with the
    same single candidate; handing it to the first named the wrong layer's fusion."""
    d = ROOT / "transformer_layer"
    before, after = (_entry(p) for p in _pair(d))
    assert before["sub.48"].operands[0] == "a_0__0_.1"
    assert before["sub.51"].operands[0] == "a_0__3_.1"
    assert after["multiply_subtract_fusion.5"].operands[0] == "param"
    assert after["multiply_subtract_fusion.2"].operands[0] == "param.4"
    res = diff_files(*_pair(d))
    for name, kernel in (("mul.90", "multiply_subtract_fusion.5"),
                         ("sub.48", "multiply_subtract_fusion.5"),
                         ("mul.93", "multiply_subtract_fusion.2"),
                         ("sub.51", "multiply_subtract_fusion.2")):
        f = res.fate_of("main.18", name)
        assert (f.fate, f.fusion) == ("fused", kernel), (name, f)
