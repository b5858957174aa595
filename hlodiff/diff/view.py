"""Flat node views of a module, the one data structure every matcher reads.

A *node* is one instruction instance with its logical operands resolved:

* before view (``before_view``): ``call`` bodies are instantiated at each call site, the way
  XLA's call inliner will do it (parameters alias the call's operands, the call aliases the
  body's root, op_names get the call's prefix);
* after view (``after_view``): fusion bodies are instantiated under their fusion instruction
  (``home`` = the top-level instruction a node now lives in); fused parameters alias the
  fusion's operands, the fusion aliases its fused root; bitcasts and copies are see-through.

In both, ``get-tuple-element(tuple(...))`` resolves to the tuple's element. Aliased nodes
are *transparent*: they exist (they get a fate) but are skipped by the structure.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..hlo.frames import user_location
from ..hlo.model import Computation, Instruction, Module

# Opcodes whose to_apply/called computations belong to the instruction (not expanded).
_CONTROL = {"while", "conditional"}
SEE_THROUGH_AFTER = {"bitcast", "copy"}
_ATTR_KEYS = ("direction", "slice", "lhs_contracting_dims", "rhs_contracting_dims",
              "lhs_batch_dims", "rhs_batch_dims", "iota_dimension", "comparison_type",
              "padding", "window", "dim_labels", "feature_group_count", "fft_type",
              "fft_length", "dynamic_slice_sizes", "distribution", "exponent_bits",
              "mantissa_bits")


# XLA's CSE treats these as identical with their operands swapped (jax 0.10.2
# remat_dots_no_batch, dumps 0022 -> 0023: ``mul.265 = multiply(%broadcast_in_dim.33,
# %add.46)`` merged into ``mul.264 = multiply(%add.46, %broadcast_in_dim.33)``)
CSE_COMMUTATIVE = {"add", "multiply", "maximum", "minimum", "and", "or", "xor"}
_NARROW_RE = re.compile(r"\b(?:bf16|f16)\[")
_MDIMS: dict[str, str] = {}


def _match_dims(dims: str) -> str:
    d = _MDIMS.get(dims)
    if d is None:
        d = _MDIMS[dims] = _NARROW_RE.sub("f32[", dims) if "16[" in dims else dims
    return d


class Node:
    __slots__ = ("idx", "inst", "comp", "opcode", "dims", "op_name", "src", "operands", "vfp",
                 "raw_operands", "users", "home", "fusion", "alias", "site", "fp", "sig",
                 "top", "ctx", "mdims")

    def __init__(self, idx, inst, comp, op_name, src, home, fusion, site, dims):
        self.idx = idx
        self.inst: Instruction = inst
        self.comp: str = comp
        self.opcode: str = inst.opcode
        self.dims: str = dims
        # the shape as the matchers compare it: float normalization computes narrow float
        # types (bf16, f16) in f32 on backends without native support, changing the
        # instruction's type in place; identity does not depend on it
        self.mdims: str = _match_dims(dims)
        self.op_name: str | None = op_name
        self.src = src
        self.operands: list[int] = []
        self.raw_operands: list[int] = []
        self.users: list[int] = []
        self.home: int = home
        self.fusion: int = fusion
        self.alias: int = -1
        self.site: str | None = site  # call site (before) that instantiated this node
        self.fp: int = 0
        # the fingerprint as a claim of equal values: a literal the dump elided (``{...}``,
        # XLA prints no large constant) is equal to no other constant (fp: to any of its
        # shape, which still lets the modules' copies of one constant pair)
        self.vfp: int = 0
        self.sig = None
        self.top: bool = fusion < 0
        self.ctx: str = comp  # the computation it lives in once calls are inlined

    @property
    def name(self) -> str:
        return self.inst.name

    def __repr__(self) -> str:
        return f"<Node {self.idx} {self.comp}/{self.inst.name} {self.opcode}>"


def local_attrs(n: Node) -> tuple:
    """What defines an instruction's value apart from its operands and shape: literal,
    dimensions, tuple index, custom-call target and the value attributes (slice bounds,
    contracting dimensions, padding ...), from the node's signature."""
    return n.sig[2:7] if n.sig else ()


