"""The ``jax.checkpoint`` regions of an unoptimized module: what each saves and recomputes.

How JAX writes a region (read from real dumps, every policy and nesting): the backward pass
of a checkpointed function starts with an ``opt-barrier`` over a tuple of the values the
recomputation needs (the *residuals*: the function's inputs, and what the policy saves) and
of the cotangents flowing in. The recomputation reads the barrier's get-tuple-elements; its
instructions carry ``.../checkpoint/rematted_computation/...`` op_names. The barrier keeps
XLA from merging the recomputation with the identical forward instructions (CSE) and from
moving it ahead of the backward pass; once XLA removes it (``cse_barrier_expander``), both
become possible. A nested region's barrier sits inside the outer recomputation (its op_name
has one ``checkpoint/`` more); a region of a ``lax.scan`` body sits in the backward loop's
body (there the forward pass is another loop, and nothing can merge).

For each region this module finds: the barrier, the residuals (saved) and cotangent
operands, the recomputed instructions (forward from the barrier's elements along
``rematted_computation`` op_names, plus recomputed instructions that feed only them, such as
an iota of a mask), the region's own backward instructions, each recomputed instruction's
*forward twin* (the forward instruction computing the same value, found by hashing the
computation with the barrier made transparent: what CSE sees once the barrier is gone),
and names: the user's function and source lines, the name scope inside the checkpointed
function, the nesting depth, and the region's order in the forward pass (its layer index
when a Python loop made one region per layer).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..hlo.model import Computation, Instruction, Module

MARK = "rematted_computation"
# instructions that compute nothing worth counting as recomputed work
TRIVIAL = {"constant", "broadcast", "iota", "parameter", "tuple", "get-tuple-element",
           "reshape", "bitcast", "transpose", "copy", "convert", "slice"}


@dataclass(slots=True)
class Region:
    """One jax.checkpoint region (one opt-barrier and the recomputation reading it)."""

    barrier: str
    computation: str
    residuals: list[str] = field(default_factory=list)  # saved values (barrier operands)
    cotangents: list[str] = field(default_factory=list)  # operands only the backward reads
    recomputed: list[str] = field(default_factory=list)  # in instruction order
    backward: list[str] = field(default_factory=list)  # the region's own backward ops
    twins: dict[str, str] = field(default_factory=dict)  # recomputed -> forward twin
    # recomputed without a forward twin -> the identical instruction another region
    # recomputes (nested jax.checkpoint: the outer and the inner recomputation)
    recompute_twins: dict[str, str] = field(default_factory=dict)
    function: str | None = None  # the user's checkpointed function
    lines: str | None = None  # "file.py:12-30"
    scope: str | None = None  # name scope inside the checkpointed function, if any
    depth: int = 1  # 2 = a region inside another region's recomputation
    index: int = 0  # order in the forward pass among the regions of its computation
    count: int = 1  # regions in its computation
    in_loop: bool = False  # in a loop body: runs once per iteration
    parent: str | None = None  # the enclosing region's barrier (nested)
    call_site: str | None = None  # "file.py:40": where the checkpointed function is called

    @property
    def label(self) -> str:
        """How a user recognizes it: function, lines, layer, scope."""
        parts = [self.function or "jax.checkpoint"]
        if self.lines:
            parts.append(f"({self.lines})")
        if self.call_site:
            parts.append(f"called at {self.call_site}")
        if self.count > 1:
            parts.append(f"#{self.index + 1} of {self.count}")
        if self.scope:
            parts.append(f"scope {self.scope}")
        if self.depth > 1:
            parts.append(f"nested, depth {self.depth}")
        if self.in_loop:
            parts.append("in a loop body")
        return " ".join(parts)


def _is_marked(i: Instruction, prefix: str | None) -> bool:
    name = i.op_name or ""
    return MARK in name or bool(prefix and MARK in prefix)


def _op_prefixes(module: Module) -> dict[str, str]:
    """Callee computation -> the op_name of a call that calls it (called computations carry
    op_names relative to their call site, e.g. a scan body's closed_call)."""
    out: dict[str, str] = {}
    for c in module.computations:
        for i in c.instructions:
            if i.opcode == "call" and i.calls and i.op_name:
                out.setdefault(i.calls[0], i.op_name)
    return out


def _loop_bodies(module: Module) -> set[str]:
    """Computations that run inside a while loop (bodies and what they call)."""
    inside: set[str] = set()
    stack = []
    for c in module.computations:
        for i in c.instructions:
            if i.opcode == "while":
                stack.extend(i.calls)
    calls = {c.name: [x for i in c.instructions for x in i.calls] for c in module.computations}
    while stack:
        n = stack.pop()
        if n in inside:
            continue
        inside.add(n)
        stack.extend(calls.get(n, ()))
    return inside


def _through_barrier(by: dict, name: str) -> str:
    """get-tuple-element(opt-barrier(tuple(..., x, ...))) -> x, repeatedly."""
    for _ in range(16):
        i = by.get(name)
        if i is None or i.opcode != "get-tuple-element" or not i.operands:
            return name
        b = by.get(i.operands[0])
        if b is None or b.opcode != "opt-barrier" or not b.operands:
            return name
        t = by.get(b.operands[0])
        if t is None or t.opcode != "tuple" or (i.index or 0) >= len(t.operands):
            return name
        name = t.operands[i.index or 0]
    return name


def _is_cotangent(by: dict, name: str) -> bool:
    """A barrier operand the backward pass computed (a cotangent flowing in), not a value
    of the forward pass or of a recomputation that the region keeps (a residual)."""
    i = by.get(_through_barrier(by, name))
    if i is None or i.opcode in ("parameter", "constant"):
        return False
    op = i.op_name or ""
    return "transpose(" in op and MARK not in op


def _users(comp: Computation) -> dict[str, list[Instruction]]:
    users: dict[str, list[Instruction]] = {}
    for i in comp.instructions:
        for o in i.operands:
            users.setdefault(o, []).append(i)
    return users


def _callee_hash(module: Module, name: str, memo: dict[str, int]) -> int:
    """A called computation by content (CSE compares reducers and inlined calls by what they
    compute, not by their names)."""
    if name in memo:
        return memo[name]
    memo[name] = hash(name)
    c = module.by_name.get(name)
    if c is None:
        return memo[name]
    pos = {i.name: k for k, i in enumerate(c.instructions)}
    memo[name] = hash(tuple((i.opcode, str(i.shape.dims), i.shape.element_type, i.literal,
                             i.parameter_number, tuple(pos.get(o, -1) for o in i.operands),
                             tuple(_callee_hash(module, x, memo) for x in i.calls))
                            for i in c.instructions))
    return memo[name]


def _fingerprints(module: Module, comp: Computation,
                  params: list[int] | None = None, depth: int = 0) -> dict[str, int]:
    """Exact-value hash of every instruction, as CSE sees it once cse_barrier_expander and
    the call inliner ran: opt-barriers and tuples are transparent
    (get-tuple-element(opt-barrier(tuple(a, b)), 1) is b), a call is its callee's root
    computed on the call's operands. Metadata and names are left out, as CSE leaves them."""
    fp: dict[str, int] = {}
    elems: dict[str, list[int]] = {}  # tuple-valued instructions: their elements' hashes
    memo: dict[str, int] = {}

    def of(o: str) -> int:
        return fp.get(o, hash(o))

    for i in comp.instructions:
        op = i.opcode
        if op == "parameter" and params is not None and (i.parameter_number or 0) < len(params):
            fp[i.name] = params[i.parameter_number or 0]
            continue
        if op == "tuple":
            elems[i.name] = [of(o) for o in i.operands]
            fp[i.name] = hash(("tuple", tuple(elems[i.name])))
            continue
        if op == "opt-barrier" and i.operands and i.operands[0] in elems:
            elems[i.name] = elems[i.operands[0]]
            fp[i.name] = fp[i.operands[0]]
            continue
        if op == "get-tuple-element" and i.operands and i.operands[0] in elems:
            e = elems[i.operands[0]]
            if (i.index or 0) < len(e):
                fp[i.name] = e[i.index or 0]
                continue
        if op == "call" and i.calls and depth < 8 and i.calls[0] in module.by_name:
            callee = module.by_name[i.calls[0]]
            sub = _fingerprints(module, callee, [of(o) for o in i.operands], depth + 1)
            root = callee.root_instruction
            fp[i.name] = sub.get(root.name, hash(i.name))
            if root.opcode == "tuple":
                elems[i.name] = [sub.get(o, hash(o)) for o in root.operands]
            continue
        if op in ("parameter", "rng", "rng-bit-generator", "custom-call", "infeed", "recv",
                  "while", "conditional", "opt-barrier", "call"):
            fp[i.name] = hash(("unique", comp.name, i.name))
            continue
        attrs = tuple(sorted((k, v) for k, v in i.attrs.items()
                             if k not in ("metadata", "backend_config", "frontend_attributes",
                                          "sharding", "to_apply", "calls")))
        fp[i.name] = hash((op, str(i.shape.dims), i.shape.element_type, i.literal,
                           i.dimensions, i.index, i.custom_call_target, attrs,
                           tuple(_callee_hash(module, c, memo) for c in i.calls),
                           tuple(of(o) for o in i.operands)))
    return fp


_WRAPS = ("jvp(", "transpose(", "vmap(", "remat(", "checkpoint(")


def _unwrap(part: str) -> str:
    """``transpose(jvp(layer_0))`` -> ``layer_0``; ``transpose(jvp(jvp()))`` -> ``""``."""
    for _ in range(8):
        w = next((w for w in _WRAPS if part.startswith(w) and part.endswith(")")), None)
        if w is None:
            break
        part = part[len(w):-1]
    return part


def _scope(op_name: str | None) -> str | None:
    """The user's name scope of a recomputed op: inside the checkpointed function (between
    ``rematted_computation/`` and the primitive), else the one around the call
    (``.../jvp(layer_0)/checkpoint/rematted_computation/...``: jax.named_scope)."""
    if not op_name or MARK not in op_name:
        return None
    head_all, _, tail = op_name.rpartition(MARK + "/")
    inner, _, _prim = tail.rpartition("/")
    if inner:
        return inner
    parts = [p for p in head_all.split("/") if p and p != "checkpoint"]
    if parts:
        last = _unwrap(parts[-1])
        if last and "(" not in last:
            return last
    return None


def find_regions(module: Module) -> list[Region]:
    """Every jax.checkpoint region of an unoptimized module, in forward order per
    computation. An opt-barrier nothing recomputes from (a user's own
    ``lax.optimization_barrier``) is not a region."""
    _STACKS.clear()
    prefixes = _op_prefixes(module)
    loops = _loop_bodies(module)
    regions: list[Region] = []
    for comp in module.computations:
        bars = [i for i in comp.instructions if i.opcode == "opt-barrier"]
        if not bars:
            continue
        regions.extend(_regions_of(module, comp, bars, prefixes.get(comp.name), comp.name in loops))
    return regions


def _regions_of(module: Module, comp: Computation, bars: list[Instruction],
                prefix: str | None, in_loop: bool) -> list[Region]:
    by = comp.by_name
    users = _users(comp)
    owner: dict[str, int] = {}
    found: list[Region] = []
    for b in bars:
        r = Region(barrier=b.name, computation=comp.name, in_loop=in_loop)
        k = len(found)
        gtes = [u for u in users.get(b.name, ()) if u.opcode == "get-tuple-element"]
        stack = []
        read = set()
        for g in gtes:
            for u in users.get(g.name, ()):
                if _is_marked(u, prefix) and u.opcode != "opt-barrier":
                    stack.append(u)
                    read.add(g.index or 0)
        while stack:
            u = stack.pop()
            if u.name in owner:
                continue
            owner[u.name] = k
            for v in users.get(u.name, ()):
                if _is_marked(v, prefix) and v.opcode != "opt-barrier" and v.name not in owner:
                    stack.append(v)
        t = by.get(b.operands[0]) if b.operands else None
        elems = t.operands if t is not None and t.opcode == "tuple" else []
        for e in elems:
            (r.cotangents if _is_cotangent(by, e) else r.residuals).append(e)
        found.append(r)
    # recomputed instructions that do not read a barrier (an iota, a constant mask) belong
    # to the region of their users
    for i in reversed(comp.instructions):
        if i.name in owner or not _is_marked(i, prefix) or i.opcode == "opt-barrier":
            continue
        ks = {owner[u.name] for u in users.get(i.name, ()) if u.name in owner}
        if len(ks) == 1:
            owner[i.name] = ks.pop()
    keep = [r for k, r in enumerate(found) if any(v == k for v in owner.values())]
    if not keep:
        return []
    for i in comp.instructions:
        k = owner.get(i.name)
        if k is not None:
            found[k].recomputed.append(i.name)
    # the region's own backward: what reads its recomputation or its barrier's elements
    # and is not recomputation
    bar_of = {}
    for k, r in enumerate(found):
        for u in users.get(r.barrier, ()):
            bar_of[u.name] = k
    for k, r in enumerate(found):
        seen = set()
        for n in r.recomputed + [g for g, kk in bar_of.items() if kk == k]:
            for u in users.get(n, ()):
                if u.name not in owner and u.name not in bar_of and u.name not in seen \
                        and u.opcode not in ("tuple", "opt-barrier"):
                    seen.add(u.name)
                    r.backward.append(u.name)
    _twins(module, comp, found, owner)
    bar_names = {r.barrier for r in found}
    for k, r in enumerate(found):
        _name(module, comp, r, prefix)
        # a nested region's barrier reads the enclosing region's recomputation or its
        # barrier's elements
        for e in r.residuals:
            i = comp.by_name.get(e)
            if e in owner and owner[e] != k:
                r.parent = found[owner[e]].barrier
            elif i is not None and i.opcode == "get-tuple-element" and i.operands and \
                    i.operands[0] in bar_names and i.operands[0] != r.barrier:
                r.parent = i.operands[0]
    _name_outer(module, comp, keep)
    _order(comp, keep)
    return keep


def _name_outer(module: Module, comp: Computation, regions: list[Region]) -> None:
    """A region holding nested regions: JAX's stacks of its recomputed instructions skip
    the outer checkpointed function (they name the inner one), but the nested barriers are
    traced inside the outer function's body: the frame below the outer call site in their
    stacks names it."""
    for r in regions:
        kids = [k for k in regions if k.parent == r.barrier]
        site = _user_stack(module, comp.by_name[r.barrier])
        if not kids or not site:
            continue
        depth = len(site)
        frames = [st[depth] for st in (_user_stack(module, comp.by_name[k.barrier]) for k in kids)
                  if len(st) > depth and [(a, b) for a, b, _ in st[:depth]] ==
                  [(a, b) for a, b, _ in site]]
        if not frames:
            continue
        f, fn, _ = frames[0]
        if fn:
            r.function = fn.rsplit(".<locals>.", 1)[-1]
            ls = sorted({x[2] for x in frames if x[2] is not None})
            base = f.rsplit("/", 1)[-1]
            r.lines = (f"{base}:{ls[0]}" if len(ls) == 1 else f"{base}:{ls[0]}-{ls[-1]}") \
                if ls else r.lines


def _twins(module: Module, comp: Computation, found: list[Region], owner: dict[str, int]) -> None:
    fp = _fingerprints(module, comp)
    forward: dict[int, str] = {}
    recomputed = set(owner)
    backward = {n for r in found for n in r.backward}
    for i in comp.instructions:
        if i.name in recomputed or i.name in backward or i.opcode in TRIVIAL:
            continue
        if "transpose(" in (i.op_name or ""):
            continue
        forward.setdefault(fp[i.name], i.name)
    elsewhere: dict[int, list[tuple[int, str]]] = {}  # fingerprint -> (region, recomputed)
    for k, r in enumerate(found):
        for n in r.recomputed:
            if comp.by_name[n].opcode not in TRIVIAL:
                elsewhere.setdefault(fp.get(n, 0), []).append((k, n))
    for k, r in enumerate(found):
        for n in r.recomputed:
            if comp.by_name[n].opcode in TRIVIAL:
                continue
            t = forward.get(fp.get(n, 0))
            if t is not None:
                r.twins[n] = t
                continue
            # no forward twin (the forward pass computed it another way, under jvp): the one
            # identical instruction of another region's recomputation, if there is exactly one
            others = [x for j, x in elsewhere.get(fp.get(n, 0), []) if j != k]
            if len(others) == 1:
                r.recompute_twins[n] = others[0]


_STACKS: dict = {}  # (id of the tables, frame id) -> user stack; reset per find_regions


def _user_stack(module: Module, i: Instruction) -> list[tuple[str, str | None, int | None]]:
    """The user's frames of an instruction, outermost first (library frames left out)."""
    from ..hlo.frames import is_library

    md = i.metadata
    if md is None or not md.stack_frame_id:
        return []
    key = (id(module.tables), md.stack_frame_id)
    if key not in _STACKS:
        _STACKS[key] = [(f, fn, line) for f, fn, line in
                        reversed(module.tables.stack(md.stack_frame_id))
                        if f and not is_library(f)]
    return _STACKS[key]


def _name(module: Module, comp: Computation, r: Region, prefix: str | None) -> None:
    """The checkpointed function: the innermost user frame (file, function) shared by the
    call stacks of all recomputed instructions; its lines: where they are in it."""
    stacks = [s for s in (_user_stack(module, comp.by_name[n]) for n in r.recomputed) if s]
    site = _user_stack(module, comp.by_name[r.barrier])
    if site:
        f, _fn, line = site[-1]
        r.call_site = f"{f.rsplit('/', 1)[-1]}:{line}"
    # the checkpointed function is called at the barrier's call site: the frame right below
    # it in the recomputed instructions' stacks; else the innermost frame they all share
    depth = len(site)
    inside = [s for s in stacks if len(s) > depth and
              [(a, b) for a, b, _ in s[:depth]] == [(a, b) for a, b, _ in site]]
    if site and inside:
        at = depth + 1
    elif stacks:
        inside, at = stacks, 0
        while all(len(s) > at and (s[at][0], s[at][1]) == (stacks[0][at][0], stacks[0][at][1])
                  for s in stacks):
            at += 1
    else:
        at = 0
    if at:
        f, fn, _ = inside[0][at - 1]
        ls = sorted({s[at - 1][2] for s in inside if s[at - 1][2] is not None})
        r.function = (fn or "").rsplit(".<locals>.", 1)[-1] or None
        base = f.rsplit("/", 1)[-1]
        if ls:
            r.lines = f"{base}:{ls[0]}" if ls[0] == ls[-1] else f"{base}:{ls[0]}-{ls[-1]}"
    scopes: dict[str, int] = {}
    depth = 1
    for n in r.recomputed:
        op = comp.by_name[n].op_name or ""
        full = f"{prefix}/{op}" if prefix and MARK not in op else op
        sc = _scope(full)
        if sc:
            scopes[sc] = scopes.get(sc, 0) + 1
        depth = max(depth, full.split(MARK, 1)[0].count("checkpoint/") or 1)
    if scopes:
        r.scope = max(scopes, key=scopes.get)
    r.depth = depth


def _order(comp: Computation, regions: list[Region]) -> None:
    """Number the regions of one computation in forward order: by where their forward twins
    (else their first residual) are computed. The backward pass visits them in reverse,
    so without either the text order is reversed."""
    pos = {i.name: k for k, i in enumerate(comp.instructions)}

    def key(r: Region) -> tuple:
        ps = [pos[t] for t in r.twins.values() if t in pos]
        if ps:
            return (0, max(ps))
        ps = [pos[e] for e in r.residuals if e in pos and comp.by_name[e].opcode != "parameter"]
        if ps:
            return (1, max(ps))
        return (2, -pos.get(r.barrier, 0))

    for depth in {r.depth for r in regions}:
        same = [r for r in regions if r.depth == depth]
        for k, r in enumerate(sorted(same, key=key)):
            r.index, r.count = k, len(same)


def value_bytes(module: Module, comp: str, names: list[str]) -> int:
    """Bytes of the values of these instructions (parameters left out: live anyway)."""
    c = module.by_name[comp]
    total = 0
    for n in names:
        i = c.by_name.get(n)
        if i is not None and i.opcode != "parameter":
            total += i.shape.byte_size
    return total
