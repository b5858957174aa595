"""Where the bytes go at the peak: one optimized module's memory, from XLA's files when they
are beside it, else from a heap simulation of its schedule (marked estimated).

Two figures are kept apart:

- ``peak_bytes``: what the device needs, XLA's ``Total bytes`` of the default memory space
  (the sum of its allocations: parameters, outputs, temporaries packed by XLA's heap
  simulator, constants; a donated parameter counts once), the figure
  ``compiled.memory_analysis()`` gives. Estimated: parameters + outputs + constants + the
  largest sum of temporaries live at once.
- ``live_range_peak_bytes``: the live-range file's "peak usage", the sum of the values live at
  XLA's chosen moment; a value written in place over another counts twice there.

The live set at the peak is XLA's list at that moment (or the simulation's), each buffer with
its instruction, kernel (the top-level instruction that runs it), shape, bytes and the user's
source line (the innermost frame of the stack-frame table outside JAX and other libraries).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..dumps.memfiles import MemoryFiles
from ..hlo.model import Instruction, Module

_LIBRARY = re.compile(r"(site-packages|dist-packages|/jax/|/jaxlib/|/flax/|/optax/|/equinox/|"
                      r"/haiku/|/torch/|/tensorflow/|<frozen|/lib/python\d)")


@dataclass(slots=True)
class LiveBuffer:
    """One buffer live at the peak."""

    value: str  # "instruction{index}"
    instruction: str
    bytes: int
    shape: str
    kind: str  # parameter, output, donated, constant, temp, thread-local
    kernel: str | None = None
    opcode: str | None = None
    source: str | None = None
    op_name: str | None = None
    allocation: int | None = None

    def to_json(self) -> dict:
        return {"value": self.value, "instruction": self.instruction, "bytes": self.bytes,
                "shape": self.shape, "kind": self.kind, "kernel": self.kernel,
                "opcode": self.opcode, "source": self.source, "op_name": self.op_name,
                "allocation": self.allocation}


@dataclass
class MemoryReport:
    """The memory of one module (see the module docstring for the two peaks)."""

    module: str
    peak_bytes: int
    estimated: bool
    peak_by_space: dict[str, int] = field(default_factory=dict)
    live_range_peak_bytes: int | None = None
    peak_bytes_low: int | None = None  # estimated only: outputs counted from definition on
    peak_time: int | None = None
    peak_instruction: str | None = None
    live_at_peak: list[LiveBuffer] = field(default_factory=list)
    by_source: list[tuple[str, int, int]] = field(default_factory=list)  # (source, bytes, n)
    by_op_name: list[tuple[str, int]] = field(default_factory=list)
    by_kind: dict[str, int] = field(default_factory=dict)
    donated: list[dict] = field(default_factory=list)
    timeline: list[int] = field(default_factory=list)
    sequence: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    remat: dict | None = None  # analysis/remat.py: jax.checkpoint recomputation, if any
    live_set_estimated: bool = False  # XLA's total, but no live-range file: moment simulated

    def to_json(self, top: int = 20) -> dict:
        return {
            "module": self.module, "peak_bytes": self.peak_bytes, "estimated": self.estimated,
            "peak_by_space": dict(self.peak_by_space),
            "live_range_peak_bytes": self.live_range_peak_bytes,
            "peak_bytes_low": self.peak_bytes_low,
            "live_set_estimated": self.live_set_estimated,
            "peak_time": self.peak_time, "peak_instruction": self.peak_instruction,
            "by_kind": dict(self.by_kind),
            "donated": list(self.donated),
            "live_at_peak": [b.to_json() for b in self.live_at_peak[:top]],
            "live_at_peak_count": len(self.live_at_peak),
            "by_source": [{"source": s, "bytes": b, "buffers": n} for s, b, n in self.by_source],
            "by_op_name": [{"op_name": s, "bytes": b} for s, b in self.by_op_name],
            "timeline": {"bytes": list(self.timeline)},
            "files": dict(self.files),
            "remat": self.remat,
        }


def user_source(module: Module, ins: Instruction | None) -> str | None:
    """``file:line`` of the innermost frame outside libraries, or the metadata's location."""
    md = _metadata_of(module, ins)
    if md is None:
        return None
    if md.stack_frame_id:
        for file, _fn, line in module.tables.stack(md.stack_frame_id):
            if file and not _LIBRARY.search(file):
                return f"{file}:{line}" if line is not None else file
    return md.location


