"""Identical copies in a module that meets CSE before any simplification (shard4).

XLA's CPU pipeline partitions a sharded program first; the partitioner's cleanup
(``spmd-cleanup``: dce, tuple-simplifier, cse) merges identical instructions before
algebraic simplification has looked at any of them. A copy merged there is gone from the
first pass on: its users read the survivor (the first copy in the text, see
``value_facts.cse_survivors``), and whatever algsimp later does to one user does not
rebuild the copy. The matcher's structural steps do not know this: they pair a merged
copy with the after instruction its own users read, and the survivor, left open, with a
look-alike that shares its op_name.

Evidence (zoo cpu8 transformer_layer): softmax's divisor ``div.24 = broadcast(div.23)``
(forward, ``jvp()/div``) and ``div.35 = broadcast(div.34)`` (backward,
``transpose(jvp())/div``) are identical once spmd-cleanup's CSE merged ``div.34`` into
``div.23``; the same CSE merges ``div.35`` into ``div.24`` (dump 0007 ``after_cse``; the
oracle: ``merged cse``). algsimp then rewrites only the forward ``exp / div.24`` into
``exp * broadcast(1/sum)`` (``broadcast.74``, ``broadcast.103``, new); ``div.24`` lives on
for the backward divide, as ``div.60`` in ``broadcast_divide_fusion``. The structure had
paired ``div.35`` with ``div.60`` and ``div.24`` with the reciprocal's new broadcast.

Here a survivor the structure left open takes the partner of the one merged copy it
paired (same opcode and shape); the copy is left open and ends ``merged``. Not where that
partner carries the copy's own op_name and source line and not the survivor's: the
partitioner may shard identical copies differently, and then CSE meets no identical pair
(zoo cpu8 transformer_layer: LayerNorm's ``x - mean`` twice, ``sub.30`` and ``sub.34``;
dump 0004 shards the first 8 ways, ``sub.3 ... sharding={devices=[1,1,8]<=[8]}``, and
replicates the second, ``sub.7``; both live on, in two fusions). A survivor already
paired keeps its partner, and so do copies when several are paired.
"""

from __future__ import annotations

from typing import Callable


# never merged by CSE (side effects, control flow, calls; value_facts.NO_CSE, which this
# module cannot import: value_facts imports the matcher)
_NO_CSE = {"parameter", "rng", "rng-bit-generator", "custom-call", "infeed", "recv", "send",
           "outfeed", "after-all", "while", "conditional", "call", "all-reduce"}


def merged_copies(m) -> dict[int, int]:
    """Copy -> survivor for identical before instructions CSE merges before simplification
    (partitioned CPU modules); {} for every other module. The survivor is the copy still
    there under its own name, else the first in the text once calls are inlined (the
    partitioned module's order: the rule of ``value_facts.cse_survivors`` for these
    modules). Leaves (constants, iotas) and broadcasts of constants are left out: the
    Shardy round trip and algsimp treat them on their own."""
    from .called_fp import called_fingerprints
    from .shardmatch import cse_before_simplification, inlined_text_order

    if not cse_before_simplification(m.after.module):
        return {}
    B = m.before
    Bn = B.nodes
    cfp = called_fingerprints(B)
    groups: dict[tuple, list[int]] = {}
    for n in Bn:
        if n.alias < 0 and n.operands and n.opcode not in _NO_CSE and not (
                n.opcode == "broadcast" and Bn[n.operands[0]].opcode == "constant"):
            groups.setdefault((n.vfp, n.ctx, cfp[n.idx]), []).append(n.idx)
    out: dict[int, int] = {}
    order = None
    for g in groups.values():
        if len(g) < 2:
            continue
        if order is None:
            order = inlined_text_order(B.module)
        named = [i for i in g if m.how.get(i) == "name"]
        keep = named[0] if named else min(g, key=lambda i: (
            order.get((Bn[i].site, Bn[i].comp, Bn[i].name), len(order)), i))
        for i in g:
            if i != keep:
                out[i] = keep
    return out


def _fit(m, score: Callable, s: int, users: list[int], a: int) -> int:
    """score(s, a) with the users of every copy of s counted as s's users."""
    b = m.before.nodes[s]
    saved = b.users
    b.users = users
    try:
        return score(m, b, m.after.nodes[a])
    finally:
        b.users = saved


