"""Finding XLA's pass-by-pass dump files of one module in a dump directory.

With ``--xla_dump_hlo_pass_re=.*`` XLA writes the module after every pass that changed it,
as ``module_NNNN.<name>.NNNN.<pipeline>.after_<pass>.before_<next>.txt``. A directory may
hold the dumps of several modules (the GPU compiler also compiles one small module per
fusion on the side); these helpers pick one and order its snapshots.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

# module_0026.jit_mlp_step.0007.simplification.after_pipeline-start.before_algsimp.txt
_PASS_FILE = re.compile(r"^(?P<mid>module_\d+)\.(?P<module>.+?)\.(?P<seq>\d{4})\.(?P<rest>.+)\.txt$")
_REST = re.compile(r"^(?P<pipeline>.*?)\.after_(?P<after>.*?)(?:\.before_(?P<before>.*))?$")
_MODULE_ID = re.compile(r"(module_\d+)")

# ---------------------------------------------------------------------------------------
# Finding the dumps
# ---------------------------------------------------------------------------------------

@dataclass(slots=True, frozen=True)
class PassSnapshot:
    """One pass dump: the whole module as it was after ``after_pass`` ran."""

    index: int  # XLA's sequence number of the dump (the NNNN after the module name)
    pipeline: str  # e.g. "simplification", "HLO_passes_after_layout_assignment"
    after_pass: str  # e.g. "algsimp", "cse", "fusion", "pipeline-start"
    before_pass: str | None  # the pass that runs next, when the file name says
    path: Path
    module_id: str = ""  # "module_0026"
    module_name: str = ""  # "jit_mlp_step"

    @property
    def name(self) -> str:
        """The pass this snapshot is the result of (``after_pass``)."""
        return self.after_pass

    @property
    def label(self) -> str:
        return f"{self.index:04d} {self.pipeline}/{self.after_pass}"


def parse_pass_filename(path: str | os.PathLike) -> PassSnapshot | None:
    """The snapshot a pass-dump file name describes, or None for any other file."""
    p = Path(path)
    m = _PASS_FILE.match(p.name)
    if not m:
        return None
    r = _REST.match(m.group("rest"))
    if not r:
        return None
    return PassSnapshot(index=int(m.group("seq")), pipeline=r.group("pipeline"),
                        after_pass=r.group("after"), before_pass=r.group("before"),
                        path=p, module_id=m.group("mid"), module_name=m.group("module"))


def find_pass_dumps(directory: str | os.PathLike,
                    module_hint: str | os.PathLike | None = None) -> list[PassSnapshot]:
    """The pass dumps of one module in ``directory``, in the order XLA wrote them.

    ``module_hint`` picks the module when the directory holds dumps of several: a module
    name (``jit_mlp_step`` or ``mlp_step``), a module id (``module_0026``) or the path of
    one of the module's dump files (e.g. its ``before_optimizations.txt``).
    """
    d = Path(directory)
    if not d.exists():
        raise InputError(f"{d}: no such directory")
    if not d.is_dir():
        raise InputError(f"{d}: is not a directory; expected an XLA dump directory "
                         "written with --xla_dump_hlo_pass_re=.*")
    groups: dict[str, list[PassSnapshot]] = {}
    for entry in os.scandir(d):
        if not entry.is_file():
            continue
        snap = parse_pass_filename(entry.path)
        if snap is not None:
            groups.setdefault(snap.module_id, []).append(snap)
    if not groups:
        raise InputError(f"{d}: no pass-by-pass HLO dumps found (files like "
                         "module_NNNN.<name>.NNNN.<pipeline>.after_<pass>...txt); "
                         "dump with XLA_FLAGS='--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*'")
    if module_hint is not None:
        chosen = _pick(groups, module_hint)
        if not chosen:
            raise InputError(f"{d}: no pass dumps of module {str(module_hint)!r}; "
                             f"found {_describe(groups)}")
        if len(chosen) > 1:
            raise InputError(f"{d}: module hint {str(module_hint)!r} matches several dumped "
                             f"modules ({_describe({k: groups[k] for k in chosen})}); "
                             "pass a module id such as module_0026")
        key = chosen[0]
    elif len(groups) == 1:
        key = next(iter(groups))
    else:
        key = _main_module(d, groups)
        if key is None:
            raise InputError(f"{d}: pass dumps of several modules ({_describe(groups)}); "
                             "say which one (a module name, a module id or its before file)")
    snaps = groups[key]
    snaps.sort(key=lambda s: s.index)
    return snaps


def _main_module(d: Path, groups: dict[str, list[PassSnapshot]]) -> str | None:
    """The program's module when a directory holds several: the GPU compiler also dumps one
    small module per fusion it compiles on the side (autotuning, cuBLAS rewrites); those
    have no ``before_optimizations`` file. Of the modules that have one, the largest."""
    sized = []
    for k, v in groups.items():
        bf = d / f"{k}.{v[0].module_name}.before_optimizations.txt"
        if bf.is_file():
            sized.append((bf.stat().st_size, len(v), k))
    if not sized:
        return None
    sized.sort(reverse=True)
    if len(sized) > 1 and sized[0][:2] == sized[1][:2]:
        return None
    return sized[0][2]


def _describe(groups: dict[str, list[PassSnapshot]]) -> str:
    return ", ".join(f"{k}.{v[0].module_name} ({len(v)} files)" for k, v in sorted(groups.items()))


def _pick(groups: dict[str, list[PassSnapshot]], hint: str | os.PathLike) -> list[str]:
    text = str(hint)
    base = Path(text).name
    m = _MODULE_ID.match(base)
    if m and m.group(1) in groups:
        return [m.group(1)]
    names = {k: v[0].module_name for k, v in groups.items()}
    for cand in (base, base.removesuffix(".txt")):
        exact = [k for k, n in names.items() if n == cand]
        if exact:
            return exact
    exact = [k for k, n in names.items() if n in (f"jit_{base}", base.split(".")[0])]
    return exact


def find_before_file(snapshots: list[PassSnapshot]) -> Path | None:
    """The ``before_optimizations.txt`` dump next to the snapshots, when there is one."""
    if not snapshots:
        return None
    s = snapshots[0]
    p = s.path.with_name(f"{s.module_id}.{s.module_name}.before_optimizations.txt")
    return p if p.is_file() else None
