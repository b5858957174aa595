"""Facts about the values of one matched program that every fate decision needs.

Which nodes compute a compile-time constant (what constant folding can evaluate), which
reach an output (what dead-code elimination keeps), which identical subgraphs CSE merges and
which copy it keeps, and whether the compiler inlines calls before DCE. Split from fates.py
so that each stays small; the opcode sets here are XLA's pass rules written as data.
"""

from __future__ import annotations

from ..analysis.backend import compiled_for_gpu
from ..hlo.model import sums_nothing as model_sums_nothing
from . import gpunames
from .called_fp import called_fingerprints
from .constvals import NO_VALUE, constant_valued  # noqa: F401 (re-exported)
from .match import Matching
from .view import Node, View

SIDE_EFFECTS = {"send", "send-done", "outfeed", "infeed", "recv", "recv-done",
                 "custom-call", "all-reduce", "after-all"}
# constant folding leaves these alone (they would only make big literals)
NOT_FOLDED = {"parameter", "constant", "iota", "broadcast", "reshape", "tuple"}
# control flow and tuple plumbing: loop passes and copy insertion rebuild these freely
PLUMBING = {"tuple", "get-tuple-element", "while", "conditional", "call", "parameter",
             "constant", "copy", "bitcast", "custom-call"}
ELEMENTWISE = {"negate", "abs", "exponential", "log", "sqrt", "rsqrt", "tanh", "sine",
                "cosine", "convert", "not", "sign", "floor", "ceil", "logistic", "add",
                "subtract", "multiply", "divide", "maximum", "minimum", "select", "compare",
                "and", "or", "power"}
# divisors algsimp replaces by a reciprocal when their divide becomes a multiply
RECIPROCAL_OF = {"broadcast", "power", "exponential"}
LAYOUT_LIKE = {"reshape", "transpose", "copy", "bitcast", "bitcast-convert"}
# narrow floating types a backend may not compute in: float normalization upcasts the
# instruction itself (its output type changes in place; converts are added around it)
NARROW_FLOATS = ("bf16[", "f16[", "f8e4m3fn[", "f8e5m2[")


# after opcodes that carry an existing value on (not a new computation)
NOT_NEW_VALUE = LAYOUT_LIKE | NOT_FOLDED | PLUMBING | {"fusion", "convert"}


def upcast_only(bd: str, ad: str) -> bool:
    """b's shape and a's differ only in a narrow float type that became f32."""
    if not ad.startswith("f32["):
        return False
    for t in NARROW_FLOATS:
        if bd.startswith(t):
            return bd[len(t) - 1:] == ad[3:]
    return False


def sums_nothing(view: View, n: Node) -> bool:
    """A reduce over dimensions of size 1 only (``hlo.model.sums_nothing``): a reshape of
    its operand. JAX's bias gradients and conv1d-over-channels gates hold such reduces."""
    return bool(n.operands) and \
        model_sums_nothing(n.inst, view.nodes[n.operands[0]].inst.shape)


def inlined_sum(view: View, n: Node) -> bool:
    """A reduce that sums something, of an inlined callee: the inliner rebuilds it on the
    call's inputs and it lives on, reading its initial value (a literal that CSE then
    merges: fresh 16 apot's ``_var_28`` ``constant.1160``, merged at CSE under JAX 0.4.30).
    A select or an arithmetic op there may be simplified away instead: not this."""
    return n.opcode == "reduce" and not sums_nothing(view, n)


