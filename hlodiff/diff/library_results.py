"""The value of an instruction rewritten into a library call: element 0 of the call's tuple.

XLA:GPU's rewriters turn a convolution (or a dot) into a custom call to cuDNN or cuBLAS
that returns a tuple, its result and a scratch buffer: ``cudnn-conv-bw-filter.2 =
(f32[16,3,3,16], u8[0]) custom-call(...)``. The value the convolution computed is read
back through ``get-tuple-element.15.0 = get-tuple-element(cudnn-conv-bw-filter.2),
index=0``; that element is the top-level instruction holding it (XLA's pass dumps follow
the convolution into it: conv-rewriter makes ``get-tuple-element.3`` of the new call, and
on 8 H100s algsimp rebuilds it without metadata as ``get-tuple-element.15``, zoo
diffusion_block dumps 0045 and 0046). The matcher pairs the convolution with the call
where the element carries no op_name; this post-pass names the element as the place of
the value and keeps the call in the reason. Only rewrites into a call are changed (a call
kept as a call, in a regression diff, is itself)."""

from __future__ import annotations


def _results(m) -> dict[str, str]:
    """Top-level tuple-shaped custom call -> its one top-level element-0 reader."""
    An = m.after.nodes
    found: dict[str, list[str]] = {}
    for n in An:
        if n.opcode != "get-tuple-element" or n.fusion >= 0 or n.inst.index != 0 or \
                not n.raw_operands:
            continue
        c = An[m.after.resolve(n.raw_operands[0])]
        sh = c.inst.shape
        if c.opcode == "custom-call" and c.fusion < 0 and sh is not None and sh.is_tuple:
            found.setdefault(c.name, []).append(n.name)
    return {c: g[0] for c, g in found.items() if len(g) == 1}


def name_results(m, fates: list) -> int:
    """Point ``rewritten`` fates whose after instruction is a library call at the call's
    element 0 (see the module docstring). Returns how many changed."""
    res = None
    c = 0
    for b, f in zip(m.before.nodes, fates):
        if f is None or f.fate != "rewritten" or f.fusion or not f.after or \
                b.opcode == "custom-call":
            continue
        if res is None:
            res = _results(m)
            if not res:
                return 0
        g = res.get(f.after)
        if g is None:
            continue
        f.reason = (f"{f.reason}; its result is {g} (element 0 of {f.after}'s result and "
                    "scratch tuple)") if f.reason else f"its result is {g}, of {f.after}"
        f.after = g
        c += 1
    return c
