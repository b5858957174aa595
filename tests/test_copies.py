"""Values that live on in more than one place after optimization (issue 9).

Fixture: fixtures/copies (fixtures/generate_copies.py runs fixtures/copies_programs.py with
pass dumps: two CPU programs and one for 8 deviceless H100s; files copied unedited). Each
test checks the engine against the oracle (the pass dumps) on instructions found by their
structure, not by name.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

D = Path(__file__).resolve().parent.parent / "fixtures" / "copies"


@lru_cache(maxsize=None)
def _run(mode: str, program: str):
    d = D / mode / program
    snaps = find_pass_dumps(d, f"jit_{program}")
    before = hlodiff.load(find_before_file(snaps))
    after = hlodiff.load(next(d.glob("*_after_optimizations.txt")))
    return before, diff_modules(before, after), trace(snaps, before)


def test_a_constant_kept_beside_its_fused_copy_is_kept():
    # count_step: cumsum's callee holds ``constant(0)``, the reduce-window's initial value.
    # The call inliner gives the copy the call's op_name; the reduce-window rewriter reads
    # it in two windows and the pad, fusion copies it into the padding kernel and keeps it
    # at top level for the windows. The bucket of its metadata holds both copies.
    before, res, orc = _run("cpu", "count_step")
    inits = [(c.name, i.name) for c in before.computations for i in c.instructions
             if i.opcode == "constant" and any(
                 u.opcode == "reduce-window" and u.operands[1] == i.name
                 for u in c.instructions)]
    assert inits
    for comp, name in inits:
        assert orc.fates[name].fate == "kept", orc.fates[name]
        f = res.fate_of(comp, name)
        assert f.fate == "kept", (name, f.fate, f.reason)
        assert f.after in orc.destinations(name), (f.after, orc.destinations(name))


def _instructions(before):
    """(computation, its instructions by name, instruction) for every instruction."""
    for c in before.computations:
        by = {i.name: i for i in c.instructions}
        for i in c.instructions:
            yield c, by, i


def _views_of_rsqrts(before):
    """(computation, instruction) of each reshape or broadcast reading an rsqrt directly or
    through such views, with as many elements as the rsqrt."""
    out = []
    for c, by, i in _instructions(before):
        x = i
        while x is not None and x.opcode in ("reshape", "broadcast") and \
                x.shape.num_elements == i.shape.num_elements:
            x = by.get(x.operands[0])
        if x is not None and x is not i and x.opcode == "rsqrt" and \
                x.shape.num_elements == i.shape.num_elements:
            out.append((c.name, i.name))
    return out


def test_views_of_a_remat_twin_live_where_the_kept_twin_does():
    # dense_step: CSE merges each recomputed batch norm with its forward twin once the
    # jax.checkpoint barriers fall; the twin correction moves the rsqrt to the kept twin's
    # kernel, and its reshape and no-op broadcast (removed by algsimp) move with it.
    before, res, orc = _run("cpu", "dense_step")
    views = _views_of_rsqrts(before)
    assert len(views) >= 12, views
    wrong = []
    for comp, name in views:
        f = res.fate_of(comp, name)
        want = orc.destinations(name)
        if want and (f.fusion or f.after) not in want:
            wrong.append((name, f.fate, f.fusion or f.after, want, f.reason))
    assert not wrong, wrong


def test_a_residual_add_in_cudnns_side_input_names_the_fused_convolution():
    # res_step on 8 H100s: conv(h, w2) + (x * s + b2) becomes one
    # __cudnn$convBiasActivationForward call whose fourth operand (the side input) is the
    # kernel computing x * s + b2.
    before, res, orc = _run("gpu8", "res_step")
    adds = []
    for c, by, i in _instructions(before):
        o = orc.fates.get(i.name)
        if i.opcode == "add" and o is not None and o.computation == c.name and \
                o.pass_name == "cudnn-fused-convolution-rewriter":
            adds.append((c.name, i, any(by[x].opcode == "broadcast" for x in i.operands)))
    assert any(not bias for _, _, bias in adds), adds  # the residual (and the bias adds)
    for comp, i, bias in adds:
        f = res.fate_of(comp, i.name)
        assert f.fate == "rewritten", (i.name, f.fate, f.reason)
        assert f.after in orc.destinations(i.name), (i.name, f.after, orc.destinations(i.name))
        assert bias or "side input" in f.reason, f.reason


def test_narrow_multiplies_are_told_apart_through_normalizations_converts():
    # gelu_step on 8 CPU devices: tanh GELU's x ** 3 is multiply(x, x), then
    # multiply(that, x), one op_name; fusion puts x * x in one kernel and the product with
    # x in the tanh kernel, each reading f32 converts of bf16 values.
    before, res, orc = _run("cpu8", "gelu_step")
    cubes = []
    for c, by, i in _instructions(before):
        sq = by.get(i.operands[0]) if i.opcode == "multiply" else None
        if sq is not None and sq.opcode == "multiply" and sq.operands[0] == sq.operands[1] \
                and i.operands[1] == sq.operands[0]:
            cubes.append((c.name, i.name, sq.name))
    assert cubes
    for comp, cube, square in cubes:
        for name in (cube, square):
            f, want = res.fate_of(comp, name), orc.destinations(name)
            assert f.fate == orc.fates[name].fate, (name, f.fate, f.reason)
            assert f.fusion in want, (name, f.fusion, want)
        assert res.fate_of(comp, cube).fusion != res.fate_of(comp, square).fusion