def live_nodes(view: View) -> bytearray:
    """1 where something a node computes reaches an output (entry root, side effects)."""
    nodes = view.nodes
    live = bytearray(len(nodes))
    stack = [view.resolve(view.entry_root)]
    for n in nodes:
        if n.alias < 0 and n.opcode in SIDE_EFFECTS:
            stack.append(n.idx)
    bodies: dict[int, list[int]] = {}
    for ctl, _role, _c, root, params in view.bodies:
        bodies.setdefault(ctl, []).append(view.resolve(root))
    while stack:
        i = stack.pop()
        if live[i]:
            continue
        live[i] = 1
        n = nodes[i]
        stack.extend(o for o in n.operands if not live[o])
        for r in bodies.get(i, ()):
            stack.append(r)
    for n in nodes:
        if n.alias >= 0:
            live[n.idx] = live[view.resolve(n.idx)]
    for n in nodes:
        # a no-op chain of reshapes (aliased to where it started): algsimp takes the links
        # inside it away with it, they were not dead
        if n.alias >= 0 and live[n.idx] and n.raw_operands and n.opcode not in ("call", "parameter"):
            x, end = n.raw_operands[0], view.resolve(n.idx)
            for _ in range(8):
                if x == end or live[x]:
                    break
                live[x] = 1
                xn = nodes[x]
                if not xn.raw_operands:
                    break
                x = xn.raw_operands[0]
    return live


def cse_survivors(m: Matching, exclude: set[int] | frozenset = frozenset(),
                  post_order: dict[int, int] | None = None) -> dict[int, int]:
    """Before node -> the node CSE keeps in its place (same exact-subgraph fingerprint in the
    same computation once calls are inlined). A copy still there under its own name
    survived; otherwise the first in instruction order (non-inlined before inlined).
    ``post_order`` (XLA's GPU pipeline, which inlines calls before CSE): CSE walks
    non-constants in post order, where an inlined callee's code stands at its call site
    (node -> its rank); constants it combines in instruction-list order, where the inlined
    copies come last."""
    B = m.before
    # a partitioned program went through the Shardy round trip (HLO -> MLIR -> HLO), whose
    # import deduplicates identical constants keeping the first in text order and renames
    # everything in text order: XLA's CSE later keeps that one too. It runs before any
    # simplification, so no constant is spared by what algsimp does later.
    v = str(m.after.module.attributes.get("num_partitions", "1"))
    sharded = v.isdigit() and int(v) > 1
    first = False
    if sharded:
        from .shardmatch import cse_before_simplification
        first = cse_before_simplification(m.after.module)
    groups: dict[tuple, list[int]] = {}
    cfp = called_fingerprints(B)  # loops3: loops with different bodies are not identical
    for n in B.nodes:
        if n.alias < 0 and n.opcode not in NO_CSE and (
                n.idx not in exclude or (first and n.opcode == "constant")):
            groups.setdefault((n.vfp, n.ctx, cfp[n.idx]), []).append(n.idx)
    out = {}
    stems: set[str] | None = None
    if sharded:
        from .shardmatch import inlined_text_order
        order = inlined_text_order(B.module)
    for g in groups.values():
        if len(g) < 2:
            continue
        nodes = B.nodes
        named = [i for i in g if m.how.get(i) == "name"]
        if named:  # still there under its own name: that one survived
            for i in g:
                if i != named[0]:
                    out[i] = named[0]
            continue
        # CSE walks the computation in instruction order and keeps the first of each
        # identical set (whichever copy the matcher happened to pair)
        if sharded:  # shard helper: the Shardy round trip merges first, in text order
            # (after inlining); the constant it keeps is one without metadata (the
            # inliner gives an inlined constant its call's op_name)
            keep = min(g, key=lambda i: (nodes[i].opcode == "constant" and
                                         nodes[i].op_name is not None,
                                         order.get((nodes[i].site, nodes[i].comp,
                                                    nodes[i].name), len(order)), i))
        elif post_order is not None and nodes[g[0]].opcode != "constant":
            keep = min(g, key=lambda i: (post_order.get(i, len(nodes) + i), i))
        else:
            keep = min(g, key=lambda i: (nodes[i].site is not None, _creation(nodes[i]), i))
            if post_order is not None:  # gpu2: the GPU module keeps the survivor's name
                if stems is None:
                    stems = gpunames.constant_stems(m.after.nodes)
                named = gpunames.survivor_by_name(g, nodes, stems)
                if named is not None:
                    keep = named
        for i in g:
            if i != keep:
                out[i] = keep
    return out


