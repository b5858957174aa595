"""What one module holds, at a glance: the facts ``hlodiff show`` prints.

Kept apart from the printing so the Python API (and tests) can use the same figures.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..hlo.model import Module

# Called-computation roles, for telling what each computation is for.
_ROLE_NAMES = {
    "calls": "fused or called", "to_apply": "reducer/applied", "condition": "loop condition",
    "body": "loop body", "true_computation": "branch", "false_computation": "branch",
    "branch_computations": "branch", "called_computations": "called", "select": "select",
    "scatter": "scatter",
}


@dataclass
class ModuleSummary:
    """Counts and rankings describing one module."""

    name: str
    entry: str
    path: str | None
    computations: int
    instructions: int
    entry_instructions: int
    computation_kinds: Counter = field(default_factory=Counter)
    opcodes: Counter = field(default_factory=Counter)
    fusions_by_kind: Counter = field(default_factory=Counter)
    custom_call_targets: Counter = field(default_factory=Counter)
    largest: list[tuple[int, str, str, str]] = field(default_factory=list)  # bytes, comp, name, shape
    source_files: Counter = field(default_factory=Counter)
    kernels: int = 0

    def to_dict(self) -> dict:
        return {
            "name": self.name, "entry": self.entry, "file": self.path,
            "computations": self.computations, "instructions": self.instructions,
            "entry_instructions": self.entry_instructions, "kernels": self.kernels,
            "computation_kinds": dict(self.computation_kinds),
            "opcodes": dict(self.opcodes.most_common()),
            "fusions_by_kind": dict(self.fusions_by_kind),
            "custom_call_targets": dict(self.custom_call_targets.most_common()),
            "largest_tensors": [{"bytes": b, "computation": c, "instruction": n, "shape": s}
                                for b, c, n, s in self.largest],
            "source_files": dict(self.source_files.most_common()),
        }


# Instructions that cost no kernel launch of their own.
_FREE = frozenset({"parameter", "constant", "get-tuple-element", "tuple", "bitcast",
                   "after-all", "add-dependency", "opt-barrier", "partition-id", "replica-id"})


def _computation_roles(module: Module) -> dict[str, str]:
    roles: dict[str, str] = {module.entry: "entry"}
    for comp in module.computations:
        for inst in comp.instructions:
            for role, callees in inst.called.items():
                for callee in callees:
                    if callee in roles:
                        continue
                    if inst.opcode == "fusion":
                        roles[callee] = "fused"
                    elif inst.opcode in ("async-start", "call") and role == "calls":
                        roles[callee] = "called"
                    else:
                        roles[callee] = _ROLE_NAMES.get(role, role)
    return roles


def summarize(module: Module, top: int = 10) -> ModuleSummary:
    """The figures of ``hlodiff show`` for ``module``."""
    roles = _computation_roles(module)
    s = ModuleSummary(name=module.name, entry=module.entry, path=module.path,
                      computations=len(module.computations),
                      instructions=module.instruction_count,
                      entry_instructions=len(module.entry_computation.instructions))
    s.computation_kinds = Counter(roles.get(c.name, "unreferenced") for c in module.computations)
    sizes: list[tuple[int, str, str, str]] = []
    for comp in module.computations:
        top_level = roles.get(comp.name) in ("entry", "called", "loop body", "loop condition",
                                             "branch")
        for inst in comp.instructions:
            s.opcodes[inst.opcode] += 1
            if inst.opcode == "fusion":
                s.fusions_by_kind[inst.fusion_kind or "?"] += 1
            if inst.custom_call_target is not None:
                s.custom_call_targets[inst.custom_call_target] += 1
            if inst.metadata is not None and inst.metadata.source_file:
                s.source_files[inst.metadata.source_file] += 1
            if top_level:
                if inst.opcode not in _FREE:
                    s.kernels += 1
                if not inst.shape.is_tuple:
                    sizes.append((inst.shape.byte_size, comp.name, inst.name, inst.shape.dims_text))
    sizes.sort(key=lambda t: -t[0])
    s.largest = sizes[:top]
    return s
