"""Dots the GPU gemm rewriters turned into library kernels, with their operands swapped.

XLA's GPU compiler wraps each dot in a Triton gemm fusion (``triton-gemm-rewriter``:
``gemm_fusion_<dot>``, kind ``kCustom``) and later may swap the dot's operands inside it
(``gemm-fusion-swap-operands``: ``dot(b, a)`` with the dimension numbers exchanged and a
bitcast of the transposed result, so the larger operand drives the tiling). The dot inside
the fusion then differs from the before dot in its dimension numbers, or even its result
shape, although no operand was transposed, reshaped or folded into it: its value is simply
computed inside the gemm fusion (fate ``fused``). The GPU pipeline's transpose folding
(after simplification) also folds an operand transpose into the dot's dimension numbers
and keeps the dot, which the gemm rewriter then fuses: the after dot reads the
transpose's operand. Either way the dot's value is computed in the gemm kernel.
"""

from __future__ import annotations

from .match import Matching
from .value_facts import ELEMENTWISE
from .view import Node


def in_gemm_kernel(m: Matching, b: Node, a: Node) -> bool:
    """``a`` (b's partner, a dot inside a fusion) reads exactly the values b reads, in any
    order: the gemm rewriter moved b into its kernel, perhaps swapping its operands."""
    if b.opcode != "dot" or a.opcode != "dot" or a.fusion < 0:
        return False
    if len(a.operands) != len(b.operands) or _ndims(a) != _ndims(b):
        return False  # dot_decomposer reshaped it (several contracting dims merged)
    mine = sorted(m.a2b[o] for o in a.operands)
    if all(x >= 0 for x in mine) and mine == sorted(b.operands):
        return True
    B = m.before
    # an operand transpose the gemm rewriter fused into the kernel with the dot (it has a
    # partner: a layout op inside the fusion, which the after view sees through)
    A = m.after
    theirs = []
    for o in b.operands:
        y = m.b2a[o]
        if y < 0 and B.nodes[o].opcode == "transpose" and B.nodes[o].operands:
            # transpose folding (GPU: after simplification) folds an operand transpose into
            # the dot's dimension numbers and keeps the dot; the gemm rewriter fuses it
            y = m.b2a[B.nodes[o].operands[0]]
        if y < 0:
            return False
        theirs.append(_value_key(A, A.resolve(y)))
    return sorted(theirs, key=repr) == sorted((_value_key(A, A.resolve(o)) for o in a.operands),
                                              key=repr)


def _value_key(A, i: int) -> object:
    """A node, or for a constant or a broadcast of one its value: fusion passes copy those
    into every kernel, and any copy is as good as another."""
    n = A.nodes[i]
    if n.opcode == "broadcast" and n.operands:
        c = A.nodes[n.operands[0]]
        if c.opcode == "constant":
            return ("broadcast", n.dims, c.inst.literal)
    if n.opcode == "constant":
        return ("constant", n.dims, n.inst.literal)
    return i


def _ndims(n: Node) -> tuple:
    """(result rank, number of contracting and of batch dimensions of each side)."""
    at = n.inst.attrs

    def count(k: str) -> int:
        v = at.get(k)
        return len(str(v).strip("{}").split(",")) if v not in (None, "", "{}") else 0
    return (n.inst.shape.rank if hasattr(n.inst.shape, "rank") else n.dims.count(",")) , \
        count("lhs_contracting_dims") + count("rhs_contracting_dims"), \
        count("lhs_batch_dims") + count("rhs_batch_dims")


def folded_into_dots(B, b: Node) -> bool:
    """An operand transpose read only by one dot: algsimp or transpose folding takes it
    into the dot's dimension numbers, so its value now lives where the dot's does. Not one
    that moves no byte under the layouts the module already gives it (see
    :func:`transpose_is_bitcast`): layout normalization makes that a bitcast of its
    operand, and the operand's buffer holds its value."""
    return b.opcode == "transpose" and len(b.users) == 1 and \
        B.nodes[b.users[0]].opcode == "dot" and not transpose_is_bitcast(B, b)


# producers that take a bitcast of their result into themselves: algsimp rebuilds an
# elementwise op or a dot on the bitcast's shape, merges views, re-lays out a parameter
_ABSORBS = ELEMENTWISE | {"reshape", "bitcast", "transpose", "copy", "broadcast", "dot",
                          "parameter"}


