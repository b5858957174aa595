"""Every collective of an optimized module: what it moves, between which devices, when.

For each collective (``all-reduce``, ``all-gather``, ``reduce-scatter``, ``all-to-all``,
``collective-permute``, ``collective-broadcast``, ``ragged-all-to-all``), whether written
synchronously, as an ``X-start``/``X-done`` pair (shown as one operation) or wrapped in
``async-start``/``async-done``:

* bytes per device, from XLA's own shapes: ``in_bytes`` (operands, summed over tuple
  elements), ``out_bytes`` (results) and ``bytes`` = the larger of the two, the buffer each
  device exchanges (all-gather: the gathered result; reduce-scatter: the full input);
* replica groups decoded (explicit, iota ``[2,4]<=[4,2]T(1,0)``, mesh-axes form) and mapped
  to mesh axes when the module's mesh is known; source-target pairs of permutes, named as a
  ring shift when they are one;
* async or not, and the overlap: the kernels the schedule puts between start and done;
* merged: a tuple collective of N arrays, or one over a concatenation of N arrays that is
  sliced apart again, is "merged N into one" (XLA's combiner passes);
* decomposed: a reduce-scatter whose result is all-gathered over the same groups is an
  all-reduce decomposed into the two;
* origin: the instruction's ``op_name`` and source line from its metadata.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from ..hlo.model import Computation, Instruction, Module
from .kernels import COLLECTIVES, FREE_OPS, kernel_kind, top_level_computations
from .sharding import Mesh, module_mesh, parse_groups, parse_pairs


@dataclass
class Collective:
    """One collective operation (an async pair counts once)."""

    name: str  # the start (or only) instruction
    kind: str  # all-reduce, all-gather, ...
    computation: str
    in_bytes: int
    out_bytes: int
    done: str | None = None  # the -done instruction of an async pair
    wrapped: str | None = None  # the collective inside an async-start's computation
    is_async: bool = False
    groups: list[list[int]] = field(default_factory=list)
    groups_text: str | None = None
    mesh_axes: list[str] | None = None
    pairs: list[tuple[int, int]] = field(default_factory=list)
    pattern: str = ""  # e.g. "ring shift +1"
    overlap: list[str] = field(default_factory=list)  # kernels between start and done
    overlap_kinds: Counter = field(default_factory=Counter)
    merged: int = 1
    decomposition: str = ""
    op_name: str | None = None
    source: str | None = None
    dtype: str = ""

    @property
    def bytes(self) -> int:
        return max(self.in_bytes, self.out_bytes)

    @property
    def group_size(self) -> int:
        return len(self.groups[0]) if self.groups else 0

    def to_dict(self) -> dict:
        d = {"name": self.name, "kind": self.kind, "computation": self.computation,
             "bytes": self.bytes, "in_bytes": self.in_bytes, "out_bytes": self.out_bytes,
             "async": self.is_async}
        if self.done:
            d["done"] = self.done
        if self.wrapped:
            d["wrapped"] = self.wrapped
        if self.groups:
            d["replica_groups"] = self.groups
            d["group_size"] = self.group_size
        if self.groups_text:
            d["replica_groups_text"] = self.groups_text
        if self.mesh_axes is not None:
            d["mesh_axes"] = self.mesh_axes
        if self.pairs:
            d["source_target_pairs"] = [list(p) for p in self.pairs]
        if self.pattern:
            d["pattern"] = self.pattern
        if self.is_async:
            d["overlap"] = self.overlap
        if self.merged > 1:
            d["merged"] = self.merged
        if self.decomposition:
            d["decomposition"] = self.decomposition
        if self.op_name:
            d["op_name"] = self.op_name
        if self.source:
            d["source"] = self.source
        return d


@dataclass
class CollectiveReport:
    """The collectives of one module and their per-step totals (bytes per device)."""

    collectives: list[Collective] = field(default_factory=list)
    mesh: Mesh | None = None
    num_partitions: int | None = None

    @property
    def total_bytes(self) -> int:
        return sum(c.bytes for c in self.collectives)

    def bytes_by_kind(self) -> dict[str, int]:
        out: Counter = Counter()
        for c in self.collectives:
            out[c.kind] += c.bytes
        return dict(out.most_common())

    def bytes_by_axis(self) -> dict[str, int]:
        out: Counter = Counter()
        for c in self.collectives:
            if c.mesh_axes is not None:
                key = ",".join(c.mesh_axes) or "(none)"
            elif c.pairs:
                key = "permute"
            else:
                key = "unmapped"
            out[key] += c.bytes
        return dict(out.most_common())

    def to_dict(self) -> dict:
        return {"count": len(self.collectives), "bytes_per_device": self.total_bytes,
                "by_kind": self.bytes_by_kind(), "by_mesh_axis": self.bytes_by_axis(),
                "mesh": ({a: s for a, s in self.mesh.axes} if self.mesh else None),
                "num_partitions": self.num_partitions,
                "collectives": [c.to_dict() for c in self.collectives]}


def _base_kind(inst: Instruction, module: Module) -> tuple[str | None, Instruction]:
    """(collective kind, the instruction holding its attributes) or (None, inst)."""
    op = inst.opcode
    base = op[:-len("-start")] if op.endswith("-start") else op
    if base in COLLECTIVES:
        return base, inst
    if op == "async-start" and inst.calls and inst.calls[0] in module.by_name:
        for i in module.by_name[inst.calls[0]].instructions:
            if i.opcode in COLLECTIVES:
                return i.opcode, i
    return None, inst


def _shape_bytes(comp: Computation, names: list[str]) -> int:
    total = 0
    for n in names:
        op = comp.by_name.get(n)
        if op is not None:
            total += op.shape.byte_size
    return total


def _ring(pairs: list[tuple[int, int]], n: int) -> str:
    if not pairs or n <= 1:
        return ""
    shifts = {(t - s) % n for s, t in pairs}
    if len(shifts) == 1:
        k = shifts.pop()
        if len(pairs) == n:
            return f"ring shift {'+' if k <= n // 2 else '-'}{k if k <= n // 2 else n - k}"
        return f"shift {k} ({len(pairs)} of {n} devices send)"
    return ""


def _concat_parts(module: Module, comp: Computation, inst: Instruction) -> int:
    """How many arrays a concatenation operand packs (XLA's combiners concatenate)."""
    if len(inst.operands) != 1:
        return 1
    op = comp.by_name.get(inst.operands[0])
    if op is None:
        return 1
    root = op
    if op.opcode == "fusion" and op.calls and op.calls[0] in module.by_name:
        root = module.by_name[op.calls[0]].root_instruction
    if root.opcode == "concatenate":
        return len(root.operands)
    return 1


def analyze_collectives(module: Module, before: Module | None = None) -> CollectiveReport:
    """The collectives of ``module`` (an optimized module); ``before`` supplies the mesh."""
    mesh = (module_mesh(before) if before is not None else None) or module_mesh(module)
    nparts = module.attributes.get("num_partitions")
    rep = CollectiveReport(mesh=mesh, num_partitions=int(nparts) if nparts and nparts.isdigit()
                           else None)
    for comp in top_level_computations(module):
        order = {i.name: n for n, i in enumerate(comp.instructions)}
        users: dict[str, list[Instruction]] = defaultdict(list)
        for i in comp.instructions:
            for o in i.operands:
                users[o].append(i)
        for inst in comp.instructions:
            if inst.opcode.endswith("-done") or inst.opcode.endswith("-update"):
                continue
            kind, holder = _base_kind(inst, module)
            if kind is None:
                continue
            c = Collective(name=inst.name, kind=kind, computation=comp.name,
                           in_bytes=_shape_bytes(comp, inst.operands),
                           out_bytes=inst.shape.byte_size,
                           op_name=holder.op_name or inst.op_name,
                           source=holder.source or inst.source)
            if holder is not inst:
                c.wrapped = holder.name
                c.out_bytes = holder.shape.byte_size
            if inst.opcode.endswith("-start"):
                c.is_async = True
                done = next((u for u in users.get(inst.name, [])
                             if u.opcode.endswith("-done")), None)
                if done is not None:
                    c.done = done.name
                    if holder is inst:
                        c.out_bytes = done.shape.byte_size
                    lo, hi = order[inst.name], order[done.name]
                    between = [i for i in comp.instructions[lo + 1:hi]
                               if i.opcode not in FREE_OPS and not i.opcode.endswith("-done")]
                    c.overlap = [i.name for i in between]
                    c.overlap_kinds = Counter(kernel_kind(module, i)[0] for i in between)
            leaves = [s for s in (c.out_bytes and
                                  (comp.by_name[c.done].shape if c.done else inst.shape)
                                  ).leaves()] if c.out_bytes else []
            c.dtype = ",".join(sorted({s.element_type or "" for s in leaves}))
            ndev = rep.num_partitions
            c.groups_text = holder.attrs.get("replica_groups")
            groups, gmesh, named = parse_groups(c.groups_text, ndev)
            c.groups = groups
            if mesh is not None and groups:
                c.mesh_axes = mesh.axes_of(groups)
            elif gmesh is not None and named is not None:
                c.mesh_axes = [a for a, s in gmesh.axes if a in named and s > 1] or named
            c.pairs = parse_pairs(holder.attrs.get("source_target_pairs"))
            if c.pairs:
                c.pattern = _ring(c.pairs, ndev or (max(max(p) for p in c.pairs) + 1))
                if mesh is not None:
                    c.mesh_axes = _permute_axes(mesh, c.pairs)
            tuple_parts = len(holder.operands) if len(holder.operands) > 1 and \
                kind in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all") else 1
            c.merged = max(tuple_parts, _concat_parts(module, comp, inst))
            if c.merged > 1 and not c.op_name:
                c.op_name = _parts_origin(comp, inst, holder)
            rep.collectives.append(c)
    _decompositions(module, rep)
    return rep


def _parts_origin(comp: Computation, inst: Instruction, holder: Instruction) -> str | None:
    """Where a merged collective's parts come from: the op_names of the arrays combined
    (the tuple operands, or the operands of the concatenation the combiner built)."""
    names = list(holder.operands) if len(holder.operands) > 1 else []
    if not names and len(inst.operands) == 1 and inst.operands[0] in comp.by_name:
        names = list(comp.by_name[inst.operands[0]].operands)
    counts: Counter = Counter()
    for n in names:
        op = comp.by_name.get(n)
        if op is not None and op.op_name:
            counts[op.op_name] += 1
    if not counts:
        return None
    return "merged from " + ", ".join(f"{k} x{v}" if v > 1 else k for k, v in counts.most_common(4))


def _permute_axes(mesh: Mesh, pairs: list[tuple[int, int]]) -> list[str] | None:
    """The mesh axes a permute moves data along (those whose coordinate changes)."""
    ids = mesh.device_ids or list(range(mesh.size))
    pos = {d: i for i, d in enumerate(ids)}
    sizes = [s for _, s in mesh.axes]
    strides = [1] * len(sizes)
    for i in range(len(sizes) - 2, -1, -1):
        strides[i] = strides[i + 1] * sizes[i + 1]
    moved = set()
    for s, t in pairs:
        if s not in pos or t not in pos:
            return None
        for i, st in enumerate(strides):
            if (pos[s] // st) % sizes[i] != (pos[t] // st) % sizes[i]:
                moved.add(i)
    return [mesh.axes[i][0] for i in sorted(moved)]


def _decompositions(module: Module, rep: CollectiveReport) -> None:
    """Name reduce-scatter + all-gather pairs over the same groups (a split all-reduce)."""
    by_comp: dict[str, list[Collective]] = defaultdict(list)
    for c in rep.collectives:
        by_comp[c.computation].append(c)
    for comp_name, cs in by_comp.items():
        comp = module.by_name[comp_name]
        users: dict[str, list[str]] = defaultdict(list)
        for i in comp.instructions:
            for o in i.operands:
                users[o].append(i.name)
        gathers = {c.name: c for c in cs if c.kind == "all-gather"}
        for rs in (c for c in cs if c.kind == "reduce-scatter"):
            start = rs.done or rs.name
            frontier, seen = [start], set()
            for _ in range(3):  # the all-gather may follow an elementwise kernel or two
                nxt = []
                for n in frontier:
                    for u in users.get(n, []):
                        if u in seen:
                            continue
                        seen.add(u)
                        if u in gathers and sorted(map(sorted, gathers[u].groups)) == \
                                sorted(map(sorted, rs.groups)):
                            rs.decomposition = gathers[u].decomposition = (
                                f"all-reduce as reduce-scatter {rs.name} + all-gather {u}")
                        nxt.append(u)
                frontier = nxt
