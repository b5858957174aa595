"""A wheel built from the repository works on its own: the grammar ships inside it."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

import pytest

from .conftest import ROOT, fixture_pair


@pytest.mark.slow
def test_wheel_carries_the_grammar_and_parses(tmp_path):
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                            "--no-build-isolation", "-w", str(tmp_path), str(ROOT)],
                           capture_output=True, text=True, timeout=300)
    if build.returncode != 0 and "No module named" in build.stderr:
        pytest.skip(f"cannot build a wheel here: {build.stderr.strip()[-200:]}")
    assert build.returncode == 0, build.stderr
    assert "deprecated" not in build.stderr.lower(), build.stderr  # e.g. the license table
    wheel = next(tmp_path.glob("hlodiff-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("hlodiff/grammar/hlo.lark", "hlodiff/diff/__init__.py",
                   "hlodiff/render/__init__.py", "hlodiff/cli/__init__.py"):
        assert needed in names
    _, after = fixture_pair("attention")
    # import hlodiff from the wheel alone (a pure-Python wheel is importable as a zip),
    # from a directory outside the checkout
    code = ("import hlodiff, sys; m = hlodiff.load(sys.argv[1], cache=False); "
            "print(hlodiff.__file__); print(m.name, m.instruction_count)")
    env = {**os.environ, "PYTHONPATH": str(wheel)}
    r = subprocess.run([sys.executable, "-c", code, str(after)], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    where, summary = r.stdout.strip().splitlines()
    assert where.startswith(str(wheel))
    assert summary == "jit_attention 39"
