"""XLA's pass-by-pass dumps of one module: which pass did what to each instruction.

With ``--xla_dump_hlo_pass_re=.*`` XLA writes the whole module after every pass that
changed it, as ``module_NNNN.<name>.NNNN.<pipeline>.after_<pass>.before_<next>.txt``
(numbered in the order the passes ran). Walking consecutive snapshots tells, for every
instruction of the module before optimization, the first pass after which it is no longer
a top-level instruction, and what that pass did to it (its *fate*). This is the ground
truth the before/after diff engine is checked against.

Tracking is by instruction name (XLA keeps names across passes, and names are unique in
a module), following renames when a pass re-creates an identical instruction under a new
name (``call-inliner`` renumbers names; inlined callee instructions land in the caller
with new names), and following instructions into the fused computations that a fusion
pass creates (fused instructions are renamed too: they are matched by structure).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..errors import InputError
from ..hlo.model import Module
from .partitioning import partitioning as _partitioning
# re-exported: the public names of pass-by-pass dumps live here
from .passfiles import PassSnapshot, find_before_file, find_pass_dumps  # noqa: F401
from .passfiles import parse_pass_filename  # noqa: F401
from .passorphans import implicit_tuple_sources
from .passstep import PassStep, Removal, classify_pass  # noqa: F401
from .passstep import _diff_step, _scope_computations, _Snap

FATES = ("kept", "fused", "folded", "merged", "rewritten", "inlined", "removed")

@dataclass(slots=True)
class InstructionFate:
    """The oracle's verdict on one instruction of the before module."""

    name: str
    computation: str
    opcode: str
    fate: str = "kept"
    pass_name: str | None = None  # the pass that decided the fate (None: kept)
    pass_index: int | None = None
    fusion: str | None = None
    into: str | None = None
    final_name: str | None = None  # its name where it was last top-level
    history: list[tuple[int, str, str]] = field(default_factory=list)  # (index, pass, event)
    copies: list[tuple[int, str]] = field(default_factory=list)  # (dump, fusion) it was copied into

    @property
    def was_inlined(self) -> bool:
        return any(ev.startswith("inlined") for _, _, ev in self.history)


