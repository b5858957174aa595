"""An estimate of a scheduled module's memory from its text alone: XLA's buffer assignment,
replayed.

Used when XLA's buffer-assignment file is not beside the module. The schedule is the text
order of each computation of an ``is_scheduled=true`` module, flattened as XLA flattens it
(a while's condition and body, a conditional's branches, a call's callee and an
``async-start``'s wrapped computation are placed just before the instruction that runs
them). Every array an instruction defines is a buffer, live from its definition to its last
reader (a ``get-tuple-element`` reads nothing; a tuple's table of pointers lives until its
last reader). Instructions that define no memory of their own share a buffer, as XLA's
alias analysis makes them one: ``bitcast``, ``get-tuple-element`` and ``tuple`` (which adds
only its table, 8 bytes an element), a ``while`` (its state, the body's results and tables
are one), a conditional (its branches' results; an element a branch passes through is the
operand's buffer), in-place updates (``dynamic-update-slice``/``scatter``, also as the root
of a fusion, and ``output_to_operand_aliasing`` custom calls), ``async-start`` operands,
asynchronous ``-done`` ops, and outputs that ``input_output_alias`` (donation) places in a
parameter's buffer.

Which result may be written over a dying operand (XLA's CanShareOperandBufferWithUser):
elementwise ops; loop fusions whose parameter reaches the root only through elementwise ops
(at the same shape on CPU; on GPU, XLA's fusion hint, also through bitcasts at the same
element count); a multi-output fusion's element over a parameter that reaches it
elementwise and is read only elementwise; sorts. Never a value reached through a bitcast or
a library call's tuple (cuDNN's (result, scratch)).

memassign.py then places the buffers in XLA's order (largest first; outputs first; XLA's
post order), each into its operands' allocations or an earlier output's, where no value
there is live at the same time; the rest of the temporaries form one heap, where a result
takes over a dying operand's buffer (never a loop's state), packed as XLA's heap simulator
packs it (heapfit.py); temporary tuple tables get allocations of their own, combined after
the heap. Thread-local allocations (values of reductions' and sorts' computations) are
added.

The estimate is the sum of the allocations. ``low_bytes`` counts outputs only from their
definition on. benchmarks/RESULTS.md has the figures against XLA's total.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..hlo.model import Computation, Instruction, Module, Shape
from .backend import compiled_for_gpu
from .memassign import assign, pack, thread_local_sizes

_IN_PLACE = {"dynamic-update-slice", "scatter"}
# asynchronous collectives whose result is (operands, results, ...); copy-start is
# (destination, source, context) and is left to the generic rule
_COLLECTIVE_STARTS = {"all-gather-start", "collective-permute-start", "all-to-all-start",
                      "reduce-scatter-start", "all-reduce-start", "ragged-all-to-all-start"}
_TIMED = ("temp", "output")  # kinds whose bytes count only while live
_ELEMENTWISE = frozenset(  # HLO opcode names
    "abs add and atan2 cbrt ceil clamp compare complex convert cosine divide erf exponential "
    "exponential-minus-one floor imag is-finite log log-plus-one logistic maximum minimum "
    "multiply negate not or popcnt power real reduce-precision remainder round-nearest-afz "
    "round-nearest-even rsqrt select shift-left shift-right-arithmetic shift-right-logical "
    "sign sine sqrt subtract tan tanh xor".split())
_ALIGN_GPU, _ALIGN_CPU, _ALIGN_OLD_CPU = 256, 64, 16  # XLA's heap offsets are multiples
_GENERIC_FUSION = re.compile(r"fusion(\.\d+)*(\.clone)?(\.\d+)*$")
_NONE: frozenset[int] = frozenset()
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
    host: int | None = None  # the allocation (memassign) it was placed in, if not its own
    post: int = 0  # its instruction's place in XLA's post order (ties of the assignment order)
    # stretches inside [start, end] where none of its values is live: a loop's state between
    # the body's last read of it and the body's new value for it
    gaps: list[tuple[int, int]] | None = None

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
        # (result, [(operand number, operand buffer)] it may take, the fusion or None, the
        # fusion's output element or None)
        self.reuse: list[tuple[int, list[tuple[int, int]], Instruction | None, int | None]] = []
        # buffers carried by a while or written by a conditional's branches: XLA colocates
        # them, and a later result never takes one over
        self.loop_state: set[int] = set()
        self.gpu = compiled_for_gpu(module)
        # an array result -> the buffers of its array operands (XLA tries their allocations
        # first); a copy -> what it copies (a copy never shares with its operand)
        self.operands: dict[int, list[int]] = {}
        self.copies: dict[int, set[int]] = {}
        # a tuple's leaves -> its table of pointers, live until its last reader (a loop's
        # state keeps the table of the tuple that entered it)
        self.tables: dict[int, tuple[list[int], int]] = {}  # id(leaves) -> (leaves, table)
        # (result, operand buffer) pairs where the operand is read as another's tuple
        # element: XLA's heap never shares those (its buffer assignment may)
        self.via_element: set[tuple[int, int]] = set()
        # (result, operand buffer) pairs where a GPU loop fusion reads the operand through
        # a bitcast: XLA's assignment lets the result take over the operand's allocation
        # (the bitcast is no value of its own), its heap simulator does not (not a user)
        self.via_bitcast: set[tuple[int, int]] = set()
        # a loop's state buffer -> the body results written into it (placed there, size 0)
        self.defined_by: dict[int, list[int]] = {}
        self.post: dict[str, int] = {}  # instruction -> XLA's post-order position
        self.numbered: set[str] = set()

    def new(self, ins: Instruction, comp: str, shape: Shape, kind: str = "temp") -> int:
        b = SimBuffer(len(self.buffers), ins.name, comp, shape.byte_size, kind, shape,
                      self.pos, self.pos, None, self.post.get(ins.name, 0))
        self.buffers.append(b)
        return b.id

    def fresh(self, ins: Instruction, comp: str, kind: str = "temp") -> list[int]:
        t = None
        if ins.shape.is_tuple:
            t = self.new(ins, comp, Shape("table", "u8", (8 * len(ins.shape.tuple_shapes),)),
                         kind)
        out = [self.new(ins, comp, leaf, kind) for leaf in ins.shape.leaves()]
        if t is not None:
            self.tables.setdefault(id(out), (out, t))
        return out

    def table(self, leaves: list[int] | None) -> int | None:
        """The table of pointers of the tuple whose leaves are this very list, if any."""
        hit = self.tables.get(id(leaves))
        return hit[1] if hit is not None and hit[0] is leaves else None

    def use(self, leaves: list[int]) -> None:
        for b in leaves:
            if self.buffers[b].end < self.pos:
                self.buffers[b].end = self.pos

    def state_gaps(self, state: list[int], root: list[int], body_start: int,
                   before: int) -> None:
        """A loop's state element is one buffer but several values (XLA: the body's parameter,
        the body's result): between the body's last read of the old value and the definition
        of the new one, nothing of it is live, and XLA places other values there."""
        if len(root) != len(state) or len(set(state)) != len(state):
            return
        for b, r in zip(state, root):
            if r < before or r == b:
                continue
            # the element's new value is the body's result r, written into b: what r may
            # overwrite, the piece of b that r starts may overwrite (XLA colocates them)
            self.defined_by.setdefault(b, []).append(r)
            buf = self.buffers[b]
            last = buf.end if buf.end >= body_start else body_start - 1
            lo, hi = last + 1, self.buffers[r].start - 1
            if lo <= hi:
                buf.gaps = (buf.gaps or []) + [(lo, hi)]

    def zero(self, leaves: list[int], before: int) -> None:
        """Buffers placed into another's memory (a body's or branch's results)."""
        for b in leaves:
            if b >= before:
                self.buffers[b].size = 0

    def run(self, comp: Computation, params: list[list[int]] | None) -> list[int]:
        env: dict[str, list[int]] = {}
        if comp.name not in self.numbered:
            self.numbered.add(comp.name)
            for ins in _post_order(comp):
                self.post.setdefault(ins.name, len(self.post))
        for ins in comp.instructions:
            before = len(self.buffers)
            leaves = self.step(ins, comp, env, params)
            for o in ins.operands:  # operands that are another's tuple element
                if comp[o].opcode == "get-tuple-element":
                    self.via_element.update((b, c) for b in leaves if b >= before
                                            for c in env.get(o, ()))
            if not ins.shape.is_tuple and len(leaves) == 1 and leaves[0] >= before:
                opb = [env[o][0] for o in ins.operands
                       if len(env.get(o, ())) == 1 and not comp[o].shape.is_tuple]
                self.operands[leaves[0]] = opb
                if ins.opcode == "copy":
                    self.copies[leaves[0]] = set(opb)
            env[ins.name] = leaves
            self.sequence.append((comp.name, ins.name))
            if ins.opcode != "get-tuple-element":  # takes an element; reads no buffer
                self.use([b for op in ins.operands for b in env.get(op, ())])
            for op in ins.operands:
                t = self.table(env.get(op))
                if t is not None:
                    self.use([t])
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
            t = self.new(ins, cname, Shape("table", "u8", (8 * len(ops),)))
            out = [b for o in ops for b in o]
            self.tables.setdefault(id(out), (out, t))
            return out
        if op == "while" and ops:
            state = ops[0]
            self.loop_state.update(state)
            before = len(self.buffers)
            for role in ("condition", "body"):
                for c in ins.called.get(role, ()):
                    body_start = self.pos
                    root = self.run(self.m.computation(c), [state])
                    if role == "body":
                        self.state_gaps(state, root, body_start, before)
                        self.zero(root, before)
                        t = self.table(root)
                        if t is not None and t >= before:
                            self.buffers[t].size = 0
            self.use(state)
            return state
        if op == "conditional":
            before = len(self.buffers)
            branches = [c for cs in ins.called.values() for c in cs] or list(ins.calls)
            roots, ends = [], []
            for k, c in enumerate(branches):
                roots.append(self.run(self.m.computation(c),
                                      [ops[k + 1]] if k + 1 < len(ops) else []))
                ends.append(self.pos - 1)
            out = self.fresh(ins, cname)
            # a branch's result is written into the conditional's buffer: that buffer is in
            # use from the first branch result on (XLA's flattened live range), once; it
            # holds a value only from each branch's result to that branch's end, then from
            # the conditional on (XLA checks values one by one: the rest are gaps)
            live: dict[int, list[tuple[int, int]]] = {}
            for r, last in zip(roots, ends):
                for k, b in enumerate(r):
                    if b >= before and k < len(out) and self.buffers[b].size:
                        ob = self.buffers[out[k]]
                        ob.start = min(ob.start, self.buffers[b].start)
                        live.setdefault(k, []).append((self.buffers[b].start, last))
                self.zero(r, before)
                t = self.table(r)  # each branch's table is the conditional's
                if t is not None and t >= before:
                    self.buffers[t].size = 0
            for k, pieces in live.items():
                pieces = sorted(pieces) + [(self.pos, self.pos)]
                gaps = [(e + 1, s2 - 1) for (_s, e), (s2, _e2) in zip(pieces, pieces[1:])
                        if e + 1 <= s2 - 1]
                if gaps:
                    self.buffers[out[k]].gaps = gaps
            # an element a branch passes through from its operand is that operand's buffer
            # (XLA's alias analysis makes them one)
            for r in roots:
                for k, b in enumerate(r):
                    if b < before and k < len(out) and out[k] >= before:
                        self.buffers[out[k]].size = 0
                        out[k] = b
            self.loop_state.update(out)
            return out
        if op == "call" and ins.calls:
            return self.run(self.m.computation(ins.calls[0]), ops)
        if op in _IN_PLACE and ops:
            return ops[0]
        if op == "async-start" and ins.calls and ins.shape.is_tuple \
                and len(ins.shape.tuple_shapes) >= 2:
            return self.async_start(ins, cname, ops)
        if op in _COLLECTIVE_STARTS and ins.shape.is_tuple and len(ins.shape.tuple_shapes) >= 2:
            return self.collective_start(ins, cname, ops)
        if self.gpu and op in ("all-reduce", "all-reduce-start") and len(ops) == 1 \
                and len(ops[0]) == 1 and not ins.shape.is_tuple:
            # XLA:GPU's hint: a one-operand all-reduce reduces in place (NCCL), so its
            # result may take over the operand's buffer when the operand dies there (the
            # buffer assignments of sharded H100 programs show both values at one offset;
            # XLA:CPU's do not)
            out = self.fresh(ins, cname)
            self.reuse.append((out[0], [(0, ops[0][0])], None, None))
            return out
        if op.endswith("-done") and ops:
            src = comp[ins.operands[0]].shape
            if src.is_tuple and len(src.tuple_shapes) >= 2:
                first, n = _subtree(src, (0 if op == "copy-done" else 1,))
                out = ops[0][first:first + n]
                if ins.shape.is_tuple:  # its elements alias the start's; its table is new
                    t = self.new(ins, cname, Shape("table", "u8",
                                                   (8 * len(ins.shape.tuple_shapes),)))
                    self.tables.setdefault(id(out), (out, t))
                return out
            return ops[0]
        if op == "fusion":
            out = self.fusion(ins, cname, ops)
            if ins.fusion_kind == "kLoop" and len(out) == 1 and not ins.shape.is_tuple \
                    and ins.calls:
                cands = []
                for k, o in enumerate(ops):
                    direct = _shareable_operand(comp, ins.operands[k])
                    if direct or self.gpu:
                        cands += [(k, b) for b in o]
                        if not direct:  # through a bitcast
                            self.via_bitcast.update((out[0], b) for b in o)
                self.reuse.append((out[0], cands, ins, None))
            elif ins.fusion_kind in ("kLoop", "kInput") and ins.shape.is_tuple and ins.calls:
                cands = [(k, o[0]) for k, o in enumerate(ops)
                         if len(o) == 1 and _shareable_operand(comp, ins.operands[k])]
                for e, es in enumerate(ins.shape.tuple_shapes):
                    first = _subtree(ins.shape, (e,))[0]
                    if not es.is_tuple and first < len(out):
                        self.reuse.append((out[first], cands, ins, e))
            return out
        if op == "sort":  # sorts in place: each result may take its operand's dying buffer
            out = self.fresh(ins, cname)
            for k, o in enumerate(ops):
                if k < len(out) and len(o) == 1:
                    self.reuse.append((out[k], [(k, o[0])], None, None))
            return out
        if op in _ELEMENTWISE and not ins.shape.is_tuple:
            out = self.fresh(ins, cname)
            self.reuse.append((out[0], [(k, b) for k, o in enumerate(ops) for b in o], None,
                               None))
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

    def collective_start(self, ins: Instruction, cname: str, ops: list[list[int]]) -> list[int]:
        """``(operands, results, ...)`` of an asynchronous collective: the operands are the
        operands' own buffers, the results and the rest new; each nested tuple has its
        table."""
        shape = ins.shape
        self.new(ins, cname, Shape("table", "u8", (8 * len(shape.tuple_shapes),)))
        flat = [b for o in ops for b in o]
        out: list[int] = []
        for k, part in enumerate(shape.tuple_shapes):
            if part.is_tuple:
                self.new(ins, cname, Shape("table", "u8", (8 * len(part.tuple_shapes),)))
            if k == 0 and _leaf_count(part) == len(flat):
                out += flat
            else:
                out += [self.new(ins, cname, leaf) for leaf in part.leaves()]
        return out

    def async_start(self, ins: Instruction, cname: str, ops: list[list[int]]) -> list[int]:
        """``((operands), result, context)``: the operands are the operands' own buffers; the
        result is what the wrapped computation (run here, in place of the start) defines,
        e.g. an in-place update of an operand; the context is new memory."""
        shape = ins.shape
        self.new(ins, cname, Shape("table", "u8", (8 * len(shape.tuple_shapes),)))
        flat = [b for o in ops for b in o]
        first = shape.tuple_shapes[0]
        if _leaf_count(first) == len(flat):
            if first.is_tuple:
                self.new(ins, cname, Shape("table", "u8", (8 * len(first.tuple_shapes),)))
            out = list(flat)
        else:
            out = [self.new(ins, cname, leaf) for leaf in first.leaves()]
        root = self.run(self.m.computation(ins.calls[0]), ops)
        second = shape.tuple_shapes[1]
        if second.is_tuple:
            self.new(ins, cname, Shape("table", "u8", (8 * len(second.tuple_shapes),)))
        if _leaf_count(second) == len(root):
            out += root
        else:
            out += [self.new(ins, cname, leaf) for leaf in second.leaves()]
        for rest in shape.tuple_shapes[2:]:
            out += [self.new(ins, cname, leaf) for leaf in rest.leaves()]
        return out

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


