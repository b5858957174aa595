"""Following instructions across XLA's sharding passes in pass-by-pass dumps.

The Shardy round trip (export to MLIR, propagation, import) rebuilds the whole module and
renumbers names (a name may come back on another instruction), and the SPMD partitioner
gives instructions per-device shapes and new operands (slices, collectives). Matching
instructions by their exact content, as for other passes, loses them; these helpers match
them by what survives: opcode, op_name (or the old name the import records as op_name)
and the operands that can be followed. Snapshots are ``passstep._Snap`` objects.
"""

from __future__ import annotations

import re

from ..hlo.frames import call_stack
from ..hlo.model import Instruction
from .passfiles import PassSnapshot
from .usertrees import deep_user_match

_PARTITIONING = re.compile(r"shard|spmd|partition", re.I)


def partitioning(snap: PassSnapshot, last_pipeline: str) -> bool:
    """Whether the changes this snapshot shows come from sharding passes: the Shardy round
    trip (export/import rebuilds the module under new names) and the SPMD partitioner
    (per-device shapes). A ``pipeline-start`` snapshot shows what the previous pipeline's
    undumped last passes did."""
    if _PARTITIONING.search(snap.after_pass):
        return True
    return snap.after_pass == "pipeline-start" and bool(_PARTITIONING.search(last_pipeline))


def constant_like(snap, name: str) -> bool:
    i = snap.top.get(name)
    if i is None:
        return False
    if i.opcode == "broadcast" and i.operands:
        i = snap.top.get(i.operands[0])
        if i is None:
            return False
    return not i.operands and i.opcode != "parameter"