class PassTrace:
    """The fates of a before module's instructions, and what each pass did."""

    def __init__(self, before: Module, steps: list[PassStep],
                 fates: dict[str, InstructionFate], gone: dict[str, list[tuple[int, Removal]]]):
        self.before = before
        self.passes = steps
        self.fates = fates
        self._gone = gone
        self._by_index = {s.index: s for s in steps}

    def fate_of(self, name: str) -> tuple[str, str | None]:
        """(fate, pass name) of a before instruction; the pass is None for ``kept``."""
        f = self.fates[name.lstrip("%")]
        return f.fate, f.pass_name

    def info(self, name: str) -> InstructionFate:
        return self.fates[name.lstrip("%")]

    def changes(self, pass_index: int) -> PassStep:
        """The step of the dump with this sequence number."""
        try:
            return self._by_index[pass_index]
        except KeyError:
            raise KeyError(f"no pass dump numbered {pass_index}; have "
                           f"{[s.index for s in self.passes]}") from None

    def counts(self) -> Counter:
        return Counter(f.fate for f in self.fates.values())

    def by_pass(self) -> dict[str, Counter]:
        """Pass label -> fates it decided."""
        out: dict[str, Counter] = {}
        for s in self.passes:
            if s.fates:
                out[f"{s.index:04d} {s.pipeline}/{s.name}"] = Counter(s.fates.values())
        return out

    def chain(self, name: str, limit: int = 16) -> list[tuple[str, str | None, str | None]]:
        """The instruction's fate, then the fates of what replaced it, and so on.

        Each element is (fate, pass name, the replacement's name). Following ``into``
        tells e.g. that an instruction rewritten by algsimp lives on as a dot that was
        later fused: [("rewritten", "algsimp", "dot"), ("fused", "fusion", None)].
        """
        f = self.fates[name.lstrip("%")]
        out = [(f.fate, f.pass_name, f.into)]
        cur, idx = f.into, f.pass_index
        while cur and idx is not None and len(out) < limit:
            nxt = None
            for step in self.passes:  # renames (GPU rename-instructions) followed on the way
                if step.index <= idx or not step.changed:
                    continue
                if cur in step.renamed:
                    cur = step.renamed[cur]
                    continue
                rem = step.removed_by_name().get(cur) or _left_behind(step, cur)
                if rem is not None:
                    nxt = (step.index, rem)
                    break
            if nxt is None:
                out.append(("kept", None, None))
                break
            at, rem = nxt
            step = self._by_index[at]
            out.append((rem.fate, step.name, rem.into))
            if rem.fate == "fused":
                break
            cur, idx = rem.into, at
        return out

    def destination(self, name: str) -> str | None:
        """The top-level instruction of the final module that holds the value of a before
        instruction: its own final name when kept; the fusion it went into (followed
        through later fusions and renames); the survivor of a merge, the constant it was
        folded into, the replacement of a rewrite, each followed to the end. None when the
        value is gone (dead code) or the dumps do not say where it went."""
        f = self.fates[name.lstrip("%")]
        if f.fate == "kept":
            return f.final_name
        cur = f.fusion if f.fate == "fused" else f.into
        return self.follow(cur, f.pass_index)

    def destinations(self, name: str) -> list[str]:
        """Every top-level instruction of the final module holding the before instruction's
        value: ``destination``, and every fusion a fusion pass copied it (or what took its
        place) into: producers duplicated into several consumers, followed to the end."""
        f = self.fates[name.lstrip("%")]
        out: list[str] = []
        memo: dict[tuple[str, int], list[str]] = {}
        if f.fate == "kept":
            out.append(f.final_name or f.name)
        else:
            cur = f.fusion if f.fate == "fused" else f.into
            if cur is not None and f.pass_index is not None:
                out.extend(self._follow_all(cur, f.pass_index, memo, 0))
        for at, fusion in f.copies:
            for x in self._follow_all(fusion, at, memo, 0):
                if x not in out:
                    out.append(x)
        return implicit_tuple_sources(out)  # gpu2: %x#0 is element 0 of x (passorphans.py)

    def _follow_all(self, cur: str, after_index: int, memo: dict, depth: int) -> list[str]:
        key = (cur, after_index)
        if key in memo:
            return memo[key]
        memo[key] = []
        out: list[str] = []
        for step in self.passes:
            if step.index <= after_index or not step.changed and not step.copies and \
                    not step.rebuilt_orphans:
                continue
            rem = step.removed_by_name().get(cur)
            for fusion in step.copies.get(cur, ()):
                if depth < 12 and not (rem is not None and rem.fusion == fusion):
                    out.extend(x for x in self._follow_all(fusion, step.index, memo, depth + 1)
                               if x not in out)
            if cur in step.renamed:
                cur = step.renamed[cur]
                continue
            if rem is None and cur in step.rebuilt_orphans:  # loops4 (_left_behind)
                rem = _left_behind(step, cur)
            if rem is None:
                continue
            nxt = rem.fusion if rem.fate == "fused" else rem.into
            if nxt is None:
                memo[key] = out
                return out
            cur = nxt
        if cur not in out:
            out.insert(0, cur)
        memo[key] = out
        return out

    def follow(self, cur: str | None, after_index: int | None) -> str | None:
        """Where the top-level instruction ``cur`` of the snapshot ``after_index`` ends up."""
        if cur is None or after_index is None:
            return cur
        for step in self.passes:
            if step.index <= after_index or not step.changed:
                continue
            if cur in step.renamed:
                cur = step.renamed[cur]
                continue
            rem = step.removed_by_name().get(cur) or _left_behind(step, cur)
            if rem is None:
                continue
            nxt = rem.fusion if rem.fate == "fused" else rem.into
            if nxt is None:
                return None
            cur = nxt
        return cur

    def final_fate(self, name: str) -> str:
        """Where the instruction's line of replacements ends (kept, fused, ...)."""
        return self.chain(name)[-1][0]

    def __repr__(self) -> str:
        return f"<PassTrace {len(self.passes)} passes, {dict(self.counts())}>"


@dataclass(slots=True)
class _LeftBehind:
    """A top-level instruction a pass left without users for DCE, as a removal."""
    name: str
    fate: str
    fusion: str | None = None
    into: str | None = None


def _left_behind(step, cur: str) -> _LeftBehind | None:
    """``cur`` (the current name of a line of replacements) was left without users by
    ``step``, its users all fused (``orphaned``) or folded (``fold_orphans``, XLA 0.4.x):
    its value went with them in that pass, as for a before instruction (old2 helper).
    zoo/old (JAX 0.4.30) gnn_segment_max: gather.110 lives on as ``constant.127 = s32[1]
    constant({20})``; dump 0025 ``subtract.112 = subtract(constant.127, constant.129)``;
    dump 0026 (constant_folding) folds subtract.112 and leaves constant.127 without users;
    dump 0028 (dce) deletes it. Its line ends folded at 0026, not removed by DCE."""
    if cur in step.orphaned:
        return _LeftBehind(cur, "fused", fusion=step.orphaned[cur])
    if cur in step.fold_orphans:
        return _LeftBehind(cur, "folded", into=step.fold_orphans[cur])
    if cur in step.rebuilt_orphans:  # loops4: e.g. the init tuple of a rebuilt loop
        return _LeftBehind(cur, "rewritten", into=step.rebuilt_orphans[cur])
    return None


