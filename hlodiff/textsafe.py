"""Text from dumps made safe for a terminal: control characters become visible escapes.

Names, op_names, paths and custom-call targets in a dump are arbitrary text; printed raw,
an escape sequence in them could recolour, retitle or rewrite the user's terminal. Every
control character except line break and tab (C0, DEL, C1) and the Unicode bidirectional
overrides become ``\\xNN`` / ``\\uNNNN``. For rich, :func:`guard_rich` does this to the text
of every segment rich prints, before rich adds its own colour codes, so those still work, and
cuts any one printed string to MAX_SHOWN characters (rich's wrapping is quadratic in a word's
length: a 20 MB custom-call target would take minutes).
"""

from __future__ import annotations

import re
import sys

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def safe_text(text: str, keep_newlines: bool = True) -> str:
    """``text`` with every control character (but line breaks and tabs, unless
    ``keep_newlines`` is false) written as a visible escape. Linear in the length."""
    if not keep_newlines:
        text = text.replace("\n", "\\n").replace("\t", "\\t")
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_escape, text)


_guarded = False
MAX_SHOWN = 4000  # characters of one printed string at most (names, targets, op_names)


class _PatchRichWhenLoaded:
    """A meta-path finder that lets ``rich.console`` load as usual, then guards it: commands
    that print no rich output (``--format json``, ``--version``) never pay for importing rich
    (about 0.1 s), and every Console is still guarded before its first use."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "rich.console":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)  # once; and so that the search below skips us
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _ThenGuard(spec.loader)
                return spec
        return None


class _ThenGuard:
    """A loader that runs the real loader, then :func:`_guard_now`."""

    def __init__(self, loader) -> None:
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        _guard_now()


def guard_rich() -> None:
    """Make every rich Console in this process neutralize control characters in the text it
    prints (its own style codes are added afterwards and are kept). Idempotent. When rich is
    not imported yet, this happens as soon as it is (see :class:`_PatchRichWhenLoaded`)."""
    if _guarded:
        return
    if "rich.console" in sys.modules:
        _guard_now()
    elif not any(isinstance(f, _PatchRichWhenLoaded) for f in sys.meta_path):
        sys.meta_path.insert(0, _PatchRichWhenLoaded())


def _guard_now() -> None:
    global _guarded
    if _guarded:
        return
    from rich.console import Console
    from rich.segment import Segment

    original = Console._render_buffer

    def _render_buffer(self, buffer):
        clean = []
        for seg in buffer:
            if not seg.control and _UNSAFE.search(seg.text):
                seg = Segment(_UNSAFE.sub(_escape, seg.text), seg.style, seg.control)
            clean.append(seg)
        return original(self, clean)

    def on_broken_pipe(self) -> None:  # `hlodiff ... | head`: quiet, like a C tool
        import os

        self.quiet = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.file.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass
        raise SystemExit(141)

    original_render_str = Console.render_str

    def render_str(self, text, *args, **kwargs):
        rendered = original_render_str(self, text, *args, **kwargs)
        n = len(rendered.plain)
        if n > MAX_SHOWN:  # rich wraps in quadratic time; nobody reads megabytes of one name
            rendered.truncate(MAX_SHOWN)
            rendered.append(f"... ({n - MAX_SHOWN:,} more characters)")
        return rendered

    Console.render_str = render_str
    Console._render_buffer = _render_buffer
    Console.on_broken_pipe = on_broken_pipe
    _guarded = True
