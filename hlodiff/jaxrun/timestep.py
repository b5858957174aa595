"""Time the user's own jitted step, and say what XLA did to it: ``hlodiff.time_step``.

``time_step(fn, *args)`` runs in the calling process (a notebook, a script):

* ``trace_lower_s`` and ``compile_s``: ``jax.jit(fn).lower(*args)`` and ``.compile()``
  (the ahead-of-time API), timed apart;
* ``first_call_s``: the first ordinary call after that (with ``block_until_ready``), then
  ``warmup`` more untimed calls: warm-up is reported apart from the steady state;
* ``steady``: ``iters`` calls, each followed by ``jax.block_until_ready`` on every output,
  wall clock (``time.perf_counter_ns``), the garbage collector paused; p50/p90/p99, min,
  mean and max in milliseconds;
* ``device``: where it ran (platform, kind, the machine's CPU for CPU runs);
* ``xla``: what XLA did to the step, hlodiff's diff summary of the lowered module against
  the compiled one (the same figures as ``hlodiff BEFORE AFTER``), with ``explain=True``.

The arguments are reused for every call, so a step that donates its arguments
(``donate_argnums``) cannot be timed this way; ``fn`` should return fresh outputs.
``hlodiff run --step FILE:FUNCTION`` calls this in a fresh process (see runbench).
"""

from __future__ import annotations

import os
import platform as _platform
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from .runbench import _time_calls, percentile, take_json

SCHEMA = "hlodiff.time_step/1"


def percentiles_ms(samples_ns: list[int]) -> dict:
    """p50/p90/p99 (linear interpolation between closest ranks), min, mean, max in ms."""
    xs = sorted(s / 1e6 for s in samples_ns)
    n = len(xs)

    def pct(p: float) -> float:
        return percentile(xs, p)

    return {"n": n, "p50_ms": pct(0.5), "p90_ms": pct(0.9), "p99_ms": pct(0.99),
            "min_ms": xs[0], "mean_ms": sum(xs) / n, "max_ms": xs[-1]}


@dataclass
class StepTiming:
    """What :func:`time_step` measured; ``to_dict()`` is the JSON form."""

    name: str
    device: dict
    trace_lower_s: float
    compile_s: float
    first_call_s: float
    warmup: int
    steady: dict
    jax_version: str
    xla: dict | None = None
    machine: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"schema": SCHEMA, "name": self.name, "device": self.device,
                "machine": self.machine, "jax_version": self.jax_version,
                "compile": {"trace_lower_s": self.trace_lower_s, "compile_s": self.compile_s,
                            "first_call_s": self.first_call_s, "warmup_calls": self.warmup},
                "steady": self.steady, "xla": self.xla}

    def lines(self) -> list[str]:
        """The plain-text report (also what ``repr`` shows)."""
        s = self.steady
        where = self.device.get("kind", "?")
        if self.device.get("platform") == "cpu" and self.machine.get("cpu"):
            where = f"CPU ({self.machine['cpu']}, {self.machine.get('cpu_count')} cores)"
        out = [f"{self.name} on {where}, jax {self.jax_version}",
               f"  warm-up: trace+lower {self.trace_lower_s * 1e3:.0f} ms, XLA compile "
               f"{self.compile_s * 1e3:.0f} ms, first call {self.first_call_s * 1e3:.1f} ms, "
               f"then {self.warmup} untimed calls",
               f"  steady state ({s['n']} calls): p50 {_ms(s['p50_ms'])}, p90 {_ms(s['p90_ms'])}, "
               f"p99 {_ms(s['p99_ms'])} (min {_ms(s['min_ms'])}, max {_ms(s['max_ms'])})"]
        x = self.xla or {}
        if x.get("summary"):
            out.append("  XLA: " + summary_line(x))
        elif x.get("error"):
            out.append(f"  XLA: diff summary unavailable ({x['error']})")
        return out

    def __repr__(self) -> str:
        return "\n".join(self.lines())


def _ms(v: float) -> str:
    return f"{v:.0f} ms" if v >= 100 else f"{v:.2f} ms" if v >= 1 else f"{v * 1e3:.0f} µs"


def summary_line(x: dict) -> str:
    """One line from the ``xla`` part: instruction counts and the diff summary's figures."""
    s = x.get("summary") or {}
    parts = [f"{x.get('before_instructions')} instructions before -> "
             f"{x.get('after_instructions')} after"]
    if "kernels_before" in s and "kernels_after" in s:
        parts.append(f"kernels {s['kernels_before']} -> {s['kernels_after']}")
    keys = ("fusions", "fused", "folded", "merged", "rewritten", "inlined", "removed", "added",
            "kept", "layout_changes")
    parts += [f"{k.replace('_', ' ')} {s[k]}" for k in keys if isinstance(s.get(k), int)]
    return ", ".join(parts)


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return _platform.processor() or None


