"""Gradients on 8 H100s summed by one combined reduce-scatter and read back as its tuple
elements (issue 9): element ``k`` of the ``async-done`` carries operand ``k`` of the
``async-start``, the only link between a gradient's kernel and the kernels reading the
sum (collective_elements.py). Without it the readers of same-shaped gradients were paired
with one another's kernels.

Fixture: fixtures/collective_elements (fixtures/generate_collective_elements.py: unedited
modules of benchmarks/zoo_fresh12_programs.py talking_heads_rope_block, jax 0.10.2, 8
H100s deviceless).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.diff.collective_elements import element_readers, element_sources
from hlodiff.diff.view import after_view

from .conftest import load_pair

D = Path(__file__).resolve().parent.parent / "fixtures" / "collective_elements" / \
    "gpu8_talking_heads_rope_block"


@lru_cache(maxsize=None)
def _result():
    return diff_modules(*load_pair(D))


def _kernel(name: str) -> str | None:
    f = _result().fate_of("main.49", name)
    return f.fusion or f.after


def test_combined_reduce_scatter_elements_carry_their_operands():
    """Each get-tuple-element of the async reduce-scatter's done carries the operand of
    the same index of its start; its readers count as the operand's readers."""
    v = after_view(hlodiff.load(next(D.glob("*after_optimizations.txt"))))
    src = element_sources(v)
    start = next(x for x in v.nodes if x.name == "reduce-scatter-start")
    assert start.opcode == "async-start"
    elements = [x for x in v.nodes if x.opcode == "get-tuple-element" and x.operands and
                v.nodes[x.operands[0]].name == "reduce-scatter-done"]
    assert len(elements) > 4
    for e in elements:
        assert src[e.idx] == start.operands[e.inst.index]
    readers = element_readers(v)
    for e in elements:
        assert set(e.users) <= set(readers[src[e.idx]])


def test_gradient_sums_in_their_kernels():
    """XLA's pass dumps: the gradient sums reduce_sum.250 and reduce_sum.251 are in
    loop_multiply_reduce_fusion, reduce_sum.252 in input_multiply_reduce_fusion; they had
    been swapped, their readers all being elements of one reduce-scatter."""
    assert _kernel("reduce_sum.250") == "loop_multiply_reduce_fusion"
    assert _kernel("reduce_sum.251") == "loop_multiply_reduce_fusion"
    assert _kernel("reduce_sum.252") == "input_multiply_reduce_fusion"
