"""A module diffed against a copy of itself reports nothing: every fixture module."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import hlodiff
from hlodiff.diff import diff_modules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FILES = sorted(p for p in FIXTURES.glob("*/*/*_optimizations.txt"))


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name[:40]}" for p in FILES])
def test_self_diff_reports_nothing(path):
    m = hlodiff.load(path)
    r = diff_modules(m, hlodiff.load(path))  # a second, separately parsed copy
    fates = Counter(f.fate for f in r.instructions)
    assert set(fates) <= {"kept", "unchanged"}, fates
    assert not r.added and not r.layouts
    assert not (r.regression or {}).get("changes")
    assert not (r.regression or {}).get("fusions")
    s = r.summary
    assert (s["kernels_before"], s["bytes_before"]) == (s["kernels_after"], s["bytes_after"])


def test_there_are_modules():
    assert len(FILES) >= 20
