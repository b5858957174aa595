"""Fused copies of a constant found by its op_name, where its readers were not traced (cpu5).

A literal (a constant, or a broadcast of one) whose readers the matcher could not pair
(they were rebuilt by loop passes, inlined into a loop body, or hoisted by loop-invariant
code motion) was called "simplified away". Fusion copies such literals into each kernel
that reads them, and the copies keep the op_name the call inliner gave the original.

Evidence, fresh 5 cpu searchsorted_bucketize (jax 0.10.2): ``closed_call.2`` (inlined into a
while body) reads ``broadcast.3 = f32[6,20] broadcast(constant.12 = f32[] constant(nan))``.
The pass dumps follow it through while-loop-invariant-code-motion and simplify-while-loops
(dumps 0013, 0014, 0023: renamed) into fusion (dump 0044): ``constant.66 = f32[]
constant(nan), metadata={op_name=".../while/body/closed_call"}`` and its broadcast in
``compare_select_fusion.1`` (and a copy in ``compare_select_fusion``). Its readers
(``select_n.7``, hoisted; ``select_n.9``, inlined) have no partner, so the pairing through
users (lookalikes.fused_copy) found nothing.

Only unpaired after copies inside fusions, with the same opcode, shape, literal and the
same op_name (repeated path segments collapsed), count; the first one (in the after module's order) is named.
"""

from __future__ import annotations

from .constvals import literal_through
from .view import Node, View

_CARRY = ("broadcast", "reshape", "convert", "bitcast", "copy", "transpose")


def _literal_node(v: View, n: Node) -> bool:
    if n.opcode == "constant":
        return True
    return n.opcode == "broadcast" and bool(n.operands) and \
        v.nodes[n.operands[0]].opcode == "constant"


def collapsed(op_name: str | None) -> str | None:
    """``op_name`` with consecutive repeated path segments collapsed. XLA's call inliner
    works bottom-up and leaves an op_name alone that already starts with the call's, so
    ``vmap(f)`` called from ``vmap(f)`` prefixes once (searchsorted_bucketize dump 0008:
    ``.../jit(_searchsorted_scan_impl)/vmap(jit(_searchsorted_scan_impl))/while``); the
    view prefixes the full path top-down and writes the segment twice."""
    if op_name is None or "/" not in op_name:
        return op_name
    out: list[str] = []
    for seg in op_name.split("/"):
        if not out or out[-1] != seg:
            out.append(seg)
    return "/".join(out)


def _key(n: Node) -> str | None:
    return collapsed(n.op_name)


def loop_comps(v: View) -> set[str]:
    """Computations that are while-loop bodies or conditions (calls inlined into them
    count as them: ``Node.ctx``)."""
    return {c for idx, _role, c, _, _ in v.bodies if v.nodes[idx].opcode == "while"}


class FusedCopies:
    """Literal nodes of the after module by (opcode, dims, op_name): unpaired ones inside
    fusions (with whether the fusion runs in a loop) and all top-level ones."""

    def __init__(self, A: View, a2b) -> None:
        self.fused: dict[tuple, list[tuple[Node, bool]]] = {}
        self.top: dict[tuple, list[Node]] = {}
        loops = loop_comps(A)
        for a in A.nodes:
            if a.op_name is None or not _literal_node(A, a):
                continue
            k = (a.opcode, a.dims, _key(a))
            if a.fusion < 0:
                self.top.setdefault(k, []).append(a)
            elif a2b[a.idx] < 0:
                self.fused.setdefault(k, []).append((a, A.nodes[a.fusion].ctx in loops))


def fused_copy_by_name(B: View, A: View, b2a, index: FusedCopies, b_loops: set[str],
                       b: Node) -> int:
    """An unpaired after copy of ``b`` inside a fusion with b's opcode, shape, literal and
    op_name (``index``), where none of b's direct readers has a partner and no top-level
    copy exists (it may be b, kept: stochastic_round_grads' loop counter ``constant.68``
    lives on as the loop body's ``constant.129``), in a loop exactly when b runs in one
    (``b_loops``: the before module's loop computations; a loop the passes unrolled into
    straight code leaves this undecided), else -1."""
    if b.op_name is None or not _literal_node(B, b) or any(b2a[u] >= 0 for u in b.users):
        return -1
    k = (b.opcode, b.dims, _key(b))
    cands = index.fused.get(k)
    if not cands:
        return -1
    lit = literal_through(B, b.idx, _CARRY)
    if lit is None:
        return -1
    if any(literal_through(A, a.idx, _CARRY) == lit for a in index.top.get(k, ())):
        return -1
    in_loop = b.ctx in b_loops
    for a, lp in cands:
        if lp == in_loop and literal_through(A, a.idx, _CARRY) == lit:
            return a.idx
    return -1
