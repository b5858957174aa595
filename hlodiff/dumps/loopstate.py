"""Loop results of a rebuilt while loop, in pass-by-pass dumps (loops3, issue 9).

The loop passes (while-loop-invariant-code-motion, the while-loop simplifier, the constant
sinking passes) replace a while loop by a new one and read its results through new
get-tuple-elements: lstm_clip_scan cpu8, dump 0016 -> 0017 (WLICM):

    %get-tuple-element.218 = f32[10,1,16] get-tuple-element(%while.52), index=4, op_name=".../while"
    ->
    %get-tuple-element.392 = f32[10,1,16] get-tuple-element(%while.54), index=4, op_name=".../while"

When the old element's users were rebuilt in the same pass (here the init tuple of the
next loop), "what took its place in its users" finds nothing, and the value was followed
into the next loop instead. The new element of the same index, shape and op_name, read
from a new loop with the old loop's op_name, holds the value. Only a unique such element
counts (two loops with one op_name rebuilt in one pass stay undecided).
"""

from __future__ import annotations

import re

from ..hlo.model import Instruction


def _op_name(i: Instruction | None) -> str | None:
    return i.metadata.op_name if i is not None and i.metadata is not None else None


def _key(g: Instruction, loop: Instruction) -> tuple:
    return (loop.opcode, _op_name(loop), g.index, g.shape.text, _op_name(g))


def rebuilt_elements(ptop: dict, ctop: dict, added: list[str]) -> dict[tuple, str | None]:
    """Key -> the one added get-tuple-element of an added while with that key (None when
    several share it)."""
    out: dict[tuple, str | None] = {}
    added_set = set(added)
    for n in added:
        g = ctop[n]
        if g.opcode != "get-tuple-element" or not g.operands:
            continue
        loop = ctop.get(g.operands[0])
        if loop is None or loop.opcode != "while" or loop.name not in added_set:
            continue
        k = _key(g, loop)
        out[k] = None if k in out else n
    return out


def rebuilt_element(ptop: dict, name: str, removed: set[str],
                    index: dict[tuple, str | None]) -> str | None:
    """The new element that holds removed get-tuple-element ``name``'s value, when its loop
    was removed in the same pass and exactly one new loop element matches it."""
    g = ptop.get(name)
    if g is None or g.opcode != "get-tuple-element" or not g.operands:
        return None
    loop = ptop.get(g.operands[0])
    if loop is None or loop.opcode != "while" or loop.name not in removed:
        return None
    return index.get(_key(g, loop))


def element_read_back(prev, cur_top: dict, p2c: dict[str, str], name: str) -> str | None:
    """The surviving get-tuple-element that reads removed ``name`` back out of a tuple the
    same pass took apart (shard4). The while-loop simplifier packs a rebuilt loop's results
    into a tuple and reads them back; algsimp then forwards each read-back element to the
    loop in place, under the read-back's own name. gru_scan cpu8, dump 0019 -> 0020
    (algsimp): ``%tuple.21 = tuple(..., %get-tuple-element.481, ...)`` (index 8),
    ``%get-tuple-element.929 = get-tuple-element(%tuple.21), index=8`` becomes
    ``%get-tuple-element.929 = get-tuple-element(%while.50), index=2``; tuple.21 and
    get-tuple-element.481 are gone. The value of get-tuple-element.481 is in
    get-tuple-element.929 (not in while.50, what took tuple.21's place)."""
    found = None
    for user, k in prev.users.get(name, ()):
        t = prev.top.get(user)
        if t is None or t.opcode != "tuple" or user in p2c:
            return None
        for g, _ in prev.users.get(user, ()):
            gi = prev.top.get(g)
            if gi is not None and gi.opcode == "get-tuple-element" and gi.index == k:
                c = p2c.get(g)
                if c is not None and c in cur_top and found in (None, c):
                    found = c
    return found


