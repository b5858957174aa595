"""Twin dots told apart by which dimensions they contract.

The backward pass of attention computes several dots from one value with one op_name and
source line: ``dQ = dS . K`` contracts the scores' key dimension, ``dK = dS^T . Q`` their
query dimension (zoo transformer_layer on 8 H100s: ``dot_general.37`` and ``.38`` both read
``div.37 = f32[2,4,16,16]``, contracting dimension 2 and 3). The rewrite step's scores
(paired neighbours, anchors) tie on such twins whenever the other operands' homes are not
paired yet, and the first candidate used to win: a confident swap.

Which dimensions a dot sums over is what the dot *is*; layout assignment, the partitioner
and the gemm rewriters do not change it. They do change the shapes around it: a sharded
dimension shrinks (to 1 when the shards are as many as its size, and algebraic
simplification then squeezes it), batch dimensions are merged, operands are bitcast to
another order. So an operand is summarised by the order of its contracting (``c``) and
free (``f``) dimensions, leaving out batch dimensions and unit dimensions and merging
repeats: ``f32[2,4,16,16]`` with batch {0,1}, contracting {2} reads ``cf``; the per-device
``f32[2,16,16]`` with batch {0}, contracting {1} reads ``cf`` too, contracting {2} ``fc``.

Only a tie is narrowed, and only when some candidates agree on more operands than the rest
(in the dot's own order or with its operands swapped: algebraic simplification rebuilds
``transpose(dot(a, b))`` as ``dot(b, a)``). Twins that agree equally (repeated layers) are
left to the other evidence.
"""

from __future__ import annotations

from ..analysis.kernels import dims_attr
from .view import Node, View


def _labels(shape, batch: set[int], contract: set[int]) -> str | None:
    dims = getattr(shape, "dims", None)
    if dims is None or getattr(shape, "is_tuple", False):
        return None
    if any(d >= len(dims) for d in batch | contract):
        return None
    out: list[str] = []
    for i, size in enumerate(dims):
        if size == 1 or i in batch:
            continue
        lab = "c" if i in contract else "f"
        if not out or out[-1] != lab:
            out.append(lab)
    return "".join(out)


def contraction_labels(view: View, n: Node) -> tuple[str, str] | None:
    """(lhs, rhs) orders of contracting and free dimensions of a ``dot`` (None: not a dot
    with two array operands)."""
    ops = n.raw_operands  # the operands as written (fusion parameters keep their shape)
    if n.opcode != "dot" or len(ops) != 2:
        return None
    a = n.inst.attrs
    out = []
    for k, side in enumerate(("lhs", "rhs")):
        shape = view.nodes[ops[k]].inst.shape
        lab = _labels(shape, set(dims_attr(a.get(f"{side}_batch_dims"))),
                      set(dims_attr(a.get(f"{side}_contracting_dims"))))
        if lab is None:
            return None
        out.append(lab)
    return out[0], out[1]


def _agreement(m, b: Node, lb: tuple[str, str], a: Node, la: tuple[str, str], key) -> int:
    """How many of ``b``'s operands ``a`` reads (their paired partners, or fusion's copies
    of them) contracted the same way; -1 where ``a`` reads none of them. Only operands
    known to be the same value are compared: which position an operand takes may change
    (``dot(b, a)``), and an operand the rewriters bitcast to another order (a slice of a
    combined all-reduce) reads differently although it is the same array."""
    b2a = m.b2a
    akeys = [key(o) for o in a.raw_operands]
    seen, agree = 0, 0
    for k, x in enumerate(b.raw_operands[:2]):
        y = b2a[m.before.resolve(x)]
        if y < 0:
            continue
        ky = key(y)
        for j, z in enumerate(akeys[:2]):
            if z == ky:
                seen += 1
                agree += lb[k] == la[j]
                break
    return agree if seen else -1


