"""Seventh fresh set: 24 JAX programs written by the lead at the start of the 2026-11-23
late-night session, kept outside the repository and shown to no helper; measured at the
session's start and end code only (no miss of it was looked at before the end figures in
RESULTS.md). Same interface as zoo_programs.py::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh7_programs python benchmarks/zoo.py --out benchmarks/data/fresh7
    HLODIFF_ZOO_PROGRAMS=zoo_fresh7_programs python benchmarks/accuracy.py --data benchmarks/data/fresh7
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

F32 = jnp.float32


def S(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


def _sgd(p, g, lr=0.05):
    return jax.tree_util.tree_map(lambda a, b: a - lr * b, p, g)


def _rms(x, g):
    return x * lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * g


def aspp_dilated_conv():
    def conv(x, w, d):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME", rhs_dilation=(d, d),
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def loss(p, x):
        branches = [conv(x, p[f"w{d}"], d) for d in (1, 2, 3)]
        h = jax.nn.relu(jnp.concatenate(branches, -1))
        pooled = jnp.mean(x, (1, 2), keepdims=True) @ p["wp"]
        h = h + jnp.broadcast_to(pooled, h.shape[:-1] + (pooled.shape[-1],)).repeat(3, -1)
        return jnp.mean((h @ p["wo"]) ** 2)
    p = {"w1": S(3, 3, 4, 5), "w2": S(3, 3, 4, 5), "w3": S(3, 3, 4, 5), "wp": S(4, 5), "wo": S(15, 3)}
    return jax.value_and_grad(loss), (p, S(8, 9, 9, 4))


def channel_shuffle_grouped():
    def loss(p, x):
        h = lax.conv_general_dilated(x, p["w1"], (1, 1), "SAME", feature_group_count=2,
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        n, hh, ww, c = h.shape
        h = h.reshape(n, hh, ww, 2, c // 2).swapaxes(3, 4).reshape(n, hh, ww, c)
        h = jax.nn.relu(h)
        h = lax.conv_general_dilated(h, p["w2"], (2, 2), "SAME", feature_group_count=4,
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jnp.mean(h ** 2)
    return jax.value_and_grad(loss), ({"w1": S(3, 3, 4, 8), "w2": S(3, 3, 2, 8)}, S(8, 8, 8, 8))


def mqa_padding_mask():
    def loss(p, x, lens):
        q = (x @ p["wq"]).reshape(x.shape[0], x.shape[1], 4, 4)
        k = x @ p["wk"]
        v = x @ p["wv"]
        s = jnp.einsum("bqhd,bkd->bhqk", q, k) / 2.0
        t = x.shape[1]
        causal = jnp.tril(jnp.ones((t, t), bool))
        pad = jnp.arange(t)[None, :] < lens[:, None]
        m = causal[None, None] & pad[:, None, None, :]
        s = jnp.where(m, s, -1e9)
        o = jnp.einsum("bhqk,bkd->bqhd", jax.nn.softmax(s, -1), v).reshape(x.shape[0], t, 16)
        return jnp.mean((o @ p["wo"]) ** 2)
    p = {"wq": S(16, 16), "wk": S(16, 4), "wv": S(16, 4), "wo": S(16, 16)}
    return jax.value_and_grad(loss), (p, S(8, 7, 16), S(8, dtype=jnp.int32))


def albert_shared_layers():
    def layer(p, x):
        h = _rms(x, p["g"])
        a = jax.nn.softmax(jnp.einsum("btd,bsd->bts", h @ p["wq"], h @ p["wk"]) / 3.0, -1)
        x = x + jnp.einsum("bts,bsd->btd", a, h @ p["wv"])
        return x + jax.nn.gelu(_rms(x, p["g"]) @ p["w1"]) @ p["w2"]

    def loss(p, x):
        for _ in range(3):
            x = layer(p, x)
        return jnp.mean(x ** 2)
    p = {"g": S(12), "wq": S(12, 12), "wk": S(12, 12), "wv": S(12, 12), "w1": S(12, 24), "w2": S(24, 12)}
    return jax.value_and_grad(loss), (p, S(8, 6, 12))


def parallel_attn_mlp_block():
    def loss(p, x):
        h = _rms(x, p["g"])
        q, k, v = jnp.split(h @ p["wqkv"], 3, -1)
        a = jax.nn.softmax(jnp.einsum("btd,bsd->bts", q, k) * 0.25, -1)
        attn = jnp.einsum("bts,bsd->btd", a, v) @ p["wo"]
        mlp = jax.nn.silu(h @ p["wg"]) * (h @ p["wu"]) @ p["wd"]
        return jnp.mean((x + attn + mlp) ** 2)
    p = {"g": S(16), "wqkv": S(16, 48), "wo": S(16, 16), "wg": S(16, 32), "wu": S(16, 32), "wd": S(32, 16)}
    return jax.value_and_grad(loss), (p, S(8, 5, 16))


def min_gru_log_cumsum():
    def loss(p, x):
        z = jax.nn.sigmoid(x @ p["wz"])
        ht = x @ p["wh"]
        log_a = jnp.log1p(-z + 1e-6)
        a_star = jnp.cumsum(log_a, axis=1)
        h = jnp.exp(a_star) * jnp.cumsum(z * ht * jnp.exp(-a_star), axis=1)
        return jnp.mean((h @ p["wo"]) ** 2)
    return jax.value_and_grad(loss), ({"wz": S(6, 8), "wh": S(6, 8), "wo": S(8, 3)}, S(8, 10, 6))


def reverse_gru_scan():
    def cell(p, h, x):
        zr = jax.nn.sigmoid(x @ p["wx"][:, :16] + h @ p["wh"][:, :16])
        z, r = zr[:, :8], zr[:, 8:]
        n = jnp.tanh(x @ p["wx"][:, 16:] + (r * h) @ p["wh"][:, 16:])
        h = (1 - z) * n + z * h
        return h, h

    def loss(p, xs):
        h0 = jnp.zeros((xs.shape[1], 8))
        _, hf = lax.scan(lambda h, x: cell(p, h, x), h0, xs)
        _, hb = lax.scan(lambda h, x: cell(p, h, x), h0, xs, reverse=True)
        return jnp.mean((hf * hb) ** 2)
    return jax.value_and_grad(loss), ({"wx": S(5, 24), "wh": S(8, 24)}, S(6, 8, 5))


def ctc_alpha_scan():
    def loss(w, x, labels):
        logp = jax.nn.log_softmax(x @ w, -1)  # (T, B, V)
        ext = jnp.stack([jnp.zeros_like(labels), labels], -1).reshape(labels.shape[0], -1)
        ext = jnp.concatenate([ext, jnp.zeros_like(labels[:, :1])], -1)  # (B, 2L+1)
        emit = jnp.take_along_axis(logp, jnp.broadcast_to(ext[None], (logp.shape[0],) + ext.shape), -1)
        L = ext.shape[1]
        init = jnp.full((ext.shape[0], L), -1e9).at[:, 0].set(emit[0, :, 0]).at[:, 1].set(emit[0, :, 1])
        skip = jnp.concatenate([jnp.zeros((ext.shape[0], 2), bool), ext[:, 2:] != ext[:, :-2]], -1)

        def step(a, e):
            a1 = jnp.concatenate([jnp.full((a.shape[0], 1), -1e9), a[:, :-1]], -1)
            a2 = jnp.concatenate([jnp.full((a.shape[0], 2), -1e9), a[:, :-2]], -1)
            a2 = jnp.where(skip, a2, -1e9)
            return jnp.logaddexp(jnp.logaddexp(a, a1), a2) + e, None
        a, _ = lax.scan(step, init, emit[1:])
        return -jnp.mean(jnp.logaddexp(a[:, -1], a[:, -2]))
    return jax.value_and_grad(loss), (S(6, 5), S(9, 8, 6), S(8, 3, dtype=jnp.int32))


def arcface_margin_loss():
    def loss(p, x, y):
        e = x @ p["w"]
        e = e / jnp.linalg.norm(e, axis=-1, keepdims=True)
        c = p["centers"] / jnp.linalg.norm(p["centers"], axis=0, keepdims=True)
        cos = jnp.clip(e @ c, -1 + 1e-6, 1 - 1e-6)
        theta = jnp.arccos(cos)
        onehot = jax.nn.one_hot(y, c.shape[1])
        logits = 30.0 * jnp.where(onehot > 0, jnp.cos(theta + 0.3), cos)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * onehot, -1))
    return jax.value_and_grad(loss), ({"w": S(10, 8), "centers": S(8, 6)}, S(16, 10), S(16, dtype=jnp.int32))


def fp8_scaled_matmul():
    def loss(p, x):
        sx = jnp.max(jnp.abs(x)) / 448.0 + 1e-12
        sw = jnp.max(jnp.abs(p["w"])) / 448.0 + 1e-12
        xq = (x / sx).astype(jnp.float8_e4m3fn)
        wq = (p["w"] / sw).astype(jnp.float8_e4m3fn)
        y = jnp.dot(xq.astype(F32), wq.astype(F32)) * (sx * sw)
        y = y + lax.stop_gradient(x @ p["w"] - y)
        return jnp.mean(jax.nn.relu(y + p["b"]) ** 2)
    return jax.value_and_grad(loss), ({"w": S(16, 12), "b": S(12)}, S(8, 16))


def ternary_ste_weights():
    def tern(w):
        d = 0.7 * jnp.mean(jnp.abs(w))
        q = jnp.where(w > d, 1.0, jnp.where(w < -d, -1.0, 0.0)) * jnp.mean(jnp.abs(w))
        return w + lax.stop_gradient(q - w)

    def loss(p, x):
        h = jax.nn.relu(x @ tern(p["w1"]))
        return jnp.mean((h @ tern(p["w2"])) ** 2)
    return jax.value_and_grad(loss), ({"w1": S(10, 16), "w2": S(16, 4)}, S(8, 10))


def hypernetwork_weights():
    def loss(p, z, x):
        w = (jnp.tanh(z @ p["h1"]) @ p["h2"]).reshape(z.shape[0], 6, 5)
        b = z @ p["hb"]
        y = jnp.einsum("bni,bio->bno", x, w) + b[:, None, :]
        return jnp.mean(jax.nn.softplus(y) ** 2)
    p = {"h1": S(4, 12), "h2": S(12, 30), "hb": S(4, 5)}
    return jax.value_and_grad(loss), (p, S(8, 4), S(8, 7, 6))


def newton_schulz_ortho():
    def ns(g):
        x = g / (jnp.linalg.norm(g) + 1e-7)
        for _ in range(4):
            a = x @ x.T
            x = 3.4445 * x - 4.775 * a @ x + 2.0315 * a @ a @ x
        return x

    def step(p, m, x, y):
        g = jax.grad(lambda w: jnp.mean((jnp.tanh(x @ w) - y) ** 2))(p)
        m = 0.95 * m + g
        return p - 0.02 * ns(m), m
    return step, (S(8, 12), S(8, 12), S(16, 8), S(16, 12))


def adaptive_ode_while():
    def solve(k, y0):
        def f(y):
            return jnp.tanh(y @ k) - 0.1 * y

        def cond(s):
            t, _, h, n = s
            return (t < 1.0) & (n < 50)

        def body(s):
            t, y, h, n = s
            y1 = y + h * f(y)
            y2 = y + 0.5 * h * (f(y) + f(y1))
            err = jnp.max(jnp.abs(y2 - y1))
            ok = err < 1e-3
            t = jnp.where(ok, t + h, t)
            y = jnp.where(ok, y2, y)
            h = jnp.clip(h * jnp.where(ok, 1.5, 0.5), 1e-3, 0.2)
            return t, y, h, n + 1
        _, y, _, n = lax.while_loop(cond, body, (0.0, y0, 0.05, 0))
        return jnp.sum(y ** 2), n
    return solve, (S(6, 6), S(8, 6))


def cond_inside_fori():
    def loss(p, x, flags):
        def body(i, h):
            return lax.cond(flags[i] > 0, lambda h: jnp.tanh(h @ p["a"]), lambda h: h * p["s"] + 0.1, h)
        h = lax.fori_loop(0, flags.shape[0], body, x)
        return jnp.mean(h ** 2)
    return jax.value_and_grad(loss), ({"a": S(6, 6), "s": S(6)}, S(8, 6), S(5, dtype=jnp.int32))


def multi_key_sort():
    def f(scores, groups, vals):
        g2, s2, v2 = lax.sort((groups, -scores, vals), num_keys=2)
        rank = jnp.cumsum(jnp.ones_like(g2), -1)
        first = jnp.concatenate([jnp.ones_like(g2[:, :1], bool), g2[:, 1:] != g2[:, :-1]], -1)
        best = jnp.where(first, v2, 0.0)
        return jnp.sum(best * -s2, -1), rank[:, -1]
    return f, (S(8, 20), S(8, 20, dtype=jnp.int32), S(8, 20))


def pinv_ridge_grad():
    def loss(w, x, y):
        a = x * w
        sol = jnp.linalg.solve(a.T @ a + 0.1 * jnp.eye(a.shape[1]), a.T @ y)
        return jnp.mean((a @ sol - y) ** 2) + 0.01 * jnp.sum(sol ** 2)
    return jax.value_and_grad(loss), (S(6), S(16, 6), S(16, 2))


def slogdet_flow():
    def loss(p, x):
        w = p["w"] + jnp.eye(5)
        z = x @ w + p["b"]
        _, ld = jnp.linalg.slogdet(w)
        z2 = jnp.tanh(z) * p["s"]
        ld2 = jnp.sum(jnp.log(jnp.abs(p["s"]) * (1 - jnp.tanh(z) ** 2) + 1e-6), -1)
        return jnp.mean(0.5 * jnp.sum(z2 ** 2, -1) - ld - ld2)
    return jax.value_and_grad(loss), ({"w": S(5, 5), "b": S(5), "s": S(5)}, S(16, 5))


def irfft2_lowpass_grad():
    def loss(k, img):
        f = jnp.fft.rfft2(img)
        u = jnp.fft.fftfreq(img.shape[-2])[:, None]
        v = jnp.fft.rfftfreq(img.shape[-1])[None, :]
        mask = jnp.exp(-(u ** 2 + v ** 2) * k)
        out = jnp.fft.irfft2(f * mask, s=img.shape[-2:])
        return jnp.mean((out - img) ** 2) + 0.1 * jnp.mean(out ** 2)
    return jax.value_and_grad(loss), (S(), S(8, 12, 10))


def take_along_topk_gather():
    def loss(p, x, table):
        s = x @ p["w"]
        _, idx = lax.top_k(s, 3)
        picked = jnp.take_along_axis(s, idx, -1)
        rows = table[idx]  # (B, 3, D)
        out = jnp.sum(jax.nn.softmax(picked, -1)[..., None] * rows, 1)
        return jnp.mean((out @ p["v"]) ** 2)
    return jax.value_and_grad(loss), ({"w": S(6, 12), "v": S(5, 2)}, S(8, 6), S(12, 5))


def dynamic_update_cache_scan():
    def f(p, xs):
        cache = jnp.zeros((xs.shape[1], xs.shape[0], 8))

        def step(c, ix):
            i, x = ix
            kv = jnp.tanh(x @ p)
            c = lax.dynamic_update_slice(c, kv[:, None, :], (0, i, 0))
            att = jax.nn.softmax(jnp.einsum("bd,btd->bt", kv, c), -1)
            return c, jnp.einsum("bt,btd->bd", att, c)
        c, ys = lax.scan(step, cache, (jnp.arange(xs.shape[0]), xs))
        return jnp.sum(ys ** 2) + jnp.sum(c)
    return jax.grad(f), (S(6, 8), S(5, 8, 6))


def remat_shared_layers_dots():
    pol = jax.checkpoint_policies.dots_saveable

    def loss(ws, x):
        for i in range(3):
            x = jax.checkpoint(lambda w, h: jnp.tanh(h @ w) + h, policy=pol)(ws[i], x)
        return jnp.mean(x ** 2)
    return jax.value_and_grad(loss), ([S(10, 10), S(10, 10), S(10, 10)], S(8, 10))


def dpsgd_per_example_clip():
    def loss(p, x, y):
        h = jnp.tanh(x @ p["w1"])
        return jnp.mean((h @ p["w2"] - y) ** 2)

    def step(p, xs, ys, key):
        g = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(p, xs, ys)
        norms = jnp.sqrt(sum(jnp.sum(a.reshape(a.shape[0], -1) ** 2, -1) for a in jax.tree_util.tree_leaves(g)))
        scale = jnp.minimum(1.0, 1.0 / (norms + 1e-6))
        g = jax.tree_util.tree_map(lambda a: jnp.mean(a * scale.reshape((-1,) + (1,) * (a.ndim - 1)), 0), g)
        k1, k2 = jax.random.split(key)
        g = {"w1": g["w1"] + 0.01 * jax.random.normal(k1, g["w1"].shape),
             "w2": g["w2"] + 0.01 * jax.random.normal(k2, g["w2"].shape)}
        return _sgd(p, g)
    return step, ({"w1": S(6, 8), "w2": S(8, 2)}, S(16, 6), S(16, 2), S(2, dtype=jnp.uint32))


def gae_advantages_scan():
    def loss(p, obs, rew, done):
        v = jnp.squeeze(jnp.tanh(obs @ p["w"]) @ p["v"], -1)  # (T+1, B)
        delta = rew + 0.99 * v[1:] * (1 - done) - v[:-1]

        def step(a, xs):
            d, dn = xs
            a = d + 0.99 * 0.95 * (1 - dn) * a
            return a, a
        _, adv = lax.scan(step, jnp.zeros(rew.shape[1]), (delta, done), reverse=True)
        ret = lax.stop_gradient(adv + v[:-1])
        return jnp.mean((v[:-1] - ret) ** 2) - jnp.mean(lax.stop_gradient(adv) * v[:-1])
    return jax.value_and_grad(loss), ({"w": S(4, 8), "v": S(8, 1)}, S(7, 8, 4), S(6, 8), S(6, 8))


PROGRAMS: dict[str, tuple[str, object]] = {}
for _fam, _fns in {
    "cnn": [aspp_dilated_conv, channel_shuffle_grouped],
    "transformer": [mqa_padding_mask, albert_shared_layers, parallel_attn_mlp_block],
    "rnn": [min_gru_log_cumsum, reverse_gru_scan, gae_advantages_scan],
    "loss": [ctc_alpha_scan, arcface_margin_loss],
    "quant": [fp8_scaled_matmul, ternary_ste_weights],
    "mlp": [hypernetwork_weights, newton_schulz_ortho, dpsgd_per_example_clip],
    "control": [adaptive_ode_while, cond_inside_fori],
    "sort": [multi_key_sort, take_along_topk_gather],
    "linalg": [pinv_ridge_grad, slogdet_flow],
    "fft": [irfft2_lowpass_grad],
    "scatter_gather": [dynamic_update_cache_scan],
    "remat": [remat_shared_layers_dots],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["aspp_dilated_conv", "mqa_padding_mask", "albert_shared_layers", "parallel_attn_mlp_block",
           "min_gru_log_cumsum", "reverse_gru_scan", "ctc_alpha_scan", "fp8_scaled_matmul",
           "newton_schulz_ortho", "cond_inside_fori", "take_along_topk_gather", "remat_shared_layers_dots"]
SHARDED_SET = ["albert_shared_layers", "parallel_attn_mlp_block", "mqa_padding_mask", "hypernetwork_weights",
               "channel_shuffle_grouped", "dpsgd_per_example_clip", "arcface_margin_loss",
               "min_gru_log_cumsum"]
