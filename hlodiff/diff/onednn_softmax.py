"""Softmax rewritten into a oneDNN custom call before CSE (JAX 0.4.30 on CPU; old5).

XLA:CPU of mid 2024 runs ``onednn-ops-rewriter`` right after the call inliner: it replaces
the whole pattern ``divide(exp(x - broadcast(max(reduce_max(x), -inf))),
broadcast(reduce_sum(exp(...))))`` by ``custom-call(x), custom_call_target=
"__onednn$softmax"`` carrying the divide's metadata (or that of a convert narrowing the
divide's result, which it takes in too). Fresh 5 kl_distillation dump 0003 ->
0004: ``reduce.45`` ... ``divide.62`` (jax.nn.softmax of the student logits) become
``custom-call = f32[16,7] custom-call(divide.40)``. Every op of the pattern is rewritten
into the call, before CSE: identical copies elsewhere (the log_softmax callees read the
same ``divide.63 = divide(dot.39, 2)``, merged with ``divide.40`` later) are not merged
into them, and keep their own fates (fused). The matcher had paired the pattern's ops
with those copies' kernels.
"""

from __future__ import annotations

from collections import defaultdict

TARGET = "__onednn$softmax"
_INNER = {"reduce", "maximum", "reshape", "broadcast", "subtract", "exponential", "divide"}


def _is_literal(B, n) -> bool:
    return n.opcode == "constant" or (n.opcode == "broadcast" and bool(n.operands) and
                                      B.nodes[n.operands[0]].opcode == "constant")


def _chain_head(n) -> bool:
    """The head of a no-op reshape/broadcast chain the view folded into its end (it has
    no users of its own there): part of the pattern, not another reader."""
    return n.opcode in ("reshape", "broadcast") and not n.users


def _pattern(B, d) -> set[int] | None:
    """The ops of the softmax ending at divide ``d`` (read only inside it), else None."""
    if len(d.operands) != 2:
        return None
    e = B.nodes[d.operands[0]]
    if e.opcode != "exponential" or not e.operands:
        return None
    s = B.nodes[e.operands[0]]
    if s.opcode != "subtract" or len(s.operands) != 2:
        return None
    x = s.operands[0]
    out, stack = {d.idx}, [d.idx]
    while stack:
        for o in B.nodes[stack.pop()].operands:
            if o == x or o in out:
                continue
            on = B.nodes[o]
            if _is_literal(B, on):
                continue
            if on.opcode not in _INNER or on.alias >= 0 or len(out) > 24:
                return None
            out.add(o)
            stack.append(o)
    for i in out:
        if i != d.idx and any(u not in out and not _chain_head(B.nodes[u])
                              for u in B.nodes[i].users):
            return None
    return out


def _narrowed(B, n) -> bool:
    """``n`` converts a divide read by nothing else."""
    if len(n.operands) != 1:
        return False
    d = B.nodes[n.operands[0]]
    return d.opcode == "divide" and d.alias < 0 and d.users == [n.idx]


def patterns(m) -> dict[int, int]:
    """Before op -> the after oneDNN softmax call it was rewritten into (one softmax
    divide with the call's metadata and shape per call)."""
    B, A = m.before, m.after
    calls = [a for a in A.nodes if a.opcode == "custom-call" and
             a.inst.custom_call_target == TARGET]
    out: dict[int, int] = {}
    if not calls:
        return out
    for c in calls:
        found = []
        for b in B.nodes:
            if b.alias >= 0 or b.op_name != c.op_name or b.src != c.src or b.mdims != c.mdims:
                continue
            if b.opcode == "divide":
                p = _pattern(B, b)
            elif b.opcode == "convert" and _narrowed(B, b):
                # a softmax whose result is narrowed (bf16 programs): the rewriter takes
                # the convert into the call too, and the call carries the convert's
                # metadata (fresh 16 remat_nested_pvt_spatial_reduction under JAX 0.4.30)
                p = _pattern(B, B.nodes[b.operands[0]])
                p = p | {b.idx} if p else None
            else:
                continue
            if p:
                found.append(p)
        if len(found) > 1:  # repeated code: the pattern whose input feeds this call
            found = [p for p in found if _feeds(m, p, c)]
        if len(found) == 1:
            for i in found[0]:
                out.setdefault(i, c.idx)
    return out


def _feeds(m, p: set[int], call) -> bool:
    """The input of softmax pattern ``p`` is paired with a node a few steps above the
    after ``call`` (the rewriter reads the input through converts and kernels)."""
    B, A = m.before.nodes, m.after.nodes
    ins = {o for i in p for o in B[i].operands if o not in p and not _is_literal(m.before, B[o])}
    want = {m.b2a[x] for x in ins if m.b2a[x] >= 0}
    if not want:
        return False
    seen, frontier = set(), [call.idx]
    for _ in range(4):
        frontier = [o for y in frontier for o in A[y].operands if o not in seen]
        seen.update(frontier)
        if seen & want:
            return True
    return False


def repair(m) -> int:
    """Free the after nodes the matcher gave the pattern's ops, hand each to an open
    identical copy of that op outside the pattern, and pair the divide with its call."""
    P = patterns(m)
    if not P:
        return 0
    B = m.before
    by_fp: dict[int, list[int]] = defaultdict(list)
    for n in B.nodes:
        if n.alias < 0 and n.idx not in P:
            by_fp[n.fp].append(n.idx)
    c = 0
    for b, call in P.items():
        y = m.b2a[b]
        if y < 0 or y == call:
            continue
        m.b2a[b] = -1
        m.a2b[y] = -1
        m.how.pop(b, None)
        for t in by_fp.get(B.nodes[b].fp, ()):
            if m.b2a[t] < 0 and m.pair(t, y, "onednn twin"):
                c += 1
                break
    for b, call in P.items():  # the op whose metadata the call carries
        n, a = B.nodes[b], m.after.nodes[call]
        if n.opcode in ("divide", "convert") and n.op_name == a.op_name and \
                n.mdims == a.mdims and m.b2a[b] < 0 and m.a2b[call] < 0:
            c += m.pair(b, call, "onednn softmax")
    return c
