"""CSE inside the simplification pipeline (XLA's GPU compiler): who merged before a rewrite.

XLA's CPU pipeline runs CSE once the simplification fixed point (algsimp, reshape-mover,
constant folding, DCE, repeated) is reached: identical copies are simplified one by one
and CSE only meets what is left. The GPU pipeline puts CSE *inside* that loop, right after
the first algsimp / reshape-mover / constant-folding round (``simplification.after_cse``
is the fifth dump of the pipeline), and lowers reshapes to bitcasts (layout normalization,
reshape-decomposer), folds transposes into dots and rewrites gemms only much later. Two
consequences, read off the pass dumps of the zoo's H100 programs:

* A copy of an instruction whose identical twin is later turned into a bitcast / layout
  change, or rebuilt as a gemm, was merged into that twin by CSE first: fate ``merged``,
  not "rewritten before CSE could merge them".
* JAX writes a broadcast as ``reshape(broadcast(x))`` with an identity broadcast. The first
  algsimp round deletes the identity broadcast; the outer reshape only becomes a no-op
  later (reshape of reshape), so after that first round two such chains over the same
  ``x`` are identical and CSE merges them: fate ``merged`` into the first, not "no-op
  reshape removed".

Decided from the after module alone: a GPU compile leaves cuBLAS/cuDNN/Triton custom calls,
Triton fusions or GPU backend configs (``operation_queue_id``) behind.
"""

from __future__ import annotations

from ..analysis.backend import compiled_for_gpu
from . import spmd_reshapes
from .cse_walk import ranks_from
from .view import Node, View
from .value_facts import LAYOUT_LIKE

# survivors whose rewrite a late GPU pass does (after the first CSE): layout normalization
# turns reshapes/transposes into bitcasts/copies, transpose folding and the gemm rewriters
# rebuild dots and convolutions
_LATE = LAYOUT_LIKE | {"dot", "convolution"}


def cse_in_simplification(after) -> bool:
    """Whether the after module was compiled by XLA's GPU pipeline (CSE runs inside the
    simplification loop there)."""
    return compiled_for_gpu(after)


def _permuted(x: Node, y: Node) -> bool:
    """``y`` holds ``x``'s dimensions in another order (the same element type)."""
    sx, sy = x.inst.shape, y.inst.shape
    if sx is None or sy is None or sx.is_tuple or sy.is_tuple:
        return False
    return sx.element_type == sy.element_type and list(sx.dims) != list(sy.dims) and \
        sorted(sx.dims) == sorted(sy.dims)


def late_rewrite(sb: Node, fate: str, recip: set[int], nparts: int = 1,
                 paired: bool = False, B: View | None = None, b: Node | None = None,
                 sp: Node | None = None) -> bool:
    """The survivor ``sb`` of identical copies was rewritten by a pass that runs after the
    first CSE of the GPU pipeline: its copies were merged into it before.

    A partitioned GPU program (``nparts`` > 1) meets CSE earlier still: ``spmd-simplify``
    runs algsimp on the global shapes, the partitioner then cuts them, and ``spmd-cleanup``
    runs CSE before the main simplification's algsimp (the Shardy round trip, before the
    partitioner, also keeps one of identical broadcasts: vae_step on 8 H100s, dump 0011,
    ``broadcast.7`` merged into relu's ``max.2``). A broadcast that is only degenerate
    per device (gpt_rope_adamw on 8 H100s: ``mul.561 = f32[8,16,16] broadcast(f32[16,16])``
    is ``f32[1,16,16]`` per device) is rewritten by that later algsimp (dump 0028), after
    CSE merged its copies into the first (dump 0021 ``spmd-cleanup.after_cse``: ``mul.565``
    into ``mul.557``). Twins that the shardings cut differently are no longer identical
    per device and are not merged: a copy that has an after instruction of its own
    (``paired``) was not (transformer_layer on 8 H100s: ``sub.29``/``sub.33`` both
    broadcast the same mean to f32[2,16,32]; per device one is f32[2,16,4], the other
    f32[2,16,32], dump 0021); gpu4.

    Layout normalization, long after the first CSE, rebuilds an instruction whose layout
    is not the default one as the same operation on permuted dimensions (``sp``, the
    survivor's partner: fresh 12 pact_conv_per_channel_qat on one H100, ``div.77 =
    f32[3,3,3,8] broadcast`` becomes an ``f32[8,3,3,3]`` broadcast at dump 0050; its copy
    ``mul.120`` was merged into it at dump 0014)."""
    if fate != "rewritten" or sb.alias >= 0 or sb.idx in recip:
        return False
    if B is not None and nparts == 1 and iota_view(B, sb, wraps=True):
        return False  # rebuilt as an iota by the first algsimp, copy by copy
    if sp is not None and sp.opcode == sb.opcode and nparts == 1 and _permuted(sb, sp):
        return True
    if sp is None and nparts == 1 and B is not None and sb.opcode == "broadcast" and \
            sb.operands and B.nodes[sb.operands[0]].opcode != "constant":
        # the first algsimp round finds nothing to do to a broadcast of a computed value
        # (it acts on broadcasts of literals: x * broadcast(1), sunk scalars); one that is
        # gone later went at layout normalization or with its readers, after CSE merged
        # its copies (fresh 12 talking_heads_rope_block: the rotary table's broadcasts of
        # sin/cos, dump 0014 cse, dump 0050 layout_normalization)
        return True
    if B is not None and b is not None and spmd_early(B, sb, b, nparts):
        return False  # spmd-simplify removes both copies before any CSE (gpu8b)
    return sb.opcode in _LATE or (nparts > 1 and sb.opcode == "broadcast" and not paired)


