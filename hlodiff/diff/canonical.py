"""Instructions rebuilt by canonicalizing passes, found through the view wrapped around them.

The dot decomposer, the gemv rewriter and convolution canonicalization replace an
instruction by a new one of the same opcode on reshaped or transposed operands, wrapped in
a reshape/bitcast/transpose that gives the old shape back: ``dot(A, x) ->
bitcast(dot(A, bitcast(x)))``. The new instruction often carries no metadata at all; the
wrapper carries the old one's op_name and source and has its shape. So an open before node
whose (op_name, source, shape) names an open after view, whose operand (through other
open views) is an open after node of the before node's opcode, was rebuilt as that node.
"""

from __future__ import annotations

from collections import defaultdict

from .param_deps import distance
from .anchors import anchor_score
from .stacked_reads import other_layer
from .view import _match_dims

_VIEWS = ("bitcast", "reshape", "transpose", "copy")
_REBUILT = ("dot", "convolution", "reduce", "fft")
NEAR = 4  # parameters a rebuilt instruction's set may differ by and still confirm it


def _open_or_borrowed(m, x: int) -> bool:
    """``x`` is open, or paired by its key alone (op_name, source, shape) with a before dot
    read only by transposes: algsimp rebuilds transpose(dot(a, b)) as a new dot(b, a)
    (dotrewrites.py names that one), so an after dot of the *old* shape under a wrapper
    view that carries another dot's key is that other dot's, not this one's."""
    b = m.a2b[x]
    if b < 0:
        return True
    Bn = m.before.nodes
    n = Bn[b]
    return m.how.get(b) in ("metadata", "similarity") and n.opcode == "dot" and \
        bool(n.users) and all(Bn[u].opcode == "transpose" for u in n.users)


def pair_wrapped(m) -> int:
    """Pair open before nodes with the open instruction under their wrapper view."""
    Bn, An = m.before.nodes, m.after.nodes
    wanted: dict[tuple, list[int]] = defaultdict(list)
    for b in Bn:
        if b.alias < 0 and m.b2a[b.idx] < 0 and b.opcode in _REBUILT and b.op_name and \
                not (b.users and all(Bn[u].opcode == "transpose" for u in b.users)):
            # (transpose(dot(a, b)) is algsimp's dot(b, a): dotrewrites.py's case)
            wanted[(b.op_name, b.src, b.mdims)].append(b.idx)
    if not wanted:
        return 0
    found: dict[tuple, list[int]] = defaultdict(list)
    for v in An:
        if v.opcode not in _VIEWS or m.a2b[v.idx] >= 0 or not v.op_name:
            continue
        k = (v.op_name, v.src, v.mdims)
        if k not in wanted:
            continue
        x, hops = v, 0
        while x.opcode in _VIEWS and len(x.raw_operands) == 1 and hops < 4:
            # (views are seen through: operands by their raw link, then resolved)
            x = An[m.after.resolve(x.raw_operands[0])]
            hops += 1
            if m.a2b[x.idx] >= 0:
                break
        if x.opcode in _REBUILT and _match_dims(x.dims) != _match_dims(v.dims) and \
                _open_or_borrowed(m, x.idx) and \
                (x.op_name is None or x.op_name == v.op_name):
            # (the wrapper gives the old shape back from the new instruction's other one;
            # full shapes: a partitioned module's mdims keep only the rank, and conv
            # canonicalization's f32[16,3,3,4] under f32[3,3,16,4] is the same rank; shard4)
            if x.idx not in found[k]:
                found[k].append(x.idx)
    c = 0
    for k, xs in found.items():
        bs = [b for b in wanted[k] if m.b2a[b] < 0]
        # the nearest parameter set first (gpu8n: another layer's twin), then anchors
        # (another layer's slice of a stacked weight rules a candidate out first). Only a
        # near set confirms a candidate: beyond NEAR parameters every candidate reads
        # others, and which reads the fewest is noise (fresh 13 remat_isab on 8 CPUs: the
        # forward and recomputed dots' kernels, 19 and 20 away; 6 and 7 in fresh 11
        # remat_combined_policy_block); the anchors decide there
        scored = sorted((((-other_layer(m, b, x), -min(distance(m, b, x), NEAR + 1),
                           anchor_score(m, b, x)),
                          b, x)
                         for b in bs for x in xs if An[x].opcode == Bn[b].opcode),
                        reverse=True)
        held: set[int] = set()  # (gpu8n) tied twins, and what they were tied over
        for i, (s, b, x) in enumerate(scored):
            if m.b2a[b] >= 0 or not _open_or_borrowed(m, x) or b in held or ~x in held:
                continue
            rivals = [t for t in scored[i + 1:] if t[0] == s and m.b2a[t[1]] < 0 and
                      _open_or_borrowed(m, t[2]) and (t[1] == b or t[2] == x)]
            if rivals:
                # twins nothing tells apart: leave them to later steps, and neither the
                # rival nor a worse candidate takes their place here (gpu8n: the other
                # layer's gradient dot, 6 parameters away, did)
                held.update((b, ~x))
                held.update(t[1] for t in rivals)
                held.update(~t[2] for t in rivals)
                continue
            if m.a2b[x] >= 0:  # borrowed by a transpose(dot) dot: give it back
                other = m.a2b[x]
                m.b2a[other], m.a2b[x] = -1, -1
                m.how.pop(other, None)
            c += m.pair(b, x, "canonical")
    return c
