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


def repair_ties(ties: dict[str, list[str]], added: list[str], c2p: dict[str, str],
                renamed: dict[str, str], cand: dict, ptop: dict, ctop: dict,
                lookup, op_of, canon, cand_key, cur_users: dict) -> None:
    """Second look at renames taken among identical candidates (``ties``: new name ->
    the candidates' names) that nothing told apart when they were taken: an added
    instruction left unmatched that matches a removed one once one of its operands is
    another candidate of that operand's tie shows which candidate the operand was; the two
    assignments are swapped. Fresh 5 perceiver_cross_attention (JAX 0.4.30) dump 0003:
    two inlined ``integer_pow`` callees hold ``broadcast(constant(1))`` (no metadata)
    before ``multiply(x, x)`` and ``ROOT divide(broadcast, multiply)``; when the broadcast
    copy is renamed its user's other operand is not yet known, the first candidate is
    taken, and the divide copies then match nothing (left "inlined"). In text order, so a
    user fixed here lets its own users match."""
    for n in added:
        if n in c2p:
            continue
        a = ctop[n]
        ops = [op_of(o) for o in a.operands]
        lst = lookup(a, tuple(ops))
        if not lst:
            for j, o in enumerate(a.operands):
                for alt in ties.get(o, ()):
                    if alt == c2p.get(o) or _users_matched(renamed.get(alt), o, c2p,
                                                               cur_users, ties):
                        continue
                    trial = list(ops)
                    trial[j] = canon(alt)
                    lst = lookup(a, tuple(trial))
                    if lst:
                        _swap(o, alt, c2p, renamed, cand, ptop, cand_key)
                        break
                if lst:
                    break
        if lst:
            r = lst.pop(0)
            c2p[n] = r.name
            renamed[r.name] = n


def _users_matched(holder: str | None, o: str, c2p: dict[str, str], cur_users: dict,
                   ties: dict) -> bool:
    """Whether a user of ``holder`` (the instruction now renamed from the alternative)
    or of ``o`` was matched through its current assignment (then the two stay)."""
    for x in (holder, o):
        if x is None:
            continue
        if any(u in c2p and u in ties or (u in c2p and c2p[u] != u)
               for u, _ in cur_users.get(x, ())):
            return True
    return False


def _swap(o: str, alt: str, c2p: dict[str, str], renamed: dict[str, str], cand: dict,
          ptop: dict, cand_key) -> None:
    """Make ``o`` the renamed ``alt``; whoever was ``alt`` takes ``o``'s old candidate
    (or that candidate goes back to the unmatched ones)."""
    old = c2p[o]
    holder = renamed.get(alt)
    c2p[o] = alt
    renamed[alt] = o
    if holder is not None and holder != o:
        c2p[holder] = old
        renamed[old] = holder
        return
    renamed.pop(old, None)
    lst = cand.get(cand_key(ptop[alt]))
    if lst is not None and ptop[alt] in lst:
        lst.remove(ptop[alt])
    cand.setdefault(cand_key(ptop[old]), []).append(ptop[old])



def align_leaf_ties(groups: list[list[str]], c2p: dict[str, str], renamed: dict[str, str],
                    ptop: dict, ctop: dict, cur_users: dict) -> None:
    """Last look at renames of identical operand-less instructions (constants, iotas):
    ``groups`` holds each set of identical removed candidates. The renamed users of a new
    instruction name which candidate it was. Matching sees a constant operand by its
    value, so a wrong pick breaks no user's match and :func:`repair_ties` never notices
    it. JAX 0.4.30's call inliner (fresh 10 sort_rank_correlation, dump 0004 -> 0005)
    copies three ``f32[] constant(1)`` without metadata, from ``integer_pow.139`` (read by
    an ``f32[2,1]`` broadcast), ``integer_pow_3.145`` (``f32[1,2]``) and ``clip.151``
    (``f32[2,2]``); taken in text order, ``constant.141`` became the copy read by the
    ``f32[2,2]`` broadcast, so the merge that CSE did at dump 0029 was laid on the wrong
    originals. When every renamed user reads, at its operand position, the same other
    candidate of the group, that candidate is the one; whoever held it takes the old
    pick."""
    group_of = {r: g for g in groups for r in g}
    p2c = {p: c for c, p in c2p.items()}
    for _ in range(4):
        changed = False
        for n, a in ctop.items():
            old = c2p.get(n)
            if a.operands or old not in group_of:
                continue
            votes = set()
            for u, k in cur_users.get(n, ()):
                pu = ptop.get(c2p.get(u, ""))
                votes.add(pu.operands[k] if pu is not None and k < len(pu.operands) else None)
            if len(votes) != 1:
                continue
            want = votes.pop()
            if want is None or want == old or want not in group_of[old]:
                continue
            holder = p2c.get(want)
            c2p[n], p2c[want] = want, n
            renamed[want] = n
            if holder is not None and holder != n:
                c2p[holder], p2c[old] = old, holder
                renamed[old] = holder
            else:
                renamed.pop(old, None)
                p2c.pop(old, None)
            changed = True
        if not changed:
            break
