"""The rewrite step, most certain pairs first (issue 9, class 6: repeated code).

The rewrite step pairs open before nodes with open after nodes that share their op_name
and source line. It used to walk the before nodes in program order and give each the best
candidate left: with repeated layers (the same op_name and line for every layer) the first
layer's node takes whichever twin scores as high, and every later pair inherits the
mistake. Here the step runs in rounds: in each, a pair is made only where the before node
prefers the after node *and* the after node prefers that before node, each strictly over
every alternative (connection score first, shared paired neighbourhood -- the anchors of
``anchors.anchor_score`` -- second, and then only by two or more), with some evidence (two
paired neighbours, or one and an anchor). Every round's pairs are propagated structurally
(operands, users) before the next: once layer 2's weight-gradient dot is paired, the
reduce next to it is no longer a tie. What stays tied is left to the greedy step.
Reach sets are cached per round, so a round is linear in the candidate lists.
"""

from __future__ import annotations

from typing import Callable

from .anchors import _reach
from .fused_copies import copy_keys

_SCAN_CAP = 48
_ROUNDS = 8
# anchors break a tie of connection scores only by this many more shared neighbours
_MARGIN = 2


def mutual_rewrites(m, skip: set[int], sharded: bool, bucket_fn: Callable,
                    cands_fn: Callable, score: Callable, propagate: Callable) -> int:
    """Pair mutual best choices among the rewrite step's candidates, in rounds."""
    Bn, An = m.before.nodes, m.after.nodes
    total = 0
    # a neighbour paired with one of fusion's copies counts for every copy, as in the
    # greedy step (fresh 16 nystromformer on 8 CPUs: a window of a padded sequence paired
    # in one kernel, its copy read by the multiply in another)
    ck = copy_keys(m).__getitem__
    for _ in range(_ROUNDS):
        bucket, coll = bucket_fn(m)
        b2a, a2b = m.b2a, m.a2b
        rb: dict[tuple[int, bool], set] = {}
        ra: dict[tuple[int, bool], set] = {}

        def from_b(j: int) -> int:
            return b2a[j]

        def from_a(j: int) -> int:
            return j if a2b[j] >= 0 else -1

        def anchors(b: int, y: int) -> int:
            s = 0
            for up in (True, False):
                x = rb.get((b, up))
                if x is None:
                    x = rb[(b, up)] = _reach(Bn, b, from_b, up)
                z = ra.get((y, up))
                if z is None:
                    z = ra[(y, up)] = _reach(An, y, from_a, up)
                s += len(x & z)
            return s

        keys: dict[int, list[tuple[tuple[int, int], int]]] = {}
        by_a: dict[int, list[tuple[tuple[int, int], int]]] = {}
        for b in Bn:
            if b.alias >= 0 or b2a[b.idx] >= 0 or b.idx in skip or not b.op_name or \
                    b.opcode == "parameter":
                continue
            cands = cands_fn(m, b, bucket, coll, sharded)[:_SCAN_CAP]
            if len(cands) < 1:
                continue
            lst = []
            for y in cands:
                a = An[y]
                k = (score(m, b, a, key=ck) + (1 if a.mdims == b.mdims else 0), anchors(b.idx, y))
                lst.append((k, y))
                by_a.setdefault(y, []).append((k, b.idx))
            keys[b.idx] = lst
        made = 0
        for bi, lst in keys.items():
            best = _unique_top(lst)
            if best is None:
                continue
            k, y = best
            if k[0] < 2 or (k[0] < 3 and k[1] < 1):
                continue  # a paired operand or user, and more than that one, or anchors
            back = _unique_top(by_a.get(y, []))
            if back is None or back[1] != bi:
                continue
            if m.pair(bi, y, "rewrite"):
                made += 1
        if not made:
            break
        total += made
        propagate(m)
    return total


def _unique_top(lst: list[tuple[tuple[int, int], int]]):
    """The (key, id) with the strictly highest key, or None on a tie (anchor counts a
    single shared neighbour apart are a tie: one wrong earlier pair makes that much)."""
    if not lst:
        return None
    top = max(lst)
    if sum(1 for k, _ in lst if k == top[0]) > 1:
        return None
    for k, _ in lst:
        if k != top[0] and k[0] == top[0][0] and top[0][1] - k[1] < _MARGIN:
            return None
    return top
