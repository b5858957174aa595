"""Live capture: HLO before and after optimization, straight from a JAX program.

Two ways, for two situations:
  * ``capture(fn, *args)`` lowers and compiles a function in this process (a notebook);
  * ``run_with_dumps(argv, dump_dir)`` runs a whole program with XLA's dumping switched on,
    leaving the dump directory the other commands read.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import InputError
from ..hlo.model import Module
from ..hlo.parser import parse


@dataclass
class Capture:
    """One jitted function's module before and after XLA's optimization."""

    before: Module
    after: Module
    before_text: str
    after_text: str

    def diff(self, mode: str = "optimization"):
        """What XLA did to it: a :class:`hlodiff.diff.DiffResult`."""
        from ..diff import diff_modules

        return diff_modules(self.before, self.after, mode=mode)


def capture(fn: Callable, *args: Any, **kwargs: Any) -> Capture:
    """Lower ``fn`` (a function or a ``jax.jit`` object) for these arguments, compile it
    for the default backend, and parse both modules."""
    import jax

    jitted = fn if hasattr(fn, "lower") else jax.jit(fn)
    lowered = jitted.lower(*args, **kwargs)
    try:  # source metadata (op_name, file:line) is what ties instructions to the program
        before_text = lowered.as_text(dialect="hlo", debug_info=True)
    except TypeError:  # older jax: no debug_info argument
        before_text = lowered.as_text(dialect="hlo")
    after_text = lowered.compile().as_text()
    return Capture(parse(before_text, "<lowered>"), parse(after_text, "<compiled>"),
                   before_text, after_text)


def dump_flags(dump_dir: str | os.PathLike, passes: bool = False) -> str:
    """The XLA_FLAGS that make XLA write HLO text dumps to ``dump_dir``."""
    flags = f"--xla_dump_to={dump_dir} --xla_dump_hlo_as_text"
    if passes:
        flags += " --xla_dump_hlo_pass_re=.*"
    return flags


def run_with_dumps(argv: Sequence[str], dump_dir: str | os.PathLike, passes: bool = False,
                   env: dict[str, str] | None = None) -> int:
    """Run a program (e.g. ``["python", "train.py"]``) with XLA dumping into ``dump_dir``.

    The user's own XLA_FLAGS are kept. JAX's persistent compilation cache is turned off for
    the run: a cache hit compiles nothing and so dumps nothing. Returns the exit status.
    """
    if not argv:
        raise InputError("capture: no program to run (e.g. hlodiff capture -- python train.py)")
    Path(dump_dir).mkdir(parents=True, exist_ok=True)
    run_env = dict(os.environ if env is None else env)
    own = run_env.get("XLA_FLAGS", "")
    run_env["XLA_FLAGS"] = (own + " " + dump_flags(dump_dir, passes)).strip()
    run_env["JAX_ENABLE_COMPILATION_CACHE"] = "false"
    try:
        return subprocess.run(list(argv), env=run_env).returncode
    except FileNotFoundError:
        raise InputError(f"capture: cannot run {shlex.join(argv)}: no such program") from None
