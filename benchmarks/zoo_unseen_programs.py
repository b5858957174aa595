"""Unseen programs: a second zoo of 20 JAX programs, written by the lead at the start of the
2026-11-23 afternoon session, kept outside the repository and never shown to the helpers who
tuned the engine, then used for the final check (fates and the memory estimate). Same
interface as zoo_programs.py; dump and measure with::

    HLODIFF_ZOO_PROGRAMS=zoo_unseen_programs python benchmarks/zoo.py --out benchmarks/data/unseen
    HLODIFF_ZOO_PROGRAMS=zoo_unseen_programs python benchmarks/accuracy.py --data benchmarks/data/unseen
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

F32 = jnp.float32
BF16 = jnp.bfloat16


def S(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


def _xent(logits, labels):
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, axis=-1))


def _momentum(params, mom, grads, lr=0.05, beta=0.9):
    mom = jax.tree_util.tree_map(lambda m, g: beta * m + g, mom, grads)
    params = jax.tree_util.tree_map(lambda p, m: p - lr * m, params, mom)
    return params, mom


def _adamw(p, m, v, g, lr=1e-3, wd=0.01):
    m = jax.tree_util.tree_map(lambda a, b: 0.9 * a + 0.1 * b, m, g)
    v = jax.tree_util.tree_map(lambda a, b: 0.999 * a + 0.001 * b * b, v, g)
    p = jax.tree_util.tree_map(lambda w, a, b: w - lr * (a / (jnp.sqrt(b) + 1e-8) + wd * w), p, m, v)
    return p, m, v


def _ln(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * lax.rsqrt(var + 1e-5) * g + b


# ------------------------------------------------------------------ vision
def resnet_block_bn():
    def conv(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def bn(x, s, b):
        mu = x.mean((0, 1, 2))
        var = x.var((0, 1, 2))
        return (x - mu) / jnp.sqrt(var + 1e-5) * s + b, mu, var

    def loss(p, x, y):
        h, mu1, _ = bn(conv(x, p["w1"]), p["s1"], p["b1"])
        h = jax.nn.relu(h)
        h, mu2, _ = bn(conv(h, p["w2"]), p["s2"], p["b2"])
        h = jax.nn.relu(h + x)
        logits = h.mean((1, 2)) @ p["fc"]
        return _xent(logits, y), (mu1, mu2)

    def step(p, mom, x, y):
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, x, y)
        p, mom = _momentum(p, mom, g)
        return p, mom, l, aux
    p = {"w1": S(3, 3, 16, 16), "s1": S(16), "b1": S(16), "w2": S(3, 3, 16, 16),
         "s2": S(16), "b2": S(16), "fc": S(16, 10)}
    return step, (p, p, S(8, 12, 12, 16), S(8, 10))


def diffusion_block():
    def gn(x, groups=4):
        n, h, w, c = x.shape
        xg = x.reshape(n, h, w, groups, c // groups)
        mu = xg.mean((1, 2, 4), keepdims=True)
        var = xg.var((1, 2, 4), keepdims=True)
        return ((xg - mu) * lax.rsqrt(var + 1e-6)).reshape(n, h, w, c)

    def loss(p, x, t, noise):
        temb = jax.nn.silu(jnp.sin(t[:, None] * jnp.arange(16.0)[None]) @ p["t"])
        h = lax.conv_general_dilated(x, p["c1"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = jax.nn.silu(gn(h)) + temb[:, None, None, :]
        h = lax.conv_general_dilated(h, p["c2"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jnp.mean((h - noise) ** 2)

    def step(p, x, t, noise):
        l, g = jax.value_and_grad(loss)(p, x, t, noise)
        return jax.tree_util.tree_map(lambda a, b: a - 1e-3 * b, p, g), l
    p = {"t": S(16, 8), "c1": S(3, 3, 4, 8), "c2": S(3, 3, 8, 4)}
    return step, (p, S(8, 8, 8, 4), S(8), S(8, 8, 8, 4))


def wavenet_gated():
    def loss(ws, x):
        h = x
        for i, (wf, wg) in enumerate(ws):
            d = 2 ** i
            f = lax.conv_general_dilated(h, wf, (1,), "SAME", rhs_dilation=(d,), dimension_numbers=("NWC", "WIO", "NWC"))
            g = lax.conv_general_dilated(h, wg, (1,), "SAME", rhs_dilation=(d,), dimension_numbers=("NWC", "WIO", "NWC"))
            h = h + jnp.tanh(f) * jax.nn.sigmoid(g)
        return jnp.mean(h ** 2)
    ws = [(S(2, 8, 8), S(2, 8, 8)) for _ in range(3)]
    return jax.grad(loss), (ws, S(8, 32, 8))


# ------------------------------------------------------------------ sequence models
def gpt_rope_adamw():
    def rope(x):
        t, d = x.shape[-2], x.shape[-1] // 2
        ang = jnp.arange(t)[:, None] * (10000.0 ** (-jnp.arange(d) / d))[None]
        c, s = jnp.cos(ang), jnp.sin(ang)
        x1, x2 = x[..., :d], x[..., d:]
        return jnp.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], -1)

    def layer(p, x):
        b, t, e = x.shape
        h = _ln(x, p["g"], p["b"])
        q, k, v = jnp.split(h @ p["qkv"], 3, -1)
        q, k = rope(q), rope(k)
        att = q @ jnp.swapaxes(k, -1, -2) / jnp.sqrt(e)
        att = jnp.where(jnp.tril(jnp.ones((t, t), bool)), att, -1e9)
        x = x + jax.nn.softmax(att) @ v @ p["o"]
        h = _ln(x, p["g"], p["b"])
        return x + jax.nn.gelu(h @ p["up"]) @ p["down"]

    def loss(ps, x, y):
        for p in ps:
            x = layer(p, x)
        return jnp.mean((x - y) ** 2)

    def step(ps, m, v, x, y):
        l, g = jax.value_and_grad(loss)(ps, x, y)
        ps, m, v = _adamw(ps, m, v, g)
        return ps, m, v, l
    e = 32
    one = {"g": S(e), "b": S(e), "qkv": S(e, 3 * e), "o": S(e, e), "up": S(e, 4 * e), "down": S(4 * e, e)}
    ps = [one, dict(one), dict(one)]
    return step, (ps, ps, ps, S(8, 16, e), S(8, 16, e))


def mlp_mixer():
    def block(p, x):
        y = _ln(x, p["g1"], p["b1"])
        y = jnp.swapaxes(jax.nn.gelu(jnp.swapaxes(y, 1, 2) @ p["tok1"]) @ p["tok2"], 1, 2)
        x = x + y
        y = _ln(x, p["g2"], p["b2"])
        return x + jax.nn.gelu(y @ p["ch1"]) @ p["ch2"]

    def loss(ps, x, lab):
        for p in ps:
            x = block(p, x)
        return _xent(x.mean(1) @ jnp.ones((16, 10)) * 0.1, lab)
    one = {"g1": S(16), "b1": S(16), "tok1": S(12, 24), "tok2": S(24, 12), "g2": S(16), "b2": S(16),
           "ch1": S(16, 32), "ch2": S(32, 16)}
    return jax.value_and_grad(loss), ([one, dict(one)], S(8, 12, 16), S(8, 10))


def lstm_clip_scan():
    def cell(p, carry, x):
        h, c = carry
        z = x @ p["wx"] + h @ p["wh"] + p["b"]
        i, f, o, u = jnp.split(z, 4, -1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(u)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h

    def loss(p, xs, y):
        b = xs.shape[1]
        (h, _), hs = lax.scan(lambda cr, x: cell(p, cr, x), (jnp.zeros((b, 16)), jnp.zeros((b, 16))), xs)
        return jnp.mean((hs.mean(0) @ p["out"] - y) ** 2)

    def step(p, xs, y):
        l, g = jax.value_and_grad(loss)(p, xs, y)
        norm = jnp.sqrt(sum(jnp.sum(x * x) for x in jax.tree_util.tree_leaves(g)))
        scale = jnp.minimum(1.0, 1.0 / (norm + 1e-6))
        return jax.tree_util.tree_map(lambda a, b: a - 0.01 * scale * b, p, g), l
    p = {"wx": S(8, 64), "wh": S(16, 64), "b": S(64), "out": S(16, 4)}
    return step, (p, S(10, 8, 8), S(8, 4))


def kv_decode_loop():
    def f(cache_k, cache_v, wq, x0):
        def body(i, carry):
            ck, cv, x = carry
            q = x @ wq
            ck = lax.dynamic_update_slice(ck, q[:, None, :], (0, i, 0))
            cv = lax.dynamic_update_slice(cv, jnp.tanh(q)[:, None, :], (0, i, 0))
            mask = jnp.arange(ck.shape[1]) <= i
            att = jnp.where(mask[None], jnp.einsum("bd,btd->bt", q, ck), -1e9)
            x = jnp.einsum("bt,btd->bd", jax.nn.softmax(att), cv)
            return ck, cv, x
        return lax.fori_loop(0, 6, body, (cache_k, cache_v, x0))
    return f, (S(8, 8, 16), S(8, 8, 16), S(16, 16), S(8, 16))


# ------------------------------------------------------------------ losses, routing, graphs
def clip_contrastive():
    def loss(p, img, txt):
        a = img @ p["wi"]
        b = txt @ p["wt"]
        a = a / jnp.linalg.norm(a, axis=-1, keepdims=True)
        b = b / jnp.linalg.norm(b, axis=-1, keepdims=True)
        logits = a @ b.T * jnp.exp(p["t"])
        lab = jnp.eye(a.shape[0])
        return (_xent(logits, lab) + _xent(logits.T, lab)) / 2
    return jax.value_and_grad(loss), ({"wi": S(24, 16), "wt": S(20, 16), "t": S()}, S(16, 24), S(16, 20))


def moe_capacity():
    def loss(p, x):
        n, d = x.shape
        e, cap = 4, 6
        gates = jax.nn.softmax(x @ p["router"])
        idx = jnp.argmax(gates, -1)
        onehot = jax.nn.one_hot(idx, e)
        pos = jnp.cumsum(onehot, 0) * onehot - 1
        keep = (pos < cap) & (pos >= 0)
        disp = jax.nn.one_hot(jnp.where(keep, pos, -1).max(-1).astype(jnp.int32), cap)[:, None, :] * onehot[:, :, None]
        xin = jnp.einsum("nec,nd->ecd", disp, x)
        h = jax.nn.relu(jnp.einsum("ecd,edf->ecf", xin, p["w1"]))
        out = jnp.einsum("ecf,efd->ecd", h, p["w2"])
        y = jnp.einsum("nec,ecd->nd", disp * gates.max(-1)[:, None, None], out)
        aux = jnp.mean(gates.mean(0) * onehot.mean(0)) * e
        return jnp.mean(y ** 2) + 0.01 * aux
    return jax.value_and_grad(loss), ({"router": S(16, 4), "w1": S(4, 16, 32), "w2": S(4, 32, 16)}, S(24, 16))


def gnn_segment_max():
    def loss(p, x, src, dst):
        msg = jax.nn.relu(x[src] @ p["w"])
        agg = jax.ops.segment_max(msg, dst, num_segments=x.shape[0])
        agg = jnp.where(jnp.isfinite(agg), agg, 0.0)
        cnt = jax.ops.segment_sum(jnp.ones_like(dst, F32), dst, num_segments=x.shape[0])
        h = agg + x @ p["self"] / (1.0 + cnt[:, None])
        return jnp.mean(h ** 2)
    I32 = jnp.int32
    return jax.grad(loss), ({"w": S(12, 12), "self": S(12, 12)}, S(20, 12), S(48, dtype=I32), S(48, dtype=I32))


def sparse_embed_update():
    def step(table, ids, grads):
        upd = table.at[ids].add(-0.1 * grads)
        counts = jnp.zeros(table.shape[0]).at[ids].add(1.0)
        mean = jax.ops.segment_sum(grads, ids, num_segments=table.shape[0]) / jnp.maximum(counts, 1.0)[:, None]
        return upd, mean
    return step, (S(64, 16), S(40, dtype=jnp.int32), S(40, 16))


# ------------------------------------------------------------------ control flow, numerics
def bisection_while():
    def f(a, lo, hi):
        def cond(s):
            lo, hi, k = s
            return (k < 40) & (jnp.max(hi - lo) > 1e-6)

        def body(s):
            lo, hi, k = s
            mid = (lo + hi) / 2
            val = mid ** 3 - a
            return jnp.where(val > 0, lo, mid), jnp.where(val > 0, mid, hi), k + 1
        lo, hi, _ = lax.while_loop(cond, body, (lo, hi, 0))
        return (lo + hi) / 2
    return f, (S(32), S(32), S(32))


def cond_in_scan_grad():
    def loss(w, xs):
        def body(h, x):
            h = lax.cond(jnp.sum(x) > 0, lambda h: jnp.tanh(h @ w + x), lambda h: h * 0.5 - x, h)
            return h, jnp.sum(h)
        h, s = lax.scan(body, jnp.zeros(8), xs)
        return jnp.sum(s) + jnp.sum(h ** 2)
    return jax.grad(loss), (S(8, 8), S(6, 8))


def median_percentile():
    def f(x, w):
        med = jnp.median(x, axis=0)
        q = jnp.percentile(x, 90.0, axis=1)
        order = jnp.argsort(-x[:, 0])
        return med @ w, q, x[order][:4]
    return f, (S(24, 16), S(16, 8))


def eigh_whiten():
    def f(x):
        c = x.T @ x / x.shape[0] + 1e-3 * jnp.eye(x.shape[1])
        evals, evecs = jnp.linalg.eigh(c)
        w = evecs @ jnp.diag(lax.rsqrt(evals)) @ evecs.T
        z = x @ w
        return z, lax.linalg.triangular_solve(jnp.linalg.cholesky(c), z.T, left_side=True, lower=True)
    return f, (S(32, 8),)


def bf16_loss_scaling():
    def loss(p, x, y):
        h = jax.nn.relu(x.astype(BF16) @ p["w1"].astype(BF16))
        out = (h @ p["w2"].astype(BF16)).astype(F32)
        return jnp.mean((out - y) ** 2) * 1024.0

    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        g = jax.tree_util.tree_map(lambda a: a / 1024.0, g)
        finite = jnp.all(jnp.array([jnp.all(jnp.isfinite(a)) for a in jax.tree_util.tree_leaves(g)]))
        return jax.tree_util.tree_map(lambda a, b: jnp.where(finite, a - 0.01 * b, a), p, g), l / 1024.0
    return step, ({"w1": S(32, 64), "w2": S(64, 8)}, S(16, 32), S(16, 8))


def int8_per_channel():
    def f(x, w_q, scale, zero):
        w = (w_q.astype(F32) - zero[None, :]) * scale[None, :]
        xq = jnp.clip(jnp.round(x / 0.05), -127, 127).astype(jnp.int8)
        acc = lax.dot(xq.astype(jnp.int32), w_q.astype(jnp.int32))
        return x @ w, acc.astype(F32) * 0.05 * scale[None, :]
    return f, (S(16, 32), S(32, 24, dtype=jnp.int8), S(24), S(24))


def remat_named_policy():
    from jax.ad_checkpoint import checkpoint_name

    def block(p, x):
        h = checkpoint_name(x @ p["a"], "proj")
        h = jnp.tanh(h) * jax.nn.sigmoid(h)
        return x + h @ p["b"]
    pol = jax.checkpoint_policies.save_only_these_names("proj")

    def loss(ps, x):
        for p in ps:
            x = jax.checkpoint(block, policy=pol)(p, x)
        return jnp.mean(x ** 2)
    ps = [{"a": S(16, 32), "b": S(32, 16)} for _ in range(3)]
    return jax.value_and_grad(loss), (ps, S(8, 16))


def logcumsumexp_vmap():
    def per(x, w):
        y = lax.cumlogsumexp(x)
        return jnp.sum(jnp.where(y > 0, y * w, -y))
    return jax.vmap(jax.grad(per), in_axes=(0, None)), (S(8, 20), S(20))


def dropout_ln_rng():
    def loss(p, x, key):
        k1, k2 = jax.random.split(key)
        h = _ln(x @ p["w"], p["g"], p["b"])
        h = jnp.where(jax.random.bernoulli(k1, 0.9, h.shape), h / 0.9, 0.0)
        h = h + 0.01 * jax.random.normal(k2, h.shape)
        return jnp.mean(h ** 2)
    return jax.value_and_grad(loss), ({"w": S(16, 16), "g": S(16), "b": S(16)}, S(8, 16),
                                     jax.ShapeDtypeStruct((2,), jnp.uint32))


PROGRAMS: dict[str, tuple[str, object]] = {}
for _fam, _fns in {
    "cnn": [resnet_block_bn, diffusion_block, wavenet_gated],
    "transformer": [gpt_rope_adamw, mlp_mixer, kv_decode_loop],
    "rnn": [lstm_clip_scan, cond_in_scan_grad],
    "loss": [clip_contrastive],
    "moe": [moe_capacity],
    "gnn": [gnn_segment_max],
    "scatter_gather": [sparse_embed_update],
    "control": [bisection_while],
    "sort": [median_percentile],
    "linalg": [eigh_whiten],
    "quant": [bf16_loss_scaling, int8_per_channel],
    "remat": [remat_named_policy],
    "misc": [logcumsumexp_vmap, dropout_ln_rng],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["resnet_block_bn", "diffusion_block", "gpt_rope_adamw", "mlp_mixer", "lstm_clip_scan",
           "clip_contrastive", "moe_capacity", "gnn_segment_max", "bf16_loss_scaling",
           "remat_named_policy", "kv_decode_loop", "dropout_ln_rng"]
SHARDED_SET = ["resnet_block_bn", "gpt_rope_adamw", "mlp_mixer", "clip_contrastive",
               "diffusion_block", "bf16_loss_scaling", "lstm_clip_scan", "remat_named_policy"]