def _post_order(comp: Computation) -> list[Instruction]:
    """XLA's post order of a computation: from each instruction nobody uses (in text order),
    operands first, depth first."""
    used = {o for i in comp.instructions for o in i.operands}
    seen: set[str] = set()
    out: list[Instruction] = []
    for top in comp.instructions:
        if top.name in used or top.name in seen:
            continue
        stack = [(top, 0)]
        seen.add(top.name)
        while stack:
            ins, k = stack.pop()
            if k < len(ins.operands):
                stack.append((ins, k + 1))
                o = ins.operands[k]
                if o not in seen:
                    seen.add(o)
                    stack.append((comp[o], 0))
            else:
                out.append(ins)
    return out


def _shareable_operand(comp: Computation, name: str) -> bool:
    """Not a value reached through a bitcast (XLA's buffer assignments never show one
    shared)."""
    ins = comp[name]
    while ins.opcode == "get-tuple-element" and ins.operands:
        ins = comp[ins.operands[0]]
    return ins.opcode != "bitcast"


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


def _element_params(fc: Computation, element: int, gpu: bool,
                    reduction: bool = False) -> set[int]:
    """Parameters of a multi-output fusion that its output ``element`` may overwrite, of the
    same element type and as many elements. CPU (XLA's generic rule): the parameter has the
    element's shape and every use of it leads there through elementwise ops. GPU: XLA's
    buffer-sharing hint (:func:`_gpu_share_hint`); ``reduction``: the fusion is a
    reduction-emitter one (kInput), whose reductions run before any other output is
    written."""
    root = fc.root_instruction
    if root.opcode != "tuple" or element >= len(root.operands):
        return set()
    target = fc[root.operands[element]]
    shape = target.shape
    n = _elements(shape)
    users: dict[str, list[Instruction]] = {}
    for i in fc.instructions:
        for o in i.operands:
            users.setdefault(o, []).append(i)
    params = [p for p in fc.parameters
              if not p.shape.is_tuple and p.shape.element_type == shape.element_type
              and _elements(p.shape) == n]
    if gpu:
        return {p.parameter_number for p in params
                if _gpu_share_hint(fc, p, target, users, reduction)}

    def step_ok(u: Instruction) -> bool:
        return u.opcode in _ELEMENTWISE and u.shape.dims == shape.dims

    reach: dict[str, bool] = {}  # a path to the element through elementwise ops
    every: dict[str, bool] = {}  # every path leads there
    for i in reversed(fc.instructions):
        us = users.get(i.name, [])
        at = i.name == target.name
        reach[i.name] = at or any(step_ok(u) and reach.get(u.name, False) for u in us)
        every[i.name] = at or (bool(us) and all(
            (u is root) or (step_ok(u) and every.get(u.name, False)) for u in us))
    return {p.parameter_number for p in params
            if p.shape.dims == shape.dims and every.get(p.name) and reach.get(p.name)}