def _explain(lowered, compiled) -> dict:
    """Parse the lowered and the compiled module and diff them (what XLA did)."""
    from ..diff import diff_modules
    from ..hlo.parser import parse

    try:
        before_text = lowered.as_text(dialect="hlo", debug_info=True)
    except TypeError:  # older jax: no debug_info argument
        before_text = lowered.as_text(dialect="hlo")
    after_text = compiled.as_text()
    before, after = parse(before_text, "<lowered>"), parse(after_text, "<compiled>")
    out = {"module": after.name, "before_instructions": before.instruction_count,
           "after_instructions": after.instruction_count, "summary": None}
    try:
        out["summary"] = dict(diff_modules(before, after, mode="optimization").summary)
    except Exception as e:  # the timings stand without it
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def time_step(fn: Callable, *args: Any, iters: int = 100, warmup: int = 5,
              device: Any = None, explain: bool = True) -> StepTiming:
    """Time ``fn(*args)`` (a function or a ``jax.jit`` object): compile and warm-up apart
    from the steady state; see the module docstring. ``device``: a ``jax.Device`` to run on
    (default: JAX's default device)."""
    import jax

    if iters < 1 or warmup < 0:
        raise ValueError("time_step: iters must be >= 1 and warmup >= 0")
    jitted = fn if hasattr(fn, "lower") else jax.jit(fn)
    name = getattr(fn, "__name__", None) or getattr(getattr(fn, "__wrapped__", None),
                                                    "__name__", "step")
    device = device or jax.devices()[0]
    with jax.default_device(device):
        args = jax.block_until_ready(jax.device_put(args, device))
        t0 = time.perf_counter()
        lowered = jitted.lower(*args)
        t1 = time.perf_counter()
        compiled = lowered.compile()
        t2 = time.perf_counter()
        jax.block_until_ready(jitted(*args))
        first = time.perf_counter() - t2
        samples = _time_calls(jitted, args, iters, warmup)  # the same loop as `hlodiff run`
    xla = None
    if explain:
        try:
            xla = _explain(lowered, compiled)
        except Exception as e:  # e.g. a module hlodiff cannot parse: say so, keep the timings
            xla = {"summary": None, "error": f"{type(e).__name__}: {e}"}
    return StepTiming(
        name=name,
        device={"platform": device.platform, "kind": device.device_kind, "name": str(device),
                "count": len(jax.devices(device.platform))},
        trace_lower_s=t1 - t0, compile_s=t2 - t1, first_call_s=first, warmup=warmup,
        steady=percentiles_ms(samples), jax_version=jax.__version__, xla=xla,
        machine={"system": _platform.platform(), "cpu": _cpu_model(),
                 "cpu_count": os.cpu_count(), "python": _platform.python_version()})


# --------------------------------------------------------------------------------------
# `hlodiff run --step FILE:FUNCTION`: the user's step, timed in a fresh process
# --------------------------------------------------------------------------------------

def _split_spec(spec: str) -> tuple[str, str, bool]:
    """(where, function, is_file) of a ``--step`` value; InputError when malformed or when
    the file does not exist (checked before any process starts)."""
    from ..errors import InputError

    where, sep, func = spec.rpartition(":")
    if not sep or not where or not func.isidentifier():
        raise InputError(f"--step {spec!r}: expected FILE.py:FUNCTION or MODULE:FUNCTION, "
                         "e.g. train.py:make_step")
    is_file = where.endswith(".py") or os.sep in where or os.path.exists(where)
    if is_file and not os.path.isfile(where):
        raise InputError(f"--step {spec!r}: {where}: no such file")
    return where, func, is_file


def load_step(spec: str) -> tuple[Callable, tuple]:
    """``"path/to/file.py:make_step"`` (or ``"package.module:make_step"``): import it, call
    ``make_step()`` and return its ``(fn, args)``. This runs the user's own program, which
    is what they asked for."""
    import importlib
    import importlib.util
    import sys

    from ..errors import InputError

    where, func, is_file = _split_spec(spec)
    if is_file:
        path = os.path.abspath(where)
        sys.path.insert(0, os.path.dirname(path))  # so that it imports its neighbours
        mspec = importlib.util.spec_from_file_location("__hlodiff_step__", path)
        if mspec is None or mspec.loader is None:
            raise InputError(f"--step {spec!r}: {where}: not a Python file")
        module = importlib.util.module_from_spec(mspec)
        sys.modules["__hlodiff_step__"] = module
        mspec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(where)
        except ModuleNotFoundError as e:
            raise InputError(f"--step {spec!r}: no module {where!r} ({e})") from None
    make = getattr(module, func, None)
    if not callable(make):
        raise InputError(f"--step {spec!r}: {where} defines no function {func!r}")
    made = make()
    if (not isinstance(made, (tuple, list)) or len(made) != 2 or not callable(made[0])
            or not isinstance(made[1], (tuple, list))):
        raise InputError(f"--step {spec!r}: {func}() must return (fn, args), args a tuple of "
                         f"the step's arguments; it returned {type(made).__name__}")
    return made[0], tuple(made[1])


