"""Dots the dot merger combined into one (issue 9; twins3 helper).

XLA's ``dot-merger`` pass (GPU pipeline) merges dots that share an operand, e.g. the
query/key/value projections ``x @ Wq``, ``x @ Wk``, ``x @ Wv``: one dot
``x @ concat(Wq, Wk, Wv)``, then one ``slice`` per original dot. The merged dot keeps one
original's op_name and source line; each slice keeps its own dot's (pass dump
``after_dot-merger``). The match pairs the merged dot with one before dot; the others stay
open, and in partitioned modules the rewrite step never pairs an arithmetic instruction with
a slice (the SPMD partitioner's slices carry the op_name of what they cut). This step pairs
an open before dot with the open slice that carries its op_name and source when that slice
cuts the result of a dot kernel paired with another before dot that reads one of the same
operands (or a copy of one that CSE merges): the dot's value is that slice of the merged
dot.
"""

from __future__ import annotations

from .slice_bounds import concat_pieces, slice_bounds as _bounds
from .splitk import partial_sums

_MOVES = ("bitcast", "copy", "transpose", "reshape", "slice")  # slice: of a merged slice


def _walk(nodes, i: int, moves: tuple[str, ...], roots: bool, limit: int = 12) -> list[int]:
    """``i`` and what it reads through ``moves`` and fusion parameters (to top level), and
    with ``roots`` from a fusion into its root."""
    out = []
    for _ in range(limit):
        out.append(i)
        n = nodes[i]
        if n.opcode in moves and n.raw_operands:
            i = n.raw_operands[0]
            continue
        if n.opcode == "parameter" and n.fusion >= 0:
            f = nodes[n.fusion]
            k = n.inst.parameter_number
            if k is not None and k < len(f.raw_operands):
                i = f.raw_operands[k]
                continue
        if roots and n.opcode == "fusion" and n.alias >= 0:
            i = n.alias
            continue
        break
    return out


def _through(nodes, i: int) -> int:
    """Back through layout moves and fusion parameters, to the top-level producer."""
    i = _walk(nodes, i, _MOVES, False)[-1]
    return nodes[i].fusion if nodes[i].fusion >= 0 else i


def _shares_operand(Bn, x, y) -> bool:
    """Do dots ``x`` and ``y`` read one value: the same operand, or copies of one
    computation (equal exact-subgraph fingerprints) that CSE merges before the dot merger
    runs (fresh 19 mh_moe_subtoken_top2_merge on 8 H100s: the query projection reads one
    layer norm of the input, the key and value projections another call of it)."""
    if set(x.operands) & set(y.operands):
        return True
    return bool({Bn[i].fp for i in x.operands} & {Bn[i].fp for i in y.operands})


def merged_dots(m) -> int:
    """Pair open before dots with their slice of a merged dot; returns the number paired."""
    Bn, An = m.before.nodes, m.after.nodes
    slices: dict = {}
    for a in An:
        if a.opcode == "slice" and a.alias < 0 and m.a2b[a.idx] < 0 and a.op_name \
                and a.raw_operands:
            slices.setdefault((a.op_name, a.src), []).append(a)
    if not slices:
        return 0
    inner: dict[int, list[int]] = {}  # fusion -> its dots (built once, linear)
    for j, n in enumerate(An):
        if n.opcode == "dot" and n.fusion >= 0:
            inner.setdefault(n.fusion, []).append(j)
    c = 0
    for b in Bn:
        if b.opcode != "dot" or m.b2a[b.idx] >= 0 or b.alias >= 0:
            continue
        hits = []
        for a in slices.get((b.op_name, b.src), ()):
            if m.a2b[a.idx] >= 0:
                continue
            src = _through(An, a.raw_operands[0])
            dots = [src] if An[src].opcode == "dot" else inner.get(src, [])
            owners = {m.a2b[d] for d in dots if m.a2b[d] >= 0}
            if any(o != b.idx and Bn[o].opcode == "dot" and _shares_operand(Bn, Bn[o], b)
                   for o in owners):
                hits.append(a)
        if len(hits) == 1:
            c += m.pair(b.idx, hits[0].idx, "merged dot")
    return c


