"""Float round trips the GPU gemm rewriter takes into the gemm kernel, where they vanish.

Quantizing to fp8 for a matmul is written ``convert(convert(x, f8e4m3fn), f32)`` before the
dot. XLA:GPU's Triton gemm rewriter fuses the dot's operand computation, round trip
included, into the gemm fusion (fresh 7 fp8_scaled_matmul on one H100, dump 0029:
``convert_element_type.8``/``.10`` fused into ``gemm_fusion_dot``), and
simplify-fp-conversions then deletes the pair inside the kernel (dump 0034). The module
after optimization shows no trace of either convert: they were fused, into the kernel of
the dot that read them, not "simplified away".

The rewriter also takes a round trip of the dot's *result* (``convert(convert(dot, bf16),
f32)``, JAX's bf16 matmul with f32 accumulation read back in f32) into the kernel as its
epilogue (fresh 11 bf16_preferred_f32_accum_adam on one H100, dumps 0026 and 0030).

This post-pass finds such pairs from the before module (a convert to a narrower float
type read by a convert back, read by a dot or reading one through views) and the dot's
after partner inside a gemm fusion (``kind=kCustom``), for converts the diff left without
a partner. The narrowing convert may live on for other readers (a weight's bf16 copy read
as bf16 by one dot and widened again for another); then only the widening one is fused.
"""

from __future__ import annotations

from .view import Node, View

_WIDTH = {"f8e4m3fn": 8, "f8e5m2": 8, "f8e4m3": 8, "f8e4m3fnuz": 8, "f8e5m2fnuz": 8,
          "f8e3m4": 8, "bf16": 16, "f16": 16, "f32": 32, "f64": 64}


def _float_width(n: Node) -> int:
    sh = n.inst.shape
    return 0 if sh is None or sh.is_tuple else _WIDTH.get(sh.element_type or "", 0)


def _gemm_kernels(A: View) -> dict[str, Node]:
    return {n.name: n for n in A.nodes if n.opcode == "fusion" and
            n.inst.attrs.get("kind") == "kCustom" and "gemm" in n.name}


def through_views(B: View, i: int) -> int:
    """Back from node ``i`` through transposes, bitcasts, reshapes and copies."""
    for _ in range(8):
        n = B.nodes[i]
        if n.opcode not in ("transpose", "bitcast", "reshape", "copy") or not n.operands:
            break
        i = n.operands[0]
    return i


def round_trips(m, fates: list) -> dict[int, tuple[Node, str, str]]:
    """Before convert (both of a round trip) -> (the gemm fusion that took it in, the
    narrow type, how): the fusion the fate of the dot reading it names, or else of the
    dot whose result it rounds."""
    B, A = m.before, m.after
    kernels = _gemm_kernels(A)
    out: dict[int, tuple[Node, str]] = {}
    for back in B.nodes:
        if back.opcode != "convert" or len(back.operands) != 1 or m.b2a[back.idx] >= 0:
            continue
        there = B.nodes[back.operands[0]]
        wb, wt = _float_width(back), _float_width(there)
        # (``there`` may live on for other readers: a bf16 copy of a weight read by one
        # dot as bf16 and, widened again, by another)
        if there.opcode != "convert" or not there.operands or \
                not (0 < wt < wb) or wt > _float_width(B.nodes[there.operands[0]]):
            continue
        k, role = None, "with the dot reading it"
        for u in back.users:
            fd = fates[u] if B.nodes[u].opcode == "dot" else None
            k = kernels.get(fd.fusion or "") if fd is not None else None
            if k is not None:
                break
        if k is None:
            # the gemm's output rounded and widened again: the rewriter fuses the pair
            # into the kernel as its epilogue (fresh 11 bf16_preferred_f32_accum_adam on
            # one H100, dump 0026: convert_element_type.16/.17 after transpose(dot) inside
            # gemm_fusion_dot; dump 0030 removes them)
            p = through_views(B, there.operands[0])
            fd = fates[p] if B.nodes[p].opcode == "dot" else None
            k = kernels.get(fd.fusion or "") if fd is not None else None
            role = f"as the epilogue of the dot {B.nodes[p].name} it rounds"
        if k is not None:
            out[back.idx] = (k, there.inst.shape.element_type or "?", role)
            if m.b2a[there.idx] < 0 and there.users == [back.idx]:
                out[there.idx] = out[back.idx]
    return out


def fuse_round_trips(m, fates: list) -> int:
    """Mark the converts of :func:`round_trips` fused into their gemm kernel (only those
    the diff called rewritten or removed). Returns how many changed."""
    found = None
    c = 0
    for b, f in zip(m.before.nodes, fates):
        if f is None or b.opcode != "convert" or f.fate not in ("rewritten", "removed"):
            continue
        if found is None:
            found = round_trips(m, fates)
            if not found:
                return 0
        got = found.get(b.idx)
        if got is None:
            continue
        k, narrow, role = got
        f.fate, f.after, f.fusion, f.fusion_kind, f.into = "fused", None, k.name, "kCustom", None
        f.reason = (f"float round trip through {narrow} fused into the "
                    f"gemm kernel {k.name} {role}; simplify-fp-conversions "
                    "then removed it inside the kernel")
        c += 1
    return c
