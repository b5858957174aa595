"""Identical instructions told apart by what reads them, several users deep.

The Shardy round trip of a partitioned program (``shardy-xla``) re-creates the module: every
instruction gets a new name and JAX's stack frames are renumbered, op_names stay. Identical
twins (same opcode, shape, operands and op_name) can then only be told apart by their users.
A layer norm computes ``x - mean`` twice from one ``mean``: zoo transformer_layer on 8 H100s,
dump 0016 -> 0017: ``sub.30`` (read by the normalizing multiply ``mul.55``) and ``sub.34``
(read twice by the variance's ``integer_pow.6``) become ``sub.18`` (read by ``mul.46``) and
``sub.20`` (read twice by ``integer_pow.0``). Their operands are twins too, down to the
broadcast of the mean, and the walk renames operands first: the broadcast's twins differ
only in what reads what reads them, three levels up. Taking the first twin in text order
swapped the whole chain.

:func:`deep_user_match` compares the trees of users (opcode, operand position, op_name),
a few levels deep, of the new instruction and of each candidate.
"""

from __future__ import annotations

from ..hlo.model import Instruction

_DEPTH = 4
_FANOUT = 8


def _op_name(i: Instruction):
    md = i.metadata
    return md.op_name if md else None


def _shape(i: Instruction):
    return str(i.shape)


def _tree(name: str, users: dict, top: dict, depth: int, memo: dict, label=_op_name) -> tuple:
    key = (name, depth)
    got = memo.get(key)
    if got is not None:
        return got
    out: list = []
    for u, k in users.get(name, ())[:_FANOUT]:
        i = top.get(u)
        if i is None:
            continue
        sub = _tree(u, users, top, depth - 1, memo, label) if depth > 1 else ()
        out.append((i.opcode, k, label(i), sub))
    got = memo[key] = tuple(sorted(out, key=repr))
    return got


def deep_user_match(prev_users: dict, ptop: dict, cur_users: dict, ctop: dict,
                    a: Instruction, lst: list[Instruction], by_shape: bool = False) -> list[int]:
    """Indices of the candidates in ``lst`` whose users' tree equals ``a``'s; empty when
    that tells nothing apart. ``by_shape``: users are told by shape, not op_name (the call
    inliner prefixes op_names with the call's; the shapes stay)."""
    memo_c: dict = {}
    memo_p: dict = {}
    label = _shape if by_shape else _op_name
    for depth in range(1, _DEPTH + 1):
        want = _tree(a.name, cur_users, ctop, depth, memo_c, label)
        out = [j for j, r in enumerate(lst)
               if _tree(r.name, prev_users, ptop, depth, memo_p, label) == want]
        if not out:
            return []
        if len(out) < len(lst):
            return out
    return []
