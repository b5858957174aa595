"""Regression mode: two optimized modules (often from two JAX/XLA versions), kernel by kernel.

:mod:`.kernel_pairs` pairs the kernels (wrappers seen through, ties left ``uncertain``,
joins and splits many-to-one); this module says how each pair changed (:func:`_what`),
builds one row per kernel and the changelog groups (:mod:`.changelog`), and keeps only the
layout changes between paired kernels of equal dims.
"""

from __future__ import annotations

import re
from collections import defaultdict

from .kernel_pairs import (_QUIET, Kernel, _computes, _main_dims, build_kernels, many_to_one,
                           pair_kernels)
from .match import Matching
from .result import InstructionFate, LayoutChange


def _what(kb: Kernel, ka: Kernel) -> list[str]:
    """How a paired kernel changed. The kernel labels (``dot -> library dot fusion``) say
    what it was and became; these are the differences the labels do not show."""
    b, a = kb.node, ka.node
    what = []
    if a.opcode != b.opcode and kb.label == ka.label:
        what.append(f"{b.opcode} -> {a.opcode}")
    db, da = _main_dims(b), _main_dims(a)
    if db != da:
        what.append(f"shape {db} -> {da}")
    if b.opcode == "fusion" and a.opcode == "fusion" and a.inst.fusion_kind != b.inst.fusion_kind:
        what.append(f"kind {b.inst.fusion_kind} -> {a.inst.fusion_kind}")
    mb, ma = _computes(kb), _computes(ka)
    new, gone = sorted(ma - mb), sorted(mb - ma)
    if new:
        what.append("now also " + "+".join(new))
    if gone:
        what.append("no longer " + "+".join(gone))
    if not new and not gone and b.opcode == a.opcode == "fusion":
        nb = sum(c for o, c in kb.ops.items() if o not in _QUIET)
        na = sum(c for o, c in ka.ops.items() if o not in _QUIET)
        if nb != na:
            what.append(f"ops {nb} -> {na}")
    if b.opcode == a.opcode == "custom-call" and \
            b.inst.custom_call_target != a.inst.custom_call_target:
        what.append(f"target {b.inst.custom_call_target} -> {a.inst.custom_call_target}")
    if not what and kb.label != ka.label:
        what.append(f"{kb.label} -> {ka.label}")
    return what


