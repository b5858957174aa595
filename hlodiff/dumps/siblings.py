"""The before-optimization module beside an optimized dump file, when XLA wrote one.

``hlodiff show X.sm_9.0a_gpu_after_optimizations.txt`` reads the mesh (the names of the
device axes) from the program's before module: XLA writes it next to the optimized one as
``<module_NNNN.name>.before_optimizations.txt``.
"""

from __future__ import annotations

from pathlib import Path

from ..hlo.model import Module


def before_of(path: str, cache: bool = True) -> Module | None:
    """The parsed sibling before module of an ``*after_optimizations.txt`` file, or None."""
    p = Path(path)
    if "after_optimizations" not in p.name or "." not in p.name:
        return None
    parts = p.name.split(".")
    if len(parts) < 3:
        return None
    cand = p.with_name(".".join(parts[:2]) + ".before_optimizations.txt")
    if not cand.is_file():
        return None
    from .loader import load
    try:
        return load(str(cand), cache=cache)
    except Exception:  # a damaged sibling must not break showing the file asked for
        return None
