#!/usr/bin/env python
"""How far hlodiff's per-region jax.checkpoint verdicts agree with XLA's pass dumps.

    python benchmarks/remat_regions.py DUMP_DIR...    # dirs dumped with --xla_dump_hlo_pass_re=.*

For each dump directory (a program's before/after modules and its pass-by-pass dumps, e.g.
``benchmarks/data/zoo/<mode>/remat_*`` or ``fixtures/generate_memory.py --pass-dumps``), the
regions of the unoptimized module are classified twice with the same rules
(hlodiff/diff/remat.py ``classify``): once from the diff's fates, once from the oracle
(``PassTrace.destinations``: the top-level instructions of the final module that hold each
before instruction's value, followed through XLA's passes). Printed per program: recomputed
ops whose outcome (merged / forward / backward / removed) agrees, and regions whose status
and "still recomputes" agree.
"""

from __future__ import annotations

import sys
from pathlib import Path


def one(d: Path) -> tuple[int, int, int, int, int, int, list[str]]:
    from hlodiff.analysis.remat_regions import find_regions
    from hlodiff.diff import diff_modules
    from hlodiff.diff.remat import _targets, classify
    from hlodiff.dumps.directory import resolve_dump_pair
    from hlodiff.dumps.loader import load
    from hlodiff.dumps.passes import trace_directory

    pair = resolve_dump_pair(d)
    before, after = load(pair.before), load(pair.after)
    regions = find_regions(before)
    if not regions:
        return 0, 0, 0, 0, 0, 0, []
    res = diff_modules(before, after, mode="optimization")
    fates = {(f.computation, f.before): f for f in res.instructions}
    oracle = trace_directory(d, module=pair.name) if _takes_module() else trace_directory(d)

    def engine(comp, name):
        f = fates.get((comp, name))
        if f is None:
            return []
        return None if f.fate == "uncertain" else _targets(f, fates)

    cots = {(r.computation, c) for r in regions for c in r.cotangents}

    def truth(comp, name):
        try:
            out = oracle.destinations(name)
            fate = oracle.info(name).fate
        except KeyError:
            return None
        if not out and (comp, name) in cots:  # the schedule's reference point: where the
            return engine(comp, name)         # cotangent is, when the oracle lost it
        if not out and fate != "removed":
            return None  # the oracle could not follow it (inlined callees, ...): not scored
        return out

    e_regs, _ = classify(before, after, regions, engine)
    o_regs, _ = classify(before, after, regions, truth)
    agree = total = ragree = rstill = n_unc = 0
    notes = []
    for e, o in zip(e_regs, o_regs):
        for k in ("merged", "forward", "backward", "removed"):
            total += o["outcome"][k]
            agree += min(o["outcome"][k], e["outcome"][k])
        if o["status"] == "uncertain":
            n_unc += 1
            continue  # the oracle followed too little of it
        ragree += e["status"] == o["status"]
        rstill += e["recomputes"] == o["recomputes"]
        if e["status"] != o["status"] or e["outcome"] != o["outcome"]:
            notes.append(f"    {e['barrier']}: engine {e['status']} {e['outcome']} | "
                         f"oracle {o['status']} {o['outcome']}")
    return (agree, total, ragree, rstill, len(e_regs) - n_unc,
            sum(bool(x["recomputes"]) for x in o_regs), notes)


def _takes_module() -> bool:
    import inspect

    from hlodiff.dumps.passes import trace_directory
    return "module" in inspect.signature(trace_directory).parameters


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    dirs = [Path(a) for a in argv if a != "-v" and Path(a).is_dir()]
    ta = tt = tr = ts = tn = 0
    print(f"{'program':58} {'ops agree':>14} {'status':>7} {'recomputes?':>11} oracle: still")
    for d in dirs:
        a, t, r, s, n, still, notes = one(d)
        if not n:
            continue
        ta, tt, tr, ts, tn = ta + a, tt + t, tr + r, ts + s, tn + n
        print(f"{str(d)[-58:]:58} {a:5}/{t:<5} {100 * a / max(t, 1):5.1f}% {r:3}/{n:<3} "
              f"{s:4}/{n:<3}  {still}/{n}")
        if verbose:
            print("\n".join(notes))
    print(f"{'total':58} {ta:5}/{tt:<5} {100 * ta / max(tt, 1):5.1f}% {tr:3}/{tn:<3} {ts:4}/{tn:<3}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
