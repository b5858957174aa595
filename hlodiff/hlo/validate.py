"""Checks after parsing that XLA's own parser makes: what the grammar cannot see.

The grammar accepts any attribute name, any called-computation name and any parameter
number; XLA's parser (the oracle, ``jaxlib._hlo.hlo_module_from_text``) rejects a module
that calls an undefined computation, numbers its parameters badly, names an unknown
attribute, lists an undefined control predecessor, gives a dimension or an integer beyond
64 bits, or writes a constant out of its type's range. Each failure is one HloSyntaxError at
the instruction's line and the offending text's column. Linear in the module's size.
"""

from __future__ import annotations

import re

from ..errors import HloSyntaxError
from .model import Instruction, Module

INT64_MAX = 2**63 - 1

# Instruction attribute names XLA's HLO text parser knows (any opcode). A name outside this
# set is rejected as XLA rejects it ("unexpected attribute"); metadata and the header's
# attributes are handled elsewhere.
KNOWN_ATTRIBUTES = frozenset("""
algorithm api_version async_execution_thread async_group_id backend_config batch_group_count
body branch_computations called_computations calls channel_id collapsed_slice_dims condition
constrain_layout control-predecessors cross_program_prefetch_index custom_call_has_side_effect
custom_call_schedule custom_call_target delta dim_labels dimensions direction distribution
domain dynamic_slice_sizes epsilon exponent_bits false_computation feature_group_count
feature_index fft_length fft_type frontend_attributes has_dynamic_root index index_vector_dim
indices_are_sorted infeed_config input_batching_dims inserted_window_dims iota_dimension
is_associative is_composite is_cross_program_prefetch is_host_transfer is_reverse is_stable
k kind largest left_side lhs_batch_dims lhs_contracting_dims lhs_ragged_dims literal lower
mantissa_bits metadata mode num_carries offset_dims operand_batching_dims
operand_layout_constraints operand_precision origin original_value outfeed_config
outfeed_shape output_to_operand_aliasing padding padding_type parameter_replication
replica_groups result_accuracy rhs_batch_dims rhs_contracting_dims rhs_group_dims scatter
scatter_dims_to_operand_dims scatter_indices_batching_dims schedule select sharding slice
slice_sizes source_target_pairs sparsity sparsity_config start_index_map
start_indices_batching_dims statistics to_apply transpose_a type unique_indices unit_diagonal
update_window_dims use_global_device_ids window conv_kind split_dimension true_computation
""".split())

# Integer constants: (min, max) by element type.
_INT_RANGE = {}
for _bits in (1, 2, 4, 8, 16, 32, 64):
    _INT_RANGE[f"s{_bits}"] = (-(2 ** (_bits - 1)), 2 ** (_bits - 1) - 1)
    _INT_RANGE[f"u{_bits}"] = (0, 2 ** _bits - 1)
_INT_RANGE["u64"] = (-(2 ** 63), 2 ** 64 - 1)  # XLA reads u64 through int64: -1 is accepted
# Floating constants: the magnitude from which a value rounds to infinity in the type (the
# largest finite value plus half its spacing); written infinities are fine.
_FLOAT_MAX = {"f16": 65504.0 + 16, "bf16": 3.3895313892515355e38 + 2.0 ** 119,
              "f32": 3.4028234663852886e38 + 2.0 ** 103, "f64": float("inf"),
              "c64": 3.4028234663852886e38 + 2.0 ** 103, "c128": float("inf")}
_NUMBER = re.compile(r"-?(?:\d+\.?\d*(?:[eE][+\-]?\d+)?|\.\d+(?:[eE][+\-]?\d+)?)")
_LONG_INT = re.compile(r"(?<![\w.+\-])-?\d{20,}+(?![\w.])")
_TWENTY_DIGITS = re.compile(r"[0-9]{20}")
_NUMERIC_ATTRS = frozenset("""
slice padding window dimensions dynamic_slice_sizes slice_sizes index channel_id
feature_group_count batch_group_count k iota_dimension index_vector_dim offset_dims
collapsed_slice_dims start_index_map update_window_dims inserted_window_dims
scatter_dims_to_operand_dims lhs_batch_dims rhs_batch_dims lhs_contracting_dims
rhs_contracting_dims fft_length source_target_pairs replica_groups exponent_bits mantissa_bits
feature_index num_carries operand_batching_dims start_indices_batching_dims
input_batching_dims scatter_indices_batching_dims lhs_ragged_dims rhs_group_dims
""".split())
_MAX_LITERAL_CHECK = 1 << 16  # characters of one constant's literal that are range-checked


