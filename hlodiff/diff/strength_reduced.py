"""Transposed dots that ended as an elementwise multiply (dot strength reduction).

Two passes in a row rewrite ``transpose(dot(a, b))`` where the dot sums over a dimension of
size 1 -- an outer product, common in a partitioned program once the batch dimension a
weight gradient sums over is split across devices (zoo vae_step on 8 H100s:
``dot_general.17 = f32[4,16] dot(add_any.6, relu)``, contracting the batch, 8 -> 1 per
device):

1. algebraic simplification folds the transpose into the dot, ``dot(b, a)``, a new
   instruction carrying the *transpose's* op_name;
2. dot strength reduction (a pass of its own in the GPU pipeline, dump 0023
   ``after_dot-strength-reduction``; part of algebraic simplification on the CPU) turns that
   dot into ``multiply(broadcast(b), broadcast(a))``.

The matcher pairs the transpose with a broadcast or the multiply in the kernel that
computes it (they share its op_name); the dot itself has no partner left and used to be
"simplified away" into some consumer. Its value is the multiply's: this module finds it
from the transpose's partner, only where that partner is (or directly feeds) a multiply of
two broadcasts holding the transpose's shape.
"""

from __future__ import annotations

from ..analysis.kernels import dims_attr
from .match import Matching
from .partition import holds_shape, num_partitions
from .view import Node, View

_VIEWS = ("bitcast", "reshape", "copy")


def _through_views(A: View, i: int) -> Node:
    n = A.nodes[i]
    for _ in range(4):
        if n.opcode not in _VIEWS or not n.raw_operands:
            break
        n = A.nodes[n.raw_operands[0]]
    return n


def _outer(A: View, n: Node) -> bool:
    """A multiply of two broadcasts (seen through views): an outer product."""
    return n.opcode == "multiply" and len(n.raw_operands) == 2 and all(
        _through_views(A, o).opcode == "broadcast" for o in n.raw_operands)


def outer_product_at(A: View, y: int) -> Node | None:
    """The outer-product multiply the after node ``y`` is, or the one multiply it feeds
    (a broadcast operand of it)."""
    n = A.nodes[y]
    if _outer(A, n):
        return n
    if n.opcode not in ("broadcast",) + _VIEWS:
        return None
    users = [A.nodes[u] for u in n.users if _outer(A, A.nodes[u])]  # (fused ones too)
    return users[0] if len(users) == 1 else None


def reduced_transposed_dots(m: Matching, known: dict[int, int]) -> dict[int, int]:
    """Before transpose and its dot -> the after multiply holding their value (see the
    module text). ``known``: nodes already placed (:mod:`dotrewrites`), left alone."""
    B, A = m.before, m.after
    nparts = max(1, num_partitions(B.module, A.module))
    out: dict[int, int] = {}
    by_op: dict[str, list[Node]] | None = None
    for t in B.nodes:
        if t.opcode != "transpose" or len(t.operands) != 1 or t.idx in known:
            continue
        d = B.nodes[t.operands[0]]
        if d.opcode != "dot" or d.users != [t.idx] or d.idx in known:
            continue
        yd = m.b2a[d.idx]
        if yd >= 0 and (A.nodes[yd].opcode == "dot" or contracted_per_device(d, B, nparts) != 1):
            continue  # the dot lives on as a dot, or sums over more than one element
        yt = m.b2a[t.idx]
        if yt >= 0:
            x = outer_product_at(A, yt)
        else:  # the transpose left unpaired: the outer product carrying its op_name
            if by_op is None:
                by_op = {}
                for n in A.nodes:
                    if n.op_name and _outer(A, n):
                        by_op.setdefault(n.op_name, []).append(n)
            xs = [n for n in by_op.get(t.op_name or "", ())
                  if m.a2b[n.idx] in (-1, t.idx, d.idx)
                  and holds_shape(t.inst.shape, n.inst.shape, nparts)]
            x = xs[0] if len(xs) == 1 else None
        if x is None or not holds_shape(t.inst.shape, x.inst.shape, nparts):
            continue
        out[t.idx] = out[d.idx] = x.idx
    return out


def contracted_per_device(b: Node, B: View, nparts: int) -> int | None:
    """Elements the before dot ``b`` sums over, per device when partitioned evenly (None:
    unknown)."""
    ops = b.raw_operands
    if not ops:
        return None
    shape = B.nodes[ops[0]].inst.shape.dims
    size = 1
    for t in dims_attr(b.inst.attrs.get("lhs_contracting_dims")):
        if 0 <= t < len(shape):
            size *= shape[t]
    return max(1, size // nparts) if size % nparts == 0 else None


def reason(b: Node, B: View, x: Node, nparts: int) -> str:
    """The sentence for a transpose or dot of :func:`reduced_transposed_dots`."""
    d = B.nodes[b.operands[0]] if b.opcode == "transpose" and b.operands else b
    k = contracted_per_device(d, B, nparts)
    why = ("it sums over one element" + (" per device" if nparts > 1 else "")) if k == 1 \
        else "an outer product"
    what = "the transpose is folded into it" if b.opcode == "transpose" else \
        f"the dot lives on as {x.name}"
    return (f"transpose(dot(a, b)) rebuilt as dot(b, a) by algebraic simplification, then as "
            f"{x.name} = multiply(broadcast, broadcast) by dot strength reduction ({why}): "
            f"{what}")
