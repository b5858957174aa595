"""Fingerprints that also see the computations an instruction calls (loops3, issue 9).

The view's exact-subgraph fingerprint (``View.fp``) hashes each node's own attributes and its
operands' fingerprints, but not the bodies a while, conditional, reduce or sort calls. Two
while loops with the same init tuple but different bodies (a bidirectional RNN's forward and
reverse scans read the same weights and zeros) then look identical, and so do all their
get-tuple-elements: the engine called one loop's results "merged by CSE" into the other's.
XLA's CSE compares called computations structurally (two instructions are identical only
when their computations are equal), so such loops are never merged.

``called_fingerprints`` gives each before node a second hash that folds in a name-free
structural hash of every computation called by a node in its subgraph (0 when the subgraph
calls nothing). CSE grouping keys on both, so it can only split groups the view's
fingerprint formed, never join new ones. Linear in the module's instructions.
"""

from __future__ import annotations

from ..hlo.model import Computation, Instruction, Module
from .view import CSE_COMMUTATIVE, View, operands_first

_KEYS = ("direction", "slice", "lhs_contracting_dims", "rhs_contracting_dims",
         "lhs_batch_dims", "rhs_batch_dims", "iota_dimension", "comparison_type",
         "padding", "window", "dimensions", "index", "tuple_index", "fft_type",
         "fft_length", "dynamic_slice_sizes", "distribution", "to_apply_is_add")


def computation_hashes(module: Module) -> dict[str, int]:
    """Computation name -> structural hash (opcodes, shapes, literals, attributes, operand
    positions, called computations' hashes; names left out). Computations are printed
    callees first, but the recursion below does not rely on it."""
    out: dict[str, int] = {}
    busy: set[str] = set()

    def comp_hash(c: Computation) -> int:
        h = out.get(c.name)
        if h is not None:
            return h
        if c.name in busy:  # not expected in HLO; stay finite
            return 0
        busy.add(c.name)
        pos = {i.name: k for k, i in enumerate(c.instructions)}
        parts = []
        for inst in c.instructions:
            parts.append(_inst_hash(inst, pos, comps_of(inst)))
        h = hash((tuple(parts), pos.get(c.root, -1)))
        busy.discard(c.name)
        out[c.name] = h
        return h

    def comps_of(inst: Instruction) -> tuple[int, ...]:
        return tuple(comp_hash(module.by_name[n]) if n in module.by_name else hash(n)
                     for n in inst.calls)

    for c in module.computations:
        comp_hash(c)
    return out


def _inst_hash(inst: Instruction, pos: dict[str, int], called: tuple[int, ...]) -> int:
    attrs = inst.attrs
    extra = tuple((k, attrs[k]) for k in _KEYS if k in attrs)
    return hash((inst.opcode, inst.shape.text, inst.literal, inst.dimensions, inst.index,
                 inst.custom_call_target, inst.parameter_number, extra,
                 tuple(pos.get(o, -1) for o in inst.operands), called))


def called_fingerprints(view: View) -> list[int]:
    """Per node of ``view``: a hash of the structural hashes of the computations called by
    the nodes of its exact subgraph (0 where none calls anything)."""
    module = view.module
    nodes = view.nodes
    comps: dict[str, int] | None = None
    out = [0] * len(nodes)
    for i in operands_first(nodes):
        m = nodes[i]
        own = 0
        if m.inst.calls and m.opcode not in ("call", "fusion"):
            if comps is None:
                comps = computation_hashes(module)
            own = hash(tuple(comps.get(c, 0) for c in m.inst.calls))
        sub = tuple(out[o] for o in m.operands if out[o])
        if m.opcode in CSE_COMMUTATIVE:  # a*b and b*a are one to CSE (cpu4)
            sub = tuple(sorted(sub))
        out[i] = hash((own, sub)) if (own or sub) else 0
    return out
