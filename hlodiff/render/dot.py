"""A small DOT writer: nodes, edges and nested clusters, with every user string escaped.

We write DOT text ourselves rather than through ``graphviz.Digraph`` so that escaping is
in one place (see escape.py): the graphviz package passes any string that looks like
``<...>`` through as an HTML-like label and leaves backslashes alone, and both of those
would let text from a dump change the picture or the SVG.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .escape import dot_string, html_label

_SAFE_VALUE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.#,: ")


def _attr_value(key: str, value: object) -> str:
    """Values we generate (colours, styles, numbers) quoted; labels arrive pre-built."""
    if isinstance(value, HtmlLabel):
        return html_label(value.markup)
    if isinstance(value, Text):
        return dot_string(value.text, value.limit)
    s = str(value)
    if not set(s) <= _SAFE_VALUE:  # never happens for our own values; be strict anyway
        return dot_string(s)
    return '"' + s + '"'


def _attrs(attrs: dict[str, object]) -> str:
    parts = [f"{k}={_attr_value(k, v)}" for k, v in attrs.items() if v is not None]
    return "[" + ", ".join(parts) + "]" if parts else ""


@dataclass(frozen=True, slots=True)
class HtmlLabel:
    """Markup already escaped with escape.html_text."""

    markup: str


@dataclass(frozen=True, slots=True)
class Text:
    """User text for a quoted attribute (tooltips): escaped when written."""

    text: str
    limit: int | None = 4000


@dataclass(slots=True)
class Cluster:
    id: str
    attrs: dict[str, object] = field(default_factory=dict)
    nodes: list[tuple[str, dict[str, object]]] = field(default_factory=list)
    clusters: list["Cluster"] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)  # raw statements we generate (rank=...)


class DotGraph:
    """Build a digraph; ``source()`` gives DOT text, ``node_count`` the size for the caps."""

    def __init__(self, graph_attrs: dict[str, object] | None = None,
                 node_attrs: dict[str, object] | None = None,
                 edge_attrs: dict[str, object] | None = None) -> None:
        self.root = Cluster("root")
        self.graph_attrs = {"rankdir": "TB", "newrank": "true", "fontname": "Helvetica",
                            "fontsize": 11, "nodesep": 0.25, "ranksep": 0.35,
                            "bgcolor": "white", **(graph_attrs or {})}
        self.node_attrs = {"shape": "box", "style": "rounded,filled", "fontname": "Helvetica",
                           "fontsize": 10, "margin": "0.08,0.03", "penwidth": 1.2,
                           **(node_attrs or {})}
        self.edge_attrs = {"color": "#555555", "arrowsize": 0.6, "penwidth": 0.9,
                           **(edge_attrs or {})}
        self.edges: list[tuple[str, str, dict[str, object]]] = []
        self._ids = 0
        self._clusters = 0
        self.node_count = 0
        self.node_ids: set[str] = set()

    def new_id(self) -> str:
        self._ids += 1
        return f"n{self._ids}"

    def node(self, attrs: dict[str, object], cluster: Cluster | None = None,
             node_id: str | None = None) -> str:
        nid = node_id or self.new_id()
        (cluster or self.root).nodes.append((nid, attrs))
        self.node_count += 1
        self.node_ids.add(nid)
        return nid

    def edge(self, tail: str, head: str, **attrs: object) -> None:
        self.edges.append((tail, head, attrs))

    def cluster(self, attrs: dict[str, object], parent: Cluster | None = None) -> Cluster:
        self._clusters += 1
        c = Cluster(f"cluster_{self._clusters}", attrs)
        (parent or self.root).clusters.append(c)
        return c

    def source(self) -> str:
        out = ["digraph hlo {"]
        out.append("  graph " + _attrs(self.graph_attrs) + ";")
        out.append("  node " + _attrs(self.node_attrs) + ";")
        out.append("  edge " + _attrs(self.edge_attrs) + ";")
        self._write(self.root, out, "  ", top=True)
        for tail, head, attrs in self.edges:
            out.append(f"  {tail} -> {head} {_attrs(attrs)};".rstrip(" ;") + ";")
        out.append("}")
        return "\n".join(out) + "\n"

    def _write(self, c: Cluster, out: list[str], ind: str, top: bool = False) -> None:
        if not top:
            out.append(f"{ind}subgraph {c.id} {{")
            ind2 = ind + "  "
            for k, v in c.attrs.items():
                if v is not None:
                    out.append(f"{ind2}{k}={_attr_value(k, v)};")
        else:
            ind2 = ind
        for nid, attrs in c.nodes:
            out.append(f"{ind2}{nid} {_attrs(attrs)};")
        for sub in c.clusters:
            self._write(sub, out, ind2)
        out.extend(ind2 + s for s in c.extra)
        if not top:
            out.append(f"{ind}}}")
