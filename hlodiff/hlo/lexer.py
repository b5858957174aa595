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

from ..errors import HloSyntaxError

ELEMENT_TYPES = (
    "f8e4m3b11fnuz f8e4m3fnuz f8e5m2fnuz f8e8m0fnu f8e4m3fn f4e2m1fn f6e3m2fn f6e2m3fn "
    "f8e5m2 f8e4m3 f8e3m4 pred bf16 c128 c64 s16 s32 s64 s1 s2 s4 s8 u16 u32 u64 u1 u2 u4 u8 "
    "f16 f32 f64 token opaque"
).split()

_LAYOUT = r"(?:\{[ \t\r\n]*(?=[\d:])[\d \t\r\n,]*(?::[^{}]*(?:\{[^{}]*\}[^{}]*)*)?\})"
_SHAPE = r"(?:%s)\[[\d \t\r\n,<=?]*\]%s?" % ("|".join(ELEMENT_TYPES), _LAYOUT)

_NAME = r"%?[A-Za-z_][\w.\-]*"
_SEP = r"[ \t\r\n]*(?:/\*[^*]*\*/[ \t\r\n]*)?"
_OPERAND = r"(?:%s[ \t\r\n]+)?%s" % (_SHAPE, _NAME)

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
    r"|mesh\[[^\]]*\]"
    r"(?:[ \t]*,[ \t]*device_ids=(?:\((?:[^()]|\([^()]*\))*\)|\[[^\]]*\]))?"  # 2-D meshes
    r"[ \t]*\{[^{}]*\}")
_STRING = re.compile(r""""(?:[^"\\]++|\\.)*+"|'(?:[^'\\]++|\\.)*+'""", re.DOTALL)
_BRACE_OR_QUOTE = re.compile(r'[{}"]')
_LITERAL_CHARS = re.compile(r"[(){}]|/\*.*?\*/", re.DOTALL)
_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_LITERAL_BAD = re.compile(r"[^\s\w.+\-,{}()]")
_NAN_PAYLOAD = re.compile(r"\(0x[0-9a-fA-F]+\)")
_WS = re.compile(r"(?:[ \t\r\n]+|/\*.*?\*/|//[^\r\n]*)*", re.DOTALL)


# possessive (*+, ++): no backtracking, so a blob with nested braces fails in linear time
_FLAT_BLOB = re.compile(r'\{(?:[^{}"]++|"(?:[^"\\]++|\\.)*+")*+\}', re.DOTALL)


def _scan_blob(text: str, pos: int) -> int:
    """End of the balanced ``{...}`` starting at ``pos``; braces in "strings" do not count."""
    flat = _FLAT_BLOB.match(text, pos)  # the common case: no nested braces, one regex
    if flat is not None:
        return flat.end()
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


def _attribute(text: str, pos: int, end: int, key: str, comma: bool) -> tuple[list[Token], int]:
    """Tokens for an attribute name ending at ``end`` (``key`` includes the '=').

    With ``comma`` the attribute was preceded by ',' (from ``pos``), which common attributes
    absorb (CATTR, CMETADATA, CBLOB) to keep the token count low.
    """
    if key in _BLOB_ATTRS:
        if key != "metadata=":  # XLA allows white space (a line break) before the value
            end = _WS_ONLY.match(text, end).end() if _WS_ONLY.match(text, end) else end
        if end < len(text) and text[end] == "{":
            stop = _scan_blob(text, end)
        elif key != "metadata=":
            st = _STRING.match(text, end)
            if st is None:
                raise HloSyntaxError(text, end, f"a string or {{...}} after '{key}'")
            stop = st.end()
        else:
            stop = -1
        if stop >= 0:
            kind = "METADATA" if key == "metadata=" else "BLOB_ATTR"
            if comma:
                kind = "C" + kind
            return [_tok(kind, text[pos:stop], pos, stop)], stop
    special = _SPECIAL_ATTRS.get(key)
    if special is None:
        return [_tok("CATTR" if comma else "ATTR", key[:-1], pos, end)], end
    toks = []
    start = pos
    if comma:
        toks.append(_tok("_COMMA", ",", pos, pos + 1))
        start = end - len(key)
    if special == "GROUPS_ATTR" and text[end:end + 1] != "{":
        g = _GROUPS_VALUE.match(text, end)
        if g is None:
            raise HloSyntaxError(text, end, "replica groups: {{...}}, [a,b]<=[n] or mesh[...] {...}")
        toks.append(_tok(special, key[:-1], start, end))
        toks.append(_tok("GROUPS_VALUE", g.group(), end, g.end()))
        return toks, g.end()
    toks.append(_tok(special, key[:-1], start, end))
    return toks, end


class _Tok(Token):
    """A Lark Token made cheaply: positions only (lines are computed when needed)."""

    __slots__ = ()
    line = column = end_line = end_column = None  # type: ignore[assignment]


_new_str = str.__new__


def _tok(kind: str, value: str, start: int, end: int) -> Token:
    t = _new_str(_Tok, value)
    t.type = kind
    t.value = value
    t.start_pos = start
    t.end_pos = end
    return t


