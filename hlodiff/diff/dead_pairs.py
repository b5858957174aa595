"""A dead instruction has no partner (cpu6).

Dead-code elimination deletes every instruction nothing reads (side effects aside) early
(CPU pipeline dump 0003, ``sharding-removal.after_dce``), so no instruction of the final
module holds a dead one's value. The matcher may still pair it with a look-alike carrying
the same op_name: fresh 6 cpu viterbi_decode_scan ``while.18 = get-tuple-element(while.16),
index=1`` (the backward scan's unused carry) was paired, by its metadata, with
``get-tuple-element.103`` inside the rebuilt loop body (the loop passes give their
get-tuple-elements the while's op_name), and ragged_segment_cumsum's unused
``while.8`` of an inlined searchsorted loop with the loop's ``while.13``; both were called
"kept: unchanged". The dumps show both removed by DCE (dump 0003). An unread instruction
paired with an after instruction of another name is a look-alike; one that kept its name
is left alone. Only instructions nothing reads count: a value read by dead code, or an
element of a branch's result tuple nobody reads, stays for later passes (fresh 5
gp_marginal_likelihood: ``broadcast_in_dim.7``, element 2 of a cond branch's root tuple,
is renamed by algsimp at dump 0010 and fused at 0041; the ``constant.21`` it reads is
merged by CSE).
"""

from __future__ import annotations

from .value_facts import SIDE_EFFECTS
from .view import Node


def _unread(B, b: Node) -> bool:
    """Nothing reads ``b`` and it is not its computation's result: DCE deletes it."""
    if b.users or b.opcode in SIDE_EFFECTS or b.alias >= 0:
        return False
    comp = B.module.by_name.get(b.comp)
    return comp is None or comp.root != b.name


def look_alike(B, b: Node, a: Node) -> bool:
    """``a``, the partner of the dead before node ``b``, is a look-alike."""
    return _unread(B, b) and a.name != b.name


def deleted(B, b: Node) -> bool:
    """The dead before node ``b`` is deleted by DCE before CSE could merge it: DCE runs
    first (fresh 4 cpu lu_solve_grad: ``while.17 = get-tuple-element(while.16), index=0``,
    lu_solve's unused loop counter, goes at dump 0004, dce; CSE runs at 0039), so a dead
    copy of a CSE survivor is not "merged" into it."""
    return _unread(B, b)


def unused_arguments(B, live, fates: list) -> None:
    """Instructions read only as arguments of calls whose callee never reads them: DCE
    (which runs first) keeps them, since the calls read them; the call inliner leaves them
    without readers and they go in that pass. zoo cpu fft_conv1d ``constant.23 = s32[]
    constant(0)``, passed to two ``_pad`` calls as an unused argument: the dumps show it
    gone at dump 0005 (call-inliner). Also sinkhorn ``get-tuple-element.5`` of a loop body
    and a cond branch's ``get-tuple-element.101`` in fresh 6 matrix_expm_grad. They were
    "removed: dead"; they are "inlined" (in place). So is an element of one call's result
    passed only to another call that never reads it (fresh 10 qr_orthogonal_projection
    ``jvp_jit__diag__.8``, index 2 of jnp.diag's jvp call, an unused argument of its
    transpose's call: gone at dump 0005 with the call it was passed to, not "tuple
    plumbing simplified away")."""
    readers: dict[str, dict[str, list[str]]] = {}
    for b in B.nodes:
        f = fates[b.idx]
        element = f.fate == "rewritten" and b.opcode == "get-tuple-element" and b.alias >= 0
        if not element and (f.fate != "removed" or b.site is not None or b.alias >= 0):
            continue
        if live[b.idx] or b.users or b.opcode in SIDE_EFFECTS:
            continue
        rd = readers.get(b.comp)
        if rd is None:
            comp = B.module.by_name.get(b.comp)
            rd = readers[b.comp] = {}
            for i in comp.instructions if comp is not None else ():
                for o in i.operands:
                    rd.setdefault(o, []).append(i.opcode)
        ops = rd.get(b.name)
        if ops and all(op == "call" for op in ops):
            f.fate = "inlined"
            f.reason = ("passed only to calls that never read it: the call inliner left it "
                        "without readers")
