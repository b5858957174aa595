"""Checks hlodiff's claims on dump directories it was never tuned on, through the real CLI.

Give it XLA dump directories (``--xla_dump_to``), each of one program ``P`` whose main module
is ``jit_P`` (the fixture scripts' convention; ``--main`` overrides it). For every directory
it runs the commands a user would and checks what can be checked against XLA's own files:

* module choice: ``hlodiff DIR`` diffs the program's main module, not a helper;
* memory: ``hlodiff memory`` gives exactly XLA's allocation total (memory-usage report), and
  the estimate from the module text alone (``--estimate``) is within 10% of it;
* self-diff: the optimized module against a copy of itself reports nothing changed;
* kernel kinds: no kernel of the optimized module is of an unknown or plain "Custom" kind;
* the diff of the main module runs and gives every before instruction a fate.

Prints one row per directory and a summary; exits 1 when a check fails. The data is not in
the repository (real dumps are large): e.g. dumps made on a real H100 with
``python fixtures/generate.py --platform cuda --keep-tmp``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HLODIFF = [sys.executable, "-m", "hlodiff"]


def _run(args: list[str], timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(HLODIFF + args, capture_output=True, text=True, timeout=timeout)


def _xla_total(after: Path) -> int | None:
    """XLA's total from the memory-usage report, or (older XLA writes only the buffer
    assignment) from the buffer assignment's "Total bytes used"."""
    stem = str(after)[: -len(".txt")]
    for suffix, pattern in (("-memory-usage-report.txt", r"^Total bytes: (\d+)"),
                            ("-buffer-assignment.txt", r"^Total bytes used: (\d+)")):
        rep = Path(stem + suffix)
        if rep.is_file():
            m = re.search(pattern, rep.read_text(), re.M)
            if m:
                return int(m.group(1))
    return None


def _main_files(d: Path, main: str) -> tuple[Path | None, Path | None]:
    before = after = None
    for p in d.iterdir():
        name = p.name
        if f".{main}." not in name:
            continue
        if name.endswith(f".{main}.before_optimizations.txt"):
            before = p
        elif re.search(r"\.[\w.]*after_optimizations\.txt$", name) and "spmd" not in name:
            after = p
    return before, after


def check(d: Path, main: str) -> dict:
    row: dict = {"dir": d.name, "main": main, "fail": []}
    before, after = _main_files(d, main)
    if not after:
        row["fail"].append("no optimized main module")
        return row
    r = _run(["diff", str(d), "--format", "json"])
    picked = None
    if r.returncode == 0:
        try:
            picked = json.loads(r.stdout)["before"]["module"]
        except (json.JSONDecodeError, KeyError, TypeError):
            picked = None
    row["picked"] = picked
    if picked != main:
        row["fail"].append(f"hlodiff DIR picked {picked!r}")
    total = _xla_total(after)
    r = _run(["memory", str(after), "--format", "json"])
    if r.returncode == 0:
        peak = json.loads(r.stdout).get("peak_bytes")
        row["peak"] = peak
        row["xla_total"] = total
        if total is not None and peak != total:
            row["fail"].append(f"memory peak {peak} != XLA {total}")
    else:
        row["fail"].append(f"memory exit {r.returncode}: {r.stderr.strip()[:120]}")
    r = _run(["memory", str(after), "--format", "json", "--estimate"])
    if r.returncode == 0 and total:
        est = json.loads(r.stdout).get("peak_bytes")
        row["estimate_ratio"] = round(est / total, 3)
        if abs(est / total - 1) > 0.10:
            row["fail"].append(f"estimate {est / total:.3f} of XLA's total")
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / after.name.replace("after_optimizations", "copy_after_optimizations")
        shutil.copyfile(after, copy)
        r = _run([str(after), str(copy), "--format", "json"])
        if r.returncode == 0:
            s = json.loads(r.stdout)["summary"]
            changed = {k: v for k, v in s.items()
                       if k in ("changed", "only_before", "only_after", "added", "layout_changes")
                       and v}
            row["self_diff"] = changed or "nothing changed"
            kinds = ((json.loads(r.stdout).get("kernels") or {}).get("after") or {}).get("kinds", {})
            row["kernel_kinds"] = kinds
            bad = {k: v for k, v in kinds.items()
                   if k.lower() in ("custom", "custom call", "custom fusion", "unknown", "other",
                                    "fusion")}
            if bad:
                row["fail"].append(f"kernels of unknown kind: {bad}")
            if changed:
                row["fail"].append(f"self-diff reports {changed}")
        else:
            row["fail"].append(f"self-diff exit {r.returncode}: {r.stderr.strip()[:120]}")
    if before:
        r = _run([str(before), str(after), "--format", "json"])
        if r.returncode == 0:
            res = json.loads(r.stdout)
            row["fates"] = {k: v for k, v in res["summary"].items()
                            if k in ("kept", "fused", "folded", "merged", "rewritten", "inlined",
                                     "removed", "uncertain") and v}
        else:
            row["fail"].append(f"diff exit {r.returncode}: {r.stderr.strip()[:120]}")
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--main", default=None, help="the main module's name (default: jit_<program>)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    rows = []
    for d in args.dirs:
        prog = re.sub(r"^hlodump_(.+)_[a-z0-9_]{8}$", r"\1", d.name)
        rows.append(check(d, args.main or f"jit_{prog}"))
        r = rows[-1]
        status = "ok" if not r["fail"] else "FAIL: " + "; ".join(r["fail"])
        print(f"{r['dir'][:40]:40s} peak={r.get('peak')} est={r.get('estimate_ratio')} "
              f"{status}", flush=True)
    failed = sum(1 for r in rows if r["fail"])
    print(f"{len(rows) - failed} of {len(rows)} directories pass every check")
    if args.json:
        print(json.dumps(rows, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
