"""Which copy XLA:GPU's first CSE keeps, and what it merged before a late rewrite (issue 9,
class 5).

XLA:GPU runs CSE right after the first algebraic-simplification round. It keeps the copy
it meets first walking the module in post order from the instructions without users; an
instruction read only by a no-op view (which algsimp replaces by it) has a reader then and
starts no walk. Copies of a survivor that a later pass rebuilt (layout normalization: the
same operation on permuted dimensions; a broadcast of a computed value, which the first
algsimp round leaves alone) were merged into it, not rewritten on their own.

Fixtures: fixtures/gemm_converts/fp8_scaled_matmul (fresh 7) and fixtures/gpu_cse
(fixtures/generate_gpu_cse.py; fresh 12), one deviceless H100, XLA's own modules. Expected
fates are those of XLA's pass dumps.
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.diff import diff_modules

from .conftest import load_pair

F = Path(__file__).resolve().parent.parent / "fixtures"


def _diff(d: Path):
    before, after = load_pair(d)
    return diff_modules(before, after)


def test_cse_keeps_the_copy_its_walk_meets_first():
    r = _diff(F / "gemm_converts" / "fp8_scaled_matmul")
    # relu's broadcast of 0 (max.2, inlined from relu.4) is met first; main's broadcast.2
    # is merged into it (dump 0013 cse)
    f = r.fate_of("broadcast.2")
    assert (f.fate, f.into) == ("merged", "max.2"), (f.fate, f.into, f.reason)
    assert r.fate_of("max.2").fate == "fused"


def test_dead_code_the_first_algsimp_round_leaves_starts_the_walk():
    r = _diff(F / "gpu_cse" / "resnet_block_bn")
    # algsimp makes reduce(negate(x)) negate(reduce(x)) and leaves neg.11 and neg.13 dead
    # before the root: the walk from them meets relu's max.2 (first call) before main's
    # broadcast.23, which CSE merges into it (dump 0011)
    f = r.fate_of("broadcast.23")
    assert (f.fate, f.into) == ("merged", "max.2"), (f.fate, f.into, f.reason)
    first = [x for x in r.instructions if x.before == "max.2" and x.call_site == "jit_relu_.2"]
    assert first and first[0].fate == "fused", first


def test_copies_of_a_survivor_rebuilt_later_were_merged():
    r = _diff(F / "gpu_cse" / "pact_conv_per_channel_qat")
    # div.77 is rebuilt on permuted dimensions by layout normalization (dump 0050);
    # max.10 = broadcast(convert) goes there too; their copies were merged at dump 0014
    for name, survivor in (("mul.120", "div.77"), ("eq.43", "max.10")):
        f = r.fate_of(name)
        assert (f.fate, f.into) == ("merged", survivor), (name, f.fate, f.into, f.reason)
