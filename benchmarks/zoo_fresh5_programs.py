"""Fifth fresh set: 22 JAX programs written by the lead in the 2026-11-23 late session, kept
outside the repository and shown to no helper; measured at the session's start and end code
only (no miss of it was looked at before the end figures in RESULTS.md). Same interface as
zoo_programs.py::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh5_programs python benchmarks/zoo.py --out benchmarks/data/fresh5
    HLODIFF_ZOO_PROGRAMS=zoo_fresh5_programs python benchmarks/accuracy.py --data benchmarks/data/fresh5
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


def _conv(x, w, stride=1, groups=1):
    return lax.conv_general_dilated(x, w, (stride, stride), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                    feature_group_count=groups)


def _bn(x, g, b):
    m = x.mean((0, 1, 2))
    v = x.var((0, 1, 2))
    return (x - m) * lax.rsqrt(v + 1e-5) * g + b


def resnet_bottleneck_step():
    def loss(p, x, y):
        h = jax.nn.relu(_bn(_conv(x, p["c1"]), p["g1"], p["b1"]))
        h = jax.nn.relu(_bn(_conv(h, p["c2"]), p["g2"], p["b2"]))
        h = _bn(_conv(h, p["c3"]), p["g3"], p["b3"])
        h = jax.nn.relu(h + x)
        logits = h.mean((1, 2)) @ p["fc"]
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, -1))

    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return _sgd(p, g), l
    p = {"c1": S(1, 1, 16, 4), "g1": S(4), "b1": S(4), "c2": S(3, 3, 4, 4), "g2": S(4),
         "b2": S(4), "c3": S(1, 1, 4, 16), "g3": S(16), "b3": S(16), "fc": S(16, 10)}
    return step, (p, S(8, 8, 8, 16), S(8, 10))


def squeeze_excite():
    def loss(p, x):
        h = jax.nn.relu(_conv(x, p["c"]))
        s = h.mean((1, 2))
        s = jax.nn.sigmoid(jax.nn.relu(s @ p["w1"]) @ p["w2"])
        return jnp.mean((h * s[:, None, None, :] - x) ** 2)
    p = {"c": S(3, 3, 12, 12), "w1": S(12, 3), "w2": S(3, 12)}
    return jax.value_and_grad(loss), (p, S(4, 10, 10, 12))


def swin_window_attention():
    def loss(p, x):
        b, h, w, c = x.shape
        win = x.reshape(b, h // 4, 4, w // 4, 4, c).transpose(0, 1, 3, 2, 4, 5).reshape(-1, 16, c)
        q, k, v = win @ p["wq"], win @ p["wk"], win @ p["wv"]
        a = jax.nn.softmax(q @ k.transpose(0, 2, 1) / jnp.sqrt(c) + p["bias"], -1)
        o = (a @ v).reshape(b, h // 4, w // 4, 4, 4, c).transpose(0, 1, 3, 2, 4, 5).reshape(b, h, w, c)
        return jnp.mean((o @ p["wo"] + x) ** 2)
    p = {"wq": S(8, 8), "wk": S(8, 8), "wv": S(8, 8), "wo": S(8, 8), "bias": S(16, 16)}
    return jax.value_and_grad(loss), (p, S(2, 8, 8, 8))


def perceiver_cross_attention():
    def loss(p, x):
        lat = jnp.broadcast_to(p["latents"], (x.shape[0],) + p["latents"].shape)
        for _ in range(2):
            q = lat @ p["wq"]
            k, v = x @ p["wk"], x @ p["wv"]
            a = jax.nn.softmax(jnp.einsum("bld,btd->blt", q, k) * 0.25, -1)
            lat = lat + jnp.einsum("blt,btd->bld", a, v)
        return jnp.mean(lat ** 2)
    p = {"latents": S(6, 16), "wq": S(16, 16), "wk": S(12, 16), "wv": S(12, 16)}
    return jax.value_and_grad(loss), (p, S(4, 20, 12))


def gated_linear_attention_scan():
    def loss(p, x):
        q, k, v = x @ p["wq"], x @ p["wk"], x @ p["wv"]
        g = jax.nn.sigmoid(x @ p["wg"])

        def stepf(s, inp):
            qt, kt, vt, gt = inp
            s = gt[:, :, None] * s + kt[:, :, None] * vt[:, None, :]
            return s, jnp.einsum("bd,bde->be", qt, s)
        xs = tuple(t.transpose(1, 0, 2) for t in (q, k, v, g))
        _, out = lax.scan(stepf, jnp.zeros((x.shape[0], 8, 8)), xs)
        return jnp.mean(out ** 2)
    p = {k: S(8, 8) for k in ("wq", "wk", "wv", "wg")}
    return jax.value_and_grad(loss), (p, S(3, 10, 8))


def peephole_lstm_fori():
    def f(p, xs):
        def body(t, carry):
            h, c = carry
            z = xs[t] @ p["wx"] + h @ p["wh"]
            i, fg, o, u = jnp.split(z, 4, -1)
            c = jax.nn.sigmoid(fg + c * p["pf"]) * c + jax.nn.sigmoid(i + c * p["pi"]) * jnp.tanh(u)
            h = jax.nn.sigmoid(o + c * p["po"]) * jnp.tanh(c)
            return h, c
        h, c = lax.fori_loop(0, xs.shape[0], body, (jnp.zeros((4, 8)), jnp.zeros((4, 8))))
        return h.sum() + c.sum(), h
    p = {"wx": S(6, 32), "wh": S(8, 32), "pf": S(8), "pi": S(8), "po": S(8)}
    return f, (p, S(9, 4, 6))


def gradient_penalty_double_grad():
    def critic(p, x):
        return jnp.tanh(x @ p["w1"]) @ p["w2"]

    def loss(p, real, fake, eps):
        xi = eps[:, None] * real + (1 - eps[:, None]) * fake
        gx = jax.vmap(jax.grad(lambda z: critic(p, z[None])[0, 0]))(xi)
        gp = jnp.mean((jnp.sqrt(jnp.sum(gx ** 2, -1) + 1e-12) - 1.0) ** 2)
        return jnp.mean(critic(p, fake)) - jnp.mean(critic(p, real)) + 10.0 * gp
    p = {"w1": S(6, 16), "w2": S(16, 1)}
    return jax.value_and_grad(loss), (p, S(8, 6), S(8, 6), S(8))


def dice_segmentation_loss():
    def loss(w, x, mask):
        logits = _conv(x, w)
        pr = jax.nn.sigmoid(logits)
        inter = jnp.sum(pr * mask, (1, 2, 3))
        den = jnp.sum(pr, (1, 2, 3)) + jnp.sum(mask, (1, 2, 3))
        bce = jnp.mean(jnp.maximum(logits, 0) - logits * mask + jnp.log1p(jnp.exp(-jnp.abs(logits))))
        return jnp.mean(1 - (2 * inter + 1) / (den + 1)) + bce
    return jax.value_and_grad(loss), (S(3, 3, 3, 1), S(4, 12, 12, 3), S(4, 12, 12, 1))


def kl_distillation():
    def loss(ps, pt, x, y, T=2.0):
        s = jnp.tanh(x @ ps["w1"]) @ ps["w2"]
        t = lax.stop_gradient(jax.nn.relu(x @ pt["w1"]) @ pt["w2"])
        kl = jnp.sum(jax.nn.softmax(t / T) * (jax.nn.log_softmax(t / T) - jax.nn.log_softmax(s / T)), -1)
        ce = -jnp.sum(jax.nn.log_softmax(s) * y, -1)
        return jnp.mean(0.7 * T * T * kl + 0.3 * ce)

    def step(ps, pt, x, y):
        l, g = jax.value_and_grad(loss)(ps, pt, x, y)
        return _sgd(ps, g), l
    ps = {"w1": S(10, 12), "w2": S(12, 7)}
    pt = {"w1": S(10, 32), "w2": S(32, 7)}
    return step, (ps, pt, S(16, 10), S(16, 7))


def int8_groupwise_weights():
    def loss(p, x):
        w = p["w"].reshape(4, 8, 16)
        scale = jnp.max(jnp.abs(w), axis=1, keepdims=True) / 127.0
        q = jnp.clip(jnp.round(w / scale), -127, 127).astype(jnp.int8)
        deq = (q.astype(F32) * scale).reshape(32, 16)
        wq = p["w"] + lax.stop_gradient(deq - p["w"])
        return jnp.mean(jax.nn.gelu(x @ wq) ** 2)
    return jax.value_and_grad(loss), ({"w": S(32, 16)}, S(8, 32))


def maml_inner_vmap():
    def model(w, x):
        return jnp.tanh(x @ w["a"]) @ w["b"]

    def task_loss(w, x, y):
        return jnp.mean((model(w, x) - y) ** 2)

    def adapted(w, xs, ys, xq, yq):
        g = jax.grad(task_loss)(w, xs, ys)
        w2 = jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, w, g)
        return task_loss(w2, xq, yq)

    def meta(w, xs, ys, xq, yq):
        return jnp.mean(jax.vmap(adapted, in_axes=(None, 0, 0, 0, 0))(w, xs, ys, xq, yq))
    w = {"a": S(4, 12), "b": S(12, 1)}
    return jax.value_and_grad(meta), (w, S(5, 6, 4), S(5, 6, 1), S(5, 6, 4), S(5, 6, 1))


def sparse_topk_attention():
    def loss(p, x):
        q, k = x @ p["wq"], x @ p["wk"]
        s = jnp.einsum("btd,bsd->bts", q, k)
        kth = lax.top_k(s, 4)[0][..., -1:]
        s = jnp.where(s >= kth, s, -1e9)
        return jnp.mean(jnp.einsum("bts,bsd->btd", jax.nn.softmax(s, -1), x) ** 2)
    p = {"wq": S(12, 12), "wk": S(12, 12)}
    return jax.value_and_grad(loss), (p, S(4, 14, 12))


def laplacian_power_while():
    def f(h, src, dst, w):
        n = h.shape[0]
        deg = jax.ops.segment_sum(jnp.ones_like(w), src, num_segments=n)

        def cond(s):
            x, i = s
            return i < 6

        def body(s):
            x, i = s
            msg = x[src] * w[:, None]
            x = x - 0.2 * (deg[:, None] * x - jax.ops.segment_sum(msg, dst, num_segments=n))
            return x, i + 1
        x, _ = lax.while_loop(cond, body, (h, 0))
        return x, jnp.sum(x ** 2)
    i32 = jnp.int32
    return f, (S(15, 4), S(40, dtype=i32), S(40, dtype=i32), S(40))


def newton_sqrt_while():
    def f(a):
        def cond(s):
            x, prev, i = s
            return (jnp.max(jnp.abs(x - prev)) > 1e-5) & (i < 30)

        def body(s):
            x, prev, i = s
            return 0.5 * (x + a / x), x, i + 1
        x, _, n = lax.while_loop(cond, body, (a, a + 1.0, 0))
        return x, n
    return f, (S(7, 5),)


def lr_schedule_cond():
    def step(p, g, count):
        warm = count < 100
        lr = lax.cond(warm, lambda c: 1e-3 * (c + 1) / 100.0,
                      lambda c: 1e-3 * 0.5 * (1 + jnp.cos(jnp.pi * jnp.minimum(c, 1000) / 1000.0)),
                      count.astype(F32))
        p = jax.tree_util.tree_map(lambda a, b: a - lr * b, p, g)
        return p, count + 1, lr
    p = {"w": S(16, 16), "b": S(16)}
    return step, (p, p, S(dtype=jnp.int32))


def searchsorted_bucketize():
    def f(x, edges, w):
        idx = jnp.searchsorted(edges, x)
        onehot = jax.nn.one_hot(idx, edges.shape[0] + 1)
        return onehot @ w, jnp.bincount(idx.reshape(-1), length=edges.shape[0] + 1)
    return f, (S(6, 20), S(9), S(10, 3))


def gp_marginal_likelihood():
    def nll(params, x, y):
        ls, sf, sn = jnp.exp(params[0]), jnp.exp(params[1]), jnp.exp(params[2])
        d2 = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
        k = sf * jnp.exp(-0.5 * d2 / ls ** 2) + (sn + 1e-4) * jnp.eye(x.shape[0])
        lchol = jnp.linalg.cholesky(k)
        alpha = jax.scipy.linalg.cho_solve((lchol, True), y)
        return 0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diag(lchol)))
    return jax.value_and_grad(nll), (S(3), S(12, 2), S(12))


def fft_autocorrelation():
    def f(x):
        n = x.shape[-1]
        xc = x - x.mean(-1, keepdims=True)
        fx = jnp.fft.rfft(xc, n=2 * n)
        ac = jnp.fft.irfft(fx * jnp.conj(fx), n=2 * n)[..., :n]
        return ac / ac[..., :1]
    return jax.value_and_grad(lambda x: jnp.sum(f(x)[:, 1:4] ** 2)), (S(5, 32),)


def gather_scatter_min_pool():
    def loss(w, x, idx):
        h = x @ w
        pooled = jnp.full((8, h.shape[1]), jnp.inf).at[idx].min(h)
        pooled = jnp.where(jnp.isinf(pooled), 0.0, pooled)
        back = pooled[idx]
        return jnp.mean((back - h) ** 2)
    return jax.value_and_grad(loss), (S(5, 6), S(24, 5), S(24, dtype=jnp.int32))


def gradient_reversal_custom_vjp():
    @jax.custom_vjp
    def grl(x, lam):
        return x

    def fwd(x, lam):
        return x, lam

    def bwd(lam, g):
        return -lam * g, None
    grl.defvjp(fwd, bwd)

    def loss(p, x, yd, yt):
        f = jax.nn.relu(x @ p["fe"])
        task = -jnp.mean(jnp.sum(jax.nn.log_softmax(f @ p["task"]) * yt, -1))
        dom = jnp.mean((jax.nn.sigmoid(grl(f, 0.3) @ p["dom"]) - yd) ** 2)
        return task + dom
    p = {"fe": S(10, 16), "task": S(16, 4), "dom": S(16, 1)}
    return jax.value_and_grad(loss), (p, S(12, 10), S(12, 1), S(12, 4))


def remat_scan_saved_names():
    from jax.ad_checkpoint import checkpoint_name

    def block(x, p):
        h = checkpoint_name(x @ p["w1"], "proj")
        return x + jnp.tanh(h) @ p["w2"], None

    def loss(ps, x):
        pol = jax.checkpoint_policies.save_only_these_names("proj")
        x, _ = lax.scan(jax.checkpoint(block, policy=pol), x, ps)
        return jnp.mean(x ** 2)
    ps = {"w1": S(3, 12, 24), "w2": S(3, 24, 12)}
    return jax.value_and_grad(loss), (ps, S(6, 12))


def lamb_step():
    def loss(p, x, y):
        return jnp.mean((jax.nn.relu(x @ p["w1"]) @ p["w2"] - y) ** 2)

    def step(p, m, v, x, y):
        g = jax.grad(loss)(p, x, y)
        m = jax.tree_util.tree_map(lambda a, b: 0.9 * a + 0.1 * b, m, g)
        v = jax.tree_util.tree_map(lambda a, b: 0.999 * a + 0.001 * b * b, v, g)

        def upd(w, mm, vv):
            u = mm / (jnp.sqrt(vv) + 1e-6) + 0.01 * w
            ratio = jnp.linalg.norm(w) / jnp.maximum(jnp.linalg.norm(u), 1e-6)
            return w - 1e-3 * ratio * u
        return jax.tree_util.tree_map(upd, p, m, v), m, v
    p = {"w1": S(8, 20), "w2": S(20, 3)}
    return step, (p, p, p, S(16, 8), S(16, 3))


PROGRAMS: dict[str, tuple[str, object]] = {}
for _fam, _fns in {
    "cnn": [resnet_bottleneck_step, squeeze_excite, dice_segmentation_loss],
    "transformer": [swin_window_attention, perceiver_cross_attention, sparse_topk_attention],
    "rnn": [gated_linear_attention_scan, peephole_lstm_fori],
    "loss": [gradient_penalty_double_grad, kl_distillation],
    "quant": [int8_groupwise_weights],
    "mlp": [maml_inner_vmap, lamb_step],
    "gnn": [laplacian_power_while],
    "control": [newton_sqrt_while, lr_schedule_cond],
    "sort": [searchsorted_bucketize],
    "linalg": [gp_marginal_likelihood],
    "fft": [fft_autocorrelation],
    "scatter_gather": [gather_scatter_min_pool],
    "custom_vjp": [gradient_reversal_custom_vjp],
    "remat": [remat_scan_saved_names],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["resnet_bottleneck_step", "squeeze_excite", "swin_window_attention",
           "perceiver_cross_attention", "gated_linear_attention_scan", "gradient_penalty_double_grad",
           "kl_distillation", "int8_groupwise_weights", "sparse_topk_attention", "lamb_step",
           "gather_scatter_min_pool", "remat_scan_saved_names"]
SHARDED_SET = ["kl_distillation", "resnet_bottleneck_step", "perceiver_cross_attention",
               "gated_linear_attention_scan", "lamb_step", "swin_window_attention",
               "maml_inner_vmap", "gradient_reversal_custom_vjp"]
