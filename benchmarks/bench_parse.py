#!/usr/bin/env python
"""Parse speed of hlodiff against XLA's C++ parser (jaxlib), measured in the same process.

For each input, in a fresh subprocess:
  * xla first / cold: the first parse in a new process, XLA's and ours (imports done before
    timing for both; ours includes loading its LALR tables from their on-disk cache, built
    by an earlier process, as after any first run); the cold ratio is cold / xla first;
  * xla / warm: best of N, interleaved; the warm ratio is warm / xla;
  * cache hit: ``hlodiff.load`` through the content-addressed cache (after one miss);
and, in another subprocess, the peak RSS of ``hlodiff show FILE --no-cache``.
Ratios are ours / XLA's. Inputs: the 12-layer GPT training step (made by gen_gpt.py if
missing) and, when ../shared/corpus is present, its three largest modules.

    .venv/bin/python benchmarks/bench_parse.py [--repeat 3] [--no-corpus]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS = Path(os.environ.get("HLODIFF_CORPUS", ROOT.parent / "shared" / "corpus"))

_CHILD = r"""
import json, os, sys, time, tempfile
path, repeat = sys.argv[1], int(sys.argv[2])
text = open(path).read()
from jaxlib import _hlo   # both libraries imported before any timing
import hlodiff
t0 = time.perf_counter(); _hlo.hlo_module_from_text(text); xla_first = time.perf_counter() - t0
t0 = time.perf_counter(); m = hlodiff.parse(text); cold = time.perf_counter() - t0  # + table load
xla, warm = xla_first, cold
for _ in range(repeat):  # interleaved, so both see the same machine load
    t0 = time.perf_counter(); _hlo.hlo_module_from_text(text); xla = min(xla, time.perf_counter() - t0)
    t0 = time.perf_counter(); hlodiff.parse(text); warm = min(warm, time.perf_counter() - t0)
os.environ["HLODIFF_CACHE_DIR"] = tempfile.mkdtemp()
hlodiff.load(path)  # a miss: parses and stores
hit = 1e9
for _ in range(repeat):
    t0 = time.perf_counter(); hlodiff.load(path); hit = min(hit, time.perf_counter() - t0)
print(json.dumps({"bytes": len(text), "instructions": m.instruction_count, "xla": xla,
                  "xla_first": xla_first, "cold": cold, "warm": warm, "cache_hit": hit}))
"""


def _gpt12() -> Path:
    d = HERE / "data" / "gpt12"
    files = sorted(d.glob("*cpu_after_optimizations.txt")) if d.is_dir() else []
    if not files:
        subprocess.run([sys.executable, str(HERE / "gen_gpt.py"), "--layers", "12"], check=True)
        files = sorted(d.glob("*cpu_after_optimizations.txt"))
    return files[0]


def _inputs(use_corpus: bool) -> list[tuple[str, Path]]:
    out = [("gpt12 after (CPU)", _gpt12())]
    if use_corpus and (CORPUS / "repo_files").is_dir():
        big = sorted((CORPUS / "repo_files").glob("*.hlo"), key=lambda p: p.stat().st_size)[-3:]
        out += [(p.name.split("__")[-1][:40], p) for p in big]
    return out


def _peak_rss_show(path: Path) -> float:
    """Peak resident memory (MB) of `hlodiff show` on the file, parse cache off."""
    code = ("import resource, sys; from hlodiff.cli import main\n"
            "try:\n main(['show', sys.argv[1], '--no-cache'])\nexcept SystemExit: pass\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "100"}, check=True)
    return float(r.stderr.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-corpus", action="store_true")
    args = ap.parse_args()
    rows = []
    print(f"{'input':42} {'MB':>5} {'instr':>6} {'xla1 s':>7} {'cold s':>7} {'x':>5} "
          f"{'xla s':>7} {'warm s':>7} {'x':>5} {'cache s':>7} {'x':>5} {'show MB':>7}")
    for label, path in _inputs(not args.no_corpus):
        env = {**os.environ, "HLODIFF_CACHE_DIR": tempfile.mkdtemp()}
        # build the LALR tables once, as any earlier hlodiff run on the machine has; the
        # parse cache stays empty, so "cold" is a first parse of text never seen before
        subprocess.run([sys.executable, "-c", "import hlodiff; hlodiff.parse('ENTRY e {\\n"
                        "ROOT p = f32[] parameter(0)\\n}')"], env=env, check=True)
        r = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(args.repeat)],
                           capture_output=True, text=True, env=env, check=True)
        res = json.loads(r.stdout.strip().splitlines()[-1])
        res["show_peak_mb"] = _peak_rss_show(path)
        res["input"] = label
        rows.append(res)
        x, x1 = res["xla"], res["xla_first"]
        print(f"{label:42} {res['bytes'] / 1e6:5.2f} {res['instructions']:6d} {x1:7.3f} "
              f"{res['cold']:7.3f} {res['cold'] / x1:5.1f} {x:7.3f} {res['warm']:7.3f} "
              f"{res['warm'] / x:5.1f} {res['cache_hit']:7.3f} {res['cache_hit'] / x:5.2f} "
              f"{res['show_peak_mb']:7.0f}")
    print(json.dumps(rows))
    _ = resource  # the parent measures nothing itself


if __name__ == "__main__":
    main()
