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


def guard_rich() -> None:
    """Make every rich Console in this process neutralize control characters in the text it
    prints (its own style codes are added afterwards and are kept). Idempotent."""
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
