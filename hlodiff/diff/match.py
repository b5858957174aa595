"""The matching cascade: pair before nodes with after nodes, cheapest evidence first.

Each matcher only adds pairs between nodes both still open, so earlier (stronger) evidence
always wins. Every step is a pass over buckets keyed by node properties; nothing compares
all pairs, so the cascade is near-linear in module size.

1. ``seed``: entry parameters by number, entry roots.
2. ``metadata``: unique (opcode, shape, op_name, source frame) on both sides.
3. ``fingerprint``: unique exact-subgraph fingerprint on both sides.
4. ``structure``: top-down (operands of a pair) and bottom-up (users of a pair), plus the
   parameters/roots of matched while/conditional bodies; repeated to a fixed point.
5. ``similarity``: leftovers in an (opcode, op_name) bucket, scored by how many of their
   operands and users are already paired with each other (a Dice-like count).
6. ``rewrite``: open nodes sharing (op_name, source) with a different opcode
   (a dot turned into a library call, a reshape into a bitcast, ...).
"""

from __future__ import annotations

import re

from collections import Counter, defaultdict

from .anchors import (best_by_anchors, bounds_contradict, owned_elsewhere, pair_sole_choices,
                      reads_other_window, real_twins, same_attrs, windows_read)
from .canonical import pair_wrapped
from . import constvals, gpunames, loop_state, param_reads, splitk
from .cse_pairs import move_to_survivor, pair_survivors
from .dot_dims import contraction_fits, settle_twin_dots
from .meta_survivors import pair_meta_survivors, pair_moved_negates  # old5
from .init_elements import pair_init_elements  # old5
from .loop_constants import pair_body_constants  # old5
from .onednn_softmax import repair as onednn_repair  # old5
from .fused_copies import copy_keys, scalar_copies
from .loop_pairs import constant_meta_key, keep_element_order, pair_bare_loops, pair_named_loops
from .param_deps import exact_twin, far_twin
from .permuted_rivals import permuted_rivals
from .partition import may_be_piece, num_partitions
from .broadcast_dims import other_placement  # old5
from .barrier_forward import handed_on_partner, pair_through_barriers
from .collective_elements import element_readers, element_sources
from .rewrite_cands import SCAN_CAP, rewrite_bucket, rewrite_cands
from .regroup_pairs import repair as repair_regrouped, repair_broadcast_scale
from .regrouped_divides import repair as repair_regrouped_divides
from .sunk_broadcasts import pair_sunk
from .narrow_converts import UPCAST_ARITHMETIC, unconverted
from .view import Node, View

COMMUTATIVE = {"add", "multiply", "maximum", "minimum", "and", "or", "xor"}
class Matching:
    """Before node index <-> after node index, with the matcher that made each pair."""

    def __init__(self, before: View, after: View):
        self.before = before
        self.after = after
        self.b2a = [-1] * len(before.nodes)
        self.a2b = [-1] * len(after.nodes)
        self.scalar_copies: set[int] | None = None  # computed by scalar_copies
        self.copy_key_cache: list[int] | None = None  # fused_copies.copy_keys
        self.copy_live: bytearray | None = None  # (which after nodes read run-time values)
        self.how: dict[int, str] = {}
        # before node -> after candidates nothing told apart (the pair took the first)
        self.twins: dict[int, list[int]] = {}
        self._queue: list[int] = []
        self.dot_check = None  # a veto on dot pairs, whichever step proposes them
        self.parts = 0  # devices an SPMD-partitioned module runs on (0: not partitioned)

    def pair(self, b: int, a: int, how: str) -> bool:
        if self.b2a[b] >= 0 or self.a2b[a] >= 0:
            return False
        if self.dot_check is not None and not self.dot_check(self, b, a):
            return False  # (partitioned modules: dot_dims.contraction_fits)
        if bounds_contradict(self, b, a):
            return False  # another window of a same-sized dimension (anchors.py)
        self.b2a[b] = a
        self.a2b[a] = b
        self.how[b] = how
        self._queue.append(b)
        return True

    def unpair(self, b: int) -> None:
        """Undo the pair of before node ``b`` (a later step found better evidence)."""
        a = self.b2a[b]
        if a >= 0:
            self.a2b[a] = -1
        self.b2a[b] = -1
        self.how.pop(b, None)
        self.twins.pop(b, None)

    def partner(self, b: int) -> Node | None:
        a = self.b2a[b]
        return self.after.nodes[a] if a >= 0 else None

    @property
    def count(self) -> int:
        return len(self.how)


