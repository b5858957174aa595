"""Shape coincidences after GPU layout normalization (issue 9, class 9: GPU).

XLA:GPU's layout normalization rebuilds every elementwise operation on its array's physical
(major-to-minor) shape, so an operation's after shape is a permutation of its before shape.
Two values of permuted shapes can then swap: fresh 16 bf16_vpred_minsnr_diffusion_unet on 8
H100s updates a conv weight ``cin`` of f32[3,3,3,32] and a weight ``cout`` of f32[3,3,32,3]
with one Adam step. After normalization ``cin``'s update runs on f32[32,3,3,3] and
``cout``'s on f32[3,3,3,32]: the shape of ``cin``'s before. Structural propagation from the
shared scalar ``1 - b1**t`` saw one user of ``cin``'s exact shape and paired ``cin``'s
broadcast with ``cout``'s, and the whole update followed. Here an exact-shape candidate is no
sole choice while a permuted-shape user of the same opcode is open beside it.
"""

from __future__ import annotations

from .partition import may_be_permuted_piece


def permuted_rivals(m, b, open_users: list[int], chosen: int) -> list[int]:
    """Open after users (other than ``chosen``) of the same opcode as before node ``b`` whose
    shape is a permutation (or per-device piece of one) of ``b``'s, not ``b``'s own."""
    An, a2b = m.after.nodes, m.a2b
    sb = b.inst.shape
    if sb is None or sb.is_tuple or len(sb.dims) < 2:
        return []
    out = []
    for y in open_users:
        a = An[y]
        if y == chosen or a2b[y] >= 0 or a.opcode != b.opcode or a.mdims == b.mdims:
            continue
        sa = a.inst.shape
        if sa is None or sa.is_tuple or sa.element_type != sb.element_type:
            continue
        if may_be_permuted_piece(sb, sa, m.parts):
            out.append(y)
    return out
