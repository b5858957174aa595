"""Dots in library fusions without metadata, paired by what they read (issue 9, class 9).

XLA:CPU's dot-library-rewriter puts dots into ``__ynn_fusion`` kernels whose inner dot has
no op_name; on 8 devices its shape is per-device. The before dot is found by its operands.

Fixture: fixtures/library_dots (fixtures/generate_library_dots.py; fresh 4, XLA's own
modules).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules

D = Path(__file__).resolve().parent.parent / "fixtures" / "library_dots" / "alibi_decoder_layers"


def test_dot_in_a_library_fusion_is_found_by_its_operands():
    before = hlodiff.load(next(D.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(D.glob("*cpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    f = r.fate_of("dot_general.25")
    # the pass dumps: dot-library-rewriter takes it into ynn_fusion.16 (dot.79)
    assert (f.after, f.fusion) == ("dot.79", "ynn_fusion.16"), (f.after, f.fusion, f.reason)
    assert "simplified away" not in f.reason
