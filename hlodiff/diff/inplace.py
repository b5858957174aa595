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
