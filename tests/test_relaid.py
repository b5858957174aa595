"""The oracle follows instructions that a pass rebuilt on another layout together with
their readers (issue 9, class 12): XLA:GPU's move_copy_to_users and layout_normalization
leave no surviving reader to name the replacement, and the walk had ended such values with
no destination. And a reader whose name a pass gave to the instruction that replaced
another is not read as the old reader.

Fixtures: fixtures/relaid and fixtures/takeovers (fixtures/generate_relaid.py: unedited
pass snapshots of benchmarks/zoo_fresh9_programs.py qk_norm_softcap_attention, jax 0.10.2,
8 H100s deviceless; of benchmarks/zoo_fresh20_programs.py
bf16_grn_convnextv2_masked_pretrain, CPU).
"""

from __future__ import annotations

from pathlib import Path

from hlodiff.dumps.passes import find_pass_dumps, trace

D = Path(__file__).resolve().parent.parent / "fixtures" / "relaid"


def _trace():
    return trace(find_pass_dumps(D, "jit_qk_norm_softcap_attention"))


def test_layout_normalization_rebuilds_are_followed():
    """mul.127 = multiply(sub, broadcast) on f32[1,8,2,8]{1,0,3,2} becomes multiply.68 on
    f32[2,8,1,8]{3,2,1,0} (dump 0055), reading bitcasts of its operands' rebuilt twins;
    its broadcast operand mul.126 becomes broadcast.129."""
    t = _trace()
    assert t.chain("mul.127")[0] == ("rewritten", "layout_normalization", "multiply.68")
    assert t.chain("mul.126")[0] == ("rewritten", "layout_normalization", "broadcast.129")


def test_copies_moved_to_users_then_normalized():
    """move_copy_to_users (dump 0054) rebuilds mul.341 past its operands' copies as
    multiply.63; layout_normalization (dump 0055) then rebuilds that as multiply.79."""
    assert _trace().chain("mul.341")[:2] == [
        ("rewritten", "move_copy_to_users", "multiply.63"),
        ("rewritten", "layout_normalization", "multiply.79")]


def test_each_rebuilt_multiply_is_named_once():
    """Every multiply followed into layout_normalization's new instructions is followed
    into a new multiply, and no new multiply is named for two removed ones (a rebuild is
    one for one; where the operands do not tell candidates apart, none is named)."""
    t = _trace()
    seen: dict[str, str] = {}
    for name, f in t.fates.items():
        step = t.chain(name)[0]
        if f.opcode != "multiply" or step[1] != "layout_normalization" or not step[2]:
            continue
        if step[2].startswith("multiply"):
            assert step[2] not in seen, (name, seen[step[2]])
            seen[step[2]] = name
    assert len(seen) >= 10


def test_a_reader_taken_over_by_a_replacement_is_not_read_as_the_old_reader():
    """CPU, algsimp (dump 0017): convert.1520 = bf16 convert(convert.87 = f32
    convert(convert_element_type.103)) is a round trip; algsimp removes it and prints
    convert_element_type.103 = bf16 convert(a_0___sb__.1) under the name convert.1520.
    convert.87's value lives on in that new convert.1520, not in the f32 parameter its
    operand reads (the walk had said a_0___sb__.1)."""
    t = trace(find_pass_dumps(D.parent / "takeovers", "jit_bf16_grn_convnextv2_masked_pretrain"))
    assert t.chain("convert.87")[0] == ("rewritten", "algsimp", "convert.1520")
    assert t.chain("convert.750")[0] == ("rewritten", "algsimp", "convert.1589")
