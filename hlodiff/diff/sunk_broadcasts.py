"""Elementwise ops whose broadcasts algebraic simplification sank below them (cpu4 helper).

Algsimp rewrites ``op(broadcast(x), broadcast(c))`` (every operand a broadcast with the same
dimension mapping, or a broadcast of a scalar) as ``broadcast(op(x, broadcast'(c)))``: the
operation runs on the narrow shape and one broadcast follows it. jnp code builds this all
the time (``jnp.arange(n)[:, None] + 1``, triangular masks, threefry's
``iota_2x32_shape``).

Evidence, zoo/cpu linalg_qr_svd (jax 0.10.2), dump 0007 -> 0008 (algsimp)::

    %iota.0 = s32[8]{0} iota(), iota_dimension=0
    %iota.1 = s32[8,8]{1,0} broadcast(%iota.0), dimensions={0}
    %add.0 = s32[8,8]{1,0} broadcast(%constant.0), dimensions={}
    %add.1 = s32[8,8]{1,0} add(%iota.1, %add.0)
    %ge.0 = pred[8,8]{1,0} compare(%add.1, %iota.3), direction=GE
  ->
    %broadcast.2 = s32[8]{0} broadcast(%constant.0), dimensions={}
    %add.4 = s32[8]{0} add(%iota.0, %broadcast.2)
    %broadcast.3 = s32[8,8]{1,0} broadcast(%add.4), dimensions={0}
    %ge.0 = pred[8,8]{1,0} compare(%broadcast.3, %iota.8), direction=GE

``add.1`` and its scalar broadcast ``add.0`` are left without users and deleted by the
next DCE (dump 0009: removed); ``iota.0`` and ``constant.0`` live on and are fused
(dump 0020). The matcher, seeing no instruction of ``add.1``'s shape, left all four
open ("simplified away"). Here the narrow op is paired with the wide one (its fate is
"removed": the op moved across the broadcast, fates.py), and the values under the old
broadcasts with the narrow op's operands.
"""

from __future__ import annotations

from collections import defaultdict

from .view import Node

_ELEMENTWISE_SINK = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "and",
                     "or", "xor", "shift-left", "shift-right-logical",
                     "shift-right-arithmetic", "compare", "select", "power", "remainder"}
HOW = "sunk broadcast"


def _etype(dims: str) -> str:
    return dims.split("[", 1)[0]


def _rank(n: Node) -> int:
    return len(n.inst.shape.dims)


def _sinkable(B, b: Node):
    """(the broadcast dimensions, the wide operands' operands) of ``op(broadcast(x), ...)``
    where every operand is a broadcast, those of non-scalars share one dimension mapping
    and operand shape, and at least one is not a scalar; else None."""
    if b.opcode not in _ELEMENTWISE_SINK or len(b.operands) < 2 or b.inst.shape.is_tuple:
        return None
    dims = None
    inner = None
    for o in b.operands:
        ob = B.nodes[o]
        if ob.opcode != "broadcast" or len(ob.operands) != 1:
            return None
        x = B.nodes[ob.operands[0]]
        if x.inst.shape.is_tuple:
            return None
        if _rank(x) == 0:
            continue
        d = tuple(ob.inst.dimensions or ())
        xd = tuple(x.inst.shape.dims)
        if dims is None:
            dims, inner = d, xd
        elif d != dims or xd != inner:
            return None
    if dims is None:
        return None
    return dims, inner


def pair_sunk(m) -> int:
    """Pair each open ``op(broadcast(x), broadcast(c))`` with the open narrow ``op(x', c')``
    whose broadcast (same dimension mapping, the wide shape) feeds the partners of its
    users; then ``x`` with ``x'`` and the scalars under the broadcasts with theirs."""
    B, A = m.before, m.after
    wide: list[tuple[Node, tuple, tuple]] = []
    for b in B.nodes:
        if b.alias >= 0 or m.b2a[b.idx] >= 0:
            continue
        s = _sinkable(B, b)
        if s is not None:
            wide.append((b, s[0], s[1]))
    if not wide:
        return 0
    narrow: dict[tuple, list[Node]] = defaultdict(list)
    for a in A.nodes:
        if a.alias >= 0 or m.a2b[a.idx] >= 0 or a.opcode not in _ELEMENTWISE_SINK or \
                a.inst.shape.is_tuple:
            continue
        narrow[(a.opcode, a.op_name, a.mdims)].append(a)
    c = 0
    for b, dims, inner in wide:
        key = (b.opcode, b.op_name,
               _etype(b.mdims) + "[" + ",".join(map(str, inner)) + "]")
        cands = []
        for a in narrow.get(key, ()):
            if m.a2b[a.idx] >= 0 or len(a.operands) != len(b.operands):
                continue
            bc = [u for u in a.users if A.nodes[u].opcode == "broadcast" and
                  tuple(A.nodes[u].inst.dimensions or ()) == dims and
                  A.nodes[u].mdims == b.mdims]
            if not bc:
                continue
            readers = {r for u in bc for r in A.nodes[u].users}
            told = [m.b2a[u] for u in b.users if m.b2a[u] >= 0]
            if told and not all(t in readers for t in told):
                continue
            cands.append((bool(told), a))
        if not cands:
            continue
        best = [a for t, a in cands if t] or [a for _, a in cands]
        if len(best) > 1 and not all(x.fp == best[0].fp for x in best):
            continue  # not told apart (identical copies fusion made are one value)
        a = best[0]
        if not m.pair(b.idx, a.idx, HOW):
            continue
        c += 1
        for o, ao in zip(b.operands, a.operands):
            x = B.nodes[B.nodes[o].operands[0]]
            y = A.nodes[ao]
            if _rank(x) == 0:  # the scalar: under the narrow op's own broadcast
                if y.opcode == "broadcast" and y.operands:
                    y = A.nodes[y.operands[0]]
                if y.opcode != x.opcode or y.mdims != x.mdims or \
                        y.inst.literal != x.inst.literal:
                    continue
            elif y.opcode != x.opcode or y.mdims != x.mdims:
                continue
            if m.b2a[x.idx] < 0 and m.a2b[y.idx] < 0:
                c += m.pair(x.idx, y.idx, HOW)
    return c


