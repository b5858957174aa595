"""Float normalization's traces in a diff: narrow float (bf16, f16) values computed in f32.

Backends without native narrow-float arithmetic (XLA:CPU) run float normalization: a narrow
instruction is computed in f32 in place (its type changes), its narrow constants are read
through converts that constant folding folds, and narrow broadcasts are rebuilt on the
converted value. Moved out of fates.py (cpu4 helper) unchanged but for two additions: a
narrow constant whose CSE twin the matcher paired counts that partner (zoo/cpu mlp_bf16:
``constant.8`` and ``constant.9``, both ``bf16[] constant(0.01001)``, each converted at dump
0007 and folded at dump 0012), and an unpaired narrow broadcast of such a constant is removed
(``mul.16``, deleted by DCE at dump 0009). ``fb`` is the FateBuilder.
"""

from __future__ import annotations

from . import partition
from .value_facts import NOT_FOLDED, upcast_only
from .view import Node


def upcast(fb) -> bytearray:
    """1 for matched compute instructions whose narrow float type (bf16, f16) became
    f32: the backend's float normalization computes them in f32, in place."""
    B, A, b2a = fb.B, fb.A, fb.m.b2a
    out = bytearray(len(B.nodes))
    for n in B.nodes:
        y = b2a[n.idx]
        if y >= 0 and n.opcode not in NOT_FOLDED and n.opcode != "convert" \
                and upcast_only(n.dims, A.nodes[y].dims):
            out[n.idx] = 1
    return out

def normalized(fb, b: Node) -> str | None:
    """Why float normalization, not a later pass, took b out (None if it did not)."""
    B, A, m = fb.B, fb.A, fb.m
    if b.opcode in ("constant", "broadcast"):
        y = m.b2a[b.idx] if m.b2a[b.idx] >= 0 else fb.borrowed.get(b.idx, -1)  # cpu4
        if y < 0 and b.opcode == "broadcast" and B.nodes[b.operands[0]].opcode == "constant":
            return "removed" if normalized(fb, B.nodes[b.operands[0]]) else None
        if y >= 0 and (upcast_only(b.dims, A.nodes[y].dims) or  # shard2: or its shard
                       partition.widened_shard(b.inst, A.nodes[y].inst, fb.nparts)):
            # narrow constants are not upcast in place: their users read a convert of
            # them, which constant folding (or algsimp, for broadcasts) replaces
            if b.opcode == "constant":
                return "folded"
            return "removed"
        return None
    if b.opcode != "convert" or not b.operands or not b.dims.startswith("f32["):
        return None
    o = B.nodes[b.operands[0]]
    x = o
    for _ in range(4):  # through reshapes / unit reduces algsimp took away
        if fb.upcast[x.idx] or m.b2a[x.idx] >= 0 or not x.operands or \
                x.opcode not in ("reshape", "reduce", "bitcast", "copy", "transpose"):
            break
        x = B.nodes[x.operands[0]]
    if fb.upcast[x.idx]:
        return "rewritten"  # its operand is computed in f32 now: a no-op convert
    if not any(fb.upcast) or not upcast_only(o.dims, b.dims):
        return None
    for u in o.users:
        if u < b.idx and B.nodes[u].opcode != "convert":
            # normalization converted o for an earlier user first; CSE kept that one
            return "merged"
    return None
