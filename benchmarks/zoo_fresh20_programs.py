"""Twentieth fresh set: 25 JAX programs written by a helper on 2026-11-29, kept outside the
repository as a held-out set, measured unseen at the start and end of that day's third
session and committed then (docstring kept at 3 lines: the dumps record line numbers)::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh20_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh20_programs python benchmarks/accuracy.py --data DIR

Written for JAX 0.4.30 up to the current release (no API newer than 0.4.30).
"""

from __future__ import annotations

import math

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax
from jax.ad_checkpoint import checkpoint_name
from jax.flatten_util import ravel_pytree

F32 = jnp.float32
BF16 = jnp.bfloat16
I32 = jnp.int32
U32 = jnp.uint32
tmap = jax.tree_util.tree_map
leaves = jax.tree_util.tree_leaves
CP = jax.checkpoint_policies


def S(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


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


def _rms(x, g, eps=1e-6):
    return x * lax.rsqrt(jnp.mean(jnp.square(x), -1, keepdims=True) + eps) * g


def _bn(x, g, b, axes=(0, 1, 2), eps=1e-5):
    """Training-mode batch norm over ``axes``; returns the output and the batch (mean, var)."""
    m = jnp.mean(x, axes)
    v = jnp.var(x, axes)
    return (x - m) * lax.rsqrt(v + eps) * g + b, (m, v)


def _conv(x, w, stride=1, pad="SAME", groups=1):
    return lax.conv_general_dilated(x, w, (stride, stride), pad,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                    feature_group_count=groups)


def _xent(logits, labels):
    logp = jax.nn.log_softmax(logits, -1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[..., None], -1))


def _smooth_xent(logits, labels, eps=0.1):
    C = logits.shape[-1]
    tgt = jax.nn.one_hot(labels, C) * (1.0 - eps) + eps / C
    return -jnp.mean(jnp.sum(tgt * jax.nn.log_softmax(logits, -1), -1))


def _global_clip(g, max_norm=1.0):
    n = jnp.sqrt(sum(jnp.sum(jnp.square(a)) for a in leaves(g)))
    return tmap(lambda a: a * jnp.minimum(1.0, max_norm / (n + 1e-6)), g)


def _momentum(p, mom, g, lr, mu=0.9, wd=0.0, nesterov=False):
    g = tmap(lambda g, w: g + wd * w, g, p)
    mom = tmap(lambda m, g: mu * m + g, mom, g)
    if nesterov:
        return tmap(lambda w, g, m: w - lr * (g + mu * m), p, g, mom), mom
    return tmap(lambda w, m: w - lr * m, p, mom), mom


def _maxpool(x, k=2, s=None, pad="VALID"):
    s = s or k
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, k, k, 1), (1, s, s, 1), pad)


