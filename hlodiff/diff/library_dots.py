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
    hits: dict[int, list[int]] = {}
    back: dict[int, list[int]] = {}
    for b in B.nodes:
        if b.opcode != "dot" or m.b2a[b.idx] >= 0 or b.alias >= 0 or len(b.operands) != 2:
            continue
        want = [before_inputs(m, Solo(b, k), dup) for k in (0, 1)]
        if not want[0] or not want[1]:
            continue
        for x in cands:
            if _fits(want, have[x.idx]) and holds_shape(b.inst.shape, x.inst.shape, nparts):
                hits.setdefault(b.idx, []).append(x.idx)
                back.setdefault(x.idx, []).append(b.idx)
    c = 0
    for bi, xs in hits.items():
        if len(xs) == 1 and len(back[xs[0]]) == 1:
            c += m.pair(bi, xs[0], "operands")
    return c