def _gpu_share_hint(fc: Computation, param: Instruction, target: Instruction,
                    users: dict[str, list[Instruction]], reduction: bool) -> bool:
    """XLA:GPU's buffer-sharing hint for a multi-output fusion's element and a parameter:
    everything reachable from the parameter reads it elementwise (bitcasts and the root
    tuple allowed) and some path reaches the element. In a reduction fusion (kInput) the
    reductions among the outputs are computed first, so a reduction reading the parameter
    is allowed, and what lies beyond it is not followed."""
    root = fc.root_instruction
    heroes = set()
    if reduction:
        for o in root.operands:
            ins = fc[o]
            while ins.opcode == "bitcast" and ins.operands:
                ins = fc[ins.operands[0]]
            if ins.opcode == "reduce":
                heroes.add(ins.name)
    seen, work, found = {param.name}, [param], False
    while work:
        cur = work.pop()
        if cur.name == target.name:
            found = True
        if cur.name in heroes:
            continue
        for u in users.get(cur.name, []):
            if u.name not in seen:
                seen.add(u.name)
                work.append(u)
            if u.opcode in ("bitcast", "tuple") or u.name in heroes:
                continue
            if u.opcode not in _ELEMENTWISE:
                return False
    if target.opcode not in _ELEMENTWISE and target.opcode != "bitcast":
        if any(o != target.name and o in seen for o in root.operands):
            return False
    return found


