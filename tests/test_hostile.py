"""Hostile, broken and huge input, through the real CLI as a subprocess (issue 13).

Every run has HOME and the parse cache in a temporary directory, a memory limit (address
space, set in the child before it starts) and a timeout; big inputs are generated here, never
committed. Each case asserts the promised behaviour: bad input exits 2 with one line naming
the file (no traceback, no temporary file left), nothing runs code from a cache, outputs
never replace what they should not, the terminal never receives a dump's escape sequences.
"""

from __future__ import annotations

import os
import resource
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import ROOT, fixture_pair

MEMORY_LIMIT = 3 * 2**30  # bytes of address space for each hlodiff run (jaxlib not imported)
SMALL = """HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%p), metadata={op_name="jit(f)/neg" source_file="x.py" source_line=3}
}
"""


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def hlodiff(args, tmp: Path, timeout: float = 60, stdin=subprocess.DEVNULL, env_extra=None,
            **kw) -> subprocess.CompletedProcess:
    """Run ``python -m hlodiff ARGS`` in a fresh process with HOME and the cache in ``tmp``."""
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HLODIFF_")}
    env.update(HOME=str(home), HLODIFF_CACHE_DIR=str(tmp / "cache"), PYTHONPATH=str(ROOT),
               COLUMNS="100", XDG_CACHE_HOME=str(home / ".cache"), **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "hlodiff", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=timeout, stdin=stdin,
                          preexec_fn=_limit, cwd=tmp, **kw)


def assert_bad_input(r: subprocess.CompletedProcess, name: str, where: str = "") -> None:
    """Exit 2, one line on stderr naming ``name`` (and ``where``), no traceback."""
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    assert len(lines) == 1, r.stderr[-2000:]
    assert name in lines[0], lines[0]
    if where:
        assert where in lines[0], lines[0]


def no_temp_files(*dirs: Path) -> None:
    for d in dirs:
        left = [p for p in d.rglob("*") if p.name.endswith(".tmp") or ".hlodiff-" in p.name]
        assert not left, left


def _write(tmp: Path, name: str, text: str | bytes) -> Path:
    p = tmp / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


def _module(body: str, extra_comps: str = "") -> str:
    return f"HloModule m\n\n{extra_comps}ENTRY %main {{\n{body}\n}}\n"


# --- values, shapes, nesting ---------------------------------------------------------------

BAD_TEXTS = {
    "huge_int_dim": _module("  ROOT %p = f32[" + "9" * 5000 + "]{0} parameter(0)"),
    "huge_int_param": _module("  ROOT %p = f32[2]{0} parameter(" + "7" * 5000 + ")"),
    "huge_int_literal": _module("  ROOT %c = s32[] constant(" + "1" * 5000 + ")"),
    "undefined_to_apply": _module("  %p = f32[4]{0} parameter(0)\n  %z = f32[] constant(0)\n"
                                  "  ROOT %r = f32[] reduce(%p, %z), dimensions={0}, to_apply=%nowhere"),
    "undefined_calls": _module("  %p = f32[4]{0} parameter(0)\n"
                               "  ROOT %f = f32[4]{0} fusion(%p), kind=kLoop, calls=%nothing"),
    "negative_parameter": _module("  ROOT %p = f32[4]{0} parameter(-1)"),
    "duplicate_parameter": _module("  %p = f32[4]{0} parameter(0)\n  %q = f32[4]{0} parameter(0)\n"
                                   "  ROOT %a = f32[4]{0} add(%p, %q)"),
    "parameter_gap": _module("  %p = f32[4]{0} parameter(1)\n  ROOT %n = f32[4]{0} negate(%p)"),
    "u4_out_of_range": _module("  ROOT %c = u4[] constant(16)"),
    "f16_out_of_range": _module("  ROOT %c = f16[] constant(70000)"),
    "undefined_control_predecessor": _module(
        "  %p = f32[4]{0} parameter(0)\n"
        "  ROOT %n = f32[4]{0} negate(%p), control-predecessors={%ghost}"),
    "undefined_operand": _module("  %p = f32[4]{0} parameter(0)\n  ROOT %n = f32[4]{0} negate(%q)"),
}


