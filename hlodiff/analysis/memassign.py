"""XLA's buffer assignment, replayed over the buffers of the heap simulation (memsim.py).

XLA (``BufferAssigner``) gives every buffer of the module an allocation, in this order:

1. buffers are sorted by size (largest first), then live-out ones first, then by their
   instruction's place in the computation's post order (operands before users, depth
   first from the root: not the schedule);
2. an entry parameter or a constant gets its own allocation; so does every value of a
   computation that runs inside one kernel (a reduction's or sort's comparator: *thread-local*);
3. any other buffer first tries the allocations of its defining instruction's operands, then
   the allocations made so far for outputs (smallest first). It fits there when it is no
   larger (an output: exactly as large), and no value already there is live at the same
   time. Touching at one step is allowed only where the instruction may write its result
   over the operand that dies there (XLA's CanShareOperandBufferWithUser); a copy never
   shares with what it copies;
4. an output that found no place gets a new allocation; a temporary tuple table gets one of
   its own; any other temporary is left for the heap (``pack``, heapfit.py: XLA's heap
   simulator and best fit, offsets aligned to 256 bytes on GPU, 64 on CPU). XLA then
   combines the heap and the tables' allocations end to end into one temporary allocation,
   in the order std::partition leaves them.

XLA's total is the sum of all allocations. This module only decides placements; which
buffers exist, their sizes and live ranges, and who may overwrite whom, come from memsim.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Callable, Protocol

from ..hlo.model import Module
from .heapfit import HeapValue, place

# computations run inside one kernel: their values get thread-local allocations
_THREAD_LOCAL_CALLERS = frozenset(
    "custom-call all-reduce reduce-scatter all-reduce-start map reduce reduce-window scatter "
    "select-and-scatter sort fusion".split())
_ALLOCATED = ("output", "temp", "parameter", "constant")
_PACK_LIMIT = 3000  # temporaries; more are summed (packing is quadratic)
_TRY_BUDGET = 2_000_000  # allocation checks; beyond, temporaries go to the heap directly


class Buf(Protocol):
    id: int
    size: int
    kind: str
    start: int
    end: int
    host: int | None


@dataclass(slots=True)
class _Alloc:
    size: int
    starts: list[int] = field(default_factory=list)  # members' live pieces, sorted by start
    pieces: list[tuple[int, Buf]] = field(default_factory=list)  # (end, member), same order

    def add(self, b: Buf) -> None:
        for s, e in _pieces(b):
            k = bisect.bisect_left(self.starts, s)
            self.starts.insert(k, s)
            self.pieces.insert(k, (e, b))


def _pieces(b: Buf) -> list[tuple[int, int]]:
    """The stretches of [start, end] where the buffer holds a live value."""
    gaps = getattr(b, "gaps", None)
    if not gaps:
        return [(b.start, b.end)]
    out, cur = [], b.start
    for lo, hi in sorted(gaps):
        if lo > cur:
            out.append((cur, lo - 1))
        cur = max(cur, hi + 1)
    if cur <= b.end:
        out.append((cur, b.end))
    return out


def _fits(a: _Alloc, b: Buf, can_share: Callable[[Buf, Buf], bool],
          copies_of: Callable[[Buf], set[int]]) -> bool:
    """Whether ``b`` may join allocation ``a``: no member live at the same time, except one
    that dies exactly where the other is defined by an instruction that may overwrite it."""
    if b.size > a.size or (b.kind == "output" and b.size != a.size):
        return False
    copied = None
    for bs, be in _pieces(b):
        # pieces do not overlap one another (they may touch): those overlapping b's are
        # together, just before the first piece starting after b's ends
        k = bisect.bisect_right(a.starts, be)
        for i in range(k - 1, -1, -1):
            me, m = a.pieces[i]
            ms = a.starts[i]
            if me < bs:
                break
            if me == bs and can_share(b, m):
                pass
            elif be == ms and can_share(m, b):
                pass
            else:
                return False
            if copied is None:
                copied = copies_of(b)
            if m.id in copied:
                return False
    return True


def assign(buffers: list[Buf], operands: dict[int, list[int]],
           can_share: Callable[[Buf, Buf], bool],
           copies_of: Callable[[Buf], set[int]],
           donated: set[int] | frozenset[int] = frozenset(),
           log: list[int | None] | None = None) -> list[Buf]:
    """Place outputs and temporaries into allocations, XLA's way; returns the temporaries left
    for the heap. Outputs that found no place keep ``host is None`` (their own allocation);
    a buffer placed into another's allocation gets ``host`` = that allocation's number and
    costs nothing more. ``log`` receives, in XLA's order of creation, one entry per
    allocation made: a temporary tuple table's id (a temporary allocation), else None."""
    order = sorted((b for b in buffers if b.size and (b.kind in _ALLOCATED or b.id in donated)),
                   key=lambda b: (-b.size, b.kind not in ("output", "donated")
                                  and b.id not in donated, getattr(b, "post", 0), b.id))
    if log is None:
        log = []
    allocs: list[_Alloc] = []
    where: dict[int, int] = {}  # buffer id -> allocation
    reusable: list[int] = []  # allocations made for outputs, in creation order
    heap: list[Buf] = []
    budget = _TRY_BUDGET
    for b in order:
        if b.kind in ("parameter", "constant") and b.id not in donated:
            log.append(None)
            continue
        if b.id in donated:  # a donated parameter's allocation takes others (XLA)
            log.append(None)
            allocs.append(_Alloc(b.size))
            allocs[-1].add(b)
            where[b.id] = len(allocs) - 1
            reusable.append(len(allocs) - 1)
            continue
        if _is_table(b):  # a tuple's table of pointers: never shares an allocation
            if b.kind == "temp":
                heap.append(b)
            log.append(b.id if b.kind == "temp" else None)
            continue
        placed = None
        tried: set[int] = set()
        for o in operands.get(b.id, ()):
            ai = where.get(o)
            if ai is None or ai in tried:
                continue
            tried.add(ai)
            budget -= 1
            if _fits(allocs[ai], b, can_share, copies_of):
                placed = ai
                break
        if placed is None and budget > 0:
            for ai in reversed(reusable):  # smallest first
                a = allocs[ai]
                # its output (the member that starts last) lives to the end: b must end by
                # the time it starts
                if a.size < b.size or a.starts[-1] < b.end or ai in tried:
                    continue
                budget -= 1
                if _fits(a, b, can_share, copies_of):
                    placed = ai
                    break
        if placed is not None:
            allocs[placed].add(b)
            where[b.id] = placed
            b.host = placed
            continue
        if b.kind == "output":
            log.append(None)
            allocs.append(_Alloc(b.size))
            allocs[-1].add(b)
            where[b.id] = len(allocs) - 1
            reusable.append(len(allocs) - 1)
        else:
            heap.append(b)
    return heap


