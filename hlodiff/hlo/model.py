"""The typed model of an HLO module: what the parser builds and every analysis reads.

Plain dataclasses with slots: a 30,000-instruction module must stay small in memory and
compact to serialise (the parse cache stores it as MessagePack). Names are stored without
the leading ``%``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

# Bytes per element, for sizes in reports (sub-byte types count as fractions).
ELEMENT_BITS: dict[str, int] = {
    "pred": 8, "s1": 1, "s2": 2, "s4": 4, "s8": 8, "s16": 16, "s32": 32, "s64": 64,
    "u1": 1, "u2": 2, "u4": 4, "u8": 8, "u16": 16, "u32": 32, "u64": 64,
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "c64": 64, "c128": 128,
    "f8e5m2": 8, "f8e4m3": 8, "f8e4m3fn": 8, "f8e4m3b11fnuz": 8, "f8e3m4": 8,
    "f8e5m2fnuz": 8, "f8e4m3fnuz": 8, "f8e8m0fnu": 8, "f4e2m1fn": 4, "f6e3m2fn": 6,
    "f6e2m3fn": 6, "token": 0, "opaque": 0,
}


@dataclass(slots=True, frozen=True)
class Layout:
    """A dense layout: minor-to-major order plus the extras after ':' kept as text."""

    minor_to_major: tuple[int, ...]
    extras: str = ""  # e.g. "T(8,128)S(1)"

    @property
    def memory_space(self) -> int:
        m = re.search(r"S\((\d+)\)", self.extras)
        return int(m.group(1)) if m else 0

    def __str__(self) -> str:
        mtm = ",".join(map(str, self.minor_to_major))
        return "{" + mtm + (":" + self.extras if self.extras else "") + "}"


@dataclass(slots=True, frozen=True)
class Shape:
    """An array shape (element type, dims, optional layout) or a tuple of shapes."""

    text: str
    element_type: str | None = None  # None for tuples
    dims: tuple[int, ...] = ()  # the bound for '<=N' dims, -1 for '?'
    dynamic: tuple[bool, ...] = ()
    layout: Layout | None = None
    tuple_shapes: tuple["Shape", ...] = ()

    @property
    def is_tuple(self) -> bool:
        return self.element_type is None

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.dims:
            n *= max(d, 0)
        return n

    @property
    def byte_size(self) -> int:
        """Bytes of all arrays in the shape (tuples: the sum of their leaves)."""
        if self.is_tuple:
            return sum(s.byte_size for s in self.tuple_shapes)
        return (self.num_elements * ELEMENT_BITS.get(self.element_type or "", 0) + 7) // 8

    @property
    def dims_text(self) -> str:
        """The shape without any layout, e.g. ``f32[2,4]``; tuples recurse."""
        if self.is_tuple:
            return "(" + ", ".join(s.dims_text for s in self.tuple_shapes) + ")"
        parts = []
        for d, dyn in zip(self.dims, self.dynamic):
            parts.append("?" if d < 0 else (f"<={d}" if dyn else str(d)))
        return f"{self.element_type}[{','.join(parts)}]"

    def leaves(self) -> Iterator["Shape"]:
        if self.is_tuple:
            for s in self.tuple_shapes:
                yield from s.leaves()
        else:
            yield self

    def __str__(self) -> str:
        return self.text


# Shared empties: a parsed model is read-only, and sharing keeps it small in memory and in
# the parse cache (a 30,000-instruction module would otherwise carry 100,000 empty containers).
_NO_EXTRA: dict[str, str] = {}
_NO_CALLS: dict[str, tuple[str, ...]] = {}


@dataclass(slots=True)
class Metadata:
    """Source metadata of an instruction, with the stack-frame reference resolved."""

    op_type: str | None = None
    op_name: str | None = None
    source_file: str | None = None
    source_line: int | None = None
    stack_frame_id: int | None = None
    extra: dict[str, str] = field(default_factory=lambda: _NO_EXTRA)  # other keys, as written

    @property
    def location(self) -> str | None:
        """``file:line`` of the user's code, when known."""
        if self.source_file and self.source_line is not None:
            return f"{self.source_file}:{self.source_line}"
        return self.source_file


