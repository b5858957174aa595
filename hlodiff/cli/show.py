"""``hlodiff show FILE``: one module at a glance, or the whole model as JSON."""

from __future__ import annotations

import os

import click

from .common import handle_errors
from ..dumps.directory import find_dumps, resolve_dump_pair
from ..dumps.loader import load
from ..analysis.summary import ModuleSummary, summarize
from ..hlo.gcpause import gc_paused
from ..jsonout import echo as echo_json


def _counts(counter, limit: int) -> str:
    items = counter.most_common(limit)
    text = ", ".join(f"{k} {v}" for k, v in items)
    rest = len(counter) - len(items)
    return text + (f", +{rest} more" if rest > 0 else "")


def render_summary(s: ModuleSummary, console) -> None:
    """Print the summary with rich; fits 80 columns."""
    from rich.markup import escape
    from rich.table import Table

    from ..report.text import _mb

    console.print(f"[bold]{escape(s.name)}[/bold]  ({escape(s.path or '<text>')})")
    console.print(f"  entry {escape(s.entry)}: {s.entry_instructions} instructions; "
                  f"{s.instructions} in {s.computations} computations "
                  f"({escape(_counts(s.computation_kinds, 6))})")
    console.print(f"  kernels (top-level instructions that do work): {s.kernels}")
    if s.fusions_by_kind:
        console.print(f"  fusions: {escape(_counts(s.fusions_by_kind, 6))}")
    if s.custom_call_targets:
        console.print(f"  custom-call targets: {escape(_counts(s.custom_call_targets, 6))}")
    t = Table(title="opcodes", show_edge=False, pad_edge=False)
    t.add_column("opcode")
    t.add_column("count", justify="right")
    for op, n in s.opcodes.most_common(12):
        t.add_row(escape(op), str(n))
    if len(s.opcodes) > 12:
        t.add_row(f"+{len(s.opcodes) - 12} more", str(sum(n for _, n in s.opcodes.most_common()[12:])))
    console.print(t)
    if s.largest:
        t = Table(title="largest tensors (entry and called computations)", show_edge=False,
                  pad_edge=False)
        t.add_column("size", justify="right")
        t.add_column("instruction", overflow="fold")
        t.add_column("shape", overflow="fold")
        for b, comp, name, shape in s.largest:
            t.add_row(_mb(b), escape(f"{name} ({comp})" if comp != s.entry else name),
                      escape(shape))
        console.print(t)
    if s.source_files:
        console.print("source files: " + escape(_counts(s.source_files, 5)))
    else:
        console.print("source files: none recorded in metadata")


@click.command()
@click.argument("file", type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json prints the whole parsed model.")
@click.option("--kernels", "with_kernels", is_flag=True,
              help="With --format json and an optimized module: add its \"kernels\" and "
                   "\"collectives\" sections (as in the diff's JSON).")
@click.option("--top", type=int, default=10, show_default=True, help="Rows of largest tensors.")
@click.option("--no-cache", is_flag=True, help="Parse again instead of using the parse cache.")
@handle_errors
def show(file: str, fmt: str, with_kernels: bool, top: int, no_cache: bool) -> None:
    """One module at a glance: computations, opcodes, fusions, tensors, sources.

    FILE may be a dump directory (XLA_FLAGS=--xla_dump_to=DIR): its modules are listed,
    largest first, with the files to pass to `hlodiff diff`.
    """
    if os.path.isdir(file):
        _show_directory(file, fmt)
        return
    module = load(file, cache=not no_cache)
    if fmt == "json":
        # 30,000 instructions make 100,000 small dicts: without the pause, the collector
        # rescans the parsed model over and over while they are built (3x slower)
        with gc_paused():
            data = module.to_dict()
            if with_kernels:  # opt-in: the plain model stays as fast as a warm cache allows
                data.update(_device_sections(module))
            echo_json(data)
        return
    from rich.console import Console

    console = Console(highlight=False)
    render_summary(summarize(module, top=top), console)
    from ..dumps.siblings import before_of  # gpu helper: kernel kinds and collectives
    from ..report.devices import module_sections
    module_sections(module, console, before_of(file, cache=not no_cache), limit=top)


def _device_sections(module) -> dict:
    """For an optimized module: its kernels (kinds, FLOPs, bytes) and collectives, the same
    objects as the diff's JSON keys ``kernels.after`` and ``collectives.after``."""
    if module.attributes.get("is_scheduled") != "true" and not any(
            i.opcode == "fusion" for i in module.entry_computation.instructions):
        return {}
    from ..analysis.collectives import analyze_collectives
    from ..analysis.kernels import analyze_kernels

    return {"kernels": analyze_kernels(module).to_dict(),
            "collectives": analyze_collectives(module).to_dict()}


def _show_directory(directory: str, fmt: str) -> None:
    from ..dumps.directory import choice_message

    pairs = find_dumps(directory)
    if not pairs:
        resolve_dump_pair(directory)  # raises the 'no HLO dumps found' message
    if fmt == "json":
        echo_json([{"module": p.module_id, "name": p.name,
                    "before": str(p.before) if p.before else None,
                    "after": str(p.after) if p.after else None,
                    "bytes": p.size,
                    "kernels": p.work.kernels if p.work else None,
                    "flops": p.work.flops if p.work else None,
                    "jax_helper": p.is_jax_helper} for p in pairs])
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ..report.text import _mb

    t = Table(title=f"{len(pairs)} modules in {escape(directory)} (the program's work first)",
              show_edge=False, pad_edge=False)
    t.add_column("module")
    t.add_column("name", overflow="fold")
    t.add_column("kernels", justify="right")
    t.add_column("GFLOP", justify="right")
    t.add_column("size", justify="right")
    t.add_column("files")
    for p in pairs[:25]:
        files = "+".join(k for k, f in (("before", p.before), ("after", p.after)) if f)
        w = p.work
        t.add_row(p.module_id, escape(p.name), str(w.kernels) if w else "",
                  f"{w.flops / 1e9:.3g}" if w and w.flops else "", _mb(p.size), files)
    console = Console(highlight=False)
    console.print(t)
    if len(pairs) > 25:
        console.print(f"... and {len(pairs) - 25} more modules")
    complete = [p for p in pairs if p.before and p.after]
    if complete:
        console.print(escape(f"hlodiff {directory} explains {choice_message(complete[0], complete[1:])}"),
                      overflow="fold")
