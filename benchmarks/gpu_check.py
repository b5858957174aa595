#!/usr/bin/env python
"""Check kernel kinds, collectives and partitioned diffs on a set of dumps.

    python benchmarks/gpu_check.py [DIR ...]     # default: benchmarks/data/gpu_set/*/*

For each dump directory (one program: a before and an after module): kernels whose kind is
unnamed ("custom fusion"/"fusion"/"custom call"), collectives reported vs. those XLA's
own parser (jaxlib) finds, result bytes vs. the shapes XLA prints, and in the diff: ENTRY
layout changes, "reshaped operands"/"moved across" reasons and "partitioned" fates.
"""

from __future__ import annotations

import glob
import re
import sys
from pathlib import Path

from hlodiff.analysis.collectives import analyze_collectives
from hlodiff.analysis.kernels import analyze_kernels
from hlodiff.diff import diff_files
from hlodiff.dumps.loader import load

_COLL = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
_BITS = {"f32": 32, "f16": 16, "bf16": 16, "s32": 32, "u32": 32, "s8": 8, "u8": 8,
         "pred": 8, "f64": 64, "s64": 64, "u64": 64}


def xla_collectives(path: Path) -> dict[str, int]:
    """name -> result bytes (sync ops; -1 for async starts) as XLA's parser prints them."""
    from jaxlib import _hlo

    out = {}
    for c in _hlo.hlo_module_from_text(path.read_text()).computations():
        for i in c.instructions():
            t = i.to_string()
            m = re.match(r"\s*(?:ROOT )?%?(\S+) = (.*?) ([a-z-]+)\(", t)
            if not m:
                continue
            op = m.group(3)
            if op in _COLL:
                total = 0
                for ty, dims in re.findall(r"(\w+)\[([\d,]*)\]", m.group(2)):
                    n = 1
                    for d in filter(None, dims.split(",")):
                        n *= int(d)
                    total += n * _BITS.get(ty, 32) // 8
                out[m.group(1)] = total
            elif op.endswith("-start") and op[:-6] in _COLL:
                out[m.group(1)] = -1
    return out


def _elements(dims: str) -> int:
    n = 1
    for d in filter(None, dims.split(",")):
        n *= int(d)
    return n


def _shrunk(reason: str, nparts: int) -> bool:
    """A reason whose 'X -> Y' shapes lost a factor of elements that divides the number of
    partitions: a per-device shape taken for a reshape. Other reshapes (same size, or a
    factor no partitioning explains) are real rewrites or mismatches, counted apart."""
    m = re.search(r"\(\w+\[([\d,]*)\] -> \w+\[([\d,]*)\]\)", reason)
    if not m:
        return False
    g, loc = _elements(m.group(1)), _elements(m.group(2))
    return loc > 0 and g > loc and g % loc == 0 and nparts % (g // loc) == 0


def check(d: Path) -> dict:
    before = next(d.glob("*.before_optimizations.txt"))
    after = next(d.glob("*after_optimizations.txt"))
    a, b = load(str(after)), load(str(before))
    kr = analyze_kernels(a)
    unnamed = [k.name for k in kr.kernels if k.kind in ("custom fusion", "fusion", "custom call")
               and not k.detail]
    cr = analyze_collectives(a, b)
    xla = xla_collectives(after)
    ours = {c.name: c for c in cr.collectives}
    ours.update({c.wrapped: c for c in cr.collectives if c.wrapped})
    missing = sorted(set(xla) - set(ours))
    wrong = [n for n, v in xla.items() if v >= 0 and n in ours and ours[n].out_bytes != v]
    unmapped = [c.name for c in cr.collectives if c.mesh_axes is None]
    res = diff_files(before, after)
    bad = [f.before for f in res.instructions if res.summary.get("partitioned")
           and ("reshaped operands" in f.reason or "moved across" in f.reason)
           and _shrunk(f.reason, res.summary["partitioned"])]
    other = [f.before for f in res.instructions if res.summary.get("partitioned")
             and ("reshaped operands" in f.reason or "moved across" in f.reason)
             and f.before not in bad]
    entry = [lc for lc in res.layouts if lc.instruction == "ENTRY"]
    parts = sum(1 for f in res.instructions if "partitioned" in f.reason)
    return {"program": f"{d.parent.name}/{d.name}", "kernels": len(kr.kernels),
            "unnamed": unnamed, "collectives": len(cr.collectives), "xla": len(xla),
            "missing": missing, "wrong_bytes": wrong, "unmapped": unmapped,
            "reshape_reasons": len(bad), "other_reshapes": len(other), "entry_layout": len(entry), "partitioned": parts,
            "bytes": (res.summary.get("bytes_before"), res.summary.get("bytes_after"))}


def main(argv: list[str]) -> int:
    dirs = [Path(p) for p in argv] or sorted(Path(p) for p in glob.glob(
        "benchmarks/data/gpu_set/*/*") if Path(p).is_dir())
    fails = 0
    for d in dirs:
        r = check(d)
        ok = not (r["unnamed"] or r["missing"] or r["wrong_bytes"] or r["reshape_reasons"]
                  or r["entry_layout"])
        fails += not ok
        print(("ok  " if ok else "BAD ") + " ".join(f"{k}={v}" for k, v in r.items()))
    print(f"{len(dirs) - fails} of {len(dirs)} programs clean")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