def spmd_early(B: View, sb: Node, b: Node, nparts: int) -> bool:
    """Both identical reshapes ``sb`` (the CSE survivor) and ``b`` are removed by the
    partitioner's ``spmd-simplify`` pipeline, which runs before any CSE: each was rewritten
    on its own, not merged (:mod:`.spmd_reshapes`)."""
    return nparts > 1 and sb.opcode == "reshape" and \
        {sb.idx, b.idx} <= spmd_reshapes.removed_early(B)


def _chain_key(B: View, n: Node, depth: int = 0) -> object:
    """Structure of an aliased (no-op) chain down to the first real value."""
    if n.alias < 0 or depth > 8 or not n.raw_operands:
        return ("v", n.fp if n.alias < 0 else n.idx)
    return (n.opcode, n.dims, n.inst.dimensions,
            _chain_key(B, B.nodes[n.raw_operands[0]], depth + 1))


def merged_before_main_algsimp(survivor: str) -> str:
    """The reason of a copy merged in a partitioned GPU program (see :func:`late_rewrite`)."""
    return (f"identical to {survivor}: merged before the main algebraic simplification "
            f"rewrote {survivor} (the Shardy round trip and the partitioner's cleanup CSE "
            "keep one of identical instructions)")


def chain_twins(B: View, nparts: int = 1) -> dict[int, int]:
    """Alias node -> the first identical chain it is merged into (see the module text).
    Only chains whose own step is not a no-op (the node changes its operand's shape):
    algsimp removes a direct no-op in its first round, before CSE.

    None in a partitioned program (``nparts`` > 1): its ``spmd-simplify`` pipeline runs
    algsimp to a fixed point before the first CSE (``spmd-cleanup``), and the chains are
    removed one by one (transformer_layer on 8 H100s, dump 0007: ``div.34 =
    reshape(identity broadcast)`` forwarded by algsimp itself; gpu4)."""
    if nparts > 1:
        return {}
    groups: dict[tuple, list[int]] = {}
    for n in B.nodes:
        if n.alias < 0 or not n.raw_operands or n.opcode not in ("reshape", "broadcast",
                                                                 "transpose"):
            continue
        o = B.nodes[n.raw_operands[0]]
        if o.dims == n.dims:
            continue  # a direct no-op
        groups.setdefault((n.ctx, n.site is not None, _chain_key(B, n)), []).append(n.idx)
    out: dict[int, int] = {}
    for g in groups.values():
        for i in g[1:]:
            out[i] = g[0]
    return out


