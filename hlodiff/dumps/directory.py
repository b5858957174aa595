"""Dump directories written with ``--xla_dump_to``: which modules they hold, and which one to
read when the user names only the directory.

File names, on every platform that dumps (an optional ``<timestamp>.`` prefix first)::

    module_0001.jit_step.before_optimizations.txt               the module as JAX gave it
    module_0001.jit_step.cpu_after_optimizations.txt            CPU
    module_0001.jit_step.gpu_after_optimizations.txt            GPU (older XLA)
    module_0001.jit_step.sm_9.0a_gpu_after_optimizations.txt    NVIDIA, by compute capability
    module_0001.jit_step.gfx90a_gpu_after_optimizations.txt     AMD, by gfx target
    module_0001.jit_step.after_optimizations.txt                TPU and older XLA

Pass-by-pass snapshots (``module_0001.jit_step.0012.<pipeline>.after_<pass>...txt``), the
buffer-assignment and memory reports (``...after_optimizations-buffer-assignment.txt``) and
the per-fusion side modules a GPU compile writes (``module_0007.fused_reduce.0000.
cublaslt_rewriter_pipeline...txt``: pass snapshots only, never a before/after pair) are not
the program's modules.

Which module the user means: a training script's dump also holds the PRNG helpers JAX
compiles outside ``jit`` (``jit__normal``, ``jit__randint``, ``jit__threefry_split``) and
one-op eager modules (``jit_multiply``); the PRNG helpers are often the largest files. The
choice ranks by work, read from the optimized text in one linear scan: modules of JAX's
private functions (``jit__*``) last, then modules with no source line of the user's, then
modules whose every instruction comes from one source location (a ``jnp`` function the
program called eagerly, such as ``jit_unstack``; the step the user wrote spans several
lines), then the most dot/convolution FLOPs, then the most kernels (top-level instructions
that run).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError

_DUMP_NAME = re.compile(
    r"^(?:\d+\.)?(module_\d+)\.(.+?)\."
    r"(before_optimizations|(?:[A-Za-z0-9_.\-]*_)?after_optimizations)\.txt$")
_PASS_STEP = re.compile(r"\.\d{4}\.")  # a pass snapshot's sequence number

# Instructions that run no kernel of their own.
_FREE = frozenset({"parameter", "constant", "get-tuple-element", "tuple", "bitcast",
                   "after-all", "add-dependency", "opt-barrier", "partition-id", "replica-id"})
_COMP_HEAD = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s")
_INSTR = re.compile(r"^\s+(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$")
_OPERANDS = re.compile(r"\(\s*%?([\w.\-]+)[^,)]*(?:,\s*%?([\w.\-]+))?")
_OPCODE = re.compile(r"(?:^|[\s}\])])([a-z][a-z0-9\-]*)\(")
_FUSION_CALLS = re.compile(r"\bcalls=%?([\w.\-]+)")
_APPLIES = re.compile(r"\bto_apply=%?([\w.\-]+)")  # reducers, comparators: not kernels
_SHAPE = re.compile(r"([a-z]+\d*)\[([0-9,]*)\]")
_LHS_CONTRACT = re.compile(r'lhs_contracting_dims=\{([0-9,]*)\}|"lhs_contracting_dimensions":\[([0-9",]*)\]')
_LIBRARY_GEMM = re.compile(r'custom_call_target="[^"]*(?:gemm|matmul)')
_DIM_LABELS = re.compile(r"dim_labels=[^_\s]*_([^-\s]*)->")
_USER_CODE = re.compile(r"stack_frame_id=\d|source_file=")
_LOCATION = re.compile(r'stack_frame_id=(\d+)|source_file="([^"]*)" source_line=(\d+)')


@dataclass
class ModuleWork:
    """What the optimized text of one module does, for choosing the module the user means."""

    kernels: int = 0
    flops: int = 0
    dots: int = 0
    user_ops: int = 0  # instructions with a source location (the user's program)
    locations: int = 0  # distinct source locations: 1 for a jnp function called eagerly


@dataclass
class DumpPair:
    """One module of an XLA dump directory: its before/after optimization files."""

    module_id: str
    name: str
    before: Path | None
    after: Path | None
    work: ModuleWork | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        return max((p.stat().st_size for p in (self.before, self.after) if p), default=0)

    @property
    def is_jax_helper(self) -> bool:
        """A module of one of JAX's private functions (``jit__normal``, ``jit__threefry_split``)."""
        fn = self.name.split("(", 1)[0]
        for prefix in ("jit_", "pmap_", "xla_computation_"):
            if fn.startswith(prefix):
                fn = fn[len(prefix):]
                break
        # a private function's name starts with '_'; the user's own `jax.jit(lambda ...)`
        # is named jit__lambda, and is the user's code
        return fn.startswith("_") and not fn.startswith("_lambda")

    def describe(self) -> str:
        """``jit_step (3 dots, 41 kernels)``: the name with the work that ranked it."""
        w = self.work
        if w is None:
            return self.name
        parts = [f"{w.dots} dot{'s' if w.dots != 1 else ''}"] if w.dots else []
        parts.append(f"{w.kernels} kernel{'s' if w.kernels != 1 else ''}")
        return f"{self.name} ({', '.join(parts)})"


