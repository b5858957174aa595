"""Writing the files a user asked for (``-o``, ``--svg``), without harming anything else.

* ``-`` means standard output.
* A new path, or an existing regular file with one link, is written atomically: a temporary
  file in the same directory, then a rename. An existing file keeps its mode (and, when we
  may, its owner); a file with several hard links is rewritten in place so the links stay.
* A symbolic link is followed: its target is written, the link stays a link.
* A FIFO, a character device or anything else that is not a regular file is written
  through, as a plain ``open`` would (``-o /dev/null`` stays a device).
* An output that is one of the inputs is refused.
* Errors (missing directory, no permission, a full disk) are one line, exit status 2, and
  no temporary file is left behind, also when interrupted.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Iterable

from .errors import HlodiffError


class OutputError(HlodiffError):
    """An output that cannot be written (exit status 2, one line)."""


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def check_not_input(path: str | os.PathLike, inputs: Iterable[str | os.PathLike | None]) -> None:
    """Refuse an output path that is (or links to) one of the input files."""
    if str(path) == "-":
        return
    try:
        out = os.stat(path)
    except OSError:
        return  # does not exist (or cannot be followed): not an input
    for inp in inputs:
        if inp is None:
            continue
        try:
            st = os.stat(inp)
        except OSError:
            continue
        if _same_file(out, st) and stat.S_ISREG(st.st_mode):
            raise OutputError(f"{path}: is an input of this command; refusing to overwrite it "
                              "(choose another -o)")


def _fail(path: str | os.PathLike, e: OSError) -> OutputError:
    why = e.strerror or str(e)
    parent = os.path.dirname(os.path.abspath(path)) or "."
    if isinstance(e, FileNotFoundError) and not os.path.isdir(parent):
        why = "no such directory"
    return OutputError(f"{path}: cannot write: {why}")


def _resolve(path: str) -> str:
    """The path to write: a symbolic link's final target (links stay links)."""
    if not os.path.islink(path):
        return path
    try:
        os.stat(path)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise OutputError(f"{path}: cannot write: too many levels of symbolic links") from None
        # dangling: writing creates the target, as open() would
    return os.path.realpath(path)


def write_output(path: str | os.PathLike | None, data: str | bytes,
                 inputs: Iterable[str | os.PathLike | None] = ()) -> None:
    """Write ``data`` to ``path`` (None or '-': standard output) by the rules above."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if path is None or str(path) == "-":
        out = sys.stdout
        out.flush()
        buf = getattr(out, "buffer", None)
        if buf is not None:
            buf.write(raw)
            buf.flush()
        else:  # a text-only stream (click's test runner gives a binary one, but be safe)
            out.write(raw.decode("utf-8", "replace"))
            out.flush()
        return
    path = os.fspath(path)
    check_not_input(path, inputs)
    target = _resolve(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise _fail(path, e) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{path}: is a directory; name a file to write")
    if st is not None and not stat.S_ISREG(st.st_mode):
        _write_through(path, target, raw)  # FIFO, device, socket...: as open() would
    elif st is not None and st.st_nlink > 1:
        _write_through(path, target, raw)  # in place: every hard link sees the new text
    else:
        _write_atomic(path, target, raw, st)


def _write_through(path: str, target: str, raw: bytes) -> None:
    try:
        with open(target, "wb") as f:
            f.write(raw)
    except OSError as e:
        raise _fail(path, e) from None


def _write_atomic(path: str, target: str, raw: bytes, st: os.stat_result | None) -> None:
    d = os.path.dirname(os.path.abspath(target)) or "."
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".hlodiff-", suffix=".tmp", dir=d)
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            if st is not None:
                mode = stat.S_IMODE(st.st_mode)
                try:
                    os.fchown(f.fileno(), st.st_uid, st.st_gid)
                except OSError:
                    pass  # not ours to give away: the rename makes it ours, as a rewrite would
            else:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask  # an ordinary new file, not mkstemp's private 0600
            os.fchmod(f.fileno(), mode)
        os.replace(tmp, target)
        tmp = None
    except OSError as e:
        raise _fail(path, e) from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def check_dir_target(out_dir: str | os.PathLike) -> None:
    """Fail early (before any work) when ``out_dir`` cannot become a directory of outputs:
    an existing non-directory, or a parent that is missing or not a directory."""
    out = Path(out_dir)
    try:
        st = os.stat(out)
    except FileNotFoundError:
        parent = out.parent
        if not parent.is_dir():
            raise OutputError(f"{out}: cannot write: {parent} is not a directory") from None
        return
    except OSError as e:
        raise _fail(out, e) from None
    if not stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{out}: is not a directory")


def write_tree(out_dir: str | os.PathLike, files: dict[str, str | bytes],
               inputs: Iterable[str | os.PathLike | None] = ()) -> dict[str, Path]:
    """Write several files under a directory: relative name -> data. A new directory is
    made complete in a temporary sibling and renamed into place, so it appears whole or not
    at all; into an existing directory each file is written by :func:`write_output`."""
    out = Path(out_dir)
    inputs = list(inputs)
    try:
        st = os.stat(out)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise _fail(out, e) from None
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{out}: is not a directory")
    written = {name: out / name for name in files}
    if st is not None:
        for name, data in files.items():
            p = out / name
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise _fail(p, e) from None
            write_output(p, data, inputs)
        return written
    parent = out.parent
    tmp = None
    try:
        tmp = tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent)
        for name, data in files.items():
            p = Path(tmp) / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        umask = os.umask(0)
        os.umask(umask)
        for root, dirs, _ in os.walk(tmp):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o777 & ~umask)
            for f in os.listdir(root):
                if os.path.isfile(os.path.join(root, f)):
                    os.chmod(os.path.join(root, f), 0o666 & ~umask)
        os.chmod(tmp, 0o777 & ~umask)
        os.rename(tmp, out)
        tmp = None
    except OSError as e:
        raise _fail(out, e) from None
    finally:
        if tmp is not None:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    return written
