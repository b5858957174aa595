"""A content-addressed parse cache: the same text, parsed once, loads from a data-only file.

What is stored: for each HLO text of at least 16 KiB that was parsed, the parsed model
(names, opcodes, shapes, attributes as text, metadata) in MessagePack, decoded against a
fixed schema of plain types (strings, integers, lists, maps): a cache file can never run
code, and one that is corrupt, truncated, of another schema or of another version is ignored
and rebuilt. Keyed by a hash of the text and of hlodiff's version, grammar and parser
sources, so an upgrade never serves a stale model.

Where: ``$HLODIFF_CACHE_DIR``, else ``$XDG_CACHE_HOME/hlodiff``, else ``~/.cache/hlodiff``,
created 0700; a directory that is not the user's own or that others can write is not used
(an older hlodiff's 0755 directory holding only cache files is closed to 0700).
Files are written 0600 through a temporary file and a rename.

How big: at most ``$HLODIFF_CACHE_MAX_MB`` megabytes (default 512); after each store the
least recently used entries are removed until the cache fits. ``hlodiff cache info`` and
``hlodiff cache clear`` show and empty it.
"""

from __future__ import annotations

import hashlib
import os
import warnings
import stat
import time
from pathlib import Path
from typing import Optional, Tuple

import msgspec

from .. import __version__
from ..errors import HloWarning
from ..hlo.gcpause import gc_paused
from ..hlo.model import (_NO_CALLS, _NO_EXTRA, Computation, Instruction, Layout, Metadata,
                         Module, Shape, StackTables)
from ..hlo.grammarfile import grammar_text
from ..userdirs import (is_cache_file, private_cache_dir, read_private_file,
                        write_private_file)

_MIN_SIZE = 16 * 1024  # smaller texts parse in a few milliseconds: not worth a file
_FORMAT = 1  # bump when the layout below changes
SUFFIX = ".hlom"  # cache entries; anything else in the directory is left alone
DEFAULT_MAX_MB = 512

# The schema a cache file must match; anything else is a miss. Shapes and layouts are
# tables referenced by index (children before parents), so nesting depth never recurses.
_LayoutRow = Tuple[Tuple[int, ...], str]
_ShapeRow = Tuple[str, Optional[str], Tuple[int, ...], Tuple[bool, ...], int, Tuple[int, ...]]
_MetaRow = Tuple[Optional[str], Optional[str], Optional[str], Optional[int], Optional[int],
                 dict[str, str]]
_InstrRow = Tuple[str, str, int, list[str], bool, dict[str, str], Tuple[str, ...],
                  dict[str, Tuple[str, ...]], Optional[_MetaRow], Optional[str], Optional[int],
                  Optional[Tuple[int, ...]], Optional[str], Optional[str], Optional[str],
                  Optional[int], Tuple[str, ...], int]
_CompRow = Tuple[str, str, bool, Optional[str], Optional[str], int, list[_InstrRow]]
_Tables = Tuple[dict[int, str], dict[int, str], dict[int, dict[str, int]],
                dict[int, dict[str, int]]]
_Payload = Tuple[int, str, str, dict[str, str], _Tables, list[_LayoutRow], list[_ShapeRow],
                 list[_CompRow]]

_decoder: msgspec.msgpack.Decoder | None = None
_salt: bytes | None = None


def _key(text: str) -> str:
    global _salt
    if _salt is None:
        src = Path(__file__).resolve().parent.parent / "hlo"
        h = hashlib.sha256(f"{__version__}/{_FORMAT}".encode() + grammar_text().encode())
        for f in sorted(src.glob("*.py")):  # the model's shape depends on the parser's code too
            h.update(f.read_bytes())
        _salt = h.digest()
    return hashlib.sha256(_salt + text.encode("utf-8", "surrogatepass")).hexdigest()


def max_bytes() -> int:
    """The size limit: ``$HLODIFF_CACHE_MAX_MB`` (default 512) megabytes; 0 disables storing."""
    try:
        mb = float(os.environ.get("HLODIFF_CACHE_MAX_MB", DEFAULT_MAX_MB))
    except ValueError:
        mb = DEFAULT_MAX_MB
    return int(max(mb, 0) * 1024 * 1024)


def entries(d: Path) -> list[tuple[Path, os.stat_result]]:
    """The cache's files with their stat, regular files only."""
    out = []
    try:
        with os.scandir(d) as it:
            for e in it:
                if is_cache_file(e.name):
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISREG(st.st_mode):
                        out.append((Path(e.path), st))
    except OSError:
        pass
    return out


def evict(d: Path, limit: int) -> int:
    """Remove least recently used entries until the cache holds at most ``limit`` bytes."""
    files = sorted(entries(d), key=lambda e: e[1].st_mtime)
    total = sum(st.st_size for _, st in files)
    removed = 0
    now = time.time()
    for f, st in files:
        if total <= limit:
            break
        if f.name.endswith(".tmp") and now - st.st_mtime < 600:
            continue  # another process may be writing it
        try:
            f.unlink()
            total -= st.st_size
            removed += 1
        except OSError:
            pass
    return removed


def clear() -> tuple[int, int]:
    """Remove every cache entry; (files, bytes) removed."""
    d = private_cache_dir(create=False)
    if d is None:
        return 0, 0
    n = size = 0
    for f, st in entries(d):
        try:
            f.unlink()
            n += 1
            size += st.st_size
        except OSError:
            pass
    return n, size


# --- encoding -------------------------------------------------------------------------------