def _load(path: Path) -> Module:
    from .loader import load  # late: keeps this module importable on its own
    return load(path)


def trace(snapshots: Iterable[PassSnapshot], before: Module | None = None) -> PassTrace:
    """Walk consecutive snapshots and decide every before instruction's fate.

    ``before`` is the module before optimization (``before_optimizations.txt``); when
    None, the snapshot next to the dumps is loaded, else the first snapshot is used.
    """
    snaps = list(snapshots)
    if not snaps:
        raise InputError("no pass dumps to trace")
    if before is None:
        bf = find_before_file(snaps)
        before = _load(bf) if bf else _load(snaps[0].path)

    fates: dict[str, InstructionFate] = {}
    lit_ids: dict[tuple, int] = {}  # literal contents, numbered alike in every snapshot
    prev = _Snap(before, lit_ids)
    live: dict[str, str] = {}  # current name -> before name
    for cname in _scope_computations(before):
        for i in before.by_name[cname].instructions:
            fates[i.name] = InstructionFate(i.name, cname, i.opcode, final_name=i.name)
            live[i.name] = i.name

    steps: list[PassStep] = []
    gone: dict[str, list[tuple[int, Removal]]] = {}
    last_pipeline = ""
    for snap in snaps:
        cur = _Snap(_load(snap.path), lit_ids)
        step = _diff_step(prev, cur, snap, _partitioning(snap, last_pipeline))
        last_pipeline = snap.pipeline
        steps.append(step)
        for rem in step.removed:
            gone.setdefault(rem.name, []).append((snap.index, rem))
        for name, fus in step.copies.items():
            b = live.get(name)
            if b is not None:
                fates[b].copies.extend((snap.index, x) for x in fus)
        if step.changed or step.orphaned or step.fold_orphans or step.rebuilt_orphans:
            new_live: dict[str, str] = {}
            removed = {r.name: r for r in step.removed}
            for name, b in live.items():
                f = fates[b]
                if name in step.orphaned:
                    # all its users fused, the original left behind for DCE
                    f.fate, f.pass_name, f.pass_index = "fused", snap.after_pass, snap.index
                    f.fusion = step.orphaned[name]
                    f.history.append((snap.index, snap.after_pass,
                                      "fused (original left without users)"))
                    step.fates[b] = "fused"
                elif name in step.fold_orphans:  # its users folded, itself left for DCE
                    f.fate, f.pass_name, f.pass_index = "folded", snap.after_pass, snap.index
                    f.into = step.fold_orphans[name]
                    f.history.append((snap.index, snap.after_pass,
                                      "folded (original left without users)"))
                    step.fates[b] = "folded"
                elif name in step.rebuilt_orphans:  # gpu2: a view whose users were forwarded
                    f.fate, f.pass_name, f.pass_index = "rewritten", snap.after_pass, snap.index
                    f.into = step.rebuilt_orphans[name]
                    f.history.append((snap.index, snap.after_pass,
                                      "rewritten (users forwarded to what it viewed; left for DCE)"))
                    step.fates[b] = "rewritten"
                elif name in step.renamed:
                    new = step.renamed[name]
                    new_live[new] = b
                    f.final_name = new
                    moved = cur.top[new].computation != prev.top[name].computation
                    ev = ("inlined as " if moved and step.kind == "inlined" else "renamed to ")
                    f.history.append((snap.index, snap.after_pass, ev + new))
                elif name in removed:
                    r = removed[name]
                    f.fate, f.pass_name, f.pass_index = r.fate, snap.after_pass, snap.index
                    f.fusion, f.into = r.fusion, r.into
                    f.history.append((snap.index, snap.after_pass, r.fate))
                    step.fates[b] = r.fate
                else:
                    new_live[name] = b
            live = new_live
        prev = cur
    return PassTrace(before, steps, fates, gone)


def trace_directory(directory: str | os.PathLike,
                    module_hint: str | os.PathLike | None = None) -> PassTrace:
    """find_pass_dumps + trace, with the module's before_optimizations dump as the start."""
    snaps = find_pass_dumps(directory, module_hint)
    bf = find_before_file(snaps)
    if bf is None:
        raise InputError(f"{directory}: no {snaps[0].module_id}.{snaps[0].module_name}"
                         ".before_optimizations.txt next to the pass dumps")
    return trace(snaps, _load(bf))


