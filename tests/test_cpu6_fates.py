"""Single-device CPU fates, sixth round (issue 9; cpu6 helper): loop bodies the call inliner
cloned per call site.

Fixtures: fixtures/cpu6 (written by fixtures/generate_cpu6.py; XLA's own dumps, jax 0.10.2).
"""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

CPU6 = Path(__file__).resolve().parent.parent / "fixtures" / "cpu6" / "cpu"


def _pair(program: str):
    d = CPU6 / program
    before = hlodiff.load(next(d.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    return before, after, diff_modules(before, after)


def test_literals_of_a_loop_body_cloned_per_call_are_fused_in_every_copy():
    """mixup_permutation: jax.random.beta calls ``_gamma`` twice with the same op_name
    (``jit(_gamma)``); the loop bodies inside it are cloned for each call and every copy's
    instructions carry ``.../jit(_gamma)/vmap()/while/body/...``. The view instantiates the
    body once; without that shared prefix its literals matched nothing and were "simplified
    away". ``constant.146`` (a literal of erf_inv in ``_normal_real.26``, inlined into the
    nested body ``region_9.28``) and the polynomial coefficients beside it are fused; which
    call's kernel holds the first call's copy the names no longer tell (the loop passes rebuilt
    both bodies), so both kernels are listed and none is named."""
    _, _, r = _pair("mixup_permutation")
    for name in ("constant.146", "constant.147", "constant.150", "constant.169"):
        f = r.fate_of("_normal_real.26", name)
        assert f.fate == "fused", (name, f)
        assert f.fusion is None and len(f.candidates) >= 2, (name, f)
        assert "multiply_select_fusion" in f.candidates, (name, f)


def test_first_call_keeps_the_original_body():
    """two_calls: flatten-call-graph gives the second call ``region_0.1.clone``; the first
    call's loop runs ``region_0.1`` to the end (``while.14``). The oracle (pass dumps) and
    the engine both name the first call's kernels, not withheld as twins."""
    d = CPU6 / "two_calls"
    snaps = find_pass_dumps(d, "jit_two_calls")
    before = hlodiff.load(find_before_file(snaps))
    oracle = trace(snaps, before)
    after = hlodiff.load(next(d.glob("*cpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    for name, where in (("constant.8", "broadcast_multiply_fusion"),
                        ("mul.3", "broadcast_multiply_fusion"), ("add.2", "wrapped_add")):
        assert oracle.destinations(name) == [where], name
        f = r.fate_of("region_0.1", name)
        assert (f.fate, f.fusion, f.candidates) == ("fused", where, []), (name, f)
    f = r.fate_of("region_0.1", "constant.9")
    assert (f.fate, f.after) == ("kept", "constant.9"), f