def child_main(argv: list[str] | None = None) -> int:
    """``python -m hlodiff.jaxrun.timestep --step F:FN ...``: time it, write JSON to --out."""
    import argparse
    import json
    import sys
    import traceback

    from ..errors import InputError

    ap = argparse.ArgumentParser(prog="python -m hlodiff.jaxrun.timestep")
    ap.add_argument("--step", required=True)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--platform", choices=("auto", "gpu", "cpu"), default="auto")
    ap.add_argument("--no-explain", action="store_true")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)

    def emit(obj: dict) -> None:
        with open(a.out, "w") as f:
            json.dump(obj, f, indent=1)

    try:
        import jax

        device = None
        if a.platform == "gpu":
            try:
                gpus = jax.devices("gpu")
            except RuntimeError:
                gpus = []
            if not gpus:
                emit({"kind": "no_gpu", "error": f"--platform gpu: JAX sees no GPU (devices: "
                      f"{jax.devices()}, jax {jax.__version__}); install jax[cuda12] on a "
                      "machine with an NVIDIA GPU, or use --platform cpu / auto"})
                return 3
            device = gpus[0]
        elif a.platform == "cpu":
            device = jax.devices("cpu")[0]
        fn, args = load_step(a.step)
        result = time_step(fn, *args, iters=a.iters, warmup=a.warmup, device=device,
                           explain=not a.no_explain)
    except InputError as e:
        emit({"kind": "input", "error": str(e)})
        return 2
    except Exception as e:  # the user's code failed: its own last lines say where
        tb = traceback.format_exception(e)
        emit({"kind": "step", "error": f"{type(e).__name__}: {e}", "traceback": tb[-6:]})
        return 1
    emit(result.to_dict())
    sys.stdout.flush()
    return 0


def run_step(spec: str, platform: str = "auto", iters: int = 100, warmup: int = 5,
             explain: bool = True) -> dict:
    """Time ``spec``'s step in a fresh interpreter (so ``--platform`` reaches JAX before its
    backend starts); the JSON dict of :meth:`StepTiming.to_dict`."""
    import subprocess
    import sys
    import tempfile

    from ..errors import InputError
    from .runbench import RunError

    _split_spec(spec)  # a malformed value or a missing file: said before JAX starts
    fd, out = tempfile.mkstemp(prefix="hlodiff-step-", suffix=".json")
    os.close(fd)
    env = dict(os.environ)
    if platform == "cpu":
        env["JAX_PLATFORMS"] = "cpu"
    elif platform == "gpu":
        env.pop("JAX_PLATFORMS", None)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    cmd = [sys.executable, "-m", "hlodiff.jaxrun.timestep", "--step", spec, "--iters",
           str(iters), "--warmup", str(warmup), "--platform", platform, "--out", out]
    if not explain:
        cmd.append("--no-explain")
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, errors="replace")
    finally:
        data = take_json(out)
    if isinstance(data, dict) and "error" in data:
        if data.get("kind") in ("input", "no_gpu"):
            raise InputError(data["error"])
        tail = "".join(data.get("traceback") or []).rstrip()
        raise RunError(f"--step {spec}: the step failed: {data['error']}\n{tail}")
    if p.returncode != 0 or not isinstance(data, dict):
        tail = "\n".join(p.stderr.splitlines()[-15:])
        raise RunError(f"--step {spec}: the timing subprocess failed (exit {p.returncode}):\n{tail}")
    return data


def render_lines(d: dict) -> list[str]:
    """The text report of a :meth:`StepTiming.to_dict` result."""
    c = d["compile"]
    return StepTiming(name=d["name"], device=d["device"], trace_lower_s=c["trace_lower_s"],
                      compile_s=c["compile_s"], first_call_s=c["first_call_s"],
                      warmup=c["warmup_calls"], steady=d["steady"],
                      jax_version=d["jax_version"], xla=d.get("xla"),
                      machine=d.get("machine") or {}).lines()


if __name__ == "__main__":
    import sys

    sys.exit(child_main())
