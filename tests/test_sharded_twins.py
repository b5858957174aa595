"""Look-alikes on H100s told apart by a split-K reduce, a window or a reader (issue 9).

Fixture: fixtures/sharded_twins (fixtures/generate_sharded_twins.py compiles
fixtures/sharded_twins_programs.py for deviceless H100s with pass dumps; files copied
unedited). Instructions are found by their structure, not by name.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

D = Path(__file__).resolve().parent.parent / "fixtures" / "sharded_twins"


@lru_cache(maxsize=None)
def _run(mode: str, program: str):
    d = D / mode / program
    snaps = find_pass_dumps(d, f"jit_{program}")
    before = hlodiff.load(find_before_file(snaps))
    after = hlodiff.load(next(d.glob("*_after_optimizations.txt")))
    return before, after, diff_modules(before, after), trace(snaps, before)


def _entry(module):
    return module.entry_computation.instructions


def test_a_split_k_dot_with_transposed_partials_lives_in_its_reduce():
    # head_step: the gemm rewriter swapped the forward dot's operands, so its 8 partial
    # products are f32[8,128,40]{1,2,0} under a bitcast to f32[8,40,128]; the reduce named
    # after the dot sums them inside the LayerNorm kernels.
    before, after, res, orc = _run("gpu", "head_step")
    split = [i for i in _entry(before) if i.opcode == "dot" and any(
        p == "splitk-rewriter" for _, p, _ in orc.chain(i.name))]
    assert split, [orc.chain(i.name) for i in _entry(before) if i.opcode == "dot"]
    for i in split:
        f = res.fate_of(before.entry_computation.name, i.name)
        kernel = f.fusion or f.after
        assert kernel in orc.destinations(i.name), (i.name, kernel, orc.destinations(i.name))
        assert f.after.startswith("reduce"), (i.name, f.after, f.reason)
        assert "split-K" in f.reason and "8 partial products" in f.reason, f.reason


def test_scatters_of_key_blocks_follow_the_windows_of_their_slices():
    # blocks_step on 8 H100s: each layer's gradient scatters the random key (and value)
    # blocks back, each a slice [a:b] of one tensor in its own scatter kernel behind a
    # transpose. Every scatter and every slice feeding one must be named in its own kernel.
    before, after, res, orc = _run("gpu8", "blocks_step")
    by = {i.name: i for i in _entry(before)}
    scatters = [i for i in _entry(before) if i.opcode == "scatter"]
    slices = [by[o] for s in scatters for o in s.operands if o in by and by[o].opcode == "slice"]
    assert len(scatters) >= 8 and len(slices) >= 8, (len(scatters), len(slices))
    wrong = []
    for i in scatters + slices:
        if orc.fates[i.name].fate != "fused":
            continue
        f = res.fate_of(before.entry_computation.name, i.name)
        kernel = f.fusion or f.after
        if kernel not in orc.destinations(i.name):
            wrong.append((i.name, kernel, orc.destinations(i.name)))
    assert not wrong, wrong


def _renames_against_operands(program: str) -> tuple[int, list]:
    """(renames checked, contradictions) across the sharding passes: a renamed instruction
    whose operand is renamed to something other than what the new instruction reads there,
    while what it reads there is itself the rename of another instruction."""
    before, after, res, orc = _run("gpu8", program)
    files = sorted((D / "gpu8" / program).glob(f"*jit_{program}.0*.txt"))
    checked, bad = 0, []
    for step in orc.passes:
        if len(step.renamed) < 50:  # (the Shardy round trip and the partitioner rename all)
            continue
        k = files.index(step.path)
        prev = {i.name: i for i in _entry(hlodiff.load(files[k - 1]))}
        cur = {i.name: i for i in _entry(hlodiff.load(step.path))}
        ren, images = step.renamed, set(step.renamed.values())
        for r, a in ren.items():
            ri, ai = prev.get(r), cur.get(a)
            if ri is None or ai is None or len(ri.operands) != len(ai.operands):
                continue
            for ro, ao in zip(ri.operands, ai.operands):
                if ro not in ren or ao not in images or prev[ro].opcode in (
                        "constant", "broadcast", "iota"):
                    continue  # (the round trip merges identical constants)
                checked += 1
                if ren[ro] != ao:
                    bad.append((step.index, r, a, ro, ren[ro], ao))
    return checked, bad


def test_the_oracle_renames_twins_as_their_users_read_them():
    # convbn_step on 8 H100s: Adam's ``g * (1 - b2)`` for each equally shaped batch-norm
    # parameter reads the parameter's new reduce-scatter slice and one shared broadcast, so
    # the twins tie on every operand across the Shardy round trip and the partitioner;
    # what the second moment's add was renamed to says which one each is.
    checked, bad = _renames_against_operands("convbn_step")
    assert checked > 500, checked
    assert not bad, bad


def test_slices_of_a_merged_dot_follow_the_concatenation_order():
    # blocks_step on 8 H100s: the weight gradients of two projections, transpose(dot(...))
    # each, are rebuilt by algsimp as dots carrying the transpose's op_name, and the dot
    # merger merges them with a third that shares an operand: one dot over
    # concat(x_a, x_b, x_c) and a slice per original, in that order, each slice its own
    # kernel. Each layer's query, key and value projections (x @ w, one source line) are
    # merged too, their slices fused into the attention's kernels. Every such dot and
    # transpose must be named in the slice of its own piece, as the pass dumps say (two
    # pairs had been crossed; a key projection had the other layer's gemm, three had none).
    before, after, res, orc = _run("gpu8", "blocks_step")
    merged = [i for i in _entry(before) if any(p == "dot-merger" for _, p, _ in
                                                orc.chain(i.name))]
    assert len(merged) >= 16, len(merged)
    wrong = []
    for i in merged:
        f = res.fate_of(before.entry_computation.name, i.name)
        where = orc.destinations(i.name)
        if (f.fusion or f.after) not in where:
            wrong.append((i.name, f.fusion or f.after, where))
    assert not wrong, wrong
