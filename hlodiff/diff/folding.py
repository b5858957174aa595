"""Literals consumed by constant folding.

XLA's constant folder evaluates an instruction whose operands are all compile-time
constants and replaces it by a new literal; the constants (and broadcasts or reshapes of
them) it read die in the same pass. Such a leaf is *folded* even though constant folding
never evaluates a bare constant or broadcast itself: its only job was to feed a value that
now is a literal. A look-alike literal elsewhere after optimization is not it.
"""

from __future__ import annotations

from .value_facts import NOT_FOLDED
from .view import View

# rewritten by expander passes (gather/scatter expanders build loops) before the folder runs
_EXPANDED = {"gather", "scatter", "sort", "select-and-scatter"}


def consumed_by_folding(v: View, fold: bytearray, live: bytearray) -> bytearray:
    """1 for constant-valued leaves (constants, their broadcasts/reshapes: what the folder
    leaves alone) whose every live user is evaluated by constant folding, directly or
    through other such leaves."""
    nodes = v.nodes
    out = bytearray(len(nodes))
    folds = bytearray(len(nodes))  # 1: the folder evaluates this node itself
    for n in nodes:
        if n.alias < 0 and fold[n.idx] and n.opcode not in NOT_FOLDED and \
                n.opcode not in _EXPANDED:
            folds[n.idx] = 1
    for n in reversed(nodes):  # users before operands
        i = n.idx
        if n.alias >= 0 or not fold[i] or not live[i] or n.opcode not in NOT_FOLDED or \
                n.opcode in ("parameter", "tuple"):
            continue
        users = [u for u in n.users if live[u]]
        if users and all(folds[u] or out[u] for u in users):
            out[i] = 1
    return out


def scaling_op(B: View, cv: bytearray, n) -> str:
    """The opcode algebraic simplification sees when it regroups constant chains: a
    floating-point division by a compile-time constant is a multiplication by its
    reciprocal (``x / c`` -> ``x * (1/c)``), which then joins ``(x * c1) * c2`` regrouping
    and constant folding (bf16_loss_scaling's H100 dump 0009: ``(x / 1024) * 0.01`` becomes
    ``x * 9.76562478e-06``; ``(s / 128) * 1024`` becomes ``s * 8``)."""
    if n.opcode == "divide" and len(n.operands) == 2 and cv[n.operands[1]] and \
            not cv[n.operands[0]] and n.dims.split("[", 1)[0] in ("f16", "bf16", "f32", "f64"):
        return "multiply"
    return n.opcode


def divisor_only(B: View, cv: bytearray, n) -> bool:
    """A constant (or a broadcast of one) read only as the divisor of floating-point
    divisions (directly or through broadcasts): algsimp's first round rewrites each
    ``x / c`` as ``x * (1/c)`` with a new reciprocal constant, so the constant dies there,
    before CSE could merge it (diffusion_block's H100 dumps: ``constant.29`` of ``_var``
    rewritten by algsimp)."""
    if n.opcode not in ("constant", "broadcast") or not cv[n.idx] or not n.users:
        return False
    for u in n.users:
        un = B.nodes[u]
        if un.opcode == "broadcast":
            if not divisor_only(B, cv, un):
                return False
        elif scaling_op(B, cv, un) != "multiply" or un.opcode != "divide" or \
                un.operands[1] != n.idx:
            return False
    return True
