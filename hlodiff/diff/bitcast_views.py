"""A transpose or reshape that became a bitcast: its value is where the bytes are made.

Layout assignment picks layouts that make many transposes and reshapes pure
reinterpretations of memory; layout normalization then replaces each by a ``bitcast``, and
fusion copies the bitcast into the kernel that reads it. The bitcast computes nothing: the
bytes it views are its operand's, written by the kernel that produced the operand (fresh
9 soft_moe_slots on 8 H100s: ``transpose.11`` of an einsum's dot becomes
``bitcast.23.23`` inside ``loop_multiply_fusion.4``, viewing the result of
``gemm_fusion_dot.17``; XLA's pass dumps follow the transpose to the bitcast and the
bitcast to its operand). This post-pass names that producing kernel as where the value
is, keeping the bitcast and its reader in the reason. Bitcasts at top level are left as
they are: the bitcast is then itself a named instruction of the program.
"""

from __future__ import annotations


def name_viewed_bytes(m, fates: list, where) -> None:
    """Re-place fates "<op> became bitcast X" whose X is a copy inside a kernel at the
    kernel that wrote X's operand (``where(node)`` gives an after node's kernel)."""
    A = m.after
    by_name = None
    for f in fates:
        if f.fate != "rewritten" or not f.after or not f.fusion or \
                not (f.reason or "").endswith(f"became bitcast {f.after}"):
            continue
        if by_name is None:
            by_name = {n.name: n for n in A.nodes if n.alias < 0 or n.opcode == "bitcast"}
        x = by_name.get(f.after)
        if x is None or x.opcode != "bitcast" or len(x.raw_operands) != 1:
            continue
        src = A.nodes[A.resolve(x.raw_operands[0])]
        kernel, kind = where(src)
        if src.opcode == "parameter" or kernel == f.fusion:
            continue  # (an entry parameter, or bytes made in the same kernel)
        reader = f.fusion
        f.after = src.name
        f.fusion, f.fusion_kind = kernel, kind
        f.reason += (f" inside {reader}, a view of the bytes {kernel or src.name} writes")
