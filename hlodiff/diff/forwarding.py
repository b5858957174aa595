"""Values forwarded through identity views (issue 9, class 11).

Algebraic simplification deletes views that change nothing about a value: a reshape
(``f32[1,1,8] -> f32[8]``), a bitcast or copy, a broadcast or transpose that adds and
moves nothing. Whatever the pass did to the view's users, the view's value is its
operand's: it lives on where the operand's value does (the operand itself when that
survived), not in the consumer that replaced its users.
"""

from __future__ import annotations

from ..hlo.model import Instruction
from .partition import may_be_piece
from .unit_reduces import unit_reduce_source
from .view import Node, View

_VIEWS = ("reshape", "bitcast", "copy", "broadcast", "transpose")


def same_values(i: Instruction, o: Instruction) -> bool:
    """``i`` holds exactly the elements of its operand ``o``, in the same order."""
    si, so = i.shape, o.shape
    if si.is_tuple or so.is_tuple or si.num_elements != so.num_elements:
        return False
    if si.element_type != so.element_type:
        return False
    if i.opcode in ("reshape", "bitcast", "copy"):
        return True
    if i.opcode in ("broadcast", "transpose"):
        return i.dimensions == tuple(range(len(si.dims)))
    return False


def view_source(v: View, b: Node, m=None) -> Node | None:
    """The operand whose value ``b`` only re-views, or None (a reduce summing nothing
    re-views its input: :mod:`unit_reduces`, given the matching ``m``)."""
    if b.opcode == "reduce":
        return unit_reduce_source(m, b) if m is not None else None
    if b.opcode not in _VIEWS or len(b.operands) != 1:
        return None
    o = v.nodes[b.operands[0]]
    return o if same_values(b.inst, o.inst) else None


def alias_views(v: View) -> dict[int, list[int]]:
    """Node -> the bitcasts/reshapes/copies the view sees through to it (its re-views)."""
    out: dict[int, list[int]] = {}
    for n in v.nodes:
        if n.opcode in ("bitcast", "reshape", "copy") and n.alias >= 0:
            out.setdefault(v.resolve(n.idx), []).append(n.idx)
    return out


def became_view(m, views: dict[int, list[int]], b: Node, src: Node) -> Node | None:
    """The after view (bitcast, reshape, copy) of ``src``'s partner with ``b``'s shape that
    no before node claims: the reshape decomposer turned ``b`` into it (a reshape that only
    reinterprets memory becomes a bitcast, fused into its consumers).

    In a partitioned module the shapes compare by rank only, so the view must also be one
    device's piece of ``b``: fresh 26 adafactor on 8 H100s reshapes an attention transpose
    to f32[16,32,128]; the transpose kernel's f32[64,8,16] bitcast (a gemm's operand) is no
    piece of it, and the value stays in the kernel (``input_transpose_fusion.11``)."""
    A = m.after
    y = m.b2a[src.idx]
    if y < 0:
        return None
    for u in list(A.nodes[y].users) + views.get(y, []):
        a = A.nodes[u]
        if a.opcode in ("bitcast", "reshape", "copy") and m.a2b[u] < 0 and \
                a.mdims == b.mdims and not (b.op_name and not a.op_name and a.fusion < 0) and \
                (b.mdims == b.dims or _local_fits(b, src, A.nodes[y], a, m.parts)):
            return a
    return None


def _local_fits(b: Node, src: Node, y: Node, a: Node, parts: int) -> bool:
    """In a partitioned module, whether ``a`` has the per-device shape of ``b``, a view of
    ``src`` whose piece ``y`` is. When the partitioner cut only dims that ``b`` keeps from
    ``src`` (a common leading run), ``b``'s piece is known exactly; else ``a`` need only be
    some piece of ``b``."""
    gb, gs, ly, la = b.inst.shape, src.inst.shape, y.inst.shape, a.inst.shape
    if any(x is None or x.is_tuple for x in (gb, gs, ly, la)) or \
            len(gs.dims) != len(ly.dims):
        return may_be_piece(gb, la, parts)
    lead = 0
    while lead < min(len(gb.dims), len(gs.dims)) and gb.dims[lead] == gs.dims[lead]:
        lead += 1
    if any(g != loc for g, loc in zip(gs.dims[lead:], ly.dims[lead:])):
        return may_be_piece(gb, la, parts)
    return tuple(la.dims) == tuple(ly.dims[:lead]) + tuple(gb.dims[lead:])


def tuple_slot(B: View, A: View, b: Node, u: int, y: int) -> Node | None:
    """b is element k of tuple ``u`` whose partner ``y`` is a tuple of the same arity:
    the partner's element k holds b's value (shard4). The entry's result tuple is kept
    while float normalization makes a bf16 -> f32 convert of a dot's result a no-op
    (bf16_attention_f32_softmax cpu8: ``convert_element_type.23`` lives on in
    ``convert_bitcast_fusion.1``, element 1 of ``ROOT tuple.3``); naming the tuple says
    nothing."""
    t, ta = B.nodes[u], A.nodes[y]
    if t.opcode != "tuple" or ta.opcode != "tuple" or len(t.operands) != len(ta.operands) \
            or t.operands.count(b.idx) != 1:
        return None
    return A.nodes[ta.operands[t.operands.index(b.idx)]]
