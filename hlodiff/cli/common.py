"""Shared pieces of the command line: the bad-input handler every command uses."""

from __future__ import annotations

import functools
import sys

import click

from ..errors import HlodiffError


def handle_errors(fn):
    """Run a command, turning HlodiffError (bad input) into one line on stderr and exit 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except HlodiffError as e:
            click.echo(f"hlodiff: {e}", err=True)
            sys.exit(e.exit_code)
        except RecursionError:
            click.echo("hlodiff: input nested too deeply to process", err=True)
            sys.exit(2)

    return wrapper
