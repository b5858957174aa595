#!/usr/bin/env python
"""Whole-command speed of hlodiff, as users run it, against XLA's C++ parser in the same run.

Every figure is a whole process (interpreter start, imports, reading, parsing, output
written to a file), run several times, interleaved so that all cases see the same machine
load; the median is reported (and the minimum), as wall-clock time and as the process's
CPU time (user+sys, from getrusage), which a busy machine distorts less. Cases:

  * ``hlodiff --version``;
  * ``hlodiff show FILE`` (text) and ``hlodiff show FILE --format json``;
  * ``hlodiff DIR`` (the before/after pair of the dump directory: the whole diff report);
each cold (``--no-cache``: the file is parsed, no parsed model is read or stored; the cache
directory holds only the parser's LALR tables, as after any first run) and warm (a cache
directory that one earlier run filled); and ``show --format json`` the first run ever
(``HLODIFF_NO_CACHE=1``, a fresh, empty cache directory: the LALR tables are built too). Python bytecode is cached, as after any install
(``PYTHONDONTWRITEBYTECODE`` is dropped; a private ``PYTHONPYCACHEPREFIX`` keeps the
checkout clean; one untimed round fills it). The references, in the same rotation:

  * ``xla FILE``: a process that imports jaxlib and parses FILE with
    ``jaxlib._hlo.hlo_module_from_text`` (what ``show`` is compared with);
  * ``xla BEFORE+AFTER``: the same for both files of the pair (what ``hlodiff DIR`` is
    compared with);
  * ``python -c pass``: the interpreter's own start, for scale;
and, printed apart, XLA's in-process parse time of FILE (no imports, no start), which is
not what users wait for but is the lower bound of any parser.

Also lists the heavy modules (networkx, graphviz, rich, lark, jax, jaxlib, numpy) that
``hlodiff --version`` imports, from ``python -X importtime`` (the goal: none).

Input: the 12-layer GPT training step made by gen_gpt.py (made if missing), or --dir.

    .venv/bin/python benchmarks/bench_cli.py [--repeat 5] [--dir DUMP_DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HEAVY = ("networkx", "graphviz", "rich", "lark", "jax", "jaxlib", "numpy", "msgspec")

_XLA_PARSE = r"""
import sys, time
from jaxlib import _hlo
texts = [open(p).read() for p in sys.argv[1:]]
t0 = time.perf_counter()
for t in texts:
    _hlo.hlo_module_from_text(t)
print(time.perf_counter() - t0)
"""


def _gpt12_dir() -> Path:
    d = HERE / "data" / "gpt12"
    if not (d.is_dir() and list(d.glob("*cpu_after_optimizations.txt"))):
        subprocess.run([sys.executable, str(HERE / "gen_gpt.py"), "--layers", "12"], check=True)
    return d


def _pair(d: Path) -> tuple[Path, Path]:
    before = sorted(d.glob("*before_optimizations.txt"), key=lambda p: p.stat().st_size)
    after = sorted((p for p in d.glob("*after_optimizations.txt")
                    if "before" not in p.name), key=lambda p: p.stat().st_size)
    if not before or not after:
        sys.exit(f"bench_cli: no before/after pair in {d}")
    return before[-1], after[-1]


_PYCACHE = tempfile.mkdtemp(prefix="hlodiff-bench-pycache-")


def _env(cache_dir: str | None, first_ever: bool = False) -> dict[str, str]:
    # Bytecode cached as after any install (pip compiles it), in a private folder so that
    # the checkout is left alone; one untimed round fills it.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100",
           "PYTHONPYCACHEPREFIX": _PYCACHE}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("HLODIFF_NO_CACHE", None)
    if first_ever:  # nothing cached at all, not even the parser's LALR tables
        env["HLODIFF_NO_CACHE"] = "1"
        env["HLODIFF_CACHE_DIR"] = tempfile.mkdtemp(prefix="hlodiff-bench-first-")
    elif cache_dir is not None:
        env["HLODIFF_CACHE_DIR"] = cache_dir
    return env


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(argv: list[str], env: dict[str, str], out_path: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user+sys) of one whole process."""
    with out_path.open("wb") as out:
        c0 = _cpu()
        t0 = time.perf_counter()
        p = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, env=env)
        wall = time.perf_counter() - t0
        cpu = _cpu() - c0
    if p.returncode != 0:
        sys.exit(f"bench_cli: {' '.join(argv)} exited {p.returncode}:\n{p.stderr.decode()[-2000:]}")
    return wall, cpu


