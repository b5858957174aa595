"""`hlodiff render FILE -o out.svg`: draw a module, a computation, a fusion or a neighbourhood."""

from __future__ import annotations

import click

from .common import finite_number, handle_errors, safe_text
from ..dumps.loader import load
from ..render import (DEFAULT_MAX_NODES, DEFAULT_TIMEOUT, computation_picture, focus_picture,
                     format_for, fusion_picture, write_picture)
from ..render.svg import check_size, require_dot


@click.command()
@click.argument("file", type=click.Path())
@click.option("-o", "--output", required=True, type=click.Path(),
              help="Picture to write; the format follows the extension: .svg .png .pdf .dot")
@click.option("--collapse-fusions", is_flag=True, help="Draw each fusion as one node.")
@click.option("--fusion", "fusion", metavar="NAME",
              help="Draw one fusion's computation (fusion instruction or fused computation name).")
@click.option("--computation", metavar="NAME", help="Draw this computation instead of the entry.")
@click.option("--focus", metavar="INSTR", help="Draw the neighbourhood of one instruction.")
@click.option("--radius", default=2, show_default=True, type=click.IntRange(0, 50),
              help="Steps from --focus to draw.")
@click.option("--max-nodes", default=DEFAULT_MAX_NODES, show_default=True,
              type=click.IntRange(1), help="Refuse larger graphs (layout gets slow/unreadable).")
@click.option("--timeout", default=DEFAULT_TIMEOUT, show_default=True,
              type=click.FloatRange(min=1, max=86400), callback=finite_number,
              help="Seconds Graphviz may take.")
@handle_errors
def render(file: str, output: str, collapse_fusions: bool, fusion: str | None,
           computation: str | None, focus: str | None, radius: int, max_nodes: int,
           timeout: float) -> None:
    """Draw FILE's entry computation (fusions as clusters) with Graphviz.

    \b
    hlodiff render after.txt -o prog.svg
    hlodiff render after.txt -o prog.svg --collapse-fusions
    hlodiff render after.txt -o f.svg --fusion ynn_fusion.6
    hlodiff render after.txt -o n.png --focus add.15 --radius 3
    """
    chosen = [o for o, v in (("--fusion", fusion), ("--computation", computation),
                             ("--focus", focus)) if v]
    if len(chosen) > 1:
        raise click.UsageError(f"use one of {', '.join(chosen)}, not several")
    fmt = format_for(output)
    if fmt != "dot":
        require_dot()  # say so before parsing a large file
    from ..outputs import check_not_input

    check_not_input(output, [file])
    module = load(file)
    if fusion:
        g = fusion_picture(module, fusion)
    elif focus:
        g = focus_picture(module, focus, radius)
    else:
        g = computation_picture(module, computation, collapse_fusions)
        if g.node_count > max_nodes and not collapse_fusions:  # draw what can be drawn
            whole = g.node_count
            g = computation_picture(module, computation, True)
            click.echo(safe_text(f"hlodiff: %{computation or module.entry} has {whole} nodes "
                                 f"(over --max-nodes {max_nodes}): drawing it with each fusion "
                                 "as one node"), err=True)
    what = f"%{focus}'s neighbourhood" if focus else (f"%{fusion}" if fusion else
                                                       f"%{computation or module.entry}")
    from ..render.fast import FAST_LAYOUT_NODES, fast_layout

    if not (fusion or focus) and (g.node_count > max_nodes or g.node_count > 2 * FAST_LAYOUT_NODES
                                  and len(g.edges) > 8 * FAST_LAYOUT_NODES):
        _write_parts(module, computation, output, fmt, timeout, file, g.node_count, max_nodes)
        return
    check_size(g.node_count, max_nodes, what)
    fast_layout(g)
    write_picture(g.source(), output, fmt, timeout, inputs=[file])
    click.echo(safe_text(f"wrote {output} ({g.node_count} nodes)"), err=True)


def _write_parts(module, computation, output: str, fmt: str, timeout: float, file: str,
                 nodes: int, max_nodes: int) -> None:
    """Too big for one picture even with fusions collapsed: one picture per run of the
    schedule, OUTPUT.part01.svg, OUTPUT.part02.svg, ... (each lays out in seconds)."""
    import os

    from ..render.fast import fast_layout
    from ..render.parts import PART_EDGES, PART_SIZE, computation_parts

    size = max(10, min(PART_SIZE, max_nodes // 2))  # stubs for inputs can double a part
    parts = computation_parts(module, computation, size, min(PART_EDGES, 2 * size))
    stem, ext = os.path.splitext(output)
    names = [f"{stem}.part{k:02d}{ext}" for k in range(1, len(parts) + 1)]
    from ..outputs import check_not_input

    for name in names:
        check_not_input(name, [file])
    click.echo(safe_text(f"hlodiff: %{computation or module.entry} is too big for one picture "
                         f"({nodes} nodes with fusions collapsed): drawing it in {len(parts)} "
                         "parts, in schedule order"), err=True)
    from ..outputs import write_output
    from ..render import run_dot

    laid = []  # all laid out first: a Graphviz failure writes none of them
    for g in parts:
        fast_layout(g)
        laid.append(g.source() if fmt == "dot" else run_dot(g.source(), fmt, timeout))
    for g, name, data in zip(parts, names, laid):
        write_output(name, data, [file])
        click.echo(safe_text(f"wrote {name} ({g.node_count} nodes)"), err=True)