def _cpu_alignment(module: Module) -> int:
    """XLA:CPU's heap alignment: 64 bytes since its thunk runtime (JAX 0.5 on), 16 before.
    The text does not say which; the older XLA:CPU names every fusion ``fusion[.N]``, the
    newer by what it does (``multiply_add_fusion``, ``wrapped_convert``): seen on every CPU
    dump we have of JAX 0.4.30, 0.5.3, 0.7.2, 0.9.2 and 0.10.2."""
    names = [i.name for c in module.computations for i in c.instructions
             if i.opcode == "fusion"]
    if names and all(_GENERIC_FUSION.match(n) for n in names):
        return _ALIGN_OLD_CPU
    return _ALIGN_CPU


def _elements(s: Shape) -> int:
    n = 1
    for d in s.dims:
        n *= d
    return n


def _eligible(sim: _Sim, fusion: Instruction, k: int, element: int | None,
              cache: dict[tuple[str, int | None], set[int]]) -> bool:
    """Whether the fusion may write its result (or its output ``element``) over its
    operand ``k``."""
    key = (fusion.calls[0], element)
    if key not in cache:
        fc = sim.m.computation(key[0])
        cache[key] = _elementwise_params(fc, fusion.shape, sim.gpu) if element is None \
            else _element_params(fc, element, sim.gpu, fusion.fusion_kind == "kInput")
    return k in cache[key]


