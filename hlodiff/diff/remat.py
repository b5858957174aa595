"""Per ``jax.checkpoint`` region: does it still recompute after optimization, and what did it
do to the peak?

The regions come from the unoptimized module (analysis/remat_regions.py). For every
recomputed instruction R of a region the diff's fates say which after kernels hold its value;
R is then

* ``merged``: one of those kernels also holds R's forward twin F (the identical forward
  instruction) and runs in the forward pass: once XLA removed the barrier
  (``cse_barrier_expander``; on CPU before CSE, fusion and scheduling), CSE computed the
  value once. Nothing is recomputed; the forward value stays live until the backward pass,
  as if it had been saved;
* ``forward``: its own kernel, scheduled before the first backward kernel of its
  computation: work done twice (or derivative work moved ahead), live as long as a saved
  value would be;
* ``backward``: its own kernel (or fused into a consumer) in the backward pass: what
  jax.checkpoint asks for;
* ``removed`` (dead or folded) or ``uncertain`` (the engine could not decide).

A region *still recomputes* when some of its work is in the backward pass. On GPU the
barriers are removed only after scheduling, so CSE never sees them and the schedule keeps the
recomputation in the backward pass; on CPU most of it is merged or hoisted.

Memory (when the after module is scheduled): which of the region's values are live at the
peak, as recomputed values, as forward values kept for the backward pass (merged or
hoisted), or as saved residuals; a region can lower the peak only where the values it
recomputes are not live there.

The engine's fates of twin pairs get one correction here (mechanism, not names): when CSE
merged F and R, the after module holds one kernel for both; the matcher pairs it with one of
them, and the other falls back to a look-alike of another opcode. Its value is in the
partner's kernel (the identical computation).
"""

from __future__ import annotations

from ..analysis.remat_regions import TRIVIAL, Region, find_regions, value_bytes
from ..hlo.model import Instruction, Module
from .forwarding import same_values
from .onednn_softmax import TARGET as ONEDNN_SOFTMAX
from .result import InstructionFate

BACKWARD_MARK = "transpose("
MARK = "rematted_computation"
# library calls that replace a whole pattern of instructions (not one, like a gemm call)
_PATTERN_TARGETS = {ONEDNN_SOFTMAX}
HEAVY = {"dot", "convolution"}


def _targets(f: InstructionFate, fates: dict) -> list[str]:
    """Top-level after instructions holding a before instruction's value."""
    if f.fate in ("removed", "uncertain"):
        return []
    seen = set()
    while f.fate == "merged" and not (f.fusion or f.after) and f.into and f.into not in seen:
        seen.add(f.into)
        g = fates.get((f.computation, f.into))
        if g is None:
            break
        f = g
    out = [t for t in [f.fusion or f.after] if t]
    out += [t for t in f.also_in if t not in out]
    return out


def _twin_fate(good: InstructionFate) -> str:
    """The category of a recomputed twin whose value its forward twin ``good`` computes
    (cpu4 helper). A twin kept at top level: only CSE can have taken the other one
    ("merged"). A twin fused into a loop kernel: on CPU the barrier expander runs after the
    last CSE before fusion (jax 0.10.2 remat_dots_no_batch dumps: 0023 cse, 0024
    cse_barrier_expander), so the twins were fused into identical kernels and the CSE after
    fusion (dump 0036) merged the kernels: "fused". Otherwise (a library kernel, a rewrite):
    "rewritten"."""
    if good.fate == "kept":
        return "merged"
    if good.fate == "fused" and good.fusion_kind in ("kLoop", "kInput", "kOutput"):
        return "fused"
    return "rewritten"


