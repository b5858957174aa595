"""Get-tuple-elements the tuple simplifier forwards while it takes their users apart.

XLA's ``TupleSimplifier`` walks each computation in post order and replaces every
``get-tuple-element`` of a ``tuple`` (through chains of get-tuple-elements) by the tuple's
operand, with ``ReplaceInstruction``: the element's users read the operand from then on,
and the element is deleted. In post order an element comes before its users, so an element
that is only put into another tuple (the plumbing between nested ``jax.checkpoint``
regions, once the barrier expander has removed their opt-barriers) is forwarded first: the
next tuple reads the operand in its place. That tuple's own get-tuple-elements are
forwarded in turn, and the tuple goes when its last reader does. The dump after the pass
shows the element and its users gone together, so the element's replacement cannot be read
from its users: it is the tuple's operand, still there.

Evidence, fresh 4 remat_nested_layers, single CPU (jax 0.10.2), dump 0025 (after
cse_barrier_expander) -> 0026 (after tuple-simplifier): ``%remat2.56 =
get-tuple-element(%remat2.52), index=2`` (``remat2.52 = tuple(..., %a_0__2___b__.1, ...)``
at index 2) is read only by ``%remat2.72 = tuple(%remat2.54, %remat2.56, ...)``, whose
``%remat2.75 = get-tuple-element(%remat2.72), index=1`` is read by ``%add.84 =
broadcast(%remat2.75)``. In 0026 all four are gone and ``%add.84 =
broadcast(%a_0__2___b__.1)``: the value ``remat2.56`` carried lives in the parameter. The
same in the 8-device dumps (0032 -> 0033, ``get-tuple-element.6`` -> ``param.11``) and under
JAX 0.4.30 (0027 -> 0028, ``get-tuple-element.212`` -> ``Arg_6.7``).
"""

from __future__ import annotations

from ..hlo.model import Instruction


def _source(ptop: dict[str, Instruction], name: str, depth: int) -> str | None:
    """The value ``name`` stands for once the simplifier forwarded every get-tuple-element
    of a tuple that it reads (itself when it is no such element)."""
    i = ptop.get(name)
    if i is None or i.opcode != "get-tuple-element" or not i.operands or depth > 32:
        return name
    src = _source(ptop, i.operands[0], depth + 1)
    t = ptop.get(src or "")
    k = i.index or 0
    if t is None or t.opcode != "tuple" or k >= len(t.operands):
        return name
    return _source(ptop, t.operands[k], depth + 1)


def forwarded_element(ptop: dict[str, Instruction], ctop: dict[str, Instruction],
                      name: str, p2c: dict[str, str]) -> str | None:
    """Where the value of ``name``, a get-tuple-element of a tuple removed by the tuple
    simplifier, lives after the pass (a top-level instruction of the new snapshot), or
    None when ``name`` forwards nothing that is still there."""
    i = ptop.get(name)
    if i is None or i.opcode != "get-tuple-element":
        return None
    x = _source(ptop, name, 0)
    if x is None or x == name:
        return None
    c = p2c.get(x, x)
    return c if c in ctop else None


def hands_back(top: dict, t: str) -> bool:
    """``t`` is ``tuple(get-tuple-element(p, 0), ..., get-tuple-element(p, n-1))`` of one
    ``p`` with n elements: the tuple simplifier replaces it by ``p``, and replacing an
    instruction deletes the operands nothing else reads, so those get-tuple-elements are
    removed in the same step, whichever pass ran the simplifier (loop invariant code motion
    runs it after hoisting: fresh 15 multisteps_scan_cond_apply_update on CPU, dump 0013,
    a conditional's pass-through branch in the scan)."""
    i = top.get(t)
    if i is None or i.opcode != "tuple" or not i.operands:
        return False
    srcs = set()
    for k, o in enumerate(i.operands):
        g = top.get(o)
        if g is None or g.opcode != "get-tuple-element" or g.index != k or not g.operands:
            return False
        srcs.add(g.operands[0])
    if len(srcs) != 1:
        return False
    p = top.get(srcs.pop())
    return p is not None and p.shape.is_tuple and len(p.shape.tuple_shapes) == len(i.operands)
