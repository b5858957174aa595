"""`hlodiff run`: time the jitted training step eager vs compiled, and show what XLA did.

The measurement lives in :mod:`hlodiff.jaxrun.runbench` (run in a fresh subprocess so that the HLO
dump flags reach XLA); this module is options, progress and rendering.
"""

from __future__ import annotations

import json
import sys

import click

from .common import handle_errors
from ..errors import InputError
from ..jaxrun.runbench import DTYPES, PLATFORMS, RunConfig, parse_hidden, run as run_bench

def _hidden(ctx, param, value):
    try:
        return parse_hidden(value)
    except InputError as e:
        raise click.BadParameter(str(e).removeprefix("--hidden: "), ctx=ctx, param=param) from None


def _ms(v: float) -> str:
    if v >= 100:
        return f"{v:.0f} ms"
    if v >= 1:
        return f"{v:.2f} ms"
    return f"{v:.3f} ms"


def _render_text(r: dict, console) -> None:
    from rich.table import Table

    cfg, dev = r["config"], r["device"]
    layers = "→".join(map(str, cfg["layers"]))
    where = f"{dev['kind']} ({dev['platform']})"
    mach = r.get("machine") or {}
    if dev["platform"] == "cpu" and mach.get("cpu_count"):
        where = f"CPU ({mach.get('cpu') or 'unknown model'}, {mach['cpu_count']} cores)"
    console.print(f"[bold]MLP training step[/] {layers}, batch {cfg['batch']}, {cfg['dtype']}  "
                  f"on [bold]{where}[/], jax {r['jax_version']}")
    t = Table(show_edge=False, header_style="bold")
    t.add_column("mode")
    t.add_column("median", justify="right")
    t.add_column("p10–p90", justify="right")
    t.add_column("speedup", justify="right")
    e, j, f = r["eager"], r["jit"], r["floor"]
    t.add_row("eager (op by op)", _ms(e["median_ms"]), f"{_ms(e['p10_ms'])}–{_ms(e['p90_ms'])}", "1.0x")
    t.add_row("jit (compiled)", _ms(j["median_ms"]), f"{_ms(j['p10_ms'])}–{_ms(j['p90_ms'])}",
              f"{r['speedup']:.1f}x")
    t.add_row("dispatch floor", _ms(f["median_ms"]), f"{_ms(f['p10_ms'])}–{_ms(f['p90_ms'])}",
              "[dim]no work[/]")
    console.print(t)
    c = r["compile"]
    console.print(f"compile {c['total_s'] * 1e3:.0f} ms (trace+lower {c['trace_lower_s'] * 1e3:.0f} ms, "
                  f"XLA {c['compile_s'] * 1e3:.0f} ms); {j['n']} timed steps after {cfg['warmup']} warm-up")
    console.print(f"jit step = {r['jit_over_floor']:.1f}x the dispatch floor "
                  f"({_ms(r['jit_above_floor_ms'])} above the fixed cost of a launch)")
    h = r.get("hlo") or {}
    if h:
        line = (f"XLA: {h['before_instructions']} instructions before → {h['after_instructions']} after")
        s = h.get("summary")
        if s:
            keys = ("fusions", "fused", "folded", "merged", "rewritten", "inlined", "removed",
                    "added", "kept", "layout_changes")
            parts = [f"{k.replace('_', ' ')} {s[k]}" for k in keys if k in s]
            if "kernels_before" in s and "kernels_after" in s:
                parts.insert(0, f"kernels {s['kernels_before']} → {s['kernels_after']}")
            line += "; " + ", ".join(parts)
        else:
            line += f"; {h['after_fusions']} fusions"
            if h.get("diff_error"):
                line += f" [dim](diff summary unavailable: {h['diff_error']})[/]"
        console.print(line)
    if r.get("dump_dir"):
        console.print(f"dumps kept in {r['dump_dir']}  (hlodiff {h.get('before', '')} {h.get('after', '')})",
                      soft_wrap=True)


@click.command()
@click.option("--batch", type=click.IntRange(min=1), default=128, show_default=True, help="Rows of the input.")
@click.option("--features", type=click.IntRange(min=1), default=128, show_default=True, help="Input width.")
@click.option("--hidden", default="128,128", show_default=True, callback=_hidden,
              help="Hidden layer widths, comma-separated.")
@click.option("--classes", type=click.IntRange(min=1), default=10, show_default=True, help="Output classes.")
@click.option("--dtype", type=click.Choice(DTYPES), default="f32", show_default=True)
@click.option("--iters", type=click.IntRange(min=1), default=200, show_default=True,
              help="Timed steps per mode.")
@click.option("--warmup", type=click.IntRange(min=0), default=10, show_default=True,
              help="Untimed steps before timing each mode.")
@click.option("--platform", type=click.Choice(PLATFORMS), default="auto", show_default=True,
              help="auto: the GPU when JAX sees one, else the CPU.")
@click.option("--dump", "dump", type=click.Path(file_okay=False), default=None,
              help="Keep the step's HLO dumps in DIR (for `hlodiff BEFORE AFTER`).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--step", "step", metavar="FILE.py:FUNCTION", default=None,
              help="Time your own step instead: FUNCTION() returns (fn, args); fn is jitted "
                   "and timed on args (compile and warm-up apart, p50/p90/p99).")
@handle_errors
def run(batch, features, hidden, classes, dtype, iters, warmup, platform, dump, fmt, step) -> None:
    """Time a jitted step, and show what XLA did to it.

    Without --step: an MLP training step (forward, softmax cross-entropy, value_and_grad,
    SGD update), timed op by op under jax.disable_jit(), as one jitted step, and against a
    jitted step that does no work (the dispatch floor), in a fresh process with XLA's HLO
    dump on. With --step FILE.py:FUNCTION: your own step, in a fresh process (the same as
    hlodiff.time_step(fn, *args) in Python). Only what was measured here is shown.
    """
    from rich.console import Console

    if step is not None:
        _run_step(step, platform, iters, warmup, fmt)
        return

    cfg = RunConfig(batch, features, tuple(hidden), classes, dtype, iters, warmup)
    err = Console(stderr=True)
    show_progress = fmt == "text" and err.is_terminal
    if show_progress:
        with err.status("starting", spinner="dots") as status:
            result = run_bench(cfg, platform, dump, progress=lambda m: status.update(m))
    else:
        result = run_bench(cfg, platform, dump)
    if fmt == "json":
        click.echo(json.dumps(result, indent=2))
    else:
        _render_text(result, Console(file=sys.stdout, highlight=False))


def _run_step(step: str, platform: str, iters: int, warmup: int, fmt: str) -> None:
    from rich.console import Console
    from rich.markup import escape

    from ..jaxrun.timestep import render_lines, run_step

    err = Console(stderr=True)
    if fmt == "text" and err.is_terminal:
        with err.status(f"timing {step}", spinner="dots"):
            result = run_step(step, platform, iters, warmup)
    else:
        result = run_step(step, platform, iters, warmup)
    if fmt == "json":
        click.echo(json.dumps(result, indent=2))
        return
    console = Console(file=sys.stdout, highlight=False)
    for line in render_lines(result):
        console.print(escape(line), soft_wrap=True)
