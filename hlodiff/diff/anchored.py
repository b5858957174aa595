"""Instructions rebuilt on new shapes, found from the paired values they read.

Repeated code (the layers of a Python loop, remat copies) gives twins equal opcodes, shapes,
op_names and source lines; only the values they read tell them apart, and the first such
values are the layers' own parameters. Optimization often rebuilds the instruction right
after such a parameter on other shapes: a dot of ``f32[4,10,16]`` by a weight becomes a
dot of the flattened ``f32[40,16]`` inside a library-call fusion, with a bitcast between.
Structural propagation (:func:`hlodiff.diff.match._propagate`) demands equal shapes and so
stops at the parameter, and the later value-based steps then pair the whole layer with its
twin's kernels as often as not.

This step pairs an open before instruction with an open after instruction of the same
opcode, op_name and source line that reads (directly or through views: bitcast, reshape,
transpose, copy) the partner of one of its own paired operands, when that after
instruction is the only such candidate and no other open before instruction proposes it.
The operand decides which twin it is, so the pair is not a guess."""

from __future__ import annotations

from collections import defaultdict

# after-side data movement the rebuilt instruction may read its operand through
_VIEWS = frozenset({"bitcast", "reshape", "transpose", "copy"})
_SKIP = frozenset({"parameter", "constant", "tuple", "get-tuple-element"}) | _VIEWS
_FANOUT = 64  # a widely read value (a shared constant) anchors nothing


def _readers(An, y: int, depth: int = 3) -> list[int]:
    """After nodes reading ``y`` directly or through up to ``depth`` views."""
    out, frontier, seen = [], [y], {y}
    for _ in range(depth + 1):
        nxt = []
        for j in frontier:
            users = An[j].users
            if len(users) > _FANOUT:
                continue
            for u in users:
                if u in seen:
                    continue
                seen.add(u)
                out.append(u)
                if An[u].opcode in _VIEWS:
                    nxt.append(u)
        frontier = nxt
        if not frontier:
            break
    return out


def _paired_sources(Bn, b2a, b, depth: int = 3) -> list[int]:
    """Partners of ``b``'s operands, looking through open before views to a paired value."""
    out = []
    for x in b.operands:
        for _ in range(depth + 1):
            if b2a[x] >= 0:
                out.append(b2a[x])
                break
            n = Bn[x]
            if n.opcode not in _VIEWS or len(n.operands) != 1:
                break
            x = n.operands[0]
    return out


def pair_anchored(m) -> int:
    """Pair open instructions whose paired operands single out one after instruction of
    their opcode, op_name and source line (see the module docstring). Returns the count."""
    Bn, An = m.before.nodes, m.after.nodes
    b2a, a2b = m.b2a, m.a2b
    proposals: dict[int, int] = {}
    wanted: dict[int, int] = defaultdict(int)
    for b in Bn:
        if b.alias >= 0 or b2a[b.idx] >= 0 or b.opcode in _SKIP or not b.op_name:
            continue
        cands = set()
        for y in _paired_sources(Bn, b2a, b):
            for u in _readers(An, y):
                a = An[u]
                if (a2b[u] < 0 and a.alias < 0 and a.opcode == b.opcode
                        and a.op_name == b.op_name and a.src == b.src):
                    cands.add(u)
        if len(cands) == 1:
            u = cands.pop()
            proposals[b.idx] = u
            wanted[u] += 1
    c = 0
    for bi, u in proposals.items():
        if wanted[u] == 1:
            c += m.pair(bi, u, "anchored")
    return c
