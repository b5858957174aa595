"""Where hlodiff keeps files of its own: the per-user cache directory.

Kept apart from the parser and the cache so that both can use it without importing each
other. The directory is private: created 0700, and used only when it is the user's own.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def cache_dir() -> Path:
    """``$HLODIFF_CACHE_DIR``, else ``$XDG_CACHE_HOME/hlodiff``, else ``~/.cache/hlodiff``."""
    env = os.environ.get("HLODIFF_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hlodiff"


def private_cache_dir(create: bool = True) -> Path | None:
    """The cache directory when it is safe to read and write: a real directory (not a
    symbolic link) owned by this user and closed to others (made 0700 when created or when
    an older hlodiff left it open). None when it cannot be made so: the cache is then skipped.
    """
    d = cache_dir()
    try:
        if create:
            d.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = os.stat(d, follow_symlinks=False)
    except (OSError, ValueError):
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        return None
    if st.st_mode & 0o022:
        return None  # others may write here (plant a file): not a cache we can trust
    if st.st_mode & 0o077 and _only_ours(d):
        try:  # an older hlodiff made it 0755: close it (never a directory holding other files)
            os.chmod(d, 0o700)
        except OSError:
            pass
    return d


def is_cache_file(name: str) -> bool:
    """Names hlodiff writes in its cache directory (and older versions wrote)."""
    return (name.endswith((".hlom", ".pickle")) or (name.startswith(".") and name.endswith(".tmp"))
            or (name.startswith("lalr-") and name.endswith((".msgpack", ".lark"))))


def _only_ours(d: Path) -> bool:
    try:
        with os.scandir(d) as it:
            return all(is_cache_file(e.name) for e in it)
    except OSError:
        return False


def read_private_file(f: Path) -> bytes | None:
    """The bytes of a file in the private cache directory: a regular file of this user's,
    opened without following a symbolic link; None otherwise."""
    try:
        fd = os.open(f, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return None
        chunks = []
        while True:
            b = os.read(fd, 1 << 22)
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def write_private_file(d: Path, name: str, data: bytes) -> bool:
    """Write ``d/name`` atomically (a 0600 temporary file, then a rename); False on failure,
    and no temporary file is left behind."""
    import tempfile

    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, d / name)
        tmp = None
        return True
    except OSError:
        return False
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
