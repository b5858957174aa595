"""Instructions rebuilt on new shapes, found from the paired values they read.

Repeated code (the layers of a Python loop, remat copies) gives twins equal opcodes, shapes,
op_names and source lines; only the values they read tell them apart, and the first such
values are the layers' own parameters. Optimization often rebuilds the instruction right
after such a parameter on other shapes: a dot of ``f32[4,10,16]`` by a weight becomes a
dot of the flattened ``f32[40,16]`` inside a library-call fusion, with a bitcast between.
Structural propagation (:func:`hlodiff.diff.match._propagate`) demands equal shapes and so
stops at the parameter, and the later value-based steps then pair the whole layer with its
twin's kernels as often as not.

This step keys every open instruction by a paired value it reads (directly or through
views: bitcast, reshape, transpose, copy), its opcode, op_name and source line, and pairs
a before and an after instruction when they are the only open ones of their key on each
side. The value read decides which twin it is, so the pair is not a guess."""

from __future__ import annotations

from collections import Counter, defaultdict

# data movement an instruction may read its operand through (either side)
_VIEWS = frozenset({"bitcast", "reshape", "transpose", "copy"})
_SKIP = frozenset({"parameter", "constant", "tuple", "get-tuple-element"}) | _VIEWS


def _sources(nodes, paired, n, depth: int = 3) -> list[int]:
    """The paired values ``n`` reads: its operands, looking through open views (bitcast,
    reshape, transpose, copy) to a paired node. ``paired(j)`` is j's key (an after index)
    or -1."""
    out = []
    for x in n.operands:
        for _ in range(depth + 1):
            k = paired(x)
            if k >= 0:
                out.append(k)
                break
            v = nodes[x]
            if v.opcode not in _VIEWS or len(v.operands) != 1:
                break
            x = v.operands[0]
    return out


def elements(n) -> int:
    """Elements of a node's array shape (-1 for a tuple or no shape)."""
    sh = n.inst.shape
    return -1 if sh is None or sh.is_tuple else sh.num_elements


def _holds(b, a) -> bool:
    """Could ``a`` hold ``b``'s value: as many elements (rebuilt on another shape) or a
    whole fraction of them (one device's shard)? A split-K gemm's partial products have
    more elements than the dot: its value is in the reduction after it."""
    nb, na = elements(b), elements(a)
    return na > 0 and nb > 0 and na <= nb and nb % na == 0


def _keys(nodes, paired, open_, wanted=None) -> dict[tuple, list[int]]:
    """(paired value read, opcode, op_name, source line) -> the open nodes with that key."""
    out: dict[tuple, list[int]] = defaultdict(list)
    for n in nodes:
        if n.alias >= 0 or not open_(n.idx) or n.opcode in _SKIP or not n.op_name:
            continue
        if wanted is not None and (n.opcode, n.op_name, n.src) not in wanted:
            continue
        for y in set(_sources(nodes, paired, n)):
            out[(y, n.opcode, n.op_name, n.src)].append(n.idx)
    return out


def pair_anchored(m) -> int:
    """Pair open instructions that a paired value they read singles out (see the module
    docstring): for a key (the partner of a value read, opcode, op_name, source line) with
    exactly one open before instruction and one open after instruction. Two dots of one
    op_name reading one value, of which optimization rebuilt only one as a dot (GPU
    algsimp turns a dot with a tiny contraction into multiply and reduce), are two before
    nodes for one after node: left alone. Returns the count."""
    Bn, An = m.before.nodes, m.after.nodes
    b2a, a2b = m.b2a, m.a2b
    bkeys = _keys(Bn, lambda j: b2a[j], lambda j: b2a[j] < 0)
    if not bkeys:
        return 0
    wanted = {k[1:] for k in bkeys}
    akeys = _keys(An, lambda j: j if a2b[j] >= 0 else -1, lambda j: a2b[j] < 0, wanted)
    choice: dict[int, set[int]] = defaultdict(set)
    for k, bl in bkeys.items():
        al = akeys.get(k)
        if al and len(bl) == 1 and len(al) == 1 and _holds(Bn[bl[0]], An[al[0]]):
            choice[bl[0]].add(al[0])
    sole = {bi: next(iter(us)) for bi, us in choice.items() if len(us) == 1}
    taken = Counter(sole.values())
    return sum(m.pair(bi, u, "anchored") for bi, u in sole.items() if taken[u] == 1)
