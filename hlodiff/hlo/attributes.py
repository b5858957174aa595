"""Decoding the attribute values analyses need (dimensions, called computations, metadata,
custom-call targets) from the exact text the parser kept."""

from __future__ import annotations

import re

from ..errors import HloSyntaxError
from .model import Metadata

# Attributes naming called computations, and the role each plays.
CALL_ATTRS = ("calls", "to_apply", "condition", "body", "true_computation",
              "false_computation", "branch_computations", "called_computations",
              "select", "scatter")

_NAME = re.compile(r"%?([A-Za-z_][\w.\-]*)")
_INT = re.compile(r"-?\d+")
_ESC = re.compile(r"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)", re.DOTALL)
_SIMPLE_ESC = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\",
               "a": "\a", "b": "\b", "f": "\f", "v": "\v", "?": "?"}
_MD_ITEM = re.compile(
    r"""[ \t\r\n,]*([A-Za-z_]\w*)=("(?:[^"\\]++|\\.)*+"|'(?:[^'\\]++|\\.)*+'|-?\d+|\{[^{}]*\})""",
    re.DOTALL)
_MD_END = re.compile(r"[ \t\r\n,]*\}")
_MD_INT_KEYS = {"source_line", "source_end_line", "source_column", "source_end_column",
                "stack_frame_id"}
METADATA_KEYS = {"op_type", "op_name", "source_file", "source_line", "source_end_line",
                 "source_column", "source_end_column", "stack_frame_id", "profile_type",
                 "deduplicated_name", "scheduling_name", "metadata_payload", "preserve_layout"}


def unquote(s: str) -> str:
    """The value of a quoted HLO string (C escapes, as absl::CUnescape reads them)."""
    body = s[1:-1]
    if "\\" not in body:
        return body

    def repl(m: re.Match) -> str:
        e = m.group(1)
        if e[0] == "x":
            return chr(int(e[1:], 16))
        if e[0] in "01234567":
            return chr(int(e, 8))
        return _SIMPLE_ESC.get(e, e)

    return _ESC.sub(repl, body)


def names(text: str) -> tuple[str, ...]:
    """Computation or instruction names in ``%a`` / ``{%a, b}`` text, without '%'."""
    return tuple(_NAME.findall(text))


def ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in _INT.findall(text))


_MD_VALUE = r"""(?:"(?:[^"\\]++|\\.)*+"|'(?:[^'\\]++|\\.)*+'|-?\d+|\{[^{}]*\})"""
_MD_WHOLE = re.compile(r"metadata=\{(?:[ \t\r\n,]*[A-Za-z_]\w*=" + _MD_VALUE + r")*[ \t\r\n,]*\}",
                       re.DOTALL)
_MD_PAIRS = re.compile(r"([A-Za-z_]\w*)=(" + _MD_VALUE + ")", re.DOTALL)
_intern: dict[str, str] = {}


def metadata(blob: str, text: str, pos: int) -> Metadata:
    """Decode ``metadata={...}`` (blob is the whole token, at ``pos`` in ``text``)."""
    if _MD_WHOLE.fullmatch(blob) is None:
        return _metadata_slow(blob, text, pos)  # finds and reports the error's position
    md = Metadata()
    seen = set()
    intern = _intern.setdefault
    for key, val in _MD_PAIRS.findall(blob, 10):
        if key in seen or key not in METADATA_KEYS:
            return _metadata_slow(blob, text, pos)
        seen.add(key)
        if key == "op_name":
            md.op_name = intern(val, val) if "\\" not in val else unquote(val)
            if md.op_name is val:
                md.op_name = val[1:-1]
                _intern[val] = md.op_name
        elif key == "stack_frame_id":
            md.stack_frame_id = int(val)
        elif key == "source_line":
            md.source_line = int(val)
        elif key == "op_type":
            md.op_type = _intern.get(val) or _intern.setdefault(val, unquote(val))
        elif key == "source_file":
            md.source_file = _intern.get(val) or _intern.setdefault(val, unquote(val))
        elif key in _MD_INT_KEYS:
            if val[0] in "\"'{":
                return _metadata_slow(blob, text, pos)
            md.extra = {**md.extra, key: val}
        else:
            md.extra = {**md.extra, key: val}
    return md


def _metadata_slow(blob: str, text: str, pos: int) -> Metadata:
    """Field-by-field decoding that names the position of the first bad field."""
    md = Metadata()
    i = blob.index("{") + 1
    seen = set()
    while True:
        m = _MD_ITEM.match(blob, i)
        if m is None:
            if _MD_END.fullmatch(blob, i):
                return md
            raise HloSyntaxError(text, pos + i, "a metadata field such as op_name=\"...\"")
        key, val = m.group(1), m.group(2)
        if key in seen or key not in METADATA_KEYS:
            what = "a metadata field used once" if key in seen else "a known metadata field"
            raise HloSyntaxError(text, pos + m.start(1), what, found=repr(key))
        seen.add(key)
        i = m.end()
        if key in _MD_INT_KEYS:
            if val[0] in "\"'{":
                raise HloSyntaxError(text, pos + m.start(2), f"an integer for {key}")
            v = int(val)
            if key == "source_line":
                md.source_line = v
            elif key == "stack_frame_id":
                md.stack_frame_id = v
            else:
                md.extra = {**md.extra, key: val}
        elif key == "op_name":
            md.op_name = unquote(val)
        elif key == "op_type":
            md.op_type = unquote(val)
        elif key == "source_file":
            md.source_file = unquote(val)
        else:
            md.extra = {**md.extra, key: val}
