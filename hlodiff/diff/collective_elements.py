"""The value each collective result carries, for matching partitioned programs.

The SPMD partitioner sums a sharded contraction's partial results with an ``all-reduce``
or a ``reduce-scatter`` that the program before optimization does not have: a gradient's
reader (its square for the global norm, its optimizer update) reads the collective's
result instead of the gradient. The collective combiners then merge many of them into one
tuple-shaped collective, and on GPU the async pass splits that into a ``-start`` and a
``-done``, so the reader reads ``get-tuple-element(reduce-scatter-done, index=30)``: the
summed 30th operand. Seen through, that element is the gradient the before program's
reader read (fresh 19 synthesizer_dense_random_mixed_lm on 8 H100s: each bias gradient's
square was paired with another gradient's, all of them ``f32[8]`` elements of one
``reduce-scatter``, the element index the only link to the gradient's kernel).
"""

from __future__ import annotations

from .slice_bounds import concat_pieces, slice_bounds as _bounds
from .view import View

_SUMMING = ("all-reduce", "reduce-scatter")


def _base(view: View, n) -> str:
    """The collective a node is: its opcode without ``-start``, or for a generic
    ``async-start`` the opcode of the wrapped computation's root."""
    op = n.opcode
    if op == "async-start" and n.inst.calls:
        try:
            return view.module.computation(n.inst.calls[0]).root_instruction.opcode
        except KeyError:
            return op
    return op[:-len("-start")] if op.endswith("-start") else op


def element_of(nodes: list, n) -> tuple | None:
    """For a get-tuple-element ``n``: the tuple-shaped instruction it reads (an async
    pair's start, through its ``-done``: the start holds the operands) and the index;
    None for any other node."""
    if n.opcode != "get-tuple-element" or not n.operands:
        return None
    x = nodes[n.operands[0]]
    if x.opcode.endswith("-done") and x.operands:
        x = nodes[x.operands[0]]
    return x, n.inst.index


def element_sources(view: View) -> dict[int, int]:
    """After node -> the node whose (summed, per-device) value it carries: the operand of a
    single-operand all-reduce or reduce-scatter, or operand ``k`` for element ``k`` of a
    combined one (through the async ``-done``). Computed once per view."""
    cached = getattr(view, "_element_sources", None)
    if cached is not None:
        return cached
    nodes = view.nodes
    out: dict[int, int] = {}
    for n in nodes:
        if n.alias >= 0:
            continue
        src = n
        if n.opcode.endswith("-done") and n.operands:
            src = nodes[n.operands[0]]
        if len(src.operands) == 1 and not src.inst.shape.is_tuple and \
                _base(view, src) in _SUMMING:
            out[n.idx] = src.operands[0]
    for n in nodes:
        el = element_of(nodes, n) if n.alias < 0 else None
        if el is None:
            continue
        x, k = el
        if k is not None and k < len(x.operands) and len(x.operands) > 1 and \
                _base(view, x) in _SUMMING:
            out[n.idx] = x.operands[k]
    _concatenated_pieces(view, out)
    view._element_sources = out
    return out


def _concatenated_pieces(view: View, out: dict[int, int]) -> None:
    """Add the slices of a summed concatenation: the GPU pipeline may sum many gradients
    with one all-reduce of their concatenation and cut each back out with a slice
    (fixtures/sharded_views on 8 H100s: ``wrapped_concatenate`` of four flattened weight
    gradients, one ``all-reduce-start``/``-done``, and a ``wrapped_slice`` per gradient,
    read by its finiteness check). A slice whose range along the concatenated dimension is
    exactly one piece carries that piece's operand, summed (an all-reduce only: a
    reduce-scatter's result is a device's cut of the concatenation, not its pieces)."""
    nodes = view.nodes
    for n in nodes:
        if n.opcode != "slice" or n.alias >= 0 or len(n.operands) != 1:
            continue
        src = out.get(n.operands[0])
        if src is None:
            continue
        x = nodes[n.operands[0]]
        if x.opcode.endswith("-done") and x.operands:
            x = nodes[x.operands[0]]
        if _base(view, x) != "all-reduce":  # (a reduce-scatter's result is cut anew)
            continue
        c = nodes[view.resolve(src)]
        kb = _bounds(n)
        if c.opcode != "concatenate" or not c.inst.dimensions or kb is None:
            continue
        d = c.inst.dimensions[0]
        if d >= len(kb) or kb[d][2] != 1:
            continue
        cut = (kb[d][0], kb[d][0] + kb[d][1])
        k = next((k for lo, hi, k in concat_pieces(nodes, c) if (lo, hi) == cut), None)
        if k is not None:
            out[n.idx] = c.operands[k]


def element_readers(view: View) -> dict[int, list[int]]:
    """The inverse: a node -> the collective results that carry it and their readers
    (a before reader may be paired with either: a no-op reshape of the sum lives on as
    the element itself). Tuples are left out: the output tuple reads every element, and
    would count as a reader of every summed value alike."""
    cached = getattr(view, "_element_readers", None)
    if cached is not None:
        return cached
    nodes = view.nodes
    out: dict[int, list[int]] = {}
    for e, src in element_sources(view).items():
        lst = out.setdefault(src, [])
        lst.append(e)
        lst.extend(u for u in nodes[e].users if nodes[u].opcode != "tuple")
    view._element_readers = out
    return out
