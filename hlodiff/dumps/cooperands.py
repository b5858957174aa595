"""Telling identical renamed candidates apart by what their users read beside them.

XLA's call inliner copies each callee into its caller under fresh names (JAX 0.4.30's
renumbers them: ``broadcast.147`` -> ``broadcast.0``). When several callees hold identical
instructions with the same metadata (three inlined ``log_softmax`` calls, each with
``broadcast.N = f32[16] broadcast(constant(-inf))`` and no metadata), the copy's opcode,
operands and metadata fit every candidate. The copy's *user* does not: fresh 5
kl_distillation (JAX 0.4.30) dump 0002 -> 0003 (CallInliner), the copy
``maximum.0 = maximum(reduce.0, broadcast.0)`` reads ``reduce.0``, already known to be the
renamed ``reduce.150`` (its operand ``dot.31`` is unique), and only ``broadcast.147`` is
read beside ``reduce.150`` (``maximum.151 = maximum(reduce.150, broadcast.147)``). Taking
the first candidate in text order instead (``broadcast.75`` of another call) cut the
chain: every instruction above it in that callee was left "inlined" with no destination.
"""

from __future__ import annotations

from ..hlo.model import Instruction


def by_co_operands(prev_users: dict, ptop: dict, cur_users: dict, ctop: dict,
                   c2p: dict[str, str], a: Instruction, lst: list[Instruction]) -> list[int]:
    """Indices of the candidates in ``lst`` (identical instructions removed by the pass)
    that are read, at the same operand position, by an instruction of ``a``'s user's
    opcode whose other operands are the already-renamed counterparts of that user's
    other operands. Empty when no user of ``a`` tells the candidates apart."""
    for u, k in cur_users.get(a.name, ()):
        ui = ctop.get(u)
        if ui is None:
            continue
        known = {j: c2p[o] for j, o in enumerate(ui.operands)
                 if j != k and o in c2p and o != a.name}
        if not known:
            continue
        hits = []
        for idx, r in enumerate(lst):
            for pu, pk in prev_users.get(r.name, ()):
                pi = ptop.get(pu)
                if pk != k or pi is None or pi.opcode != ui.opcode or \
                        len(pi.operands) != len(ui.operands):
                    continue
                if all(pi.operands[j] == p for j, p in known.items()):
                    hits.append(idx)
                    break
        if 0 < len(hits) < len(lst):
            return hits
    return []
