"""Acceptance of the parser on real HLO: the shared XLA corpus and our own fixtures.

XLA's own parser (jaxlib._hlo.hlo_module_from_text) is the oracle: for every file it reads,
each computation must hold the same (instruction name, opcode, operand names) in ours.
The corpus is read in place from ../shared/corpus (or $HLODIFF_CORPUS); without it these
tests are skipped, as on a user's machine.
"""

from __future__ import annotations

import csv
import importlib.util
import os

import pytest

import hlodiff
from hlodiff import HloSyntaxError

from .conftest import CORPUS, FIXTURES

needs_corpus = pytest.mark.skipif(
    not (CORPUS / "MANIFEST.tsv").is_file(),
    reason=f"the shared HLO corpus is not at {CORPUS} (set HLODIFF_CORPUS to its folder)")

# jaxlib spells opcodes as enum names (kExp); these differ from the text spelling.
_ENUM_ALIASES = {"exp": "exponential", "cos": "cosine", "sin": "sine", "log1p": "logplusone",
                 "expm1": "exponentialminusone", "populationcount": "popcnt",
                 "clz": "countleadingzeros", "optimizationbarrier": "optbarrier"}


def _manifest() -> list[dict]:
    with open(CORPUS / "MANIFEST.tsv", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _xla_opcode(op) -> str:
    s = str(op).split(".")[-1]
    s = s[1:].lower() if s.startswith("k") else s.lower()
    return _ENUM_ALIASES.get(s, s)


def _xla_view(text: str):
    from jaxlib import _hlo

    m = _hlo.hlo_module_from_text(text)
    return {c.name: sorted((i.name, _xla_opcode(i.opcode), tuple(o.name for o in i.operands()))
                           for i in c.instructions())
            for c in m.computations()}


def _our_view(module: hlodiff.Module):
    return {c.name: sorted((i.name, i.opcode.replace("-", ""), tuple(i.operands))
                           for i in c.instructions)
            for c in module.computations}


@needs_corpus
def test_every_valid_corpus_file_parses():
    rows = [r for r in _manifest() if r["expected"] == "valid"]
    assert len(rows) > 700
    failures = []
    for r in rows:
        path = CORPUS / r["file"]
        try:
            hlodiff.parse(path.read_text(), str(path))
        except HloSyntaxError as e:
            failures.append(str(e))
    assert not failures, f"{len(failures)} valid files rejected, e.g. {failures[:3]}"


@needs_corpus
def test_every_syntax_invalid_file_is_rejected_and_no_input_gives_a_traceback():
    rows = [r for r in _manifest() if r["expected"] == "invalid"]
    accepted = []
    for r in rows:
        path = CORPUS / r["file"]
        try:
            hlodiff.parse(path.read_text(), str(path))
        except HloSyntaxError as e:
            assert str(e).startswith(f"{path}:"), str(e)  # file:line:col: ...
            continue
        # any other exception fails the test: no input may end in a traceback
        if r["failure_kind"] == "syntax":
            accepted.append(r["file"])
    assert sum(r["failure_kind"] == "syntax" for r in rows) >= 17
    assert not accepted, f"syntax-invalid files accepted: {accepted}"


@needs_corpus
@pytest.mark.slow
def test_agrees_with_xla_parser_on_every_file_it_reads():
    pytest.importorskip("jaxlib._hlo")
    rows = [r for r in _manifest()
            if r["expected"] == "valid" and r["xla_parser_jaxlib_0.10.2"] == "ok"]
    compared = 0
    mismatches = []
    for r in rows:
        text = (CORPUS / r["file"]).read_text()
        try:
            xla = _xla_view(text)
        except Exception:  # an older or newer jaxlib may disagree with the manifest
            continue
        ours = _our_view(hlodiff.parse(text))
        compared += 1
        for name, insts in xla.items():
            if ours.get(name) != insts:
                mismatches.append((r["file"], name))
                break
    assert compared > 700
    assert not mismatches, f"{len(mismatches)} files differ from XLA, e.g. {mismatches[:5]}"


def _fixture_files():
    return sorted(p for p in FIXTURES.rglob("*.txt") if "buffer-assignment" not in p.name)


def test_every_fixture_dump_parses_like_xla():
    """Our own XLA dumps (before, after and pass-by-pass): same content as XLA reads."""
    files = _fixture_files()
    assert len(files) > 50
    has_xla = importlib.util.find_spec("jaxlib") is not None  # jax is a dependency
    for path in files[:: 1 if os.environ.get("CI") else 3]:
        text = path.read_text()
        ours = _our_view(hlodiff.parse(text, str(path)))
        if has_xla:
            assert ours == _xla_view(text), path.name


@needs_corpus
def test_rejects_most_of_what_xla_rejects():
    """Beyond syntax: the semantic checks reject at least 70 of the corpus's invalid files
    (31 before hlo/validate.py), each with a file:line:col message."""
    rows = [r for r in _manifest() if r["expected"] == "invalid"]
    rejected = 0
    for r in rows:
        path = CORPUS / r["file"]
        try:
            hlodiff.parse(path.read_text(), str(path))
        except HloSyntaxError as e:
            assert str(e).startswith(f"{path}:")
            rejected += 1
    assert rejected >= 70, rejected
