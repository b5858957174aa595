"""Instruction counts a reader can compare across optimization.

A fused computation's parameters are only the names by which the fusion's operands enter
it: an optimized module with 300 fusions holds 300+ parameters that compute nothing, so
``Module.instruction_count`` grows with fusion alone. ``ops_count`` leaves them out.
"""

from __future__ import annotations

from ..hlo.model import Module


def fused_computations(m: Module) -> set[str]:
    """Names of the computations that fusion instructions call."""
    out: set[str] = set()
    for c in m.computations:
        for i in c.instructions:
            if i.opcode == "fusion":
                out.update(i.calls)
    return out


def ops_count(m: Module) -> int:
    """Instructions of ``m``, less the parameters of fused computations."""
    fused = fused_computations(m)
    n = 0
    for c in m.computations:
        if c.name in fused:
            n += sum(1 for i in c.instructions if i.opcode != "parameter")
        else:
            n += len(c.instructions)
    return n
