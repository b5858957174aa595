"""XLA's ``*-buffer-assignment.txt``: the allocations of an optimized module and the values
(instruction outputs) that share each one.

The file, as XLA writes it::

    BufferAssignment:
    allocation 0: size 262144, output shape is |f32[256,256]|, maybe-live-out:
     value: <25 fusion.1 @0> (size=65536,offset=0): f32[64,256]{1,0}
    allocation 1: size 262144, parameter 0, shape |f32[256,256]| at ShapeIndex {}:
     value: <24 w.1 @0> (size=262144,offset=0): f32[256,256]{1,0}
    allocation 4: size 327680, preallocated-temp:
    ...

An allocation is a parameter (``parameter N``), live out (``maybe-live-out``: part of the
output), both (a donated parameter the output is written into), a constant, thread-local
(scalars inside reductions, not device memory XLA hands out) or a temporary
(``preallocated-temp``, or neither flag). The sum of all allocation sizes of a memory space is
XLA's ``Total bytes`` of that space in the memory-usage report: what the device needs.
A value's name is ``<id instruction{index} @n>``; ``{index}`` is written when the
instruction's shape is a tuple. Lines XLA may add that this reader does not know are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ALLOC = re.compile(r"^allocation (\d+): size (\d+)(.*?):?\s*$")
_VALUE = re.compile(
    r"^\s*value: <(\d+) (\S+?)(\{[0-9,]*\})?( \(phi\))?(?: @(\d+))?> "
    r"\(size=(\d+),offset=(\d+)\): (.*)$")
_PARAM = re.compile(r"parameter (\d+), shape \|([^|]*)\| at ShapeIndex (\{[0-9,]*\})")
_COLOR = re.compile(r"\bcolor (\d+)")
_OUT_SHAPE = re.compile(r"output shape is \|([^|]*)\|")


@dataclass(slots=True)
class BufferValue:
    """One value (an instruction's output, or a tuple element of it) in an allocation."""

    id: int
    instruction: str
    index: str  # "" for arrays, "{}" / "{0,1}" for (elements of) tuple-shaped instructions
    size: int
    offset: int
    shape: str
    phi: bool = False

    @property
    def key(self) -> str:
        """The name XLA's live-range file uses: ``instruction{index}``."""
        return self.instruction + (self.index or "{}")


@dataclass(slots=True)
class Allocation:
    """One allocation: its size, what it is, and the values placed in it."""

    index: int
    size: int
    kind: str  # parameter, output, donated, constant, thread-local, temp
    parameter: int | None = None
    parameter_shape: str | None = None
    live_out: bool = False
    color: int = 0
    values: list[BufferValue] = field(default_factory=list)


@dataclass(slots=True)
class BufferAssignment:
    """The allocations of one module, in file order."""

    allocations: list[Allocation]
    path: str | None = None

    def total_bytes(self, color: int | None = None) -> int:
        """XLA's total for a memory space (all spaces when ``color`` is None)."""
        return sum(a.size for a in self.allocations if color is None or a.color == color)

    def by_color(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for a in self.allocations:
            out[a.color] = out.get(a.color, 0) + a.size
        return out

    def bytes_by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for a in self.allocations:
            out[a.kind] = out.get(a.kind, 0) + a.size
        return out

    def values_by_key(self) -> dict[str, tuple[Allocation, BufferValue]]:
        """``instruction{index}`` -> (allocation, value), for joining with the live ranges."""
        return {v.key: (a, v) for a in self.allocations for v in a.values}


def _kind(flags: str, parameter: int | None, live_out: bool) -> str:
    if parameter is not None:
        return "donated" if live_out else "parameter"
    if "thread-local" in flags:
        return "thread-local"
    if "constant" in flags:
        return "constant"
    if live_out or "output shape is" in flags:
        return "output"
    return "temp"


def parse_buffer_assignment(text: str, path: str | None = None) -> BufferAssignment:
    """The allocations of a ``*-buffer-assignment.txt`` text (linear in its length)."""
    allocs: list[Allocation] = []
    cur: Allocation | None = None
    for line in text.splitlines():
        if line.startswith("allocation "):
            m = _ALLOC.match(line)
            if not m:
                cur = None
                continue
            flags = m.group(3)
            pm = _PARAM.search(flags)
            cm = _COLOR.search(flags)
            param = int(pm.group(1)) if pm else None
            live_out = "maybe-live-out" in flags
            cur = Allocation(int(m.group(1)), int(m.group(2)), _kind(flags, param, live_out),
                             param, pm.group(2) if pm else None, live_out,
                             int(cm.group(1)) if cm else 0)
            allocs.append(cur)
        elif cur is not None and line.startswith(" value:"):
            m = _VALUE.match(line)
            if m:
                cur.values.append(BufferValue(int(m.group(1)), m.group(2), m.group(3) or "",
                                              int(m.group(6)), int(m.group(7)), m.group(8).strip(),
                                              bool(m.group(4))))
        elif line and not line.startswith(" "):
            cur = None  # a section XLA may add after the allocations
    return BufferAssignment(allocs, path)
