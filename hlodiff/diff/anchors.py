"""Telling twins apart by their neighbourhood (issue 9, class 6: repeated code).

Layers of a Python loop, remat copies and vmapped copies share op_names and source lines:
the matcher's keys cannot tell them apart, and once passes rewrote the instructions
between them, neither can their direct operands. What still differs is *which* already
paired instructions lie around each copy: layer 1's normalisation reads layer 1's
residual stream and feeds layer 1's matmul. The anchor score counts, for a before node and
an after candidate, the paired nodes reached from both through not yet paired ones
(operands upward, users downward, a few steps each). Bounded walks: linear overall.
"""

from __future__ import annotations

from .param_deps import closest
from .slice_bounds import slice_bounds as _bounds
from .stacked_reads import same_layer
from .view import CSE_COMMUTATIVE, local_attrs

_DEPTH = 5
# tuples, their elements and data-movement ops: passes build new ones carrying the op_name
# of the instruction they serve (algsimp's broadcasts, the loop passes' tuples)
_PLUMBING = {"tuple", "get-tuple-element", "reshape", "broadcast", "transpose", "convert",
             "bitcast", "copy", "slice", "concatenate", "pad", "reverse", "bitcast-convert",
             "iota", "constant"}
_LIMIT = 40


def _reach(nodes, start, other, up: bool) -> set[int]:
    """Paired nodes (as indices on the *after* side, via ``other``) reached from
    ``start`` through unpaired ones. ``other`` maps this side's index to the after index
    (identity on the after side: paired after nodes are their own anchors)."""
    out: set[int] = set()
    seen = {start}
    frontier = [start]
    for _ in range(_DEPTH):
        nxt = []
        for i in frontier:
            n = nodes[i]
            for j in (n.operands if up else n.users):
                if j in seen:
                    continue
                seen.add(j)
                t = other(j)
                if t >= 0:
                    out.add(t)
                elif len(seen) < _LIMIT:
                    nxt.append(j)
        frontier = nxt
        if not frontier:
            break
    return out


def literal_only(view) -> bytearray:
    """Per node, 1 when its value is computed from literals alone (constants, iotas and
    what reads only them). Computed once per view."""
    out = view.__dict__.get("_literal_only")
    if out is not None:
        return out
    nodes = view.nodes
    out = bytearray(len(nodes))
    state = bytearray(len(nodes))  # 0 new, 1 on the stack, 2 done
    for start in range(len(nodes)):
        if state[start]:
            continue
        stack = [start]
        while stack:
            i = stack[-1]
            n = nodes[i]
            if state[i] == 0:
                state[i] = 1
                stack.extend(o for o in n.operands if state[o] == 0)
                if n.alias >= 0 and state[view.resolve(i)] == 0:
                    stack.append(view.resolve(i))
                continue
            stack.pop()
            if state[i] == 2:
                continue
            state[i] = 2
            if n.opcode in ("constant", "iota"):
                out[i] = 1
            elif n.alias >= 0:
                out[i] = out[view.resolve(i)]
            elif n.operands and n.opcode != "parameter":
                out[i] = all(out[o] for o in n.operands)
    view._literal_only = out
    return out


def anchor_score(m, b: int, a: int) -> int:
    """How many paired neighbours the before node ``b`` and the after node ``a`` share.
    Values of literals alone are no anchors: CSE leaves one ``broadcast(1/32)`` for every
    layer's mean, fusion copies it into each layer's kernel, and the copy that happened to
    be paired with it would pull every layer's twin to one kernel (fresh 17
    remat_timesformer on 8 CPUs)."""
    Bn, An = m.before.nodes, m.after.nodes
    b2a, a2b = m.b2a, m.a2b
    lit = literal_only(m.before)

    def from_b(j: int) -> int:
        return -1 if lit[j] else b2a[j]

    def from_a(j: int) -> int:
        k = a2b[j]
        return j if k >= 0 and not lit[k] else -1

    s = 0
    for up in (True, False):
        s += len(_reach(Bn, b, from_b, up) & _reach(An, a, from_a, up))
    return s