def _product(dims: str) -> int:
    n = 1
    for d in dims.split(","):
        if d:
            n *= int(d)
    return n


def _flops(rest: str, op: str, dims: dict[str, str]) -> int:
    """FLOPs of a dot, convolution or library gemm line; operand dims come from ``dims``
    (the computation's instructions seen so far; optimized dumps do not print them)."""
    out = _SHAPE.search(rest)
    om = _OPERANDS.search(rest, rest.find(op + "(") + len(op))
    if not out or not om:
        return 0
    lhs = dims.get(om.group(1), "").split(",")
    if op != "convolution":
        m = _LHS_CONTRACT.search(rest)
        k = 1
        for i in ((m.group(1) or m.group(2) or "").replace('"', "").split(",") if m else ()):
            if i and int(i) < len(lhs) and lhs[int(i)]:
                k *= int(lhs[int(i)])
        return 2 * _product(out.group(2)) * k
    rhs = dims.get(om.group(2) or "", "").split(",")
    m = _DIM_LABELS.search(rest)
    o = m.group(1).find("o") if m else -1
    per_out = _product(",".join(d for i, d in enumerate(rhs) if i != o)) if o >= 0 else 1
    return 2 * _product(out.group(2)) * per_out


def scan_work(path: str | os.PathLike) -> ModuleWork:
    """Count kernels, dot/convolution FLOPs and source-located instructions of a module file
    in one pass over its text (no parse: choosing among many modules must stay cheap)."""
    work = ModuleWork()
    fused: set[str] = set()
    per_comp: dict[str, int] = {}
    comp = ""
    dims: dict[str, str] = {}
    places: set[str] = set()  # up to two distinct source locations
    try:
        f = open(path, encoding="utf-8", errors="replace")
    except OSError:
        return work
    with f:
        for line in f:
            if not line.startswith((" ", "\t")):
                m = _COMP_HEAD.match(line)
                if m and line.rstrip().endswith("{"):
                    comp = m.group(2)
                    dims = {}
                continue
            m = _INSTR.match(line)
            if not m:
                continue
            name, rest = m.groups()
            sm = _SHAPE.match(rest)
            if sm:
                dims[name] = sm.group(2)
            om = _OPCODE.search(rest)
            if not om:
                continue
            op = om.group(1)
            if _USER_CODE.search(rest):
                work.user_ops += 1
                if len(places) < 2:
                    lm = _LOCATION.search(rest)
                    if lm:
                        places.add(lm.group(0))
            if op in ("dot", "convolution") or (op == "custom-call" and _LIBRARY_GEMM.search(rest)):
                work.dots += 1
                work.flops += _flops(rest, op, dims)
            elif op == "fusion":
                cm = _FUSION_CALLS.search(rest)
                if cm:
                    fused.add(cm.group(1))
            if "to_apply=" in rest:
                fused.update(_APPLIES.findall(rest))
            if op not in _FREE:
                per_comp[comp] = per_comp.get(comp, 0) + 1
    work.kernels = sum(n for c, n in per_comp.items() if c not in fused)
    work.locations = len(places)
    return work


def _rank_key(p: DumpPair) -> tuple:
    w = p.work or ModuleWork()
    # a module all of whose instructions come from one source location is one call the
    # program made eagerly (jnp.unstack(x) outside jit compiles to its own jit_unstack);
    # the step the user wrote spans several lines, so it ranks first at equal standing
    one_call = w.locations <= 1
    return (p.is_jax_helper, w.user_ops == 0, one_call, -w.flops, -w.kernels, -p.size,
            p.module_id)


