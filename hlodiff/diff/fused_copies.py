"""After nodes that are fusion's copies of an already paired instruction.

Fusion may duplicate a cheap producer (a broadcast, a constant, an elementwise op) into
each consumer's kernel. One copy gets paired with the before instruction; the others
compute exactly the same value from the same operands (same subgraph fingerprint,
signature and operand nodes) and so hold *that* instruction's value, never another's.
A later, weaker matcher step (the op_name-based rewrite step) must not hand such a copy to
a different before instruction that merely shares the op_name (a reshape that the reshape
decomposer turned into a bitcast is not "the broadcast beside it").

(``m`` below is a :class:`hlodiff.diff.match.Matching`; match.py calls this module.)
"""

from __future__ import annotations


def _key(a) -> tuple:
    return (a.fp, a.sig, tuple(a.operands))


def copies_of_paired(m) -> set[int]:
    """Open fused after nodes identical to a paired fused after node."""
    A = m.after.nodes
    paired = {_key(a) for a in A if a.fusion >= 0 and a.alias < 0 and m.a2b[a.idx] >= 0}
    if not paired:
        return set()
    return {a.idx for a in A if a.fusion >= 0 and a.alias < 0 and m.a2b[a.idx] < 0
            and a.opcode != "parameter" and _key(a) in paired}


def copy_keys(m) -> list[int]:
    """Each after node's *value key*: the first node computing the same value. Fusion's
    copies of one instruction in several kernels share a key, however deep the copied
    chain (``select(gt(x, 0), x, 0)`` copied whole into each consumer's kernel); every
    other node is its own key. A copy's inputs must reach a top-level value: expressions of
    literals alone keep their own keys, because one literal serves unrelated code (two
    layers' zeros are not one value to place by). Computed once per matching."""
    out = m.copy_key_cache
    if out is not None:
        return out
    A = m.after.nodes
    out = list(range(len(A)))
    live_input = bytearray(len(A))  # the subgraph reads a value computed outside kernels
    value = list(range(len(A)))  # literals by value: what a copy's key is built from
    seen: dict[tuple, int] = {}
    # node order has a fused node's operands first (a fusion body lists them before their
    # readers, and a fusion's operand kernels come before it); an operand met later would
    # only keep its own key
    for a in A:
        i = a.idx
        if a.alias >= 0:
            continue
        if a.fusion < 0:
            live_input[i] = 1
            continue
        ops = a.operands
        value[i] = seen.setdefault((a.sig, tuple(value[o] for o in ops)), i)
        if any(live_input[o] for o in ops):
            live_input[i] = 1
            out[i] = value[i]
    m.copy_key_cache = out
    m.copy_live = live_input
    return out


def kept_apart(m, b: int, s: int) -> bool:
    """Identical before copies ``b`` and ``s`` (``s`` the one CSE would keep) that live on as
    two different instructions: CSE did not merge them. Both are paired, with after nodes
    that are neither one node nor fusion's copies of one value (those share a key). XLA:CPU
    runs CSE only after the simplification fixed point, when the copies may no longer be
    identical (fresh 12 schnet_energy_force_matching: the force term repeats the energy
    term's code; both copies of each dot live on, in ynn_fusion.47 and ynn_fusion.52).
    Only values computed from run-time inputs count, and no broadcasts (fusion copies
    literals and broadcasts into every kernel that reads them; fresh 4 remat_nested_layers
    under JAX 0.4.30), and only partners doing the same operation on operands of the same
    opcodes and shapes, two levels down: partners of different structure are no evidence
    of two survivors (fresh 7 albert_shared_layers and adaptive_ode_while under JAX 0.4.30:
    copies merged, then regrouped differently)."""
    y, ys = m.b2a[b], m.b2a[s]
    if y < 0 or ys < 0 or y == ys:
        return False
    keys = copy_keys(m)
    live = m.copy_live  # (literals and their broadcasts, copied into kernels, tell nothing)
    A = m.after.nodes

    def shape(i: int, depth: int) -> tuple:
        n = A[i]
        return (n.sig[:2], tuple(shape(o, depth - 1) for o in n.operands) if depth else ())

    # the same computation twice (two levels of operands alike), not one value
    return keys[y] != keys[ys] and bool(live[y]) and bool(live[ys]) and \
        A[y].opcode != "broadcast" and A[y].sig == A[ys].sig and shape(y, 2) == shape(ys, 2)


def scalar_copies(m) -> set[int]:
    """Scalar literals inside kernels: no evidence of place for the similarity score
    (``m`` a Matching).
    Fusion copies a scalar (a reduce's 0, a max's -inf) into every kernel that reads it,
    and one before literal often serves every layer; whichever copy the cascade paired it
    with, that copy's kernel says nothing about which candidate is a reader's partner
    (gpu8 fresh 10 bf16_layernorm_residual: the reduces of both layers' bias gradients
    read ``constant.25``, paired with the copy in ``loop_add_fusion.3``, and layer 0's were
    pulled there). Counting every copy alike instead would let any reader of a 0 reach
    the score threshold on that alone. So too a top-level scalar that several kernels
    read (fresh 17 bf16_geglu on 8 CPUs: every YNN reduce kernel takes one 0 as operand)."""
    out = m.scalar_copies
    if out is None:
        out = m.scalar_copies = set()
        for n in m.after.nodes:
            sh = n.inst.shape
            if n.opcode == "constant" and (n.fusion >= 0 or len(n.users) > 1) and \
                    sh is not None and not sh.is_tuple and not sh.dims:
                out.add(n.idx)
    return out