def merged_reason(m, a) -> str:
    """Why a dot is named in a slice: which merged dot (and before dot) it became part of."""
    An, Bn = m.after.nodes, m.before.nodes
    src = _through(An, a.raw_operands[0]) if a.raw_operands else -1
    dot = _sliced_dot(m.after, a) if a.raw_operands else None
    if dot is not None:  # the merged gemm, not the kernel the slice was fused into
        src = An[dot].fusion if An[dot].fusion >= 0 else dot
    big = An[src] if src >= 0 else None
    owners = [m.a2b[j] for j, n in enumerate(An)
              if n.opcode == "dot" and (j == src or n.fusion == src) and m.a2b[j] >= 0]
    other = Bn[owners[0]].name if big is not None and owners else None
    with_ = f" with {other}" if other else ""
    into = f" {big.name}" if big is not None else ""
    return (f"dot merged{with_} into one dot{into} (dot merger: dots sharing an operand "
            f"become one dot and a slice each); its result is {a.name}")


_VIEWS = ("bitcast", "copy", "transpose", "reshape")


def _cut(nodes, a) -> tuple[int, int, int] | None:
    """(dimension, start, limit) of the one dimension the slice ``a`` cuts out of its
    operand, or None."""
    kb = _bounds(a)
    if kb is None or not a.raw_operands:
        return None
    full = nodes[a.raw_operands[0]].inst.shape.dims
    cuts = [(k, s, s + c) for k, (s, c, st) in enumerate(kb)
            if k < len(full) and (s, c) != (0, full[k]) and st == 1]
    if len(cuts) != 1 or len(kb) != len(full):
        return None
    return cuts[0]


def _down(nodes, i: int) -> list[int]:
    """``i`` and what it reads through views and fusion parameters (to top level)."""
    return _walk(nodes, i, _VIEWS, True)


def _concat_operand(A, dot_idx: int, size: int):
    """(operand position, pieces) of the one operand of the dot ``dot_idx`` that is a
    concatenation of total size ``size`` along its dimension (through views and fusion
    parameters); each piece (start, limit, node)."""
    nodes = A.nodes
    found = []
    for pos, o in enumerate(nodes[dot_idx].raw_operands):
        for j in _down(nodes, o):
            c = nodes[A.resolve(j)] if nodes[j].opcode == "fusion" else nodes[j]
            if c.opcode != "concatenate" or not c.inst.dimensions:
                continue
            out = [(lo, hi, c.raw_operands[k]) for lo, hi, k in concat_pieces(nodes, c)]
            if out and out[-1][1] == size:
                found.append((pos, out))
            break
    return found[0] if len(found) == 1 else None


def _piece(A, dot: int, s: int) -> tuple[int, int] | None:
    """(operand position, piece node) of the piece of the concatenation the merged
    ``dot`` reads whose range is exactly the one the slice ``s`` cuts, or None."""
    An = A.nodes
    cut = _cut(An, An[s])
    if cut is None:
        return None
    k, lo, hi = cut
    hit = _concat_operand(A, dot, An[An[s].raw_operands[0]].inst.shape.dims[k])
    if hit is None:
        return None
    piece = [p for (plo, phi, p) in hit[1] if (plo, phi) == (lo, hi)]
    return (hit[0], piece[0]) if len(piece) == 1 else None


def _owners(m, nodes, i: int) -> set[int]:
    """Before nodes paired with ``i`` or with what it reads through views."""
    return {m.a2b[j] for j in _down(nodes, i) if m.a2b[j] >= 0}


def _input_owners(m, nodes, i: int, skip: int = -1) -> set[int]:
    """Before nodes paired with what the node ``i`` reads (but its operand ``skip``)."""
    out: set[int] = set()
    for q, o in enumerate(nodes[i].raw_operands):
        if q != skip:
            out |= _owners(m, nodes, o)
    return out


def _reads(B, b, limit: int = 8) -> set[int]:
    """Before nodes the dot under ``b`` reads, through views, and the dot itself."""
    d = b
    for _ in range(3):
        if d.opcode == "dot" or d.opcode not in _VIEWS or not d.operands:
            break
        d = B.nodes[d.operands[0]]
    if d.opcode != "dot":
        return set()
    out = {d.idx}
    for o in d.operands:
        x = o
        for _ in range(limit):
            out.add(x)
            n = B.nodes[x]
            if n.opcode not in _VIEWS or not n.operands:
                break
            x = n.operands[0]
    return out


def _sliced_dot(A, a) -> int | None:
    """The dot whose result the slice ``a`` cuts (through views, fusion parameters and
    the kernel's root), or None. A split-K gemm's sum counts as its dot: the merged dot
    of the query, key and value projections of one attention on 8 H100s
    (fixtures/sharded_views) is cut into 4 partial products, and each attention
    transpose kernel sums them and slices its piece out of the sum."""
    j = _down(A.nodes, a.raw_operands[0])[-1]
    n = A.nodes[j]
    if n.opcode == "reduce" and n.operands and j in partial_sums(A, A.nodes[n.operands[0]]):
        return n.operands[0]
    return j if n.opcode == "dot" else None