# slices keep their bounds through fusion, layout assignment and the partitioner (on
# unsharded dimensions); the dimensions of reduces, broadcasts and transposes do not (the
# reshape mover and algsimp rebuild them on other shapes: zoo mlp_mixer on 8 H100s, a bias
# gradient's reduce_sum.356 lives in wrapped_reduce.5 over other dimensions)
_BOUNDS_KEPT = ("slice", "dynamic-slice")


def same_attrs(m, b: int, cands: list[int]) -> list[int]:
    """The candidates whose local attributes equal the before node's, when some but not
    all do (gpu8 fresh 10 bf16_layernorm_residual: two layers' ``slice`` of one stacked
    weight, [0:1] and [1:2], each fused into its own gemm kernel, tie on every neighbour;
    only the bounds tell which layer a kernel's slice is). A pass may rewrite attributes
    (a partitioned dimension's bounds, algsimp's merged slices): then none or every
    candidate agrees and the list stays as it was. Only slices are told apart this way:
    other opcodes' attributes change under rewrites (``_BOUNDS_KEPT``)."""
    nb, An = m.before.nodes[b], m.after.nodes
    if nb.opcode not in _BOUNDS_KEPT or any(An[y].opcode != nb.opcode for y in cands):
        return read_windows(m, nb, cands)
    if m.parts and nb.opcode == "slice":
        # partitioned: a sharded dimension's bounds are the device's piece; the others
        # are kept (fresh 16 nystromformer on 8 CPUs: five windows [k:64+k] of one padded
        # sequence, fused into five kernels, tied on every neighbour)
        hit = [y for y in cands if _bounds_agree(m, nb, An[y])]
    else:
        key = local_attrs(nb)
        hit = [y for y in cands if local_attrs(An[y]) == key]
    return hit if hit and len(hit) < len(cands) else cands


# ops that only reorder or regroup elements: layout assignment and the GPU's layout
# normalization put transposes and bitcasts between a slice and its reader
_REORDER = ("transpose", "reshape", "bitcast", "copy")


def _window_source(nodes, i: int):
    """The slice node whose window the value ``i`` is, read through reordering ops."""
    for _ in range(4):
        n = nodes[i]
        if n.opcode == "slice":
            return n
        if n.opcode not in _REORDER or len(n.operands) != 1:
            return None
        i = n.operands[0]
    return None


def windows_read(m, nb) -> list | None:
    """Per operand position of the before node ``nb``, the slice whose window it reads
    (None where it reads none); None when it reads no window, or when it is commutative
    (its operands may be swapped after, and are never told apart by position)."""
    if nb.opcode in CSE_COMMUTATIVE or not nb.operands:
        return None
    Bn = m.before.nodes
    wins = [_window_source(Bn, x) for x in nb.operands]
    return wins if any(w is not None for w in wins) else None


def read_windows(m, nb, cands: list[int]) -> list[int]:
    """The candidates none of whose operands reads another window than the before node
    ``nb``'s operand at the same position, when some but not all do (fresh 24 bigbird on 8
    H100s: a layer's gradient scatters four key blocks, ``split.43`` = [80:96] and
    ``split.42`` = [64:80] of one tensor, each into a scatter fused into its own kernel
    with a transpose before it; tied on every neighbour and on the random block indices,
    whose values the dump elides, only the windows tell which scatter is which)."""
    if len(cands) < 2:
        return cands
    wins = windows_read(m, nb)
    if wins is None:
        return cands
    keep = [y for y in cands if not reads_other_window(m, nb, wins, m.after.nodes[y])]
    return keep if keep and len(keep) < len(cands) else cands