class _Where:
    """Positions in the text: the start of an instruction's line, a word on it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts: list[int] | None = None

    def line_start(self, line: int) -> int:
        if self.starts is None:
            self.starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        return self.starts[min(max(line, 1), len(self.starts)) - 1]

    def error(self, inst: Instruction | None, line: int, expected: str, found: str,
              needle: str | None = None) -> HloSyntaxError:
        pos = self.line_start(line)
        if needle:
            end = self.text.find("\n", pos)
            k = self.text.find(needle, pos, end if end >= 0 else len(self.text))
            if k >= 0:
                pos = k
        return HloSyntaxError(self.text, pos, expected, found=found)


_MAX_NOTES = 20  # unknown attributes noted per module (one is enough to tell the user)


def validate(module: Module, text: str) -> list[HloSyntaxError]:
    """Raise HloSyntaxError at the first thing XLA's parser would reject.

    Returns notes: what XLA of this hlodiff's time would reject but a newer XLA may write
    (unknown attribute names), for the caller to show as warnings.
    """
    where = _Where(text)
    notes: list[HloSyntaxError] = []
    comps = module.by_name
    async_callers: dict[str, Instruction] = {}
    shapes_ok: set[int] = set()
    # computations the parser made for async sugar (dot-start() ...): their op may have no
    # operands yet, the async-updates supply them
    sugar = {i.calls[0] for i in module.instructions() if i.opcode == "async-start"
             and i.async_wrapped and i.calls and "calls" not in i.attrs}
    for comp in module.computations:
        synthetic = comp.name in sugar
        params: dict[int, Instruction] = {}
        for inst in comp.instructions:
            for callee in inst.calls:
                if callee not in comps:
                    raise where.error(inst, inst.line, "a computation defined in this module",
                                      f"'{callee}' called by '{inst.name}'", callee)
            _check_numeric_attrs(where, inst)
            for key in inst.attrs:
                if key not in KNOWN_ATTRIBUTES and len(notes) < _MAX_NOTES:
                    # XLA adds attributes over versions (jax 0.11 writes `order=` on
                    # compare): a dump from a newer XLA must still be read, so an unknown
                    # name is a note the caller turns into a warning, never a rejection
                    notes.append(where.error(inst, inst.line, "an attribute XLA knows",
                                             f"'{key}' on '{inst.name}'", key + "="))
            for pred in inst.control_predecessors:
                if pred not in comp.by_name:
                    raise where.error(inst, inst.line, f"a control predecessor defined in "
                                      f"computation '{comp.name}'", f"'{pred}'", pred)
            if id(inst.shape) not in shapes_ok:  # shapes are shared: check each once
                for d in inst.shape.leaves():
                    for n in d.dims:
                        if n > INT64_MAX:
                            raise where.error(inst, inst.line, "a dimension size below 2^63",
                                              f"{n}"[:30], f"{n}"[:20])
                shapes_ok.add(id(inst.shape))
            if inst.opcode == "parameter" and inst.parameter_number is not None:
                n = inst.parameter_number
                if n < 0 or n > INT64_MAX:
                    raise where.error(inst, inst.line, "a parameter number >= 0",
                                      str(n)[:30], "parameter(")
                if n in params and "#" not in inst.name:
                    raise where.error(inst, inst.line, "a parameter number used once",
                                      f"parameter({n}) again (also '{params[n].name}')",
                                      "parameter(")
                params[n] = inst
            elif inst.opcode == "parameter" and inst.parameter_number is None:
                raise where.error(inst, inst.line, "a parameter number such as parameter(0)",
                                  f"'{inst.name}' without one", "parameter(")
            if inst.opcode == "constant" and inst.literal is not None:
                _check_literal(where, inst)
            if not synthetic:
                _check_opcode_rules(where, comp, inst)
            if inst.opcode in ("async-update", "async-done"):
                _check_async(where, module, comp, inst)
            elif inst.opcode == "async-start" and "calls" in inst.attrs and inst.calls:
                other = async_callers.setdefault(inst.calls[0], inst)
                if other is not inst:
                    raise where.error(inst, inst.line, "one async-start per wrapped computation",
                                      f"'{inst.calls[0]}' also started by '{other.name}'",
                                      inst.calls[0])
        if params and max(params) >= len(params):
            missing = min(set(range(len(params))) - set(params))
            inst = params[max(params)]
            raise where.error(inst, inst.line, f"parameters numbered 0..{len(params) - 1} in "
                              f"computation '{comp.name}'",
                              f"parameter({max(params)}) but no parameter({missing})",
                              "parameter(")
    if module.entry not in comps:
        raise HloSyntaxError(text, 0, "an ENTRY computation", found="none")
    return notes


# Opcodes XLA cannot build without an operand (its parser says so, or shape inference fails).
_NEEDS_OPERANDS = frozenset("""
conditional rng-bit-generator reduce-window dynamic-reshape reduce sort while map
get-tuple-element broadcast reshape transpose convert bitcast-convert slice pad dot convolution
concatenate copy gather scatter dynamic-slice dynamic-update-slice reverse select clamp compare
add subtract multiply divide remainder power maximum minimum atan2 and or xor not negate abs
sign floor ceil sqrt rsqrt cbrt exponential exponential-minus-one log log-plus-one tanh
logistic sine cosine tan erf real imag complex is-finite round-nearest-afz round-nearest-even
popcnt count-leading-zeros shift-left shift-right-logical shift-right-arithmetic
reduce-precision select-and-scatter batch-norm-training batch-norm-inference batch-norm-grad
all-reduce all-gather reduce-scatter all-to-all collective-permute fft cholesky
triangular-solve get-dimension-size set-dimension-size top-k stochastic-convert
""".split())
# CustomCallApiVersion values XLA accepts in text (API_VERSION_UNSPECIFIED is refused).
_API_VERSIONS = frozenset({"API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                           "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"})
# Opcodes whose dimensions={...} names exactly one dimension.
_ONE_DIMENSION = frozenset({"all-gather", "all-gather-start", "reduce-scatter",
                            "get-dimension-size", "set-dimension-size"})


def _check_opcode_rules(where: _Where, comp, inst: Instruction) -> None:
    """Operand counts, dimension lists and result shapes that XLA's parser checks."""
    op = inst.opcode
    if op in _NEEDS_OPERANDS and not inst.operands:
        raise where.error(inst, inst.line, f"operands for {op}", "none", op + "(")
    dims = inst.dimensions
    if dims is not None:
        if op in _ONE_DIMENSION and len(dims) != 1:
            raise where.error(inst, inst.line, f"exactly one dimension in dimensions= of {op}",
                              f"{len(dims)}", "dimensions=")
        if any(d < 0 for d in dims):
            raise where.error(inst, inst.line, "dimension numbers >= 0",
                              str(min(dims)), "dimensions=")
    api = inst.attrs.get("api_version")
    if api is not None and api not in _API_VERSIONS:
        raise where.error(inst, inst.line, "a custom-call API version (" +
                          ", ".join(sorted(_API_VERSIONS)) + ")", api, api)
    if op in ("recv", "infeed") and not inst.shape.is_tuple and inst.shape.text:
        raise where.error(inst, inst.line, f"a tuple result shape for {op}", inst.shape.text,
                          inst.shape.text)
    if op == "conditional" and inst.operands:
        index = comp.by_name.get(inst.operands[0])
        shape = index.shape if index is not None else None
        if shape is not None and shape.text and not shape.is_tuple:
            if shape.dims or shape.element_type not in ("pred", "s32"):
                raise where.error(inst, inst.line, "a scalar pred or s32 branch index",
                                  shape.text, inst.operands[0])
            if shape.element_type == "pred" and "branch_computations" in inst.attrs:
                raise where.error(inst, inst.line, "true_computation= and false_computation= "
                                  "for a pred branch index", "branch_computations=",
                                  "branch_computations")


