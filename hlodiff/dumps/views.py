"""Values a pass took out that still exist, re-viewed, in what they read.

A reshape, bitcast, copy or transpose holds exactly its operand's values, re-arranged, and
so does a reduce over dimensions of size 1 only. When a pass takes one out, the instruction
it read (or, through a chain of such views taken out in the same pass, the first one left)
still holds those values. The pass-step diff records that instruction as a further home of
the value, beside whatever took its place in its users.
"""

from __future__ import annotations

from ..hlo.model import Instruction, sums_nothing as model_sums_nothing

LAYOUT_ONLY = frozenset({"reshape", "bitcast", "copy", "transpose"})


def sums_nothing(top: dict[str, Instruction], i: Instruction) -> bool:
    """A reduce over dimensions of size 1 only (``hlo.model.sums_nothing``), its operand
    looked up in ``top``: a reshape, which algsimp takes out."""
    o = top.get(i.operands[0]) if i.operands else None
    return model_sums_nothing(i, o.shape if o is not None else None)


def surviving_source(top: dict[str, Instruction], p2c: dict[str, str],
                     name: str) -> str | None:
    """The instruction left after the pass whose values ``name`` holds, looking through
    layout-only ops the same pass took out (``p2c``: name before -> name after); None
    when something else was taken out on the way."""
    for _ in range(16):
        c = p2c.get(name)
        if c is not None:
            return c
        i = top.get(name)
        if i is None or i.opcode not in LAYOUT_ONLY or not i.operands:
            return None
        name = i.operands[0]
    return None
