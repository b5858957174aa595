"""Global and per-device shapes of a partitioned (SPMD) program are the same data.

XLA's SPMD partitioner rewrites a module of global shapes (``f32[256,128]`` with
``sharding={devices=[8,1]<=[8]}``) into the program one device runs (``f32[32,128]``), with
``num_partitions=N`` in the module header. A before instruction and the after instruction
that computes its shard are the same operation on the same data: not a reshape, not a
layout change, not "-87% bytes". This module recognises that relation so that the fates and
analyses can say "partitioned N ways" instead.

The relation, per array: same element type and rank, every per-device dim divides (or is
the padded ceiling of) the global dim, and the number of pieces, global elements over
per-device elements, is > 1 and divides the number of partitions. When the before
instruction carries a ``sharding`` attribute, its tile dims must give the per-device dims
exactly.
"""

from __future__ import annotations

from itertools import permutations

import re

from ..analysis.sharding import parse_sharding
from ..hlo.model import Instruction, Module, Shape

_LAYOUT = re.compile(r"\](\{[^}]*\})")


def num_partitions(before: Module, after: Module) -> int:
    """N of ``num_partitions=N`` (after, else before); 1 when the program is not partitioned."""
    for m in (after, before):
        v = m.attributes.get("num_partitions", "")
        if v.isdigit() and int(v) > 1:
            return int(v)
    return 1


