"""Held-out jax.checkpoint programs for benchmarks/remat_regions.py (written after the
analysis, never looked at while writing it). Generate with pass dumps::

    python fixtures/generate_memory.py --programs benchmarks/remat_heldout.py \
        --out benchmarks/data-remat/heldout-cpu --pass-dumps
    python fixtures/generate_memory.py --programs benchmarks/remat_heldout.py \
        --platform gpu --out benchmarks/data-remat/heldout-gpu --pass-dumps
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

f32 = jnp.float32
cp = jax.checkpoint_policies


def _sds(*shape):
    return jax.ShapeDtypeStruct(shape, f32)


def build_cnn_blocks():
    def block(x, k):
        y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jax.nn.relu(y) + x

    def loss(ks, x):
        for k in ks:
            x = jax.checkpoint(block)(x, k)
        return (x ** 2).mean()

    def cnn_blocks(ks, x):
        return jax.grad(loss)(ks, x)

    return cnn_blocks, ([_sds(3, 3, 8, 8)] * 3, _sds(2, 16, 16, 8)), ()


def build_scoped_layers():
    def layer(p, h):
        a = jnp.tanh(h @ p["w1"])
        return h + jax.nn.softplus(a @ p["w2"])

    def loss(ps, h):
        for i, p in enumerate(ps):
            with jax.named_scope(f"layer_{i}"):
                h = jax.checkpoint(layer, policy=cp.dots_with_no_batch_dims_saveable)(p, h)
        return h.sum()

    def scoped_layers(ps, h):
        return jax.grad(loss)(ps, h)

    ps = [{"w1": _sds(64, 128), "w2": _sds(128, 64)} for _ in range(4)]
    return scoped_layers, (ps, _sds(32, 64)), ()


def build_fori_remat():
    def fori_remat(w, x):
        def loss(w):
            @jax.checkpoint
            def step(i, h):
                return jnp.sin(h @ w) + h * 0.5

            return jax.lax.fori_loop(0, 6, step, x).sum()

        return jax.grad(loss)(w)

    return fori_remat, (_sds(48, 48), _sds(8, 48)), ()


def build_attention_remat():
    def attn(q, k, v):
        s = jnp.einsum("bqd,bkd->bqk", q, k) / 8.0
        return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s), v)

    def loss(wq, x):
        h = x
        for _ in range(2):
            q = h @ wq
            h = h + jax.checkpoint(attn)(q, h, h)
        return (h ** 2).sum()

    def attention_remat(wq, x):
        return jax.grad(loss)(wq, x)

    return attention_remat, (_sds(32, 32), _sds(2, 48, 32)), ()


def build_names_but():
    def block(h, w):
        z = jax.ad_checkpoint.checkpoint_name(h @ w, "z") if hasattr(jax, "ad_checkpoint") \
            else h @ w
        return jnp.cos(z) * jnp.exp(-z * z)

    from jax.ad_checkpoint import checkpoint_name

    def block2(h, w):
        z = checkpoint_name(h @ w, "z")
        return jnp.cos(z) * jnp.exp(-z * z)

    pol = cp.save_any_names_but_these("z")

    def loss(ws, h):
        for w in ws:
            h = jax.checkpoint(block2, policy=pol)(h, w)
        return h.sum()

    def names_but(ws, h):
        return jax.grad(loss)(ws, h)

    return names_but, ([_sds(40, 40)] * 3, _sds(10, 40)), ()


PROGRAMS = ["cnn_blocks", "scoped_layers", "fori_remat", "attention_remat", "names_but"]
GPU_PROGRAMS = list(PROGRAMS)
KEEP_BEFORE = set(PROGRAMS)


def _gpu(name):
    def build(mesh):
        from jax.sharding import NamedSharding, PartitionSpec as P

        fn, args, _ = globals()["build_" + name]()
        rep = NamedSharding(mesh, P())
        args = jax.tree.map(lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=rep), args)
        return fn, args

    return build


for _n in GPU_PROGRAMS:
    globals()["gpu_" + _n] = _gpu(_n)
