"""Pictures of one module: a computation with its fusions as clusters (or single nodes),
one fusion's computation, or the neighbourhood of one instruction. Each returns a DotGraph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..errors import InputError
from ..hlo.graph import computation_graph
from ..hlo.model import Computation, Instruction, Module
from . import palette
from .dot import Cluster, DotGraph, HtmlLabel, Text
from .escape import html_text

SHAPE_LIMIT = 44
CONTROL_FLOW = frozenset({"while", "conditional", "async-start"})
MAX_DEPTH = 6

# style_fn(computation name, instruction) -> (fill, border, style, fate-or-category key)
StyleFn = Callable[[str, Instruction], tuple[str, str, str, str]]
# cluster_fn(computation name, instruction) -> (key, label markup, tooltip) or None
ClusterFn = Callable[[str, Instruction], "tuple[str, str, str] | None"]
# tooltip_fn(computation name, instruction) -> extra tooltip lines
NoteFn = Callable[[str, Instruction], list[str]]


def instruction_text(inst: Instruction) -> str:
    """The instruction as HLO text (rebuilt from the model; attributes as written)."""
    if inst.opcode == "constant":
        args = inst.literal if inst.literal is not None else "…"
    elif inst.opcode == "parameter":
        args = str(inst.parameter_number)
    else:
        args = ", ".join("%" + o for o in inst.operands)
    opcode = f"{inst.async_wrapped}-{inst.opcode.split('-')[-1]}" if inst.async_wrapped else inst.opcode
    attrs = "".join(f", {k}={v}" for k, v in inst.attrs.items())
    return f"{'ROOT ' if inst.is_root else ''}%{inst.name} = {inst.shape.text} {opcode}({args}){attrs}"


def category_style(comp: str, inst: Instruction) -> tuple[str, str, str, str]:
    cat = palette.category(inst.opcode)
    fill, border, _ = palette.CATEGORIES[cat]
    return fill, border, "solid", cat


def node_label(inst: Instruction, extra: list[str] | None = None, collapsed: bool = False) -> HtmlLabel:
    op = inst.opcode
    if inst.async_wrapped:
        op = f"{inst.async_wrapped}-{inst.opcode.split('-')[-1]}"
    if op == "parameter":
        op = f"parameter {inst.parameter_number}"
    elif op == "fusion" and inst.fusion_kind:
        op = f"fusion {inst.fusion_kind}"
    elif op == "constant" and inst.literal is not None and len(inst.literal) <= 16:
        op = f"constant {inst.literal}"
    lines = [f"<b>{html_text(op, 40)}</b>"]
    if inst.custom_call_target is not None:
        lines.append(f'<font point-size="9">{html_text(inst.custom_call_target, 40)}</font>')
    lines.append(f'<font point-size="9">{html_text(inst.shape.dims_text, SHAPE_LIMIT)}</font>')
    lines.append(f'<font point-size="8" color="#444444">%{html_text(inst.name, 48)}</font>')
    for e in extra or []:
        lines.append(f'<font point-size="8" color="#444444">{e}</font>')
    return HtmlLabel("<br/>".join(lines))


def tooltip(inst: Instruction, comp: str, notes: list[str] | None = None) -> Text:
    parts = [instruction_text(inst)]
    if inst.op_name:
        parts.append(f"op_name: {inst.op_name}")
    if inst.source:
        parts.append(f"source: {inst.source}")
    parts.append(f"in computation %{comp}")
    parts.extend(notes or [])
    return Text("\n".join(parts), 4000)


def _node_attrs(style: tuple[str, str, str, str], label: HtmlLabel, tip: Text) -> dict:
    fill, border, line, _key = style
    st = "rounded,filled" + ("" if line == "solid" else "," + line)
    return {"label": label, "tooltip": tip, "fillcolor": fill, "color": border, "style": st}


@dataclass
class Drawer:
    """Draws computations of ``module`` into ``graph``, expanding what the options say."""

    module: Module
    graph: DotGraph
    style_fn: StyleFn = category_style
    fusions: str = "cluster"  # "cluster" or "collapse"
    call_clusters: bool = True  # False: a call's body is drawn inline, in the caller's context
    control_flow: bool = True  # draw while/conditional bodies as clusters of their own
    cluster_fn: ClusterFn | None = None
    note_fn: NoteFn | None = None
    used: set[str] = field(default_factory=set)  # style keys drawn (for the legend)
    site: str | None = None  # the call instruction whose body is being drawn
    _group: dict = field(default_factory=dict)
    _drawn_bodies: set[str] = field(default_factory=set)

    def _context(self, comp: str, inst: Instruction, parent: Cluster | None) -> Cluster | None:
        if self.cluster_fn is None:
            return parent
        got = self.cluster_fn(comp, inst)
        if got is None:
            return parent
        key, label, tip = got
        k = (parent.id if parent else "root", key)
        if k not in self._group:
            self._group[k] = self.graph.cluster(
                {"label": HtmlLabel(label), "tooltip": Text(tip), "style": "rounded,filled",
                 "color": palette.CLUSTER_BORDER, "fillcolor": palette.CLUSTER_FILL,
                 "penwidth": 1.4, "fontsize": 10, "margin": 10}, parent)
        return self._group[k]

    def plain_node(self, comp: str, inst: Instruction, parent: Cluster | None,
                   extra: list[str] | None = None) -> str:
        style = self.style_fn(comp, inst)
        self.used.add(style[3])
        notes = self.note_fn(comp, inst) if self.note_fn else []
        return self.graph.node(_node_attrs(style, node_label(inst, extra), tooltip(inst, comp, notes)),
                               parent)

    def draw(self, comp: Computation, parent: Cluster | None = None, depth: int = 0,
             skip_params: bool = False) -> tuple[dict[str, str], dict[str, list[list[str]]]]:
        """Draw ``comp``; (value node per instruction, operand target nodes per instruction).

        ``skip_params``: parameters with users are not drawn; the second result then maps
        ``"#k"`` to the nodes that read parameter k (a fusion's operand k goes there).
        """
        out: dict[str, str] = {}
        ins: dict[str, list[list[str]]] = {}
        g = self.graph
        skipped: dict[str, int] = {}
        if skip_params:
            used_ops = {o for i in comp.instructions for o in i.operands}
            skipped = {p.name: p.parameter_number or 0 for p in comp.parameters
                       if p.name in used_ops and p.name != comp.root}
        for inst in comp.instructions:
            if inst.name in skipped:
                continue
            ctx = self._context(comp.name, inst, parent)
            callee = self.module.by_name.get(inst.calls[0]) if inst.calls else None
            if inst.opcode == "fusion" and callee and self.fusions == "cluster" and depth < MAX_DEPTH:
                style = self.style_fn(comp.name, inst)
                self.used.add(style[3])
                notes = self.note_fn(comp.name, inst) if self.note_fn else []
                kind = html_text(inst.fusion_kind or "")
                label = (f"<b>%{html_text(inst.name, 60)}</b> <font point-size=\"9\">fusion {kind}"
                         f" → {html_text(inst.shape.dims_text, SHAPE_LIMIT)}</font>")
                cl = g.cluster({"label": HtmlLabel(label),
                                "tooltip": tooltip(inst, comp.name, notes),
                                "style": "rounded,filled", "color": style[1],
                                "fillcolor": palette.CLUSTER_FILL, "penwidth": 1.4,
                                "fontsize": 10, "margin": 8}, ctx)
                sub_out, sub_ins = self.draw(callee, cl, depth + 1, skip_params=True)
                params = {p.parameter_number: [sub_out[p.name]] for p in callee.parameters
                          if p.name in sub_out}
                ins[inst.name] = [params.get(k) or sub_ins.get(f"#{k}", [])
                                  for k in range(len(inst.operands))]
                out[inst.name] = sub_out[callee.root]
                continue
            if inst.opcode == "call" and callee and depth < MAX_DEPTH:
                nid = self.plain_node(comp.name, inst, ctx)
                target = ctx
                if self.call_clusters:
                    target = g.cluster({"label": HtmlLabel(f"call %{html_text(callee.name, 60)}"),
                                        "style": "rounded,dashed", "color": palette.CALL_BORDER,
                                        "fontsize": 10}, ctx)
                saved, self.site = self.site, inst.name
                sub_out, _ = self.draw(callee, target, depth + 1)
                self.site = saved
                ins[inst.name] = [[nid]] * len(inst.operands)
                for p in callee.parameters:
                    g.edge(nid, sub_out[p.name], style="dashed", color=palette.CALL_BORDER)
                out[inst.name] = sub_out[callee.root]
                continue
            nid = self.plain_node(comp.name, inst, ctx)
            out[inst.name] = nid
            ins[inst.name] = [[nid]] * len(inst.operands)
            if inst.opcode in CONTROL_FLOW and self.control_flow and depth < MAX_DEPTH:
                for role, callees in inst.called.items():
                    for cname in callees:
                        body = self.module.by_name.get(cname)
                        if body is None or cname in self._drawn_bodies:
                            continue
                        self._drawn_bodies.add(cname)
                        cl = g.cluster({"label": HtmlLabel(
                            f"{html_text(inst.opcode)} {html_text(role)}: %{html_text(cname, 60)}"),
                            "style": "rounded,dashed", "color": palette.CALL_BORDER,
                            "fontsize": 10}, parent)
                        sub_out, _ = self.draw(body, cl, depth + 1)
                        first = body.parameters[0].name if body.parameters else body.root
                        g.edge(nid, sub_out[first], style="dashed", color=palette.CALL_BORDER,
                               label=HtmlLabel(f'<font point-size="8">{html_text(role)}</font>'))
        for inst in comp.instructions:
            targets = ins.get(inst.name, [])
            for k, op in enumerate(inst.operands):
                dsts = targets[k] if k < len(targets) else []
                if op in skipped:
                    ins.setdefault(f"#{skipped[op]}", []).extend(dsts)
                    continue
                src = out.get(op)
                for dst in dsts:
                    if src and dst:
                        g.edge(src, dst)
        return out, ins


def legend(graph: DotGraph, keys: set[str], table: dict, title: str = "colours") -> None:
    """A legend node listing the colours used (in palette order)."""
    rows = []
    for key, entry in table.items():
        if key not in keys:
            continue
        fill, border = entry[0], entry[1]
        text = entry[-1]
        style = entry[2] if len(entry) == 4 else "solid"
        if style != "solid":
            text += f", {style} border"
        rows.append(f'<tr><td bgcolor="{fill}" color="{border}" width="22"> </td>'
                    f'<td align="left">{html_text(text)}</td></tr>')
    if not rows:
        return
    inner = ('<table border="0" cellborder="1" cellspacing="2" cellpadding="3">'
             f'<tr><td colspan="2" border="0"><b>{html_text(title)}</b></td></tr>'
             + "".join(rows) + "</table>")
    graph.node({"label": HtmlLabel(inner), "shape": "plain", "style": "", "tooltip": Text(title)},
               node_id="legend")


def _graph(title: str | None = None) -> DotGraph:
    attrs = {}
    if title:
        attrs = {"label": HtmlLabel(f"<b>{html_text(title, 200)}</b>"), "labelloc": "t",
                 "fontsize": 13}
    return DotGraph(attrs)


def find_computation(module: Module, name: str) -> Computation:
    comp = module.by_name.get(name.lstrip("%"))
    if comp is None:
        names = ", ".join(sorted(module.by_name)[:8])
        raise InputError(f"no computation %{name.lstrip('%')} in {module.name} "
                         f"(computations: {names}{', …' if len(module.by_name) > 8 else ''})")
    return comp


def computation_picture(module: Module, comp_name: str | None = None,
                        collapse_fusions: bool = False) -> DotGraph:
    """A computation (default: the entry) with fusions as clusters or single nodes."""
    comp = find_computation(module, comp_name) if comp_name else module.entry_computation
    g = _graph(f"{module.name}: %{comp.name}")
    d = Drawer(module, g, fusions="collapse" if collapse_fusions else "cluster")
    d.draw(comp)
    legend(g, d.used, palette.CATEGORIES)
    return g


def find_fusion(module: Module, name: str) -> tuple[Instruction | None, Computation]:
    """(fusion instruction, fused computation) for a fusion instruction or computation name."""
    name = name.lstrip("%")
    for comp in module.computations:
        inst = comp.by_name.get(name)
        if inst is not None and inst.opcode == "fusion" and inst.calls:
            return inst, module.computation(inst.calls[0])
    if name in module.by_name:
        fused = module.by_name[name]
        for inst in module.instructions():
            if inst.opcode == "fusion" and name in inst.calls:
                return inst, fused
        return None, fused
    fusions = [i.name for i in module.instructions() if i.opcode == "fusion"]
    hint = f" (fusions: {', '.join(fusions[:8])}{', …' if len(fusions) > 8 else ''})" if fusions \
        else " (the module has no fusions; is it a before_optimizations dump?)"
    raise InputError(f"no fusion %{name} in {module.name}{hint}")


def fused_computation_into(d: Drawer, fusion: Instruction | None, fused: Computation,
                           parent: Cluster | None, outer_comp: str | None = None
                           ) -> dict[str, str]:
    """Draw a fused computation with its inputs and output named; value node per instruction."""
    g = d.graph
    out, _ = d.draw(fused, parent, depth=1)
    for p in fused.parameters:
        op = None
        if fusion is not None and p.parameter_number is not None \
                and p.parameter_number < len(fusion.operands):
            op = fusion.operands[p.parameter_number]
        if op:
            nid = g.node({"label": HtmlLabel(f'<font point-size="9">input %{html_text(op, 48)}</font>'),
                          "shape": "plaintext", "style": "", "tooltip": Text(
                              f"operand {p.parameter_number} of %{fusion.name}: %{op}")}, parent)
            g.edge(nid, out[p.name], style="dashed", arrowhead="none")
    if fusion is not None:
        oid = g.node({"label": HtmlLabel(
            f'<font point-size="9">output of %{html_text(fusion.name, 48)}<br/>'
            f'{html_text(fusion.shape.dims_text, SHAPE_LIMIT)}</font>'),
            "shape": "plaintext", "style": "", "tooltip": Text(
                f"%{fusion.name} ({fusion.fusion_kind or 'fusion'}) in %{outer_comp or ''}")},
            parent)
        g.edge(out[fused.root], oid, style="dashed")
    return out


def fusion_picture(module: Module, name: str) -> DotGraph:
    fusion, fused = find_fusion(module, name)
    title = f"%{fusion.name} ({fusion.fusion_kind}) = %{fused.name}" if fusion else f"%{fused.name}"
    g = _graph(f"{module.name}: {title}")
    d = Drawer(module, g)
    fused_computation_into(d, fusion, fused, None, fusion.computation if fusion else None)
    legend(g, d.used, palette.CATEGORIES)
    return g


def focus_picture(module: Module, name: str, radius: int = 2) -> DotGraph:
    """Instructions within ``radius`` operand/user steps of one instruction."""
    name = name.lstrip("%")
    comp = None
    for c in [module.entry_computation, *module.computations]:
        if name in c.by_name:
            comp = c
            break
    if comp is None:
        raise InputError(f"no instruction %{name} in {module.name}")
    import networkx as nx  # here, not at the top: `hlodiff BEFORE AFTER` never needs it (speed)

    cg = computation_graph(comp)
    keep = set(nx.ego_graph(cg.to_undirected(as_view=True), name, radius=max(radius, 0)))
    g = _graph(f"{module.name}: %{name} in %{comp.name}, radius {radius}")
    d = Drawer(module, g, fusions="collapse", control_flow=False)
    ids: dict[str, str] = {}
    for inst in comp.instructions:
        if inst.name not in keep:
            continue
        hidden = sum(1 for n in set(cg.predecessors(inst.name)) | set(cg.successors(inst.name))
                     if n not in keep)
        extra = [f"+{hidden} not shown"] if hidden else None
        nid = d.plain_node(comp.name, inst, None, extra)
        ids[inst.name] = nid
        if inst.name == name:
            for n, attrs in g.root.nodes:
                if n == nid:
                    attrs.update(penwidth=3, color=palette.FOCUS_BORDER)
    for inst in comp.instructions:
        if inst.name in ids:
            for op in inst.operands:
                if op in ids:
                    g.edge(ids[op], ids[inst.name])
    legend(g, d.used, palette.CATEGORIES)
    return g
