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
