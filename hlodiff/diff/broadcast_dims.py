"""Broadcasts of the same shape that place their operand differently are other values.

``broadcast(x), dimensions={0}`` and ``broadcast(y), dimensions={1}`` of one result shape and
one operand rank hold different values (rows vs columns): a triangular mask's
``compare(add(broadcast(iota, {0}), c), broadcast(iota, {1}))``. Fresh 4 lu_solve_grad
(JAX 0.4.30): algsimp sank the broadcast below the add and rebuilt ``broadcast(iota, {1})``
as a wide ``iota(), iota_dimension=1`` (dump 0008), so the final
``compare.154 = compare(broadcast.296, iota.50)`` reads one broadcast, ``dimensions={0}``
(the sunk add's). Pairing by opcode alone, out of position, gave the before
``broadcast.87`` (``dimensions={1}``) that broadcast, a claim that it holds the same
values (old5 helper)."""

from __future__ import annotations

from .view import Node


def other_placement(b: Node, a: Node) -> bool:
    """Both broadcasts of one result shape and operand rank, with other dimensions."""
    if b.opcode != "broadcast" or a.opcode != "broadcast":
        return False
    db, da = b.inst.dimensions, a.inst.dimensions
    return db is not None and da is not None and len(db) == len(da) and db != da
