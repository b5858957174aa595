"""While loops that XLA's loop passes rebuilt (issue 9, class 4): which before nodes now
live in a recreated body or condition, and the after while an unmatched before while became.
Used by the fate builder (fates.py)."""

from __future__ import annotations

from . import loop_pairs, loop_twins, named_copies
from .value_facts import parameter_dependents
from .view import Node


def rebuilt_loops(fb) -> dict[int, str]:
    """Nodes of while bodies/conditions that XLA rebuilt (loop-invariant code motion,
    while-loop simplifier): the matched after while calls a computation of another name
    (``wide.<body>.clone``...). Everything in it that reads the loop state was recreated
    on the new state tuple; the while's init tuple too. Node -> the new computation."""
    B, A, m = fb.B, fb.A, fb.m
    nodes = B.nodes
    changed: dict[str, str] = {}
    inits: dict[int, str] = {}
    for ctl, role, comp, _root, _params in B.bodies:
        w = nodes[ctl]
        y = m.b2a[ctl]
        if w.opcode != "while":
            continue
        if y < 0:
            y = loop_partner(fb, w)
            if y < 0:
                y = loop_twins.partner(fb, ctl)  # old5: CSE merged identical loops
            if y < 0:
                continue
        if A.nodes[y].opcode != "while":  # e.g. the CPU's small-while-loop hoisting
            y = A.resolve(y)              # wraps the loop in a call: see through it
            if A.nodes[y].opcode != "while":
                continue
        new = A.nodes[y].inst.called.get(role)
        if not new or not loop_pairs.renamed_by_loop_pass(
                comp, new[0], fb.nparts, len(w.inst.shape.tuple_shapes),
                len(A.nodes[y].inst.shape.tuple_shapes)):
            continue  # loops4: the partitioner's renaming is no rebuild
        # (cpu8: a marked name is a loop pass's rebuild even where the state came back
        # to the same arity, LICM widening and the simplifier narrowing: loop_pairs.py)
        changed[comp] = new[0]
        if w.raw_operands and nodes[w.raw_operands[0]].opcode == "tuple":
            inits[w.raw_operands[0]] = new[0]
    if not changed:
        return {}
    out = {i: changed[nodes[i].ctx] for i in parameter_dependents(nodes, changed)}
    out.update(inits)
    return out


def loop_partner(fb, w: Node) -> int:
    """The after while of an unmatched before while: the only after while with its
    op_name that no other before instruction claims but its own init tuple."""
    A, m = fb.A, fb.m
    init = w.raw_operands[0] if w.raw_operands else -1
    op = named_copies.collapsed(w.op_name)  # cpu5: vmap(f)/vmap(f) written once
    cands = [x.idx for x in A.nodes if x.opcode == "while" and x.op_name in (w.op_name, op)
             and m.a2b[x.idx] in (-1, init)]
    return cands[0] if len(cands) == 1 else -1