def swap_to_survivors(m, copies: dict[int, int], score: Callable) -> int:
    """Give survivors the partner of the one merged copy the structure paired; unpair the
    copy. Returns the number of moves."""
    Bn, An = m.before.nodes, m.after.nodes
    groups: dict[int, list[int]] = {}
    for c, s in copies.items():
        groups.setdefault(s, []).append(c)
    moved = 0
    for s, cs in groups.items():
        paired = [c for c in cs if m.b2a[c] >= 0]
        if len(paired) != 1:
            continue
        b, c = Bn[s], paired[0]
        y = m.b2a[c]
        a = An[y]
        if a.opcode != b.opcode or a.mdims != b.mdims or (_own(a, Bn[c]) and not _own(a, b)):
            # it carries the copy's own metadata, not the survivor's (CSE keeps the
            # survivor's): the copy lived on, partitioned unlike the survivor
            continue
        own = m.b2a[s]
        if own >= 0:
            # the survivor paired too: move only to an instruction with the survivor's
            # metadata and not the copy's that fits it strictly better, the users of
            # every copy counted as its own
            users = list(b.users)
            for x in cs:
                users.extend(u for u in Bn[x].users if u not in users)
            if not _own(a, b) or _own(a, Bn[c]) or \
                    _fit(m, score, s, users, y) <= _fit(m, score, s, users, own):
                continue
            m.unpair(s)
        m.unpair(c)
        m.pair(s, y, "cse-survivor")
        moved += 1
    return moved


def group_users(m) -> dict[int, list[int]]:
    """Survivor -> its users and those of every copy merged into it before simplification
    (algsimp meets them all as the survivor's users); {} outside such modules."""
    Bn = m.before.nodes
    out: dict[int, list[int]] = {}
    for c, s in merged_copies(m).items():
        lst = out.setdefault(s, list(Bn[s].users))
        lst.extend(u for u in Bn[c].users if u not in lst)
    return out


def _own(a, b) -> bool:
    return (a.op_name, a.src) == (b.op_name, b.src)


def sharded_apart(m, survivor: dict[int, int], cse_first: bool = False) -> dict[int, int]:
    """``survivor`` (copy -> the copy CSE keeps) without the copies the partitioner kept
    apart from their survivor (partitioned modules); the one place that decides it.

    The SPMD partitioner shards each instruction on its own; two identical copies may get
    different shardings, and then no CSE merges them: both live on. A copy lives on apart
    when it and its survivor are paired with two different after instructions and

    - (every partitioned module, shard4) the copy's partner carries the copy's own
      metadata and not the survivor's, and the survivor's partner the survivor's: zoo cpu8
      transformer_layer ``sub.34``: ``sub.7 ... sharding={replicated}`` beside ``sub.3 ...
      sharding={devices=[1,1,8]<=[8]}`` in dump 0004; ``sub.34`` lives on in
      ``add_rsqrt_fusion``, ``sub.30`` in ``multiply_bitcast_fusion.4``; or
    - (``cse_first``: partitioned CPU modules, whose cleanup CSE runs on the partitioned
      module before any simplification, cse4) the two partners have different per-device
      shapes: the shardings cut the twins differently, so they were no longer identical
      when CSE met them. infonce_temperature on 8 CPU devices: ``scatter-add.10`` and
      ``scatter-add.11`` are identical before; dump 0005 (after the Shardy round trip)
      gives them ``sharding={devices=[1,8]<=[8]}`` and ``{devices=[8,1]<=[8]}``, and dump
      0008 (``spmd-cleanup.after_cse``) still has both, as ``scatter = f32[16,2]`` and
      ``scatter.1 = f32[2,16]``.
    """
    v = str(m.after.module.attributes.get("num_partitions", "1"))
    if not (v.isdigit() and int(v) > 1):
        return survivor
    Bn, An, b2a = m.before.nodes, m.after.nodes, m.b2a
    out = {}
    for c, s in survivor.items():
        y, ys = b2a[c], b2a[s]
        if y >= 0 and ys >= 0 and y != ys and (
                (_own(An[y], Bn[c]) and not _own(An[y], Bn[s]) and _own(An[ys], Bn[s])) or
                (cse_first and An[y].dims != An[ys].dims)):
            continue
        out[c] = s
    return out
