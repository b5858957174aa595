"""The measurement behind ``hlodiff run``: an MLP training step, eager vs jax.jit.

Two halves live here:

* the *child* (``python -m hlodiff.jaxrun.runbench ...``): builds the step, times it and writes
  one JSON object. It runs in a fresh process because ``XLA_FLAGS`` (the HLO dump) and
  ``JAX_PLATFORMS`` only take effect if they are set before JAX's backend starts;
* the *parent* (:func:`run`): validates the configuration, starts the child with those
  variables set, finds the step's ``before_optimizations`` / ``after_optimizations`` dumps
  and summarises what XLA did to the step with hlodiff's own diff.

What is measured (all latencies in milliseconds, wall clock, ``time.perf_counter_ns``):

* ``compile``: tracing+lowering and XLA compilation of the jitted step (AOT API; the
  jitted function reuses that executable, so its first call does not compile again);
* ``jit``: one call of the jitted step followed by ``block_until_ready`` on every output,
  after ``warmup`` untimed calls, ``iters`` times;
* ``eager``: the same step under ``jax.disable_jit()`` (``value_and_grad`` and every jnp
  function dispatch primitive by primitive), synchronised the same way;
* ``floor``: a jitted function that does no arithmetic (returns its arguments) called on
  the same pytree of arguments: the fixed cost of dispatching one executable.

The garbage collector is paused while a loop is timed (as ``timeit`` does).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform as _platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from ..errors import HlodiffError, InputError

SCHEMA = "hlodiff.run/1"
STEP_NAME = "train_step"  # the jitted function's name -> XLA module "jit_train_step"
STEP_MODULE = f"jit_{STEP_NAME}"
PROGRESS_PREFIX = "@@hlodiff-progress@@ "
PLATFORMS = ("auto", "gpu", "cpu")
DTYPES = ("f32", "bf16")
CHILD_NO_GPU_EXIT = 3  # the child's status for "--platform gpu but JAX sees no GPU"


class RunError(HlodiffError):
    """The measurement itself failed (not bad input): exit status 1."""

    exit_code = 1


@dataclass(frozen=True)
class RunConfig:
    batch: int = 128
    features: int = 128
    hidden: tuple[int, ...] = (128, 128)
    classes: int = 10
    dtype: str = "f32"
    iters: int = 200
    warmup: int = 10
    lr: float = 0.01
    seed: int = 0

    def validate(self) -> "RunConfig":
        for name in ("batch", "features", "classes", "iters"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise InputError(f"--{name} must be a positive integer, got {v!r}")
        if not isinstance(self.warmup, int) or self.warmup < 0:
            raise InputError(f"--warmup must be a non-negative integer, got {self.warmup!r}")
        if not self.hidden or any((not isinstance(h, int)) or h < 1 for h in self.hidden):
            raise InputError(f"--hidden must list positive layer widths, got {self.hidden!r}")
        if self.dtype not in DTYPES:
            raise InputError(f"--dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        return self

    def to_dict(self) -> dict:
        d = asdict(self)
        d["hidden"] = list(self.hidden)
        d["layers"] = [self.features, *self.hidden, self.classes]
        return d


def parse_hidden(text: str) -> tuple[int, ...]:
    """``"128,128"`` -> ``(128, 128)``; InputError naming the bad item otherwise."""
    items = [t.strip() for t in str(text).split(",")]
    if not items or items == [""]:
        raise InputError("--hidden: expected comma-separated layer widths like 128,128, got nothing")
    out = []
    for item in items:
        if not re.fullmatch(r"[0-9]+", item) or int(item) < 1:
            raise InputError(f"--hidden: expected comma-separated positive integers like 128,128; "
                             f"{item!r} in {text!r} is not one")
        out.append(int(item))
    return tuple(out)


def percentile(xs: list[float], p: float) -> float:
    """The ``p`` quantile of sorted ``xs``: linear interpolation between closest ranks."""
    n = len(xs)
    if n == 1:
        return xs[0]
    k = (n - 1) * p
    lo = int(k)
    hi = min(lo + 1, n - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def stats_ms(samples_ns: list[int]) -> dict:
    """Median and spread of latencies (ns in, ms out)."""
    xs = sorted(s / 1e6 for s in samples_ns)
    n = len(xs)

    def pct(p: float) -> float:
        return percentile(xs, p)

    return {
        "n": n,
        "median_ms": statistics.median(xs),
        "mean_ms": statistics.fmean(xs),
        "min_ms": xs[0],
        "max_ms": xs[-1],
        "p10_ms": pct(0.10),
        "p25_ms": pct(0.25),
        "p75_ms": pct(0.75),
        "p90_ms": pct(0.90),
        "iqr_ms": pct(0.75) - pct(0.25),
        "stdev_ms": statistics.stdev(xs) if n > 1 else 0.0,
    }


# --------------------------------------------------------------------------------------
# Child: the measurement (runs with XLA_FLAGS / JAX_PLATFORMS already in the environment)
# --------------------------------------------------------------------------------------

def _progress(msg: str) -> None:
    sys.stderr.write(PROGRESS_PREFIX + msg + "\n")
    sys.stderr.flush()


def build_step(cfg: RunConfig):
    """(train_step, (params, x, y)): the seed benchmark's MLP step, sized by ``cfg``."""
    import jax
    import jax.numpy as jnp

    dt = {"f32": jnp.float32, "bf16": jnp.bfloat16}[cfg.dtype]
    sizes = [cfg.features, *cfg.hidden, cfg.classes]

    def make_inputs(key):  # jitted: one compile instead of one per eager random op
        keys = jax.random.split(key, len(sizes) + 1)
        params = []
        for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:])):
            w = (jax.random.normal(keys[i], (m, n), jnp.float32) * (1.0 / m ** 0.5)).astype(dt)
            params.append((w, jnp.zeros((n,), dt)))
        x = jax.random.normal(keys[-2], (cfg.batch, cfg.features), jnp.float32).astype(dt)
        y = jax.random.randint(keys[-1], (cfg.batch,), 0, cfg.classes)
        return params, x, y

    params, x, y = jax.jit(make_inputs)(jax.random.PRNGKey(cfg.seed))
    classes, lr = cfg.classes, cfg.lr

    def loss_fn(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jax.nn.relu(h @ w + b)
        w, b = params[-1]
        logp = jax.nn.log_softmax(h @ w + b)
        onehot = jax.nn.one_hot(y, classes, dtype=logp.dtype)
        return -jnp.mean(jnp.sum(onehot * logp, axis=-1))

    def train_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        new_params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
        return new_params, loss

    assert train_step.__name__ == STEP_NAME
    return train_step, (params, x, y)


def take_json(path: str | os.PathLike):
    """The JSON a measurement child wrote to ``path`` (None when absent, empty or not JSON);
    the file is removed either way."""
    try:
        text = Path(path).read_text()
        return json.loads(text) if text.strip() else None
    except (OSError, ValueError):
        return None
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def _time_calls(fn: Callable, args: tuple, iters: int, warmup: int) -> list[int]:
    import jax

    for _ in range(warmup):
        jax.block_until_ready(fn(*args))
    samples = []
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(iters):
            t0 = time.perf_counter_ns()
            jax.block_until_ready(fn(*args))
            samples.append(time.perf_counter_ns() - t0)
    finally:
        if was_enabled:
            gc.enable()
    return samples


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return _platform.processor() or None


def measure(cfg: RunConfig, platform: str = "auto",
            progress: Callable[[str], None] = lambda m: None) -> dict:
    """Time the step eager, jitted and against the dispatch floor, in this process."""
    progress("starting JAX")
    import jax
    import jaxlib

    if platform == "gpu":
        try:
            gpus = jax.devices("gpu")
        except RuntimeError:
            gpus = []
        if not gpus:
            raise _NoGpu(f"--platform gpu: JAX sees no GPU (devices: {jax.devices()}, "
                         f"jax {jax.__version__}); install jax[cuda12] on a machine with an "
                         "NVIDIA GPU, or use --platform cpu / auto")
        device = gpus[0]
    elif platform == "cpu":
        device = jax.devices("cpu")[0]
    else:
        device = jax.devices()[0]

    with jax.default_device(device):
        train_step, args = build_step(cfg)
        args = jax.device_put(args, device)
        jax.block_until_ready(args)

        progress("compiling the jitted step")
        jitted = jax.jit(train_step)
        t0 = time.perf_counter()
        lowered = jitted.lower(*args)
        t1 = time.perf_counter()
        lowered.compile()
        t2 = time.perf_counter()
        first = time.perf_counter()
        jit_out = jax.block_until_ready(jitted(*args))
        first_call_s = time.perf_counter() - first

        progress(f"timing the jitted step ({cfg.iters} steps)")
        jit_ns = _time_calls(jitted, args, cfg.iters, cfg.warmup)

        def dispatch_floor(params, x, y):
            return params, x, y

        progress(f"timing the dispatch floor ({cfg.iters} calls)")
        floor_ns = _time_calls(jax.jit(dispatch_floor), args, cfg.iters, cfg.warmup)

        def eager_step(params, x, y):
            with jax.disable_jit():
                return train_step(params, x, y)

        progress(f"timing the eager step ({cfg.iters} steps, op by op)")
        t3 = time.perf_counter()
        eager_out = jax.block_until_ready(eager_step(*args))
        eager_first_s = time.perf_counter() - t3
        eager_ns = _time_calls(eager_step, args, cfg.iters, cfg.warmup)

    # Sanity: eager and compiled must compute the same step.
    diffs = [float(abs(a.astype("float32") - b.astype("float32")).max())
             for a, b in zip(jax.tree_util.tree_leaves(jit_out), jax.tree_util.tree_leaves(eager_out))]

    jit_s, eager_s, floor_s = stats_ms(jit_ns), stats_ms(eager_ns), stats_ms(floor_ns)
    return {
        "schema": SCHEMA,
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "platform_requested": platform,
        "platform": device.platform,
        "device": {
            "platform": device.platform,
            "kind": device.device_kind,
            "name": str(device),
            "count": len(jax.devices(device.platform)),
        },
        "jax_version": jax.__version__,
        "jaxlib_version": getattr(jaxlib, "__version__", None),
        "python": _platform.python_version(),
        "machine": {
            "system": _platform.platform(),
            "cpu": _cpu_model(),
            "cpu_count": os.cpu_count(),
        },
        "config": cfg.to_dict(),
        "compile": {
            "trace_lower_s": t1 - t0,
            "compile_s": t2 - t1,
            "total_s": t2 - t0,
            "first_call_s": first_call_s,
        },
        "jit": jit_s,
        "eager": eager_s,
        "floor": floor_s,
        "eager_first_call_s": eager_first_s,
        "speedup": eager_s["median_ms"] / jit_s["median_ms"],
        "jit_over_floor": jit_s["median_ms"] / floor_s["median_ms"],
        "jit_above_floor_ms": jit_s["median_ms"] - floor_s["median_ms"],
        "check": {
            "loss_jit": float(jit_out[1]),
            "loss_eager": float(eager_out[1]),
            "max_abs_diff_eager_vs_jit": max(diffs) if diffs else 0.0,
        },
        "method": ("wall clock per call with jax.block_until_ready on every output; "
                   f"{cfg.warmup} untimed warm-up calls, then {cfg.iters} timed calls each; "
                   "eager = jax.disable_jit() (op-by-op dispatch); floor = jitted identity "
                   "over the same arguments; gc paused while timing"),
    }


class _NoGpu(Exception):
    pass


def child_main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hlodiff.jaxrun.runbench",
                                 description="Time an MLP training step eager vs jax.jit "
                                             "(the measurement behind `hlodiff run`); prints JSON.")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--features", type=int, default=128)
    ap.add_argument("--hidden", default="128,128")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--dtype", choices=DTYPES, default="f32")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--platform", choices=PLATFORMS, default="auto")
    ap.add_argument("--out", help="write the JSON here instead of stdout")
    a = ap.parse_args(argv)

    def emit(obj: dict) -> None:
        text = json.dumps(obj, indent=2)
        if a.out:
            Path(a.out).write_text(text + "\n")
        else:
            print(text)

    try:
        cfg = RunConfig(a.batch, a.features, parse_hidden(a.hidden), a.classes, a.dtype,
                        a.iters, a.warmup).validate()
    except InputError as e:
        emit({"error": str(e), "kind": "input"})
        return 2
    try:
        result = measure(cfg, a.platform, progress=_progress)
    except _NoGpu as e:
        emit({"error": str(e), "kind": "no_gpu"})
        return CHILD_NO_GPU_EXIT
    emit(result)
    return 0


