"""``jax.checkpoint`` (remat) in an optimized module: does the recomputation survive, and where
did the scheduler put it?

JAX names the recomputed operations of a checkpointed function ``.../checkpoint/
rematted_computation/...`` in op_name metadata, and fences them with an ``opt-barrier`` so
that XLA neither merges them with the forward pass (CSE) nor moves them. XLA removes the
barriers (pass ``cse_barrier_expander``): the GPU compiler after scheduling, the CPU compiler
before layout assignment, long before scheduling. Once they are gone, the scheduler may place
the recomputation right beside the forward pass: the work is done twice, yet every recomputed
value lives as long as the saved one would have, and the peak does not move.

This pass counts the recomputed kernels of the entry computation and where they sit: before
the first instruction of the backward pass (op_name ``transpose(...)``: the forward pass), or
after it. Grouped by the user's source line (a checkpointed function's lines).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..hlo.model import Module

MARK = "rematted_computation"


@dataclass
class RematReport:
    """Recomputed kernels of one module and where they are scheduled."""

    recomputed: int = 0
    in_forward: int = 0  # scheduled before the backward pass starts
    in_backward: int = 0
    barriers: int = 0  # opt-barrier instructions left in the module
    by_source: list[dict] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if not self.recomputed:
            return "no recomputation left (none requested, or merged away by CSE)"
        if self.in_forward > self.in_backward:
            return ("recomputes, but the scheduler placed most recomputation in the forward "
                    "pass: work is done twice and the recomputed values live as long as saved "
                    "ones would, so the peak cannot fall")
        return "recomputes during the backward pass, as jax.checkpoint intends"

    def to_json(self) -> dict:
        return {"recomputed_kernels": self.recomputed, "in_forward": self.in_forward,
                "in_backward": self.in_backward, "opt_barriers_left": self.barriers,
                "verdict": self.verdict, "by_source": list(self.by_source)}


def _op_names(module: Module, ins) -> list[str]:
    """op_names of a kernel: its own, and for fusions those of the fused instructions."""
    names = [ins.op_name] if ins.op_name else []
    for c in ins.calls if ins.opcode == "fusion" else ():
        comp = module.by_name.get(c)
        if comp is not None:
            names += [i.op_name for i in comp.instructions if i.op_name]
    return names


def _root_op_name(module: Module, ins) -> str | None:
    """The op_name of a fusion's root (a fusion instruction often carries none itself)."""
    if ins.opcode != "fusion" or not ins.calls or ins.calls[0] not in module.by_name:
        return None
    return module.by_name[ins.calls[0]].root_instruction.op_name


def remat_report(module: Module, source_of=None) -> RematReport | None:
    """None when the module holds no jax.checkpoint recomputation at all."""
    rep = RematReport()
    rep.barriers = sum(1 for i in module.instructions() if i.opcode == "opt-barrier")
    first_backward = None
    marked = []
    for k, ins in enumerate(module.entry_computation.instructions):
        names = _op_names(module, ins)
        primary = ins.op_name or _root_op_name(module, ins)
        if first_backward is None and primary and "transpose(" in primary and MARK not in primary:
            first_backward = k
        if any(MARK in n for n in names):
            marked.append((k, ins))
    if not marked:
        return None
    groups: dict[str, list[int]] = {}
    for k, ins in marked:
        fwd = first_backward is None or k < first_backward
        rep.recomputed += 1
        rep.in_forward += fwd
        rep.in_backward += not fwd
        src = (source_of(ins) if source_of else ins.source) or "(unknown)"
        g = groups.setdefault(src, [0, 0])
        g[0 if fwd else 1] += 1
    rep.by_source = [{"source": s, "in_forward": f, "in_backward": b}
                     for s, (f, b) in sorted(groups.items(), key=lambda kv: -sum(kv[1]))]
    return rep
