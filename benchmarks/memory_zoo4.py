"""A fourth held-out set for the memory estimate (session 3): written at 13:30 UTC, after
memory_zoo3's figures had been seen by mistake, and measured once at the end. Compiled like
memory_zoo3.py into benchmarks/data-memest/memzoo4/<platform>/. APIs of JAX 0.4.30 only.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

f32 = jnp.float32
bf16 = jnp.bfloat16


def _s(*shape, dtype=f32):
    return jax.ShapeDtypeStruct(shape, dtype)


def build_cross_attn():
    def loss(w, x, mem):
        q = x @ w[0]
        k, v = mem @ w[1], mem @ w[2]
        a = jax.nn.softmax(jnp.einsum("bqd,bkd->bqk", q, k) * 0.1)
        return (jnp.einsum("bqk,bkd->bqd", a, v) ** 2).sum()

    def cross_attn(w, x, mem):
        return jax.value_and_grad(loss)(w, x, mem)

    return cross_attn, ([_s(96, 96)] * 3, _s(6, 40, 96), _s(6, 72, 96)), ()


def build_unet_down_up():
    def unet_down_up(w, x):
        dn = ("NHWC", "HWIO", "NHWC")
        h = jax.nn.relu(jax.lax.conv_general_dilated(x, w[0], (2, 2), "SAME", dimension_numbers=dn))
        h = jax.nn.relu(jax.lax.conv_general_dilated(h, w[1], (1, 1), "SAME", dimension_numbers=dn))
        u = jax.image.resize(h, (h.shape[0], x.shape[1], x.shape[2], h.shape[3]), "nearest")
        return jnp.concatenate([u, x], -1).mean(-1)

    return unet_down_up, ([_s(3, 3, 4, 16), _s(3, 3, 16, 16)], _s(4, 48, 48, 4)), ()


def build_scan_ema_stats():
    def scan_ema_stats(xs):
        def step(c, x):
            m, v = c
            m = 0.9 * m + 0.1 * x.mean(0)
            v = 0.9 * v + 0.1 * ((x - m) ** 2).mean(0)
            return (m, v), (x - m) / jnp.sqrt(v + 1e-3)

        return jax.lax.scan(step, (jnp.zeros(128), jnp.ones(128)), xs)

    return scan_ema_stats, (_s(20, 64, 128),), ()


def build_topk_scatter():
    def topk_scatter(x, y):
        v, i = jax.lax.top_k(x, 16)
        z = jnp.zeros_like(x).at[jnp.arange(x.shape[0])[:, None], i].set(v)
        return z + y, jnp.sort(y, axis=1)[:, ::-1]

    return topk_scatter, (_s(128, 1000), _s(128, 1000)), ()


def build_while_bisect():
    def while_bisect(a, b):
        def cond(c):
            lo, hi, n = c
            return n < 30

        def body(c):
            lo, hi, n = c
            mid = (lo + hi) / 2
            f = jnp.tanh(mid @ a) - b
            lo = jnp.where(f < 0, mid, lo)
            hi = jnp.where(f >= 0, mid, hi)
            return lo, hi, n + 1

        lo, hi, _ = jax.lax.while_loop(cond, body, (jnp.zeros((64, 256)), jnp.ones((64, 256)), 0))
        return (lo + hi) / 2

    return while_bisect, (_s(256, 256), _s(64, 256)), ()


def build_bf16_conv_grad():
    def loss(w, x):
        y = jax.lax.conv_general_dilated(x.astype(bf16), w.astype(bf16), (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return (y.astype(f32) ** 2).mean()

    def bf16_conv_grad(w, x):
        return jax.grad(loss)(w, x)

    return bf16_conv_grad, (_s(3, 3, 32, 32), _s(8, 24, 24, 32)), ()


def build_remat_transformer():
    def block(p, x):
        h = jax.nn.softmax((x @ p[0]) @ (x @ p[1]).T / 8.0) @ x
        return x + jax.nn.gelu(h @ p[2]) @ p[3]

    def loss(ps, x):
        for p in ps:
            x = jax.checkpoint(block)(p, x)
        return (x ** 2).sum()

    def remat_transformer(ps, x):
        return jax.grad(loss)(ps, x)

    p = [_s(128, 64), _s(128, 64), _s(128, 256), _s(256, 128)]
    return remat_transformer, ([p] * 3, _s(80, 128)), ()


def build_cond_in_scan():
    def cond_in_scan(w, xs):
        def step(h, x):
            h = jax.lax.cond(x.sum() > 0, lambda h: jnp.tanh(h @ w), lambda h: h * 0.5, h)
            return h + x, h.sum()

        return jax.lax.scan(step, jnp.zeros((32, 128)), xs)

    return cond_in_scan, (_s(128, 128), _s(16, 32, 128)), ()


def build_gather_embed_grad():
    def loss(e, ids, w):
        return ((e[ids] @ w) ** 2).mean()

    def gather_embed_grad(e, ids, w):
        return jax.grad(loss, argnums=(0, 2))(e, ids, w)

    return gather_embed_grad, (_s(2000, 64), _s(32, 24, dtype=jnp.int32), _s(64, 64)), ()


def build_adamw_donated():
    def adamw_donated(p, m, v, g):
        m = [0.9 * a + 0.1 * b for a, b in zip(m, g)]
        v = [0.999 * a + 0.001 * b * b for a, b in zip(v, g)]
        p = [x - 1e-3 * (a / (jnp.sqrt(b) + 1e-8) + 0.01 * x) for x, a, b in zip(p, m, v)]
        return p, m, v

    shapes = [_s(512, 256), _s(256), _s(256, 64)]
    return adamw_donated, (shapes, shapes, shapes, shapes), (0, 1, 2)


PROGRAMS = ["cross_attn", "unet_down_up", "scan_ema_stats", "topk_scatter", "while_bisect",
            "bf16_conv_grad", "remat_transformer", "cond_in_scan", "gather_embed_grad",
            "adamw_donated"]
GPU_PROGRAMS = list(PROGRAMS)


def _gpu(name):
    def build(mesh):
        from jax.sharding import NamedSharding, PartitionSpec as P

        fn, args, _ = globals()["build_" + name]()
        rep = NamedSharding(mesh, P())
        return fn, jax.tree.map(lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=rep),
                                args)

    return build


for _n in GPU_PROGRAMS:
    globals()["gpu_" + _n] = _gpu(_n)