@pytest.mark.parametrize("case", sorted(BAD_TEXTS))
def test_bad_module_text_exits_2_naming_the_file(tmp_path, case):
    f = _write(tmp_path, f"{case}.hlo", BAD_TEXTS[case])
    r = hlodiff(["show", f], tmp_path)
    assert_bad_input(r, f"{case}.hlo", f"{case}.hlo:")
    no_temp_files(tmp_path)


# XLA's parser accepts these (checked with jaxlib 0.10.2): parse them, or fail cleanly.
ODD_BUT_VALID = {
    "rank_2000": _module("  ROOT %p = f32[" + ",".join(["1"] * 2000) + "] parameter(0)"),
    "nested_tuple_400": _module("  ROOT %p = " + "(" * 400 + "f32[]" + ")" * 400 + " parameter(0)"),
}


@pytest.mark.parametrize("case", sorted(ODD_BUT_VALID))
def test_large_rank_and_deep_tuples(tmp_path, case):
    f = _write(tmp_path, f"{case}.hlo", ODD_BUT_VALID[case])
    for args in (["show", f], ["show", f, "--format", "json"], [f, f]):
        r = hlodiff(args, tmp_path)
        assert "Traceback" not in r.stderr, r.stderr[-2000:]
        if r.returncode != 0:
            assert_bad_input(r, f"{case}.hlo")
    no_temp_files(tmp_path)


def _nested_calls(depth: int) -> str:
    comps = []
    for k in range(depth):
        callee = f", to_apply=%c{k + 1}" if k + 1 < depth else ""
        op = "call" if k + 1 < depth else "negate"
        comps.append(f"%c{k} (x: f32[]) -> f32[] {{\n  %x = f32[] parameter(0)\n"
                     f"  ROOT %y = f32[] {op}(%x){callee}\n}}\n\n")
    return "HloModule deep\n\n" + "".join(reversed(comps)) + \
        "ENTRY %main (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n" \
        "  ROOT %r = f32[] call(%p), to_apply=%c0\n}\n"


def test_calls_nested_300_deep_parse_or_fail_cleanly(tmp_path):
    f = _write(tmp_path, "deep.hlo", _nested_calls(320))
    for args in (["show", f], [f, f, "--format", "json"]):
        r = hlodiff(args, tmp_path)
        assert "Traceback" not in r.stderr, r.stderr[-2000:]
        assert r.returncode in (0, 2), r.stderr[-2000:]
        if r.returncode == 2:
            assert_bad_input(r, "deep.hlo")
    no_temp_files(tmp_path)


def test_line_break_after_backend_config_is_accepted(tmp_path):
    text = _module('  %p = f32[4]{0} parameter(0)\n  ROOT %n = f32[4]{0} negate(%p), '
                   'backend_config=\n{"x":1}')
    f = _write(tmp_path, "bc.hlo", text)
    r = hlodiff(["show", f, "--format", "json"], tmp_path)
    assert r.returncode == 0, r.stderr


# --- odd files -----------------------------------------------------------------------------

def test_odd_files(tmp_path):
    cases = {
        "empty.hlo": b"",
        "binary.hlo": bytes(range(256)) * 4,
        "latin1.hlo": "HloModule caf\xe9\n".encode("latin-1"),
    }
    for name, data in cases.items():
        r = hlodiff(["show", _write(tmp_path, name, data)], tmp_path)
        assert_bad_input(r, name)
    empty_dir = tmp_path / "nodumps"
    empty_dir.mkdir()
    assert_bad_input(hlodiff(["show", empty_dir], tmp_path), "nodumps")
    assert_bad_input(hlodiff([empty_dir], tmp_path), "nodumps")
    loop = tmp_path / "loop.hlo"
    os.symlink(loop, loop)
    assert_bad_input(hlodiff(["show", loop], tmp_path), "loop.hlo")
    assert_bad_input(hlodiff(["show", tmp_path / "missing.hlo"], tmp_path), "missing.hlo")
    no_temp_files(tmp_path)


