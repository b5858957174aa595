"""Two things newer XLA (jax 0.11) prints that the pass walk must follow (gpu2).

**A view whose users were forwarded, left without users.** Algebraic simplification may replace an
instruction by a new one that keeps the old name (and opcode) and then take the new one's
users away in the same pass. Real H100 dumps of ``mlp_step`` (jax 0.11.2): dump 0004 has
``%add.13 = f32[128]{0} reshape(%broadcast_in_dim.13)`` read by
``%add.14 = broadcast(%add.13)``; after algsimp (dumps 0011..0013) it is
``%add.13 = f32[128]{0} reshape(%params_0__1_.1)`` at the end of the computation with no
user, and ``%add.14 = broadcast(%params_0__1_.1)``; the next DCE (dump 0014) deletes it.
Earlier, dynamic-dimension-simplifier (dump 0009) already made ``add.14`` read
``%params_0__1_.1`` (what ``add.13`` viewed through ``broadcast_in_dim.13``) and left
``add.13`` without users. Its value was forwarded, not dead code: ``rewritten`` in the
pass that forwarded its users, its value in the instruction they read now.

**Implicit get-tuple-elements of calls.** The new HLO printer writes a call's tuple element
as ``%call#1`` (no get-tuple-element instruction of its own). When the call inliner inlines
the call, ``%jvp_jit_log_softmax__.4#0`` becomes ``%tuple.0#0``: the same projection, now of
the inlined callee's root tuple (``mlp_step`` dumps 0002 -> 0003: ``mul.12 =
multiply(..., %jvp_jit_log_softmax__.4#0)`` -> ``multiply(..., %tuple.0#0)``). It is a
rename, as an explicit get-tuple-element keeps its name when its operand is inlined; the
tuple simplifier / algsimp later forwards it.
"""

from __future__ import annotations


def rebuilt_orphans(prev, cur, views) -> dict[str, str | None]:
    """Name -> the instruction now holding its value, for each top-level view (reshape,
    bitcast, copy, identity transpose/broadcast, as ``views(i, operand)`` says) of ``prev``
    still in ``cur`` under its name, that had users and has none now (and is no root),
    because the pass made every user that is left read the value it viewed instead (its
    operand, or further down a chain of such views): the view was forwarded, not dead."""
    out: dict[str, str | None] = {}
    for n, i in prev.top.items():
        if not i.operands or not prev.users.get(n) or cur.users.get(n):
            continue
        c = cur.top.get(n)
        if c is None or c.opcode != i.opcode or cur.roots.get(c.computation) == n or \
                prev.roots.get(i.computation) == n:
            continue
        srcs: list[str] = []
        x = i
        while x is not None and x.operands and len(srcs) < 8:
            o = prev.top.get(x.operands[0])
            if o is None or not views(x, o):
                break
            srcs.append(o.name)
            x = o
        if not srcs:
            continue
        into = None
        for u, _ in prev.users[n]:
            cu = cur.top.get(u)
            if cu is None:
                continue
            hit = [s for s in srcs if s in cu.operands]
            if not hit:
                into = None
                break
            into = hit[0]
        if into is not None:
            out[n] = into
    return out


def inlined_projections(prev, cur, removed: list[str], added: set[str],
                        renamed: dict[str, str]) -> dict[str, str]:
    """``call#i`` -> ``root#i`` for implicit get-tuple-elements of a call the inliner
    replaced by its callee's root tuple: the root's rename, else the tuple that the
    call's surviving users read in its place (``root#j`` for some element j)."""
    base_of: dict[str, str] = {}  # removed call -> the tuple that took its place
    todo: list[tuple[str, str, str]] = []
    for n in removed:
        if "#" not in n or n in renamed:
            continue
        base, _, idx = n.rpartition("#")
        call = prev.top.get(base)
        if call is None or call.opcode != "call" or not call.calls or base in cur.top:
            continue
        todo.append((n, base, idx))
        if base in base_of:
            continue
        root = prev.roots.get(call.calls[0])
        if root is not None and f"{renamed.get(root, root)}#{idx}" in added:
            base_of[base] = renamed.get(root, root)
            continue
        for u, k in prev.users.get(n, ()):
            cu = cur.top.get(u)
            if cu is not None and k < len(cu.operands) and cu.operands[k] in added and \
                    cu.operands[k].endswith(f"#{idx}"):
                base_of[base] = cu.operands[k].rpartition("#")[0]
                break
    out: dict[str, str] = {}
    for n, base, idx in todo:
        y = base_of.get(base)
        cand = f"{y}#{idx}"
        c = cur.top.get(cand)
        if y is not None and cand in added and c is not None and \
                c.opcode == "get-tuple-element" and \
                c.shape.dims_text == prev.top[n].shape.dims_text:
            out[n] = cand
    return out