def _live(nodes: list[Node]) -> list[Node]:
    return [n for n in nodes if n.alias < 0]


def _seed(m: Matching) -> None:
    B, A = m.before, m.after
    for k, b in B.entry_params.items():
        a = A.entry_params.get(k)
        if a is not None:
            m.pair(B.resolve(b), A.resolve(a), "parameter")
    rb, ra = B.resolve(B.entry_root), A.resolve(A.entry_root)
    if B.nodes[rb].opcode == A.nodes[ra].opcode and B.nodes[rb].mdims == A.nodes[ra].mdims:
        m.pair(rb, ra, "root")


def _unique_buckets(m: Matching, key, how: str, ok=None, top_first: bool = False) -> int:
    """Pair the before and after nodes whose ``key`` is unique on both sides. With
    ``top_first``, a key held by one top-level after node and copies inside fusions counts
    as unique to the top-level one: fusion clones a constant into each kernel that reads it
    and keeps the original for its other users (fresh 7 multi_key_sort: the cumsum's init
    0, inlined as ``constant.4``, also padded into ``broadcast_bitcast_fusion``)."""
    bb: dict = defaultdict(list)
    ab: dict = defaultdict(list)
    for n in _live(m.before.nodes):
        if m.b2a[n.idx] < 0:
            k = key(n)
            if k is not None:
                bb[k].append(n.idx)
    for n in _live(m.after.nodes):
        if m.a2b[n.idx] < 0:
            k = key(n)
            if k is not None and k in bb:
                ab[k].append(n.idx)
    c = 0
    for k, al in ab.items():
        bl = bb[k]
        if top_first and len(al) > 1:
            tops = [y for y in al if m.after.nodes[y].top]
            al = tops if len(tops) == 1 else al
        if len(bl) == 1 and len(al) == 1 and (ok is None or ok(m, bl[0], al[0])):
            c += m.pair(bl[0], al[0], how)
    return c


def _shape_tells(m: Matching, b: int, a: int) -> bool:
    """Partitioned: a fingerprint of a constant value (broadcast(0.9)) differs between
    its copies only by shape, and a global shape equal to another copy's per-device shape
    is a coincidence, not evidence (fresh 15 stmoe_top2_capacity_zloss on 8 H100s: Adam's
    broadcast of b1 for a f32[8,32] parameter took the copy in the f32[64,32] weight's
    kernel, f32[8,32] per device)."""
    n = m.before.nodes[b]
    return n.opcode == "constant" or not n.inst.shape.dims or \
        not constvals.for_matching(m)[0][b]


def _names(m: Matching) -> int:
    """XLA keeps an instruction's name while it survives at top level (names are unique in
    a module and never reused): a top-level after node named like a before node outside
    an inlined call is that node, when opcode and shape agree."""
    by_name: dict[str, int] = {}
    renamed: dict[str, int] = {}
    dup: set[str] = set()
    for n in m.after.nodes:
        # live nodes, and get-tuple-elements the view sees through: one that kept its name
        # while its tuple producer changed (an optimization barrier removed) is still it
        if n.alias >= 0 and n.opcode != "get-tuple-element":
            continue
        if n.fusion < 0 and n.opcode != "parameter":
            if n.name in by_name:
                dup.add(n.name)
            by_name[n.name] = n.idx
            if n.name.endswith(".0"):
                # XLA GPU's rename pass gives every instruction a ".0"-style suffix
                # (sub.2 -> sub.2.0): the stem is its name before
                stem = n.name[:-2]
                if stem in renamed:
                    dup.add(stem)
                renamed[stem] = n.idx
    c = 0
    An = m.after.nodes
    consts = None
    for b in _live(m.before.nodes):
        if b.site is not None or m.b2a[b.idx] >= 0 or b.opcode == "parameter":
            continue
        y = by_name.get(b.name)
        if y is None and b.name not in dup:
            y = renamed.get(b.name)
        if y is None and b.opcode == "constant":  # gpu2: sanitize-constant-names (gpunames.py)
            if consts is None:
                consts = gpunames.constants_by_sanitized_name(An)
            y = consts.get(gpunames.sanitized(b.name))
        if y is not None and An[y].alias >= 0 and b.opcode != "get-tuple-element":
            continue
        if y is None or b.name in dup or m.a2b[y] >= 0:
            continue
        if _compatible(b, An[y], m.parts):
            c += m.pair(b.idx, y, "name")
    return c