@dataclass(slots=True, eq=False)
class Instruction:
    """One HLO instruction. ``attrs`` keeps every attribute's value text as written."""

    name: str
    opcode: str
    shape: Shape
    operands: list[str]
    computation: str = ""
    is_root: bool = False
    attrs: dict[str, str] = field(default_factory=dict)
    calls: tuple[str, ...] = ()  # called computations, in attribute order
    called: dict[str, tuple[str, ...]] = field(default_factory=lambda: _NO_CALLS)  # role -> names
    metadata: Metadata | None = None
    literal: str | None = None  # constant literal text (elided when large)
    parameter_number: int | None = None
    dimensions: tuple[int, ...] | None = None
    fusion_kind: str | None = None  # kLoop / kInput / kOutput / kCustom
    custom_call_target: str | None = None
    async_wrapped: str | None = None  # for <op>-start/-update/-done sugar: the wrapped op
    index: int | None = None  # get-tuple-element index
    control_predecessors: tuple[str, ...] = ()
    line: int = 0  # 1-based line of the instruction in its file

    @property
    def op_name(self) -> str | None:
        return self.metadata.op_name if self.metadata else None

    @property
    def source(self) -> str | None:
        return self.metadata.location if self.metadata else None

    @property
    def branches(self) -> tuple[str, ...]:
        """A conditional's branch computations in the order of the operands they read
        (branch k reads operand k + 1): true then false, or ``branch_computations``."""
        c = self.called
        return c.get("branch_computations") or \
            c.get("true_computation", ()) + c.get("false_computation", ())

    def to_dict(self) -> dict:
        # (written for speed: ``show --format json`` calls it for every instruction)
        d = {"name": self.name, "opcode": self.opcode, "shape": self.shape.text,
             "operands": list(self.operands), "calls": list(self.calls)}
        if self.is_root:
            d["root"] = True
        if self.fusion_kind:
            d["fusion_kind"] = self.fusion_kind
        if self.custom_call_target is not None:
            d["custom_call_target"] = self.custom_call_target
        if self.dimensions is not None:
            d["dimensions"] = list(self.dimensions)
        if self.parameter_number is not None:
            d["parameter_number"] = self.parameter_number
        if self.literal is not None:
            d["literal"] = self.literal
        md = self.metadata
        if md is not None:
            m = {}
            if md.op_type is not None:
                m["op_type"] = md.op_type
            if md.op_name is not None:
                m["op_name"] = md.op_name
            loc = md.source_file  # as Metadata.location, inlined
            if loc is not None:
                m["source"] = f"{loc}:{md.source_line}" if loc and md.source_line is not None else loc
            if m:
                d["metadata"] = m
        d["line"] = self.line
        return d


def sums_nothing(inst: Instruction, operand: Shape | None) -> bool:
    """``inst`` is a reduce over dimensions of size 1 only of ``operand`` (its data
    operand's shape): a reshape in effect, which algsimp makes one (JAX's bias gradients,
    and its gradients of ``x[:, :, None]``, hold such reduces)."""
    if inst.opcode != "reduce" or len(inst.operands) != 2 or not inst.dimensions \
            or operand is None or operand.is_tuple:
        return False
    return all(d < operand.rank and operand.dims[d] == 1 for d in inst.dimensions)


