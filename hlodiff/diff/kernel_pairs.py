"""Kernel pairing for regression mode: which kernel of one optimized module is which of the other.

A *kernel* is a top-level instruction that runs: a fusion (with everything fused into it)
or a lone dot, convolution, reduce, custom call, copy, ... Wrapper computations are seen
through: a ``call`` that XLA:CPU's parallel task assigner (``parallel_*``) or small-while
hoisting wraps around a kernel is not a kernel, the kernel inside it is.

Evidence, strongest first: the instruction matcher's votes (run on version-normalized
metadata, see :mod:`.normalize`); shared (primitive, source line) keys; structure (what
the kernel computes, a library matmul counting as a dot, and its dims); for copies, what
they copy and where they are used; the partners of a kernel's operand and user kernels
(one layer's kernels feed each other); names only when every kernel is named alike (a
re-dump). Pairs are made greedily, best score first; a kernel whose best open candidates
tie is held back and retried as other pairs are made; what still ties is ``uncertain``.
Leftovers are *joined into* / *split off from* a paired kernel (:func:`many_to_one`).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from .analyses import NOT_KERNELS
from .match import Matching
from .normalize import primitive
from .view import Node, View, _match_dims

_QUIET = {"parameter", "constant", "bitcast", "broadcast", "reshape", "copy", "tuple",
          "get-tuple-element", "iota", "convert", "slice", "transpose"}
_BUCKET_CAP = 64
_TIE = 0.05
_PAIR_MIN = 1.0  # a pair needs more than equal dims and opcode
_STRUCT_ONLY = 0.75  # structure alone: two agreeing neighbour kernels must back it up
_JOIN_MIN = 1.5  # a join/split needs more than equal dims and opcode



class Kernel:
    """One kernel of one side: its node, the nodes it holds, and its evidence keys."""

    __slots__ = ("idx", "node", "members", "keys", "ops", "label", "lines", "fp", "computes",
                 "dims", "kind")

    def __init__(self, idx: int, node: Node):
        self.idx = idx
        self.node = node
        self.members: list[int] = []
        self.keys: Counter = Counter()
        self.ops: Counter = Counter()
        self.label = ""
        self.lines: set[str] = set()
        self.fp = 0
        self.computes: set[str] = set()
        self.dims = ""  # the result's dims (a library call's scratch buffer left out)
        self.kind = ""  # what it mainly computes: "dot" for a oneDNN matmul or a ynn dot fusion

    @property
    def name(self) -> str:
        return self.node.name


def kernel_nodes(view: View) -> list[Node]:
    """Top-level nodes that run as kernels; wrapper calls are not kernels (their insides are)."""
    return [n for n in view.nodes
            if n.fusion < 0 and n.home == n.idx and n.opcode not in NOT_KERNELS
            and not (n.opcode in ("bitcast", "copy") and n.alias >= 0 and
                     view.nodes[view.resolve(n.idx)].opcode == "parameter")]


def label_of(ops: Counter, node: Node) -> str:
    """What a kernel computes, in a few words: 'dot+add fusion', 'reduce', 'copy'."""
    main = [o for o, _ in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0])) if o not in _QUIET]
    if node.opcode == "fusion":
        kind = node.inst.custom_call_target or ""
        head = "+".join(sorted(main[:3])) if main else "+".join(sorted(ops)[:2]) or "copy"
        if "ynn" in node.name or "onednn" in node.name:
            kind = "library "
        return f"{kind}{head} fusion"
    if node.opcode == "custom-call":
        return f"custom-call {node.inst.custom_call_target}"
    return node.opcode


def build_kernels(view: View) -> tuple[list[Kernel], dict[int, int]]:
    """Kernels of a view and node index -> kernel number (for the nodes they hold)."""
    ks: list[Kernel] = []
    of: dict[int, int] = {}
    for n in kernel_nodes(view):
        k = Kernel(len(ks), n)
        ks.append(k)
        of[n.idx] = k.idx
    for n in view.nodes:
        if n.fusion >= 0 and n.alias < 0 and n.opcode != "parameter":
            k = of.get(n.fusion)
            if k is not None:
                ks[k].members.append(n.idx)
                of[n.idx] = k
    for k in ks:
        n = k.node
        if not k.members:
            k.members.append(view.resolve(n.idx) if n.opcode not in ("copy", "bitcast") else n.idx)
        for i in k.members:
            x = view.nodes[i]
            k.ops[x.opcode] += 1
            if x.op_name and x.opcode not in ("parameter", "constant"):
                line = x.src[0][1] if x.src else None
                k.keys[(primitive(x.op_name), line)] += 1
                if x.src and x.src[0][0]:
                    k.lines.add(f"{x.src[0][0]}:{line}")
        k.label = label_of(k.ops, n)
        k.computes = _computes(k)
        k.dims = _match_dims(_main_dims(n))
        k.kind = next((o for o in ("dot", "convolution") if o in k.computes), k.label)
        k.fp = hash((n.opcode, n.mdims, tuple(sorted(k.ops.items())), frozenset(k.keys)))
    return ks, of


def _overlap(a: Counter, b: Counter) -> float:
    if not a or not b:
        return 0.0
    inter = sum(min(v, b[k]) for k, v in a.items() if k in b)
    return inter / max(sum(a.values()), sum(b.values()))


def _jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _score(kb: Kernel, ka: Kernel, votes: int) -> float:
    s = 2.0 * votes / max(1, len(kb.members))
    s += _overlap(kb.keys, ka.keys)
    s += 0.5 * max(_overlap(kb.ops, ka.ops), _jaccard(kb.computes, ka.computes))
    if kb.dims == ka.dims:
        s += 0.5
    if kb.node.opcode == ka.node.opcode:
        s += 0.25
    return s


def _candidates(m: Matching, KB, KA, of_a) -> dict[int, dict[int, float]]:
    """Before kernel -> {after kernel: score} from votes, shared keys and structure."""
    A = m.after
    votes: dict[int, Counter] = defaultdict(Counter)
    for kb in KB:
        for i in kb.members:
            y = m.b2a[i]
            if y >= 0:
                ka = of_a.get(A.resolve(y) if A.nodes[y].alias >= 0 else y)
                if ka is None:
                    ka = of_a.get(A.nodes[y].home)
                if ka is not None:
                    votes[kb.idx][ka] += 1
    by_key: dict = defaultdict(list)
    for ka in KA:
        for key in ka.keys:
            by_key[key].append(ka.idx)
    by_struct: dict = defaultdict(list)
    by_target: dict[int, list[int]] = defaultdict(list)  # see-through copies by what they copy
    for ka in KA:
        by_struct[(ka.kind, ka.dims)].append(ka.idx)
        if ka.node.alias >= 0 and ka.node.opcode != "fusion":
            by_target[A.resolve(ka.node.idx)].append(ka.idx)
    B = m.before
    uses_a = _uses(A, [k for k in KA if k.node.alias >= 0 and k.node.opcode != "fusion"])
    uses_b = _uses(B, [k for k in KB if k.node.alias >= 0 and k.node.opcode != "fusion"])
    for kb in KB:
        n = kb.node
        if n.alias >= 0 and n.opcode != "fusion":
            y = m.b2a[B.resolve(n.idx)]
            mine = {(m.b2a[u], pos) for u, pos in uses_b.get(kb.idx, ()) if m.b2a[u] >= 0}
            for ka in by_target.get(y, ()) if y >= 0 else ():
                if KA[ka].node.opcode == n.opcode:
                    # a copy of a paired value; copies of one value told apart by where
                    # they are used (the same operand of paired users)
                    votes[kb.idx][ka] += 1 + len(mine & set(uses_a.get(ka, ())))
    # the same compiler names kernels the same way: a re-dump, or a module against itself
    names_a = {(ka.name, ka.node.opcode, ka.node.mdims): ka.idx for ka in KA}
    same = [names_a.get((kb.name, kb.node.opcode, kb.node.mdims), -1) for kb in KB]
    # (all kernels named alike, as in a re-dump; neighbouring versions share most names
    # but not what they stand for)
    naming = len(KA) == len(KB) and all(x >= 0 for x in same)
    out: dict[int, dict[int, float]] = {}
    for kb in KB:
        cands: set[int] = set(votes[kb.idx])
        for key in kb.keys:
            lst = by_key.get(key, ())
            if len(lst) <= _BUCKET_CAP:
                cands.update(lst)
        # the same kind of kernel on the same dims: a candidate on structure alone, paired
        # only when its operand and user kernels agree (see pair_kernels)
        lst = by_struct.get((kb.kind, kb.dims), ())
        struct_only = set(lst) - cands if len(lst) <= _BUCKET_CAP else set()
        cands.update(struct_only)
        if naming and same[kb.idx] >= 0:
            cands.add(same[kb.idx])
        sc = {}
        for a in cands:
            s = _score(kb, KA[a], votes[kb.idx].get(a, 0))
            if a in struct_only:
                s -= _STRUCT_ONLY
            if naming and a == same[kb.idx]:
                s += 0.5
            if s >= _PAIR_MIN - _STRUCT_ONLY:
                sc[a] = s
        out[kb.idx] = sc
    return out


def _uses(view: View, ks: list[Kernel]) -> dict[int, list[tuple[int, int]]]:
    """Kernel -> (user node, operand position) for see-through kernels (copies), whose
    users the view links to the copied value instead."""
    want = {(k.node.comp, k.name): k.idx for k in ks}
    out: dict[int, list[tuple[int, int]]] = defaultdict(list)
    if not want:
        return out
    comps = {c for c, _ in want}
    for comp in view.module.computations:
        if comp.name not in comps:
            continue
        for inst in comp.instructions:
            for pos, o in enumerate(inst.operands):
                k = want.get((comp.name, o))
                if k is not None:
                    u = view.top_names.get((comp.name, inst.name))
                    if u is not None:
                        out[k].append((view.resolve(u), pos))
    return out


def _kernel_graph(view: View, ks: list[Kernel], of: dict[int, int]):
    """Operand kernels and user kernels of every kernel (through get-tuple-element, bitcast,
    copy and other non-kernel plumbing, a few steps deep)."""
    nodes = view.nodes
    kernel_of_node = {k.node.idx: k.idx for k in ks}

    def up(i: int) -> int:
        for _ in range(4):
            k = kernel_of_node.get(i)
            if k is not None:
                return k
            n = nodes[i]
            r = view.resolve(i)
            k = of.get(r)
            if k is None and nodes[r].home != r:
                k = kernel_of_node.get(nodes[r].home)
            if k is not None:
                return k
            if not n.raw_operands:
                return -1
            i = n.raw_operands[0]
        return -1

    ops: list[set[int]] = [set() for _ in ks]
    users: list[set[int]] = [set() for _ in ks]
    for k in ks:
        for o in k.node.raw_operands:
            x = up(o)
            if x >= 0 and x != k.idx:
                ops[k.idx].add(x)
                users[x].add(k.idx)
    return ops, users


def _neighbours(b: int, a: int, pairs: dict[int, int], gb, ga) -> int:
    """Operand and user kernels of b whose partners are operand / user kernels of a."""
    ob, ub = gb
    oa, ua = ga
    n = sum(1 for x in ob[b] if pairs.get(x, -1) in oa[a])
    return n + sum(1 for x in ub[b] if pairs.get(x, -1) in ua[a])


def pair_kernels(m: Matching, KB: list[Kernel], KA: list[Kernel], of_a: dict[int, int],
                 of_b: dict[int, int]):
    """Greedy one-to-one pairing, best score first. An edge whose before or after kernel has
    an open rival within ``_TIE`` is held back; held-back kernels are retried once the other
    pairs are made (a rival may have been taken meanwhile) until nothing changes. What is
    still tied is ``uncertain``. Returns (pairs b->a, uncertain b->[a...], candidates)."""
    cand = _candidates(m, KB, KA, of_a)
    rev: dict[int, dict[int, float]] = defaultdict(dict)
    for b, d in cand.items():
        for a, s in d.items():
            rev[a][b] = s
    edges = [(s, b, a) for b, d in cand.items() for a, s in d.items()]
    edges.sort(key=lambda e: (-e[0], e[1], e[2]))
    pairs: dict[int, int] = {}
    taken: set[int] = set()
    uncertain: dict[int, list[int]] = {}
    gb = ga = None
    bonus: dict[tuple[int, int], int] = {}
    for _ in range(40):
        held: dict[int, list[int]] = {}
        contested: set[int] = set()
        made = 0
        for s, b, a in edges:
            if s < _PAIR_MIN:
                break
            if b in pairs or a in taken or b in held or b in contested:
                continue
            rivals = [x for x, t in cand[b].items() if x != a and x not in taken and s - t < _TIE]
            if rivals:
                # two open after kernels explain b equally well (layers of a network look
                # alike): the evidence cannot decide, for now
                held[b] = [a] + rivals
                continue
            brivals = [x for x, t in rev[a].items() if x != b and x not in pairs
                       and s - t < _TIE]
            if brivals:
                # several before kernels explain a equally well: they were joined into it
                # (many_to_one says so), or the evidence cannot decide which one it is
                contested.add(b)
                continue
            pairs[b] = a
            taken.add(a)
            made += 1
        uncertain = held
        if not held and not contested and not any(
                b not in pairs and any(a not in taken for a in d) for b, d in cand.items()):
            break
        # structure: a kernel still open goes with the candidate whose operand and user
        # kernels are the partners of its own (one layer's kernels feed each other)
        if gb is None:
            gb = _kernel_graph(m.before, KB, of_b)
            ga = _kernel_graph(m.after, KA, of_a)
        bumped = 0
        for b in [x for x in cand if x not in pairs]:
            for a in cand[b]:
                if a in taken:
                    continue
                nb = _neighbours(b, a, pairs, gb, ga)
                if nb > bonus.get((b, a), 0):
                    cand[b][a] += 0.25 * (nb - bonus.get((b, a), 0))
                    rev[a][b] = cand[b][a]
                    bonus[(b, a)] = nb
                    bumped += 1
        if not bumped and not made:
            break
        edges = [(s, b, a) for b, d in cand.items() for a, s in d.items()]
        edges.sort(key=lambda e: (-e[0], e[1], e[2]))
    # an uncertain kernel whose candidates all got paired elsewhere is simply unpaired
    for b in list(uncertain):
        open_c = [a for a in uncertain[b] if a not in taken]
        if b in pairs or not open_c:
            del uncertain[b]
        else:
            uncertain[b] = open_c
    if gb is None:
        gb = _kernel_graph(m.before, KB, of_b)
        ga = _kernel_graph(m.after, KA, of_a)
    return pairs, uncertain, cand, gb, ga


def _best(d: dict[int, float], need: float) -> tuple[int, list[int]]:
    """The best candidate scoring at least ``need``, or -1 and the tied candidates."""
    ranked = sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))
    if not ranked or ranked[0][1] < need:
        return -1, []
    ties = [x for x, s in ranked[1:] if ranked[0][1] - s < _TIE]
    if ties:
        return -1, [ranked[0][0]] + ties
    return ranked[0][0], []


def many_to_one(pairs: dict[int, int], uncertain: dict[int, list[int]], cand, KA, gb, ga):
    """Kernels left over by the one-to-one pass: a before kernel whose work went into an
    already paired after kernel was *joined* into it; an after kernel whose work came out of
    an already paired before kernel was *split off* from it. A neighbour kernel (operand or
    user) whose partner is the candidate is the strongest sign of a join: fusion merged the
    two. Returns (joined b->a, split a->b)."""
    joined: dict[int, int] = {}
    for b, d in cand.items():
        if b in pairs:
            continue
        near = [pairs.get(x, -1) for x in gb[0][b] | gb[1][b]]
        d2 = {a: s + 0.5 * near.count(a) + 0.25 * _neighbours(b, a, pairs, gb, ga)
              for a, s in d.items()}
        a, ties = _best(d2, _JOIN_MIN)
        if a >= 0:
            joined[b] = a
            uncertain.pop(b, None)
        elif ties and b not in uncertain:
            uncertain[b] = ties
    taken = set(pairs.values()) | set(joined.values())
    rev: dict[int, dict[int, float]] = defaultdict(dict)
    for b, d in cand.items():
        for a, s in d.items():
            if a not in taken:
                rev[a][b] = s
    split: dict[int, int] = {}
    for a, d in rev.items():
        b, _ties = _best(d, _JOIN_MIN)
        if b >= 0 and (b in pairs or b in joined):
            split[a] = b
    return joined, split


# library calls of older XLA:CPU versions and the HLO operation each one is
_LIBRARY_OPS = (("matmul", "dot"), ("conv", "convolution"), ("softmax", "softmax"),
                ("layernorm", "layer norm"))


def _computes(k: Kernel) -> set[str]:
    """Opcodes a kernel computes, a library custom call counted as the op it implements."""
    ops = {o for o in k.ops if o not in _QUIET}
    t = (k.node.inst.custom_call_target or "").lower()
    if k.node.opcode == "custom-call":
        ops.discard("custom-call")
        ops.update(op for key, op in _LIBRARY_OPS if key in t)
    return ops


def _main_dims(n: Node) -> str:
    sh = n.inst.shape
    if sh.is_tuple:  # a library call returns (result, scratch): compare the result
        leaves = list(sh.leaves())
        return leaves[0].dims_text if leaves else sh.dims_text
    return sh.dims_text