def _meta_key(n: Node):
    if n.op_name is None and n.src is None:
        return None
    if n.opcode == "parameter":
        return None
    return (n.opcode, n.mdims, n.op_name, n.src)


def _fp_key(n: Node):
    return n.fp


def _compatible(b: Node, a: Node, parts: int = 0) -> bool:
    """Same opcode and shape, no contradicting source frame, equal constant literals; in a
    module partitioned ``parts`` ways, a's shape one device's piece of b's."""
    if b.opcode != a.opcode or b.mdims != a.mdims:
        return False
    if b.src is not None and a.src is not None and b.src != a.src:
        return False
    if b.opcode == "constant" and b.inst.literal != a.inst.literal:
        return False
    if b.mdims != b.dims and not may_be_piece(b.inst.shape, a.inst.shape, parts):
        return False  # shard4: partitioned (rank-only mdims): a's dims are no piece of b's
    return True


def _same_arity(b: Node, a: Node) -> bool:
    """Both tuple-shaped with the same number of elements (a pass that drops or adds loop
    state changes the arity, and then indices shift)."""
    sb, sa = b.inst.shape, a.inst.shape
    return (sb is not None and sa is not None and sb.is_tuple and sa.is_tuple
            and len(sb.tuple_shapes) == len(sa.tuple_shapes))


def _propagate(m: Matching) -> int:
    """Top-down and bottom-up from every new pair until nothing changes."""
    Bn, An = m.before.nodes, m.after.nodes
    b2a, a2b = m.b2a, m.a2b
    start = m.count
    q = m._queue
    other = owned_elsewhere(m)  # twins' metadata: a candidate that names another before node
    fits = param_reads.fits  # h100: a dot reading a weight the before dot does not read
    while q:
        bi = q.pop()
        b = Bn[bi]
        a = An[b2a[bi]]
        # operands
        bo, ao = b.operands, a.operands
        if bo and ao:
            if len(bo) == len(ao):
                for x, y in zip(bo, ao):
                    if b2a[x] < 0 and a2b[y] < 0 and _compatible(Bn[x], An[y], m.parts) and \
                            fits(m, x, y):
                        m.pair(x, y, "operand")
            open_a = [y for y in ao if a2b[y] < 0]
            if open_a:
                chosen = []
                for x in bo:
                    if b2a[x] >= 0:
                        continue
                    bx = Bn[x]
                    chosen.append((x, [y for y in open_a if a2b[y] < 0 and
                                       _compatible(bx, An[y], m.parts) and not other(bx, An[y])
                                       and fits(m, x, y)
                                       and not other_placement(bx, An[y])]))  # old5
                pair_sole_choices(m, chosen, "operand")
        # users
        _pair_users(m, b, a, b.users, other, fits)
        sums = element_readers(m.after).get(a.idx) if m.parts else None
        if sums:  # through a partitioner's sum
            _pair_users(m, b, a, b.users, other, fits, sums)
    return m.count - start


