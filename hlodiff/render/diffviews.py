"""Pictures of a diff: the before program coloured by fate and grouped by the fusion each
instruction ended in, the after program, and one picture per fusion of the after module
showing the before instructions it holds next to its fused computation.

Used by ``hlodiff diff --svg DIR`` (``render_diff_svgs``) and the HTML report
(``fusion_svgs``: fusion name -> inline SVG text).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..hlo.model import Computation, Instruction, Module
from . import palette
from .dot import DotGraph, HtmlLabel
from .escape import html_text, safe_filename
from .svg import (DEFAULT_MAX_NODES, DEFAULT_TIMEOUT, GraphTooLarge, RenderError, kill_running,
                  require_dot, run_dot, svg_for_html)
from .views import Drawer, _graph, category_style, find_fusion, fused_computation_into, legend

FATE_KEYS = tuple(palette.FATES)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    return getattr(obj, name, default) if not isinstance(obj, dict) else obj.get(name, default)


class _Fates:
    """Fate lookups over a diff result (InstructionFate records)."""

    def __init__(self, result: Any) -> None:
        self.by_key: dict[tuple[str, str], Any] = {}
        self.by_site: dict[tuple[str | None, str, str], Any] = {}
        self.by_fusion: dict[str, list[Any]] = {}
        for f in _get(result, "instructions", []) or []:
            self.by_key.setdefault((_get(f, "computation"), _get(f, "before")), f)
            self.by_site[(_get(f, "call_site"), _get(f, "computation"), _get(f, "before"))] = f
            fus = _get(f, "fusion")
            if fus:
                self.by_fusion.setdefault(fus, []).append(f)
        self.result = result

    def of(self, comp: str, name: str, site: str | None = None) -> Any:
        f = self.by_site.get((site, comp, name)) or self.by_key.get((comp, name))
        if f is None and hasattr(self.result, "fate_of"):
            try:
                f = self.result.fate_of(comp, name)
            except (KeyError, LookupError):
                f = None
        return f

    @staticmethod
    def key(f: Any) -> str:
        fate = _get(f, "fate") if f is not None else None
        return fate if fate in palette.FATES else "unknown"

    def style(self, comp: str, inst: Instruction, site: str | None = None
              ) -> tuple[str, str, str, str]:
        key = self.key(self.of(comp, inst.name, site))
        fill, border, line, _ = palette.FATES[key]
        return fill, border, line, key

    def notes(self, comp: str, inst: Instruction, site: str | None = None) -> list[str]:
        f = self.of(comp, inst.name, site)
        if f is None:
            return ["fate: not recorded"]
        parts = [f"fate: {_get(f, 'fate')}"]
        for label, attr in (("into fusion", "fusion"), ("after", "after"), ("into", "into"),
                            ("why", "reason")):
            v = _get(f, attr)
            if v:
                parts.append(f"{label}: {v}")
        return parts


def _fusion_label(name: str, kind: str | None, n: int | None = None) -> str:
    held = f" · {n} before op{'s' if n != 1 else ''}" if n is not None else ""
    return (f"<b>→ %{html_text(name, 60)}</b><font point-size=\"9\"> {html_text(kind or '')}"
            f"{held}</font>")


def _fusion_kinds(after: Module) -> dict[str, str | None]:
    return {i.name: i.fusion_kind for i in after.instructions() if i.opcode == "fusion"}


def before_picture(result: Any, before: Module, after: Module, fates: _Fates | None = None
                   ) -> DotGraph:
    """The before program: every instruction coloured by fate, clustered by its fusion."""
    fates = fates or _Fates(result)
    kinds = _fusion_kinds(after)

    def cluster_fn(comp: str, inst: Instruction):
        f = fates.of(comp, inst.name, d.site)
        fus = _get(f, "fusion") if f is not None else None
        if not fus:
            return None
        kind = _get(f, "fusion_kind") or kinds.get(fus)
        n = len(fates.by_fusion.get(fus, []))
        return fus, _fusion_label(fus, kind, n), f"ended in fusion %{fus} ({kind or '?'}) of the after module"

    g = _graph(f"before: {before.name} — coloured by what XLA did, boxed by the fusion each op ended in")
    d = Drawer(before, g, fusions="collapse", call_clusters=False, cluster_fn=cluster_fn)
    d.style_fn = lambda c, i: fates.style(c, i, d.site)
    d.note_fn = lambda c, i: fates.notes(c, i, d.site)
    d.draw(before.entry_computation)
    legend(g, d.used, palette.FATES, "fate")
    return g


def after_picture(result: Any, before: Module, after: Module, fates: _Fates | None = None
                  ) -> DotGraph:
    """The after program's entry, fusions as clusters labelled with what they hold."""
    fates = fates or _Fates(result)

    def notes(comp: str, inst: Instruction) -> list[str]:
        held = fates.by_fusion.get(inst.name) if inst.opcode == "fusion" else None
        if not held:
            return []
        names = ", ".join("%" + str(_get(f, "before")) for f in held[:30])
        return [f"holds {len(held)} before instructions: {names}{' …' if len(held) > 30 else ''}"]

    g = _graph(f"after: {after.name} — fusions drawn as boxes")
    d = Drawer(after, g, style_fn=category_style, fusions="cluster", note_fn=notes)
    d.draw(after.entry_computation)
    legend(g, d.used, palette.CATEGORIES)
    return g


