"""The metadata the call inliner gives an instruction's copy (used by the pass walk to tell
identical removed instructions apart: passstep._best_candidate)."""

from __future__ import annotations

from ..hlo.model import Instruction


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
