#!/usr/bin/env python
"""Generate a large, real HLO module pair for benchmarking hlodiff.

Builds a GPT-style decoder-only transformer training step (token + position
embedding, N unrolled pre-LayerNorm blocks of multi-head causal self-attention
+ GELU MLP, final LayerNorm, tied-embedding logits, softmax cross-entropy,
jax.value_and_grad and an SGD (or ``--optimizer adam``) update), compiles it
with XLA in a fresh subprocess with
``XLA_FLAGS="--xla_dump_to=<tmp> --xla_dump_hlo_as_text"`` and copies the
before/after-optimization text dumps of the ``jit_gpt_step`` module to
``--out`` (default ``benchmarks/data/gpt<N>/``, git-ignored), plus an
``info.json`` with sizes, instruction counts and timings.

The step is only lowered and compiled (arguments are ShapeDtypeStructs), never
executed, so generation needs no memory for weights.  Instruction counts do
not depend on the widths (--d-model/--heads/--seq/--batch/--vocab); they are
set by the structure (--layers, --bias, --ln, --optimizer).

Default (jax/jaxlib 0.10.2, CPU): 12 layers give ~4,000 instructions before
and ~29,000 (3.9 MB) after optimization.  Note: with the LayerNorm written
inline, XLA:CPU fuses the backward residual-stream chain through every layer
into many consumers, so the *after* module grows roughly quadratically with
depth (24 layers: ~95,000 instructions, 12.6 MB).  ``--ln jit`` (LayerNorm as
a jax.jit-wrapped helper, like jax.nn.standardize) keeps it linear (12 layers:
~2,200 before / ~9,300 after; 24 layers: ~4,100 / ~18,000).

Usage (from the repository root)::

    .venv/bin/python benchmarks/gen_gpt.py               # 12 layers -> benchmarks/data/gpt12/
    .venv/bin/python benchmarks/gen_gpt.py --layers 24   # -> benchmarks/data/gpt24/
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# `name = shape opcode(` -- one HLO instruction per line, in any computation.
INSTR_RE = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*.*?\s[a-z][a-z0-9\-]*\(")
COMP_RE = re.compile(r"^\s*(?:ENTRY\s+)?%?[\w.\-]+\s.*\{\s*$")


def count_instructions(path: Path) -> int:
    n = 0
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            if INSTR_RE.match(line):
                n += 1
    return n


def count_computations(path: Path) -> int:
    n = 0
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.rstrip().endswith("{") and ") -> " in line and not line.startswith(" "):
                n += 1
    return n


# ---------------------------------------------------------------------------
# The model (only imported/used in the child process).
# ---------------------------------------------------------------------------


def _child(cfg: dict) -> None:
    import jax
    import jax.numpy as jnp

    L, D, H, T, B, V = (cfg[k] for k in ("layers", "d_model", "heads", "seq", "batch", "vocab"))
    F = 4 * D
    dh = D // H
    bias = cfg["bias"]
    f32 = jnp.float32

    def sds(*shape, dtype=f32):
        return jax.ShapeDtypeStruct(shape, dtype)

    def layer_shapes():
        p = {
            "ln1_g": sds(D), "w_qkv": sds(D, 3 * D), "w_o": sds(D, D),
            "ln2_g": sds(D), "w_fc": sds(D, F), "w_proj": sds(F, D),
        }
        if bias:
            p.update({
                "ln1_b": sds(D), "b_qkv": sds(3 * D), "b_o": sds(D),
                "ln2_b": sds(D), "b_fc": sds(F), "b_proj": sds(D),
            })
        return p

    params = {
        "wte": sds(V, D),
        "wpe": sds(T, D),
        "layers": [layer_shapes() for _ in range(L)],
        "lnf_g": sds(D),
    }
    if bias:
        params["lnf_b"] = sds(D)
    tokens = sds(B, T, dtype=jnp.int32)
    targets = sds(B, T, dtype=jnp.int32)

    def linear(x, p, w, b):
        y = x @ p[w]
        return y + p[b] if bias else y

    def layer_norm(x, g, b=None, eps=1e-5):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
        y = (x - mu) * jax.lax.rsqrt(var + eps) * g
        return y if b is None else y + b

    if cfg["ln"] == "jit":
        # A jit-wrapped helper (like jax.nn.standardize) changes how autodiff
        # splits forward/backward and keeps XLA CPU fusion linear in depth.
        layer_norm = jax.jit(layer_norm)

    def ln(x, p, name):
        return layer_norm(x, p[name + "_g"], p.get(name + "_b"))

    def attention(x, p):
        qkv = linear(x, p, "w_qkv", "b_qkv")  # [B, T, 3D]
        q, k, v = jnp.split(qkv, 3, axis=-1)
        q = q.reshape(B, T, H, dh)
        k = k.reshape(B, T, H, dh)
        v = v.reshape(B, T, H, dh)
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(f32(dh))
        mask = jnp.tril(jnp.ones((T, T), dtype=bool))
        scores = jnp.where(mask, scores, jnp.finfo(f32).min)
        probs = jax.nn.softmax(scores, axis=-1)
        out = jnp.einsum("bhqk,bkhd->bqhd", probs, v).reshape(B, T, D)
        return linear(out, p, "w_o", "b_o")

    def mlp(x, p):
        h = jax.nn.gelu(linear(x, p, "w_fc", "b_fc"))  # tanh approximation, as GPT-2
        return linear(h, p, "w_proj", "b_proj")

    def loss_fn(params, tokens, targets):
        x = params["wte"][tokens] + params["wpe"][None, :, :]
        for p in params["layers"]:  # unrolled python loop over layers
            x = x + attention(ln(x, p, "ln1"), p)
            x = x + mlp(ln(x, p, "ln2"), p)
        x = ln(x, params, "lnf")
        logits = x @ params["wte"].T  # tied embeddings, [B, T, V]
        logp = jax.nn.log_softmax(logits, axis=-1)
        nll = -jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
        return jnp.mean(nll)

    def sgd_update(params, grads, opt_state):
        lr = 1e-2
        return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), opt_state

    def adam_update(params, grads, opt_state):
        lr, b1, b2, eps = 3e-4, 0.9, 0.999, 1e-8
        step = opt_state["step"] + 1
        t = step.astype(f32)
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, opt_state["m"], grads)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, opt_state["v"], grads)
        c1 = 1 - b1**t
        c2 = 1 - b2**t
        new_params = jax.tree_util.tree_map(
            lambda p, m, v: p - lr * (m / c1) / (jnp.sqrt(v / c2) + eps), params, m, v
        )
        return new_params, {"step": step, "m": m, "v": v}

    if cfg["optimizer"] == "adam":
        update = adam_update
        opt_state = {"step": sds(dtype=jnp.int32), "m": params, "v": params}
    else:
        update = sgd_update
        opt_state = {}

    def gpt_step(params, opt_state, tokens, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets)
        new_params, new_opt_state = update(params, grads, opt_state)
        return new_params, new_opt_state, loss

    t0 = time.time()
    lowered = jax.jit(gpt_step).lower(params, opt_state, tokens, targets)
    t1 = time.time()
    lowered.compile()
    t2 = time.time()
    print(json.dumps({
        "jax": jax.__version__,
        "jaxlib": __import__("jaxlib").__version__,
        "lower_s": round(t1 - t0, 2),
        "compile_s": round(t2 - t1, 2),
    }))


# ---------------------------------------------------------------------------
# Parent
# ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Dump a GPT training step's HLO before/after XLA optimization.")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
    ap.add_argument("--bias", action=argparse.BooleanOptionalAction, default=False,
                    help="biases in Linear and LayerNorm layers (GPT-2 style; default off, "
                         "like nanoGPT's bias=False)")
    ap.add_argument("--ln", choices=["inline", "jit"], default="inline",
                    help="LayerNorm written inline (default) or as a jax.jit-wrapped helper; "
                         "see the module docstring for how this changes the CPU output size")
    ap.add_argument("--out", type=Path, default=None,
                    help="output directory (default benchmarks/data/gpt<N>/)")
    ap.add_argument("--platform", default="cpu")
    ap.add_argument("--keep-tmp", action="store_true")
    ap.add_argument("--_child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args._child:
        _child(json.loads(args._child))
        return

    if args.d_model % args.heads:
        ap.error("--d-model must be divisible by --heads")
    cfg = {"layers": args.layers, "d_model": args.d_model, "heads": args.heads,
           "seq": args.seq, "batch": args.batch, "vocab": args.vocab,
           "optimizer": args.optimizer, "bias": args.bias, "ln": args.ln}
    out = args.out if args.out is not None else HERE / "data" / f"gpt{args.layers}"

    tmp = Path(tempfile.mkdtemp(prefix="hlodump_gpt_"))
    env = dict(os.environ)
    env["XLA_FLAGS"] = f"--xla_dump_to={tmp} --xla_dump_hlo_as_text"
    env["JAX_PLATFORMS"] = args.platform
    env["JAX_HLO_SOURCE_FILE_CANONICALIZATION_REGEX"] = r".*/"
    t0 = time.time()
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--_child", json.dumps(cfg)],
        env=env, capture_output=True, text=True,
    )
    wall = time.time() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"generation failed (rc={proc.returncode}); dump in {tmp}")
    info = json.loads(proc.stdout.strip().splitlines()[-1])

    keep = re.compile(r"^module_\d+\.jit_gpt_step\.(before_optimizations|[a-z0-9_]*after_optimizations)"
                      r"(-buffer-assignment|-live-range|-memory-usage-report)?\.txt$")  # + XLA's memory files
    files = sorted(p for p in tmp.iterdir() if p.is_file() and keep.match(p.name))
    mem_files = [p for p in files if p.name.endswith(("-buffer-assignment.txt", "-live-range.txt",
                                                        "-memory-usage-report.txt"))]
    files = [p for p in files if p not in mem_files]
    if len(files) < 2:
        raise SystemExit(f"expected before/after dumps of jit_gpt_step in {tmp}, found {files}")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    summary = {"config": cfg, "platform": args.platform, **info,
               "subprocess_wall_s": round(wall, 2), "files": {}}
    for p in files:
        dst = out / p.name
        shutil.copy2(p, dst)
        summary["files"][p.name] = {
            "bytes": dst.stat().st_size,
            "instructions": count_instructions(dst),
            "computations": count_computations(dst),
        }
    for p in mem_files:
        shutil.copy2(p, out / p.name)
    if not args.keep_tmp:
        shutil.rmtree(tmp)
    (out / "info.json").write_text(json.dumps(summary, indent=2) + "\n")

    print(f"gpt{args.layers}: config {cfg}")
    print(f"  lower {info['lower_s']}s, compile {info['compile_s']}s, subprocess wall {wall:.1f}s")
    for name, f in summary["files"].items():
        print(f"  {out / name}: {f['bytes'] / 1e6:.2f} MB, {f['instructions']} instructions, "
              f"{f['computations']} computations")


if __name__ == "__main__":
    main()
