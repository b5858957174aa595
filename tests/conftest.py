"""Shared test fixtures: paths to the committed XLA dumps and the shared corpus."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "cpu"
CORPUS = Path(os.environ.get("HLODIFF_CORPUS", ROOT.parent / "shared" / "corpus"))


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Each test session writes its parse cache under pytest's tmp dir, never the user's."""
    monkeypatch.setenv("HLODIFF_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def pair_in(d: Path) -> tuple[Path, Path]:
    """(before, after) dump files in the fixture directory ``d`` (CPU or GPU)."""
    before = next(d.glob("*.before_optimizations.txt"))
    after = next(p for p in d.glob("*after_optimizations.txt") if "before_optimizations" not in p.name)
    return before, after


def fixture_pair(program: str) -> tuple[Path, Path]:
    """(before, after) dump files of one fixture program."""
    return pair_in(FIXTURES / program)


def load_pair(d: Path):
    """The modules before and after optimization in the fixture directory ``d``, parsed."""
    import hlodiff
    before, after = pair_in(d)
    return hlodiff.load(before), hlodiff.load(after)
