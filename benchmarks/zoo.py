#!/usr/bin/env python
"""Dump the zoo (benchmarks/zoo_programs.py) pass by pass, for the fate-accuracy benchmark.

    python benchmarks/zoo.py                       # CPU, every program
    python benchmarks/zoo.py --mode cpu8           # sharded over 8 CPU devices (a part)
    python benchmarks/zoo.py --mode gpu            # deviceless H100 (a part; /work/venvs/gpu)
    python benchmarks/zoo.py --mode gpu8           # 8 deviceless H100s, sharded (a part)
    python benchmarks/zoo.py --mode old --python /work/venvs/jax0430/bin/python
    python benchmarks/zoo.py --only mlp_deep vae_step

Output: ``benchmarks/data/zoo/<mode>/<program>/`` (git-ignored; ``--out DIR`` or
``$HLODIFF_ZOO_DATA`` names another root, e.g. ``benchmarks/data-NAME/zoo``) with XLA's file names: the
before/after modules and every pass dump of module ``jit_<program>``. Each program is
compiled (never run) in a fresh process, so XLA_FLAGS is set before jax is imported. A
program already dumped is skipped (``--force`` redoes it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = Path(os.environ.get("HLODIFF_ZOO_DATA") or HERE / "data" / "zoo")
GPU_PY = os.environ.get("HLODIFF_GPU_PYTHON", "/work/venvs/gpu/bin/python")
AOT = os.environ.get("HLODIFF_AOT_DUMP", "/work/shared/gpu/aot_dump.py")



def _programs():
    """The program set: ``benchmarks/zoo_programs.py``, or the module named by
    ``$HLODIFF_ZOO_PROGRAMS`` (e.g. ``zoo_unseen_programs``, the second zoo written for a
    final check and never used for tuning). Children inherit the variable."""
    import importlib
    sys.path.insert(0, str(HERE))
    return importlib.import_module(os.environ.get("HLODIFF_ZOO_PROGRAMS") or "zoo_programs")

def _named(fn, name):
    def wrapped(*a):
        return fn(*a)
    wrapped.__name__ = wrapped.__qualname__ = name
    return wrapped


def _shard(args, mesh):
    """Shard each array's leading dimension over the mesh when it divides; else replicate."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec as P
    n = mesh.devices.size
    axis = mesh.axis_names[0]

    def one(s):
        spec = P(axis) if (len(s.shape) >= 1 and s.shape[0] % n == 0 and s.shape[0] >= n) else P()
        return jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=NamedSharding(mesh, spec))
    return jax.tree_util.tree_map(one, args)


def child(mode: str, name: str) -> None:
    """Compile one program in this process (XLA_FLAGS already set by the parent)."""
    sys.path.insert(0, str(HERE))
    import jax
    PROGRAMS = _programs().PROGRAMS
    fn, args = PROGRAMS[name][1]()
    if mode == "cpu8":
        import numpy as np
        from jax.sharding import Mesh
        mesh = Mesh(np.array(jax.devices()[:8]), ("data",))
        args = _shard(args, mesh)
    jax.jit(_named(fn, name)).lower(*args).compile()


def gpu_build(mesh):
    """aot_dump.py's MODULE:FUNCTION entry: the program named by $ZOO_PROGRAM on ``mesh``."""
    sys.path.insert(0, str(HERE))
    PROGRAMS = _programs().PROGRAMS
    name = os.environ["ZOO_PROGRAM"]
    fn, args = PROGRAMS[name][1]()
    return _named(fn, name), tuple(_shard(args, mesh))


def _keep(src: Path, dest: Path, name: str) -> int:
    n = 0
    dest.mkdir(parents=True, exist_ok=True)
    for p in src.iterdir():
        if not p.is_file() or not p.name.endswith(".txt"):
            continue
        if f".jit_{name}." not in p.name:
            continue
        shutil.copy2(p, dest / p.name)
        n += 1
    return n


def dump(mode: str, name: str, python: str, force: bool, out_root: Path = OUT) -> str:
    dest = out_root / mode / name
    if dest.is_dir() and any(dest.glob("*after_optimizations.txt")) and not force:
        return "cached"
    if dest.exists():
        shutil.rmtree(dest)
    with tempfile.TemporaryDirectory(prefix="zoo-") as tmp:
        env = dict(os.environ)
        env["JAX_PLATFORMS"] = "cpu"
        if mode in ("gpu", "gpu8"):
            out = Path(tmp) / "out"
            env.pop("JAX_PLATFORMS")
            env["ZOO_PROGRAM"] = name
            cmd = [GPU_PY, AOT, str(out), f"{HERE / 'zoo.py'}:gpu_build"]
            if mode == "gpu8":
                cmd[3:3] = ["--gpus", "8"]  # 8 deviceless H100s, arguments sharded
            r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
            src = out
        else:
            flags = [f"--xla_dump_to={tmp}", "--xla_dump_hlo_as_text", "--xla_dump_hlo_pass_re=.*"]
            if mode == "cpu8":
                flags.append("--xla_force_host_platform_device_count=8")
            env["XLA_FLAGS"] = " ".join(flags)
            env["JAX_HLO_SOURCE_FILE_CANONICALIZATION_REGEX"] = r".*/"
            r = subprocess.run([python, __file__, "--child", mode, name], env=env,
                               capture_output=True, text=True, timeout=900)
            src = Path(tmp)
        if r.returncode != 0:
            tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
            return "FAILED: " + " | ".join(tail)
        n = _keep(src, dest, name)
    return f"{n} files"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mode", default="cpu", choices=["cpu", "cpu8", "gpu", "gpu8", "old"])
    ap.add_argument("--python", default=sys.executable, help="the Python (venv) that runs JAX")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--out", type=Path, default=OUT,
                    help="root of the dumps (default: $HLODIFF_ZOO_DATA or benchmarks/data/zoo)")
    ap.add_argument("--child", nargs=2, metavar=("MODE", "NAME"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(*a.child)
        return 0
    sys.path.insert(0, str(HERE))
    progs = _programs()
    GPU_SET, PROGRAMS, SHARDED_SET = progs.GPU_SET, progs.PROGRAMS, progs.SHARDED_SET
    names = a.only or {"cpu": list(PROGRAMS), "old": list(PROGRAMS), "gpu": GPU_SET,
                       "cpu8": SHARDED_SET, "gpu8": SHARDED_SET[:5]}[a.mode]
    bad = 0
    for name in names:
        msg = dump(a.mode, name, a.python, a.force, a.out)
        bad += msg.startswith("FAILED")
        print(f"{a.mode:5} {name:28} {msg}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
