"""The user's own source line of an instruction, from the module's stack-frame tables.

JAX records each instruction's Python call stack (innermost frame first) with its own frames
already left out, but the frames of the libraries the user calls remain: flax's ``Dense``,
optax's ``adam``, haiku, equinox. A user asks "which of *my* lines made this kernel?", so the
frame to show is the innermost one outside installed libraries; when every frame is a
library's, the innermost one is shown.
"""

from __future__ import annotations

import os

from .model import StackTables

# Path parts that mark a file as an installed library, not the user's program.
_LIBRARY_PARTS = ("/site-packages/", "/dist-packages/", "/jax/", "/jaxlib/", "/flax/",
                  "/optax/", "/haiku/", "/equinox/", "/chex/", "/orbax/", "/penzai/",
                  "/keras/", "/tensorflow/", "/torch_xla/", "<frozen ", "/lib/python3.")


def is_library(path: str) -> bool:
    """True when ``path`` is a file of an installed library (or Python itself)."""
    p = "/" + path.replace("\\", "/").lstrip("/")
    return any(part in p for part in _LIBRARY_PARTS)


def user_location(tables: StackTables, frame_id: int) -> str | None:
    """``file:line`` of the innermost frame of ``frame_id``'s stack that is the user's code,
    else the innermost frame; None when the tables do not know the frame."""
    first = None
    for file, _fn, line in tables.stack(frame_id):
        if not file:
            continue
        loc = f"{file}:{line}" if line is not None else file
        if first is None:
            first = loc
        if not is_library(file):
            return loc
    return first


def display_path(location: str, cwd: str | None = None) -> str:
    """A location as a user reads it: relative to the current directory when it is under it."""
    if not location.startswith("/"):
        return location
    base = cwd if cwd is not None else os.getcwd()
    base = base.rstrip("/") + "/"
    return location[len(base):] if location.startswith(base) else location


def call_stack(tables: StackTables, frame_id: int | None,
               memo: dict[int, tuple]) -> tuple | None:
    """The call stack of ``frame_id`` as (file, function, line) per frame, innermost first,
    or None when the tables do not know it; ``memo`` (one per module) keeps the answers.
    Frame ids are numbered anew in every module printed; the stacks compare across them."""
    if not frame_id:
        return None
    if frame_id not in memo:
        memo[frame_id] = tuple(tables.stack(frame_id))
    return memo[frame_id] or None
