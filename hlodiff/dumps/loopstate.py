"""Loop results of a rebuilt while loop, in pass-by-pass dumps (loops3, issue 9).

The loop passes (while-loop-invariant-code-motion, the while-loop simplifier, the constant
sinking passes) replace a while loop by a new one and read its results through new
get-tuple-elements: lstm_clip_scan cpu8, dump 0016 -> 0017 (WLICM):

    %get-tuple-element.218 = f32[10,1,16] get-tuple-element(%while.52), index=4, op_name=".../while"
    ->
    %get-tuple-element.392 = f32[10,1,16] get-tuple-element(%while.54), index=4, op_name=".../while"

When the old element's users were rebuilt in the same pass (here the init tuple of the
next loop), "what took its place in its users" finds nothing, and the value was followed
into the next loop instead. The new element of the same index, shape and op_name, read
from a new loop with the old loop's op_name, holds the value. Only a unique such element
counts (two loops with one op_name rebuilt in one pass stay undecided).
"""

from __future__ import annotations

from ..hlo.model import Instruction


def _op_name(i: Instruction | None) -> str | None:
    return i.metadata.op_name if i is not None and i.metadata is not None else None


def _key(g: Instruction, loop: Instruction) -> tuple:
    return (loop.opcode, _op_name(loop), g.index, g.shape.text, _op_name(g))


def rebuilt_elements(ptop: dict, ctop: dict, added: list[str]) -> dict[tuple, str | None]:
    """Key -> the one added get-tuple-element of an added while with that key (None when
    several share it)."""
    out: dict[tuple, str | None] = {}
    added_set = set(added)
    for n in added:
        g = ctop[n]
        if g.opcode != "get-tuple-element" or not g.operands:
            continue
        loop = ctop.get(g.operands[0])
        if loop is None or loop.opcode != "while" or loop.name not in added_set:
            continue
        k = _key(g, loop)
        out[k] = None if k in out else n
    return out


def rebuilt_element(ptop: dict, name: str, removed: set[str],
                    index: dict[tuple, str | None]) -> str | None:
    """The new element that holds removed get-tuple-element ``name``'s value, when its loop
    was removed in the same pass and exactly one new loop element matches it."""
    g = ptop.get(name)
    if g is None or g.opcode != "get-tuple-element" or not g.operands:
        return None
    loop = ptop.get(g.operands[0])
    if loop is None or loop.opcode != "while" or loop.name not in removed:
        return None
    return index.get(_key(g, loop))


def element_read_back(prev, cur_top: dict, p2c: dict[str, str], name: str) -> str | None:
    """The surviving get-tuple-element that reads removed ``name`` back out of a tuple the
    same pass took apart (shard4). The while-loop simplifier packs a rebuilt loop's results
    into a tuple and reads them back; algsimp then forwards each read-back element to the
    loop in place, under the read-back's own name. gru_scan cpu8, dump 0019 -> 0020
    (algsimp): ``%tuple.21 = tuple(..., %get-tuple-element.481, ...)`` (index 8),
    ``%get-tuple-element.929 = get-tuple-element(%tuple.21), index=8`` becomes
    ``%get-tuple-element.929 = get-tuple-element(%while.50), index=2``; tuple.21 and
    get-tuple-element.481 are gone. The value of get-tuple-element.481 is in
    get-tuple-element.929 (not in while.50, what took tuple.21's place)."""
    found = None
    for user, k in prev.users.get(name, ()):
        t = prev.top.get(user)
        if t is None or t.opcode != "tuple" or user in p2c:
            return None
        for g, _ in prev.users.get(user, ()):
            gi = prev.top.get(g)
            if gi is not None and gi.opcode == "get-tuple-element" and gi.index == k:
                c = p2c.get(g)
                if c is not None and c in cur_top and found in (None, c):
                    found = c
    return found