def compare(m: Matching) -> tuple[list[InstructionFate], dict]:
    """Kernel fates (one per before kernel) and the regression section of the result."""
    B, A = m.before, m.after
    KB, of_b = build_kernels(B)
    KA, of_a = build_kernels(A)
    pairs, uncertain, cand, gb, ga = pair_kernels(m, KB, KA, of_a, of_b)
    joined, split = many_to_one(pairs, uncertain, cand, KA, gb, ga)
    holds: dict[int, list[int]] = defaultdict(list)  # after kernel -> before kernels joined in
    for b_i, a_i in joined.items():
        holds[a_i].append(b_i)
    split_off: dict[int, list[int]] = defaultdict(list)  # before kernel -> after kernels split off
    for a_i, b_i in split.items():
        split_off[b_i].append(a_i)
    primary_b = {a: b for b, a in pairs.items()}
    fates: list[InstructionFate] = []
    kernels: list[dict] = []
    for kb in KB:
        b = kb.node
        f = InstructionFate(before=b.name, computation=b.comp, fate="only_before",
                            opcode=b.opcode, op_name=b.op_name, source=B.location(b))
        row = {"before": b.name, "after": None, "status": "only_before", "what": [],
               "label_before": kb.label, "label_after": None, "lines": sorted(kb.lines)}
        fates.append(f)
        kernels.append(row)
        a_i = pairs.get(kb.idx, joined.get(kb.idx))
        if a_i is None:
            if kb.idx in uncertain:
                f.fate = "uncertain"
                names = [KA[a].name for a in uncertain[kb.idx]]
                f.reason = "uncertain: " + ", ".join(names[:4])
                row.update(status="uncertain", candidates=names[:8])
            else:
                f.reason = "no counterpart in the after module"
            continue
        ka = KA[a_i]
        a = ka.node
        f.after = a.name
        if a.opcode == "fusion":
            f.fusion, f.fusion_kind = a.name, a.inst.fusion_kind
        if kb.idx in joined:
            first = primary_b.get(a_i)
            what = [f"joined into {a.name}" + (f" with {KB[first].name}" if first is not None
                                                else "")]
        else:
            what = _what(kb, ka)
            if holds.get(a_i):
                what.append("joined: also holds " + ", ".join(KB[x].name for x in holds[a_i][:3]))
            if split_off.get(kb.idx):
                what.append("split: also into " + ", ".join(KA[x].name
                                                              for x in split_off[kb.idx][:3]))
        f.fate = "changed" if what else "unchanged"
        f.reason = "; ".join(what) if what else "same"
        row.update(after=a.name, status=f.fate, what=what, label_after=ka.label,
                   lines_after=sorted(ka.lines))
    paired_a = set(pairs.values()) | set(joined.values())
    for ka in KA:
        if ka.idx in paired_a:
            continue
        row = {"before": None, "after": ka.name, "status": "only_after", "what": [],
               "label_before": None, "label_after": ka.label, "lines": [],
               "lines_after": sorted(ka.lines)}
        if ka.idx in split:
            kb = KB[split[ka.idx]]
            row.update(before=kb.name, status="changed", label_before=kb.label,
                       what=[f"split off from {kb.name}"])
        kernels.append(row)
    from .changelog import group_changes, kernels_per_line

    changes = [_change(r) for r in kernels if r["status"] != "unchanged"]
    reg = {"kernels": kernels, "changes": changes, "groups": group_changes(kernels),
           "per_line": kernels_per_line(kernels),
           "fusions": [], "pairs": len(pairs), "joined": len(joined), "split": len(split),
           "uncertain": len(uncertain),
           "kernels_before": len(KB), "kernels_after": len(KA)}
    return fates, reg


def _change(row: dict) -> dict:
    what = list(row["what"])
    if row["status"] == "only_before":
        what = what or [row["label_before"]]
    elif row["status"] == "only_after":
        what = what or [row["label_after"]]
    elif row["status"] == "uncertain":
        what = ["uncertain between " + ", ".join(row.get("candidates", [])[:4])]
    return {"before": row["before"], "after": row["after"], "status": row["status"], "what": what}


_LAYOUT_RE = re.compile(r"\{[^{}]*\}")


def layout_changes(m: Matching, reg: dict, found: list[LayoutChange]) -> list[LayoutChange]:
    """Layout changes between paired kernels whose shapes are equal but for the layout
    (a rank or dimension change is a shape change, reported with the kernel)."""
    out = []
    for lc in found:  # the entry signature: only when its shapes are equal
        if lc.before is None and lc.from_ and lc.to and \
                _LAYOUT_RE.sub("", lc.from_) == _LAYOUT_RE.sub("", lc.to):
            out.append(lc)
    B, A = m.before.module, m.after.module
    ib = {i.name: i for c in B.computations for i in c.instructions}
    ia = {i.name: i for c in A.computations for i in c.instructions}
    for row in reg["kernels"]:
        if row["status"] not in ("changed", "unchanged") or not row["before"] or not row["after"]:
            continue
        b, a = ib.get(row["before"]), ia.get(row["after"])
        if b is None or a is None:
            continue
        sb, sa = b.shape, a.shape
        if sb.is_tuple or sa.is_tuple or sb.layout is None or sa.layout is None:
            continue
        if sb.dims_text == sa.dims_text and sb.rank > 1 and sb.layout != sa.layout:
            out.append(LayoutChange(a.name, b.name, row.get("computation") or "",
                                    str(sb.layout), str(sa.layout)))
    return out
