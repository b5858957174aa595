"""Text from dumps made safe for a terminal: control characters become visible escapes.

Names, op_names, paths and custom-call targets in a dump are arbitrary text; printed raw,
an escape sequence in them could recolour, retitle or rewrite the user's terminal. Every
control character except line break and tab (C0, DEL, C1) and the Unicode bidirectional
overrides become ``\\xNN`` / ``\\uNNNN``. For rich, :func:`guard_rich` does this to the text
of every segment rich prints, before rich adds its own colour codes, so those still work.
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

    Console._render_buffer = _render_buffer
    _guarded = True
