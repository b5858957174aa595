#!/usr/bin/env python
"""Benchmark `hlodiff BEFORE AFTER` on the generated GPT training steps.

For each of benchmarks/data/gpt12 and gpt24 (made by benchmarks/gen_gpt.py), in a fresh
subprocess each (so peak RSS is per size), measures:

* xla_parse: jaxlib's C++ parser on both files (``_hlo.hlo_module_from_text``), best of N;
* parse: hlodiff.load on both files with the cache off;
* diff: diff_modules (views + matching + analyses), best of N;
* total = parse + diff, and the ratios total/xla_parse and diff/xla_parse;
* peak RSS of the subprocess.

Then prints the 24-layer / 12-layer ratio of total and of diff time.

    .venv/bin/python benchmarks/bench_diff.py [--repeat 3] [--sizes gpt12,gpt24]

``--sizes gpt12_lnjit,gpt24_lnjit`` uses steps made with ``gen_gpt.py --ln jit``, whose
optimized size grows linearly with depth (the default inline LayerNorm grows faster on CPU).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _one(d: Path, repeat: int) -> dict:
    import gc
    import resource
    import time

    import hlodiff
    from hlodiff.diff import diff_modules

    b = next(d.glob("*before_optimizations.txt"))
    a = next(d.glob("*after_optimizations.txt"))
    tb, ta = b.read_text(), a.read_text()
    out = {"dir": d.name}
    try:
        from jaxlib import _hlo

        best = 1e9
        for _ in range(repeat):
            t = time.perf_counter()
            _hlo.hlo_module_from_text(tb)
            _hlo.hlo_module_from_text(ta)
            best = min(best, time.perf_counter() - t)
        out["xla_parse_s"] = best
    except Exception as e:  # pragma: no cover
        out["xla_parse_error"] = str(e)
    best = 1e9
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        mb = hlodiff.load(b, cache=False)
        ma = hlodiff.load(a, cache=False)
        best = min(best, time.perf_counter() - t)
    out["parse_s"] = best
    best, timings, res = 1e9, {}, None
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        res = diff_modules(mb, ma)
        dt = time.perf_counter() - t
        if dt < best:
            best, timings = dt, dict(res.timings)
    out["diff_s"] = best
    out["diff_parts_s"] = timings
    out["instructions"] = [mb.instruction_count, ma.instruction_count]
    out["summary"] = {k: res.summary[k] for k in ("kept", "fused", "folded", "merged",
                                                   "rewritten", "inlined", "removed",
                                                   "fusions", "added", "layout_changes")}
    out["total_s"] = out["parse_s"] + out["diff_s"]
    if "xla_parse_s" in out:
        out["total_over_xla"] = out["total_s"] / out["xla_parse_s"]
        out["diff_over_xla"] = out["diff_s"] / out["xla_parse_s"]
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="gpt12,gpt24")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(_one(Path(args.one), args.repeat)))
        return 0
    results = {}
    for s in args.sizes.split(","):
        d = HERE / "data" / s
        if not d.is_dir():
            print(f"{s}: missing (run benchmarks/gen_gpt.py --layers {s[3:]})")
            continue
        p = subprocess.run([sys.executable, __file__, "--one", str(d), "--repeat",
                            str(args.repeat)], capture_output=True, text=True)
        if p.returncode:
            print(p.stderr)
            return 1
        r = json.loads(p.stdout.strip().splitlines()[-1])
        results[s] = r
        print(f"{s}: {r['instructions'][0]} -> {r['instructions'][1]} instructions")
        print(f"  xla C++ parse (both) {r.get('xla_parse_s', float('nan')):.3f}s | hlodiff parse "
              f"{r['parse_s']:.3f}s | diff {r['diff_s']:.3f}s "
              f"(views {r['diff_parts_s']['views']:.3f}, match {r['diff_parts_s']['match']:.3f}, "
              f"analyses {r['diff_parts_s']['analyses']:.3f})")
        if "total_over_xla" in r:
            print(f"  total/xla_parse = {r['total_over_xla']:.2f}x (goal <= 10x); "
                  f"diff/xla_parse = {r['diff_over_xla']:.2f}x")
        print(f"  peak RSS {r['peak_rss_mb']:.0f} MB (goal < 600)  summary {r['summary']}")
    for small in [s for s in results if s.startswith("gpt12")]:
        big = "gpt24" + small[len("gpt12"):]  # e.g. gpt12_lnjit -> gpt24_lnjit
        if big not in results:
            continue
        a, b = results[small], results[big]
        print(f"{big}/{small}: total {b['total_s'] / a['total_s']:.2f}x, diff "
              f"{b['diff_s'] / a['diff_s']:.2f}x (goal <= 2.2x); instructions before "
              f"{b['instructions'][0] / a['instructions'][0]:.2f}x, after "
              f"{b['instructions'][1] / a['instructions'][1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