def _is_table(b: Buf) -> bool:
    """A tuple's table of pointers (memsim names its shape ``table``)."""
    shape = getattr(b, "shape_obj", None)
    return shape is not None and shape.text == "table"


def pack(heap: list[Buf], merges: list[tuple[int, int]], align: int,
         tables: set[int] | frozenset[int] = frozenset(),
         log: list[int | None] | None = None, after: int = 0) -> int | None:
    """The bytes of XLA's temporary allocation: the heap holding the temporaries (heapfit.py:
    XLA's clock, its two orders, its best fit) and, end to end after it, each tuple table in
    an allocation of its own (XLA gives tuple-shaped buffers their own allocation and then
    combines every temporary allocation into one, each at an aligned offset).
    ``merges``: (group, member) pairs where a result took over a dying operand's buffer
    (memsim); the member then starts where the group's previous member ends. ``tables``:
    the tuple tables among ``heap``; ``log``: assign()'s record of the allocations made
    before the heap, ``after``: how many (thread-local) are made after it; they decide the
    order in which the temporary allocations are combined. None when there are too many to
    pack quickly."""
    items = [b for b in heap if b.id not in tables]
    if len(items) > _PACK_LIMIT:
        return None
    by = {b.id: b for b in heap}
    own_end = {b.id: b.end for b in heap}
    last: dict[int, int] = {}
    prev: dict[int, int] = {}  # member -> the value whose buffer it takes over
    for g, member in merges:  # the group's previous last member dies where member starts
        p = last.get(g, g)
        own_end[p] = by[member].start
        prev[member] = p
        last[g] = member
    values: dict[int, HeapValue] = {}
    for b in sorted(items, key=lambda b: b.id):
        size = by[_root(b.id, prev)].size if b.id in prev else b.size
        values[b.id] = HeapValue((getattr(b, "post", 0), b.id), size, b.start, own_end[b.id])
    for member, p in prev.items():
        if member in values and p in values:
            values[member].takes = values[p]
    size = place(list(values.values()), align)
    if size is None:
        return None
    seq: list[int | None] = list(log) if log is not None else sorted(tables)
    seq = [t if t is None or t in tables else None for t in seq]
    if size:
        seq.append(-1)  # the heap's own allocation
    seq += [None] * after
    parts = [size if t == -1 else by[t].size for t in _temporaries_in_order(seq)]
    return combined_size([p for p in parts if p], align)