def _encode(module: Module) -> bytes:
    layouts: dict[int, int] = {}
    layout_rows: list = []
    shapes: dict[int, int] = {}
    shape_rows: list = []

    def layout_index(lay: Layout | None) -> int:
        if lay is None:
            return -1
        i = layouts.get(id(lay))
        if i is None:
            i = layouts[id(lay)] = len(layout_rows)
            layout_rows.append((lay.minor_to_major, lay.extras))
        return i

    def shape_index(s: Shape) -> int:
        i = shapes.get(id(s))
        if i is not None:
            return i
        stack = [(s, False)]  # iterative post-order: children get smaller indices
        while stack:
            sh, done = stack.pop()
            if id(sh) in shapes:
                continue
            if not done:
                stack.append((sh, True))
                stack.extend((c, False) for c in reversed(sh.tuple_shapes) if id(c) not in shapes)
                continue
            shapes[id(sh)] = len(shape_rows)
            shape_rows.append((sh.text, sh.element_type, sh.dims, sh.dynamic,
                               layout_index(sh.layout),
                               tuple(shapes[id(c)] for c in sh.tuple_shapes)))
        return shapes[id(s)]

    comps = []
    for c in module.computations:
        rows = []
        for i in c.instructions:
            md = i.metadata
            mrow = None if md is None else (md.op_type, md.op_name, md.source_file,
                                            md.source_line, md.stack_frame_id, md.extra)
            rows.append((i.name, i.opcode, shape_index(i.shape), i.operands, i.is_root, i.attrs,
                         i.calls, i.called, mrow, i.literal, i.parameter_number, i.dimensions,
                         i.fusion_kind, i.custom_call_target, i.async_wrapped, i.index,
                         i.control_predecessors, i.line))
        comps.append((c.name, c.root, c.is_entry, c.signature, c.execution_thread, c.line, rows))
    t = module.tables
    payload = (_FORMAT, module.name, module.entry, module.attributes,
               (t.file_names, t.function_names, t.file_locations, t.stack_frames),
               layout_rows, shape_rows, comps)
    return msgspec.msgpack.encode(payload)


def _decode(data: bytes) -> Module:
    """The Module of a cache file; ValueError when it is not one of ours."""
    global _decoder
    if _decoder is None:
        _decoder = msgspec.msgpack.Decoder(_Payload)
    try:
        fmt, name, entry, attributes, tables, layout_rows, shape_rows, comps = _decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise ValueError(str(e)) from None
    if fmt != _FORMAT:
        raise ValueError("another format")
    layouts = [Layout(m, x) for m, x in layout_rows]
    shapes: list[Shape] = []
    for text, etype, dims, dyn, lay, kids in shape_rows:
        if lay >= len(layouts) or any(k >= len(shapes) or k < 0 for k in kids):
            raise ValueError("bad shape reference")
        shapes.append(Shape(text, etype, dims, dyn, layouts[lay] if lay >= 0 else None,
                            tuple(shapes[k] for k in kids)))
    computations = []
    nshapes = len(shapes)
    for cname, root, is_entry, sig, thread, cline, rows in comps:
        insts = []
        for (iname, opcode, si, operands, is_root, attrs, calls, called, m, literal, pnum,
             dims, kind, target, wrapped, index, preds, line) in rows:
            if not 0 <= si < nshapes:
                raise ValueError("bad shape reference")
            md = None if m is None else Metadata(m[0], m[1], m[2], m[3], m[4], m[5] or _NO_EXTRA)
            insts.append(Instruction(iname, opcode, shapes[si], operands, cname, is_root, attrs,
                                     calls, called or _NO_CALLS, md, literal, pnum, dims, kind,
                                     target, wrapped, index, preds, line))
        computations.append(Computation(cname, insts, root, is_entry, sig, thread, cline))
    module = Module(name, computations, entry, attributes, StackTables(*tables))
    if entry not in module.by_name or any(c.root not in c.by_name for c in computations):
        raise ValueError("inconsistent module")
    return module


def _store(d: Path, f: Path, module: Module) -> None:
    limit = max_bytes()
    if limit <= 0:
        return
    try:
        data = _encode(module)
    except (OverflowError, TypeError, ValueError, RecursionError, msgspec.EncodeError):
        return  # e.g. an integer beyond 64 bits: not cached, parsed each time
    if len(data) <= limit and write_private_file(d, f.name, data):
        evict(d, limit)


def parse(text: str, path: str | None = None) -> Module:
    """The parser, imported on a miss only: a cache hit needs neither it nor lark (speed)."""
    from ..hlo.parser import parse as parse_text

    return parse_text(text, path)


def cached_parse(text: str, path: str | None = None, use_cache: bool = True) -> Module:
    """``parse(text)``, through the cache when enabled and the text is large enough."""
    if not use_cache or len(text) < _MIN_SIZE or os.environ.get("HLODIFF_NO_CACHE"):
        return parse(text, path)
    d = private_cache_dir(create=True)
    if d is None:
        return parse(text, path)
    f = d / (_key(text) + SUFFIX)
    data = read_private_file(f)
    if data is not None:
        try:
            with gc_paused():
                module = _decode(data)
        except (ValueError, TypeError, IndexError, KeyError, RecursionError):
            module = None  # corrupt or foreign: parsed again and replaced below
        if module is not None:
            module.path = path
            try:
                os.utime(f)  # recently used: evicted last
            except OSError:
                pass
            return module
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", HloWarning)
        module = parse(text, path)
    for w in caught:  # shown as they would have been; a module that warned is not stored,
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)  # so every load warns
    if not any(issubclass(w.category, HloWarning) for w in caught):
        _store(d, f, module)
    return module
