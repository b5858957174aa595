#!/usr/bin/env python
"""Generate a large, real HLO module pair for benchmarking hlodiff.

Builds a GPT-style decoder-only transformer training step (token + position
embedding, N unrolled pre-LayerNorm blocks of multi-head causal self-attention
+ GELU MLP, final LayerNorm, tied-embedding logits, softmax cross-entropy,
jax.value_and_grad and an Adam update), compiles it with XLA in a fresh
subprocess with ``XLA_FLAGS="--xla_dump_to=<tmp> --xla_dump_hlo_as_text"`` and
copies the before/after-optimization text dumps of the ``jit_gpt_step`` module
to ``--out`` (default ``benchmarks/data/gpt<N>/``).

The step is only lowered and compiled (arguments are ShapeDtypeStructs), never
executed, so generation is fast and needs no memory for the weights.

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
    f32 = jnp.float32

    def sds(*shape, dtype=f32):
        return jax.ShapeDtypeStruct(shape, dtype)

    def layer_shapes():
        return {
            "ln1_g": sds(D), "ln1_b": sds(D),
            "w_qkv": sds(D, 3 * D), "b_qkv": sds(3 * D),
            "w_o": sds(D, D), "b_o": sds(D),
            "ln2_g": sds(D), "ln2_b": sds(D),
            "w_fc": sds(D, F), "b_fc": sds(F),
            "w_proj": sds(F, D), "b_proj": sds(D),
        }

    params = {
        "wte": sds(V, D),
        "wpe": sds(T, D),
        "layers": [layer_shapes() for _ in range(L)],
        "lnf_g": sds(D), "lnf_b": sds(D),
    }
    opt_state = {
        "step": sds(dtype=jnp.int32),
        "m": jax.tree_util.tree_map(lambda s: s, params),
        "v": jax.tree_util.tree_map(lambda s: s, params),
    }
    tokens = sds(B, T, dtype=jnp.int32)
    targets = sds(B, T, dtype=jnp.int32)

    def layer_norm(x, g, b, eps=1e-5):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + eps) * g + b

    def attention(x, p):
        qkv = x @ p["w_qkv"] + p["b_qkv"]  # [B, T, 3D]
        q, k, v = jnp.split(qkv, 3, axis=-1)
        q = q.reshape(B, T, H, dh)
        k = k.reshape(B, T, H, dh)
        v = v.reshape(B, T, H, dh)
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(f32(dh))
        mask = jnp.tril(jnp.ones((T, T), dtype=bool))
        scores = jnp.where(mask, scores, jnp.finfo(f32).min)
        probs = jax.nn.softmax(scores, axis=-1)
        out = jnp.einsum("bhqk,bkhd->bqhd", probs, v).reshape(B, T, D)
        return out @ p["w_o"] + p["b_o"]

    def mlp(x, p):
        h = jax.nn.gelu(x @ p["w_fc"] + p["b_fc"])
        return h @ p["w_proj"] + p["b_proj"]

    def loss_fn(params, tokens, targets):
        x = params["wte"][tokens] + params["wpe"][None, :, :]
        for p in params["layers"]:  # unrolled python loop over layers
            x = x + attention(layer_norm(x, p["ln1_g"], p["ln1_b"]), p)
            x = x + mlp(layer_norm(x, p["ln2_g"], p["ln2_b"]), p)
            if cfg["barrier"]:
                x = jax.lax.optimization_barrier(x)
        x = layer_norm(x, params["lnf_g"], params["lnf_b"])
        logits = x @ params["wte"].T  # tied embeddings, [B, T, V]
        logp = jax.nn.log_softmax(logits, axis=-1)
        nll = -jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
        return jnp.mean(nll)

    def sgd_step(params, tokens, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets)
        lr = 1e-2
        new_params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
        return new_params, loss

    def adam_step(params, opt_state, tokens, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets)
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
        return new_params, {"step": step, "m": m, "v": v}, loss

    if cfg["optimizer"] == "adam":
        def gpt_step(params, opt_state, tokens, targets):
            return adam_step(params, opt_state, tokens, targets)
        args = (params, opt_state, tokens, targets)
    else:
        def gpt_step(params, tokens, targets):
            return sgd_step(params, tokens, targets)
        args = (params, tokens, targets)

    t0 = time.time()
    lowered = jax.jit(gpt_step).lower(*args)
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
    ap.add_argument("--barrier", action=argparse.BooleanOptionalAction, default=True,
                    help="optimization_barrier on the residual stream after each layer")
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
           "optimizer": args.optimizer, "barrier": args.barrier}
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

    keep = re.compile(r"^module_\d+\.jit_gpt_step\.(before_optimizations|[a-z0-9_]*after_optimizations)\.txt$")
    files = sorted(p for p in tmp.iterdir() if p.is_file() and keep.match(p.name))
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
