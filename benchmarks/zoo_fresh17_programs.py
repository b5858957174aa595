"""Seventeenth fresh set: 25 JAX programs written by a helper on 2026-11-28 (seventh session of
that day). It was kept outside the repository as a held-out set, measured unseen at the start
and end of that session, and committed at the start of the next (2026-11-29), when its misses
were first read and tuned on. Same interface as zoo_programs.py::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh17_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh17_programs python benchmarks/accuracy.py --data DIR

Written for JAX 0.4.30 up to the current release (no API newer than 0.4.30).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
from jax import lax
from jax.ad_checkpoint import checkpoint_name

F32 = jnp.float32
BF16 = jnp.bfloat16
I32 = jnp.int32
tmap = jax.tree_util.tree_map


def S(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


def _sgd(p, g, lr=0.05):
    return tmap(lambda a, b: a - lr * b, p, g)


def _adam(p, m, v, g, t, lr=1e-3, b1=0.9, b2=0.999, wd=0.0, eps=1e-8):
    m = tmap(lambda m, g: b1 * m + (1 - b1) * g, m, g)
    v = tmap(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
    c1 = 1.0 - b1 ** t
    c2 = 1.0 - b2 ** t
    p = tmap(lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + wd * p), p, m, v)
    return p, m, v


def _ln(x, g, b, eps=1e-5):
    m = jnp.mean(x, -1, keepdims=True)
    v = jnp.mean(jnp.square(x - m), -1, keepdims=True)
    return (x - m) * lax.rsqrt(v + eps) * g + b


def _bn(x, g, b, axes=(0, 1, 2), eps=1e-5):
    """Training-mode batch norm over ``axes``; returns the output and the batch (mean, var)."""
    m = jnp.mean(x, axes)
    v = jnp.var(x, axes)
    return (x - m) * lax.rsqrt(v + eps) * g + b, (m, v)


def _conv(x, w, stride=1, pad="SAME"):
    return lax.conv_general_dilated(x, w, (stride, stride), pad,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _dwconv(x, w, stride=1):
    """Depthwise NHWC convolution; w is [kh, kw, 1, C]."""
    return lax.conv_general_dilated(x, w, (stride, stride), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                    feature_group_count=x.shape[-1])


def _c1d(x, w, dil=1):
    return lax.conv_general_dilated(x, w, (1,), "SAME", rhs_dilation=(dil,),
                                    dimension_numbers=("NWC", "WIO", "NWC"))


def _mha(q_in, kv_in, p, pre, heads, causal=False):
    b, tq, d = q_in.shape
    tk = kv_in.shape[1]
    dh = d // heads
    q = (q_in @ p[pre + "q"]).reshape(b, tq, heads, dh)
    k = (kv_in @ p[pre + "k"]).reshape(b, tk, heads, dh)
    v = (kv_in @ p[pre + "v"]).reshape(b, tk, heads, dh)
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(dh).astype(q.dtype)
    if causal:
        mask = jnp.tril(jnp.ones((tq, tk), bool))
        s = jnp.where(mask, s, jnp.finfo(s.dtype).min)
    a = jax.nn.softmax(s, -1)
    o = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(b, tq, d)
    return o @ p[pre + "o"]


def _xent(logits, labels):
    logp = jax.nn.log_softmax(logits, -1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[..., None], -1))


def _bce(z, y):
    """Elementwise binary cross-entropy with logits."""
    return jnp.maximum(z, 0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z)))


def _attn_params(p, pre, d):
    for k in "qkvo":
        p[pre + k] = S(d, d)
    return p


def _global_clip(g, max_norm=1.0):
    n = jnp.sqrt(sum(jnp.sum(jnp.square(a)) for a in jax.tree_util.tree_leaves(g)))
    return tmap(lambda a: a * jnp.minimum(1.0, max_norm / (n + 1e-6)), g)


def _maxpool(x, k=2):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, k, k, 1), (1, k, k, 1), "VALID")


def _momentum(p, mom, g, lr, mu=0.9, wd=0.0, nesterov=False):
    g = tmap(lambda g, w: g + wd * w, g, p)
    mom = tmap(lambda m, g: mu * m + g, mom, g)
    if nesterov:
        return tmap(lambda w, g, m: w - lr * (g + mu * m), p, g, mom), mom
    return tmap(lambda w, m: w - lr * m, p, mom), mom


# ----------------------------------------------------------------------------- mlp


def mixture_density_network_gmm_nll():
    """Mixture density network for multimodal 2-D regression: a tanh MLP with three residual
    LayerNorm hidden layers predicts, for five components, the mixture logits, the means, the
    log-scales (clamped to [-5, 3]) and a correlation 0.95 tanh(.); the loss is the bivariate
    Gaussian mixture negative log-likelihood by logsumexp minus a small entropy bonus on the
    mixture weights; Adam with global-norm clipping."""
    K = 5

    def loss(p, x, y):
        h = jnp.tanh(x @ p["w0"] + p["b0"])
        for i in range(1, 4):
            h = h + jnp.tanh(_ln(h @ p["w%d" % i] + p["b%d" % i], p["g%d" % i], p["n%d" % i]))
        o = (h @ p["out"] + p["ob"]).reshape(x.shape[0], K, 6)
        logpi = jax.nn.log_softmax(o[..., 0], -1)
        mu = o[..., 1:3]
        ls = jnp.clip(o[..., 3:5], -5.0, 3.0)
        rho = 0.95 * jnp.tanh(o[..., 5])
        d = (y[:, None, :] - mu) * jnp.exp(-ls)
        z = jnp.square(d[..., 0]) + jnp.square(d[..., 1]) - 2.0 * rho * d[..., 0] * d[..., 1]
        om = 1.0 - rho * rho
        logn = -0.5 * z / om - jnp.log(2.0 * jnp.pi) - jnp.sum(ls, -1) - 0.5 * jnp.log(om)
        nll = -jnp.mean(jax.nn.logsumexp(logpi + logn, -1))
        ent = -jnp.mean(jnp.sum(jnp.exp(logpi) * logpi, -1))
        return nll - 0.01 * ent

    def step(p, m, v, t, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        p, m, v = _adam(p, m, v, _global_clip(g, 5.0), t, lr=1e-3)
        return l, p, m, v
    H = 64
    p = {"w0": S(12, H), "b0": S(H), "out": S(H, K * 6), "ob": S(K * 6)}
    for i in range(1, 4):
        p["w%d" % i], p["b%d" % i], p["g%d" % i], p["n%d" % i] = S(H, H), S(H), S(H), S(H)
    return step, (p, p, p, S(), S(32, 12), S(32, 2))


def coral_ordinal_rank_consistent_mlp():
    """CORAL ordinal regression (rank-consistent): a SELU MLP gives one shared score per example
    and K-1 = 5 learned thresholds turn it into cumulative logits P(y > k); the targets are the
    level indicators y > arange(K-1), the per-threshold BCE is weighted by sqrt task importance;
    the predicted rank (count of sigmoid > 0.5) and its MAE are reported; AMSGrad with a
    1/sqrt(t) step size."""
    K = 6

    def loss(p, x, y):
        h = x
        for i in range(1, 4):
            h = jax.nn.selu(h @ p["w%d" % i] + p["b%d" % i])
        logits = h @ p["w"] + p["thr"]                                   # [B,K-1]
        levels = (y[:, None] > jnp.arange(K - 1)[None]).astype(F32)
        imp = jnp.sqrt(jnp.arange(K - 1, 0, -1).astype(F32))
        imp = imp / jnp.sum(imp)
        l = jnp.mean(jnp.sum(_bce(logits, levels) * imp, -1))
        pred = jnp.sum((jax.nn.sigmoid(logits) > 0.5).astype(I32), -1)
        return l, jnp.mean(jnp.abs(pred - y).astype(F32))

    def step(p, m, v, vmax, t, x, y):
        (l, mae), g = jax.value_and_grad(loss, has_aux=True)(p, x, y)
        m = tmap(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v = tmap(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        vmax = tmap(jnp.maximum, vmax, v)
        lr = 2e-3 / jnp.sqrt(t)
        p = tmap(lambda p, m, vh: p - lr * m / (jnp.sqrt(vh) + 1e-8), p, m, vmax)
        return l, mae, p, m, v, vmax
    p = {"w1": S(18, 40), "b1": S(40), "w2": S(40, 40), "b2": S(40), "w3": S(40, 24),
         "b3": S(24), "w": S(24, 1), "thr": S(K - 1)}
    return step, (p, p, p, p, S(), S(24, 18), S(24, dtype=I32))


# ----------------------------------------------------------------------------- cnn


def yolo_grid_responsible_box_loss():
    """YOLO-v1 style detector on a 4x4 grid: three strided stages (conv+BN+leaky ReLU with a
    residual 3x3 conv), a 1x1 head predicting two boxes (sigmoid centre, squared-sigmoid size,
    confidence) and six class logits per cell; the box with the highest IoU against the cell's
    target is made responsible (argmax one-hot); coordinate loss on sqrt sizes weighted 5,
    confidence regressed to the detached IoU, no-object confidence weighted 0.5, class
    cross-entropy on object cells; BN running averages returned; momentum SGD with warmup."""
    NB = 2

    def stage(q, x):
        h, st = _bn(_conv(x, q["k"], 2), q["g"], q["b"])
        h = jax.nn.leaky_relu(h, 0.1)
        h2, st2 = _bn(_conv(h, q["k2"]), q["g2"], q["b2"])
        return h + jax.nn.leaky_relu(h2, 0.1), (st, st2)

    def iou(a, b):
        ax0, ay0, ax1, ay1 = (a[..., 0] - a[..., 2] / 2, a[..., 1] - a[..., 3] / 2,
                              a[..., 0] + a[..., 2] / 2, a[..., 1] + a[..., 3] / 2)
        bx0, by0, bx1, by1 = (b[..., 0] - b[..., 2] / 2, b[..., 1] - b[..., 3] / 2,
                              b[..., 0] + b[..., 2] / 2, b[..., 1] + b[..., 3] / 2)
        iw = jax.nn.relu(jnp.minimum(ax1, bx1) - jnp.maximum(ax0, bx0))
        ih = jax.nn.relu(jnp.minimum(ay1, by1) - jnp.maximum(ay0, by0))
        inter = iw * ih
        return inter / (a[..., 2] * a[..., 3] + b[..., 2] * b[..., 3] - inter + 1e-6)

    def loss(p, x, box_t, obj, cls):
        h, stats = x, []
        for q in p["stages"]:
            h, st = stage(q, h)
            stats.append(st)
        out = _conv(h, p["head"]) + p["hb"]                             # [N,4,4,NB*5+C]
        n, G = out.shape[0], out.shape[1]
        bx = out[..., :NB * 5].reshape(n, G, G, NB, 5)
        cxcy = jax.nn.sigmoid(bx[..., 0:2])
        wh = jnp.square(jax.nn.sigmoid(bx[..., 2:4]))
        conf = jax.nn.sigmoid(bx[..., 4])
        ious = iou(jnp.concatenate([cxcy, wh], -1), box_t[..., None, :])   # [N,G,G,NB]
        resp = jax.nn.one_hot(jnp.argmax(ious, -1), NB) * obj[..., None]
        l_xy = jnp.sum(resp[..., None] * jnp.square(cxcy - box_t[..., None, 0:2]))
        l_wh = jnp.sum(resp[..., None] * jnp.square(jnp.sqrt(wh + 1e-6)
                                                    - jnp.sqrt(box_t[..., None, 2:4] + 1e-6)))
        l_obj = jnp.sum(resp * jnp.square(conf - lax.stop_gradient(ious)))
        l_no = jnp.sum((1.0 - resp) * jnp.square(conf))
        logp = jax.nn.log_softmax(out[..., NB * 5:], -1)
        l_cls = -jnp.sum(obj * jnp.take_along_axis(logp, cls[..., None], -1)[..., 0])
        return (5.0 * (l_xy + l_wh) + l_obj + 0.5 * l_no + l_cls) / n, stats

    def step(p, mom, run, t, x, box_t, obj, cls):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, x, box_t, obj, cls)
        run = tmap(lambda r, s: 0.99 * r + 0.01 * s, run, lax.stop_gradient(stats))
        lr = 1e-2 * jnp.minimum(1.0, jnp.square(t / 200.0))
        p, mom = _momentum(p, mom, g, lr, 0.9, 5e-4)
        return l, p, mom, run

    def stg(cin, cout):
        q = {"k": S(3, 3, cin, cout), "g": S(cout), "b": S(cout), "k2": S(3, 3, cout, cout),
             "g2": S(cout), "b2": S(cout)}
        return q, ((S(cout), S(cout)), (S(cout), S(cout)))
    specs = [stg(3, 16), stg(16, 32), stg(32, 48)]
    p = {"stages": [q for q, _ in specs], "head": S(1, 1, 48, NB * 5 + 6), "hb": S(NB * 5 + 6)}
    run = [st for _, st in specs]
    return step, (p, p, run, S(), S(16, 32, 32, 3), S(16, 4, 4, 4), S(16, 4, 4),
                  S(16, 4, 4, dtype=I32))


# ----------------------------------------------------------------------------- transformer


def attention_sink_sliding_window_lm():
    """StreamingLLM-style decoder trained with its inference mask: each query sees a causal
    sliding window of 8 keys plus two always-visible attention-sink tokens (mask built from
    arange comparisons); RMSNorm, rotary embeddings, grouped-query attention (4 query heads
    sharing 2 KV heads via jnp.repeat), squared-ReLU FFN, three layers, tied head with label
    smoothing 0.1; AdamW(0.9, 0.95) with a cosine learning-rate decay."""
    H, KV, W, NS = 4, 2, 8, 2

    def rms(x, g):
        return x * lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * g

    def rope(x):
        t, dh = x.shape[1], x.shape[-1]
        inv = 1.0 / (10000.0 ** (jnp.arange(0, dh, 2, dtype=F32) / dh))
        ang = jnp.arange(t, dtype=F32)[:, None] * inv[None]
        c, s = jnp.cos(ang)[None, :, None], jnp.sin(ang)[None, :, None]
        x1, x2 = x[..., ::2], x[..., 1::2]
        return jnp.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], -1)

    def layer(q, x):
        b, t, d = x.shape
        dh = d // H
        h = rms(x, q["n1"])
        qq = rope((h @ q["q"]).reshape(b, t, H, dh))
        kk = jnp.repeat(rope((h @ q["k"]).reshape(b, t, KV, dh)), H // KV, 2)
        vv = jnp.repeat((h @ q["v"]).reshape(b, t, KV, dh), H // KV, 2)
        i = jnp.arange(t)[:, None]
        j = jnp.arange(t)[None]
        allowed = (j <= i) & ((i - j < W) | (j < NS))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) * (dh ** -0.5)
        s = jnp.where(allowed, s, -1e30)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d)
        x = x + o @ q["o"]
        f = jnp.square(jax.nn.relu(rms(x, q["n2"]) @ q["f1"]))
        return x + f @ q["f2"]

    def loss(p, tok):
        x = p["emb"][tok]
        for q in p["layers"]:
            x = layer(q, x)
        logits = rms(x, p["nf"]) @ p["emb"].T
        V = logits.shape[-1]
        tgt = jax.nn.one_hot(tok[:, 1:], V) * 0.9 + 0.1 / V
        return -jnp.mean(jnp.sum(tgt * jax.nn.log_softmax(logits[:, :-1], -1), -1))

    def step(p, m, v, t, tok):
        l, g = jax.value_and_grad(loss)(p, tok)
        lr = 3e-4 * 0.5 * (1.0 + jnp.cos(jnp.pi * jnp.minimum(t / 2000.0, 1.0)))
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.95, wd=0.1)
        return l, p, m, v
    D, V, T = 32, 64, 32
    q = {"n1": S(D), "q": S(D, D), "k": S(D, KV * D // H), "v": S(D, KV * D // H), "o": S(D, D),
         "n2": S(D), "f1": S(D, 80), "f2": S(80, D)}
    p = {"emb": S(V, D), "layers": [q, dict(q), dict(q)], "nf": S(D)}
    return step, (p, p, p, S(), S(8, T, dtype=I32))


def cait_class_attention_layerscale():
    """CaiT image classifier: 4x4 patches of 32x32 images (64 tokens), three pre-LN
    self-attention layers with per-channel LayerScale on both residual branches, then a class
    token introduced late and refined by two class-attention layers in which only the class
    token queries the keys/values of [cls; patches] (projected per part, concatenated);
    head on the class token, soft-target
    (mixup-style) cross-entropy; AdamW with clipping."""
    def sa(q, x):
        h = _ln(x, q["g1"], q["b1"])
        x = x + q["ls1"] * _mha(h, h, q, "", 4)
        return x + q["ls2"] * (jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"]) @ q["f2"])

    def ca(q, cls, x):
        b, t, d = x.shape
        H, dh = 4, d // 4
        hc, hx = _ln(cls, q["g1"], q["b1"]), _ln(x, q["g1"], q["b1"])
        qc = (hc[:, 0] @ q["q"]).reshape(b, H, dh)
        k = jnp.concatenate([hc @ q["k"], hx @ q["k"]], 1).reshape(b, t + 1, H, dh)
        v = jnp.concatenate([hc @ q["v"], hx @ q["v"]], 1).reshape(b, t + 1, H, dh)
        a = jax.nn.softmax(jnp.einsum("bhd,bkhd->bhk", qc, k) / math.sqrt(dh), -1)
        o = jnp.einsum("bhk,bkhd->bhd", a, v).reshape(b, 1, d) @ q["o"]
        cls = cls + q["ls1"] * o
        return cls + q["ls2"] * (jax.nn.gelu(_ln(cls, q["g2"], q["b2"]) @ q["f1"]) @ q["f2"])

    def loss(p, img, soft):
        x = _conv(img, p["patch"], 4, "VALID") + p["pb"]
        n, D = x.shape[0], x.shape[-1]
        x = x.reshape(n, -1, D) + p["pos"]
        for q in p["sa"]:
            x = sa(q, x)
        cls = jnp.broadcast_to(p["cls"], (n, 1, D))
        for q in p["ca"]:
            cls = ca(q, cls, x)
        logits = _ln(cls[:, 0], p["gf"], p["bf"]) @ p["head"]
        return -jnp.mean(jnp.sum(soft * jax.nn.log_softmax(logits, -1), -1))

    def step(p, m, v, t, img, soft):
        l, g = jax.value_and_grad(loss)(p, img, soft)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=5e-4, wd=0.05)
        return l, p, m, v
    D = 64
    q = _attn_params({"g1": S(D), "b1": S(D), "g2": S(D), "b2": S(D), "f1": S(D, 128),
                      "f2": S(128, D), "ls1": S(D), "ls2": S(D)}, "", D)
    p = {"patch": S(4, 4, 3, D), "pb": S(D), "pos": S(64, D), "sa": [q, dict(q), dict(q)],
         "cls": S(1, 1, D), "ca": [dict(q), dict(q)], "gf": S(D), "bf": S(D), "head": S(D, 10)}
    return step, (p, p, p, S(), S(8, 32, 32, 3), S(8, 10))


# ----------------------------------------------------------------------------- rnn / scan


def sru_highway_recurrence_scan():
    """Bidirectional Simple Recurrent Unit tagger: each direction computes all three input
    projections in one matmul, then a lax.scan runs the elementwise recurrence with
    vector-valued forget and reset gates that also read the previous cell (v * c_{t-1}), a
    highway connection scaled by alpha, and padding masked with jnp.where from lengths; two
    bidirectional layers with a projection, residual and LayerNorm; masked per-token
    cross-entropy; Adam."""
    def sru(q, x, mask):
        B, T, D = x.shape
        xt, uf, ur = jnp.split(x @ q["W"], 3, -1)

        def body(c, inp):
            xt_, uf_, ur_, x_, m_ = inp
            f = jax.nn.sigmoid(uf_ + q["vf"] * c + q["bf"])
            r = jax.nn.sigmoid(ur_ + q["vr"] * c + q["br"])
            cn = jnp.where(m_[:, None] > 0, f * c + (1 - f) * xt_, c)
            return cn, r * cn + (1 - r) * x_ * q["alpha"]
        sw = lambda a: jnp.swapaxes(a, 0, 1)
        _, h = lax.scan(body, jnp.zeros((B, D)), (sw(xt), sw(uf), sw(ur), sw(x), sw(mask)))
        return sw(h)

    def loss(p, tok, lens, tags):
        T = tok.shape[1]
        mask = (jnp.arange(T)[None] < lens[:, None]).astype(F32)
        x = p["emb"][tok]
        for q in p["layers"]:
            fw = sru(q["f"], x, mask)
            bw = jnp.flip(sru(q["b"], jnp.flip(x, 1), jnp.flip(mask, 1)), 1)
            x = _ln(jnp.concatenate([fw, bw], -1) @ q["proj"] + x, q["g"], q["bb"])
        logp = jax.nn.log_softmax(x @ p["out"], -1)
        nll = -jnp.take_along_axis(logp, tags[..., None], -1)[..., 0]
        return jnp.sum(nll * mask) / jnp.maximum(jnp.sum(mask), 1.0)

    def step(p, m, v, t, tok, lens, tags):
        l, g = jax.value_and_grad(loss)(p, tok, lens, tags)
        p, m, v = _adam(p, m, v, g, t, lr=2e-3)
        return l, p, m, v
    D = 32
    d = {"W": S(D, 3 * D), "vf": S(D), "vr": S(D), "bf": S(D), "br": S(D), "alpha": S(D)}
    lay = {"f": d, "b": dict(d), "proj": S(2 * D, D), "g": S(D), "bb": S(D)}
    p = {"emb": S(60, D), "layers": [lay, {k: (dict(x) if isinstance(x, dict) else x)
                                           for k, x in lay.items()}], "out": S(D, 9)}
    return step, (p, p, p, S(), S(8, 24, dtype=I32), S(8, dtype=I32), S(8, 24, dtype=I32))


def liquid_time_constant_ode_scan():
    """Liquid time-constant network on irregularly sampled sequences: a lax.scan over time
    whose cell unfolds the LTC ODE dx/dt = -(1/tau + f) x + f A four times with the fused
    semi-implicit Euler solver at the per-sample step dt/4, f = sigmoid(W_rec x + W_in I + b)
    with a fixed sparse wiring mask built from arange; eight motor neurons read out at every
    step; MSE regression; Adam with clipping."""
    UNF = 4

    def loss(p, seq, dts, y):
        B = seq.shape[0]
        N = p["A"].shape[0]
        ii = jnp.arange(N)
        wiring = (((ii[:, None] + 2 * ii[None]) % 3) != 0).astype(F32)
        Wr = p["Wr"] * wiring
        tau = jax.nn.softplus(p["tau"]) + 0.1
        I = jnp.tanh(seq @ p["win"] + p["bin"])

        def body(x, inp):
            i_t, dt = inp
            h = (dt / UNF)[:, None]
            ui = i_t @ p["Wi"] + p["b"]
            for _ in range(UNF):
                f = jax.nn.sigmoid(x @ Wr + ui)
                x = (x + h * f * p["A"]) / (1.0 + h * (1.0 / tau + f))
            return x, x
        _, xs = lax.scan(body, jnp.zeros((B, N)), (jnp.swapaxes(I, 0, 1), dts.T))
        out = jnp.swapaxes(xs, 0, 1)[:, :, :8] @ p["wout"] + p["bout"]
        return jnp.mean(jnp.square(out - y))

    def step(p, m, v, t, seq, dts, y):
        l, g = jax.value_and_grad(loss)(p, seq, dts, y)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=5e-3)
        return l, p, m, v
    N, Din = 24, 16
    p = {"win": S(6, Din), "bin": S(Din), "Wi": S(Din, N), "Wr": S(N, N), "b": S(N), "A": S(N),
         "tau": S(N), "wout": S(8, 2), "bout": S(2)}
    return step, (p, p, p, S(), S(16, 20, 6), S(16, 20), S(16, 20, 2))


# ----------------------------------------------------------------------------- moe


def smear_merged_expert_params():
    """SMEAR (soft merging of experts with adaptive routing) text classifier: in each of two
    layers, after self-attention, a router reads the padding-masked mean of the sequence and
    its softmax weights average the four experts' FFN parameters into one per-example adapter
    (einsum over the expert axis), which is then applied to all tokens; a routing entropy
    regulariser on the batch-mean routing; Adam."""
    def smear(q, x, pad):
        pooled = jnp.sum(x * pad[..., None], 1) / jnp.maximum(jnp.sum(pad, 1, keepdims=True), 1.0)
        r = jax.nn.softmax(pooled @ q["router"], -1)                    # [B,E]
        W1 = jnp.einsum("be,edf->bdf", r, q["e1"])
        b1 = r @ q["eb1"]
        W2 = jnp.einsum("be,efd->bfd", r, q["e2"])
        h = jax.nn.gelu(jnp.einsum("btd,bdf->btf", x, W1) + b1[:, None])
        return jnp.einsum("btf,bfd->btd", h, W2), r

    def loss(p, tok, pad, labels):
        x = p["emb"][tok] + p["pos"]
        ent = 0.0
        for q in p["layers"]:
            h = _ln(x, q["g1"], q["b1"])
            x = x + _mha(h, h, q, "", 4)
            y, r = smear(q, _ln(x, q["g2"], q["b2"]), pad)
            x = x + y
            rm = jnp.mean(r, 0)
            ent = ent - jnp.sum(rm * jnp.log(rm + 1e-9))
        pooled = jnp.sum(x * pad[..., None], 1) / jnp.maximum(jnp.sum(pad, 1, keepdims=True), 1.0)
        return _xent(_ln(pooled, p["gf"], p["bf"]) @ p["head"], labels) - 0.01 * ent

    def step(p, m, v, t, tok, pad, labels):
        l, g = jax.value_and_grad(loss)(p, tok, pad, labels)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v
    D, E, F, T = 32, 4, 48, 16
    q = _attn_params({"g1": S(D), "b1": S(D), "g2": S(D), "b2": S(D), "router": S(D, E),
                      "e1": S(E, D, F), "eb1": S(E, F), "e2": S(E, F, D)}, "", D)
    p = {"emb": S(80, D), "pos": S(T, D), "layers": [q, dict(q)], "gf": S(D), "bf": S(D),
         "head": S(D, 5)}
    return step, (p, p, p, S(), S(16, T, dtype=I32), S(16, T), S(16, dtype=I32))


# ----------------------------------------------------------------------------- vae


def cvae_learned_conditional_prior():
    """Conditional VAE for structured output prediction (image completion): the recognition
    network q(z|x,y), a learned conditional prior network p(z|x) and a Bernoulli generator
    p(y|x,z); the KL between the two diagonal Gaussians is closed-form, and the hybrid
    objective mixes the CVAE bound with the GSNN reconstruction from a prior sample
    (alpha = 0.5); reparameterisation noise passed in; Adam."""
    def enc(q, x):
        h = jax.nn.softplus(x @ q["w1"] + q["b1"])
        h = jax.nn.softplus(h @ q["w2"] + q["b2"])
        return h @ q["mu"] + q["mb"], jnp.clip(h @ q["lv"] + q["lb"], -6.0, 4.0)

    def gen(q, x, z):
        h = jax.nn.relu(jnp.concatenate([x, z], -1) @ q["w1"] + q["b1"])
        h = jax.nn.relu(h @ q["w2"] + q["b2"])
        return h @ q["w3"] + q["b3"]

    def loss(p, x, y, eps, eps2):
        mq, lq = enc(p["rec"], jnp.concatenate([x, y], -1))
        mp, lp = enc(p["prior"], x)
        z = mq + jnp.exp(0.5 * lq) * eps
        rec = jnp.sum(_bce(gen(p["gen"], x, z), y), -1)
        kl = 0.5 * jnp.sum(lp - lq + (jnp.exp(lq) + jnp.square(mq - mp)) / jnp.exp(lp) - 1.0, -1)
        zp = mp + jnp.exp(0.5 * lp) * eps2
        gsnn = jnp.sum(_bce(gen(p["gen"], x, zp), y), -1)
        return jnp.mean(0.5 * (rec + kl) + 0.5 * gsnn), jnp.mean(kl)

    def step(p, m, v, t, x, y, eps, eps2):
        (l, kl), g = jax.value_and_grad(loss, has_aux=True)(p, x, y, eps, eps2)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, kl, p, m, v
    X, Y, Z, H = 48, 48, 8, 64

    def encp(i):
        return {"w1": S(i, H), "b1": S(H), "w2": S(H, H), "b2": S(H), "mu": S(H, Z), "mb": S(Z),
                "lv": S(H, Z), "lb": S(Z)}
    p = {"rec": encp(X + Y), "prior": encp(X),
         "gen": {"w1": S(X + Z, H), "b1": S(H), "w2": S(H, H), "b2": S(H), "w3": S(H, Y),
                 "b3": S(Y)}}
    return step, (p, p, p, S(), S(32, X), S(32, Y), S(32, Z), S(32, Z))


# ----------------------------------------------------------------------------- unet


def mobile_unet_separable_transposed_up():
    """Mobile UNet for binary segmentation: depthwise-separable blocks (3x3 depthwise conv,
    BN, ReLU6, 1x1 pointwise, BN, ReLU6), three strided encoder levels, a bottleneck block, and
    a decoder that upsamples with 2x2-strided lax.conv_transpose, concatenates the skip and
    applies another separable block; BCE plus soft Dice loss; Adam."""
    def sep(q, x, stride=1):
        h = jnp.clip(_bn(_dwconv(x, q["dw"], stride), q["g1"], q["b1"])[0], 0.0, 6.0)
        return jnp.clip(_bn(_conv(h, q["pw"]), q["g2"], q["b2"])[0], 0.0, 6.0)

    def up(w, x):
        return lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def loss(p, img, mask):
        h = jax.nn.relu(_conv(img, p["stem"]))
        skips = []
        for q in p["down"]:
            skips.append(h)
            h = sep(q, h, 2)
        h = sep(p["mid"], h)
        for q, w, s in zip(p["up"], p["upw"], reversed(skips)):
            h = sep(q, jnp.concatenate([up(w, h), s], -1))
        logit = _conv(h, p["out"])[..., 0]
        prob = jax.nn.sigmoid(logit)
        inter = jnp.sum(prob * mask, (1, 2))
        dice = 1.0 - (2.0 * inter + 1.0) / (jnp.sum(prob, (1, 2)) + jnp.sum(mask, (1, 2)) + 1.0)
        return jnp.mean(_bce(logit, mask)) + jnp.mean(dice)

    def step(p, m, v, t, img, mask):
        l, g = jax.value_and_grad(loss)(p, img, mask)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v

    def sp(cin, cout):
        return {"dw": S(3, 3, 1, cin), "g1": S(cin), "b1": S(cin), "pw": S(1, 1, cin, cout),
                "g2": S(cout), "b2": S(cout)}
    p = {"stem": S(3, 3, 3, 16), "down": [sp(16, 24), sp(24, 32), sp(32, 48)], "mid": sp(48, 48),
         "upw": [S(2, 2, 48, 32), S(2, 2, 32, 24), S(2, 2, 24, 16)],
         "up": [sp(64, 32), sp(48, 24), sp(32, 16)], "out": S(1, 1, 16, 1)}
    return step, (p, p, p, S(), S(4, 32, 32, 3), S(4, 32, 32))


# ----------------------------------------------------------------------------- gnn


def gcnii_initial_residual_identity_map():
    """GCNII node classifier: self-loops appended to the edge list, symmetric degree
    normalisation from jax.ops.segment_sum, and four layers each propagating by gather +
    segment_sum, mixing in the initial representation with alpha = 0.1 (initial residual) and
    the identity map ((1 - beta_l) I + beta_l W_l) with beta_l = log(lambda / l + 1); masked
    training-node cross-entropy; Adam with separate weight decay for the convolution and the
    dense weights."""
    alpha, lam = 0.1, 0.5

    def loss(p, x, src, dst, labels, train_mask):
        N = x.shape[0]
        loops = jnp.arange(N)
        s = jnp.concatenate([src, loops])
        d = jnp.concatenate([dst, loops])
        deg = jax.ops.segment_sum(jnp.ones(s.shape, F32), d, N)
        norm = lax.rsqrt(deg[s]) * lax.rsqrt(deg[d])
        h0 = jax.nn.relu(x @ p["win"] + p["bin"])
        h = h0
        for l, W in enumerate(p["convs"], 1):
            beta = math.log(lam / l + 1.0)
            agg = jax.ops.segment_sum(h[s] * norm[:, None], d, N)
            sup = (1 - alpha) * agg + alpha * h0
            h = jax.nn.relu((1 - beta) * sup + beta * (sup @ W))
        logp = jax.nn.log_softmax(h @ p["wout"], -1)
        nll = -jnp.take_along_axis(logp, labels[:, None], -1)[:, 0]
        return jnp.sum(nll * train_mask) / jnp.maximum(jnp.sum(train_mask), 1.0)

    def step(p, m, v, t, x, src, dst, labels, train_mask):
        l, g = jax.value_and_grad(loss)(p, x, src, dst, labels, train_mask)
        g = dict(g)
        g["convs"] = [a + 0.01 * w for a, w in zip(g["convs"], p["convs"])]
        for k in ("win", "wout"):
            g[k] = g[k] + 5e-4 * p[k]
        p, m, v = _adam(p, m, v, g, t, lr=1e-2)
        return l, p, m, v
    N, E, F, H = 96, 384, 20, 32
    p = {"win": S(F, H), "bin": S(H), "convs": [S(H, H) for _ in range(4)], "wout": S(H, 5)}
    return step, (p, p, p, S(), S(N, F), S(E, dtype=I32), S(E, dtype=I32), S(N, dtype=I32),
                  S(N))


# ----------------------------------------------------------------------------- quantization


_NF4 = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
        -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
        0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
        0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0]


def nf4_blockwise_absmax_lora():
    """QLoRA-style fine-tuning with NormalFloat-4 frozen weights: each base matrix is split into
    blocks of 32, normalised by its absmax and snapped to the nearest of the 16 NF4 levels
    (argmin over a constant table), the absmaxes themselves double-quantised to int8 around
    their mean in groups of eight; rank-8 LoRA adapters scaled by 16/r on three SiLU layers are
    the only trained parameters; Adam."""
    BLK = 32

    def dq(w):
        wb = w.reshape(-1, BLK)
        absmax = jnp.max(jnp.abs(wb), -1, keepdims=True) + 1e-12
        am = absmax.reshape(-1, 8)
        c = jnp.mean(am, -1, keepdims=True)
        sc = jnp.max(jnp.abs(am - c), -1, keepdims=True) / 127.0 + 1e-12
        amq = (jnp.round((am - c) / sc) * sc + c).reshape(-1, 1)
        lv = jnp.array(_NF4, F32)
        idx = jnp.argmin(jnp.abs((wb / absmax)[..., None] - lv), -1)
        return (lv[idx] * amq).reshape(w.shape)

    def loss(lora, base, x, labels):
        h = x
        for i, (W, (A, B)) in enumerate(zip(base, lora)):
            h = h @ dq(W) + (h @ A) @ B * (16.0 / A.shape[1])
            if i < len(base) - 1:
                h = jax.nn.silu(h)
        return _xent(h, labels)

    def step(lora, m, v, t, base, x, labels):
        l, g = jax.value_and_grad(loss)(lora, base, x, labels)
        lora, m, v = _adam(lora, m, v, g, t, lr=2e-4)
        return l, lora, m, v
    base = [S(48, 128), S(128, 128), S(128, 16)]
    lora = [(S(48, 8), S(8, 128)), (S(128, 8), S(8, 128)), (S(128, 8), S(8, 16))]
    return step, (lora, lora, lora, S(), base, S(32, 48), S(32, dtype=I32))


# ----------------------------------------------------------------------------- remat


def remat_scanned_mixer_nested_policies():
    """MLP-Mixer with four blocks stacked and run by lax.scan, the scanned block wrapped in
    jax.checkpoint with nothing_saveable, and inside it the token-mixing MLP wrapped again in
    jax.checkpoint with dots_saveable (nested remat inside scan); the block also emits the mean
    squared channel-MLP output as a scanned activity regulariser; 4x4 patches of 32x32 images,
    cross-entropy; Adam."""
    def token_mix(q, h):
        y = jax.nn.gelu(jnp.einsum("ntc,ts->nsc", h, q["t1"]) + q["tb1"][None, :, None])
        return jnp.einsum("nsc,st->ntc", y, q["t2"])
    tm = jax.checkpoint(token_mix, policy=jax.checkpoint_policies.dots_saveable)

    def block(x, q):
        x = x + tm(q, _ln(x, q["g1"], q["b1"]))
        y = jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["c1"] + q["cb1"]) @ q["c2"]
        return x + y, jnp.mean(jnp.square(y))
    body = jax.checkpoint(block, policy=jax.checkpoint_policies.nothing_saveable)

    def loss(p, img, labels):
        x = _conv(img, p["patch"], 4, "VALID") + p["pb"]
        n, C = x.shape[0], x.shape[-1]
        x, act = lax.scan(body, x.reshape(n, -1, C), p["blocks"])
        logits = _ln(jnp.mean(x, 1), p["gf"], p["bf"]) @ p["head"]
        return _xent(logits, labels) + 1e-4 * jnp.sum(act)

    def step(p, m, v, t, img, labels):
        l, g = jax.value_and_grad(loss)(p, img, labels)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3, wd=0.01)
        return l, p, m, v
    L, C, T = 4, 32, 64
    blocks = {"g1": S(L, C), "b1": S(L, C), "t1": S(L, T, 32), "tb1": S(L, 32), "t2": S(L, 32, T),
              "g2": S(L, C), "b2": S(L, C), "c1": S(L, C, 96), "cb1": S(L, 96), "c2": S(L, 96, C)}
    p = {"patch": S(4, 4, 3, C), "pb": S(C), "blocks": blocks, "gf": S(C), "bf": S(C),
         "head": S(C, 10)}
    return step, (p, p, p, S(), S(16, 32, 32, 3), S(16, dtype=I32))


def remat_timesformer_divided_space_time():
    """TimeSformer video classifier with divided space-time attention: per block, temporal
    attention across the four frames at each patch position (tagged with checkpoint_name),
    then spatial attention within each frame, then an MLP; each block is checkpointed with
    save_from_both_policies(checkpoint_dots_with_no_batch_dims, save_only_these_names of the
    temporal output); two blocks, mean-pooled head; Adam."""
    def block(q, x):
        b, f, n, d = x.shape
        xt = jnp.swapaxes(x, 1, 2).reshape(b * n, f, d)
        h = _ln(xt, q["gt"], q["bt"])
        tt = checkpoint_name(_mha(h, h, q, "t", 4), "temporal_out")
        x = x + jnp.swapaxes((tt @ q["tfc"]).reshape(b, n, f, d), 1, 2)
        h = _ln(x.reshape(b * f, n, d), q["gs"], q["bs"])
        x = x + _mha(h, h, q, "s", 4).reshape(b, f, n, d)
        return x + jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"]) @ q["f2"]
    pol = jax.checkpoint_policies.save_from_both_policies(
        jax.checkpoint_policies.checkpoint_dots_with_no_batch_dims,
        jax.checkpoint_policies.save_only_these_names("temporal_out"))
    blk = jax.checkpoint(block, policy=pol)

    def loss(p, vid, labels):
        b, f, hh, ww, c = vid.shape
        x = _conv(vid.reshape(b * f, hh, ww, c), p["patch"], 4, "VALID") + p["pb"]
        D = x.shape[-1]
        x = x.reshape(b, f, -1, D) + p["pos"] + p["tpos"][:, None]
        for q in p["blocks"]:
            x = blk(q, x)
        return _xent(_ln(jnp.mean(x, (1, 2)), p["gf"], p["bf"]) @ p["head"], labels)

    def step(p, m, v, t, vid, labels):
        l, g = jax.value_and_grad(loss)(p, vid, labels)
        p, m, v = _adam(p, m, v, g, t, lr=3e-4)
        return l, p, m, v
    D = 32
    q = _attn_params(_attn_params({"gt": S(D), "bt": S(D), "tfc": S(D, D), "gs": S(D),
                                   "bs": S(D), "g2": S(D), "b2": S(D), "f1": S(D, 64),
                                   "f2": S(64, D)}, "t", D), "s", D)
    p = {"patch": S(4, 4, 3, D), "pb": S(D), "pos": S(16, D), "tpos": S(4, D),
         "blocks": [q, dict(q)], "gf": S(D), "bf": S(D), "head": S(D, 12)}
    return step, (p, p, p, S(), S(8, 4, 16, 16, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- custom_vjp


def _ns_sqrtm_fwd(A):
    C = A.shape[-1]
    I = jnp.eye(C, dtype=A.dtype)
    tr = jnp.trace(A, axis1=-2, axis2=-1)[..., None, None]
    Y = A / tr
    Z = jnp.broadcast_to(I, A.shape)
    for _ in range(5):
        T = 0.5 * (3.0 * I - Z @ Y)
        Y, Z = Y @ T, T @ Z
    return Y * jnp.sqrt(tr), (A,)


@jax.custom_vjp
def _ns_sqrtm(A):
    return _ns_sqrtm_fwd(A)[0]


def _ns_sqrtm_bwd(res, g):
    (A,) = res
    e, U = jnp.linalg.eigh(A)
    s = jnp.sqrt(jnp.maximum(e, 1e-8))
    Ut = jnp.swapaxes(U, -1, -2)
    gs = 0.5 * (g + jnp.swapaxes(g, -1, -2))
    K = 1.0 / (s[..., :, None] + s[..., None, :])
    return (U @ ((Ut @ gs @ U) * K) @ Ut,)


_ns_sqrtm.defvjp(_ns_sqrtm_fwd, _ns_sqrtm_bwd)


def isqrt_cov_pooling_custom_vjp_lyapunov():
    """iSQRT-COV second-order pooling CNN: conv/BN/ReLU features reduced by a 1x1 conv to 16
    channels, their covariance over the 8x8 positions plus a ridge, and its matrix square root
    as a custom_vjp whose forward is five coupled Newton-Schulz iterations after trace
    normalisation and whose backward solves the Lyapunov equation in the eigenbasis
    (Daleckii-Krein, jnp.linalg.eigh); the upper triangle (constant triu indices) feeds a
    linear classifier; momentum SGD with weight decay."""
    def loss(p, x, labels):
        h = x
        for i, (k, s) in enumerate(zip(p["convs"], (1, 2, 1))):
            h = jax.nn.relu(_bn(_conv(h, k["w"], s), k["g"], k["b"])[0])
        h = _conv(h, p["red"])                                         # [N,8,8,16]
        n, C = h.shape[0], h.shape[-1]
        X = h.reshape(n, -1, C)
        Xc = X - jnp.mean(X, 1, keepdims=True)
        cov = jnp.einsum("nmc,nmd->ncd", Xc, Xc) / X.shape[1] + 1e-3 * jnp.eye(C)
        R = _ns_sqrtm(cov)
        iu, ju = jnp.triu_indices(C)
        f = R[:, iu, ju]
        return _xent(f @ p["fc"] + p["fcb"], labels)

    def step(p, mom, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        p, mom = _momentum(p, mom, g, 0.02, 0.9, 1e-4)
        return l, p, mom
    cv = lambda i, o: {"w": S(3, 3, i, o), "g": S(o), "b": S(o)}
    p = {"convs": [cv(3, 16), cv(16, 32), cv(32, 32)], "red": S(1, 1, 32, 16),
         "fc": S(136, 10), "fcb": S(10)}
    return step, (p, p, S(8, 16, 16, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- control


def branchy_early_exit_cond_cascade():
    """BranchyNet-style early-exit CNN: three conv stages with an exit head after each; the loss
    always trains the first exit, then a lax.cond on the batch-mean softmax confidence of that
    exit either stops or runs the second stage, whose own nested lax.cond decides whether the
    third stage runs too; the learning rate comes from a lax.switch over warmup / constant /
    cosine phases picked from the step count; momentum SGD."""
    def conv_stage(k, x, pool=True):
        h = jax.nn.relu(_conv(x, k["w"]) + k["b"])
        return _maxpool(h) if pool else h

    def loss(p, x, labels, thr):
        c = p["convs"]
        h1 = conv_stage(c[0], x)                                        # [N,8,8,16]
        lo1 = jnp.mean(h1, (1, 2)) @ p["e1"]
        l1 = _xent(lo1, labels)
        conf1 = jnp.mean(jnp.max(jax.nn.softmax(lo1, -1), -1))

        def deep(h1):
            h2 = conv_stage(c[1], h1)                                   # [N,4,4,32]
            lo2 = jnp.mean(h2, (1, 2)) @ p["e2"]
            l2 = _xent(lo2, labels)
            conf2 = jnp.mean(jnp.max(jax.nn.softmax(lo2, -1), -1))

            def deeper(h2):
                h3 = conv_stage(c[2], h2, pool=False)                   # [N,4,4,48]
                return 0.5 * l2 + _xent(jnp.mean(h3, (1, 2)) @ p["e3"], labels)
            return lax.cond(conf2 > thr, lambda h: l2, deeper, h2)
        return 0.3 * l1 + lax.cond(conf1 > thr, lambda h: 0.0 * l1, deep, h1)

    def step(p, mom, t, x, labels, thr):
        l, g = jax.value_and_grad(loss)(p, x, labels, thr)
        phase = (t >= 100.0).astype(I32) + (t >= 1000.0).astype(I32)
        lr = lax.switch(phase, [lambda t: 0.05 * t / 100.0, lambda t: 0.05 + 0.0 * t,
                                lambda t: 0.025 * (1.0 + jnp.cos(jnp.pi * jnp.minimum(
                                    (t - 1000.0) / 4000.0, 1.0)))], t)
        p, mom = _momentum(p, mom, g, lr, 0.9, 5e-4)
        return l, p, mom
    cv = lambda i, o: {"w": S(3, 3, i, o), "b": S(o)}
    p = {"convs": [cv(3, 16), cv(16, 32), cv(32, 48)], "e1": S(16, 10), "e2": S(32, 10),
         "e3": S(48, 10)}
    return step, (p, p, S(), S(16, 16, 16, 3), S(16, dtype=I32), S())


def pgd_adversarial_fori_switch_norm():
    """Madry-style adversarial training of a small CNN: a projected-gradient attack runs five
    steps in a lax.fori_loop, each taking jax.grad of the loss with respect to the input and
    applying, via lax.switch on a passed-in norm id, either an L-inf signed step with clipping
    to the eps-box or an L2 normalised step with projection onto the eps-ball, then clipping
    the image to [0, 1]; the detached perturbation enters a half-clean, half-adversarial
    cross-entropy; momentum SGD with weight decay."""
    EPS, STEPS = 8.0 / 255.0, 5

    def model(p, x):
        h = _maxpool(jax.nn.relu(_conv(x, p["c1"]) + p["b1"]))
        h = _maxpool(jax.nn.relu(_conv(h, p["c2"]) + p["b2"]))
        h = jax.nn.relu(h.reshape(h.shape[0], -1) @ p["f1"] + p["fb1"])
        return h @ p["f2"] + p["fb2"]

    def attack(p, x, y, delta0, norm_id):
        alpha = 2.5 * EPS / STEPS
        gx = jax.grad(lambda d: _xent(model(p, x + d), y))

        def linf(d, g):
            return jnp.clip(d + alpha * jnp.sign(g), -EPS, EPS)

        def l2(d, g):
            gn = g / (jnp.sqrt(jnp.sum(g * g, (1, 2, 3), keepdims=True)) + 1e-12)
            d = d + 4.0 * alpha * gn
            n = jnp.sqrt(jnp.sum(d * d, (1, 2, 3), keepdims=True))
            return d * jnp.minimum(1.0, 4.0 * EPS / (n + 1e-12))

        def body(i, d):
            d = lax.switch(norm_id, [linf, l2], d, gx(d))
            return jnp.clip(x + d, 0.0, 1.0) - x
        return lax.fori_loop(0, STEPS, body, delta0)

    def loss(p, x, y, delta):
        return 0.5 * _xent(model(p, x), y) + 0.5 * _xent(model(p, x + delta), y)

    def step(p, mom, x, y, delta0, norm_id):
        delta = lax.stop_gradient(attack(p, x, y, delta0, norm_id))
        l, g = jax.value_and_grad(loss)(p, x, y, delta)
        p, mom = _momentum(p, mom, g, 0.02, 0.9, 5e-4)
        return l, p, mom
    p = {"c1": S(3, 3, 1, 16), "b1": S(16), "c2": S(3, 3, 16, 32), "b2": S(32),
         "f1": S(512, 64), "fb1": S(64), "f2": S(64, 10), "fb2": S(10)}
    return step, (p, p, S(16, 16, 16, 1), S(16, dtype=I32), S(16, 16, 16, 1), S(dtype=I32))


# ----------------------------------------------------------------------------- sort / top_k


def tome_bipartite_token_merging():
    """ViT with ToMe token merging on 64 patch tokens (64 -> 48 -> 32): after each of the
    first two blocks the tokens are split
    alternately into two sets, each token of set A finds its most similar (cosine) token in
    set B, an argsort of those scores picks the r = 16 most similar edges, and the chosen A
    tokens are size-weighted and scatter-added (.at[].add, vmapped) into their B partners
    while the rest are gathered back; attention is proportional (log token size added to the
    scores); size-weighted pooling, cross-entropy; AdamW."""
    R = 16

    def attn(q, x, size):
        b, t, d = x.shape
        H, dh = 4, d // 4
        qq, kk, vv = ((x @ q[k]).reshape(b, t, H, dh) for k in "qkv")
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(dh)
        s = s + jnp.log(size)[:, None, None, :]
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d)
        return o @ q["o"], kk.reshape(b, t, d)

    def merge(x, keys, size, r):
        ka, kb = keys[:, ::2], keys[:, 1::2]
        ka = ka / jnp.linalg.norm(ka, axis=-1, keepdims=True)
        kb = kb / jnp.linalg.norm(kb, axis=-1, keepdims=True)
        sim = jnp.einsum("bid,bjd->bij", ka, kb)
        node_max, node_idx = jnp.max(sim, -1), jnp.argmax(sim, -1)
        order = jnp.argsort(-node_max, -1)
        src_idx, keep_idx = order[:, :r], order[:, r:]
        dst_idx = jnp.take_along_axis(node_idx, src_idx, -1)
        sa, sb = size[:, ::2], size[:, 1::2]
        xa, xb = x[:, ::2] * sa[..., None], x[:, 1::2] * sb[..., None]
        src = jnp.take_along_axis(xa, src_idx[..., None], 1)
        src_sz = jnp.take_along_axis(sa, src_idx, 1)
        xb = jax.vmap(lambda a, i, s: a.at[i].add(s))(xb, dst_idx, src)
        sb = jax.vmap(lambda a, i, s: a.at[i].add(s))(sb, dst_idx, src_sz)
        xk = jnp.take_along_axis(xa, keep_idx[..., None], 1)
        sk = jnp.take_along_axis(sa, keep_idx, 1)
        sn = jnp.concatenate([sk, sb], 1)
        return jnp.concatenate([xk, xb], 1) / sn[..., None], sn

    def loss(p, img, labels):
        x = _conv(img, p["patch"], 4, "VALID") + p["pb"]
        n, D = x.shape[0], x.shape[-1]
        x = x.reshape(n, -1, D) + p["pos"]
        size = jnp.ones(x.shape[:2])
        for i, q in enumerate(p["blocks"]):
            a, keys = attn(q, _ln(x, q["g1"], q["b1"]), size)
            x = x + a
            x = x + jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"]) @ q["f2"]
            if i < 2:
                x, size = merge(x, keys, size, R)
        pooled = jnp.sum(x * size[..., None], 1) / jnp.sum(size, 1, keepdims=True)
        return _xent(_ln(pooled, p["gf"], p["bf"]) @ p["head"], labels)

    def step(p, m, v, t, img, labels):
        l, g = jax.value_and_grad(loss)(p, img, labels)
        p, m, v = _adam(p, m, v, g, t, lr=5e-4, wd=0.05)
        return l, p, m, v
    D = 32
    q = _attn_params({"g1": S(D), "b1": S(D), "g2": S(D), "b2": S(D), "f1": S(D, 64),
                      "f2": S(64, D)}, "", D)
    p = {"patch": S(4, 4, 3, D), "pb": S(D), "pos": S(64, D), "blocks": [q, dict(q), dict(q)],
         "gf": S(D), "bf": S(D), "head": S(D, 10)}
    return step, (p, p, p, S(), S(8, 32, 32, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- fft


def afno_blockdiag_softshrink_modes():
    """Adaptive Fourier Neural Operator for next-step prediction of a 2-channel 16x16 field:
    2x2 patch embedding to an 8x8 token grid; each of two blocks applies, in the rfft2 domain,
    a block-diagonal complex two-layer MLP (four blocks, real and imaginary weights, ReLU),
    soft-shrinkage with lambda = 0.01 and a hard mode truncation mask built from arange, then
    irfft2, with LayerNorm/GELU MLPs in between; linear decoding and pixel un-shuffle back to
    16x16; relative L2 loss; AdamW."""
    NB, LAM, KEEP = 4, 0.01, 3

    def afno(q, x):
        n, h, w, d = x.shape
        X = jnp.fft.rfft2(x, axes=(1, 2)).reshape(n, h, w // 2 + 1, NB, d // NB)
        xr, xi = jnp.real(X), jnp.imag(X)
        mm = lambda a, W: jnp.einsum("nhwbi,bio->nhwbo", a, W)
        o1r = jax.nn.relu(mm(xr, q["w1r"]) - mm(xi, q["w1i"]) + q["b1r"])
        o1i = jax.nn.relu(mm(xi, q["w1r"]) + mm(xr, q["w1i"]) + q["b1i"])
        o2r = mm(o1r, q["w2r"]) - mm(o1i, q["w2i"]) + q["b2r"]
        o2i = mm(o1i, q["w2r"]) + mm(o1r, q["w2i"]) + q["b2i"]
        shrink = lambda z: jnp.sign(z) * jax.nn.relu(jnp.abs(z) - LAM)
        kx = jnp.minimum(jnp.arange(h), h - jnp.arange(h))
        ky = jnp.arange(w // 2 + 1)
        keep = ((kx[:, None] <= KEEP) & (ky[None] <= KEEP)).astype(F32)[None, :, :, None, None]
        Y = (shrink(o2r) * keep + 1j * (shrink(o2i) * keep)).reshape(n, h, w // 2 + 1, d)
        return jnp.fft.irfft2(Y, s=(h, w), axes=(1, 2))

    def loss(p, field, target):
        x = _conv(field, p["enc"], 2, "VALID") + p["eb"]
        n = x.shape[0]
        for q in p["blocks"]:
            x = x + afno(q, _ln(x, q["g1"], q["b1"]))
            x = x + jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"]) @ q["f2"]
        out = (x @ p["dec"]).reshape(n, 8, 8, 2, 2, 2).transpose(0, 1, 3, 2, 4, 5)
        out = out.reshape(n, 16, 16, 2)
        num = jnp.sqrt(jnp.sum(jnp.square(out - target), (1, 2, 3)))
        den = jnp.sqrt(jnp.sum(jnp.square(target), (1, 2, 3))) + 1e-6
        return jnp.mean(num / den)

    def step(p, m, v, t, field, target):
        l, g = jax.value_and_grad(loss)(p, field, target)
        p, m, v = _adam(p, m, v, g, t, lr=5e-4, wd=0.05)
        return l, p, m, v
    D, bs = 32, 8
    q = {"g1": S(D), "b1": S(D), "w1r": S(NB, bs, bs), "w1i": S(NB, bs, bs), "b1r": S(NB, bs),
         "b1i": S(NB, bs), "w2r": S(NB, bs, bs), "w2i": S(NB, bs, bs), "b2r": S(NB, bs),
         "b2i": S(NB, bs), "g2": S(D), "b2": S(D), "f1": S(D, 64), "f2": S(64, D)}
    p = {"enc": S(2, 2, 2, D), "eb": S(D), "blocks": [q, dict(q)], "dec": S(D, 8)}
    return step, (p, p, p, S(), S(8, 16, 16, 2), S(8, 16, 16, 2))


# ----------------------------------------------------------------------------- linalg


def glow_lu_invertible_1x1_actnorm():
    """Glow normalising flow on 8x8x4 inputs: three steps of actnorm, an invertible 1x1
    convolution parameterised by its LU decomposition (fixed permutation from a constant
    table, unit lower triangle and upper triangle masked with tril/triu, diagonal
    sign * exp(log_s) so the log-determinant is H W sum(log_s)), and an affine coupling whose
    conv net gives a sigmoid scale and a shift; bits-per-dimension NLL under a standard normal;
    the first 1x1 convolution is inverted with two solve_triangular calls to report the
    reconstruction error; Adam."""
    PERMS = [[1, 3, 0, 2], [2, 0, 3, 1], [3, 2, 1, 0]]

    def lu(q):
        C = q["L"].shape[0]
        low = jnp.tril(jnp.ones((C, C)), -1)
        L = q["L"] * low + jnp.eye(C)
        U = q["U"] * low.T + jnp.diag(q["sign"] * jnp.exp(q["logs"]))
        return L, U

    def loss(p, x):
        n, h, w, c = x.shape
        hw = h * w
        logdet = jnp.zeros((n,))
        z = x
        for k, q in enumerate(p["steps"]):
            z = (z + q["an_b"]) * jnp.exp(q["an_logs"])
            logdet = logdet + hw * jnp.sum(q["an_logs"])
            L, U = lu(q)
            W = jnp.eye(c)[jnp.array(PERMS[k])] @ L @ U
            z = jnp.einsum("nhwc,dc->nhwd", z, W)
            logdet = logdet + hw * jnp.sum(q["logs"])
            za, zb = z[..., :c // 2], z[..., c // 2:]
            o = jax.nn.relu(_conv(za, q["n1"]) + q["nb1"])
            o = jax.nn.relu(_conv(o, q["n2"]) + q["nb2"])
            o = _conv(o, q["n3"]) + q["nb3"]
            s = jax.nn.sigmoid(o[..., :c // 2] + 2.0)
            zb = (zb + o[..., c // 2:]) * s
            logdet = logdet + jnp.sum(jnp.log(s), (1, 2, 3))
            z = jnp.concatenate([za, zb], -1)
        logpz = -0.5 * jnp.sum(z * z + jnp.log(2.0 * jnp.pi), (1, 2, 3))
        D = hw * c
        bpd = (-(logpz + logdet) + D * jnp.log(256.0)) / (D * jnp.log(2.0))
        return jnp.mean(bpd)

    def step(p, m, v, t, x):
        l, g = jax.value_and_grad(loss)(p, x)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        q = p["steps"][0]
        L, U = lu(q)
        c = L.shape[0]
        P = jnp.eye(c)[jnp.array(PERMS[0])]
        X = x.reshape(-1, c).T
        Y = P @ L @ U @ X
        Xr = jsl.solve_triangular(U, jsl.solve_triangular(L, P.T @ Y, lower=True,
                                                          unit_diagonal=True), lower=False)
        return l, jnp.mean(jnp.abs(Xr - X)), p, m, v
    C = 4
    q = {"an_b": S(C), "an_logs": S(C), "L": S(C, C), "U": S(C, C), "sign": S(C), "logs": S(C),
         "n1": S(3, 3, C // 2, 16), "nb1": S(16), "n2": S(1, 1, 16, 16), "nb2": S(16),
         "n3": S(3, 3, 16, C), "nb3": S(C)}
    p = {"steps": [q, dict(q), dict(q)]}
    return step, (p, p, p, S(), S(16, 8, 8, C))


def r2d2_fewshot_ridge_cholesky_head():
    """R2-D2 few-shot learner: a conv embedding (three conv/BN/leaky-ReLU/max-pool stages) of
    the support and query images of each 5-way 2-shot episode; the base learner is
    closed-form ridge regression in its Woodbury form W = X^T (X X^T + lambda I)^-1 Y solved by
    jax.scipy.linalg.cho_factor / cho_solve, with lambda, an output scale and a bias
    meta-learned; episodes vmapped; query cross-entropy and accuracy; Nesterov SGD."""
    NW = 5

    def embed(p, x):
        h = x
        for q in p["convs"]:
            h = _maxpool(jax.nn.leaky_relu(_bn(_conv(h, q["w"]), q["g"], q["b"])[0], 0.1))
        return h.reshape(h.shape[0], -1)

    def episode(p, xs, ys, xq, yq):
        Fs, Fq = embed(p, xs), embed(p, xq)
        Y = jax.nn.one_hot(ys, NW)
        K = Fs @ Fs.T + jnp.exp(p["loglam"]) * jnp.eye(Fs.shape[0])
        W = Fs.T @ jsl.cho_solve(jsl.cho_factor(K, lower=True), Y)
        logits = p["scale"] * (Fq @ W) + p["bias"]
        return _xent(logits, yq), jnp.mean((jnp.argmax(logits, -1) == yq).astype(F32))

    def loss(p, xs, ys, xq, yq):
        l, acc = jax.vmap(episode, in_axes=(None, 0, 0, 0, 0))(p, xs, ys, xq, yq)
        return jnp.mean(l), jnp.mean(acc)

    def step(p, mom, xs, ys, xq, yq):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, xs, ys, xq, yq)
        p, mom = _momentum(p, mom, g, 0.01, 0.9, 5e-4, nesterov=True)
        return l, acc, p, mom
    cv = lambda i, o: {"w": S(3, 3, i, o), "g": S(o), "b": S(o)}
    p = {"convs": [cv(3, 16), cv(16, 32), cv(32, 32)], "loglam": S(), "scale": S(), "bias": S()}
    return step, (p, p, S(4, 10, 16, 16, 3), S(4, 10, dtype=I32), S(4, 15, 16, 16, 3),
                  S(4, 15, dtype=I32))


# ----------------------------------------------------------------------------- scatter/gather


def instant_ngp_multires_hash_grid():
    """Instant-NGP image fitting: six grid levels with resolutions growing by 1.8x; each level
    gathers its four bilinear corner features from a trainable table, indexed densely where
    the grid fits and otherwise by the spatial hash (x XOR y * 2654435761) mod T in uint32;
    the concatenated features go through a tiny ReLU MLP to RGB; MSE; Adam with eps 1e-15 on
    the tables and weight decay only on the MLP."""
    L, T, Fd = 6, 1024, 2
    PR = 2654435761

    def level(table, xy, res):
        pos = xy * res
        p0 = jnp.floor(pos)
        frac = pos - p0
        p0 = p0.astype(jnp.uint32)
        out = 0.0
        for dx in (0, 1):
            for dy in (0, 1):
                cx, cy = p0[:, 0] + dx, p0[:, 1] + dy
                if (res + 1) ** 2 <= T:
                    idx = cx * (res + 1) + cy
                else:
                    idx = jnp.bitwise_xor(cx, cy * jnp.uint32(PR)) % T
                wgt = ((frac[:, 0] if dx else 1.0 - frac[:, 0])
                       * (frac[:, 1] if dy else 1.0 - frac[:, 1]))
                out = out + wgt[:, None] * table[idx.astype(I32)]
        return out

    def loss(p, xy, rgb):
        fs = [level(p["tables"][l], xy, int(4 * 1.8 ** l)) for l in range(L)]
        h = jax.nn.relu(jnp.concatenate(fs, -1) @ p["w1"])
        h = jax.nn.relu(h @ p["w2"])
        return jnp.mean(jnp.square(jax.nn.sigmoid(h @ p["w3"]) - rgb))

    def step(p, m, v, t, xy, rgb):
        l, g = jax.value_and_grad(loss)(p, xy, rgb)
        tab = {"tables": p["tables"]}
        mlp = {k: p[k] for k in ("w1", "w2", "w3")}
        t1, tm, tv = _adam(tab, {"tables": m["tables"]}, {"tables": v["tables"]},
                           {"tables": g["tables"]}, t, lr=1e-2, b2=0.99, eps=1e-15)
        m1, mm, mv = _adam(mlp, {k: m[k] for k in mlp}, {k: v[k] for k in mlp},
                           {k: g[k] for k in mlp}, t, lr=1e-2, b2=0.99, wd=1e-6)
        return l, {**t1, **m1}, {**tm, **mm}, {**tv, **mv}
    p = {"tables": S(L, T, Fd), "w1": S(L * Fd, 64), "w2": S(64, 64), "w3": S(64, 3)}
    return step, (p, p, p, S(), S(256, 2), S(256, 3))


# ----------------------------------------------------------------------------- dynamic slices


def temporal_segment_network_dynamic_clips():
    """Temporal Segment Network action recogniser: each 24-frame video is cut into three
    segments and from each a two-frame snippet is taken at a traced offset with
    lax.dynamic_slice (vmapped over videos and segments); an RGB + RGB-difference input goes
    through a small CNN, the segment logits are averaged (consensus); cross-entropy; momentum
    SGD; the mean snippet features are written into a feature queue at a traced pointer with
    lax.dynamic_update_slice."""
    K, SN = 3, 2

    def loss(p, vids, offs, labels):
        B, F, H, W, C = vids.shape
        seg = F // K
        starts = jnp.arange(K) * seg + jnp.clip(offs, 0, seg - SN)
        clips = jax.vmap(lambda v, s: jax.vmap(
            lambda st: lax.dynamic_slice(v, (st, 0, 0, 0), (SN, H, W, C)))(s))(vids, starts)
        x = jnp.concatenate([clips[:, :, 0], clips[:, :, 1] - clips[:, :, 0]], -1)
        h = x.reshape(B * K, H, W, 2 * C)
        for q in p["convs"]:
            h = _maxpool(jax.nn.relu(_conv(h, q["w"]) + q["b"]))
        feat = jnp.mean(h, (1, 2))
        logits = (feat @ p["fc"] + p["fcb"]).reshape(B, K, -1)
        return _xent(jnp.mean(logits, 1), labels), feat

    def step(p, mom, bank, ptr, vids, offs, labels):
        (l, feat), g = jax.value_and_grad(loss, has_aux=True)(p, vids, offs, labels)
        p, mom = _momentum(p, mom, g, 0.01, 0.9, 5e-4)
        B = vids.shape[0]
        f = jnp.mean(lax.stop_gradient(feat).reshape(B, K, -1), 1)
        f = f / (jnp.linalg.norm(f, axis=-1, keepdims=True) + 1e-6)
        bank = lax.dynamic_update_slice(bank, f, (ptr, 0))
        return l, p, mom, bank, (ptr + B) % bank.shape[0]
    cv = lambda i, o: {"w": S(3, 3, i, o), "b": S(o)}
    p = {"convs": [cv(6, 16), cv(16, 32)], "fc": S(32, 7), "fcb": S(7)}
    return step, (p, p, S(32, 32), S(dtype=I32), S(4, 24, 12, 12, 3), S(4, K, dtype=I32),
                  S(4, dtype=I32))


# ----------------------------------------------------------------------------- mixed precision


def bf16_geglu_rmsnorm_static_loss_scale():
    """T5 v1.1-style encoder classifier in bfloat16: f32 master weights cast to bf16 for every
    matmul, RMSNorm statistics in f32, unscaled attention with f32 scores and a padding mask,
    GEGLU feed-forward, three layers; the loss is multiplied by a static scale of 1024, the
    gradients are unscaled in f32 and the Adam update is skipped (jnp.where) when any gradient
    is non-finite."""
    SCALE = 1024.0

    def rms(x, g):
        xf = x.astype(F32)
        return (xf * lax.rsqrt(jnp.mean(xf * xf, -1, keepdims=True) + 1e-6) * g).astype(BF16)

    def mm(a, w):
        return jnp.einsum("...d,de->...e", a.astype(BF16), w.astype(BF16))

    def layer(q, x, pad):
        h = rms(x, q["n1"])
        b, t, d = h.shape
        H = 4
        qq, kk, vv = (mm(h, q[k]).reshape(b, t, H, d // H) for k in "qkv")
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk, preferred_element_type=F32)
        s = jnp.where(pad[:, None, None, :] > 0, s, -1e9)
        a = jax.nn.softmax(s, -1).astype(BF16)
        x = x + mm(jnp.einsum("bhqk,bkhd->bqhd", a, vv).reshape(b, t, d), q["o"])
        h = rms(x, q["n2"])
        return x + mm(jax.nn.gelu(mm(h, q["wi0"])) * mm(h, q["wi1"]), q["wo"])

    def loss(p, tok, pad, labels):
        x = p["emb"][tok].astype(BF16)
        for q in p["layers"]:
            x = layer(q, x, pad)
        x = rms(x, p["nf"]).astype(F32)
        pooled = jnp.sum(x * pad[..., None], 1) / jnp.maximum(jnp.sum(pad, 1, keepdims=True), 1.0)
        return _xent(pooled @ p["head"], labels) * SCALE

    def step(p, m, v, t, tok, pad, labels):
        ls, g = jax.value_and_grad(loss)(p, tok, pad, labels)
        g = tmap(lambda a: a.astype(F32) / SCALE, g)
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(a)) for a in jax.tree_util.tree_leaves(g)]))
        np_, nm, nv = _adam(p, m, v, g, t, lr=1e-3)
        sel = lambda a, b: jnp.where(finite, a, b)
        return ls / SCALE, tmap(sel, np_, p), tmap(sel, nm, m), tmap(sel, nv, v), finite
    D, F = 64, 128
    q = _attn_params({"n1": S(D), "n2": S(D), "wi0": S(D, F), "wi1": S(D, F), "wo": S(F, D)},
                     "", D)
    p = {"emb": S(96, D), "layers": [q, dict(q), dict(q)], "nf": S(D), "head": S(D, 4)}
    return step, (p, p, p, S(), S(16, 32, dtype=I32), S(16, 32), S(16, dtype=I32))


# ----------------------------------------------------------------------------- optimizers


def madgrad_dual_averaging_glu_convnet():
    """MADGRAD on a gated convolutional text classifier: embedding, four residual GLU 1-D conv
    blocks with dilation 1, 2, 4, 8 scaled by sqrt(1/2), max-over-time pooling, linear head;
    the optimiser keeps the initial point x0, the weighted gradient sum s and squared-gradient
    sum nu with lambda_k = lr sqrt(k + 1), forms z = x0 - s / (cbrt(nu) + eps) and moves the
    iterate towards z with momentum 0.9."""
    def loss(p, tok, labels):
        x = p["emb"][tok]
        for i, q in enumerate(p["blocks"]):
            a, gate = jnp.split(_c1d(x, q["w"], 2 ** i) + q["b"], 2, -1)
            x = x + a * jax.nn.sigmoid(gate) * math.sqrt(0.5)
        return _xent(jnp.max(x, 1) @ p["fc"] + p["fcb"], labels)

    def step(p, x0, s, nu, k, tok, labels):
        l, g = jax.value_and_grad(loss)(p, tok, labels)
        lam = 1e-2 * jnp.sqrt(k + 1.0)
        s = tmap(lambda s, g: s + lam * g, s, g)
        nu = tmap(lambda n, g: n + lam * g * g, nu, g)
        z = tmap(lambda x0, s, n: x0 - s / (jnp.cbrt(n) + 1e-6), x0, s, nu)
        c = 1.0 - 0.9
        p = tmap(lambda p, z: (1 - c) * p + c * z, p, z)
        return l, p, s, nu, k + 1.0
    E = 32
    blk = {"w": S(3, E, 2 * E), "b": S(2 * E)}
    p = {"emb": S(70, E), "blocks": [blk, dict(blk), dict(blk), dict(blk)], "fc": S(E, 6),
         "fcb": S(6)}
    return step, (p, p, p, p, S(), S(16, 40, dtype=I32), S(16, dtype=I32))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [mixture_density_network_gmm_nll, coral_ordinal_rank_consistent_mlp],
    "cnn": [yolo_grid_responsible_box_loss],
    "transformer": [attention_sink_sliding_window_lm, cait_class_attention_layerscale],
    "rnn": [sru_highway_recurrence_scan, liquid_time_constant_ode_scan],
    "moe": [smear_merged_expert_params],
    "vae": [cvae_learned_conditional_prior],
    "unet": [mobile_unet_separable_transposed_up],
    "gnn": [gcnii_initial_residual_identity_map],
    "quant": [nf4_blockwise_absmax_lora],
    "remat": [remat_scanned_mixer_nested_policies, remat_timesformer_divided_space_time],
    "custom_vjp": [isqrt_cov_pooling_custom_vjp_lyapunov],
    "control": [branchy_early_exit_cond_cascade, pgd_adversarial_fori_switch_norm],
    "sort": [tome_bipartite_token_merging],
    "fft": [afno_blockdiag_softshrink_modes],
    "linalg": [glow_lu_invertible_1x1_actnorm, r2d2_fewshot_ridge_cholesky_head],
    "scatter_gather": [instant_ngp_multires_hash_grid],
    "dynamic": [temporal_segment_network_dynamic_clips],
    "mixed": [bf16_geglu_rmsnorm_static_loss_scale],
    "optimizer": [madgrad_dual_averaging_glu_convnet],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["attention_sink_sliding_window_lm", "cait_class_attention_layerscale",
           "yolo_grid_responsible_box_loss", "sru_highway_recurrence_scan",
           "smear_merged_expert_params", "mobile_unet_separable_transposed_up",
           "remat_scanned_mixer_nested_policies", "remat_timesformer_divided_space_time",
           "tome_bipartite_token_merging", "afno_blockdiag_softshrink_modes",
           "bf16_geglu_rmsnorm_static_loss_scale", "pgd_adversarial_fori_switch_norm"]
SHARDED_SET = ["attention_sink_sliding_window_lm", "mixture_density_network_gmm_nll",
               "remat_timesformer_divided_space_time", "bf16_geglu_rmsnorm_static_loss_scale",
               "smear_merged_expert_params", "cvae_learned_conditional_prior",
               "madgrad_dual_averaging_glu_convnet", "yolo_grid_responsible_box_loss"]
