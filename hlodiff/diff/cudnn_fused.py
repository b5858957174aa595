"""Bias additions that cuDNN's fused convolution took into its library call.

On a real GPU, XLA's ``cudnn-fused-convolution-rewriter`` turns ``add(conv(x, w),
broadcast(bias))`` into one ``__cudnn$convBiasActivationForward`` custom call that reads
``x``, ``w`` and ``bias``: the addition and the bias broadcast are computed by the library
call. Real H100 dump of convnet_step (jax 0.11.2), pass ``cudnn-fused-convolution-rewriter``:
``add.15 = add(conv_general_dilated.8, add.14)``, ``add.14 = broadcast(params_0__1_)`` become
``cudnn-conv-bias-activation.2``; the after module holds ``cudnn-conv-bias-activation.10 =
custom-call(x.1, wrapped_transpose, params_0__1_.1), custom_call_target=
"__cudnn$convBiasActivationForward"``. The matcher pairs the convolution with that call; the
add and the broadcast had no partner and were reported simplified away into a consumer or
into the bias parameter. (Deviceless compiles do not run this rewriter.)
"""

from __future__ import annotations

_TARGET = "__cudnn$convBiasActivationForward"


def bias_adds(m, fates: list) -> int:
    """Name the fused call for each bias add (and its broadcast) the rewriter took in, and
    for a residual add whose other operand became the call's side input (its fourth
    operand: ``conv(x, w) + bias + side``; fresh 23 resunet_plus_plus on 8 H100s,
    ``add.605 = add(conv_general_dilated.86, add.604)`` in
    ``cudnn-conv-bias-activation.39 = custom-call(x, w, bias, loop_add_fusion)``).
    ``m``: a ``match.Matching``; ``fates``: the fates of ``m.before.nodes``, by index.
    Returns how many fates changed."""
    A, B = m.after, m.before
    Bn, An = B.nodes, A.nodes
    c = 0
    for call in An:
        if call.opcode != "custom-call" or call.inst.custom_call_target != _TARGET or \
                len(call.raw_operands) < 3 or call.fusion >= 0:
            continue
        conv = m.a2b[call.idx]
        if conv < 0 or Bn[conv].opcode != "convolution":
            continue
        bias = A.resolve(call.raw_operands[2])
        side = A.resolve(call.raw_operands[3]) if len(call.raw_operands) > 3 else -1
        for u in Bn[conv].users:
            add = Bn[u]
            if add.opcode != "add" or m.b2a[u] >= 0 or len(add.operands) != 2:
                continue
            other = add.operands[1] if add.operands[0] == conv else add.operands[0]
            bc = Bn[other]
            y = m.b2a[other]  # (a fusion resolves to its root: a fused side input pairs)
            if side >= 0 and y >= 0 and A.resolve(y) == side:
                c += _take(fates, u, call, Bn[conv].name, "the residual addition",
                           f"its other operand {bc.name} is the call's side input")
                continue
            if bc.opcode != "broadcast" or not bc.raw_operands:
                continue
            src = m.b2a[B.resolve(bc.raw_operands[0])]
            if src < 0 or A.resolve(src) != bias:
                continue
            for i, what in ((u, "the bias addition"), (other, "the bias broadcast")):
                if i == other and (len(bc.users) != 1 or m.b2a[i] >= 0):
                    continue
                c += _take(fates, i, call, Bn[conv].name, what)
    return c


def _take(fates: list, i: int, call, conv: str, what: str, why: str = "") -> int:
    """Make before node ``i``'s fate: rewritten into the fused call ``call``."""
    f = fates[i]
    f.fate, f.after, f.fusion, f.fusion_kind, f.into = "rewritten", call.name, None, None, None
    f.reason = (f"{what} of {conv} went into cuDNN's fused convolution {call.name} "
                f"({_TARGET}, by the cudnn fused convolution rewriter"
                + (f"; {why})" if why else ")"))
    return 1
