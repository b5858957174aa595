#!/usr/bin/env python
"""Measure regression mode across JAX versions: kernel pairing against an op_name truth.

Reads ``<dir>/<program>/<jax version>/*after_optimizations.txt`` (written by
fixtures/generate_versions.py; fixtures/versions holds the tuning set, benchmarks/data/versions
the measurement set) and diffs every ordered pair old -> new of versions of each program in
regression mode.

**The truth.** Every kernel (see :func:`hlodiff.diff.kernel_pairs.kernel_nodes`: top-level
instructions that run, wrapper calls seen through) has a set of *truth keys*: for each
instruction it holds that carries an op_name, (primitive, source line), where the
primitive is the op_name's last component without its parameters
(``jit(f)/jit(main)/jvp(jit(relu))/max``, ``jit(f)/jvp()/jit(relu)/max`` -> ``max``;
``.../reduce_sum[axes=(1,)]`` -> ``reduce_sum``; scopes are left out because newer JAX adds
helper scopes such as ``jit(dynamic_index_in_dim)``) and the source line is the innermost frame's (``source_line`` or the
StackFrames table). A before kernel is *pairable* when some after kernel shares a key with
it; a pair is *correct* when the two kernels share a key. Recall = pairable before kernels
paired correctly / pairable before kernels. Precision = correct pairs / confident pairs
whose before kernel has keys ("uncertain" kernels are not pairs). The truth cannot tell
layers of the same Python loop apart (their op_names and lines are equal); structure does.

Also counted: rows naming a wrapper (a ``call`` or an instruction of a ``parallel_*``
computation's wrapper call), layout changes whose shapes differ in dims (false), changes
and changelog groups; self-diff and re-dump diff must report nothing changed.

Usage::

    python benchmarks/versions.py fixtures/versions            # table to stdout
    python benchmarks/versions.py benchmarks/data/versions --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from itertools import combinations
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hlodiff.diff import diff_modules  # noqa: E402
from hlodiff.diff.normalize import canon_op_name, primitive  # noqa: E402
from hlodiff.diff.kernel_pairs import build_kernels  # noqa: E402
from hlodiff.diff.view import after_view  # noqa: E402
from hlodiff.dumps.loader import load  # noqa: E402


def _vkey(v: str):
    base = v.split("-")[0]
    return tuple(int(x) for x in base.split(".")), v


def after_file(d: Path) -> Path | None:
    fs = sorted(d.glob("*after_optimizations.txt"))
    return fs[0] if fs else None


def truth_keys(module) -> dict[str, set]:
    """Kernel name -> truth keys, from the raw metadata of the instructions it holds."""
    v = after_view(module)
    ks, _ = build_kernels(v)
    out = {}
    for k in ks:
        keys = set()
        for i in k.members:
            n = v.nodes[i]
            md = n.inst.metadata
            if md is None or not md.op_name or n.opcode in ("parameter", "constant"):
                continue
            src = v.src_of(n.inst)
            keys.add((primitive(canon_op_name(md.op_name)), src[0][1] if src else None))
        out[k.name] = keys
    return out


def wrapper_names(module) -> set[str]:
    return {i.name for c in module.computations for i in c.instructions if i.opcode == "call"}


def measure(before_path: Path, after_path: Path) -> dict:
    mb, ma = load(before_path), load(after_path)
    res = diff_modules(mb, ma, mode="regression")
    tb, ta = truth_keys(mb), truth_keys(ma)
    by_key: dict = {}
    for name, keys in ta.items():
        for k in keys:
            by_key.setdefault(k, set()).add(name)
    rows = res.regression["kernels"]
    pairable = {b for b, keys in tb.items() if any(k in by_key for k in keys)}
    pairs = [(r["before"], r["after"]) for r in rows if r["before"] and r["after"]]
    judged = [(b, a) for b, a in pairs if tb.get(b)]
    correct = [(b, a) for b, a in judged if tb[b] & ta.get(a, set())]
    hit = {b for b, a in correct if b in pairable}
    wr = wrapper_names(mb) | wrapper_names(ma)
    wrapper_rows = sum(1 for r in rows if r["before"] in wr or r["after"] in wr)
    false_layout = sum(1 for lc in res.layouts if lc.before is not None and _dims_differ(
        mb, ma, lc))
    return {
        "kernels_before": len(tb), "kernels_after": len(ta), "pairable": len(pairable),
        "pairs": len(pairs), "judged": len(judged), "correct": len(correct),
        "recall": len(hit) / len(pairable) if pairable else 1.0,
        "precision": len(correct) / len(judged) if judged else 1.0,
        "uncertain": sum(1 for r in rows if r["status"] == "uncertain"),
        "wrapper_rows": wrapper_rows, "false_layout_changes": false_layout,
        "layout_changes": len(res.layouts),
        "changes": len(res.regression["changes"]), "groups": len(res.regression["groups"]),
        "wrong": [(b, a) for b, a in judged if not tb[b] & ta.get(a, set())][:10],
        "missed": sorted(pairable - hit)[:10],
    }


def _dims_differ(mb, ma, lc) -> bool:
    def dims(m, name):
        for c in m.computations:
            i = c.by_name.get(name)
            if i is not None:
                return i.shape.dims_text
        return None
    return dims(mb, lc.before) != dims(ma, lc.instruction)


def nothing_changed(path: Path, other: Path | None = None) -> int:
    """Changes reported for a module against itself (or against a re-dump)."""
    res = diff_modules(load(path), load(other or path), mode="regression")
    return len(res.regression["changes"]) + len(res.layouts)


def run(root: Path) -> list[dict]:
    out = []
    for prog in sorted(p for p in root.iterdir() if p.is_dir()):
        vers = sorted((d.name for d in prog.iterdir() if d.is_dir() and "-" not in d.name),
                      key=_vkey)
        for old, new in combinations(vers, 2):
            fb, fa = after_file(prog / old), after_file(prog / new)
            r = measure(fb, fa)
            r.update(program=prog.name, old=old, new=new)
            out.append(r)
        for d in prog.iterdir():
            if d.name.endswith("-redump"):
                base = prog / d.name[:-len("-redump")]
                out.append({"program": prog.name, "old": base.name, "new": d.name,
                            "self_changes": nothing_changed(after_file(base)),
                            "redump_changes": nothing_changed(after_file(base),
                                                              after_file(d))})
    return out


def table(rows: list[dict]) -> str:
    lines = ["| program | old → new | kernels | pairable | pairs | recall | precision | "
             "uncertain | wrapper rows | false layout | groups |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "recall" not in r:
            lines.append(f"| {r['program']} | {r['old']} self / re-dump | | | | | | | | | "
                         f"{r['self_changes']} / {r['redump_changes']} changes |")
            continue
        lines.append(
            f"| {r['program']} | {r['old']} → {r['new']} | {r['kernels_before']} → "
            f"{r['kernels_after']} | {r['pairable']} | {r['pairs']} | {r['recall']:.1%} | "
            f"{r['precision']:.1%} | {r['uncertain']} | {r['wrapper_rows']} | "
            f"{r['false_layout_changes']} | {r['groups']} |")
    pr = [r for r in rows if "recall" in r]
    if pr:
        pa = sum(r["pairable"] for r in pr)
        hit = sum(r["recall"] * r["pairable"] for r in pr)
        ju = sum(r["judged"] for r in pr)
        co = sum(r["correct"] for r in pr)
        lines.append(f"| **all** | {len(pr)} pairs | | {pa} | | {hit / max(1, pa):.1%} | "
                     f"{co / max(1, ju):.1%} | {sum(r['uncertain'] for r in pr)} | "
                     f"{sum(r['wrapper_rows'] for r in pr)} | "
                     f"{sum(r['false_layout_changes'] for r in pr)} | |")
    return "\n".join(lines)


ROOTS = {  # what each data set is, for the RESULTS.md headings
    "fixtures/versions": "the committed fixtures: programs and versions tuned on",
    "benchmarks/data/versions5": "the tuned programs under five versions: every pair with "
                                 "0.5.3 or 0.9.2 was never seen while tuning",
    "benchmarks/data/versions": "programs never tuned on (fixtures/generate_versions.py "
                                "--set measure)",
    "benchmarks/data/gpt12v": "12-layer GPT step, benchmarks/gen_gpt.py --layers 12 --ln jit, "
                              "never tuned on",
}
BEGIN, END = "<!-- versions:begin -->", "<!-- versions:end -->"


def _machine() -> str:
    import platform

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {cpu}, Linux, Python {platform.python_version()}"


def write_results(path: Path, sections: list[tuple[Path, list[dict]]], seconds: float) -> None:
    """Replace this script's section of RESULTS.md (between its markers) with fresh tables."""
    import datetime
    import subprocess

    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    versions = sorted({r[k] for _, rows in sections for r in rows for k in ("old", "new")
                       if "-" not in r[k]}, key=_vkey)
    body = [BEGIN, "## Regression mode across JAX versions (benchmarks/versions.py)", "",
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {_machine()}, "
            f"code at commit {commit} (plus uncommitted edits, if any), {seconds:.0f} s for all "
            f"diffs. JAX/jaxlib versions: {', '.join(versions)}, each in its own venv, CPU "
            "(fixtures/generate_versions.py). `python benchmarks/versions.py fixtures/versions "
            "benchmarks/data/versions --results benchmarks/RESULTS.md`.", "",
            "Truth: a kernel's keys are (primitive of the op_name, innermost source line) of "
            "the instructions it holds; a pair is correct when the kernels share a key; a "
            "before kernel is pairable when some after kernel shares one. Recall = pairable "
            "kernels paired correctly / pairable; precision = correct / judged pairs. "
            "Pairs include kernels *joined into* or *split off from* a paired kernel. "
            "`uncertain`: kernels left unpaired because candidates tie (not counted as "
            "pairs). The truth cannot tell layers of one Python loop apart (same op_names and "
            "lines): it can only catch a pair across different operations.", ""]
    for root, rows in sections:
        body += [f"### {root} ({ROOTS.get(str(root).rstrip('/'), 'never tuned on')})", "",
                 table(rows), ""]
    body.append(END)
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + "\n".join(body) + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(body) + "\n"
    path.write_text(text)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path, nargs="+")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--results", type=Path, help="write the tables into this RESULTS.md")
    ap.add_argument("--verbose", action="store_true", help="print wrong and missed pairs")
    args = ap.parse_args(argv)
    allrows = []
    sections = []
    t0 = time.perf_counter()
    for root in args.root:
        rows = run(root)
        sections.append((root, rows))
        allrows += rows
        print(f"### {root}\n")
        print(table(rows))
        print()
        if args.verbose:
            for r in rows:
                if r.get("wrong") or r.get("missed"):
                    print(r["program"], r["old"], r["new"], "wrong:", r["wrong"],
                          "missed:", r["missed"])
    if args.results:
        write_results(args.results, sections, time.perf_counter() - t0)
    if args.json:
        args.json.write_text(json.dumps(allrows, indent=1, default=str))


if __name__ == "__main__":
    main()
