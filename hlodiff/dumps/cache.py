"""A content-addressed parse cache: the same text, parsed once, loads from a pickle.

Keyed by a hash of the text and of hlodiff's version and grammar, so an upgrade or a grammar
change never serves a stale model. Stored under ``$HLODIFF_CACHE_DIR`` or the user's cache
directory; a cache that cannot be written is silently skipped.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from .. import __version__
from ..hlo.gcpause import gc_paused
from ..hlo.model import Module
from ..hlo.parser import grammar_text, parse
from ..userdirs import cache_dir

_MIN_SIZE = 16 * 1024  # smaller texts parse in a few milliseconds: not worth a file


_salt: bytes | None = None


def _key(text: str) -> str:
    global _salt
    if _salt is None:
        src = Path(__file__).resolve().parent.parent / "hlo"
        h = hashlib.sha256(__version__.encode() + grammar_text().encode())
        for f in sorted(src.glob("*.py")):  # the model's shape depends on the parser's code too
            h.update(f.read_bytes())
        _salt = h.digest()
    return hashlib.sha256(_salt + text.encode("utf-8", "surrogatepass")).hexdigest()


def cached_parse(text: str, path: str | None = None, use_cache: bool = True) -> Module:
    """``parse(text)``, through the cache when enabled and the text is large enough."""
    if not use_cache or len(text) < _MIN_SIZE or os.environ.get("HLODIFF_NO_CACHE"):
        return parse(text, path)
    f = cache_dir() / (_key(text) + ".pickle")
    try:
        with open(f, "rb") as fh, gc_paused():
            module = pickle.load(fh)
        module.path = path
        return module
    except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError):
        pass
    module = parse(text, path)
    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=f.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(module, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, f)
    except OSError:
        pass
    return module