def _can_share(sim: _Sim):
    """XLA's CanShareOperandBufferWithUser, as far as the text tells: the user reads the
    operand elementwise (an elementwise op; a loop fusion whose parameter reaches the root
    only through elementwise ops; a multi-output fusion's element) or sorts it in place, at
    the same size."""
    cands: dict[int, list[tuple[int, int, Instruction | None, int | None]]] = {}
    for out, cs, fusion, element in sim.reuse:
        cands[out] = [(k, c, fusion, element) for k, c in cs]
    cache: dict[tuple[str, int | None], set[int]] = {}

    def can_share(user, operand) -> bool:
        if user.shape_obj.byte_size != operand.shape_obj.byte_size:
            return False
        # a value a loop carries ends, for XLA, at its last place in the loop's result: only
        # a user reading it from there (an element of the loop's result) may take it over
        if operand.id in sim.loop_state and (user.id, operand.id) not in sim.via_element:
            return False
        for uid in (user.id, *sim.defined_by.get(user.id, ())):
            for k, c, fusion, element in cands.get(uid, ()):
                if c == operand.id and (fusion is None
                                        or _eligible(sim, fusion, k, element, cache)):
                    return True
        return False

    return can_share


def _share_dying_operands(sim: _Sim, heap: list[SimBuffer],
                          can_share) -> list[tuple[int, int]]:
    """In the heap, a result (an elementwise op, a loop fusion reading the operand
    elementwise, a sort) takes over an operand's buffer that dies where it is defined, as
    XLA's heap simulator shares them; the two then count once. Not a buffer that holds
    several values (a loop's state, a conditional's result), nor one read as another's
    tuple element: XLA's buffer assignment lets an output's allocation take those over, but
    its heap never shares them (no case in any dump we have)."""
    in_heap = {b.id for b in heap}
    taken: set[int] = set()
    root: dict[int, int] = {}  # a result that took over an operand -> the group's buffer
    merges: list[tuple[int, int]] = []
    for out, cands, _fusion, _element in sim.reuse:
        ob = sim.buffers[out]
        if out not in in_heap or not ob.size:
            continue
        for _k, c in cands:
            g = sim.buffers[root.get(c, c)]  # the operand's group (a chain of such results)
            if c in taken or c == out or c not in in_heap or g.end != ob.start \
                    or c in sim.loop_state or (out, c) in sim.via_element \
                    or (out, c) in sim.via_bitcast \
                    or g.size != ob.size or not can_share(ob, sim.buffers[c]):
                continue
            taken.add(c)
            g.end = max(g.end, ob.end)
            root[out] = g.id
            merges.append((g.id, out))
            ob.size = 0
            break
    return merges


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
    reusable = _donated_params(sim, entry, root, alias_text)
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
    # XLA's order: outputs and temporaries, largest first, into their operands' allocations
    # or earlier outputs' ones; the rest of the temporaries form the heap, where a result
    # takes over a dying operand's buffer
    can_share = _can_share(sim)
    log: list[int | None] = []  # the allocations assign() makes, in XLA's order
    heap = assign(sim.buffers, sim.operands, can_share,
                  lambda b: sim.copies.get(b.id, _NONE), reusable, log)
    local = thread_local_sizes(module)
    merges = _share_dying_operands(sim, heap, can_share)
    fixed = sum(b.size for b in sim.buffers if b.kind != "temp" and b.host is None) \
        + sum(local)
    timeline = _curve(sim.buffers, end, ("temp",), fixed)
    # a lower figure: outputs live only from their definition on (XLA may place earlier
    # temporaries in an output's allocation before the output is written)
    low = max(_curve(sim.buffers, end, _TIMED,
                     sum(b.size for b in sim.buffers if b.kind not in _TIMED)), default=fixed)
    peak_t = max(range(len(timeline)), key=timeline.__getitem__) if timeline else 0
    peak = timeline[peak_t] if timeline else fixed
    # a tuple-shaped buffer gets an allocation of its own (XLA), combined after the heap
    tables = {b.id for b in heap if b.shape_obj.text == "table"}
    heap = pack(heap, merges, _ALIGN_GPU if sim.gpu else _cpu_alignment(module), tables,
                log, len(local))
    if heap is not None:  # packing leaves gaps: the heap is at least the live peak
        peak = max(peak, fixed + heap)
    return Simulation(sim.buffers, sim.sequence, fixed, timeline, peak_t, peak,
                      min(low, peak))


