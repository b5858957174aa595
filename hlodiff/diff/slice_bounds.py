"""The elements a ``slice`` takes, per dimension, read from its ``slice={...}`` attribute,
and the pieces a ``concatenate`` puts together (shared by the anchors, the dot merger's
pieces and the pieces of a summed concatenation)."""

from __future__ import annotations

import re


def slice_bounds(n) -> list[tuple[int, int, int]] | None:
    """Per dimension, the elements the slice takes: (first, count, stride), the stride 1
    where it takes at most one (algsimp rewrites ``[1:2:2]`` as ``[1:2]``; fresh 4
    linear_recurrence_assoc_scan)."""
    text = n.inst.attrs.get("slice")
    if not text:
        return None
    out = []
    for part in re.findall(r"\[([^\]]*)\]", text):
        try:
            nums = [int(x) for x in part.split(":")]
        except ValueError:
            return None
        start, limit = nums[0], nums[1]
        stride = nums[2] if len(nums) > 2 and nums[2] > 0 else 1
        count = max(0, (limit - start + stride - 1) // stride)
        out.append((start, count, stride if count > 1 else 1))
    return out


def concat_pieces(nodes, c) -> list[tuple[int, int, int]]:
    """(start, limit, k) of each operand ``k`` of the concatenate node ``c`` along its
    dimension."""
    d = c.inst.dimensions[0]
    out, at = [], 0
    for k, p in enumerate(c.raw_operands):
        n = nodes[p].inst.shape.dims[d]
        out.append((at, at + n, k))
        at += n
    return out