def reads_other_window(m, nb, wins: list | None, na) -> bool:
    """The after node ``na`` (same opcode as the before node ``nb``, whose
    ``windows_read`` are ``wins``) reads, at some operand position, a slice whose window
    contradicts the one ``nb`` reads there: not one value."""
    if wins is None or nb.opcode != na.opcode or len(wins) != len(na.operands):
        return False
    An = m.after.nodes
    for w, o in zip(wins, na.operands):
        if w is not None and (v := _window_source(An, o)) is not None and \
                _same_frame(m, w, v) and _contradict(m, w, v):
            return True
    return False


def _same_frame(m, w, v) -> bool:
    """Slices ``w`` (before) and ``v`` (after) cut operands of one shape, dimension by
    dimension, up to the partitioner's per-device pieces: a dimension compared by size alone
    may be another one where layout normalization reordered them (fresh 9
    qk_norm_softcap_attention on one H100: RoPE's halves, sliced from f32[8,8,2,8] before
    and from f32[8,2,8,8] after)."""
    ob = m.before.nodes[(w.raw_operands or w.operands)[0]].inst.shape
    oa = m.after.nodes[(v.raw_operands or v.operands)[0]].inst.shape
    if ob is None or oa is None or ob.is_tuple or oa.is_tuple or len(ob.dims) != len(oa.dims):
        return False
    return all(a == b or (m.parts and 0 < a < b and b % a == 0) for a, b in zip(oa.dims, ob.dims))


def _whole_dims(m, b, a) -> tuple[list, list, list[int]] | None:
    """Slices ``b`` (before) and ``a`` (after): their bounds and the dimensions whose
    operand size is the same on both sides (those the partitioner left whole), or None
    when the ranks differ."""
    kb, ka = _bounds(b), _bounds(a)
    if kb is None or ka is None or len(kb) != len(ka) or not b.operands or not a.operands:
        return None
    # the operand as the slice instruction reads it (the bounds index that shape), not the
    # value the view resolves it to through bitcasts and fusion parameters
    ob = m.before.nodes[(b.raw_operands or b.operands)[0]].inst.shape
    oa = m.after.nodes[(a.raw_operands or a.operands)[0]].inst.shape
    if ob is None or oa is None or len(ob.dims) != len(kb) or len(oa.dims) != len(ka):
        return None
    return kb, ka, [i for i in range(len(kb)) if ob.dims[i] == oa.dims[i]]


def _bounds_agree(m, b, a) -> bool:
    w = _whole_dims(m, b, a)
    return w is not None and bool(w[2]) and all(w[0][i] == w[1][i] for i in w[2])


def bounds_contradict(m, b: int, a: int) -> bool:
    """Before slice ``b`` and after slice ``a`` cut different windows of a dimension that
    has the same size on both sides: not one value. A pass that changes a slice's bounds
    changes its operand too (algsimp merges slice(slice(x)) into a slice of x, drops the
    pad under slice(pad(x)), slices a concatenate's operand), and a window equal to the
    whole operand is no slice at all afterwards (fresh 16 nystromformer on 8 CPUs: the
    middle window [2:66] of a sequence padded by two is the sequence itself, and was paired
    with the window [4:68] of the next kernel)."""
    return _contradict(m, m.before.nodes[b], m.after.nodes[a])


def _contradict(m, nb, na) -> bool:
    if nb.opcode != "slice" or na.opcode != "slice":
        return False
    w = _whole_dims(m, nb, na)
    return w is not None and any(w[0][i] != w[1][i] for i in w[2])


def best_by_anchors(m, b: int, cands: list[int]) -> list[int]:
    """The candidates with the highest anchor score (all of them when none scores)."""
    if len(cands) < 2:
        return cands
    cands = same_layer(m, b, same_attrs(m, b, cands))
    if len(cands) < 2:
        return cands
    cands = closest(m, b, cands)  # gpu8n: the other layer's twin reads other parameters
    if len(cands) < 2:
        return cands
    scored = [(anchor_score(m, b, y), y) for y in cands]
    top = max(s for s, _ in scored)
    return [y for s, y in scored if s == top]


