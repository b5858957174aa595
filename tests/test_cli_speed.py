"""Fast start: `hlodiff --version` (and `show --format json` on a cache hit) must not import
the heavy libraries they do not use. Checked through ``python -X importtime`` in a fresh
process (never by timing)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("networkx", "graphviz", "rich", "lark", "jax", "jaxlib", "numpy")


def _imported(args: list[str], **env: str) -> set[str]:
    e = {**os.environ, "PYTHONPATH": str(REPO), **env}
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "hlodiff", *args],
                       capture_output=True, text=True, env=e, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return {line.split("|")[-1].strip() for line in p.stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


def _heavy(names: set[str]) -> list[str]:
    return sorted(n for n in names if n.split(".")[0] in HEAVY)


def test_version_imports_no_heavy_module():
    names = _imported(["--version"])
    assert "hlodiff.cli" in names  # the check sees our imports at all
    assert _heavy(names) == []
    assert "hlodiff.hlo.model" not in names  # no command module was loaded


def test_show_json_on_a_cache_hit_imports_no_parser_nor_rich(tmp_path):
    f = next((REPO / "fixtures" / "cpu" / "mlp_step").glob("*cpu_after_optimizations.txt"))
    if f.stat().st_size < 16 * 1024:
        pytest.skip("fixture below the cache's size threshold")
    env = {"HLODIFF_CACHE_DIR": str(tmp_path / "cache")}
    _imported(["show", str(f), "--format", "json"], **env)  # a miss: fills the cache
    names = _imported(["show", str(f), "--format", "json"], **env)
    assert "hlodiff.dumps.loader" in names and "hlodiff.jsonout" in names  # show ran
    assert _heavy(names) == [], _heavy(names)
    assert "hlodiff.hlo.parser" not in names


def test_help_lists_every_command():
    from click.testing import CliRunner

    from hlodiff.cli import COMMANDS, main

    r = CliRunner().invoke(main, ["--help"])
    assert r.exit_code == 0
    for name in COMMANDS:
        assert f"  {name} " in r.output, name
        assert main.get_command(None, name).name == name
