"""Matching evidence that only SPMD-partitioned programs carry.

JAX's sharded programs go through the Shardy round trip (HLO -> MLIR -> HLO) before the SPMD
partitioner. On the way back the import gives an instruction that had no op_name its old
name as op_name (``%broadcast.3 = ... broadcast(...)`` comes back as ``%broadcast.1 = ...
metadata={op_name="broadcast.3"}``), and the partitioner and fusion then copy it with that
metadata. An after instruction whose op_name is the name of a before instruction without one,
with the same opcode, is therefore that instruction (or one of its copies). The caller runs
this only for partitioned modules (``num_partitions`` > 1).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable

from ..analysis.backend import compiled_for_gpu


def recorded_names(m, score: Callable) -> int:
    """Pair before instructions without an op_name with the after instruction that carries
    their name as op_name (the best-connected copy when fusion duplicated it). ``m`` is a
    ``match.Matching``, ``score(m, b, a)`` its connection score (passed in: match.py calls
    this module)."""
    Bn, An = m.before.nodes, m.after.nodes
    want: dict[str, int] = {}
    for b in Bn:
        md = b.inst.metadata
        if b.alias >= 0 or b.opcode == "parameter" or m.b2a[b.idx] >= 0 or \
                (md is not None and md.op_name):
            continue
        want.setdefault(b.name, b.idx)
    if not want:
        return 0
    cands: dict[int, list[int]] = defaultdict(list)
    for a in An:
        if a.alias >= 0 or m.a2b[a.idx] >= 0 or not a.op_name:
            continue
        x = want.get(a.op_name)
        if x is not None and Bn[x].opcode == a.opcode:
            cands[x].append(a.idx)
    c = 0
    for x, lst in cands.items():
        b = Bn[x]
        # the copy at the global rank is the partitioned instruction itself; copies of
        # another rank are what later passes (algsimp, reshape-mover) rebuilt from it
        best = max(lst, key=lambda y: (An[y].mdims == b.mdims, score(m, b, An[y]), -y))
        c += m.pair(x, best, "recorded name")
    return c


def top_level_constants(m) -> int:
    """A before constant paired with a copy inside a fusion, while the constant the copy was
    cloned from is still a top-level instruction (fusion names its copies ``<name>.N``,
    ``<name>.clone.N``): the value still lives at top level, in that one. Re-pair it there
    (the copies are listed by ``duplicates``)."""
    Bn, An = m.before.nodes, m.after.nodes
    top: dict[str, int] = {}
    for a in An:
        if a.opcode == "constant" and a.fusion < 0 and a.alias < 0:
            top[a.name] = a.idx
    if not top:
        return 0
    c = 0
    for b in Bn:
        y = m.b2a[b.idx]
        if b.opcode != "constant" or y < 0 or An[y].fusion < 0:
            continue
        name = An[y].name
        t = -1
        while "." in name and t < 0:
            name = name.rpartition(".")[0]
            t = top.get(name, -1)
        if t < 0 or An[t].inst.literal != b.inst.literal or An[t].mdims != b.mdims:
            continue
        p = m.a2b[t]
        if p >= 0:
            # taken by an identical constant the round trip merged into b (it keeps the
            # first in text order, a call's inlined body after its caller's own code)
            q = Bn[p]
            if q.inst.literal != b.inst.literal or \
                    ((q.site is not None, q.idx) < (b.site is not None, b.idx)):
                continue
            m.b2a[p] = -1
            m.how.pop(p, None)
        m.a2b[y] = -1
        m.b2a[b.idx] = t
        m.a2b[t] = b.idx
        m.how[b.idx] = "top-level constant"
        del top[An[t].name]
        c += 1
    return c


def inlined_text_order(module) -> dict[tuple, int]:
    """(call site or None, computation, name) -> position in the entry's text once every
    call is inlined (the call inliner puts a callee's instructions where the call was).
    The Shardy round trip runs after inlining and keeps the first of identical constants
    and broadcasts in this order."""
    out: dict[tuple, int] = {}
    by_name = module.by_name

    def walk(comp, site, depth):
        for i in comp.instructions:
            if i.opcode == "call" and i.calls and depth < 50:
                callee = by_name.get(i.calls[0])
                if callee is not None:
                    walk(callee, i.name, depth + 1)
            out.setdefault((site, comp.name, i.name), len(out))

    entry = by_name.get(module.entry)
    if entry is not None:
        walk(entry, None, 0)
    return out


def rebuilt_dots(m) -> int:
    """A before dot left unpaired, and an unpaired after dot without metadata reading the
    same values (through bitcasts/reshapes): algsimp rebuilt the dot on reshaped operands
    (per-device shapes often have size-1 dims: dot(a[1,k], b[k,n]) becomes
    reshape(dot(reshape(a), b))) and gave the new dot no metadata. Pair them when exactly
    one such after dot reads what the before dot read."""
    Bn, An = m.before.nodes, m.after.nodes
    see = ("bitcast", "copy", "transpose", "reshape")

    def top(i: int) -> int:
        return An[i].fusion if An[i].fusion >= 0 else i

    comps = m.after.module.by_name
    layout_only: dict[str, bool] = {}

    def moves_only(x) -> bool:  # a fusion of bitcasts/copies/transposes of one operand
        name = x.inst.calls[0] if x.inst.calls else ""
        v = layout_only.get(name)
        if v is None:
            c = comps.get(name)
            v = c is not None and all(i.opcode in see or i.opcode == "parameter"
                                      for i in c.instructions) and \
                sum(i.opcode == "parameter" for i in c.instructions) == 1
            layout_only[name] = v
        return v

    def strip(i: int) -> int:  # through layout-only ops, to the top-level instruction
        i = top(i)
        for _ in range(8):
            x = An[i]
            if x.opcode == "fusion" and x.operands and moves_only(x):
                i = top(x.raw_operands[0]) if x.raw_operands else i
                continue
            if x.opcode not in see or not x.operands:
                break
            i = top(x.operands[0])
        return i

    def _after_inputs(_view, a) -> set[int]:
        return {x for o in a.operands for x in (strip(o), top(o))}

    def _before_inputs(_m, b) -> set[int]:
        out: set[int] = set()
        for o in b.operands:
            x = o
            for _ in range(8):
                y = m.b2a[x]
                if y >= 0:
                    out.update((strip(y), top(y)))
                    break
                if Bn[x].opcode not in see or not Bn[x].operands:
                    break
                x = Bn[x].operands[0]
        return out

    free = [a for a in An if a.opcode == "dot" and m.a2b[a.idx] < 0 and a.alias < 0
            and not a.op_name]
    if not free:
        return 0
    def through_collectives(xs: set[int]) -> set[int]:
        # the partitioner gathers a sharded operand before the dot reads it
        out = set(xs)
        for x in xs:
            n = An[x]
            if n.opcode in ("all-gather", "all-reduce", "all-to-all") and n.operands:
                out.add(n.operands[0])
        return out

    ins = {a.idx: through_collectives(_after_inputs(m.after, a)) for a in free}
    from .reshard_paths import resharded_sources
    # and those algsimp gave the op_name of a view it folded in (no before dot carries it)
    dot_names = {b.op_name for b in Bn if b.opcode == "dot"}
    deep = None
    loose = free + [a for a in An if a.opcode == "dot" and m.a2b[a.idx] < 0 and a.alias < 0
                    and a.op_name and a.op_name not in dot_names]

    def chan(a: int):
        """The lowest channel_id among the collectives a dot reads (None: it reads none)."""
        ids = []
        for x in ins.get(a) or (deep or {}).get(a, ()):
            v = An[x].inst.attrs.get("channel_id") if An[x].opcode in (
                "all-gather", "all-reduce", "all-to-all") else None
            if v is not None and str(v).isdigit():
                ids.append(int(str(v)))
        return min(ids) if ids else None
    named: dict[tuple, list] = {}  # (op_name, source) -> open after dots carrying them
    for a in An:
        if a.opcode == "dot" and m.a2b[a.idx] < 0 and a.alias < 0 and a.op_name:
            named.setdefault((a.op_name, a.src), []).append(a)

    def ins_of(a) -> set[int]:
        v = ins.get(a.idx)
        if v is None:
            v = ins[a.idx] = through_collectives(_after_inputs(m.after, a))
        return v

    class _One:  # _before_inputs of one operand: a node with just that operand
        def __init__(self, o):
            self.operands = [o]

    c = 0
    for b in Bn:
        if b.opcode != "dot" or m.b2a[b.idx] >= 0 or b.alias >= 0:
            continue
        # every operand whose value is known after must be read by the new dot
        known = [w for w in (_before_inputs(m, _One(o)) for o in b.operands) if w]
        if not known:
            continue
        # the rebuilt dot kept b's metadata: batch-dot-simplification squeezes the size-1
        # batch dimension of a per-device piece (fresh 16 nystromformer on 8 CPUs:
        # dot_general.229 = f32[8,4,8,8] becomes dot.598 = f32[4,8,8], its op_name and
        # source line kept): the one open dot with them that reads what b reads is it
        hits = [a.idx for a in named.get((b.op_name, b.src), ()) if m.a2b[a.idx] < 0
                and all(w & ins_of(a) for w in known)] if b.op_name else []
        if len(hits) != 1:
            hits = [a.idx for a in free if m.a2b[a.idx] < 0
                    and all(w & ins[a.idx] for w in known)]
        if len(hits) > 1:
            # look-alikes (a remat recomputation, repeated layers): the partitioner numbers
            # the collectives it inserts (channel_id) in program order, so the before dots,
            # taken in text order, get the candidates in the order of what they gather
            ranks = [chan(h) for h in hits]
            if all(r is not None for r in ranks) and len(set(ranks)) == len(ranks):
                hits = [min(hits, key=chan)]
        if not hits:  # twins3: operands reached through the partitioner's resharding
            if deep is None:  # once: the walks are linear in the after dots
                deep = {a.idx: resharded_sources(m.after, a) for a in loose}
            hits = [a for a, w in deep.items()
                    if m.a2b[a] < 0 and all(k & w for k in known)]
            if len(hits) > 1:
                ranks = [chan(h) for h in hits]
                if all(r is not None for r in ranks) and len(set(ranks)) == len(ranks):
                    hits = [min(hits, key=chan)]
        if len(hits) == 1:
            c += m.pair(b.idx, hits[0], "rebuilt dot")
    return c


_NO_OPS = ("broadcast", "reshape", "transpose", "convert", "copy", "slice", "bitcast")


def early_cse(view) -> dict[int, int]:
    """No-op instructions (a broadcast or reshape that changes nothing, which the view sees
    through) merged by CSE before algebraic simplification could delete them: the SPMD
    partitioner's cleanup pipeline (spmd-cleanup: dce, tuple-simplifier, cse) runs CSE on
    the partitioned module before any algsimp. Node -> the identical one CSE kept (the
    first in the text once calls are inlined)."""
    nodes = view.nodes
    memo: dict[int, object] = {}

    def key(i: int, depth: int = 0):
        k = memo.get(i)
        if k is not None:
            return k
        n = nodes[i]
        if n.alias < 0:
            k = ("n", n.fp)
        elif n.opcode in _NO_OPS and n.raw_operands and depth < 32:
            k = ("i", n.opcode, n.dims, n.inst.dimensions, key(n.raw_operands[0], depth + 1))
        else:
            k = ("n", nodes[view.resolve(i)].fp)
        memo[i] = k
        return k

    order = inlined_text_order(view.module)
    groups: dict[tuple, list[int]] = {}
    for n in nodes:
        if n.alias >= 0 and n.opcode in _NO_OPS and n.raw_operands:
            groups.setdefault((key(n.idx), n.ctx), []).append(n.idx)
    out: dict[int, int] = {}
    for g in groups.values():
        if len(g) < 2:
            continue
        keep = min(g, key=lambda i: (order.get((nodes[i].site, nodes[i].comp, nodes[i].name),
                                               len(order)), i))
        for i in g:
            if i != keep:
                out[i] = keep
    return out


def cse_before_simplification(after) -> bool:
    """Whether the partitioned module met CSE (spmd-cleanup) and the Shardy round trip
    before any algebraic simplification: XLA's CPU pipeline partitions first; the GPU
    pipeline runs an ``spmd-simplify`` pipeline (algsimp, constant folding, ...) before the
    partitioner. A GPU compile leaves cuBLAS/cuDNN/Triton calls or GPU backend configs
    (``operation_queue_id``) in the after module."""
    v = str(after.attributes.get("num_partitions", "1"))
    return v.isdigit() and int(v) > 1 and not compiled_for_gpu(after)


def _metadata_against(m, b: int, keep: int, other: int) -> bool:
    """twins3: the pair (b, keep) carries b's own op_name and source line and ``other``
    does not: the metadata says b is ``keep``, whatever the shapes suggest (a per-device
    dot on flattened batch dims, f32[2,16,128] -> f32[32,16], looks like a misfit)."""
    Bn, An = m.before.nodes, m.after.nodes

    def own(a: int) -> bool:
        return An[a].op_name == Bn[b].op_name and An[a].src == Bn[b].src

    return own(keep) and not own(other)


def swap_misfit_dots(m) -> int:
    """Look-alike dots (same op_name, same rank) paired crosswise: a before dot whose
    partner's per-device shape cannot hold its value, while another pair's after dot can,
    and that pair's before dot fits this one's partner. Swap them (each dot computes its
    own shard; a dot's output is never larger than its global shape)."""
    from .partition import holds_shape, num_partitions
    Bn, An = m.before.nodes, m.after.nodes
    nparts = num_partitions(m.before.module, m.after.module)
    by_op: dict[str, list[int]] = {}
    for b in Bn:
        if b.opcode in ("dot", "convolution") and m.b2a[b.idx] >= 0:
            by_op.setdefault(b.opcode, []).append(b.idx)

    def fits(b: int, a: int) -> bool:
        return holds_shape(Bn[b].inst.shape, An[a].inst.shape, nparts)

    c = 0
    for lst in by_op.values():
        for x in lst:
            ax = m.b2a[x]
            if fits(x, ax):
                continue
            for y in lst:
                ay = m.b2a[y]
                if y != x and fits(x, ay) and fits(y, ax) and not fits(y, ay) and \
                        not _metadata_against(m, x, ax, ay) and \
                        not _metadata_against(m, y, ay, ax):
                    m.b2a[x], m.b2a[y] = ay, ax
                    m.a2b[ay], m.a2b[ax] = x, y
                    m.how[x] = m.how[y] = "shard shape"
                    c += 1
                    break
    return c
