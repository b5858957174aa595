"""Reading HLO files from disk: checks that give a clear message for the wrong kind of file,
and the parse cache."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import HloSyntaxError, InputError
from .model import Module

# Dump files that are not HLO text, by suffix, with what to pass instead.
_NOT_HLO = {
    "-buffer-assignment.txt": "a buffer-assignment report",
    "-memory-usage-report.txt": "a memory-usage report",
    "-buffer-assignment-values.txt": "a buffer-assignment values report",
    "-live-range.txt": "a live-range report",
    ".debug_options": "XLA debug options",
    "thunk_sequence.txt": "a thunk sequence",
    ".ll": "LLVM IR",
    ".ptx": "PTX assembly",
    ".hlo.pb": "a binary HLO proto",
    ".pb": "a binary proto",
    ".o": "an object file",
    ".dot": "a Graphviz file",
    ".html": "an HTML page",
    ".pbtxt": "a text proto",
}


def read_text(path: str | os.PathLike) -> str:
    """The text of an HLO file, or InputError saying why it cannot be one."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file")
    if p.is_dir():
        pairs = find_dumps(p)
        if not pairs:
            resolve_dump_pair(p)  # raises: no dumps here
        names = ", ".join(pr.name for pr in pairs[:3])
        raise InputError(f"{p}: is a dump directory of {len(pairs)} modules ({names}...); "
                         "pass one of its .txt files, or give the directory to `hlodiff diff`")
    name = p.name
    for suffix, what in _NOT_HLO.items():
        if name.endswith(suffix):
            raise InputError(f"{p}:1:1: expected HLO text, found {what} ('{suffix}' file); "
                             "pass a *before_optimizations.txt or *after_optimizations.txt dump")
    data = p.read_bytes()
    if b"\x00" in data[:65536]:
        raise InputError(f"{p}:1:1: expected HLO text, found binary data")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise InputError(f"{p}:{line}:{col}: expected UTF-8 HLO text, found undecodable bytes") from None


def load(path: str | os.PathLike, cache: bool = True) -> Module:
    """Parse an HLO text file into a Module (from the parse cache when the text was seen)."""
    from .cache import cached_parse

    text = read_text(path)
    try:
        return cached_parse(text, str(path), use_cache=cache)
    except HloSyntaxError as e:
        raise e.with_path(str(path)) from None


_DUMP_NAME = re.compile(
    r"^(?:\d+\.)?(module_\d+)\.(.+?)\.(before_optimizations|(?:[\w.\-]*_)?after_optimizations)\.txt$")


@dataclass
class DumpPair:
    """One module of an XLA dump directory: its before/after optimization files."""

    module_id: str
    name: str
    before: Path | None
    after: Path | None

    @property
    def size(self) -> int:
        return max((p.stat().st_size for p in (self.before, self.after) if p), default=0)


def find_dumps(directory: str | os.PathLike) -> list[DumpPair]:
    """The modules of a directory written with ``--xla_dump_to``, largest first.

    Pass-by-pass files and reports (buffer assignment, memory usage) are not modules.
    """
    d = Path(directory)
    pairs: dict[str, DumpPair] = {}
    for p in d.iterdir():
        m = _DUMP_NAME.match(p.name)
        if not m or not p.is_file():
            continue
        mid, name, kind = m.groups()
        pair = pairs.setdefault(mid, DumpPair(mid, name, None, None))
        if kind == "before_optimizations":
            pair.before = p
        else:
            pair.after = p
    return sorted(pairs.values(), key=lambda pr: (-pr.size, pr.module_id))


def resolve_dump_pair(directory: str | os.PathLike, module: str | None = None) -> DumpPair:
    """The module to diff in a dump directory: the one named, or the largest complete pair."""
    d = Path(directory)
    pairs = [p for p in find_dumps(d) if p.before and p.after]
    if module:
        pairs = [p for p in pairs if module in (p.name, p.module_id) or module in p.name]
    if not pairs:
        what = f" for module '{module}'" if module else ""
        raise InputError(
            f"{d}: no HLO dumps found{what} (expected files such as "
            "module_0001.jit_step.before_optimizations.txt and "
            "module_0001.jit_step.cpu_after_optimizations.txt, written with "
            f"XLA_FLAGS='--xla_dump_to={d} --xla_dump_hlo_as_text')")
    return pairs[0]
