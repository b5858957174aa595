"""A loop body's literal lives on in the rebuilt body's own literal (old5 helper).

The loop passes rebuild a while's body under a new name (JAX 0.4.30:
``wide.wide.wide.region_13.346.clone.clone.clone``) and keep its scalar literals there at
top level, where fusion also copies them into the body's kernels. Fresh 4 hmm_forward_scan:
the scan body ``region_13.346`` reads ``constant.357 = s32[] constant(1)`` and
``constant.356 = s32[] constant(0)``; the rebuilt body holds ``constant.124 = s32[]
constant(1)`` (read by ``add.64``) and ``constant.125 = s32[] constant(0)``, and the pass
dumps follow the two there (kept). The similarity and operand steps had paired them with
fused copies (``constant.99.clone.9`` in fusion.12), "fused".

Only where the before body (with its inlined callees) has one open literal of that value
and shape, and the rebuilt body one open top-level literal of it.
"""

from __future__ import annotations

from collections import defaultdict


def pair_body_constants(m) -> int:
    """Pair such literals once the loops are paired; returns the number of pairs made."""
    B, A = m.before, m.after
    acomp = {(ctl, role): comp for ctl, role, comp, _r, _p in A.bodies}
    comp_map: dict[str, str] = {}
    for ctl, role, comp, _r, _p in B.bodies:
        a = m.b2a[ctl]
        if a >= 0 and B.nodes[ctl].opcode == "while" and (a, role) in acomp:
            comp_map[comp] = acomp[(a, role)]
    if not comp_map:
        return 0
    before: dict[tuple, list[int]] = defaultdict(list)
    for n in B.nodes:
        if n.opcode == "constant" and n.alias < 0 and n.ctx in comp_map:
            before[(comp_map[n.ctx], n.inst.literal, n.mdims)].append(n.idx)
    after: dict[tuple, list[int]] = defaultdict(list)
    targets = set(comp_map.values())
    for a in A.nodes:
        if a.opcode == "constant" and a.fusion < 0 and a.alias < 0 and a.comp in targets:
            after[(a.comp, a.inst.literal, a.mdims)].append(a.idx)
    c = 0
    for k, bl in before.items():
        ob = [i for i in bl if m.b2a[i] < 0]
        oa = [y for y in after.get(k, ()) if m.a2b[y] < 0]
        if len(ob) == 1 and len(oa) == 1:
            c += m.pair(ob[0], oa[0], "loop body literal")
    return c
