"""``--fail-on`` regression gates: ``kernels>40``, ``layout_changes>0``, ``peak_bytes>16GiB``,
and relative ones: ``peak_bytes>+5%``, ``kernels>+10%``.

A gate names a summary metric (see result.py), an operator (> >= < <= == !=) and a number.
Byte counts accept units (KiB/MiB/GiB binary, KB/MB/GB decimal). A relative gate
``NAME>+N%`` compares the after figure with the before one (``NAME_before`` in the summary:
``kernels``, ``bytes``, ``peak_bytes``): it trips when after grew by more than N percent
(``<-N%``: shrank by more). Several gates: comma-separated or the option repeated. Unknown
metric names are refused by ``parse_gates``, before any work is done.
"""

from __future__ import annotations

import operator
import re

from ..units import parse_bytes
from .result import FATES, REGRESSION_FATES

_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le,
        "==": operator.eq, "!=": operator.ne, "=": operator.eq}
_GATE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|==|!=|>|<|=)\s*(.+?)\s*$")
_REL = re.compile(r"^([-+])\s*([0-9]*\.?[0-9]+)\s*%$")

# Every metric a diff's summary can hold (fates of both modes, counts, and memory).
KNOWN = frozenset(FATES + REGRESSION_FATES + (
    "only_after", "fusions", "added", "layout_changes", "kernels_before", "kernels_after",
    "bytes_before", "bytes_after", "kernels", "bytes", "peak_bytes", "peak_bytes_before",
    "peak_bytes_after",
    "collective_bytes", "collective_bytes_before", "collectives", "partitioned"))  # devices.py


class GateError(ValueError):
    pass


def parse_gates(exprs, known=KNOWN) -> list[tuple[str, str, float, bool]]:
    """``(metric, operator, value, relative)`` per gate; GateError on bad or unknown ones."""
    out = []
    for e in exprs or ():
        for part in e.split(","):
            if not part.strip():
                continue
            mt = _GATE.match(part)
            if not mt:
                raise GateError(f"bad --fail-on expression {part.strip()!r}; expected NAME>N, "
                                "e.g. kernels>40, peak_bytes>16GiB or peak_bytes>+5%")
            name, op, raw = mt.groups()
            if known is not None and name not in known:
                raise GateError(f"unknown --fail-on metric {name!r}; known: "
                                f"{', '.join(sorted(known))}")
            rel = _REL.match(raw.replace(" ", ""))
            if rel:
                val = float(rel.group(2)) * (-1 if rel.group(1) == "-" else 1)
                out.append((name, op, val, True))
                continue
            try:
                val = parse_bytes(raw)
            except ValueError:
                raise GateError(f"bad number in --fail-on expression {part.strip()!r} "
                                "(a number, a byte count such as 16GiB, or +5%)") from None
            out.append((name, op, val, False))
    return out


def _before_key(name: str, summary: dict) -> str | None:
    for k in (f"{name}_before", name.replace("_after", "_before")):
        if k in summary and k != name:
            return k
    return None


def check_gates(gates, summary: dict) -> list[str]:
    """The gates that trip, as human words. Unknown names are an error; a metric the diff
    could not measure (no memory figures) is an error too, rather than a silent pass."""
    tripped = []
    for gate in gates:
        name, op, val = gate[:3]
        relative = gate[3] if len(gate) > 3 else False
        if name not in summary:
            raise GateError(f"unknown --fail-on metric {name!r}; known: {', '.join(sorted(summary))}")
        actual = summary[name]
        if actual is None:
            raise GateError(f"--fail-on {name}: not measured for these inputs")
        if relative:
            bk = _before_key(name, summary)
            before = summary.get(bk) if bk else None
            if before is None:
                raise GateError(f"--fail-on {name}{op}{val:+g}%: no before figure to compare with")
            change = 100.0 * (actual - before) / before if before else (0.0 if actual == before
                                                                         else float("inf"))
            if _OPS[op](change, val):
                tripped.append(f"{name}{op}{val:+g}% (is {change:+.1f}%: {before} -> {actual})")
        elif _OPS[op](actual, val):
            tripped.append(f"{name}{op}{val:g} (is {actual})")
    return tripped
