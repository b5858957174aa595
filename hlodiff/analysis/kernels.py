"""What each kernel of an optimized module is, and how much work and data it has.

A *kernel* is a top-level instruction (in the entry, a loop body/condition, a branch or a
called computation) that does work: a fusion, a library call, a collective, a copy. Its
*kind* says which code runs it on the device:

* GPU fusions with ``kind=kCustom`` carry a ``backend_config`` JSON whose
  ``fusion_backend_config.kind`` names the emitter: ``__triton_gemm`` /
  ``__triton_nested_gemm_fusion`` (a Triton gemm, with its tile config), ``__triton`` (a
  Triton block-level fusion: a softmax-like reduction or a generic elementwise kernel),
  ``__custom_fusion`` (a hand-written fusion such as CUTLASS), ``__cudnn$fusion``...
* GPU library calls are custom calls: ``__cublas$gemm`` (cuBLAS), ``__cublas$lt$matmul``
  (cuBLASLt, with its epilogue: BIAS, RELU, GELU...), ``__cudnn$conv*`` (cuDNN
  convolutions), ``__cudnn$fmha*`` (fused attention), ``__cudnn$norm``. Their result is a
  tuple whose last ``s8[N]``/``u8[N]`` element is a scratch *workspace* for the library:
  reported apart and never counted as data moved.
* CPU: ``__ynn_fusion`` (YNNPACK) fusions, ``__onednn$...`` custom calls, loop fusions.
* Loop / input / output fusions are named by their hero: a reduction, a transpose, a copy.

Work: FLOPs of dots and convolutions (2 per multiply-add), found inside fusions too; bytes
read (operands) and written (results less workspaces); arithmetic intensity = FLOPs/byte.
Split-K: XLA's split-K rewriter turns a gemm into a gemm with an extra leading batch dim
of S parts plus a reduce over that dim that keeps the dot's metadata; both are reported.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from ..hlo.model import Computation, Instruction, Module, Shape

# Instructions that run no kernel of their own.
FREE_OPS = frozenset({"parameter", "constant", "get-tuple-element", "tuple", "bitcast",
                      "after-all", "add-dependency", "opt-barrier", "partition-id",
                      "replica-id", "domain"})
COLLECTIVES = frozenset({"all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                         "collective-permute", "collective-broadcast", "ragged-all-to-all"})
_CONTROL = frozenset({"while", "conditional", "call"})
_TOP_ROLES = ("body", "condition", "true_computation", "false_computation",
              "branch_computations")


@dataclass
class Kernel:
    """One top-level kernel of a module."""

    name: str
    computation: str
    opcode: str
    kind: str  # e.g. "Triton gemm", "cuBLASLt matmul", "reduction fusion"
    detail: str = ""  # tile config, epilogue, custom-call target...
    flops: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    workspace_bytes: int = 0
    split_k: int | None = None  # parts of a split-K gemm
    source: str | None = None
    op_name: str | None = None

    @property
    def intensity(self) -> float | None:
        """FLOPs per byte moved, when the kernel does counted work."""
        moved = self.bytes_read + self.bytes_written
        return self.flops / moved if self.flops and moved else None

    def to_dict(self) -> dict:
        d = {"name": self.name, "computation": self.computation, "opcode": self.opcode,
             "kind": self.kind, "flops": self.flops, "bytes_read": self.bytes_read,
             "bytes_written": self.bytes_written}
        if self.detail:
            d["detail"] = self.detail
        if self.workspace_bytes:
            d["workspace_bytes"] = self.workspace_bytes
        if self.split_k:
            d["split_k"] = self.split_k
        if self.intensity is not None:
            d["intensity"] = round(self.intensity, 3)
        if self.source:
            d["source"] = self.source
        return d


@dataclass
class KernelReport:
    """Every kernel of a module, with totals."""

    kernels: list[Kernel] = field(default_factory=list)

    @property
    def kinds(self) -> Counter:
        return Counter(k.kind for k in self.kernels)

    @property
    def flops(self) -> int:
        return sum(k.flops for k in self.kernels)

    @property
    def bytes_moved(self) -> int:
        return sum(k.bytes_read + k.bytes_written for k in self.kernels)

    @property
    def workspace_bytes(self) -> int:
        return sum(k.workspace_bytes for k in self.kernels)

    def to_dict(self) -> dict:
        return {"kinds": dict(self.kinds.most_common()), "flops": self.flops,
                "bytes_moved": self.bytes_moved, "workspace_bytes": self.workspace_bytes,
                "kernels": [k.to_dict() for k in self.kernels]}


def backend_config(inst: Instruction) -> dict:
    """The instruction's backend_config JSON as a dict ({} when absent or not JSON)."""
    text = inst.attrs.get("backend_config")
    if not text or not text.lstrip().startswith(("{", '"')):
        return {}
    if text[0] == '"':  # some printers quote it
        from ..hlo.attributes import unquote
        text = unquote(text)
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def dims_attr(text: str | None) -> tuple[int, ...]:
    """The numbers of a dimension-list attribute (``lhs_contracting_dims={0,2}``)."""
    if not text:
        return ()
    return tuple(int(x) for x in text.strip("{} ").split(",") if x.strip().lstrip("-").isdigit())


