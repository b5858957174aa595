"""Reshapes a partitioned GPU program loses before its first CSE (``spmd-simplify``).

XLA's SPMD partitioner first runs the ``spmd-simplify`` pipeline on the global shapes:
algebraic simplification, reshape moving and constant folding, repeated to a fixed point,
with no CSE in it. The first CSE is ``spmd-cleanup``'s, after partitioning; layout
normalization and the gemm rewriters, which turn the remaining reshapes into bitcasts,
run much later. Of identical reshape copies, those ``spmd-simplify`` removes are each
rewritten on their own before any CSE meets them; only the rest are merged. Read off the
8-H100 pass dumps:

* JAX writes a broadcast as ``reshape(x)`` -> identity broadcast -> ``reshape`` back. The
  first algsimp round removes the identity broadcast, the next one merges the reshape of a
  reshape into ``x`` (gpt_rope_adamw dumps 0006/0008: ``broadcast_in_dim.96 =
  f32[1,16,16] reshape(cos.6)`` read only by ``mul.556 = f32[16,16] reshape(...)``; both
  gone in dump 0008, as is its twin ``broadcast_in_dim.99``). In the diff's view such a
  reshape has no reader left (its readers see through it).
* The reshape mover sinks a reshape below an elementwise instruction whose other operands
  are constants or scalar broadcasts, when every reader of the reshape is such an
  instruction (transformer_layer dump 0006: ``div.19 = divide(reshape(reduce_sum.91),
  broadcast(c))`` becomes ``reshape.40(multiply.15)``); algsimp then merges the reshape
  that read it, ``sub.28 = reshape(identity broadcast(div.19))``, with the sunk one, and
  the pair is the identity: dump 0007 has ``sub.29 = broadcast(multiply.15)``, and
  ``sub.28`` and its twin ``sub.32`` are both gone before CSE. One level sinks per mover
  run, and a reshape with a reader that cannot move stays (``rsqrt.3``, read by ``div.29``
  too, keeps ``mul.60``/``mul.79``, which CSE merges in dump 0020).
* The sunk reshape itself is replaced by the mover (diffusion_block ``broadcast_in_dim.8``).

:func:`removed_early` simulates these rounds on the before view (operands resolved, so
identity broadcasts and no-op reshape chains are already gone) and returns the reshapes
``spmd-simplify`` removes.
"""

from __future__ import annotations

import weakref

from .value_facts import ELEMENTWISE
from .view import Node, View

_CACHE: "weakref.WeakKeyDictionary[View, frozenset[int]]" = weakref.WeakKeyDictionary()


def _shape(n: Node) -> tuple[int, ...]:
    return n.inst.shape.dims


def removed_early(B: View) -> frozenset[int]:
    """Reshape nodes of a partitioned program that ``spmd-simplify`` removes (see the
    module text). Cached per view."""
    got = _CACHE.get(B)
    if got is None:
        gone, sunk = _simulate(B)
        got = _CACHE[B] = frozenset(gone)
        _SUNK[B] = frozenset(sunk)
    return got


def moved_by_reshape_mover(B: View) -> frozenset[int]:
    """Elementwise nodes the reshape mover rebuilds below their operands' reshapes in
    ``spmd-simplify`` (gpt_rope_adamw dump 0007: ``add_any.70 = add(reshape.275,
    reshape.276)``, algsimp's reshapes of two unit-dimension reduces, becomes
    ``add_any.1`` on the reduces' operands and one reshape)."""
    removed_early(B)
    return _SUNK[B]


_SUNK: "weakref.WeakKeyDictionary[View, frozenset[int]]" = weakref.WeakKeyDictionary()


def _simulate(B: View) -> tuple[set[int], set[int]]:
    nodes = B.nodes
    trivial = bytearray(len(nodes))
    for n in nodes:
        if n.alias >= 0 or n.inst.shape.is_tuple:
            continue
        if n.opcode == "constant" or (n.opcode == "broadcast" and n.operands and
                                       nodes[n.operands[0]].inst.shape.rank == 0):
            trivial[n.idx] = 1
    # src: node -> the shape it is a reshape of (a real reshape of a value the mover does
    # not reshape for free, or an elementwise node the mover sank reshapes below)
    src: dict[int, tuple[int, ...]] = {}
    real: set[int] = set()
    for n in nodes:
        if n.alias < 0 and (n.opcode == "reshape" or _unit_reduce(B, n)) and n.operands and \
                not n.inst.shape.is_tuple and not trivial[n.operands[0]] and \
                nodes[n.operands[0]].opcode != "iota":  # algsimp makes reshape(iota) an iota
            src[n.idx] = _shape(nodes[n.operands[0]])
            real.add(n.idx)
    gone: set[int] = {n.idx for n in nodes if n.alias < 0 and n.opcode == "reshape"
                      and not n.users and n.operands}
    sunk: set[int] = set()
    for _ in range(8):
        cand: dict[int, tuple[int, ...]] = {}
        for n in nodes:
            if n.alias >= 0 or n.idx in src or n.opcode not in ELEMENTWISE or \
                    n.inst.shape.is_tuple or n.inst.shape.rank == 0 or not n.operands:
                continue
            s = None
            ok = True
            for o in n.operands:
                if o in src:
                    if s is None:
                        s = src[o]
                    elif src[o] != s:
                        ok = False
                        break
                elif not trivial[o]:
                    ok = False
                    break
            if ok and s is not None:
                cand[n.idx] = s
        changed = True
        while changed:  # a reshape moves only when every reader of it moves
            changed = False
            for i in list(cand):
                if any(o in src and any(u not in cand for u in nodes[o].users)
                       for o in nodes[i].operands):
                    del cand[i]
                    changed = True
        if not cand:
            break
        for i, s in cand.items():
            for o in nodes[i].operands:
                if o in real:
                    gone.add(o)  # replaced by the reshape below its readers
            src[i] = s
            sunk.add(i)
        # algsimp: a reshape of a sunk reshape is one reshape; the identity when the shapes
        # agree
        for n in nodes:
            if n.idx in real and n.idx not in gone and n.operands[0] in cand:
                gone.add(n.idx)
                if src[n.operands[0]] != _shape(n):
                    src[n.idx] = src[n.operands[0]]
    return gone, sunk