def _avgpool3(x):
    """3x3 stride-1 SAME average pool that counts only valid pixels."""
    s = lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
    cnt = lax.reduce_window(jnp.ones((1,) + x.shape[1:3] + (1,), x.dtype), 0.0, lax.add,
                            (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
    return s / cnt


def _sw(a):
    return jnp.swapaxes(a, 0, 1)


def _cosine_lr(t, base, total, warm=0.0):
    c = 0.5 * (1.0 + jnp.cos(jnp.pi * jnp.minimum(t / total, 1.0)))
    if warm:
        c = c * jnp.minimum(1.0, (t + 1.0) / warm)
    return base * c


# ----------------------------------------------------------------------------- mlp


def node_oblivious_soft_decision_trees_entmoid():
    """NODE (neural oblivious decision ensembles) regressor on 48 tabular features: two dense
    NODE layers of 32 oblivious trees of depth 4; every tree level softly selects one
    feature (softmax over features with a learned temperature), compares it with a learned
    threshold through the entmoid-1.5 sigmoid, and the 16 leaf weights of each tree are the
    outer product of the per-level [b, 1 - b] pairs, built level by level; leaf responses
    are contracted with einsum, the second layer reads the input concatenated with the first
    layer's tree outputs (dense connection) and the prediction is the mean of all tree
    outputs; MSE loss; QHAdam (quasi-hyperbolic Adam) with nu1 = 0.7, nu2 = 1."""
    NT, DEPTH = 32, 4
    NU1, NU2, B1, B2 = 0.7, 1.0, 0.95, 0.998

    def entmoid15(x):
        pos = x >= 0
        a = jnp.abs(x)
        tau = 0.5 * (a + jnp.sqrt(jax.nn.relu(8.0 - a * a)))
        tau = jnp.where(tau <= a, 2.0, tau)
        yneg = 0.25 * jnp.square(jax.nn.relu(tau - a))
        return jnp.where(pos, 1.0 - yneg, yneg)

    def node_layer(q, x):
        sel = jax.nn.softmax(q["fsel"] * jnp.exp(q["ftemp"]), 0)
        f = jnp.einsum("bi,itd->btd", x, sel)
        b = entmoid15((f - q["thr"]) * jnp.exp(-q["logtemp"]))
        w = jnp.ones(b.shape[:2] + (1,))
        for d in range(DEPTH):
            pair = jnp.stack([b[:, :, d], 1.0 - b[:, :, d]], -1)
            w = (w[..., :, None] * pair[..., None, :]).reshape(b.shape[0], b.shape[1], -1)
        return jnp.einsum("btl,tlo->bto", w, q["resp"])

    def loss(p, x, y):
        h1 = node_layer(p["l1"], x)
        x2 = jnp.concatenate([x, h1.reshape(x.shape[0], -1)], -1)
        h2 = node_layer(p["l2"], x2)
        pred = jnp.mean(jnp.concatenate([h1, h2], 1), 1)[:, 0] + p["bias"]
        return jnp.mean(jnp.square(pred - y))

    def step(p, m, v, t, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        m = tmap(lambda m, g: B1 * m + (1 - B1) * g, m, g)
        v = tmap(lambda v, g: B2 * v + (1 - B2) * g * g, v, g)
        mh = tmap(lambda m: m / (1.0 - B1 ** t), m)
        vh = tmap(lambda v: v / (1.0 - B2 ** t), v)
        p = tmap(lambda w, g, a, b: w - 1e-3 * ((1 - NU1) * g + NU1 * a)
                 / (jnp.sqrt((1 - NU2) * g * g + NU2 * b) + 1e-8), p, g, mh, vh)
        return l, p, m, v

    def layer(din):
        return {"fsel": S(din, NT, DEPTH), "ftemp": S(), "thr": S(NT, DEPTH),
                "logtemp": S(NT, DEPTH), "resp": S(NT, 2 ** DEPTH, 1)}
    F = 48
    p = {"l1": layer(F), "l2": layer(F + NT), "bias": S()}
    return step, (p, p, p, S(), S(256, F), S(256))


def resmlp_affine_cross_patch_sublayers():
    """ResMLP image classifier on 32x32 images: 4x4 patches linearly embedded to width 96
    (64 patches), four residual blocks each made of an Affine (per-channel alpha x + beta)
    followed by a cross-patch linear layer applied along the patch axis (transpose, 64x64
    matmul, transpose back) with LayerScale, and an Affine + GELU channel MLP with
    LayerScale; final Affine, average pooling and a linear head; soft-target cross-entropy
    against mixup targets built from a passed-in permutation and mixing coefficient; LAMB
    (per-tensor trust ratio) with linear warmup and cosine decay."""
    P, D = 4, 96

    def aff(a, x):
        return x * a["alpha"] + a["beta"]

    def block(q, x):
        h = aff(q["a1"], x)
        h = jnp.swapaxes(jnp.swapaxes(h, 1, 2) @ q["tok"] + q["tokb"], 1, 2)
        x = x + q["ls1"] * h
        h = jax.nn.gelu(aff(q["a2"], x) @ q["w1"] + q["b1"]) @ q["w2"] + q["b2"]
        return x + q["ls2"] * h

    def loss(p, img, labels, perm, lam):
        n = img.shape[0]
        img = lam * img + (1.0 - lam) * img[perm]
        x = img.reshape(n, 32 // P, P, 32 // P, P, 3).transpose(0, 1, 3, 2, 4, 5)
        x = x.reshape(n, (32 // P) ** 2, P * P * 3) @ p["embed"] + p["eb"]
        for q in p["blocks"]:
            x = block(q, x)
        logits = jnp.mean(aff(p["af"], x), 1) @ p["head"] + p["hb"]
        y = jax.nn.one_hot(labels, 10)
        tgt = lam * y + (1.0 - lam) * y[perm]
        return -jnp.mean(jnp.sum(tgt * jax.nn.log_softmax(logits, -1), -1))

    def lamb(p, m, v, g, t, lr, wd=0.05, b1=0.9, b2=0.999):
        m = tmap(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = tmap(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)

        def upd(w, m, v):
            u = (m / (1 - b1 ** t)) / (jnp.sqrt(v / (1 - b2 ** t)) + 1e-6) + wd * w
            wn, un = jnp.linalg.norm(w), jnp.linalg.norm(u)
            r = jnp.where((wn > 0) & (un > 0), wn / un, 1.0)
            return w - lr * r * u
        return tmap(upd, p, m, v), m, v

    def step(p, m, v, t, img, labels, perm, lam):
        l, g = jax.value_and_grad(loss)(p, img, labels, perm, lam)
        p, m, v = lamb(p, m, v, g, t, _cosine_lr(t, 5e-3, 20000.0, warm=500.0))
        return l, p, m, v
    N = (32 // P) ** 2
    af = lambda: {"alpha": S(D), "beta": S(D)}
    blk = {"a1": af(), "tok": S(N, N), "tokb": S(N), "ls1": S(D), "a2": af(),
           "w1": S(D, 4 * D), "b1": S(4 * D), "w2": S(4 * D, D), "b2": S(D), "ls2": S(D)}
    p = {"embed": S(P * P * 3, D), "eb": S(D), "blocks": [blk, dict(blk), dict(blk), dict(blk)],
         "af": af(), "head": S(D, 10), "hb": S(10)}
    return step, (p, p, p, S(), S(32, 32, 32, 3), S(32, dtype=I32), S(32, dtype=I32), S())


# ----------------------------------------------------------------------------- cnn


def inception_factorized_asym_kernels_aux_head():
    """Inception-v3-style network on 32x32 images: conv-BN-ReLU units everywhere; an
    Inception-A module (1x1, 1x1 -> 3x3, 1x1 -> 3x3 -> 3x3 and 3x3 average-pool -> 1x1
    branches concatenated), a grid-reduction module (strided 3x3 branch, 1x1 -> 3x3 ->
    strided 3x3 branch and a strided 3x3 max-pool), an Inception-B module with factorised
    asymmetric 1x7 / 7x1 kernels, an auxiliary classifier on the reduced grid weighted 0.3,
    and a global-average-pooled head; label smoothing 0.1; BN running averages returned;
    RMSProp (decay 0.9, eps 1.0) with momentum and exponential learning-rate decay."""

    def cbr(q, x, stride=1, pad="SAME"):
        h, st = _bn(_conv(x, q["w"], stride, pad), q["g"], q["b"])
        return jax.nn.relu(h), st

    def run(qs, x, stats, strides=None):
        for i, q in enumerate(qs):
            x, st = cbr(q, x, (strides or [1] * len(qs))[i])
            stats.append(st)
        return x

    def loss(p, img, labels):
        stats = []
        x = run(p["stem"], img, stats)
        a = p["incA"]
        x = jnp.concatenate([run(a["b1"], x, stats), run(a["b3"], x, stats),
                             run(a["b33"], x, stats), run(a["bp"], _avgpool3(x), stats)], -1)
        r = p["red"]
        x = jnp.concatenate([run(r["b3"], x, stats, [2]), run(r["b33"], x, stats, [1, 1, 2]),
                             _maxpool(x, 3, 2, "SAME")], -1)
        aux = jnp.mean(run(p["aux"]["c"], x, stats), (1, 2)) @ p["aux"]["fc"]
        b = p["incB"]
        x = jnp.concatenate([run(b["b1"], x, stats), run(b["b7"], x, stats),
                             run(b["bp"], _avgpool3(x), stats)], -1)
        logits = jnp.mean(x, (1, 2)) @ p["fc"] + p["fcb"]
        return _smooth_xent(logits, labels) + 0.3 * _smooth_xent(aux, labels), stats

    def step(p, ms, mom, run_st, t, img, labels):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels)
        run_st = tmap(lambda r, s: 0.99 * r + 0.01 * s, run_st, lax.stop_gradient(stats))
        lr = 0.045 * 0.94 ** jnp.floor(t / 2000.0)
        ms = tmap(lambda s, g: 0.9 * s + 0.1 * g * g, ms, g)
        mom = tmap(lambda b, g, s: 0.9 * b + lr * g / jnp.sqrt(s + 1.0), mom, g, ms)
        p = tmap(lambda w, b: w - b, p, mom)
        return l, p, ms, mom, run_st

    run_st = []

    def u(kh, kw, ci, co):
        run_st.append((S(co), S(co)))
        return {"w": S(kh, kw, ci, co), "g": S(co), "b": S(co)}
    stem = [u(3, 3, 3, 32), u(3, 3, 32, 48)]
    incA = {"b1": [u(1, 1, 48, 32)], "b3": [u(1, 1, 48, 24), u(3, 3, 24, 32)],
            "b33": [u(1, 1, 48, 24), u(3, 3, 24, 32), u(3, 3, 32, 32)],
            "bp": [u(1, 1, 48, 16)]}
    red = {"b3": [u(3, 3, 112, 64)], "b33": [u(1, 1, 112, 32), u(3, 3, 32, 48), u(3, 3, 48, 48)]}
    aux = {"c": [u(1, 1, 224, 64)], "fc": S(64, 10)}
    incB = {"b1": [u(1, 1, 224, 64)],
            "b7": [u(1, 1, 224, 48), u(1, 7, 48, 48), u(7, 1, 48, 64)],
            "bp": [u(1, 1, 224, 32)]}
    p = {"stem": stem, "incA": incA, "red": red, "aux": aux, "incB": incB, "fc": S(160, 10),
         "fcb": S(10)}
    return step, (p, p, p, run_st, S(), S(32, 32, 32, 3), S(32, dtype=I32))


def cbam_channel_spatial_attention_resnet():
    """ResNet-14 with CBAM on 32x32 images: three stages of two basic blocks (32, 64, 128
    channels, strided 3x3 + 1x1 projection shortcut at stage entry); every block refines its
    residual branch with the convolutional block attention module -- channel attention from a
    shared two-layer MLP over global average- and max-pooled descriptors (sigmoid of the
    sum), then spatial attention from a 7x7 convolution over the channel-wise mean and max
    maps; training-mode batch norm with running averages returned; cross-entropy; SGD with
    momentum, weight decay and a cosine schedule."""

    def cbam(q, x):
        a = jax.nn.relu(jnp.mean(x, (1, 2)) @ q["m1"]) @ q["m2"]
        b = jax.nn.relu(jnp.max(x, (1, 2)) @ q["m1"]) @ q["m2"]
        x = x * jax.nn.sigmoid(a + b)[:, None, None, :]
        s = jnp.concatenate([jnp.mean(x, -1, keepdims=True), jnp.max(x, -1, keepdims=True)], -1)
        return x * jax.nn.sigmoid(_conv(s, q["sp"]))

    def block(q, x, stride):
        h, s1 = _bn(_conv(x, q["c1"], stride), q["g1"], q["b1"])
        h, s2 = _bn(_conv(jax.nn.relu(h), q["c2"]), q["g2"], q["b2"])
        h = cbam(q["cbam"], h)
        st = [s1, s2]
        if "sc" in q:
            x, s3 = _bn(_conv(x, q["sc"], stride), q["gs"], q["bs"])
            st.append(s3)
        return jax.nn.relu(h + x), st

    def loss(p, img, labels):
        h, s0 = _bn(_conv(img, p["stem"]), p["sg"], p["sb"])
        h, stats = jax.nn.relu(h), [s0]
        for i, q in enumerate(p["blocks"]):
            h, st = block(q, h, 2 if i in (2, 4) else 1)
            stats.append(st)
        logits = jnp.mean(h, (1, 2)) @ p["fc"] + p["fcb"]
        return _xent(logits, labels), stats

    def step(p, mom, run, t, img, labels):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels)
        run = tmap(lambda r, s: 0.9 * r + 0.1 * s, run, lax.stop_gradient(stats))
        p, mom = _momentum(p, mom, g, _cosine_lr(t, 0.1, 30000.0), 0.9, 5e-4)
        return l, p, mom, run
    blocks, run = [], [(S(32), S(32))]
    cin = 32
    for c in (32, 32, 64, 64, 128, 128):
        q = {"c1": S(3, 3, cin, c), "g1": S(c), "b1": S(c), "c2": S(3, 3, c, c), "g2": S(c),
             "b2": S(c), "cbam": {"m1": S(c, c // 8), "m2": S(c // 8, c), "sp": S(7, 7, 2, 1)}}
        st = [(S(c), S(c)), (S(c), S(c))]
        if cin != c:
            q.update(sc=S(1, 1, cin, c), gs=S(c), bs=S(c))
            st.append((S(c), S(c)))
        blocks.append(q)
        run.append(st)
        cin = c
    p = {"stem": S(3, 3, 3, 32), "sg": S(32), "sb": S(32), "blocks": blocks, "fc": S(128, 10),
         "fcb": S(10)}
    return step, (p, p, run, S(), S(32, 32, 32, 3), S(32, dtype=I32))


# ----------------------------------------------------------------------------- transformer


def cosformer_relu_cos_reweighted_linear_attention():
    """cosFormer causal language model: attention is linear -- queries and keys go through
    ReLU and are re-weighted by cos(pi/2 * (i - j) / M), decomposed into cos/sin-modulated
    query and key copies so that causal attention is a pair of prefix sums (jnp.cumsum over
    time) of key-value outer products and of keys for the normaliser; three pre-RMSNorm
    layers with a SwiGLU feed-forward, untied output head; AdamW with warmup, cosine decay
    and clipping."""
    H, T = 4, 64
    ang = (np.pi / 2) * np.arange(T, dtype=np.float32) / T
    COS, SIN = np.cos(ang)[None, :, None, None], np.sin(ang)[None, :, None, None]

    def attn(q, x):
        b, t, d = x.shape
        dh = d // H
        qq = jax.nn.relu(x @ q["q"]).reshape(b, t, H, dh)
        kk = jax.nn.relu(x @ q["k"]).reshape(b, t, H, dh)
        vv = (x @ q["v"]).reshape(b, t, H, dh)
        num, den = 0.0, 0.0
        for w in (COS, SIN):
            qw, kw = qq * w, kk * w
            kv = jnp.cumsum(jnp.einsum("bthd,bthe->bthde", kw, vv), 1)
            num = num + jnp.einsum("bthd,bthde->bthe", qw, kv)
            den = den + jnp.sum(qw * jnp.cumsum(kw, 1), -1, keepdims=True)
        return (num / (den + 1e-6)).reshape(b, t, d) @ q["o"]

    def loss(p, tok, tgt):
        x = p["emb"][tok]
        for q in p["layers"]:
            x = x + attn(q, _rms(x, q["n1"]))
            h = _rms(x, q["n2"])
            x = x + (jax.nn.silu(h @ q["wg"]) * (h @ q["wu"])) @ q["wd"]
        return _xent(_rms(x, p["nf"]) @ p["head"], tgt)

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        lr = _cosine_lr(t, 1e-3, 10000.0, warm=300.0)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.95, wd=0.1)
        return l, p, m, v
    V, D, F = 256, 64, 160
    q = {"n1": S(D), "q": S(D, D), "k": S(D, D), "v": S(D, D), "o": S(D, D), "n2": S(D),
         "wg": S(D, F), "wu": S(D, F), "wd": S(F, D)}
    p = {"emb": S(V, D), "layers": [q, dict(q), dict(q)], "nf": S(D), "head": S(D, V)}
    return step, (p, p, p, S(), S(16, T, dtype=I32), S(16, T, dtype=I32))


def sparse_transformer_strided_fixed_pattern_masks():
    """Sparse Transformer on 8x8 images of 8-bit pixels read as sequences of 64 tokens:
    factorised position embedding (row + column tables), four pre-LN layers alternating the
    strided pattern (the previous 8 positions, or positions a multiple of 8 back) and the
    fixed pattern (the same block of 8, or the summary column at the end of each earlier
    block), both causal and built as numpy boolean masks; attention-probability dropout from
    a passed-in raw PRNG key folded per layer; GELU FFN; next-pixel cross-entropy reported
    in bits per dim; Adam with warmup and clipping."""
    T, L, H, DROP = 64, 8, 4, 0.1
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    causal = j <= i
    STRIDED = causal & (((i - j) < L) | ((i - j) % L == 0))
    FIXED = causal & (((i // L) == (j // L)) | (j % L == L - 1))

    def layer(q, x, mask, key):
        b, t, d = x.shape
        dh = d // H
        h = _ln(x, q["g1"], q["b1"])
        qq, kk, vv = (a.reshape(b, t, H, dh) for a in jnp.split(h @ q["qkv"], 3, -1))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(dh)
        a = jax.nn.softmax(jnp.where(mask, s, -1e9), -1)
        keep = jax.random.bernoulli(key, 1.0 - DROP, a.shape)
        a = jnp.where(keep, a / (1.0 - DROP), 0.0)
        x = x + jnp.einsum("bhqk,bkhd->bqhd", a, vv).reshape(b, t, d) @ q["o"]
        return x + jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"] + q["fb1"]) @ q["f2"]

    def loss(p, pix, key):
        inp = jnp.concatenate([jnp.full((pix.shape[0], 1), 256, I32), pix[:, :-1]], 1)
        pos = (p["row"][:, None, :] + p["col"][None, :, :]).reshape(T, -1)
        x = p["emb"][inp] + pos
        for n, q in enumerate(p["layers"]):
            x = layer(q, x, STRIDED if n % 2 == 0 else FIXED, jax.random.fold_in(key, n))
        nll = _xent(_ln(x, p["gf"], p["bf"]) @ p["out"], pix)
        return nll, nll / math.log(2.0)

    def step(p, m, v, t, pix, key):
        (l, bpd), g = jax.value_and_grad(loss, has_aux=True)(p, pix, key)
        lr = 3.5e-4 * jnp.minimum(1.0, (t + 1.0) / 500.0)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.95)
        return l, bpd, p, m, v
    D = 64
    q = {"g1": S(D), "b1": S(D), "qkv": S(D, 3 * D), "o": S(D, D), "g2": S(D), "b2": S(D),
         "f1": S(D, 4 * D), "fb1": S(4 * D), "f2": S(4 * D, D)}
    p = {"emb": S(257, D), "row": S(L, D), "col": S(L, D),
         "layers": [q, dict(q), dict(q), dict(q)], "gf": S(D), "bf": S(D), "out": S(D, 256)}
    return step, (p, p, p, S(), S(16, T, dtype=I32), S(2, dtype=U32))


# ----------------------------------------------------------------------------- rnn / scan


def antisymmetric_rnn_gated_euler_scan():
    """Gated AntisymmetricRNN on row-by-row images (32 rows of 32 pixels): the recurrent
    matrices are W - W^T - gamma I (antisymmetric plus diffusion), the hidden state takes a
    forward-Euler step h + eps * sigmoid-gate * tanh(...) in a lax.scan over rows, with both
    the candidate and the gate using their own antisymmetric matrix; the classifier reads the
    final state and the mean state; cross-entropy; Adam with gradient clipping."""
    EPS, GAMMA = 0.1, 0.01

    def anti(w):
        return w - w.T - GAMMA * jnp.eye(w.shape[0])

    def loss(p, img, labels):
        B = img.shape[0]
        Wh, Wg = anti(p["Wh"]), anti(p["Wg"])
        xs_h = jnp.einsum("brc,ch->rbh", img, p["Vh"]) + p["bh"]
        xs_g = jnp.einsum("brc,ch->rbh", img, p["Vg"]) + p["bg"]

        def cell(h, inp):
            xh, xg = inp
            z = jax.nn.sigmoid(h @ Wg + xg)
            h = h + EPS * z * jnp.tanh(h @ Wh + xh)
            return h, h
        hT, hs = lax.scan(cell, jnp.zeros((B, Wh.shape[0])), (xs_h, xs_g))
        feat = jnp.concatenate([hT, jnp.mean(hs, 0)], -1)
        logits = feat @ p["out"] + p["ob"]
        return _xent(logits, labels)

    def step(p, m, v, t, img, labels):
        l, g = jax.value_and_grad(loss)(p, img, labels)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=1e-3)
        return l, p, m, v
    C, H = 32, 128
    p = {"Wh": S(H, H), "Wg": S(H, H), "Vh": S(C, H), "Vg": S(C, H), "bh": S(H), "bg": S(H),
         "out": S(2 * H, 10), "ob": S(10)}
    return step, (p, p, p, S(), S(64, 32, C), S(64, dtype=I32))


def dilated_lstm_stack_time_fold_scan():
    """Bootstrapped ensemble of dilated residual LSTM forecasters (jax.vmap over four members
    with stacked parameters): each member runs three LSTM layers with dilations 1, 2 and 4,
    a dilation d being implemented by folding time into the batch (T -> T/d steps of d
    interleaved sub-sequences) around a lax.scan and unfolding afterwards, with residual
    connections between layers; one-step-ahead forecasts scored by a Huber loss weighted by
    per-member bootstrap counts; Adam with clipping applied to the stacked ensemble."""
    DIL = (1, 2, 4)

    def lstm(q, x):
        B, T, _ = x.shape
        H = q["wh"].shape[0]
        xi = x @ q["wx"] + q["b"]

        def cell(c, xt):
            h, s = c
            i, f, g, o = jnp.split(xt + h @ q["wh"], 4, -1)
            s = jax.nn.sigmoid(f + 1.0) * s + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(s)
            return (h, s), h
        _, hs = lax.scan(cell, (jnp.zeros((B, H)), jnp.zeros((B, H))), _sw(xi))
        return _sw(hs)

    def dilated(q, x, d):
        B, T, C = x.shape
        xf = x.reshape(B, T // d, d, C).transpose(0, 2, 1, 3).reshape(B * d, T // d, C)
        h = lstm(q, xf)
        return h.reshape(B, d, T // d, -1).transpose(0, 2, 1, 3).reshape(B, T, -1)

    def member_loss(p, x, y, w):
        h = x @ p["inp"]
        for q, d in zip(p["layers"], DIL):
            h = h + dilated(q, h, d)
        pred = h @ p["out"] + p["ob"]
        err = pred - y
        hub = jnp.where(jnp.abs(err) < 1.0, 0.5 * err * err, jnp.abs(err) - 0.5)
        return jnp.sum(jnp.mean(hub, (1, 2)) * w) / jnp.sum(w)

    def loss(p, x, y, w):
        return jnp.mean(jax.vmap(member_loss, (0, None, None, 0))(p, x, y, w))

    def step(p, m, v, t, x, y, w):
        l, g = jax.value_and_grad(loss)(p, x, y, w)
        p, m, v = _adam(p, m, v, _global_clip(g, 3.0), t, lr=1e-3)
        return l, p, m, v
    K, C, H, T = 4, 8, 48, 64
    lay = {"wx": S(K, H, 4 * H), "wh": S(K, H, 4 * H), "b": S(K, 4 * H)}
    p = {"inp": S(K, C, H), "layers": [lay, dict(lay), dict(lay)], "out": S(K, H, C),
         "ob": S(K, C)}
    return step, (p, p, p, S(), S(32, T, C), S(32, T, C), S(K, 32))


# ----------------------------------------------------------------------------- moe


def xmoe_hypersphere_cosine_router_capacity_drop():
    """X-MoE language model: routing happens on a low-dimensional hypersphere -- tokens are
    projected to 16 dims and L2-normalised, expert embeddings are L2-normalised, and scores
    are cosine similarities divided by a learned, clamped temperature; top-1 routing with
    capacity factor 1.25: positions inside each expert come from a cumulative sum of the
    one-hot assignments, overflowing tokens are dropped (dispatch and combine tensors of
    shape tokens x experts x capacity), experts are GELU FFNs on [experts, capacity, d];
    two layers of causal attention with an MoE FFN each; cross-entropy plus a
    load-balancing loss; Adam with clipping; the dropped-token fraction is reported."""
    E, RD, CF = 8, 16, 1.25

    def moe(q, x):
        b, t, d = x.shape
        xs = x.reshape(b * t, d)
        n = xs.shape[0]
        cap = int(math.ceil(CF * n / E))
        r = xs @ q["rproj"]
        r = r / (jnp.linalg.norm(r, axis=-1, keepdims=True) + 1e-6)
        e = q["eemb"] / (jnp.linalg.norm(q["eemb"], axis=-1, keepdims=True) + 1e-6)
        tau = jnp.clip(jnp.exp(q["logtau"]), 0.01, 1.0)
        probs = jax.nn.softmax((r @ e.T) / tau, -1)
        idx = jnp.argmax(probs, -1)
        oh = jax.nn.one_hot(idx, E)
        pos = (jnp.cumsum(oh, 0) - 1.0) * oh
        keep = oh * (pos < cap)
        disp = keep[..., None] * jax.nn.one_hot(jnp.sum(pos, -1).astype(I32), cap)[:, None, :]
        gate = jnp.sum(probs * keep, -1)
        ein = jnp.einsum("nec,nd->ecd", disp, xs)
        h = jax.nn.gelu(jnp.einsum("ecd,edf->ecf", ein, q["w1"]) + q["eb1"][:, None])
        eo = jnp.einsum("ecf,efd->ecd", h, q["w2"])
        y = jnp.einsum("nec,ecd->nd", disp, eo) * gate[:, None]
        aux = E * jnp.sum(jnp.mean(oh, 0) * jnp.mean(probs, 0))
        drop = 1.0 - jnp.mean(jnp.sum(keep, -1))
        return y.reshape(b, t, d), aux, drop

    def attn(q, x):
        b, t, d = x.shape
        H = 4
        qq, kk, vv = (a.reshape(b, t, H, d // H) for a in jnp.split(x @ q["qkv"], 3, -1))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(d // H)
        s = jnp.where(np.tril(np.ones((t, t), bool)), s, -1e9)
        return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d) @ q["o"]

    def loss(p, tok, tgt):
        x = p["emb"][tok] + p["pos"]
        aux, drop = 0.0, 0.0
        for q in p["layers"]:
            x = x + attn(q, _ln(x, q["g1"], q["b1"]))
            y, a, dr = moe(q, _ln(x, q["g2"], q["b2"]))
            x, aux, drop = x + y, aux + a, drop + dr
        xe = _xent(_ln(x, p["gf"], p["bf"]) @ p["emb"].T, tgt)
        return xe + 0.01 * aux, drop / len(p["layers"])

    def step(p, m, v, t, tok, tgt):
        (l, drop), g = jax.value_and_grad(loss, has_aux=True)(p, tok, tgt)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=6e-4)
        return l, drop, p, m, v
    V, D, T, F = 256, 64, 32, 128
    q = {"g1": S(D), "b1": S(D), "qkv": S(D, 3 * D), "o": S(D, D), "g2": S(D), "b2": S(D),
         "rproj": S(D, RD), "eemb": S(E, RD), "logtau": S(), "w1": S(E, D, F), "eb1": S(E, F),
         "w2": S(E, F, D)}
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [q, dict(q)], "gf": S(D), "bf": S(D)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T, dtype=I32))


# ----------------------------------------------------------------------------- vae


def planar_flow_amortized_posterior_vae():
    """VAE with a normalising-flow posterior on binarised 28x28 images: the encoder MLP emits
    the Gaussian mean and log-variance and, per example, the parameters (u, w, b) of eight
    planar flows z + u_hat tanh(w.z + b), where u_hat is the invertibility-enforcing
    reparameterisation u + (softplus(w.u) - 1 - w.u) w / |w|^2; the flows run in a python
    loop accumulating log|1 + u_hat.psi|; the ELBO is the Bernoulli log-likelihood of an MLP
    decoder plus log p(z_K) - log q(z_0) + sum log-det, with a linearly annealed KL weight;
    Adamax."""
    X, Z, H, K = 784, 16, 256, 8

    def loss(p, x, eps, t):
        h = jnp.tanh(x @ p["e1"] + p["eb1"])
        h = jnp.tanh(h @ p["e2"] + p["eb2"])
        mu, lv = h @ p["mu"], h @ p["lv"]
        B = x.shape[0]
        u = (h @ p["fu"]).reshape(B, K, Z)
        w = (h @ p["fw"]).reshape(B, K, Z)
        b = h @ p["fb"]
        z = mu + jnp.exp(0.5 * lv) * eps
        logq0 = jnp.sum(-0.5 * (math.log(2 * math.pi) + lv + jnp.square(eps)), -1)
        ldj = 0.0
        for k in range(K):
            uk, wk, bk = u[:, k], w[:, k], b[:, k]
            wu = jnp.sum(wk * uk, -1, keepdims=True)
            uh = uk + (jax.nn.softplus(wu) - 1.0 - wu) * wk / (jnp.sum(wk * wk, -1, keepdims=True)
                                                               + 1e-8)
            a = jnp.sum(wk * z, -1, keepdims=True) + bk[:, None]
            z = z + uh * jnp.tanh(a)
            psi = (1.0 - jnp.square(jnp.tanh(a))) * wk
            ldj = ldj + jnp.log(jnp.abs(1.0 + jnp.sum(uh * psi, -1)) + 1e-8)
        logpz = jnp.sum(-0.5 * (math.log(2 * math.pi) + jnp.square(z)), -1)
        d = jnp.tanh(z @ p["d1"] + p["db1"])
        logits = d @ p["d2"] + p["db2"]
        rec = -jnp.sum(jnp.maximum(logits, 0) - logits * x + jnp.log1p(jnp.exp(-jnp.abs(logits))), -1)
        beta = jnp.minimum(1.0, 0.01 + t / 10000.0)
        kl = logq0 - ldj - logpz
        return -jnp.mean(rec - beta * kl), jnp.mean(rec - kl)

    def step(p, m, u, t, x, eps):
        (l, elbo), g = jax.value_and_grad(loss, has_aux=True)(p, x, eps, t)
        m = tmap(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        u = tmap(lambda u, g: jnp.maximum(0.999 * u, jnp.abs(g)), u, g)
        p = tmap(lambda w, m, u: w - (2e-3 / (1.0 - 0.9 ** t)) * m / (u + 1e-8), p, m, u)
        return l, elbo, p, m, u
    p = {"e1": S(X, H), "eb1": S(H), "e2": S(H, H), "eb2": S(H), "mu": S(H, Z), "lv": S(H, Z),
         "fu": S(H, K * Z), "fw": S(H, K * Z), "fb": S(H, K), "d1": S(Z, H), "db1": S(H),
         "d2": S(H, X), "db2": S(X)}
    return step, (p, p, p, S(), S(64, X), S(64, Z))


# ----------------------------------------------------------------------------- unet


def noise2void_blindspot_masked_pixel_unet():
    """Noise2Void self-supervised denoising U-Net on 32x32 single-channel noisy images: for
    each image 64 blind-spot pixels (passed coordinates) are replaced by a neighbour's value
    (passed offsets in [-2, 2], clipped at the border) with a gather followed by an
    .at[b, y, x].set scatter; a two-level U-Net (conv-BN-LeakyReLU pairs, max-pool down,
    lax.conv_transpose stride-2 up, skip concatenation, residual output) predicts the clean
    image and the loss is the MSE at the blind-spot pixels only (gathered); BN running
    statistics returned; Adam with a step-decay schedule."""

    def cb(q, x):
        h, st = _bn(_conv(x, q["w"]), q["g"], q["b"])
        return jax.nn.leaky_relu(h, 0.1), st

    def double(qs, x, stats):
        for q in qs:
            x, st = cb(q, x)
            stats.append(st)
        return x

    def up(w, x):
        return lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def net(p, x):
        stats = []
        e1 = double(p["e1"], x, stats)
        e2 = double(p["e2"], _maxpool(e1), stats)
        m = double(p["mid"], _maxpool(e2), stats)
        d2 = double(p["d2"], jnp.concatenate([up(p["u2"], m), e2], -1), stats)
        d1 = double(p["d1"], jnp.concatenate([up(p["u1"], d2), e1], -1), stats)
        return x + _conv(d1, p["out"]), stats

    def loss(p, noisy, coords, offs):
        B, Hh, Ww, _ = noisy.shape
        bi = jnp.arange(B)[:, None]
        y, x = coords[..., 0], coords[..., 1]
        ny = jnp.clip(y + offs[..., 0], 0, Hh - 1)
        nx = jnp.clip(x + offs[..., 1], 0, Ww - 1)
        masked = noisy.at[bi, y, x].set(noisy[bi, ny, nx])
        pred, stats = net(p, masked)
        return jnp.mean(jnp.square(pred[bi, y, x] - noisy[bi, y, x])), stats

    def step(p, m, v, run, t, noisy, coords, offs):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, noisy, coords, offs)
        run = tmap(lambda r, s: 0.95 * r + 0.05 * s, run, lax.stop_gradient(stats))
        lr = 4e-4 * 0.5 ** jnp.floor(t / 5000.0)
        p, m, v = _adam(p, m, v, g, t, lr=lr)
        return l, p, m, v, run
    run = []

    def c(ci, co):
        run.append((S(co), S(co)))
        return {"w": S(3, 3, ci, co), "g": S(co), "b": S(co)}
    p = {"e1": [c(1, 32), c(32, 32)], "e2": [c(32, 64), c(64, 64)], "mid": [c(64, 128), c(128, 64)],
         "u2": S(2, 2, 64, 64), "d2": [c(128, 64), c(64, 64)], "u1": S(2, 2, 64, 32),
         "d1": [c(64, 32), c(32, 32)], "out": S(1, 1, 32, 1)}
    return step, (p, p, p, run, S(), S(16, 32, 32, 1), S(16, 64, 2, dtype=I32),
                  S(16, 64, 2, dtype=I32))


# ----------------------------------------------------------------------------- gnn


def chebnet_chebyshev_laplacian_recurrence():
    """ChebNet node classifier on a 512-node graph with 2048 weighted directed edges: the
    scaled Laplacian (lambda_max taken as 2) acts as -D^-1/2 A D^-1/2, its matrix-vector
    product done by gathering source features and jax.ops.segment_sum onto destinations
    (degrees also by segment_sum); each ChebConv layer builds T0 = x, T1 = L x,
    T_k = 2 L T_{k-1} - T_{k-2} up to order 4 and mixes them with per-order weights; two
    layers with ReLU and passed-in dropout masks; cross-entropy on the train-mask nodes,
    accuracy on the rest; Adam with L2 weight decay on the first layer only."""
    K = 4

    def cheb(q, x, lap):
        tx = [x, lap(x)]
        for _ in range(2, K):
            tx.append(2.0 * lap(tx[-1]) - tx[-2])
        return sum(t @ q["w"][k] for k, t in enumerate(tx)) + q["b"]

    def loss(p, x, src, dst, ew, drop1, drop2, labels, train):
        N = x.shape[0]
        deg = jax.ops.segment_sum(ew, dst, N)
        dinv = lax.rsqrt(jnp.maximum(deg, 1e-6))
        wn = dinv[src] * ew * dinv[dst]

        def lap(h):
            return -jax.ops.segment_sum(wn[:, None] * h[src], dst, N)
        h = jax.nn.relu(cheb(p["c1"], x * drop1, lap))
        logits = cheb(p["c2"], h * drop2, lap)
        logp = jax.nn.log_softmax(logits, -1)
        nll = -jnp.take_along_axis(logp, labels[:, None], -1)[:, 0]
        l = jnp.sum(nll * train) / jnp.sum(train)
        acc = jnp.sum((jnp.argmax(logits, -1) == labels) * (1.0 - train)) / jnp.sum(1.0 - train)
        return l + 5e-4 * jnp.sum(jnp.square(p["c1"]["w"])), acc

    def step(p, m, v, t, *data):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, *data)
        p, m, v = _adam(p, m, v, g, t, lr=1e-2)
        return l, acc, p, m, v
    N, E, F, H, C = 512, 2048, 64, 32, 7
    p = {"c1": {"w": S(K, F, H), "b": S(H)}, "c2": {"w": S(K, H, C), "b": S(C)}}
    return step, (p, p, p, S(), S(N, F), S(E, dtype=I32), S(E, dtype=I32), S(E), S(N, F),
                  S(N, H), S(N, dtype=I32), S(N))


# ----------------------------------------------------------------------------- quantization


def mxint8_shared_exponent_block_fakequant_mlp():
    """Microscaling (MXINT8) quantisation-aware training of a four-layer MLP student on 128
    features: weights (blocks of 32 along the input dimension) and activations (blocks of 32
    along the feature axis) are fake-quantised with one shared power-of-two scale per block
    (2^(floor(log2(max|x|)) - 6)) and int8 elements clipped to [-127, 127], with
    straight-through gradients; a knowledge-distillation loss at temperature 2 against
    passed-in teacher logits is mixed with hard-label cross-entropy; the mean relative
    quantisation error of the weights is reported; Adam with warmup."""
    BLK, TEMP = 32, 2.0

    def mxq(x, axis=-1):
        x = jnp.moveaxis(x, axis, -1)
        shp = x.shape
        xb = x.reshape(shp[:-1] + (shp[-1] // BLK, BLK))
        amax = jnp.max(jnp.abs(xb), -1, keepdims=True)
        e = jnp.floor(jnp.log2(jnp.maximum(amax, 2.0 ** -60))) - 6.0
        sc = jnp.exp2(e)
        q = jnp.clip(jnp.round(xb / sc), -127.0, 127.0) * sc
        q = jnp.moveaxis(q.reshape(shp), -1, axis)
        x = jnp.moveaxis(x, -1, axis)
        return x + lax.stop_gradient(q - x)

    def loss(p, x, labels, teacher):
        h = x
        for q in p["layers"][:-1]:
            h = jax.nn.relu(mxq(h) @ mxq(q["w"], 0) + q["b"])
        q = p["layers"][-1]
        logits = mxq(h) @ mxq(q["w"], 0) + q["b"]
        soft = jax.nn.softmax(teacher / TEMP, -1)
        kd = jnp.mean(jnp.sum(soft * (jnp.log(soft + 1e-9)
                                      - jax.nn.log_softmax(logits / TEMP, -1)), -1))
        return 0.7 * TEMP * TEMP * kd + 0.3 * _xent(logits, labels)

    def step(p, m, v, t, x, labels, teacher):
        l, g = jax.value_and_grad(loss)(p, x, labels, teacher)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3 * jnp.minimum(1.0, (t + 1.0) / 1000.0))
        err = jnp.mean(jnp.stack([jnp.sum(jnp.abs(mxq(q["w"], 0) - q["w"]))
                                  / jnp.sum(jnp.abs(q["w"])) for q in p["layers"]]))
        return l, err, p, m, v
    dims = (128, 256, 256, 128, 32)
    p = {"layers": [{"w": S(a, b), "b": S(b)} for a, b in zip(dims[:-1], dims[1:])]}
    return step, (p, p, p, S(), S(256, 128), S(256, dtype=I32), S(256, 32))


# ----------------------------------------------------------------------------- remat


def remat_unrolled_uvit_long_skips_names_policy():
    """U-ViT noise-prediction network for diffusion on 16x16x3 images (2x2 patches -> 64
    tokens, preceded by a time token, a class token and 14 learned register tokens): five
    transformer blocks in a python loop -- two 'in' blocks whose outputs are kept as long skips, a middle block and two 'out'
    blocks that first fuse the matching skip by a linear layer on the concatenation; every
    block is wrapped in jax.checkpoint with save_only_these_names("attn_ctx", "mlp_hidden")
    (the attention context and the GELU hidden are tagged with checkpoint_name); cosine
    noise schedule table gathered per example; MSE on the noise; a 3x3 conv after
    unpatchify; AdamW and an EMA of the weights."""
    P, C, H, NCLS, NREG = 2, 3, 4, 10, 14
    tt = np.arange(1001, dtype=np.float64) / 1000
    ab = np.cos((tt + 0.008) / 1.008 * np.pi / 2) ** 2
    ABAR = np.clip(ab[1:] / ab[0], 1e-5, 1.0).astype(np.float32)
    FREQ = np.exp(-math.log(10000.0) * np.arange(32) / 32).astype(np.float32)

    def block(q, x, skip):
        if skip is not None:
            x = jnp.concatenate([x, skip], -1) @ q["skip"] + q["skb"]
        b, t, d = x.shape
        dh = d // H
        h = _ln(x, q["g1"], q["b1"])
        qq, kk, vv = (a.reshape(b, t, H, dh) for a in jnp.split(h @ q["qkv"], 3, -1))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(dh)
        ctx = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d)
        x = x + checkpoint_name(ctx, "attn_ctx") @ q["o"]
        hid = checkpoint_name(jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"] + q["fb1"]),
                              "mlp_hidden")
        return x + hid @ q["f2"]
    block_r = jax.checkpoint(block, policy=CP.save_only_these_names("attn_ctx", "mlp_hidden"))

    def loss(p, x0, labels, steps, noise):
        n = x0.shape[0]
        a = jnp.asarray(ABAR)[steps][:, None, None, None]
        xt = jnp.sqrt(a) * x0 + jnp.sqrt(1.0 - a) * noise
        g = 16 // P
        tok = xt.reshape(n, g, P, g, P, C).transpose(0, 1, 3, 2, 4, 5).reshape(n, g * g, P * P * C)
        tok = tok @ p["pe"] + p["pos"]
        ang = steps.astype(F32)[:, None] * FREQ[None]
        temb = jax.nn.silu(jnp.concatenate([jnp.sin(ang), jnp.cos(ang)], -1) @ p["t1"]) @ p["t2"]
        reg = jnp.broadcast_to(p["reg"], (n, NREG, tok.shape[-1]))
        x = jnp.concatenate([temb[:, None], p["cls"][labels][:, None], reg, tok], 1)
        skips = []
        for q in p["inb"]:
            x = block_r(q, x, None)
            skips.append(x)
        x = block_r(p["mid"], x, None)
        for q in p["outb"]:
            x = block_r(q, x, skips.pop())
        out = (_ln(x[:, 2 + NREG:], p["gf"], p["bf"]) @ p["dec"]).reshape(n, g, g, P, P, C)
        out = out.transpose(0, 1, 3, 2, 4, 5).reshape(n, 16, 16, C)
        eps = _conv(out, p["fconv"]) + p["fcb"]
        return jnp.mean(jnp.square(eps - noise))

    def step(p, m, v, ema, t, x0, labels, steps, noise):
        l, g = jax.value_and_grad(loss)(p, x0, labels, steps, noise)
        p, m, v = _adam(p, m, v, g, t, lr=2e-4, b2=0.99, wd=0.03)
        ema = tmap(lambda e, w: 0.9999 * e + 1e-4 * w, ema, p)
        return l, p, m, v, ema
    D = 128
    blk = {"g1": S(D), "b1": S(D), "qkv": S(D, 3 * D), "o": S(D, D), "g2": S(D), "b2": S(D),
           "f1": S(D, 4 * D), "fb1": S(4 * D), "f2": S(4 * D, D)}
    ob = dict(blk, skip=S(2 * D, D), skb=S(D))
    p = {"pe": S(P * P * C, D), "pos": S(64, D), "t1": S(64, 4 * D), "t2": S(4 * D, D),
         "cls": S(NCLS, D), "reg": S(NREG, D), "inb": [blk, dict(blk)], "mid": dict(blk),
         "outb": [ob, dict(ob)],
         "gf": S(D), "bf": S(D), "dec": S(D, P * P * C), "fconv": S(3, 3, C, C), "fcb": S(C)}
    B = 16
    return step, (p, p, p, p, S(), S(B, 16, 16, C), S(B, dtype=I32), S(B, dtype=I32),
                  S(B, 16, 16, C))


def remat_scanned_dilation_cycles_causal_conv_stack():
    """Autoregressive mu-law audio model made of a causal dilated-convolution stack: three
    cycles (parameters stacked, run by lax.scan) of four gated residual layers with
    dilations 1, 2, 4, 8 (kernel 2, lax.conv_general_dilated with rhs_dilation and left
    padding); the scanned cycle is jax.checkpoint-ed with
    save_any_names_but_these("gate_act") and each layer inside it is checkpointed again
    with checkpoint_dots (nested remat); skip connections are summed across all layers and
    cycles in the scan carry; 256-way softmax over the next quantised sample; Adam with
    clipping and an exponential schedule."""
    DIL, R, SK, Q = (1, 2, 4, 8), 32, 64, 256

    def dconv(x, w, d):
        return lax.conv_general_dilated(x, w, (1,), [(d, 0)], rhs_dilation=(d,),
                                        dimension_numbers=("NWC", "WIO", "NWC"))

    def layer(x, q, d):
        h = dconv(x, q["filt"], d) + q["fb"]
        f, gt = jnp.split(h, 2, -1)
        z = checkpoint_name(jnp.tanh(f) * jax.nn.sigmoid(gt), "gate_act")
        return x + z @ q["res"], z @ q["skip"]
    layer_r = jax.checkpoint(layer, policy=CP.checkpoint_dots, static_argnums=(2,))

    def cycle(carry, qs):
        x, skips = carry
        for i, d in enumerate(DIL):
            x, s = layer_r(x, tmap(lambda a: a[i], qs), d)
            skips = skips + s
        return (x, skips), None
    cycle_r = jax.checkpoint(cycle, policy=CP.save_any_names_but_these("gate_act"))

    def loss(p, tok):
        B, T = tok.shape
        inp = jnp.concatenate([jnp.full((B, 1), Q // 2, I32), tok[:, :-1]], 1)
        x = p["emb"][inp]
        (x, skips), _ = lax.scan(cycle_r, (x, jnp.zeros((B, T, SK))), p["cycles"])
        h = jax.nn.relu(jax.nn.relu(skips) @ p["o1"] + p["ob1"])
        return _xent(h @ p["o2"] + p["ob2"], tok)

    def step(p, m, v, t, tok):
        l, g = jax.value_and_grad(loss)(p, tok)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=1e-3 * 0.9999 ** t)
        return l, p, m, v
    NC, NL = 3, len(DIL)
    cyc = {"filt": S(NC, NL, 2, R, 2 * R), "fb": S(NC, NL, 2 * R), "res": S(NC, NL, R, R),
           "skip": S(NC, NL, R, SK)}
    p = {"emb": S(Q, R), "cycles": cyc, "o1": S(SK, SK), "ob1": S(SK), "o2": S(SK, Q),
         "ob2": S(Q)}
    return step, (p, p, p, S(), S(8, 256, dtype=I32))


# ----------------------------------------------------------------------------- custom_vjp


_QP_ITERS = 40


def _qp_solve(Q, p):
    """Box-constrained QP min 0.5 z'Qz + p'z, -1 <= z <= 1, by projected gradient descent."""
    lr = 1.0 / (jnp.trace(Q) + 1e-3)
    z0 = jnp.zeros_like(p)
    return lax.fori_loop(0, _QP_ITERS, lambda i, z: jnp.clip(z - lr * (z @ Q + p), -1.0, 1.0), z0)


@jax.custom_vjp
def _box_qp(Q, p):
    return _qp_solve(Q, p)


def _box_qp_fwd(Q, p):
    z = _qp_solve(Q, p)
    return z, (Q, z)


def _box_qp_bwd(res, gz):
    Q, z = res
    free = (jnp.abs(z) < 1.0 - 1e-4).astype(z.dtype)
    n = Q.shape[0]
    M = free[:, :, None] * Q[None] * free[:, None, :] + jnp.eye(n)[None] * (1.0 - free)[:, :, None]
    d = jnp.linalg.solve(M, (-free * gz)[..., None])[..., 0] * free
    gQ = 0.5 * (jnp.einsum("bi,bj->ij", d, z) + jnp.einsum("bi,bj->ij", z, d))
    return gQ, d


_box_qp.defvjp(_box_qp_fwd, _box_qp_bwd)


def box_qp_layer_projected_gradient_implicit_vjp():
    """Differentiable optimisation layer (OptNet-style) for structured prediction: an MLP maps
    each input to the linear term p of a 24-variable box-constrained quadratic programme
    min 0.5 z'Qz + p'z s.t. -1 <= z <= 1 with a learned Q = L L' + 0.1 I; the solution comes
    from 40 projected-gradient iterations in a lax.fori_loop inside a jax.custom_vjp whose
    backward differentiates the KKT conditions on the active set implicitly (batched
    jnp.linalg.solve of the free-variable system with identity rows for active variables,
    returning gradients for Q and p); a linear readout of z is trained with MSE; Adam."""
    NV = 24

    def loss(p, x, y):
        h = jax.nn.relu(x @ p["w1"] + p["b1"])
        lin = h @ p["w2"] + p["b2"]
        Q = p["L"] @ p["L"].T + 0.1 * jnp.eye(NV)
        z = _box_qp(Q, lin)
        pred = z @ p["out"]
        act = jnp.mean((jnp.abs(z) > 1.0 - 1e-4).astype(F32))
        return jnp.mean(jnp.square(pred - y)), act

    def step(p, m, v, t, x, y):
        (l, act), g = jax.value_and_grad(loss, has_aux=True)(p, x, y)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, act, p, m, v
    F, H, O = 32, 64, 8
    p = {"w1": S(F, H), "b1": S(H), "w2": S(H, NV), "b2": S(NV), "L": S(NV, NV),
         "out": S(NV, O)}
    return step, (p, p, p, S(), S(128, F), S(128, O))


# ----------------------------------------------------------------------------- control


def hessian_free_cg_while_gauss_newton_damping():
    """Hessian-free (truncated Newton) training step for a tanh autoencoder: the parameters
    are flattened with ravel_pytree, the gradient is taken once, and the damped Gauss-Newton
    system (J'J / N + lambda I) d = -g is solved by conjugate gradient in a lax.while_loop
    that stops at 25 iterations or when the residual falls below 1e-3 |g|; each matrix-vector
    product is a jax.jvp of the network output followed by a jax.vjp; the step is accepted
    only if the loss decreases (jnp.where), and the Levenberg-Marquardt damping is adjusted
    by the reduction ratio through nested lax.cond (x1.5 below 0.25, x2/3 above 0.75)."""
    MAXIT = 25

    def net(p, x):
        h = jnp.tanh(x @ p["e1"] + p["b1"])
        c = jnp.tanh(h @ p["e2"] + p["b2"])
        h = jnp.tanh(c @ p["d1"] + p["b3"])
        return h @ p["d2"] + p["b4"]

    def step(p, lam, x):
        flat, unravel = ravel_pytree(p)
        N = x.shape[0]
        out_fn = lambda w: net(unravel(w), x)
        loss_fn = lambda w: 0.5 * jnp.sum(jnp.square(out_fn(w) - x)) / N
        l0, g = jax.value_and_grad(loss_fn)(flat)
        _, vjp = jax.vjp(out_fn, flat)

        def gv(v):
            _, jv = jax.jvp(out_fn, (flat,), (v,))
            return vjp(jv)[0] / N + lam * v

        def cond(c):
            i, d, r, pp, rr = c
            return (i < MAXIT) & (jnp.sqrt(rr) > 1e-3 * jnp.linalg.norm(g))

        def body(c):
            i, d, r, pp, rr = c
            Ap = gv(pp)
            alpha = rr / (jnp.dot(pp, Ap) + 1e-12)
            d = d + alpha * pp
            r = r - alpha * Ap
            rn = jnp.dot(r, r)
            return i + 1, d, r, r + (rn / (rr + 1e-12)) * pp, rn
        r0 = -g
        it, d, _, _, _ = lax.while_loop(cond, body, (0, jnp.zeros_like(g), r0, r0, jnp.dot(r0, r0)))
        l1 = loss_fn(flat + d)
        qd = jnp.dot(g, d) + 0.5 * jnp.dot(d, gv(d))
        rho = (l1 - l0) / jnp.minimum(qd, -1e-12)
        lam = lax.cond(rho < 0.25, lambda a: a * 1.5,
                       lambda a: lax.cond(rho > 0.75, lambda b: b * (2.0 / 3.0), lambda b: b, a),
                       lam)
        new = jnp.where(l1 < l0, flat + d, flat)
        return l0, it, unravel(new), lam
    D, H, Z = 64, 48, 16
    p = {"e1": S(D, H), "b1": S(H), "e2": S(H, Z), "b2": S(Z), "d1": S(Z, H), "b3": S(H),
         "d2": S(H, D), "b4": S(D)}
    return step, (p, S(), S(128, D))


def length_bucket_switch_microbatch_fori_accum():
    """Gradient accumulation over length-bucketed microbatches: a lax.fori_loop walks four
    microbatches (picked with lax.dynamic_index_in_dim), and for each one lax.switch on its
    passed-in bucket id runs one of three differently shaped branches that truncate the
    sequences to 16, 32 or 64 tokens before a one-layer pre-LN transformer encoder with a
    key-padding mask and masked mean pooling, each branch returning the loss and the
    gradients (same pytree); gradients are summed in the loop carry, averaged, clipped and
    applied with AdamW."""
    BUCKETS, H, NMB = (16, 32, 64), 4, 4

    def enc(p, tok, lens, tmax):
        tok = tok[:, :tmax]
        b, t = tok.shape
        valid = (jnp.arange(t)[None] < lens[:, None]).astype(F32)
        x = p["emb"][tok] + p["pos"][:t]
        d = x.shape[-1]
        h = _ln(x, p["g1"], p["b1"])
        qq, kk, vv = (a.reshape(b, t, H, d // H) for a in jnp.split(h @ p["qkv"], 3, -1))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(d // H)
        s = jnp.where(valid[:, None, None, :] > 0, s, -1e9)
        x = x + jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d) @ p["o"]
        x = x + jax.nn.relu(_ln(x, p["g2"], p["b2"]) @ p["f1"]) @ p["f2"]
        pooled = jnp.sum(x * valid[..., None], 1) / jnp.maximum(jnp.sum(valid, 1, keepdims=True), 1.0)
        return pooled @ p["cls"]

    def step(p, m, v, t, toks, lens, labels, bucket):
        def branch(tmax):
            def f(a):
                tok, ln, y = a
                return jax.value_and_grad(lambda q: _xent(enc(q, tok, ln, tmax), y))(p)
            return f

        def body(i, c):
            tot, acc = c
            pick = lambda a: lax.dynamic_index_in_dim(a, i, keepdims=False)
            l, g = lax.switch(pick(bucket), [branch(k) for k in BUCKETS],
                              (pick(toks), pick(lens), pick(labels)))
            return tot + l, tmap(jnp.add, acc, g)
        tot, gs = lax.fori_loop(0, NMB, body, (jnp.zeros((), F32), tmap(jnp.zeros_like, p)))
        g = _global_clip(tmap(lambda a: a / NMB, gs), 1.0)
        p, m, v = _adam(p, m, v, g, t, lr=5e-4, wd=0.01)
        return tot / NMB, p, m, v
    V, D, T = 512, 64, 64
    p = {"emb": S(V, D), "pos": S(T, D), "g1": S(D), "b1": S(D), "qkv": S(D, 3 * D),
         "o": S(D, D), "g2": S(D), "b2": S(D), "f1": S(D, 4 * D), "f2": S(4 * D, D),
         "cls": S(D, 5)}
    return step, (p, p, p, S(), S(NMB, 16, T, dtype=I32), S(NMB, 16, dtype=I32),
                  S(NMB, 16, dtype=I32), S(NMB, dtype=I32))


# ----------------------------------------------------------------------------- sort / top_k


def neuralsort_relaxed_permutation_quantile_regress():
    """NeuralSort learning-to-sort on sets of 16 items: an item MLP scores each 32-d item,
    the relaxed permutation matrix P[i, j] = softmax_j(((n + 1 - 2i) s_j - sum_k |s_j - s_k|)
    / tau) is built with a temperature annealed from the step count, and it is trained with
    row-wise cross-entropy against the true descending order of the hidden item values
    (jnp.argsort), plus a regression of the sorted values' median and top quartile through
    P @ values against jnp.sort of the true values; exact-permutation accuracy from
    jnp.argsort of the scores; Adam."""
    NI = 16

    def loss(p, items, vals, t):
        h = jax.nn.gelu(items @ p["w1"] + p["b1"])
        h = jax.nn.gelu(h @ p["w2"] + p["b2"])
        s = (h @ p["w3"])[..., 0]
        tau = jnp.maximum(0.1, 2.0 * 0.999 ** t)
        A = jnp.abs(s[:, :, None] - s[:, None, :])
        coef = (NI + 1 - 2 * (jnp.arange(NI, dtype=F32) + 1))
        logits = (coef[None, :, None] * s[:, None, :] - jnp.sum(A, -1)[:, None, :]) / tau
        logP = jax.nn.log_softmax(logits, -1)
        order = jnp.argsort(-vals, -1)
        ce = -jnp.mean(jnp.take_along_axis(logP, order[..., None], -1))
        soft_sorted = jnp.einsum("bij,bj->bi", jnp.exp(logP), vals)
        true_sorted = -jnp.sort(-vals, -1)
        qi = np.array([NI // 4, NI // 2])
        qloss = jnp.mean(jnp.square(soft_sorted[:, qi] - true_sorted[:, qi]))
        acc = jnp.mean(jnp.all(jnp.argsort(-s, -1) == order, -1).astype(F32))
        return ce + qloss, acc

    def step(p, m, v, t, items, vals):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, items, vals, t)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, acc, p, m, v
    F, H = 32, 64
    p = {"w1": S(F, H), "b1": S(H), "w2": S(H, H), "b2": S(H), "w3": S(H, 1)}
    return step, (p, p, p, S(), S(64, NI, F), S(64, NI))


# ----------------------------------------------------------------------------- fft


def _mel_fb(nfft=256, nmel=40, sr=8000):
    mel = lambda f: 2595.0 * np.log10(1.0 + f / 700.0)
    imel = lambda m: 700.0 * (10 ** (m / 2595.0) - 1.0)
    pts = imel(np.linspace(mel(20.0), mel(sr / 2), nmel + 2))
    bins = np.linspace(0, sr / 2, nfft // 2 + 1)
    fb = np.zeros((nfft // 2 + 1, nmel), np.float32)
    for i in range(nmel):
        lo, c, hi = pts[i], pts[i + 1], pts[i + 2]
        fb[:, i] = np.maximum(0, np.minimum((bins - lo) / (c - lo), (hi - bins) / (hi - c)))
    return fb


def log_mel_frontend_specaugment_keyword_cnn():
    """Keyword spotting from raw 8 kHz audio with an in-graph front end: the 4000-sample
    waveform is framed (256-sample Hann-windowed frames, hop 128, gathered with a numpy index
    matrix), jnp.fft.rfft gives the power spectrum, a numpy mel filterbank (40 bands) and a
    log follow, with per-utterance mean/variance normalisation; SpecAugment applies one
    time mask and two frequency masks from passed-in starts and widths (iota comparisons);
    a small 2-D CNN (conv-BN-ReLU, max-pool, global pooling) classifies 12 keywords;
    label-smoothed cross-entropy; Adam with weight decay."""
    NFFT, HOP, NS = 256, 128, 4000
    NF = (NS - NFFT) // HOP + 1
    IDX = np.arange(NF)[:, None] * HOP + np.arange(NFFT)[None, :]
    WIN = np.hanning(NFFT).astype(np.float32)
    FB = _mel_fb(NFFT)

    def frontend(wav, tmask, fmask):
        fr = wav[:, IDX] * WIN
        pw = jnp.square(jnp.abs(jnp.fft.rfft(fr, axis=-1)))
        lm = jnp.log(pw @ FB + 1e-6)
        lm = (lm - jnp.mean(lm, (1, 2), keepdims=True)) / (jnp.std(lm, (1, 2), keepdims=True) + 1e-5)
        ti = jnp.arange(NF)[None, :, None]
        fi = jnp.arange(FB.shape[1])[None, None, :]
        keep = ~((ti >= tmask[:, 0, None, None]) & (ti < (tmask[:, 0] + tmask[:, 1])[:, None, None]))
        for k in range(fmask.shape[1]):
            st, w = fmask[:, k, 0, None, None], fmask[:, k, 1, None, None]
            keep = keep & ~((fi >= st) & (fi < st + w))
        return jnp.where(keep, lm, 0.0)[..., None]

    def loss(p, wav, labels, tmask, fmask):
        x = frontend(wav, tmask, fmask)
        stats = []
        for i, q in enumerate(p["convs"]):
            x, st = _bn(_conv(x, q["w"]), q["g"], q["b"])
            stats.append(st)
            x = jax.nn.relu(x)
            if i < 2:
                x = _maxpool(x)
        logits = jnp.mean(x, (1, 2)) @ p["fc"] + p["fcb"]
        return _smooth_xent(logits, labels), stats

    def step(p, m, v, t, wav, labels, tmask, fmask):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, wav, labels, tmask, fmask)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3, wd=1e-4)
        return l, stats, p, m, v
    chans = [(1, 32), (32, 64), (64, 64)]
    p = {"convs": [{"w": S(3, 3, a, b), "g": S(b), "b": S(b)} for a, b in chans],
         "fc": S(64, 12), "fcb": S(12)}
    B = 32
    return step, (p, p, p, S(), S(B, NS), S(B, dtype=I32), S(B, 2, dtype=I32),
                  S(B, 2, 2, dtype=I32))


# ----------------------------------------------------------------------------- linalg


def bures_wasserstein_gaussian_embedding_eigh_sqrtm():
    """Gaussian entity embeddings compared by the 2-Wasserstein (Bures) distance: every one of
    512 entities has a mean in R^8 and a full covariance A A' + 0.01 I; for each pair in the
    batch the distance |mu_i - mu_j|^2 + tr(S_i + S_j - 2 (S_i^1/2 S_j S_i^1/2)^1/2) uses two
    matrix square roots from batched jnp.linalg.eigh (eigenvalues clipped before the square
    root); a margin ranking loss pushes positive pairs closer than passed-in negative pairs,
    with a covariance trace regulariser; Adagrad."""
    NE, D = 512, 8

    def sqrtm(M):
        w, V = jnp.linalg.eigh(M)
        return jnp.einsum("bij,bj,bkj->bik", V, jnp.sqrt(jnp.maximum(w, 1e-8)), V)

    def bw(mu, A, i, j):
        Si = A[i] @ jnp.swapaxes(A[i], 1, 2) + 0.01 * jnp.eye(D)
        Sj = A[j] @ jnp.swapaxes(A[j], 1, 2) + 0.01 * jnp.eye(D)
        ri = sqrtm(Si)
        cross = sqrtm(ri @ Sj @ ri)
        tr = jnp.trace(Si, axis1=1, axis2=2) + jnp.trace(Sj, axis1=1, axis2=2) \
            - 2.0 * jnp.trace(cross, axis1=1, axis2=2)
        return jnp.sum(jnp.square(mu[i] - mu[j]), -1) + tr

    def loss(p, anc, pos, neg):
        dp = bw(p["mu"], p["A"], anc, pos)
        dn = bw(p["mu"], p["A"], anc, neg)
        reg = 1e-3 * jnp.mean(jnp.sum(jnp.square(p["A"]), (1, 2)))
        return jnp.mean(jax.nn.relu(1.0 + dp - dn)) + reg, jnp.mean((dp < dn).astype(F32))

    def step(p, acc, anc, pos, neg):
        (l, a), g = jax.value_and_grad(loss, has_aux=True)(p, anc, pos, neg)
        acc = tmap(lambda s, g: s + g * g, acc, g)
        p = tmap(lambda w, g, s: w - 0.05 * g / (jnp.sqrt(s) + 1e-10), p, g, acc)
        return l, a, p, acc
    p = {"mu": S(NE, D), "A": S(NE, D, D)}
    B = 128
    return step, (p, p, S(B, dtype=I32), S(B, dtype=I32), S(B, dtype=I32))


# ----------------------------------------------------------------------------- scatter/gather


def mesh_deform_chamfer_laplacian_face_scatter():
    """Single-view mesh reconstruction by template deformation: a 162-vertex template sphere
    with 320 faces (passed vertex positions and face indices) is deformed by a shared MLP that
    reads each vertex's Fourier-encoded position together with the image feature vector;
    the loss is the symmetric Chamfer distance to a 512-point target cloud (pairwise
    distances, min both ways), an edge-length regulariser over the face edges (gathers), and
    a uniform Laplacian smoothing term whose neighbour sums and degrees are accumulated with
    .at[].add scatters over the directed face edges; Adam."""
    NV, NFACE, NP = 162, 320, 512
    FREQ = (2.0 ** np.arange(4)).astype(np.float32) * np.pi

    def loss(p, feat, verts, faces, target):
        B = feat.shape[0]
        ang = verts[:, :, None] * FREQ
        pe = jnp.concatenate([verts, jnp.sin(ang).reshape(NV, -1), jnp.cos(ang).reshape(NV, -1)], -1)
        g = jax.nn.relu(feat @ p["f1"] + p["fb1"])
        h = jax.nn.relu((pe @ p["v1"])[None] + (g @ p["g1"])[:, None] + p["vb1"])
        h = jax.nn.relu(h @ p["v2"] + p["vb2"])
        V = verts[None] + 0.1 * jnp.tanh(h @ p["v3"])
        d = jnp.sum(jnp.square(V[:, :, None] - target[:, None]), -1)
        cham = jnp.mean(jnp.min(d, 2)) + jnp.mean(jnp.min(d, 1))
        a = jnp.concatenate([faces[:, 0], faces[:, 1], faces[:, 2]])
        b = jnp.concatenate([faces[:, 1], faces[:, 2], faces[:, 0]])
        edge = jnp.mean(jnp.sum(jnp.square(V[:, a] - V[:, b]), -1))
        src, dst = jnp.concatenate([a, b]), jnp.concatenate([b, a])
        nsum = jnp.zeros_like(V).at[:, dst].add(V[:, src])
        deg = jnp.zeros((NV,), F32).at[dst].add(1.0)
        lap = nsum / jnp.maximum(deg, 1.0)[None, :, None] - V
        lapl = jnp.mean(jnp.sum(jnp.square(lap), -1))
        return cham + 0.1 * edge + 0.3 * lapl, cham

    def step(p, m, v, t, feat, verts, faces, target):
        (l, c), g = jax.value_and_grad(loss, has_aux=True)(p, feat, verts, faces, target)
        p, m, v = _adam(p, m, v, g, t, lr=1e-4)
        return l, c, p, m, v
    Fd, H = 128, 128
    PE = 3 + 3 * 2 * len(FREQ)
    p = {"f1": S(Fd, H), "fb1": S(H), "v1": S(PE, H), "g1": S(H, H), "vb1": S(H), "v2": S(H, H),
         "vb2": S(H), "v3": S(H, 3)}
    B = 8
    return step, (p, p, p, S(), S(B, Fd), S(NV, 3), S(NFACE, 3, dtype=I32), S(B, NP, 3))


# ----------------------------------------------------------------------------- dynamic slices


def double_dqn_replay_ring_insert_dynamic_window():
    """Double DQN learner with an in-graph replay ring buffer: a chunk of 64 fresh transitions
    (observation, action, reward, next observation, done) is written at the passed-in write
    pointer with lax.dynamic_update_slice into 2048-slot buffers, a training window of 128
    consecutive transitions starting at a passed-in offset is read back with
    lax.dynamic_slice, the online network picks the next action and the target network
    evaluates it, Huber TD loss, RMSProp-centred update of the online network, Polyak
    update of the target network, and the absolute TD errors are written into a priority
    buffer with dynamic_update_slice."""
    CAP, CH, WIN, GAMMA = 2048, 64, 128, 0.99

    def qnet(p, o):
        h = jax.nn.relu(o @ p["w1"] + p["b1"])
        h = jax.nn.relu(h @ p["w2"] + p["b2"])
        v = h @ p["v"] + p["vb"]
        a = h @ p["a"] + p["ab"]
        return v + a - jnp.mean(a, -1, keepdims=True)

    def step(p, tp, ms, mg, buf, prio, new, ptr, start):
        buf = {k: lax.dynamic_update_slice_in_dim(buf[k], new[k], ptr, 0) for k in buf}
        win = {k: lax.dynamic_slice_in_dim(buf[k], start, WIN, 0) for k in buf}

        def loss(p):
            q = jnp.take_along_axis(qnet(p, win["obs"]), win["act"][:, None], -1)[:, 0]
            a2 = jnp.argmax(qnet(p, win["nobs"]), -1)
            q2 = jnp.take_along_axis(qnet(tp, win["nobs"]), a2[:, None], -1)[:, 0]
            y = lax.stop_gradient(win["rew"] + GAMMA * (1.0 - win["done"]) * q2)
            td = q - y
            hub = jnp.where(jnp.abs(td) < 1.0, 0.5 * td * td, jnp.abs(td) - 0.5)
            return jnp.mean(hub), td
        (l, td), g = jax.value_and_grad(loss, has_aux=True)(p)
        ms = tmap(lambda s, g: 0.95 * s + 0.05 * g * g, ms, g)
        mg = tmap(lambda s, g: 0.95 * s + 0.05 * g, mg, g)
        p = tmap(lambda w, g, s, a: w - 2.5e-4 * g / jnp.sqrt(s - a * a + 1e-5), p, g, ms, mg)
        tp = tmap(lambda a, b: 0.995 * a + 0.005 * b, tp, p)
        prio = lax.dynamic_update_slice_in_dim(prio, jnp.abs(td) + 1e-3, start, 0)
        return l, p, tp, ms, mg, buf, prio
    O, H, A = 16, 128, 6
    p = {"w1": S(O, H), "b1": S(H), "w2": S(H, H), "b2": S(H), "v": S(H, 1), "vb": S(1),
         "a": S(H, A), "ab": S(A)}

    def tr(n):
        return {"obs": S(n, O), "act": S(n, dtype=I32), "rew": S(n), "nobs": S(n, O), "done": S(n)}
    return step, (p, p, p, p, tr(CAP), S(CAP), tr(CH), S(dtype=I32), S(dtype=I32))


# ----------------------------------------------------------------------------- mixed precision


def bf16_grn_convnextv2_masked_pretrain():
    """ConvNeXt V2 masked-autoencoder (FCMAE) pre-training step in bfloat16: 32x32 images are
    masked by a passed-in 8x8 grid of 4x4 patches (60 % masked); a 4x4 patchify stem and
    three ConvNeXt V2 blocks (7x7 depthwise conv via feature_group_count, LayerNorm with f32
    statistics, pointwise 4x expansion with GELU, Global Response Normalisation -- spatial L2
    norm divided by its channel mean, with gamma/beta -- and pointwise projection) run in
    bf16 with the mask re-applied after every block to emulate sparse convolution; a
    one-block decoder with a mask token predicts each patch's pixels; the loss is the f32
    MSE against per-patch normalised targets on masked patches only; AdamW on f32 master
    weights with a cosine schedule."""
    P, G = 4, 8
    bf = lambda w: w.astype(BF16)

    def ln32(x, g, b):
        x32 = x.astype(F32)
        m = jnp.mean(x32, -1, keepdims=True)
        v = jnp.mean(jnp.square(x32 - m), -1, keepdims=True)
        return ((x32 - m) * lax.rsqrt(v + 1e-6) * g + b).astype(BF16)

    def grn(x, g, b):
        x32 = x.astype(F32)
        gx = jnp.sqrt(jnp.sum(jnp.square(x32), (1, 2), keepdims=True))
        nx = gx / (jnp.mean(gx, -1, keepdims=True) + 1e-6)
        return (g * (x32 * nx) + b + x32).astype(BF16)

    def block(q, x):
        c = x.shape[-1]
        h = _conv(x, bf(q["dw"]), groups=c) + bf(q["dwb"])
        h = ln32(h, q["g"], q["b"])
        h = jax.nn.gelu(h @ bf(q["w1"]) + bf(q["b1"]))
        h = grn(h, q["gg"], q["gb"])
        return x + h @ bf(q["w2"]) + bf(q["b2"])

    def loss(p, img, mask):
        n = img.shape[0]
        keep = (1.0 - mask)[..., None].astype(BF16)
        x = _conv(bf(img), bf(p["stem"]), P, "VALID") + bf(p["sb"])
        x = ln32(x, p["sg"], p["sbeta"]) * keep
        for q in p["enc"]:
            x = block(q, x) * keep
        x = x @ bf(p["proj"])
        x = x * keep + bf(p["mtok"]) * (1.0 - keep)
        x = block(p["dec"], x)
        pred = (x @ bf(p["head"])).astype(F32)
        tgt = img.reshape(n, G, P, G, P, 3).transpose(0, 1, 3, 2, 4, 5).reshape(n, G, G, -1)
        tm = jnp.mean(tgt, -1, keepdims=True)
        tv = jnp.var(tgt, -1, keepdims=True)
        tgt = (tgt - tm) * lax.rsqrt(tv + 1e-6)
        per = jnp.mean(jnp.square(pred - tgt), -1)
        return jnp.sum(per * mask) / jnp.maximum(jnp.sum(mask), 1.0)

    def step(p, m, v, t, img, mask):
        l, g = jax.value_and_grad(loss)(p, img, mask)
        g = tmap(lambda a: a.astype(F32), g)
        p, m, v = _adam(p, m, v, g, t, lr=_cosine_lr(t, 1.5e-4, 40000.0, warm=1000.0),
                        b2=0.95, wd=0.05)
        return l, p, m, v

    def blk(c):
        return {"dw": S(7, 7, 1, c), "dwb": S(c), "g": S(c), "b": S(c), "w1": S(c, 4 * c),
                "b1": S(4 * c), "gg": S(4 * c), "gb": S(4 * c), "w2": S(4 * c, c), "b2": S(c)}
    C, DC = 96, 64
    p = {"stem": S(P, P, 3, C), "sb": S(C), "sg": S(C), "sbeta": S(C),
         "enc": [blk(C), blk(C), blk(C)], "proj": S(C, DC), "mtok": S(DC), "dec": blk(DC),
         "head": S(DC, P * P * 3)}
    return step, (p, p, p, S(), S(32, 32, 32, 3), S(32, G, G))


# ----------------------------------------------------------------------------- optimizers


def came_confidence_factored_second_moment_lm():
    """CAME (confidence-guided adaptive memory-efficient) optimizer on a two-layer causal
    language model with QK-LayerNorm attention and a GELU FFN: for matrices the second
    moment is factored Adafactor-style into row and column EMAs of g^2 + eps, the update
    g / sqrt(v) is clipped by its RMS, its EMA m is taken, and the instability (u - m)^2 is
    itself factored into row/column EMAs whose reconstruction S scales the final step
    m / sqrt(S); vectors fall back to unfactored moments; the optimizer state is a list
    matching the flattened parameters with per-leaf structure depending on rank; linear
    warmup, decoupled weight decay."""
    H = 4
    B1, B2, B3, E1, E2, CLIPD = 0.9, 0.999, 0.9999, 1e-30, 1e-16, 1.0

    def layer(q, x):
        b, t, d = x.shape
        dh = d // H
        h = _ln(x, q["g1"], q["b1"])
        qq, kk, vv = (a.reshape(b, t, H, dh) for a in jnp.split(h @ q["qkv"], 3, -1))
        qq = _ln(qq, q["qn"], 0.0)
        kk = _ln(kk, q["kn"], 0.0)
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(dh)
        s = jnp.where(np.tril(np.ones((t, t), bool)), s, -1e9)
        x = x + jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d) @ q["o"]
        return x + jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"]) @ q["f2"]

    def loss(p, tok, tgt):
        x = p["emb"][tok] + p["pos"]
        for q in p["layers"]:
            x = layer(q, x)
        return _xent(_ln(x, p["gf"], p["bf"]) @ p["out"], tgt)

    def came(w, g, st, lr):
        rms = lambda a: jnp.sqrt(jnp.mean(jnp.square(a)))
        g2 = g * g + E1
        if w.ndim == 2:
            r = B2 * st["r"] + (1 - B2) * jnp.mean(g2, 1)
            c = B2 * st["c"] + (1 - B2) * jnp.mean(g2, 0)
            vh = r[:, None] * c[None, :] / jnp.mean(r)
            new = {"r": r, "c": c}
        else:
            vh = B2 * st["v"] + (1 - B2) * g2
            new = {"v": vh}
        u = g * lax.rsqrt(vh)
        u = u / jnp.maximum(1.0, rms(u) / CLIPD)
        m = B1 * st["m"] + (1 - B1) * u
        inst = jnp.square(u - m) + E2
        if w.ndim == 2:
            R = B3 * st["R"] + (1 - B3) * jnp.mean(inst, 1)
            C = B3 * st["C"] + (1 - B3) * jnp.mean(inst, 0)
            Sm = R[:, None] * C[None, :] / jnp.mean(R)
            upd = m * lax.rsqrt(Sm)
            new.update(R=R, C=C)
        else:
            upd = m
        new["m"] = m
        return w - lr * (upd + 0.01 * w), new

    def step(p, state, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        lr = 2e-4 * jnp.minimum(1.0, (t + 1.0) / 1000.0)
        wl, tdef = jax.tree_util.tree_flatten(p)
        gl = jax.tree_util.tree_leaves(g)
        out = [came(w, gg, st, lr) for w, gg, st in zip(wl, gl, state)]
        return l, jax.tree_util.tree_unflatten(tdef, [o[0] for o in out]), [o[1] for o in out]
    V, D, T = 256, 64, 32
    q = {"g1": S(D), "b1": S(D), "qkv": S(D, 3 * D), "qn": S(D // H), "kn": S(D // H),
         "o": S(D, D), "g2": S(D), "b2": S(D), "f1": S(D, 4 * D), "f2": S(4 * D, D)}
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [q, dict(q)], "gf": S(D), "bf": S(D),
         "out": S(D, V)}

    def st(s):
        if len(s.shape) == 2:
            a, b = s.shape
            return {"r": S(a), "c": S(b), "R": S(a), "C": S(b), "m": S(a, b)}
        return {"v": S(*s.shape), "m": S(*s.shape)}
    state = [st(s) for s in leaves(p)]
    return step, (p, state, S(), S(16, T, dtype=I32), S(16, T, dtype=I32))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [node_oblivious_soft_decision_trees_entmoid, resmlp_affine_cross_patch_sublayers],
    "cnn": [inception_factorized_asym_kernels_aux_head, cbam_channel_spatial_attention_resnet],
    "transformer": [cosformer_relu_cos_reweighted_linear_attention,
                    sparse_transformer_strided_fixed_pattern_masks],
    "rnn": [antisymmetric_rnn_gated_euler_scan, dilated_lstm_stack_time_fold_scan],
    "moe": [xmoe_hypersphere_cosine_router_capacity_drop],
    "vae": [planar_flow_amortized_posterior_vae],
    "unet": [noise2void_blindspot_masked_pixel_unet],
    "gnn": [chebnet_chebyshev_laplacian_recurrence],
    "quant": [mxint8_shared_exponent_block_fakequant_mlp],
    "remat": [remat_unrolled_uvit_long_skips_names_policy,
              remat_scanned_dilation_cycles_causal_conv_stack],
    "custom_vjp": [box_qp_layer_projected_gradient_implicit_vjp],
    "control": [hessian_free_cg_while_gauss_newton_damping,
                length_bucket_switch_microbatch_fori_accum],
    "sort": [neuralsort_relaxed_permutation_quantile_regress],
    "fft": [log_mel_frontend_specaugment_keyword_cnn],
    "linalg": [bures_wasserstein_gaussian_embedding_eigh_sqrtm],
    "scatter_gather": [mesh_deform_chamfer_laplacian_face_scatter],
    "dynamic": [double_dqn_replay_ring_insert_dynamic_window],
    "mixed": [bf16_grn_convnextv2_masked_pretrain],
    "optimizer": [came_confidence_factored_second_moment_lm],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["cosformer_relu_cos_reweighted_linear_attention",
           "resmlp_affine_cross_patch_sublayers",
           "inception_factorized_asym_kernels_aux_head", "antisymmetric_rnn_gated_euler_scan",
           "xmoe_hypersphere_cosine_router_capacity_drop",
           "noise2void_blindspot_masked_pixel_unet",
           "remat_unrolled_uvit_long_skips_names_policy",
           "remat_scanned_dilation_cycles_causal_conv_stack",
           "log_mel_frontend_specaugment_keyword_cnn",
           "length_bucket_switch_microbatch_fori_accum",
           "bf16_grn_convnextv2_masked_pretrain", "came_confidence_factored_second_moment_lm"]
SHARDED_SET = ["cosformer_relu_cos_reweighted_linear_attention",
               "resmlp_affine_cross_patch_sublayers",
               "bf16_grn_convnextv2_masked_pretrain",
               "xmoe_hypersphere_cosine_router_capacity_drop",
               "remat_unrolled_uvit_long_skips_names_policy",
               "cbam_channel_spatial_attention_resnet",
               "came_confidence_factored_second_moment_lm",
               "planar_flow_amortized_posterior_vae"]
