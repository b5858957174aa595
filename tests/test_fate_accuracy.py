"""Acceptance: the diff engine's fates agree with XLA's own pass-by-pass record.

For every fixture program dumped with ``--xla_dump_hlo_pass_re=.*`` the oracle
(``hlodiff.dumps.passes.trace``) says, for each instruction of the before module, which pass
first took it out of the top level and what that pass does (fuse, CSE, constant-fold,
rewrite, inline, delete). ``diff_modules(before, after)`` only sees the two ends; it must
agree with the oracle on at least 95% of the instructions both classify.

Rules of the comparison:

* parameters and the entry's ROOT tuple are left out (they are trivially kept, and
  parameters of inlined callees have no after-side counterpart at all);
* an instruction the oracle saw inlined (and renamed) by ``call-inliner`` before its
  decisive pass may be reported as ``inlined`` or with its later fate;
* an instruction the oracle saw ``rewritten`` may be reported with the fate at the end of
  its line of replacements (``PassTrace.chain``): e.g. a dot whose operand transposes
  algsimp folded into it, then fused, may be reported ``fused``.

The named target (the fusion, survivor, constant or replacement the engine says now holds
the value) must be one of the final module's instructions the oracle followed the value to
(``PassTrace.destinations``). The rules live in ``hlodiff.diff.accuracy``, shared with
``benchmarks/accuracy.py``, which measures the same on the zoo of ``benchmarks/zoo.py``.

Run with ``-s`` to see the per-program table and every disagreement.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import hlodiff
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

CPU = Path(__file__).resolve().parent.parent / "fixtures" / "cpu"
THRESHOLD = 0.95
TARGET_FLOOR = 0.80  # named target, per program (the lowest measured: 81.5%)
TARGET_OVERALL = 0.97  # named target over all programs (measured: 97.6%)


def _programs_with_pass_dumps() -> list[str]:
    out = []
    for d in sorted(p for p in CPU.iterdir() if p.is_dir()):
        if any(d.glob("module_*.[0-9][0-9][0-9][0-9].*.txt")):
            out.append(d.name)
    return out


PROGRAMS = _programs_with_pass_dumps()


def _after_file(before: Path) -> Path:
    p = before.with_name(before.name.replace("before_optimizations.txt",
                                             "cpu_after_optimizations.txt"))
    if not p.is_file():
        cands = sorted(before.parent.glob(f"{before.name.split('.before_')[0]}"
                                          ".*after_optimizations.txt"))
        cands = [c for c in cands if "buffer-assignment" not in c.name]
        assert cands, f"no after_optimizations dump next to {before}"
        p = cands[0]
    return p


def compare(program: str):
    """The engine against the oracle on one fixture program (hlodiff.diff.accuracy)."""
    from hlodiff.diff import diff_modules
    from hlodiff.diff.accuracy import compare as against_oracle

    d = CPU / program
    snaps = find_pass_dumps(d)
    before_path = find_before_file(snaps)
    before = hlodiff.load(before_path)
    after = hlodiff.load(_after_file(before_path))
    return against_oracle(before, trace(snaps, before), diff_modules(before, after))


def _report(program, c) -> str:
    from hlodiff.diff.accuracy import report
    return report(program, c, THRESHOLD)


# Programs still below the threshold, with the measured agreement and why (see
# ``python tests/test_fate_accuracy.py`` for every disagreement). strict: an improvement
# that lifts one over the threshold makes the xfail fail, so the mark gets removed.
KNOWN_GAPS: dict[str, str] = {}


def _param(program: str):
    if program in KNOWN_GAPS:
        return pytest.param(program, marks=pytest.mark.xfail(strict=True,
                                                             reason=KNOWN_GAPS[program]))
    return program


@pytest.mark.parametrize("program", [_param(p) for p in PROGRAMS])
def test_fates_agree_with_pass_dumps(program):
    c = compare(program)
    report = _report(program, c)
    print("\n" + report)
    assert c.total > 0, report
    assert c.rate >= THRESHOLD, report
    # where the engine names the after instruction holding the value, it is one the
    # dumps show holding it (fusion copies count: a producer may live in several)
    assert c.target_total > 0 and c.target_rate >= TARGET_FLOOR, report


@pytest.mark.slow
def test_named_targets_over_all_programs():
    agree = total = 0
    for p in PROGRAMS:
        c = compare(p)
        agree, total = agree + c.target_agree, total + c.target_total
    assert total > 1000 and agree / total >= TARGET_OVERALL, f"{agree}/{total}"


def test_readme_mlp_dots_agree_with_passes():
    """The README's MLP: transpose(dot(a, b)) became dot(b, a); the diff names the new dot,
    the same one ``hlodiff passes`` follows the value to."""
    from hlodiff.diff import diff_modules

    d = CPU / "mlp_step"
    snaps = find_pass_dumps(d)
    bp = find_before_file(snaps)
    before = hlodiff.load(bp)
    oracle = trace(snaps, before)
    result = diff_modules(before, hlodiff.load(_after_file(bp)))
    checked = 0
    for name, f in oracle.fates.items():
        if f.opcode != "dot":
            continue
        rec = result.fate_of(f.computation, name)
        assert rec is not None and rec.fate != "uncertain"
        want = oracle.destinations(name)
        got = rec.fusion if rec.fate == "fused" else (rec.fusion or rec.after)
        assert got in want, (name, rec.fate, got, want, rec.reason)
        if f.fate == "rewritten":
            assert rec.fate == "rewritten" and "simplified away" not in rec.reason
            checked += 1
    assert checked >= 3  # the three weight-gradient dots


def test_there_are_programs_to_check():
    assert {"mlp_step", "fold_cse"} <= set(PROGRAMS)


if __name__ == "__main__":  # python tests/test_fate_accuracy.py: the table for every program
    for prog in PROGRAMS:
        print(_report(prog, compare(prog)))
