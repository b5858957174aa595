"""An estimate of a scheduled module's memory from its text alone: a heap simulation.

Used when XLA's buffer-assignment file is not beside the module. The schedule is the text
order of each computation of an ``is_scheduled=true`` module, flattened as XLA flattens it
(a while's condition and body, a conditional's branches and a call's callee are placed just
before the instruction that runs them). Every array an instruction defines is a buffer, live
from its definition to its last use. Instructions that define no memory of their own share a
buffer: ``bitcast``, ``get-tuple-element`` and ``tuple`` (which adds only its table of
pointers, 8 bytes an element), a ``while`` (its state is updated in place; the body's
results are placed into the state's buffers), a conditional's branch results (placed in the
conditional's buffer), in-place updates (``dynamic-update-slice``/``scatter``, also as the
root of a fusion, and ``output_to_operand_aliasing`` custom calls), asynchronous ``-done``
ops, and outputs that ``input_output_alias`` (donation) places in a parameter's buffer.

Then, as XLA's buffer assignment does, in its order:

- an output may take over the buffer of an operand that dies at it, when it reads that
  operand elementwise (elementwise ops, loop fusions whose parameter reaches the root only
  through elementwise ops: at the same shape on CPU; on GPU, XLA's fusion hint, also through
  bitcasts at the same element count) or sorts in place; never a buffer a while loop carries
  or a conditional writes, nor a value the operand does not define itself (one reached
  through a get-tuple-element or bitcast);
- a temporary goes into an output's allocation when it fits and is dead whenever that
  allocation is in use (largest first, first fit), and costs nothing more;
- then the same sharing among temporaries; a result whose dying operand sits in an output's
  allocation joins it when nothing else lives there meanwhile;
- the other temporaries share one heap: the largest sum live at one moment, or, with up to
  3,000 of them, a best-fit packing (largest first and longest-lived first, the smaller
  kept) when its gaps make the heap larger.

The estimate is parameters + outputs + constants (each its own allocation in XLA) plus that
heap. ``low_bytes`` counts outputs only from their definition on. Where XLA's rules differ
(conditional branches, which values interfere at the step an output is written), the figure
differs: benchmarks/RESULTS.md has it against XLA's total on 91 programs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..hlo.model import Computation, Instruction, Module, Shape

_SHARE = {"bitcast", "get-tuple-element", "tuple", "while", "optimization-barrier",
          "add-dependency"}
_THROUGH = ("get-tuple-element", "bitcast")  # operands that pass on another's value
_IN_PLACE = {"dynamic-update-slice", "scatter"}
_TIMED = ("temp", "output")  # kinds whose bytes count only while live
_ELEMENTWISE = frozenset(  # HLO opcode names
    "abs add and atan2 cbrt ceil clamp compare complex convert cosine divide erf exponential "
    "exponential-minus-one floor imag is-finite log log-plus-one logistic maximum minimum "
    "multiply negate not or popcnt power real reduce-precision remainder round-nearest-afz "
    "round-nearest-even rsqrt select shift-left shift-right-arithmetic shift-right-logical "
    "sign sine sqrt subtract tan tanh xor".split())
_ALIAS = re.compile(r"\{([0-9, ]*)\}\s*:\s*\(\s*(\d+)\s*,\s*\{([0-9, ]*)\}")


@dataclass(slots=True)
class SimBuffer:
    """One buffer of the simulation."""

    id: int
    instruction: str
    computation: str
    size: int
    kind: str  # parameter, output, donated, constant, temp
    shape_obj: Shape
    start: int
    end: int
    host: int | None = None  # a temporary placed in this output buffer's allocation

    @property
    def shape(self) -> str:
        return self.shape_obj.dims_text


def _leaf_count(s: Shape) -> int:
    return sum(_leaf_count(t) for t in s.tuple_shapes) if s.is_tuple else 1


def _subtree(s: Shape, index: tuple[int, ...]) -> tuple[int, int]:
    """(first leaf, number of leaves) of the element at ``index`` of a shape."""
    off = 0
    for i in index:
        if not s.is_tuple or i >= len(s.tuple_shapes):
            return off, _leaf_count(s)
        off += sum(_leaf_count(t) for t in s.tuple_shapes[:i])
        s = s.tuple_shapes[i]
    return off, _leaf_count(s)


def _index(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.replace(" ", "").split(",") if x)


class _Sim:
    def __init__(self, module: Module):
        self.m = module
        self.buffers: list[SimBuffer] = []
        self.pos = 0
        self.sequence: list[tuple[str, str]] = []  # (computation, instruction) per position
        # (result buffer, [(operand number, operand buffer)] it may take, the fusion or None)
        self.reuse: list[tuple[int, list[tuple[int, int]], Instruction | None]] = []
        # buffers carried by a while or written by a conditional's branches: XLA colocates
        # them, and a later result never takes one over
        self.loop_state: set[int] = set()
        self.gpu = _is_gpu(module)

    def new(self, ins: Instruction, comp: str, shape: Shape, kind: str = "temp") -> int:
        b = SimBuffer(len(self.buffers), ins.name, comp, shape.byte_size, kind, shape,
                      self.pos, self.pos)
        self.buffers.append(b)
        return b.id

    def fresh(self, ins: Instruction, comp: str, kind: str = "temp") -> list[int]:
        if ins.shape.is_tuple:
            self.new(ins, comp, Shape("table", "u8", (8 * len(ins.shape.tuple_shapes),)), kind)
        return [self.new(ins, comp, leaf, kind) for leaf in ins.shape.leaves()]

    def use(self, leaves: list[int]) -> None:
        for b in leaves:
            if self.buffers[b].end < self.pos:
                self.buffers[b].end = self.pos

    def zero(self, leaves: list[int], before: int) -> None:
        """Buffers placed into another's memory (a body's or branch's results)."""
        for b in leaves:
            if b >= before:
                self.buffers[b].size = 0

    def run(self, comp: Computation, params: list[list[int]] | None) -> list[int]:
        env: dict[str, list[int]] = {}
        for ins in comp.instructions:
            leaves = self.step(ins, comp, env, params)
            env[ins.name] = leaves
            self.sequence.append((comp.name, ins.name))
            self.use([b for op in ins.operands for b in env.get(op, ())])
            self.use(leaves)
            self.pos += 1
        return env.get(comp.root, [])

    def step(self, ins: Instruction, comp: Computation, env, params) -> list[int]:
        op, ops = ins.opcode, [env.get(o, []) for o in ins.operands]
        cname = comp.name
        if op == "parameter":
            if params is not None and ins.parameter_number is not None \
                    and ins.parameter_number < len(params):
                return params[ins.parameter_number]
            return self.fresh(ins, cname, "parameter" if comp.is_entry else "temp")
        if op == "constant":
            return self.fresh(ins, cname, "constant")
        if op == "get-tuple-element" and ops:
            src = comp[ins.operands[0]].shape
            first, n = _subtree(src, (ins.index or 0,))
            return ops[0][first:first + n]
        if op in ("bitcast", "optimization-barrier", "add-dependency") and ops:
            return ops[0]
        if op == "tuple":
            self.new(ins, cname, Shape("table", "u8", (8 * len(ops),)))
            return [b for o in ops for b in o]
        if op == "while" and ops:
            state = ops[0]
            self.loop_state.update(state)
            before = len(self.buffers)
            for role in ("condition", "body"):
                for c in ins.called.get(role, ()):
                    root = self.run(self.m.computation(c), [state])
                    if role == "body":
                        self.zero(root, before)
            self.use(state)
            return state
        if op == "conditional":
            before = len(self.buffers)
            branches = [c for cs in ins.called.values() for c in cs] or list(ins.calls)
            roots = [self.run(self.m.computation(c), [ops[k + 1]] if k + 1 < len(ops) else [])
                     for k, c in enumerate(branches)]
            out = self.fresh(ins, cname)
            self.loop_state.update(out)
            # a branch's result is written into the conditional's buffer: that buffer is in
            # use from the first branch result on (XLA's flattened live range), once
            for r in roots:
                for k, b in enumerate(r):
                    if b >= before and k < len(out) and self.buffers[b].size:
                        ob = self.buffers[out[k]]
                        ob.start = min(ob.start, self.buffers[b].start)
                self.zero(r, before)
            return out
        if op == "call" and ins.calls:
            return self.run(self.m.computation(ins.calls[0]), ops)
        if op in _IN_PLACE and ops:
            return ops[0]
        if op.endswith("-done") and ops:
            src = comp[ins.operands[0]].shape
            if src.is_tuple and len(src.tuple_shapes) >= 2:
                first, n = _subtree(src, (0 if op == "copy-done" else 1,))
                return ops[0][first:first + n]
            return ops[0]
        if op == "fusion":
            out = self.fusion(ins, cname, ops)
            if ins.fusion_kind == "kLoop" and len(out) == 1 and not ins.shape.is_tuple \
                    and ins.calls:
                # XLA shares only a value the operand itself defines: one reached through a
                # get-tuple-element or bitcast is defined elsewhere and is not shared
                self.reuse.append((out[0], [(k, b) for k, o in enumerate(ops) for b in o
                                            if comp[ins.operands[k]].opcode not in _THROUGH],
                                   ins))
            return out
        if op == "sort":  # sorts in place: each result may take its operand's dying buffer
            out = self.fresh(ins, cname)
            for k, o in enumerate(ops):
                if k < len(out) and len(o) == 1:
                    self.reuse.append((out[k], [(k, o[0])], None))
            return out
        if op in _ELEMENTWISE and not ins.shape.is_tuple:
            out = self.fresh(ins, cname)
            self.reuse.append((out[0], [(k, b) for k, o in enumerate(ops) for b in o], None))
            return out
        if op == "custom-call" and "output_to_operand_aliasing" in ins.attrs:
            out = self.fresh(ins, cname)
            for oi, pi, pidx in _ALIAS.findall(ins.attrs["output_to_operand_aliasing"]):
                first, n = _subtree(ins.shape, _index(oi))
                if int(pi) < len(ops) and n == 1:
                    src = comp[ins.operands[int(pi)]].shape
                    pf, pn = _subtree(src, _index(pidx))
                    if pn == 1 and pf < len(ops[int(pi)]):
                        self.buffers[out[first]].size = 0
                        out[first] = ops[int(pi)][pf]
            return out
        return self.fresh(ins, cname)

    def fusion(self, ins: Instruction, cname: str, ops: list[list[int]]) -> list[int]:
        """A fusion writes in place where its root (or a root tuple element) updates a parameter."""
        out = self.fresh(ins, cname)
        if not ins.calls:
            return out
        fc = self.m.computation(ins.calls[0])
        root = fc.root_instruction
        elems = [fc[o] for o in root.operands] if root.opcode == "tuple" else [root]
        for k, e in enumerate(elems):
            while e.opcode == "bitcast" and e.operands:
                e = fc[e.operands[0]]
            if e.opcode in _IN_PLACE and e.operands:
                p = fc[e.operands[0]]
                if p.opcode == "parameter" and p.parameter_number is not None \
                        and p.parameter_number < len(ops) and len(ops[p.parameter_number]) == 1:
                    first = _subtree(ins.shape, (k,))[0] if root.opcode == "tuple" else 0
                    if first < len(out):
                        self.buffers[out[first]].size = 0
                        out[first] = ops[p.parameter_number][0]
        return out