def _creation(n: Node) -> int:
    """CSE walks a computation's instruction list (creation order) and keeps the first of
    identical constants; the name's numeric suffix follows creation order."""
    if n.opcode != "constant" or n.site is not None:
        return 0
    head, _, num = n.name.rpartition(".")
    return int(num) if head and num.isdigit() else 0


NO_CSE = {"parameter", "rng", "rng-bit-generator", "custom-call", "infeed", "recv", "send",
           "outfeed", "after-all", "while", "conditional", "call", "all-reduce"}


def call_result(nodes: list[Node], n: Node) -> bool:
    """A call, or a get-tuple-element of a call's result tuple."""
    if n.opcode == "call":
        return True
    return n.opcode == "get-tuple-element" and bool(n.raw_operands) and \
        nodes[n.raw_operands[0]].opcode == "call"


def inliner_before_dce(after) -> bool:
    """Whether the compiler inlined calls before any dead-code elimination ran. XLA's GPU
    pipeline and SPMD-partitioned programs inline calls first (pre-spmd-partitioner /
    spmd-partitioner pipelines); the call inliner copies only what a callee's root needs,
    so dead code in callees, and dead get-tuple-elements of calls, go with the inlining.
    The CPU pipeline of an unpartitioned program runs DCE first (sharding-removal)."""
    v = str(after.attributes.get("num_partitions", "1"))
    return (v.isdigit() and int(v) > 1) or compiled_for_gpu(after)


def untraced_by_inlining(nodes: list) -> bytearray:
    """1 for instructions of inlined callees that have no one-to-one counterpart after
    inlining: the callee is called from several sites (each gets its own copy), or the
    value flows in through a parameter bound to another inlined call's result or to a
    parameter of an enclosing inlined callee (nested inlining rebuilds it on the inner
    body). XLA's call inliner leaves such an instruction behind as ``inlined``."""
    sites: dict[str, int] = {}
    for n in nodes:
        if n.opcode == "call" and n.inst.calls:
            sites[n.inst.calls[0]] = sites.get(n.inst.calls[0], 0) + 1
    out = bytearray(len(nodes))
    for n in nodes:  # instance order: a call's operands before its body
        if n.site is None:
            continue
        if n.opcode == "parameter":
            if n.alias < 0:
                continue
            bound = nodes[n.alias]
            if sites.get(n.comp, 0) > 1 or call_result(nodes, bound) or out[bound.idx] \
                    or (bound.opcode == "parameter" and bound.site is not None):
                out[n.idx] = 1
            continue
        if any(out[o] or nodes[o].opcode == "call" for o in n.raw_operands):
            # reads a nested call's result: both are inlined in the same pass, and
            # the copy is rebuilt on the inlined callee's root
            out[n.idx] = 1
    return out


def parameter_dependents(nodes: list, comps) -> set[int]:
    """Nodes of the computations ``comps`` (by ``Node.ctx``) that read, directly or through
    others, a parameter of one of them (the parameters themselves left out): what a loop
    or conditional pass rebuilds when it gives the computation a new state tuple."""
    members = [n for n in nodes if n.ctx in comps]
    dep: set[int] = {n.idx for n in members if n.opcode == "parameter" and n.site is None}
    grew = True
    while grew:
        grew = False
        for n in members:
            if n.idx in dep:
                continue
            if n.opcode == "parameter":
                hit = n.alias >= 0 and n.alias in dep
            else:
                hit = any(o in dep for o in n.raw_operands) or (n.alias >= 0 and n.alias in dep)
            if hit:
                dep.add(n.idx)
                grew = True
    return {i for i in dep if nodes[i].opcode != "parameter"}
