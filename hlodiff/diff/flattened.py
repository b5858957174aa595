"""Which call site keeps a computation called from several places.

XLA's flatten-call-graph pass gives every sequential call site a computation of its own
before the call inliner runs: it clones the callee for every call site except the first one
the call graph lists (call instructions in module order, computations in module order,
instructions in computation order). The first site keeps the original computation and so
the original instruction names; the others get ``NAME.clone`` copies. When the first site
is dead, DCE removes the original's instructions before anything inlines them (a slogdet's
LU permutation loop nobody reads: ``closed_call.3`` kept in the dead ``region_0.4``,
``closed_call.3.clone`` given to the live ``region_6.11``, dump 0003).
"""

from __future__ import annotations

from ..hlo.model import Module
from .view import Node


def dead_originals(module: Module, nodes: list[Node], live: bytearray) -> set[str]:
    """Names of the call instructions that keep a computation reached from more than one
    place (see above) and of which nothing is live: DCE removes such a call, and the
    original's instructions with it, before the call inliner runs. (A call that is live
    only in part is inlined, dead parts and all: its root tuple, say.)"""
    first: dict[str, str] = {}
    count: dict[str, int] = {}
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode != "call" or not inst.calls:
                continue
            callee = inst.calls[0]
            count[callee] = count.get(callee, 0) + 1
            first.setdefault(callee, inst.name)
    keep = {s for c, s in first.items() if count[c] > 1}
    some_live = {n.site for n in nodes if n.site in keep and live[n.idx]}
    return keep - some_live


def dead_original(dead_sites: set[str], b: Node) -> bool:
    """``b`` is an instruction of the original computation at a dead call site that keeps
    it: DCE removes it; it is not a clone the call inliner rebuilt."""
    return b.site in dead_sites
