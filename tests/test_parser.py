"""Unit tests of the grammar and the model, on small hand-written HLO (one feature each)."""

from __future__ import annotations

import pickle

import pytest

import hlodiff
from hlodiff import HloSyntaxError, parse
from hlodiff.hlo.lexer import tokenize


def test_module_header_signature_and_model_fields():
    m = parse("""HloModule axpy, entry_computation_layout={(f32[], f32[2,4]{1,0})->f32[2,4]{1,0}}

ENTRY %axpy.v5 (alpha: f32[], x: f32[2,4]) -> f32[2,4] {
  %alpha = f32[] parameter(0)
  %broadcast = f32[2,4]{1,0} broadcast(f32[] %alpha), dimensions={}
  %x = f32[2,4]{1,0} parameter(1)
  ROOT %multiply = f32[2,4]{1,0} multiply(f32[2,4]{1,0} %broadcast, f32[2,4]{1,0} %x)
}
""")
    assert m.name == "axpy"
    assert m.entry == "axpy.v5"
    assert m.attributes["entry_computation_layout"].startswith("{(f32[]")
    comp = m.entry_computation
    assert comp.signature == "(alpha: f32[], x: f32[2,4]) -> f32[2,4]"
    assert [i.name for i in comp.instructions] == ["alpha", "broadcast", "x", "multiply"]
    assert comp.root == "multiply" and comp["multiply"].is_root
    assert [p.name for p in comp.parameters] == ["alpha", "x"]
    mul = comp["multiply"]
    assert mul.operands == ["broadcast", "x"]
    assert mul.shape.dims == (2, 4) and mul.shape.layout.minor_to_major == (1, 0)
    assert mul.shape.byte_size == 32
    assert comp["broadcast"].dimensions == ()
    assert mul.line == 7


def test_bare_names_headerless_module_and_root_defaults_to_last():
    m = parse("""add {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT s = f32[] add(p0, p1)
}

ENTRY e {
  a = f32[8] parameter(0)
  z = f32[] constant(0)
  r = f32[] reduce(a, z), dimensions={0}, to_apply=add
}
""")
    assert m.name == "module_e" and m.entry == "e"
    r = m.computation("e")["r"]
    assert r.is_root and r.called == {"to_apply": ("add",)} and r.calls == ("add",)
    assert r.dimensions == (0,)
    assert m.computation("e")["z"].literal == "0"


def test_fusion_metadata_and_stack_frames():
    m = parse("""HloModule f

FileNames
1 "/src/model.py"

FunctionNames
1 "loss"

FileLocations
1 {file_name_id=1 function_name_id=1 line=42 end_line=42 column=3 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=0}

%fused (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%p), metadata={op_name="jit(f)/neg" stack_frame_id=1}
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  ROOT %fusion = f32[4]{0} fusion(%x), kind=kLoop, calls=%fused, metadata={op_type="neg" op_name="jit(f)/neg" source_file="/src/model.py" source_line=7}, backend_config={"outer_dimension_partitions":["2"]}
}
""")
    f = m.entry_computation["fusion"]
    assert f.fusion_kind == "kLoop" and f.calls == ("fused",)
    assert f.op_name == "jit(f)/neg" and f.source == "/src/model.py:7"
    assert f.attrs["backend_config"] == '{"outer_dimension_partitions":["2"]}'
    inner = m.computation("fused")["n"]
    assert inner.source == "/src/model.py:42"  # resolved through StackFrames
    assert m.tables.stack(1) == [("/src/model.py", "loss", 42)]


@pytest.mark.parametrize("shape, dims, dynamic, extras", [
    ("f32[<=4,?]{1,0}", (4, -1), (True, True), ""),
    ("bf16[8,128]{1,0:T(8,128)(2,1)S(1)}", (8, 128), (False, False), "T(8,128)(2,1)S(1)"),
    ("u32[]{:S(2)}", (), (), "S(2)"),
    ("s4[2, 3]{ 1 , 0 }", (2, 3), (False, False), ""),
])
def test_shapes(shape, dims, dynamic, extras):
    m = parse(f"ENTRY e {{\n  ROOT p = {shape} parameter(0)\n}}\n")
    s = m.entry_computation["p"].shape
    assert s.dims == dims and s.dynamic == dynamic
    assert (s.layout.extras if s.layout else "") == extras
    if extras == "S(2)":
        assert s.layout.memory_space == 2


