"""Where a per-device operand's value came from, through the SPMD partitioner's resharding.

The partitioner computes a sharded contraction as a partial per device, sums the partials
with an all-reduce (the CPU combiner merges several into one tuple all-reduce, read through
get-tuple-element) and cuts each device's shard out of the sum with a ``dynamic-slice``
indexed by ``partition-id`` (fused into a small loop fusion). A dot that algsimp rebuilt on
squeezed per-device shapes (no metadata) then reads its operands through a chain such as
``gte(all-reduce(fusion{dynamic-slice(gte(all-reduce(bitcast(x))))}))``; walking the chain
back gives the instructions whose value the operand is: ``x`` among them.
"""

from __future__ import annotations

_MOVES = ("bitcast", "copy", "transpose", "reshape")
_COLL = ("all-gather", "all-reduce", "all-to-all", "collective-permute", "reduce-scatter")


def _slice_source(view, node) -> int | None:
    """Operand number of the data a fusion only slices (its root, through moves, is a
    dynamic-slice or slice of a parameter), else None."""
    comp = view.module.by_name.get(node.inst.calls[0]) if node.inst.calls else None
    if comp is None:
        return None
    x = comp.by_name.get(comp.root)
    for _ in range(8):
        if x is None or x.opcode not in _MOVES or not x.operands:
            break
        x = comp.by_name.get(x.operands[0])
    if x is None or x.opcode not in ("dynamic-slice", "slice") or not x.operands:
        return None
    y = comp.by_name.get(x.operands[0])
    for _ in range(8):
        if y is None or y.opcode not in _MOVES or not y.operands:
            break
        y = comp.by_name.get(y.operands[0])
    if y is None or y.opcode != "parameter" or y.parameter_number is None:
        return None
    return y.parameter_number


def resharded_sources(view, dot) -> set[int]:
    """Top-level nodes whose value each operand of ``dot`` carries, walking back through
    layout moves, slicing fusions, collectives and their get-tuple-elements."""
    nodes = view.nodes

    def top(i: int) -> int:
        return nodes[i].fusion if nodes[i].fusion >= 0 else i

    out: set[int] = set()
    for o in dot.operands:
        i = top(o)
        for _ in range(16):
            out.add(i)
            n = nodes[i]
            nxt = None
            if n.opcode == "get-tuple-element" and n.raw_operands:
                c = nodes[top(n.raw_operands[0])]
                k = n.inst.attrs.get("index")
                if c.opcode in _COLL and k is not None and str(k).isdigit() and \
                        int(str(k)) < len(c.raw_operands):
                    out.add(c.idx)
                    nxt = c.raw_operands[int(str(k))]
            elif n.opcode in _COLL and len(n.raw_operands) == 1:
                nxt = n.raw_operands[0]
            elif _async_collective(n) and n.raw_operands:
                # GPU: a collective runs as a start/done pair (``all-gather-start`` ->
                # ``all-gather-done``, ``async-start`` of an all-to-all -> ``async-done``)
                nxt = n.raw_operands[0]
            elif n.opcode in _MOVES and n.raw_operands:
                nxt = n.raw_operands[0]
            elif n.opcode == "fusion" and n.raw_operands:
                p = _slice_source(view, n)
                if p is None:
                    p = 0 if len(n.raw_operands) == 1 and _moves_only(view, n) else None
                if p is None and _pieces_of_one(nodes, n):
                    p = 0  # shard4: the first piece; its slice leads to the source
                if p is not None and p < len(n.raw_operands):
                    nxt = n.raw_operands[p]
            if nxt is None:
                break
            i = top(nxt)
    return out


def _async_collective(n) -> bool:
    """One half of a GPU collective's start/done pair (the start's first operand is the
    data; the done reads the start)."""
    op = n.opcode
    if op in ("async-start", "async-done"):
        w = n.inst.async_wrapped or ""
        return any(w.startswith(c) for c in _COLL) or w == ""
    return op.endswith(("-start", "-done")) and op.rsplit("-", 1)[0] in _COLL


def _moves_only(view, node) -> bool:
    comp = view.module.by_name.get(node.inst.calls[0]) if node.inst.calls else None
    return comp is not None and all(i.opcode in _MOVES or i.opcode == "parameter"
                                    for i in comp.instructions)


def _pieces_of_one(nodes, node) -> bool:
    """A fusion reading only get-tuple-elements of one tuple collective: it reassembles
    the pieces an all-to-all exchanged (the partitioner's resharding concatenates them and
    transposes; zoo cpu8 mlp_gelu_adam ``copy_bitcast_fusion`` = concatenate of the eight
    elements of ``all-to-all.9``, each a ``bitcast_slice_fusion`` of one value)."""
    src = set()
    for o in node.raw_operands:
        n = nodes[o]
        if n.opcode != "get-tuple-element" or not n.raw_operands:
            return False
        src.add(n.raw_operands[0])
    if len(src) != 1 or len(node.raw_operands) < 2:
        return False
    return nodes[src.pop()].opcode in _COLL