def _elementwise_params(fc: Computation, shape: Shape, gpu: bool) -> set[int]:
    """Parameters of a fused computation whose every path to the root is elementwise: the
    fusion may write its result over them. XLA's generic rule (CPU) wants the parameter's
    shape equal to the output's and only elementwise ops on the way; the GPU backend's hint
    also allows bitcasts and a parameter of another shape with as many elements of the same
    type."""
    users: dict[str, list[Instruction]] = {}
    for i in fc.instructions:
        for o in i.operands:
            users.setdefault(o, []).append(i)
    n = _elements(shape)
    ok: dict[str, bool] = {}  # instruction -> every path from it to the root is elementwise
    for i in reversed(fc.instructions):  # users come after their operands
        us = users.get(i.name, [])
        ok[i.name] = i.name == fc.root or (bool(us) and all(
            ok.get(u.name, False) and ((gpu and u.opcode == "bitcast") or (
                u.opcode in _ELEMENTWISE and (_elements(u.shape) == n if gpu
                                              else u.shape.dims == shape.dims))) for u in us))

    return {p.parameter_number for p in fc.parameters
            if not p.shape.is_tuple and (_elements(p.shape) == n if gpu
                                         else p.shape.dims == shape.dims)
            and p.shape.element_type == shape.element_type and ok.get(p.name, False)}


