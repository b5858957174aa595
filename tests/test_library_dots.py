"""Dots in library fusions without metadata, paired by what they read (issue 9, class 9).

XLA:CPU's dot-library-rewriter puts dots into ``__ynn_fusion`` kernels whose inner dot has
no op_name; on 8 devices its shape is per-device. The before dot is found by its operands.

A checkpointed block's dot and its recomputation read the same values; the kernels reading
each result tell them apart. A bare dot with no metadata that reads a before dot's operands
is better evidence than an instruction of another opcode carrying the dot's op_name.

Fixtures: fixtures/library_dots (fixtures/generate_library_dots.py; fresh 4, 5 and 11,
XLA's own modules).
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.diff import diff_modules

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "library_dots" / "alibi_decoder_layers"


def test_dot_in_a_library_fusion_is_found_by_its_operands():
    before, after = load_pair(D)
    r = diff_modules(before, after)
    f = r.fate_of("dot_general.25")
    # the pass dumps: dot-library-rewriter takes it into ynn_fusion.16 (dot.79)
    assert (f.after, f.fusion) == ("dot.79", "ynn_fusion.16"), (f.after, f.fusion, f.reason)
    assert "simplified away" not in f.reason


def _diff(name: str):
    d = D.parent / name
    before, after = load_pair(d)
    return diff_modules(before, after)


def test_recomputed_twin_dots_are_told_apart_by_the_kernels_reading_them():
    r = _diff("remat_combined_policy_block")
    # the pass dumps: each score dot of the checkpointed block and its recomputation in
    # the backward pass go to their own __ynn_fusion; both read (copies of) the values
    # the removed jax.checkpoint barrier handed on
    for name, kernel in (("dot_general.55", "ynn_fusion.48"), ("dot_general.86", "ynn_fusion.21"),
                         ("dot_general.63", "ynn_fusion.40"), ("dot_general.68", "ynn_fusion.32")):
        f = r.fate_of(name)
        assert f.fusion == kernel, (name, f.fate, f.fusion, f.reason)


def test_bare_dot_beats_a_look_alike_carrying_its_op_name():
    r = _diff("maml_inner_vmap")
    # dot_general.20 lives on as dot.21 (no metadata); broadcast.49 in
    # subtract_multiply_fusion carries its op_name but is a vmapped twin's
    f = r.fate_of("dot_general.20")
    assert f.after == "dot.21" and f.fusion is None, (f.fate, f.after, f.fusion, f.reason)
