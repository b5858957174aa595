"""Memory in a diff: the peak before and after, what grew at the peak by source line, op_name
and kernel (by name: kernels of two compilations of one program mostly keep their names),
which buffers are new at the peak, and whether the peak moved.

Regression mode (two optimized modules) compares both peaks; they are exact where XLA's
memory files lie beside the module files, estimated (and marked so) where not. Optimization
mode has no memory for the unoptimized side: only the optimized module's peak is given.
The section is the ``"memory"`` key of the DiffResult JSON (schema in result.py).
"""

from __future__ import annotations

from collections import Counter

from ..analysis.memory import MemoryReport, memory_report
from ..dumps.memfiles import load_memory_files
from ..hlo.model import Module
from .normalize import canon_op_name  # regress (issue 12)


_LAST: list = []  # [(id, path, instruction count, report)]: one diff asks twice (remat)


def module_memory(module: Module) -> MemoryReport | None:
    """The memory report of an optimized module (its XLA files read from beside its path)."""
    if module.attributes.get("is_scheduled") != "true":
        return None
    key = (id(module), module.path, module.instruction_count)
    if _LAST and _LAST[0][:3] == key:
        return _LAST[0][3]
    rep = memory_report(module, load_memory_files(module.path))
    _LAST[:] = [(*key, rep)]
    return rep


def _side(rep: MemoryReport) -> dict:
    n = max(len(rep.sequence), 1)
    peak = None
    if rep.peak_instruction:
        b = next((x for x in rep.live_at_peak if x.instruction == rep.peak_instruction), None)
        peak = {"instruction": rep.peak_instruction, "step": rep.peak_time,
                "fraction": round((rep.peak_time or 0) / n, 3),
                "source": b.source if b else None, "op_name": b.op_name if b else None,
                "simulated": rep.estimated or rep.live_set_estimated}
    return {"peak_bytes": rep.peak_bytes, "estimated": rep.estimated,
            "live_range_peak_bytes": rep.live_range_peak_bytes, "by_kind": dict(rep.by_kind),
            "peak_at": peak, "live_at_peak": [b.to_json() for b in rep.live_at_peak[:10]],
            "remat": rep.remat,
            "timeline": _thin(rep.timeline, 400)}


def _thin(values: list[int], most: int) -> list[list[int]]:
    """[step, bytes] pairs, at most ``most``, each the largest of its stretch of steps."""
    n = len(values)
    if n <= most:
        return [[t, v] for t, v in enumerate(values)]
    out = []
    for k in range(most):
        lo, hi = k * n // most, max((k + 1) * n // most, k * n // most + 1)
        t = max(range(lo, min(hi, n)), key=values.__getitem__)
        out.append([t, values[t]])
    return out


def _key(b) -> tuple:
    return (b.source, canon_op_name(b.op_name), b.shape, b.kind)


def compare_memory(before: MemoryReport, after: MemoryReport, top: int = 15) -> dict:
    """Growth by source and kernel, new buffers at the peak, and whether the peak moved."""
    src_b = {s: n for s, n, _k in before.by_source}
    src_a = {s: n for s, n, _k in after.by_source}
    growth = [{"source": s, "before": src_b.get(s, 0), "after": src_a.get(s, 0),
               "change": src_a.get(s, 0) - src_b.get(s, 0)} for s in set(src_b) | set(src_a)]
    growth = [g for g in growth if g["change"]]
    growth.sort(key=lambda g: (-abs(g["change"]), g["source"]))
    kb, ka = Counter(), Counter()
    # op_names in one form across JAX versions (regress, issue 12: diff/normalize.py)
    for b in before.live_at_peak:
        kb[canon_op_name(b.op_name) or b.instruction] += b.bytes
    for b in after.live_at_peak:
        ka[canon_op_name(b.op_name) or b.instruction] += b.bytes
    by_op = [{"op_name": k, "before": kb[k], "after": ka[k], "change": ka[k] - kb[k]}
             for k in set(kb) | set(ka) if ka[k] != kb[k]]
    by_op.sort(key=lambda g: (-abs(g["change"]), g["op_name"]))
    gb, ga = Counter(), Counter()
    for b in before.live_at_peak:
        gb[b.kernel or b.instruction] += b.bytes
    for b in after.live_at_peak:
        ga[b.kernel or b.instruction] += b.bytes
    by_kernel = [{"kernel": k, "before": gb[k], "after": ga[k], "change": ga[k] - gb[k]}
                 for k in set(gb) | set(ga) if ga[k] != gb[k]]
    by_kernel.sort(key=lambda g: (-abs(g["change"]), g["kernel"]))
    have = Counter(_key(b) for b in before.live_at_peak)
    new = []
    for b in after.live_at_peak:
        k = _key(b)
        if have[k]:
            have[k] -= 1
        else:
            new.append(b.to_json())
    sb, sa = _side(before), _side(after)
    pb, pa = sb["peak_at"], sa["peak_at"]
    moved = None
    if pb and pa:
        moved = (pb["op_name"], pb["source"]) != (pa["op_name"], pa["source"]) \
            or abs(pb["fraction"] - pa["fraction"]) > 0.25
    return {"before": sb, "after": sa, "change_bytes": after.peak_bytes - before.peak_bytes,
            "growth_by_source": growth[:top], "growth_by_op_name": by_op[:top],
            "growth_by_kernel": by_kernel[:top],
            "new_at_peak": new[:top], "peak_moved": moved}


def memory_section(before: Module, after: Module, mode: str) -> dict | None:
    """The ``"memory"`` section of a diff, or None when neither side is an optimized module."""
    ra = module_memory(after)
    if ra is None:
        return None
    if mode == "regression":
        rb = module_memory(before)
        if rb is not None:
            return compare_memory(rb, ra)
    return {"before": None, "after": _side(ra), "change_bytes": None, "growth_by_source": [],
            "growth_by_op_name": [], "growth_by_kernel": [], "new_at_peak": [], "peak_moved": None,
            "note": "the unoptimized module has no buffer assignment; only the optimized "
                    "module's peak is known"}


def add_memory(res, before: Module, after: Module, mode: str) -> None:
    """Attach the memory section and its gate metrics to a DiffResult."""
    mem = memory_section(before, after, mode)
    res.memory = mem
    after_peak = mem["after"]["peak_bytes"] if mem else None
    before_peak = mem["before"]["peak_bytes"] if mem and mem["before"] else None
    res.summary.update({"peak_bytes": after_peak, "peak_bytes_after": after_peak,
                        "peak_bytes_before": before_peak})
