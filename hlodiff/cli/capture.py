"""``hlodiff capture -- PROGRAM ARGS``: run a JAX program with dumping on, then explain it."""

from __future__ import annotations

import os
import tempfile

import click

from .common import handle_errors, safe_text


@click.command("capture", context_settings={"ignore_unknown_options": True})
@click.option("--dump", "dump_dir", type=click.Path(file_okay=False), default=None,
              help="Keep the dumps in DIR (default: a temporary directory, removed after).")
@click.option("--passes", is_flag=True, help="Also dump after every pass (for `hlodiff passes`).")
@click.option("--module", "module_name", default=None, metavar="NAME",
              help="The module to explain (default: the largest the program compiled).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.argument("program", nargs=-1, type=click.UNPROCESSED, required=True)
@handle_errors
def capture(dump_dir, passes, module_name, fmt, program):
    """Run PROGRAM with XLA dumping on, then explain its largest module.

    \b
    hlodiff capture -- python train.py --steps 1
    hlodiff capture --dump dumps/ --passes -- python train.py
    """
    from ..jaxrun.capture import run_with_dumps
    from ..dumps.directory import resolve_dump_pair

    with tempfile.TemporaryDirectory(prefix="hlodiff-capture-") as tmp:
        where = dump_dir or tmp
        status = run_with_dumps(program, where, passes=passes)
        if status != 0:
            click.echo(f"hlodiff: {program[0]} exited with status {status}; "
                       "explaining what it compiled before that", err=True)
        pair = resolve_dump_pair(where, module_name)  # InputError when nothing was dumped
        if not dump_dir:
            click.echo(safe_text(f"hlodiff: module {pair.name} "
                                 "(pass --dump DIR to keep the dumps)"), err=True)
        ctx = click.get_current_context()
        from .diff import diff

        ctx.invoke(diff, before=str(pair.before), after=str(pair.after), fmt=fmt,
                   mode="optimization", output=None, fail_on=(), limit=40, svg=None,
                   no_cache=True, module_name=None)
    if dump_dir:
        click.echo(f"dumps kept in {os.path.abspath(dump_dir)}", err=True)