def shard_of(glob, local, parts: int = 0) -> bool:
    """Whether ``local`` can be the per-device shape of ``glob``: the same element type and
    rank (the SPMD partitioner keeps both; the Shardy round trip changes no shape), no
    dimension larger, and (``parts`` devices) cut into at most that many pieces: on 8
    devices f32[4,32] is no piece of f32[64,32] (fresh 15
    remat_hourglass_shortened_transformer on 8 H100s, dump 0019: Adam's identical broadcasts
    of one bias correction for a f32[64,32] and a f32[32,32] parameter). Tuples element by
    element."""
    if glob.is_tuple or local.is_tuple:
        return (glob.is_tuple and local.is_tuple
                and len(glob.tuple_shapes) == len(local.tuple_shapes)
                and all(shard_of(g, x, parts)
                        for g, x in zip(glob.tuple_shapes, local.tuple_shapes)))
    if not (glob.element_type == local.element_type and glob.rank == local.rank
            and all(x <= g for g, x in zip(glob.dims, local.dims))):
        return False
    pieces = 1
    for g, x in zip(glob.dims, local.dims):
        if 0 < x < g:
            pieces *= -(-g // x)  # the fewest pieces of at most x each
    return not parts or pieces <= parts


def num_parts(prev, cur) -> int:
    """Into how many pieces the step from ``prev`` to ``cur`` may cut an array: 1 where the
    entry parameters and result keep their shapes (the Shardy round trip changes no shape: fresh 15
    remat_hourglass_shortened_transformer on 8 H100s, dump 0018, where identical broadcasts
    of a f32[64,32] and a f32[32,32] parameter's update were crossed), else the module's
    device count (0: not said)."""
    shapes = [[p.shape.text for p in s.module.entry_computation.parameters] +
              [s.module.entry_computation.root_instruction.shape.text] for s in (prev, cur)]
    if shapes[0] == shapes[1]:
        return 1
    v = str(cur.module.attributes.get("num_partitions", "0"))
    return int(v) if v.isdigit() else 0


def unsharded_key(key: tuple) -> tuple:
    """An instruction key (passstep._key) without its ``sharding`` attribute: the round trip
    annotates the instructions it keeps, so a merged twin is found by content alone."""
    return key[:3] + (tuple(kv for kv in key[3] if kv[0] != "sharding"),) + key[4:]


def clone_renames(prev, cur, removed: list[str], added: list[str],
                  c2p: dict[str, str], renamed: dict[str, str]) -> None:
    """The partitioner copies the constants it keeps with HloInstruction::Clone, which
    names the copy ``<name>.clone`` (``constant.1`` -> ``constant.1.clone``), while its own
    new constants (padding values, offsets) of the same value get fresh names that may come
    first in the text. Map the clones before matching by content."""
    gone = set(removed)
    for n in added:
        if not n.endswith(".clone") or n in c2p:
            continue
        stem = n[:-len(".clone")]
        r, a = prev.top.get(stem), cur.top[n]
        if stem in gone and stem not in renamed and r is not None and r.opcode == a.opcode \
                and shard_of(r.shape, a.shape) and \
                (r.literal is None or r.shape != a.shape or r.literal == a.literal):
            c2p[n] = stem
            renamed[stem] = n


def _forwarded(top: dict, name: str) -> str | None:
    """The tuple element a get-tuple-element of a tuple reads (MLIR has no tuples inside a
    function: the round trip forwards ``get-tuple-element(tuple(a, b)), index=1`` to b,
    also through the tuple a call returned once the call inliner inlined it)."""
    i = top.get(name)
    for _ in range(8):
        if i is None or i.opcode != "get-tuple-element" or not i.operands:
            return None
        t = top.get(i.operands[0])
        k = i.index
        if t is None or t.opcode != "tuple" or k is None or k >= len(t.operands):
            return None
        name = t.operands[k]
        i = top.get(name)
        if i is None or i.opcode != "get-tuple-element":
            return name
    return None


def _may_take_index(ptop: dict, ctop: dict, r: Instruction, a: Instruction) -> bool:
    """Whether get-tuple-element ``a`` may be ``r`` renamed (other opcodes: yes): the same
    index, or the element moved. The Shardy round trip reorders a loop's state (gru_scan
    gpu8, ``shardy-xla``, dump 0012 -> 0013: ``region_3``'s index 20, ``f32[16,16]`` read by
    ``dot_general.14``, comes back as index 14, where a ``f32[8,8,16]`` was; index 18 as 20).
    A move shows as a place that no longer fits: the old tuple holds at ``a``'s index
    nothing ``a`` can be, or the new tuple at ``r``'s index nothing ``r`` can be. Where both
    still fit, another index is another value: the round trip re-creates an element that
    algsimp had removed under a new name (gru_scan gpu8 ``region_0``: ``get-tuple-element.19``
    of index 1 is rewritten at algsimp, dump 0006; the round trip's new index-1
    ``get-tuple-element.1``, dump 0013, is not the index-13 ``get-tuple-element.31``, whose
    rename is the index-13 ``get-tuple-element.13``) (gpu4)."""
    if a.opcode != "get-tuple-element" or r.index == a.index or a.index is None or \
            r.index is None or not r.operands or not a.operands:
        return True
    pt, ct = ptop.get(r.operands[0]), ctop.get(a.operands[0])
    if pt is None or ct is None or not pt.shape.is_tuple or not ct.shape.is_tuple:
        return True
    ps, cs = pt.shape.tuple_shapes, ct.shape.tuple_shapes
    if a.index >= len(ps) or r.index >= len(cs):
        return True
    return not shard_of(ps[a.index], a.shape) or not shard_of(r.shape, cs[r.index])


def loose_renames(prev, cur, removed: list[str], added: list[str],
                   c2p: dict[str, str], renamed: dict[str, str]) -> None:
    """Renames across a sharding pass: the same opcode and op_name, reading the same values
    where its operands can be followed (per-device shapes and new operands, such as the
    partitioner's slices and collectives, allowed). Text order is post order, so operands
    come first; among look-alikes (repeated code) the one sharing most operands, then the
    first in order; never one whose shape the added one cannot be a shard of (the
    partitioner's index arithmetic carries the op_name of the instruction it serves). The
    Shardy round trip records the old name of an instruction that had
    no op_name as its op_name: that decides."""
    ptop, ctop = prev.top, cur.top
    left: dict[tuple, list[Instruction]] = {}
    byname: dict[str, Instruction] = {}
    for n in removed:
        if n in renamed:
            continue
        i = ptop[n]
        md = i.metadata
        left.setdefault((i.opcode, md.op_name if md else None), []).append(i)
        byname[n] = i

    def take(n: str, r: Instruction) -> None:
        byname.pop(r.name, None)
        lst = left.get((r.opcode, r.metadata.op_name if r.metadata else None))
        if lst and r in lst:
            lst.remove(r)
        c2p[n] = r.name
        renamed[r.name] = n

    # A look-alike read through operands nothing maps yet (the partitioner's new tuples,
    # slices and collectives) waits while others still take theirs by evidence (fresh 14
    # mixture_of_depths_topk_router on 8 CPUs, dump 0006: the per-device
    # get-tuple-element of layer 0's top-k, reading the partitioner's new tuple, took
    # layer 1's index element, which the get-tuple-element of layer 1's top-k reads by
    # its renamed operand). When nothing can be taken by evidence, one waiting instruction
    # takes its best candidate, and the others look again: the first whose candidate has
    # its very shape (no per-device piece: the partitioner kept that one whole, layer 1's
    # replicated top-k), else the first in text order.
    pending = [n for n in added if n not in c2p]
    parts = num_parts(prev, cur)
    memo: tuple[dict, dict] = ({}, {})  # call stacks of prev's and cur's frames
    for _ in range(_ROUNDS):
        waiting: list[str] = []
        took = False
        for n in pending:
            if n in c2p:
                continue
            best = _loose_pick(prev, cur, ctop[n], c2p, left, byname, True, parts, memo)
            if best is _WAIT:
                waiting.append(n)
            elif best is not None:
                take(n, best)
                took = True
        pending = waiting
        if not pending:
            break
        if not took:  # the first whose best candidate has its very shape, else the first
            picks = [_loose_pick(prev, cur, ctop[n], c2p, left, byname, False, parts, memo) for n in pending]
            k = next((k for k, (n, b) in enumerate(zip(pending, picks))
                      if b is not None and b.shape == ctop[n].shape), 0)
            n = pending.pop(k)
            if picks[k] is not None:
                take(n, picks[k])
    for n in pending:  # (bounded: the rest in text order)
        if n not in c2p:
            best = _loose_pick(prev, cur, ctop[n], c2p, left, byname, False, parts, memo)
            if best is not None:
                take(n, best)


def _same_source(prev, r: Instruction, cur, a: Instruction, memo: tuple[dict, dict]) -> int:
    """1 when ``r`` (of ``prev``) and ``a`` (of ``cur``) come from the same call stack of
    the user's code (file, function and line of every frame), -1 when both stacks are
    known and differ, 0 when either is not. Frame ids are numbered anew in each snapshot;
    the stacks they stand for survive the round trip. Among look-alikes of one op_name
    (the two halves of a swapped loss), the operands the walk can follow may not tell
    them apart, the stacks do: fresh 18 bf16_swav_sinkhorn_swapped_prototypes on 8 H100s,
    dump 0046 (shardy-xla): ``reduce_sum.463`` (line 1348) is ``reduce_sum.385``, not
    ``reduce_sum.386`` (line 1346)."""
    x = call_stack(prev.module.tables, r.metadata.stack_frame_id, memo[0]) if r.metadata else None
    y = call_stack(cur.module.tables, a.metadata.stack_frame_id, memo[1]) if a.metadata else None
    if not x or not y:
        return 0
    return 1 if x == y else -1


_ROUNDS = 64  # evidence rounds at most (each costs one look at every waiting instruction)


_WAIT = object()
# attributes sharding passes never change (slices, padding, windows and sizes they do)
_KEPT_ATTRS = ("dimensions", "direction", "comparison_type", "iota_dimension", "largest",
               "lhs_contracting_dims", "rhs_contracting_dims", "lhs_batch_dims",
               "rhs_batch_dims", "is_stable", "fft_type", "exponent_bits", "mantissa_bits")


def _loose_pick(prev, cur, a: Instruction, c2p: dict[str, str], left: dict, byname: dict,
                may_wait: bool, parts: int, memo: tuple[dict, dict]):
    """The removed instruction the added ``a`` renames (loose_renames), None, or ``_WAIT``
    (``may_wait``: the best candidate shares no operand with ``a`` because some of a's
    operands are not mapped yet)."""
    ptop, ctop = prev.top, cur.top
    md = a.metadata
    op = md.op_name if md else None
    r = byname.get(op) if op else None
    if r is not None and r.opcode == a.opcode and shard_of(r.shape, a.shape, parts):
        return r
    lst = left.get((a.opcode, op))
    if not lst:
        return None
    mapped = [c2p.get(o) for o in a.operands]
    best, score = None, -1  # type: ignore[assignment]
    tied: list[Instruction] = []
    for r in lst:
        if len(r.operands) != len(a.operands):
            continue
        if r.opcode == "parameter" and r.parameter_number != a.parameter_number:
            continue
        if not shard_of(r.shape, a.shape, parts):
            continue  # (the partitioner's own index arithmetic shares op_names)
        if not _may_take_index(ptop, ctop, r, a):
            continue
        if r.literal is not None and r.shape == a.shape and r.literal != a.literal:
            continue  # another constant (only a sliced constant changes its literal)
        if any(r.attrs.get(k) != a.attrs.get(k) for k in _KEPT_ATTRS):
            continue  # another operation (fresh 9 siglip_sigmoid_loss on 8 CPUs, dump 0005:
            # the eye's two iota broadcasts, dimensions={0} and {1}, read interchangeable iotas)
        sc, bad = 0, False
        for po, m in zip(r.operands, mapped):
            if m is None:
                continue
            if m == po or _forwarded(ptop, po) == m:
                sc += 1
            elif not (constant_like(prev, po) and constant_like(prev, m)):
                bad = True  # (the round trip also merges identical constants)
                break
        if bad:
            continue
        # loops3: a get-tuple-element of another index is another value (the
        # partitioner and the round trip keep a loop state's element order; dropping
        # this let while results of one loop trade places: lstm_clip_scan cpu8)
        sc = (r.index == a.index, _same_source(prev, r, cur, a, memo), sc)
        if score == -1 or sc > score:
            best, score, tied = r, sc, [r]
        elif sc == score:
            tied.append(r)
    if best is not None:  # what its users rename decides among twins, and is evidence
        read = _read_by_mapped_users(prev, cur, a, tied, c2p)
        if read:
            return read[0]
    if best is not None and may_wait and (score[2] == 0 or len(tied) > 1) and None in mapped:
        return _WAIT  # (twins sharing the evidence: an unmapped operand or a user may tell)
    if best is not None and len(tied) > 1 and a.operands:  # twins: their users decide
        deep = deep_user_match(prev.users, ptop, cur.users, ctop, a, tied)
        if deep:
            best = tied[deep[0]]
    return best


def _read_by_mapped_users(prev, cur, a: Instruction, tied: list[Instruction],
                          c2p: dict[str, str]) -> list[Instruction]:
    """The tied candidates read, at the same operand position, by what the users of ``a``
    rename, when that tells some apart or confirms the only one left (fresh 24 segnet on 8
    H100s, dump 0018: Adam's ``g * (1 - b2)`` of each f32[16] parameter reads the
    parameter's new reduce-scatter slice and one shared broadcast; every twin ties on its
    operands and on its users' shapes and names, and the first in text order took another
    parameter's; the ``add`` of the second moment, renamed by its other operand, says
    which). Not a per-device piece of a whole instruction that can be the candidate
    (:func:`_piece_of_whole`), nor an element of another index: a loop's state keeps its
    order unless the round trip moved it, and readers renamed in text order do not say
    that it did (fresh 3 gru_scan on 8 H100s, dump 0013)."""
    want = {(c2p[u], k) for u, k in cur.users.get(a.name, ()) if u in c2p}
    if not want:
        return []
    out = [r for r in tied if want & set(prev.users.get(r.name, ()))
           and r.index == a.index and not _piece_of_whole(cur.top, a, r)]
    return out if len(out) == 1 or len(out) < len(tied) else []


# the partitioner's plumbing between a value and the per-device piece a user reads
_RESHARD = ("tuple", "get-tuple-element", "dynamic-slice", "slice", "reshape", "bitcast", "copy")


def _piece_of_whole(ctop: dict, a: Instruction, r: Instruction) -> bool:
    """``a`` is the partitioner's per-device piece of an instruction that has ``r``'s very
    shape (a get-tuple-element of a new tuple of dynamic slices of the whole element): the
    whole one is ``r``; ``a``'s users read the piece (fresh 14 mixture_of_depths_topk_router
    on 8 CPU devices, dump 0006: layer 1's top-k stays whole, its index element
    ``get-tuple-element.4``; the sort reads ``get-tuple-element.5`` of the per-device tuple)."""
    if a.shape == r.shape:
        return False
    seen, todo = set(), list(a.operands)
    for _ in range(16):
        if not todo:
            return False
        x = ctop.get(todo.pop())
        if x is None or x.name in seen:
            continue
        seen.add(x.name)
        if x.opcode == a.opcode and x.shape == r.shape:
            return True
        if x.opcode in _RESHARD:
            todo.extend(x.operands)
    return False
