"""A third held-out set for the memory estimate (session 3), written before any tuning of that
session and measured once at the end. Compiled like memory_zoo.py::

    .venv/bin/python fixtures/generate_memory.py --programs benchmarks/memory_zoo3.py \\
        --out benchmarks/data-memest/memzoo3/cpu
    .venv/bin/python fixtures/generate_memory.py --platform gpu \\
        --programs benchmarks/memory_zoo3.py --out benchmarks/data-memest/memzoo3/gpu

Programs use only APIs that JAX 0.4.30 also has, so the same file serves the older version.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

f32 = jnp.float32
bf16 = jnp.bfloat16


def _s(*shape, dtype=f32):
    return jax.ShapeDtypeStruct(shape, dtype)


def build_causal_mha():
    def loss(w, x):
        b, t, d = x.shape
        h = 4
        q, k, v = (jnp.einsum("btd,de->bte", x, w[i]).reshape(b, t, h, d // h) for i in range(3))
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / 8.0
        mask = jnp.tril(jnp.ones((t, t), bool))
        s = jnp.where(mask, s, -1e9)
        a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s), v).reshape(b, t, d)
        return ((a @ w[3]) ** 2).mean()

    def causal_mha(w, x):
        return jax.grad(loss)(w, x)

    return causal_mha, ([_s(128, 128)] * 4, _s(8, 96, 128)), ()


def build_gqa_infer():
    def gqa_infer(wq, wkv, x, cache_k, cache_v):
        q = (x @ wq).reshape(4, 8, 32)  # 8 query heads
        kv = x @ wkv
        k_new, v_new = kv[:, :64].reshape(4, 2, 32), kv[:, 64:].reshape(4, 2, 32)
        ck = jax.lax.dynamic_update_slice(cache_k, k_new[:, None], (0, 7, 0, 0))
        cv = jax.lax.dynamic_update_slice(cache_v, v_new[:, None], (0, 7, 0, 0))
        kk = jnp.repeat(ck, 4, axis=2)
        vv = jnp.repeat(cv, 4, axis=2)
        s = jnp.einsum("bhd,bthd->bht", q, kk)
        o = jnp.einsum("bht,bthd->bhd", jax.nn.softmax(s), vv)
        return o.reshape(4, 256), ck, cv

    return gqa_infer, (_s(256, 256), _s(256, 128), _s(4, 256), _s(4, 512, 2, 32),
                       _s(4, 512, 2, 32)), (3, 4)


def build_conv_bn_step():
    def loss(p, x):
        for w in p:
            x = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC"))
            m = x.mean((0, 1, 2))
            v = ((x - m) ** 2).mean((0, 1, 2))
            x = jax.nn.relu((x - m) * jax.lax.rsqrt(v + 1e-5))
        return (x ** 2).mean()

    def conv_bn_step(p, x):
        g = jax.grad(loss)(p, x)
        return [a - 0.1 * b for a, b in zip(p, g)]

    return conv_bn_step, ([_s(3, 3, 8, 16), _s(3, 3, 16, 16), _s(3, 3, 16, 32)],
                          _s(8, 32, 32, 8)), ()


def build_strided_convnet():
    def strided_convnet(ws, x):
        for w in ws:
            x = jax.nn.gelu(jax.lax.conv_general_dilated(
                x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")))
        return x.mean((1, 2))

    return strided_convnet, ([_s(3, 3, 3, 32), _s(3, 3, 32, 64), _s(3, 3, 64, 64)],
                             _s(16, 64, 64, 3)), ()


def build_logsumexp_scan():
    def logsumexp_scan(xs, w):
        def step(c, x):
            z = jnp.logaddexp(c[:, None, :] + w, x[:, :, None]).max(1)
            return z, z.sum(-1)

        return jax.lax.scan(step, jnp.zeros((32, 64)), xs)

    return logsumexp_scan, (_s(40, 32, 64), _s(64, 64)), ()


def build_scan_two_carries():
    def scan_two_carries(w, xs):
        def step(c, x):
            h, m = c
            h = jnp.tanh(x @ w + h)
            m = jnp.maximum(m, h)
            return (h, m), h * 2

        (h, m), ys = jax.lax.scan(step, (jnp.zeros((16, 256)), jnp.zeros((16, 256))), xs)
        return h + m, ys.sum(0)

    return scan_two_carries, (_s(256, 256), _s(30, 16, 256)), ()


def build_argsort_gather():
    def argsort_gather(x, v):
        idx = jnp.argsort(x, axis=-1)
        g = jnp.take_along_axis(v, idx, axis=-1)
        return g.cumsum(-1), jnp.sort(x, axis=0)

    return argsort_gather, (_s(256, 512), _s(256, 512)), ()


def build_scatter_hist():
    def scatter_hist(ids, vals, table):
        t = table.at[ids[:, 0]].add(vals)
        h = jnp.zeros((1024,), f32).at[ids[:, 0]].add(1.0)
        return t * 0.5, h

    return scatter_hist, (_s(4096, 1, dtype=jnp.int32), _s(4096, 64), _s(1024, 64)), ()


def build_segment_max():
    def segment_max(x, seg):
        m = jax.ops.segment_max(x, seg, num_segments=128)
        return x - m[seg]

    return segment_max, (_s(8192, 32), _s(8192, dtype=jnp.int32)), ()


def build_power_while():
    def power_while(a, v0):
        def cond(c):
            i, v, lam = c
            return i < 50

        def body(c):
            i, v, lam = c
            w = a @ v
            lam = jnp.vdot(v, w)
            return i + 1, w / jnp.linalg.norm(w), lam

        return jax.lax.while_loop(cond, body, (0, v0, jnp.float32(0)))[1:]

    return power_while, (_s(512, 512), _s(512)), ()


def build_bf16_attention():
    def bf16_attention(w, x):
        q, k, v = (x @ w[i] for i in range(3))
        s = (q @ k.swapaxes(-1, -2)).astype(f32)
        a = jax.nn.softmax(s).astype(bf16)
        return (a @ v) @ w[3]

    return bf16_attention, ([_s(256, 256, dtype=bf16)] * 4, _s(4, 128, 256, dtype=bf16)), ()


def build_bf16_mixed_grad():
    def loss(w, x):
        h = x.astype(bf16)
        for m in w:
            h = jax.nn.silu(h @ m.astype(bf16))
        return (h.astype(f32) ** 2).mean()

    def bf16_mixed_grad(w, x):
        g = jax.grad(loss)(w, x)
        return [a - 1e-3 * b for a, b in zip(w, g)]

    return bf16_mixed_grad, ([_s(256, 512), _s(512, 512), _s(512, 256)], _s(64, 256)), (0,)


def build_remat_policy_mlp():
    policy = jax.checkpoint_policies.dots_with_no_batch_dims_saveable

    def block(w, x):
        return x + jnp.tanh(jnp.tanh(x @ w[0]) @ w[1])

    def loss(ws, x):
        for w in ws:
            x = jax.checkpoint(block, policy=policy)(w, x)
        return (x ** 2).mean()

    def remat_policy_mlp(ws, x):
        return jax.grad(loss)(ws, x)

    return remat_policy_mlp, ([[_s(128, 384), _s(384, 128)]] * 3, _s(96, 128)), ()


def build_remat_scan():
    def loss(w, xs):
        @jax.checkpoint
        def step(h, x):
            h = jnp.tanh(h @ w + x)
            return h, (h ** 2).sum()

        _, ys = jax.lax.scan(step, jnp.zeros((32, 128)), xs)
        return ys.sum()

    def remat_scan(w, xs):
        return jax.grad(loss)(w, xs)

    return remat_scan, (_s(128, 128), _s(24, 32, 128)), ()


def build_fori_dus_stack():
    def fori_dus_stack(x, w):
        out = jnp.zeros((20,) + x.shape, f32)

        def body(i, c):
            h, out = c
            h = jax.nn.relu(h @ w)
            return h, jax.lax.dynamic_update_index_in_dim(out, h, i, 0)

        return jax.lax.fori_loop(0, 20, body, (x, out))

    return fori_dus_stack, (_s(64, 256), _s(256, 256)), ()


PROGRAMS = ["causal_mha", "gqa_infer", "conv_bn_step", "strided_convnet", "logsumexp_scan",
            "scan_two_carries", "argsort_gather", "scatter_hist", "segment_max", "power_while",
            "bf16_attention", "bf16_mixed_grad", "remat_policy_mlp", "remat_scan",
            "fori_dus_stack"]
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
