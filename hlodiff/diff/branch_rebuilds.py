"""Conditional branches that XLA's conditional simplifier rebuilt (issue 9, class 4).

``simplify-conditional`` drops what a conditional's branches compute for nobody: tuple
elements of the branch results that no reader takes, and parameter elements no branch
reads. It does so by cloning each branch it changes (``region_8.35`` ->
``region_8.35.clone``) with a narrower parameter and result tuple, and pointing the
conditional at the clone. Every instruction of the branch that reads the parameter is
rebuilt in the clone on the new tuple (its get-tuple-elements read other indices); the
pass dumps show it ``rewritten`` at simplify-conditional, not kept.

Evidence: fresh 13 act_ponder_fori_halting on CPU (jax 0.10.2), dump 0014 -> 0015:
``cond.60 ... branch_computations={%region_8.35, %region_14.36}`` (ACT's "skip once halted"
``lax.cond`` inside a ``fori_loop``, backward pass) becomes a conditional calling
``region_8.35.clone``; 43 of region_8.35's instructions are rewritten there, each one
reading ``arg_tuple.10`` directly or through others. (The forward ``cond.25``'s two
branches are cloned too.) Instructions that read nothing of the parameter (constants) are
copied unchanged and are not marked here.
"""

from __future__ import annotations

from .value_facts import parameter_dependents


def rebuilt_branches(B, A, b2a) -> dict[int, str]:
    """Before node -> the clone of its conditional branch that the conditional simplifier
    made with a narrower parameter, for every node of that branch that depends on the
    parameter. (A clone that only dropped result elements reads its parameter as before:
    act_ponder_fori_halting's forward ``region_2.7.clone``, whose instructions the dumps
    show renamed and fused, not rewritten.)"""
    nodes = B.nodes
    changed: dict[str, str] = {}
    for ctl, role, comp, _root, params in B.bodies:
        c = nodes[ctl]
        y = b2a[ctl]
        if c.opcode != "conditional" or y < 0 or A.nodes[y].opcode != "conditional":
            continue
        old = c.inst.called.get(role, ())
        new = A.nodes[y].inst.called.get(role, ())
        if comp not in old or len(old) != len(new):
            continue
        clone = new[list(old).index(comp)]
        after_comp = A.module.by_name.get(clone)
        if not clone.startswith(comp + ".clone") or after_comp is None or \
                len(params) != 1 or len(after_comp.parameters) != 1:
            continue
        if _arity(nodes[params[0]].inst.shape) != _arity(after_comp.parameters[0].shape):
            changed[comp] = clone  # parameter elements dropped: indices moved
    if not changed:
        return {}
    return {i: changed[nodes[i].ctx] for i in parameter_dependents(nodes, changed)}


def _arity(shape) -> int:
    return len(shape.tuple_shapes) if shape is not None and shape.is_tuple else 1


def passed_through(B, b) -> bool:
    """``b`` is ``get-tuple-element(p, i)`` of its computation's parameter ``p``, read only by
    the root ``tuple(get-tuple-element(p, 0), ..., get-tuple-element(p, n-1))``: the
    computation hands its parameter back unchanged (a conditional's "do nothing" branch).
    The tuple simplifier replaces that tuple by ``p`` and the get-tuple-elements are left
    without readers: removed, not rewritten (fresh 13 lookahead_radam_step under JAX 0.4.30,
    ``region_12.418``, Lookahead's skipped sync, dump 0010; fresh 12
    bf16_conv_dynamic_loss_scale on one H100). Passes that run the tuple simplifier after
    their own work do the same in their step (XLA:CPU's bf16 float normalization, dump 0008
    of that program on CPU; loop invariant code motion), and so does the Shardy round trip
    of a partitioned program, whose import returns the parameter itself (dump 0005 of that
    program on 8 CPU devices)."""
    if b.opcode != "get-tuple-element" or not b.raw_operands or len(b.users) != 1:
        return False
    p = B.nodes[b.raw_operands[0]]
    t = B.nodes[b.users[0]]
    if p.opcode != "parameter" or t.opcode != "tuple" or t.comp != b.comp:
        return False
    comp = B.module.by_name.get(b.comp)
    if comp is None or comp.root != t.name or _arity(p.inst.shape) != len(t.raw_operands):
        return False
    for i, o in enumerate(t.raw_operands):
        g = B.nodes[o]
        if g.opcode != "get-tuple-element" or g.inst.index != i or \
                not g.raw_operands or g.raw_operands[0] != p.idx:
            return False
    return True