def _correct_twins(regions: list[Region], fates: dict, after_ops: dict,
                   pattern_calls: set[str]) -> list[tuple[InstructionFate, str | None]]:
    """Give a twin whose fate names a look-alike of another opcode the kernel of its
    partner (the one value CSE kept). Returns each fate it changed with its former place
    (kernel or instruction). ``pattern_calls``: library calls that took a whole pattern
    of instructions; their ops stay with them."""
    changed = []
    for r in regions:
        for n, t in list(r.twins.items()) + list(r.recompute_twins.items()):
            fr, ft = fates.get((r.computation, n)), fates.get((r.computation, t))
            if fr is None or ft is None:
                continue
            for good, bad in ((fr, ft), (ft, fr)):
                if good.fate not in ("kept", "fused", "rewritten", "inlined") or \
                        after_ops.get(good.after) != good.opcode:
                    continue
                if bad.fate in ("removed",) or after_ops.get(bad.after) == bad.opcode:
                    continue
                if bad.fate == "rewritten" and bad.after in pattern_calls:
                    # a library call took the pattern before the barrier fell (JAX 0.4.30
                    # CPU: oneDNN softmax; fresh 16 remat_nested_pvt_spatial_reduction)
                    continue
                if bad.after is None and bad.candidates:
                    # its own kernel, one of several twins' (anchors): not a look-alike
                    continue
                if (bad.fusion or bad.after) == (good.fusion or good.after):
                    continue
                was = bad.fusion or bad.after
                bad.fate = _twin_fate(good)  # its value is computed by its twin's instruction
                bad.after, bad.fusion, bad.fusion_kind = good.after, good.fusion, good.fusion_kind
                bad.into = good.before if bad.fate == "merged" else None
                bad.reason = (f"computed once with {good.before}, its identical twin across a "
                              "jax.checkpoint barrier (CSE once the barrier was removed)")
                bad.candidates = []
                changed.append((bad, was))
    return changed


def _follow_views(before: Module, fates: dict,
                  changed: list[tuple[InstructionFate, str | None]]) -> int:
    """A view of a corrected twin (a reshape, bitcast or copy, a broadcast or transpose that
    moves no element: ``forwarding.same_values``) re-views the twin's data, so it lives
    where the twin does. Two kinds were placed by the twin's former, wrong place: one the
    fallback put at a reader's kernel ("became a layout change": reshape-mover sank it
    below its readers, layout assignment made it a bitcast of the dot's output), and one
    algsimp removed as an identity, whose value the engine took from the twin's fate before
    the correction (fresh 23 remat_memory_efficient_densenet, JAX 0.4.30: ``reshape.522``
    of ``rsqrt.521`` and the no-op ``broadcast.523`` after it were named at the consumer
    ``fusion.675.clone`` where ``rsqrt.521`` had been; the oracle ends them with the rsqrt
    in ``fusion.676``). ``changed``: each corrected fate with its former place. Returns
    how many fates changed."""
    if not changed:
        return 0
    users: dict[tuple[str, str], list] = {}
    insts: dict[tuple[str, str], Instruction] = {}
    for c in before.computations:
        for i in c.instructions:
            insts[(c.name, i.name)] = i
            for o in i.operands:
                users.setdefault((c.name, o), []).append(i)
    done, todo = 0, list(changed)
    while todo:
        src, former = todo.pop()
        here = src.fusion or src.after
        viewed = insts.get((src.computation, src.before))
        for u in users.get((src.computation, src.before), []):
            f = fates.get((src.computation, u.name))
            if f is None or f.fate != "rewritten" or viewed is None or \
                    not same_values(u, viewed) or (f.fusion or f.after) == here:
                continue
            was = f.fusion or f.after
            if (f.reason or "").startswith(f"{u.opcode} became a layout change") and \
                    u.opcode in ("reshape", "bitcast"):
                f.reason = f"{u.opcode} of {src.before}, a view of its data"
            elif was is not None and was == former:
                head = (f.reason or "").split("; the value is in ")[0]
                f.reason = f"{head}; the value is in {here}"
            else:
                continue
            f.after, f.fusion, f.fusion_kind = src.after, src.fusion, src.fusion_kind
            todo.append((f, was))
            done += 1
    return done


def _schedule(after: Module):
    """Top-level instruction -> (computation, position) in every non-fused computation."""
    fused = set()
    for c in after.computations:
        for i in c.instructions:
            if i.opcode == "fusion":
                fused.update(i.calls)
    pos = {}
    for c in after.computations:
        if c.name in fused:
            continue
        for k, i in enumerate(c.instructions):
            pos[i.name] = (c.name, k)
    return pos


def correct_fates(before: Module, after: Module, fl: list[InstructionFate]) -> int:
    """The twin correction (module docstring), run on the fates before they are counted."""
    if not any(i.opcode == "opt-barrier" for i in before.instructions()):
        return 0
    if barriers_late(after):  # CSE never saw a barrier's twins side by side
        return 0
    regions = find_regions(before)
    if not regions:
        return 0
    fates = {(f.computation, f.before): f for f in fl}
    after_ops = {i.name: i.opcode for i in after.instructions()}
    pattern_calls = {i.name for i in after.instructions()
                     if i.custom_call_target in _PATTERN_TARGETS}
    changed = _correct_twins(regions, fates, after_ops, pattern_calls)
    return len(changed) + _follow_views(before, fates, changed)


