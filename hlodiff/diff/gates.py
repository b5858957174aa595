"""``--fail-on`` regression gates: ``kernels>40``, ``layout_changes>0``, ``bytes>=1e6``.

A gate names a summary key (see result.py) or ``kernels``/``bytes``, an operator
(> >= < <= == !=) and a number. Several gates: comma-separated or the option repeated.
"""

from __future__ import annotations

import operator
import re

_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le,
        "==": operator.eq, "!=": operator.ne, "=": operator.eq}
_GATE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|==|!=|>|<|=)\s*(-?[0-9.eE+]+)\s*$")


class GateError(ValueError):
    pass


def parse_gates(exprs) -> list[tuple[str, str, float]]:
    out = []
    for e in exprs or ():
        for part in e.split(","):
            if not part.strip():
                continue
            mt = _GATE.match(part)
            if not mt:
                raise GateError(f"bad --fail-on expression {part.strip()!r}; expected NAME>N, "
                                "e.g. kernels>40 or layout_changes>0")
            try:
                val = float(mt.group(3))
            except ValueError:
                raise GateError(f"bad number in --fail-on expression {part.strip()!r}") from None
            out.append((mt.group(1), mt.group(2), val))
    return out


def check_gates(gates, summary: dict) -> list[str]:
    """The gates that trip, as human words. Unknown names are an error."""
    tripped = []
    for name, op, val in gates:
        if name not in summary:
            raise GateError(f"unknown --fail-on metric {name!r}; known: {', '.join(sorted(summary))}")
        actual = summary[name]
        if _OPS[op](actual, val):
            tripped.append(f"{name}{op}{val:g} (is {actual})")
    return tripped
