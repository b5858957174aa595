"""A second held-out set for the memory estimate, written after the first (memory_zoo.py) had
been looked at: compiled like memory_zoo.py into benchmarks/data/memzoo2/<platform>/::

    .venv/bin/python fixtures/generate_memory.py --programs benchmarks/memory_zoo2.py \\
        --out benchmarks/data/memzoo2/cpu
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

f32 = jnp.float32


def _s(*shape, dtype=f32):
    return jax.ShapeDtypeStruct(shape, dtype)


def build_vit_step():
    def attn(x, w):
        q, k, v = jnp.split(x @ w[0], 3, -1)
        a = jax.nn.softmax(q @ k.transpose(0, 2, 1) / 8.0)
        return x + (a @ v) @ w[1]

    def loss(w, img):
        p = img.reshape(4, 8, 8, 8, 8, 3).transpose(0, 1, 3, 2, 4, 5).reshape(4, 64, 192)
        x = p @ w[0]
        x = attn(x, w[1:3])
        x = x + jax.nn.gelu(x @ w[3]) @ w[4]
        return (x.mean(1) ** 2).sum()

    def vit_step(w, img):
        g = jax.grad(loss)(w, img)
        return [a - 0.01 * b for a, b in zip(w, g)]

    w = [_s(192, 128), _s(128, 384), _s(128, 128), _s(128, 512), _s(512, 128)]
    return vit_step, (w, _s(4, 64, 64, 3)), ()


def build_gru_fori():
    def gru_fori(w, xs):
        def body(i, h):
            x = jax.lax.dynamic_index_in_dim(xs, i, keepdims=False)
            z = jax.nn.sigmoid(jnp.concatenate([x, h], -1) @ w[0])
            r = jax.nn.sigmoid(jnp.concatenate([x, h], -1) @ w[1])
            n = jnp.tanh(jnp.concatenate([x, r * h], -1) @ w[2])
            return (1 - z) * n + z * h

        return jax.lax.fori_loop(0, xs.shape[0], body, jnp.zeros((64, 256)))

    w = [_s(384, 256)] * 3
    return gru_fori, (w, _s(50, 64, 128)), ()


def build_vae_step():
    def loss(p, x, eps):
        h = jax.nn.relu(x @ p[0])
        mu, logv = h @ p[1], h @ p[2]
        z = mu + jnp.exp(0.5 * logv) * eps
        r = jax.nn.sigmoid(jax.nn.relu(z @ p[3]) @ p[4])
        kl = -0.5 * (1 + logv - mu ** 2 - jnp.exp(logv)).sum()
        return ((r - x) ** 2).sum() + kl

    def vae_step(p, x, eps):
        return jax.value_and_grad(loss)(p, x, eps)

    p = [_s(784, 400), _s(400, 32), _s(400, 32), _s(32, 400), _s(400, 784)]
    return vae_step, (p, _s(128, 784), _s(128, 32)), ()


def build_conv1d_stack():
    def loss(ks, x):
        for k in ks:
            x = jax.nn.relu(jax.lax.conv_general_dilated(x, k, (1,), "SAME",
                                                         dimension_numbers=("NWC", "WIO", "NWC")))
        return (x ** 2).mean()

    def conv1d_stack(ks, x):
        return jax.grad(loss)(ks, x)

    return conv1d_stack, ([_s(5, 64, 64)] * 3, _s(16, 512, 64)), ()


def build_segment_ops():
    def segment_ops(x, seg, table):
        s = jax.ops.segment_sum(x, seg, num_segments=512)
        return table[seg] * s[seg], s.max(0)

    return segment_ops, (_s(8192, 64), _s(8192, dtype=jnp.int32), _s(512, 64)), ()


def build_moe_top1():
    def moe_top1(x, gate, experts):
        logits = x @ gate
        onehot = jax.nn.one_hot(jnp.argmax(logits, -1), experts.shape[0])
        h = jnp.einsum("te,tm,emn->tn", onehot, x, experts)
        return h * jax.nn.softmax(logits).max(-1, keepdims=True)

    return moe_top1, (_s(512, 256), _s(256, 8), _s(8, 256, 256)), ()


def build_inference_stack():
    def ln(h):
        m = h.mean(-1, keepdims=True)
        return (h - m) * jax.lax.rsqrt(((h - m) ** 2).mean(-1, keepdims=True) + 1e-5)

    def inference_stack(ws, x):
        for w1, w2 in ws:
            x = x + jax.nn.gelu(ln(x) @ w1) @ w2
        return ln(x)

    return inference_stack, ([(_s(256, 1024), _s(1024, 256))] * 3, _s(512, 256)), ()


def build_assoc_scan():
    def assoc_scan(x):
        lse = jax.lax.associative_scan(jnp.logaddexp, x, axis=1)
        return lse - jax.lax.cummax(x, axis=1)

    return assoc_scan, (_s(64, 4096),), ()


def build_depthwise_pool():
    def loss(k, x):
        y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", feature_group_count=32,
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y = jax.lax.reduce_window(jax.nn.relu(y), -jnp.inf, jax.lax.max, (1, 2, 2, 1),
                                  (1, 2, 2, 1), "VALID")
        return (y ** 2).mean()

    def depthwise_pool(k, x):
        return jax.grad(loss)(k, x)

    return depthwise_pool, (_s(3, 3, 1, 32), _s(8, 64, 64, 32)), ()


def build_matpow_while():
    def matpow_while(a, n):
        def cond(s):
            return s[2] < n

        def body(s):
            acc, base, i = s
            return acc @ base, base * 0.999, i + 1

        return jax.lax.while_loop(cond, body, (jnp.eye(a.shape[0]), a, 0))[0]

    return matpow_while, (_s(512, 512), _s(dtype=jnp.int32)), ()


PROGRAMS = ["vit_step", "gru_fori", "vae_step", "conv1d_stack", "segment_ops", "moe_top1",
            "inference_stack", "assoc_scan", "depthwise_pool", "matpow_while"]
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
