"""While loops that run once: XLA's while-loop simplifier replaces them by their body.

JAX 0.4.30 emits a ``lax.scan`` of length 1 (a layer group of one layer, say) as a while
loop whose condition is ``i < 1`` with ``i`` starting at 0. The simplifier computes that
trip count and, the loop having no side effects, replaces the ``while`` by its body's code
inlined where the loop stood (``simplify-while-loops``; fresh 21
remat_two_level_grouped_layer_scan_sandwich_norm, JAX 0.4.30, dump 0016). Every
instruction of the body is then a clone in the enclosing computation: ``rewritten``, its
value where the clone now lives. Only the induction pattern JAX writes is recognized
(state element ``k`` starts at a constant, grows by the constant 1, and the condition is
``element k < constant``); any other loop is left to the other steps, and so is one with
side effects, which the simplifier keeps.
"""

from __future__ import annotations

from ..hlo.model import Instruction, Module
from .first_dce import has_side_effect
from .view import View

SKIP = 'skip-simplify-while-loops_trip-count-one="true"'


def _int(inst: Instruction | None) -> int | None:
    """The value of an integer scalar constant, else None."""
    if inst is None or inst.opcode != "constant" or inst.shape.dims or not inst.literal:
        return None
    try:
        return int(inst.literal.strip())
    except ValueError:
        return None


def trip_count(module: Module, comp: str, w: Instruction) -> int | None:
    """How many times the while ``w`` (in computation ``comp``) runs, where the module
    says so plainly; None otherwise."""
    try:
        home = module.computation(comp)
        cond = module.computation(w.called["condition"][0])
        body = module.computation(w.called["body"][0])
        init = home[w.operands[0]]
    except (KeyError, IndexError):
        return None
    root = cond.root_instruction
    if root.opcode != "compare" or root.attrs.get("direction") != "LT" or \
            len(root.operands) != 2:
        return None
    gte, bound = cond.by_name.get(root.operands[0]), cond.by_name.get(root.operands[1])
    n = _int(bound)
    if gte is None or gte.opcode != "get-tuple-element" or gte.index is None or n is None:
        return None
    k = gte.index
    if init.opcode != "tuple" or k >= len(init.operands):
        return None
    start = _int(home.by_name.get(init.operands[k]))
    broot = body.root_instruction
    if start is None or broot.opcode != "tuple" or k >= len(broot.operands):
        return None
    step = body.by_name.get(broot.operands[k])
    if step is None or step.opcode != "add" or len(step.operands) != 2:
        return None
    ops = [body.by_name.get(o) for o in step.operands]
    reads_k = any(o is not None and o.opcode == "get-tuple-element" and o.index == k
                  for o in ops)
    if not reads_k or 1 not in (_int(o) for o in ops):
        return None
    return max(n - start, 0)


def single_trip_loops(B: View) -> dict[int, str]:
    """Before nodes of loops that run once (the while itself and every node of its body,
    calls inlined) -> the while's name."""
    out: dict[int, str] = {}
    done: set[int] = set()
    for ctl, role, comp, _root, _params in B.bodies:
        w = B.nodes[ctl]
        if w.opcode != "while" or role != "body" or ctl in done:
            continue
        done.add(ctl)
        if trip_count(B.module, w.comp, w.inst) != 1 or SKIP in \
                w.inst.attrs.get("frontend_attributes", "").replace(" ", ""):
            continue  # (the frontend attribute that asks the simplifier to keep it)
        body = [n for n in B.nodes if n.ctx == comp and n.alias < 0]
        if any(has_side_effect(n.inst) for n in body):
            continue  # (the simplifier keeps a loop with side effects: their order)
        out[ctl] = w.name
        for n in body:
            out.setdefault(n.idx, w.name)
    return out
