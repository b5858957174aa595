"""Finding and reading XLA's memory files beside an optimized module file.

XLA names them after the module file: ``X.txt`` -> ``X-buffer-assignment.txt``,
``X-live-range.txt``, ``X-memory-usage-report.txt``. Any may be missing (older XLA, or the
user copied only the module); what is present is read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .buffer_assignment import BufferAssignment, parse_buffer_assignment
from .live_range import LiveRanges, parse_live_range, parse_memory_usage_report

SUFFIXES = {"buffer_assignment": "-buffer-assignment.txt", "live_range": "-live-range.txt",
            "usage_report": "-memory-usage-report.txt"}


@dataclass(slots=True)
class MemoryFiles:
    """What XLA wrote about one module's memory (each part None when its file is absent)."""

    buffer_assignment: BufferAssignment | None = None
    live_range: LiveRanges | None = None
    usage_report: dict[int, tuple[str, int]] | None = None
    paths: dict[str, str] | None = None

    @property
    def present(self) -> bool:
        return self.buffer_assignment is not None or self.usage_report is not None


def memory_file_paths(module_path: str | os.PathLike) -> dict[str, Path]:
    """The memory files that exist beside a module file, by kind."""
    p = Path(module_path)
    stem = p.name[:-4] if p.name.endswith(".txt") else p.name
    found = {}
    for kind, suffix in SUFFIXES.items():
        q = p.with_name(stem + suffix)
        if q.is_file():
            found[kind] = q
    return found


def _read(p: Path) -> str:
    from .loader import _read_regular  # regular files only, size-capped

    try:
        return _read_regular(p).decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{p}: cannot read XLA's memory file ({e.__class__.__name__})") from None


def load_memory_files(module_path: str | os.PathLike | None) -> MemoryFiles:
    """Read the memory files beside ``module_path`` (an empty MemoryFiles when there are none)."""
    if module_path is None:
        return MemoryFiles()
    paths = memory_file_paths(module_path)
    mf = MemoryFiles(paths={k: str(v) for k, v in paths.items()})
    if "buffer_assignment" in paths:
        mf.buffer_assignment = parse_buffer_assignment(_read(paths["buffer_assignment"]),
                                                       str(paths["buffer_assignment"]))
    if "live_range" in paths:
        mf.live_range = parse_live_range(_read(paths["live_range"]), str(paths["live_range"]))
    if "usage_report" in paths:
        mf.usage_report = parse_memory_usage_report(_read(paths["usage_report"]))
    return mf