def _heavy_imports_of_version() -> list[str]:
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "hlodiff", "--version"],
                       capture_output=True, text=True, env=_env(None), check=True)
    names = {line.split("|")[-1].strip() for line in p.stderr.splitlines() if "|" in line}
    return sorted(n for n in names if n.split(".")[0] in HEAVY)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", type=Path, help="a dump directory (default: the 12-layer GPT)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()

    d = args.dir or _gpt12_dir()
    load0 = f"{os.getloadavg()[0]:.1f}"
    before, after = _pair(d)
    py = sys.executable
    hd = [py, "-m", "hlodiff"]
    warm_dir = tempfile.mkdtemp(prefix="hlodiff-bench-warm-")
    cold_dir = tempfile.mkdtemp(prefix="hlodiff-bench-cold-")
    scratch = Path(tempfile.mkdtemp(prefix="hlodiff-bench-out-"))
    try:
        # fill the warm cache with both files; the cold runs' directory holds only the
        # parser's LALR tables (as after any first run) and --no-cache keeps parsed models out
        _run(hd + [str(d)], _env(warm_dir), scratch / "fill")
        _run(hd + ["show", str(before), "--no-cache"], _env(cold_dir), scratch / "fill")
        nc = ["--no-cache"]
        cases: dict[str, tuple[list[str], str | None]] = {
            "python -c pass": ([py, "-c", "pass"], None),
            "xla FILE": ([py, "-c", _XLA_PARSE, str(after)], None),
            "xla BEFORE+AFTER": ([py, "-c", _XLA_PARSE, str(before), str(after)], None),
            "hlodiff --version": (hd + ["--version"], cold_dir),
            "show FILE, cold": (hd + ["show", str(after)] + nc, cold_dir),
            "show FILE, warm": (hd + ["show", str(after)], warm_dir),
            "show FILE --format json, cold": (hd + ["show", str(after), "--format", "json"] + nc,
                                              cold_dir),
            "show FILE --format json, warm": (hd + ["show", str(after), "--format", "json"],
                                              warm_dir),
            "show FILE --format json, first run ever": (
                hd + ["show", str(after), "--format", "json"], None),
            "hlodiff DIR, cold": (hd + [str(d)] + nc, cold_dir),
            "hlodiff DIR, warm": (hd + [str(d)], warm_dir),
        }
        times: dict[str, list[float]] = {k: [] for k in cases}
        cpus: dict[str, list[float]] = {k: [] for k in cases}
        xla_inproc: list[float] = []
        for rep in range(args.repeat + 1):  # round 0: untimed, compiles the bytecode
            for name, (argv, cache) in cases.items():
                env = _env(cache, first_ever=name.endswith("first run ever"))
                wall, cpu = _run(argv, env, scratch / "out")
                if rep:
                    times[name].append(wall)
                    cpus[name].append(cpu)
                if name == "xla FILE" and rep:
                    xla_inproc.append(float((scratch / "out").read_text()))
                if env.get("HLODIFF_NO_CACHE"):  # the fresh, empty directory of a first run
                    shutil.rmtree(env["HLODIFF_CACHE_DIR"], ignore_errors=True)
        heavy = _heavy_imports_of_version()
    finally:
        shutil.rmtree(warm_dir, ignore_errors=True)
        shutil.rmtree(cold_dir, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(_PYCACHE, ignore_errors=True)

    med = {k: statistics.median(v) for k, v in times.items()}
    cmed = {k: statistics.median(v) for k, v in cpus.items()}
    best = {k: min(v) for k, v in times.items()}
    ref = {k: ("xla BEFORE+AFTER" if k.startswith("hlodiff DIR") else "xla FILE") for k in med}
    try:
        import jax
        import jaxlib
        versions = f"jax {jax.__version__}, jaxlib {jaxlib.__version__}"
    except ImportError:
        versions = "jax not installed"
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs; Python {platform.python_version()}; {versions}")
    print(f"# {after.name}: {after.stat().st_size / 1e6:.2f} MB; {before.name}: "
          f"{before.stat().st_size / 1e6:.2f} MB; {args.repeat} runs each, interleaved")
    print(f"# XLA in-process parse of FILE (no start, no imports): median "
          f"{statistics.median(xla_inproc):.3f} s")
    print()
    print(f"# load average before: {load0}, after: {os.getloadavg()[0]:.1f} "
          f"(on a busy machine, trust the CPU columns more than wall clock)")
    print()
    print("| command | wall median s | wall min s | x XLA (wall) | CPU median s | x XLA (CPU) | reference |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for k in cases:
        ours = not k.startswith(("xla", "python"))
        r = f"{med[k] / med[ref[k]]:.2f}" if ours else ""
        rc = f"{cmed[k] / cmed[ref[k]]:.2f}" if ours else ""
        print(f"| {k} | {med[k]:.3f} | {best[k]:.3f} | {r} | {cmed[k]:.3f} | {rc} | "
              f"{ref[k] if ours else ''} |")
    print()
    print("`hlodiff --version` imports of heavy modules: " + (", ".join(heavy) or "none"))
    if args.json:
        args.json.write_text(json.dumps({"median": med, "min": best, "runs": times, "cpu_runs": cpus,
                                         "xla_in_process": xla_inproc,
                                         "version_heavy_imports": heavy}, indent=1))


if __name__ == "__main__":
    main()
