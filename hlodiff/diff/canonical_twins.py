"""Values that become identical only once algebraic simplification has normalized them.

XLA's CSE merges instructions that are identical when it runs, and algsimp runs first.
Two computations of one value that differ only by views in the before module are
identical by then. jnp.var centres its input as ``x - broadcast(reshape(broadcast(
divide(reshape(reduce(x)), broadcast(N)))))``, batch norm as ``x - broadcast(divide(
reduce(x), broadcast(N)))``; algsimp removes the reshapes and the broadcasts that only
add size-1 dimensions, and CSE then merges var's subtract into the norm's. The exact
fingerprints (``Node.vfp``) differ, so the CSE survivor map does not see the pair, and the
engine called var's subtract "simplified away".

Evidence (JAX 0.4.30, CPU, fresh 11 densenet_block_concat): ``_var.80``'s
``broadcast.93`` and ``subtract.94`` are merged at CSE in the pass dumps.

A canonical fingerprint (:func:`canonical_fingerprints`) ignores reshapes, bitcasts and
broadcasts that keep the element count, and the shape of elementwise operations (their
elements keep their order through such views); operations that move elements keep their
shape and their operands' shapes in the hash.
"""

from __future__ import annotations

from .anchored import elements
from .called_fp import computation_hashes
from .view import CSE_COMMUTATIVE, Node, View, operands_first
from .value_facts import ELEMENTWISE

_VIEWS = ("reshape", "bitcast", "broadcast")


def canonical_fingerprints(v: View) -> list[int]:
    """Per node: a fingerprint equal for values that algsimp's normal form makes one
    instruction (see the module docstring)."""
    nodes = v.nodes
    comps: dict[str, int] | None = None
    out = [0] * len(nodes)
    for i in operands_first(nodes):
        n = nodes[i]
        ops = n.operands
        if n.alias >= 0:
            continue
        etype = n.dims.split("[", 1)[0]
        if n.opcode in _VIEWS and len(ops) == 1 and elements(n) == elements(nodes[ops[0]]) > 0:
            out[i] = out[ops[0]]
        elif n.opcode == "broadcast" and len(ops) == 1 and elements(nodes[ops[0]]) == 1:
            out[i] = hash(("splat", etype, out[ops[0]]))  # shape from what reads it
        elif n.opcode == "constant" and elements(n) == 1:
            out[i] = hash(("literal", etype, n.inst.literal))
        elif n.opcode in ELEMENTWISE and ops:
            sub = [out[o] for o in ops]
            if n.opcode in CSE_COMMUTATIVE:
                sub.sort()
            out[i] = hash((n.opcode, etype, n.inst.attrs.get("direction"), tuple(sub)))
        elif ops and n.opcode not in ("parameter", "call", "while", "conditional",
                                      "custom-call", "rng", "rng-bit-generator"):
            own = 0
            if n.inst.calls:  # a reduce's or sort's computation, by structure
                if comps is None:
                    comps = computation_hashes(v.module)
                own = hash(tuple(comps.get(c, 0) for c in n.inst.calls))
            out[i] = hash((n.sig, own, tuple((out[o], nodes[o].dims) for o in ops)))
        else:
            out[i] = n.vfp
    return out


class CanonicalTwins:
    """Matched before nodes by (canonical fingerprint, shape, computation), to find the
    survivor an unmatched node was merged into."""

    def __init__(self, m):
        self.m = m
        self.cfp = canonical_fingerprints(m.before)
        self.index: dict[tuple, int] = {}
        for n in m.before.nodes:
            if n.alias < 0 and m.b2a[n.idx] >= 0:
                self.index.setdefault((self.cfp[n.idx], n.dims, n.ctx), n.idx)

    def twin(self, b: Node, live: bytearray, cv: bytearray) -> Node | None:
        """The matched node ``b`` is one value with once algsimp normalized both, or None.
        Not for views that keep the element count (their removal is their fate), nor for
        literals and their broadcasts (the survivor map handles those)."""
        B = self.m.before
        if b.alias >= 0 or not live[b.idx] or cv[b.idx] or self.m.b2a[b.idx] >= 0 or \
                b.opcode in ("parameter", "tuple", "get-tuple-element", "call") or \
                b.opcode in _VIEWS and b.operands and \
                elements(b) == elements(B.nodes[b.operands[0]]):
            return None
        s = self.index.get((self.cfp[b.idx], b.dims, b.ctx))
        return None if s is None or s == b.idx else B.nodes[s]
