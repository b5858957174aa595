"""Fresh programs: a third zoo of 23 JAX programs, written by the lead at the start of the
2026-11-23 evening session, kept outside the repository and never shown to the helpers who
tuned the engine in that session; used for its final check (one engine fix of that session,
pairing loop results by tuple index, was found by diagnosing a drop on this set's gpu8
gru_scan: say so when quoting its figures). bf16_attention_f32_softmax does not compile
under jax 0.4.30 (an XLA:CPU check failure in dot_op_emitter.cc, CollapseFirstNDims). Same interface as
zoo_programs.py; dump and measure with::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh_programs python benchmarks/zoo.py --out benchmarks/data/fresh
    HLODIFF_ZOO_PROGRAMS=zoo_fresh_programs python benchmarks/accuracy.py --data benchmarks/data/fresh
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

F32 = jnp.float32
BF16 = jnp.bfloat16


def S(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


def _sgd(p, g, lr=0.01):
    return jax.tree_util.tree_map(lambda a, b: a - lr * b, p, g)


def _adam(p, m, v, g, lr=3e-4):
    m = jax.tree_util.tree_map(lambda a, b: 0.9 * a + 0.1 * b, m, g)
    v = jax.tree_util.tree_map(lambda a, b: 0.98 * a + 0.02 * b * b, v, g)
    p = jax.tree_util.tree_map(lambda w, a, b: w - lr * a * lax.rsqrt(b + 1e-6), p, m, v)
    return p, m, v


def _rms(x, g):
    return x * lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * g


# ------------------------------------------------------------------ vision
def vit_patch_step():
    def loss(p, img, y):
        b = img.shape[0]
        x = img.reshape(b, 4, 4, 4, 4, 3).transpose(0, 1, 3, 2, 4, 5).reshape(b, 16, 48)
        x = x @ p["patch"] + p["pos"]
        q, k, v = (x @ p["wq"], x @ p["wk"], x @ p["wv"])
        a = jax.nn.softmax(jnp.einsum("bqd,bkd->bqk", q, k) / 4.0, -1)
        x = x + jnp.einsum("bqk,bkd->bqd", a, v) @ p["wo"]
        logits = x.mean(1) @ p["head"]
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, -1))

    def step(p, img, y):
        l, g = jax.value_and_grad(loss)(p, img, y)
        return _sgd(p, g), l
    p = {"patch": S(48, 16), "pos": S(16, 16), "wq": S(16, 16), "wk": S(16, 16),
         "wv": S(16, 16), "wo": S(16, 16), "head": S(16, 10)}
    return step, (p, S(8, 16, 16, 3), S(8, 10))


def unet_updown():
    def conv(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def loss(p, x):
        h1 = jax.nn.silu(conv(x, p["c1"]))
        d = lax.reduce_window(h1, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
        h2 = jax.nn.silu(conv(d, p["c2"]))
        u = jnp.repeat(jnp.repeat(h2, 2, axis=1), 2, axis=2)
        h3 = conv(jnp.concatenate([u, h1], -1), p["c3"])
        return jnp.mean((h3 - x) ** 2)
    p = {"c1": S(3, 3, 4, 8), "c2": S(3, 3, 8, 8), "c3": S(3, 3, 16, 4)}
    return jax.value_and_grad(loss), (p, S(8, 16, 16, 4))


def conv_transpose_decoder():
    def loss(p, z, target):
        h = jax.nn.relu(z @ p["fc"]).reshape(z.shape[0], 4, 4, 8)
        h = lax.conv_transpose(h, p["t1"], (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = jax.nn.leaky_relu(h, 0.2)
        h = lax.conv_transpose(h, p["t2"], (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jnp.mean(jnp.abs(jax.nn.sigmoid(h) - target))
    p = {"fc": S(12, 128), "t1": S(3, 3, 8, 8), "t2": S(3, 3, 8, 1)}
    return jax.value_and_grad(loss), (p, S(8, 12), S(8, 16, 16, 1))


# ------------------------------------------------------------------ sequence
def gru_scan():
    def cell(p, h, x):
        z = jax.nn.sigmoid(x @ p["wz"] + h @ p["uz"])
        r = jax.nn.sigmoid(x @ p["wr"] + h @ p["ur"])
        n = jnp.tanh(x @ p["wn"] + (r * h) @ p["un"])
        return (1 - z) * n + z * h

    def loss(p, xs, y):
        h0 = jnp.zeros((xs.shape[1], 16))
        h, _ = lax.scan(lambda h, x: (cell(p, h, x), None), h0, xs)
        return jnp.mean((h @ p["out"] - y) ** 2)
    p = {k: S(8, 16) for k in ("wz", "wr", "wn")} | {k: S(16, 16) for k in ("uz", "ur", "un")}
    p["out"] = S(16, 4)
    return jax.value_and_grad(loss), (p, S(8, 8, 8), S(8, 4))


def kalman_filter_scan():
    def step(carry, z):
        x, P = carry
        A = jnp.eye(4) + 0.1 * jnp.eye(4, k=1)
        x = A @ x
        P = A @ P @ A.T + 0.01 * jnp.eye(4)
        H = jnp.eye(2, 4)
        S_ = H @ P @ H.T + 0.1 * jnp.eye(2)
        K = jnp.linalg.solve(S_, H @ P).T
        x = x + K @ (z - H @ x)
        P = (jnp.eye(4) - K @ H) @ P
        return (x, P), x

    def nll(zs, x0):
        (_, _), xs = lax.scan(step, (x0, jnp.eye(4)), zs)
        return jnp.sum(xs ** 2)
    return jax.value_and_grad(nll, argnums=1), (S(12, 2), S(4))


def attention_rms_swiglu():
    def layer(p, x):
        h = _rms(x, p["g1"])
        q, k, v = h @ p["wq"], h @ p["wk"], h @ p["wv"]
        t = x.shape[1]
        mask = jnp.tril(jnp.ones((t, t), bool))
        s = jnp.where(mask, jnp.einsum("btd,bsd->bts", q, k) * 0.25, -1e9)
        x = x + jnp.einsum("bts,bsd->btd", jax.nn.softmax(s, -1), v) @ p["wo"]
        h = _rms(x, p["g2"])
        return x + (jax.nn.silu(h @ p["w1"]) * (h @ p["w3"])) @ p["w2"]

    def loss(p, x):
        return jnp.mean(layer(p, x) ** 2)

    def step(p, m, v, x):
        l, g = jax.value_and_grad(loss)(p, x)
        p, m, v = _adam(p, m, v, g)
        return p, m, v, l
    p = {"g1": S(16), "g2": S(16), "wq": S(16, 16), "wk": S(16, 16), "wv": S(16, 16),
         "wo": S(16, 16), "w1": S(16, 32), "w3": S(16, 32), "w2": S(32, 16)}
    return step, (p, p, p, S(8, 12, 16))


def scan_layers_remat():
    def block(x, w):
        h = jnp.tanh(x @ w[0])
        return x + h @ w[1], None

    def loss(ws, x):
        y, _ = lax.scan(jax.checkpoint(block), x, ws)
        return jnp.mean(y ** 2)
    return jax.value_and_grad(loss), (S(4, 2, 16, 16), S(8, 16))


# ------------------------------------------------------------------ losses
def focal_label_smooth():
    def loss(w, x, labels):
        logits = x @ w
        y = jax.nn.one_hot(labels, 10) * 0.9 + 0.01
        p = jax.nn.softmax(logits)
        return -jnp.mean(jnp.sum(y * (1 - p) ** 2 * jnp.log(p + 1e-9), -1))
    return jax.value_and_grad(loss), (S(32, 10), S(16, 32), S(16, dtype=jnp.int32))


def triplet_hard_mining():
    def loss(w, x, ids):
        e = x @ w
        e = e / jnp.linalg.norm(e, axis=-1, keepdims=True)
        d = jnp.sum((e[:, None] - e[None]) ** 2, -1)
        same = ids[:, None] == ids[None]
        pos = jnp.max(jnp.where(same, d, -jnp.inf), -1)
        neg = jnp.min(jnp.where(same, jnp.inf, d), -1)
        return jnp.mean(jax.nn.relu(pos - neg + 0.2))
    return jax.value_and_grad(loss), (S(24, 8), S(16, 24), S(16, dtype=jnp.int32))


# ------------------------------------------------------------------ quantization / vq
def vq_codebook():
    def loss(p, x):
        z = x @ p["enc"]
        d = jnp.sum((z[:, None] - p["book"][None]) ** 2, -1)
        idx = jnp.argmin(d, -1)
        q = p["book"][idx]
        zq = z + lax.stop_gradient(q - z)
        rec = zq @ p["dec"]
        commit = jnp.mean((lax.stop_gradient(q) - z) ** 2)
        book = jnp.mean((q - lax.stop_gradient(z)) ** 2)
        usage = jax.ops.segment_sum(jnp.ones_like(idx, F32), idx, 16)
        return jnp.mean((rec - x) ** 2) + book + 0.25 * commit + 1e-3 * jnp.var(usage)
    return jax.value_and_grad(loss), ({"enc": S(12, 6), "book": S(16, 6), "dec": S(6, 12)}, S(16, 12))


def stochastic_round_grads():
    def loss(w, x, y):
        return jnp.mean((jnp.tanh(x @ w[0]) @ w[1] - y) ** 2)

    def step(w, x, y, key):
        g = jax.grad(loss)(w, x, y)
        keys = jax.random.split(key, 2)
        def sr(a, k):
            s = jnp.max(jnp.abs(a)) / 7.0 + 1e-12
            u = jax.random.uniform(k, a.shape)
            return jnp.clip(jnp.floor(a / s + u), -8, 7).astype(jnp.int8).astype(F32) * s
        g = [sr(a, k) for a, k in zip(g, keys)]
        return [a - 0.1 * b for a, b in zip(w, g)]
    return step, ([S(16, 32), S(32, 4)], S(8, 16), S(8, 4), jax.ShapeDtypeStruct((2,), jnp.uint32))


def bf16_attention_f32_softmax():
    def f(q, k, v):
        s = jnp.einsum("bhqd,bhkd->bhqk", q.astype(BF16), k.astype(BF16)).astype(F32) * 0.125
        a = jax.nn.softmax(s, -1).astype(BF16)
        return jnp.einsum("bhqk,bhkd->bhqd", a, v.astype(BF16)).astype(F32)

    def loss(q, k, v):
        return jnp.sum(f(q, k, v) ** 2)
    return jax.value_and_grad(loss, argnums=(0, 1, 2)), (S(8, 2, 8, 16), S(8, 2, 8, 16), S(8, 2, 8, 16))


# ------------------------------------------------------------------ moe / graphs
def moe_top2_gates():
    def loss(p, x):
        gates = jax.nn.softmax(x @ p["router"], -1)
        vals, idx = lax.top_k(gates, 2)
        vals = vals / jnp.sum(vals, -1, keepdims=True)
        disp = jnp.sum(jax.nn.one_hot(idx, 4) * vals[..., None], 1)
        h = jnp.einsum("te,td,edh->teh", disp, x, p["w1"])
        out = jnp.einsum("teh,ehd->td", jax.nn.gelu(h), p["w2"])
        aux = jnp.sum(jnp.mean(gates, 0) * jnp.mean(disp > 0, 0)) * 4
        return jnp.mean((out - x) ** 2) + 0.01 * aux
    return jax.value_and_grad(loss), ({"router": S(16, 4), "w1": S(4, 16, 32), "w2": S(4, 32, 16)}, S(16, 16))


def gat_segment_softmax():
    def loss(p, h, src, dst):
        z = h @ p["w"]
        e = jax.nn.leaky_relu(z[src] @ p["a1"] + z[dst] @ p["a2"], 0.2)
        m = jax.ops.segment_max(e, dst, 16)
        a = jnp.exp(e - m[dst])
        a = a / (jax.ops.segment_sum(a, dst, 16)[dst] + 1e-9)
        out = jax.ops.segment_sum(a[:, None] * z[src], dst, 16)
        return jnp.mean(jax.nn.elu(out) ** 2)
    return jax.value_and_grad(loss), ({"w": S(8, 8), "a1": S(8), "a2": S(8)}, S(16, 8),
                                     S(48, dtype=jnp.int32), S(48, dtype=jnp.int32))


# ------------------------------------------------------------------ control / numerics
def rk4_ode_fori():
    def f(y, w):
        return jnp.tanh(y @ w) - 0.1 * y

    def solve(w, y0):
        def body(i, y):
            h = 0.05
            k1 = f(y, w)
            k2 = f(y + h / 2 * k1, w)
            k3 = f(y + h / 2 * k2, w)
            k4 = f(y + h * k3, w)
            return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return jnp.sum(lax.fori_loop(0, 10, body, y0) ** 2)
    return jax.value_and_grad(solve), (S(8, 8), S(4, 8))


def jacobi_until_converged():
    def solve(A, b):
        d = jnp.diag(A)
        R = A - jnp.diag(d)

        def cond(s):
            x, x_old, i = s
            return (jnp.max(jnp.abs(x - x_old)) > 1e-5) & (i < 100)

        def body(s):
            x, _, i = s
            return (b - R @ x) / d, x, i + 1
        x, _, n = lax.while_loop(cond, body, (b / d, jnp.zeros_like(b), 0))
        return x, n
    return solve, (S(12, 12), S(12))


def lstsq_qr_triangular():
    def f(A, y):
        q, r = jnp.linalg.qr(A)
        x = jax.scipy.linalg.solve_triangular(r, q.T @ y, lower=False)
        resid = A @ x - y
        return x, jnp.sum(resid ** 2)
    return f, (S(16, 6), S(16, 3))


def spectral_filter_rfft():
    def loss(w, x):
        X = jnp.fft.rfft(x, axis=-1)
        Y = X * (w[:, 0] + 1j * w[:, 1])
        y = jnp.fft.irfft(Y, n=x.shape[-1], axis=-1)
        return jnp.mean((y - x[:, ::-1]) ** 2)
    return jax.value_and_grad(loss), (S(17, 2), S(8, 32))


# ------------------------------------------------------------------ sort / scatter / dynamic
def ndcg_argsort():
    def loss(w, x, rel):
        s = x @ w
        order = jnp.argsort(-s, axis=-1)
        gains = jnp.take_along_axis(rel, order, -1)
        disc = 1.0 / jnp.log2(jnp.arange(2, gains.shape[-1] + 2))
        soft = jax.nn.softmax(s, -1)
        return -jnp.mean(jnp.sum(gains * disc, -1)) - jnp.mean(jnp.sum(soft * rel, -1))
    return jax.value_and_grad(loss), (S(6,), S(8, 12, 6), S(8, 12))


def scatter_max_pool():
    def f(x, seg, idx, upd):
        pooled = jnp.full((10, x.shape[1]), -jnp.inf).at[seg].max(x)
        counts = jnp.zeros((10,)).at[seg].add(1.0)
        table = jnp.zeros((32, x.shape[1])).at[idx].add(upd * 2.0)
        return jnp.where(jnp.isfinite(pooled), pooled, 0.0), counts, table
    return f, (S(24, 8), S(24, dtype=jnp.int32), S(6, dtype=jnp.int32), S(6, 8))


def ring_buffer_fori():
    def f(buf, xs, w):
        def body(i, s):
            b, acc = s
            x = jnp.tanh(xs[i] @ w)
            b = lax.dynamic_update_slice(b, x[None], (i % b.shape[0], 0))
            win = lax.dynamic_slice(b, (jnp.maximum(i - 2, 0) % b.shape[0], 0), (2, b.shape[1]))
            return b, acc + jnp.sum(win)
        return lax.fori_loop(0, xs.shape[0], body, (buf, 0.0))
    return f, (S(4, 8), S(10, 8), S(8, 8))


def global_norm_clip_custom_vjp():
    @jax.custom_vjp
    def clip_grad(x):
        return x

    def fwd(x):
        return x, None

    def bwd(_, g):
        return (jnp.clip(g, -0.5, 0.5),)
    clip_grad.defvjp(fwd, bwd)

    def loss(p, x, y):
        h = clip_grad(jnp.tanh(x @ p["a"]))
        return jnp.mean((h @ p["b"] - y) ** 2)

    def step(p, x, y):
        g = jax.grad(loss)(p, x, y)
        n = jnp.sqrt(sum(jnp.sum(a * a) for a in jax.tree_util.tree_leaves(g)))
        g = jax.tree_util.tree_map(lambda a: a * jnp.minimum(1.0, 1.0 / (n + 1e-6)), g)
        return _sgd(p, g)
    return step, ({"a": S(16, 24), "b": S(24, 8)}, S(8, 16), S(8, 8))


def remat_dots_no_batch():
    def block(p, x):
        h = jax.nn.gelu(x @ p["w1"])
        return _rms(x + h @ p["w2"], p["g"])

    pol = jax.checkpoint_policies.dots_with_no_batch_dims_saveable

    def loss(ps, x):
        for p in ps:
            x = jax.checkpoint(block, policy=pol)(p, x)
        return jnp.mean(x ** 2)
    ps = [{"w1": S(16, 48), "w2": S(48, 16), "g": S(16)} for _ in range(3)]
    return jax.value_and_grad(loss), (ps, S(8, 16))


PROGRAMS: dict[str, tuple[str, object]] = {}
for _fam, _fns in {
    "cnn": [vit_patch_step, unet_updown, conv_transpose_decoder],
    "transformer": [attention_rms_swiglu, scan_layers_remat, bf16_attention_f32_softmax],
    "rnn": [gru_scan, kalman_filter_scan],
    "loss": [focal_label_smooth, triplet_hard_mining],
    "quant": [vq_codebook, stochastic_round_grads],
    "moe": [moe_top2_gates],
    "gnn": [gat_segment_softmax],
    "control": [rk4_ode_fori, jacobi_until_converged, ring_buffer_fori],
    "linalg": [lstsq_qr_triangular],
    "fft": [spectral_filter_rfft],
    "sort": [ndcg_argsort],
    "scatter_gather": [scatter_max_pool],
    "custom_vjp": [global_norm_clip_custom_vjp],
    "remat": [remat_dots_no_batch],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["vit_patch_step", "unet_updown", "conv_transpose_decoder", "attention_rms_swiglu",
           "scan_layers_remat", "bf16_attention_f32_softmax", "gru_scan", "focal_label_smooth",
           "vq_codebook", "moe_top2_gates", "gat_segment_softmax", "remat_dots_no_batch"]
SHARDED_SET = ["vit_patch_step", "unet_updown", "attention_rms_swiglu", "gru_scan",
               "focal_label_smooth", "bf16_attention_f32_softmax", "moe_top2_gates",
               "global_norm_clip_custom_vjp"]