@dataclass(slots=True, eq=False)
class Computation:
    """A computation: its instructions in text order, parameters by number, and root."""

    name: str
    instructions: list[Instruction]
    root: str
    is_entry: bool = False
    signature: str | None = None
    execution_thread: str | None = None
    line: int = 0
    by_name: dict[str, Instruction] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.by_name:
            self.by_name = {i.name: i for i in self.instructions}

    @property
    def parameters(self) -> list[Instruction]:
        ps = [i for i in self.instructions if i.opcode == "parameter"]
        ps.sort(key=lambda i: i.parameter_number or 0)
        return ps

    @property
    def root_instruction(self) -> Instruction:
        return self.by_name[self.root]

    def __getitem__(self, name: str) -> Instruction:
        return self.by_name[name.lstrip("%")]

    def __len__(self) -> int:
        return len(self.instructions)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "entry": self.is_entry,
            "root": self.root,
            "instructions": [i.to_dict() for i in self.instructions],
        }


@dataclass(slots=True)
class StackTables:
    """The FileNames / FunctionNames / FileLocations / StackFrames tables of a module."""

    file_names: dict[int, str] = field(default_factory=dict)
    function_names: dict[int, str] = field(default_factory=dict)
    file_locations: dict[int, dict[str, int]] = field(default_factory=dict)
    stack_frames: dict[int, dict[str, int]] = field(default_factory=dict)

    def frame(self, frame_id: int) -> tuple[str | None, str | None, int | None]:
        """(file, function, line) of one stack frame, or Nones when unknown."""
        fr = self.stack_frames.get(frame_id)
        if not fr:
            return None, None, None
        loc = self.file_locations.get(fr.get("file_location_id", -1), {})
        return (self.file_names.get(loc.get("file_name_id", -1)),
                self.function_names.get(loc.get("function_name_id", -1)),
                loc.get("line"))

    def parent_shift(self) -> int:
        """How much XLA's printer added to ``parent_frame_id``: 1 or 0.

        jaxlib 0.10's XLA prints each frame's parent id one higher than the frame it means,
        so the outermost frame names itself as parent (frame 2, called from frame 1, prints
        ``parent_frame_id=2``). A frame cannot be its own parent, so a table where one does
        is shifted; otherwise the ids are taken as written.
        """
        for fid, fr in self.stack_frames.items():
            if fr.get("parent_frame_id") == fid:
                return 1
        return 0

    def stack(self, frame_id: int) -> list[tuple[str | None, str | None, int | None]]:
        """Innermost-first call stack of a frame id."""
        out, seen = [], set()
        shift = self.parent_shift() if self.stack_frames else 0
        while frame_id and frame_id not in seen and frame_id in self.stack_frames:
            seen.add(frame_id)
            out.append(self.frame(frame_id))
            frame_id = self.stack_frames[frame_id].get("parent_frame_id", 0) - shift
        return out


@dataclass(slots=True, eq=False)
class Module:
    """A parsed HLO module: header attributes, computations in text order, the entry."""

    name: str
    computations: list[Computation]
    entry: str
    attributes: dict[str, str] = field(default_factory=dict)
    tables: StackTables = field(default_factory=StackTables)
    path: str | None = None
    by_name: dict[str, Computation] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.by_name:
            self.by_name = {c.name: c for c in self.computations}

    @property
    def entry_computation(self) -> Computation:
        return self.by_name[self.entry]

    def computation(self, name: str) -> Computation:
        return self.by_name[name.lstrip("%")]

    def instructions(self) -> Iterator[Instruction]:
        for c in self.computations:
            yield from c.instructions

    @property
    def instruction_count(self) -> int:
        return sum(len(c.instructions) for c in self.computations)

    def __repr__(self) -> str:
        return (f"<Module {self.name}: {self.instruction_count} instructions in "
                f"{len(self.computations)} computations{', ' + self.path if self.path else ''}>")

    def _repr_html_(self) -> str:
        from ..display import html

        return html(self)

    def _repr_svg_(self) -> str | None:
        from ..display import svg

        return svg(self)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "entry": self.entry,
            "attributes": dict(self.attributes),
            "computations": [c.to_dict() for c in self.computations],
        }