class View:
    """All nodes of one module plus the lookups the matchers need."""

    def __init__(self, module: Module, kind: str):
        self.module = module
        self.kind = kind  # "before" or "after"
        self.nodes: list[Node] = []
        self.controls: list[int] = []  # while/conditional nodes
        # (control node, role, computation, root node, parameter nodes by number)
        self.bodies: list[tuple[int, str, str, int, list[int]]] = []
        self._src_cache: dict[int, tuple | None] = {}
        self._loc_cache: dict[int, str | None] = {}
        self._key_fid: dict[tuple, int] = {}  # a source key -> a frame id that made it
        self._dims_cache: dict[str, str] = {}
        self._shift: int | None = None  # StackTables.parent_shift, computed on first use
        self.entry_params: dict[int, int] = {}
        self.entry_root: int = -1
        self.top_names: dict[tuple[str, str], int] = {}  # (comp, name) -> node, top-level
        # control node inside an inlined call -> (op_name prefix, call-site frames): the
        # call inliner gives the bodies it calls the call's op_name and frames too (cpu2)
        self.ctl_prefix: dict[int, tuple] = {}
        # bodies instantiated once for several inlined copies of their control (and the
        # bodies nested in them): which copy a node's partner is in is not known (cpu6)
        self.shared: set[str] = set()

    # ---- helpers -------------------------------------------------------------------
    def dims_of(self, inst: Instruction) -> str:
        t = inst.shape.text
        d = self._dims_cache.get(t)
        if d is None:
            d = self._dims_cache[t] = inst.shape.dims_text
        return d

    def src_of(self, inst: Instruction):
        md = inst.metadata
        if md is None:
            return None
        fid = md.stack_frame_id
        if fid:
            s = self._src_cache.get(fid, 0)
            if s == 0:
                s = self._src_cache[fid] = self._frame_key(fid)
                if s is not None:
                    self._key_fid.setdefault(s, fid)
            if s is not None:
                return s
        if md.source_file:
            return ((md.source_file, md.source_line, None),)
        return None

    def _frame_key(self, fid: int):
        t = self.module.tables
        if self._shift is None:
            self._shift = t.parent_shift() if t.stack_frames else 0
        out, seen = [], set()
        while fid and fid not in seen and fid in t.stack_frames:
            seen.add(fid)
            fr = t.stack_frames[fid]
            loc = t.file_locations.get(fr.get("file_location_id", -1), {})
            out.append((t.file_names.get(loc.get("file_name_id", -1)), loc.get("line"),
                        loc.get("column")))
            fid = fr.get("parent_frame_id", 0) - self._shift  # (jaxlib 0.10 prints it +1)
            if len(out) >= 3:
                break
        return tuple(out) or None

    def resolve(self, i: int) -> int:
        nodes = self.nodes
        n = nodes[i]
        hops = 0
        while n.alias >= 0 and hops < 10000:
            n = nodes[n.alias]
            hops += 1
        return n.idx

    def location(self, n: Node) -> str | None:
        """``file:line`` of the user's own frame (not a library's), when known."""
        md = n.inst.metadata
        fid = md.stack_frame_id if md is not None else None
        if not fid and n.src is not None:  # a called computation's instruction: its call site's
            fid = self._key_fid.get(n.src)
        if fid:
            loc = self._loc_cache.get(fid, 0)
            if loc == 0:
                loc = self._loc_cache[fid] = user_location(self.module.tables, fid)
            if loc:
                return loc
        s = n.src
        if not s:
            return None
        f, line, _ = s[0]
        return f"{f}:{line}" if line is not None else f


_IDENTITY_OPS = {"broadcast", "reshape", "convert", "transpose", "copy", "slice"}


def _is_identity(n: Node, src: Node) -> bool:
    """A before instruction that returns its operand unchanged (same type and dims)."""
    if n.dims != src.dims or n.inst.shape.is_tuple:
        return False
    op = n.opcode
    if op == "transpose":
        d = n.inst.dimensions
        return d is None or list(d) == list(range(len(d)))
    if op == "slice":
        return True  # same dims: the whole operand, stride 1
    return True