def _prod(xs) -> int:
    n = 1
    for x in xs:
        n *= max(int(x), 0)
    return n


def _main_result(inst: Instruction) -> Shape:
    """The result array of a library call (the first tuple element), else the shape."""
    s = inst.shape
    while s.is_tuple and s.tuple_shapes:
        s = s.tuple_shapes[0]
    return s


def workspace_bytes(inst: Instruction) -> int:
    """Bytes of a cuBLAS/cuDNN/library scratch workspace in the call's result tuple."""
    if inst.opcode != "custom-call" or not inst.shape.is_tuple or len(inst.shape.tuple_shapes) < 2:
        return 0
    target = inst.custom_call_target or ""
    last = inst.shape.tuple_shapes[-1]
    if last.is_tuple or last.element_type not in ("s8", "u8") or last.rank != 1:
        return 0
    if target.startswith(("__cublas", "__cudnn", "__cusolver", "__onednn")) or "workspace" in target:
        return last.byte_size
    return 0


def dot_flops(inst: Instruction, lhs: Shape | None) -> int:
    """2 x output elements x contracted elements of a dot (0 when the lhs is unknown)."""
    if lhs is None or lhs.is_tuple:
        return 0
    contract = dims_attr(inst.attrs.get("lhs_contracting_dims"))
    return 2 * _main_result(inst).num_elements * _prod(lhs.dims[d] for d in contract
                                                        if d < lhs.rank)


def _gemm_call_flops(inst: Instruction, lhs: Shape | None, cfg: dict) -> int:
    gc = cfg.get("gemm_backend_config") or {}
    dn = gc.get("dot_dimension_numbers") or {}
    contract = [int(d) for d in dn.get("lhs_contracting_dimensions", []) if str(d).isdigit()]
    if lhs is None or lhs.is_tuple:
        return 0
    return 2 * _main_result(inst).num_elements * _prod(lhs.dims[d] for d in contract
                                                        if d < lhs.rank)


