"""Instructions a pass changed in place, then fusion copied into a kernel.

Transpose folding folds the transposes feeding a dot into the dot's dimension numbers and
the pass dumps show the dot under its own name afterwards (JAX's ``dot_general.1`` is
still ``dot_general.1``: ``...after_transpose-folding`` dump). When the CPU's
dot-library rewriter then puts it into a library fusion, fusion's clone is named from the
same stem (``dot_general.1`` -> ``dot_general.0`` inside ``ynn_fusion``), while a dot that
a pass created anew is named from its opcode (algsimp's ``dot(b, a)`` for
``transpose(dot(a, b))`` is ``dot.2``). Same stem, not the opcode's: the same instruction,
fused, not rewritten.
"""

from __future__ import annotations


def _stem(name: str) -> str:
    head, _, tail = name.rpartition(".")
    return head if head and tail.isdigit() else name


def fused_in_place(b, a) -> bool:
    """Before node ``b`` and its fused partner ``a`` (changed attributes, same opcode)
    carry one name stem that is not the opcode XLA names new instructions after."""
    s = _stem(b.name)
    return a.fusion >= 0 and b.site is None and s != b.opcode and _stem(a.name) == s


_LAYOUT_ONLY = ("bitcast", "copy")
_FOLDABLE = ("transpose", "reshape", "bitcast", "copy")


def nothing_to_fold(B, b, a) -> bool:
    """A fused dot ``a`` with other dimension numbers than its before partner ``b``, where
    ``b`` has no batch dimensions and one contracting dimension a side, keeps its rank and reads no transpose, reshape, bitcast or
    copy: no pass folded an operand view into it (there was none), so the gemm kernel's
    own canonicalization changed its dimension numbers after fusing it. 8 H100s, zoo
    mlp_gelu_adam: ``dot_general.5 = dot(%a_3_.1, %a_0___w1__.1)`` is fused at
    triton-gemm-rewriter (dump 0036); gemm-fusion-swap-operands (dump 0038) then swaps
    the operands inside its gemm fusion."""
    if b.opcode != "dot" or a.fusion < 0 or b.site is not None:
        return False
    attrs = b.inst.attrs
    if attrs.get("lhs_batch_dims") or attrs.get("rhs_batch_dims"):
        return False
    if len(b.inst.shape.dims) != len(a.inst.shape.dims) or "," in \
            attrs.get("lhs_contracting_dims", "") + attrs.get("rhs_contracting_dims", ""):
        return False  # several contracting dimensions: dot_decomposer rewrites it
    return all(B.nodes[o].opcode not in _FOLDABLE for o in b.operands)


def swapped_reason(f) -> str:
    """The reason for a dot :func:`nothing_to_fold` accepts."""
    return (f"computed inside {f.fusion_kind} fusion {f.fusion}; the gemm kernel reordered "
            "its operands or dimension numbers there (no operand view was folded into it)")


def _home(A, i: int) -> int:
    """Top-level after instruction holding node ``i``, seen through bitcasts and copies."""
    for _ in range(8):
        n = A.nodes[i]
        if n.opcode not in _LAYOUT_ONLY or not n.operands:
            break
        i = n.operands[0]
    n = A.nodes[i]
    return n.fusion if n.fusion >= 0 else i


def transpose_folded(m, b, a) -> bool:
    """In a partitioned module (every name new), the before dot ``b`` read a transpose
    and its partner ``a`` (top level, ``b``'s own op_name, other dimension numbers) reads
    the transpose's operand at that place instead: transpose folding changed the
    partitioner's dot in place, under its name, as on one device (cpu8). zoo mlp_transposed
    on 8 CPU devices, dump 0013 -> 0014 (transpose-folding): ``%dot.1 = f32[48,32]
    dot(%transpose.8, %param), lhs_contracting_dims={1}`` becomes ``%dot.1 = f32[48,32]
    dot(%tanh.2, %param), lhs_contracting_dims={0}``, kept to the end."""
    B, A = m.before, m.after
    if a.fusion >= 0 or b.site is not None or a.op_name != b.op_name or \
            len(b.operands) != len(a.operands):
        return False
    hit = False
    for o, x in zip(b.operands, a.operands):
        t = B.nodes[o]
        if t.opcode != "transpose" or not t.operands:
            continue
        y = m.b2a[t.operands[0]]
        if y < 0 or _home(A, y) != _home(A, x):
            return False
        hit = True
    return hit