def _reshape_like(nodes: list[Node], n: Node) -> bool:
    """A before instruction that only reshapes its operand: a reshape, a reduce
    over dimensions of size 1, a broadcast that only adds dimensions of size 1. Algsimp
    turns each into a reshape and merges chains of reshapes into one."""
    op = n.opcode
    if op == "reshape":
        return True
    if op not in ("reduce", "broadcast") or n.inst.shape.is_tuple or not n.raw_operands:
        return False
    if op == "reduce" and len(n.raw_operands) != 2:
        return False
    if op == "broadcast":
        d = n.inst.dimensions
        if d is None or list(d) != sorted(d):
            return False  # a broadcast that permutes dimensions is a transpose
    o = nodes[n.raw_operands[0]]
    return not o.inst.shape.is_tuple and \
        o.inst.shape.num_elements == n.inst.shape.num_elements


def _reshape_source(view: "View", n: Node) -> int:
    """The value a chain of reshape-like before instructions ending in n started from,
    when it has n's exact type and dims (the chain is a no-op algsimp deletes), else -1."""
    nodes = view.nodes
    x = nodes[view.resolve(n.raw_operands[0])]
    for _ in range(8):
        if not _reshape_like(nodes, x) or not x.raw_operands:
            return -1
        x = nodes[view.resolve(x.raw_operands[0])]
        if x.dims == n.dims:
            return x.idx
    return -1


def _prefix(call_op: str | None, inner: str | None) -> str | None:
    if not call_op:
        return inner
    if not inner:
        return inner
    if inner.startswith(call_op):
        return inner
    return f"{call_op}/{inner}"


def _instantiate(view: View, comp: Computation, *, prefix: str | None, site: str | None,
                 param_alias: list[int] | None, home: int, fusion: int,
                 expand_calls: bool, depth: int = 0, site_src=None,
                 ctx: str | None = None) -> dict[str, int]:
    """Create nodes for one instance of ``comp``; returns name -> node index."""
    module = view.module
    nodes = view.nodes
    local: dict[str, int] = {}
    pending: list[tuple[Node, Instruction]] = []
    is_before = view.kind == "before"
    for inst in comp.instructions:
        op_name = inst.metadata.op_name if inst.metadata else None
        src = view.src_of(inst)
        if prefix is not None:
            # the call inliner prefixes op_names with the call's and keeps its frame
            op_name = _prefix(prefix, op_name) if op_name else prefix
            if src is None:
                src = site_src
            elif site_src is not None and inst.metadata.stack_frame_id and len(src) < 3:
                # newer call inliners give the copy a frame whose callers continue into
                # the call site's stack: the callee's frames, then the call's
                src = (src + site_src)[:3]
        n = Node(len(nodes), inst, comp.name, op_name, src,
                 home if home >= 0 else len(nodes), fusion, site, view.dims_of(inst))
        if ctx is not None:
            n.ctx = ctx
        nodes.append(n)
        local[inst.name] = n.idx
        pending.append((n, inst))
        if param_alias is not None and inst.opcode == "parameter":
            k = inst.parameter_number or 0
            if k < len(param_alias):
                n.alias = param_alias[k]
    for n, inst in pending:
        raw = [local[o] for o in inst.operands if o in local]
        n.raw_operands = raw
        op = inst.opcode
        if op == "call" and inst.calls and depth < 50 and (
                expand_calls or (not is_before and fusion < 0)):
            # before: the call inliner's work, done ahead. After: calls that survive
            # optimization (XLA:CPU's small-while-loop hoisting wraps a while in a call)
            # are transparent wrappers; their bodies hold top-level code.
            callee = module.by_name.get(inst.calls[0])
            if callee is not None:
                sub = _instantiate(view, callee, prefix=n.op_name if expand_calls else None,
                                   site=inst.name if expand_calls else None,
                                   param_alias=raw, home=home, fusion=fusion,
                                   expand_calls=expand_calls, depth=depth + 1,
                                   site_src=n.src, ctx=n.ctx)
                n.alias = sub[callee.root]
        elif op == "fusion" and not is_before and inst.calls:
            callee = module.by_name.get(inst.calls[0])
            if callee is not None:
                sub = _instantiate(view, callee, prefix=None, site=None, param_alias=raw,
                                   home=n.home, fusion=fusion if fusion >= 0 else n.idx,
                                   expand_calls=False, depth=depth + 1)
                n.alias = sub[callee.root]
        elif op in SEE_THROUGH_AFTER and not is_before and raw:
            n.alias = raw[0]
        elif is_before and raw and op in _IDENTITY_OPS and _is_identity(n, nodes[raw[0]]):
            # algsimp deletes no-op reshapes/broadcasts/converts/transposes first thing
            n.alias = raw[0]
        elif is_before and raw and _reshape_like(nodes, n) and \
                (src := _reshape_source(view, n)) >= 0:
            # reshape(reshape(x)) with x's shape, reduce(reshape(x)) over the unit
            # dimensions the reshape added, ...: algsimp leaves x
            n.alias = src
        elif op in _CONTROL:
            view.controls.append(n.idx)
            if prefix is not None:
                view.ctl_prefix[n.idx] = (prefix, site_src)
    if fusion < 0 and home < 0:
        for n, inst in pending:
            view.top_names[(comp.name, inst.name)] = n.idx
    return local