def transpose_is_bitcast(B, b: Node) -> bool:
    """Is the transpose ``b`` a relabelling of its operand's bytes in the same order, which
    the operand takes into itself (``_ABSORBS``)? True when both layouts are given and
    the operand's minor-to-major order is b's, mapped through the permutation
    (``dims[b_minor_to_major[i]] == operand_minor_to_major[i]``), as XLA's
    ``ShapeUtil::TransposeIsBitcast`` decides. The before module of a sharded program can
    carry non-default layouts: fresh 24 muon on 8 H100s, ``transpose.126 =
    f32[512,128]{1,0}`` of ``div.329 = f32[128,512]{0,1}``, which layout normalization (dump
    after it) turns into a bitcast that algsimp then folds into the divide; the dot reads
    the divide's kernel through that bitcast (so too of a reshape of a dot, or of a
    parameter: fresh 15 remat_hourglass on 8 H100s). Of another op (fresh 26 adafactor on
    8 H100s: ``transpose.71`` of a gather) the bitcast stays and is fused into the kernels
    of its readers, where the matcher finds it."""
    if not b.raw_operands or b.inst.dimensions is None:
        return False
    if B.nodes[b.raw_operands[0]].opcode not in _ABSORBS:
        return False  # (the bitcast then stays, fused into its readers' kernels)
    o = B.nodes[b.raw_operands[0]].inst.shape
    s = b.inst.shape
    if s.is_tuple or o.is_tuple or s.layout is None or o.layout is None:
        return False
    perm, out, inp = b.inst.dimensions, s.layout.minor_to_major, o.layout.minor_to_major
    if not (len(perm) == len(out) == len(inp)):
        return False
    if all(perm[i] == i for i in range(len(perm))):
        return False
    return all(perm[out[i]] == inp[i] for i in range(len(out)))


def flattened_in_gemm(A, b: Node, a: Node, nparts: int = 1) -> bool:
    """``a`` (b's partner, same opcode, other dimensions) is a producer copy inside a Triton
    gemm fusion: the gemm fusion pass copies an operand's producers into the kernel on the
    dot's rank-2 operand shape (bitcasts), so the copy holds b's elements flattened
    (mlp_mixer's H100 dumps: ``mul.153 = f32[8,12,16] broadcast`` fused by priority fusion
    into ``fusion.127`` and copied as an f32[96,16] broadcast into ``gemm_fusion_dot.2``).
    In a program partitioned ``nparts`` ways the copy holds one device's piece: b's
    elements divided by a number of pieces that divides ``nparts`` (attention_rms_swiglu
    on 8 H100s, dump 0060 ``triton-gemm-rewriter``: ``mul.141 = f32[8,12,16]`` is copied into
    ``gemm_fusion_dot.63`` as ``mul.346 = f32[12,16]``, one device's batch row; gpu4)."""
    if a.fusion < 0 or b.opcode in ("dot", "convolution") or b.inst.shape.is_tuple or \
            a.inst.shape.is_tuple or renamed_by_pass(b, a):
        return False
    f = A.nodes[a.fusion]
    if f.inst.fusion_kind != "kCustom":
        return False
    nb, na = b.inst.shape.num_elements, a.inst.shape.num_elements
    if nb == na:
        return True
    return nparts > 1 and na > 0 and nb % na == 0 and nparts % (nb // na) == 0


def renamed_by_pass(b: Node, a: Node) -> bool:
    """``a`` carries a name XLA gives the instructions its passes build (its opcode,
    ``multiply.121.11``, ``subtract.18``) where ``b``'s has another stem (``mul.839``,
    ``sub.51``, as JAX names them): a pass re-created b as a new instruction, and fusion
    copied that one. Layout normalization does this on GPU to an elementwise operation
    whose assigned layout is not the default: it builds the operation anew on the
    physical (major-to-minor) shape between bitcasts (fresh 15 rwkv_time_mix_wkv_scan on
    one H100, dump 0053: ``mul.839 = f32[8,16,32]{2,0,1}`` becomes ``multiply.121 =
    f32[16,8,32]{2,1,0}``, copied into a gemm fusion as ``multiply.121.11``). Where both
    stems are the opcode's (JAX 0.4 names instructions so) nothing is known: False."""
    sa, sb = a.name.split(".", 1)[0], b.name.split(".", 1)[0]
    return sa == a.opcode and sb != sa
