"""Reading HLO files from disk: checks that give a clear message for the wrong kind of file,
and the parse cache."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import HloSyntaxError, InputError
from .directory import find_dumps, resolve_dump_pair
from ..hlo.model import Module

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