def _pair_users(m: Matching, b: Node, a: Node, bu: list[int], other, fits,
                au: list[int] | None = None) -> None:
    """Pair the open users ``bu`` of before node ``b`` with open users of its partner
    ``a`` (or with ``au``) where the choice is unique (after filtering by index, op_name,
    frame, operands)."""
    Bn, An = m.before.nodes, m.after.nodes
    b2a, a2b = m.b2a, m.a2b
    if au is None:
        au = a.users
    if not bu or not au:
        return
    open_a = [y for y in au if a2b[y] < 0]
    if not open_a:
        return
    groups = None
    if len(open_a) > 16:  # high fan-out: bucket instead of scanning per user
        groups = defaultdict(list)
        for y in open_a:
            groups[(An[y].opcode, An[y].mdims)].append(y)
    chosen: list[tuple[int, list[int]]] = []
    for x in bu:
        if b2a[x] >= 0:
            continue
        bx = Bn[x]
        pool = open_a if groups is None else groups.get((bx.opcode, bx.mdims), ())
        cand = [y for y in pool if a2b[y] < 0 and _compatible(bx, An[y], m.parts)
                and not other(bx, An[y]) and fits(m, x, y)]
        if len(cand) == 1 and constvals.gpu_after(m):  # another operation's shape by
            cand = cand + permuted_rivals(m, bx, open_a, cand[0])  # layout normalization
        if len(cand) > 1 and bx.opcode == "get-tuple-element" and not _same_arity(b, a):
            j = loop_state.element_index(m, b, a, bx.inst.index)  # loop state widened/narrowed
            c2 = [y for y in cand if An[y].opcode == "get-tuple-element" and
                  An[y].inst.index == j] if j is not None else []
            if c2:
                cand = c2
        if len(cand) > 1 and bx.opcode == "get-tuple-element" and _same_arity(b, a) \
                and loop_state.index_sound(m, b, a, bx.inst.index):  # gpu4: reordered
            # elements of paired tuples of the same arity: the same index (the
            # partitioner and the loop passes keep a loop's state in its order)
            c2 = [y for y in cand if An[y].opcode == "get-tuple-element"
                  and An[y].inst.index == bx.inst.index]
            if c2:
                cand = c2
        if len(cand) > 1:
            c2 = [y for y in cand if An[y].op_name == bx.op_name]
            if c2:
                cand = c2
        if len(cand) > 1:
            c2 = [y for y in cand if An[y].src == bx.src]
            if c2:
                cand = c2
        if len(cand) > 1:
            c2 = [y for y in cand if _agree(m, bx, An[y]) == len(bx.operands)]
            if c2:
                cand = c2
        chosen.append((x, cand))
    pair_sole_choices(m, chosen, "user")


def _through_barriers(m: Matching) -> int:
    """Pair the readers of jax.checkpoint barrier elements from the partner of the value
    each element hands on (barrier_forward.pair_through_barriers), then propagate."""
    other = owned_elsewhere(m)  # (built once: it scans the before module)
    n = pair_through_barriers(m, lambda g, a: _pair_users(
        m, g, a, m.before.nodes[g].users, other, param_reads.fits))
    return n + (_propagate(m) if n else 0)


def _agree(m: Matching, b: Node, a: Node) -> int:
    """How many operands of b are paired with an operand of a (order ignored)."""
    b2a = m.b2a
    ao = a.operands
    return sum(1 for x in b.operands if b2a[x] >= 0 and b2a[x] in ao)


def _score(m: Matching, b: Node, a: Node, key=None, skip=None) -> int:
    """How well the after node ``a`` fits the before node ``b`` by their paired neighbours:
    2 per operand paired with ``a``'s operand at the same position (1 elsewhere), 2 per
    user paired with a user of ``a``, 1 for the same source line. ``key`` maps an after
    node to what counts as the same value (default: itself); operands paired with a node
    in ``skip`` count nothing. In a partitioned module an element of a collective the
    partitioner added counts as the value it sums (collective_elements.py)."""
    b2a = m.b2a
    s = 0
    # a narrow float computed in f32: its operands are read through float normalization's
    # converts on the after side (narrow_converts.py)
    peel = b.mdims != b.dims and b.opcode in UPCAST_ARITHMETIC
    ops = a.operands
    if m.parts:  # an element of a collective the partitioner added carries its operand
        es = element_sources(m.after)
        if any(o in es for o in ops):
            ops = [es.get(o, o) for o in ops]
    if peel:
        ops = [unconverted(m.after, o, m.a2b) for o in ops]
    ao = ops if key is None else [key(o) for o in ops]
    for i, x in enumerate(b.operands):
        y = b2a[x]
        if y < 0:  # an element of a removed jax.checkpoint barrier: its reader now reads
            y = handed_on_partner(m, x)  # the value the element handed on
        if y >= 0 and not (skip and y in skip):
            if peel:
                y = unconverted(m.after, y, m.a2b)
            if key is not None:
                y = key(y)
            if i < len(ao) and ao[i] == y:
                s += 2
            elif y in ao:
                s += 1
    if b.users:
        us = a.users
        sums = element_readers(m.after).get(a.idx) if m.parts else None
        if sums:  # (read through the collective)
            us = us + sums
        au = set(us) if key is None else {key(u) for u in us}
        for x in b.users:
            y = b2a[x]
            if y >= 0 and (y if key is None else key(y)) in au:
                s += 2
    if b.src == a.src and b.src is not None:
        s += 1
    return s


