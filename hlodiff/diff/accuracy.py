"""How far the diff's fates agree with XLA's own pass-by-pass record (the oracle).

Used by ``tests/test_fate_accuracy.py`` and ``benchmarks/accuracy.py``. Two figures:

* **fate category**: for each instruction of the before module (parameters and the entry's
  ROOT tuple left out), the engine's fate equals the oracle's (``hlodiff.dumps.passes``).
  Tolerated: an instruction the oracle saw inlined before its decisive pass may be reported
  ``inlined``; one the oracle saw ``rewritten`` may be reported with the fate at the end of
  its line of replacements (a line closed by a surviving replacement ends both "kept" and
  with its last event, e.g. "folded"; a line whose folded constant was then fused ends
  both "fused" and "folded"). ``uncertain`` never counts as agreeing.
* **named target**: where the engine names an after instruction (the fusion of ``fused``,
  the after instruction of ``kept``/``merged``/``folded``/``rewritten``) and the oracle
  knows the top-level instruction of the final module holding the value
  (``PassTrace.destination``), the two are the same.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..dumps.passes import PassTrace
from ..hlo.model import Module
from .result import DiffResult

CATEGORIES = ("kept", "fused", "folded", "merged", "rewritten", "inlined", "removed",
              "uncertain")


@dataclass(slots=True)
class Comparison:
    agree: int = 0
    total: int = 0
    target_agree: int = 0
    target_total: int = 0
    uncertain: int = 0
    skipped: Counter = field(default_factory=Counter)
    table: Counter = field(default_factory=Counter)  # (oracle fate, engine fate) -> n
    disagreements: list[tuple] = field(default_factory=list)
    target_misses: list[tuple] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.agree / self.total if self.total else 1.0

    @property
    def target_rate(self) -> float:
        return self.target_agree / self.target_total if self.target_total else 1.0


def engine_target(rec) -> str | None:
    """The after instruction the engine says holds the value, or None."""
    if rec.fate == "fused":
        return rec.fusion
    if rec.fate in ("kept", "merged", "folded", "rewritten"):
        return rec.fusion or rec.after
    return None


def line_end_fates(oracle: PassTrace, name: str) -> set[str]:
    """The fates at the end of a rewritten instruction's line of replacements.

    ``PassTrace.chain`` closes a line that nothing removes further with ("kept", None,
    None): its last replacement survived. After a real event (a fold, a merge) the line
    also ends with that event: zoo/cpu fft_conv1d holds two inlined copies of
    ``dynamic_update_slice(broadcast(c), ...)``; algsimp rewrites both (dump 0007: ``pad.1``,
    ``dynamic_update_slice.12``), constant_folding folds both (dump 0009: ``div.10 =
    broadcast(constant.37)``). One folded constant is folded again (line ends "folded"),
    the other survives as constant.38 (line ended "kept" only). The same history is judged
    the same: "folded" agrees for both (cpu3 helper)."""
    line = oracle.chain(name)
    out = {line[-1][0]}
    if len(line) > 2 and line[-1] == ("kept", None, None):
        out.add(line[-2][0])
    if len(line) > 2 and line[-1][0] == "fused" and line[-2][0] == "folded":
        # the folded literal was then copied into a kernel: zoo/old fft_conv1d multiply.44
        # ``rewritten (reshape-mover) -> folded (constant_folding) as constant.10 -> fused``;
        # the instruction's value was computed at compile time either way (cpu4)
        out.add("folded")
    return out


def wrapper_calls(after: Module) -> dict[str, str]:
    """Instruction name -> the top-level ``call`` that runs the computation holding it.

    XLA:CPU's parallel task assigner (JAX 0.4.x) outlines a fusion it splits into tasks:
    ``call.1 = call(a, b), to_apply=parallel_fusion.12`` whose computation holds
    ``fusion.12.clone``. The engine names the fusion (the kernel); the oracle follows the
    value to the call, an instruction of the computation that held the fusion: the entry,
    or a loop body (fresh 26 remat_gpt_neox_parallel_residual under JAX 0.4.30: the scan
    body's ``call.21`` runs ``fusion.15.clone``)."""
    comps = {c.name: c for c in after.computations}
    out: dict[str, str] = {}
    for comp in after.computations:
        for inst in comp.instructions:
            if inst.opcode != "call":
                continue
            for callee in inst.calls:
                c = comps.get(callee)
                if c is not None:
                    for i in c.instructions:
                        out.setdefault(i.name, inst.name)
    return out


def compare(before: Module, oracle: PassTrace, result: DiffResult,
            after: Module | None = None) -> Comparison:
    """The engine's fates of ``before``'s instructions against the oracle's (``after``, the
    module after optimization, lets a kernel inside a wrapper call count as the call)."""
    wrapped = wrapper_calls(after) if after is not None else {}
    entry = before.entry_computation
    cmp = Comparison()
    for name, f in oracle.fates.items():
        if f.opcode == "parameter":
            cmp.skipped["parameter"] += 1
            continue
        if f.computation == entry.name and name == entry.root and f.opcode == "tuple":
            cmp.skipped["entry ROOT tuple"] += 1
            continue
        rec = result.fate_of(f.computation, name)
        if rec is None:
            cmp.missing.append(f"{f.computation}/{name}")
            continue
        if rec.fate not in CATEGORIES:
            cmp.skipped[f"engine fate {rec.fate!r}"] += 1
            continue
        cmp.total += 1
        cmp.table[(f.fate, rec.fate)] += 1
        if rec.fate == "uncertain":
            cmp.uncertain += 1
        ok = rec.fate == f.fate
        if not ok and f.was_inlined and rec.fate == "inlined":
            ok = True
        if not ok and f.fate == "rewritten" and rec.fate in line_end_fates(oracle, name):
            ok = True
        if ok:
            cmp.agree += 1
        else:
            cmp.disagreements.append((f.computation, name, f.opcode,
                                      f"{f.fate}@{f.pass_name}", rec.fate, rec.reason or ""))
        mine = engine_target(rec)
        if mine is None:
            continue
        wants = oracle.destinations(name)
        if not wants:
            continue
        want = wants[0] if len(wants) == 1 else "|".join(wants)
        cmp.target_total += 1
        if mine in wants or wrapped.get(mine) in wants:
            cmp.target_agree += 1
        else:
            cmp.target_misses.append((f.computation, name, f.opcode, f.fate, rec.fate,
                                      want, mine))
    return cmp


def report(program: str, c: Comparison, threshold: float = 0.95) -> str:
    lines = [f"== {program}: {c.agree}/{c.total} agree ({c.rate:.1%}), threshold "
             f"{threshold:.0%}; named target {c.target_agree}/{c.target_total} "
             f"({c.target_rate:.1%}); uncertain {c.uncertain}"]
    if c.skipped:
        lines.append("   skipped: " + ", ".join(f"{k}: {v}" for k, v in sorted(c.skipped.items())))
    if c.missing:
        lines.append(f"   not reported by the engine ({len(c.missing)}): "
                     f"{' '.join(c.missing[:20])}")
    lines.append("   oracle -> engine counts:")
    for (o, e), n in sorted(c.table.items()):
        lines.append(f"     {o:10} -> {e:10} {n:4}{'' if o == e else '  *'}")
    if c.disagreements:
        lines.append("   disagreements (computation, instruction, opcode, oracle, engine, reason):")
        for comp, n, op, o, e, r in c.disagreements:
            lines.append(f"     {comp:22} {n:30} {op:18} {o:32} {e:10} {r[:80]}")
    if c.target_misses:
        lines.append("   named-target misses (computation, instruction, opcode, oracle fate, "
                     "engine fate, oracle target, engine target):")
        for t in c.target_misses:
            lines.append("     " + " ".join(f"{x}" for x in t))
    return "\n".join(lines)
