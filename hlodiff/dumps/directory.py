"""Dump directories written with ``--xla_dump_to``: which modules they hold, and which one to
read when the user names only the directory."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

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
    pairs: dict[tuple[str, str, str], DumpPair] = {}
    try:
        listing = list(d.iterdir())
    except OSError as e:
        raise InputError(f"{d}: cannot list the directory: {e.strerror}") from None
    for p in listing:
        m = _DUMP_NAME.match(p.name)
        if not m or not p.is_file():
            continue
        mid, name, kind = m.groups()
        prefix = p.name[:p.name.index(mid)]  # keyed by program too: ids repeat across programs
        pair = pairs.setdefault((prefix, mid, name), DumpPair(mid, name, None, None))
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
    if module is None:
        _check_unambiguous(d, find_dumps(d))
    return pairs[0]


def _check_unambiguous(d: Path, pairs: list[DumpPair]) -> None:
    """Two programs dumped into one directory both number their modules from 0: a module id
    that names two different modules makes 'the largest module' a guess. Refuse it."""
    names: dict[str, set[str]] = {}
    for p in pairs:
        names.setdefault(p.module_id, set()).add(p.name)
    clash = sorted((mid, sorted(ns)) for mid, ns in names.items() if len(ns) > 1)
    if clash:
        mid, ns = clash[0]
        raise InputError(f"{d}: ambiguous dump directory: {mid} names {len(ns)} modules "
                         f"({', '.join(ns[:3])}); more than one program dumped here. "
                         "Choose one with --module NAME, or pass the two files")
