"""Reductions over unit dimensions only: algebraic simplification makes them reshapes.

XLA's AlgebraicSimplifier (``HandleReduce``): when a reduce's result has as many elements
as its input, every reduced dimension has size 1 and nothing is summed; the init value
is the reduction's identity, so the reduce is replaced by a reshape of its input (later a
bitcast, fused into its consumers). Its value is then its input's, like any identity
view's (:mod:`forwarding`).

Evidence: unseen gpt_rope_adamw on 8 CPU devices, ``reduce_sum.519 = f32[8,16]
reduce(div.127 = f32[8,16,1], constant.103), dimensions={2}``: the oracle follows it
(pass 0016, algsimp) into what ``div.127`` became, ``multiply_reduce_fusion.22`` among
others. Unpaired and treated as arithmetic, its nearest paired neighbour was the init
constant, and its value was named ``constant.28.clone``.
"""

from __future__ import annotations

from .view import Node


def unit_reduce_source(m, b: Node) -> Node | None:
    """The input of a single-input before reduce that sums nothing (as many result
    elements as input elements), or None. Only where none of its users is paired: a
    paired user's partner reads the value, and names its place more surely than the
    input's own place, which may be a guess among twins (unseen gpt_rope_adamw with JAX
    0.4.30: ``reduce.1404`` of ``divide.1399``, placed among two layers' fusions)."""
    if b.opcode != "reduce" or len(b.operands) != 2:
        return None
    if any(m.b2a[u] >= 0 for u in b.users):
        return None
    o = m.before.nodes[b.operands[0]]
    si, so = b.inst.shape, o.inst.shape
    if si is None or so is None or si.is_tuple or so.is_tuple:
        return None
    if si.num_elements != so.num_elements or si.element_type != so.element_type:
        return None
    return o
