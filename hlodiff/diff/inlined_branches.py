"""Conditionals whose branches XLA's conditional simplifier inlined (issue 9, classes 4 and 11).

``simplify-conditional`` removes a conditional in two ways that keep its branches' code: a
constant predicate inlines the branch taken, and a cheap conditional becomes copies of every
branch in the caller with ``select`` between their results. In both the copies read the
conditional's operand where the branch read its parameter, and algebraic simplification then
forwards each ``get-tuple-element(parameter, k)`` to element ``k`` of that operand: the value
lives on in an instruction of the caller, not in the branch's readers. The before view
(view.py) instantiates such branches the way it does calls: the parameter aliases the
operand, so the matcher sees the caller's values where the branch reads its parameter.

Evidence: fresh 18 randaugment_vmapped_switch_cond_skip on H100 (jax 0.10.2), dumps
0011 -> 0012 -> 0016: ``get-tuple-element.59 = get-tuple-element(arg_tuple.3), index=0`` of
branch ``region_37.49`` is copied as ``get-tuple-element.105`` of ``cond.21``, the tuple the
conditional read, and algsimp forwards it to ``a_0___convs___0___b__.1``, the entry parameter
at index 0 of ``cond.21``. Fresh 5 gp_marginal_likelihood on CPU: a conditional with a
constant predicate, its branch inlined the same way.
"""

from __future__ import annotations

from collections import Counter

from ..hlo.model import Module


def inlined_conditionals(before: Module, after: Module) -> frozenset[str]:
    """Names of the before conditionals that did not survive optimization but whose branches
    may live on inlined: fewer conditionals are left, and none of those left carries this
    one's op_name (the conditional simplifier keeps it on the conditionals it only narrows).
    A conditional without an op_name, or with a branch that something else calls too, is
    left out: which operand the branch's code reads is then not decidable."""
    bconds = _conditionals(before)
    if not bconds:
        return frozenset()
    aconds = _conditionals(after)
    if len(aconds) >= len(bconds):
        return frozenset()
    kept = {i.metadata.op_name for i in aconds if i.metadata and i.metadata.op_name}
    calls = Counter(c for comp in before.computations for i in comp.instructions
                    for c in i.calls)
    out = set()
    for i in bconds:
        op = i.metadata.op_name if i.metadata else None
        if not op or any(k == op or k.endswith("/" + op) for k in kept):
            continue
        if i.calls and all(calls[c] == 1 for c in i.calls):
            out.add(i.name)
    return frozenset(out)


def _conditionals(module: Module) -> list:
    return [i for comp in module.computations for i in comp.instructions
            if i.opcode == "conditional"]