def test_devices_and_fifos_do_not_hang(tmp_path):
    fifo = tmp_path / "fifo.hlo"
    os.mkfifo(fifo)  # nobody will ever write to it
    for path in ("/dev/zero", fifo):
        r = hlodiff(["show", path], tmp_path, timeout=30)
        assert_bad_input(r, str(path))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path):
    f = _write(tmp_path, "secret.hlo", SMALL)
    f.chmod(0)
    assert_bad_input(hlodiff(["show", f], tmp_path), "secret.hlo")


# --- options -------------------------------------------------------------------------------

def test_bad_option_values_are_usage_errors(tmp_path):
    f = _write(tmp_path, "m.hlo", SMALL)
    for args in ([f, f, "--limit", "-5"], ["render", f, "-o", tmp_path / "x.dot", "--timeout", "inf"],
                 ["render", f, "-o", tmp_path / "x.dot", "--timeout", "nan"]):
        r = hlodiff(args, tmp_path)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert "Invalid value" in r.stderr, r.stderr
    assert not (tmp_path / "x.dot").exists()


def test_unknown_gate_metric_fails_before_any_output(tmp_path):
    b, a = fixture_pair("fold_cse")
    out, svg = tmp_path / "report.txt", tmp_path / "svg"
    r = hlodiff([b, a, "--fail-on", "no_such_metric>1", "-o", out, "--svg", svg], tmp_path)
    assert r.returncode == 2 and "no_such_metric" in r.stderr, r.stderr
    assert not out.exists() and not svg.exists()
    no_temp_files(tmp_path)


# --- outputs -------------------------------------------------------------------------------

def test_output_keeps_mode_links_devices_and_inputs(tmp_path):
    b, a = fixture_pair("fold_cse")
    mine = _write(tmp_path, "mine.txt", "old\n")
    mine.chmod(0o600)
    r = hlodiff([b, a, "-o", mine], tmp_path)
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(mine.stat().st_mode) == 0o600 and "fold_cse" in mine.read_text()

    linked = _write(tmp_path, "linked.txt", "old\n")
    os.link(linked, tmp_path / "other_name.txt")
    assert hlodiff([b, a, "-o", linked], tmp_path).returncode == 0
    assert (tmp_path / "other_name.txt").read_text() == linked.read_text() != "old\n"

    target = _write(tmp_path, "target.txt", "old\n")
    os.symlink(target, tmp_path / "via_link.txt")
    assert hlodiff([b, a, "-o", tmp_path / "via_link.txt"], tmp_path).returncode == 0
    assert (tmp_path / "via_link.txt").is_symlink() and target.read_text() != "old\n"

    r = hlodiff([b, a, "-o", "-"], tmp_path)
    assert r.returncode == 0 and "fold_cse" in r.stdout and not (tmp_path / "-").exists()

    r = hlodiff([b, a, "-o", "/dev/null"], tmp_path)
    assert r.returncode == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode)

    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    r = hlodiff([b, a, "-o", fifo], tmp_path)
    data = reader.communicate(timeout=30)[0]
    assert r.returncode == 0 and b"fold_cse" in data and stat.S_ISFIFO(fifo.stat().st_mode)

    before_text = b.read_text()
    for victim in (b, tmp_path / "via_link_to_input.txt"):
        if victim != b:
            os.symlink(b, victim)
        r = hlodiff([b, a, "-o", victim], tmp_path)
        assert_bad_input(r, str(victim), "input")
        assert b.read_text() == before_text
    no_temp_files(tmp_path)


