"""``hlodiff diff BEFORE AFTER`` (also ``hlodiff BEFORE AFTER``)."""

from __future__ import annotations

import os
import sys

import click

from .common import handle_errors, safe_text
from ..render import add_svg_option


def _write(path: str | None, text: str, inputs=(), plain: bool = True) -> None:
    """The report to ``-o`` (or stdout), by the rules of :mod:`hlodiff.outputs`."""
    from ..outputs import write_output
    from ..textsafe import safe_text

    if not path:
        click.echo(safe_text(text) if plain else text, nl=not text.endswith("\n"))
        return
    write_output(path, safe_text(text) if plain else text, inputs)


_SUFFIX_FORMATS = {".html": "html", ".htm": "html", ".json": "json"}


def output_format(fmt: str | None, output: str | None) -> str:
    """The report format: the one asked for, else the one -o FILE's suffix names, else text."""
    if fmt:
        return fmt
    if output:
        return _SUFFIX_FORMATS.get(os.path.splitext(output)[1].lower(), "text")
    return "text"


@click.command("diff")
@click.argument("before", type=click.Path(dir_okay=True))
@click.argument("after", type=click.Path(dir_okay=True), required=False)
@click.option("--module", "module_name", default=None, metavar="NAME",
              help="With a dump directory: the module to diff (default: the largest).")
@click.option("--mode", type=click.Choice(["auto", "optimization", "regression"]), default="auto",
              show_default=True, help="optimization: unoptimized -> optimized; regression: two optimized modules.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "html"]), default=None,
              help="text, json or html (default: from -o FILE's suffix, else text).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the report to FILE (atomically); .html/.json choose the format.")
@click.option("--fail-on", "fail_on", multiple=True, metavar="EXPR",
              help="Exit 1 when a gate trips, e.g. 'kernels>40,layout_changes>0' (repeatable).")
@click.option("--limit", type=click.IntRange(min=0), default=40, show_default=True,
              help="Rows per text section (0: all).")
@add_svg_option
@click.option("--no-cache", is_flag=True, help="Parse the inputs again instead of using the parse cache.")
@handle_errors
def diff(before, after, module_name, mode, fmt, output, fail_on, limit, svg, no_cache):
    """Explain what XLA's optimizer did to every instruction of BEFORE.

    BEFORE and AFTER are HLO text files; a single dump directory (written with
    XLA_FLAGS=--xla_dump_to=DIR) diffs the module holding the program's work (the most
    dot/convolution FLOPs and kernels, not JAX's PRNG helpers); --module picks another.

    \b
    Fates: kept, fused, folded, merged, rewritten, inlined, removed.
    Exit status: 0 ok, 1 a --fail-on gate tripped, 2 bad input or usage.
    """
    from ..diff import diff_modules
    from ..diff.gates import GateError, check_gates, parse_gates

    try:
        gates = parse_gates(fail_on)
    except GateError as e:
        raise click.UsageError(str(e)) from None
    fmt = output_format(fmt, output)
    if fmt == "html" and not output:
        raise click.UsageError("--format html needs -o FILE")
    from ..dumps.directory import choice_message, choose_module, resolve_dump_pair
    from ..dumps.loader import load

    if after is None or os.path.isdir(before):
        if not os.path.isdir(before):
            raise click.UsageError("give BEFORE and AFTER files, or one dump directory")
        pair, others = choose_module(before, module_name)
        if others:
            click.echo(safe_text(f"hlodiff: {choice_message(pair, others)}"), err=True)
        if after is not None and os.path.isdir(after):  # regression: same module in two dirs
            other = resolve_dump_pair(after, module_name or pair.name)
            before, after = str(pair.after), str(other.after)
        else:
            before, after = str(pair.before), str(pair.after)
    inputs = [before, after]
    from ..outputs import check_dir_target, check_not_input

    if output:
        check_not_input(output, inputs)
    if svg:
        check_dir_target(svg)
    before_module, after_module = load(before, cache=not no_cache), load(after, cache=not no_cache)
    if mode != "regression":
        from ..diff.swapped import swapped_warning

        warning = swapped_warning(before_module, after_module)
        if warning:
            click.echo(safe_text(f"hlodiff: warning: {warning}"), err=True)
    result = diff_modules(before_module, after_module, mode=mode)
    try:  # an unknown metric fails here, before anything is written
        tripped = check_gates(gates, result.summary)
    except GateError as e:
        raise click.UsageError(str(e)) from None
    svg_files = None
    if svg:  # laid out now (a Graphviz failure writes nothing), written after the report
        from ..render.diffviews import layout_diff_svgs

        pictures, svg_files = layout_diff_svgs(result, before_module, after_module, svg)
    if fmt == "json":
        from ..hlo.gcpause import gc_paused
        from ..jsonout import dumps as json_dumps

        with gc_paused():  # speed: many small dicts (see cli/show.py)
            text = json_dumps(result.to_json(), indent=1) + "\n"
    elif fmt == "html":
        from ..report.html import render_html
        from ..render.inline import html_pictures

        figures, note = html_pictures(result, before_module, after_module,
                                      pictures.fusions if svg_files is not None else None, output)
        if note:
            click.echo(safe_text(f"hlodiff: {note}"), err=True)
        text = render_html(result, figures, note=note)
    else:
        from ..report.text import render_plain

        if output:
            text = render_plain(result, limit=limit)
        else:
            from rich.console import Console

            from ..report.text import render

            render(result, Console(highlight=False), limit=limit or 10 ** 9)
            text = None
    if text is not None:
        _write(output, text, inputs, plain=fmt == "text")
    if svg_files is not None:
        from ..outputs import write_tree

        write_tree(svg, svg_files, inputs)
        for msg in pictures.skipped:
            click.echo(f"hlodiff: {safe_text(msg)}", err=True)
    if tripped:
        click.echo("hlodiff: gate tripped: " + "; ".join(tripped), err=True)
        sys.exit(1)
