"""Code the first dead-code elimination removes before the call inliner runs (oldh2).

XLA:CPU runs HloDCE first (the ``sharding-removal`` pipeline), before the call inliner.
HloDCE works computation by computation: in each it deletes the instructions without users
that are not the root and have no side effects (repeatedly, so whole dead chains go), and
then the computations nothing calls any more (``RecursivelyRemoveDeadComputations``). An
instruction of a called computation that does not reach *its computation's* root is
therefore removed before anything inlines it, and so is every instruction of a computation
whose every caller was removed.

Evidence: fresh slogdet_flow, JAX 0.4.30, dump 0000 -> 0001 (sharding-removal dce). In
``slogdet_0.171`` (called by ``call.320``) the LU permutation loop ``while.200`` and what
computes its input and reads its result (``iota.198``, ``subtract.191``, ``call.210``,
``call.212``...) reach nothing of the callee's root: they are gone in dump 0001, with the
computations only they called (``region_0.76``, ``None.42``, ``count_nonzero.123``,
``remainder.142``...). Before this module the engine called them "inlined" (their callee is
called from several places) or "merged" (identical to live code CSE keeps), while the dumps
show them removed as dead code before any inlining or CSE ran.

XLA of JAX 0.10.2 runs flatten-call-graph before that DCE: a computation called from
several places is cloned per call site first, and a dead call site's own copy goes as well
(flattened.py; fates.py asks both). Fresh slogdet_flow on the CPU (jax 0.10.2): the
dead first site's ``closed_call.3`` instructions (``lt.5``, ``add.13``...), "merged"
before, are removed at dump 0004.

Only where the call inliner does not run first (``value_facts.inliner_before_dce``: GPU and
partitioned programs inline first, and the inliner copies only what a callee's root needs).
"""

from __future__ import annotations

from ..hlo.model import Module

# opcodes HloDCE never deletes (HloInstruction::HasSideEffect), with what they read
_SIDE_EFFECTS = {"send", "send-done", "recv", "recv-done", "infeed", "outfeed", "trace",
                 "rng-get-and-update-state", "after-all"}


def has_side_effect(inst) -> bool:
    """HloInstruction::HasSideEffect for one instruction (its callees not looked into)."""
    if inst.opcode in _SIDE_EFFECTS:
        return True
    if inst.opcode == "custom-call":
        return str(inst.attrs.get("custom_call_has_side_effect", "")).lower() == "true"
    return False


def first_dce_dead(module: Module) -> set[tuple[str, str]]:
    """(computation, instruction) pairs HloDCE removes from the module as written: those
    reaching neither their computation's root nor a side effect, and every instruction of
    a computation only removed instructions call (see above). Entry parameters and
    parameters of live computations stay."""
    comps = {c.name: c for c in module.computations}
    local: dict[str, set[str]] = {}
    for c in module.computations:
        live: set[str] = set()
        todo = [c.root] + [i.name for i in c.instructions if has_side_effect(i)]
        while todo:
            n = todo.pop()
            if n in live or n not in c.by_name:
                continue
            live.add(n)
            todo.extend(c.by_name[n].operands)
        local[c.name] = live
    called: set[str] = set()
    todo = [module.entry]
    while todo:
        cname = todo.pop()
        if cname in called or cname not in comps:
            continue
        called.add(cname)
        c = comps[cname]
        for n in local[cname]:
            todo.extend(c.by_name[n].calls)
    out: set[tuple[str, str]] = set()
    for c in module.computations:
        keep = local[c.name] if c.name in called else set()
        for i in c.instructions:
            if i.name not in keep and i.opcode != "parameter":
                out.add((c.name, i.name))
    return out