def conv_flops(inst: Instruction, operands: list[Shape | None]) -> int:
    """2 x output elements x (filter elements / output features), for forward and backward."""
    labels = inst.attrs.get("dim_labels", "")
    if "_" not in labels or "->" not in labels or len(operands) < 2:
        return 0
    kernel_labels = labels.split("_", 1)[1].split("->")[0]
    target = inst.custom_call_target or ""
    result = _main_result(inst)
    if "BackwardFilter" in target:
        out, filt = operands[1], result
    elif "BackwardInput" in target:
        out, filt = operands[0], operands[1]
    else:
        out, filt = result, operands[1]
    if out is None or filt is None or filt.is_tuple or len(kernel_labels) != filt.rank:
        return 0
    o = kernel_labels.find("o")
    if o < 0 or filt.dims[o] <= 0:
        return 0
    return 2 * out.num_elements * (filt.num_elements // filt.dims[o])


class _Flops:
    """FLOPs of a called computation (dots and convolutions inside, nested fusions too)."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self.memo: dict[str, int] = {}

    def of(self, comp_name: str, depth: int = 0) -> int:
        if comp_name in self.memo:
            return self.memo[comp_name]
        comp = self.module.by_name.get(comp_name)
        total = 0
        if comp is not None and depth < 16:
            self.memo[comp_name] = 0  # guards against cycles
            for inst in comp.instructions:
                total += instruction_flops(inst, comp, self, depth + 1)
        self.memo[comp_name] = total
        return total


def _operand_shapes(inst: Instruction, comp: Computation) -> list[Shape | None]:
    out = []
    for name in inst.operands:
        op = comp.by_name.get(name)
        out.append(op.shape if op is not None else None)
    return out


def instruction_flops(inst: Instruction, comp: Computation, flops: _Flops, depth: int = 0) -> int:
    """FLOPs of one instruction: dots, convolutions, library gemms/convs, fusions' bodies."""
    ops = None
    if inst.opcode == "dot":
        ops = _operand_shapes(inst, comp)
        return dot_flops(inst, ops[0] if ops else None)
    if inst.opcode == "convolution" or (inst.opcode == "custom-call" and "conv" in
                                        (inst.custom_call_target or "").lower()
                                        and "dim_labels" in inst.attrs):
        return conv_flops(inst, _operand_shapes(inst, comp))
    if inst.opcode == "custom-call" and (inst.custom_call_target or "").startswith(
            ("__cublas", "__onednn$matmul")):
        ops = _operand_shapes(inst, comp)
        cfg = backend_config(inst)
        if "gemm_backend_config" in cfg:
            return _gemm_call_flops(inst, ops[0] if ops else None, cfg)
        if "lhs_contracting_dims" in inst.attrs:
            return dot_flops(inst, ops[0] if ops else None)
        return 0
    if inst.opcode in ("fusion", "call", "async-start") and inst.calls:
        return sum(flops.of(c, depth) for c in inst.calls)
    return 0


def _fused_ops(module: Module, comp_name: str, seen: set | None = None) -> Counter:
    """Opcodes inside a fused computation, nested fusions included."""
    seen = seen if seen is not None else set()
    ops: Counter = Counter()
    comp = module.by_name.get(comp_name)
    if comp is None or comp_name in seen:
        return ops
    seen.add(comp_name)
    for i in comp.instructions:
        ops[i.opcode] += 1
        if i.opcode == "fusion":
            for c in i.calls:
                ops.update(_fused_ops(module, c, seen))
    return ops


def _tiles(cfg: dict) -> str:
    """Tile config text of a Triton fusion's backend_config."""
    fbc = cfg.get("fusion_backend_config") or {}
    parts = []
    tg = fbc.get("triton_gemm_config")
    if isinstance(tg, dict):
        parts.append("block " + "x".join(str(tg.get(k, "?")) for k in
                                          ("block_m", "block_n", "block_k")))
        for key in ("split_k", "num_stages", "num_warps", "num_ctas"):
            if key in tg:
                parts.append(f"{key}={tg[key]}")
    blc = fbc.get("block_level_fusion_config")
    if isinstance(blc, dict):
        tiles = ["x".join(str(s) for s in t.get("sizes", [])) for t in blc.get("output_tiles", [])
                 if isinstance(t, dict)]
        if tiles:
            parts.append("tile " + ",".join(tiles))
        for key in ("num_warps", "num_stages", "num_ctas"):
            if key in blc:
                parts.append(f"{key}={blc[key]}")
    return " ".join(parts)


_CUDNN = {"convForward": "cuDNN convolution", "convBackwardInput":
          "cuDNN convolution (backward input)", "convBackwardFilter":
          "cuDNN convolution (backward filter)", "convBiasActivationForward":
          "cuDNN convolution (bias+activation)", "norm": "cuDNN norm", "fusion": "cuDNN fusion"}


def custom_call_kind(inst: Instruction) -> tuple[str, str]:
    """(kind, detail) of a custom call from its target and backend_config."""
    target = inst.custom_call_target or ""
    if target.startswith("__cublas$lt$matmul"):
        gc = backend_config(inst).get("gemm_backend_config") or {}
        epi = str(gc.get("epilogue", "DEFAULT"))
        kind = "cuBLASLt matmul" + (" (fp8)" if "f8" in target else "")
        return kind, ("epilogue " + epi if epi and epi != "DEFAULT" else "")
    if target.startswith("__cublas$gemm") or target == "__cublas$gemm":
        return "cuBLAS gemm", ""
    if target.startswith("__cublas"):
        return "cuBLAS " + target.split("$", 1)[-1].strip("$"), ""
    if target.startswith("__cudnn$"):
        rest = target[len("__cudnn$"):]
        if rest.startswith("fmha") or "attention" in rest.lower():
            return "cuDNN fused attention", rest
        return _CUDNN.get(rest, "cuDNN " + rest), ""
    if target.startswith("__onednn$"):
        return "oneDNN " + target[len("__onednn$"):], ""
    if "ynn" in target.lower() or "xnn" in target.lower():
        return "YNNPACK call", target
    if target.startswith("__gpu$xla.gpu.triton") or target == "__triton":
        return "Triton kernel (custom call)", target
    if "mosaic" in target.lower():
        return "Mosaic kernel", target
    lib = _solver_call(target)
    if lib:
        return lib
    if target.startswith("te_fused_attn"):
        return "TransformerEngine fused attention", target
    if target == "TopK":
        return "top-k (runtime call)", ""
    if target in ("MoveToHost", "MoveToDevice"):
        return "host offload copy", target
    return "custom call", target


# LAPACK / BLAS routines (CPU) and their cuSOLVER / cuBLAS batched twins (GPU), named by the
# routine after the type letter: jaxlib's targets are e.g. lapack_spotrf_ffi, blas_strsm,
# cusolver_syevd_ffi, cublas_geqrf_batched_ffi.
_ROUTINES = {"potrf": "Cholesky factorization", "getrf": "LU factorization",
             "geqrf": "QR factorization", "orgqr": "Q of a QR factorization",
             "ungqr": "Q of a QR factorization", "syevd": "symmetric eigendecomposition",
             "heevd": "Hermitian eigendecomposition", "syevj": "symmetric eigendecomposition",
             "gesdd": "singular value decomposition", "gesvd": "singular value decomposition",
             "gesvdj": "singular value decomposition", "geev": "eigendecomposition",
             "gees": "Schur decomposition", "gehrd": "Hessenberg reduction",
             "sytrd": "tridiagonal reduction", "hetrd": "tridiagonal reduction",
             "trsm": "triangular solve", "gtsv": "tridiagonal solve", "geqp3": "pivoted QR"}
_SOLVER_LIBS = (("lapack_", "LAPACK"), ("blas_", "BLAS"), ("cusolver_", "cuSOLVER"),
                ("cublas_", "cuBLAS"), ("hipsolver_", "hipSOLVER"), ("hipblas_", "hipBLAS"))


def _solver_call(target: str) -> tuple[str, str] | None:
    """(kind, detail) of a linear-algebra library call, or None."""
    for prefix, lib in _SOLVER_LIBS:
        if target.startswith(prefix):
            rest = target[len(prefix):].removesuffix("_ffi").removesuffix("_batched")
            for key, what in _ROUTINES.items():
                if rest.startswith(key) or rest[1:].startswith(key):  # type letter or not
                    return f"{lib} {what}", target
            return f"{lib} call", target
    return None


def fusion_kind(module: Module, inst: Instruction) -> tuple[str, str]:
    """(kind, detail) of a fusion: its backend kind first, then its hero op."""
    cfg = backend_config(inst)
    fbc = cfg.get("fusion_backend_config") or cfg.get("fusion_config") or {}
    bk = str(fbc.get("kind", "")) if isinstance(fbc, dict) else ""
    ops = Counter()
    for c in inst.calls:
        ops.update(_fused_ops(module, c))
    if bk in ("__triton_gemm", "__triton_nested_gemm_fusion"):
        return "Triton gemm", _tiles(cfg)
    if bk == "__triton" or bk.startswith("__triton"):
        if ops["dot"]:
            return "Triton gemm", _tiles(cfg)
        if ops["reduce"]:
            label = "Triton softmax" if ops["exponential"] else "Triton reduction"
            return label, _tiles(cfg)
        return "Triton generic", _tiles(cfg)
    if bk == "__custom_fusion":
        name = str((fbc.get("custom_fusion_config") or {}).get("name", "")
                   if isinstance(fbc, dict) else "")
        if "dynamic_slice" in name or "address_computation" in name:
            # DynamicSliceFusionRewriter: a slice at a computed offset fused into the
            # library call or copy that reads or writes it
            return "dynamic-slice fusion", ("dynamic-update-slice" if ops["dynamic-update-slice"]
                                            else "dynamic-slice")
        if "gemm" in name:
            return "CUTLASS gemm", name
        return "custom fusion", name
    if bk.startswith("__cudnn"):
        return "cuDNN fusion", bk
    if bk == "__ynn_fusion":
        return "YNNPACK fusion", "dot" if ops["dot"] else ""
    if bk.startswith("__onednn"):
        return "oneDNN fusion", bk
    if bk == "__dynamic_memcpy":
        return "dynamic memcpy", ""
    if bk == "__dynamic_slice_fusion":  # a library call or copy at a computed offset
        return "dynamic-slice fusion", ("dynamic-update-slice" if ops["dynamic-update-slice"]
                                        else "dynamic-slice")
    if bk:
        return "custom fusion", bk.lstrip("_")
    work = {k: v for k, v in ops.items() if k not in FREE_OPS}
    if ops["dot"] or ops["convolution"]:
        hero = "dot" if ops["dot"] else "convolution"
        return f"{hero} fusion", (inst.fusion_kind or "")
    if ops["reduce"] or ops["reduce-window"]:
        return "reduction fusion", (inst.fusion_kind or "")
    if ops["scatter"]:
        return "scatter fusion", (inst.fusion_kind or "")
    if ops["sort"] or ops["topk"] or ops["top-k"]:  # newer XLA emits sorts/top-k as kCustom fusions with no config
        return "sort fusion", (inst.fusion_kind or "")
    if work and set(work) <= {"transpose", "copy", "reshape"}:
        return ("transpose" if ops["transpose"] else "copy") + " fusion", (inst.fusion_kind or "")
    if ops["transpose"] and inst.fusion_kind == "kInput":
        return "transpose fusion", "kInput"
    if set(work) <= {"slice", "dynamic-slice", "concatenate", "pad", "copy", "reshape",
                     "broadcast", "iota"} and work:
        return "data movement fusion", ",".join(sorted(work))
    name = {"kLoop": "loop fusion", "kInput": "input fusion", "kOutput": "output fusion",
            "kCustom": "custom fusion"}.get(inst.fusion_kind or "", "fusion")
    return name, ""


def kernel_kind(module: Module, inst: Instruction) -> tuple[str, str]:
    """(kind, detail) of one top-level instruction."""
    op = inst.opcode
    if op == "fusion":
        return fusion_kind(module, inst)
    if op == "custom-call":
        return custom_call_kind(inst)
    base = op[:-len("-start")] if op.endswith("-start") else op
    if op == "async-start" and inst.calls:
        inner = [i for i in module.by_name[inst.calls[0]].instructions
                 if i.opcode not in FREE_OPS] if inst.calls[0] in module.by_name else []
        if inner:
            k, d = kernel_kind(module, inner[-1])
            return k + " (async)", d
        return "async", ""
    if base in COLLECTIVES:
        return "collective " + base + (" (async)" if op.endswith("-start") else ""), ""
    if op in ("copy-start",):
        return "copy (async)", ""
    if op in ("send", "recv"):
        return op, ""
    if op in _CONTROL:
        return {"while": "while loop", "conditional": "conditional", "call": "call"}[op], ""
    return op, ""


def top_level_computations(module: Module) -> list[Computation]:
    """The entry and the computations the runtime steps through (loops, branches, calls)."""
    out, seen = [], set()
    stack = [module.entry]
    while stack:
        name = stack.pop()
        if name in seen or name not in module.by_name:
            continue
        seen.add(name)
        comp = module.by_name[name]
        out.append(comp)
        for inst in comp.instructions:
            if inst.opcode == "fusion":
                continue
            for role, callees in inst.called.items():
                if role in _TOP_ROLES or (inst.opcode == "call" and role == "calls"):
                    stack.extend(callees)
    return out


def _split_k(module: Module, comp: Computation, users: dict[str, list[Instruction]],
             inst: Instruction) -> Instruction | None:
    """The kernel that sums a split-K gemm's parts, when ``inst`` is one.

    XLA's split-K rewrite gives the dot a leading batch dim of S parts and adds a reduce
    over dim 0 that keeps the dot's metadata; later fusion may fuse that reduce into a
    bigger loop fusion. A user qualifies when it (or a reduce inside it, fed by the gemm's
    result through parameters/bitcasts) reduces dim 0 of the gemm result with the dot's op.
    """
    shape = inst.shape
    if shape.is_tuple or shape.rank < 3 or shape.dims[0] < 2 or not inst.op_name:
        return None
    want = tuple(shape.dims[1:])
    for user in users.get(inst.name, []):
        if user.opcode == "reduce":
            cands, fed = [user], {inst.name}
        elif user.opcode == "fusion" and user.calls and user.calls[0] in module.by_name:
            fused = module.by_name[user.calls[0]]
            fed = {p.name for p in fused.parameters
                   if p.parameter_number is not None and p.parameter_number < len(user.operands)
                   and user.operands[p.parameter_number] == inst.name}
            for i in fused.instructions:  # bitcasts of the parts keep them
                if i.opcode == "bitcast" and i.operands and i.operands[0] in fed \
                        and i.shape.num_elements == shape.num_elements:
                    fed.add(i.name)
            cands = [i for i in fused.instructions if i.opcode == "reduce"]
        else:
            continue
        for red in cands:
            if (red.operands and red.operands[0] in fed and not red.shape.is_tuple
                    and dims_attr(red.attrs.get("dimensions")) == (0,)
                    and red.shape.num_elements * shape.dims[0] == shape.num_elements
                    and tuple(red.shape.dims) == want and red.op_name == inst.op_name):
                return user
    return None


def analyze_kernels(module: Module) -> KernelReport:
    """Every top-level kernel of ``module`` with its kind, FLOPs and bytes."""
    flops = _Flops(module)
    report = KernelReport()
    for comp in top_level_computations(module):
        users: dict[str, list[Instruction]] = {}
        for inst in comp.instructions:
            for o in inst.operands:
                users.setdefault(o, []).append(inst)
        split_reduces: dict[str, str] = {}
        for inst in comp.instructions:
            op = inst.opcode
            if op in FREE_OPS or op.endswith("-done") or op.endswith("-update"):
                continue
            kind, detail = kernel_kind(module, inst)
            ws = workspace_bytes(inst)
            read = sum(s.byte_size for s in _operand_shapes(inst, comp) if s is not None)
            written = inst.shape.byte_size - ws
            if op in _CONTROL:
                read = written = 0
            k = Kernel(name=inst.name, computation=comp.name, opcode=op, kind=kind,
                       detail=detail, flops=instruction_flops(inst, comp, flops),
                       bytes_read=read, bytes_written=written, workspace_bytes=ws,
                       source=inst.source, op_name=inst.op_name)
            if kind == "Triton gemm" or kind.startswith("cuBLAS"):
                red = _split_k(module, comp, users, inst)
                if red is not None:
                    k.split_k = inst.shape.dims[0]
                    split_reduces[red.name] = inst.name
            if inst.name in split_reduces:
                _mark_split_reduce(module, inst, k, split_reduces[inst.name])
            report.kernels.append(k)
    # Reduces come after their gemm in a scheduled module; fix any that came first.
    names = {k.name: k for k in report.kernels}
    for k in report.kernels:
        if k.split_k:
            comp = module.by_name[k.computation]
            users = [i for i in comp.instructions if k.name in i.operands]
            red = _split_k(module, comp, {k.name: users}, comp.by_name[k.name])
            if red is not None and red.name in names:
                _mark_split_reduce(module, red, names[red.name], k.name)
    return report


def _mark_split_reduce(module: Module, inst: Instruction, k: Kernel, gemm: str) -> None:
    """Name the kernel that sums a split-K gemm's parts (alone, or fused with more work)."""
    root = inst
    if inst.opcode == "fusion" and inst.calls and inst.calls[0] in module.by_name:
        root = module.by_name[inst.calls[0]].root_instruction
    if root.opcode == "reduce":
        k.kind, k.detail = "split-K reduction", f"sums the {gemm} parts"
    elif "split-K" not in k.detail:
        k.detail = (k.detail + "; " if k.detail else "") + f"sums the split-K {gemm} parts"