def settle_merged_slices(m) -> int:
    """Give each slice of a merged dot to the before dot (or transpose of it) whose
    operand the slice's piece of the concatenation holds.

    The dot merger concatenates the operands that differ, ``concat(x_a, x_b)``, and
    slices the merged result in that order: ``slice[0:n_a]`` is a's value. Rebuilt dots
    carry the transpose's op_name (algsimp's dot(b, a) for transpose(dot(a, b))), so
    twins sharing that op_name, like two heads' or two layers' gradients, tie on every
    key, and the rewrite step paired them in text order (blocks_step on 8 H100s:
    ``transpose.51`` went to ``wrapped_slice.2``, ``[64:96]``, whose piece is the other
    dot's operand). A slice whose range is exactly one piece of the concatenation the
    merged dot reads, and whose piece is read by exactly one of the before dots paired
    with the slices of that dot, goes to that one. Returns the number of pairs moved."""
    A, B = m.after, m.before
    An = A.nodes
    fam: dict[int, list[int]] = {}  # merged dot -> its paired slices
    for a in An:
        if a.opcode != "slice" or m.a2b[a.idx] < 0 or not a.raw_operands:
            continue
        dot = _sliced_dot(A, a)
        if dot is not None:
            fam.setdefault(dot, []).append(a.idx)
    moved = 0
    for dot, slices in fam.items():
        if len(slices) < 2:
            continue
        want: dict[int, int] = {}  # slice -> before node
        holders = {m.a2b[s]: s for s in slices}
        reads = {y: _reads(B, B.nodes[y]) for y in holders}
        for s in slices:
            hit = _piece(A, dot, s)
            if hit is None:
                break
            own = _owners(m, An, hit[1])
            ys = [y for y, r in reads.items() if r & own]
            if len(ys) != 1:
                break
            want[s] = ys[0]
        if len(want) != len(slices) or set(want.values()) != set(holders) or \
                all(holders[y] == s for s, y in want.items()):
            continue
        for y in holders:
            m.unpair(y)
        for s, y in want.items():
            moved += m.pair(y, s, "merged dot")
    return moved


def pair_open_pieces(m) -> int:
    """Pair an open slice of a merged dot with the before dot of its piece.

    The slices of a merged dot are often fused into their readers' kernels (blocks_step on
    8 H100s: each layer's query, key and value projections, ``x @ w`` on one source line,
    merged into one gemm whose slices feed the attention's concatenations). The slice
    whose range is exactly one piece of the concatenation the merged dot reads belongs to
    the before dot that reads both that piece and the merged dot's other operand, when
    exactly one does. That dot is paired with the slice if it is open, or moved there if
    the cascade gave it the merged dot itself (which keeps the first dot's metadata; the
    first dot's value is the first slice) or a dot kernel reading neither (the other
    layer's merged gemm, whose op_name and source line are the same). Returns the number
    of pairs made."""
    A, B = m.after, m.before
    An, Bn = A.nodes, B.nodes
    todo: dict[int, list[int]] = {}
    for a in An:
        if a.opcode == "slice" and a.raw_operands and a.alias < 0 and m.a2b[a.idx] < 0:
            dot = _sliced_dot(A, a)
            if dot is not None:
                todo.setdefault(dot, []).append(a.idx)
    if not todo:
        return 0
    readers: dict[int, list[int]] = {}  # before node -> dots reading it (through views)
    reads: dict[int, set[int]] = {}
    for d in Bn:
        if d.opcode == "dot" and d.alias < 0:
            reads[d.idx] = r = _reads(B, d)
            for x in r:
                readers.setdefault(x, []).append(d.idx)
    c = 0
    for dot, slices in todo.items():
        done: set[int] = set()
        whole = {dot} | set(partial_sums(A, An[dot]))  # (a split-K gemm's sums too)
        for s in slices:
            hit = _piece(A, dot, s)
            if hit is None:
                continue
            shared = _input_owners(m, An, dot, skip=hit[0])
            own = _owners(m, An, hit[1])
            ds = {d for x in own for d in readers.get(x, ())}
            ds = [d for d in ds if reads[d] & shared and d not in done]
            if len(ds) != 1:
                continue
            d = ds[0]
            y = m.b2a[d]
            if y >= 0 and y not in whole:  # (the merged dot itself: its value is the slice)
                if An[y].opcode != "dot":
                    continue
                if reads[d] & _input_owners(m, An, y):
                    continue  # (what it has reads what it reads)
            if y >= 0:
                m.unpair(d)
            if m.pair(d, s, "merged dot"):
                done.add(d)
                c += 1
    return c

