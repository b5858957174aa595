"""Dots a library fusion took in without their metadata, paired by what they read.

XLA:CPU's dot-library-rewriter wraps dots into ``__ynn_fusion`` kernels (YNNPACK) and the
dot inside carries no metadata at all (fresh 4 alibi_decoder_layers on 8 CPU devices:
``ynn_fusion.16 = fusion(copy_bitcast_fusion.21, copy_bitcast_fusion.20)`` calls
``dot.79 = dot(param_0.16, param_1.16)``, no op_name). With no op_name and a per-device
shape, no step of the cascade pairs it, and the before dot was called "simplified away"
into some consumer. Its operands still tell: each reads (through the kernels that copy or
bitcast it) where one of the before dot's operands lives.

:func:`pair_unnamed_dots` pairs an open before dot with an open after dot without op_name
when each operand of one reads where an operand of the other lives (in either order), the
after dot can hold the before dot's value (its shape or a per-device piece of it), and
the choice is unique both ways.
"""

from __future__ import annotations

from .dot_inputs import Solo, before_inputs, copies_by_fp, strip_after, top_of
from .partition import holds_shape, num_partitions


def _after_sets(A, x) -> list[set[int]]:
    return [{strip_after(A, o), top_of(A, o)} for o in x.operands]


def _fits(w: list[set[int]], h: list[set[int]]) -> bool:
    if len(w) != 2 or len(h) != 2:
        return False
    return bool((w[0] & h[0] and w[1] & h[1]) or (w[0] & h[1] and w[1] & h[0]))


def _named_only(m, b: int) -> bool:
    """The dot ``b`` was paired by its op_name alone with something that is no dot (the
    rewrite step's guess, e.g. a broadcast of a strength-reduced twin sharing the name):
    a dot without metadata that reads b's operands is better evidence (fresh 5
    maml_inner_vmap on CPU: dot_general.20 lives on as the bare dot.21, while
    broadcast.49, carrying its op_name, belongs to a vmapped twin)."""
    return m.how.get(b) == "rewrite" and m.after.nodes[m.b2a[b]].opcode != "dot"


def _unique_best(lst: list[tuple[tuple[int, int], int]]) -> int | None:
    """The id with the strictly best key, or None when the best is shared."""
    best = max(k for k, _ in lst)
    ids = [i for k, i in lst if k == best]
    return ids[0] if len(ids) == 1 else None


def pair_unnamed_dots(m) -> int:
    """Pair open before dots with open, op_name-less after dots by their operands (see the
    module text). Returns how many were paired."""
    B, A = m.before, m.after
    cands = [x for x in A.nodes if x.opcode == "dot" and not x.op_name and m.a2b[x.idx] < 0
             and x.alias < 0 and len(x.operands) == 2]
    if not cands:
        return 0
    nparts = max(1, num_partitions(B.module, A.module))
    dup = copies_by_fp(A)
    have = {x.idx: _after_sets(A, x) for x in cands}
    hits: dict[int, list[tuple[tuple[int, int], int]]] = {}
    back: dict[int, list[tuple[tuple[int, int], int]]] = {}
    for b in B.nodes:
        if b.opcode != "dot" or b.alias >= 0 or len(b.operands) != 2:
            continue
        if m.b2a[b.idx] >= 0 and not _named_only(m, b.idx):
            continue
        want = [before_inputs(m, Solo(b, k), dup) for k in (0, 1)]
        if not want[0] or not want[1]:
            continue
        exact = [before_inputs(m, Solo(b, k), {}) for k in (0, 1)]
        uses = {top_of(A, m.b2a[u]) for u in b.users if m.b2a[u] >= 0}
        for x in cands:
            if _fits(want, have[x.idx]) and holds_shape(b.inst.shape, x.inst.shape, nparts):
                # a recomputed twin (remat) reads copies of the same values: the kernels
                # reading each dot's result, then reading the very same copies, decide
                k = (len(uses & {top_of(A, u) for u in x.users}),
                     int(_fits(exact, have[x.idx])))
                hits.setdefault(b.idx, []).append((k, x.idx))
                back.setdefault(x.idx, []).append((k, b.idx))
    c = 0
    for bi, xs in hits.items():
        top = _unique_best(xs)
        if top is not None and _unique_best(back[top]) == bi:
            if m.b2a[bi] >= 0:
                m.unpair(bi)
            c += m.pair(bi, top, "operands")
    return c