# --------------------------------------------------------------------------------------
# Parent: subprocess, dump discovery, hlodiff summary
# --------------------------------------------------------------------------------------

_DUMP_RE = re.compile(r"^module_(\d+)\.(.+?)\.(.*)$")


def find_step_dumps(dump_dir: str | os.PathLike, module: str = STEP_MODULE,
                    since: float | None = None) -> tuple[Path, Path]:
    """The (before, after) optimization dumps of ``module`` with the largest module number.

    ``since`` (a ``time.time()``) ignores files older than this run, for a reused --dump dir.
    """
    d = Path(dump_dir)
    found: dict[int, dict[str, Path]] = {}
    for p in d.iterdir() if d.is_dir() else ():
        m = _DUMP_RE.match(p.name)
        if not m or m.group(2) != module or not p.is_file():
            continue
        if since is not None and p.stat().st_mtime < since - 1.0:
            continue
        rest = m.group(3)
        kind = ("before" if rest == "before_optimizations.txt"
                else "after" if rest.endswith("after_optimizations.txt") else None)
        if kind:
            found.setdefault(int(m.group(1)), {})[kind] = p
    complete = [n for n, kinds in found.items() if len(kinds) == 2]
    if not complete:
        raise RunError(f"{d}: no {module} before/after_optimizations.txt dump pair was written "
                       "(is XLA_FLAGS overriding --xla_dump_to?)")
    pair = found[max(complete)]
    return pair["before"], pair["after"]