_WS_ONLY = re.compile(r"(?:[ \t\r\n]+|/\*.*?\*/|//[^\r\n]*)+", re.DOTALL)
_PCT = re.compile(r"%([A-Za-z_][\w.\-]*)(?P<eq>[ \t\r\n]*=)?")
_WORDISH = re.compile(
    r"(?P<SHAPE>" + _SHAPE + r")"
    r"|(?P<DIM_LABELS>[0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,})"
    r"|(?P<start>(?:ROOT[ \t\r\n]+)(?:%[A-Za-z_][\w.\-]*[ \t\r\n]*|[A-Za-z_][\w.\-]*[ \t\r\n]+)=)"
    r"|(?P<bare_start>[A-Za-z_][\w.\-]*[ \t\r\n]+=)"
    r"|(?P<word>[A-Za-z_][\w.\-]*)(?P<suffix>[=:])?")
_SIG_PARAM = r"[A-Za-z_][\w.\-]*:[ \t\r\n]*" + _SHAPE
_PAREN = re.compile(
    r"(?P<SIGNATURE>\(" + _SEP + r"(?:" + _SIG_PARAM + r"(?:" + _SEP + "," + _SEP + _SIG_PARAM + r")*"
    + _SEP + r")?\)[ \t\r\n]*->[ \t\r\n]*" + _SHAPE + r")"
    r"|(?P<OPERANDS>\(" + _SEP + _OPERAND + r"(?:" + _SEP + "," + _SEP + _OPERAND + r")*" + _SEP + r"\))"
    r"|(?P<PARAM_NUMBER>\([ \t]*\d+[ \t]*\))")
_COMMA_ATTR = re.compile(r",[ \t\r\n]*([A-Za-z_][\w.\-]*)=")
_NUMBER = re.compile(
    r"(?P<DIM_LABELS>[0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,})"
    r"|(?P<_ARROW>->)"
    r"|(?P<PAD>-?\d+_-?\d+(?:_\d+)?(?:x-?\d+_-?\d+(?:_\d+)?)*)"
    r"|(?P<DXD>\d+(?:x\d+)+)"
    r"|(?P<DECIMAL>-?\d+\.\d*(?:[eE][+\-]?\d+)?|-\.\d+(?:[eE][+\-]?\d+)?|-?\d+[eE][+\-]?\d+"
    r"|-inf|-nan(?:\(0x[0-9a-fA-F]+\))?)"
    r"|(?P<INT>-?\d+)")
_HEAD = re.compile(
    r"(?P<root>ROOT[ \t\r\n]+)?(?:%(?P<pn>[A-Za-z_][\w.\-]*)[ \t\r\n]*|(?P<bn>[A-Za-z_][\w.\-]*)[ \t\r\n]+)"
    r"=[ \t\r\n]*(?P<shape>" + _SHAPE + r")[ \t\r\n]+(?P<op>[a-z][a-z0-9\-]*)(?=\()")
_SIMPLE_ATTR = re.compile(
    r",[ \t\r\n]*([A-Za-z_][\w.\-]*)=(%?[A-Za-z_][\w.\-]*|-?\d+|\{[ \t\d,\-]*\}|"
    r"\"(?:[^\"\\\n]++|\\.)*+\")(?=[ \t]*(?:,|\r?\n|\}|$))")
_BRACE_INTS = re.compile(r"\{[ \t\r\n\d,\-]*\}")
_IDENT_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_NUMBER_START = frozenset("0123456789-?")


