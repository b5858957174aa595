"""``hlodiff cache info`` / ``hlodiff cache clear``: the parse cache's place, size and limit."""

from __future__ import annotations

import click

from .common import handle_errors, safe_text


@click.group("cache")
def cache() -> None:
    """The parse cache: parsed models of large HLO files, kept to load them faster.

    \b
    Stored as MessagePack data (never code) in $HLODIFF_CACHE_DIR, else
    $XDG_CACHE_HOME/hlodiff, else ~/.cache/hlodiff (a 0700 directory); at most
    $HLODIFF_CACHE_MAX_MB megabytes (default 512), least recently used removed first.
    """


@cache.command("info")
@handle_errors
def info() -> None:
    """Where the cache is, how many entries it holds and how big it is."""
    from ..dumps.cache import SUFFIX, entries, max_bytes
    from ..userdirs import cache_dir, private_cache_dir

    d = private_cache_dir(create=False)
    where = safe_text(str(cache_dir()))
    if d is None:
        click.echo(f"cache: {where} (absent or not usable: not a private directory of yours)")
        click.echo(f"limit: {max_bytes() / 2**20:.0f} MB")
        return
    files = entries(d)
    size = sum(st.st_size for _, st in files)
    models = sum(1 for f, _ in files if f.name.endswith(SUFFIX))
    click.echo(f"cache: {where}")
    click.echo(f"parsed modules: {models}; {len(files)} files, {size / 2**20:.1f} MB in all")
    click.echo(f"limit: {max_bytes() / 2**20:.0f} MB (HLODIFF_CACHE_MAX_MB)")


@cache.command("clear")
@handle_errors
def clear() -> None:
    """Remove every cached model (the directory itself stays)."""
    from ..dumps.cache import clear as clear_cache

    n, size = clear_cache()
    click.echo(f"removed {n} files, {size / 2**20:.1f} MB")