def _bodies(m: Matching) -> None:
    """Parameters and roots of the bodies of matched while/conditional instructions."""
    B, A = m.before, m.after
    by_ctl: dict[tuple[int, str], list] = defaultdict(list)
    for ctl, role, _c, root, params in A.bodies:
        by_ctl[(ctl, role)].append((root, params))
    seen: dict[tuple[int, str], int] = defaultdict(int)
    for ctl, role, _c, root, params in B.bodies:
        a = m.b2a[ctl]
        if a < 0:
            a = loop_state.reordered_loop(m, B.nodes[ctl])  # gpu4
        if a < 0:
            continue
        lst = by_ctl.get((a, role))
        k = seen[(ctl, role)]
        seen[(ctl, role)] += 1
        if not lst or k >= len(lst):
            continue
        aroot, aparams = lst[k]
        for x, y in zip(params, aparams):
            x, y = B.resolve(x), A.resolve(y)
            if _compatible(B.nodes[x], A.nodes[y], m.parts) or \
                    loop_state.reordered_param(m, B.nodes[x], A.nodes[y]):  # gpu4
                m.pair(x, y, "body")
        x, y = B.resolve(root), A.resolve(aroot)
        if _compatible(B.nodes[x], A.nodes[y], m.parts):
            m.pair(x, y, "body")


def _similarity(m: Matching, settle_ties: bool = True) -> int:
    """Pair open before nodes with the open after node of the same opcode, shape and
    op_name whose paired neighbours agree most. With ``settle_ties`` off, a node whose best
    candidates tie is left open: repeated code (layers of one Python loop) gives twins equal
    keys and equal scores until a neighbour is paired, and the first tied candidate is as
    often the other layer's; the caller pairs the rest first and settles ties last."""
    Bn, An = m.before.nodes, m.after.nodes
    bucket: dict = defaultdict(list)
    for n in _live(An):
        if m.a2b[n.idx] < 0 and n.opcode != "parameter":
            bucket[(n.opcode, n.mdims, n.op_name)].append(n.idx)
    scalars = scalar_copies(m)
    # a node with no identical twin (nothing for CSE to merge it into) lives on under its
    # own source line: candidates from that line go first where there are any (fresh 15
    # repvgg_multibranch_bn_block on 8 H100s: the 3x3 and 1x1 branches' batch norms)
    fps = m.__dict__.get("_fp_counts")  # (the before nodes' fingerprints never change)
    if fps is None:
        fps = m._fp_counts = Counter(n.fp for n in _live(Bn))
    c = 0
    for b in _live(Bn):
        if m.b2a[b.idx] >= 0 or b.opcode == "parameter":
            continue
        cands = bucket.get((b.opcode, b.mdims, b.op_name))
        if not cands:
            continue
        best, best_s, seen, ties, scored = -1, 0, 0, [], []
        same_src = b.src is not None and fps[b.fp] == 1 and any(
            An[y].src == b.src for y in cands[:SCAN_CAP] if m.a2b[y] < 0)
        wins = windows_read(m, b)  # (anchors.py: fresh 24 bigbird's scatters of key blocks)
        for y in cands:
            if m.a2b[y] >= 0:
                continue
            seen += 1
            if seen > SCAN_CAP:
                break
            if b.mdims != b.dims and not may_be_piece(b.inst.shape, An[y].inst.shape, m.parts):
                continue  # shard4: not a per-device piece of b's shape
            if same_src and An[y].src != b.src:
                continue
            if reads_other_window(m, b, wins, An[y]):
                continue  # another window than b's
            s = _score(m, b, An[y], skip=scalars)
            if s > 0:
                scored.append(y)
            if s > best_s:
                best, best_s, ties = y, s, [y]
            elif s == best_s and s > 0:
                ties.append(y)
        if best >= 0 and best_s >= 2 and len(ties) > 1:
            ties = same_attrs(m, b.idx, ties)
            best = ties[0]
        if best >= 0 and best_s >= 2 and len(ties) > 1:
            if not settle_ties:
                continue  # anchors are costly and weigh more once the rest is paired
            ties = best_by_anchors(m, b.idx, ties)
            best = ties[0]
            if len(ties) > 1 and real_twins(m, ties):
                m.twins[b.idx] = ties
        if best >= 0 and best_s >= 2 and len(scored) > 1:
            alt = far_twin(m, b.idx, best, scored)
            if alt is not None:
                if not settle_ties:
                    continue
                if m.pair(b.idx, alt, "similarity"):  # (a vetoed pair: the best stands)
                    c += 1
                    continue
        if best >= 0 and best_s >= 2:
            c += m.pair(b.idx, best, "similarity")
    return c