def test_output_path_errors(tmp_path):
    b, a = fixture_pair("fold_cse")
    plain = _write(tmp_path, "plain.txt", "x")
    somedir = tmp_path / "somedir"
    somedir.mkdir()
    cases = [
        ([b, a, "-o", tmp_path / "missing" / "r.txt"], "missing"),
        ([b, a, "-o", "/dev/full"], "/dev/full"),
        ([b, a, "--svg", plain / "svg"], "plain.txt"),
        (["render", a, "-o", somedir], "somedir"),
        ([b, a, "-o", somedir], "somedir"),
    ]
    for args, name in cases:
        r = hlodiff(args, tmp_path)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert name in r.stderr.strip().splitlines()[-1], r.stderr
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        assert_bad_input(hlodiff([b, a, "-o", ro / "r.txt"], tmp_path), "ro")
    no_temp_files(tmp_path)


# --- the cache -----------------------------------------------------------------------------

def _big_module(tmp: Path) -> Path:
    """A module over the cache's 16 KiB threshold (a real one, padded with metadata)."""
    b, _ = fixture_pair("attention")
    return b if b.stat().st_size > 16384 else _write(tmp, "big.hlo", b.read_text() + "\n" * 20000)


def test_planted_or_corrupt_cache_never_runs_and_is_rebuilt(tmp_path):
    f = _big_module(tmp_path)
    first = hlodiff(["show", f, "--format", "json"], tmp_path)
    assert first.returncode == 0, first.stderr
    cache = tmp_path / "cache"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    entries = list(cache.glob("*.hlom"))
    assert len(entries) == 1
    marker = tmp_path / "pwned"
    import pickle

    class Boom:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    payloads = [pickle.dumps(Boom()), b"\x00garbage", b"\x93\x01\xa1x\xa1y",  # wrong types
                entries[0].read_bytes()[:100]]
    for payload in payloads:
        entries[0].write_bytes(payload)
        for table in cache.glob("lalr-*"):
            table.write_bytes(pickle.dumps(Boom()))
        (cache / "lalr-0.1.0.lark").write_bytes(pickle.dumps(Boom()))  # the old pickle name
        r = hlodiff(["show", f, "--format", "json"], tmp_path)
        assert r.returncode == 0, r.stderr
        assert r.stdout == first.stdout
        assert not marker.exists()
    assert entries[0].read_bytes()[:1] != b"\x80", "the entry was rebuilt"


def test_cache_info_clear_and_size_limit(tmp_path):
    f = _big_module(tmp_path)
    assert hlodiff(["show", f], tmp_path, env_extra={"HLODIFF_CACHE_MAX_MB": "0.001"}).returncode == 0
    assert not list((tmp_path / "cache").glob("*.hlom")), "over the limit: not kept"
    assert hlodiff(["show", f], tmp_path).returncode == 0
    info = hlodiff(["cache", "info"], tmp_path)
    assert info.returncode == 0 and "parsed modules: 1;" in info.stdout and "limit" in info.stdout
    clear = hlodiff(["cache", "clear"], tmp_path)
    assert clear.returncode == 0 and "removed 2 files" in clear.stdout  # the model, the tables
    assert not list((tmp_path / "cache").glob("*.hlom"))


