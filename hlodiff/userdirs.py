"""Where hlodiff keeps files of its own: the per-user cache directory.

Kept apart from the parser and the cache so that both can use it without importing each
other.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$HLODIFF_CACHE_DIR``, else ``$XDG_CACHE_HOME/hlodiff``, else ``~/.cache/hlodiff``."""
    env = os.environ.get("HLODIFF_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hlodiff"
