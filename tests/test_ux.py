"""A new user's first hour: the module a dump directory means, the user's own source lines,
the output format from -o, swapped arguments, and `capture` as a CI step."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import hlodiff
from hlodiff.cli import main
from hlodiff.dumps.directory import choose_module, find_dumps, scan_work

from .conftest import ROOT, fixture_pair

DUMPS = ROOT / "fixtures" / "dumps"
CPU_TRAIN = DUMPS / "cpu_train"
GPU_MLP = DUMPS / "gpu_mlp"


def run_cli(*args: str, cwd: str | os.PathLike | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "100", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "hlodiff", *args], capture_output=True,
                          text=True, timeout=300, env=env, cwd=cwd)


# ---- 1. the module the user means ---------------------------------------------------------

def test_training_script_dump_picks_the_step_not_the_larger_prng_helpers():
    pairs = find_dumps(CPU_TRAIN)
    by_name = {p.name: p for p in pairs}
    # the premise: a PRNG helper is the largest file of the directory
    assert max(pairs, key=lambda p: p.size).name == "jit__randint"
    assert pairs[0].name == "jit_train_step"
    step = by_name["jit_train_step"].work
    # 64->128->128->10 MLP, batch 32: forward 2*32*(64*128+128*128+128*10) FLOPs, backward twice
    # that less the unneeded input gradient (2*32*64*128)
    assert step.flops == 3 * 2 * 32 * (64 * 128 + 128 * 128 + 128 * 10) - 2 * 32 * 64 * 128
    assert step.dots == 8
    assert by_name["jit__randint"].work.flops == 0 and by_name["jit__randint"].is_jax_helper


def test_diff_of_the_directory_names_the_pick_and_the_others():
    r = CliRunner().invoke(main, [str(CPU_TRAIN), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["before"]["module"] == "jit_train_step"
    msg = [ln for ln in r.stderr.splitlines() if ln.startswith("hlodiff: module")]
    assert len(msg) == 1
    assert "jit_train_step (8 dots" in msg[0]
    assert "others: " in msg[0] and "jit__randint" in msg[0] and "jit__normal" in msg[0]


def test_show_directory_lists_the_pick_first_as_a_subprocess():
    r = run_cli("show", str(CPU_TRAIN))
    assert r.returncode == 0, r.stderr
    rows = [ln for ln in r.stdout.splitlines() if ln.startswith("module_")]
    assert "jit_train_step" in rows[0]
    assert "explains module jit_train_step" in " ".join(r.stdout.split())
    r = run_cli("show", str(CPU_TRAIN), "--format", "json")
    data = json.loads(r.stdout)
    assert data[0]["name"] == "jit_train_step" and data[0]["flops"] > 0


def test_module_option_still_picks_a_helper():
    chosen, _ = choose_module(CPU_TRAIN, "jit__randint")
    assert chosen.name == "jit__randint"
    chosen, _ = choose_module(CPU_TRAIN, "module_0010")
    assert chosen.name == "jit_multiply"


def test_gpu_dump_directory_skips_per_fusion_side_modules():
    names = {p.name for p in find_dumps(GPU_MLP)}
    assert names == {"jit_step"}  # fused_negate etc. are pass snapshots, not modules
    chosen, others = choose_module(GPU_MLP)
    assert chosen.after.name == "module_0001.jit_step.sm_9.0a_gpu_after_optimizations.txt"
    assert not others
    assert scan_work(chosen.after).flops > 0  # dots inside Triton gemm fusions count
    r = CliRunner().invoke(main, [str(GPU_MLP), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["after"]["module"] == "jit_step"


@pytest.mark.parametrize("suffix", [
    "cpu_after_optimizations", "gpu_after_optimizations", "sm_9.0_gpu_after_optimizations",
    "sm_9.0a_gpu_after_optimizations", "gfx90a_gpu_after_optimizations", "after_optimizations"])
@pytest.mark.parametrize("stamp", ["", "1700000000123."])
def test_every_platforms_file_names(tmp_path, suffix, stamp):
    before, after = fixture_pair("mlp_step")
    shutil.copy(before, tmp_path / f"{stamp}module_0026.jit_mlp_step.before_optimizations.txt")
    shutil.copy(after, tmp_path / f"{stamp}module_0026.jit_mlp_step.{suffix}.txt")
    # not modules: reports and pass snapshots beside them
    shutil.copy(after, tmp_path / f"module_0026.jit_mlp_step.{suffix}-buffer-assignment.txt")
    shutil.copy(before, tmp_path / "module_0026.jit_mlp_step.0003.pipe.after_x.before_after_optimizations.txt")
    pairs = find_dumps(tmp_path)
    assert [(p.name, p.after.name) for p in pairs] == [
        ("jit_mlp_step", f"{stamp}module_0026.jit_mlp_step.{suffix}.txt")]
    assert pairs[0].before is not None


# ---- 2. the user's own source line --------------------------------------------------------

def test_sources_name_the_users_lines_not_the_librarys():
    r = CliRunner().invoke(main, [str(CPU_TRAIN), "--format", "json"])
    sources = [i["source"] for i in json.loads(r.stdout)["instructions"] if i["source"]]
    assert sources
    # the layers come from site-packages/tinylib; the user's lines call them
    assert all(s.startswith("train_script.py:") for s in sources), set(sources)


def test_stack_tables_read_the_printed_parent_ids():
    m = hlodiff.load(next(CPU_TRAIN.glob("*jit_train_step.before_optimizations.txt")))
    stacks = [m.tables.stack(fid) for fid in m.tables.stack_frames]
    # every stack ends at the script's top level, and no frame is its own caller
    assert all(s[-1][1] == "<module>" for s in stacks)
    lib = [s for s in stacks if s[0][0].startswith("site-packages/")]
    assert lib and all(s[1][0] == "train_script.py" for s in lib)


def test_source_column_is_whole_and_relative_to_the_current_directory(tmp_path):
    work = tmp_path / "proj"
    shutil.copytree(CPU_TRAIN, work / "dumps")
    # an absolute source path under the current directory prints relative to it
    for p in (work / "dumps").glob("*train_step*optimizations.txt"):
        p.write_text(p.read_text().replace('"train_script.py"', f'"{work}/src/train_script.py"'))
    r = run_cli(str(work / "dumps"), cwd=work)
    assert r.returncode == 0, r.stderr
    table = r.stdout[r.stdout.index("Source lines"):]
    assert "src/train_script.py:31" in table and str(work) not in table
    assert "…" not in table.split("\n", 3)[3].split()[0]


# ---- 4. output format, swapped arguments, capture ----------------------------------------

@pytest.mark.parametrize("suffix,check", [
    (".html", lambda t: t.startswith("<!DOCTYPE html>")),
    (".json", lambda t: json.loads(t)["schema"] == 1),
    (".md", lambda t: t.startswith("hlodiff optimization mode")),
])
def test_output_suffix_chooses_the_format(tmp_path, suffix, check):
    before, after = fixture_pair("fold_cse")
    out = tmp_path / f"report{suffix}"
    r = CliRunner().invoke(main, [str(before), str(after), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert check(out.read_text())


def test_explicit_format_beats_the_suffix(tmp_path):
    before, after = fixture_pair("fold_cse")
    out = tmp_path / "report.html"
    r = CliRunner().invoke(main, [str(before), str(after), "-o", str(out), "--format", "json"])
    assert r.exit_code == 0 and json.loads(out.read_text())["schema"] == 1


def test_swapped_arguments_warn():
    before, after = fixture_pair("mlp_step")
    r = run_cli(str(after), str(before), "--format", "json")
    assert "warning: the first module" in r.stderr and "give the unoptimized module first" in r.stderr
    r = run_cli(str(before), str(after), "--format", "json")
    assert r.returncode == 0 and "warning" not in r.stderr


FAILING = """
import sys, jax, jax.numpy as jnp