def _fusion_infos(result: Any, after: Module) -> list[Any]:
    infos = list(_get(result, "fusions", []) or [])
    if infos:
        return infos
    return [{"name": i.name, "kind": i.fusion_kind, "computation": i.computation}
            for i in after.entry_computation.instructions if i.opcode == "fusion"]


def fusion_diff_picture(info: Any, result: Any, before: Module, after: Module,
                        fates: _Fates | None = None) -> DotGraph:
    """Left: the before instructions a fusion holds (coloured by fate); right: its computation."""
    fates = fates or _Fates(result)
    name = _get(info, "name")
    fusion, fused = find_fusion(after, name)
    kind = _get(info, "kind") or (fusion.fusion_kind if fusion else None)
    held = fates.by_fusion.get(name, [])
    if not held and _get(info, "before"):
        held = [{"before": b, "computation": _find_before_comp(before, b), "fate": "fused",
                 "fusion": name} for b in _get(info, "before")]
    g = _graph(f"fusion %{name} ({kind or '?'}): {len(held)} before instruction"
               f"{'s' if len(held) != 1 else ''} → %{fused.name}")
    g.graph_attrs["rankdir"] = "TB"
    left = g.cluster({"label": HtmlLabel(f"<b>before</b> <font point-size=\"9\">instructions now in "
                                         f"%{html_text(name, 60)}<br/>(dotted line: what each became)</font>"),
                      "style": "rounded", "color": "#888888", "fontsize": 10, "margin": 10})
    right = g.cluster({"label": HtmlLabel(f"<b>after</b> <font point-size=\"9\">%"
                                          f"{html_text(fused.name, 60)}</font>"),
                       "style": "rounded,filled", "color": palette.CLUSTER_BORDER,
                       "fillcolor": palette.CLUSTER_FILL, "fontsize": 10, "margin": 10})
    d = Drawer(before, g, style_fn=fates.style, note_fn=fates.notes, fusions="collapse",
               control_flow=False)
    ids: dict[tuple[str, str], str] = {}
    insts: list[tuple[Computation, Instruction]] = []
    for f in held:
        comp = before.by_name.get(str(_get(f, "computation")))
        inst = comp.by_name.get(str(_get(f, "before"))) if comp else None
        if inst is None:
            continue
        ids[(comp.name, inst.name)] = d.plain_node(comp.name, inst, left)
        insts.append((comp, inst))
    for comp, inst in insts:
        for op in inst.operands:
            src = ids.get((comp.name, op))
            if src:
                g.edge(src, ids[(comp.name, inst.name)])
    # the after side stays uncoloured so that colour means one thing here: the fate
    da = Drawer(after, g, style_fn=_plain_style, fusions="cluster", control_flow=False)
    out = fused_computation_into(da, fusion, fused, right, fusion.computation if fusion else None)
    for f in held:
        a = _get(f, "after")
        key = (str(_get(f, "computation")), str(_get(f, "before")))
        if a and a in out and key in ids:
            g.edge(ids[key], out[a], style="dotted", color="#999999", constraint="false",
                   arrowhead="none")
    legend(g, d.used, palette.FATES, "fate (before side)")
    return g


def _plain_style(comp: str, inst: Instruction) -> tuple[str, str, str, str]:
    if inst.opcode in ("parameter", "constant"):
        return "#EEEEEE", "#666666", "solid", "plain"
    return "#FFFFFF", "#555555", "solid", "plain"


def _find_before_comp(before: Module, name: str) -> str:
    for c in [before.entry_computation, *before.computations]:
        if name in c.by_name:
            return c.name
    return before.entry


@dataclass
class DiffPictures:
    """What render_diff_svgs wrote: paths, fusion name -> file, and anything skipped."""

    before: Path | None = None
    after: Path | None = None
    fusions: dict[str, Path] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


def _placeholder(message: str) -> str:
    from html import escape
    w = max(400, min(1400, 7 * len(message)))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="40" viewBox="0 0 {w} 40">'
            f'<text x="10" y="25" font-family="Helvetica,sans-serif" font-size="13">'
            f"{escape(message)}</text></svg>\n")