def find_dumps(directory: str | os.PathLike, rank: bool = True) -> list[DumpPair]:
    """The modules of a directory written with ``--xla_dump_to``, the one the user most
    likely means first (see the module docstring); ``rank=False``: largest first, unread.

    Pass-by-pass files and reports (buffer assignment, memory usage) are not modules.
    """
    d = Path(directory)
    pairs: dict[tuple[str, str, str], DumpPair] = {}
    try:
        listing = list(d.iterdir())
    except OSError as e:
        raise InputError(f"{d}: cannot list the directory: {e.strerror}") from None
    for p in listing:
        m = _DUMP_NAME.match(p.name)
        if not m:
            continue
        mid, name, kind = m.groups()
        if _PASS_STEP.search(f".{name}.{kind}.") or "before_" in kind[:-len("after_optimizations")] \
                or not p.is_file():
            continue
        prefix = p.name[:p.name.index(mid)]  # keyed by program too: ids repeat across programs
        pair = pairs.setdefault((prefix, mid, name), DumpPair(mid, name, None, None))
        if kind == "before_optimizations":
            pair.before = p
        else:
            pair.after = p
    out = list(pairs.values())
    if rank and len(out) > 1:
        for pr in out:
            pr.work = scan_work(pr.after or pr.before)
        return sorted(out, key=_rank_key)
    return sorted(out, key=lambda pr: (-pr.size, pr.module_id))


def _matches(pair: DumpPair, module: str) -> bool:
    return module in (pair.name, pair.module_id) or module in pair.name


def resolve_dump_pair(directory: str | os.PathLike, module: str | None = None) -> DumpPair:
    """The module to diff in a dump directory: the one named, or the one the user most
    likely means among the complete before/after pairs (see :func:`choose_module`)."""
    return choose_module(directory, module)[0]


def choose_module(directory: str | os.PathLike, module: str | None = None,
                  need_before: bool = True) -> tuple[DumpPair, list[DumpPair]]:
    """(the chosen module, the other candidates in rank order).

    ``module`` names one (exact name, module id, or a part of the name; an exact name wins).
    ``need_before=False`` also accepts modules with only an optimized file.
    """
    d = Path(directory)
    pairs = [p for p in find_dumps(d) if p.after and (p.before or not need_before)]
    if module:
        exact = [p for p in pairs if module in (p.name, p.module_id)]
        pairs = exact or [p for p in pairs if _matches(p, module)]
    if not pairs:
        what = f" for module '{module}'" if module else ""
        raise InputError(
            f"{d}: no HLO dumps found{what} (expected files such as "
            "module_0001.jit_step.before_optimizations.txt and "
            "module_0001.jit_step.cpu_after_optimizations.txt, written with "
            f"XLA_FLAGS='--xla_dump_to={d} --xla_dump_hlo_as_text')")
    if module is None:
        _check_unambiguous(d, find_dumps(d, rank=False))
    return pairs[0], pairs[1:]


def others_line(others: list[DumpPair], width: int = 200) -> str:
    """The other modules in one line, repeated names counted: ``jit__normal x4, jit_multiply x3``."""
    counts: dict[str, int] = {}
    for p in others:
        counts[p.name] = counts.get(p.name, 0) + 1
    items = [n if k == 1 else f"{n} x{k}" for n, k in counts.items()]
    out = ""
    for i, it in enumerate(items):
        nxt = (", " if out else "") + it
        if out and len(out) + len(nxt) > width:
            return out + f", +{len(items) - i} more"
        out += nxt
    return out


def choice_message(chosen: DumpPair, others: list[DumpPair]) -> str:
    """One line saying which module was picked and what else the directory holds."""
    msg = f"module {chosen.describe()}"
    if others:
        msg += f"; others: {others_line(others)} (pick one with --module NAME)"
    return msg


def _check_unambiguous(d: Path, pairs: list[DumpPair]) -> None:
    """Two programs dumped into one directory both number their modules from 0: a module id
    that names two different modules makes 'the largest module' a guess. Refuse it."""
    names: dict[str, set[str]] = {}
    for p in pairs:
        names.setdefault(p.module_id, set()).add(p.name)
    clash = sorted((mid, sorted(ns)) for mid, ns in names.items() if len(ns) > 1)
    if clash:
        mid, ns = clash[0]
        raise InputError(f"{d}: ambiguous dump directory: {mid} names {len(ns)} modules "
                         f"({', '.join(ns[:3])}); more than one program dumped here. "
                         "Choose one with --module NAME, or pass the two files")