def _temporaries_in_order(seq: list[int | None]) -> list[int]:
    """The temporary allocations (not None) in the order XLA combines them: it moves them
    behind the others with std::partition, which swaps the first temporary from the front
    with the last other one from the back, again and again (not a stable order)."""
    seq = list(seq)
    first, last = 0, len(seq)
    while True:
        while first < last and seq[first] is None:
            first += 1
        if first == last:
            break
        last -= 1
        while first < last and seq[last] is not None:
            last -= 1
        if first == last:
            break
        seq[first], seq[last] = seq[last], seq[first]
        first += 1
    return [t for t in seq[first:] if t is not None]


def _root(b: int, prev: dict[int, int]) -> int:
    while b in prev:
        b = prev[b]
    return b


def combined_size(sizes: list[int], align: int) -> int:
    """XLA's CombineTempAllocations: temporary allocations placed end to end, each at an
    aligned offset; the total."""
    total = 0
    for s in sizes:
        total = -(-total // align) * align + s
    return total


def thread_local_bytes(module: Module) -> int:
    """Bytes of XLA's thread-local allocations (see thread_local_sizes)."""
    return sum(thread_local_sizes(module))


def thread_local_sizes(module: Module) -> list[int]:
    """The sizes of XLA's thread-local allocations: every value of a computation called by a
    reduction, sort, scatter, map or custom call (directly or inside a fusion), one
    allocation each; fused computations themselves get none."""
    fused: set[str] = set()
    local: set[str] = set()
    work = []
    for comp in module.computations:
        for ins in comp.instructions:
            for c in ins.calls:
                if ins.opcode == "fusion":
                    fused.add(c)
                if ins.opcode in _THREAD_LOCAL_CALLERS:
                    work.append(c)
    while work:
        c = work.pop()
        if c in local:
            continue
        local.add(c)
        try:
            comp = module.computation(c)
        except KeyError:
            continue
        for ins in comp.instructions:
            work.extend(ins.calls)
    sizes: list[int] = []
    for c in sorted(local - fused):
        try:
            comp = module.computation(c)
        except KeyError:
            continue
        for ins in comp.instructions:
            if ins.opcode in ("get-tuple-element", "bitcast"):
                continue
            s = ins.shape
            if s.is_tuple:
                sizes.append(8 * len(s.tuple_shapes))
                if ins.opcode != "parameter":
                    continue
            sizes.extend(leaf.byte_size for leaf in s.leaves())
    return [x for x in sizes if x]
