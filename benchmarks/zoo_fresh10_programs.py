"""Tenth fresh set: 23 JAX programs written by the lead mid-session (2026-11-28), kept outside
the repository and shown to no helper; measured at the session's start and end code only
(no miss of it was looked at before the end figures in RESULTS.md). Same interface as
zoo_programs.py::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh10_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh10_programs python benchmarks/accuracy.py --data DIR
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

F32 = jnp.float32
BF16 = jnp.bfloat16


def S(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


def _sgd(p, g, lr=0.05):
    return jax.tree_util.tree_map(lambda a, b: a - lr * b, p, g)


def _ln(x, g, b):
    m = jnp.mean(x, -1, keepdims=True)
    v = jnp.mean((x - m) ** 2, -1, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5) * g + b


def conformer_conv_module():
    def loss(p, x):
        h = _ln(x, p["g"], p["b"]) @ p["w_in"]            # [B,T,2C]
        a, gate = jnp.split(h, 2, -1)
        h = a * jax.nn.sigmoid(gate)                       # GLU
        h = lax.conv_general_dilated(h, p["dw"], (1,), "SAME", feature_group_count=h.shape[-1],
                                     dimension_numbers=("NWC", "WIO", "NWC"))
        h = jax.nn.silu(h) @ p["w_out"]
        return jnp.mean((x + h) ** 2)

    def step(p, x):
        l, g = jax.value_and_grad(loss)(p, x)
        return l, _sgd(p, g)
    C = 16
    p = {"g": S(C), "b": S(C), "w_in": S(C, 2 * C), "dw": S(5, 1, C), "w_out": S(C, C)}
    return step, (p, S(8, 12, C))


def retnet_retention():
    def loss(p, x):
        q, k, v = x @ p["wq"], x @ p["wk"], x @ p["wv"]
        t = x.shape[1]
        n = jnp.arange(t)
        decay = jnp.where(n[:, None] >= n[None, :], 0.9 ** (n[:, None] - n[None, :]), 0.0)
        s = jnp.einsum("btd,bsd->bts", q, k) * decay
        o = jnp.einsum("bts,bsd->btd", s, v)
        o = o / (jnp.abs(s).sum(-1, keepdims=True).clip(1.0))
        return jnp.mean((o @ p["wo"] - x) ** 2)

    def step(p, x):
        l, g = jax.value_and_grad(loss)(p, x)
        return l, _sgd(p, g)
    D = 16
    p = {"wq": S(D, D), "wk": S(D, D), "wv": S(D, D), "wo": S(D, D)}
    return step, (p, S(8, 10, D))


def mamba_selective_scan():
    def loss(p, x):
        dt = jax.nn.softplus(x @ p["w_dt"])                # [B,T,D]
        bmat = x @ p["w_b"]                                 # [B,T,N]
        cmat = x @ p["w_c"]
        a = -jnp.exp(p["a_log"])                            # [D,N]

        def body(h, inp):
            xt, dtt, bt, ct = inp
            da = jnp.exp(dtt[:, :, None] * a[None])
            h = da * h + (dtt * xt)[:, :, None] * bt[:, None, :]
            return h, jnp.einsum("bdn,bn->bd", h, ct)
        h0 = jnp.zeros((x.shape[0], x.shape[2], a.shape[1]))
        xs = tuple(jnp.swapaxes(z, 0, 1) for z in (x, dt, bmat, cmat))
        _, ys = lax.scan(body, h0, xs)
        return jnp.mean(jnp.swapaxes(ys, 0, 1) ** 2)
    D, N = 8, 4
    p = {"w_dt": S(D, D), "w_b": S(D, N), "w_c": S(D, N), "a_log": S(D, N)}
    return jax.value_and_grad(loss), (p, S(8, 6, D))


def deepsets_pool_mlp():
    def loss(p, x, y):
        h = jax.nn.relu(x @ p["phi1"]) @ p["phi2"]          # [B,M,H]
        pooled = jnp.sum(h, 1) / x.shape[1]
        out = jax.nn.relu(pooled @ p["rho1"]) @ p["rho2"]
        return jnp.mean((out - y) ** 2)

    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return l, _sgd(p, g)
    p = {"phi1": S(3, 16), "phi2": S(16, 16), "rho1": S(16, 8), "rho2": S(8, 1)}
    return step, (p, S(16, 7, 3), S(16, 1))


def film_conditioned_conv():
    def loss(p, x, c):
        h = lax.conv_general_dilated(x, p["w"], (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        gamma = (c @ p["wg"])[:, None, None, :]
        beta = (c @ p["wb"])[:, None, None, :]
        h = jax.nn.relu(h * (1 + gamma) + beta)
        return jnp.mean(h ** 2)
    p = {"w": S(3, 3, 3, 8), "wg": S(4, 8), "wb": S(4, 8)}
    return jax.value_and_grad(loss), (p, S(8, 8, 8, 3), S(8, 4))


def pixel_shuffle_upsample():
    def loss(p, x):
        h = lax.conv_general_dilated(x, p["w"], (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        n, hh, ww, c = h.shape
        r = 2
        h = h.reshape(n, hh, ww, r, r, c // 4).transpose(0, 1, 3, 2, 4, 5)
        h = h.reshape(n, hh * r, ww * r, c // 4)
        return jnp.mean(jnp.tanh(h) ** 2)
    return jax.value_and_grad(loss), ({"w": S(3, 3, 4, 12)}, S(8, 6, 6, 4))


def supcon_loss():
    def loss(p, x, labels):
        z = x @ p["w"]
        z = z / jnp.linalg.norm(z, axis=-1, keepdims=True)
        sim = z @ z.T / 0.1
        n = sim.shape[0]
        eye = jnp.eye(n, dtype=bool)
        sim = jnp.where(eye, -1e9, sim)
        pos = (labels[:, None] == labels[None, :]) & ~eye
        logp = sim - jax.nn.logsumexp(sim, -1, keepdims=True)
        return -jnp.mean(jnp.sum(jnp.where(pos, logp, 0.0), -1) / jnp.maximum(pos.sum(-1), 1))
    return jax.value_and_grad(loss), ({"w": S(12, 8)}, S(16, 12), S(16, dtype=jnp.int32))


def graph_sage_mean():
    def loss(p, h, src, dst):
        n = h.shape[0]
        msg = h[src]
        s = jax.ops.segment_sum(msg, dst, num_segments=n)
        cnt = jax.ops.segment_sum(jnp.ones_like(dst, F32), dst, num_segments=n)
        agg = s / jnp.maximum(cnt, 1.0)[:, None]
        out = jax.nn.relu(jnp.concatenate([h, agg], -1) @ p["w"])
        return jnp.mean(out ** 2)
    return jax.value_and_grad(loss), ({"w": S(16, 8)}, S(16, 8), S(40, dtype=jnp.int32),
                                      S(40, dtype=jnp.int32))


def label_propagation_gnn():
    def prop(y0, w, src, dst):
        n = y0.shape[0]

        def body(i, y):
            m = jax.ops.segment_sum(y[src] * w[:, None], dst, num_segments=n)
            return 0.8 * m / (jnp.sum(m, -1, keepdims=True) + 1e-6) + 0.2 * y0
        return lax.fori_loop(0, 5, body, y0)

    def loss(w, y0, src, dst, target):
        y = prop(y0, w, src, dst)
        return -jnp.mean(jnp.sum(target * jnp.log(y + 1e-6), -1))
    return jax.value_and_grad(loss), (S(30), S(12, 3), S(30, dtype=jnp.int32),
                                      S(30, dtype=jnp.int32), S(12, 3))


def product_quantization_lookup():
    def loss(p, x):
        b, d = x.shape
        xs = x.reshape(b, 4, d // 4)                         # 4 subspaces
        cb = p["codebooks"]                                  # [4,K,d/4]
        dist = jnp.sum((xs[:, :, None, :] - cb[None]) ** 2, -1)   # [B,4,K]
        idx = jnp.argmin(dist, -1)
        q = jnp.take_along_axis(cb[None], idx[:, :, None, None], 2)[:, :, 0]
        q = xs + lax.stop_gradient(q - xs)
        return jnp.mean((q.reshape(b, d) @ p["w"]) ** 2) + jnp.mean(jnp.min(dist, -1))
    return jax.value_and_grad(loss), ({"codebooks": S(4, 8, 4), "w": S(16, 4)}, S(16, 16))


def fake_quant_ema_ranges():
    def fq(x, lo, hi):
        scale = (hi - lo) / 255.0
        q = jnp.clip(jnp.round((x - lo) / scale), 0, 255) * scale + lo
        return x + lax.stop_gradient(q - x)

    def step(p, state, x):
        def loss(p):
            h = x @ p["w1"]
            lo = 0.9 * state["lo"] + 0.1 * jnp.min(h)
            hi = 0.9 * state["hi"] + 0.1 * jnp.max(h)
            h = jax.nn.relu(fq(h, lo, hi))
            return jnp.mean((h @ p["w2"]) ** 2), {"lo": lo, "hi": hi}
        (l, new), g = jax.value_and_grad(loss, has_aux=True)(p)
        return l, _sgd(p, g), jax.tree_util.tree_map(lax.stop_gradient, new)
    return step, ({"w1": S(8, 16), "w2": S(16, 4)}, {"lo": S(), "hi": S()}, S(16, 8))


def remat_every_other_layer():
    def layer(w, h):
        return jnp.tanh(h @ w)

    def loss(ws, x):
        h = x
        for i, w in enumerate(ws):
            h = jax.checkpoint(layer)(w, h) if i % 2 == 0 else layer(w, h)
        return jnp.mean(h ** 2)
    return jax.value_and_grad(loss), ([S(16, 16) for _ in range(4)], S(8, 16))


@jax.custom_vjp
def _st_argmax(logits):
    return jax.nn.one_hot(jnp.argmax(logits, -1), logits.shape[-1])


def _st_fwd(logits):
    return _st_argmax(logits), jax.nn.softmax(logits)


def _st_bwd(sm, g):
    return (sm * (g - jnp.sum(g * sm, -1, keepdims=True)),)


_st_argmax.defvjp(_st_fwd, _st_bwd)


def custom_vjp_straight_through_argmax():
    def loss(p, x):
        hard = _st_argmax(x @ p["w"])
        return jnp.mean((hard @ p["emb"]) ** 2)
    return jax.value_and_grad(loss), ({"w": S(8, 5), "emb": S(5, 6)}, S(16, 8))


def while_power_deflation():
    def top2(a):
        def power(a, v0):
            def cond(c):
                i, v, prev = c
                return (i < 50) & (jnp.linalg.norm(v - prev) > 1e-5)

            def body(c):
                i, v, _ = c
                w = a @ v
                return i + 1, w / jnp.linalg.norm(w), v
            _, v, _ = lax.while_loop(cond, body, (0, v0, jnp.zeros_like(v0)))
            return v, v @ a @ v
        v1, l1 = power(a, jnp.ones(a.shape[0]) / jnp.sqrt(a.shape[0]))
        a2 = a - l1 * jnp.outer(v1, v1)
        v2, l2 = power(a2, jnp.arange(a.shape[0], dtype=F32) / a.shape[0])
        return l1 + l2

    def f(m):
        return top2(m @ m.T)
    return f, (S(10, 6),)


def switch_mixture_policy():
    def loss(p, x, k):
        branches = [lambda h: jnp.tanh(h @ p["a"]), lambda h: jax.nn.relu(h @ p["b"]),
                    lambda h: jax.nn.sigmoid(h @ p["c"]) * 2.0]
        h = lax.switch(k, branches, x)
        return jnp.mean((h @ p["out"]) ** 2)
    p = {"a": S(8, 8), "b": S(8, 8), "c": S(8, 8), "out": S(8, 2)}
    return jax.value_and_grad(loss), (p, S(16, 8), S(dtype=jnp.int32))


def sort_rank_correlation():
    def loss(w, x, y):
        pred = x @ w

        def ranks(v):
            return jnp.argsort(jnp.argsort(v)).astype(F32)
        rp, ry = ranks(pred), ranks(y)
        soft = jnp.corrcoef(pred, y)[0, 1]
        return -soft + 0.0 * jnp.mean((rp - ry) ** 2)
    return jax.value_and_grad(loss), (S(6), S(24, 6), S(24))


def argsort_segment_boundaries():
    def f(keys, vals):
        order = jnp.argsort(keys)
        k, v = keys[order], vals[order]
        start = jnp.concatenate([jnp.array([True]), k[1:] != k[:-1]])
        seg = jnp.cumsum(start) - 1
        sums = jax.ops.segment_sum(v, seg, num_segments=keys.shape[0])
        return sums, jnp.sum(start)
    return f, (S(32, dtype=jnp.int32), S(32))


def qr_orthogonal_projection():
    def loss(a, x):
        q, r = jnp.linalg.qr(a)
        proj = q @ (q.T @ x)
        return jnp.mean((x - proj) ** 2) + 1e-3 * jnp.sum(jnp.abs(jnp.diag(r)))
    return jax.value_and_grad(loss), (S(12, 4), S(12, 5))


def dct_via_fft():
    def loss(w, x):
        n = x.shape[-1]
        v = jnp.concatenate([x[..., ::2], x[..., 1::2][..., ::-1]], -1)
        vf = jnp.fft.fft(v, axis=-1)
        k = jnp.arange(n)
        dct = jnp.real(vf * jnp.exp(-1j * jnp.pi * k / (2 * n)))
        return jnp.mean((dct[..., :8] @ w) ** 2)
    return jax.value_and_grad(loss), (S(8, 3), S(6, 16))


def scatter_add_histogram2d():
    def f(x, y, w):
        ix = jnp.clip((x * 8).astype(jnp.int32), 0, 7)
        iy = jnp.clip((y * 8).astype(jnp.int32), 0, 7)
        h = jnp.zeros((8, 8)).at[ix, iy].add(w)
        return h / jnp.maximum(h.sum(), 1e-6)
    return f, (S(64), S(64), S(64))


def dynamic_slice_sliding_attention():
    def loss(p, x):
        t, d = x.shape[1], x.shape[2]
        q, k, v = x @ p["wq"], x @ p["wk"], x @ p["wv"]
        kp = jnp.pad(k, ((0, 0), (2, 2), (0, 0)))
        vp = jnp.pad(v, ((0, 0), (2, 2), (0, 0)))

        def one(i, acc):
            kw = lax.dynamic_slice_in_dim(kp, i, 5, 1)
            vw = lax.dynamic_slice_in_dim(vp, i, 5, 1)
            qi = lax.dynamic_slice_in_dim(q, i, 1, 1)
            a = jax.nn.softmax(jnp.einsum("bqd,bkd->bqk", qi, kw) / jnp.sqrt(d), -1)
            return lax.dynamic_update_slice_in_dim(acc, jnp.einsum("bqk,bkd->bqd", a, vw), i, 1)
        o = lax.fori_loop(0, t, one, jnp.zeros_like(q))
        return jnp.mean((o - x) ** 2)
    p = {"wq": S(8, 8), "wk": S(8, 8), "wv": S(8, 8)}
    return jax.value_and_grad(loss), (p, S(8, 9, 8))


def roi_crop_gather():
    def loss(w, img, boxes):
        def crop(b):
            return lax.dynamic_slice(img, (b[0], b[1], 0), (4, 4, img.shape[-1]))
        crops = jax.vmap(crop)(boxes)                        # [R,4,4,C]
        feats = jnp.mean(crops, (1, 2)) @ w
        return jnp.mean(feats ** 2)
    return jax.value_and_grad(loss), (S(3, 5), S(12, 12, 3), S(6, 2, dtype=jnp.int32))


def bf16_layernorm_residual():
    def loss(p, x):
        h = x.astype(BF16)
        for i in range(2):
            n = _ln(h.astype(F32), p["g"][i], p["b"][i]).astype(BF16)
            h = h + jax.nn.gelu(n @ p["w1"][i]) @ p["w2"][i]
        return jnp.mean(h.astype(F32) ** 2)
    p = {"g": S(2, 16), "b": S(2, 16), "w1": S(2, 16, 32, dtype=BF16), "w2": S(2, 32, 16, dtype=BF16)}
    return jax.value_and_grad(loss), (p, S(8, 6, 16))


PROGRAMS = {}
for _fam, _fns in {
    "transformer": [conformer_conv_module, retnet_retention, dynamic_slice_sliding_attention],
    "rnn": [mamba_selective_scan],
    "mlp": [deepsets_pool_mlp, bf16_layernorm_residual],
    "cnn": [film_conditioned_conv, pixel_shuffle_upsample, roi_crop_gather],
    "loss": [supcon_loss],
    "gnn": [graph_sage_mean, label_propagation_gnn],
    "quant": [product_quantization_lookup, fake_quant_ema_ranges],
    "remat": [remat_every_other_layer],
    "custom_vjp": [custom_vjp_straight_through_argmax],
    "control": [while_power_deflation, switch_mixture_policy],
    "sort": [sort_rank_correlation, argsort_segment_boundaries],
    "linalg": [qr_orthogonal_projection],
    "fft": [dct_via_fft],
    "scatter_gather": [scatter_add_histogram2d],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["conformer_conv_module", "retnet_retention", "mamba_selective_scan", "film_conditioned_conv",
           "pixel_shuffle_upsample", "supcon_loss", "graph_sage_mean", "product_quantization_lookup",
           "custom_vjp_straight_through_argmax", "switch_mixture_policy",
           "dynamic_slice_sliding_attention", "bf16_layernorm_residual"]
SHARDED_SET = ["retnet_retention", "deepsets_pool_mlp", "film_conditioned_conv", "supcon_loss",
               "bf16_layernorm_residual", "conformer_conv_module", "remat_every_other_layer",
               "graph_sage_mean"]