def inlined_roots(prev, cur, removed: list[str], added: set[str],
                  renamed: dict[str, str]) -> dict[str, str]:
    """callee root -> its copy, for a call the inliner replaced by that copy where the
    copy was not found by its operands: the call's surviving users read the copy in the
    call's place. (Fresh 16 bf16_vpred_minsnr_diffusion_unet under JAX 0.4.30, dump 0004:
    twenty ``jit(_where)`` callees broadcast one predicate; identical broadcast copies are
    interchangeable, so a root ``select.3155`` matched by operands may find its copied
    operands taken by another callee's; ``multiply.3260`` reads ``select.100`` where it
    read ``call.3156``.)"""
    owner = set(renamed.values())
    out: dict[str, str] = {}
    for n in removed:
        call = prev.top.get(n)
        if call is None or call.opcode != "call" or len(call.calls) != 1 or n in cur.top:
            continue
        root = prev.roots.get(call.calls[0])
        r = prev.top.get(root) if root is not None else None
        if r is None or root in renamed or root in out or r.opcode == "tuple":
            continue
        for u, k in prev.users.get(n, ()):
            cu = cur.top.get(u)
            c = cu.operands[k] if cu is not None and k < len(cu.operands) else None
            ci = cur.top.get(c) if c is not None else None
            if ci is not None and c in added and c not in owner and ci.opcode == r.opcode \
                    and ci.shape.dims_text == r.shape.dims_text:
                out[root] = c
                owner.add(c)
                break
    return out


def multi_output_homes(cur, removed: list) -> None:
    """A fusion that multi-output fusion merged into another one is read back through a
    get-tuple-element of the merged fusion: that fusion computes its value. (diffusion_block's
    H100 dump 0059: ``%fusion.28`` gone, ``%fusion.5`` now returns a tuple and
    ``%fusion.46`` reads ``%get-tuple-element.21``, element 1 of ``%fusion.5``.) Sets
    ``fusion`` of such removals, which named only the get-tuple-element."""
    for rem in removed:
        if rem.fate != "fused" or rem.fusion is not None or rem.into is None:
            continue
        g = cur.top.get(rem.into)
        if g is None or g.opcode != "get-tuple-element" or not g.operands:
            continue
        f = cur.top.get(g.operands[0])
        if f is not None and f.opcode == "fusion":
            rem.fusion = f.name


def outlined_calls(cur, removed: list) -> None:
    """XLA:CPU's parallel task assigner (JAX 0.4.x) outlines a kernel it splits into tasks:
    ``fusion.629`` becomes ``call.118 = call(...), to_apply=parallel_fusion.629`` whose
    root is ``fusion.629.clone`` (fresh 26 consistency_training under JAX 0.4.30, dump
    0051). Sets ``into`` of a removal the step left without one to the call whose
    computation's root is its clone: the users' rule would give a producer outlined with
    its consumer the consumer's call (``fusion.628`` -> ``call.117`` reads ``call.118``)."""
    waiting = [rem for rem in removed if rem.into is None and rem.fate == "rewritten"]
    if not waiting:
        return
    clones = {cur.roots[c.calls[0]]: c.name for c in cur.top.values()
              if c.opcode == "call" and c.calls and c.calls[0] in cur.roots}
    for rem in waiting:
        rem.into = clones.get(f"{rem.name}.clone")


def implicit_tuple_sources(names: list[str]) -> list[str]:
    """``names`` plus, after each implicit get-tuple-element ``x#i`` (jax 0.11's printer: no
    instruction of its own, element i of ``x``), the instruction ``x`` whose result it is:
    the cuDNN call of ``%cudnn-conv-bias-activation.10#0`` (convnet_step's real H100 dump)
    holds the convolution's value as much as the projection the final text reads it by."""
    out = list(names)
    for x in names:
        base, sep, idx = x.rpartition("#")
        if sep and idx.isdigit() and base and base not in out:
            out.insert(out.index(x) + 1, base)
    return out
