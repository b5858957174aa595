"""XLA's naming rule: instruction names are unique across a module.

XLA's parser registers every instruction name with the module's name uniquer, in text order,
so a ``p0`` already used by an earlier computation becomes ``p0.1`` (and ``add.0`` after
``add`` becomes ``add.1``). Dumps written by XLA already obey the rule, so this is a no-op on
them; hand-written modules get the names XLA itself would give them.
"""

from __future__ import annotations

import re

from .model import Module


class NameUniquer:
    """Mirror of XLA's NameUniquer: a numeric ``.N`` suffix is an id within its root."""

    def __init__(self) -> None:
        self._used: dict[str, set[int]] = {}
        self._next: dict[str, int] = {}

    def unique(self, name: str) -> str:
        root, has_suffix, number = name, False, 0
        dot = name.rfind(".")
        if 0 < dot < len(name) - 1:
            tail = name[dot + 1:]
            if tail.lstrip("+-").isdigit():
                has_suffix, number, root = True, int(tail), name[:dot]
        used = self._used.setdefault(root, set())
        if number not in used:
            used.add(number)
        else:
            nxt = self._next.get(root, 0)
            while nxt in used:
                nxt += 1
            used.add(nxt)
            self._next[root] = nxt + 1
            number = nxt
        if number == 0:
            return f"{root}.0" if has_suffix else root
        return f"{root}.{number}"


_COLLIDING_SUFFIX = re.compile(r"\.(?:[+-]|0)\d*$")


def uniquify_instruction_names(module: Module) -> None:
    """Rename instructions as XLA's parser would; operands and roots follow."""
    names = [i.name for c in module.computations for i in c.instructions]
    if len(set(names)) == len(names) and not any(
            _COLLIDING_SUFFIX.search(n) for n in names if ".0" in n or ".+" in n or ".-" in n):
        return  # distinct names without 0/signed suffixes: the uniquer would change nothing
    uniquer = NameUniquer()
    for comp in module.computations:
        renamed: dict[str, str] = {}
        for inst in comp.instructions:
            new = uniquer.unique(inst.name)
            if new != inst.name:
                renamed[inst.name] = new
        if not renamed:
            continue
        for inst in comp.instructions:
            inst.name = renamed.get(inst.name, inst.name)
            inst.operands = [renamed.get(o, o) for o in inst.operands]
            inst.control_predecessors = tuple(renamed.get(o, o) for o in inst.control_predecessors)
        comp.root = renamed.get(comp.root, comp.root)
        comp.by_name = {i.name: i for i in comp.instructions}
