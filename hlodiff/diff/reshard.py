"""Where a partitioned program holds the *whole* value of a reduction (SPMD).

The SPMD partitioner computes a reduction over a sharded dimension (a ``reduce`` over the
batch, the weight gradient ``dot`` contracting the batch) as a partial result per device
followed by a collective that sums the partials: ``all-reduce`` (or ``reduce-scatter``
when the result stays sharded). The partial keeps the instruction's name and fusion takes
it in; the collective carries the instruction's op_name. What the instruction's users read
is the collective's result: on CPU the all-reduce combiner then merges the all-reduces
into one tuple-shaped all-reduce whose ``get-tuple-element``s carry the op_name of the
all-reduce each replaces (mlp_mixer, cpu8: ``%all-reduce.2 = f32[16] all-reduce(%reduce.32)``
read by the no-op ``reshape.48``/``reduce.33`` algsimp removes; finally
``%get-tuple-element.2 = get-tuple-element(%all-reduce.17), index=2,
metadata={op_name=".../reduce_sum"}``). On GPU the collective is async: the value is in
the ``-done`` half.

So a before instruction that only re-views or forwards the value of such a reduction
(a reshape, a transpose that became a layout change, a no-op reduce algsimp removed) lives
on in the collective's result, not in the fusion computing the partial.
"""

from __future__ import annotations

from .view import Node, View

_REDUCING = {"all-reduce", "all-reduce-start", "reduce-scatter"}
_VIEWS = {"bitcast", "reshape", "copy"}
_RE_VIEWS = {"reshape", "transpose", "copy", "bitcast", "bitcast-convert"}


def _done(A: View, c: Node) -> Node:
    """The node holding an async collective's result (its ``-done``), else ``c``."""
    if c.opcode.endswith("-start"):
        for u in c.users:
            if A.nodes[u].opcode.endswith("-done"):
                return A.nodes[u]
    return c


def _same_op(a: Node, op_name: str | None) -> bool:
    return op_name is not None and a.op_name == op_name


def reduced_output(A: View, a: Node, op_name: str | None) -> Node | None:
    """The after node holding the summed value of ``a`` (an after node computing a partial
    result; a fused one stands for its fusion): the reducing collective reading it that
    carries ``op_name`` (the before instruction's), or the element of a combined (tuple)
    collective at ``a``'s position that carries it. None when no such collective reads it."""
    if op_name is None:
        return None
    # the view sees through a fusion to its root: the root's users are the fusion's
    h = A.nodes[A.resolve(a.home)] if a.fusion >= 0 else a
    if h.idx != a.idx and h.fusion >= 0:
        return None  # a fused node other than the fusion's result
    for u in h.users:
        c = A.nodes[u]
        if c.opcode not in _REDUCING:
            continue
        d = _done(A, c)
        if not d.inst.shape.is_tuple:
            if _same_op(c, op_name) or _same_op(d, op_name):
                return _resliced(A, d, op_name)
            continue
        pos = [k for k, o in enumerate(c.operands) if o == h.idx]
        for g in d.users:
            gn = A.nodes[g]
            if gn.opcode == "get-tuple-element" and (gn.inst.index or 0) in pos and \
                    _same_op(gn, op_name):
                return _resliced(A, gn, op_name)
    return None


def _resliced(A: View, r: Node, op_name: str) -> Node:
    """A result that stays sharded is all-reduced and then cut to this device's shard:
    the partitioner's ``dynamic-slice`` of the sum carries the op_name too (mlp_deep,
    cpu8: ``%dynamic-slice.15 = f32[16] dynamic-slice(%all-reduce.3, ...),
    metadata={op_name=".../reduce_sum"}``, later fused into the update that reads it).
    The device's value is that slice."""
    for u in r.users:
        n = A.nodes[u]
        if n.opcode == "dynamic-slice" and _same_op(n, op_name):
            return n
    return r


def view_of(A: View, views: dict[int, list[int]], r: Node, b: Node) -> Node:
    """A bitcast/reshape/copy of ``r`` with ``b``'s shape (a transpose that became a layout
    change is one), else ``r`` itself."""
    for v in list(r.users) + views.get(r.idx, []):
        n = A.nodes[v]
        if n.opcode in _VIEWS and n.mdims == b.mdims and n.fusion < 0:
            return n
    return r