# elementwise arithmetic: same values on the same (per-device) shape, whatever pass moved it
def _rewrites(m: Matching, skip: set[int], sharded: bool = False, same_op: bool = False,
              defer: bool = False) -> int:
    """Open before nodes whose (op_name, source) names open after nodes of another opcode
    (``same_op``: first only data-movement ops, to one of the same opcode and shape, so
    that a view algsimp removed does not take the partner of the view beside it).
    ``defer``: leave open a node whose twins nothing tells apart yet, so that the pairs
    made around it decide (a layer's mean broadcast, tied over every layer's kernel,
    pulled its layer's chain into the first layer's)."""
    Bn, An = m.before.nodes, m.after.nodes
    bucket, coll = rewrite_bucket(m)
    # a neighbour paired with one of fusion's copies counts for every copy (fused_copies)
    ck = copy_keys(m).__getitem__
    c = 0
    for b in _live(Bn):
        if m.b2a[b.idx] >= 0 or b.idx in skip or not b.op_name or b.opcode == "parameter":
            continue
        lst = bucket.get((b.op_name, b.src))
        cands = rewrite_cands(m, b, bucket, coll, sharded, same_op)
        if not cands:
            continue
        best, best_s, ties = cands[0], -1, []
        for y in cands[:SCAN_CAP]:
            s = _score(m, b, An[y], key=ck) + (1 if An[y].mdims == b.mdims else 0)
            if s > best_s:
                best, best_s, ties = y, s, [y]
            elif s == best_s:
                ties.append(y)
        if sharded:  # gpu8n: the twin reading b's own values (measured on sharded only)
            ties = exact_twin(m, b.idx, best, ties, cands[:SCAN_CAP])
        if b.opcode == "dot":  # gpu8: dQ and dK read one value (dot_dims.py)
            best, ties = settle_twin_dots(m, b, cands[:SCAN_CAP], best, ties, _score)
        if len(ties) > 1:  # twins (repeated layers): their neighbourhoods decide
            ties = best_by_anchors(m, b.idx, ties)
            best = ties[0]
            if len(ties) > 1 and real_twins(m, ties):
                if defer:
                    continue
                m.twins[b.idx] = ties
        best = ties[0] if best not in ties else best
        if m.pair(b.idx, best, "rewrite"):
            c += 1
            lst.remove(best)
    return c


def _duplicates(m: Matching, merged=frozenset()) -> int:
    """A before node whose metadata key is unique on its side but shared by several open
    after nodes inside fusions: fusion duplicated it into several consumers. Pair it with
    the best-scoring copy (any copy tells the same story). ``merged``: copies CSE merged
    before any simplification (cse_first.py), left open."""
    Bn, An = m.before.nodes, m.after.nodes
    bb: dict = defaultdict(list)
    fps: dict = defaultdict(set)  # every before node's subgraph under the key, paired or not
    for n in _live(Bn):
        k = _meta_key(n)
        if k is not None:
            fps[k].add(n.fp)
            if m.b2a[n.idx] < 0 and n.idx not in merged:
                bb[k].append(n.idx)
    ab: dict = defaultdict(list)
    for n in _live(An):
        if m.a2b[n.idx] < 0:
            k = _meta_key(n)
            if k is not None and k in bb:
                ab[k].append(n.idx)
    c = 0
    for k, al in ab.items():
        bl = bb[k]
        if len(al) < 2 or any(An[y].fusion < 0 for y in al):
            continue
        if len(fps[k]) > 1:
            # twins (layers sharing op_name and source) whose others are paired already:
            # the open copies may be theirs, not duplicates of this one; the rewrite step
            # weighs their neighbourhoods
            continue
        # several identical copies before (CSE keeps the first): pair the first
        b = Bn[bl[0]]
        if b.mdims != b.dims:  # shard4: only per-device pieces of b's shape
            al = [y for y in al if may_be_piece(b.inst.shape, An[y].inst.shape, m.parts)]
            if not al:
                continue
        best = max(al[:SCAN_CAP], key=lambda y: _score(m, b, An[y]))
        c += m.pair(b.idx, best, "duplicate")
    return c