def analyse(before: Module, after: Module, fl: list[InstructionFate],
            memory=None, corrected: int = 0) -> dict | None:
    """The ``"remat"`` section of a diff (schema in result.py), or None without regions."""
    regions = find_regions(before)
    if not regions:
        return None
    fates = {(f.computation, f.before): f for f in fl}

    def where(comp: str, name: str) -> list[str] | None:
        f = fates.get((comp, name))
        if f is None:
            return []
        if f.fate == "uncertain":
            return None
        return _targets(f, fates)

    notes: dict = {}
    out, totals = classify(before, after, regions, where, memory, notes)
    for (comp, name), (what, label) in notes.items():
        f = fates.get((comp, name))
        if f is not None and what in _NOTE and f"jax.checkpoint {label}:" not in f.reason:
            f.reason = (f.reason + "; " if f.reason else "") + f"jax.checkpoint {label}: {_NOTE[what]}"
    still = sum(1 for x in out if x["recomputes"])
    merged_only = sum(1 for x in out if x["recomputes"] is False)
    return {"regions": out, "count": len(out), "still_recompute": still,
            "no_longer_recompute": merged_only, "instructions": totals,
            "barriers_left": sum(1 for i in after.instructions() if i.opcode == "opt-barrier"),
            "barriers_removed_after_scheduling": barriers_late(after),
            "fates_corrected": corrected,
            "summary": _summary(out, totals, memory is not None)}


_NOTE = {"merged": "recomputation merged into the forward pass by CSE (computed once)",
         "forward": "recomputation scheduled ahead of the backward pass",
         "backward": "recomputed in the backward pass"}


def classify(before: Module, after: Module, regions: list[Region], where,
             memory=None, notes: dict | None = None) -> tuple[list[dict], dict]:
    """Each region's record. ``where(computation, before_name)`` gives the top-level after
    instructions holding a before instruction's value ([] gone, None uncertain): the
    diff's fates, or XLA's pass dumps (benchmarks/remat_regions.py, the oracle)."""
    pos = _schedule(after)
    late = barriers_late(after)
    # kernels holding backward values: where the backward pass starts, per computation
    first_bwd: dict[str, int] = {}
    for c in before.computations:
        for i in c.instructions:
            op = i.op_name or ""
            if BACKWARD_MARK not in op or MARK in op or i.opcode in TRIVIAL:
                continue
            for t in where(c.name, i.name) or ():
                if t in pos:
                    cc, k = pos[t]
                    if k < first_bwd.get(cc, 1 << 60):
                        first_bwd[cc] = k
    live = _live_at_peak(memory)
    out = []
    totals = {"merged": 0, "forward": 0, "backward": 0, "removed": 0, "uncertain": 0}
    for r in sorted(regions, key=lambda r: (r.computation != before.entry, r.depth, r.index)):
        ahead = (lambda t: False) if late else _ahead_test(r, where, pos, first_bwd)
        out.append(_region(before, r, where, pos, ahead, live, totals, late, notes))
    return out, totals


def barriers_late(after: Module) -> bool:
    """Whether XLA removed the barriers only after scheduling: the optimized module still
    holds an opt-barrier, or a top-level tuple read only by get-tuple-elements (what
    cse_barrier_expander leaves of a barrier; any later tuple simplification would have
    removed it). Then the schedule kept every recomputation behind its barrier (after the
    cotangent flowing in), and CSE never saw it next to its forward twin."""
    key = (id(after), after.path, after.instruction_count)
    if key in _LATE:
        return _LATE[key]
    late = False
    for c in after.computations:
        tuples = {i.name for i in c.instructions if i.opcode == "tuple" and not i.is_root}
        if any(i.opcode == "opt-barrier" for i in c.instructions):
            late = True
            break
        if not tuples:
            continue
        read: dict[str, bool] = {}
        for i in c.instructions:
            for o in i.operands:
                if o in tuples:
                    read[o] = read.get(o, True) and i.opcode == "get-tuple-element"
        if any(read.values()):
            late = True
            break
    _LATE.clear()
    _LATE[key] = late
    return late


