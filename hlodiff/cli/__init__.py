"""The ``hlodiff`` command line. ``hlodiff BEFORE AFTER`` is short for ``hlodiff diff``.

Every command turns bad input into one line on stderr and exit status 2 (no traceback);
each command is defined in its own module of this package and registered at the bottom of
this file.
"""

from __future__ import annotations

from .common import install_early_signals

install_early_signals()  # before the slow imports below

import click  # noqa: E402

from .. import __version__  # noqa: E402


class _DefaultToDiff(click.Group):
    """A group whose unknown first word means ``diff``: ``hlodiff a.txt b.txt``."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["diff", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultToDiff, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hlodiff")
def main() -> None:
    """What XLA did to your program, instruction by instruction.

    \b
    hlodiff BEFORE.txt AFTER.txt    explain optimization (same as `hlodiff diff`)
    hlodiff show FILE               one module at a glance
    hlodiff passes DUMP_DIR         which XLA pass did what (pass-by-pass dumps)
    """


# Every command, registered explicitly (each module defines one click command).
from .cache import cache  # noqa: E402
from .capture import capture  # noqa: E402
from .diff import diff  # noqa: E402
from .passes import passes  # noqa: E402
from .render import render  # noqa: E402
from .run import run  # noqa: E402
from .show import show  # noqa: E402

for _command in (diff, show, passes, render, capture, run, cache):
    main.add_command(_command)
