"""Where the HLO grammar lives, apart from the parser, so that the parse cache can key on
the grammar's text without importing lark and the parser on a cache hit."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def grammar_text() -> str:
    """The grammar: from the source tree when run from a checkout, else from the package."""
    here = Path(__file__).resolve().parents[2] / "grammar" / "hlo.lark"
    if here.is_file():
        return here.read_text()
    return resources.files("hlodiff.grammar").joinpath("hlo.lark").read_text()
