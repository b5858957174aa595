"""Partners inside loop bodies the call inliner cloned per call site (cpu6).

A function called at several places is inlined once per call; the call inliner clones the
bodies of the loops it holds for each copy (flatten-call-graph first gives every call its
own clone: fresh 6 mixup_permutation, where jax.random.beta calls ``_gamma`` twice, dump
0006 has ``_gamma.36`` and ``_gamma.36.clone``, the first call's loop keeps body
``region_6.32``, the second's runs ``region_6.32.clone``). The before view instantiates such
a body once (``View.shared``), with the op_name prefix every copy shares, so its
instructions meet one copy per call after optimization, all with the same op_names: their
fates (fused, kept, folded ...) hold for every copy, but which copy is the first call's is
decided by pairings among identical twins. The first call keeps the original
computation (a small two-call program after optimization: ``while.14`` runs ``region_0.1``,
the second call's ``while.15`` runs ``region_0.1.clone``), so a partner in a computation
of the before body's own name is the first call's. Once loop passes rebuilt the bodies
(``wide.wide.region_6.32.clone.1.sunk...``) the names tell nothing. Where another body
holds a node of the same opcode, shape and op_name as the partner, the named target is
withheld and the kernels of all copies are listed (``candidates``), as for other twins
nothing told apart (``anchors.mark_uncertain_twins``).
"""

from __future__ import annotations

from collections import defaultdict


def _body(A, a) -> str:
    return A.nodes[a.home].ctx if a.home >= 0 else a.ctx


def mark(m, fates: list) -> None:
    """Withhold the named target of fates of nodes in shared bodies whose partner has a
    same-keyed twin in another body (in place)."""
    B, A = m.before, m.after
    if not B.shared:
        return
    names: dict[str, int] = {}
    by_key: dict[tuple, list[int]] = defaultdict(list)
    for a in A.nodes:
        if a.alias < 0 or a.opcode == "fusion":
            names.setdefault(a.name, a.idx)
        by_key[(a.opcode, a.mdims, a.op_name)].append(a.idx)
    for b in B.nodes:
        if b.ctx not in B.shared:
            continue
        f = fates[b.idx]
        if f.fate not in ("kept", "fused", "rewritten", "merged", "folded") or not f.after:
            continue
        y = names.get(f.after)
        if y is None:
            continue
        a = A.nodes[y]
        if a.op_name is None:
            continue
        here = _body(A, a)
        if here == b.ctx:
            continue  # the original computation: the first call's copy (see above)
        twins = [x for x in by_key[(a.opcode, a.mdims, a.op_name)]
                 if _body(A, A.nodes[x]) != here]
        if not twins:
            continue
        kernels: list[str] = []
        for x in [y] + twins:
            k = A.nodes[A.nodes[x].home].name if A.nodes[x].home >= 0 else A.nodes[x].name
            if k not in kernels:
                kernels.append(k)
        if len(kernels) < 2:
            continue
        f.candidates = kernels
        f.reason = (f"{f.reason}; but its loop body was inlined once per call of the "
                    f"function holding it, leaving {len(kernels)} places: "
                    f"{', '.join(kernels)}")
        f.after, f.fusion, f.fusion_kind = None, None, None
