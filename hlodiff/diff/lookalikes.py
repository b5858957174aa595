"""Constant look-alikes: a before constant paired with an after constant of equal value that
does a different job.

Fusion copies constants into every kernel that reads them, and algebraic simplification
makes new ones (``x / 32`` becomes ``x * 0.03125``; ``(x * 2) * 0.03125`` becomes
``x * 0.0625``). Matching by value alone then pairs a before constant that constant folding
consumed with an unrelated after constant that happens to hold the same number. For a
constant paired with a copy inside a fusion, the pairing is kept only when the after constant (or a broadcast of it) feeds the partner of
one of the before constant's own users; when the before constant's users all have
partners and none reads the paired constant, the pairing is a look-alike and is dropped
(the fate engine then explains the constant by folding or simplification).
"""

from __future__ import annotations

from .const_copies import carries_name
from .constvals import literal_through
from .view import Node, View

_CARRY = ("broadcast", "reshape", "convert", "bitcast", "copy", "transpose")


def _value_users(v: View, start: int, limit: int = 64) -> set[int]:
    """Users of ``start``, looking through broadcasts/reshapes/converts of it."""
    out: set[int] = set()
    todo, seen = [start], {start}
    while todo and len(seen) < limit:
        x = todo.pop()
        for u in v.nodes[x].users:
            if u in seen:
                continue
            seen.add(u)
            if v.nodes[u].opcode in _CARRY:
                todo.append(u)
            out.add(u)
    return out


_MERGED: list = [None, {}]  # (survivor map, survivor -> the copies merged into it)


def _copies(survivor: dict[int, int] | None, i: int) -> list[int]:
    if not survivor:
        return []
    if _MERGED[0] is not survivor:
        rev: dict[int, list[int]] = {}
        for c, s in survivor.items():
            rev.setdefault(s, []).append(c)
        _MERGED[0], _MERGED[1] = survivor, rev
    return _MERGED[1].get(i, [])


def partner_or_lookalike(B: View, A: View, b2a, a2b, b: Node, y: int,
                         survivor: dict[int, int] | None = None,
                         keys: list[int] | None = None) -> int:
    """``y`` when it is plausibly b's partner, else -1 (a look-alike). For constants and
    broadcasts of constants. The readers of the copies merged into ``b`` (``survivor``:
    copy -> the copy CSE keeps) read ``b`` once they are merged (gpu8b: vae_step on 8 H100s,
    the Shardy round trip, dump 0011, merges broadcast.7 into relu's max.2; fusion copies
    max.2 next to broadcast.7's readers). ``keys`` (``fused_copies.copy_keys``): a reader
    that fusion copied into several kernels reads ``y`` in any of them (fresh 10
    film_conditioned_conv on one H100: relu's ``max.2 = broadcast(0)`` is paired with its
    copy ``max.0.7`` in the forward loss's reduce kernel, and relu's ``max.3`` with its
    copy ``max.1.5.clone.1`` in the backward kernel; ``max.1.7`` beside ``max.0.7`` is
    the same relu)."""
    if y < 0 or not (b.opcode == "constant" or (
            b.opcode == "broadcast" and b.operands and
            B.nodes[b.operands[0]].opcode == "constant")):
        return y
    fu = A.nodes[y].fusion
    if fu < 0 or A.resolve(fu) == y:
        return y  # top-level, or a fusion of its own (wrapped_broadcast): read as a whole
    if carries_name(b, A.nodes[y]):  # h100: the copy carries b's name (const_copies.py)
        return y
    if b.inst.metadata is None and A.nodes[y].op_name == b.name:
        # gpu8b: the partitioner names an instruction without metadata after itself
        # (mlp_deep on 8 H100s: broadcast.7 -> broadcast.35, op_name="broadcast.7", a copy
        # fusion made of it once the Shardy round trip merged relu's max.2 into it)
        return y
    return y if read_by_partners(B, A, b2a, b, y, survivor, keys) else -1


def top_level_lookalike(B: View, A: View, b2a, b: Node, y: int) -> bool:
    """``y`` is a top-level after constant that :func:`read_by_partners` rejects (a copy in
    a fusion is judged by :func:`partner_or_lookalike`, which trusts copies carrying b's
    name: H100 mlp_mixer ``constant_35_5``)."""
    return y >= 0 and A.nodes[y].fusion < 0 and not read_by_partners(B, A, b2a, b, y)


def read_by_partners(B: View, A: View, b2a, b: Node, y: int,
                     survivor: dict[int, int] | None = None,
                     keys: list[int] | None = None) -> bool:
    """False when every (value) user of ``b`` has a partner and none of them reads ``y``,
    a same-valued after constant: then ``y`` does another job.

    A top-level constant is no exception when ``b`` is consumed by constant folding: the
    mean of a loss divides by N forward (algsimp makes ``x * (1/N)`` of it, a new
    top-level constant) and multiplies the gradient by a broadcast ``1/N``, which algsimp
    regroups with the gradient's ``2`` and folding evaluates. Every cpu8 dump of the
    tuning sets shows it (e.g. fresh 6 diffusion_timestep_loss: ``constant.11 =
    0.0125`` folded at dump 0015 into ``constant.57 = 0.025``; the after module's
    ``constant.32 = 0.0125`` is read only by the forward ``.../div`` multiply)."""
    want: set[int] = set()
    for u in set().union(_value_users(B, b.idx), *(_value_users(B, c) for c in
                                                    _copies(survivor, b.idx))):
        if B.nodes[u].opcode in _CARRY:
            continue
        ya = b2a[u]
        if ya < 0:
            return True  # a user without a partner: no evidence either way
        want.add(ya)
    if not want:
        return True
    got = _value_users(A, y)
    if keys is not None:
        want, got = {keys[x] for x in want}, {keys[x] for x in got}
    return bool(got & want)


def _literal_under(v: View, n: Node) -> object:
    return literal_through(v, n.idx, _CARRY)


def rebuilt_on_new_constant(B: View, A: View, b: Node, a: Node) -> bool:
    """b (a broadcast of a constant) is paired with a broadcast of another value:
    algebraic simplification regrouped ``(x * c1) * c2`` as ``x * (c1 * c2)`` and built a
    new broadcast of the folded product; b's own broadcast was rewritten, not fused."""
    if b.opcode != "broadcast" or a.opcode != "broadcast" or not b.operands:
        return False
    lb, la = _literal_under(B, b), _literal_under(A, a)
    return lb is not None and la is not None and lb != la


def fused_copy(B: View, A: View, b2a, a2b, b: Node) -> int:
    """For an unpaired constant (or broadcast of one): the copy a fusion pass made of it
    next to the partner of one of its users (an operand of that partner, through
    broadcasts, holding the same literal), else -1. GPU priority fusion copies constants
    into every consumer kernel; the matcher may have paired none of the copies."""
    lit = _literal_under(B, b)
    if lit is None:
        return -1
    for u in _value_users(B, b.idx):
        if B.nodes[u].opcode in _CARRY:
            continue
        ya = b2a[u]
        if ya < 0:
            continue
        for o in A.nodes[ya].operands:
            x = A.nodes[o]
            for _ in range(4):  # down to b's kind through broadcasts of the copy
                if x.opcode == b.opcode or x.opcode not in _CARRY or not x.operands:
                    break
                x = A.nodes[x.operands[0]]
            if a2b[x.idx] >= 0 or x.fusion < 0:
                continue
            if x.opcode == b.opcode and x.dims == b.dims and _literal_under(A, x) == lit:
                return x.idx
    return -1
