"""The ``hlodiff`` command line. ``hlodiff BEFORE AFTER`` is short for ``hlodiff diff``.

Every command turns bad input into one line on stderr and exit status 2 (no traceback);
each command is defined in its own module of this package and registered by name in
``COMMANDS`` below. A command's module is imported only when that command runs (or when
``--help`` lists them), so ``hlodiff --version`` and ``hlodiff show`` do not pay for
networkx, Graphviz or JAX.
"""

from __future__ import annotations

from .common import install_early_signals

install_early_signals()  # before the slow imports below

import importlib  # noqa: E402

import click  # noqa: E402

from .. import __version__  # noqa: E402

# Every command, registered explicitly: command name -> module of this package defining it
# (the module's click command has the same name as the command).
COMMANDS: dict[str, str] = {
    "diff": "diff",
    "show": "show",
    "passes": "passes",
    "memory": "memory",
    "render": "render",
    "capture": "capture",
    "run": "run",
    "cache": "cache",
}


class _LazyGroup(click.Group):
    """A group that imports a command's module on first use, and whose unknown first word
    means ``diff``: ``hlodiff a.txt b.txt``."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        module = COMMANDS.get(name)
        if module is None:
            return None
        if name not in self.commands:
            command = getattr(importlib.import_module(f"{__name__}.{module}"), name)
            self.add_command(command, name)
        return self.commands[name]

    def parse_args(self, ctx, args):
        if args and args[0] not in COMMANDS and args[0] not in ("--help", "-h", "--version"):
            args = ["diff", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hlodiff")
def main() -> None:
    """What XLA did to your program, instruction by instruction.

    \b
    hlodiff BEFORE.txt AFTER.txt    explain optimization (same as `hlodiff diff`)
    hlodiff show FILE               one module at a glance
    hlodiff passes DUMP_DIR         which XLA pass did what (pass-by-pass dumps)
    hlodiff memory FILE|DUMP_DIR    peak memory and what is live at the peak
    """
