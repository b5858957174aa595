"""``hlodiff diff BEFORE AFTER`` (also ``hlodiff BEFORE AFTER``)."""

from __future__ import annotations

import json
import os
import sys
import tempfile

import click

from .clitools import handle_errors


def _write(path: str | None, text: str) -> None:
    if not path:
        click.echo(text, nl=not text.endswith("\n"))
        return
    d = os.path.dirname(os.path.abspath(path)) or "."
    fd, tmp = tempfile.mkstemp(prefix=".hlodiff-", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


@click.command("diff")
@click.argument("before", type=click.Path(dir_okay=True))
@click.argument("after", type=click.Path(dir_okay=True))
@click.option("--mode", type=click.Choice(["auto", "optimization", "regression"]), default="auto",
              show_default=True, help="optimization: unoptimized -> optimized; regression: two optimized modules.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "html"]), default="text",
              show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the report to FILE (atomically).")
@click.option("--fail-on", "fail_on", multiple=True, metavar="EXPR",
              help="Exit 1 when a gate trips, e.g. 'kernels>40,layout_changes>0' (repeatable).")
@click.option("--limit", type=int, default=40, show_default=True,
              help="Rows per text section (0: all).")
@handle_errors
def diff(before, after, mode, fmt, output, fail_on, limit):
    """Explain what XLA's optimizer did to every instruction of BEFORE.

    \b
    Fates: kept, fused, folded, merged, rewritten, inlined, removed.
    Exit status: 0 ok, 1 a --fail-on gate tripped, 2 bad input or usage.
    """
    from .diff import diff_files
    from .diff.gates import GateError, check_gates, parse_gates

    try:
        gates = parse_gates(fail_on)
    except GateError as e:
        raise click.UsageError(str(e)) from None
    if fmt == "html" and not output:
        raise click.UsageError("--format html needs -o FILE")
    result = diff_files(before, after, mode=mode)
    try:
        tripped = check_gates(gates, result.summary)
    except GateError as e:
        raise click.UsageError(str(e)) from None
    if fmt == "json":
        text = json.dumps(result.to_json(), indent=1) + "\n"
    elif fmt == "html":
        from .diff.report_html import render_html

        text = render_html(result)
    else:
        from .diff.report_text import render_plain

        if output:
            text = render_plain(result, limit=limit)
        else:
            from rich.console import Console

            from .diff.report_text import render

            render(result, Console(highlight=False), limit=limit or 10 ** 9)
            text = None
    if text is not None:
        _write(output, text)
    if tripped:
        click.echo("hlodiff: gate tripped: " + "; ".join(tripped), err=True)
        sys.exit(1)
