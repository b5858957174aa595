"""Pair a while loop with the loop XLA rebuilt without metadata (loops4, issue 9).

The loop passes rebuild a while loop on a new state tuple (while-loop-invariant-code-motion
widens it, the while-loop simplifier drops dead elements) and clone its body and condition.
XLA of JAX 0.4.30 gives the new ``while`` no metadata at all when the simplifier rebuilds
it; the cloned computations keep their instructions' metadata. Fresh ring_buffer_fori,
JAX 0.4.30, dump 0009 -> 0010 (simplify-while-loops):

    while = (s32[], s32[], f32[4,8], ...) while(tuple.3), condition=wide.region_2.102, ...
    ->  (the final module)
    while.4 = (s32[], f32[4,8], f32[], f32[10,8], f32[8,8]) while(tuple.21),
              condition=wide.region_2.102.clone.clone.clone.clone, body=...

with no ``metadata={...}``, while the condition's root keeps its own
(``compare.95 ... op_name=".../while/cond/lt" source_line=328``, as the before module's
``compare.111`` in ``region_2.102``). The metadata matcher cannot pair the loops, so the
body's rebuild went unnoticed and its instructions were called "unchanged".

A before while still open is paired with the open after while that has no op_name when the
roots of their conditions agree (opcode, op_name, source) and each side has exactly one
such loop: the loop condition is the part of a loop the loop passes never rewrite (they
move code out of the body and change the state tuple, not the exit test).
"""

from __future__ import annotations

from collections import defaultdict


def _cond_keys(view, m_side) -> dict[tuple, list[int]]:
    out: dict[tuple, list[int]] = defaultdict(list)
    for ctl, role, _comp, root, _params in view.bodies:
        if role != "condition" or m_side[ctl] >= 0:
            continue
        w = view.nodes[ctl]
        if w.opcode != "while":
            continue
        r = view.nodes[root]
        if r.op_name is None:
            continue
        out[(r.opcode, r.op_name, r.src)].append(ctl)
    return out


def pair_bare_loops(m) -> int:
    """Pair open before whiles with open metadata-less after whiles by their conditions'
    roots; returns the number of pairs made."""
    B, A = m.before, m.after
    if not any(A.nodes[c].opcode == "while" and A.nodes[c].op_name is None
               for c in A.controls):
        return 0
    after = _cond_keys(A, m.a2b)
    made = 0
    for key, bs in _cond_keys(B, m.b2a).items():
        as_ = after.get(key)
        if len(bs) == 1 and as_ is not None and len(as_) == 1 and \
                A.nodes[as_[0]].op_name is None and m.pair(bs[0], as_[0], "loop condition"):
            made += 1
    return made


_LOOP_PASS_MARKS = ("wide.", ".clone", ".sunk")


def renamed_by_loop_pass(old: str, new: str, nparts: int) -> bool:
    """Whether a loop whose body (or condition) ``old`` is now ``new`` was rebuilt by the
    loop passes (loops4). In a partitioned module the SPMD partitioner renames every
    computation it rewrites and the Shardy round trip renumbers them: fresh gru_scan on 8
    H100s keeps its scan (``body=%region_3.11`` before, ``body=%region_3.4_spmd`` after;
    the pass dumps show no loop pass rebuilding it), while the loop passes name what they
    rebuild ``wide.<body>``, ``<body>.clone``, ``<body>.sunk`` (cpu8 gru_scan:
    ``wide.wide.region_3.4_spmd.clone.sunk.clone.clone``). There only those marks count;
    unpartitioned, any new name does.

    A marked loop was rebuilt even where its state came back to the same arity, each
    element the same array or a shard of one (cpu8): seq2seq_two_scans on 8 CPU devices,
    dump 0013 -> 0014 (while-loop-invariant-code-motion) turns ``%while.59 = (s32[],
    f32[16,2], ... f32[2,16]) while(%tuple.25), body=%region_7.8_spmd`` into ``%while.63``
    with one more ``s32[]`` and ``body=%wide.region_7.8_spmd``; simplify-while-loops later
    drops the element again (final ``body=%wide.wide.region_7.8_spmd.clone.clone``, nine
    elements as before). The oracle has the body's instructions rewritten at
    while-loop-invariant-code-motion."""
    if old == new:
        return False
    if nparts <= 1:
        return True
    return any(m in new for m in _LOOP_PASS_MARKS)


def keeps_call_element(B, b, r: int) -> bool:
    """``b`` reads element k of a call's result, and the callee hands back a value it read
    out of a tuple (``r``, a get-tuple-element of its parameter, e.g. the loop state passed
    through a scan body's ``closed_call``). Inlining makes ``b`` a get-tuple-element of that
    tuple's element; algsimp then keeps ``b``, under its own name, reading the tuple
    directly, and the inner get-tuple-element goes: rk4_ode_fori (jax 0.10.2) dump 0008 ->
    0009, ``%closed_call.16 = get-tuple-element(%tuple.0), index=1`` with element 1
    ``%get-tuple-element.16 = get-tuple-element(%arg_tuple.1), index=1`` becomes
    ``%closed_call.16 = get-tuple-element(%arg_tuple.1), index=1`` and .16 is gone. So
    ``b`` is kept (as what ``r`` became), not "simplified away" (loops4)."""
    if b.opcode != "get-tuple-element" or not b.raw_operands:
        return False
    return B.nodes[b.raw_operands[0]].opcode == "call" and \
        B.nodes[r].opcode == "get-tuple-element"


def constant_meta_key(n):
    """The metadata key of a constant, with its literal (loops4). The call inliner gives the
    instructions it copies the call's op_name and frame, those of a loop inside the callee
    included (their body and condition are instantiated under the call's prefix), so a
    callee's constants and its loop's constants share (op_name, source): fresh
    stochastic_round_grads (jax 0.10.2), ``threefry2x32.4``'s init ``constant.25 = s32[]
    constant(0)`` and its loop's ``constant.24``/``constant.22`` (the round count, the
    step) all carry ``jit(_threefry_split)/stochastic_round_grads.<locals>.step``, and the
    final module keeps one ``constant.18 = s32[] constant(0)`` with it. The literal tells
    them apart; only a key unique on both sides pairs."""
    if n.opcode != "constant" or (n.op_name is None and n.src is None):
        return None
    return (n.mdims, n.op_name, n.src, n.inst.literal)
