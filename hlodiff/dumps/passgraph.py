"""Graph facts the pass-by-pass trace (passes.py) reads off a snapshot: which computations
hold top-level code, and where a value a pass replaced still lives.

Kept apart from passes.py so that each stays small; the functions take passes.py's
snapshot objects (``top``, ``users``, ``roots`` of one module).
"""

from __future__ import annotations

from ..hlo.model import Module

# Opcodes whose called computations hold "real" top-level code (not fused, not reducers).
CONTROL_FLOW = {"call", "while", "conditional", "async-start", "async-update", "async-done"}
# ops that only re-view their operand's values: a replaced instruction read back through
# one of them (of a new instruction) has its value computed by that new instruction
VIEWS = {"slice", "reshape", "bitcast", "transpose", "copy", "get-tuple-element"}
# ops that hold exactly their operand's values, re-arranged
LAYOUT_ONLY = {"reshape", "bitcast", "copy", "transpose"}


def fused_computations(module: Module) -> set[str]:
    """Computations that hold no top-level code: those reachable from a fusion instruction
    (fused bodies and their callees) and those unreachable from the entry."""
    out: set[str] = set()
    todo = [c for i in module.instructions() if i.opcode == "fusion" for c in i.calls]
    while todo:
        name = todo.pop()
        if name in out or name not in module.by_name:
            continue
        out.add(name)
        for i in module.by_name[name].instructions:
            todo.extend(i.calls)
    # computations nothing reaches from the entry (GPU priority fusion leaves the bodies
    # of fusions it merged away until DCE): their instructions are not top-level code
    reach: set[str] = set()
    todo = [module.entry]
    while todo:
        name = todo.pop()
        if name in reach or name not in module.by_name:
            continue
        reach.add(name)
        for i in module.by_name[name].instructions:
            todo.extend(i.calls)
    out.update(c.name for c in module.computations if c.name not in reach)
    return out


def scope_computations(module: Module) -> list[str]:
    """The entry and the computations it reaches through call/while/conditional."""
    seen: list[str] = []
    todo = [module.entry]
    while todo:
        name = todo.pop()
        if name in seen or name not in module.by_name:
            continue
        seen.append(name)
        for i in module.by_name[name].instructions:
            if i.opcode in CONTROL_FLOW:
                todo.extend(i.calls)
    return seen


def orphans(prev, cur, p2c: dict[str, str], copies: dict[str, list[str]]) -> dict[str, str]:
    """Instructions a fusion pass copied into fusions and left at top level without users
    (GPU priority fusion leaves such constants for the next DCE) -> the first fusion: the
    value now lives there (fate ``fused``, not dead code)."""
    out: dict[str, str] = {}
    for n, fus in copies.items():
        c = p2c.get(n)
        if c in cur.top and fus and prev.users.get(n) and not cur.users.get(c) and \
                cur.roots.get(cur.top[c].computation) != c:
            out[n] = fus[0]
    return out


def value_views(prev, cur, removed: list, added: set[str], p2c: dict[str, str],
                copies: dict[str, list[str]]) -> None:
    """Record in ``copies`` the other instructions that hold a removed value:

    * merged into a bigger instruction and read back as a slice of it (dot-merger: two
      dots with a common operand become one dot and two slices), or rebuilt as a new
      instruction read back through a reshape or get-tuple-element (gather simplifier,
      reshape-mover, cuDNN convolution calls): the new instruction computes it;
    * a layout-only op (reshape, bitcast, copy, transpose) a pass took out holds its
      operand's values, re-viewed: the operand, still there, holds them too."""
    ctop, ptop = cur.top, prev.top
    for rem in removed:
        v = ctop.get(rem.into or "")
        if v is not None and v.opcode in VIEWS and rem.into in added and \
                v.operands and v.operands[0] in added:
            lst = copies.setdefault(rem.name, [])
            if v.operands[0] not in lst:
                lst.append(v.operands[0])
        i = ptop[rem.name]
        if rem.fate == "rewritten" and i.opcode in LAYOUT_ONLY and i.operands:
            o = p2c.get(i.operands[0])
            if o is not None and o in ctop:
                lst = copies.setdefault(rem.name, [])
                if o not in lst:
                    lst.append(o)