def _metadata_of(module: Module, ins: Instruction | None):
    """An instruction's metadata; a fusion without any: that of its fused root."""
    seen = 0
    while ins is not None and seen < 8:
        if ins.metadata is not None and (ins.metadata.op_name or ins.metadata.stack_frame_id
                                         or ins.metadata.source_file):
            return ins.metadata
        if ins.opcode != "fusion" or not ins.calls or ins.calls[0] not in module.by_name:
            return ins.metadata
        fc = module.by_name[ins.calls[0]]
        ins = fc.root_instruction
        while ins.opcode in ("tuple", "bitcast") and ins.operands:
            ins = fc[ins.operands[0]]
        seen += 1
    return None


class _Index:
    """Instruction by name over the whole module, and the top-level kernel of each."""

    def __init__(self, module: Module):
        self.module = module
        self.by_name: dict[str, Instruction] = {}
        caller: dict[str, Instruction] = {}
        for c in module.computations:
            for i in c.instructions:
                self.by_name.setdefault(i.name, i)
                for callee in i.calls:
                    caller.setdefault(callee, i)
        self.caller = caller
        self.entry = module.entry

    def kernel(self, ins: Instruction) -> str:
        seen = 0
        while ins.computation != self.entry and ins.computation in self.caller and seen < 64:
            ins = self.caller[ins.computation]
            seen += 1
        return ins.name


def _group(bufs: list[LiveBuffer]) -> tuple[list, list]:
    src: dict[str, list[int]] = {}
    ops: dict[str, int] = {}
    for b in bufs:
        key = b.source or ("(parameter)" if b.kind in ("parameter", "donated") else "(unknown)")
        e = src.setdefault(key, [0, 0])
        e[0] += b.bytes
        e[1] += 1
        k2 = b.op_name or b.instruction
        ops[k2] = ops.get(k2, 0) + b.bytes
    by_source = sorted(((k, v[0], v[1]) for k, v in src.items()), key=lambda r: (-r[1], r[0]))
    by_op = sorted(ops.items(), key=lambda r: (-r[1], r[0]))
    return by_source, by_op


def _buffer(idx: _Index, value: str, size: int, kind: str, shape: str | None,
            alloc: int | None) -> LiveBuffer:
    name = value.split("{", 1)[0]
    ins = idx.by_name.get(name)
    if ins is None:
        return LiveBuffer(value, name, size, shape or "?", kind, allocation=alloc)
    return LiveBuffer(value, name, size, shape or ins.shape.dims_text, kind, idx.kernel(ins),
                      ins.opcode, user_source(idx.module, ins), ins.op_name, alloc)


def _timeline_from_files(mf: MemoryFiles) -> list[int]:
    """Bytes in use at each step: fixed allocations plus temporaries live then, each
    (allocation, offset) counted once (a value written over another in place is one buffer)."""
    ba, lr = mf.buffer_assignment, mf.live_range
    if ba is None or lr is None or not lr.ranges:
        return []
    fixed = sum(a.size for a in ba.allocations if a.kind not in ("temp", "thread-local"))
    n = len(lr.sequence) + 1  # steps of the schedule; ranges beyond it are clamped (a hostile
    if n <= 1:                # "max 10**12" must not size a list)
        return []
    slots: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for a in ba.allocations:
        if a.kind != "temp":
            continue
        for v in a.values:
            r = lr.ranges.get(v.key)
            if r:
                lo, hi = min(max(r[0], 0), n - 1), min(max(r[1], 0), n - 1)
                slots.setdefault((a.index, v.offset), []).append((lo, hi, v.size))
    delta = [0] * (n + 1)
    for ranges in slots.values():
        ranges.sort()
        cs, ce, sz = ranges[0]
        for s, e, z in ranges[1:]:
            if s <= ce:  # overlapping in time at the same place: one buffer
                ce, sz = max(ce, e), max(sz, z)
                continue
            delta[max(cs, 0)] += sz
            delta[min(ce, n - 1) + 1] -= sz
            cs, ce, sz = s, e, z
        delta[max(cs, 0)] += sz
        delta[min(ce, n - 1) + 1] -= sz
    out, cur = [], 0
    for t in range(n):
        cur += delta[t]
        out.append(fixed + cur)
    return out