def real_twins(m, cands: list[int]) -> bool:
    """Tied after candidates that compute different values (twins: other layers, whose
    subgraphs end in other parameters and hang off other paired producers), not copies of
    one value that fusion duplicated into several consumers."""
    An, a2b = m.after.nodes, m.a2b
    if len({An[y].fp for y in cands}) < 2:
        return False

    def from_a(j: int) -> int:
        return j if a2b[j] >= 0 else -1

    # and they hang off different paired producers
    return len({frozenset(_reach(An, y, from_a, True)) for y in cands}) > 1


def mark_uncertain_twins(m, fates: list) -> None:
    """Fates whose named target came from a pairing among twins nothing told apart (equal
    keys, equal neighbourhoods, different values): the fate itself (fused, rewritten...)
    holds for every twin, but which kernel holds the value does not. Name none: list the
    kernels of every candidate (``candidates``) instead of naming one of them."""
    An = m.after.nodes
    for b, cands in m.twins.items():
        f = fates[b]
        y = m.b2a[b]
        if y < 0 or f.fate not in ("kept", "fused", "rewritten") or f.after != An[y].name:
            continue
        kernels = []
        for c in cands:
            k = An[An[c].home].name
            if k not in kernels:
                kernels.append(k)
        if len(kernels) < 2:
            continue
        f.candidates = kernels
        f.reason = (f"{f.reason}; but repeated code (layers of one loop, copies) leaves "
                    f"{len(kernels)} equally likely places: {', '.join(kernels)}")
        f.after, f.fusion, f.fusion_kind = None, None, None


def owned_elsewhere(m):
    """A test ``other(b, a)``: the after node ``a`` carries the metadata (opcode, op_name)
    of some *other* before instruction, not ``b``'s. Passes keep an instruction's op_name
    (fusion copies it into the fused computation, the partitioner onto its shards), so
    when a remat copy or another layer reads the same parameter as ``b`` does, structure
    alone (a shared operand or user) would pair ``b`` with its twin; its op_name says
    which before instruction it came from. Only names some before node of that opcode
    carries count: new instructions with names of their own are left to structure. Tuples
    and data movement are plumbing: loop passes give a rebuilt tuple the op_name of the
    while it replaces, algsimp a new broadcast that of the multiply it simplified, so their
    op_names say nothing about which value they hold."""
    keys = {(n.opcode, n.op_name) for n in m.before.nodes
            if n.op_name and n.alias < 0 and n.opcode not in _PLUMBING}

    def other(b, a) -> bool:
        return (a.op_name is not None and b.op_name is not None and a.op_name != b.op_name
                and (a.opcode, a.op_name) in keys)
    return other


def pair_sole_choices(m, chosen: list[tuple[int, list[int]]], how: str) -> None:
    """Make the (before, after) pairs one step of structural propagation may make.

    ``chosen`` lists, for each open user (or operand) of a paired before node, its
    candidates among the open users (operands) of the partner. A before node with one
    open candidate takes it, unless a twin (same op_name and source line: repeated code)
    computing another value (another subgraph fingerprint: the other layer's update
    reading the same learning rate) has that same single candidate: then nothing here tells which twin the after node is, and taking
    the first in the list would name the wrong layer. Such nodes are left to the later,
    anchor-aware steps. Identical copies (same fingerprint) still pair the first: CSE
    keeps the first and the others are merged into it. In order
    (a pair removes its after node from the later ones' candidates)."""
    nodes, a2b = m.before.nodes, m.a2b
    sole: dict[tuple, set] = {}
    for x, cand in chosen:
        if cand and len(set(cand)) == 1:
            n = nodes[x]
            sole.setdefault((cand[0], n.op_name, n.src), set()).add(n.fp)
    for x, cand in chosen:  # in order: an earlier pair leaves a later node one candidate
        if m.b2a[x] >= 0:
            continue
        cand = [y for y in cand if a2b[y] < 0]
        n = nodes[x]
        if cand and len(set(cand)) == 1 and \
                len(sole.get((cand[0], n.op_name, n.src), ())) <= 1:
            m.pair(x, cand[0], how)
