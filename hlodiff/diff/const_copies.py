"""A constant found again only as the named copies fusion made of it (h100 helper, issue 9).

On GPU, ``rename-instructions`` renames ``constant.19`` to ``constant.19.0``; priority
fusion copies it into every kernel that reads it (``constant.19.2``, ``constant.19.8``,
...) and deletes the original once its last reader is fused; ``sanitize-constant-names``
finally writes every constant's name with ``_`` (``constant_19_2``). The copies carry the
original's name, so they identify it even where identical literals abound.

fresh4 expert_choice_moe (deviceless H100, jax 0.10.2): five ``f32[] constant(0)`` before;
CSE (dump 0019) merges ``constant.18``, ``.26``, ``.27`` and ``.34`` into ``constant.19``;
algsimp (dump 0016) had already rebuilt constant.19's only reader
``broadcast_in_dim.10`` (transpose of a scatter folded into the scatter), so no paired reader
leads to the constant; priority fusion (dump 0069) fuses it ("original left without
users"): the final module holds ``constant_19_1`` ... ``constant_19_8``, each inside a
kernel. The engine called constant.19 "simplified away" and the four merged ones followed.

An open before constant outside inlined calls whose sanitized stem names open after
constants inside fusions only, with its literal and shape, and none at top level, is paired
with the first of them; the duplicates step names the others.
"""

from __future__ import annotations

from collections import defaultdict

from .gpunames import sanitized

HOW = "named copy"


def _stem(name: str) -> str | None:
    """``constant_19`` for ``constant_19_2``; None for a name that is no such copy."""
    stem, sep, tail = name.rpartition("_")
    return stem if sep and tail.isdigit() and "." not in name else None


def pair_named_copies(m) -> int:
    """Pair open before constants with the fused copies that carry their names."""
    B, A = m.before, m.after
    copies: dict[str, list[int]] = defaultdict(list)
    top: set[str] = set()
    for n in A.nodes:
        if n.alias >= 0 or n.opcode != "constant":
            continue
        s = _stem(n.name)
        if s is None:
            continue
        if n.fusion < 0:
            top.add(s)
        else:
            copies[s].append(n.idx)
    if not copies:
        return 0
    c = 0
    for b in B.nodes:
        if b.alias >= 0 or b.opcode != "constant" or b.site is not None or m.b2a[b.idx] >= 0:
            continue
        s = sanitized(b.name)[:-2]
        al = copies.get(s)
        if not al or s in top:
            continue
        hits = [a for a in al if m.a2b[a] < 0 and A.nodes[a].inst.literal == b.inst.literal
                and A.nodes[a].mdims == b.mdims]
        if hits and len(hits) == sum(1 for a in al if m.a2b[a] < 0):
            c += m.pair(b.idx, hits[0], HOW)
    return c


def carries_name(b, a) -> bool:
    """Is the after constant ``a`` a copy fusion made of the before constant ``b`` (outside
    inlined calls), by the name the copy carries (``constant_19_2`` of ``constant.19``)?
    Then it is no look-alike, whatever the partners of b's readers read: a reader algsimp
    rebuilt (expert_choice_moe's ``broadcast_in_dim.10``) leads elsewhere."""
    return (b.opcode == "constant" and a.opcode == "constant" and b.site is None
            and a.fusion >= 0 and _stem(a.name) == sanitized(b.name)[:-2]
            and a.inst.literal == b.inst.literal)