def _instances(view: View, idx: int) -> int:
    """How many control nodes instantiate the instruction of control node ``idx``."""
    n = view.nodes[idx]
    return sum(1 for c in view.controls
               if view.nodes[c].inst is n.inst and view.nodes[c].comp == n.comp)


def _shared_prefix(view: View, idx: int) -> tuple:
    """The op_name prefix and frames the copies of control node ``idx`` share. The call
    inliner clones a control's bodies per inlined copy and gives each copy its call's
    prefix; the one instance here stands for all of them. Where every copy gets the same
    prefix (two ``jit(_gamma)`` calls of jax.random.beta, fresh 6 mixup_permutation: both
    bodies' literals carry ``.../jit(_gamma)/vmap()/while/body/...`` after optimization),
    it is every copy's; otherwise none (cpu6)."""
    n = view.nodes[idx]
    got = {view.ctl_prefix.get(c, (None, None)) for c in view.controls
           if view.nodes[c].inst is n.inst and view.nodes[c].comp == n.comp}
    pres = {p for p, _ in got}
    if len(pres) != 1:
        return None, None
    srcs = {s for _, s in got}
    return pres.pop(), (srcs.pop() if len(srcs) == 1 else None)


ELIDED = "{...}"  # a constant's literal as a dump prints it when large


def _finish(view: View) -> None:
    nodes = view.nodes
    resolve = view.resolve
    # get-tuple-element(tuple(...)) -> the element
    changed = True
    rounds = 0
    while changed and rounds < 4:
        changed = False
        rounds += 1
        for n in nodes:
            if n.opcode == "get-tuple-element" and n.alias < 0 and n.raw_operands:
                t = nodes[resolve(n.raw_operands[0])]
                k = n.inst.index or 0
                if t.opcode == "tuple" and k < len(t.raw_operands):
                    n.alias = t.raw_operands[k]
                    changed = True
    for n in nodes:
        if n.alias >= 0:
            continue
        ops = [resolve(o) for o in n.raw_operands]
        n.operands = ops
        for o in ops:
            nodes[o].users.append(n.idx)
    # signatures and exact-subgraph fingerprints (operands come first in instance order,
    # except across call/fusion aliases; fall back to an explicit stack)
    for n in nodes:
        if n.alias >= 0:
            continue
        inst = n.inst
        attrs = inst.attrs
        extra = tuple(attrs.get(k) for k in _ATTR_KEYS if k in attrs)
        n.sig = (n.opcode, n.dims, inst.literal, inst.dimensions, inst.index,
                 inst.custom_call_target, extra,
                 inst.parameter_number if n.opcode == "parameter" else None,
                 n.comp if n.opcode == "parameter" else None)
    elided = False
    for i in operands_first(nodes):
        m = nodes[i]
        m.fp = m.vfp = _fingerprint(m, [nodes[o].fp for o in m.operands])
        elided = elided or (m.opcode == "constant" and m.inst.literal == ELIDED)
    if elided:  # (rare: only then a second pass)
        for i in operands_first(nodes):
            m = nodes[i]
            if m.opcode == "constant" and m.inst.literal == ELIDED:
                m.vfp = hash((m.fp, m.comp, m.name))
            elif m.operands:
                m.vfp = _fingerprint(m, [nodes[o].vfp for o in m.operands])


