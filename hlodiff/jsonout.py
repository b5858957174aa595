"""Fast JSON text for the command line's ``--format json`` outputs.

The standard library's encoder falls back to pure Python whenever ``indent`` is set: on a
12-layer GPT step (8.6 MB of JSON) that is 1.4 s, more than XLA takes to parse the module.
msgspec (already a dependency, for the parse cache) encodes the same data in about 0.07 s
and re-indents it in another 0.03 s; orjson is as fast but only indents by two spaces.
The text is the same as ``json.dumps(obj, indent=indent)`` (floats may be spelled
differently, e.g. ``1e300`` for ``1e+300``): non-ASCII characters and DEL, which msgspec
writes raw, are turned back into ``\\uXXXX`` escapes, so the JSON text stays ASCII and no
terminal control or bidirectional character is ever printed raw.
"""

from __future__ import annotations

import re
import sys
from typing import Any

_NON_ASCII = re.compile(r"[^\x00-\x7e]")  # DEL as well: the standard library escapes it


def _escape(m: re.Match) -> str:
    code = ord(m.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # outside the BMP: a UTF-16 surrogate pair, as the standard library writes
    return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"


def dumps(obj: Any, indent: int = 1) -> str:
    """``obj`` (plain dicts, lists, strings, numbers, bools, None) as indented ASCII JSON."""
    import msgspec

    try:
        raw = msgspec.json.format(msgspec.json.encode(obj), indent=indent)
    except (UnicodeEncodeError, TypeError, ValueError, OverflowError):
        # lone surrogates (undecodable input bytes), non-string keys, NaN/inf, huge ints:
        # the standard library's encoder handles them the way it always did
        import json

        return json.dumps(obj, indent=indent)
    if raw.isascii() and b"\x7f" not in raw:
        return raw.decode("ascii")
    return _NON_ASCII.sub(_escape, raw.decode("utf-8", "surrogatepass"))


def echo(obj: Any, indent: int = 1) -> None:
    """Write ``obj`` as JSON and a newline to stdout, as bytes (no per-line text layer)."""
    text = dumps(obj, indent)
    out = sys.stdout
    buffer = getattr(out, "buffer", None)
    if buffer is None:  # a text-only stream (e.g. a test runner's capture)
        out.write(text + "\n")
    else:
        out.flush()
        buffer.write(text.encode("ascii") + b"\n")
        buffer.flush()