def prefer_same_contraction(m, b: int, ties: list[int], key=None) -> list[int]:
    """``ties`` (after candidates of the before dot ``b`` that nothing else told apart)
    narrowed to those contracting a shared operand the same way as ``b``, when that tells
    them apart; else ``ties`` unchanged."""
    B, A = m.before, m.after
    nb = B.nodes[b]
    lb = contraction_labels(B, nb)
    if lb is None or len(ties) < 2:
        return ties
    key = key or _copy_key(A)
    scores = []
    for y in ties:
        la = contraction_labels(A, A.nodes[y])
        if la is None:
            return ties
        scores.append(_agreement(m, nb, lb, A.nodes[y], la, _resolved(A, key)))
    if min(scores) < 0:
        return ties  # some candidate reads none of b's values: nothing to compare
    top = max(scores)
    best = [y for y, s in zip(ties, scores) if s == top]
    return best if len(best) < len(ties) else ties


def _resolved(view: View, key):
    """``key`` applied to what an operand as written stands for (a fusion parameter: the
    kernel's operand outside)."""
    return lambda y: key(view.resolve(y))


def _copy_key(view: View):
    """After node -> what counts as its value: fusion copies one producer into several
    kernels (each gemm kernel gets its own copy of a scaling multiply), and which copy the
    cascade paired the before producer with is arbitrary."""
    nodes = view.nodes

    def key(y: int):
        n = nodes[y]
        if n.fusion >= 0 and n.opcode != "parameter" and n.fp:
            return ("copy", n.fp)
        return y
    return key


def settle_twin_dots(m, b: Node, cands: list[int], best: int, ties: list[int],
                     score) -> tuple[int, list[int]]:
    """The rewrite step's choice for the before dot ``b``: its candidates scored again with
    fusion's copies of one value counted as that value. A single best by that score wins
    (unless the contracted dimensions speak for the first choice: fresh 7
    parallel_attn_mlp_block on 8 H100s, ``dot_general.39`` scored higher with the wrong
    twin only because its operand's partner was the copy in that twin's kernel); where it
    ties, the contracted dimensions decide (:func:`prefer_same_contraction`). Returns
    ``(best, ties)``, unchanged where that decides nothing."""
    if len(cands) < 2:
        return best, ties
    key = _copy_key(m.after)
    A = m.after
    fair = [score(m, b, A.nodes[y], key) + (A.nodes[y].mdims == b.mdims) for y in cands]
    top = max(fair)
    even = [y for y, s in zip(cands, fair) if s == top]
    if len(even) == 1 and even[0] != best:  # the best only by which copy was paired
        if prefer_same_contraction(m, b.idx, [even[0], best], key) != [best]:
            return even[0], [even[0]]
        return best, ties
    if len(even) < 2:
        return best, ties
    narrowed = prefer_same_contraction(m, b.idx, even, key)
    if len(narrowed) == len(even):
        return best, ties
    if best in narrowed:
        return best, [y for y in ties if y in narrowed] or [best]
    return narrowed[0], narrowed


def contraction_fits(m, b: int, a: int) -> bool:
    """May the before dot ``b`` pair with the after dot ``a`` (any step of the cascade)? Not
    where they sum over different dimensions of both operands (in either order): on a
    partitioned module algebraic simplification squeezes a sharded dimension away, and a
    dot's per-device shape can equal another dot's global one (fresh 3 vit_patch_step on 8
    H100s: the weight gradient ``dot_general.39 = f32[16,16]``, contracting batch and
    sequence, and ``dot.68 = f32[16,16]``, the per-device input gradient
    ``dot_general.40 = f32[8,16,16]`` of the same op_name and line). Other nodes fit."""
    B, A = m.before, m.after
    nb, na = B.nodes[b], A.nodes[a]
    if nb.opcode != "dot" or na.opcode != "dot":
        return True
    lb, la = contraction_labels(B, nb), contraction_labels(A, na)
    if lb is None or la is None:
        return True
    own = (lb[0] == la[0]) + (lb[1] == la[1])
    swapped = (lb[0] == la[1]) + (lb[1] == la[0])
    return max(own, swapped) > 0