def _check_async(where: _Where, module: Module, comp, inst: Instruction) -> None:
    """async-update/-done: an async operand first, and the same wrapped op, computation and
    execution thread as the async-start of their chain (XLA's parser checks each)."""
    if not inst.operands:  # newer XLA lets async-update take operands after the async op
        raise where.error(inst, inst.line, f"an async operation as the operand of {inst.opcode}",
                          "no operands")
    op = comp.by_name.get(inst.operands[0])
    if op is None or op.opcode not in ("async-start", "async-update"):
        raise where.error(inst, inst.line, f"an async-start or async-update as the operand of "
                          f"{inst.opcode}", f"'{inst.operands[0]}' ({op.opcode if op else '?'})",
                          inst.operands[0])
    start, seen = op, set()
    while start.opcode == "async-update" and start.operands and start.name not in seen:
        seen.add(start.name)
        nxt = comp.by_name.get(start.operands[0])
        if nxt is None:
            break
        start = nxt
    if start.opcode != "async-start":
        return
    wrapped = start.async_wrapped
    if wrapped is None and start.calls and start.calls[0] in module.by_name:
        called = module.by_name[start.calls[0]]
        wrapped = called.by_name[called.root].opcode if called.root in called.by_name else None
    if inst.async_wrapped and wrapped and inst.async_wrapped != wrapped:
        raise where.error(inst, inst.line, f"the op its async-start wraps ({wrapped})",
                          inst.async_wrapped, inst.async_wrapped)
    if "calls" in inst.attrs and start.calls and inst.calls and inst.calls != start.calls:
        raise where.error(inst, inst.line, f"calls={start.calls[0]} as on its async-start",
                          f"calls={inst.calls[0]}", "calls=")
    thread = inst.attrs.get("async_execution_thread")
    if thread is not None and thread != start.attrs.get("async_execution_thread", '"main"'):
        raise where.error(inst, inst.line, "the execution thread of its async-start",
                          thread, "async_execution_thread")


