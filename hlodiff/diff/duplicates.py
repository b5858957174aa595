"""Instructions that fusion copied into several kernels.

XLA's fusion passes (instruction fusion on CPU, priority fusion on GPU) may duplicate a
cheap producer into each of its consumers' fusions rather than materialize it once. The
matcher pairs a before instruction with one after instruction; the other copies are left
unmatched and their fusions look like kernels holding nothing of the program. A copy is an
unmatched fused instruction computing exactly the same thing (same signature and the same
operand values: ``Node.fp``, the fingerprint of its whole subgraph, and the very same
operand instructions, or no operands but the same value) in another fusion.
"""

from __future__ import annotations

from .match import Matching
from .result import InstructionFate


def copies(m: Matching) -> dict[int, list[int]]:
    """After node matched to a before node -> the fusion nodes holding copies of it."""
    A = m.after
    # (fingerprint, signature, operands) -> the fusions holding an unmatched copy, in node
    # order: one dictionary probe per matched node, linear in the module's size
    by_key: dict[tuple, list[int]] = {}
    for a in A.nodes:
        if a.fusion >= 0 and m.a2b[a.idx] < 0 and a.alias < 0 and a.opcode != "parameter":
            fus = by_key.setdefault((a.fp, a.sig, tuple(a.operands)), [])
            if a.fusion not in fus:
                fus.append(a.fusion)
    out: dict[int, list[int]] = {}
    if not by_key:
        return out
    for a in A.nodes:
        if m.a2b[a.idx] < 0 or a.fusion < 0 or a.alias >= 0:
            continue
        fus = by_key.get((a.fp, a.sig, tuple(a.operands)))
        if fus:
            fus = [f for f in fus if f != a.fusion]
            if fus:
                out[a.idx] = fus
    return out


def annotate(m: Matching, fates: list[InstructionFate]) -> None:
    """Fill ``also_in`` of fused/merged/rewritten fates whose after instruction was copied."""
    dup = copies(m)
    if not dup:
        return
    A = m.after
    by_name: dict[tuple[str | None, str], int] = {}
    for a in A.nodes:
        if a.idx in dup:
            by_name[(A.nodes[a.fusion].name, a.name)] = a.idx
    for f in fates:
        if f.fusion is None or f.after is None:
            continue
        i = by_name.get((f.fusion, f.after))
        if i is None:
            continue
        f.also_in = [A.nodes[x].name for x in dup[i]]
        if f.fate == "fused":
            f.reason += f"; fusion also copied it into {', '.join(f.also_in)}"
