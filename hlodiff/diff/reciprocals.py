"""Divisors that algebraic simplification rebuilt as reciprocals (a pass of the fate engine)."""

from __future__ import annotations

from . import cse_first
from .fused_copies import copy_keys
from .value_facts import NOT_NEW_VALUE, RECIPROCAL_OF


def rebuilt_reciprocals(m) -> set[int]:
    """Divisors algsimp rebuilt as reciprocals. It turns a division by a broadcast,
    power or exponential into a multiplication by a reciprocal it builds from scratch
    (x / broadcast(y) -> x * broadcast(1 / y), x / pow(y, c) -> x * pow(y, -c),
    x / exp(y) -> x * exp(-y)): the divisor died with the divide in the same pass
    (so CSE never met it), and whatever looks like it afterwards is a new instruction
    over the new value. Evidence: every user divides by it and became a multiply;
    where a divide has no counterpart left, b's own partner must read a new value
    (an after instruction with no before counterpart that is not a layout op).
    Constants read only by such divisors go with them."""
    B, A = m.before, m.after
    nodes = B.nodes
    out: set[int] = set()
    merged_users = cse_first.group_users(m)  # shard4: CSE met the divisor first
    paired_keys: set[int] | None = None  # value keys of paired after nodes, when first needed
    for b in nodes:
        if b.alias >= 0 or not b.users or b.opcode not in RECIPROCAL_OF:
            continue
        all_mul = True
        ok = True
        for u in merged_users.get(b.idx, b.users):
            un = nodes[u]
            y = m.b2a[u]
            if un.opcode != "divide" or len(un.operands) != 2 or \
                    un.operands[1] != b.idx or un.operands[0] == b.idx or \
                    (y >= 0 and A.nodes[y].opcode != "multiply"):
                ok = False
                break
            if y < 0:
                all_mul = False
        if not ok:
            continue
        if not all_mul:
            y = m.b2a[b.idx]
            if y < 0:
                continue
            if paired_keys is None:
                paired_keys = _paired_keys(m)
            if not any(m.a2b[o] < 0 and A.nodes[o].opcode not in NOT_NEW_VALUE and
                       copy_keys(m)[o] not in paired_keys for o in A.nodes[y].operands):
                continue
        out.add(b.idx)
    for i in list(out):
        for o in nodes[i].operands:
            on = nodes[o]
            if on.opcode == "constant" and all(u in out for u in on.users):
                out.add(o)
    return out


def _paired_keys(m) -> set[int]:
    """Value keys (fused_copies.copy_keys) of the paired after nodes. An open operand with
    such a key is a fusion's copy of a paired instruction: an old value, not one algsimp
    built (fresh 13 qlora_int8_frozen_base under JAX 0.4.30: Adam's ``m / broadcast(1 -
    b1**t)``, the broadcast fused beside a copy of the subtract whose partner is another
    kernel's copy; the divide went at algsimp as ``(A / B) / C -> A / (B * C)``, the
    broadcast lived on and was fused, dump 0025)."""
    keys = copy_keys(m)
    return {keys[x] for x in range(len(keys)) if m.a2b[x] >= 0}
