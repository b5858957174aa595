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


def _body_root(v, ctl: int) -> int:
    roots = v.__dict__.get("_body_roots")
    if roots is None:
        roots = v._body_roots = {c: r for c, role, _comp, r, _p in v.bodies if role == "body"}
    return roots.get(ctl, -1)


def _param_loop(v, p: int) -> int:
    """The while whose body (or condition) has parameter node ``p``, else -1."""
    owner = v.__dict__.get("_param_loops")
    if owner is None:
        owner = v._param_loops = {q: c for c, _role, _comp, _r, ps in v.bodies
                                  if v.nodes[c].opcode == "while" for q in ps}
    return owner.get(p, -1)


def element_index(m, b, a, k: int | None) -> int | None:
    """The index in the paired after loop ``a`` of before loop ``b``'s state element ``k``,
    told by where the partner of that element's value sits: in the body's root tuple (what
    an iteration leaves there) and the init tuple. None where that tells nothing apart.

    The loop passes widen a loop's state (while-loop-invariant code motion appends the
    hoisted values) and narrow it (the simplifier drops dead or duplicate elements), and a
    partitioned program's round trip may reorder it: fresh 4 seq2seq_two_scans on 8 CPUs,
    ``while.36`` (10 elements) is ``while.65`` (11) after; three scan outputs start as the
    same zeros (init elements 3, 4, 5 all ``broadcast.7``), but the body writes each with
    its own dynamic-update-slice, whose partners sit at 3, 4, 5 of the new body's root.
    ``b`` and ``a`` may also be the parameters of the paired loops' bodies (or conditions):
    their elements are the loops' state elements."""
    B, A = m.before, m.after
    if k is not None and b.opcode == "parameter" and a.opcode == "parameter":
        wb, wa = _param_loop(B, b.idx), _param_loop(A, a.idx)  # the body's own state
        if wb < 0 or wa < 0 or m.b2a[wb] != wa:
            return None
        b, a = B.nodes[wb], A.nodes[wa]
    if k is None or b.opcode != "while" or a.opcode != "while":
        return None
    cands: set[int] | None = None
    pairs = ((_body_root(B, b.idx), _body_root(A, a.idx)),
             (b.raw_operands[0] if b.raw_operands else -1,
              a.raw_operands[0] if a.raw_operands else -1))
    for tb, ta in pairs:
        if tb < 0 or ta < 0:
            continue
        tbn, tan = B.nodes[tb], A.nodes[ta]
        if tbn.opcode != "tuple" or tan.opcode != "tuple" or k >= len(tbn.raw_operands):
            continue
        p = m.b2a[B.resolve(tbn.raw_operands[k])]
        if p < 0:
            continue
        js = {j for j, q in enumerate(tan.raw_operands) if A.resolve(q) == p}
        if js:
            cands = js if cands is None else (cands & js or cands)
    return next(iter(cands)) if cands and len(cands) == 1 else None
