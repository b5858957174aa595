"""Byte counts in human units: printing (KiB, MiB, GiB) and reading (``16GiB``, ``512 MB``)."""

from __future__ import annotations

import re

_UNITS = {"": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
          "kb": 10 ** 3, "mb": 10 ** 6, "gb": 10 ** 9, "tb": 10 ** 12,
          "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_NUM = re.compile(r"^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def format_bytes(n: int | float | None) -> str:
    """``1.50 MiB``; binary units, three significant figures."""
    if n is None:
        return "?"
    sign = "-" if n < 0 else ""
    n = abs(n)
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{sign}{v:.3g} {unit}" if v < 1000 else f"{sign}{v:.0f} {unit}"
    return f"{sign}{int(n)} B"


def parse_bytes(text: str) -> float:
    """A number with an optional unit (KiB/MiB/GiB binary, KB/MB/GB decimal), as bytes."""
    m = _NUM.match(text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(f"not a byte count: {text!r} (e.g. 16GiB, 512MB, 1e9)")
    return float(m.group(1)) * _UNITS[m.group(2).lower()]
