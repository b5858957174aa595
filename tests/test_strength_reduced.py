"""Transposed dots that dot strength reduction turned into a multiply (issue 9, class 1).

On 8 H100s the VAE's weight gradients sum over the batch, one element per device: algebraic
simplification folds ``transpose(dot)`` into ``dot(b, a)`` and dot strength reduction then
makes that an elementwise multiply of two broadcasts. The dot has no partner left; its value
is the multiply's, in the kernel the transpose's partner is in.

Fixture: fixtures/gpu8_dots/vae_step (fixtures/generate_gpu8_dots.py; XLA's own modules).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules

D = Path(__file__).resolve().parent.parent / "fixtures" / "gpu8_dots" / "vae_step"


def test_weight_gradient_dots_live_on_in_the_multiply():
    before = hlodiff.load(next(D.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(D.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    # XLA's pass dumps: both live on in loop_multiply_fusion.1 (multi-output), dump 0023
    for dot, mult in (("dot_general.17", "multiply.15.1"),
                      ("dot_general.19", "multiply.16.1.clone.1")):
        f = r.fate_of(dot)
        assert f.fate == "rewritten", (dot, f.reason)
        assert (f.after, f.fusion) == (mult, "loop_multiply_fusion.1"), (dot, f.after, f.fusion)
        assert "dot strength reduction" in f.reason and "one element per device" in f.reason
    t = r.fate_of("transpose.5")
    assert (t.after, t.fusion) == ("multiply.15.1", "loop_multiply_fusion.1")


def test_a_dot_that_kept_its_partner_is_left_alone():
    before = hlodiff.load(next(D.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(D.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    assert "strength" not in (r.fate_of("dot_general.18").reason or "")


def test_a_dot_paired_by_op_name_with_another_dots_reduction_is_taken_back():
    # fresh 7 hypernetwork_weights on 8 H100s: the pass dumps show transpose.6(dot_general.15)
    # rebuilt as dot.2 = dot(b, a) and then multiply.8 (dump 0005), fused into
    # loop_multiply_fusion; the rewrite step had paired the dot with reduce.5.3 (another
    # backward dot's, in loop_multiply_fusion.1) by their shared op_name
    d = D.parent / "hypernetwork_weights"
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    for name in ("dot_general.15", "transpose.6"):
        f = r.fate_of(name)
        assert (f.fate, f.fusion) == ("rewritten", "loop_multiply_fusion"), (name, f.fusion)
        assert "dot strength reduction" in f.reason
