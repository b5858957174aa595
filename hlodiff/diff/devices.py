"""Kernel kinds, collectives and partitioning of a diff: the device-level facts.

A separate pass after the fates: it reads the two modules and the matching, and adds to
the DiffResult the ``kernels`` and ``collectives`` JSON keys and the summary metrics
``collective_bytes`` (per device per step; a ``--fail-on`` metric), ``collectives``,
``partitioned`` and, for partitioned programs, per-device ``bytes_before`` so that the
global before shapes and the per-device after shapes are compared like for like.
"""

from __future__ import annotations

from ..analysis.collectives import analyze_collectives
from ..analysis.kernels import analyze_kernels
from ..analysis.sharding import annotated_shardings, module_mesh
from ..hlo.model import Module
from . import analyses, partition
from .result import DiffResult


def attach_devices(res: DiffResult, m, before: Module, after: Module) -> None:
    """Fill ``res.devices`` and the device metrics of ``res.summary``."""
    s = res.summary
    nparts = partition.num_partitions(before, after)
    if nparts > 1:
        s["partitioned"] = nparts
        if res.mode == "optimization" and "bytes_before" in s:
            s["bytes_before_global"] = s["bytes_before"]
            s["bytes_before"] = partition.per_device_bytes(m, nparts, analyses.NOT_KERNELS)
    regression = res.mode == "regression"
    ka = analyze_kernels(after)
    kb = analyze_kernels(before) if regression else None
    ca = analyze_collectives(after, before)
    cb = analyze_collectives(before) if regression else None
    s["collectives"] = len(ca.collectives)
    s["collective_bytes"] = ca.total_bytes
    s["collective_bytes_before"] = cb.total_bytes if cb is not None else 0
    res.devices = {
        "kernels": {"before": kb.to_dict() if kb else None, "after": ka.to_dict()},
        "collectives": {"before": cb.to_dict() if cb else None, "after": ca.to_dict(),
                        "shardings": annotated_shardings(before, module_mesh(before))},
    }
