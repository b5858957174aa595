"""Neighbours paired with one of fusion's copies count for every copy (issue 9, class 3).

Fusion copies a cheap producer chain whole into each kernel that reads it. The matcher
pairs the before instruction with one copy; a reader in another kernel reads another copy.
The rewrite step's score must see that copy as the same value, or two readers of one
value (a reduce of it, a reduce of a product with it) trade kernels.

Fixture: fixtures/fused_copies (fixtures/generate_fused_copies.py; fresh 11 on 8 CPU
devices, XLA's own modules). Expected kernels are those XLA's pass dumps name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hlodiff.diff import diff_modules

from .conftest import load_pair
from hlodiff.diff.fused_copies import copy_keys
from hlodiff.diff.match import match
from hlodiff.diff.view import after_view, before_view

D = Path(__file__).resolve().parent.parent / "fixtures" / "fused_copies" / "densenet_block_concat"


@pytest.fixture(scope="module")
def modules():
    before, after = load_pair(D)
    return before, after


def test_each_reduce_names_the_kernel_reading_its_own_operand(modules):
    r = diff_modules(*modules)
    # reduce_sum.252 = reduce(select_n.25); reduce_sum.254 = reduce(mul.109), and mul.109
    # reads select_n.25 too; each kernel holds its own copy of select_n.25
    for name, kernel in (("reduce_sum.252", "select_reduce_fusion"),
                         ("reduce_sum.254", "multiply_reduce_fusion"),
                         ("reduce_sum.260", "select_reduce_fusion.1"),
                         ("reduce_sum.262", "multiply_reduce_fusion.1")):
        f = r.fate_of(name)
        assert f.fusion == kernel, (name, f.fate, f.fusion, f.reason)


def test_copies_of_a_chain_share_a_key_and_literals_alone_do_not(modules):
    B, A = before_view(modules[0]), after_view(modules[1])
    m = match(B, A)
    keys = copy_keys(m)
    by_name = {}
    for a in A.nodes:
        if a.fusion >= 0 and a.alias < 0:
            by_name.setdefault(A.nodes[a.fusion].name, {})[a.name] = a
    # the relu derivative select(gt(conv, 0), ...), copied whole into three kernels
    sel = [by_name[k][n] for k, n in (("add_slice_fusion", "select_n.71"),
                                      ("select_reduce_fusion", "select_n.67"),
                                      ("multiply_reduce_fusion", "select_n.64"))]
    assert len({keys[a.idx] for a in sel}) == 1
    assert len({a.idx for a in sel}) == 3
    # scalar literals of different kernels keep their own keys (one 0 serves every layer)
    zeros = [a for k in by_name.values() for a in k.values()
             if a.opcode == "constant" and a.inst.literal in ("0", 0)]
    assert len(zeros) > 1 and len({keys[a.idx] for a in zeros}) == len(zeros)
