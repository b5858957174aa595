"""Names XLA's GPU pipeline rewrites at the end (gpu2).

``rename-instructions`` appends ``.0`` (``constant.19`` -> ``constant.19.0``; match.py
strips it), and ``sanitize-constant-names`` then makes a top-level constant's name a valid
PTX symbol, replacing ``.`` and ``-`` by ``_`` (kv_decode_loop's H100 dumps 0044 and 0068:
``constant.19`` -> ``constant.19.0`` -> ``constant_19_0``). A constant kept at top level
is found under that name.
"""

from __future__ import annotations

import re


def sanitized(name: str) -> str:
    """The name sanitize-constant-names gives a constant that rename-instructions renamed."""
    return (name + ".0").replace(".", "_").replace("-", "_")


def constants_by_sanitized_name(nodes) -> dict[str, int]:
    """After top-level constants whose name carries no ``.``: name -> node (the names a
    sanitized before name is looked up in)."""
    return {n.name: n.idx for n in nodes
            if n.opcode == "constant" and n.fusion < 0 and "." not in n.name}


def constant_stems(nodes) -> set[str]:
    """Sanitized names of the before constants whose copies the after module holds: a
    fusion's copy of ``constant.23.0`` is ``constant.23.2``, sanitized ``constant_23_2``
    (gnn_segment_max's H100 module), so the stem ``constant_23`` names the constant that
    CSE kept; one merged into it left no name behind."""
    out: set[str] = set()
    for n in nodes:
        if n.opcode == "constant" and "." not in n.name:
            stem, sep, tail = n.name.rpartition("_")
            if sep and tail.isdigit():
                out.add(stem)
    return out


def survivor_by_name(group: list[int], nodes, stems: set[str]) -> int | None:
    """The one constant of an identical ``group`` whose name lives on, if exactly one."""
    hits = [i for i in group if sanitized(nodes[i].name)[:-2] in stems]
    return hits[0] if len(hits) == 1 else None


_FUSED_COPY = re.compile(r"^(.+\.\d+)\.\d+(?:\.clone(?:\.\d+)?)?$")


def _same_op(b, a) -> bool:
    return b.opcode == a.opcode and b.mdims == a.mdims and (
        b.opcode != "constant" or b.inst.literal == a.inst.literal)


def pair_fused_by_name(m, unique: bool = True) -> int:
    """Pair each open top-level before instruction with an open fused copy named after it.

    On XLA:GPU ``rename-instructions`` runs just before fusion (fresh 11
    quasi_rnn_fo_pool on one H100, dump 0050: ``transpose.13`` -> ``transpose.13.0``), and
    priority fusion clones an instruction into a kernel under the next free number of that
    stem (dump 0052: ``transpose.13.1`` in its fusion, ``transpose.13.0`` gone; a
    multi-output merge adds ``.clone``/``.clone.N``). Names are unique in a module, so a
    fused ``S.k`` with the opcode and shape of a before ``S`` is a copy of ``S`` and holds
    its value, whatever its op_name or layout says (layout normalization rebuilds
    ``transpose.30`` of remat_combined_policy_block with a dot's metadata and keeps the
    name). Remat twins and layer copies share
    op_names and shapes, so only the name tells them apart (fresh 11
    remat_combined_policy_block: ``transpose.30`` and its recomputation ``transpose.147``,
    in ``loop_transpose_fusion.10`` and ``.11``). The CPU pipeline never produces such
    names (fused clones get new ones). ``unique``: only where one open copy carries the
    name (several copies are the same value in several kernels; the structure knows which
    one its neighbours went with, fresh 7 ctc_alpha_scan ``broadcast.12`` of a loop body);
    else the first. Returns the number of pairs made."""
    by_stem: dict[str, list[int]] = {}
    for a in m.after.nodes:
        if a.fusion < 0 or a.alias >= 0 or a.opcode == "parameter" or m.a2b[a.idx] >= 0:
            continue
        hit = _FUSED_COPY.match(a.name)
        if hit:
            by_stem.setdefault(hit.group(1), []).append(a.idx)
    if not by_stem:
        return 0
    An = m.after.nodes
    c = 0
    for b in m.before.nodes:
        if b.alias >= 0 or b.site is not None or m.b2a[b.idx] >= 0 or b.opcode == "parameter":
            continue
        ys = [y for y in by_stem.get(b.name, ()) if m.a2b[y] < 0 and _same_op(b, An[y])]
        if ys and (len(ys) == 1 or not unique):
            c += m.pair(b.idx, ys[0], "name")
    return c


def give_copies_to_namesakes(m) -> int:
    """Hand a fused copy named after an open before node ``S`` back to ``S`` when another
    before node, an identical copy of ``S`` (same exact-subgraph and value fingerprints, in
    one computation), holds it.

    CSE keeps one of identical instructions and fusion then clones that one into each kernel
    that reads it, under its name (``S.k``, ``S.k.clone.N``; see :func:`pair_fused_by_name`).
    Structural propagation reaches the clones from whatever users were paired first, and may
    hand them to a copy CSE merged away: fresh 19 ncsn_unet_cond_instancenorm_dsm on one H100,
    the learning rate ``broadcast(min(...))`` computed once per parameter; CSE keeps
    ``mul.1368``, whose clones ``mul.1368.33.clone.1`` and ``mul.1368.73.clone.1`` went to
    ``mul.1438`` and ``mul.1416``, and ``mul.1368`` then took a look-alike of another shape.
    The clone's name decides; the copy that held it is left open, for the fate step to call
    it merged into ``S``. Returns the number of clones moved."""
    B, A = m.before.nodes, m.after.nodes
    by_name: dict[str, int] = {}
    for b in B:
        if b.alias < 0 and b.site is None and b.opcode != "parameter":
            by_name[b.name] = b.idx
    c = 0
    for a in A:
        if a.fusion < 0 or a.alias >= 0 or a.opcode == "parameter":
            continue
        x = m.a2b[a.idx]
        if x < 0:
            continue
        hit = _FUSED_COPY.match(a.name)
        s = by_name.get(hit.group(1)) if hit else None
        if s is None or s == x or m.b2a[s] >= 0:
            continue
        S, X = B[s], B[x]
        if S.fp != X.fp or S.vfp != X.vfp or S.ctx != X.ctx or not _same_op(S, a):
            continue
        m.unpair(x)
        c += m.pair(s, a.idx, "name")
    return c
