#!/usr/bin/env python
"""Fate accuracy on the zoo: hlodiff's diff against XLA's pass-by-pass dumps.

    python benchmarks/zoo.py [--mode ...]          # first: dump the programs
    python benchmarks/accuracy.py                  # every mode found, tables to stdout
    python benchmarks/accuracy.py --mode cpu -v    # one mode, every disagreement
    python benchmarks/accuracy.py --results        # also append the tables to RESULTS.md
    python benchmarks/accuracy.py --data benchmarks/data-NAME/zoo --mode gpu   # another root

For each program (``benchmarks/data/zoo/<mode>/<program>``) it diffs the module before and
after optimization and compares every instruction's fate, and the after instruction it
names, with the oracle (:mod:`hlodiff.diff.accuracy`). Held-out programs
(``zoo_programs.HOLDOUT``, never looked at while tuning) are totalled separately.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import hlodiff  # noqa: E402
from hlodiff.diff import diff_modules  # noqa: E402
from hlodiff.diff.accuracy import Comparison, compare, report  # noqa: E402
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace  # noqa: E402

DATA = Path(os.environ.get("HLODIFF_ZOO_DATA") or HERE / "data" / "zoo")
MODES = ("cpu", "cpu8", "gpu", "gpu8", "old")
MODE_TITLES = {"cpu": "CPU", "cpu8": "8 CPU devices, sharded", "gpu": "H100 (deviceless AOT)",
               "gpu8": "8 H100s (deviceless AOT), sharded",
               "old": "CPU, old JAX"}


def _after(before: Path) -> Path | None:
    stem = before.name.split(".before_optimizations")[0]
    cands = [p for p in before.parent.glob(f"{stem}.*after_optimizations.txt")]
    return sorted(cands)[0] if cands else None


def run_one(d: Path, name: str, module: str | None = None) -> Comparison:
    snaps = find_pass_dumps(d, module or f"jit_{name}")
    bf = find_before_file(snaps)
    before = hlodiff.load(bf)
    after = hlodiff.load(_after(bf))
    return compare(before, trace(snaps, before), diff_modules(before, after), after)


def _pct(a: int, n: int) -> str:
    return f"{a / n:.1%}" if n else "n/a"


def main(argv=None) -> int:
    import importlib
    progs = importlib.import_module(os.environ.get("HLODIFF_ZOO_PROGRAMS") or "zoo_programs")
    HOLDOUT, PROGRAMS = progs.HOLDOUT, progs.PROGRAMS

    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", nargs="*", default=list(MODES))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--holdout", choices=["include", "exclude", "only"], default="include")
    ap.add_argument("--data", type=Path, default=DATA,
                    help="root of the dumps (default: $HLODIFF_ZOO_DATA or benchmarks/data/zoo)")
    ap.add_argument("--module", help="the module traced in each dump directory (default: "
                    "jit_<program>; e.g. jit_stage for dumps of other drivers)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--results", action="store_true", help="append the tables to RESULTS.md")
    a = ap.parse_args(argv)
    out: list[str] = []
    for mode in a.mode:
        root = a.data / mode
        if not root.is_dir():
            continue
        progs = sorted(p.name for p in root.iterdir() if p.is_dir())
        if a.only:
            progs = [p for p in progs if p in a.only]
        if a.holdout == "exclude":
            progs = [p for p in progs if p not in HOLDOUT]
        elif a.holdout == "only":
            progs = [p for p in progs if p in HOLDOUT]
        rows, fam = [], {}
        t0 = time.time()
        for p in progs:
            try:
                c = run_one(root / p, p, a.module)
            except Exception as e:  # a dump that cannot be read: say so, go on
                rows.append((p, None, f"{type(e).__name__}: {e}"))
                continue
            if a.verbose:
                print(report(f"{mode}/{p}", c))
            rows.append((p, c, ""))
            group = "held out" if p in HOLDOUT else "tuned on"
            f = PROGRAMS.get(p, ("?",))[0]
            for key in (f, f"all ({group})", "all"):
                s = fam.setdefault(key, [0, 0, 0, 0, 0, 1.0, ""])
                s[0] += c.agree; s[1] += c.total; s[2] += c.target_agree
                s[3] += c.target_total; s[4] += c.uncertain
                if c.rate < s[5]:
                    s[5], s[6] = c.rate, p
        out.append(f"\n### {MODE_TITLES.get(mode, mode)} ({len(progs)} programs, "
                   f"{time.time() - t0:.0f} s)\n")
        out.append("| family | fate category | named target | uncertain | lowest program |")
        out.append("|---|---|---|---|---|")
        for k in sorted(fam, key=lambda k: (k.startswith("all"), k)):
            s = fam[k]
            out.append(f"| {k} | {_pct(s[0], s[1])} ({s[0]}/{s[1]}) | {_pct(s[2], s[3])} "
                       f"({s[2]}/{s[3]}) | {s[4]} | {s[6]} {s[5]:.1%} |")
        for p, c, err in rows:
            if c is None:
                out.append(f"\n{p}: not measured ({err})")
        out.append("\nper program: " + ", ".join(
            f"{p} {c.rate:.1%}/{c.target_rate:.1%}" for p, c, _ in rows if c is not None))
    text = "\n".join(out)
    print(text)
    if a.results:
        import jax
        head = (f"\n## Fate accuracy on the zoo ({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC)\n\n"
                f"`python benchmarks/accuracy.py`; machine: {platform.machine()}, "
                f"{platform.processor() or platform.platform()}; hlodiff's JAX {jax.__version__} "
                "(dumps: cpu/cpu8 by jax in the main venv, gpu by /work/venvs/gpu, old by "
                "/work/venvs/jax0430). Fate category: the engine's fate equals the pass dumps'; "
                "named target: the after instruction it names is the one the dumps show "
                "holding the value. Held-out programs (never looked at while tuning) are "
                "totalled separately.\n")
        with open(HERE / "RESULTS.md", "a") as f:
            f.write(head + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
