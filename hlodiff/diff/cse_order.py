"""The order XLA's CSE meets identical instructions in, read from the unoptimized module.

CSE walks each computation in post order and keeps the first of identical instructions.
XLA prints a computation in post order too, so the text of the module before optimization
is that walk; the call inliner (which runs before CSE) puts a callee's instructions where
its call was. The rank of a before node is its position in that text with every call
inlined: an inlined copy may come before an instruction of the caller, and then CSE keeps
the inlined one. (Constants are combined in instruction-list order instead; not here.)
"""

from __future__ import annotations


def inlined_text_rank(module) -> dict[tuple, int]:
    """(call site or None, computation, name) -> rank in the text with calls inlined, for
    every computation that is not itself only reached through calls (entry, loop bodies,
    branches...)."""
    by_name = module.by_name
    called = {i.calls[0] for c in module.computations for i in c.instructions
              if i.opcode == "call" and i.calls}
    out: dict[tuple, int] = {}

    def walk(comp, site, depth):
        for i in comp.instructions:
            if i.opcode == "call" and i.calls and depth < 50:
                callee = by_name.get(i.calls[0])
                if callee is not None:
                    walk(callee, i.name, depth + 1)
            out.setdefault((site, comp.name, i.name), len(out))

    for c in module.computations:
        if c.name not in called:
            walk(c, None, 0)
    return out
