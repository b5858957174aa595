"""Operands a constant-folding pass left behind for DCE (XLA 0.4.x).

XLA's constant folder replaces an instruction whose operands are all constants by a new
constant. The current folder also deletes the operands this leaves without users; the folder
of JAX 0.4.30's XLA leaves them in the module for the next DCE. In zoo/old/fold_identities,
dump 0005 (after algsimp) has ``multiply = multiply(constant.13, constant.12)``; dump 0006
(after constant_folding) has ``multiply.15 = multiply(Arg_1.2, constant)`` with
``constant.13`` and ``constant.12`` still there, without users; dump 0009 (after dce) drops
them. Their value went into the folded constant as much as under the current XLA: like the
operands a fusion pass leaves without users (``PassStep.orphaned``), they are "folded" in the
folding pass, into the instruction their users were folded into, not dead code.
"""

from __future__ import annotations

from typing import Protocol


class _Removed(Protocol):
    name: str
    fate: str
    into: str | None


def folding_orphans(ptop: dict, ctop: dict, prev_users: dict, cur_users: dict,
                    roots: dict, removed: list[_Removed]) -> dict[str, str | None]:
    """Name -> what its users were folded into, for each instruction still in ``ctop``
    that had users before the folding pass, has none after it, and whose users were all
    folded by this pass (or are such orphans themselves: constant -> broadcast -> folded)."""
    gone: dict[str, str | None] = {r.name: r.into for r in removed if r.fate == "folded"}
    if not gone:
        return {}
    out: dict[str, str | None] = {}
    for n in reversed(list(ptop)):  # text order is post order: users first
        if n in gone or n not in ctop or ctop[n].opcode != ptop[n].opcode:
            continue
        users = prev_users.get(n)
        if not users or roots.get(ptop[n].computation) == n:
            continue
        # still read only by such orphans (left in place, reading it): orphaned with them.
        # zoo/old fft_conv1d dump 0008 (constant_folding) folds ``concatenate.0`` of
        # ``broadcast.0 = broadcast(constant.2)``; both stay, broadcast.0 read by nothing
        # and constant.2 only by broadcast.0, until DCE (dump 0011) deletes them (cpu4)
        if any(u not in out for u, _ in cur_users.get(n, ())):
            continue
        intos = set()
        for u, _ in users:
            if u in gone:
                intos.add(gone[u])
            elif u in out:
                intos.add(out[u])
            else:
                break
        else:
            into = intos.pop() if len(intos) == 1 else None
            out[n] = into
    return out
