"""Errors a user sees: each names the file, line and column and what was expected there."""

from __future__ import annotations


class HlodiffError(Exception):
    """Bad input. The CLI prints ``str(error)`` and exits with status 2, no traceback."""

    exit_code = 2


class HloWarning(UserWarning):
    """Something in the input that hlodiff reads but cannot vouch for (e.g. an attribute a
    newer XLA writes). The CLI prints it as one ``hlodiff: warning:`` line on stderr."""


class HloSyntaxError(HlodiffError):
    """Text that is not HLO at a given position."""

    def __init__(self, text: str, pos: int, expected: str, found: str | None = None,
                 path: str | None = None) -> None:
        self.pos = max(0, min(pos, len(text)))
        self.line = text.count("\n", 0, self.pos) + 1
        self.column = self.pos - (text.rfind("\n", 0, self.pos) + 1) + 1
        self.expected = expected
        if found is None:
            found = _describe_found(text, self.pos)
        self.found = found
        self.path = path
        super().__init__(self._message())

    def _message(self) -> str:
        where = f"{self.path or '<text>'}:{self.line}:{self.column}"
        return f"{where}: expected {self.expected}, found {self.found}"

    def with_path(self, path: str) -> "HloSyntaxError":
        self.path = path
        self.args = (self._message(),)
        return self

    def __str__(self) -> str:
        return self._message()


def _describe_found(text: str, pos: int) -> str:
    if pos >= len(text):
        return "the end of the file (is it truncated?)"
    snippet = text[pos:pos + 24].split("\n", 1)[0]
    return repr(snippet) if snippet else "a line break"


class InputError(HlodiffError):
    """A file or directory that cannot be used (missing, binary, wrong kind of dump)."""
