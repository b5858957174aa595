"""Dots the GPU gemm rewriters turned into library kernels, with their operands swapped.

XLA's GPU compiler wraps each dot in a Triton gemm fusion (``triton-gemm-rewriter``:
``gemm_fusion_<dot>``, kind ``kCustom``) and later may swap the dot's operands inside it
(``gemm-fusion-swap-operands``: ``dot(b, a)`` with the dimension numbers exchanged and a
bitcast of the transposed result, so the larger operand drives the tiling). The dot inside
the fusion then differs from the before dot in its dimension numbers, or even its result
shape, although no operand was transposed, reshaped or folded into it: its value is simply
computed inside the gemm fusion (fate ``fused``). Where an operand transpose *was* folded
into the dot (algsimp / transpose folding), the after dot reads the transpose's operand
instead of the before dot's operand, and this test does not apply.
"""

from __future__ import annotations

from .match import Matching
from .view import Node


def in_gemm_kernel(m: Matching, b: Node, a: Node) -> bool:
    """``a`` (b's partner, a dot inside a fusion) reads exactly the values b reads, in any
    order: the gemm rewriter moved b into its kernel, perhaps swapping its operands."""
    if b.opcode != "dot" or a.opcode != "dot" or a.fusion < 0:
        return False
    if len(a.operands) != len(b.operands) or _ndims(a) != _ndims(b):
        return False  # dot_decomposer reshaped it (several contracting dims merged)
    mine = sorted(m.a2b[o] for o in a.operands)
    if any(x < 0 for x in mine):
        return False
    return mine == sorted(b.operands)


def _ndims(n: Node) -> tuple:
    """(result rank, number of contracting and of batch dimensions of each side)."""
    at = n.inst.attrs

    def count(k: str) -> int:
        v = at.get(k)
        return len(str(v).strip("{}").split(",")) if v not in (None, "", "{}") else 0
    return (n.inst.shape.rank if hasattr(n.inst.shape, "rank") else n.dims.count(",")) , \
        count("lhs_contracting_dims") + count("rhs_contracting_dims"), \
        count("lhs_batch_dims") + count("rhs_batch_dims")