def rebuilt_loops(ptop: dict, ctop: dict, removed: list[str],
                  added: list[str]) -> dict[str, str]:
    """Removed while -> the added while that now runs its loop (loops4, issue 9).

    A loop pass that clones a computation clones the loops in it: kalman_filter_scan (jax
    0.10.2) dump 0010 -> 0011, while-loop-invariant-code-motion rebuilds the scan body that
    holds the LU pivoting loop, and ``%while.4 = while(%while.3), condition=%region_4.6,
    body=%region_1.5`` comes back as ``%while.12 = while(%while.11), condition=%region_4.6,
    body=%region_1.5`` (same op_name). XLA:CPU's small-while-loop-hoisting (dump 0070 ->
    0071) wraps a loop in a call: ``%while.35 = while(%tuple.53)`` becomes ``%call.9 =
    call(%tuple.53), to_apply=%while.35_computation`` whose root is ``%while.39 =
    while(%tuple.57)`` with the same condition and body. The loop's users then read the
    call or a tuple of the new loop's elements; the value is the new loop's.

    First the unique added while calling the same computations; else, when the pass
    rebuilt the loop itself (a new body), the unique added while with the loop's op_name
    while no other removed while has it."""
    whiles = [n for n in added if ctop[n].opcode == "while"]
    if not whiles:
        return {}
    gone = [n for n in removed if ptop[n].opcode == "while"]
    by_calls: dict[tuple, list[str]] = {}
    by_name: dict[str | None, list[str]] = {}
    for n in whiles:
        by_calls.setdefault(ctop[n].calls, []).append(n)
        by_name.setdefault(_op_name(ctop[n]), []).append(n)
    old_names: dict[str | None, int] = {}
    for n in gone:
        k = _op_name(ptop[n])
        old_names[k] = old_names.get(k, 0) + 1
    out: dict[str, str] = {}
    for n in gone:
        w = ptop[n]
        same = by_calls.get(w.calls, ())
        if len(same) == 1:
            out[n] = same[0]
            continue
        k = _op_name(w)
        cands = by_name.get(k, ())
        if k is not None and len(cands) == 1 and old_names[k] == 1 and \
                not any(ctop[c].calls == w.calls for c in cands):
            out[n] = cands[0]
    return out


def loop_element(ptop: dict, ctop: dict, name: str, new_loops: dict[str, str],
                 cache: dict) -> str | None:
    """The element of a loop that holds removed get-tuple-element ``name``'s value, when a
    pass forwarded it to a get-tuple-element of the loop (loops4, issue 9).

    After the while-loop simplifier narrows a loop, the old results are read through a
    tuple of the new loop's elements; algsimp then forwards them. gru_scan cpu8, dump
    0019 -> 0020: ``%get-tuple-element.481 = get-tuple-element(%tuple.29), index=2`` with
    ``%tuple.29 = tuple(%get-tuple-element.700, %get-tuple-element.701,
    %get-tuple-element.702, ...)`` and ``%get-tuple-element.702 =
    get-tuple-element(%while.50), index=2``; after the pass the next loop's init tuple reads
    ``%get-tuple-element.929 = get-tuple-element(%while.50), index=2`` (same op_name), and
    .481, .702 and tuple.29 are gone. Their users being rebuilt too, the value was followed
    into the loop itself. Followed through tuples to (loop, index), the value is the one
    get-tuple-element of that index of the loop (or of the loop that replaced it)."""
    g = ptop.get(name)
    if g is None or g.opcode != "get-tuple-element" or not g.operands:
        return None
    src, k, hops = ptop.get(g.operands[0]), g.index, 0
    while src is not None and src.opcode == "tuple" and k is not None and hops < 4:
        e = ptop.get(src.operands[k]) if k < len(src.operands) else None
        if e is None or e.opcode != "get-tuple-element" or not e.operands:
            return None
        src, k, hops = ptop.get(e.operands[0]), e.index, hops + 1
    if src is None or src.opcode != "while" or k is None:
        return None
    c = ctop.get(src.name)
    loop = src.name if c is not None and c.opcode == "while" else new_loops.get(src.name)
    if loop is None:
        return None
    if not cache:
        for x in ctop.values():
            if x.opcode == "get-tuple-element" and x.operands:
                cache.setdefault((x.operands[0], x.index), []).append(x.name)
        cache[None] = []  # built
    found = cache.get((loop, k), ())
    return found[0] if len(found) == 1 and ctop[found[0]].shape.text == g.shape.text else None