def same_program(a, b) -> bool:
    """Two modules with the same computations holding the same instructions (names,
    opcodes, shapes with layouts, operands, called computations): nothing was rewritten.
    XLA never reuses a name for another instruction, so these are the same instructions."""
    ca, cb = a.computations, b.computations
    if len(ca) != len(cb) or a.entry != b.entry:
        return False
    for x, y in zip(ca, cb):
        if x.name != y.name or len(x.instructions) != len(y.instructions):
            return False
        for i, j in zip(x.instructions, y.instructions):
            if i.name != j.name or i.opcode != j.opcode or i.operands != j.operands or \
                    i.calls != j.calls or str(i.shape) != str(j.shape):
                return False
    return True


def _identical(m: Matching) -> bool:
    """Pair node by node when both views were built from the same program."""
    B, A = m.before.nodes, m.after.nodes
    if len(B) != len(A):
        return False
    for b, a in zip(B, A):
        if b.name != a.name or b.comp != a.comp or b.opcode != a.opcode or \
                b.operands != a.operands:
            return False
    for b in B:
        m.pair(b.idx, b.idx, "identical")
    return True


_DIMS_RE = re.compile(r"\[([^\]]*)\]")


def _rank_only(dims: str) -> str:
    return _DIMS_RE.sub(lambda x: f"[r{x.group(1).count(',') + 1 if x.group(1) else 0}]", dims)


def _partitioned(m: Matching) -> bool:
    """An SPMD-partitioned after module (``num_partitions`` > 1) computes per-device shards:
    its shapes are not the before module's. Matching then compares element type and rank
    only (metadata, operands and structure still decide)."""
    m.parts = num_partitions(m.before.module, m.after.module)
    if m.parts <= 1:
        m.parts = 0
        return False
    for view in (m.before, m.after):
        for n in view.nodes:
            n.mdims = _rank_only(n.mdims)
    # (cpu8) source keys keep all their frames: the Shardy round trip (HLO -> MLIR -> HLO)
    # rebuilds the stack-frame table but keeps each chain. remat_nested_layers on 8 CPU
    # devices: before, ``mul.126`` (frame 50) and ``mul.134`` (frame 58) are the same LayerNorm
    # line (_ln:25:11) under block:388 called from two:392 and from two:393; after, the
    # fusions' copies carry frames 13 and 25, the same two chains. Cut to the innermost
    # frame, the layers were twins and the matcher crossed them.
    return True


def _named_loops(m: Matching, sharded: bool) -> None:
    """Loops paired by their computations' names (oldh2), then what that opens: their
    bodies, structure around them, their results' order."""
    if pair_named_loops(m, sharded):
        _bodies(m)
        _propagate(m)
        keep_element_order(m)


