"""networkx views of a module: data flow per computation, and the call graph."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model import Computation, Module

if TYPE_CHECKING:  # networkx loads in ~0.15 s; only the graph views need it
    import networkx as nx


def computation_graph(comp: Computation) -> "nx.MultiDiGraph":
    """Operand -> user edges, one per operand use (``index`` = operand position).

    Nodes are instruction names with ``opcode``, ``shape`` and ``instruction`` attributes.
    """
    import networkx as nx

    g = nx.MultiDiGraph(name=comp.name)
    for inst in comp.instructions:
        g.add_node(inst.name, opcode=inst.opcode, shape=inst.shape.text, instruction=inst)
    for inst in comp.instructions:
        for k, op in enumerate(inst.operands):
            g.add_edge(op, inst.name, index=k)
    return g


def call_graph(module: Module) -> "nx.MultiDiGraph":
    """Computation -> called computation, one edge per call site (``instruction``, ``role``)."""
    import networkx as nx

    g = nx.MultiDiGraph(name=module.name)
    for comp in module.computations:
        g.add_node(comp.name, entry=comp.is_entry, instructions=len(comp.instructions))
    for comp in module.computations:
        for inst in comp.instructions:
            for role, callees in inst.called.items():
                for callee in callees:
                    g.add_edge(comp.name, callee, instruction=inst.name, role=role)
    return g


def to_networkx(obj: Module | Computation) -> "nx.MultiDiGraph":
    """A Computation's data-flow graph, or a Module's call graph."""
    if isinstance(obj, Module):
        return call_graph(obj)
    return computation_graph(obj)
