"""Kernels that JAX 0.4.x's XLA:CPU parallel task assigner outlines into calls: the oracle
follows each to its own call (issue 9).

Fixture: fixtures/outlined_calls (fixtures/generate_outlined_calls.py: the unedited pass
snapshots around ``cpu-parallel-task-assigner`` of three group norm + SiLU blocks under
JAX 0.4.30 on CPU).
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.dumps.passes import find_pass_dumps, trace

D = Path(__file__).resolve().parent.parent / "fixtures" / "outlined_calls"


def test_each_outlined_kernel_goes_to_the_call_running_its_clone():
    """The pass outlines ``fusion.N`` as ``call.M = call(...), to_apply=parallel_fusion.N``
    whose root is ``fusion.N.clone``. Each block's normalizing kernel is read by another
    outlined kernel: the trace had left those without a place (the rule that follows a
    removed instruction's users found the users removed too), and every value computed
    there had no destination."""
    t = trace(find_pass_dumps(D, "jit_groupnorm_silu_step"))
    snap = next(p for p in D.glob("*.txt") if "after_cpu-parallel-task-assigner" in p.name)
    text = snap.read_text()
    runs = {}
    for line in text.splitlines():  # call.M = ... to_apply=parallel_fusion.N
        if " call(" in line and "to_apply=parallel_fusion." in line:
            name = line.split("=")[0].strip().lstrip("%")
            comp = line.split("to_apply=")[1].split(",")[0].split()[0]
            runs[comp] = name
    checked = 0
    for name, f in t.fates.items():
        if not name.startswith("fusion.") or f.fate != "rewritten":
            continue
        comp = "parallel_fusion." + name.split(".", 1)[1]
        if comp in runs:
            assert t.destinations(name) == [runs[comp]], (name, t.destinations(name))
            checked += 1
    assert checked >= 8
