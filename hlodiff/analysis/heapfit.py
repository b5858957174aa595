"""XLA's heap for temporaries: the heap simulator's clock and its global best-fit packing.

What buffer assignment leaves unassigned (the temporaries) goes to one heap, packed the way
XLA's ``GlobalDecreasingSizeBestFitHeap`` packs it (read in openxla/xla
heap_simulator.cc; this is our own code):

* **The clock.** The heap simulator walks the schedule; at each step it first defines the
  values that start there (ordered by start, end, value id), then frees those that end
  there. Every allocation and every free of a non-empty value is one tick, and a value's
  interval is [its allocation tick, its free tick]. A value that takes over a dying
  operand's buffer (``CanShareOperandBufferWithUser``) frees the operand (a tick) just
  before its own tick; the two are then *colocated*: one chunk, each with its own interval.
* **The order.** Groups of colocated values (one root: the value allocated first) are
  placed one by one, in one of two orders: *spatial* (largest first, then the longest own
  interval, then the value id) and *temporal* (the longest interval of the whole group
  first, then the largest, then the id). XLA runs both and keeps the smaller heap (the
  first on a tie).
* **The chunk.** For each group, the chunks already placed that are live during any of its
  values' intervals are sorted by offset and merged; the free stretches between them (each
  starting at an aligned end) that hold the group's largest value are candidates, and so is
  the stretch above the highest one, which is unbounded. The smallest candidate wins (the
  lowest on a tie) and the group goes to its aligned start. The heap's size is the highest
  end of a placed chunk.

Tuple tables are not in this heap: XLA gives each its own allocation (memassign.pack).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

PACK_LIMIT = 3000  # groups; more are not packed (the search is quadratic)


@dataclass(slots=True)
class HeapValue:
    """One value of the heap: its size, its live range in schedule steps (inclusive) and
    ``key``, XLA's value order (ties of the sort)."""

    key: tuple
    size: int
    start: int
    end: int
    takes: HeapValue | None = None  # the dying operand whose buffer it takes over
    offset: int = -1  # set by place(): the offset in the winning packing
    tick_start: int = 0
    tick_end: int = 0
    members: list[HeapValue] = field(default_factory=list)  # a root's colocated values


def _replay(values: list[HeapValue]) -> tuple[list[HeapValue], int]:
    """Run the heap simulator's clock; returns the group roots and the final tick."""
    defined: dict[int, list[HeapValue]] = {}
    freed: dict[int, list[HeapValue]] = {}
    for v in sorted(values, key=lambda v: (v.start, v.end, v.key)):
        defined.setdefault(v.start, []).append(v)
        freed.setdefault(v.end, []).append(v)
    root: dict[int, HeapValue] = {}  # id(value) -> its group's root
    roots: list[HeapValue] = []
    done: set[int] = set()  # ids of values already freed
    clock = 0
    for step in sorted(set(defined) | set(freed)):
        for v in defined.get(step, ()):
            o = v.takes
            if o is not None and id(o) in root and o.end == step and id(o) not in done:
                o.tick_end = clock
                clock += 1
                done.add(id(o))
                r = root[id(o)]
                root[id(v)] = r
                r.members.append(v)
            else:
                root[id(v)] = v
                v.members = [v]
                roots.append(v)
            v.tick_start = clock
            clock += 1
        for v in freed.get(step, ()):
            if id(v) not in done:
                v.tick_end = clock
                clock += 1
                done.add(id(v))
    return roots, clock


def place(values: list[HeapValue], align: int) -> int | None:
    """Pack the heap's values as XLA does; sets each value's ``offset`` (of the smaller of
    the two packings) and returns the heap's size, or None when there are too many to pack
    quickly. Empty values take no space and no ticks."""
    live = [v for v in values if v.size]
    for v in values:
        v.offset = 0
    if not live:
        return 0
    roots, _clock = _replay(live)
    if len(roots) > PACK_LIMIT:
        return None
    rows = []
    for r in roots:
        lo = min(m.tick_start for m in r.members)
        hi = max(m.tick_end for m in r.members)
        own = r.tick_start - r.tick_end
        size = max(m.size for m in r.members)
        rows.append((r, r.size, own, lo, hi, size))
    spatial = sorted(rows, key=lambda x: (-x[1], x[2], x[0].key))
    temporal = sorted(rows, key=lambda x: (x[3] - x[4], -x[1], x[0].key))
    best = None
    for order in (spatial, temporal):
        top, offsets = _best_fit(order, align)
        if best is None or top < best[0]:
            best = (top, offsets)
    top, offsets = best
    for r, off in offsets:
        for m in r.members:
            m.offset = off
    return top


def _best_fit(rows, align: int) -> tuple[int, list[tuple[HeapValue, int]]]:
    """Place each group, in the given order, into the smallest free stretch that holds it
    during its whole interval; the heap's size and the offsets."""
    starts: list[int] = []  # placed, sorted by start
    placed: list[tuple[int, int, int]] = []  # (end, offset, aligned end), in that order
    out: list[tuple[HeapValue, int]] = []
    top = 0
    for r, size, _own, bs, be, colo in rows:
        k = bisect.bisect_right(starts, be)  # only those starting by its end can meet it
        used = sorted([(o, hi) for e, o, hi in placed[:k] if e >= bs])
        best, best_gap, cur = -1, -1, 0
        for lo, hi in used:
            if lo > cur:
                gap = lo - cur
                if gap >= size and cur + colo <= lo and (best < 0 or gap < best_gap):
                    best, best_gap = cur, gap
            if hi > cur:
                cur = hi
        off = best if best >= 0 else cur
        j = bisect.bisect_right(starts, bs)
        starts.insert(j, bs)
        placed.insert(j, (be, off, off + -(-colo // align) * align))
        out.append((r, off))
        if off + colo > top:
            top = off + colo
    return top, out
