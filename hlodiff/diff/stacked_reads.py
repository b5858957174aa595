"""Which layer of a stacked weight an instruction reads (issue 9, class 6: repeated code).

Models keep the weights of their repeated layers stacked in one array (``p["w"][i]`` in a
Python loop, the carry of a scan over layers). Each layer then reads its own ``slice`` of
the one parameter, and everything else about the layers' instructions is alike: op_name,
source line, shape, and often every paired neighbour. XLA keeps those slices as they are:
fusion copies a slice into each kernel that reads it, layout assignment and the dot
rewrites wrap it in bitcasts and reshapes, float normalization in converts, but the bounds
stay those of the layer. So when a before instruction and an after candidate both read,
through views, a slice of the same (paired) parameter, different bounds mean different
layers: that candidate is the other layer's twin.

Evidence: gpu8 fresh 10 bf16_layernorm_residual, whose two layers' gradient dots,
``dot(…, reshape(slice(w2, [1:2])))`` and ``… [0:1]``, became gemm kernels reading
``bitcast(slice(param.4, [1:2]))`` and ``[0:1]``; their other neighbours tie.
"""

from __future__ import annotations

from .view import Node, View, local_attrs

# what carries a weight slice to its reader unchanged in value (up to type and layout)
_CARRIERS = {"reshape", "bitcast", "copy", "transpose", "convert"}
_SLICES = {"slice", "dynamic-slice"}
_DEPTH = 4


def _reads(view: View, n: Node, param_key) -> set[tuple]:
    """(parameter key, slice attributes) of every parameter slice that ``n``'s operands
    read through at most a few carriers."""
    out: set[tuple] = set()
    nodes = view.nodes
    frontier = list(n.operands)
    for _ in range(_DEPTH):
        nxt = []
        for i in frontier:
            x = nodes[i]
            if x.opcode in _SLICES and x.operands:
                src = nodes[x.operands[0]]
                if src.opcode == "parameter":
                    k = param_key(src.idx)
                    if k is not None:
                        out.add((k, local_attrs(x)))
            elif x.opcode in _CARRIERS:
                nxt.extend(x.operands)
        frontier = nxt
        if not frontier:
            break
    return out


def _other_layer(b_reads: set[tuple], a_reads: set[tuple]) -> bool:
    """Some parameter is read by both with no common slice of it."""
    for p in {k for k, _ in b_reads}:
        bs = {s for k, s in b_reads if k == p}
        as_ = {s for k, s in a_reads if k == p}
        if as_ and not bs & as_:
            return True
    return False


def _before_reads(m, b: int) -> set[tuple]:
    b2a = m.b2a
    return _reads(m.before, m.before.nodes[b], lambda i: b2a[i] if b2a[i] >= 0 else None)


def _reads_other(m, br: set[tuple], a: int) -> bool:
    return bool(br) and _other_layer(br, _reads(m.after, m.after.nodes[a], lambda i: i))


def other_layer(m, b: int, a: int) -> bool:
    """The after node ``a`` reads another slice of a stacked parameter than the before
    node ``b`` reads (both parameters paired)."""
    return _reads_other(m, _before_reads(m, b), a)


def same_layer(m, b: int, cands: list[int]) -> list[int]:
    """The candidates that do not read another layer's slice than ``b``, when some do (all
    of them otherwise: nothing to tell)."""
    if len(cands) < 2:
        return cands
    br = _before_reads(m, b)  # (once, not per candidate)
    if not br:
        return cands
    keep = [y for y in cands if not _reads_other(m, br, y)]
    return keep if keep and len(keep) < len(cands) else cands
