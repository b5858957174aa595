"""Plumbing between jax.checkpoint regions that the tuple simplifier leaves without users.

A remat region hands its values to the next one through ``tuple -> opt-barrier ->
get-tuple-element``. When the regions are nested, an element read out of one barrier is
often only put into the next region's tuple. The CSE barrier expander removes the barriers
(``get-tuple-element(opt-barrier(t))`` reads ``t`` directly), and the tuple simplifier then
forwards every get-tuple-element of a tuple to the tuple's operand, following the chain to
its end: the real users read the original value, and the element in the middle is read by
nothing. The pass dumps show it gone at ``tuple-simplifier`` without a replacement: it was
removed, not rewritten into something.

Evidence (fresh4 remat_nested_layers, single CPU, dumps 0025 -> 0026): after the barrier
expander ``%remat2.56 = f32[16] get-tuple-element(%remat2.52), index=2`` is read only by
``%remat2.72 = tuple(%remat2.54, %remat2.56, ...)``, whose own get-tuple-elements feed the
inner region (``%remat2.75 = get-tuple-element(%remat2.72), index=1``); after
tuple-simplifier both ``remat2.56`` and ``remat2.72`` are gone and ``remat2.75``'s users
read the parameter directly. The same on 8 CPU devices (cpu8).
"""

from __future__ import annotations

from .view import Node, View


def _barrier_tuple(B: View, t: Node) -> bool:
    """A tuple whose every user is an opt-barrier."""
    return t.opcode == "tuple" and bool(t.users) and \
        all(B.nodes[u].opcode == "opt-barrier" for u in t.users)


def orphaned_element(B: View, b: Node) -> bool:
    """``b`` is a get-tuple-element of an opt-barrier read only by tuples that feed
    opt-barriers: the tuple simplifier forwards its readers past it and it is removed."""
    if b.opcode != "get-tuple-element" or not b.raw_operands or not b.users:
        return False
    if B.nodes[B.resolve(b.raw_operands[0])].opcode != "opt-barrier":
        return False
    return all(_barrier_tuple(B, B.nodes[u]) for u in b.users)
