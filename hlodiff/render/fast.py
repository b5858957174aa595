"""Layout settings that keep Graphviz fast on big pictures.

A training step's entry computation is a wide graph with long edges (weights used again in
the backward pass, activations saved for it): with its default effort, ``dot`` spent over
60 s on a 235-node, 710-edge picture of a 2-layer GPT (most of it in the network-simplex
placement of ~40,000 virtual nodes and in spline routing). Capping the simplex and
crossing-minimisation iterations and drawing straight edges lays it out in a few seconds;
the picture stays readable, edges are straight lines instead of curves.
"""

from __future__ import annotations

from .dot import DotGraph

FAST_LAYOUT_NODES = 150  # from this many nodes (or 3x as many edges) on
FAST_LAYOUT = {"nslimit": 0.2, "nslimit1": 0.2, "mclimit": 0.05, "searchsize": 10,
               "remincross": "false", "splines": "false"}


def fast_layout(g: DotGraph) -> bool:
    """Switch ``g`` to the fast settings when it is big; True when it did."""
    if g.node_count < FAST_LAYOUT_NODES and len(g.edges) < 3 * FAST_LAYOUT_NODES:
        return False
    for k, v in FAST_LAYOUT.items():
        g.graph_attrs.setdefault(k, v)
    return True