def _check_literal(where: _Where, inst: Instruction) -> None:
    """Integer and float constants within their element type's range (XLA checks each)."""
    etype = inst.shape.element_type
    if etype is None or etype == "pred":
        return
    lit = _raw_literal(where, inst)
    if len(lit) > _MAX_LITERAL_CHECK:
        lit = lit[:_MAX_LITERAL_CHECK]  # the first values; a 5,000-digit one is among them
    rng = _INT_RANGE.get(etype or "")
    if rng is not None:
        lo, hi = rng
        for m in _NUMBER.finditer(lit):
            s = m.group()
            if "." in s or "e" in s or "E" in s:
                continue
            if len(s) > 40:
                raise where.error(inst, inst.line, f"a {etype} value", s[:30] + "...", s[:20])
            v = int(s)
            if v < lo or v > hi:
                raise where.error(inst, inst.line, f"a {etype} value in [{lo}, {hi}]", s, s)
        return
    top = _FLOAT_MAX.get(etype or "")
    if top is not None:
        for m in _NUMBER.finditer(lit):
            s = m.group()
            try:
                v = float(s)
            except (ValueError, OverflowError):
                continue
            if abs(v) >= top:  # also a decimal beyond double's range (float() gives inf)
                raise where.error(inst, inst.line, f"a {etype} value that is finite in {etype}",
                                  s, s)


def _check_numeric_attrs(where: _Where, inst: Instruction) -> None:
    """No integer beyond 64 bits in the numeric attributes (kept as text in the model)."""
    for key, v in inst.attrs.items():
        if len(v) < 20 or key not in _NUMERIC_ATTRS or _TWENTY_DIGITS.search(v) is None:
            continue
        for m in _LONG_INT.finditer(v):
            s = m.group()
            if len(s.lstrip("-")) > 20 or not -(2 ** 63) <= int(s) <= 2 ** 64 - 1:
                shown = s if len(s) <= 24 else s[:20] + f"... ({len(s)} digits)"
                raise where.error(inst, inst.line, "an integer of at most 64 bits", shown,
                                  s[:20])


def _raw_literal(where: _Where, inst: Instruction) -> str:
    """The whole literal of a constant (the model keeps the first 256 characters)."""
    lit = inst.literal or ""
    if not lit.endswith("..."):
        return lit
    from .lexer import _scan_literal

    start = where.line_start(inst.line)
    k = where.text.find("constant", start)
    k = where.text.find("(", k) if k >= 0 else -1
    if k < 0:
        return lit
    try:
        end = _scan_literal(where.text, k)
    except HloSyntaxError:
        return lit
    return where.text[k + 1:end - 1]


def first_long_integer(text: str) -> int | None:
    """Position of the first integer of 20 or more digits outside strings, or None (used to
    place the error for integers Python refuses to convert)."""
    m = _LONG_INT.search(text)
    return m.start() if m else None