def memory_report(module: Module, files: MemoryFiles | None = None) -> MemoryReport:
    """The memory of an optimized module; exact when XLA's files are given."""
    from .remat import remat_report

    rep = _memory_report(module, files)
    rr = remat_report(module, lambda i: user_source(module, i))
    rep.remat = rr.to_json() if rr else None
    return rep


def _memory_report(module: Module, files: MemoryFiles | None) -> MemoryReport:
    idx = _Index(module)
    mf = files or MemoryFiles()
    if mf.buffer_assignment is None and mf.usage_report is None:
        return _estimated(module, idx)
    ba, lr = mf.buffer_assignment, mf.live_range
    spaces: dict[str, int] = {}
    if mf.usage_report:
        spaces = {name: total for _c, (name, total) in sorted(mf.usage_report.items())}
        peak = mf.usage_report.get(0, next(iter(mf.usage_report.values())))[1]
    else:
        spaces = {("default" if c == 0 else f"color {c}"): b for c, b in ba.by_color().items()}
        peak = ba.total_bytes(0)
    rep = MemoryReport(module.name, peak, False, spaces, files=dict(mf.paths or {}))
    vals = ba.values_by_key() if ba else {}
    if ba:
        rep.by_kind = ba.bytes_by_kind()
        for a in ba.allocations:
            if a.kind == "donated":
                outs = [v.instruction for v in a.values if v.instruction not in
                        {x.instruction for x in a.values[:1]}]
                rep.donated.append({"parameter": a.parameter, "bytes": a.size,
                                    "shape": a.parameter_shape, "written_by": outs})
    if lr is not None:
        rep.live_range_peak_bytes = lr.peak_bytes
        rep.peak_time = lr.peak_time
        rep.sequence = list(lr.sequence)
        if lr.peak_time is not None and 0 <= lr.peak_time < len(lr.sequence):
            rep.peak_instruction = lr.sequence[lr.peak_time]
        for value, size in lr.peak_values:
            a_v = vals.get(value)
            a, v = a_v if a_v else (None, None)
            rep.live_at_peak.append(_buffer(idx, value, size, a.kind if a else "?",
                                            v.shape.split("{")[0] if v else None,
                                            a.index if a else None))
        rep.timeline = _timeline_from_files(mf)
    elif ba and module.attributes.get("is_scheduled") == "true":
        # no live ranges (older XLA, or the file is missing): the peak is XLA's, the moment
        # and the live set come from the simulation and are marked estimated
        sim = _estimated(module, idx)
        rep.live_at_peak, rep.timeline = sim.live_at_peak, sim.timeline
        rep.peak_time, rep.peak_instruction = sim.peak_time, sim.peak_instruction
        rep.sequence = sim.sequence
        rep.live_set_estimated = True
    rep.live_at_peak.sort(key=lambda b: (-b.bytes, b.value))
    rep.by_source, rep.by_op_name = _group(rep.live_at_peak)
    return rep


def _estimated(module: Module, idx: _Index) -> MemoryReport:
    from .memsim import simulate

    sim = simulate(module)
    rep = MemoryReport(module.name, sim.peak_bytes, True, {"default": sim.peak_bytes})
    t = sim.peak_time
    rep.peak_time = t
    rep.peak_bytes_low = sim.low_bytes
    rep.timeline = sim.timeline
    rep.sequence = [n for _c, n in sim.sequence]
    rep.peak_instruction = rep.sequence[t] if t < len(rep.sequence) else None
    kinds: dict[str, int] = {}
    for b in sim.buffers:
        if b.kind != "temp":
            kinds[b.kind] = kinds.get(b.kind, 0) + b.size
        if b.size and (b.kind != "temp" or b.start <= t <= b.end):
            rep.live_at_peak.append(_buffer(idx, b.instruction + "{}", b.size, b.kind, b.shape,
                                            None))
    kinds["temp"] = sim.peak_bytes - sim.fixed_bytes
    rep.by_kind = kinds
    rep.live_at_peak.sort(key=lambda b: (-b.bytes, b.value))
    rep.by_source, rep.by_op_name = _group(rep.live_at_peak)
    return rep
