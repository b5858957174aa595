"""The callbacks that build the typed model while Lark's LALR driver parses HLO text.

One method per grammar rule (or alias) of ``grammar/hlo.lark``; no parse tree is built in
between (it would double the time). :mod:`.parser` owns the driver and calls these.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token

from . import attributes as A
from ..errors import HloSyntaxError
from .lexer import operand_names
from .model import Computation, Instruction, Metadata, Module, Shape, StackTables
from .opcodes import resolve_opcode
from .shapes import UNKNOWN, array_shape, tuple_shape


class _Context:
    """What the callbacks of one parse share: the text, positions, the stack tables."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.prev_end = 0  # end of the token before the lookahead
        self.tables: StackTables | None = None
        self.line_pos = 0
        self.line_no = 1
        self.inline: list[Computation] = []
        self.extra_comps: list[Computation] = []
        self.metadata: dict[str, Metadata] = {}  # metadata text -> its shared decoded object
        self.anon: dict[str, int] = {}
        self.wrapped = 0

    def line_of(self, pos: int) -> int:
        """1-based line of ``pos``; cheap when positions come in (nearly) increasing order."""
        if pos >= self.line_pos:
            self.line_no += self.text.count("\n", self.line_pos, pos)
        else:
            self.line_no -= self.text.count("\n", pos, self.line_pos)
        self.line_pos = pos
        return self.line_no



def _name(tok: Token) -> str:
    return tok[1:] if tok[0] == "%" else str(tok)


class _Attr:
    """An attribute as the callbacks see it: key, exact value text, decoded value."""

    __slots__ = ("key", "text", "value", "pos")

    def __init__(self, key: str, text: str, pos: int, value: Any = None) -> None:
        self.key = key
        self.text = text
        self.pos = pos
        self.value = value


class _Operand:
    __slots__ = ("name", "gte", "nested", "pos")

    def __init__(self, name: str | None, pos: int, gte: tuple[int, ...] = (),
                 nested: list[Instruction] | None = None) -> None:
        self.name = name
        self.pos = pos
        self.gte = gte
        self.nested = nested


