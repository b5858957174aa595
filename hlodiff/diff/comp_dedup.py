"""Loop bodies that XLA's computation deduplicator replaced by an identical one (GPU).

``computation-deduplicator`` (the GPU pipeline runs it after the main simplification)
walks the computations in post order and, for each one equal to a computation seen
earlier (layout-sensitive, at most 128 instructions, no large constants), makes every
caller call the earlier one and deletes the duplicate with its instructions. Two layers
whose backward scans compile to the same loop body then share one body; flattening the
call graph later gives the second loop its own clone of the *first* loop's body. The
optimized module shows it in the names: the second loop calls ``region_49.68.clone``, a
clone of another loop's body, not of its own ``region_93.113`` (fresh 15
rwkv_time_mix_wkv_scan on one H100, dump 0041 ``after_computation-deduplicator``:
``while.111`` calls ``region_49.68``; its own body and condition are gone).

The duplicate's instructions were deleted, not rebuilt: their values are computed by the
kept body's instructions, in whichever loop runs them.
"""

from __future__ import annotations

import re

from .view import Node, View

# what loop passes add to a body's name: LICM's "wide." prefix, clones' ".clone[.N]"
_PREFIX = re.compile(r"^(?:wide\.)+")
_SUFFIX = re.compile(r"(?:\.clone(?:\.\d+)?)+$")


def stem(name: str) -> str:
    """The computation a rebuilt or cloned body was made from: ``wide.region_49.68.clone.1``
    -> ``region_49.68``."""
    return _SUFFIX.sub("", _PREFIX.sub("", name))


def replaced(B: View, rebuilt: dict[int, str]) -> dict[str, str]:
    """Before computation -> the before computation the deduplicator replaced it by, from
    the rebuilt loops (node -> the after computation its loop calls): where that after
    computation is a clone of another before computation with the same signature."""
    comps = B.module.by_name
    calls = {B.nodes[i].ctx: new for i, new in rebuilt.items()}
    out: dict[str, str] = {}
    for own, new in calls.items():
        src = stem(new)
        if src == own or src not in comps or own not in comps or calls.get(src) == new:
            continue  # (both loops on one body: CSE merged the loops, loop_twins.py)
        a, b = comps[own], comps[src]
        if _signature(a) == _signature(b):
            out[own] = src
    return out


def _signature(comp) -> tuple:
    """Parameter shapes, root shape and opcodes in order: what two computations the
    deduplicator found equal have in common however their names differ (a clone of one
    calling the other's loop is the name evidence; this guards it)."""
    return (tuple(p.shape.text for p in comp.parameters), comp.root_instruction.shape.text,
            tuple(i.opcode for i in comp.instructions))


def fate(f, b: Node, kept: str):
    """``b`` sits in a computation deleted as a duplicate of ``kept``."""
    f.fate = "removed"
    f.reason = (f"{b.comp} is identical to {kept}: the computation deduplicator made its "
                f"caller call {kept} and deleted {b.comp} with this instruction")
    return f
