"""Call sites as the pass walk sees them (passstep.py): the metadata the call inliner gives an
instruction's copy, and what a conditional branch's parameter stands for."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from ..hlo.model import Instruction, Module


def branch_arguments(module: Module, top: Iterable[Instruction],
                     call_sites: dict[str, list[Instruction]]) -> dict[str, dict[str, str]]:
    """Parameter name -> the operand it stands for, for the branches of conditionals that
    nothing else calls. The conditional simplifier may inline both branches of a cheap
    conditional and select between their results: the branch's instructions are then
    copied, under new names, reading the conditional's operand where they read the
    parameter (fresh 18 randaugment_vmapped_switch_cond_skip on H100, dump 0012:
    ``mul.56`` of ``region_37.49`` becomes ``mul.1`` of the entry computation)."""
    conds = [i for i in top if i.opcode == "conditional"]
    if not conds:
        return {}
    uses = Counter(c for i in conds for c in i.calls)
    out: dict[str, dict[str, str]] = {}
    for i in conds:
        for k, cname in enumerate(i.branches):
            comp = module.by_name.get(cname)
            if comp is None or uses[cname] != 1 or cname in call_sites or k + 1 >= len(i.operands):
                continue
            for p in comp.parameters:
                if p.parameter_number == 0:
                    out.setdefault(i.name, {})[p.name] = i.operands[k + 1]
    return out


def inlined_metadata(call_site: dict[str, Instruction],
                     r: Instruction) -> tuple[str | None, int | None] | None:
    """The (op_name, stack frame) call-inliner gives the copy of ``r`` it makes when it
    inlines ``r``'s computation at its only call site, and that call's computation at its
    own, and so on outward: each call prefixes the op_name with its own, and the first
    frame found (``r``'s own, else the innermost call's) is kept. None when ``r``'s
    computation is not called from exactly one call site."""
    rm = r.metadata
    op = rm.op_name if rm is not None else None
    frame = rm.stack_frame_id if rm is not None else None
    comp, hops, found = r.computation, 0, False
    while hops < 16:
        call = call_site.get(comp)
        if call is None:
            break
        found = True
        cm = call.metadata
        if cm is not None and cm.op_name:
            if not op:
                op = cm.op_name
            elif not op.startswith(cm.op_name):
                op = f"{cm.op_name}/{op}"
        if not frame and cm is not None:
            frame = cm.stack_frame_id
        comp, hops = call.computation, hops + 1
    return (op, frame) if found else None
