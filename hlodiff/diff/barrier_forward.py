"""Values handed through a jax.checkpoint barrier, once XLA removed it (cpu5 helper).

``cse_barrier_expander`` replaces ``opt-barrier(tuple(x0, x1, ...))`` by the tuple itself;
the tuple simplifier then forwards each ``get-tuple-element(., i)`` to ``xi``. The value of
such a get-tuple-element is ``xi``'s, wherever that lives; the engine named the kernel of
the element's reader instead ("its effect is now in ...").

Evidence, fresh 4 cpu remat_nested_layers (jax 0.10.2): dump 0025 (after
cse_barrier_expander) has ``remat2.62 = get-tuple-element(%remat2.52), index=8`` of the
barrier's operand tuple; dump 0026 (tuple-simplifier) rewrites its reader to read element 8
itself, ``add.62``, fused into ``tanh_add_fusion.1`` (dump 0048). Nested checkpoints chain
barriers: a get-tuple-element of one barrier feeds the tuple of the next.
"""

from __future__ import annotations

from .view import Node, View


def forwarded_element(B: View, b: Node) -> int:
    """The node whose value a get-tuple-element of an opt-barrier hands on (through nested
    barriers, tuples and get-tuple-elements), or -1."""
    seen = 0
    n = b
    through_barrier = False
    while n.opcode == "get-tuple-element" and n.raw_operands and seen < 16:
        seen += 1
        src = B.nodes[n.raw_operands[0]]
        if src.opcode == "opt-barrier" and src.raw_operands:
            through_barrier = True
            src = B.nodes[src.raw_operands[0]]
        if src.opcode != "tuple" or n.inst.index is None or n.inst.index >= len(src.raw_operands):
            return -1
        n = B.nodes[src.raw_operands[n.inst.index]]
    return n.idx if through_barrier and n.idx != b.idx else -1


def handed_on_partner(m, x: int) -> int:
    """The partner of the value the open get-tuple-element ``x`` of a removed barrier hands
    on, or -1: what x's readers read in the optimized module. The forwarded elements are
    computed once per matching."""
    B = m.before
    if B.nodes[x].opcode != "get-tuple-element":
        return -1
    fw = m.__dict__.get("_handed_on")
    if fw is None:
        fw = m._handed_on = {}
    e = fw.get(x)
    if e is None:
        e = fw[x] = forwarded_element(B, B.nodes[x]) if barriers_gone(m.after) else -1
    return m.b2a[B.resolve(e)] if e >= 0 else -1


def barriers_gone(A: View) -> bool:
    """No opt-barrier is left in the optimized module (computed once per view)."""
    gone = A.__dict__.get("_barriers_gone")
    if gone is None:
        gone = A._barriers_gone = not any(a.opcode == "opt-barrier" for a in A.nodes)
    return gone


def forwarded_fate(fb, f, b: Node, x: Node):
    """``b`` hands on ``x``'s value: rewritten (barrier expanded, tuple forwarded), named
    where ``x``'s value lives; None where ``x``'s fate names nothing."""
    xf = fb._survivor_fate(x)
    if not (xf.after or xf.fusion):
        return None
    f.fate = "rewritten"
    f.after, f.fusion, f.fusion_kind = xf.after, xf.fusion, xf.fusion_kind
    f.reason = (f"element of a jax.checkpoint barrier: cse_barrier_expander removed the "
                f"barrier and tuple simplification forwarded {x.name} to its readers")
    return f


def pair_through_barriers(m, pair_users) -> int:
    """Matching through removed barriers: for each open get-tuple-element ``g`` of an
    opt-barrier whose forwarded element is paired with ``a``, ``pair_users(g, a)`` pairs
    g's readers among a's (the optimized module has no barrier: what read ``g`` reads
    ``a``'s value directly). jax.checkpoint regions of repeated blocks are told apart this
    way by the values each region's barrier hands on (fresh 13 remat_isab_set_transformer
    on 8 CPUs: the recomputed attention of two set-attention blocks, identical but for the
    saved values they read). Returns the number of pairs made."""
    A, B = m.after, m.before
    if not barriers_gone(A):
        return 0
    c = m.count
    for g in B.nodes:
        if g.opcode != "get-tuple-element" or g.alias >= 0 or m.b2a[g.idx] >= 0 or \
                not g.users:
            continue
        x = forwarded_element(B, g)
        if x < 0 or m.b2a[B.resolve(x)] < 0:
            continue
        pair_users(g.idx, A.nodes[m.b2a[B.resolve(x)]])
    return m.count - c


def _tuple_reads(A: View) -> dict[tuple[int, int], Node]:
    """(after tuple node, index) -> a get-tuple-element instruction of the optimized module
    that reads it (the view aliases those to the element; computed once per view)."""
    got = A.__dict__.get("_tuple_reads")
    if got is None:
        got = A._tuple_reads = {}
        for a in A.nodes:
            if a.opcode == "get-tuple-element" and a.raw_operands and a.inst.index is not None:
                t = A.nodes[a.raw_operands[0]]
                if t.opcode == "tuple" and t.alias < 0:
                    got.setdefault((t.idx, a.inst.index), a)
    return got


def kept_read(fb, f, b: Node) -> bool:
    """``b`` reads element k of an opt-barrier that lives on as a plain tuple, and the
    optimized module still reads element k of that tuple: b is kept as that read.

    The GPU pipeline expands barriers late (``optimization-barrier-expander``), after the
    last tuple simplification, so the barrier's operand tuple and the get-tuple-elements
    reading it stay in the final module (fresh 15 remat_hourglass_shortened_transformer on
    8 H100s: ``remat2.94 = get-tuple-element(remat2.75), index=18`` is
    ``get-tuple-element.66 = get-tuple-element(tuple.14.0), index=18`` after optimization).
    Sets ``f`` and returns True, or returns False."""
    m = fb.m
    if b.opcode != "get-tuple-element" or m.b2a[b.idx] >= 0 or not b.raw_operands or \
            b.inst.index is None:
        return False
    src = m.before.nodes[b.raw_operands[0]]
    if src.opcode != "opt-barrier" or not src.raw_operands:
        return False
    y = m.b2a[src.idx] if m.b2a[src.idx] >= 0 else m.b2a[m.before.resolve(src.raw_operands[0])]
    if y < 0 or m.after.nodes[y].opcode != "tuple":
        return False  # the barrier's operand tuple is its partner's, or the barrier's
    t = m.after.nodes[y]
    a = _tuple_reads(m.after).get((t.idx, b.inst.index))
    if a is None or (fb.nparts <= 1 and a.inst.shape.dims_text != b.inst.shape.dims_text):
        return False  # (partitioned: a holds one device's piece)
    f.fate = "kept"
    fb._set_after(f, a)
    f.reason = (f"element of a jax.checkpoint barrier: the barrier became the plain tuple "
                f"{t.name}, and {a.name} still reads this element of it")
    return True
