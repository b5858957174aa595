"""``hlodiff memory PATH``: where the bytes go at the peak of one optimized module."""

from __future__ import annotations

import json
import os

import click

from .common import handle_errors
from .diff import _write


def resolve_optimized(path: str, module_name: str | None = None) -> str:
    """The optimized module file for PATH: the file itself, or a dump directory's main module."""
    from ..dumps.directory import find_dumps, resolve_dump_pair
    from ..errors import InputError

    if not os.path.isdir(path):
        return path
    try:
        pair = resolve_dump_pair(path, module_name)
    except InputError:
        pairs = [p for p in find_dumps(path) if p.after]
        if module_name:
            pairs = [p for p in pairs if module_name in (p.name, p.module_id) or module_name in p.name]
        if not pairs:
            raise
        pair = pairs[0]
    if pair.after is None:
        raise InputError(f"{path}: module {pair.name} has no optimized (after_optimizations) file")
    return str(pair.after)


@click.command("memory")
@click.argument("path", type=click.Path(dir_okay=True))
@click.option("--module", "module_name", default=None, metavar="NAME",
              help="With a dump directory: the module (default: the largest).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "html"]), default="text",
              show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the report to FILE (atomically).")
@click.option("--top", type=int, default=15, show_default=True, help="Buffers listed.")
@click.option("--estimate", is_flag=True,
              help="Ignore XLA's memory files and estimate from the schedule.")
@click.option("--no-cache", is_flag=True, help="Parse again instead of using the parse cache.")
@handle_errors
def memory(path, module_name, fmt, output, top, estimate, no_cache):
    """Peak memory of an optimized module and what is live at the peak.

    PATH is an optimized module (*after_optimizations.txt) or a dump directory. XLA's
    -buffer-assignment, -live-range and -memory-usage-report files beside it give exact
    figures; without them the peak is estimated by a heap simulation of the schedule.
    """
    from ..analysis.memory import memory_report
    from ..dumps.loader import load
    from ..dumps.memfiles import MemoryFiles, load_memory_files
    from ..errors import InputError

    if fmt == "html" and not output:
        raise click.UsageError("--format html needs -o FILE")
    module_path = resolve_optimized(path, module_name)
    from ..dumps.memfiles import memory_file_paths
    from ..outputs import check_not_input

    inputs = [module_path, *map(str, memory_file_paths(module_path).values())]
    if output:
        check_not_input(output, inputs)
    module = load(module_path, cache=not no_cache)
    files = MemoryFiles() if estimate else load_memory_files(module_path)
    if not files.present and module.attributes.get("is_scheduled") != "true":
        raise InputError(f"{module_path}: not an optimized module (no is_scheduled=true, no "
                         "XLA memory files beside it); pass the *after_optimizations.txt dump")
    rep = memory_report(module, files)
    regions = _remat_regions(path, module_name, module, rep)  # per jax.checkpoint region
    if fmt == "json":
        doc = rep.to_json(top=max(top, 1))
        doc["remat_regions"] = regions
        text = json.dumps(doc, indent=1) + "\n"
    elif fmt == "html":
        from ..report.memory import render_memory_html

        text = render_memory_html(rep, top=max(top, 1))
        if regions:
            from ..report.remat import remat_html
            text = text.replace("</body>", remat_html(regions) + "</body>", 1)
    else:
        from ..report.memory import render_memory_text

        text = render_memory_text(rep, top=max(top, 1))
        if regions:
            from ..report.remat import remat_text
            text = text.rstrip("\n") + "\n" + remat_text(regions)
    _write(output, text, inputs, plain=fmt == "text")


def _remat_regions(path: str, module_name: str | None, module, rep) -> dict | None:
    """The unoptimized module dumped beside the optimized one (a dump directory, or the
    ``<module>.before_optimizations.txt`` sibling of a file): its jax.checkpoint regions."""
    from ..diff.remat import regions_for_memory
    from ..dumps.directory import find_dumps

    if not os.path.isdir(path):
        from pathlib import Path
        parts = Path(module.path or path).name.split(".")
        sib = Path(module.path or path).with_name(".".join(parts[:2]) + ".before_optimizations.txt")
        if len(parts) < 3 or "after_optimizations" not in Path(path).name or not sib.is_file():
            return None
        return regions_for_memory(str(sib), module, rep)
    pair = next((p for p in find_dumps(path) if p.after and str(p.after) == module.path
                 and p.before), None)
    if pair is None:
        return None
    return regions_for_memory(str(pair.before), module, rep)