def hlo_summary(before: Path, after: Path) -> dict:
    """What XLA did to the step: instruction counts, plus hlodiff's diff summary."""
    from ..dumps.loader import load

    mb, ma = load(before), load(after)
    entry = next((c for c in ma.computations if c.name == ma.entry), None)
    out: dict = {
        "module": STEP_MODULE,
        "before": str(before),
        "after": str(after),
        "before_instructions": mb.instruction_count,
        "after_instructions": ma.instruction_count,
        "after_entry_instructions": len(entry.instructions) if entry else None,
        "after_fusions": sum(1 for c in ma.computations for i in c.instructions
                             if i.opcode == "fusion"),
        "summary": None,
    }
    try:
        from ..diff import diff_files  # noqa: PLC0415 (being written concurrently)
    except ImportError as e:
        # TODO(lead): wire once hlodiff.diff lands; until then only the counts above.
        out["diff_error"] = f"hlodiff.diff not available ({e})"
        return out
    try:
        result = diff_files(str(before), str(after))
        out["summary"] = dict(result.summary)
    except Exception as e:  # the report still has the timings and counts
        out["diff_error"] = f"{type(e).__name__}: {e}"
    return out


def child_env(platform: str, dump_dir: str, base: dict | None = None) -> dict:
    env = dict(os.environ if base is None else base)
    flags = [env.get("XLA_FLAGS", "").strip(), f"--xla_dump_to={dump_dir}",
             "--xla_dump_hlo_as_text", f"--xla_dump_hlo_module_re=.*{STEP_MODULE}.*"]
    env["XLA_FLAGS"] = " ".join(f for f in flags if f)
    if platform == "cpu":
        env["JAX_PLATFORMS"] = "cpu"
    elif platform == "gpu":
        env.pop("JAX_PLATFORMS", None)  # the child asks for jax.devices("gpu") itself
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    return env