def test_tuples_constants_literals_and_comments():
    m = parse("""HloModule t
ENTRY e {
  c0 = f32[2,2]{1,0} constant({ { 1, 2 }, { 3, 4 } })
  c1 = c64[2]{0} constant({(1, 2), (-inf, nan)})
  c2 = f32[67,89]{1,0} constant({...})
  c3 = u64[] constant(18446744073709551615)
  c4 = f32[] constant(-nan(0x7f))
  t = (f32[2,2]{1,0}, (c64[2]{0}, /*index=2*/f32[67,89]{1,0})) tuple(c0, c1, c2) // a comment
  ROOT g = f32[2,2]{1,0} get-tuple-element(t), index=0
}
""")
    c = m.entry_computation
    assert c["c0"].literal == "{ { 1, 2 }, { 3, 4 } }"
    assert c["c2"].literal == "{...}"
    assert c["t"].shape.is_tuple and len(c["t"].shape.tuple_shapes) == 2
    assert c["g"].index == 0


def test_attribute_values_of_every_kind_are_kept_as_text():
    m = parse("""HloModule a, replica_count=2, input_output_alias={ {0}: (0, {}, must-alias) }
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %main (p: f32[1,8,8,4], k: f32[3,3,4,4], v: f32[8]) -> f32[8] {
  %p = f32[1,8,8,4]{3,2,1,0} parameter(0)
  %k = f32[3,3,4,4]{3,2,1,0} parameter(1)
  %conv = f32[1,8,8,4]{3,2,1,0} convolution(%p, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, sharding={devices=[1,2,1,1]0,1}
  %v = f32[8]{0} parameter(2)
  %ar = f32[8]{0} all-reduce(%v), replica_groups=[1,2]<=[2], to_apply=%add, channel_id=1
  %ar2 = f32[8]{0} all-reduce(%ar), replica_groups={{0,1}}, to_apply=%add, frontend_attributes={_xla_x="1",k={a = 1 : i32}}
  %sl = f32[4]{0} slice(%ar2), slice={[0:8:2]}
  %pd = f32[8]{0} pad(%sl, f32[] constant(0)), padding=2_2
  ROOT %out = f32[8]{0} add(%pd, %ar2), control-predecessors={%conv}
}
""")
    c = m.entry_computation
    assert c["conv"].attrs["window"] == "{size=3x3 pad=1_1x1_1}"
    assert c["conv"].attrs["dim_labels"] == "b01f_01io->b01f"
    assert c["conv"].attrs["sharding"] == "{devices=[1,2,1,1]0,1}"
    assert c["ar"].attrs["replica_groups"] == "[1,2]<=[2]"
    assert c["ar2"].attrs["frontend_attributes"] == '{_xla_x="1",k={a = 1 : i32}}'
    assert c["sl"].attrs["slice"] == "{[0:8:2]}"
    assert c["out"].control_predecessors == ("conv",)
    assert m.attributes["input_output_alias"] == "{ {0}: (0, {}, must-alias) }"
    # the nested constant operand became an instruction of its own, named as XLA names it
    assert "constant.anon" in c.by_name and c["pd"].operands == ["sl", "constant.anon"]


def test_async_sugar_builds_the_wrapped_computation():
    m = parse("""HloModule s
ENTRY %e (p0: f32[10]) -> f32[20] {
  %p0 = f32[10]{0} parameter(0)
  %start = ((f32[10]{0}), f32[20]{0}, s32[]) custom-call-start(%p0), custom_call_target="foo"
  ROOT %done = f32[20]{0} custom-call-done(%start)
}
""")
    start = m.entry_computation["start"]
    assert start.opcode == "async-start" and start.async_wrapped == "custom-call"
    wrapped = m.computation(start.calls[0])
    assert [i.opcode for i in wrapped.instructions] == ["parameter", "custom-call"]
    assert wrapped.root_instruction.custom_call_target == "foo"


