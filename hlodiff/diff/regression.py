"""Regression mode: two optimized modules, compared kernel by kernel.

Top-level instructions are paired through the pairs of what they compute: a fusion goes
with the after fusion holding most of its fused instructions' partners. A before fusion
whose insides land in several after fusions was *split*; an after fusion holding insides of
several before fusions was *joined*.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from .match import Matching
from .result import InstructionFate
from .view import Node, View


def _tops(view: View) -> list[Node]:
    return [n for n in view.nodes if n.fusion < 0 and n.home == n.idx]


def compare(m: Matching) -> tuple[list[InstructionFate], dict]:
    B, A = m.before, m.after
    inner_homes: dict[int, Counter] = defaultdict(Counter)
    inner_count_b: Counter = Counter()
    for n in B.nodes:
        if n.fusion >= 0 and n.alias < 0 and n.opcode != "parameter":
            inner_count_b[n.fusion] += 1
            y = m.b2a[n.idx]
            if y >= 0:
                inner_homes[n.fusion][A.nodes[y].home] += 1
    inner_count_a: Counter = Counter(n.fusion for n in A.nodes
                                     if n.fusion >= 0 and n.alias < 0 and n.opcode != "parameter")
    claimed: dict[int, int] = {}
    by_target: dict[tuple[str, int], list[int]] = defaultdict(list)
    for n in _tops(A):
        if n.alias >= 0 and n.opcode != "fusion":
            by_target[(n.opcode, A.resolve(n.idx))].append(n.idx)
    fates: list[InstructionFate] = []
    changes: list[dict] = []
    fusion_notes: list[dict] = []
    sources_of: dict[int, list[int]] = defaultdict(list)  # after fusion -> before fusions
    for b in _tops(B):
        partner = -1
        if b.opcode == "fusion":
            homes = inner_homes.get(b.idx)
            if homes:
                partner = homes.most_common(1)[0][0]
                fusions_hit = [h for h in homes if A.nodes[h].opcode == "fusion"]
                for h in fusions_hit:
                    sources_of[h].append(b.idx)
                if len(fusions_hit) > 1:
                    fusion_notes.append({"kind": "split", "before": [b.name],
                                         "after": [A.nodes[h].name for h in fusions_hit],
                                         "what": f"{b.name} split into {len(fusions_hit)} fusions"})
            elif m.b2a[b.idx] >= 0:  # nothing of its own inside (a bitcast/copy fusion)
                partner = A.nodes[m.b2a[b.idx]].home
        elif b.alias >= 0:
            y = m.b2a[B.resolve(b.idx)]
            for c in by_target.get((b.opcode, y), ()) if y >= 0 else ():
                if c not in claimed:
                    partner = c
                    break
        else:
            y = m.b2a[b.idx]
            if y >= 0:
                partner = A.nodes[y].home
        if partner in claimed and b.opcode != "fusion":
            partner = -1
        f = InstructionFate(before=b.name, computation=b.comp, fate="only_before",
                            opcode=b.opcode, op_name=b.op_name, source=B.location(b))
        if partner < 0:
            f.reason = "no counterpart in the after module"
            changes.append({"before": b.name, "after": None, "status": "only_before",
                            "what": [f"{b.opcode} {b.inst.shape.text}"]})
            fates.append(f)
            continue
        claimed.setdefault(partner, b.idx)
        a = A.nodes[partner]
        f.after = a.name
        if a.opcode == "fusion":
            f.fusion, f.fusion_kind = a.name, a.inst.fusion_kind
        what = []
        if a.opcode != b.opcode:
            what.append(f"opcode {b.opcode} -> {a.opcode}")
        if a.inst.shape.text != b.inst.shape.text:
            what.append(f"shape {b.inst.shape.text} -> {a.inst.shape.text}")
        if b.opcode == "fusion" and a.opcode == "fusion":
            if a.inst.fusion_kind != b.inst.fusion_kind:
                what.append(f"kind {b.inst.fusion_kind} -> {a.inst.fusion_kind}")
            nb, na = inner_count_b[b.idx], inner_count_a[a.idx]
            if nb != na:
                what.append(f"fused instructions {nb} -> {na}")
        if len(b.inst.operands) != len(a.inst.operands):
            what.append(f"operands {len(b.inst.operands)} -> {len(a.inst.operands)}")
        if b.inst.custom_call_target != a.inst.custom_call_target:
            what.append(f"target {b.inst.custom_call_target} -> {a.inst.custom_call_target}")
        f.fate = "changed" if what else "unchanged"
        f.reason = "; ".join(what) if what else "same"
        if what:
            changes.append({"before": b.name, "after": a.name, "status": "changed", "what": what})
        fates.append(f)
    for h, bs in sources_of.items():
        if len(bs) > 1:
            fusion_notes.append({"kind": "joined", "before": [B.nodes[x].name for x in bs],
                                 "after": [A.nodes[h].name],
                                 "what": f"{len(bs)} fusions joined into {A.nodes[h].name}"})
    for f in fates:
        if f.fate == "changed" and f.fusion:
            fusion_notes.append({"kind": "changed", "before": [f.before], "after": [f.after],
                                 "what": f.reason})
    for n in _tops(A):
        if n.idx not in claimed and n.opcode != "parameter":
            changes.append({"before": None, "after": n.name, "status": "only_after",
                            "what": [f"{n.opcode} {n.inst.shape.text}"]})
    return fates, {"changes": changes, "fusions": fusion_notes}