def test_cache_dir_others_can_write_is_not_used_and_ours_is_closed(tmp_path):
    f = _big_module(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    assert hlodiff(["show", f], tmp_path).returncode == 0
    assert stat.S_IMODE(cache.stat().st_mode) == 0o777, "not ours to change"
    assert not list(cache.iterdir()), "nothing written where others can plant files"
    cache.chmod(0o755)  # as an older hlodiff left it
    assert hlodiff(["show", f], tmp_path).returncode == 0
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700 and list(cache.glob("*.hlom"))


# --- the terminal --------------------------------------------------------------------------

def test_escape_sequences_never_reach_the_terminal(tmp_path):
    evil = "\x1b]0;pwned\x07\x1b[2J\x9b31m"
    text = SMALL.replace('op_name="jit(f)/neg"', f'op_name="{evil}"').replace(
        'source_file="x.py"', f'source_file="{evil}.py"')
    text = text.replace("negate(%p)", 'custom-call(%p), custom_call_target="' + evil + '"')
    f = _write(tmp_path, "evil\x1b[31m.hlo", text)
    for args in (["show", f], [f, f], [f, f, "-o", "-"], ["show", tmp_path / "nothere\x1b[2J"]):
        r = hlodiff(args, tmp_path, env_extra={"TERM": "xterm-256color", "FORCE_COLOR": "1"})
        out = r.stdout + r.stderr
        assert "\x1b]" not in out and "\x07" not in out and "\x1b[2J" not in out, out
        assert "\x9b" not in out


# --- resources -----------------------------------------------------------------------------

@pytest.mark.slow
def test_50mb_op_name_in_bounded_memory(tmp_path):
    f = tmp_path / "long_op_name.hlo"
    with open(f, "w") as fh:
        fh.write("HloModule m\n\nENTRY %main {\n  %p = f32[4]{0} parameter(0)\n"
                 '  ROOT %n = f32[4]{0} negate(%p), metadata={op_name="')
        chunk = "jit(f)/" * 150_000
        for _ in range(50):
            fh.write(chunk)
        fh.write('"}\n}\n')
    r = hlodiff(["show", f, "--no-cache"], tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.slow
def test_20mb_custom_call_target_shows_in_linear_time(tmp_path):
    target = "t" * 20_000_000
    text = SMALL.replace("negate(%p)", f'custom-call(%p), custom_call_target="{target}"')
    f = _write(tmp_path, "cc.hlo", text)
    r = hlodiff(["show", f, "--no-cache"], tmp_path, timeout=90)
    assert r.returncode == 0, r.stderr[-2000:]


# --- exits ---------------------------------------------------------------------------------

def test_broken_pipe_is_quiet(tmp_path):
    b, a = fixture_pair("attention")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HLODIFF_")}
    env.update(HOME=str(tmp_path), HLODIFF_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    p = subprocess.Popen([sys.executable, "-m", "hlodiff", str(b), str(a), "--limit", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    p.stdout.readline()
    p.stdout.close()  # like `| head -1`
    err = p.stderr.read().decode()
    p.wait(timeout=60)
    assert "Traceback" not in err and "Exception" not in err, err
    assert p.returncode in (0, 141), (p.returncode, err)


@pytest.fixture(scope="module")
def long_module(tmp_path_factory) -> Path:
    """A synthetic 120,000-instruction module: several seconds to parse, to interrupt."""
    f = tmp_path_factory.mktemp("long") / "long.hlo"
    lines = ["HloModule long", "", "ENTRY %main (p: f32[8]) -> f32[8] {", "  %a0 = f32[8]{0} parameter(0)"]
    lines += [f"  %a{k} = f32[8]{{0}} add(%a{k - 1}, %a{k - 1})" for k in range(1, 120_000)]
    lines += ["  ROOT %r = f32[8]{0} negate(%a119999)", "}", ""]
    f.write_text("\n".join(lines))
    return f


def _wait_for_cpu(p: subprocess.Popen, seconds: float) -> None:
    """Wait until ``p`` has used ``seconds`` of CPU time (read from /proc; where there is
    none, the same number of wall-clock seconds) or has ended."""
    stat_file = Path(f"/proc/{p.pid}/stat")
    deadline = time.monotonic() + 120
    while p.poll() is None and time.monotonic() < deadline:
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            time.sleep(seconds)
            return
        if (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") >= seconds:
            return
        time.sleep(0.05)


def _default_sigint() -> None:
    """In the child: SIGINT back to its default. A shell's background job (and some test
    runners' workers) start with SIGINT ignored, which the child would inherit; Python then
    installs no KeyboardInterrupt handler and, rightly, ignores the signal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_exits_cleanly_without_temp_files(tmp_path, long_module, sig, code):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HLODIFF_")}
    env.update(HOME=str(tmp_path), HLODIFF_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    p = subprocess.Popen([sys.executable, "-m", "hlodiff", str(long_module), str(long_module),
                          "-o", str(tmp_path / "out.txt")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
                         preexec_fn=_default_sigint)
    _wait_for_cpu(p, 1.5)  # imports done, parsing (CPU time, not wall time: a loaded CI)
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert "Traceback" not in err, err
    assert p.returncode == code, (p.returncode, err)
    assert not (tmp_path / "out.txt").exists()
    no_temp_files(tmp_path)


def test_ambiguous_dump_directory(tmp_path):
    d = tmp_path / "dump"
    d.mkdir()
    for prog, name in (("fold_cse", "jit_f"), ("attention", "jit_g")):
        b, a = fixture_pair(prog)
        (d / f"module_0001.{name}.before_optimizations.txt").write_text(b.read_text())
        (d / f"module_0001.{name}.cpu_after_optimizations.txt").write_text(a.read_text())
    r = hlodiff([d], tmp_path)
    assert_bad_input(r, "dump", "ambiguous")
    r = hlodiff([d, "--module", "jit_g", "--format", "json"], tmp_path)
    assert r.returncode == 0 and "jit_attention" in r.stdout, r.stderr


def _fake_dot(tmp: Path) -> tuple[Path, Path]:
    """A 'dot' that records its pid and never finishes."""
    pidfile = tmp / "dot.pid"
    script = tmp / "slowdot"
    script.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 120\n")
    script.chmod(0o755)
    return script, pidfile


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return True


def test_graphviz_time_limit_and_termination(tmp_path):
    script, pidfile = _fake_dot(tmp_path)
    b, _ = fixture_pair("fold_cse")
    out = tmp_path / "pic.svg"
    r = hlodiff(["render", b, "-o", out, "--timeout", "1"], tmp_path,
                env_extra={"HLODIFF_DOT": str(script)})
    assert_bad_input(r, "", "longer than 1 s")
    assert not out.exists() and not _alive(int(pidfile.read_text()))
    pidfile.unlink()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HLODIFF_")}
    env.update(HOME=str(tmp_path), HLODIFF_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(ROOT), HLODIFF_DOT=str(script))
    p = subprocess.Popen([sys.executable, "-m", "hlodiff", "render", str(b), "-o", str(out)],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(300):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        time.sleep(0.1)
    p.send_signal(signal.SIGTERM)
    err = p.communicate(timeout=30)[1]
    assert p.returncode == 143 and "Traceback" not in err, (p.returncode, err)
    time.sleep(0.2)
    assert not _alive(int(pidfile.read_text())), "dot outlived hlodiff"
    assert not out.exists()
    no_temp_files(tmp_path)


def test_unknown_attribute_is_read_with_one_warning_line(tmp_path):
    """XLA adds attributes over versions (jax 0.11 writes ``order=TOTAL`` on compare): such a
    dump is read, exit 0, with one warning line naming file:line:col, on every run (a module
    that warned is not cached silently)."""
    f = tmp_path / "newer.hlo"
    f.write_text(_module("  %p = f32[4]{0} parameter(0)\n"
                         "  ROOT %n = pred[4]{0} compare(%p, %p), direction=LT, order=TOTAL")
                 + "\n" * 20000)  # large enough for the parse cache
    for _ in range(2):
        r = hlodiff(["show", f], tmp_path)
        assert r.returncode == 0, r.stderr
        warn = [ln for ln in r.stderr.splitlines() if ln.startswith("hlodiff: warning:")]
        assert len(warn) == 1 and f"{f}:5:" in warn[0] and "'order'" in warn[0], r.stderr
        assert "Traceback" not in r.stderr
