"""Group regression-mode kernel rows into changelog entries.

Repeated changes (the same kind of kernel changing the same way in every layer) become one
entry with a count, one example and the source lines involved; only-before and only-after
kernels are grouped the same way by what they compute. Per source line, the number of
kernels before and after ("layer norm now 2 kernels instead of 3").
"""

from __future__ import annotations

import re
from collections import Counter

_NAME_TAIL = re.compile(r"^(split: also into|joined: also holds|joined into|split off from) .*")
_SHORT = {"split: also into": "split in several kernels", "joined: also holds":
          "now also does other kernels' work", "joined into": "joined into another kernel",
          "split off from": "split off from another kernel"}


def _what_key(what: list[str]) -> tuple[str, ...]:
    return tuple(_NAME_TAIL.sub(lambda m: _SHORT[m.group(1)], w) for w in what)


def sentence(g: dict) -> str:
    """One changelog line for a group."""
    n = g["count"]
    lead = f"{n} × " if n > 1 else ""
    st = g["status"]
    if st == "changed":
        head = g["label_before"] if g["label_before"] == g["label_after"] else \
            f"{g['label_before']} → {g['label_after']}"
        what = [w for w in g["what"] if w != f"{g['label_before']} -> {g['label_after']}"]
        return f"{lead}{head}" + (f": {'; '.join(what)}" if what else "")
    if st == "only_before":
        return f"{lead}{g['label_before']} gone (no counterpart after)"
    if st == "only_after":
        return f"{lead}{g['label_after']} new (no counterpart before)"
    return f"{lead}{g['label_before']}: pairing uncertain"


def group_changes(rows: list[dict]) -> list[dict]:
    """Rows that are not unchanged, grouped by (status, what the kernels compute, change)."""
    groups: dict[tuple, dict] = {}
    for r in rows:
        if r["status"] == "unchanged":
            continue
        key = (r["status"], r["label_before"], r["label_after"], _what_key(r["what"]))
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"status": r["status"], "label_before": r["label_before"],
                               "label_after": r["label_after"], "what": list(key[3]),
                               "count": 0, "example": {"before": r["before"], "after": r["after"]},
                               "members": [], "lines": set()}
        g["count"] += 1
        g["members"].append({"before": r["before"], "after": r["after"]})
        g["lines"].update(r.get("lines") or r.get("lines_after") or ())
    order = {"changed": 0, "only_before": 1, "only_after": 2, "uncertain": 3}
    out = []
    for g in groups.values():
        lines = sorted(g["lines"], key=_line_key)
        g["lines"] = lines[:8] + ([f"... {len(lines) - 8} more"] if len(lines) > 8 else [])
        g["text"] = sentence(g)
        out.append(g)
    out.sort(key=lambda g: (order.get(g["status"], 9), -g["count"], g["text"]))
    return out


def _line_key(s: str):
    f, _, line = s.rpartition(":")
    return (f, int(line) if line.isdigit() else 0)


def kernels_per_line(rows: list[dict]) -> list[dict]:
    """Source lines whose number of kernels changed: {line, before, after}."""
    before: Counter = Counter()
    after: Counter = Counter()
    for r in rows:
        for ln in r.get("lines", ()):
            before[ln] += 1
        for ln in r.get("lines_after", ()):
            after[ln] += 1
    out = []
    for ln in sorted(set(before) | set(after), key=_line_key):
        if before[ln] != after[ln]:
            out.append({"line": ln, "before": before[ln], "after": after[ln]})
    return out

