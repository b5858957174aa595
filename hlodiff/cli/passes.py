"""``hlodiff passes DIR``: which pass did what, from pass-by-pass dumps.

Reads the dumps XLA writes with ``--xla_dump_hlo_pass_re=.*`` (one file per pass that
changed the module) through :mod:`hlodiff.dumps.passes`, and prints the passes in order with what
each removed, added and decided, or the history of one instruction.
"""

from __future__ import annotations

import json
from collections import Counter

import click

from .common import echo_safe, handle_errors


def _fates_text(counter) -> str:
    return ", ".join(f"{k} {v}" for k, v in counter.most_common())


@click.command("passes")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--module", "module_name", default=None, metavar="NAME",
              help="The module (e.g. jit_step or module_0026) when DIR holds several.")
@click.option("--instruction", default=None, metavar="NAME",
              help="Show the history of one instruction of the before module.")
@click.option("--all", "show_all", is_flag=True, help="Also list passes that changed nothing.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@handle_errors
def passes(directory: str, module_name: str | None, instruction: str | None, show_all: bool,
           fmt: str) -> None:
    """Which XLA pass did what, from pass-by-pass dumps in DIRECTORY.

    \b
    Dump them with XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_as_text
    --xla_dump_hlo_pass_re=.*".
    """
    from ..errors import InputError
    from ..dumps.passes import trace_directory

    trace = trace_directory(directory, module_name)
    if instruction is not None:
        name = instruction.lstrip("%")
        if name not in trace.fates:
            raise InputError(f"{directory}: no instruction '{name}' in the before module "
                             f"{trace.before.name}")
        _instruction(trace, name, fmt)
        return
    steps = [s for s in trace.passes if show_all or s.changed]
    if fmt == "json":
        click.echo(json.dumps({
            "module": trace.before.name,
            "fates": dict(trace.counts()),
            "passes": [{"index": s.index, "pipeline": s.pipeline, "pass": s.name,
                        "kind": s.kind, "removed": s.num_removed, "added": s.num_added,
                        "renamed": len(s.renamed),
                        "decided": dict(Counter(s.fates.values())),
                        "file": str(s.path)} for s in steps]}, indent=1))
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(highlight=False)
    t = Table(title=f"{escape(trace.before.name)}: {len(steps)} passes changed the module",
              title_justify="left", show_edge=False, pad_edge=False)
    t.add_column("#", justify="right")
    t.add_column("pipeline / pass", overflow="fold")
    t.add_column("-", justify="right")
    t.add_column("+", justify="right")
    t.add_column("decided for before-instructions", overflow="fold")
    for s in steps:
        t.add_row(f"{s.index:04d}", escape(f"{s.pipeline}/{s.name}"), str(s.num_removed),
                  str(s.num_added), escape(_fates_text(Counter(s.fates.values()))))
    console.print(t)
    console.print("fates of the before module: " + escape(_fates_text(trace.counts())))
    console.print("-: instructions the pass removed, +: added. "
                  "One instruction's story: --instruction NAME")


def _instruction(trace, name: str, fmt: str) -> None:
    info = trace.info(name)
    chain = trace.chain(name)
    if fmt == "json":
        click.echo(json.dumps({
            "instruction": name, "computation": info.computation, "opcode": info.opcode,
            "fate": info.fate, "pass": info.pass_name, "pass_index": info.pass_index,
            "fusion": info.fusion, "into": info.into,
            "destination": trace.destination(name), "destinations": trace.destinations(name),
            "chain": [{"fate": f, "pass": p, "into": i} for f, p, i in chain],
            "history": [{"index": i, "pass": p, "event": e} for i, p, e in info.history]},
            indent=1))
        return
    echo_safe(f"{name} ({info.opcode}, computation {info.computation}): {info.fate}"
               + (f" by {info.pass_name} (dump {info.pass_index:04d})"
                  if info.pass_name and info.pass_index is not None else ""))
    if info.fusion:
        echo_safe(f"  now inside fusion {info.fusion}")
    dests = trace.destinations(name)
    if dests:
        echo_safe("  its value is in (final module): " + ", ".join(dests))
    elif info.fate != "kept":
        echo_safe("  its value is in no instruction of the final module")
    for index, pass_name, event in info.history:
        echo_safe(f"  {index:04d} {pass_name}: {event}")
    if len(chain) > 1:
        steps = " -> ".join(f"{f}" + (f" ({p})" if p else "") + (f" as {i}" if i else "")
                            for f, p, i in chain)
        echo_safe(f"  then: {steps}")
