"""Identical loops: CSE merges a rebuilt loop into its twin (old5 helper).

XLA's CSE compares a while's called computations too, so two identical loops (same init
values, bodies and conditions of one structure) are one loop after CSE. Fresh 4
lu_solve_grad (JAX 0.4.30): jax.scipy's lu_factor and lu_solve each build the same
permutation loop from the pivots, ``while.147`` (op_name ``.../jvp(jit(lu_factor))/while``)
and ``while.285`` (``.../jvp(jit(lu_solve))/while``), with identical init tuples
(``tuple.146``/``tuple.284``). The while-loop simplifier rebuilds both (dump 0011,
simplify-while-loops: ``while.14``, ``region_0.56.clone...``), and the CSE of dump 0030
merges one into the other; the module after optimization holds one loop, ``while.15``
(``body=region_4.216.clone.clone.clone``). The engine left while.147 open ("simplified
away") and called its body's instructions fused/merged/kept rather than rebuilt.
"""

from __future__ import annotations


def twins(fb) -> dict[int, int]:
    """Open live before while -> a paired while with the same exact-subgraph fingerprint,
    computation and called-computation fingerprint (cached on the FateBuilder)."""
    out = getattr(fb, "_loop_twins", None)
    if out is not None:
        return out
    from .called_fp import called_fingerprints
    B, m = fb.B, fb.m
    out = {}
    whiles = [n for n in B.nodes if n.opcode == "while" and n.alias < 0]
    if len(whiles) > 1:
        cfp = called_fingerprints(B)
        paired: dict[tuple, int] = {}
        for n in whiles:
            if m.b2a[n.idx] >= 0:
                paired.setdefault((n.fp, n.ctx, cfp[n.idx]), n.idx)
        for n in whiles:
            if m.b2a[n.idx] < 0 and fb.live[n.idx]:
                t = paired.get((n.fp, n.ctx, cfp[n.idx]))
                if t is not None:
                    out[n.idx] = t
    fb._loop_twins = out
    return out


def partner(fb, ctl: int) -> int:
    """The after while of ``ctl``'s paired twin, or -1."""
    t = twins(fb).get(ctl)
    return fb.m.b2a[t] if t is not None else -1


def merged_fate(fb, f, b):
    """Fill ``f`` for a while CSE merged into its paired twin; None when it has none."""
    t = twins(fb).get(b.idx)
    if t is None:
        return None
    tb = fb.B.nodes[t]
    f.fate, f.into = "merged", tb.name
    fb._set_after(f, fb.A.nodes[fb.m.b2a[t]])
    f.reason = (f"identical to {tb.name} (same initial state, body and condition): "
                "CSE merged the two loops")
    return f
