"""Names taken over by a replacement (older XLA's tuple simplifier).

When XLA 0.4.x's tuple simplifier replaces ``gte.45 = get-tuple-element(tuple.239), index=6``
by the tuple's operand ``gte.212 = get-tuple-element(while.207), index=4``, the survivor is
printed under the replaced instruction's name: after the pass, ``gte.45`` reads
``get-tuple-element(while.207), index=4`` and carries ``gte.212``'s metadata, and the name
``gte.212`` is gone. Matched by name alone, ``gte.45`` looks kept and ``gte.212`` looks
deleted although its value is still computed, under another name. This module finds such
takeovers so the pass step can record ``gte.212`` as renamed to ``gte.45``.

A takeover is recognised only from what both snapshots show: a name present before and after
with the same opcode whose instruction now computes something else (opcode, shape,
attributes or operands differ), and that now computes exactly what a removed instruction
computed (same key, same operands after renaming) with that removed instruction's metadata
(op_name and source line), which the replaced instruction did not have.
"""

from __future__ import annotations

from collections.abc import Callable

from ..hlo.model import Instruction


def _meta(i: Instruction) -> tuple | None:
    md = i.metadata
    if md is None or not md.op_name:
        return None
    return (md.op_name, md.source_file, md.source_line)


def find_takeovers(ptop: dict[str, Instruction], ctop: dict[str, Instruction],
                   added: set[str], cand: dict[tuple, list[Instruction]],
                   content_before: Callable[[Instruction], tuple],
                   content_after: Callable[[Instruction], tuple]) -> dict[str, str]:
    """Removed name -> the surviving name that now holds its instruction.

    ``cand`` maps the content (key + normalised operands) of each removed, not yet renamed,
    instruction to those instructions; matched ones are popped from it.
    """
    out: dict[str, str] = {}
    if not cand:
        return out
    for n, a in ctop.items():
        if n in added:
            continue
        p = ptop.get(n)
        if p is None or p.opcode != a.opcode:
            continue
        ca = content_after(a)
        if ca == content_before(p):
            continue
        lst = cand.get(ca)
        if not lst:
            continue
        meta = _meta(a)
        if meta is None or meta == _meta(p):
            continue
        hits = [k for k, r in enumerate(lst) if _meta(r) == meta]
        if len(hits) != 1:
            continue  # no unique owner of that metadata: leave it to the name
        r = lst.pop(hits[0])
        out[r.name] = n
    return out
