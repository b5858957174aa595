"""A computation too big for one picture, drawn in parts that always render.

An optimized module is scheduled: its entry computation's text order is the order the
kernels run in, which for a model is layer after layer (forward, then backward). So the parts
are consecutive runs of the schedule, each of at most ``size`` instructions, fusions drawn as
single nodes. A value made in an earlier part enters as a small "from %name" stub, so each
part shows where its inputs come from without drawing the whole graph.
"""

from __future__ import annotations

from ..hlo.model import Computation, Module
from . import palette
from .dot import DotGraph, HtmlLabel, Text
from .escape import html_text
from .views import Drawer, _graph, find_computation, legend

PART_SIZE = 250   # instructions at most
PART_EDGES = 500  # operand edges at most: backward-pass kernels read many saved values


def _chunks(insts: list, size: int, edges: int) -> list[list]:
    out, cur, cost = [], [], 0
    for i in insts:
        c = len(i.operands)
        if cur and (len(cur) >= size or cost + c > edges):
            out.append(cur)
            cur, cost = [], 0
        cur.append(i)
        cost += c
    return out + [cur] if cur or not out else out


def computation_parts(module: Module, comp_name: str | None = None,
                      size: int = PART_SIZE, edges: int = PART_EDGES) -> list[DotGraph]:
    """One picture per run of the computation's schedule (at most ``size`` instructions and
    ``edges`` operand edges each)."""
    comp = find_computation(module, comp_name) if comp_name else module.entry_computation
    chunks = _chunks(comp.instructions, size, edges)
    out = []
    first = 1
    for n, chunk in enumerate(chunks, 1):
        names = {i.name for i in chunk}
        part = Computation(name=comp.name, instructions=list(chunk),
                           root=chunk[-1].name if chunk else comp.root)
        g = _graph(f"{module.name}: %{comp.name}, part {n} of {len(chunks)} "
                   f"(instructions {first}-{first + len(chunk) - 1} in schedule order)")
        first += len(chunk)
        d = Drawer(module, g, fusions="collapse")
        drawn, ins = d.draw(part)
        stubs: dict[str, str] = {}
        for inst in chunk:
            for k, op in enumerate(inst.operands):
                if op in names:
                    continue
                if op not in stubs:
                    stubs[op] = g.node({"label": HtmlLabel(
                        f'<font point-size="9">from %{html_text(op, 48)}</font>'),
                        "shape": "plaintext", "style": "",
                        "tooltip": Text(f"%{op}: made in another part")})
                targets = ins.get(inst.name, [])
                for dst in (targets[k] if k < len(targets) else []):
                    g.edge(stubs[op], dst, style="dashed", color=palette.CALL_BORDER)
        legend(g, d.used, palette.CATEGORIES)
        out.append(g)
    return out