def diff_pictures(result: Any, before: Module, after: Module,
                  max_nodes: int = DEFAULT_MAX_NODES) -> list[tuple[str, str, DotGraph | str]]:
    """(kind, name, DotGraph or a too-large message) for before, after and each fusion."""
    fates = _Fates(result)
    jobs: list[tuple[str, str, DotGraph | str]] = []
    builders = [("before", "before", lambda: before_picture(result, before, after, fates)),
                ("after", "after", lambda: after_picture(result, before, after, fates))]
    for info in _fusion_infos(result, after):
        name = str(_get(info, "name"))
        builders.append(("fusion", name,
                         lambda info=info: fusion_diff_picture(info, result, before, after, fates)))
    for kind, name, build in builders:
        try:
            g = build()
        except (KeyError, LookupError, RenderError) as e:  # a fusion the after module lacks
            jobs.append((kind, name, f"cannot draw {name}: {e}"))
            continue
        if max_nodes and g.node_count > max_nodes:
            jobs.append((kind, name, str(GraphTooLarge(
                g.node_count, max_nodes, f"the {name} picture",
                "draw parts with `hlodiff render --focus/--fusion/--collapse-fusions`"))))
        else:
            jobs.append((kind, name, g))
    return jobs


def _layout_all(jobs, timeout: float) -> list[str]:
    from .fast import fast_layout

    dot = require_dot()

    def one(job):
        kind, name, g = job
        if isinstance(g, str):
            return _placeholder(g)
        fast_layout(g)
        return run_dot(g.source(), "svg", timeout, dot).decode("utf-8")

    workers = max(1, min(8, os.cpu_count() or 1))
    pool = ThreadPoolExecutor(workers)
    try:
        return list(pool.map(one, jobs))
    except BaseException:  # interrupted or one failed: start no more, stop those running
        pool.shutdown(wait=False, cancel_futures=True)
        kill_running()
        raise
    finally:
        pool.shutdown(wait=True)


def layout_diff_svgs(result: Any, before: Module, after: Module, out_dir: str | os.PathLike,
                     max_nodes: int = DEFAULT_MAX_NODES, timeout: float = DEFAULT_TIMEOUT
                     ) -> tuple[DiffPictures, dict[str, str]]:
    """Lay out the pictures of render_diff_svgs without writing: what each file will be
    (paths under ``out_dir``) and the files, relative name -> SVG text."""
    out = Path(out_dir)
    jobs = diff_pictures(result, before, after, max_nodes)
    svgs = _layout_all(jobs, timeout)
    pics = DiffPictures()
    files: dict[str, str] = {}
    used: set[str] = set()
    for (kind, name, g), svg in zip(jobs, svgs):
        if isinstance(g, str):
            pics.skipped.append(g)
        if kind in ("before", "after"):
            rel = f"{kind}.svg"
            setattr(pics, kind, out / rel)
        else:
            rel = f"fusions/{safe_filename(name, used)}"
            pics.fusions[name] = out / rel
        files[rel] = svg
    return pics, files


def render_diff_svgs(result: Any, before: Module, after: Module, out_dir: str | os.PathLike,
                     max_nodes: int = DEFAULT_MAX_NODES, timeout: float = DEFAULT_TIMEOUT
                     ) -> DiffPictures:
    """Write DIR/before.svg, DIR/after.svg and DIR/fusions/<fusion>.svg (one per fusion).

    Pictures over ``max_nodes`` are written as a one-line SVG saying why (and listed in
    ``skipped``). Raises DotNotFound (exit 2) when Graphviz is missing. A new DIR appears
    whole or not at all (see :func:`hlodiff.outputs.write_tree`).
    """
    from ..outputs import write_tree

    pics, files = layout_diff_svgs(result, before, after, out_dir, max_nodes, timeout)
    write_tree(out_dir, files)
    return pics


def fusion_svgs(result: Any, before: Module, after: Module,
                max_nodes: int = DEFAULT_MAX_NODES, timeout: float = DEFAULT_TIMEOUT
                ) -> dict[str, str]:
    """Fusion name -> SVG text ready to inline in HTML (no prolog, ids unique per picture)."""
    jobs = [j for j in diff_pictures(result, before, after, max_nodes) if j[0] == "fusion"]
    svgs = _layout_all(jobs, timeout)
    return {name: svg_for_html(svg, f"f{k}_") for k, ((_, name, _g), svg)
            in enumerate(zip(jobs, svgs))}


def add_svg_option(command):
    """Decorator for the diff command: adds ``--svg DIR`` (the value arrives as ``svg``)."""
    import click
    return click.option("--svg", "svg", type=click.Path(file_okay=False), default=None,
                        metavar="DIR", help="Also write before.svg, after.svg and one SVG per "
                        "fusion (fusions/NAME.svg) to DIR (needs Graphviz).")(command)