def _fingerprint(m: Node, ofp: list[int]) -> int:
    """A node's exact-subgraph fingerprint from its operands' (in order, or sorted where
    XLA's CSE merges a*b and b*a: cpu4)."""
    if m.opcode in CSE_COMMUTATIVE:
        ofp.sort()
    return hash((m.sig, tuple(ofp)))


def operands_first(nodes: list[Node]) -> Iterator[int]:
    """Every node reachable from a live node (``alias < 0``), each once, after all its
    operands: iterative, for deep graphs. Subgraph fingerprints are built in this order.

    A node is marked when it is expanded, not when it is pushed: a node pushed by one user
    and not yet expanded may be an operand of a node pushed later above it (a diamond), and
    that later node must wait for it (marking on push let it go first, with its operand's
    fingerprint still unset: two identical instructions then hashed apart)."""
    state = bytearray(len(nodes))  # 0 new, 1 expanded (operands pushed), 2 done
    for n in nodes:
        if n.alias >= 0 or state[n.idx] == 2:
            continue
        stack = [n.idx]
        while stack:
            i = stack[-1]
            s = state[i]
            if s == 2:
                stack.pop()
                continue
            if s == 0:
                state[i] = 1
                for o in nodes[i].operands:
                    if state[o] == 0:
                        stack.append(o)
                continue
            state[i] = 2
            stack.pop()
            yield i


def branch_args(ctl: Node, comp: str) -> list[int] | None:
    """The operand node a conditional's branch ``comp`` reads, as the parameter aliases of
    an inlined branch; None if not known."""
    br = ctl.inst.branches
    k = br.index(comp) + 1 if comp in br else -1
    return [ctl.raw_operands[k]] if 0 < k < len(ctl.raw_operands) else None


def before_view(module: Module, inlined: frozenset[str] = frozenset()) -> View:
    """Before side: entry plus control-flow bodies, calls inlined at each call site.
    ``inlined``: conditionals (by instruction name) whose branches the optimizer inlined
    into their caller (inlined_branches.py); their parameters alias the operands."""
    view = View(module, "before")
    _build(view, expand_calls=True, inlined=inlined)
    return view


def after_view(module: Module) -> View:
    """After side (also both sides in regression mode): fusions expanded under their home."""
    view = View(module, "after")
    _build(view, expand_calls=False)
    return view


def _build(view: View, expand_calls: bool, inlined: frozenset[str] = frozenset()) -> None:
    module = view.module
    entry = module.entry_computation
    local = _instantiate(view, entry, prefix=None, site=None, param_alias=None, home=-1,
                         fusion=-1, expand_calls=expand_calls)
    for inst in entry.instructions:
        if inst.opcode == "parameter":
            view.entry_params[inst.parameter_number or 0] = local[inst.name]
    view.entry_root = local[entry.root]
    # control-flow bodies (while/conditional), breadth first, one instance per computation
    seen = {entry.name}
    i = 0
    while i < len(view.controls):
        idx = view.controls[i]
        i += 1
        for role, comps in view.nodes[idx].inst.called.items():
            for cname in comps:
                comp = module.by_name.get(cname)
                if comp is None or cname in seen:
                    continue
                seen.add(cname)
                pre, psrc = view.ctl_prefix.get(idx, (None, None))
                if pre is not None and _instances(view, idx) > 1:
                    pre, psrc = _shared_prefix(view, idx)  # cpu6
                    view.shared.add(cname)
                elif view.nodes[idx].ctx in view.shared:
                    view.shared.add(cname)
                ctl = view.nodes[idx]
                args = branch_args(ctl, cname) if ctl.inst.name in inlined else None
                sub = _instantiate(view, comp, prefix=pre, site=None, param_alias=args,
                                   home=-1, fusion=-1, expand_calls=expand_calls,
                                   site_src=psrc)
                view.bodies.append((idx, role, cname, sub[comp.root],
                                    [sub[p.name] for p in comp.parameters]))
    _finish(view)
