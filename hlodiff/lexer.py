"""The tokenizer for HLO text, plugged into Lark's LALR parser.

XLA's lexer is context-sensitive (``name:`` and ``name=`` absorb their punctuation, a ``{``
after a shape is a layout only when an integer or ``:`` follows, ``backend_config={...}`` is
read raw with balanced braces). A regular expression per token cannot say all of that, so
this module tokenizes with one master expression and a few hand-written scanners, and Lark
does the parsing (``grammar/hlo.lark``). Coarse tokens (a whole array shape, a whole
metadata block, a whole literal) keep the token count, and so the parse time, low.
"""

from __future__ import annotations

import re
from typing import Iterator

from lark import Token
from lark.lexer import Lexer

from .errors import HloSyntaxError

ELEMENT_TYPES = (
    "f8e4m3b11fnuz f8e4m3fnuz f8e5m2fnuz f8e8m0fnu f8e4m3fn f4e2m1fn f6e3m2fn f6e2m3fn "
    "f8e5m2 f8e4m3 f8e3m4 pred bf16 c128 c64 s16 s32 s64 s1 s2 s4 s8 u16 u32 u64 u1 u2 u4 u8 "
    "f16 f32 f64 token opaque"
).split()

_LAYOUT = r"(?:\{[ \t\r\n]*(?=[\d:])[\d \t\r\n,]*(?::[^{}]*(?:\{[^{}]*\}[^{}]*)*)?\})"
_SHAPE = r"(?:%s)\[[\d \t\r\n,<=?]*\]%s?" % ("|".join(ELEMENT_TYPES), _LAYOUT)

_MASTER = re.compile(
    r"""
    (?P<ws>(?:[ \t\r\n]+|/\*.*?\*/|//[^\r\n]*)+)
  | (?P<PNAME>%[A-Za-z_][\w.\-]*)
  | (?P<SHAPE>""" + _SHAPE + r""")
  | (?P<DIM_LABELS>[0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,})
  | (?P<word>[A-Za-z_][\w.\-]*)(?P<suffix>[=:])?
  | (?P<ARROW>->)
  | (?P<PAD>-?\d+_-?\d+(?:_\d+)?(?:x-?\d+_-?\d+(?:_\d+)?)*)
  | (?P<DXD>\d+(?:x\d+)+)
  | (?P<DECIMAL>-?\d+\.\d*(?:[eE][+\-]?\d+)?|-\.\d+(?:[eE][+\-]?\d+)?|-?\d+[eE][+\-]?\d+
               |-inf|-nan(?:\(0x[0-9a-fA-F]+\))?)
  | (?P<INT>-?\d+)
  | (?P<STRING>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<BRACE_INTS>\{[ \t\r\n\d,\-]*\})
  | (?P<ELLIPSIS>\.\.\.)
  | (?P<LE><=)
  | (?P<punct>[(){}\[\],=:\#?*])
    """,
    re.VERBOSE | re.DOTALL,
)

_PUNCT = {
    "(": "_LPAR", ")": "_RPAR", "{": "_LBRACE", "}": "_RBRACE", "[": "_LSQB", "]": "_RSQB",
    ",": "_COMMA", "=": "_EQ", ":": "_COLON", "#": "_HASH", "?": "_QMARK", "*": "_STAR",
}
_KEYWORDS = {
    "HloModule": "HLOMODULE", "ENTRY": "ENTRY", "ROOT": "ROOT", "FileNames": "FILENAMES",
    "FunctionNames": "FUNCTIONNAMES", "FileLocations": "FILELOCATIONS",
    "StackFrames": "STACKFRAMES", "true": "BOOL", "false": "BOOL", "inf": "DECIMAL",
}
# Attributes whose value has a syntax of its own in the grammar.
_SPECIAL_ATTRS = {
    "window=": "WINDOW_ATTR", "input_output_alias=": "ALIAS_ATTR",
    "buffer_donor=": "DONOR_ATTR", "result_accuracy=": "ACCURACY_ATTR",
    "replica_groups=": "GROUPS_ATTR",
}
# Attributes XLA reads raw: a string, or a balanced {...} blob that need not be JSON.
_BLOB_ATTRS = {"backend_config=", "frontend_attributes=", "metadata="}

_GROUPS_VALUE = re.compile(
    r"\[[\d\s,]*\][ \t]*<=[ \t]*\[[\d\s,]*\](?:T\([\d\s,]*\))?"
    r"|mesh\[[^\]]*\][ \t]*\{[^{}]*\}")
_STRING = re.compile(r""""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'""", re.DOTALL)
_BRACE_OR_QUOTE = re.compile(r'[{}"]')
_LITERAL_CHARS = re.compile(r"[(){}]|/\*.*?\*/", re.DOTALL)
_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_LITERAL_BAD = re.compile(r"[^\s\w.+\-,{}()]")
_NAN_PAYLOAD = re.compile(r"\(0x[0-9a-fA-F]+\)")
_WS = re.compile(r"(?:[ \t\r\n]+|/\*.*?\*/|//[^\r\n]*)*", re.DOTALL)


def _scan_blob(text: str, pos: int) -> int:
    """End of the balanced ``{...}`` starting at ``pos``; braces in "strings" do not count."""
    depth = 0
    i = pos
    search = _BRACE_OR_QUOTE.search
    while True:
        m = search(text, i)
        if m is None:
            raise HloSyntaxError(text, pos, "a closing '}' for this '{'")
        c = m.group()
        j = m.start()
        if c == '"':
            s = _STRING.match(text, j)
            if s is None:
                raise HloSyntaxError(text, j, "a closing '\"' for this string")
            i = s.end()
        elif c == "{":
            depth += 1
            i = j + 1
        else:
            depth -= 1
            i = j + 1
            if depth == 0:
                return i


