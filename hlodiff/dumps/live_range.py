"""XLA's ``*-live-range.txt`` (the schedule and each value's live range) and
``*-memory-usage-report.txt`` (total bytes per memory space).

The live-range file, as XLA writes it::

    HloLiveRange (max 11):
      InstructionSequence:
        0:w.1
        ...
      BufferLiveRange:
        w.1{}:0-11
        ...
      Live ranges at 10 (peak):
        dot{}: 262144 bytes (cumulative: 262144 bytes)
        ...
      Stack trace breakdown for peak usage: 1 114 112 bytes
        main.1 (100.0%, total: 1 114 112 bytes, current: 0 bytes, remaining: ...)
          ├── jit(f)/transpose(jvp())/add_any (23.5%, total: 262 144 bytes, ...)

The live-range peak sums the values live at one moment of the schedule (both ends of each
range inclusive); a value written in place into another's buffer counts twice there, so it
is *not* the memory a device needs (that is the allocation total of the buffer assignment
and the memory-usage report). Both are kept and named apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_RANGE = re.compile(r"^\s+(\S+?\{[0-9,]*\}):(-?\d+)-(-?\d+)\s*$")
_SEQ = re.compile(r"^\s+(\d+):(\S+)\s*$")
_PEAK_AT = re.compile(r"^\s+Live ranges at (\d+) \(peak\):")
_PEAK_ROW = re.compile(r"^\s+(\S+?\{[0-9,]*\}): (\d+) bytes")
_BREAKDOWN = re.compile(r"^\s+Stack trace breakdown for peak usage: ([\d ]+) bytes")
_BREAK_ROW = re.compile(r"^\s+[├└]── (.*) \(([\d.]+)%, total: ([\d ]+) bytes")
_SPACE = re.compile(r"^Memory Space: (.*?) \(color=(\d+)\)")
_TOTAL = re.compile(r"^Total bytes: (\d+)")


@dataclass(slots=True)
class LiveRanges:
    """The schedule, value live ranges and XLA's chosen peak moment of one module."""

    sequence: list[str]
    ranges: dict[str, tuple[int, int]]  # "instr{index}" -> (start, end), both inclusive
    peak_time: int | None = None
    peak_values: list[tuple[str, int]] = field(default_factory=list)  # (value, bytes)
    peak_bytes: int | None = None  # XLA's sum of live values at peak_time
    breakdown: list[tuple[str, int]] = field(default_factory=list)  # (op_name, bytes)
    max_time: int = 0
    path: str | None = None


def parse_live_range(text: str, path: str | None = None) -> LiveRanges:
    """Read a ``*-live-range.txt`` (linear in its length; unknown lines are skipped)."""
    lr = LiveRanges([], {}, path=path)
    section = ""
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if s.startswith("HloLiveRange"):
            m = re.search(r"max (\d+)", s)
            lr.max_time = int(m.group(1)) if m else 0
            continue
        if s == "InstructionSequence:":
            section = "seq"
            continue
        if s == "BufferLiveRange:":
            section = "ranges"
            continue
        m = _PEAK_AT.match(line)
        if m:
            lr.peak_time, section = int(m.group(1)), "peak"
            continue
        m = _BREAKDOWN.match(line)
        if m:
            lr.peak_bytes, section = int(m.group(1).replace(" ", "")), "breakdown"
            continue
        if section == "seq":
            m = _SEQ.match(line)
            if m:
                lr.sequence.append(m.group(2))
        elif section == "ranges":
            m = _RANGE.match(line)
            if m:
                lr.ranges[m.group(1)] = (int(m.group(2)), int(m.group(3)))
        elif section == "peak":
            m = _PEAK_ROW.match(line)
            if m:
                lr.peak_values.append((m.group(1), int(m.group(2))))
        elif section == "breakdown":
            m = _BREAK_ROW.match(line)
            if m:
                lr.breakdown.append((m.group(1), int(m.group(3).replace(" ", ""))))
    if lr.peak_bytes is None and lr.peak_values:
        lr.peak_bytes = sum(b for _, b in lr.peak_values)
    return lr


def parse_memory_usage_report(text: str) -> dict[int, tuple[str, int]]:
    """``*-memory-usage-report.txt``: memory space colour -> (its name, total bytes)."""
    out: dict[int, tuple[str, int]] = {}
    space: tuple[str, int] | None = None
    for line in text.splitlines():
        m = _SPACE.match(line)
        if m:
            space = (m.group(1), int(m.group(2)))
            continue
        m = _TOTAL.match(line)
        if m and space is not None:
            out[space[1]] = (space[0], int(m.group(1)))
            space = None
    return out