_LATE: dict = {}


def _ahead_test(r: Region, where, pos: dict, first_bwd: dict):
    """A test: is an after kernel scheduled ahead of the region's backward pass? The region's
    backward cannot start before the cotangent flowing into it exists (the barrier held
    both, so a recomputation that kept its barrier until scheduling runs after it): ahead
    = before the first kernel holding a cotangent. Without a cotangent operand (a scan
    body's or a nested region's arrives otherwise): before the first backward kernel of the
    computation."""
    start: dict[str, int] = {}
    for c in r.cotangents:
        for t in where(r.computation, c) or ():
            if t in pos:
                comp, k = pos[t]
                start[comp] = min(start.get(comp, 1 << 60), k)
    bound = start or first_bwd

    def ahead(t: str) -> bool:
        comp, k = pos.get(t, (None, -1))
        return comp is not None and comp in bound and k < bound[comp]

    return ahead


def _live_at_peak(memory) -> dict[str, int] | None:
    """Kernel -> bytes of its values live at the peak (None without a memory report)."""
    if memory is None:
        return None
    live: dict[str, int] = {}
    for b in memory.live_at_peak:
        if b.kind in ("parameter", "constant"):
            continue
        k = b.kernel or b.instruction
        live[k] = live.get(k, 0) + b.bytes
    return live


def _region(before: Module, r: Region, where, pos: dict, in_forward, live, totals,
            late: bool = False, notes: dict | None = None) -> dict:
    comp = before.by_name[r.computation]
    counts = {"merged": 0, "forward": 0, "backward": 0, "removed": 0, "uncertain": 0}
    heavy = {"merged": 0, "forward": 0, "backward": 0, "removed": 0, "uncertain": 0}
    kernels = {"merged": set(), "forward": set(), "backward": set()}
    examples: dict[str, list[str]] = {}
    ops = 0
    for n in r.recomputed:
        i = comp.by_name[n]
        if i.opcode in TRIVIAL:
            continue
        ops += 1
        what, ks = _outcome(r, n, where, pos, in_forward, late)
        if notes is not None:
            notes[(r.computation, n)] = (what, r.label)
        counts[what] += 1
        totals[what] += 1
        if i.opcode in HEAVY:
            heavy[what] += 1
        if what in kernels:
            kernels[what].update(ks)
        ex = examples.setdefault(what, [])
        if len(ex) < 3:
            ex.append(f"{n} -> {', '.join(ks) or '-'}")
    status, recomputes = _status(counts)
    saved = [e for e in r.residuals if comp.by_name.get(e) is not None]
    rec = {
        "barrier": r.barrier, "computation": r.computation, "label": r.label,
        "function": r.function, "lines": r.lines, "call_site": r.call_site, "scope": r.scope, "index": r.index,
        "count": r.count, "depth": r.depth, "in_loop": r.in_loop, "parent": r.parent,
        "residuals": saved, "saved_bytes": value_bytes(before, r.computation, saved),
        "saved_parameters": sum(1 for e in saved if comp.by_name[e].opcode == "parameter"),
        "recomputed_ops": ops,
        "recomputed_bytes": value_bytes(before, r.computation,
                                        [n for n in r.recomputed
                                         if comp.by_name[n].opcode not in TRIVIAL]),
        "outcome": counts, "heavy": heavy, "status": status, "recomputes": recomputes,
        "kernels": {k: sorted(v) for k, v in kernels.items()}, "examples": examples,
    }
    rec["at_peak"] = _at_peak(r, where, kernels, live)
    rec["verdict"] = _verdict(rec)
    return rec


def _outcome(r: Region, n: str, where, pos: dict, in_forward,
             late: bool = False) -> tuple[str, list[str]]:
    ks = where(r.computation, n)
    if ks is None:
        return "uncertain", []
    ks = [t for t in ks if t in pos]
    if not ks:
        return "removed", []
    twin = r.twins.get(n)
    if twin is not None and not late:  # a barrier kept through CSE: nothing merged
        tk = set(where(r.computation, twin) or ())
        shared = [k for k in ks if k in tk and in_forward(k)]
        if shared:
            return "merged", shared
    if all(in_forward(k) for k in ks):
        return "forward", ks
    return "backward", ks


