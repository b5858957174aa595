"""Which computation of the next snapshot a renamed instruction can come from.

The Shardy round trip (``shardy-xla``) rebuilds the module and renames every computation
(``main.19`` -> ``main.10``, ``region_0.7`` -> ``region_0.3``) and most instructions. It also
merges identical constants, one survivor per computation. Operand-less instructions
(constants) are matched to their new names by value alone, so without a look at the
computation a constant of the entry could take the name of a loop body's constant.

Evidence, fresh 6 viterbi_decode_scan on 8 CPU devices, dumps 0003 -> 0004 (shardy-xla): the
entry ``main.19`` holds ``constant.47``, ``constant.45``, ``constant.44`` (and
``constant.38``), all ``s32[] constant(0)``; after the pass the entry ``main.10`` holds one,
``constant.59`` (read by the entry's loop-state tuples and broadcasts), while the first
loop's body ``region_0.3`` holds ``constant.49`` (read by its dynamic slices), which the
inlined ``constant.2`` and ``constant.7`` of ``region_0.7`` became. The walk had renamed
``constant.47`` to ``constant.49``.

A computation's signature here: whether it is the entry, and the sorted element shapes
(without layouts) of its parameters and of its root. The round trip changes no shape before
the partitioner runs, but it may reorder a loop's state (``region_0.7``'s ``(s32[], f32[8,5],
s32[8,8,5], f32[8,8,5], f32[5,5])`` is ``region_0.3``'s ``(s32[], f32[8,5], s32[8,8,5],
f32[5,5], f32[8,8,5])``).
"""

from __future__ import annotations

from ..hlo.model import Instruction, Module


def _leaves(shapes) -> tuple:
    return tuple(sorted(x.dims_text for sh in shapes for x in sh.leaves()))


def signature(module: Module, cname: str, memo: dict) -> tuple:
    """The signature of computation ``cname`` of ``module`` (memoized in ``memo``)."""
    s = memo.get(cname)
    if s is None:
        c = module.by_name.get(cname)
        if c is None:
            s = (cname,)
        else:
            s = (c.is_entry, _leaves(p.shape for p in c.parameters),
                 _leaves([c.by_name[c.root].shape]) if c.root in c.by_name else None)
        memo[cname] = s
    return s


def same_computation(prev: Module, cur: Module, a: Instruction, lst: list[Instruction],
                     memo: dict) -> list[int]:
    """Indices into ``lst`` of the candidates whose computation has the signature of
    ``a``'s (all of them when none has)."""
    want = signature(cur, a.computation, memo.setdefault("cur", {}))
    pm = memo.setdefault("prev", {})
    js = [j for j, r in enumerate(lst) if signature(prev, r.computation, pm) == want]
    return js or list(range(len(lst)))


def merged_key(module: Module, i: Instruction, memo: dict) -> tuple:
    """What must agree, besides content, for the round trip to merge identical constants:
    their computation (one survivor per computation)."""
    return signature(module, i.computation, memo)