@jax.jit
def step(w, x):
    return jnp.tanh(x @ w).sum()

step(jnp.ones((8, 8)), jnp.ones((4, 8))).block_until_ready()
sys.exit(3)
"""


@pytest.mark.slow
def test_capture_keeps_the_programs_exit_status_and_writes_reports(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(FAILING)
    out = tmp_path / "r.html"
    r = run_cli("capture", "-o", str(out), "--svg", str(tmp_path / "pics"),
                "--fail-on", "kernels>0", "--", sys.executable, str(prog))
    assert r.returncode == 3, r.stderr  # the program's failure comes first
    assert "exited with status 3" in r.stderr
    assert "gate tripped" in r.stderr
    assert out.read_text().startswith("<!DOCTYPE html>")
    r = CliRunner().invoke(main, ["capture", "--format", "json", "--fail-on", "kernels>0", "--",
                                  sys.executable, "-c", FAILING.replace("sys.exit(3)", "")])
    assert r.exit_code == 1, r.output  # a clean program: the gate decides
    assert json.loads(r.stdout)["before"]["module"] == "jit_step"


# ---- 5. notebooks -------------------------------------------------------------------------

def _train_result():
    from hlodiff.diff import diff_files

    d = "module_0030.jit_train_step."
    return diff_files(CPU_TRAIN / (d + "before_optimizations.txt"),
                      CPU_TRAIN / (d + "cpu_after_optimizations.txt"))


def test_result_repr_is_short_and_html_is_escaped():
    r = _train_result()
    text = repr(r)
    assert len(text) < 300 and text.count("\n") == 0
    # 52: _one_hot's eq.12 (broadcast of an iota, which algsimp folds into a 2-D iota) is
    # no longer paired with a fused copy of its look-alike eq.9 (shard2, match._duplicates)
    assert "jit_train_step" in text and "52 fused" in text
    page = r._repr_html_()
    assert "<table>" in page and "jit_train_step" in page and len(page) < 20000
    m = r.modules[1]
    assert len(repr(m)) < 300 and "216 instructions" in repr(m)
    assert "HloModule jit_train_step" in m._repr_html_()
    f = r.fusion(r.fusions[0].name)
    assert f.kind == r.fusions[0].kind and r.fusions[0].name in f._repr_html_()
    assert r.fusions[0].name in r.fusions[0]._repr_html_()


def test_html_escapes_dump_text():
    from hlodiff.report.notebook import to_html

    r = _train_result()
    r.fusions[0].name = "<script>alert(1)</script>"
    page = to_html(r)
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_svg_when_graphviz_is_there():
    from hlodiff.render import find_dot

    r = _train_result()
    f = r.fusion(r.fusions[0].name)
    if find_dot() is None:
        assert f._repr_svg_() is None and r.modules[1]._repr_svg_() is None
        return
    assert f._repr_svg_().lstrip().startswith(("<?xml", "<svg", "<!DOCTYPE"))
    assert "<svg" in r.modules[1]._repr_svg_()


def test_fate_of_without_the_computation():
    r = _train_result()
    some = next(f for f in r.instructions if f.fate == "fused")
    assert r.fate_of(some.before) is r.fate_of(some.computation, some.before)
    assert r.fate_of("no-such-instruction") is None


def test_fate_of_an_ambiguous_name_lists_the_candidates():
    from dataclasses import replace

    r = _train_result()
    f = next(f for f in r.instructions if f.fate == "fused")
    twin = replace(f, computation="region_9.99")
    r2 = replace(r, instructions=[*r.instructions, twin], _index=None, _by_name=None)
    with pytest.raises(ValueError, match=re.escape(f"'{f.before}' is in 2 computations (")):
        r2.fate_of(f.before)
    assert r2.fate_of("region_9.99", f.before) is twin
    sites = [replace(f, call_site="call.1"), replace(f, call_site="call.2", fate="kept")]
    r3 = replace(r, instructions=sites, _index=None, _by_name=None)
    with pytest.raises(ValueError, match="different fates at its call sites"):
        r3.fate_of(f.before)


# ---- 3. the text report -------------------------------------------------------------------

def test_text_report_in_80_columns_names_whole_and_opcodes_shown():
    r = run_cli(str(CPU_TRAIN))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "what runs: no parameters, constants, tuples" in out
    assert "fusion parameters not counted" in out
    fus = out[out.index("Fusions ("):out.index("r+w: bytes")]
    rows = [ln for ln in fus.splitlines()[3:] if ln.strip()]
    assert rows and not any("…" in ln.split()[0] for ln in rows)
    data = json.loads(run_cli(str(CPU_TRAIN), "--format", "json").stdout)
    for f in data["fusions"]:
        assert f["name"] in out  # every fusion named in full, none cut to "name…"
    rewritten = out[out.index("rewritten ("):]
    assert "(reshape)" in rewritten or "(broadcast)" in rewritten  # opcodes beside names
    assert "[log_softmax" in out or "[region" in out  # non-entry computations named


def test_instruction_counts_leave_out_fusion_parameters():
    from hlodiff.diff.counts import fused_computations, ops_count

    m = hlodiff.load(next(CPU_TRAIN.glob("*train_step.cpu_after_optimizations.txt")))
    fused = fused_computations(m)
    params = sum(1 for c in m.computations if c.name in fused
                 for i in c.instructions if i.opcode == "parameter")
    assert fused and params > 0
    assert ops_count(m) == m.instruction_count - params
    data = json.loads(run_cli(str(CPU_TRAIN), "--format", "json").stdout)
    assert data["after"]["ops"] == ops_count(m) and data["after"]["instructions"] == m.instruction_count


def test_bytes_read_in_the_unit_that_fits():
    from hlodiff.report.text import _mb

    assert _mb(5 * 2 ** 30) == "5 GiB"
    assert _mb(1536 * 2 ** 20) == "1.5 GiB"
    assert _mb(980 * 1024) == "980 KiB"
    assert _mb(12) == "12 B"


@pytest.mark.parametrize("program", ["dropout_step", "gru_scan", "cond_branch", "scan_rnn"])
def test_added_copies_agree_with_the_layout_changes(program):
    from hlodiff.diff import diff_files

    before, after = fixture_pair(program)
    r = diff_files(before, after)
    m = r.modules[1]
    copies = [a for a in r.added if a.opcode == "copy"]
    assert copies
    layout_names = {lc.instruction for lc in r.layouts}
    for a in copies:
        comp = m.computation(a.computation)
        inst = comp[a.name]
        src = comp[inst.operands[0]]
        changes = str(src.shape.layout) != str(inst.shape.layout) and not inst.shape.is_tuple
        assert ("layout change" in a.reason) == changes
        assert (a.name in layout_names) == changes
    assert r.summary["layout_changes"] == len(r.layouts)


# ---- 6. big models ------------------------------------------------------------------------

def _train_files():
    d = "module_0030.jit_train_step."
    return str(CPU_TRAIN / (d + "before_optimizations.txt")), str(CPU_TRAIN / (d + "cpu_after_optimizations.txt"))


def test_html_report_of_many_fusions_inlines_no_pictures(tmp_path, monkeypatch):
    import hlodiff.render.inline as inline

    monkeypatch.setattr(inline, "INLINE_MAX_FUSIONS", 5)  # the step has 24 fusions
    out = tmp_path / "r.html"
    r = CliRunner().invoke(main, [*_train_files(), "-o", str(out)])
    assert r.exit_code == 0, r.output
    page = out.read_text()
    assert "<tr class='pic'" not in page and "24 fusions: pictures are not inlined" in page
    assert "pictures are not inlined" in r.stderr


def test_html_report_links_pictures_written_with_svg(tmp_path, monkeypatch):
    from hlodiff.render import find_dot

    if find_dot() is None:
        pytest.skip("Graphviz not installed")
    import hlodiff.render.inline as inline

    monkeypatch.setattr(inline, "INLINE_MAX_FUSIONS", 5)
    out = tmp_path / "report" / "r.html"
    out.parent.mkdir()
    r = CliRunner().invoke(main, [*_train_files(), "-o", str(out), "--svg", str(tmp_path / "pics")])
    assert r.exit_code == 0, r.output
    page = out.read_text()
    assert page.count("<tr class='pic'") == 24 and "<svg xmlns" not in page.split("id='fusions'")[1]
    links = re.findall(r"<img loading='lazy' src='([^']+)'", page)
    assert len(links) == 24
    assert all((out.parent / link).is_file() for link in links)  # relative to the report


def test_linked_picture_paths_are_escaped(tmp_path):
    from hlodiff.render.inline import linked_pictures

    html = linked_pictures({"a'<b>": tmp_path / "x'<y>.svg"}, tmp_path / "r.html")["a'<b>"]
    assert "<b>" not in html and "'<y>" not in html and "&#x27;" in html


def test_render_too_big_draws_collapsed_then_parts(tmp_path):
    from hlodiff.render import find_dot

    _, after = _train_files()
    out = tmp_path / "g.dot"  # .dot: the same decisions without needing Graphviz
    r = run_cli("render", after, "-o", str(out), "--max-nodes", "100")  # 118 whole, 38 collapsed
    assert r.returncode == 0, r.stderr
    assert "drawing it with each fusion as one node" in r.stderr
    assert out.is_file() and "parts" not in r.stderr
    r = run_cli("render", after, "-o", str(out), "--max-nodes", "30")
    assert r.returncode == 0, r.stderr
    parts = sorted(tmp_path.glob("g.part*.dot"))
    assert len(parts) >= 1 and "in schedule order" in r.stderr
    text = parts[-1].read_text()
    assert "made in another part" in text  # inputs from earlier parts are stubs
    if find_dot() is not None:
        r = run_cli("render", after, "-o", str(tmp_path / "g.svg"), "--max-nodes", "30")
        assert r.returncode == 0, r.stderr
        assert len(list(tmp_path.glob("g.part*.svg"))) == len(parts)


def test_fast_layout_only_for_big_graphs():
    from hlodiff.render import computation_picture
    from hlodiff.render.fast import fast_layout

    m = hlodiff.load(_train_files()[1])
    g = computation_picture(m, None, True)
    assert g.node_count < 150 and not fast_layout(g) and "nslimit" not in g.graph_attrs
    g = computation_picture(m, None, False)
    big = g.node_count >= 150 or len(g.edges) >= 450
    assert fast_layout(g) == big


def test_private_jax_helpers_and_the_users_lambda():
    from hlodiff.dumps.directory import DumpPair

    def helper(name):
        return DumpPair("module_0001", name, None, None).is_jax_helper

    assert helper("jit__normal") and helper("jit__threefry_split") and helper("jit__randint")
    assert not helper("jit__lambda")  # jax.jit(lambda ...): the user's own step
    assert not helper("jit_train_step") and not helper("jit_multiply")


@pytest.mark.slow
def test_eager_jnp_call_is_not_chosen_over_a_small_step(tmp_path):
    """A jnp function called outside jit compiles to its own module (``jit_unstack``) whose
    instructions all come from the one line that called it; the user's step, even a small
    one with no dot and fewer kernels, spans several lines and is the module chosen."""
    import subprocess
    import sys

    prog = tmp_path / "prog.py"
    prog.write_text(
        "import jax, jax.numpy as jnp\n"
        "x = jnp.arange(48.0).reshape(6, 8)\n"
        "parts = jnp.unstack(x)\n"
        "def step(a, b):\n"
        "    c = jnp.sin(a) * 2.0\n"
        "    d = c + jnp.cos(b)\n"
        "    return (d * 3.0).sum()\n"
        "jax.jit(step)(parts[0], parts[1]).block_until_ready()\n")
    dump = tmp_path / "dump"
    env = dict(os.environ, XLA_FLAGS=f"--xla_dump_to={dump} --xla_dump_hlo_as_text",
               JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, str(prog)], env=env, check=True, timeout=120)
    from hlodiff.dumps.directory import choose_module, find_dumps

    names = {p.name for p in find_dumps(dump, rank=False)}
    assert "jit_unstack" in names and "jit_step" in names, names
    assert choose_module(dump)[0].name == "jit_step"
