"""No input ends in a traceback: damaged real modules either parse or give HloSyntaxError."""

from __future__ import annotations

import random

import pytest

import hlodiff
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