_CLONE_PREFIX = re.compile(r"^(?:wide\.)+")
_CLONE_SUFFIX = re.compile(r"(?:\.clone(?:\.\d+)?|\.sunk)+$")


def lineage(computation: str) -> str:
    """The computation a loop pass's clone was made from: while-loop-invariant-code-motion
    widens a body into ``wide.<body>``, the while-loop simplifier and constant sinking clone
    it as ``<body>.clone`` / ``<body>.sunk``; all name the original."""
    return _CLONE_SUFFIX.sub("", _CLONE_PREFIX.sub("", computation))


def own_candidates(a: Instruction, lst: list[Instruction]) -> list[int]:
    """Indices of the identical removed candidates that ``a``'s computation was cloned from
    (or that live in it) (loops4, issue 9).

    A clone copies every instruction of its computation: kalman_filter_scan (JAX 0.4.30),
    dump 0010 -> 0011, while-loop-invariant-code-motion rebuilds ``region_0.218`` as
    ``wide.region_0.218`` with the same four ``s32[] constant(0)``, while the inner loops'
    bodies lose eight such constants. Taken in text order, the clone's constants were
    paired with the other bodies' and the originals (``constant.235``) were left without a
    successor. Empty when none is, or when all are (nothing to prefer)."""
    own = lineage(a.computation)
    out = [j for j, r in enumerate(lst) if lineage(r.computation) == own]
    return out if len(out) < len(lst) else []


def init_tuples(ptop: dict, ctop: dict, prev_users: dict, cur_users: dict,
                new_loops: dict[str, str]) -> dict[str, str]:
    """Init tuple of a loop a pass rebuilt -> the new loop's init tuple (loops4, issue 9).

    while-loop-invariant-code-motion and the while-loop simplifier replace ``while(T)`` by
    ``while(T')``, T' holding T's elements (and the hoisted values, or without the dead
    ones): switch_in_scan (jax 0.10.2) dump 0008 -> 0009 (WLICM), ``%while.5 = tuple(...)``
    read by ``%while.6 = while(%while.5)`` becomes ``%tuple.N = tuple(...)`` read by the
    rebuilt loop. The loop's initial state lives in T', not in the loop. T is removed by
    the pass, or left for a later DCE, read at most by get-tuple-elements of single
    elements (switch_in_scan dump 0010 -> 0011: the simplifier drops an invariant element
    and reads it as ``get-tuple-element(%tuple.14), index=5``); it is rewritten here all the
    same. Only a tuple read by nothing but loops the pass rebuilt counts."""
    out: dict[str, str] = {}
    for w, w2 in new_loops.items():
        old, new = ptop.get(w), ctop.get(w2)
        if old is None or new is None or not old.operands or not new.operands:
            continue
        t, t2 = old.operands[0], new.operands[0]
        ti = ptop.get(t)
        if ti is None or ti.opcode != "tuple" or t2 == t or \
                any(u not in new_loops for u, _ in prev_users.get(t, ())):
            continue
        c = ctop.get(t)
        if c is None or (c.opcode == "tuple" and all(
                ctop[u].opcode == "get-tuple-element" for u, _ in cur_users.get(t, ()))):
            out[t] = t2
    return out


def _user_sig(users: list, top: dict) -> tuple:
    return tuple(sorted((top[u].opcode, k) for u, k in users if u in top))


def same_users(prev_users: dict, ptop: dict, cur_users: dict, ctop: dict,
               a: Instruction, lst: list[Instruction]) -> list[int]:
    """Indices of identical operand-less candidates (constants) read the way ``a`` is read:
    the same opcodes at the same operand positions (loops4, issue 9). A loop pass's clone
    drops the state elements it removes: ring_buffer_fori (JAX 0.4.30) dump 0025 -> 0026,
    the simplifier clones the body, which holds six ``s32[] constant(0)``; the clone holds
    five, the one it dropped (``constant.4.clone.1``) being read only by the root tuple,
    the others by compares and dynamic slices. Empty when it tells nothing apart."""
    if a.operands:
        return []
    want = _user_sig(cur_users.get(a.name, ()), ctop)
    out = [j for j, r in enumerate(lst) if _user_sig(prev_users.get(r.name, ()), ptop) == want]
    return out if 0 < len(out) < len(lst) else []
