"""Split-K gemms: a dot's value is in the reduction after its partial products (h100
helper, issue 9 class 9).

When autotuning on a real GPU picks a split-K configuration, XLA's ``splitk-rewriter``
cuts the contraction into k pieces: the gemm kernel computes k partial products, one more
(leading) dimension than the dot, and a reduce over that dimension sums them; the reduce's
computation is named after the dot (``dot.6.reduce_sub_computation``) and priority fusion
fuses it into a consumer kernel. Real H100 dump of mlp_step (jax 0.11.2), pass
``splitk-rewriter`` (dump 0031): ``dot_general.8 = f32[128,128] dot(x.1, params_0__0_.1)``
becomes ``reduce.1``; the final module holds ``gemm_fusion_dot.3 = f32[8,128,128]`` and
``loop_reduce_fusion = f32[128,128] fusion(gemm_fusion_dot.3)`` with ``reduce(...),
dimensions={0}``. The pass dumps put the dot's value in the reduce's kernel.

The rewrite step paired the dot with the partial gemm (twice the wrong kernel) and left the
reduce to a twin dot of the same op_name (``dot_general.15`` took ``dot_general.14``'s
reduce). Here a partial-product dot is no rewrite candidate (:func:`partial_dots`), and a
dot already paired with one moves to its reduce (:func:`settle`).

Deviceless compiles do not autotune, but the ``splitk-rewriter`` of the
``hlo_normalization`` pipeline (jax 0.10.2) splits small gemms with a long contraction
before autotuning: fresh 24 bigbird on 8 H100s, ``dot.95 = f32[40,128]`` becomes
``reduce.139`` over ``dot.188 = f32[8,...]`` (dump 0103). When the gemm rewriter then swaps
the dot's operands, the partial products come out transposed under a bitcast
(:func:`_named_split`).
"""

from __future__ import annotations


def partial_sums(A, d) -> list[int]:
    """The reduces summing the partial products of the dot node ``d`` (several when fusion
    duplicated the reduce into more than one consumer)."""
    sh = d.inst.shape
    if d.opcode != "dot" or d.fusion < 0 or sh is None or sh.is_tuple or len(sh.dims) < 2:
        return []
    out = []
    for u in d.users:
        r = A.nodes[u]
        rs = r.inst.shape
        dims = r.inst.dimensions
        if r.opcode != "reduce" or rs is None or rs.is_tuple or not dims or len(dims) != 1 \
                or len(rs.dims) + 1 != len(sh.dims) or dims[0] != 0 or sh.dims[0] < 2:
            continue
        if tuple(sh.dims[1:]) == tuple(rs.dims) or _named_split(A, r, sh):
            out.append(u)
    return out


def _named_split(A, r, sh) -> bool:
    """The reduce ``r`` sums, over its leading dimension, what a gemm kernel wrote in another
    logical order: the gemm rewriter swapped the dot's operands, so the dot's result is the
    transpose of the product and a bitcast (see-through in the view) gives it the product's
    order (fresh 24 bigbird on 8 H100s: ``dot.274 = f32[8,128,40]{1,2,0}`` under the kernel's
    ``bitcast.739 = f32[8,40,128]``, summed by ``reduce.139.9`` to f32[40,128]). Told by what
    only the split-K rewrite writes: a computation named after the dot
    (``dot.188.reduce_sub_computation``) and an operand of the dot's element count with the
    same number of pieces."""
    if not r.inst.calls or not r.inst.calls[0].endswith(".reduce_sub_computation") \
            or not r.raw_operands:
        return False
    src = A.nodes[r.raw_operands[0]].inst.shape
    if src is None or src.is_tuple or len(src.dims) != len(sh.dims) or src.dims[0] != sh.dims[0]:
        return False
    return tuple(src.dims[1:]) == tuple(r.inst.shape.dims) and \
        sorted(src.dims[1:]) == sorted(sh.dims[1:])


def units(A) -> dict[int, list[int]]:
    """Partial-product dot node -> the reduce nodes summing it, in the after view."""
    out = {}
    for n in A.nodes:
        if n.alias < 0 and n.opcode == "dot" and n.fusion >= 0:
            rs = partial_sums(A, n)
            if rs:
                out[n.idx] = rs
    return out


def partial_dots(m) -> set[int]:
    """After nodes that hold only partial products of a split-K dot."""
    if not hasattr(m, "_splitk"):
        m._splitk = units(m.after)
    return set(m._splitk)


def settle(m) -> int:
    """A before dot paired with a partial-product dot moves to its open reduce."""
    if not hasattr(m, "_splitk"):
        m._splitk = units(m.after)
    c = 0
    for d, rs in m._splitk.items():
        b = m.a2b[d]
        if b < 0 or m.before.nodes[b].opcode != "dot":
            continue
        r = next((r for r in rs if m.a2b[r] < 0), -1)
        if r < 0:
            continue
        m.b2a[b], m.a2b[d] = -1, -1
        m.pair(b, r, "split-K")
        c += 1
    return c


def note(A, a) -> str | None:
    """For the after node ``a``, a split-K reduce: what it sums, for a fate's reason."""
    if a.opcode != "reduce" or not a.operands:
        return None
    d = A.nodes[a.operands[0]]
    if a.idx not in partial_sums(A, d):
        return None
    k = d.inst.shape.dims[0]
    return (f"split-K gemm (splitk-rewriter): {A.nodes[d.fusion].name} computes {k} partial "
            f"products, this reduce sums them")


def explain(A, fates: list) -> int:
    """Say in the reason of each fate that names a split-K reduce what that reduce sums."""
    sums: dict[str, str] = {}
    for d, rs in units(A).items():
        for r in rs:
            s = note(A, A.nodes[r])
            if s:
                sums[A.nodes[r].name] = s
    c = 0
    for f in fates:
        s = sums.get(f.after or "")
        if s and s not in (f.reason or ""):
            f.reason = f"{f.reason}; {s}" if f.reason else s
            c += 1
    return c
