"""After nodes that are fusion's copies of an already paired instruction.

Fusion may duplicate a cheap producer (a broadcast, a constant, an elementwise op) into
each consumer's kernel. One copy gets paired with the before instruction; the others
compute exactly the same value from the same operands (same subgraph fingerprint,
signature and operand nodes) and so hold *that* instruction's value, never another's.
A later, weaker matcher step (the op_name-based rewrite step) must not hand such a copy to
a different before instruction that merely shares the op_name (a reshape that the reshape
decomposer turned into a bitcast is not "the broadcast beside it").

(``m`` below is a :class:`hlodiff.diff.match.Matching`; match.py calls this module.)
"""

from __future__ import annotations


def _key(a) -> tuple:
    return (a.fp, a.sig, tuple(a.operands))


def copies_of_paired(m) -> set[int]:
    """Open fused after nodes identical to a paired fused after node."""
    A = m.after.nodes
    paired = {_key(a) for a in A if a.fusion >= 0 and a.alias < 0 and m.a2b[a.idx] >= 0}
    if not paired:
        return set()
    return {a.idx for a in A if a.fusion >= 0 and a.alias < 0 and m.a2b[a.idx] < 0
            and a.opcode != "parameter" and _key(a) in paired}
