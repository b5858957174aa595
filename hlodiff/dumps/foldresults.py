"""Constants a constant-folding pass created, told apart from renamed constants (cpu5).

The pass-by-pass walk (passstep.py) calls an added instruction identical to a removed one a
rename. In a constant-folding pass that is wrong for a new constant that merely has the
same literal as a constant the pass consumed: XLA's folder replaces the instruction it
evaluated by a new constant, which takes over the replaced instruction's metadata (the new
constant has none of its own), and the operands left without users go with it.

Evidence, zoo/cpu cnn_pool_bn (jax 0.10.2), dump 0010 -> 0011 (constant_folding)::

    %constant.1 = f32[] constant(256), metadata={op_name="jit(cnn_pool_bn)/jvp(jit(_var))" ...}
    %sub.0 = f32[] subtract(%constant.1, %convert_element_type.0),
             metadata={op_name="jit(cnn_pool_bn)/jvp(jit(_var))/sub" ...}
  ->
    %constant.21 = f32[] constant(256), metadata={op_name="jit(cnn_pool_bn)/jvp(jit(_var))/sub" ...}

``256 - convert(0)`` was evaluated into ``constant.21`` (it carries ``sub.0``'s op_name);
``constant.1`` was consumed by the folding, not renamed. The walk had followed
``constant.1`` into ``constant.21`` and on to algsimp's later rewrite of it.
"""

from __future__ import annotations

from ..hlo.model import Instruction


def _meta(i: Instruction) -> tuple | None:
    md = i.metadata
    if md is None or not md.op_name:
        return None
    return (md.op_name, md.stack_frame_id)


def folded_results(ptop: dict[str, Instruction], ctop: dict[str, Instruction],
                   removed: list[str], added: list[str]) -> set[str]:
    """Added constants that carry the metadata (op_name, stack frame) and shape of a
    non-constant instruction the pass removed from the same computation, and not the
    metadata of any removed constant with the same literal: the folder's results."""
    folded: set[tuple] = set()
    consts: set[tuple] = set()
    for n in removed:
        i = ptop.get(n)
        if i is None:
            continue
        k = _meta(i)
        if k is None:
            continue
        if i.opcode == "constant":
            consts.add((i.computation, i.literal, k))
        else:
            folded.add((i.computation, i.shape.dims_text, k))
    if not folded:
        return set()
    out: set[str] = set()
    for n in added:
        a = ctop.get(n)
        if a is None or a.opcode != "constant":
            continue
        k = _meta(a)
        if k is None or (a.computation, a.literal, k) in consts:
            continue
        if (a.computation, a.shape.dims_text, k) in folded:
            out.add(n)
    return out
