"""The order in which XLA's CSE meets the instructions of a computation (old2 helper).

XLA's HloCSE keeps, of each set of identical instructions, the first it meets while walking
the computation in *post order* (``MakeInstructionPostOrder``: a depth-first walk from each
instruction without users, operands first and in operand order); only constants are
combined separately, in instruction-list order. It runs after the simplification pipeline:
calls are inlined (the callee's code stands where the call was) and dead code is gone, so
the walk starts at the computation's root (and side-effecting instructions), not at dead
instructions that happen to come first in the text.

Evidence (JAX 0.4.30, CPU): sparse_embed_update's entry computes ``select(compare(i, 0),
add(i, 64), i)`` twice, once for a while loop's init tuple read through the ROOT tuple's
first operand (``compare.19``/``add.20``/``select.21``) and once for a later loop whose
result only a dead ``reshape.44`` and the root's second operand read
(``compare.28``/``add.29``/``select.30``). Dump 0015 -> 0016 (cse): the first copy stays
(fused later), the second is merged into it. Starting the walk at the dead reshape (first in
text order among instructions without users) would keep the second.
"""

from __future__ import annotations

from collections.abc import Iterable

from .view import View


def post_order(B: View, live: bytearray) -> dict[int, int]:
    """Node -> its rank in the post order CSE walks: from each computation's root (then
    live nodes nothing live reads, in instruction order), operands first in operand order;
    dead nodes are not ranked. (A node whose only reader is a no-op view that algsimp
    removes has no users in the view: it is not a start.)"""
    nodes = B.nodes
    starts = [B.resolve(B.entry_root)] + [B.resolve(r) for _c, _r, _n, r, _p in B.bodies]
    starts += [n.idx for n in nodes if n.alias < 0 and live[n.idx] and
               not any(live[u] for u in n.users)]
    return ranks_from(B, (i for i in starts if live[i]))


def ranks_from(B: View, starts: Iterable[int]) -> dict[int, int]:
    """Node -> its rank in a post order from ``starts`` (each in turn, skipping those
    already ranked), operands first in operand order; iterative, for deep graphs."""
    nodes = B.nodes
    rank: dict[int, int] = {}
    on_stack = bytearray(len(nodes))
    for i0 in starts:
        if i0 in rank:
            continue
        stack = [(i0, 0)]
        on_stack[i0] = 1
        while stack:
            i, k = stack.pop()
            ops = nodes[i].operands
            while k < len(ops) and (ops[k] in rank or on_stack[ops[k]]):
                k += 1
            if k < len(ops):
                stack.append((i, k + 1))
                stack.append((ops[k], 0))
                on_stack[ops[k]] = 1
                continue
            on_stack[i] = 0
            rank[i] = len(rank)
    return rank


_EFFECTS = {"send", "send-done", "recv", "recv-done", "outfeed", "infeed", "custom-call",
            "rng", "rng-bit-generator", "all-reduce", "after-all"}


def reachable(B: View) -> bytearray:
    """1 for nodes whose value reaches the entry root, a control-flow body's root or a
    side-effecting instruction (what DCE keeps; a coarser value_facts.live_nodes, for the
    matcher, which runs before the value facts)."""
    nodes = B.nodes
    out = bytearray(len(nodes))
    bodies: dict[int, list[int]] = {}
    for ctl, _role, _c, root, _p in B.bodies:
        bodies.setdefault(ctl, []).append(B.resolve(root))
    stack = [B.resolve(B.entry_root)]
    stack += [n.idx for n in nodes if n.alias < 0 and n.opcode in _EFFECTS]
    while stack:
        i = stack.pop()
        if out[i]:
            continue
        out[i] = 1
        stack.extend(o for o in nodes[i].operands if not out[o])
        stack.extend(bodies.get(i, ()))
    return out


def gone_before_survivor(B: View, m, surv: dict[int, int],
                         rank: dict[int, int]) -> dict[int, bool]:
    """For unpaired members of a set of identical non-constant copies (``surv``: copy ->
    the copy CSE would keep) of which one is paired with an instruction of its opcode
    after optimization: True when CSE's walk meets the member before that paired copy.
    The paired copy survived CSE, so a member met earlier did not reach CSE (algsimp
    rewrote it, ``reshape(iota)`` into an iota, say). False for one met later and read by
    the same kind of instructions as the paired copy: algsimp treated it alike, and CSE
    merged it (one read differently may have been rewritten: not decided here).

    Evidence (JAX 0.4.30, gpt_rope_adamw): iotas of one op_name, ``iota.194`` (read by a
    reshape: rewritten at algsimp), ``iota.196`` (read by ``negate.197``: fused after CSE),
    ``iota.239`` (merged into iota.196 at cse)."""
    members: dict[int, list[int]] = {}
    for c, k in surv.items():
        members.setdefault(k, [k]).append(c)
    out: dict[int, bool] = {}
    big = len(B.nodes)
    for k, g in members.items():
        if B.nodes[k].opcode == "constant":
            continue
        kept = [i for i in g if m.b2a[i] >= 0 and
                m.after.nodes[m.b2a[i]].opcode == B.nodes[i].opcode]
        if not kept:
            continue
        j = min(kept, key=lambda i: (rank.get(i, big + i), i))
        first = rank.get(j, big + j)
        readers = sorted((B.nodes[u].opcode, B.nodes[u].fp) for u in B.nodes[j].users)
        for i in g:
            if m.b2a[i] >= 0:
                continue
            if rank.get(i, big + i) < first:
                out[i] = True
            elif sorted((B.nodes[u].opcode, B.nodes[u].fp) for u in B.nodes[i].users) \
                    == readers:
                out[i] = False  # read as the survivor is: algsimp left it as it left that
    return out
