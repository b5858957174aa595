"""Float normalization's converts, read through.

Backends without native narrow-float arithmetic (XLA:CPU) compute a bf16 or f16 instruction
in f32: float normalization converts its result back to the narrow type and the next
instruction's operand up again, across kernels too (the producer's root is the narrow
convert, the reader converts its parameter). Two instructions of one op_name then read
converts instead of each other, and structure alone no longer tells which is which."""

from __future__ import annotations

# the arithmetic float normalization computes in f32 between converts (structure elsewhere,
# a dot's or a reduce's, pairs well without reading through: a shared operand alone would
# tie a layer's dots with the next layer's)
UPCAST_ARITHMETIC = frozenset({"add", "subtract", "multiply", "divide", "maximum", "minimum",
                               "negate", "abs", "exponential", "log", "sqrt", "rsqrt", "tanh",
                               "logistic", "power"})


def unconverted(view, i: int, paired=None, hops: int = 4) -> int:
    """Node ``i`` of ``view`` read through converts that change only a narrow float type to
    f32 or back (the matchers' shapes, ``mdims``, are equal) and that no before instruction
    is paired with (``paired``: the other side's partner of a node, or -1; a convert the
    program wrote itself, ``convert_element_type``, stays). Fresh 23 whisper-style gelu
    on 8 CPUs: ``x * x`` and ``(x * x) * x`` went to two kernels and were paired crosswise
    until their operands were read through the converts."""
    nodes = view.nodes
    for _ in range(hops):
        n = nodes[i]
        if n.opcode != "convert" or len(n.operands) != 1 or \
                (paired is not None and paired[i] >= 0):
            break
        o = nodes[n.operands[0]]
        if o.dims == n.dims or o.mdims != n.mdims:
            break
        i = o.idx
    return i