def _status(c: dict) -> tuple[str, bool | None]:
    """(status, still recomputes?). A region still recomputes when most of its live work
    is in the backward pass."""
    live = c["merged"] + c["forward"] + c["backward"]
    if not live:
        return ("uncertain" if c["uncertain"] else "removed"), None
    if c["uncertain"] > live:
        return "uncertain", None
    if c["backward"] == live:
        return "recomputes", True
    if 2 * c["backward"] >= live:
        return "partly", True
    return ("merged" if c["merged"] >= c["forward"] else "forward"), False


def _at_peak(r: Region, where, kernels: dict, live) -> dict | None:
    if live is None:
        return None
    kept = kernels["merged"] | kernels["forward"]
    rec = kernels["backward"]
    saved_k = set()
    for e in r.residuals:
        saved_k.update(where(r.computation, e) or ())
    return {"recomputed_bytes": sum(live.get(k, 0) for k in rec),
            "kept_from_forward_bytes": sum(live.get(k, 0) for k in kept - rec),
            "saved_bytes": sum(live.get(k, 0) for k in saved_k - kept - rec)}


def _verdict(x: dict) -> str:
    c, h = x["outcome"], x["heavy"]
    live = c["merged"] + c["forward"] + c["backward"]
    dots = ""
    if sum(h.values()):
        words = {"merged": "merged by CSE", "forward": "run ahead",
                 "backward": "recomputed in the backward pass", "removed": "removed",
                 "uncertain": "uncertain"}
        parts = [f"{v} {words[k]}" for k, v in h.items() if v]
        dots = f" (matmuls/convolutions: {', '.join(parts)})"
    s = x["status"]
    if s == "recomputes":
        text = f"still recomputes: {c['backward']} ops in the backward pass{dots}"
    elif s == "merged":
        text = (f"no longer recomputes: CSE merged {c['merged']} of {live} ops back into the "
                f"forward pass" + (f", {c['forward']} more are scheduled ahead of its backward "
                                   "pass" if c["forward"] else ""))
    elif s == "forward":
        text = (f"no longer recomputes in the backward pass: {c['forward']} of {live} ops are "
                "scheduled ahead of it (in the forward pass)" +
                (f", {c['merged']} merged into the forward pass by CSE" if c["merged"] else ""))
    elif s == "partly":
        text = (f"partly recomputes: {c['backward']} of {live} ops in the backward pass; "
                f"{c['merged']} merged into the forward pass by CSE, {c['forward']} scheduled "
                f"ahead of its backward pass")
    elif s == "removed":
        text = "nothing of the recomputation is left (dead or folded)"
    else:
        text = f"uncertain: {c['uncertain']} of its ops could not be followed"
    if s in ("merged", "forward") and c["backward"]:
        text += f"; only {c['backward']} stay in the backward pass"
    if s in ("merged", "forward", "partly"):
        text += dots
    p = x["at_peak"]
    if p is not None:
        if p["kept_from_forward_bytes"]:
            text += (f"; {_b(p['kept_from_forward_bytes'])} of forward values it was to "
                     "recompute are live at the peak")
        if p["recomputed_bytes"]:
            text += f"; {_b(p['recomputed_bytes'])} of its recomputed values are live at the peak"
        if not p["kept_from_forward_bytes"] and not p["recomputed_bytes"]:
            text += "; none of its values are live at the peak"
    return text


def _b(n: int) -> str:
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k:
            return f"{n / k:.1f} {unit}"
    return f"{n} B"


def _summary(regions: list[dict], totals: dict, memory: bool) -> str:
    n = len(regions)
    still = [x for x in regions if x["recomputes"]]
    gone = [x for x in regions if x["recomputes"] is False]
    parts = [f"{n} jax.checkpoint region{'s' if n != 1 else ''}: {len(still)} still "
             f"recompute{'s' if len(still) == 1 else ''} in the backward pass"]
    if gone:
        parts.append(f"{len(gone)} no longer recompute (merged into or scheduled in the "
                     "forward pass once XLA removed the barriers)")
    if memory and gone:
        kept = sum((x["at_peak"] or {}).get("kept_from_forward_bytes", 0) for x in regions)
        if kept:
            parts.append(f"forward values they were to recompute hold {_b(kept)} at the peak: "
                         "the peak is what it would be without jax.checkpoint")
    return "; ".join(parts)


