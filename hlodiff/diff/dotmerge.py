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

_MOVES = ("bitcast", "copy", "transpose", "reshape", "slice")  # slice: of a merged slice


def _through(nodes, i: int) -> int:
    """Back through layout moves and fusion parameters, to the top-level producer."""
    for _ in range(12):
        n = nodes[i]
        if n.opcode in _MOVES and n.raw_operands:
            i = n.raw_operands[0]
            continue
        if n.opcode == "parameter" and n.fusion >= 0:
            f = nodes[n.fusion]
            k = n.inst.parameter_number
            if k is not None and k < len(f.raw_operands):
                i = f.raw_operands[k]
                continue
        break
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
    big = An[src] if src >= 0 else None
    owners = [m.a2b[j] for j, n in enumerate(An)
              if n.opcode == "dot" and (j == src or n.fusion == src) and m.a2b[j] >= 0]
    other = Bn[owners[0]].name if big is not None and owners else None
    with_ = f" with {other}" if other else ""
    into = f" {big.name}" if big is not None else ""
    return (f"dot merged{with_} into one dot{into} (dot merger: dots sharing an operand "
            f"become one dot and a slice each); its result is {a.name}")