def post_order(B: View) -> dict[int, int]:
    """Node -> its rank in the post order XLA's CSE walks once calls are inlined: from each
    instruction without users, in instruction order, operands first (in operand order).

    Users as the module has them: an instruction read only by a no-op view (which the view
    sees through, and algsimp replaces by it) still has a reader then, and is no start of
    the walk (fresh 12 schnet_energy_force_matching on one H100: the reshapes read only by
    identity broadcasts started the walk in the backward pass, and the force term's copies
    ranked before the energy term's, which CSE keeps, dump 0013)."""
    nodes = B.nodes
    read: set[int] = set()
    for n in nodes:
        read.update(n.raw_operands)
        if n.alias >= 0:  # an inlined callee's root stands for its call (and is read)
            read.add(n.alias)
    # algsimp's first round turns reduce(negate(x)) into negate(reduce(x)) and leaves the
    # old negate dead, where it stood: XLA's walk starts there, before the root (unseen
    # resnet_block_bn on one H100, dump 0010: neg.11 and neg.13 without users)
    moved = [n.idx for n in nodes if n.opcode == "negate" and n.alias < 0 and n.users and
             all(nodes[u].opcode == "reduce" for u in n.users)]
    return ranks_from(B, moved + [B.resolve(n.idx) for n in nodes
                                  if not n.users and n.idx not in read])


def iota_rebuilt(B: View, n: Node) -> bool:
    """An iota read only by reshapes and broadcasts: algebraic simplification rewrites
    ``reshape(iota)`` and ``broadcast(iota)`` as a new iota of the result's shape (or a
    mixed-radix sum of iotas) in its first round, so the old iota loses its users before
    CSE could merge it with an identical one (gpt_rope_adamw's H100 dump 0010: ``iota.20``
    gone, ``iota.38 = s32[16,1] iota()`` in its reshape's place)."""
    return n.opcode == "iota" and bool(n.users) and all(
        B.nodes[u].opcode in ("reshape", "broadcast") for u in n.users)


def iota_view(B: View, n: Node, wraps: bool = False) -> bool:
    """A reshape/broadcast over an iota (through other reshapes/broadcasts): algsimp rebuilds
    it as an iota of its own shape (moe_capacity's dump 0017: ``eq.14 = broadcast(reshape(
    broadcast(iota)))`` -> ``iota.16``), so CSE does not merge it as it stands. ``wraps``:
    also through JAX's negative-index wrap of an iota (:func:`wrapped_index`)."""
    for _ in range(6):
        if n.opcode not in ("reshape", "broadcast") or not n.raw_operands:
            return False
        n = B.nodes[n.raw_operands[0]]
        if wraps and n.opcode == "select":
            x = wrapped_index(B, n)
            n = B.nodes[x] if x >= 0 else n
        if n.opcode == "iota":
            return True
    return False


def wrapped_index(B: View, n: Node) -> int:
    """``n`` is JAX's wrap of negative indices, ``select(x < 0, x + size, x)``, over an iota
    ``x``: algsimp knows an iota is never negative, folds the compare to false and the
    select to ``x`` (fresh 4 infonce_temperature on one H100, ``select_n.4..7`` of
    ``take_along_axis``'s indices, and the reshapes over them, each an iota at the first
    algsimp, dump 0010, before CSE could merge the copies). ``x``'s index, else -1."""
    if n.opcode != "select" or len(n.raw_operands) != 3:
        return -1
    p, _t, f = (B.nodes[i] for i in n.raw_operands)
    if p.opcode != "compare" or p.inst.attrs.get("direction") != "LT" or \
            len(p.raw_operands) != 2 or p.raw_operands[0] != f.idx:
        return -1
    z = B.nodes[p.raw_operands[1]]
    while z.opcode == "broadcast" and z.raw_operands:
        z = B.nodes[z.raw_operands[0]]
    if z.opcode != "constant" or str(z.inst.literal) not in ("0", "0.0"):
        return -1
    x = f
    while x.opcode in ("reshape", "broadcast") and x.raw_operands:
        x = B.nodes[x.raw_operands[0]]
    return f.idx if x.opcode == "iota" else -1
