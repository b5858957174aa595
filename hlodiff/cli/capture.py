"""``hlodiff capture -- PROGRAM ARGS``: run a JAX program with dumping on, then explain it."""

from __future__ import annotations

import os
import sys
import tempfile

import click

from .common import handle_errors, safe_text
from ..render import add_svg_option


@click.command("capture", context_settings={"ignore_unknown_options": True})
@click.option("--dump", "dump_dir", type=click.Path(file_okay=False), default=None,
              help="Keep the dumps in DIR (default: a temporary directory, removed after).")
@click.option("--passes", is_flag=True, help="Also dump after every pass (for `hlodiff passes`).")
@click.option("--module", "module_name", default=None, metavar="NAME",
              help="The module to explain (default: the one doing the program's work).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "html"]), default=None,
              help="text, json or html (default: from -o FILE's suffix, else text).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the report to FILE (atomically).")
@click.option("--fail-on", "fail_on", multiple=True, metavar="EXPR",
              help="Exit 1 when a gate trips, as in `hlodiff diff` (repeatable).")
@click.option("--limit", type=int, default=40, show_default=True,
              help="Rows per text section (0: all).")
@add_svg_option
@click.argument("program", nargs=-1, type=click.UNPROCESSED, required=True)
@handle_errors
def capture(dump_dir, passes, module_name, fmt, output, fail_on, limit, svg, program):
    """Run PROGRAM with XLA dumping on, then explain the module doing its work.

    \b
    hlodiff capture -- python train.py --steps 1
    hlodiff capture -o report.html --svg pictures/ -- python train.py
    hlodiff capture --dump dumps/ --passes -- python train.py

    \b
    Exit status: the program's own when it failed (after reporting what it compiled),
    else 1 when a --fail-on gate tripped, else 0; 2 when nothing usable was dumped.
    """
    from ..dumps.directory import choice_message, choose_module
    from ..jaxrun.capture import run_with_dumps

    ctx = click.get_current_context()
    from .diff import diff, output_format

    fmt = output_format(fmt, output)
    if fmt == "html" and not output:
        raise click.UsageError("--format html needs -o FILE")
    code = 0
    with tempfile.TemporaryDirectory(prefix="hlodiff-capture-") as tmp:
        where = dump_dir or tmp
        status = run_with_dumps(program, where, passes=passes)
        if status != 0:
            click.echo(f"hlodiff: {program[0]} exited with status {status}; "
                       "explaining what it compiled before that", err=True)
        pair, others = choose_module(where, module_name)  # InputError when nothing was dumped
        if others:
            click.echo(safe_text(f"hlodiff: {choice_message(pair, others)}"), err=True)
        try:
            ctx.invoke(diff, before=str(pair.before), after=str(pair.after), fmt=fmt,
                       mode="optimization", output=output, fail_on=fail_on, limit=limit,
                       svg=svg, no_cache=True, module_name=None)
        except SystemExit as e:  # a tripped gate
            code = e.code if isinstance(e.code, int) else 1
    if dump_dir:
        click.echo(f"dumps kept in {os.path.abspath(dump_dir)}", err=True)
    if status != 0:  # the program's failure comes first: a CI step must see it
        sys.exit(status if 0 < status < 256 else 128 + (-status) % 128)
    if code:
        sys.exit(code)
