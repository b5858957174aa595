"""Arguments given the wrong way round: an optimized module first, an unoptimized second."""

from __future__ import annotations

from ..hlo.model import Module


def _scheduled(m: Module) -> bool:
    return m.attributes.get("is_scheduled") == "true"


def swapped_warning(before: Module, after: Module) -> str | None:
    """A warning when BEFORE looks optimized and AFTER does not, else None.

    XLA marks every module it has optimized ``is_scheduled=true`` (the scheduler runs last);
    a module as JAX hands it over never is. Fusions alone do not decide it: a module may be
    dumped part-way through the pipeline, and its fusions then come from XLA too.
    """
    from . import _is_optimized

    b_opt = _scheduled(before) or _is_optimized(before)
    a_opt = _scheduled(after) or _is_optimized(after)
    if b_opt and not a_opt:
        return (f"the first module ({before.path or before.name}) looks optimized and the second "
                f"({after.path or after.name}) does not: give the unoptimized module first "
                "(hlodiff BEFORE AFTER)")
    return None
