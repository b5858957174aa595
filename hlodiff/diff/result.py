"""The diff result: plain dataclasses, and the stable JSON form.

JSON schema (``DiffResult.to_json()``, ``hlodiff diff --format json``), version 1::

    {
      "schema": 1,
      "mode": "optimization" | "regression",
      "before": {"file": str|null, "module": str, "instructions": int, "entry": str,
                 "ops": int},   # ops: instructions less fused computations' parameters
      "after":  {"file": str|null, "module": str, "instructions": int, "entry": str, "ops": int},
      "summary": {
        "kept", "fused", "folded", "merged", "rewritten", "inlined", "removed",
        "uncertain": int,
            # optimization mode: how many before instructions had each fate
        "unchanged", "changed", "only_before", "only_after": int,   # regression mode
        "fusions": int,          # fusion instructions in the after module (top level)
        "added": int,            # len(added)
        "layout_changes": int,   # len(layouts)
        "kernels_before", "kernels_after": int,   # top-level instructions that run
        "bytes_before", "bytes_after": int,       # bytes those kernels read + write
        "kernels": int, "bytes": int              # = the after values (for --fail-on)
      },
      "instructions": [            # one per before instruction considered, in text order
        {"before": str, "computation": str, "fate": str, "after": str|null,
         "fusion": str|null, "fusion_kind": str|null, "into": str|null, "reason": str,
         "opcode": str, "op_name": str|null, "source": str|null, "call_site": str|null,
         "also_in": [str], "candidates": [str]}
      ],
        # fate (optimization): kept|fused|folded|merged|rewritten|inlined|removed|uncertain
        #        uncertain: the two modules cannot decide; candidates: the after
        #        instructions it may have become
        # candidates with another fate (after/fusion null): the fate holds, but twins
        #        (repeated layers) leave several kernels that may hold the value
        # also_in: further fusions that fusion copied the same computation into
        # fate (regression):   unchanged|changed|only_before|uncertain (one per before
        #                      kernel; see diff/regression.py)
        # after: the after instruction it became (the constant for folded, the survivor's
        #        after instruction for merged); fusion/fusion_kind: the top-level fusion
        #        that now computes it (for folded: the fusion holding the new constant);
        #        into: merged -> the surviving before instruction
      "fusions": [{"name", "kind", "computation", "before": [str], "inputs": [str],
                   "outputs": [str], "bytes_read", "bytes_written", "unfused_bytes": int,
                   "sources": [str]}],     # sorted by bytes saved, largest first
      "added": [{"name", "computation", "opcode", "shape", "reason": str}],
      "layouts": [{"instruction": str|null, "before": str|null, "computation": str,
                   "from": str, "to": str}],   # instruction "ENTRY" = entry layout
      "by_source": [{"source": str, "instructions": int, "kernels": [str]}],
      "regression": null | {     # regression mode (diff/regression.py, diff/changelog.py)
          "kernels": [{"before": str|null, "after": str|null,  # one row per kernel
                       "status": "unchanged"|"changed"|"only_before"|"only_after"|"uncertain",
                       "what": [str], "label_before", "label_after": str|null,
                       "lines": [str], "lines_after": [str], "candidates": [str]}],
              # a before kernel joined into a paired after kernel, and an after kernel
              # split off from a paired before kernel, are "changed" rows naming both
          "changes": [{"before", "after": str|null, "status": str, "what": [str]}],
          "groups": [{"status", "label_before", "label_after", "text": str, "count": int,
                      "what": [str], "example": {"before", "after"}, "members": [...],
                      "lines": [str]}],       # the changelog: repeated changes grouped
          "per_line": [{"line": str, "before": int, "after": int}],  # kernels per line
          "pairs", "joined", "split", "uncertain", "kernels_before", "kernels_after": int,
          "fusions": []},
      "memory": null | {       # diff/memory.py; null when the after module is not optimized
        "before": null | SIDE, "after": SIDE,   # before is null in optimization mode
            # SIDE = {"peak_bytes": int (XLA's allocation total, or the estimate),
            #         "estimated": bool, "live_range_peak_bytes": int|null,
            #         "by_kind": {kind: bytes}, "peak_at": {...}|null, "live_at_peak": [...],
            #         "remat": {...}|null, "timeline": [[step, bytes]] (<= 400 points)}
        "change_bytes": int|null,
        "growth_by_source": [{"source", "before", "after", "change"}],
        "growth_by_op_name": [{"op_name", "before", "after", "change"}],
        "growth_by_kernel": [{"kernel", "before", "after", "change"}],
        "new_at_peak": [{"instruction", "bytes", "shape", "source", "kind", ...}],
        "peak_moved": bool|null}
      # summary also holds "peak_bytes" (after), "peak_bytes_before", "peak_bytes_after"
      "remat": null | {        # diff/remat.py; optimization mode, jax.checkpoint regions
        "count", "still_recompute", "no_longer_recompute", "barriers_left",
        "fates_corrected": int,   # forward twins moved to the kernel CSE kept for both
        "instructions": {"merged", "forward", "backward", "removed", "uncertain": int},
        "summary": str,
        "regions": [{"barrier", "computation", "label": str, "function", "lines",
                     "call_site", "scope", "parent": str|null, "index", "count",
                     "depth": int, "in_loop": bool,
                     "residuals": [str], "saved_bytes", "saved_parameters",
                     "recomputed_ops", "recomputed_bytes": int,
                     "outcome": {"merged", "forward", "backward", "removed", "uncertain": int},
                     "heavy": {...same keys: dots and convolutions only},
                     "status": "recomputes"|"partly"|"merged"|"forward"|"removed"|"uncertain",
                     "recomputes": bool|null,   # most of its live work in the backward pass
                     "kernels": {"merged", "forward", "backward": [str]},
                     "examples": {outcome: [str]},
                     "at_peak": null | {"recomputed_bytes", "kept_from_forward_bytes",
                                        "saved_bytes": int},   # live at XLA's peak
                     "verdict": str}]}
        # outcome per recomputed op: merged = CSE computes it once with its forward twin;
        # forward = its kernel runs ahead of the region's backward pass (before the
        # cotangent flowing in exists); backward = recomputed in the backward pass
        # "barriers_removed_after_scheduling": bool (GPU-style: the optimized module still
        # holds a barrier's tuple); then nothing is merged or scheduled ahead
      # regression mode (two optimized modules; regions from the unoptimized modules XLA
      # dumped beside them): {"before": REMAT|null, "after": REMAT|null, "kernels_before",
      #   "kernels_after", "peak_before", "peak_after", "summary": str (why the kernels and
      #   the peak changed), "regions", "count", "instructions" (of the side with regions)}
      # hlodiff memory DIR --format json: the same object as "remat_regions"
    }

    Kernel kinds, collectives and partitioning (hlodiff/diff/devices.py) add these keys::

      "summary": {..., "collective_bytes": int,      # per device per step, after module
                  "collective_bytes_before": int, "collectives": int,
                  "partitioned": int,                # num_partitions, when > 1
                  "bytes_before_global": int},       # partitioned: before bytes, global
                    # (partitioned diffs: "bytes_before" is per device, comparable)
      "kernels": {"before": KINDS|null, "after": KINDS},
          # KINDS = {"kinds": {kind: count}, "flops": int, "bytes_moved": int,
          #          "workspace_bytes": int,
          #          "kernels": [{"name", "computation", "opcode", "kind", "detail"?,
          #                       "flops", "bytes_read", "bytes_written",
          #                       "workspace_bytes"?, "split_k"?, "intensity"?, "source"?}]}
          # kinds: "Triton gemm", "Triton softmax", "Triton reduction", "Triton generic",
          #   "cuBLAS gemm", "cuBLASLt matmul", "cuDNN convolution[ (...)]", "cuDNN fused
          #   attention", "cuDNN norm", "custom fusion", "split-K reduction", "loop fusion",
          #   "input fusion", "reduction fusion", "transpose fusion", "copy", "collective
          #   all-reduce (async)", "YNNPACK fusion", "oneDNN ...", ...
      "collectives": {"before": COLL|null, "after": COLL,
                      "shardings": [{"instruction", "role": "parameter"|"output"|"annotated",
                                     "shape", "sharding", "description", "ways"}]},
          # COLL = {"count", "bytes_per_device", "by_kind": {kind: bytes},
          #         "by_mesh_axis": {axes: bytes}, "mesh": {axis: size}|null,
          #         "num_partitions", "collectives": [{"name", "kind", "computation",
          #         "bytes", "in_bytes", "out_bytes", "async", "done"?, "replica_groups"?,
          #         "group_size"?, "replica_groups_text"?, "mesh_axes"?,
          #         "source_target_pairs"?, "pattern"?, "overlap"?, "merged"?,
          #         "decomposition"?, "op_name"?, "source"?}]}
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

FATES = ("kept", "fused", "folded", "merged", "rewritten", "inlined", "removed", "uncertain")
REGRESSION_FATES = ("unchanged", "changed", "only_before", "uncertain")


@dataclass(slots=True)
class InstructionFate:
    before: str
    computation: str
    fate: str
    after: str | None = None
    fusion: str | None = None
    fusion_kind: str | None = None
    into: str | None = None
    reason: str = ""
    opcode: str = ""
    op_name: str | None = None
    source: str | None = None
    call_site: str | None = None
    also_in: list[str] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)


@dataclass(slots=True)
class FusionInfo:
    name: str
    kind: str | None
    computation: str | None
    before: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    bytes_read: int = 0
    bytes_written: int = 0
    unfused_bytes: int = 0
    sources: list[str] = field(default_factory=list)

    def _repr_html_(self) -> str:
        from ..display import html

        return html(self)


@dataclass(slots=True)
class FusionView:
    """A fusion of a result with the optimized module it is in: what ``result.fusion(NAME)``
    returns, so that a notebook can also draw the fused computation."""

    info: FusionInfo
    after: object | None = field(default=None, repr=False)  # the after Module

    def __getattr__(self, name: str):
        return getattr(self.info, name)

    def _repr_html_(self) -> str:
        from ..display import html

        return html(self)

    def _repr_svg_(self) -> str | None:
        from ..display import svg

        return svg(self)


@dataclass(slots=True)
class Added:
    name: str
    computation: str
    opcode: str
    shape: str
    reason: str


@dataclass(slots=True)
class LayoutChange:
    instruction: str | None
    before: str | None
    computation: str
    from_: str
    to: str

    def to_json(self) -> dict:
        return {"instruction": self.instruction, "before": self.before,
                "computation": self.computation, "from": self.from_, "to": self.to}


@dataclass(slots=True)
class DiffResult:
    mode: str
    before_info: dict
    after_info: dict
    instructions: list[InstructionFate]
    fusions: list[FusionInfo]
    added: list[Added]
    layouts: list[LayoutChange]
    summary: dict
    by_source: list[dict] = field(default_factory=list)
    regression: dict | None = None
    memory: dict | None = None  # see diff/memory.py
    remat: dict | None = None  # see diff/remat.py
    timings: dict = field(default_factory=dict)
    devices: dict = field(default_factory=dict)  # "kernels", "collectives", "partitioned" (devices.py)
    _index: dict | None = None

    modules: tuple | None = field(default=None, repr=False)  # (before, after) Modules
    _by_name: dict | None = None

    def fate_of(self, computation: str, name: str | None = None) -> InstructionFate | None:
        """The fate of one before instruction: ``fate_of(NAME)``, or ``fate_of(COMPUTATION,
        NAME)`` when the name is in several computations (ValueError lists them)."""
        if name is None:
            return self._fate_by_name(computation.lstrip("%"))
        if self._index is None:
            idx: dict = {}
            for f in self.instructions:
                idx.setdefault((f.computation, f.before), f)
            self._index = idx
        return self._index.get((computation.lstrip("%"), name.lstrip("%")))

    def _fate_by_name(self, name: str) -> InstructionFate | None:
        if self._by_name is None:
            by: dict = {}
            for f in self.instructions:
                by.setdefault(f.before, []).append(f)
            self._by_name = by
        found = self._by_name.get(name)
        if not found:
            return None
        comps = sorted({f.computation for f in found})
        if len(comps) > 1:
            raise ValueError(f"instruction {name!r} is in {len(comps)} computations "
                             f"({', '.join(comps[:10])}{', ...' if len(comps) > 10 else ''}); "
                             f"name one: result.fate_of({comps[0]!r}, {name!r})")
        if len({f.fate for f in found}) > 1:  # a callee's instruction, per call site
            sites = "; ".join(f"at {f.call_site}: {f.fate}" for f in found[:10])
            raise ValueError(f"instruction {name!r} of {comps[0]} has different fates at its "
                             f"call sites ({sites}); see [f for f in result.instructions "
                             f"if f.before == {name!r}]")
        return found[0]

    def fusion(self, name: str) -> "FusionView":
        """One fusion of the result by name (``fusion.3``), for a notebook: it shows as a
        table and, with Graphviz, as a picture of the fused computation."""
        name = name.lstrip("%")
        for f in self.fusions:
            if f.name == name:
                return FusionView(f, self.modules[1] if self.modules else None)
        names = ", ".join(f.name for f in self.fusions[:8])
        raise KeyError(f"no fusion {name!r} in the result (fusions: {names}"
                       f"{', ...' if len(self.fusions) > 8 else ''})")

    def __repr__(self) -> str:
        b, a, s = self.before_info, self.after_info, self.summary
        keys = FATES if self.mode == "optimization" else ("unchanged", "changed", "only_before",
                                                          "only_after")
        counts = ", ".join(f"{s[k]} {k}" for k in keys if s.get(k))
        names = b["module"] if b["module"] == a["module"] else f"{b['module']} vs {a['module']}"
        return (f"<DiffResult {self.mode} {names}: {b['instructions']} -> {a['instructions']} "
                f"instructions, kernels {s.get('kernels_before', 0)} -> "
                f"{s.get('kernels_after', 0)}; {counts}; {len(self.fusions)} fusions>")

    def _repr_html_(self) -> str:
        from ..display import html

        return html(self)

    def to_json(self) -> dict:
        return {
            "schema": 1,
            "mode": self.mode,
            "before": dict(self.before_info),
            "after": dict(self.after_info),
            "summary": dict(self.summary),
            "instructions": [asdict(f) for f in self.instructions],
            "fusions": [asdict(f) for f in self.fusions],
            "added": [asdict(a) for a in self.added],
            "layouts": [lc.to_json() for lc in self.layouts],
            "by_source": list(self.by_source),
            "regression": self.regression,
            "memory": self.memory,
            "remat": self.remat,
            **self.devices,
        }
