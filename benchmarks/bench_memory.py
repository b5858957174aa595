#!/usr/bin/env python
"""Memory: the estimate from module text alone against XLA's allocation total, and the time
that reading XLA's memory files adds.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_memory.py                    # every module with XLA's files
    .venv/bin/python benchmarks/bench_memory.py --time benchmarks/data/gpt24
    .venv/bin/python benchmarks/bench_memory.py --data benchmarks/data-memest \
        --real '/work/gpu_real/hlodump_*' --fate-zoo benchmarks/data/zoo  # + real, fate zoo

Modules: fixtures/memory/*/* (tuned on), fixtures/cpu/* (held out: only a buffer-assignment
file, whose allocation sum is XLA's total) and benchmarks/data/*/ (gen_gpt.py keeps XLA's
memory files). Prints a Markdown table: XLA's total, the estimate, its ratio, the lower
estimate.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hlodiff.analysis.memory import memory_report  # noqa: E402
from hlodiff.dumps.loader import load  # noqa: E402
from hlodiff.dumps.memfiles import load_memory_files  # noqa: E402


GROUPS = ("tuned", "held out", "zoo2", "versions", "zoo3", "zoo4", "real H100", "fate zoo")


def modules(data: str = "benchmarks/data", real: str | None = None,
            fate_zoo: str | None = None) -> list[tuple[str, str]]:
    out = []
    for pat, group in (("fixtures/memory/*/*/*after_optimizations.txt", "tuned"),
                       ("fixtures/cpu/*/*after_optimizations.txt", "held out"),
                       (f"{data}/*/*after_optimizations.txt", "held out"),
                       (f"{data}/memzoo/*/*/*after_optimizations.txt", "held out"),
                       (f"{data}/memzoo2/*/*/*after_optimizations.txt", "zoo2"),
                       ("fixtures/versions/*/*/*after_optimizations.txt", "versions"),
                       (f"{data}/memzoo3/*/*/*after_optimizations.txt", "zoo3"),
                       (f"{data}/memzoo4/*/*/*after_optimizations.txt", "zoo4")):
        for f in sorted(glob.glob(str(ROOT / pat))):
            out.append((group, f))
    for d in sorted(glob.glob(real)) if real else ():  # real dumps: hlodump_<program>_<id>
        prog = re.sub(r"^hlodump_(.+)_[a-z0-9_]{8}$", r"\1", os.path.basename(d))
        for f in sorted(glob.glob(os.path.join(d, f"*.jit_{prog}.*after_optimizations.txt"))):
            if "spmd" not in f:
                out.append(("real H100", f))
    # the fate zoo (benchmarks/zoo.py): <mode>/<program>/, main module jit_<program>
    for d in sorted(glob.glob(os.path.join(fate_zoo, "*", "*"))) if fate_zoo else ():
        prog = os.path.basename(d)
        for f in sorted(glob.glob(os.path.join(d, f"*.jit_{prog}.*after_optimizations.txt"))):
            if "spmd" not in f:
                out.append(("fate zoo", f))
    return out


def table(data: str = "benchmarks/data", real: str | None = None,
          fate_zoo: str | None = None) -> None:
    print("| set | program | XLA total | estimate | ratio | lower estimate |")
    print("|---|---|---:|---:|---:|---:|")
    ratios = []
    for group, f in modules(data, real, fate_zoo):
        mf = load_memory_files(f)
        if mf.buffer_assignment is None:
            continue
        m = load(f)
        xla = memory_report(m, mf).peak_bytes
        est = memory_report(m)
        r = est.peak_bytes / xla
        ratios.append((group, r))
        name = os.path.relpath(os.path.dirname(f), ROOT)
        print(f"| {group} | {name} | {xla} | {est.peak_bytes} | {r:.3f} | {est.peak_bytes_low} |")
    for g in GROUPS:
        rs = sorted(r for gg, r in ratios if gg == g)
        if rs:
            ok = sum(1 for r in rs if abs(r - 1) <= 0.10)
            print(f"\n{g}: {ok}/{len(rs)} within 10%, median {rs[len(rs) // 2]:.3f}, "
                  f"range {rs[0]:.3f} .. {rs[-1]:.3f}")


def timing(d: str, reps: int = 3) -> None:
    f = next(iter(sorted(glob.glob(os.path.join(d, "*after_optimizations.txt")))))
    m = load(f)
    best = 1e9
    for _ in range(reps):
        t = time.perf_counter()
        memory_report(m, load_memory_files(f))
        best = min(best, time.perf_counter() - t)
    est = 1e9
    for _ in range(reps):
        t = time.perf_counter()
        memory_report(m)
        est = min(est, time.perf_counter() - t)
    sizes = {k: os.path.getsize(p) for k, p in (load_memory_files(f).paths or {}).items()}
    print(f"{f}: {m.instruction_count} instructions; memory files {sizes}; reading them and "
          f"building the report: {best:.3f} s (best of {reps}); estimate alone: {est:.3f} s")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--time", default=None, help="a directory with a module and its memory files")
    ap.add_argument("--data", default="benchmarks/data", help="where the zoos were generated")
    ap.add_argument("--real", default=None, help="a glob of real dump directories (hlodump_*)")
    ap.add_argument("--fate-zoo", default=None, help="benchmarks/zoo.py's output (e.g. "
                    "benchmarks/data/zoo): every mode's programs with XLA's files")
    a = ap.parse_args()
    if a.time:
        timing(a.time)
    else:
        table(a.data, a.real, a.fate_zoo)
