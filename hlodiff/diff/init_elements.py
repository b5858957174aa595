"""The initial state of a rebuilt loop, element by element (old5 helper).

Loop passes rebuild a while (JAX 0.4.30: while-loop-invariant-code-motion and the
while-loop simplifier, ``body=wide.region_0.81.clone.clone``) together with its init tuple,
which gets a new name and, where a state element changed type or was hoisted, a new shape;
the tuple is then not paired, and neither are the values it gathers when their metadata is
shared (jnp.searchsorted's two ``s32[6,20] broadcast`` of 0 and 9, both
``.../broadcast_in_dim``). Once the loops are paired, the init tuples' elements at the same
position are: fresh 5 searchsorted_bucketize, ``tuple.111 = tuple(constant.106,
broadcast.108, broadcast.110, Arg_0, Arg_1)`` -> ``tuple.15 = tuple(copy.1, broadcast.27,
broadcast.28, Arg_1.2, fusion.6)``; the pass dumps follow broadcast.108/.110 to
broadcast.27/.28 (renamed by the call inliner, dump 0003, kept to the end).
"""

from __future__ import annotations


def pair_init_elements(m, compatible) -> int:
    """Pair the open elements of paired whiles' open init tuples position by position
    (same arity; ``compatible(b, a)``: the matcher's opcode/shape/literal test)."""
    B, A = m.before, m.after
    c = 0
    for b in B.nodes:
        if b.opcode != "while" or m.b2a[b.idx] < 0 or not b.raw_operands:
            continue
        a = A.nodes[m.b2a[b.idx]]
        if a.opcode != "while" or not a.raw_operands:
            continue
        tb, ta = B.nodes[b.raw_operands[0]], A.nodes[a.raw_operands[0]]
        if tb.opcode != "tuple" or ta.opcode != "tuple" or \
                len(tb.raw_operands) != len(ta.raw_operands):
            continue
        if m.b2a[tb.idx] >= 0 and m.b2a[tb.idx] != ta.idx:
            continue
        for x, y in zip(tb.raw_operands, ta.raw_operands):
            bx, ay = B.nodes[B.resolve(x)], A.nodes[y]
            if m.b2a[bx.idx] < 0 and m.a2b[y] < 0 and compatible(bx, ay):
                c += m.pair(bx.idx, y, "loop init")
    return c