def _is_gpu(module: Module) -> bool:
    """Whether XLA's GPU backend compiled the module: its instructions carry GPU backend
    configs (a stream, ``operation_queue_id``) or call cuBLAS/cuDNN/Triton."""
    for ins in module.entry_computation.instructions:
        cfg = ins.attrs.get("backend_config", "")
        if "operation_queue_id" in cfg or "__triton" in cfg or \
                ins.attrs.get("custom_call_target", "").strip('"').startswith(("__cublas", "__cudnn")):
            return True
    return False


def _elements(s: Shape) -> int:
    n = 1
    for d in s.dims:
        n *= d
    return n


def _share_dying_operands(sim: _Sim, kind: str, taken: set[int],
                          busy: dict[int, list[tuple[int, int]]] | None = None) -> None:
    """An elementwise result (or loop fusion) of ``kind`` may be written into an operand's
    buffer that dies at it, as XLA's buffer assignment does; the two then count once.
    A temporary placed in an output's allocation stays there; a result taking it over joins
    that allocation when nothing else lives there meanwhile (``busy``: its occupied ranges)."""
    eligible: dict[str, set[int]] = {}  # fused computation -> parameters read elementwise
    for out, cands, fusion in sim.reuse:
        ob = sim.buffers[out]
        if ob.kind != kind or not ob.size or ob.host is not None:
            continue
        for k, c in cands:
            cb = sim.buffers[c]
            if c in taken or c == out or c in sim.loop_state or cb.kind != "temp" \
                    or cb.size != ob.size or cb.end != ob.start:
                continue
            if fusion is not None:  # looked at only for a candidate that fits
                name = fusion.calls[0]
                if name not in eligible:
                    eligible[name] = _elementwise_params(sim.m.computation(name), fusion.shape,
                                                         sim.gpu)
                if k not in eligible[name]:
                    continue
            if cb.host is not None:  # the operand lives in an output's allocation
                if busy is None or ob.kind != "temp" or not all(
                        ob.end < s or ob.start >= e for s, e in busy[cb.host]):
                    continue
                busy[cb.host].append((ob.start, ob.end))
                ob.host = cb.host
                taken.add(c)
                break
            taken.add(c)
            if ob.kind == "output":  # the temporary lives in the output's allocation
                cb.size = 0
            else:
                cb.end = max(cb.end, ob.end)
                ob.size = 0
            break


