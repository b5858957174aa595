"""Where a dot's operands live, before and after optimization (shared by the passes that
follow dots XLA rebuilt: dotrewrites.py, library_dots.py).

Seen through layout-only ops (bitcast, copy, transpose, reshape) and fusion parameters, to
the top-level instructions; a fusion's copies of a producer count as the producer (fusion
passes copy a producer into several kernels, and a rebuilt dot may read any copy). Nothing
here imports the matcher: the matcher's own steps use it.
"""

from __future__ import annotations

from .barrier_forward import barriers_gone, forwarded_element
from .view import Node, View

_SEE_THROUGH = {"bitcast", "copy", "transpose", "reshape"}


def top_of(view: View, i: int) -> int:
    """The top-level instruction standing for node ``i``: its fusion when it is fused."""
    n = view.nodes[i]
    return n.fusion if n.fusion >= 0 else i


def strip_after(view: View, i: int) -> int:
    """Back through layout-only ops from node ``i``, then :func:`top_of`."""
    for _ in range(8):
        n = view.nodes[i]
        if n.opcode not in _SEE_THROUGH or not n.operands:
            break
        i = n.operands[0]
    return top_of(view, i)


def after_inputs(view: View, x: Node) -> set[int]:
    """The top-level after instructions a dot reads, through layout-only ops."""
    out: set[int] = set()
    for o in x.operands:
        out.add(strip_after(view, o))
        out.add(top_of(view, o))
    return out


def copies_by_fp(A: View) -> dict[int, set[int]]:
    """Subgraph fingerprint -> the fusions computing it: fusion passes copy a producer (and
    its own producers) into several kernels, and the rebuilt dot may read any copy."""
    out: dict[int, set[int]] = {}
    for x in A.nodes:
        if x.fusion >= 0 and x.alias < 0 and x.opcode not in ("parameter", "constant"):
            out.setdefault(x.fp, set()).add(x.fusion)
    return out


def before_inputs(m, d: Node, dup: dict[int, set[int]]) -> set[int]:
    """Where the before dot's operands live after optimization (top-level instructions),
    including the fusions that compute a copy of them (``dup``)."""
    B, A = m.before, m.after
    gone = barriers_gone(A)
    out: set[int] = set()
    for o in d.operands:
        x = o
        for _ in range(8):
            y = m.b2a[x]
            if y >= 0:
                out.add(strip_after(A, y))
                out.add(top_of(A, y))
                out.update(dup.get(A.nodes[y].fp, ()))
                break
            n = B.nodes[x]
            if n.opcode == "get-tuple-element" and gone:
                # an element of a removed jax.checkpoint barrier is the value it handed on
                x = forwarded_element(B, n)
                if x < 0:
                    break
                continue
            if n.opcode not in _SEE_THROUGH or not n.operands:
                break
            x = n.operands[0]
    return out


class Solo:
    """One operand of a dot, for :func:`before_inputs`."""

    __slots__ = ("operands",)

    def __init__(self, d: Node, k: int):
        self.operands = [d.operands[k]]
