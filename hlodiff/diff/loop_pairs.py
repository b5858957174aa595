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


def renamed_by_loop_pass(old: str, new: str, nparts: int, arity_before: int = 0,
                         arity_after: int = 0) -> bool:
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
    while-loop-invariant-code-motion.

    A partitioned loop whose state has another number of elements was rebuilt too, marks or
    not: the partitioner gives each element its per-device shape but keeps the arity, and
    the Shardy round trip renames the loop passes' clones (fresh 14
    grad_accum_fori_microbatches on 8 H100s: simplify-while-loops clones the body,
    ``region_0.39.clone.clone`` in dump 0006, the state later loses its duplicate counter,
    23 -> 22 elements, and the final body is ``region_0.22_spmd``)."""
    if old == new:
        return False
    if nparts <= 1:
        return True
    if arity_before and arity_after and arity_before != arity_after:
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


def _named_keys(view, m_side, lineage) -> dict[tuple, list[int]]:
    """(condition, body) -> the open whiles calling computations of that lineage."""
    out: dict[tuple, list[int]] = defaultdict(list)
    for ctl in view.controls:
        w = view.nodes[ctl]
        if w.opcode != "while" or m_side[ctl] >= 0:
            continue
        cond, body = w.inst.called.get("condition"), w.inst.called.get("body")
        if cond and body:
            out[(lineage(cond[0]), lineage(body[0]))].append(ctl)
    return out


def pair_named_loops(m, partitioned: bool) -> int:
    """Pair an open before while with the open after while whose condition and body are
    clones of its own (oldh2): the loop passes name what they rebuild after the computation
    they cloned (``wide.<body>``, ``<body>.clone``, ``<body>.sunk``; dumps/loopstate.py
    ``lineage``), and XLA of JAX 0.4.30 gives a loop rebuilt by the while-loop simplifier
    no metadata. Fresh mixup_permutation (JAX 0.4.30) samples two gammas: two nested
    rejection loops with the same op_name and the same exit test, ``while.1360`` and
    ``while.2506`` (``body=region_5.1150``, ``body=region_5.2296``); dump 0010
    (while-loop-invariant-code-motion) widens them into ``wide.region_5.1150`` and
    ``wide.region_5.2296``, and the final module runs them as metadata-less ``while.80``
    (``body=wide.region_5.1150.clone``) and ``while.87`` (``body=wide.region_5.2296.clone``).
    Neither metadata nor the conditions (pair_bare_loops) tell the two apart; the names do.
    The twin threefry loops of the same program (same op_name, same computations up to
    their names) were crossed by the rewrite step the same way.

    Run after the rewrite step, for loops still open: pairing earlier moved what the
    similarity step pairs around the loops (fresh3 stochastic_round_grads, JAX 0.4.30: the
    same three loops, paired earlier by name, crossed its twin ``_uniform`` kernels' named
    targets; unseen dropout_ln_rng, jax 0.10.2: a narrowed loop's results crossed).

    Only a lineage that exactly one open loop has on each side pairs (a body the call
    graph flattener cloned for several call sites stays undecided). Not in partitioned
    modules, where the Shardy round trip renumbers computations (see
    ``renamed_by_loop_pass``)."""
    if partitioned:
        return 0
    from ..dumps.loopstate import lineage
    B, A = m.before, m.after
    after = _named_keys(A, m.a2b, lineage)
    made = 0
    for key, bs in _named_keys(B, m.b2a, lambda c: c).items():
        as_ = after.get(key)
        if len(bs) == 1 and as_ is not None and len(as_) == 1 and \
                m.pair(bs[0], as_[0], "loop computations"):
            made += 1
    return made


def keep_element_order(m) -> int:
    """Uncross the results of a paired loop (oldh2): the loop passes drop state elements
    (the while-loop simplifier) or append them (loop-invariant code motion) but keep the
    order of those they keep, so the before loop's get-tuple-elements, in index order, read
    the after loop's in index order. Unseen dropout_ln_rng (jax 0.10.2, CPU): ``while.15``
    and ``while.16`` read elements 2 and 3 of ``while.12``; the simplifier drops a counter
    and small-while-loop hoisting wraps the loop in a call, read as
    ``dropout_ln_rng__locals__loss.0`` (index 1) and ``.1`` (index 2); same shape, same
    op_name, the similarity step paired them crossed. Pairs of one loop whose after indices
    run against the before ones are re-dealt in index order (same shapes only); returns
    the number of pairs changed."""
    B, A = m.before, m.after
    groups: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for b in B.nodes:
        if b.opcode != "get-tuple-element" or not b.raw_operands or m.b2a[b.idx] < 0:
            continue
        w = B.resolve(b.raw_operands[0])
        if B.nodes[w].opcode != "while" or m.b2a[w] < 0:
            continue
        a = A.nodes[m.b2a[b.idx]]
        if a.opcode != "get-tuple-element" or not a.raw_operands or a.fusion >= 0:
            continue
        if not _reads_loop(A, a.raw_operands[0], m.b2a[w]):
            continue
        groups[w].append((b.idx, a.idx))
    changed = 0
    for pairs in groups.values():
        by_shape: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for b, a in pairs:
            by_shape[B.nodes[b].inst.shape.text].append((b, a))
        for same in by_shape.values():
            if len(same) < 2:
                continue
            bs = sorted(same, key=lambda p: B.nodes[p[0]].inst.index)
            as_ = sorted((a for _, a in same), key=lambda a: A.nodes[a].inst.index)
            if len({B.nodes[b].inst.index for b, _ in same}) != len(same) or \
                    len({A.nodes[a].inst.index for a in as_}) != len(as_):
                continue
            for (b, old), a in zip(bs, as_):
                if old != a:
                    m.b2a[b], m.a2b[a] = a, b
                    changed += 1
    return changed


def _reads_loop(A, src: int, loop: int) -> bool:
    """``src`` is the after loop, or a call whose computation's root it is (XLA:CPU's
    small-while-loop hoisting wraps a loop in a call)."""
    if src == loop or A.resolve(src) == A.resolve(loop):
        return True
    s = A.nodes[src]
    if s.opcode != "call" or not s.inst.calls:
        return False
    comp = A.module.by_name.get(s.inst.calls[0])
    return comp is not None and comp.root == A.nodes[loop].name
