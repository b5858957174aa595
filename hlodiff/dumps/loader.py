"""Reading HLO files from disk: checks that give a clear message for the wrong kind of file,
and the parse cache."""

from __future__ import annotations

import errno
import os
import stat
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


MAX_BYTES = 2**30  # HLO text larger than 1 GiB is refused (HLODIFF_MAX_INPUT_MB overrides)


def _max_bytes() -> int:
    try:
        return int(float(os.environ["HLODIFF_MAX_INPUT_MB"]) * 2**20)
    except (KeyError, ValueError):
        return MAX_BYTES


def _read_regular(p: Path) -> bytes:
    """The bytes of a regular file. Devices, FIFOs and sockets are refused without reading
    (``/dev/zero`` never ends, a FIFO with no writer never starts): opened non-blocking, then
    checked with fstat."""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise InputError(f"{p}: cannot read: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else
                    "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else
                    "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
            raise InputError(f"{p}: is {kind}, not an HLO text file")
        limit = _max_bytes()
        if st.st_size > limit:
            raise InputError(f"{p}: {st.st_size / 2**20:.0f} MB is more than the "
                             f"{limit / 2**20:.0f} MB hlodiff reads (HLODIFF_MAX_INPUT_MB)")
        chunks, total = [], 0
        while True:
            b = os.read(fd, 1 << 24)
            if not b:
                break
            total += len(b)
            if total > limit:  # grew while we read
                raise InputError(f"{p}: more than the {limit / 2**20:.0f} MB hlodiff reads")
            chunks.append(b)
        return b"".join(chunks)
    except OSError as e:
        raise InputError(f"{p}: cannot read: {e.strerror}") from None
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike) -> str:
    """The text of an HLO file, or InputError saying why it cannot be one."""
    p = Path(path)
    try:
        os.stat(p)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise InputError(f"{p}: cannot read: too many levels of symbolic links") from None
        if isinstance(e, FileNotFoundError):
            raise InputError(f"{p}: no such file") from None
        raise InputError(f"{p}: cannot read: {e.strerror}") from None
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
    data = _read_regular(p)
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