def _noop_reduce(B: View, b: Node) -> bool:
    """A reduce over size-1 dimensions only (algsimp removes it: its value is its input's)."""
    if b.opcode != "reduce" or not b.operands or b.inst.dimensions is None:
        return False
    shp = B.nodes[b.operands[0]].inst.shape
    dims = shp.dims if not shp.is_tuple else ()
    return all(d < len(dims) and dims[d] == 1 for d in b.inst.dimensions)


def reduced_operand(m, views: dict[int, list[int]], b: Node, depth: int = 0,
                    survivor: dict[int, int] | None = None) -> Node | None:
    """For an unpaired before node ``b`` that only re-views its input (a layout op, a
    reduce over size-1 dimensions), the after node holding that input's summed value when
    the partitioner reduced it with a collective (see the module docstring); through a
    few such unpaired re-views.

    An input CSE merged into an identical copy (``survivor``: node -> the copy CSE keeps)
    has the copy's partial, but its own collective: CSE runs after the partitioner here,
    and two all-reduces never merge (each has its own channel). Evidence, fresh 6
    batchnorm_running_stats on 8 CPU devices, dump 0011: ``_var``'s ``reduce_sum.21`` and the
    entry's ``reduce_sum.58`` are each ``reduce(%param.1)`` with an all-reduce of their own
    (``all-reduce.1``, op_name ``.../jvp(jit(_var))/reduce_sum``, and ``all-reduce``); CSE
    merges the reduces, and ``broadcast_in_dim.4 = reshape(reduce_sum.21)`` lives on in
    ``all-reduce.1`` (reshape-mover, dump 0014)."""
    B, A = m.before, m.after
    if b.opcode in _RE_VIEWS and len(b.operands) == 1:
        o = B.nodes[b.operands[0]]
    elif _noop_reduce(B, b):
        o = B.nodes[b.operands[0]]
    else:
        return None
    y = m.b2a[o.idx]
    if y < 0 and survivor and survivor.get(o.idx, o.idx) != o.idx:
        y = m.b2a[survivor[o.idx]]  # cpu8b: the merged copy's partial, its own collective
    if y < 0:
        if depth >= 4:
            return None
        r = reduced_operand(m, views, o, depth + 1, survivor)
        return None if r is None else view_of(A, views, r, b)
    r = reduced_output(A, A.nodes[y], o.op_name)
    if r is None:
        return None
    return view_of(A, views, r, b)


def flipped_dot(m, b: Node) -> Node | None:
    """An unpaired ``transpose`` of a dot whose partner dot carries the *transpose's*
    op_name: algsimp rebuilt transpose(dot(a, b)) as dot(b, a) and gave the new dot the
    transpose's metadata (gpt_rope_adamw, gpu8: ``%transpose.35 = transpose(%dot_general.106)``
    ends as ``%dot.198 ... metadata={op_name=".../transpose"}`` in gemm_fusion_dot.95).
    The new dot computes the transposed value: b lives on in it."""
    if b.opcode != "transpose" or len(b.operands) != 1 or not b.op_name:
        return None
    o = m.before.nodes[b.operands[0]]
    y = m.b2a[o.idx]
    if o.opcode != "dot" or y < 0:
        return None
    a = m.after.nodes[y]
    if a.opcode == "dot" and a.op_name == b.op_name and o.op_name != b.op_name:
        return a
    return None


def summed_transpose(m, b: Node, a: Node) -> Node | None:
    """The collective holding the whole value of a transposed partial dot: ``b`` is a
    ``transpose`` of a dot that algsimp rebuilt as ``a = dot(b, a)``, and the partitioner
    sums ``a``'s per-device partials with an all-reduce. Algsimp moves the transpose
    through the all-reduce into the dot, so the all-reduce reads the rebuilt dot and holds
    the transpose's value; the dot holds only this device's partial. Evidence: fresh 7
    albert_shared_layers on 8 CPU devices, ``transpose.22 = transpose(dot_general.94)``:
    the pass dumps rewrite it at algsimp into an all-reduce, which the all-reduce combiner
    merges into ``all-reduce.22`` (``get-tuple-element.21``, index 14, reads the rebuilt
    dot's kernel ``ynn_fusion.8``). None where no such collective reads ``a``."""
    if b.opcode != "transpose" or len(b.operands) != 1:
        return None
    return reduced_output(m.after, a, m.before.nodes[b.operands[0]].op_name)