def side_regions(optimized: Module) -> dict | None:
    """An optimized module's regions, from the unoptimized module XLA dumped beside it
    (``<module>.before_optimizations.txt``); None without one or without regions."""
    from ..dumps.siblings import before_of
    from . import diff_modules

    if not optimized.path:
        return None
    unopt = before_of(optimized.path)
    if unopt is None or not any(i.opcode == "opt-barrier" for i in unopt.instructions()):
        return None
    return diff_modules(unopt, optimized, mode="optimization").remat


def _pct(a: int, b: int) -> str:
    return f"{100 * (b - a) / a:+.0f}%" if a else "n/a"


def regression_remat(res, before: Module, after: Module) -> dict | None:
    """Two optimized modules (e.g. without and with jax.checkpoint): each side's regions
    (from the unoptimized modules beside them) and why the kernels and the peak changed."""
    sb, sa = side_regions(before), side_regions(after)
    if sb is None and sa is None:
        return None
    s, mem = res.summary, res.memory or {}
    kb, ka = s.get("kernels_before", 0), s.get("kernels_after", 0)
    pb = (mem.get("before") or {}).get("peak_bytes")
    pa = (mem.get("after") or {}).get("peak_bytes")
    side, which = (sa, "after") if sa is not None else (sb, "before")
    regs = side["regions"]
    gone = [x for x in regs if x["recomputes"] is False]
    kept = sum((x["at_peak"] or {}).get("kept_from_forward_bytes", 0) for x in regs)
    text = f"kernels {kb} -> {ka} ({_pct(kb, ka)})"
    if pb is not None and pa is not None:
        text += f", peak {_b(pb)} -> {_b(pa)} ({_pct(pb, pa)}, {pa - pb:+d} bytes)"
    text += f"; the {which} module has {len(regs)} jax.checkpoint region(s)"
    if sb is not None and sa is not None:
        text += (f"; regions still recomputing in the backward pass: {sb['still_recompute']} of "
                 f"{sb['count']} before, {sa['still_recompute']} of {sa['count']} after")
    else:
        ops = side["instructions"]
        if gone:
            text += (f"; {len(gone)} of them no longer recompute in the backward pass: XLA "
                     "removed the barriers before scheduling (cse_barrier_expander), CSE "
                     f"merged {ops['merged']} recomputed ops into the forward pass and "
                     f"{ops['forward']} were scheduled ahead of the backward pass, so their "
                     "values live as long as saved ones would")
            if kept:
                text += f" ({_b(kept)} of them live at the peak)"
            if which == "after" and ka > kb:
                text += ("; the extra kernels are recomputation CSE could not merge (work done "
                         "twice)")
            if pb is not None and pa is not None and which == "after" and pa >= pb:
                text += "; the peak cannot fall"
        if side["still_recompute"]:
            text += (f"; {side['still_recompute']} still recompute in the backward pass "
                     f"({ops['backward']} ops)")
            if side.get("barriers_removed_after_scheduling"):
                text += (": XLA removed their barriers only after scheduling, so CSE could not "
                         "merge them and the schedule kept them behind the barrier")
    return {"before": sb, "after": sa, "kernels_before": kb, "kernels_after": ka,
            "peak_before": pb, "peak_after": pa, "summary": text,
            "regions": regs, "count": len(regs), "instructions": side["instructions"],
            "fates_corrected": 0}


def add_remat(res, before: Module, after: Module, mode: str, corrected: int = 0) -> None:
    """Attach the ``remat`` section to a DiffResult."""
    if mode == "regression":
        res.remat = regression_remat(res, before, after)
        return
    if mode != "optimization":
        return
    if not any(i.opcode == "opt-barrier" for i in before.instructions()):
        return
    memory = None
    if res.memory is not None:
        from .memory import module_memory
        memory = module_memory(after)
    res.remat = analyse(before, after, res.instructions, memory, corrected)


def regions_for_memory(before_path: str, after: Module, memory) -> dict | None:
    """``hlodiff memory DIR``: the regions of the dump's unoptimized module, followed into the
    optimized one (a diff of the two), with what each means for the peak."""
    from ..dumps.loader import load
    from . import diff_modules

    before = load(before_path)
    if not any(i.opcode == "opt-barrier" for i in before.instructions()):
        return None
    res = diff_modules(before, after, mode="optimization")
    if res.remat is None:
        return None
    fl = res.instructions
    return analyse(before, after, fl, memory, res.remat.get("fates_corrected", 0))
