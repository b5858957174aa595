"""Values that algebraic simplification and CSE bring together under JAX 0.4.30 (issue 9).

Fixture: fixtures/old3 (fixtures/generate_old3.py runs fixtures/old3_programs.py's
``bn_var_sgd`` under JAX 0.4.30 on the CPU with pass dumps; files copied unedited). A dense
layer, a batch norm with ``jnp.var`` (a call in this version) and ``jnp.mean``, and SGD
written ``w - 0.1 * g - 0.0``; ``ws_step``, a clipped weight standardized over all its
elements (clip, var and var's transpose are calls). Instructions are found by their
structure, not by name.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

D = Path(__file__).resolve().parent.parent / "fixtures" / "old3" / "old"


@lru_cache(maxsize=None)
def _run(program: str = "step"):
    snaps = find_pass_dumps(D / program, f"jit_{program}")
    bf = find_before_file(snaps)
    before = hlodiff.load(bf)
    after = hlodiff.load(next((D / program).glob("*_after_optimizations.txt")))
    return before, diff_modules(before, after), trace(snaps, before)


def _insts(comp_prefix: str | None = None, program: str = "step"):
    before = _run(program)[0]
    for c in before.computations:
        if comp_prefix is None or c.name.startswith(comp_prefix):
            top = {i.name: i for i in c.instructions}
            for i in c.instructions:
                yield c, top, i


def _literal_of(top, name):
    i = top.get(name)
    while i is not None and i.opcode == "broadcast":
        i = top.get(i.operands[0])
    return i.literal if i is not None and i.opcode == "constant" else None


def _minus_zero():
    """(outer, inner) for each ``outer = subtract(inner, broadcast(0))``, inner a subtract."""
    out = []
    for c, top, i in _insts():
        if i.opcode == "subtract" and _literal_of(top, i.operands[1]) == "0" and \
                top.get(i.operands[0]) is not None and top[i.operands[0]].opcode == "subtract":
            out.append((c.name, i.name, i.operands[0]))
    assert len(out) == 4, out  # one per parameter
    return out


def test_the_pass_dumps_keep_the_outer_name_on_the_inner_subtract():
    _, _, orc = _run()
    for _, outer, inner in _minus_zero():
        f = orc.info(inner)
        assert (f.fate, f.pass_name) == ("rewritten", "algsimp"), (inner, f)
        assert orc.fates[outer].fate == "fused"
        assert orc.destinations(inner) == orc.destinations(outer), inner


def test_the_engine_swaps_the_identity_and_the_value_it_passed_on():
    _, res, orc = _run()
    for comp, outer, inner in _minus_zero():
        fo, fi = res.fate_of(comp, outer), res.fate_of(comp, inner)
        assert fo.fate == "fused" and fo.fusion in orc.destinations(outer), fo
        assert fi.fate == "rewritten" and fi.fusion == fo.fusion, fi
        assert f"renamed {outer}" in fi.reason


def test_the_zero_of_the_identity_goes_with_it_not_folded():
    _, res, orc = _run()
    zeros = {(c.name, top[i.operands[1]].operands[0]) for c, top, i in _insts()
             if i.opcode == "subtract" and _literal_of(top, i.operands[1]) == "0"}
    assert zeros
    for comp, z in zeros:
        assert orc.fates[z].fate == "rewritten"
        assert res.fate_of(comp, z).fate == "rewritten", res.fate_of(comp, z)


def _agree(pairs, fate: str, program: str = "step", says: str = "", named: bool = False):
    """The oracle and the engine give each (computation, instruction) ``fate``; the
    engine's reason holds ``says``; ``named``: its kernel is one of the oracle's."""
    _, res, orc = _run(program)
    assert pairs
    for comp, name in pairs:
        assert orc.fates[name].fate == fate, (name, orc.fates[name])
        f = res.fate_of(comp, name)
        assert f.fate == fate and says in f.reason, f
        assert not named or f.fusion in orc.destinations(name), f


def test_vars_two_is_folded_into_two_over_n():
    _agree([(c.name, i.name) for c, top, i in _insts("_var")
            if i.opcode == "constant" and i.literal == "2"], "folded", says="2 / 32", named=True)


def test_a_divisor_is_rewritten_by_algsimp_not_folded():
    _agree([(c.name, i.name) for c, top, i in _insts("_var")
            if i.opcode == "constant" and i.literal == "32" and any(
                u.opcode == "broadcast" and u.operands == [i.name] and any(
                    d.opcode == "divide" and d.operands[1] == u.name
                    for d in c.instructions) for u in c.instructions)], "rewritten")


def test_vars_centred_input_is_merged_with_the_norms():
    _agree([(c.name, i.name) for c, top, i in _insts("_var")
            if i.opcode == "subtract" and top.get(i.operands[0]) is not None and
            top[i.operands[0]].opcode == "parameter" and len(i.shape.dims) == 2], "merged",
           says="views between them", named=True)


def test_the_reduce_init_of_vars_transpose_is_merged():
    _agree({(c.name, i.operands[1]) for c, top, i in _insts("_var", "ws_step")
            if i.opcode == "reduce" and top[i.operands[1]].opcode == "constant"}, "merged",
           program="ws_step")


def test_a_reduce_init_inlined_with_calls_of_calls_is_merged():
    """fresh 16 apot under JAX 0.4.30 (modules before and after; the pass dumps merge the
    literal at CSE, dump 0026): both reduces that read it are inlined with var's transpose,
    whose inputs are other calls' results, and neither has a partner the matcher found."""
    d = D / "apot_additive_powers_two_quant"
    before = hlodiff.load(next(d.glob("*before_optimizations.txt")))
    res = diff_modules(before, hlodiff.load(next(d.glob("*_after_optimizations.txt"))))
    f = res.fate_of("_var_28.1154", "constant.1160")
    assert f.fate == "merged", f
