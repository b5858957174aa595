"""Is a loop of a partitioned program the same loop, only cut per device?

The SPMD partitioner clones every computation it partitions (``region_3.11`` comes back as
``region_3.4_spmd``), so a while of a sharded program calls bodies of new names even when no
loop pass touched it. The fate engine reads a body of a new name as a loop rebuilt by
loop-invariant code motion or the while-loop simplifier, which widen or narrow the loop
state. A loop whose state has the same number of elements, each the same array or a shard of
one, was not rebuilt: its instructions are the same ones, partitioned.

The Shardy round trip (HLO -> MLIR -> HLO, before the partitioner) may also reorder the
loop state. gru_scan on 8 H100s (jax 0.10.2), pass ``shardy-xla`` (dump 0012 -> 0013):
before it, ``%get-tuple-element.113 = f32[16,16] get-tuple-element(%arg_tuple.5), index=20``
feeds ``dot_general.14``; after it the same dot reads ``%get-tuple-element.86 = f32[16,16]
get-tuple-element(%arg_tuple.4), index=14``, and the state's shapes moved with it
(``..., f32[8,8,16] x5, f32[16,16], f32[8,8,16] x4, f32[16,16] x2``). The elements then
still match one to one, but not by index: :func:`same_state` allows that, :func:`in_order`
does not (pairing loop elements by tuple index is only sound when it holds).
"""

from __future__ import annotations

from ..hlo.model import Shape
from . import partition


def _fits(g: Shape, loc: Shape, nparts: int) -> bool:
    """``loc`` is ``g`` or one device's piece of it."""
    if g.is_tuple or loc.is_tuple:
        return False
    if g.element_type == loc.element_type and g.dims == loc.dims:
        return True
    return partition.shard_ways(g, loc, nparts) > 0


def in_order(before: Shape, after: Shape, nparts: int) -> bool:
    """Same arity and every element of ``after`` is the one of ``before`` at its index."""
    if not (before.is_tuple and after.is_tuple) or \
            len(before.tuple_shapes) != len(after.tuple_shapes):
        return False
    return all(_fits(g, loc, nparts) for g, loc in zip(before.tuple_shapes, after.tuple_shapes))


def same_state(before: Shape, after: Shape, nparts: int) -> bool:
    """Same arity and the elements pair one to one (each the same array or a shard of it),
    in any order: the loop state of a loop the partitioner only cut (and Shardy reordered)."""
    if nparts <= 1 or not (before.is_tuple and after.is_tuple):
        return False
    bs, as_ = before.tuple_shapes, after.tuple_shapes
    if len(bs) != len(as_) or len(bs) > 512:
        return False
    if in_order(before, after, nparts):
        return True
    # bipartite matching (Kuhn): loop states are small (tens of elements)
    adj = [[j for j, a in enumerate(as_) if _fits(b, a, nparts)] for b in bs]
    owner = [-1] * len(as_)

    def grab(i: int, seen: list[bool]) -> bool:
        for j in adj[i]:
            if seen[j]:
                continue
            seen[j] = True
            if owner[j] < 0 or grab(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(bs)):
        if not adj[i] or not grab(i, [False] * len(as_)):
            return False
    return True


def _nparts(m) -> int:
    n = getattr(m, "_gpu4_nparts", None)
    if n is None:
        n = partition.num_partitions(m.before.module, m.after.module)
        m._gpu4_nparts = n
    return n


def reordered_param(m, b, a) -> bool:
    """``b``, ``a``: the parameters of the bodies of a paired loop (``match.Matching``
    nodes). In a partitioned program they are the same loop state when the elements pair
    one to one, even in another order (the shape comparison of the matcher, element by
    element, refuses a reordered state)."""
    return b.opcode == a.opcode == "parameter" and \
        same_state(b.inst.shape, a.inst.shape, _nparts(m))


def index_sound(m, b, a, k: int | None = None) -> bool:
    """Pairing element ``k`` of the paired tuples ``b`` and ``a`` by tuple index is sound:
    not a partitioned program, the elements fit index by index, or (a reordered state)
    element ``k`` still fits at its index and the element after it too (a moved element
    leaves a place that no longer fits)."""
    n = _nparts(m)
    if n <= 1:
        return True
    sb, sa = b.inst.shape, a.inst.shape
    if in_order(sb, sa, n):
        return True
    if k is None or not (sb.is_tuple and sa.is_tuple) or k >= len(sb.tuple_shapes) or \
            k >= len(sa.tuple_shapes):
        return False
    return _fits(sb.tuple_shapes[k], sa.tuple_shapes[k], n)


def reordered_loop(m, w) -> int:
    """The after loop of the unpaired before while ``w`` (a ``view.Node``) in a partitioned
    program whose state the Shardy round trip reordered: the only after while of its
    op_name, unpaired, whose state pairs one to one with ``w``'s. -1 if none or several.
    Only its bodies' parameters and roots are paired through it (the loop itself was
    rebuilt by the round trip)."""
    n = _nparts(m)
    if n <= 1 or w.opcode != "while" or not w.op_name:
        return -1
    cands = [x.idx for x in m.after.nodes if x.opcode == "while" and x.op_name == w.op_name
             and m.a2b[x.idx] < 0]
    if len(cands) != 1:
        return -1
    a = m.after.nodes[cands[0]]
    return a.idx if same_state(w.inst.shape, a.inst.shape, n) else -1