def _unit_reduce(B: View, n: Node) -> bool:
    """A reduce over dimensions of size 1: algsimp's first round makes it a reshape."""
    if n.opcode != "reduce" or len(n.raw_operands) != 2 or n.inst.shape.is_tuple:
        return False
    o = B.nodes[n.raw_operands[0]]
    return not o.inst.shape.is_tuple and \
        o.inst.shape.num_elements == n.inst.shape.num_elements


def operand_value(fb, f, b: Node) -> bool:
    """A reshape of a partitioned GPU program read only by reshapes back to its operand's
    shape (no reader left in the view): ``spmd-simplify``'s algsimp removed the pair, and
    its value is its operand's (gpt_rope_adamw: ``broadcast_in_dim.96 = reshape(cos.6)``
    is gone in dump 0008, its readers read ``cos.6``, which the final module computes in
    ``loop_cosine_fusion``). Sets ``f`` (fate "rewritten", where the operand lives) and
    returns True, else False."""
    if not (fb.gpu_cse and fb.nparts > 1) or b.opcode != "reshape" or b.users or \
            len(b.operands) != 1 or b.idx not in removed_early(fb.B) or \
            not _read_by_reshapes(fb.B, b):
        return False
    src = fb.B.nodes[b.operands[0]]
    sf = fb._survivor_fate(src)
    if sf.fate not in ("kept", "fused", "rewritten", "merged") or not (sf.after or sf.fusion):
        return False
    f.fate = "rewritten"
    f.after, f.fusion, f.fusion_kind = sf.after, sf.fusion, sf.fusion_kind
    f.reason = (f"reshape read only by reshapes back to {src.name}'s shape: algebraic "
                f"simplification removed the pair before partitioning; the value is "
                f"{src.name}'s" + (f" (in {sf.fusion})" if sf.fusion else ""))
    return True


_READERS: "weakref.WeakKeyDictionary[View, dict[int, list[int]]]" = weakref.WeakKeyDictionary()


def _read_by_reshapes(B: View, b: Node) -> bool:
    """Every reader of ``b`` in the module, through identity broadcasts, is a reshape (not,
    e.g., a reduce over the unit dimensions, which the reshape mover rewrites: resnet
    bottleneck ``reshape.21`` read by ``reduce_sum.311``, moved in dump 0012)."""
    readers = _READERS.get(B)
    if readers is None:
        readers = _READERS[B] = {}
        for n in B.nodes:
            for o in n.raw_operands:
                readers.setdefault(o, []).append(n.idx)
    todo, seen = [b.idx], 0
    while todo and seen < 64:
        i = todo.pop()
        seen += 1
        rs = readers.get(i, [])
        if i == b.idx and not rs:
            return False
        for r in rs:
            n = B.nodes[r]
            if n.opcode == "broadcast" and n.alias == i:
                todo.append(r)
            elif n.opcode != "reshape":
                return False
    return not todo


def moved_fate(fb, f, b: Node) -> bool:
    """An elementwise instruction of a partitioned GPU program that the reshape mover
    rebuilds below its operands' reshapes (:func:`moved_by_reshape_mover`): "rewritten",
    named where its partner lives. Not for copies of inlined calls (the oracle follows the
    inlined copy)."""
    if not (fb.gpu_cse and fb.nparts > 1) or b.site is not None or \
            b.idx not in moved_by_reshape_mover(fb.B):
        return False
    f.fate = "rewritten"
    y = fb.m.b2a[b.idx]
    if y >= 0:
        fb._set_after(f, fb.A.nodes[y])
    f.reason = (f"{b.opcode} rebuilt by the reshape mover below the reshapes of its operands "
                "(partitioner's spmd-simplify)" + (f"; now {f.after}" if f.after else "")
                + (f" in {f.fusion}" if f.fusion else ""))
    return True
