"""``hlodiff BEFORE AFTER``: what XLA's optimizer did to every instruction, and why.

Data flows one way: ``view`` (flat node views) -> ``match`` (the matcher cascade) ->
``fates`` / ``analyses`` / ``regression`` -> ``result`` (DiffResult, JSON) and ``gates``
(--fail-on). The reports (:mod:`hlodiff.report`) read a DiffResult; nothing here imports them.
"""

from __future__ import annotations

import time

from ..errors import InputError
from ..hlo.model import Module
from .result import FATES, REGRESSION_FATES, Added, DiffResult, FusionInfo, InstructionFate, LayoutChange

__all__ = ["diff_modules", "diff_files", "DiffResult", "InstructionFate", "FusionInfo",
           "Added", "LayoutChange", "detect_mode"]

MODES = ("auto", "optimization", "regression")


def _is_optimized(m: Module) -> bool:
    if m.attributes.get("is_scheduled") == "true":
        return True
    for c in m.computations:
        for i in c.instructions:
            if i.opcode == "fusion":
                return True
    return False


def detect_mode(before: Module, after: Module) -> str:
    """optimization when the before module is unoptimized, regression when both are."""
    if _is_optimized(before) and _is_optimized(after):
        return "regression"
    return "optimization"


def _info(m: Module) -> dict:
    from .counts import ops_count

    return {"file": m.path, "module": m.name, "instructions": m.instruction_count,
            "entry": m.entry, "ops": ops_count(m)}


def diff_modules(before: Module, after: Module, mode: str = "auto") -> DiffResult:
    """Match ``before`` to ``after`` and explain every before instruction."""
    import gc

    # the views allocate ~2 objects per instruction and free nothing: the cyclic
    # collector's full passes would only rescan the parsed modules (quadratic in size)
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _diff_modules(before, after, mode)
    finally:
        if enabled:
            gc.enable()


def _diff_modules(before: Module, after: Module, mode: str) -> DiffResult:
    from . import analyses, fates as fates_mod, regression
    from .match import match
    from .inlined_branches import inlined_conditionals
    from .view import after_view, before_view

    if mode not in MODES:
        raise InputError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    if mode == "auto":
        mode = detect_mode(before, after)
    t0 = time.perf_counter()
    from .match import same_program
    if mode == "regression" or same_program(before, after):  # identical: nothing inlined
        bv = after_view(before)
    else:
        bv = before_view(before, inlined_conditionals(before, after))
    av = after_view(after)
    if mode == "regression":  # regression: one metadata form for both JAX/XLA versions
        from .normalize import normalize_view
        normalize_view(bv)
        normalize_view(av)
    t1 = time.perf_counter()
    m = match(bv, av, cse_skip=_skip_for_rewrites)
    t2 = time.perf_counter()
    kb, bb = analyses.kernels(bv)
    ka, ba = analyses.kernels(av)
    adds = analyses.added(m)
    lays = analyses.layouts(m)
    n_twins = 0
    if mode == "regression":
        fl, reg = regression.compare(m)
        # regression mode: what the optimizer added is in the only-after kernels; a layout
        # change is one between paired kernels of equal shape
        adds, lays = [], regression.layout_changes(m, reg, lays)
        fus = analyses.fusions(m, [])
        counts = {k: 0 for k in REGRESSION_FATES}
        for f in fl:
            counts[f.fate] = counts.get(f.fate, 0) + 1
        counts["only_after"] = sum(1 for c in reg["changes"] if c["status"] == "only_after")
    else:
        fl = fates_mod.FateBuilder(m).all()
        from .remat import correct_fates  # remat helper: CSE'd jax.checkpoint twins
        n_twins = correct_fates(before, after, fl)
        fus = analyses.fusions(m, fl)
        reg = None
        counts = {k: 0 for k in FATES}
        for f in fl:
            counts[f.fate] += 1
    summary = dict(counts)
    summary.update({
        "fusions": sum(1 for n in av.nodes if n.opcode == "fusion" and n.fusion < 0),
        "added": len(adds), "layout_changes": len(lays),
        "kernels_before": kb, "kernels_after": ka, "bytes_before": bb, "bytes_after": ba,
        "kernels": ka, "bytes": ba,
    })
    res = DiffResult(mode=mode, before_info=_info(before), after_info=_info(after),
                     instructions=fl, fusions=fus, added=adds, layouts=lays, summary=summary,
                     by_source=analyses.by_source(fl), regression=reg, modules=(before, after))
    from .devices import attach_devices  # gpu helper: kernel kinds, collectives, shards
    attach_devices(res, m, before, after)
    t3 = time.perf_counter()
    from .memory import add_memory
    add_memory(res, before, after, mode)
    from .remat import add_remat  # per jax.checkpoint region: still recomputes? the peak
    add_remat(res, before, after, mode, n_twins)
    res.timings = {"views": t1 - t0, "match": t2 - t1, "analyses": t3 - t2,
                   "memory": time.perf_counter() - t3}
    return res


def _summed_iota_values(B, cv) -> bytearray:
    """1 for values computed from iotas through a reduce, and what the reduce sums
    (jax.image.resize's interpolation weights, normalized by their sum): constant folding
    never evaluates an iota, and
    algsimp's index arithmetic on iotas (compares, selects, wraps) does not reach past a
    reduce, so such a value is computed at run time and fused like any other (fresh 14
    unet3plus_full_scale_skips under JAX 0.4.30: the resize weights of _resize_5)."""
    from .value_facts import constant_valued

    fold = constant_valued(B, iota=False)
    out = bytearray(len(B.nodes))
    for n in B.nodes:
        i = n.idx
        if n.alias >= 0 or not cv[i] or fold[i]:
            continue
        out[i] = n.opcode == "reduce" or any(out[o] for o in n.operands)
    for n in reversed(B.nodes):  # and what such a reduce sums
        if out[n.idx] and n.alias < 0:
            for o in n.operands:
                if cv[o] and not fold[o]:
                    out[o] = 1
    return out


def _skip_for_rewrites(m) -> set[int]:
    from .value_facts import constant_valued, cse_survivors, live_nodes

    skip = set(cse_survivors(m))
    cv = constant_valued(m.before)
    summed = _summed_iota_values(m.before, cv)
    skip.update(i for i, v in enumerate(cv) if v and not summed[i])
    # loops4: dead code has nothing to become; DCE deletes it (a loop's unused results
    # took the partner of another instruction with the loop's op_name)
    skip.update(i for i, v in enumerate(live_nodes(m.before)) if not v)
    return skip


def diff_files(before_path, after_path, mode: str = "auto") -> DiffResult:
    from ..dumps.loader import load

    return diff_modules(load(before_path), load(after_path), mode=mode)
