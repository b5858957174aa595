"""Which nodes of a view compute a compile-time constant (no parameter reaches them).

Split from value_facts.py so that the matcher can use it too (value_facts imports the
matcher). value_facts re-exports both names.
"""

from __future__ import annotations

from .view import View

NO_VALUE = {"parameter", "rng", "rng-bit-generator", "infeed", "recv", "custom-call",
             "after-all", "partition-id", "replica-id", "while", "conditional", "call",
             "all-reduce", "all-gather", "send", "recv-done", "send-done"}


def constant_valued(view: View, iota: bool = True) -> bytearray:
    """1 where a node's value can be computed at compile time (no parameter reaches it).

    ``iota=False``: only what constant folding really evaluates. XLA's constant folder
    never evaluates an iota (nor anything computed from one); algsimp simplifies such
    index arithmetic instead and the rest is computed at run time, usually fused."""
    nodes = view.nodes
    cv = bytearray(len(nodes))
    leaves = ("constant", "iota") if iota else ("constant",)
    for n in nodes:
        if n.alias >= 0:
            continue
        if n.opcode in leaves:
            cv[n.idx] = 1
        elif n.operands and n.opcode not in NO_VALUE:
            cv[n.idx] = all(cv[o] for o in n.operands)
    for n in nodes:
        if n.alias >= 0:
            cv[n.idx] = cv[view.resolve(n.idx)]
    return cv


def for_matching(m) -> tuple[bytearray, bytearray]:
    """(before, after) constant_valued of a Matching's views, computed once per matching."""
    cv = getattr(m, "_const_vals", None)
    if cv is None:
        cv = m._const_vals = (constant_valued(m.before), constant_valued(m.after))
    return cv


def gpu_after(m) -> bool:
    """Whether a Matching's after module was compiled by XLA's GPU backend (cached)."""
    g = getattr(m, "_gpu_after", None)
    if g is None:
        from ..analysis.backend import compiled_for_gpu
        g = m._gpu_after = compiled_for_gpu(m.after.module)
    return g


def literal_through(view: View, i: int, carry) -> object:
    """The literal of the constant that node ``i`` carries through at most four views of
    the opcodes in ``carry`` (a broadcast or reshape of ``constant(2)``...), or None."""
    n = view.nodes[i]
    for _ in range(4):
        if n.opcode == "constant":
            return n.inst.literal
        if n.opcode not in carry or not n.operands:
            return None
        n = view.nodes[n.operands[0]]
    return None
