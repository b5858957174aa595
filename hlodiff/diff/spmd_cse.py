"""Identical index arithmetic in a program partitioned for CPU devices: CSE merges it first.

On one device XLA's CPU pipeline runs CSE only after the simplification fixed point, so
identical copies of index arithmetic on iotas (``lt``/``add``/``select`` of jnp's negative
index normalisation, written once per ``x[idx]``) are each rewritten by algebraic
simplification before CSE could meet them (``fates.FateBuilder._vanished``).

A program partitioned over several CPU devices meets CSE first: the partitioner's
``spmd-cleanup`` pipeline (dce, tuple-simplifier, cse) runs right after the Shardy round
trip and before any algsimp. Evidence (infonce_temperature on 8 CPU devices, written
``[lab, lab]``): the before module has four identical chains ``lt.4..7 = compare(iota.1,
broadcast.12)``, ``add.9..12``, ``select_n.4..7``, ``broadcast_in_dim.14..17 =
reshape(select_n.*)``; dump 0005 (``after_shardy-xla``) still has four (each on its own
``iota.4..7``), dump 0008 (``spmd-cleanup.after_cse``) keeps one (``lt.8``,
``add.26``, ``select_n.8``, ``broadcast_in_dim.42``), which algsimp rewrites only at dump
0014 (``iota.10 = s32[16,1] iota()``). So the copies were merged into the first at CSE,
and only the survivor was rewritten.

CSE compares instructions as written, before algsimp removes no-op reshapes and
broadcasts: copies that are identical only through such views are not merged then
(moe_top1 on 8 CPU devices: ``eq.14 = broadcast(reshape(broadcast(reshape(iota))))``
beside ``iota.3 = broadcast(iota)``; the oracle has ``eq.14`` rewritten at algsimp).
So only copies identical as written count. cse4.
"""

from __future__ import annotations

from .view import View

# aliases that only pass a value through (inlined calls, tuples): CSE sees the value
_PLUMBING = frozenset({"parameter", "get-tuple-element", "call", "tuple"})


class EarlyMerges:
    """Which members of sets of identical copies (``surv``: copy -> the copy CSE keeps)
    the partitioner's cleanup CSE merged before algsimp (see the module text)."""

    def __init__(self, B: View, surv: dict[int, int]):
        self.B = B
        self.surv = surv
        self.members: dict[int, list[int]] = {}
        for c, k in surv.items():
            self.members.setdefault(k, []).append(c)
        self._memo: dict[int, object] = {}

    def _key(self, i: int, depth: int = 0) -> object:
        """Structure of node ``i`` as written (no-op views included)."""
        k = self._memo.get(i)
        if k is not None:
            return k
        n = self.B.nodes[i]
        if depth > 48:
            return ("deep", i)  # unique: not identical to anything
        if n.alias >= 0 and n.opcode in _PLUMBING:
            k = self._key(n.alias, depth + 1)  # a call's parameter, tuple plumbing
            self._memo[i] = k
            return k
        if n.alias >= 0:
            head: object = (n.opcode, n.dims, n.inst.dimensions)
        else:
            head = n.sig
        if n.opcode == "parameter":
            head = ("p", i)
        k = (head, tuple(self._key(o, depth + 1) for o in n.raw_operands))
        self._memo[i] = k
        return k

    def merged(self, i: int) -> bool:
        """Node ``i`` (constant-valued, not foldable: index arithmetic on iotas) met CSE
        with an identical copy as written, so algsimp did not rewrite it first: a copy
        identical to its survivor, or a survivor with such a copy."""
        k = self.surv.get(i)
        others = [k] if k is not None else self.members.get(i, [])
        mine = self._key(i)
        return any(self._key(o) == mine for o in others)


def shared_divisors(m, recip: set[int], cse_first: bool) -> tuple[set[int], dict[int, int]]:
    """Divisors rebuilt as reciprocals (``recip``, see ``FateBuilder._reciprocals``) less
    those whose identical copy is still divided by after optimization, and for each member
    of such a set the after instruction where the kept copy lives (-1: unknown). In a
    partitioned CPU program (``cse_first``) CSE met the copies first and merged them into
    one, which lives on for the divide that stayed; none was rebuilt as a reciprocal
    before CSE.

    Evidence (infonce_temperature on 8 CPU devices): ``div.32`` and ``div.40`` are both
    ``broadcast(reshape(broadcast(norm.10)))``, divisors of ``div.33`` (forward) and
    ``div.41`` (backward). The after module has ``div.86 = broadcast(...)`` with div.32's
    op_name (``jvp()/div``) read by ``div.85 = divide(...)`` with div.41's op_name: the
    backward divide reads the forward copy, which CSE kept (the oracle: div.40 merged at
    spmd-cleanup's cse, div.32 fused where div.86 is); only the forward divide became
    ``multiply.15`` (by a new reciprocal ``broadcast.92``)."""
    if not cse_first:
        return recip, {}
    B = m.before
    groups: dict[tuple, list[int]] = {}
    for n in B.nodes:
        if n.alias < 0 and n.users:
            groups.setdefault((n.vfp, n.ctx), []).append(n.idx)
    out = set(recip)
    where: dict[int, int] = {}
    for g in groups.values():
        if len(g) < 2 or not any(i in recip for i in g) or all(i in recip for i in g):
            continue
        out.difference_update(g)
        lives = {m.b2a[i] for i in g if i not in recip and m.b2a[i] >= 0}
        y = lives.pop() if len(lives) == 1 else -1
        for i in g:
            where[i] = y
    return out, where


def place_shared(fb, out: list) -> None:
    """Name where the kept copy of a set of :func:`shared_divisors` lives, for its members
    that are fused there or merged into it (``out``: the fates, one per before node)."""
    for i, y in fb.shared_div.items():
        if y >= 0 and out[i].fate in ("fused", "merged"):
            fb._set_after(out[i], fb.A.nodes[y])
