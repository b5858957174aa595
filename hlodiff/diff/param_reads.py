"""A dot that reads a parameter its would-be partner does not read is not that dot (h100
helper, issue 9).

Metadata pairs an instruction with the only after instruction of its opcode, shape, op_name
and source line. Passes that change a dot's rank make that key lie: real H100
transformer_block (jax 0.11.2), ``dot_decomposer`` (dump 0008) flattens the input-gradient
dot ``dot_general.43 = f32[2,16,32] dot(transpose.10, params__wv__.1)`` into a
``f32[32,32]`` dot (final ``dot.43`` in gemm_fusion_dot.16, reading ``params__wv__.1``),
while its twin weight-gradient ``dot_general.42 = f32[32,32] dot(transpose.10, mul.66)``
(same op_name and line) is rebuilt by algsimp and merged by the dot merger into
``gemm_fusion_dot.26``. The one ``f32[32,32]`` dot of that op_name left after was paired
with dot_general.42, a dot that never reads the weight.

Entry parameters are paired first and for certain (by number). An after dot reading an
entry parameter (through views and fusion boundaries) that the before dot does not read
(through views) is refused as its metadata partner; the steps that compare what
instructions read (anchored.py) pair it instead.
"""

from __future__ import annotations

_VIEWS = frozenset({"bitcast", "reshape", "transpose", "copy", "convert"})
_OPS = frozenset({"dot", "convolution"})


def _element(view, x):
    """The element a get-tuple-element of a tuple reads, through an optimization barrier
    (``jax.checkpoint``'s, which the after module no longer has); else None."""
    if not x.operands:
        return None
    t = view.nodes[x.operands[0]]
    if t.opcode == "opt-barrier" and t.operands:
        t = view.nodes[t.operands[0]]
    k = x.inst.index or 0
    if t.opcode == "tuple" and k < len(t.operands):
        return view.nodes[t.operands[k]]
    return None


def _params(view, n, limit: int = 6) -> set[int]:
    """Entry parameters ``n`` reads directly or through views."""
    out = set()
    for o in n.operands:
        x = view.nodes[o]
        for _ in range(limit):
            if x.opcode == "get-tuple-element":
                e = _element(view, x)
                if e is None:
                    break
                x = e
                continue
            if x.opcode == "parameter" or x.opcode not in _VIEWS or not x.operands:
                break
            x = view.nodes[x.operands[0]]
        if x.opcode == "parameter" and x.fusion < 0:
            out.add(x.idx)
    return out


def fits(m, b: int, a: int) -> bool:
    """May the before node ``b`` pair with the after node ``a`` as far as the entry
    parameters they read go (dots and convolutions only)?"""
    bn, an = m.before.nodes[b], m.after.nodes[a]
    if bn.opcode not in _OPS or an.opcode != bn.opcode:
        return True
    pa = _params(m.after, an)
    if not pa:
        return True
    pb = _params(m.before, bn)
    for p in pa:
        q = m.a2b[p]
        if q >= 0 and m.before.nodes[q].opcode == "parameter" and q not in pb:
            return False
    return True