def tokenize(text: str) -> Iterator[Token]:
    """Yield the tokens of ``text``; raises HloSyntaxError at the first thing that is no token."""
    pos = 0
    n = len(text)
    if "\x00" in text:
        raise HloSyntaxError(text, text.index("\x00"), "text (found a NUL byte: is this a binary file?)")
    ws = _WS_ONLY.match
    wordish = _WORDISH.match
    pct = _PCT.match
    paren = _PAREN.match
    comma_attr = _COMMA_ATTR.match
    simple_attr = _SIMPLE_ATTR.match
    head = _HEAD.match
    number = _NUMBER.match
    keywords = _KEYWORDS
    ident_start = _IDENT_START
    punct = _PUNCT
    tok = _tok
    while pos < n:
        c = text[pos]
        if c in " \t\r\n" or c == "/":
            m = ws(text, pos)
            if m is None:
                if text.startswith("/*", pos):
                    raise HloSyntaxError(text, pos, "'*/' to close this comment")
                raise HloSyntaxError(text, pos, "an HLO token")
            pos = m.end()
            continue
        if c in ident_start or c == "%":
            h = head(text, pos)
            if h is not None and h.group("op") != "constant":
                end = h.end()
                name = h.group("pn") or h.group("bn")
                t = tok("INSTR_HEAD", name, pos, end)
                t.value = (name, h.group("shape"), h.group("op"), h.group("root") is not None)
                yield t
                pos = end
                continue
        if c in ident_start:
            m = wordish(text, pos)
            kind = m.lastgroup
            end = m.end()
            if kind == "word":
                value = m.group()
                kw = keywords.get(value)
                if kw is not None:
                    yield tok(kw, value, pos, end)
                elif value == "constant" or value == "b" or value == "nan":
                    w = _WS.match(text, end).end()
                    nxt = text[w:w + 1]
                    if value == "constant" and nxt == "(":
                        yield tok("CONSTANT", value, pos, end)
                        end = _scan_literal(text, w)
                        yield tok("LITERAL", text[w + 1:end - 1], w, end)
                    elif value == "b" and nxt == "(":
                        yield tok("BUFFER", value, pos, end)
                    elif value == "nan":
                        p = _NAN_PAYLOAD.match(text, end)
                        if p:
                            end = p.end()
                        yield tok("DECIMAL", text[pos:end], pos, end)
                    else:
                        yield tok("IDENT", value, pos, end)
                else:
                    yield tok("IDENT", value, pos, end)
            elif kind == "SHAPE":
                yield tok("SHAPE", m.group(), pos, end)
            elif kind == "suffix":  # word followed by '=' or ':'
                value = m.group()
                if value[-1] == ":":
                    yield tok("PARAM_NAME", value[:-1], pos, end)
                else:
                    toks, end = _attribute(text, pos, end, value, False)
                    yield from toks
            elif kind == "bare_start":
                yield tok("INSTR_START", text[pos:end - 1].rstrip(), pos, end)
            elif kind == "start":
                value = text[pos + 4:end - 1].strip()
                yield tok("ROOT_START", value[1:] if value[0] == "%" else value, pos, end)
            else:
                yield tok(kind, m.group(), pos, end)
            pos = end
        elif c == "%":
            m = pct(text, pos)
            if m is None:
                raise HloSyntaxError(text, pos, "a name after '%'")
            end = m.end()
            if m.group("eq"):
                yield tok("INSTR_START", m.group(1), pos, end)
            else:
                yield tok("PNAME", text[pos:end], pos, end)
            pos = end
        elif c == "(":
            m = paren(text, pos)
            if m is None:
                yield tok("_LPAR", c, pos, pos + 1)
                pos += 1
            else:
                end = m.end()
                yield tok(m.lastgroup, m.group(), pos, end)
                pos = end
        elif c == ",":
            m = simple_attr(text, pos)
            if m is not None:
                key = m.group(1) + "="
                if key not in _BLOB_ATTRS and key not in _SPECIAL_ATTRS:
                    end = m.end()
                    t = tok("CATTR_SIMPLE", key, pos, end)
                    t.value = (m.group(1), m.group(2))
                    yield t
                    pos = end
                    continue
            m = comma_attr(text, pos)
            if m is None:
                yield tok("_COMMA", c, pos, pos + 1)
                pos += 1
            else:
                toks, pos = _attribute(text, pos, m.end(), m.group(1) + "=", True)
                yield from toks
        elif c in _NUMBER_START:
            m = number(text, pos)
            if m is None:
                if c == "?":
                    yield tok("_QMARK", c, pos, pos + 1)
                    pos += 1
                    continue
                raise HloSyntaxError(text, pos, "an HLO token")
            end = m.end()
            yield tok(m.lastgroup, m.group(), pos, end)
            pos = end
        elif c == '"' or c == "'":
            m = _STRING.match(text, pos)
            if m is None:
                raise HloSyntaxError(text, pos, "a closing quote for this string")
            end = m.end()
            yield tok("STRING", m.group(), pos, end)
            pos = end
        elif c == "{":
            m = _BRACE_INTS.match(text, pos)
            if m is None:
                yield tok("_LBRACE", c, pos, pos + 1)
                pos += 1
            else:
                end = m.end()
                yield tok("BRACE_INTS", m.group(), pos, end)
                pos = end
        elif c in punct:
            yield tok(punct[c], c, pos, pos + 1)
            pos += 1
        elif text.startswith("...", pos):
            yield tok("_ELLIPSIS", "...", pos, pos + 3)
            pos += 3
        elif text.startswith("<=", pos):
            yield tok("_LE", "<=", pos, pos + 2)
            pos += 2
        else:
            raise HloSyntaxError(text, pos, "an HLO token")


_OPERAND_ONE = re.compile(_SEP + r"(?:,)?" + _SEP + r"(?:%s[ \t\r\n]+)?%%?([A-Za-z_][\w.\-]*)" % _SHAPE)


def operand_names(token: str) -> list[str]:
    """The operand names of an OPERANDS token such as ``(f32[2]{0} %a, %b)``."""
    out = []
    pos = 1
    one = _OPERAND_ONE.match
    while True:
        m = one(token, pos)
        if m is None:
            return out
        out.append(m.group(1))
        pos = m.end()


class HloLexer(Lexer):
    """Lark adapter: Lark calls ``lex`` with the text of each parse."""

    def __init__(self, lexer_conf=None) -> None:  # Lark passes its lexer configuration
        pass

    def lex(self, data, *rest) -> Iterator[Token]:  # Lark hands a custom lexer the text
        return tokenize(data if isinstance(data, str) else data.text)
