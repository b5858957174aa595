"""Candidates of the matcher's rewrite step (match._rewrites): the open after instructions
an open before instruction may have become, found by the op_name and source line passes
keep, and narrowed by what no pass does (a loop never becomes arithmetic, a collective
never holds a non-collective's value, a run-time value never a compile-time constant on a
partitioned module, a regrouped divide nothing)."""

from __future__ import annotations

from collections import defaultdict

from . import constvals, splitk
from .dot_dims import contraction_fits
from .fused_copies import copies_of_paired
from .partition import may_be_permuted_piece, may_be_piece
from .regrouped_divides import regrouped
from .view import Node

SCAN_CAP = 48
_COLLECTIVES = {"all-gather", "all-reduce", "reduce-scatter", "all-to-all",
                "collective-permute", "all-gather-start", "all-gather-done",
                "all-reduce-start", "all-reduce-done", "collective-permute-start",
                "collective-permute-done", "collective-broadcast", "ragged-all-to-all"}
_LOOPS = {"while", "conditional"}
_SHAPE_OPS = {"reshape", "broadcast", "transpose", "convert", "bitcast", "copy", "slice",
              "concatenate", "pad", "reverse", "bitcast-convert", "iota", "constant"}

_SAME_ELEMENTS = {"reshape", "bitcast", "copy", "transpose"}  # views: as many elements out as in
_ARITHMETIC = {"negate", "abs", "exponential", "log", "sqrt", "rsqrt", "tanh", "add",
               "subtract", "multiply", "divide", "maximum", "minimum", "select", "compare"}

# what the SPMD partitioner builds around an instruction to reshard its operands or result
# (slices, pads, concatenates, get-tuple-elements of all-to-alls ...), with its op_name
_RESHARDING = {"slice", "dynamic-slice", "dynamic-update-slice", "pad", "concatenate",
               "get-tuple-element", "broadcast", "select", "partition-id"}


def rewrite_bucket(m) -> tuple[dict, set]:
    """Open after nodes by (op_name, source), and those no arithmetic is rewritten into: the
    collectives among them and fusion's copies of paired nodes."""
    An = m.after.nodes
    bucket: dict = defaultdict(list)
    for n in An:
        if n.alias >= 0:
            continue
        if m.a2b[n.idx] < 0 and n.op_name and n.opcode not in ("parameter", "constant"):
            bucket[(n.op_name, n.src)].append(n.idx)
    # the SPMD partitioner's collectives carry the op_name of the instruction they feed
    # (shard helper): never a rewrite of a non-collective before instruction
    coll = {y for lst in bucket.values() for y in lst if An[y].opcode in _COLLECTIVES}
    coll |= copies_of_paired(m)  # fusion's copies of a paired node hold its value
    coll |= splitk.partial_dots(m)  # h100: a split-K gemm's partial products (splitk.py)
    return bucket, coll


def rewrite_cands(m, b: Node, bucket: dict, coll: set, sharded: bool,
                   same_op: bool = False) -> list[int]:
    """The open after nodes the rewrite step may pair with the open before node ``b``
    (``same_op``: only data-movement ops, to one of the same opcode and shape)."""
    An = m.after.nodes
    lst = bucket.get((b.op_name, b.src))
    if not lst:
        return []
    cands = lst[:4 * SCAN_CAP]  # every entry is open: paired ones are removed below
    if coll:
        cands = [y for y in cands if y not in coll or (
            b.opcode in _COLLECTIVES and An[y].opcode in _COLLECTIVES)]
    if sharded and b.opcode not in _SHAPE_OPS and b.opcode not in _RESHARDING:
        # (shard4: nor the transpose of an all-to-all's pieces the partitioner concatenated)
        cands = [y for y in cands if An[y].opcode not in _RESHARDING and not (
            An[y].opcode == "transpose" and An[y].operands and
            An[An[y].operands[0]].opcode in _RESHARDING | _COLLECTIVES)]
    if b.opcode in _LOOPS or any(An[y].opcode in _LOOPS for y in cands):
        # a loop or conditional lives on as one (or is gone), and nothing else becomes one
        cands = [y for y in cands if An[y].opcode == b.opcode or (
            b.opcode not in _LOOPS and An[y].opcode not in _LOOPS)]
    if sharded:  # shard4: a run-time value never becomes a compile-time constant
        cvb, cva = constvals.for_matching(m)  # (unpartitioned: look-alike constants
        if not cvb[b.idx]:                     # rely on such pairs; lookalikes.py)
            cands = [y for y in cands if not cva[y]]
        # nor a same-rank array that is no per-device piece of its shape (CPU: on GPU the
        # gemm rewriters reshape operands and results; measured worse on the zoo's gpu8)
        if not constvals.gpu_after(m):
            cands = [y for y in cands if may_be_piece(b.inst.shape, An[y].inst.shape, m.parts)]
        elif b.opcode in _ARITHMETIC:  # (GPU, the same elementwise operation: at most
            cands = [y for y in cands if An[y].opcode != b.opcode or  # m.parts pieces, in
                     may_be_permuted_piece(b.inst.shape, An[y].inst.shape, m.parts)]  # any order
    if sharded and b.opcode == "dot" and constvals.gpu_after(m):
        # choose among dots summing the same dimensions (the veto in Matching.pair only
        # refuses; choosing again measured worse on 8 CPU devices: unseen gpt_rope_adamw)
        cands = [y for y in cands if contraction_fits(m, b.idx, y)]
    if b.opcode in ("tuple", "opt-barrier") or regrouped(m, b):
        # plumbing computes nothing to rewrite: a tuple or a jax.checkpoint barrier lives on
        # (paired by structure) or is gone, never as an instruction sharing its op_name
        # (fresh 11 remat_combined_policy_block on one H100: barrier remat2.39 was paired
        # with a transpose; a loop's init tuple with another loop's)
        return []  # (a divide algsimp regrouped away is gone too: regrouped_divides.py)
    if same_op:
        if b.opcode not in _SHAPE_OPS:
            return []
        cands = [y for y in cands if An[y].opcode == b.opcode and An[y].mdims == b.mdims]
    if b.opcode in _SHAPE_OPS:
        # a reshape/broadcast is not "rewritten into" the arithmetic sharing its op_name
        cands = [y for y in cands if An[y].opcode in _SHAPE_OPS or An[y].opcode == "custom-call"]
    if b.opcode in _SAME_ELEMENTS and not b.inst.shape.is_tuple:
        # nor a view into a broadcast holding more elements than it has: that broadcast
        # copies the view's value out to its reader's shape (zoo transformer_layer on 8
        # H100s: the mean's reshape sub.40, f32[2,16], took broadcast.110 f32[32,4] of a
        # gemm kernel, which broadcasts the mean over the features)
        n = b.inst.shape.num_elements
        cands = [y for y in cands if An[y].opcode != "broadcast" or
                 An[y].inst.shape.is_tuple or An[y].inst.shape.num_elements <= n]
    return cands
