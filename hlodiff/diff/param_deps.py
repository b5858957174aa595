"""Which entry parameters a value depends on: a layer's signature that passes keep.

Repeated code (the layers of a Python loop) gives twins equal opcodes, shapes, op_names
and source lines, and after SPMD partitioning (shapes compared by rank only) often equal
neighbourhoods too. What always tells layer 1's attention scores from layer 2's is the
set of the program's parameters each one is computed from: layer 2's read layer 2's
weights. Entry parameters keep their numbers through every pass (the partitioner only
cuts their shapes), so this set is comparable across the two modules without any
matching, and XLA's rewrites rarely change it: a fused, rebuilt or merged value is still
computed from the same inputs. Where they do change it, they change it a little (the dot
merger concatenates another layer's weights into one operand: one or two parameters
more), while a twin of another layer differs by that layer's weights.

The set is a bitset (a Python int) per node, one pass over each view in dependency order.
Collectives the combiner merged into one tuple-shaped instruction are seen through: an
element of ``all-reduce((a, b))`` depends on ``a``'s parameters only. Loop and
conditional bodies' parameters depend on what the loop reads."""

from __future__ import annotations

from itertools import permutations

from .collective_elements import element_of
from .view import View, operands_first

_OPAQUE = {"while", "fusion", "custom-call", "parameter", "conditional", "call", "tuple"}


def _element_source(nodes, n) -> list[int]:
    """The operands whose value a node depends on: for an element of a combined
    (tuple-shaped) collective, the one operand that element came from."""
    ops = n.operands
    el = element_of(nodes, n)
    if el is None:
        return ops
    x, k = el
    if x.opcode in _OPAQUE or len(x.operands) < 2 or k is None or k >= len(x.operands):
        return ops
    return [x.operands[k]]


def deps(view: View) -> list[int]:
    """Per node, the bitset of entry parameter numbers its value is computed from."""
    cached = getattr(view, "_param_deps", None)
    if cached is not None:
        return cached
    nodes = view.nodes
    bit = {v: 1 << k for k, v in view.entry_params.items()}
    body_param: dict[int, int] = {}
    for ctl, _role, _c, _root, params in view.bodies:
        for p in params:
            body_param[p] = ctl
    out = [0] * len(nodes)
    order = list(operands_first(nodes))
    for _ in range(4):  # bodies read their loop's operands: a few rounds settle nesting
        changed = False
        for i in order:
            n = nodes[i]
            v = bit.get(i, 0) | out[i]
            for o in _element_source(nodes, n):
                v |= out[o]
            ctl = body_param.get(i)
            if ctl is not None:
                for o in nodes[ctl].operands:
                    v |= out[o]
            if v != out[i]:
                out[i] = v
                changed = True
        if not changed or not body_param:
            break
    view._param_deps = out
    return out


def distance(m, b: int, a: int) -> int:
    """How far before node ``b``'s parameter sets are from after node ``a``'s: the
    parameters one of the two depends on and the other does not, plus the same for each of
    ``b``'s operands against the nearest operand of ``a``. The operands' sets tell
    backward-pass twins apart, whose own sets are all the parameters: layer 2's gradient
    dot reads layer 2's activations."""
    db, da = deps(m.before), deps(m.after)
    bn, an = m.before.nodes[b], m.after.nodes[a]
    d = (db[b] ^ da[a]).bit_count()
    bops = [db[x] for x in bn.operands]
    aops = [da[y] for y in an.operands]
    if not bops or not aops:
        return d
    if len(bops) == len(aops) <= 3:  # operands in any order (a dot algsimp flipped)
        return d + min(sum((v ^ w).bit_count() for v, w in zip(bops, p))
                       for p in permutations(aops))
    for v in set(bops):
        d += min((v ^ w).bit_count() for w in set(aops))
    return d


def closest(m, b: int, cands: list[int], within: int = 0) -> list[int]:
    """The candidates whose parameter sets are nearest ``b``'s, when the nearest are no
    more than ``within`` parameters away (otherwise all: when every candidate reads other
    parameters, the sets confirm none of them, and picking the least wrong one would
    turn an undecided twin into a confident wrong answer)."""
    if len(cands) < 2:
        return cands
    dist = [distance(m, b, y) for y in cands]
    low = min(dist)
    if low > within:
        return cands
    return [y for y, d in zip(cands, dist) if d == low]


def exact_twin(m, b: int, best: int, ties: list[int], cands: list[int]) -> list[int]:
    """The rewrite step's choice for ``b``: ``ties`` (its best-scoring candidates), unless
    none of them reads what ``b`` reads while candidates of the same opcode do (the same
    parameter sets, for the node and each operand): then those. Twins of other layers of
    the backward pass share op_name and line: zoo resnet_block_bn on 8 H100s,
    ``conv_general_dilated.8`` (the input gradient, reading the reversed kernel) scored
    highest with the weight-gradient call ``cudnn-conv-bw-filter.2`` by the neighbours
    paired so far, while ``cudnn-conv-bw-input.1`` reads the same values. Other opcodes are
    left alone: a split-K gemm's value is in the reduction after it, which reads
    differently."""
    if any(distance(m, b, y) == 0 for y in ties):
        return ties
    op = m.after.nodes[best].opcode
    exact = [y for y in cands if m.after.nodes[y].opcode == op and distance(m, b, y) == 0]
    return exact or ties


def far_twin(m, b: int, best: int, cands: list[int]) -> int | None:
    """The candidate to take instead of ``best`` (the similarity step's highest score)
    when ``best`` reads another layer's parameters: a candidate whose parameter sets are
    several times closer to ``b``'s than ``best``'s are and differ by no more than a
    merged dot's or CSE's few parameters, or None (candidates that are all far say
    nothing: nested remat copies). The score counts
    neighbours paired so far, and a neighbour shared by both layers (one broadcast of -inf
    that fusion copied into each layer's kernel) scores for whichever copy it was paired
    with: fresh 19 mh_moe_subtoken_top2_merge on 8 H100s, layer 0's router select (distance
    3 to its own kernel's, 45 to layer 1's). Of equally near candidates (copies fusion
    made of one value in several kernels) the first scored."""
    far = distance(m, b, best)
    if far < 8:
        return None
    near = [(distance(m, b, y), k, y) for k, y in enumerate(cands) if y != best]
    d, _, y = min(near)
    return None if d * 4 > far or d > 4 else y