def match(before: View, after: View, cse_skip=None) -> Matching:
    """Run the cascade. ``cse_skip(m)`` returns before nodes the rewrite step must leave open
    (merged by CSE or folded), computed from the pairs found so far."""
    m = Matching(before, after)
    if _identical(m):
        return m
    sharded = _partitioned(m)
    if sharded:  # a dot never pairs with one summing other dimensions (dot_dims.py)
        m.dot_check = contraction_fits
    _seed(m)
    _names(m)
    gpunames.pair_fused_by_name(m)  # fused copies keep the stem (GPU)
    if sharded:  # shard helper: names the Shardy round trip records as op_name
        from .shardmatch import recorded_names
        recorded_names(m, _score)
    _unique_buckets(m, _meta_key, "metadata", param_reads.fits)
    _unique_buckets(m, constant_meta_key, "metadata", top_first=True)  # loops4: with the literal
    _unique_buckets(m, _fp_key, "fingerprint", _shape_tells if sharded else None)
    _propagate(m)
    pair_bare_loops(m)  # loops4: a loop rebuilt without metadata, by its condition
    _bodies(m)
    _propagate(m)
    if pair_body_constants(m):  # old5: literals of a rebuilt body
        _propagate(m)
    from .anchored import pair_anchored  # twins told apart by the values they read
    while pair_anchored(m):
        _propagate(m)
    for _ in range(3):
        n = _similarity(m, settle_ties=False)
        keep_element_order(m)  # oldh2: a loop's results keep their order
        n += _propagate(m)
        if not n:
            n = _similarity(m)
            keep_element_order(m)
            n += _propagate(m)
        _bodies(m)
        n += _propagate(m)
        n += _unique_buckets(m, _meta_key, "metadata", param_reads.fits)
        n += _propagate(m)
        n += _through_barriers(m)
        if not n:
            break
    merged: dict[int, int] = {}
    if sharded:  # shard4: copies CSE merged before simplification (cse_first.py)
        from .cse_first import merged_copies, swap_to_survivors
        merged = merged_copies(m)
        if swap_to_survivors(m, merged, _score):
            _propagate(m)
    if _duplicates(m, merged):
        _propagate(m)
    if pair_survivors(m):  # old2: identical copies before, the one CSE kept after
        _propagate(m)
    if pair_init_elements(m, _compatible):  # old5: a rebuilt loop's initial state
        _propagate(m)
    if pair_meta_survivors(m) + pair_moved_negates(m):  # old5: copies rewritten before
        _propagate(m)  # CSE, kept under their metadata; reduce(negate(x)) -> negate(reduce(x))
    repair_regrouped(m)  # old2: (x*c1)*c2 -> x*(c1*c2) lives on as the outer one
    if repair_regrouped_divides(m):  # (a/b)/c -> a/(b*c) lives on as the outer one
        _propagate(m)
    if pair_sunk(m):  # cpu4: op(broadcast(x), broadcast(c)) -> broadcast(op(x, c))
        _propagate(m)
    if pair_wrapped(m):  # canonicalized dots/convolutions under their wrapper views
        _propagate(m)
    if sharded:  # shard helper: dots algsimp rebuilt on squeezed per-device shapes
        from .shardmatch import rebuilt_dots, swap_misfit_dots
        swap_misfit_dots(m)
        rebuilt_dots(m)
    from .literal_chains import pair_surviving_literals  # literals under rebuilt views
    if pair_surviving_literals(m):
        _propagate(m)
    if gpunames.pair_fused_by_name(m, unique=False):  # copies in several kernels
        _propagate(m)
    if gpunames.give_copies_to_namesakes(m):  # clones of the copy CSE kept (GPU names)
        _propagate(m)
    if move_to_survivor(m):  # the copy CSE keeps holds the value (cse_pairs.py)
        _propagate(m)
    if splitk.settle(m):  # a split-K dot's reduces, before rewrites take them (bigbird)
        _propagate(m)
    skip = cse_skip(m) if cse_skip else set()
    if _rewrites(m, skip, sharded, same_op=True, defer=True):
        _propagate(m)
    if sharded:  # shard2: mutual best rewrite pairs first, in rounds (mutual.py)
        from .mutual import mutual_rewrites
        mutual_rewrites(m, skip, sharded, rewrite_bucket, rewrite_cands, _score, _propagate)
    _named_loops(m, sharded)  # before twins settle by data flow (fresh 6)
    for _ in range(4):  # tied twins wait for the pairs made around them
        if not (_rewrites(m, skip, sharded, same_op=True, defer=True)
                + _rewrites(m, skip, sharded, defer=True)):
            break
        _propagate(m)
    if _rewrites(m, skip, sharded, same_op=True):
        _propagate(m)
    _rewrites(m, skip, sharded)
    _named_loops(m, sharded)
    if splitk.settle(m):  # h100: a dot paired with its partial products -> their sum
        _propagate(m)
    if repair_broadcast_scale(m):  # cpu4: the rewrite step may pair the narrow product
        _propagate(m)
    from .dotmerge import merged_dots, pair_open_pieces, settle_merged_slices  # twins3
    if merged_dots(m) + settle_merged_slices(m) + pair_open_pieces(m):  # the dot merger
        _propagate(m)
    if pair_surviving_literals(m):
        _propagate(m)
    from .lone_literals import pair_lone_literals  # cpu4: one literal, copies only in kernels
    if pair_lone_literals(m):
        _propagate(m)
    from .const_copies import pair_named_copies  # h100: fused copies carry the name
    if pair_named_copies(m):
        _propagate(m)
    if sharded:  # shard helper: constants the fusion copied but kept at top level
        from .shardmatch import top_level_constants
        top_level_constants(m)
    if onednn_repair(m):  # old5: softmax rewritten into a oneDNN call (JAX 0.4.30)
        _propagate(m)
    from .library_dots import pair_unnamed_dots  # dots in library fusions, no metadata
    if pair_unnamed_dots(m):
        _propagate(m)
    m._queue.clear()
    return m
