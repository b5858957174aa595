"""A loop's initial-state tuple rebuilt by layout assignment (cpu6).

When the while loop wants an element of its state in another layout than the tuple built
for it, layout assignment copies the tuple apart: a get-tuple-element per element, a
``copy`` to the loop's layout for the element that differs, and a new tuple carrying the
while's metadata. The tuple simplifier then forwards the old tuple's elements into the new
one and the old tuple dies. Evidence, fresh 6 cpu viterbi_decode_scan (jax 0.10.2): dump
0036 (after layout-assignment) has ``while.10 = (..., f32[8,8,5]{2,0,1}, ...) tuple(...)``,
``get-tuple-element.81 = get-tuple-element(while.10), index=3``, ``copy = f32[8,8,5]{2,1,0}
copy(get-tuple-element.81)`` and ``tuple.23 = tuple(get-tuple-element.78, ..., copy, ...)``
read by ``while.11``; dump 0045 (tuple-simplifier) has ``tuple.23 = tuple(constant.44,
slice_bitcast_fusion, ...)`` and no ``while.10``; the final module reads ``tuple.24``
(copy insertion). chunked_vocab_xent_scan's ``while.18`` goes the same way (element 10,
``{2,0,1}``). The engine paired the old tuple with the new one and called it "kept:
unchanged"; it was rebuilt.
"""

from __future__ import annotations


def _relaid(b_shape, a_shape) -> list[int]:
    """Elements whose layout differs between two tuple shapes of equal arity."""
    bs, as_ = b_shape.tuple_shapes, a_shape.tuple_shapes
    if len(bs) != len(as_):
        return []
    return [i for i, (x, y) in enumerate(zip(bs, as_))
            if not x.is_tuple and not y.is_tuple and x.layout is not None
            and y.layout is not None and x.dims == y.dims
            and x.layout.minor_to_major != y.layout.minor_to_major]


def mark(m, fates: list) -> None:
    """Entry tuples read by a while, "kept" as an after tuple of another name whose element
    layouts differ: "rewritten" (in place)."""
    B, A = m.before, m.after
    entry = B.module.entry_computation.name
    names = None
    for b in B.nodes:
        if b.opcode != "tuple" or b.site is not None or b.comp != entry or b.alias >= 0:
            continue
        f = fates[b.idx]
        y = m.b2a[b.idx]
        if f.fate != "kept" or y < 0 or f.after == b.name:
            continue
        a = A.nodes[y]
        if a.opcode != "tuple" or a.name != f.after or \
                not any(B.nodes[u].opcode == "while" for u in b.users):
            continue
        moved = _relaid(b.inst.shape, a.inst.shape)
        if not moved:
            continue
        if names is None:
            names = {i.name for c in A.module.computations for i in c.instructions}
        if b.name in names:
            continue
        f.fate = "rewritten"
        f.reason = (f"loop state rebuilt as {a.name}: layout assignment copied element"
                    f"{'s' if len(moved) > 1 else ''} {', '.join(map(str, moved))} to the "
                    "loop's layout and the tuple simplifier forwarded the old tuple's elements")


def loop_init(B, n, b2a) -> bool:
    """``n`` builds the initial state of a while loop that lives on (the loop has a partner
    after optimization). Unpaired, the tuple was not simplified away: the loop passes
    rebuild it (constant sinking, invariant code motion, tuple simplification) and its
    elements live on, so the literals it reads meet CSE like any other (fresh 3 cpu
    stochastic_round_grads: ``constant.71 = s32[] constant(0)``, the counter of an inlined
    threefry loop's ``while.55`` tuple, is merged at dump 0023 (cse) into the constant the
    first threefry loop's counter lives on as, ``constant.18``; it was "simplified away"
    with its tuple). A loop with no partner may be gone with its state: JAX 0.4.30 fresh 6
    matrix_expm_grad's two-step searchsorted loop ``while.234``: invariant code motion
    rebuilds it as ``while.17 = while(tuple.71)`` (dump 0013), simplify-while-loops removes
    the loop (0016, ``tuple.71`` is then read through get-tuple-elements) and algsimp
    forwards the elements (0021)."""
    return n.opcode == "tuple" and any(B.nodes[u].opcode == "while" and b2a[u] >= 0
                                       for u in n.users)
