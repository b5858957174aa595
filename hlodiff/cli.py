"""The ``hlodiff`` command line. ``hlodiff BEFORE AFTER`` is short for ``hlodiff diff``.

Every command turns bad input into one line on stderr and exit status 2 (no traceback);
commands are defined in their own modules and registered at the bottom of this file.
"""

from __future__ import annotations

import click

from . import __version__


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


def _register() -> None:
    from .show_cmd import show

    main.add_command(show)
    for modname, attr in (("diff_cmd", "diff"), ("render_cmd", "render"), ("run_cmd", "run"),
                          ("passes_cmd", "passes"), ("capture_cmd", "capture")):
        try:
            mod = __import__(f"hlodiff.{modname}", fromlist=[attr])
        except ModuleNotFoundError as e:
            if e.name != f"hlodiff.{modname}":
                raise
            continue
        main.add_command(getattr(mod, attr))


_register()
