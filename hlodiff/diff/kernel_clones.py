"""A value named in a kernel that only recomputes another kernel: name the kernel it copies.

XLA:GPU's priority fusion may fuse a producer kernel into a consumer and keep the producer
too, when the producer has other readers: the consumer then recomputes the producer's whole
computation (mlp_mixer on 8 H100s, dump 0093: ``fusion.186`` clones ``triton_softmax.5``'s
computation, ``reduce.133``, ``div.124``, ``sub.226``, and ``triton_softmax.5`` stays). The
matcher may pair a before instruction with its copy inside the consumer; XLA's pass dumps
follow the instruction into the producer kernel, where its value is computed for everyone
(the copy in the consumer is a recomputation; gpu8n's ``dumps/fusion_copies.py`` records it).

:func:`prefer_originals` moves such fates to the producer: where a fate's after node lies
in the clone (the clone's root, whose subgraph fingerprint is the root of another top-level
kernel, and what that root is computed from inside the consumer), and the producer holds
exactly one node of the same fingerprint, that node and kernel are named instead.
"""

from __future__ import annotations


def _roots(A) -> dict[int, int]:
    """Subgraph fingerprint of a fused root -> its kernel (only fingerprints one kernel
    has as its root)."""
    out: dict[int, int] = {}
    dup: set[int] = set()
    for n in A.nodes:
        if n.opcode != "fusion" or n.fusion >= 0:
            continue
        r = A.nodes[A.resolve(n.idx)]
        if r.idx == n.idx or r.fusion != n.idx or r.opcode in ("parameter", "tuple"):
            continue
        if r.fp in out:
            dup.add(r.fp)
        out[r.fp] = n.idx
    for fp in dup:
        del out[fp]
    return out


def prefer_originals(m, fates: list) -> int:
    """See the module text. Returns how many fates changed."""
    A = m.after
    nodes = A.nodes
    roots = _roots(A)
    if not roots:
        return 0
    # clone root (a node inside a consumer kernel) -> the producer kernel it recomputes
    clone_of: dict[int, int] = {}
    for n in nodes:
        g = roots.get(n.fp) if n.fusion >= 0 and n.alias < 0 else None
        if g is not None and g != n.fusion:
            clone_of[n.idx] = g
    if not clone_of:
        return 0
    # every node of a clone: the clone root and what it reads inside the consumer
    in_clone: dict[int, int] = {}
    for x, g in clone_of.items():
        todo = [x]
        while todo:
            i = todo.pop()
            if i in in_clone:
                continue
            in_clone[i] = g
            todo.extend(o for o in nodes[i].operands
                        if nodes[o].fusion == nodes[x].fusion and nodes[o].opcode != "parameter")
    by_fp: dict[tuple[int, int], list[int]] = {}
    for n in nodes:
        if n.fusion >= 0 and n.alias < 0:
            by_fp.setdefault((n.fusion, n.fp), []).append(n.idx)
    by_name = {n.name: n.idx for n in nodes if n.alias < 0}
    changed = 0
    for f in fates:
        if f is None or not f.fusion or not f.after or f.fate not in ("fused", "rewritten"):
            continue
        a = by_name.get(f.after)
        g = in_clone.get(a) if a is not None else None
        if g is None or nodes[a].opcode in ("parameter", "constant"):
            continue
        same = by_fp.get((g, nodes[a].fp), [])
        if len(same) != 1:
            continue
        k = nodes[g]
        f.reason += (f" (recomputed there; {k.name} computes it, and priority fusion "
                     f"copied that kernel into {f.fusion})")
        f.after, f.fusion, f.fusion_kind = nodes[same[0]].name, k.name, k.inst.fusion_kind
        changed += 1
    return changed