def _scan_literal(text: str, pos: int) -> int:
    """End of the literal ``( ... )`` at ``pos``, checking that its brackets nest."""
    stack: list[str] = []
    closer = {")": "(", "}": "{"}
    for m in _LITERAL_CHARS.finditer(text, pos):
        c = m.group()
        if len(c) > 1:  # a /* comment */
            continue
        if c in "({":
            stack.append(c)
        elif not stack or stack.pop() != closer[c]:
            raise HloSyntaxError(text, m.start(), "a literal value (numbers in nested braces)")
        if not stack:
            end = m.end()
            bad = _LITERAL_BAD.search(text, pos, end)
            if bad and "/*" in text[pos:end]:
                body = _COMMENT.sub(lambda c: " " * len(c.group()), text[pos:end])
                bad = _LITERAL_BAD.search(body)
                if bad:
                    raise HloSyntaxError(text, pos + bad.start(),
                                         "a literal value (numbers in nested braces)")
            elif bad:
                raise HloSyntaxError(text, bad.start(), "a literal value (numbers in nested braces)")
            return end
    raise HloSyntaxError(text, pos, "a closing ')' for this constant")


def tokenize(text: str) -> Iterator[Token]:
    """Yield the tokens of ``text``; raises HloSyntaxError at the first thing that is no token."""
    match = _MASTER.match
    pos = 0
    n = len(text)
    if "\x00" in text:
        raise HloSyntaxError(text, text.index("\x00"), "text (found a NUL byte: is this a binary file?)")
    while pos < n:
        m = match(text, pos)
        if m is None:
            if text.startswith("/*", pos):
                raise HloSyntaxError(text, pos, "'*/' to close this comment")
            raise HloSyntaxError(text, pos, "an HLO token")
        kind = m.lastgroup
        end = m.end()
        if kind == "ws":
            pos = end
            continue
        if kind == "suffix":  # word followed by '=' or ':'
            value = m.group()
            if value[-1] == ":":
                yield Token("PARAM_NAME", value[:-1], pos, end_pos=end)
            elif value in _BLOB_ATTRS:
                if end < n and text[end] == "{":
                    end = _scan_blob(text, end)
                elif value != "metadata=":
                    s = _STRING.match(text, end)
                    if s is None:
                        raise HloSyntaxError(text, end, f"a string or {{...}} after '{value}'")
                    end = s.end()
                else:
                    yield Token("ATTR", value[:-1], pos, end_pos=end)
                    pos = end
                    continue
                yield Token("METADATA" if value == "metadata=" else "BLOB_ATTR",
                            text[pos:end], pos, end_pos=end)
            elif value == "replica_groups=" and text[end:end + 1] != "{":
                g = _GROUPS_VALUE.match(text, end)
                if g is None:
                    raise HloSyntaxError(text, end, "replica groups: {{...}}, [a,b]<=[n] or mesh[...] {...}")
                yield Token("GROUPS_ATTR", value[:-1], pos, end_pos=end)
                yield Token("GROUPS_VALUE", g.group(), end, end_pos=g.end())
                end = g.end()
            else:
                yield Token(_SPECIAL_ATTRS.get(value, "ATTR"), value[:-1], pos, end_pos=end)
        elif kind == "word":
            value = m.group()
            kw = _KEYWORDS.get(value)
            if kw is not None:
                yield Token(kw, value, pos, end_pos=end)
            elif value == "constant" or value == "b" or value == "nan":
                w = _WS.match(text, end).end()
                nxt = text[w:w + 1]
                if value == "constant" and nxt == "(":
                    yield Token("CONSTANT", value, pos, end_pos=end)
                    lit_end = _scan_literal(text, w)
                    yield Token("LITERAL", text[w + 1:lit_end - 1], w, end_pos=lit_end)
                    end = lit_end
                elif value == "b" and nxt == "(":
                    yield Token("BUFFER", value, pos, end_pos=end)
                elif value == "nan":
                    p = _NAN_PAYLOAD.match(text, end)
                    if p:
                        end = p.end()
                    yield Token("DECIMAL", text[pos:end], pos, end_pos=end)
                else:
                    yield Token("IDENT", value, pos, end_pos=end)
            else:
                yield Token("IDENT", value, pos, end_pos=end)
        elif kind == "punct":
            yield Token(_PUNCT[m.group()], m.group(), pos, end_pos=end)
        elif kind == "ARROW":
            yield Token("_ARROW", "->", pos, end_pos=end)
        elif kind == "LE":
            yield Token("_LE", "<=", pos, end_pos=end)
        elif kind == "ELLIPSIS":
            yield Token("_ELLIPSIS", "...", pos, end_pos=end)
        else:
            yield Token(kind, m.group(), pos, end_pos=end)
        pos = end


class HloLexer(Lexer):
    """Lark adapter: Lark calls ``lex`` with the text of each parse."""

    def __init__(self, lexer_conf=None) -> None:  # Lark passes its lexer configuration
        pass

    def lex(self, data, *rest) -> Iterator[Token]:  # Lark hands a custom lexer the text
        return tokenize(data if isinstance(data, str) else data.text)
