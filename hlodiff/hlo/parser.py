"""Text -> model: Lark's LALR tables for ``grammar/hlo.lark``, run by a tight driver over our
lexer's tokens, with the callbacks of :mod:`.builder` making the model as rules reduce."""

from __future__ import annotations

import itertools
import warnings
import threading

from lark import Lark, Token
from lark.exceptions import UnexpectedInput, UnexpectedToken

from ..errors import HloSyntaxError, HloWarning
from .lexer import HloLexer, tokenize
from .gcpause import gc_paused
from .grammarfile import grammar_text  # noqa: F401  (re-exported: parser.grammar_text)
from .model import Module
from .names import uniquify_instruction_names
from .validate import first_long_integer, validate

_lock = threading.Lock()
_parser: Lark | None = None


from .builder import _Builder, _Context

_builder = _Builder()


def _tables_file() -> str:
    """The name of the table file: hashes of the grammar and of Lark's and hlodiff's versions."""
    import hashlib

    import lark

    from .. import __version__

    h = hashlib.sha256(f"{__version__}/{lark.__version__}/".encode() + grammar_text().encode())
    return f"lalr-{h.hexdigest()[:24]}.msgpack"


def _load_tables(data: bytes) -> Lark:
    """A Lark parser from tables stored by :func:`_store_tables`. MessagePack holds only
    strings, numbers, lists and maps, so a planted file cannot run code; Lark rebuilds its
    rule and terminal objects from them. The two classes (our lexer) are put back here."""
    import msgspec

    d = msgspec.msgpack.decode(data)
    d["data"]["options"]["lexer"] = HloLexer
    d["data"]["parser"]["lexer_conf"]["lexer_type"] = HloLexer
    return Lark.__new__(Lark)._load(d, transformer=_builder)


def _store_tables(lark: Lark) -> bytes:
    import msgspec
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = lark.memo_serialize([TerminalDef, Rule])
    data["options"] = dict(data["options"], lexer=None, transformer=None)
    data["parser"]["lexer_conf"]["lexer_type"] = None
    return msgspec.msgpack.encode({"data": data, "memo": memo})


def _build() -> Lark:
    return Lark(grammar_text(), parser="lalr", lexer=HloLexer, transformer=_builder,
                start="start", maybe_placeholders=False, cache=False)


def _get_parser() -> Lark:
    """The Lark LALR parser. Building its tables takes about 0.1 s, so they are kept in the
    private cache directory as MessagePack (never a pickle) and loaded in about 0.01 s; a
    file that does not load is replaced."""
    global _parser
    if _parser is None:
        import os

        from ..userdirs import private_cache_dir, read_private_file, write_private_file

        base = None if os.environ.get("HLODIFF_NO_CACHE") else private_cache_dir(create=True)
        name = _tables_file()
        data = read_private_file(base / name) if base is not None else None
        if data is not None:
            try:
                _parser = _load_tables(data)
            except Exception:  # noqa: BLE001 - any damage to the file means: build anew
                _parser = None
        if _parser is None:
            _parser = _build()
            if base is not None:
                try:
                    write_private_file(base, name, _store_tables(_parser))
                except Exception:  # noqa: BLE001 - the tables are only an optimization
                    pass
    return _parser


_TERMINAL_WORDS = {
    "HLOMODULE": "'HloModule'", "ENTRY": "'ENTRY'", "ROOT": "'ROOT'", "IDENT": "a name",
    "PNAME": "a %name", "PARAM_NAME": "a parameter 'name:'", "ATTR": "an attribute 'name='",
    "SHAPE": "a shape such as f32[2,4]{1,0}", "CONSTANT": "'constant'", "LITERAL": "a literal",
    "METADATA": "metadata={...}", "BLOB_ATTR": "backend_config", "INT": "an integer",
    "DECIMAL": "a number", "BOOL": "true/false", "STRING": "a \"string\"",
    "BRACE_INTS": "{integers}", "_LPAR": "'('", "_RPAR": "')'", "_LBRACE": "'{'",
    "_RBRACE": "'}'", "_LSQB": "'['", "_RSQB": "']'", "_COMMA": "','", "_EQ": "'='",
    "_COLON": "':'", "_ARROW": "'->'", "_HASH": "'#'", "$END": "the end of the file",
    "FILENAMES": "'FileNames'", "STACKFRAMES": "'StackFrames'",
}


def _expected_words(expected: set[str]) -> str:
    words = sorted({_TERMINAL_WORDS.get(t, t) for t in expected})
    if len(words) > 6:
        words = words[:6] + ["..."]
    return " or ".join(words) if words else "something else"