def run_child(cfg: RunConfig, platform: str, dump_dir: str,
              progress: Callable[[str], None] = lambda m: None) -> dict:
    """Run the measurement in a fresh interpreter; its JSON result."""
    fd, out_path = tempfile.mkstemp(prefix="hlodiff-run-", suffix=".json")
    os.close(fd)
    cmd = [sys.executable, "-m", "hlodiff.jaxrun.runbench", "--batch", str(cfg.batch),
           "--features", str(cfg.features), "--hidden", ",".join(map(str, cfg.hidden)),
           "--classes", str(cfg.classes), "--dtype", cfg.dtype, "--iters", str(cfg.iters),
           "--warmup", str(cfg.warmup), "--platform", platform, "--out", out_path]
    other: list[str] = []
    proc = subprocess.Popen(cmd, env=child_env(platform, dump_dir), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, errors="replace")

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.startswith(PROGRESS_PREFIX):
                progress(line[len(PROGRESS_PREFIX):].rstrip("\n"))
            else:
                other.append(line.rstrip("\n"))
                del other[:-40]

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        rc = proc.wait()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        reader.join(timeout=5)
    data = take_json(out_path)
    if isinstance(data, dict) and "error" in data:
        if data.get("kind") in ("input", "no_gpu"):
            raise InputError(data["error"])
        raise RunError(data["error"])
    if rc != 0 or not isinstance(data, dict):
        tail = "\n".join(other[-15:])
        raise RunError(f"the measurement subprocess failed (exit {rc}):\n{tail}")
    return data


def run(cfg: RunConfig, platform: str = "auto", dump: str | None = None,
        progress: Callable[[str], None] = lambda m: None) -> dict:
    """The whole of ``hlodiff run``: measure in a subprocess, then diff the step's dumps."""
    cfg.validate()
    if platform not in PLATFORMS:
        raise InputError(f"--platform must be one of {', '.join(PLATFORMS)}, got {platform!r}")
    if dump is not None:
        dump_path = Path(dump)
        if dump_path.exists() and not dump_path.is_dir():
            raise InputError(f"--dump {dump}: exists and is not a directory")
        try:
            dump_path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(f"--dump {dump}: cannot create directory ({e.strerror})") from None
        dump_dir = str(dump_path.resolve())
    else:
        dump_dir = tempfile.mkdtemp(prefix="hlodiff-run-dump-")
    started = time.time()
    try:
        result = run_child(cfg, platform, dump_dir, progress)
        progress("diffing the step's HLO before and after optimization")
        before, after = find_step_dumps(dump_dir, since=started)
        result["hlo"] = hlo_summary(before, after)
    finally:
        if dump is None:
            shutil.rmtree(dump_dir, ignore_errors=True)
    result["dump_dir"] = dump_dir if dump is not None else None
    if dump is None:  # the files are gone with the temporary directory
        result["hlo"]["before"] = Path(result["hlo"]["before"]).name
        result["hlo"]["after"] = Path(result["hlo"]["after"]).name
    return result


if __name__ == "__main__":
    sys.exit(child_main())
