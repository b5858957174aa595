"""Held-out programs for the memory estimate (never tuned on): compiled by
fixtures/generate_memory.py into benchmarks/data/memzoo/<platform>/ (git-ignored)::

    .venv/bin/python fixtures/generate_memory.py --programs benchmarks/memory_zoo.py \\
        --out benchmarks/data/memzoo/cpu
    .venv/bin/python fixtures/generate_memory.py --programs benchmarks/memory_zoo.py \\
        --platform gpu --out benchmarks/data/memzoo/gpu

Each ``build_<name>()`` returns ``(fn, args, donate)`` like fixtures/memory_programs.py.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

f32, bf16 = jnp.float32, jnp.bfloat16


def _s(*shape, dtype=f32):
    return jax.ShapeDtypeStruct(shape, dtype)


def build_resnet_block():
    def bn(x):
        m = x.mean((0, 1, 2))
        v = x.var((0, 1, 2))
        return (x - m) * jax.lax.rsqrt(v + 1e-5)

    def conv(x, k):
        return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def loss(p, x):
        h = jax.nn.relu(bn(conv(x, p[0])))
        h = bn(conv(h, p[1]))
        return (jax.nn.relu(h + x) ** 2).mean()

    def resnet_block(p, x):
        g = jax.grad(loss)(p, x)
        return [a - 0.1 * b for a, b in zip(p, g)]

    return resnet_block, ([_s(3, 3, 32, 32), _s(3, 3, 32, 32)], _s(8, 16, 16, 32)), ()


def build_lstm_scan():
    def lstm_scan(w, xs):
        def loss(w):
            def cell(c_h, x):
                c, h = c_h
                z = jnp.concatenate([x, h], -1) @ w
                i, f, o, g = jnp.split(z, 4, -1)
                c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
                h = jax.nn.sigmoid(o) * jnp.tanh(c)
                return (c, h), h

            z = jnp.zeros((16, 128))
            _, hs = jax.lax.scan(cell, (z, z), xs)
            return (hs ** 2).mean()

        return jax.grad(loss)(w)

    return lstm_scan, (_s(192, 512), _s(30, 16, 64)), ()


def build_per_example():
    def loss(w, x, y):
        return ((jnp.tanh(x @ w[0]) @ w[1] - y) ** 2).sum()

    def per_example(w, xs, ys):
        return jax.vmap(jax.grad(loss), (None, 0, 0))(w, xs, ys)

    return per_example, ([_s(64, 128), _s(128, 8)], _s(32, 64), _s(32, 8)), ()


def build_embed_scatter():
    def loss(e, ids, y):
        h = e[ids].mean(1)
        return ((h - y) ** 2).sum()

    def embed_scatter(e, ids, y):
        return e - 0.1 * jax.grad(loss)(e, ids, y)

    return embed_scatter, (_s(4096, 128), _s(64, 20, dtype=jnp.int32), _s(64, 128)), (0,)


def build_topk_cumsum():
    def topk_cumsum(x):
        v, i = jax.lax.top_k(x, 16)
        return jnp.cumsum(jnp.sort(x, axis=-1), -1)[:, :16] + v, i

    return topk_cumsum, (_s(256, 1024),), ()


def build_fft_filter():
    def fft_filter(x, k):
        return jnp.fft.irfft(jnp.fft.rfft(x) * jnp.fft.rfft(k), n=x.shape[-1])

    return fft_filter, (_s(64, 2048), _s(64, 2048)), ()


def build_bf16_block():
    def bf16_block(w1, w2, x):
        h = x.astype(bf16) @ w1
        h = jax.nn.gelu(h)
        h = h @ w2
        m = h.astype(f32).mean(-1, keepdims=True)
        return (h.astype(f32) - m).astype(bf16)

    return bf16_block, (_s(512, 2048, dtype=bf16), _s(2048, 512, dtype=bf16), _s(256, 512)), ()


def build_newton_while():
    def newton_while(a, b):
        def cond(s):
            return (s[1] < 20) & (jnp.abs(s[0] @ a - b).max() > 1e-4)

        def body(s):
            x, n = s
            r = x @ a - b
            return x - 0.01 * r @ a.T, n + 1

        return jax.lax.while_loop(cond, body, (jnp.zeros_like(b), 0))[0]

    return newton_while, (_s(256, 256), _s(128, 256)), ()


def build_einsum_chain():
    def einsum_chain(a, b, c):
        t = jnp.einsum("ij,jk->ik", a, b)
        u = jnp.einsum("ik,kl->il", jnp.exp(t), c)
        return jnp.einsum("il,ij->lj", jnp.tanh(u), a)

    return einsum_chain, (_s(512, 256), _s(256, 1024), _s(1024, 512)), ()


def build_scan_cond():
    def scan_cond(x, w):
        def step(h, xt):
            h = jax.lax.cond(xt.sum() > 0, lambda h: jnp.tanh(h @ w), lambda h: h * 0.5, h)
            return h + xt, h.sum()

        h, s = jax.lax.scan(step, jnp.zeros((32, 256)), x)
        return h, s

    return scan_cond, (_s(24, 32, 256), _s(256, 256)), ()


def build_adam_mlp():
    def loss(p, x, y):
        return ((jax.nn.relu(x @ p[0]) @ p[1] - y) ** 2).mean()

    def adam_mlp(p, m, v, x, y):
        g = jax.grad(loss)(p, x, y)
        m = [0.9 * a + 0.1 * b for a, b in zip(m, g)]
        v = [0.999 * a + 0.001 * b * b for a, b in zip(v, g)]
        p = [a - 1e-3 * mm / (jnp.sqrt(vv) + 1e-8) for a, mm, vv in zip(p, m, v)]
        return p, m, v

    ps = [_s(256, 512), _s(512, 64)]
    return adam_mlp, (ps, ps, ps, _s(128, 256), _s(128, 64)), (0, 1, 2)


def build_big_softmax():
    def big_softmax(h, w, labels):
        def loss(w):
            logits = h @ w
            return -jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], 1).mean()

        return jax.value_and_grad(loss)(w)

    return big_softmax, (_s(128, 256), _s(256, 8192), _s(128, dtype=jnp.int32)), ()


PROGRAMS = ["resnet_block", "lstm_scan", "per_example", "embed_scatter", "topk_cumsum",
            "fft_filter", "bf16_block", "newton_while", "einsum_chain", "scan_cond", "adam_mlp",
            "big_softmax"]
GPU_PROGRAMS = ["resnet_block", "lstm_scan", "per_example", "embed_scatter", "bf16_block",
                "newton_while", "einsum_chain", "scan_cond", "adam_mlp", "big_softmax"]


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