def test_compact_tuple_operands_and_module_wide_unique_names():
    m = parse("""HloModule u
c1 {
  p0 = (f32[2], f32[3]) parameter(0)
  ROOT a = f32[2] add(p0#0, p0#0)
}
ENTRY e {
  p0 = (f32[2], f32[3]) parameter(0)
  ROOT c = f32[2] call(p0), to_apply=c1
}
""")
    c1 = m.computation("c1")
    assert c1["a"].operands == ["p0#0", "p0#0"] and c1["p0#0"].opcode == "get-tuple-element"
    # XLA gives the second computation's p0 a new name, as its parser does
    assert [i.name for i in m.entry_computation.instructions] == ["p0.1", "c"]
    assert m.entry_computation["c"].operands == ["p0.1"]


@pytest.mark.parametrize("text, line, col, expected", [
    ("HloModule m\nENTRY e {\n  ROOT p = f32[]{} parameter(0)\n}\n", 3, 17, "found '{} par"),
    ("HloModule m\nENTRY e {\n  ROOT p = g32[] parameter(0)\n}\n", 3, 15, "'('"),
    ("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n", 4, 1, "'}'"),
    ("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT q = f32[] le(p)\n}\n", 4, 18,
     "an HLO opcode"),
    ("HloModule m\nENTRY e {\n  ROOT q = f32[] add(p, p)\n}\n", 3, 1,
     "operands defined earlier"),
    ("HloModule m\nENTRY e { /* open\n", 2, 11, "'*/'"),
    ("", 1, 1, "an HLO module"),
])
def test_syntax_errors_name_line_column_and_expectation(text, line, col, expected):
    with pytest.raises(HloSyntaxError) as e:
        parse(text, path="x.hlo")
    assert (e.value.line, e.value.column) == (line, col)
    assert expected in str(e.value)
    assert str(e.value).startswith(f"x.hlo:{line}:{col}: expected ")


def test_window_padding_must_be_pairs():
    with pytest.raises(HloSyntaxError, match="low_high pairs"):
        parse("ENTRY e {\n  p = f32[4] parameter(0)\n  c = f32[] constant(0)\n"
              "  ROOT r = f32[4] reduce-window(p, c), window={size=1 pad=1_1_0}, to_apply=e\n}\n")


def test_binary_and_non_utf8_input_is_rejected():
    with pytest.raises(HloSyntaxError, match="NUL byte"):
        parse("HloModule m\x00")
    with pytest.raises(HloSyntaxError, match="UTF-8"):
        parse(b"\xff\xfe junk")


def test_coarse_tokens_cover_common_lines():
    """The fast path: a typical optimized line is a handful of tokens."""
    line = ('%fusion.3 = f32[128,128]{1,0} fusion(f32[128]{0} %p.1, %b), kind=kLoop, '
            'calls=%fused_computation, metadata={op_name="jit(f)/add" source_line=3}\n')
    kinds = [t.type for t in tokenize(line)]
    assert kinds == ["INSTR_HEAD", "OPERANDS", "CATTR_SIMPLE", "CATTR_SIMPLE", "CMETADATA"]


def test_model_pickles_and_graphs(tmp_path):
    m = parse("ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] add(a, a)\n}\n")
    m2 = pickle.loads(pickle.dumps(m))
    assert [i.name for i in m2.entry_computation.instructions] == ["a", "b"]
    g = hlodiff.to_networkx(m.entry_computation)
    assert sorted((u, v, d["index"]) for u, v, d in g.edges(data=True)) == [
        ("a", "b", 0), ("a", "b", 1)]
    cg = hlodiff.to_networkx(m)
    assert list(cg.nodes) == ["e"]
