"""After-side analyses: fusions, added instructions, layout changes, source roll-up,
kernel counts. They read the Matching and the fates; they do not change them."""

from __future__ import annotations

from collections import defaultdict

from . import partition  # gpu helper: SPMD shard relation
from .match import Matching
from .result import Added, FusionInfo, InstructionFate, LayoutChange
from .view import Node, View

NOT_KERNELS = {"parameter", "constant", "get-tuple-element", "tuple", "bitcast",
               "after-all", "partition-id", "replica-id", "opt-barrier", "while",
               "conditional", "call", "add-dependency", "domain"}


def _operand_bytes(view: View, n: Node) -> int:
    comp = view.module.by_name.get(n.comp)
    if comp is None:
        return 0
    total = 0
    for o in dict.fromkeys(n.inst.operands):
        oi = comp.by_name.get(o)
        if oi is not None:
            total += oi.shape.byte_size
    return total


def kernels(view: View) -> tuple[int, int]:
    """(count, bytes read + written) of top-level instructions that run as kernels."""
    count = total = 0
    for n in view.nodes:
        if n.top and n.fusion < 0 and n.home == n.idx and n.opcode not in NOT_KERNELS:
            if view.kind == "before" and n.alias >= 0:
                continue
            count += 1
            total += n.inst.shape.byte_size + _operand_bytes(view, n)
    return count, total


def fusions(m: Matching, fates: list[InstructionFate]) -> list[FusionInfo]:
    A, B = m.after, m.before
    held: dict[str, list[InstructionFate]] = defaultdict(list)
    for f in fates:
        if f.fusion and f.fate in ("fused", "merged", "rewritten"):
            held[f.fusion].append(f)
            for other in f.also_in:  # fusion copied it into these kernels too
                held[other].append(f)
    bnode = {}
    for n in B.nodes:
        bnode.setdefault((n.comp, n.name), n)
    out = []
    for n in A.nodes:
        if n.opcode != "fusion" or n.fusion >= 0:
            continue
        inst = n.inst
        fi = FusionInfo(name=n.name, kind=inst.fusion_kind,
                        computation=inst.calls[0] if inst.calls else None)
        hs = held.get(n.name, [])
        fi.before = [f.before for f in hs]
        fi.inputs = list(inst.operands)
        fi.outputs = [s.text for s in inst.shape.leaves()]
        fi.bytes_read = _operand_bytes(A, n)
        fi.bytes_written = inst.shape.byte_size
        ub = 0
        srcs = {}
        for f in hs:
            b = bnode.get((f.computation, f.before))
            if b is None or b.opcode in ("parameter", "constant") or f.fate == "merged":
                continue
            ub += b.inst.shape.byte_size + _operand_bytes(B, b)
            if f.source:
                srcs[f.source] = 1
        fi.unfused_bytes = ub
        fi.sources = list(srcs)
        out.append(fi)
    out.sort(key=lambda f: (-(f.unfused_bytes - f.bytes_read - f.bytes_written), f.name))
    return out


def layout_copy(view: View, n: Node) -> tuple[str, str] | None:
    """(from, to) layouts when ``n`` is a copy that changes its operand's layout, else None
    (a copy between equal layouts is copy insertion's: buffers that must not alias)."""
    if n.opcode != "copy" or not n.inst.operands:
        return None
    comp = view.module.by_name.get(n.comp)
    src = comp.by_name.get(n.inst.operands[0]) if comp is not None else None
    if src is None or src.shape.is_tuple or n.inst.shape.is_tuple:
        return None
    lf, lt = src.shape.layout, n.inst.shape.layout
    if lf is None or lt is None or lf == lt:
        return None
    return str(lf), str(lt)


def _added_reason(n: Node, view: View | None = None) -> str:
    op = n.opcode
    if op == "copy":
        if view is not None and layout_copy(view, n) is not None:
            return "copy for a layout change (counted in layout changes)"
        return "copy inserted to keep buffers apart (copy insertion)"
    if op == "transpose":
        return "transpose for a layout change"
    if op == "bitcast":
        return "bitcast: a free reshape/transpose under the chosen layout"
    if op == "custom-call":
        return f"library call {n.inst.custom_call_target or ''}".strip()
    coll = partition.collective_reason(n.inst)  # gpu helper: collectives
    if coll:
        return coll
    if op.endswith("-start") or op.endswith("-done") or op.endswith("-update"):
        return "async pair"
    if op == "constant":
        return "constant created by folding"
    if op in ("tuple", "get-tuple-element"):
        return "tuple plumbing (multi-output fusion, outputs)"
    if op == "broadcast":
        return "broadcast created by simplification"
    return f"{op} added by optimization"


def added(m: Matching) -> list[Added]:
    A, B = m.after, m.before
    bfps = {n.fp for n in B.nodes if n.alias < 0}
    out = []
    for n in A.nodes:
        if n.opcode in ("parameter", "fusion") or m.a2b[n.idx] >= 0:
            continue
        if n.fusion >= 0:
            # inside fusions only constants created by folding are news worth reporting
            if not (n.opcode == "constant" and n.fp not in bfps):
                continue
        elif n.opcode == "constant" and n.fp in bfps:
            continue
        out.append(Added(n.name, n.comp, n.opcode, n.inst.shape.text, _added_reason(n, A)))
    order = {"copy": 0, "transpose": 0, "custom-call": 1, "constant": 3, "bitcast": 4,
             "get-tuple-element": 5, "tuple": 5}
    out.sort(key=lambda a: order.get(a.opcode, 2))
    return out


def layouts(m: Matching) -> list[LayoutChange]:
    A, B = m.after, m.before
    out = []
    eb = B.module.attributes.get("entry_computation_layout")
    ea = A.module.attributes.get("entry_computation_layout")
    if eb and ea and eb != ea and not partition.same_entry_layouts(eb, ea):  # gpu: shards
        out.append(LayoutChange("ENTRY", None, A.module.entry, eb, ea))
    for b in B.nodes:
        y = m.b2a[b.idx]
        if y < 0 or b.alias >= 0:
            continue
        a = A.nodes[y]
        if not a.top or a.opcode == "parameter" and a.comp == A.module.entry and ea:
            continue
        sb, sa = b.inst.shape, a.inst.shape
        if sb.is_tuple or sa.is_tuple or sb.layout is None or sa.layout is None:
            continue
        if sb.layout != sa.layout and sb.rank > 1:
            out.append(LayoutChange(a.name, b.name, a.comp, str(sb.layout), str(sa.layout)))
    for a in A.nodes:  # copies optimization added to change a layout: listed under Added too
        if a.opcode == "copy" and a.top and a.fusion < 0 and m.a2b[a.idx] < 0:
            lc = layout_copy(A, a)
            if lc is not None:
                out.append(LayoutChange(a.name, None, a.comp, lc[0], lc[1]))
    return out


def by_source(fates: list[InstructionFate]) -> list[dict]:
    agg: dict[str, dict] = {}
    for f in fates:
        if not f.source or f.fate in ("inlined",):
            continue
        d = agg.setdefault(f.source, {"source": f.source, "instructions": 0, "kernels": {}})
        d["instructions"] += 1
        k = f.fusion or (f.after if f.fate in ("kept", "rewritten", "merged") else None)
        if f.fate == "folded":
            k = "(compile time)"
        if k:
            d["kernels"][k] = 1
    out = []
    for d in agg.values():
        d["kernels"] = list(d["kernels"])
        out.append(d)
    out.sort(key=lambda d: (-d["instructions"], d["source"]))
    return out