class _Builder:
    """Lark callbacks: one method per grammar rule (or alias)."""

    def __init__(self) -> None:
        self.ctx: _Context = _Context("")

    # ---- shapes -------------------------------------------------------------------------
    def array_shape(self, c):
        return array_shape(c[0])

    def tuple_shape(self, c):
        return tuple_shape(c)

    def buffer_shape(self, c):
        return array_shape(c[1])

    # ---- operands -----------------------------------------------------------------------
    def operands(self, c):
        return c

    def named_operand(self, c):
        i = 1 if isinstance(c[0], Shape) else 0
        tok = c[i]
        gte = tuple(int(x) for x in c[i + 1:]) if len(c) > i + 1 else ()
        return _Operand(_name(tok), tok.start_pos, gte)

    def nested_operand(self, c):
        shape = c[0] if isinstance(c[0], Shape) else UNKNOWN
        op_tok = c[1] if shape is not UNKNOWN else c[0]
        ops = c[-1] if isinstance(c[-1], list) else []
        last = c[-1]
        if len(c) > 1 and isinstance(last, Token) and last.type == "OPERANDS":
            ops = [_Operand(n, last.start_pos) for n in operand_names(last)]
        elif len(c) > 1 and isinstance(last, Token) and last.type == "PARAM_NUMBER":
            ops = [int(last[1:-1])]
        return self._nested(op_tok, shape, ops, None)

    def nested_constant(self, c):
        shape = c[0] if isinstance(c[0], Shape) else UNKNOWN
        return self._nested(c[-2], shape, [], c[-1])

    def _nested(self, op_tok, shape, ops, literal):
        """A nested instruction operand; it is named later, in XLA's (pre-)order."""
        opcode, wrapped = resolve_opcode(str(op_tok), self.ctx.text, op_tok.start_pos)
        inst = Instruction("", opcode, shape, [], async_wrapped=wrapped,
                           literal=_small_literal(literal) if literal is not None else None)
        if opcode == "parameter" and ops and isinstance(ops[0], int):
            inst.parameter_number = ops[0]
        inst.line = self.ctx.line_of(op_tok.start_pos)
        return _Operand(None, op_tok.start_pos, (), (inst, ops))

    def number_operand(self, c):
        return int(c[0])

    def _operand_names(self, ops, extra: list[Instruction]) -> list[str]:
        out = []
        for op in ops:
            if isinstance(op, int):
                continue
            if op.nested:  # name it (XLA: "<opcode>.anon", then ".anon.N"), then its operands
                inst, sub = op.nested
                counts = self.ctx.anon
                k = counts.get(inst.opcode, 0)
                counts[inst.opcode] = k + 1
                inst.name = f"{inst.opcode}.anon" + (f".{k}" if k else "")
                inst.operands = self._operand_names(sub, extra)
                extra.append(inst)
                op.name = inst.name
            name = op.name
            if op.gte:  # compact get-tuple-element: p#1#0
                for idx in op.gte:
                    gname = f"{name}#{idx}"
                    g = Instruction(gname, "get-tuple-element", UNKNOWN, [name], index=idx)
                    g.attrs["index"] = str(idx)
                    extra.append(g)
                    name = gname
            out.append(name)
        return out

    def _async_wrapped(self, inst: Instruction) -> None:
        """XLA turns ``<op>-start`` sugar into async-start calling a new computation that
        holds the op; build that computation the same way."""
        ctx = self.ctx
        k = ctx.wrapped
        ctx.wrapped += 1
        cname = "async_wrapped" + (f".{k}" if k else "")
        params = []
        for n, op in enumerate(inst.operands):
            pname = "async_param" + (f".{n}" if n else "")
            params.append(Instruction(pname, "parameter", UNKNOWN, [], parameter_number=n,
                                      line=inst.line))
        shape = inst.shape.tuple_shapes[1] if len(inst.shape.tuple_shapes) > 1 else UNKNOWN
        body = Instruction(inst.async_wrapped or "", inst.async_wrapped or "", shape,
                           [p.name for p in params], is_root=True, line=inst.line,
                           attrs=dict(inst.attrs), calls=inst.calls,
                           called=dict(inst.called), metadata=inst.metadata,
                           custom_call_target=inst.custom_call_target,
                           dimensions=inst.dimensions)
        comp = self._make_computation(cname, params + [body], is_entry=False, line=inst.line)
        ctx.extra_comps.append(comp)
        inst.called = {"calls": (cname,)}
        inst.calls = (cname,)

    # ---- attributes ---------------------------------------------------------------------
    def _span(self, tok: Token) -> str:
        return self.ctx.text[tok.end_pos:self.ctx.prev_end].strip()

    def generic_attr(self, c):
        tok = c[0]
        a = _Attr(str(tok), self._span(tok), tok.start_pos)
        if self.ctx.inline:
            a.value = tuple(comp.name for comp in self.ctx.inline if comp.line >= 0)
            for comp in self.ctx.inline:
                comp.line = -comp.line if comp.line > 0 else comp.line
        return a

    def simple_attr(self, c):
        tok = c[0]
        key, val = tok.value
        return _Attr(key, val, tok.start_pos)

    literal_attr = generic_attr
    window_attr = generic_attr
    accuracy_attr = generic_attr

    def window_field(self, c):
        key, val = c
        if str(key) == "pad" and val.type == "PAD" and any(
                part.count("_") != 1 for part in str(val).split("x")):
            raise HloSyntaxError(self.ctx.text, val.start_pos,
                                 "window padding as low_high pairs (e.g. pad=0_1x1_1)")
        return None

    def metadata_attr(self, c):
        """Decoded metadata, one shared object per distinct text (optimized modules repeat
        a few hundred metadata texts tens of thousands of times)."""
        tok = c[0]
        blob = str(tok)
        k = blob.index("metadata=") if tok.type == "CMETADATA" else 0
        body = blob[k + 9:]
        ctx = self.ctx
        md = ctx.metadata.get(body)
        if md is None:
            md = A.metadata(blob[k:], ctx.text, tok.start_pos + k)
            if md.stack_frame_id and ctx.tables is not None and md.source_file is None:
                md.source_file, _fn, md.source_line = ctx.tables.frame(md.stack_frame_id)
            ctx.metadata[body] = md
        return _Attr("metadata", body, tok.start_pos, md)

    def blob_attr(self, c):
        tok = c[0]
        key, _, val = str(tok).partition("=")
        return _Attr(key.lstrip(", \t\r\n"), val.lstrip(" \t\r\n"), tok.start_pos)

    # generic values: only their text matters, which _span takes from the source
    def _none(self, c):
        return None

    braced = bracketed = parenthesized = elements = element = scalar = array_value = _none
    alias_entry = donor_entry = _none

    def inline_computation(self, c):
        ctx = self.ctx
        name = "_" if not ctx.inline else f"_.{len(ctx.inline)}"
        comp = self._make_computation(name, c, is_entry=False, line=1)
        ctx.inline.append(comp)
        return None

    # ---- instructions -------------------------------------------------------------------
    def instruction(self, c):
        return self._instruction(c, constant=False)

    def head_instruction(self, c):
        """The common form: INSTR_HEAD (name, shape, opcode) then operands and attributes."""
        ctx = self.ctx
        head = c[0]
        name, shape_text, op, is_root = head.value
        opcode, wrapped = resolve_opcode(op, ctx.text, head.end_pos - len(op))
        extra: list[Instruction] = []
        operands, param_no, i = self._operand_list(c, 1, opcode, extra)
        inst = Instruction(name, opcode, array_shape(shape_text), operands, is_root=is_root,
                           parameter_number=param_no, async_wrapped=wrapped)
        inst.line = ctx.line_of(head.start_pos)
        return self._finish(inst, c, i, extra)

    def _operand_list(self, c: list, i: int, opcode: str, extra: list[Instruction]
                      ) -> tuple[list[str], int | None, int]:
        """(operand names, parameter number, index after them) from the child at ``i``:
        an OPERANDS or PARAM_NUMBER token, a list from the ``operands`` rule, or nothing."""
        ops = c[i] if i < len(c) else None
        if isinstance(ops, Token):
            if ops.type == "OPERANDS":
                return operand_names(ops), None, i + 1
            if ops.type == "PARAM_NUMBER":
                return [], int(ops[1:-1]), i + 1
        elif isinstance(ops, list):
            param_no = ops[0] if opcode == "parameter" and ops and isinstance(ops[0], int) else None
            return self._operand_names(ops, extra), param_no, i + 1
        return [], None, i

    def _finish(self, inst: Instruction, c: list, i: int, extra: list[Instruction]):
        """Attributes from child ``i`` on, async sugar, and the instructions made on the way."""
        self._attributes(inst, c, i)
        if inst.async_wrapped is not None and inst.opcode == "async-start":
            self._async_wrapped(inst)
        if extra:
            extra.append(inst)
            return extra
        return inst

    def _attributes(self, inst: Instruction, c: list, i: int) -> None:
        ctx = self.ctx
        attrs = inst.attrs
        for k in range(i, len(c)):
            a = c[k]
            key = a.key
            if key in attrs:
                raise HloSyntaxError(ctx.text, a.pos, f"each attribute once ('{key}' repeats)",
                                     found=repr(key))
            if key != "metadata":
                text = a.text
                if len(text) <= 48:  # kLoop, {1,0}, %fused_computation.3: repeated a lot
                    text = _KEYS.get(text) or _key(text)
                attrs[_KEYS.get(key) or _key(key)] = text
            dec = _DECODERS.get(key)
            if dec is not None:
                dec(inst, a, ctx)

    def constant_instruction(self, c):
        return self._instruction(c, constant=True)

    def _instruction(self, c, constant: bool):
        ctx = self.ctx
        first = c[0]
        ftype = first.type
        if ftype == "INSTR_START" or ftype == "ROOT_START":
            is_root = ftype == "ROOT_START"
            name_tok = first
            i = 1
        else:
            is_root = ftype == "ROOT"
            name_tok = c[1] if is_root else first
            i = 2 if is_root else 1
        shape = UNKNOWN
        if isinstance(c[i], Shape):
            shape = c[i]
            i += 1
        op_tok = c[i]
        i += 1
        extra: list[Instruction] = []
        literal = None
        operands: list[str] = []
        param_no = None
        if constant:
            opcode, wrapped = "constant", None
            literal = _small_literal(c[i])
            i += 1
        else:
            opcode, wrapped = resolve_opcode(str(op_tok), ctx.text, op_tok.start_pos)
            operands, param_no, i = self._operand_list(c, i, opcode, extra)
        inst = Instruction(_name(name_tok), opcode, shape, operands, is_root=is_root,
                           literal=literal, parameter_number=param_no, async_wrapped=wrapped)
        inst.line = ctx.line_of(name_tok.start_pos)
        return self._finish(inst, c, i, extra)

    # ---- computations -------------------------------------------------------------------
    def param(self, c):
        return (str(c[0]), c[1])

    def signature(self, c):
        params, result = c[:-1], c[-1]
        return "(" + ", ".join(f"{n}: {s.text}" for n, s in params) + ") -> " + result.text

    def computation(self, c):
        i = 0
        is_entry = False
        if isinstance(c[0], Token) and c[0].type == "ENTRY":
            is_entry = True
            i = 1
        name_tok = c[i]
        i += 1
        signature = None
        sig = c[i]
        if isinstance(sig, str):
            if isinstance(sig, Token):  # one SIGNATURE token, or the first instruction
                if sig.type == "SIGNATURE":
                    signature = _WS_RUN.sub(" ", _COMMENT.sub("", str(sig))).replace("( ", "(")
                    signature = signature.replace(" )", ")").replace(" ,", ",")
                    i += 1
            else:
                signature = sig
                i += 1
        thread = None
        if len(c) >= 2 and isinstance(c[-2], Token) and c[-2].type in ("ATTR", "CATTR"):
            thread = A.unquote(c[-1])
            body = c[i:-2]
        elif isinstance(c[-1], Token) and c[-1].type == "CATTR_SIMPLE":
            thread = A.unquote(c[-1].value[1])
            body = c[i:-1]
        else:
            body = c[i:]
        comp = self._make_computation(_name(name_tok), body, is_entry,
                                      self.ctx.line_of(name_tok.start_pos))
        comp.signature = signature
        comp.execution_thread = thread
        return comp

    def _make_computation(self, name, body, is_entry, line) -> Computation:
        insts: list[Instruction] = []
        for item in body:
            if isinstance(item, list):
                insts.extend(item)
            else:
                insts.append(item)
        by_name: dict[str, Instruction] = {}
        root = None
        text = self.ctx.text
        kept: list[Instruction] = []
        for inst in insts:
            inst.computation = name
            ops = inst.operands
            for k, op in enumerate(ops):
                d = by_name.get(op)
                if d is None:
                    raise HloSyntaxError(
                        text, _line_start(text, inst.line),
                        f"operands defined earlier in computation '{name}'",
                        found=f"'{op}' used by '{inst.name}'")
                ops[k] = d.name  # the same string object: smaller in memory and in the cache
            if inst.name in by_name:
                if inst.opcode == "get-tuple-element" and "#" in inst.name:
                    continue  # a compact p#i operand used again: one GTE serves
                raise HloSyntaxError(text, _line_start(text, inst.line),
                                     f"a new instruction name in computation '{name}'",
                                     found=f"'{inst.name}' again")
            by_name[inst.name] = inst
            kept.append(inst)
            if inst.is_root:
                if root is not None:
                    raise HloSyntaxError(text, _line_start(text, inst.line),
                                         f"one ROOT in computation '{name}'", found="a second ROOT")
                root = inst.name
        if root is None:
            root = kept[-1].name
            kept[-1].is_root = True
        return Computation(name, kept, root, is_entry=is_entry, line=line, by_name=by_name)

    # ---- module -------------------------------------------------------------------------
    def generic_header_attr(self, c):
        return (str(c[0]), self._span(c[0]))

    alias_header_attr = donor_header_attr = generic_header_attr

    def simple_header_attr(self, c):
        return c[0].value

    def blob_header_attr(self, c):
        key, _, val = str(c[0]).partition("=")
        return (key.lstrip(", \t\r\n"), val)

    def header(self, c):
        return ("header", _name(c[1]), dict(c[2:]))

    def string_entry(self, c):
        return (int(c[0]), A.unquote(c[1]))

    def record_entry(self, c):
        fields: dict[str, int] = {}
        k = 1
        while k < len(c):
            t = c[k]
            if t.type == "CATTR_SIMPLE":
                fields[t.value[0]] = int(t.value[1])
                k += 1
            else:
                fields[str(t)] = int(c[k + 1])
                k += 2
        return (int(c[0]), fields)

    def stack_tables(self, c):
        t = StackTables()
        target = None
        for item in c:
            if isinstance(item, Token):
                target = {"FILENAMES": t.file_names, "FUNCTIONNAMES": t.function_names,
                          "FILELOCATIONS": t.file_locations, "STACKFRAMES": t.stack_frames}[item.type]
            else:
                target[item[0]] = item[1]
        self.ctx.tables = t
        return t

    def start(self, c):
        ctx = self.ctx
        name = None
        attrs: dict[str, str] = {}
        tables = StackTables()
        comps: list[Computation] = []
        for item in c:
            if isinstance(item, tuple):
                _, name, attrs = item
            elif isinstance(item, StackTables):
                tables = item
            else:
                comps.append(item)
        entries = [comp for comp in comps if comp.is_entry]
        seen: set[str] = set()
        for comp in comps:
            if comp.name in seen:
                raise HloSyntaxError(ctx.text, _line_start(ctx.text, comp.line),
                                     "a new computation name", found=f"'{comp.name}' again")
            seen.add(comp.name)
        if len(entries) > 1:
            raise HloSyntaxError(ctx.text, _line_start(ctx.text, entries[1].line),
                                 "one ENTRY computation", found="a second ENTRY")
        entry = entries[0] if entries else comps[-1]
        entry.is_entry = True
        for comp in ctx.inline:
            comp.line = abs(comp.line)
        if name is None:
            name = f"module_{entry.name}"
        return Module(name, ctx.inline + ctx.extra_comps + comps, entry.name, attrs, tables)


