"""Names XLA's GPU pipeline rewrites at the end (gpu2).

``rename-instructions`` appends ``.0`` (``constant.19`` -> ``constant.19.0``; match.py
strips it), and ``sanitize-constant-names`` then makes a top-level constant's name a valid
PTX symbol, replacing ``.`` and ``-`` by ``_`` (kv_decode_loop's H100 dumps 0044 and 0068:
``constant.19`` -> ``constant.19.0`` -> ``constant_19_0``). A constant kept at top level
is found under that name.
"""

from __future__ import annotations


def sanitized(name: str) -> str:
    """The name sanitize-constant-names gives a constant that rename-instructions renamed."""
    return (name + ".0").replace(".", "_").replace("-", "_")


def constants_by_sanitized_name(nodes) -> dict[str, int]:
    """After top-level constants whose name carries no ``.``: name -> node (the names a
    sanitized before name is looked up in)."""
    return {n.name: n.idx for n in nodes
            if n.opcode == "constant" and n.fusion < 0 and "." not in n.name}


def constant_stems(nodes) -> set[str]:
    """Sanitized names of the before constants whose copies the after module holds: a
    fusion's copy of ``constant.23.0`` is ``constant.23.2``, sanitized ``constant_23_2``
    (gnn_segment_max's H100 module), so the stem ``constant_23`` names the constant that
    CSE kept; one merged into it left no name behind."""
    out: set[str] = set()
    for n in nodes:
        if n.opcode == "constant" and "." not in n.name:
            stem, sep, tail = n.name.rpartition("_")
            if sep and tail.isdigit():
                out.add(stem)
    return out


def survivor_by_name(group: list[int], nodes, stems: set[str]) -> int | None:
    """The one constant of an identical ``group`` whose name lives on, if exactly one."""
    hits = [i for i in group if sanitized(nodes[i].name)[:-2] in stems]
    return hits[0] if len(hits) == 1 else None
