"""The opcodes XLA knows, and the async sugar ``<op>-start/-update/-done``."""

from __future__ import annotations

from ..errors import HloSyntaxError

OPCODES = frozenset("""
abs acos acosh add add-dependency after-all all-gather all-gather-done all-gather-start all-reduce
all-reduce-done all-reduce-start all-to-all and asin asinh async-done async-start async-update atan2 atanh
batch-norm-grad batch-norm-inference batch-norm-training bitcast bitcast-convert broadcast call cbrt ceil
cholesky clamp count-leading-zeros collective-broadcast collective-permute collective-permute-done
collective-permute-start compare complex concatenate conditional constant convert convolution copy
copy-done copy-start cosine cosh custom-call divide domain dot dynamic-reshape dynamic-slice
dynamic-update-slice erf exponential exponential-minus-one fft floor fusion gather get-dimension-size
get-tuple-element imag infeed iota is-finite log log-plus-one logistic map maximum minimum mulhi multiply
negate not opt-barrier or outfeed pad parameter partition-id popcnt power ragged-all-to-all ragged-dot real
recv recv-done reduce reduce-precision reduce-scatter reduce-window remainder replica-id reshape reverse
rng rng-bit-generator rng-get-and-update-state round-nearest-afz round-nearest-even rsqrt scaled-dot scan
scatter select select-and-scatter send send-done set-dimension-size shift-left shift-right-arithmetic
shift-right-logical sign sine sinh slice sort sqrt stochastic-convert subtract tan tanh topk transpose
triangular-solve tuple while xor
""".split())

# Ops with native -start/-done forms (or none allowed): no async sugar for them.
_NO_SUGAR = frozenset({"all-gather", "all-reduce", "collective-permute", "copy", "recv", "send"})
_SUFFIXES = (("-start", "async-start"), ("-update", "async-update"), ("-done", "async-done"))
_cache: dict[str, tuple[str, str | None]] = {}


def resolve_opcode(word: str, text: str = "", pos: int = 0) -> tuple[str, str | None]:
    """(opcode, wrapped op) for an opcode word; sugar like ``fusion-start`` becomes
    ``("async-start", "fusion")``. Unknown words raise HloSyntaxError at ``pos``."""
    hit = _cache.get(word)
    if hit is not None:
        return hit
    if word in OPCODES:
        res: tuple[str, str | None] = (word, None)
    else:
        for suffix, opcode in _SUFFIXES:
            base = word[: -len(suffix)]
            if word.endswith(suffix) and base in OPCODES and base not in _NO_SUGAR:
                res = (opcode, base)
                break
        else:
            raise HloSyntaxError(text, pos, "an HLO opcode", found=repr(word))
    _cache[word] = res
    return res