def _donated_params(sim: _Sim, entry: Computation, root: list[int], alias_text: str) -> set[int]:
    """Parameters an output is written into (donation): XLA may place other values in their
    allocation between the parameter's last read and the output's definition (its values are
    checked one by one). Marks that stretch as a gap; returns the parameters' buffers."""
    if not alias_text:
        return set()
    leaves: dict[int, list[int]] = {}
    for ins in entry.instructions:
        if ins.opcode == "parameter" and ins.parameter_number is not None:
            leaves[ins.parameter_number] = [b.id for b in sim.buffers
                                            if b.instruction == ins.name and b.kind ==
                                            "parameter" and b.shape_obj.text != "table"]
    root_shape = entry.root_instruction.shape
    out: set[int] = set()
    for o_idx, pnum, p_idx in _ALIAS.findall(alias_text):
        first, n = _subtree(root_shape, _index(o_idx))
        params = [ins for ins in entry.instructions
                  if ins.opcode == "parameter" and ins.parameter_number == int(pnum)]
        if not params or n != 1:
            continue
        pf, pn = _subtree(params[0].shape, _index(p_idx))
        pl = leaves.get(int(pnum), [])
        if pn != 1 or pf >= len(pl) or first >= len(root):
            continue
        pb, ob = sim.buffers[pl[pf]], sim.buffers[root[first]]
        if ob.id == pb.id:
            continue
        lo, hi = pb.end + 1, ob.start - 1
        if lo <= hi:
            pb.gaps = [(lo, hi)]
        out.add(pb.id)
    return out


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