def parse(text: str, path: str | None = None) -> Module:
    """Parse HLO text into a Module. Raises HloSyntaxError naming line and column."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise HloSyntaxError("", 0, "UTF-8 text", found="binary data", path=path) from None
    with _lock, gc_paused():
        ctx = _Context(text)
        _builder.ctx = ctx
        try:
            if not text.strip():
                raise HloSyntaxError(text, 0, "an HLO module ('HloModule name' or a computation)",
                                     found="an empty file")
            module = _driver().run(tokenize(text), text, ctx)
            notes = validate(module, text)
        except HloSyntaxError as e:
            raise e.with_path(path) if path else e
        except UnexpectedToken as e:
            tok = e.token
            if tok.type == "$END":
                err = HloSyntaxError(text, len(text), _expected_words(e.expected))
            else:
                err = HloSyntaxError(text, tok.start_pos, _expected_words(e.expected))
            raise (err.with_path(path) if path else err) from None
        except UnexpectedInput as e:  # pragma: no cover - other Lark errors
            err = HloSyntaxError(text, getattr(e, "pos_in_stream", 0) or 0, "valid HLO")
            raise (err.with_path(path) if path else err) from None
        except RecursionError:
            raise HloSyntaxError(text, 0, "HLO nested less deeply", path=path) from None
        except ValueError as e:  # Python refuses to convert integers of over 4,300 digits
            if "digits" not in str(e):
                raise
            pos = first_long_integer(text) or 0
            raise HloSyntaxError(text, pos, "an integer of at most 64 bits",
                                 found="an integer of thousands of digits", path=path) from None
        finally:
            _builder.ctx = _Context("")
    with gc_paused():
        uniquify_instruction_names(module)
    module.path = path
    for note in notes:
        warnings.warn(HloWarning(f"{note.with_path(path) if path else note}; read anyway "
                                 "(written by a newer XLA?)"), stacklevel=2)
    return module


class _Driver:
    """Runs Lark's LALR table for the grammar over our token stream.

    Lark's own loop (``feed_token``) is general; this one keys every table by plain strings
    and resolves each rule's callback and size once, which halves the time per token on
    large modules. The table, the rules and the callbacks are Lark's.
    """

    def __init__(self, lark: Lark) -> None:
        engine = lark.parser.parser.parser  # lark.parsers.lalr_parser._Parser
        table = engine.parse_table
        callbacks = engine.callbacks
        self.start_state = table.start_states["start"]
        self.end_state = table.end_states["start"]
        self.actions: dict[int, dict[str, tuple]] = {}
        for state, acts in table.states.items():
            row: dict[str, tuple] = {}
            for key, (action, arg) in acts.items():
                if action.name == "Shift":
                    row[str(key)] = (True, arg)
                else:
                    row[str(key)] = (False, len(arg.expansion), callbacks[arg], str(arg.origin.name))
            self.actions[state] = row

    def run(self, tokens, text: str, ctx: "_Context | None" = None):
        """Parse the token stream; ``ctx.prev_end`` follows the token before the lookahead.

        The stream is followed by Lark's ``$END``; the parse is accepted when a reduction on
        ``$END`` reaches the end state.
        """
        if ctx is None:
            ctx = _Context(text)
        actions = self.actions
        end_state = self.end_state
        states = [self.start_state]
        values: list = []
        push_state = states.append
        push_value = values.append
        last_end = 0
        end = Token("$END", "", len(text), end_pos=len(text))
        for tok in itertools.chain(tokens, (end,)):
            ctx.prev_end = last_end
            last_end = tok.end_pos
            ttype = tok.type
            while True:
                act = actions[states[-1]].get(ttype)
                if act is None:
                    raise UnexpectedToken(tok, {k for k in actions[states[-1]]
                                                if k.isupper() or k.startswith("_")})
                if act[0]:  # shift ($END never is)
                    push_state(act[1])
                    push_value(tok)
                    break
                size = act[1]
                if size:
                    args = values[-size:]
                    del states[-size:]
                    del values[-size:]
                else:
                    args = []
                value = act[2](args)
                goto = actions[states[-1]][act[3]][1]
                if goto == end_state and ttype == "$END":
                    return value
                push_value(value)
                push_state(goto)
        raise AssertionError("unreachable: $END either reduces to the end state or is an error")


_driver_instance: _Driver | None = None


def _driver() -> _Driver:
    global _driver_instance
    if _driver_instance is None:
        _driver_instance = _Driver(_get_parser())
    return _driver_instance