def _place_in_outputs(buffers: list[SimBuffer]) -> dict[int, list[tuple[int, int]]]:
    """XLA's buffer assignment, before packing temporaries into one heap, tries each value
    (largest first) in the allocations it already has: a temporary that fits in an output's
    allocation and is dead whenever that allocation's values are live goes there and costs
    nothing more. Modelled with the output buffers as allocations, first fit."""
    outs = [b for b in buffers if b.kind == "output" and b.size]
    busy = {o.id: [(o.start, o.end)] for o in outs}
    temps = sorted((b for b in buffers if b.kind == "temp" and b.size),
                   key=lambda b: (-b.size, b.id))
    if len(outs) * len(temps) > 4_000_000:  # stay linear-ish: only the largest outputs host
        outs = sorted(outs, key=lambda o: (-o.size, o.id))[:max(1, 4_000_000 // len(temps))]
    for t in temps:
        for o in outs:
            if o.size >= t.size and all(t.end < s or t.start > e for s, e in busy[o.id]):
                busy[o.id].append((t.start, t.end))
                t.host = o.id
                break
    return busy


_PACK_LIMIT = 3000  # temporaries; more are summed (packing is quadratic)


def _pack(buffers: list[SimBuffer]) -> int | None:
    """The size of one heap holding the temporaries: XLA's global decreasing-size best-fit
    heap, simplified. XLA packs twice, in two orders (largest first; longest-lived first),
    and keeps the smaller heap; so does this. None when there are too many to pack quickly."""
    temps = [b for b in buffers if b.kind == "temp" and b.size and b.host is None]
    if len(temps) > _PACK_LIMIT:
        return None
    spatial = sorted(temps, key=lambda b: (-b.size, -(b.end - b.start), b.id))
    temporal = sorted(temps, key=lambda b: (-(b.end - b.start), -b.size, b.id))
    return min(_best_fit(spatial), _best_fit(temporal))


def _best_fit(temps: list[SimBuffer]) -> int:
    """Place each temporary, in the given order, at the best-fitting free offset among those
    live at the same time; the heap's size."""
    placed: list[tuple[int, int, int, int]] = []  # (start, end, offset, size)
    top = 0
    for b in temps:
        used = sorted((o, o + z) for s, e, o, z in placed if not (e < b.start or s > b.end))
        best, best_gap, cur = None, None, 0
        for lo, hi in used:
            if lo - cur >= b.size and (best_gap is None or lo - cur < best_gap):
                best, best_gap = cur, lo - cur
            cur = max(cur, hi)
        off = best if best is not None else cur
        placed.append((b.start, b.end, off, b.size))
        top = max(top, off + b.size)
    return top


@dataclass(slots=True)
class Simulation:
    """The simulated buffers, the flattened schedule and the estimate."""

    buffers: list[SimBuffer]
    sequence: list[tuple[str, str]]
    fixed_bytes: int  # parameters + outputs + constants
    timeline: list[int]  # fixed + live temporaries at each position
    peak_time: int
    peak_bytes: int  # parameters + outputs + constants + the most temporaries live at once
    low_bytes: int  # the same with outputs counted only from their definition on


def simulate(module: Module) -> Simulation:
    """Run the heap simulation over the module's entry computation (linear in its size)."""
    sim = _Sim(module)
    entry = module.entry_computation
    root = sim.run(entry, None)
    end = max(sim.pos - 1, 0)
    alias_text = module.attributes.get("input_output_alias", "")
    aliased = {_index(o) for o, _p, _i in _ALIAS.findall(alias_text)}
    root_shape = entry.root_instruction.shape
    donated = set()
    for idx in aliased:
        first, n = _subtree(root_shape, idx)
        donated.update(root[first:first + n])
    for b in root:
        buf = sim.buffers[b]
        buf.end = end
        if buf.kind == "temp":
            buf.kind = "donated" if b in donated else "output"
        if b in donated and buf.kind != "parameter":
            buf.size = 0
    for buf in sim.buffers:
        if buf.kind in ("parameter", "constant"):
            buf.start, buf.end = 0, end
    for ins in entry.instructions:  # the root's own tuple table is part of the output
        if ins.is_root and ins.opcode == "tuple":
            for buf in sim.buffers:
                if buf.instruction == ins.name and buf.shape_obj.text == "table":
                    buf.kind, buf.end = "output", end
    # XLA's order: outputs take their dying operands; the largest temporaries then go into
    # output allocations they do not overlap; the rest form the heap, where a result takes
    # over a dying operand's buffer
    taken: set[int] = set()
    _share_dying_operands(sim, "output", taken)
    busy = _place_in_outputs(sim.buffers)
    _share_dying_operands(sim, "temp", taken, busy)
    fixed = sum(b.size for b in sim.buffers if b.kind != "temp")
    timeline = _curve(sim.buffers, end, ("temp",), fixed)
    # a lower figure: outputs live only from their definition on (XLA may place earlier
    # temporaries in an output's allocation before the output is written)
    low = max(_curve(sim.buffers, end, _TIMED,
                     sum(b.size for b in sim.buffers if b.kind not in _TIMED)), default=fixed)
    peak_t = max(range(len(timeline)), key=timeline.__getitem__) if timeline else 0
    peak = timeline[peak_t] if timeline else fixed
    heap = _pack(sim.buffers)
    if heap is not None:  # packing leaves gaps: the heap is at least the live peak
        peak = max(peak, fixed + heap)
    return Simulation(sim.buffers, sim.sequence, fixed, timeline, peak_t, peak,
                      min(low, peak))


def _curve(buffers: list[SimBuffer], end: int, timed: tuple[str, ...], fixed: int) -> list[int]:
    """Bytes at each position: ``fixed`` plus the buffers of the ``timed`` kinds live then."""
    delta = [0] * (end + 2)
    for b in buffers:
        if b.kind in timed and b.size and b.host is None:
            delta[b.start] += b.size
            delta[b.end + 1] -= b.size
    out, cur = [], 0
    for t in range(end + 1):
        cur += delta[t]
        out.append(fixed + cur)
    return out
