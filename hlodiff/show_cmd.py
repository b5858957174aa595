"""`hlodiff show FILE` (placeholder until the summary lands in this session)."""
import click
from .clitools import handle_errors
from .loader import load


@click.command()
@click.argument("file", type=click.Path())
@handle_errors
def show(file: str) -> None:
    """One module at a glance: computations, opcodes, fusions, tensors, sources."""
    m = load(file)
    click.echo(f"{m.name}: {len(m.computations)} computations, {m.instruction_count} instructions")
