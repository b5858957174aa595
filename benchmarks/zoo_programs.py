"""The zoo: real JAX programs of many kinds, for measuring hlodiff's fates against XLA.

Each entry of ``PROGRAMS`` is ``name -> (family, builder)``; ``builder()`` returns
``(fn, args)`` where ``args`` is a tuple of pytrees of ``jax.ShapeDtypeStruct`` (abstract:
nothing is computed, programs are only lowered and compiled). ``zoo.py`` jits ``fn`` under
the program's name (module ``jit_<name>``), attaches shardings when a mesh is asked for and
dumps XLA's passes. ``HOLDOUT`` names the programs never looked at while tuning the engine.

Written for JAX 0.4.30 up to the current release (no API newer than 0.4.30).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax

F32 = jnp.float32


def S(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


def _xent(logits, labels):
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, axis=-1))


def _sgd(params, grads, lr=0.01):
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)


def _train(loss):
    def step(params, *batch):
        l, g = jax.value_and_grad(loss)(params, *batch)
        return _sgd(params, g), l
    return step


# ---------------------------------------------------------------- MLP
def mlp_deep():
    sizes = [64, 128, 128, 128, 10]
    params = [(S(a, b), S(b)) for a, b in zip(sizes[:-1], sizes[1:])]

    def loss(ps, x, y):
        h = x
        for w, b in ps[:-1]:
            h = jax.nn.relu(h @ w + b)
        w, b = ps[-1]
        return _xent(h @ w + b, y)
    return _train(loss), (params, S(32, 64), S(32, 10))


def mlp_gelu_adam():
    params = {"w1": S(64, 256), "w2": S(256, 64)}
    state = jax.tree_util.tree_map(lambda s: s, params)

    def step(p, m, v, x):
        def loss(p):
            return jnp.mean((jax.nn.gelu(x @ p["w1"]) @ p["w2"] - x) ** 2)
        l, g = jax.value_and_grad(loss)(p)
        m = jax.tree_util.tree_map(lambda a, b: 0.9 * a + 0.1 * b, m, g)
        v = jax.tree_util.tree_map(lambda a, b: 0.999 * a + 0.001 * b * b, v, g)
        p = jax.tree_util.tree_map(lambda a, b, c: a - 1e-3 * b / (jnp.sqrt(c) + 1e-8) - 1e-4 * a,
                                   p, m, v)
        return p, m, v, l
    return step, (params, state, state, S(16, 64))


def mlp_bf16():
    params = (S(128, 128, dtype=jnp.bfloat16), S(128, 32, dtype=jnp.bfloat16))

    def loss(p, x):
        h = jax.nn.silu(x.astype(jnp.bfloat16) @ p[0])
        return jnp.mean((h @ p[1]).astype(F32) ** 2)
    return _train(loss), (params, S(64, 128))


def mlp_transposed():
    def f(w, x):
        return jnp.tanh(x @ w).T @ x, (w.T @ x.T).T
    return f, (S(32, 48), S(24, 32))


# ---------------------------------------------------------------- CNN
def cnn_small():
    params = (S(3, 3, 3, 8), S(3, 3, 8, 16), S(16, 10))

    def loss(p, x, y):
        dn = ("NHWC", "HWIO", "NHWC")
        h = jax.nn.relu(lax.conv_general_dilated(x, p[0], (1, 1), "SAME", dimension_numbers=dn))
        h = jax.nn.relu(lax.conv_general_dilated(h, p[1], (2, 2), "SAME", dimension_numbers=dn))
        return _xent(jnp.mean(h, axis=(1, 2)) @ p[2], y)
    return _train(loss), (params, S(4, 16, 16, 3), S(4, 10))


def cnn_pool_bn():
    params = (S(3, 3, 4, 8), S(8), S(8))

    def loss(p, x):
        dn = ("NHWC", "HWIO", "NHWC")
        h = lax.conv_general_dilated(x, p[0], (1, 1), "SAME", dimension_numbers=dn)
        mu = h.mean(axis=(0, 1, 2))
        var = h.var(axis=(0, 1, 2))
        h = (h - mu) / jnp.sqrt(var + 1e-5) * p[1] + p[2]
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return jnp.sum(h ** 2)
    return _train(loss), (params, S(4, 8, 8, 4))


def cnn_depthwise():
    def f(w, x):
        dn = ("NCHW", "OIHW", "NCHW")
        return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn,
                                        feature_group_count=8)
    return jax.grad(lambda w, x: jnp.sum(f(w, x) ** 2)), (S(8, 1, 3, 3), S(2, 8, 12, 12))


# ---------------------------------------------------------------- transformer
def _attn(x, wq, wk, wv, wo, heads=4):
    b, t, d = x.shape
    q = (x @ wq).reshape(b, t, heads, d // heads)
    k = (x @ wk).reshape(b, t, heads, d // heads)
    v = (x @ wv).reshape(b, t, heads, d // heads)
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(d // heads)
    mask = jnp.tril(jnp.ones((t, t), bool))
    s = jnp.where(mask, s, -1e9)
    o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v).reshape(b, t, d)
    return o @ wo


def _ln(x):
    m = x.mean(-1, keepdims=True)
    return (x - m) * lax.rsqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5)


def transformer_layer():
    d = 32
    p = [S(d, d) for _ in range(4)] + [S(d, 4 * d), S(4 * d, d)]

    def loss(p, x):
        h = x + _attn(_ln(x), *p[:4])
        h = h + jax.nn.gelu(_ln(h) @ p[4]) @ p[5]
        return jnp.mean(h ** 2)
    return _train(loss), (p, S(2, 16, d))


def transformer_two_layers():
    d = 32
    layer = [S(d, d) for _ in range(4)] + [S(d, 2 * d), S(2 * d, d)]

    def loss(ps, x):
        h = x
        for p in ps:
            h = h + _attn(_ln(h), *p[:4])
            h = h + jax.nn.relu(_ln(h) @ p[4]) @ p[5]
        return jnp.mean(h ** 2)
    return _train(loss), ([layer, layer], S(2, 8, d))


def transformer_scan_layers():
    d = 32
    stacked = [S(3, d, d) for _ in range(4)] + [S(3, d, 2 * d), S(3, 2 * d, d)]

    def loss(ps, x):
        def body(h, p):
            h = h + _attn(_ln(h), *p[:4])
            return h + jax.nn.relu(_ln(h) @ p[4]) @ p[5], None
        h, _ = lax.scan(body, x, ps)
        return jnp.mean(h ** 2)
    return _train(loss), (stacked, S(2, 8, d))


def transformer_decode_cache():
    def f(cache_k, cache_v, q, k, v, pos):
        cache_k = lax.dynamic_update_slice(cache_k, k, (0, pos, 0))
        cache_v = lax.dynamic_update_slice(cache_v, v, (0, pos, 0))
        s = jnp.einsum("bd,btd->bt", q, cache_k)
        s = jnp.where(jnp.arange(cache_k.shape[1]) <= pos, s, -1e9)
        return cache_k, cache_v, jnp.einsum("bt,btd->bd", jax.nn.softmax(s), cache_v)
    return f, (S(2, 32, 16), S(2, 32, 16), S(2, 16), S(2, 1, 16), S(2, 1, 16),
               S(dtype=jnp.int32))


# ---------------------------------------------------------------- RNN / scan
def rnn_lstm_scan():
    p = (S(8 + 16, 64), S(64))

    def loss(p, xs):
        def cell(c_h, x):
            c, h = c_h
            z = jnp.concatenate([x, h], -1) @ p[0] + p[1]
            i, f, o, g = jnp.split(z, 4, -1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (c, h), h
        _, hs = lax.scan(cell, (jnp.zeros((4, 16)), jnp.zeros((4, 16))), xs)
        return jnp.mean(hs ** 2)
    return _train(loss), (p, S(10, 4, 8))


def rnn_bidirectional():
    def f(w, xs):
        def cell(h, x):
            h = jnp.tanh(x @ w[:8] + h @ w[8:])
            return h, h
        _, a = lax.scan(cell, jnp.zeros((2, 16)), xs)
        _, b = lax.scan(cell, jnp.zeros((2, 16)), xs, reverse=True)
        return jnp.sum(a * b)
    return jax.value_and_grad(f), (S(24, 16), S(12, 2, 8))


def scan_unrolled():
    def f(w, h):
        def cell(h, _):
            return jnp.tanh(h @ w), None
        return lax.scan(cell, h, None, length=8, unroll=4)[0]
    return f, (S(16, 16), S(4, 16))


# ---------------------------------------------------------------- MoE
def moe_top1():
    def loss(p, x):
        gate = jax.nn.softmax(x @ p["g"])
        idx = jnp.argmax(gate, -1)
        onehot = jax.nn.one_hot(idx, 4)
        out = jnp.einsum("te,ted->td", onehot * gate,
                         jnp.einsum("td,edh->teh", x, p["w"]) @ p["o"][0])
        return jnp.mean(out ** 2)
    return _train(loss), ({"g": S(16, 4), "w": S(4, 16, 32), "o": S(1, 32, 16)}, S(24, 16))


def moe_top2_dispatch():
    def f(x, g, w):
        logits = x @ g
        vals, idx = lax.top_k(logits, 2)
        probs = jax.nn.softmax(vals)
        eo = jnp.einsum("td,edh->teh", x, w)
        picked = jnp.take_along_axis(eo, idx[..., None], axis=1)
        return jnp.sum(picked * probs[..., None], axis=1)
    return f, (S(32, 16), S(16, 8), S(8, 16, 16))


# ---------------------------------------------------------------- VAE
def vae_step():
    p = {"e": S(32, 16), "mu": S(16, 4), "lv": S(16, 4), "d": S(4, 32)}

    def loss(p, x, eps):
        h = jax.nn.relu(x @ p["e"])
        mu, lv = h @ p["mu"], h @ p["lv"]
        z = mu + jnp.exp(0.5 * lv) * eps
        rec = jax.nn.sigmoid(z @ p["d"])
        kl = -0.5 * jnp.sum(1 + lv - mu ** 2 - jnp.exp(lv))
        return jnp.sum((rec - x) ** 2) + kl
    return _train(loss), (p, S(8, 32), S(8, 4))


# ---------------------------------------------------------------- UNet block
def unet_block():
    p = (S(3, 3, 4, 8), S(3, 3, 8, 8), S(3, 3, 16, 4))

    def f(p, x):
        dn = ("NHWC", "HWIO", "NHWC")
        c = lambda h, w, s=1: lax.conv_general_dilated(h, w, (s, s), "SAME", dimension_numbers=dn)
        d1 = jax.nn.relu(c(x, p[0]))
        d2 = jax.nn.relu(c(d1[:, ::2, ::2], p[1]))
        up = jnp.repeat(jnp.repeat(d2, 2, 1), 2, 2)
        return jnp.mean(c(jnp.concatenate([up, d1], -1), p[2]) ** 2)
    return jax.grad(f), (p, S(2, 8, 8, 4))


# ---------------------------------------------------------------- GNN
def gnn_segment_sum():
    def loss(w, x, src, dst):
        msg = jnp.take(x, src, axis=0) @ w
        agg = jax.ops.segment_sum(msg, dst, num_segments=20)
        return jnp.mean(jax.nn.relu(agg) ** 2)
    return jax.value_and_grad(loss), (S(8, 8), S(20, 8), S(50, dtype=jnp.int32),
                                      S(50, dtype=jnp.int32))


def gnn_gat():
    def f(w, a, x, src, dst):
        h = x @ w
        e = jax.nn.leaky_relu(jnp.take(h, src, 0) @ a[:8] + jnp.take(h, dst, 0) @ a[8:])
        emax = jax.ops.segment_max(e, dst, num_segments=16)
        ex = jnp.exp(e - emax[dst])
        den = jax.ops.segment_sum(ex, dst, num_segments=16)
        return jax.ops.segment_sum((ex / den[dst])[:, None] * jnp.take(h, src, 0), dst,
                                   num_segments=16)
    return f, (S(8, 8), S(16), S(16, 8), S(40, dtype=jnp.int32), S(40, dtype=jnp.int32))


# ---------------------------------------------------------------- quantization
def quant_fake():
    def loss(w, x):
        scale = jnp.max(jnp.abs(w)) / 127.0
        wq = w + lax.stop_gradient(jnp.round(w / scale) * scale - w)
        return jnp.mean((x @ wq) ** 2)
    return jax.value_and_grad(loss), (S(32, 32), S(8, 32))


def quant_int8_matmul():
    def f(wq, scale, x):
        xs = jnp.max(jnp.abs(x), axis=-1, keepdims=True) / 127.0
        xq = jnp.round(x / xs).astype(jnp.int8)
        acc = lax.dot(xq, wq, preferred_element_type=jnp.int32)
        return acc.astype(F32) * xs * scale
    return f, (S(32, 16, dtype=jnp.int8), S(16), S(8, 32))


# ---------------------------------------------------------------- remat
def _remat_mlp(policy):
    def loss(ws, x):
        @functools.partial(jax.checkpoint, policy=policy)
        def block(h, w):
            return jnp.tanh(jnp.sin(h @ w) * 2.0)
        h = x
        for w in ws:
            h = block(h, w)
        return jnp.sum(h ** 2)
    return jax.value_and_grad(loss), ([S(16, 16)] * 3, S(8, 16))


def remat_nothing():
    return _remat_mlp(None)


def remat_dots_saveable():
    return _remat_mlp(jax.checkpoint_policies.dots_saveable)


def remat_scan():
    def loss(ws, x):
        @jax.checkpoint
        def body(h, w):
            return jnp.tanh(h @ w) * jnp.cos(h), None
        return jnp.sum(lax.scan(body, x, ws)[0])
    return jax.grad(loss), (S(4, 16, 16), S(8, 16))


# ---------------------------------------------------------------- custom_vjp
def custom_vjp_clip():
    @jax.custom_vjp
    def clip_grad(x):
        return x

    def fwd(x):
        return x, None

    def bwd(_, g):
        return (jnp.clip(g, -1.0, 1.0),)
    clip_grad.defvjp(fwd, bwd)

    def loss(w, x):
        return jnp.sum(jnp.sin(clip_grad(x @ w)) ** 2)
    return jax.grad(loss), (S(16, 16), S(4, 16))


def custom_vjp_logsumexp():
    @jax.custom_vjp
    def lse(x):
        return jnp.log(jnp.sum(jnp.exp(x - x.max(-1, keepdims=True)), -1)) + x.max(-1)

    def fwd(x):
        y = lse(x)
        return y, (x, y)

    def bwd(res, g):
        x, y = res
        return (g[:, None] * jnp.exp(x - y[:, None]),)
    lse.defvjp(fwd, bwd)
    return jax.grad(lambda w, x: jnp.sum(lse(x @ w))), (S(16, 32), S(8, 16))


# ---------------------------------------------------------------- control flow
def while_newton():
    def f(a):
        def cond(s):
            return (s[2] < 20) & (jnp.max(jnp.abs(s[0] * s[0] - a)) > 1e-6)

        def body(s):
            x, _, i = s
            return 0.5 * (x + a / x), x, i + 1
        return lax.while_loop(cond, body, (a, a, 0))
    return f, (S(16),)


def fori_power_iter():
    def f(m, v):
        def body(i, v):
            w = m @ v
            return w / jnp.linalg.norm(w)
        return lax.fori_loop(0, 10, body, v)
    return f, (S(16, 16), S(16))


def fori_static_unroll():
    def f(x):
        return lax.fori_loop(0, 4, lambda i, x: jnp.sin(x) * 2.0 + i, x)
    return f, (S(8, 8),)


def cond_two_branches():
    def f(p, x):
        return lax.cond(p > 0, lambda x: jnp.sin(x) @ x.T, lambda x: jnp.cos(x) @ x.T, x)
    return jax.grad(lambda p, x: jnp.sum(f(p, x)), argnums=1), (S(), S(8, 8))


def switch_in_scan():
    def f(xs, w):
        def body(h, x):
            i = jnp.argmax(x) % 3
            h = lax.switch(i, [lambda h: h @ w, lambda h: jnp.tanh(h), lambda h: h * 2.0 + 1.0], h)
            return h, h.sum()
        return lax.scan(body, jnp.ones((4, 8)), xs)
    return f, (S(6, 5), S(8, 8))


def while_scatter():
    def f(x, idx):
        def body(i, x):
            return x.at[idx[i]].add(jnp.sin(x[idx[i]]))
        return lax.fori_loop(0, idx.shape[0], body, x)
    return f, (S(32, 4), S(10, dtype=jnp.int32))


# ---------------------------------------------------------------- sort / top_k
def sort_argsort():
    def f(x, y):
        order = jnp.argsort(x, axis=-1)
        return jnp.take_along_axis(y, order, axis=-1), jnp.sort(x * 2.0, axis=0)
    return f, (S(8, 16), S(8, 16))


def topk_ranking_loss():
    def loss(w, x):
        s = x @ w
        v, i = lax.top_k(s, 3)
        return jnp.sum(jax.nn.softplus(v[:, :1] - v[:, 1:]))
    return jax.value_and_grad(loss), (S(16, 12), S(8, 16))


# ---------------------------------------------------------------- FFT
def fft_conv1d():
    def f(x, k):
        n = x.shape[-1]
        return jnp.fft.irfft(jnp.fft.rfft(x) * jnp.fft.rfft(k, n), n)
    return jax.grad(lambda x, k: jnp.sum(f(x, k) ** 2)), (S(4, 32), S(4, 32))


def fft2_spectrum():
    def f(x):
        y = jnp.fft.fft2(x.astype(jnp.complex64))
        return jnp.abs(jnp.fft.fftshift(y)) ** 2
    return f, (S(16, 16),)


# ---------------------------------------------------------------- linalg
def linalg_cholesky_solve():
    def f(a, b):
        m = a @ a.T + 16.0 * jnp.eye(a.shape[0])
        c = jnp.linalg.cholesky(m)
        return jax.scipy.linalg.cho_solve((c, True), b)
    return f, (S(16, 16), S(16, 4))


def linalg_qr_svd():
    def f(a):
        q, r = jnp.linalg.qr(a)
        return q @ r, jnp.linalg.svd(a, compute_uv=False)
    return f, (S(12, 8),)


def linalg_einsum_chain():
    def f(a, b, c, d):
        return jnp.einsum("ij,jk,kl,lm->im", a, b, c, d), jnp.einsum("bij,bjk->bik", a[None], b[None])
    return f, (S(8, 16), S(16, 32), S(32, 16), S(16, 4))


# ---------------------------------------------------------------- scatter / gather
def gather_embedding():
    def loss(emb, ids, w):
        return jnp.mean((jnp.take(emb, ids, axis=0).mean(1) @ w) ** 2)
    return jax.value_and_grad(loss), (S(50, 16), S(8, 6, dtype=jnp.int32), S(16, 4))


def scatter_histogram():
    def f(x, idx, upd):
        y = x.at[idx].add(upd)
        z = x.at[idx].max(upd * 2.0)
        return y, z, jnp.zeros(10).at[idx % 10].add(1.0)
    return f, (S(20), S(12, dtype=jnp.int32), S(12))


# ---------------------------------------------------------------- dynamic slices
def dynamic_slice_window():
    def f(x, i):
        w = lax.dynamic_slice(x, (i, 0), (4, 8))
        return lax.dynamic_update_slice(x, jnp.tanh(w) * 3.0, (i + 1, 0))
    return f, (S(16, 8), S(dtype=jnp.int32))


def dynamic_slice_in_loop():
    def f(x):
        def body(i, acc):
            return acc + lax.dynamic_slice_in_dim(x, i * 2, 2) @ jnp.ones((8, 8))
        return lax.fori_loop(0, 6, body, jnp.zeros((2, 8)))
    return f, (S(12, 8),)


# ---------------------------------------------------------------- misc: folding, CSE, vmap
def fold_identities():
    def f(x, s):
        a = s * 2.0 * 0.5
        b = x * 3.0 * 4.0 + jnp.full(x.shape, 2.0) * jnp.arange(8.0)
        c = (x + 0.0) * 1.0
        return a + b.sum(), c, jnp.exp(jnp.log(x)) + jnp.ones((8,)) * 5.0
    return f, (S(8), S())


def vmap_per_example():
    def loss(w, x, y):
        return jnp.sum((jnp.tanh(x @ w) - y) ** 2)
    g = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
    return g, (S(8, 4), S(6, 8), S(6, 4))


def cse_repeated():
    def f(x, w):
        a = jnp.tanh(x @ w) + jnp.tanh(x @ w)
        b = jax.nn.softmax(x) * jax.nn.softmax(x)
        return a, b, jnp.sin(x) @ w + jnp.sin(x) @ w
    return f, (S(8, 8), S(8, 8))


def sinkhorn():
    def f(c):
        k = jnp.exp(-c / 0.1)

        def body(i, uv):
            u, v = uv
            u = 1.0 / (k @ v)
            v = 1.0 / (k.T @ u)
            return u, v
        u, v = lax.fori_loop(0, 5, body, (jnp.ones(16), jnp.ones(16)))
        return u[:, None] * k * v[None, :]
    return f, (S(16, 16),)


def stencil_loop():
    def f(x):
        def body(_, x):
            return 0.25 * (jnp.roll(x, 1, 0) + jnp.roll(x, -1, 0) + jnp.roll(x, 1, 1)
                           + jnp.roll(x, -1, 1))
        return lax.fori_loop(0, 5, body, x)
    return f, (S(16, 16),)


def layout_transposes():
    def f(x, y):
        a = jnp.transpose(x, (2, 0, 1)) + 1.0
        b = jnp.swapaxes(y, 0, 1).reshape(8, -1)
        return a * 2.0, b @ b.T, jnp.transpose(a, (1, 2, 0)).reshape(-1)
    return f, (S(4, 6, 8), S(6, 8, 4))


PROGRAMS: dict[str, tuple[str, object]] = {}
for _fam, _fns in {
    "mlp": [mlp_deep, mlp_gelu_adam, mlp_bf16, mlp_transposed],
    "cnn": [cnn_small, cnn_pool_bn, cnn_depthwise],
    "transformer": [transformer_layer, transformer_two_layers, transformer_scan_layers,
                    transformer_decode_cache],
    "rnn": [rnn_lstm_scan, rnn_bidirectional, scan_unrolled],
    "moe": [moe_top1, moe_top2_dispatch],
    "vae": [vae_step],
    "unet": [unet_block],
    "gnn": [gnn_segment_sum, gnn_gat],
    "quant": [quant_fake, quant_int8_matmul],
    "remat": [remat_nothing, remat_dots_saveable, remat_scan],
    "custom_vjp": [custom_vjp_clip, custom_vjp_logsumexp],
    "control": [while_newton, fori_power_iter, fori_static_unroll, cond_two_branches,
                switch_in_scan, while_scatter],
    "sort": [sort_argsort, topk_ranking_loss],
    "fft": [fft_conv1d, fft2_spectrum],
    "linalg": [linalg_cholesky_solve, linalg_qr_svd, linalg_einsum_chain],
    "scatter_gather": [gather_embedding, scatter_histogram],
    "dynamic": [dynamic_slice_window, dynamic_slice_in_loop],
    "misc": [fold_identities, vmap_per_example, cse_repeated, sinkhorn, stencil_loop,
             layout_transposes],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

# Never looked at while tuning the engine (one or two per kind of program).
HOLDOUT = {"mlp_transposed", "cnn_depthwise", "transformer_decode_cache", "rnn_bidirectional",
           "gnn_gat", "remat_scan", "custom_vjp_logsumexp", "while_scatter", "linalg_qr_svd",
           "stencil_loop", "layout_transposes"}

# A representative part for the GPU (deviceless H100) and sharded (8 devices) runs.
GPU_SET = ["mlp_deep", "mlp_bf16", "cnn_small", "transformer_layer", "rnn_lstm_scan", "moe_top1",
           "vae_step", "remat_nothing", "gather_embedding", "fold_identities", "mlp_transposed",
           "transformer_decode_cache", "gnn_gat"]
SHARDED_SET = ["mlp_deep", "mlp_gelu_adam", "transformer_layer", "moe_top1", "vae_step",
               "cnn_small", "remat_nothing", "gather_embedding", "mlp_transposed", "gnn_gat"]