def shard_ways(global_shape: Shape, local: Shape, nparts: int,
               sharding_text: str | None = None) -> int:
    """Into how many pieces ``global_shape`` was cut to give ``local`` (0: not a shard of it)."""
    if nparts <= 1:
        return 0
    if global_shape.is_tuple or local.is_tuple:
        return _tuple_ways(global_shape, local, nparts)
    if not _same_type(global_shape.element_type, local.element_type) or \
            global_shape.rank < local.rank:
        return 0
    if global_shape.rank != local.rank:
        return _squeezed_ways(global_shape.dims, local.dims, nparts)
    ge, le = global_shape.num_elements, local.num_elements
    if le <= 0 or ge <= le:
        return 0
    sh = parse_sharding(sharding_text) if sharding_text else None
    if sh is not None and sh.kind == "tiled" and len(sh.tile_dims) == global_shape.rank:
        for g, l, t in zip(global_shape.dims, local.dims, sh.tile_dims):
            if l != -(-g // t):
                return 0
        return sh.ways
    ways = 1
    for g, l in zip(global_shape.dims, local.dims):
        if l == g:
            continue
        if l <= 0 or l > g:
            return 0
        w = -(-g // l)
        if -(-g // w) != l:
            return 0
        ways *= w
    if ways <= 1 or nparts % ways:
        return 0
    return ways


def _tuple_ways(global_shape: Shape, local: Shape, nparts: int) -> int:
    """A tuple is a shard when each element is equal or a shard of its global element; the
    ways are the largest cut among them (0 when nothing is cut or an element does not fit)."""
    if not (global_shape.is_tuple and local.is_tuple) or \
            len(global_shape.tuple_shapes) != len(local.tuple_shapes):
        return 0
    ways = 0
    for g, loc in zip(global_shape.tuple_shapes, local.tuple_shapes):
        if g == loc or (g.dims == loc.dims and g.element_type == loc.element_type):
            continue
        w = shard_ways(g, loc, nparts)
        if not w:
            return 0
        ways = max(ways, w)
    return ways


def _squeezed_ways(g: tuple[int, ...], loc: tuple[int, ...], nparts: int) -> int:
    """Ways, when dims cut down to one piece per device were dropped (``f32[8,128]`` split 8
    ways on dim 0 is ``f32[128]`` per device): align the dims left to right."""
    ways, j = 1, 0
    for d in g:
        if j < len(loc) and 0 < loc[j] <= d:
            w = -(-d // loc[j])
            if -(-d // w) == loc[j]:
                ways *= w
                j += 1
                continue
        if d > nparts:
            return 0
        ways *= d  # a dim cut into pieces of one, then squeezed away
    if j != len(loc) or ways <= 1 or nparts % ways:
        return 0
    return ways


def _same_type(g: str | None, loc: str | None) -> bool:
    """The same element type, or a narrow float the backend computes in f32 (float
    normalization widens bf16/f16 instructions in place: bf16[16,64] -> f32[2,64] is still
    a shard; shard2)."""
    return g == loc or (loc == "f32" and g in ("bf16", "f16"))


def widened_shard(b: Instruction, a: Instruction, nparts: int) -> bool:
    """``a`` is a per-device shard of ``b`` that float normalization also widened
    (bf16 -> f32)."""
    return nparts > 1 and not b.shape.is_tuple and not a.shape.is_tuple and \
        b.shape.element_type != a.shape.element_type and \
        shard_ways(b.shape, a.shape, nparts) > 0


def note(b: Instruction, a: Instruction, nparts: int) -> str | None:
    """'partitioned N ways (global -> per device)' when ``a`` computes ``b``'s shard."""
    if nparts <= 1:
        return None
    ways = shard_ways(b.shape, a.shape, nparts,
                      None if b.shape.is_tuple else b.attrs.get("sharding"))
    if ways and not b.shape.is_tuple and b.shape.rank != a.shape.rank:
        return (f"partitioned {ways} ways, size-1 dims squeezed ({b.shape.dims_text} global -> "
                f"{a.shape.dims_text} per device)")
    if not ways:
        ways = _reshaped_ways(b.shape, a.shape, nparts)
        if not ways:
            return None
        return (f"partitioned {ways} ways and reshaped ({b.shape.dims_text} global -> "
                f"{a.shape.dims_text} per device)")
    return (f"partitioned {ways} ways ({b.shape.dims_text} global -> "
            f"{a.shape.dims_text} per device)")


def holds_shape(glob: Shape, local: Shape, nparts: int) -> bool:
    """Whether an after array of shape ``local`` can hold a before value of shape ``glob``:
    the same dims, or a per-device shard of them."""
    return glob.dims_text == local.dims_text or shard_ways(glob, local, nparts) > 0


def plain(part: str | None) -> bool:
    """Whether a :func:`note` says the after instruction is the same operation on a shard
    (same rank): a squeezed or reshaped shard is not. Passes after the partitioner
    (algsimp, reshape-mover) drop the size-1 dims of per-device shapes by rebuilding the
    operation on reshaped operands: XLA's pass dumps show a new instruction there."""
    return part is not None and "reshaped" not in part and "squeezed" not in part


def _reshaped_ways(g: Shape, loc: Shape, nparts: int) -> int:
    """A shard that a later pass also reshaped (or widened bf16 -> f32): the element
    count shrank by a factor > 1 that divides the number of partitions."""
    if g.is_tuple or loc.is_tuple or loc.num_elements <= 0:
        return 0
    same_kind = g.element_type == loc.element_type or (
        (g.element_type or "")[:1] in "bf" and (loc.element_type or "")[:1] in "bf")
    if not same_kind or g.num_elements % loc.num_elements:
        return 0
    r = g.num_elements // loc.num_elements
    return r if r > 1 and nparts % r == 0 else 0


def same_entry_layouts(before_text: str, after_text: str) -> bool:
    """True when two entry_computation_layouts differ only in dims (global vs per device)."""
    return _LAYOUT.findall(before_text) == _LAYOUT.findall(after_text)


def per_device_bytes(m, nparts: int, not_kernels: set) -> int:
    """An estimate of the bytes the before module's kernels would move on one device.

    Each before array counts its global bytes divided by the pieces it is cut into: the
    ratio to its matched after instruction when that is a shard of it; otherwise the
    largest cut among its operands that divides its element count (sharding flows from
    operands to results); replicated arrays count whole. The before and after figures of
    a partitioned diff are then comparable, per device.
    """
    B, A = m.before, m.after
    ways = [1] * len(B.nodes)
    for n in B.nodes:  # operands come before their users in a view
        y = m.b2a[n.idx]
        w = 0
        if y >= 0:
            w = shard_ways(n.inst.shape, A.nodes[y].inst.shape, nparts,
                           n.inst.attrs.get("sharding"))
        if not w:
            elems = n.inst.shape.num_elements if not n.inst.shape.is_tuple else 0
            cands = [ways[o] for o in n.raw_operands if 0 <= o < n.idx]
            w = max((c for c in cands if elems and elems % c == 0), default=1)
        ways[n.idx] = w or 1

    def local(idx: int) -> int:
        return B.nodes[idx].inst.shape.byte_size // ways[idx]

    total = 0
    for n in B.nodes:
        if n.top and n.fusion < 0 and n.home == n.idx and n.opcode not in not_kernels \
                and n.alias < 0:
            total += local(n.idx) + sum(local(o) for o in dict.fromkeys(n.raw_operands)
                                        if 0 <= o < len(B.nodes))
    return total


def collective_reason(inst: Instruction) -> str | None:
    """Why a collective appears in the optimized module (None for other instructions)."""
    op = inst.opcode
    base = op[:-len("-start")] if op.endswith("-start") else op
    if base not in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                    "collective-permute", "collective-broadcast", "ragged-all-to-all"):
        return None
    parts = len(inst.operands)
    what = f"{base}" + (" (async start)" if op.endswith("-start") else "")
    if parts > 1 and base != "collective-permute":
        what += f" of {parts} arrays (merged {parts} into one by the combiner)"
    origin = "the program's own collective" if inst.op_name and "shard_map" in inst.op_name \
        else "SPMD partitioning"
    return f"{what}, added by {origin}; see the collectives section"


def may_be_piece(glob: Shape | None, local: Shape | None, parts: int = 0) -> bool:
    """Whether an array of shape ``local`` (same rank) can be a per-device piece of one of
    shape ``glob``: every dim equal, or the (padded) ceiling of the global dim cut into
    some whole number of pieces (shard4). f32[12,16] is no piece of f32[16,16]: no cut of
    16 gives 12. With ``parts`` devices the cuts of all dims together make at most that
    many pieces: on 8 devices f32[1,32] is no piece of f32[64,32] (fresh 15
    stmoe_top2_capacity_zloss on 8 H100s: a weight's Adam update was paired with a bias's
    f32[1,32] one). Ranks that differ, tuples and unknown shapes are not judged (True)."""
    if glob is None or local is None or glob.is_tuple or local.is_tuple or \
            len(glob.dims) != len(local.dims):
        return True
    if _pieces(glob.dims, local.dims, parts):
        return True
    # layout normalization gives an array its physical (major-to-minor) dims: f32[32,64]{0,1}
    # becomes f32[64,32] (bf16_loss_scaling cpu8: div.9 lives on as multiply.24 f32[64,4])
    lay = glob.layout
    if lay is not None and len(lay.minor_to_major) == len(glob.dims):
        return _pieces(tuple(glob.dims[i] for i in reversed(lay.minor_to_major)), local.dims,
                       parts)
    return False


def _pieces(gdims, ldims, parts: int = 0) -> bool:
    total = 1
    for g, l in zip(gdims, ldims):
        if l == g or g <= 0:
            continue
        if l <= 0 or l > g:
            return False
        t = -(-g // l)  # the fewest pieces with at most l each; then ceil(g / t) == l?
        if -(-g // t) != l:
            return False
        total *= t
    return not parts or total <= parts


def may_be_permuted_piece(glob: Shape | None, local: Shape | None, parts: int = 0) -> bool:
    """may_be_piece, in any order of ``glob``'s dimensions: GPU layout normalization
    rebuilds an operation on its physical (major-to-minor) shape, which the before module's
    layout does not tell (fresh 14 efficientnet_mbconv_se_drop_path on 8 H100s:
    ``mul.276 = f32[3,3,1,64]`` is ``multiply.61.13 = f32[64,3,3,1]``). Ranks over 6 are not
    judged (True)."""
    if glob is None or local is None or glob.is_tuple or local.is_tuple or \
            len(glob.dims) != len(local.dims) or len(glob.dims) > 6:
        return True
    return any(_pieces(p, local.dims, parts) for p in set(permutations(glob.dims)))