def sunk_copies(m, survivor: dict[int, int]) -> dict[int, int]:
    """Copies of a sunk op: before node -> the sunk copy CSE would keep in its place
    (``survivor``), for sinkable ops whose survivor was paired as sunk. On CPU, algsimp runs
    long before the first CSE, so every identical copy is sunk on its own and left for DCE;
    CSE then meets only the narrow ops. Evidence, fresh 4 cpu lu_solve_grad (jax 0.10.2):
    six inlined copies of jnp.tril's ``add(broadcast(iota), broadcast(-1))`` (``add.21``,
    ``add.23``, ... ``add.34``); dump 0009 (algsimp) gives each a narrow ``add.5x =
    s32[6] add(iota, broadcast)``, dump 0010 (dce) removes all six wide adds and their
    scalar broadcasts, dump 0039 (cse) merges the narrow ones."""
    B, A = m.before, m.after
    out: dict[int, int] = {}
    def narrow(i: int) -> bool:  # paired with a narrower op of its opcode
        y = m.b2a[i]
        return y >= 0 and (m.how.get(i) == HOW or (
            A.nodes[y].opcode == B.nodes[i].opcode and
            A.nodes[y].inst.shape.num_elements < B.nodes[i].inst.shape.num_elements))

    for b, s in survivor.items():
        if B.nodes[b].opcode != B.nodes[s].opcode or not narrow(s) or (
                m.b2a[b] >= 0 and not narrow(b)):
            continue
        if _sinkable(B, B.nodes[b]) is not None and _sinkable(B, B.nodes[s]) is not None:
            out[b] = s
    return out


def copy_fate(f, b: Node, s: Node, m):
    """The fate of a copy ``sunk_copies`` found: removed, like the copy CSE would keep."""
    f.fate = "removed"
    f.reason = (f"identical to {s.name}; algebraic simplification moved each copy below its "
                f"broadcast before CSE ran ({b.dims} -> the narrow shape), and DCE deleted "
                "the original")
    return f


def dead_scalar_broadcasts(m, copies: set[int] | frozenset = frozenset()) -> set[int]:
    """Before broadcasts read only by ops paired as sunk: algsimp built a narrow broadcast
    for the narrow op (or reads the broadcast's operand directly); the wide one was left
    for DCE. A wide broadcast the matcher gave the new broadcast of the narrow op is one of
    them too: JAX 0.4.30 linalg_qr_svd ``broadcast.9 = broadcast(iota.8)`` is removed by DCE
    (dump 0008); jax 0.10.2 first rewrites ``broadcast(iota)`` into a wide iota that DCE
    removes (linalg_qr_svd dumps 0008, 0009): its line ends removed as well."""
    B, A = m.before, m.after
    out: set[int] = set()
    # sunk: paired with an op of fewer elements (this step's pairs, or an earlier step's)
    sunk = {b for b, how in m.how.items() if how == HOW or (
        _sinkable(B, B.nodes[b]) is not None and B.nodes[b].opcode == A.nodes[m.b2a[b]].opcode
        and A.nodes[m.b2a[b]].inst.shape.num_elements < B.nodes[b].inst.shape.num_elements)}
    sunk |= copies  # cpu5: copies of a sunk op, each sunk on its own (sunk_copies)
    for b in sunk:
        for o in B.nodes[b].operands:
            ob = B.nodes[o]
            y = m.b2a[o]
            if ob.opcode != "broadcast" or not ob.operands or \
                    not all(u in sunk for u in ob.users):
                continue
            # open, or paired with the new broadcast of the narrow op or with the narrow
            # broadcast the narrow op reads (a later matcher step may take either)
            if y < 0 or m.b2a[b] in A.nodes[y].operands or y in A.nodes[m.b2a[b]].operands:
                out.add(o)
    return out


def dead_fate(f, b: Node, m):
    """The fate of a scalar broadcast ``dead_scalar_broadcasts`` found: removed."""
    user = m.before.nodes[b.users[0]].name if b.users else "its user"
    f.fate = "removed"
    f.reason = (f"broadcast left without users when algebraic simplification moved {user} "
                "below the broadcast (it reads a new narrow broadcast); DCE deleted it")
    return f
