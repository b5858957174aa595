"""Scalar constants broadcast to one element per device, then folded (partitioned modules).

The SPMD partitioner gives every instruction its per-device shape. A ``broadcast`` of a
scalar constant whose users are split so finely that each device holds one element
(``s32[8] -> s32[1]`` on 8 devices) then makes as many elements as its operand has, and
algebraic simplification turns it into a ``reshape``. Constant folding does not evaluate
broadcasts (they grow constants), but it does evaluate a reshape of a constant: the
scalar is consumed by folding and a one-element constant takes the reshape's place,
later copied into the kernels that read it.

Evidence, fresh 6 diffusion_timestep_loss on 8 CPU devices (jax 0.10.2): before
optimization ``%broadcast.8 = s32[8] broadcast(%constant.14)``, ``constant.14 = s32[]
constant(50)``, read by ``%add.5 = s32[8] add(%a_2_.1, %broadcast.8)``. Dump 0011 (algsimp):
``%reshape.6 = s32[1] reshape(%constant.1.clone)``; dump 0015 (constant_folding):
``%constant.54 = s32[1] constant({50})`` read by ``%add.15``; after optimization it is
``constant.63 = s32[1] constant({50})`` inside the fusion that holds ``add.30``. Without
this the engine found no partner for the scalar and said "simplified away".
"""

from __future__ import annotations

from .value_facts import ELEMENTWISE
from .view import Node, View

_THROUGH = ("bitcast", "reshape", "broadcast", "copy")
_ELEMENTWISE = ELEMENTWISE | {"shift-right-logical", "shift-right-arithmetic", "shift-left",
                              "xor", "remainder"}


def _one(n: Node) -> bool:
    s = n.inst.shape
    return not s.is_tuple and s.num_elements == 1


def _constant_operand(A: View, a: Node) -> int:
    """A one-element constant that ``a`` reads (through bitcasts and reshapes), or -1."""
    for o in a.operands:
        x = A.nodes[o]
        seen = 0
        while x.opcode in _THROUGH and x.operands and seen < 4:
            x = A.nodes[x.operands[0]]
            seen += 1
        if x.opcode == "constant" and _one(x):
            return x.idx
    return -1


def folded_one_cell(B: View, A: View, b2a, b: Node) -> int | None:
    """For a scalar constant ``b`` of a partitioned module whose every user is a broadcast
    that holds one element per device (the partners of the broadcast's elementwise users
    hold one element): the after index of the one-element constant that folding made of it
    (-1 when none is found), or None when ``b`` is not such a constant."""
    if b.opcode != "constant" or not _one(b) or not b.users:
        return None
    target = -1
    for u in b.users:
        un = B.nodes[u]
        if un.opcode != "broadcast" or un.inst.shape.is_tuple or \
                un.inst.shape.num_elements <= 1:
            return None
        seen = False
        for w in un.users:
            wn = B.nodes[w]
            y = b2a[w]
            if wn.opcode not in _ELEMENTWISE:
                continue
            if y < 0 or wn.inst.shape.dims != un.inst.shape.dims or not _one(A.nodes[y]):
                continue
            seen = True
            if target < 0:
                target = _constant_operand(A, A.nodes[y])
        if not seen:
            return None
    return target


def _twins_read_elsewhere(fb, b: Node) -> bool:
    """A constant of the before module with b's literal has readers this rule does not
    explain. The Shardy round trip merges identical constants, and the survivor keeps
    every copy's readers: folding consumes it only when it consumes all of them (fresh 6
    diffusion_timestep_loss ``constant.13 = f32[] constant(1)``: its own reshape was
    folded, but the merged ``constant.2`` lives on for silu's ``1``, fused)."""
    groups = getattr(fb, "_onecell_literals", None)
    if groups is None:
        groups = {}
        for n in fb.B.nodes:
            if n.opcode == "constant":
                groups.setdefault((n.inst.literal, n.inst.shape.dims_text), []).append(n.idx)
        fb._onecell_literals = groups
    twins = groups.get((b.inst.literal, b.inst.shape.dims_text), ())
    return any(t != b.idx and folded_one_cell(fb.B, fb.A, fb.m.b2a, fb.B.nodes[t]) is None
               for t in twins)


def folded_fate(fb, f, b: Node):
    """Fill ``f`` (b's fate) as folded when :func:`folded_one_cell` applies; None if not."""
    t = folded_one_cell(fb.B, fb.A, fb.m.b2a, b)
    if t is None or _twins_read_elsewhere(fb, b):
        return None
    f.fate = "folded"
    if t >= 0:
        fb._set_after(f, fb.A.nodes[t])
    f.reason = ("partitioned to one element per device: algebraic simplification made its "
                "broadcast a reshape, which constant folding evaluated"
                + (f" into {f.after}" if t >= 0 else ""))
    return f