def _line_start(text: str, line: int) -> int:
    pos = 0
    for _ in range(line - 1):
        pos = text.index("\n", pos) + 1
    return pos


def _small_literal(lit: str, limit: int = 256) -> str:
    lit = lit.strip()
    return lit if len(lit) <= limit else lit[:limit] + "..."


# ---- attribute decoders -----------------------------------------------------------------
def _dec_calls(inst: Instruction, a: _Attr, ctx: _Context) -> None:
    called = a.value if isinstance(a.value, tuple) else A.names(a.text)
    inst.called = {**inst.called, a.key: called}
    inst.calls = inst.calls + called


def _dec_dimensions(inst: Instruction, a: _Attr, ctx: _Context) -> None:
    inst.dimensions = A.ints(a.text)


def _dec_kind(inst: Instruction, a: _Attr, ctx: _Context) -> None:
    inst.fusion_kind = a.text


def _dec_target(inst: Instruction, a: _Attr, ctx: _Context) -> None:
    inst.custom_call_target = A.unquote(a.text) if a.text[:1] in "\"'" else a.text


def _dec_index(inst: Instruction, a: _Attr, ctx: _Context) -> None:
    inst.index = int(a.text) if a.text.lstrip("-").isdigit() else None


def _dec_preds(inst: Instruction, a: _Attr, ctx: _Context) -> None:
    inst.control_predecessors = A.names(a.text)


def _dec_metadata(inst: Instruction, a: _Attr, ctx: _Context) -> None:
    inst.metadata = a.value  # decoded (and its stack frame resolved) by metadata_attr


_DECODERS = {k: _dec_calls for k in A.CALL_ATTRS}
_DECODERS.update({"dimensions": _dec_dimensions, "kind": _dec_kind,
                  "custom_call_target": _dec_target, "index": _dec_index,
                  "control-predecessors": _dec_preds, "metadata": _dec_metadata})

_WS_RUN = re.compile(r"\s+")
_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_KEYS: dict[str, str] = {}


def _key(key: str) -> str:
    """One shared string per attribute name (smaller models and parse-cache files)."""
    return _KEYS.setdefault(key, key)
