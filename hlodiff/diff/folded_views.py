"""A transpose that no longer exists: its users read its operand (cpu4 helper).

Transpose folding puts a dot operand's transpose into the dot's dimension numbers, and
algsimp/layout assignment cancel a transpose into a layout (``transpose(transpose(x))``, a
transpose read in column-major layout). Either way the transpose's users read its operand's
value directly; that instruction holds the value the transpose described, not one of its
consumers. Evidence, zoo/cpu mlp_transposed (jax 0.10.2): dump 0009 ``%dot_general.4 =
dot(%transpose.4, %a_1_.1), lhs_contracting_dims={1}``; after transpose-folding (dump 0010)
``%dot_general.4 = dot(%tanh.1, %a_1_.1)``: the pass dumps put transpose.4's value in
``wrapped_tanh`` (tanh.1 fused), where the engine had named the consumer dot. zoo/cpu
mlp_bf16: ``transpose(transpose.3)`` cancelled by algsimp (dump 0014), transpose.3's value
is the dot ``dot_general.9``.
"""

from __future__ import annotations

from .view import Node


def folded_transpose(m, b: Node) -> Node | None:
    """The after partner of an open transpose's operand (None when the operand has none)."""
    if b.opcode != "transpose" or not b.operands or m.b2a[b.idx] >= 0:
        return None
    y = m.b2a[b.operands[0]]
    if y < 0:
        return None
    A = m.after
    for u in b.users:  # still a transpose of its own before a user (GPU): not folded
        z = m.b2a[u]
        if z >= 0 and any(A.nodes[r].opcode == "transpose" and m.a2b[r] < 0 and
                          A.nodes[r].mdims == b.mdims for r in A.nodes[z].raw_operands):
            return None
    return A.nodes[y]


def fill(f, b: Node, a: Node, m, set_after):
    """Fill the fate of transpose ``b`` whose operand's partner is ``a``."""
    f.fate = "rewritten"
    set_after(f, a)
    into = [m.after.nodes[m.b2a[u]] for u in b.users if m.b2a[u] >= 0]
    dots = [x.name for x in into if x.opcode in ("dot", "convolution") and a.idx in x.operands]
    how = f"folded into {dots[0]}'s dimension numbers" if dots else \
        "folded away (a layout change, or cancelled by another transpose)"
    f.reason = f"transpose {how}: its users read {a.name} directly"
    return f
