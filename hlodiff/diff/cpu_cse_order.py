"""What CSE really meets on a single-device CPU module (cpu5 helper).

On XLA:CPU (jax 0.10.2) the first CSE runs after the whole simplification pipeline (fresh 4
lu_solve_grad: algsimp at dumps 0009, 0015, ...; the first ``cse`` at dump 0039). Two
consequences for identical copies that ``value_facts.cse_survivors`` groups:

* A broadcast (or reshape) of an iota is rebuilt by algsimp as an iota of its own shape in
  every copy before CSE sees it (lu_solve_grad ``iota.37 = s32[6,6] broadcast(iota.36),
  dimensions={1}``: dump 0009 ``iota.77 = s32[6,6] iota(), iota_dimension=1``, merged by the
  cse of dump 0039). The copy was rewritten, not merged as it stands.
* XLA's CSE does not merge an instruction without operands other than a constant (an iota):
  it disappears at CSE only when its readers were merged and it was left without users.
  lu_solve_grad's ``iota.26`` reads into the copy of jnp.tril's add that CSE kept (dump
  0039 keeps ``iota.9`` beside the identical ``iota.50``); it lives on and is fused (dump
  0048). ``iota.34``, read only by a sunk copy whose narrow add CSE merged, went with it.
"""

from __future__ import annotations

from . import gpu_cse
from .view import Node


def rewritten_copy(fb, b: Node) -> bool:
    """``b`` is a broadcast/reshape view of an iota whose identical copy CSE would keep:
    algsimp rebuilt this copy on its own first."""
    return not (fb.gpu_cse or fb.cse_first) and gpu_cse.iota_view(fb.B, b)


def own_partner_iota(fb, b: Node) -> bool:
    """``b`` is an iota with a partner of its own and a reader that CSE did not merge: CSE
    never merges an iota directly. (Where every reader was merged, it went with them:
    lu_solve_grad ``iota.25``, read only by a while's init tuple that CSE merged into the
    other loop's identical one at dump 0039.)"""
    if fb.gpu_cse or fb.cse_first or b.opcode != "iota" or fb.m.b2a[b.idx] < 0:
        return False
    B = fb.B
    return not b.users or any(fb._survivor_fate(B.nodes[u]).fate != "merged" for u in b.users)


def copy_operands(fb) -> dict[int, int]:
    """Operand under a sunk copy's broadcast -> the same operand under the broadcast of the
    copy CSE kept (``fb.sunk_copies``), where the copy's broadcast is its only reader: CSE
    merged the narrow op reading it and it went with it (a partner the matcher gave it is a
    look-alike: lu_solve_grad ``iota.38``, merged at dump 0039)."""
    B = fb.B
    out: dict[int, int] = {}
    for c, s in fb.sunk_copies.items():
        cb, sb = B.nodes[c], B.nodes[s]
        for oc, os_ in zip(cb.operands, sb.operands):
            bc, bs = B.nodes[oc], B.nodes[os_]
            if bc.opcode != "broadcast" or bs.opcode != "broadcast" or not bc.operands or \
                    not bs.operands:
                continue
            x, y = B.nodes[bc.operands[0]], B.nodes[bs.operands[0]]
            if x.idx == y.idx or x.opcode != y.opcode or \
                    len(x.users) != 1 or x.inst.shape.dims != y.inst.shape.dims or \
                    x.opcode == "constant":
                continue
            out[x.idx] = y.idx
    return out


def merged_operand_fate(fb, f, b: Node, y: Node):
    """``b`` (from ``copy_operands``) merged into ``y`` at CSE."""
    f.fate, f.into = "merged", y.name
    a = fb.m.b2a[y.idx]
    if a >= 0:
        fb._set_after(f, fb.A.nodes[a])
    f.reason = (f"identical to {y.name}; read only by a copy that algebraic simplification "
                "moved below its broadcast; CSE merged the narrow copies and this one went "
                "with them")
    return f


def rewritten_copy_fate(fb, f, b: Node, sb: Node):
    """``b`` (``rewritten_copy``): rewritten by algsimp like the copy CSE keeps."""
    f.fate, f.into = "rewritten", sb.name
    y = fb.m.b2a[b.idx]
    if y >= 0:
        fb._set_after(f, fb.A.nodes[y])
    else:
        sf = fb._survivor_fate(sb)
        f.after, f.fusion, f.fusion_kind = sf.after, sf.fusion, sf.fusion_kind
    f.reason = (f"{b.opcode} of an iota rebuilt as an iota of its own shape by algebraic "
                f"simplification before CSE ran (identical to {sb.name}, which CSE keeps)")
    return f
