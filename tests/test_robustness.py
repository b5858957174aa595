"""No input ends in a traceback: damaged real modules either parse or give HloSyntaxError."""

from __future__ import annotations

import random

import pytest

import hlodiff
from hlodiff.errors import HloWarning
from hlodiff import HloSyntaxError

from .conftest import fixture_pair

_JUNK = ["{", "}", "(", ")", ",", "=", "%", '"', "'", "/*", "*/", "->", "#", "<=", "\x00",
         "f32[", "]", "{1,", "metadata={", "ROOT ", "\n", "ENTRY", "é", "\\", "...", "T(8,"]


def _mutants(text: str, n: int, seed: int):
    rng = random.Random(seed)
    for _ in range(n):
        k = rng.randrange(4)
        i = rng.randrange(len(text))
        if k == 0:  # truncate
            yield text[:i]
        elif k == 1:  # delete a span
            yield text[:i] + text[i + rng.randrange(1, 40):]
        elif k == 2:  # insert junk
            yield text[:i] + rng.choice(_JUNK) + text[i:]
        else:  # duplicate a span
            j = min(len(text), i + rng.randrange(1, 200))
            yield text[:j] + text[i:j] + text[j:]


@pytest.mark.parametrize("program", ["fold_cse", "attention"])
def test_damaged_modules_parse_or_say_where(program):
    before, after = fixture_pair(program)
    for path in (before, after):
        text = path.read_text()
        for k, mutant in enumerate(_mutants(text, 150, seed=k_seed(program, path.name))):
            try:
                hlodiff.parse(mutant, f"mutant{k}.txt")
            except HloSyntaxError as e:
                assert str(e).startswith(f"mutant{k}.txt:") and ": expected " in str(e)


def k_seed(program: str, name: str) -> int:
    return sum(map(ord, program + name))


def test_pathological_blobs_fail_fast():
    """Nested braces and long unbalanced blobs: linear-time scanning, clear errors."""
    deep = "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), backend_config=" + \
        "{" * 5000 + "\n}\n"
    with pytest.raises(HloSyntaxError, match="closing '}'"):
        hlodiff.parse(deep)
    wide = ('HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), backend_config={' +
            ' '.join(f'"k{i}":"v"' for i in range(20000)) + ', "n":{"x":1}}\n}\n')
    m = hlodiff.parse(wide)
    assert m.entry_computation["p"].attrs["backend_config"].endswith('"n":{"x":1}}')


def test_cache_round_trip_is_exact_and_rejects_other_data():
    """The MessagePack cache gives back the same model; anything else is refused."""
    from hlodiff.dumps import cache

    before, after = fixture_pair("attention")
    for path in (before, after):
        m = hlodiff.parse(path.read_text())
        m2 = cache._decode(cache._encode(m))
        assert [c.name for c in m2.computations] == [c.name for c in m.computations]
        for c, c2 in zip(m.computations, m2.computations):
            assert (c.root, c.is_entry, c.signature, c.line) == (c2.root, c2.is_entry,
                                                                c2.signature, c2.line)
            for i, i2 in zip(c.instructions, c2.instructions):
                for f in i.__slots__:
                    assert getattr(i, f) == getattr(i2, f), (i.name, f)
        assert m2.tables == m.tables and m2.attributes == m.attributes
    import msgspec

    for junk in (b"", b"\x80\x04K\x01.", msgspec.msgpack.encode([1, "x"]),
                 msgspec.msgpack.encode((cache._FORMAT, "m", "e", {}, ({}, {}, {}, {}), [],
                                         [("f32[]", "f32", (), (), 5, ())], []))):
        with pytest.raises(ValueError):
            cache._decode(junk)


def test_deep_tuple_shapes_round_trip_through_the_cache():
    from hlodiff.dumps import cache

    depth = 600
    text = ("HloModule m\n\nENTRY %main {\n  ROOT %p = " + "(" * depth + "f32[]" + ")" * depth
            + " parameter(0)\n}\n")
    m = hlodiff.parse(text)
    shape = cache._decode(cache._encode(m)).entry_computation.root_instruction.shape
    for _ in range(depth):
        assert shape.is_tuple
        shape = shape.tuple_shapes[0]
    assert shape.text == "f32[]"


def test_rejects_what_xla_rejects_after_parsing():
    """Checks of hlo/validate.py, each with the line:col of the offending text."""
    def module(body: str) -> str:
        return f"HloModule m\n\nENTRY %main {{\n{body}\n}}\n"

    cases = {
        "  %p = f32[4]{0} parameter(0)\n  ROOT %f = f32[4]{0} fusion(%p), kind=kLoop, calls=%nope":
            (5, "'nope'"),
        "  ROOT %p = f32[4]{0} parameter(-1)": (4, "parameter number"),
        "  %p = f32[4]{0} parameter(0)\n  ROOT %q = f32[4]{0} parameter(0)": (5, "used once"),
        "  ROOT %c = s8[] constant(128)": (4, "s8 value"),
        "  ROOT %c = f32[] constant(1e39)": (4, "finite in f32"),
        "  ROOT %p = f32[99999999999999999999]{0} parameter(0)": (4, "below 2^63"),
        "  %t = token[] after-all()\n  ROOT %r = f32[10] recv(%t)": (5, "tuple result"),
        "  %p = f32[2,3] parameter(0)\n  ROOT %g = s32[] get-dimension-size(%p), dimensions={}":
            (5, "exactly one dimension"),
        "  %p = f32[4] parameter(0)\n  ROOT %a = f32[4] async-done(%p)": (5, "async-start"),
    }
    for body, (line, words) in cases.items():
        with pytest.raises(HloSyntaxError) as e:
            hlodiff.parse(module(body), "x.hlo")
        assert e.value.line == line and words in str(e.value), str(e.value)
        assert str(e.value).startswith(f"x.hlo:{line}:")
    # and what XLA accepts stays accepted
    unknown = "  %p = f32[4]{0} parameter(0)\n  ROOT %n = pred[4]{0} compare(%p, %p), " \
              "direction=LT, order=TOTAL"
    with pytest.warns(HloWarning, match=r"x.hlo:5:\d+: .*'order' on 'n'.*newer XLA"):
        hlodiff.parse(module(unknown), "x.hlo")  # jax 0.11's XLA writes order= on compare
    for body in ("  ROOT %c = u64[] constant(-1)", "  ROOT %c = f32[] constant(-inf)",
                 "  ROOT %c = bf16[] constant(-3.39e+38)",
                 '  ROOT %p = f32[4]{0} parameter(0), metadata={op_name="12345678901234567890123"}'):
        hlodiff.parse(module(body))
