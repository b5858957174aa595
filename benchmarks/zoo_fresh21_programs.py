"""Twenty-first fresh set: 25 JAX programs written by a helper on 2026-11-29, kept outside the
repository as a held-out set, measured unseen at the start and end of that day's fourth
session and committed then (docstring kept at 3 lines: the dumps record line numbers)::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh21_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh21_programs python benchmarks/accuracy.py --data DIR

Written for JAX 0.4.30 up to the current release (no API newer than 0.4.30).
"""

from __future__ import annotations

import math

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax
from jax.ad_checkpoint import checkpoint_name
from jax.scipy.linalg import solve_triangular

F32 = jnp.float32
BF16 = jnp.bfloat16
I32 = jnp.int32
U32 = jnp.uint32
tmap = jax.tree_util.tree_map
leaves = jax.tree_util.tree_leaves
CP = jax.checkpoint_policies


def S(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


def _adamw_tree(p, m, v, g, t, lr=1e-3, b1=0.9, b2=0.999, wd=0.0, eps=1e-8):
    m = tmap(lambda m, g: b1 * m + (1 - b1) * g, m, g)
    v = tmap(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
    c1 = 1.0 - b1 ** t
    c2 = 1.0 - b2 ** t
    p = tmap(lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + wd * p), p, m, v)
    return p, m, v


def _layernorm(x, g, b, eps=1e-5):
    mu = jnp.mean(x, -1, keepdims=True)
    var = jnp.mean(jnp.square(x - mu), -1, keepdims=True)
    return (x - mu) * lax.rsqrt(var + eps) * g + b


def _rmsnorm(x, g, eps=1e-6):
    return x * lax.rsqrt(jnp.mean(jnp.square(x), -1, keepdims=True) + eps) * g


def _batchnorm_train(x, g, b, axes=(0, 1, 2), eps=1e-5):
    """Training-mode batch norm over ``axes``; returns the output and the batch (mean, var)."""
    mu = jnp.mean(x, axes)
    var = jnp.var(x, axes)
    return (x - mu) * lax.rsqrt(var + eps) * g + b, (mu, var)


def _conv2d(x, w, stride=1, pad="SAME", groups=1):
    return lax.conv_general_dilated(x, w, (stride, stride), pad,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                    feature_group_count=groups)


def _int_xent(logits, labels):
    logp = jax.nn.log_softmax(logits, -1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[..., None], -1))


def _clip_tree_norm(g, max_norm=1.0):
    n = jnp.sqrt(sum(jnp.sum(jnp.square(a)) for a in leaves(g)))
    return tmap(lambda a: a * jnp.minimum(1.0, max_norm / (n + 1e-6)), g)


def _warmup_cosine(t, base, total, warm=0.0):
    c = 0.5 * (1.0 + jnp.cos(jnp.pi * jnp.minimum(t / total, 1.0)))
    if warm:
        c = c * jnp.minimum(1.0, (t + 1.0) / warm)
    return base * c


def _causal_mask(t):
    return np.tril(np.ones((t, t), bool))


def _time_major(a):
    return jnp.swapaxes(a, 0, 1)


# ----------------------------------------------------------------------------- mlp


def selu_alpha_dropout_self_normalizing_count_regressor():
    """Self-normalising network (SNN) for count regression on 64 tabular features: six dense
    SELU layers of width 256 with alpha dropout (keep probability 0.95, the dropped units set
    to the SELU saturation value -lambda*alpha and the result affinely corrected to keep zero
    mean and unit variance) driven by a passed-in raw PRNG key folded per layer; the output
    is a log-rate and the loss is the Poisson negative log-likelihood; AMSGrad (Adam with the
    running maximum of the second moment) and an inverse-square-root learning-rate decay."""
    KEEP = 0.95
    LAM, ALPHA = 1.0507009873554805, 1.6732632423543772
    AP = -LAM * ALPHA
    A = (KEEP + AP * AP * KEEP * (1.0 - KEEP)) ** -0.5
    B = -A * (1.0 - KEEP) * AP

    def alpha_drop(x, key):
        keep = jax.random.bernoulli(key, KEEP, x.shape)
        return A * jnp.where(keep, x, AP) + B

    def loss(p, x, y, key):
        h = x
        for i, q in enumerate(p["hidden"]):
            h = jax.nn.selu(h @ q["w"] + q["b"])
            h = alpha_drop(h, jax.random.fold_in(key, i))
        r = jnp.clip((h @ p["out"])[:, 0] + p["ob"], -12.0, 12.0)
        nll = jnp.exp(r) - y * r
        return jnp.mean(nll), jnp.mean(jnp.abs(jnp.exp(r) - y))

    def step(p, m, v, vmax, t, x, y, key):
        (l, mae), g = jax.value_and_grad(loss, has_aux=True)(p, x, y, key)
        m = tmap(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v = tmap(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        vmax = tmap(jnp.maximum, vmax, v)
        lr = 1e-3 * lax.rsqrt(jnp.maximum(t, 1.0) / 100.0 + 1.0)
        p = tmap(lambda w, m, u: w - lr * (m / (1.0 - 0.9 ** t)) / (jnp.sqrt(u) + 1e-8),
                 p, m, vmax)
        return l, mae, p, m, v, vmax
    F, H = 64, 256
    dims = [F] + [H] * 6
    p = {"hidden": [{"w": S(a, b), "b": S(b)} for a, b in zip(dims[:-1], dims[1:])],
         "out": S(H, 1), "ob": S()}
    return step, (p, p, p, p, S(), S(512, F), S(512), S(2, dtype=U32))


def quaternion_hamilton_product_dense_classifier():
    """Quaternion-valued MLP classifier on 128 real features read as 32 quaternions: each
    quaternion dense layer keeps four real component matrices (r, i, j, k) and assembles the
    real 4x4 block Hamilton-product matrix [[r, -i, -j, -k], [i, r, -k, j], [j, k, r, -i],
    [k, -j, i, r]] by concatenation before the matmul (4x fewer parameters than a real
    layer); the activation is a modulus-gated ReLU acting on each quaternion's norm with a
    learned bias; three quaternion layers then a real linear head over 20 classes;
    label-smoothed cross-entropy; Nadam (Nesterov-accelerated Adam)."""

    def hamilton(q):
        r, i, j, k = q["r"], q["i"], q["j"], q["k"]
        rows = [jnp.concatenate(row, 1) for row in
                ([r, -i, -j, -k], [i, r, -k, j], [j, k, r, -i], [k, -j, i, r])]
        return jnp.concatenate(rows, 0)

    def modgate(x, bias):
        b, n = x.shape
        comp = x.reshape(b, 4, n // 4)
        norm = jnp.sqrt(jnp.sum(jnp.square(comp), 1, keepdims=True) + 1e-6)
        scale = jax.nn.relu(norm + bias) / norm
        return (comp * scale).reshape(b, n)

    def loss(p, x, labels):
        h = x
        for q in p["qlayers"]:
            h = modgate(h @ hamilton(q) + q["bias"], q["gate"])
        logits = h @ p["head"] + p["hb"]
        C = logits.shape[-1]
        tgt = jax.nn.one_hot(labels, C) * 0.9 + 0.1 / C
        return -jnp.mean(jnp.sum(tgt * jax.nn.log_softmax(logits, -1), -1))

    def step(p, m, v, t, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        b1, b2 = 0.9, 0.999
        m = tmap(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = tmap(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        mhat = tmap(lambda m, g: b1 * m / (1 - b1 ** (t + 1)) + (1 - b1) * g / (1 - b1 ** t), m, g)
        p = tmap(lambda w, mh, v: w - 2e-3 * mh / (jnp.sqrt(v / (1 - b2 ** t)) + 1e-8), p, mhat, v)
        return l, p, m, v

    def ql(a, b):
        return {"r": S(a, b), "i": S(a, b), "j": S(a, b), "k": S(a, b), "bias": S(4 * b),
                "gate": S(b)}
    p = {"qlayers": [ql(32, 64), ql(64, 64), ql(64, 32)], "head": S(128, 20), "hb": S(20)}
    return step, (p, p, p, S(), S(256, 128), S(256, dtype=I32))


# ----------------------------------------------------------------------------- cnn


def csp_darknet_cross_stage_split_mish_stages():
    """CSPDarknet-style classifier on 32x32 images: a conv-BN-Mish stem, then three cross
    stage partial stages (strided 3x3 downsampling conv; two 1x1 convs split the features
    into a shortcut part and a part that goes through 1, 2 and 1 Darknet residual units of
    1x1 -> 3x3 convolutions; a 1x1 transition, concatenation with the shortcut part and a
    1x1 fusion conv); Mish written as x * tanh(softplus(x)); global average pool and a
    linear head; cross-entropy; BN running averages returned; SGD with momentum, weight
    decay, a quartic burn-in and polynomial (power 4) learning-rate decay."""

    def mish(x):
        return x * jnp.tanh(jax.nn.softplus(x))

    def cbm(q, x, stats, stride=1):
        h, st = _batchnorm_train(_conv2d(x, q["w"], stride), q["g"], q["b"])
        stats.append(st)
        return mish(h)

    def stage(q, x, stats):
        x = cbm(q["down"], x, stats, 2)
        a = cbm(q["split_a"], x, stats)
        b = cbm(q["split_b"], x, stats)
        for u in q["units"]:
            b = b + cbm(u["c3"], cbm(u["c1"], b, stats), stats)
        b = cbm(q["trans"], b, stats)
        return cbm(q["fuse"], jnp.concatenate([b, a], -1), stats)

    def loss(p, img, labels):
        stats = []
        x = cbm(p["stem"], img, stats)
        for q in p["stages"]:
            x = stage(q, x, stats)
        logits = jnp.mean(x, (1, 2)) @ p["fc"] + p["fcb"]
        return _int_xent(logits, labels), stats

    def step(p, mom, run, t, img, labels):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels)
        run = tmap(lambda r, s: 0.97 * r + 0.03 * s, run, lax.stop_gradient(stats))
        burn = jnp.minimum(1.0, t / 1000.0) ** 4
        lr = 0.01 * burn * (1.0 - jnp.minimum(t, 50000.0) / 50000.0) ** 4
        g = tmap(lambda g, w: g + 5e-4 * w, g, p)
        mom = tmap(lambda b, g: 0.937 * b + g, mom, g)
        p = tmap(lambda w, b: w - lr * b, p, mom)
        return l, p, mom, run

    run = []

    def u(k, ci, co):
        run.append((S(co), S(co)))
        return {"w": S(k, k, ci, co), "g": S(co), "b": S(co)}
    stages = []
    cin = 24
    stem = u(3, 3, 24)
    for c, n in ((48, 1), (96, 2), (192, 1)):
        h = c // 2
        q = {"down": u(3, cin, c), "split_a": u(1, c, h), "split_b": u(1, c, h)}
        q["units"] = [{"c1": u(1, h, h), "c3": u(3, h, h)} for _ in range(n)]
        q["trans"] = u(1, h, h)
        q["fuse"] = u(1, 2 * h, c)
        stages.append(q)
        cin = c
    p = {"stem": stem, "stages": stages, "fc": S(192, 10), "fcb": S(10)}
    return step, (p, p, run, S(), S(32, 32, 32, 3), S(32, dtype=I32))


def involution_pixelwise_generated_kernels_stem_net():
    """Involution network (RedNet-style) on 32x32 images: inside each bottleneck block the 3x3
    convolution is replaced by an involution -- a kernel-generation branch (1x1 reduce,
    GroupNorm, ReLU, 1x1 expand to groups x 5 x 5 weights) produces a separate 5x5 kernel for
    every pixel and channel group, and the neighbourhoods are extracted with
    lax.conv_general_dilated_patches and contracted with the generated kernels; two stages of
    two blocks (widths 32 and 64, average-pool + 1x1 projection between stages), GroupNorm
    everywhere; label-smoothed cross-entropy; AdamW with warmup and cosine decay."""
    K, G, GN = 5, 4, 8

    def groupnorm(x, g, b):
        n, h, w, c = x.shape
        xg = x.reshape(n, h, w, GN, c // GN)
        mu = jnp.mean(xg, (1, 2, 4), keepdims=True)
        var = jnp.var(xg, (1, 2, 4), keepdims=True)
        return ((xg - mu) * lax.rsqrt(var + 1e-5)).reshape(n, h, w, c) * g + b

    def involution(q, x):
        n, h, w, c = x.shape
        r = jax.nn.relu(groupnorm(_conv2d(x, q["red"]), q["rg"], q["rb"]))
        ker = _conv2d(r, q["span"]).reshape(n, h, w, G, 1, K * K)
        pt = lax.conv_general_dilated_patches(x, (K, K), (1, 1), "SAME",
                                              dimension_numbers=("NHWC", "HWIO", "NHWC"))
        pt = pt.reshape(n, h, w, G, c // G, K * K)
        return jnp.sum(pt * ker, -1).reshape(n, h, w, c)

    def block(q, x):
        h = jax.nn.relu(groupnorm(_conv2d(x, q["in"]), q["g1"], q["b1"]))
        h = jax.nn.relu(groupnorm(involution(q["inv"], h), q["g2"], q["b2"]))
        h = groupnorm(_conv2d(h, q["out"]), q["g3"], q["b3"])
        return jax.nn.relu(x + h)

    def loss(p, img, labels):
        x = jax.nn.relu(groupnorm(_conv2d(img, p["stem"]), p["sg"], p["sb"]))
        for si, st in enumerate(p["stages"]):
            if si:
                x = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
                x = _conv2d(x, st["proj"])
            for q in st["blocks"]:
                x = block(q, x)
        logits = jnp.mean(x, (1, 2)) @ p["fc"] + p["fcb"]
        tgt = jax.nn.one_hot(labels, 10) * 0.9 + 0.01
        return -jnp.mean(jnp.sum(tgt * jax.nn.log_softmax(logits, -1), -1))

    def step(p, m, v, t, img, labels):
        l, g = jax.value_and_grad(loss)(p, img, labels)
        lr = _warmup_cosine(t, 2e-3, 30000.0, warm=500.0)
        p, m, v = _adamw_tree(p, m, v, g, t, lr=lr, wd=0.05)
        return l, p, m, v

    def blk(c):
        mid = c // 2
        return {"in": S(1, 1, c, mid), "g1": S(mid), "b1": S(mid),
                "inv": {"red": S(1, 1, mid, mid // 2), "rg": S(mid // 2), "rb": S(mid // 2),
                        "span": S(1, 1, mid // 2, G * K * K)},
                "g2": S(mid), "b2": S(mid), "out": S(1, 1, mid, c), "g3": S(c), "b3": S(c)}
    p = {"stem": S(3, 3, 3, 32), "sg": S(32), "sb": S(32),
         "stages": [{"blocks": [blk(32), blk(32)]},
                    {"proj": S(1, 1, 32, 64), "blocks": [blk(64), blk(64)]}],
         "fc": S(64, 10), "fcb": S(10)}
    return step, (p, p, p, S(), S(16, 32, 32, 3), S(16, dtype=I32))


# ----------------------------------------------------------------------------- transformer


def mixture_of_softmaxes_decoder_lm_latent_contexts():
    """Causal language model with a mixture-of-softmaxes output layer (breaking the softmax
    bottleneck): two pre-LN decoder layers (causal attention with four heads, ReLU FFN); the
    final hidden state yields mixture priors over 4 components and 4 tanh-projected latent
    contexts, each scored against the tied input embedding, and the next-token probability
    is the prior-weighted mixture of the 4 softmaxes, computed stably as a logsumexp of
    log-prior plus log-softmax; the mixture entropy is reported; Adam with clipping and an
    inverse-square-root (Noam) schedule."""
    H, K = 4, 4

    def attn(q, x):
        b, t, d = x.shape
        dh = d // H
        qq, kk, vv = (a.reshape(b, t, H, dh) for a in jnp.split(x @ q["qkv"] + q["qkvb"], 3, -1))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(dh)
        s = jnp.where(_causal_mask(t), s, -1e9)
        return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d) @ q["o"]

    def loss(p, tok, tgt):
        b, t = tok.shape
        x = p["emb"][tok] * math.sqrt(p["emb"].shape[1]) + p["pos"][:t]
        for q in p["layers"]:
            x = x + attn(q, _layernorm(x, q["g1"], q["b1"]))
            x = x + jax.nn.relu(_layernorm(x, q["g2"], q["b2"]) @ q["f1"] + q["fb1"]) @ q["f2"]
        h = _layernorm(x, p["gf"], p["bf"])
        logprior = jax.nn.log_softmax(h @ p["prior"], -1)
        ctx = jnp.tanh(h @ p["latent"] + p["lb"]).reshape(b, t, K, -1)
        logp = jax.nn.log_softmax(jnp.einsum("btkd,vd->btkv", ctx, p["emb"]) + p["ob"], -1)
        lp_tgt = jnp.take_along_axis(logp, jnp.broadcast_to(tgt[:, :, None, None], (b, t, K, 1)),
                                     -1)[..., 0]
        ll = jax.nn.logsumexp(logprior + lp_tgt, -1)
        ent = -jnp.mean(jnp.sum(jnp.exp(logprior) * logprior, -1))
        return -jnp.mean(ll), ent

    def step(p, m, v, t, tok, tgt):
        (l, ent), g = jax.value_and_grad(loss, has_aux=True)(p, tok, tgt)
        D = p["emb"].shape[1]
        lr = 2.0 * D ** -0.5 * jnp.minimum((t + 1.0) ** -0.5, (t + 1.0) * 400.0 ** -1.5)
        p, m, v = _adamw_tree(p, m, v, _clip_tree_norm(g, 0.25), t, lr=lr, b2=0.98, eps=1e-9)
        return l, ent, p, m, v
    V, D, T, F = 512, 64, 64, 256
    q = {"g1": S(D), "b1": S(D), "qkv": S(D, 3 * D), "qkvb": S(3 * D), "o": S(D, D),
         "g2": S(D), "b2": S(D), "f1": S(D, F), "fb1": S(F), "f2": S(F, D)}
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [q, dict(q)], "gf": S(D), "bf": S(D),
         "prior": S(D, K), "latent": S(D, K * D), "lb": S(K * D), "ob": S(V)}
    return step, (p, p, p, S(), S(16, T, dtype=I32), S(16, T, dtype=I32))


def prefix_tuning_reparameterized_frozen_encoder_sentiment():
    """Prefix-tuning of a frozen three-layer post-LN Transformer encoder for sentence
    classification: the frozen weights are passed in and not differentiated; the trainable
    part is a small prefix table (8 virtual tokens x 32) reparameterised by a two-layer MLP
    into per-layer key and value prefixes that are concatenated in front of every layer's
    keys and values (queries stay the real tokens); a key-padding mask from the passed-in
    lengths, with prefix positions always visible; first-token pooling, a trainable tanh
    pooler and linear head; cross-entropy; Adam with linear decay on the trainable part."""
    H, NP, NL = 4, 8, 3

    def layer(w, x, pk, pv, valid):
        b, t, d = x.shape
        dh = d // H
        qq, kk, vv = (a.reshape(b, t, H, dh) for a in jnp.split(x @ w["qkv"] + w["qkvb"], 3, -1))
        pk = jnp.broadcast_to(pk.reshape(1, NP, H, dh), (b, NP, H, dh))
        pv = jnp.broadcast_to(pv.reshape(1, NP, H, dh), (b, NP, H, dh))
        kk = jnp.concatenate([pk, kk], 1)
        vv = jnp.concatenate([pv, vv], 1)
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(dh)
        vis = jnp.concatenate([jnp.ones((b, NP), bool), valid], 1)
        s = jnp.where(vis[:, None, None, :], s, -1e9)
        a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d)
        x = _layernorm(x + a @ w["o"], w["g1"], w["b1"])
        f = jax.nn.gelu(x @ w["f1"] + w["fb1"]) @ w["f2"] + w["fb2"]
        return _layernorm(x + f, w["g2"], w["b2"])

    def loss(tr, fz, tok, lens, labels):
        b, t = tok.shape
        valid = jnp.arange(t)[None, :] < lens[:, None]
        pre = jnp.tanh(tr["prefix"] @ tr["r1"] + tr["rb1"]) @ tr["r2"] + tr["rb2"]
        D = fz["emb"].shape[1]
        pre = pre.reshape(NP, NL, 2, D)
        x = _layernorm(fz["emb"][tok] + fz["pos"][:t], fz["eg"], fz["eb"])
        for i, w in enumerate(fz["layers"]):
            x = layer(w, x, pre[:, i, 0], pre[:, i, 1], valid)
        pooled = jnp.tanh(x[:, 0] @ tr["pool"] + tr["pb"])
        return _int_xent(pooled @ tr["head"] + tr["hb"], labels)

    def step(tr, m, v, t, fz, tok, lens, labels):
        l, g = jax.value_and_grad(loss)(tr, fz, tok, lens, labels)
        lr = 5e-4 * jnp.maximum(0.0, 1.0 - t / 20000.0)
        tr, m, v = _adamw_tree(tr, m, v, g, t, lr=lr)
        return l, tr, m, v
    V, D, T, F, R = 1000, 96, 48, 256, 32
    w = {"qkv": S(D, 3 * D), "qkvb": S(3 * D), "o": S(D, D), "g1": S(D), "b1": S(D),
         "f1": S(D, F), "fb1": S(F), "f2": S(F, D), "fb2": S(D), "g2": S(D), "b2": S(D)}
    fz = {"emb": S(V, D), "pos": S(T, D), "eg": S(D), "eb": S(D), "layers": [w, dict(w), dict(w)]}
    tr = {"prefix": S(NP, R), "r1": S(R, 128), "rb1": S(128), "r2": S(128, NL * 2 * D),
          "rb2": S(NL * 2 * D), "pool": S(D, D), "pb": S(D), "head": S(D, 3), "hb": S(3)}
    return step, (tr, tr, tr, S(), fz, S(32, T, dtype=I32), S(32, dtype=I32), S(32, dtype=I32))


# ----------------------------------------------------------------------------- rnn / scan


def hierarchical_multiscale_lstm_boundary_straight_through():
    """Two-layer hierarchical multiscale LSTM (HM-LSTM) character model in a lax.scan: each
    layer has a binary boundary detector (hard sigmoid with a slope annealed from the step
    count, binarised by rounding with a straight-through gradient); the cell chooses between
    UPDATE, COPY (the layer below saw no boundary) and FLUSH (this layer fired at the
    previous step) with jnp.where on the boundary values, the top-down input being gated by
    the previous boundary; the output layer gates both layers' states before predicting the
    next of 64 characters; cross-entropy plus the mean boundary rate; Adam with clipping."""
    V, E, H = 64, 32, 96

    def hard_sig(x, slope):
        return jnp.clip((slope * x + 1.0) * 0.5, 0.0, 1.0)

    def binar(z):
        return z + lax.stop_gradient(jnp.round(z) - z)

    def cell(q, h, c, z_prev, bottom, z_below, top, slope):
        s = bottom * z_below + h @ q["u"] + z_prev * top + q["b"]
        f, i, o, g, zt = jnp.split(s, [H, 2 * H, 3 * H, 4 * H], -1)
        f, i, o, g = jax.nn.sigmoid(f), jax.nn.sigmoid(i), jax.nn.sigmoid(o), jnp.tanh(g)
        upd = f * c + i * g
        flush = i * g
        c_new = jnp.where(z_prev > 0.5, flush, jnp.where(z_below > 0.5, upd, c))
        h_new = jnp.where((z_prev < 0.5) & (z_below < 0.5), h, o * jnp.tanh(c_new))
        z = binar(hard_sig(zt, slope))
        return h_new, c_new, z

    def loss(p, tok, tgt, t):
        B, T = tok.shape
        slope = jnp.minimum(5.0, 1.0 + t / 2000.0)
        xs = _time_major(p["emb"][tok]) @ p["w0"]

        def body(carry, x):
            h1, c1, z1, h2, c2, z2 = carry
            one = jnp.ones_like(z1)
            h1n, c1n, z1n = cell(p["l1"], h1, c1, z1, x, one, h2 @ p["td"], slope)
            h2n, c2n, z2n = cell(p["l2"], h2, c2, z2, h1n @ p["w1"], z1n, 0.0, slope)
            gates = jax.nn.sigmoid(jnp.concatenate([h1n, h2n], -1) @ p["og"])
            out = jax.nn.relu(gates[:, :1] * (h1n @ p["oe1"]) + gates[:, 1:] * (h2n @ p["oe2"]))
            return (h1n, c1n, z1n, h2n, c2n, z2n), (out, z1n, z2n)
        zeros = jnp.zeros((B, H))
        zb = jnp.zeros((B, 1))
        _, (outs, z1s, z2s) = lax.scan(body, (zeros, zeros, zb, zeros, zeros, zb), xs)
        logits = _time_major(outs) @ p["out"] + p["ob"]
        rate = jnp.mean(z1s) + jnp.mean(z2s)
        return _int_xent(logits, tgt) + 0.01 * rate, rate

    def step(p, m, v, t, tok, tgt):
        (l, rate), g = jax.value_and_grad(loss, has_aux=True)(p, tok, tgt, t)
        p, m, v = _adamw_tree(p, m, v, _clip_tree_norm(g, 1.0), t, lr=2e-3)
        return l, rate, p, m, v
    lay = {"u": S(H, 4 * H + 1), "b": S(4 * H + 1)}
    p = {"emb": S(V, E), "w0": S(E, 4 * H + 1), "td": S(H, 4 * H + 1), "w1": S(H, 4 * H + 1),
         "l1": lay, "l2": dict(lay), "og": S(2 * H, 2), "oe1": S(H, H), "oe2": S(H, H),
         "out": S(H, V), "ob": S(V)}
    return step, (p, p, p, S(), S(32, 48, dtype=I32), S(32, 48, dtype=I32))


def householder_reflection_orthogonal_recurrence_modrelu():
    """Orthogonal RNN on the adding problem (96 steps of [value, marker] pairs; target is the
    sum of the two marked values): the recurrent matrix is never formed -- inside the
    lax.scan the hidden state is multiplied by a product of eight Householder reflections
    h <- h - 2 (h . u_k) u_k / |u_k|^2 applied one after another, so the transition stays
    exactly orthogonal; the nonlinearity is modReLU sign(z) relu(|z| + b); a linear readout
    of the final state; MSE; RMSProp with gradient clipping."""
    NH, NREF = 128, 8

    def loss(p, seq, y):
        B = seq.shape[0]
        us = p["refl"] / jnp.linalg.norm(p["refl"], axis=-1, keepdims=True)
        xin = jnp.einsum("btc,ch->tbh", seq, p["win"])

        def cell(h, x):
            for k in range(NREF):
                u = us[k]
                h = h - 2.0 * (h @ u)[:, None] * u[None, :]
            z = h + x
            h = jnp.sign(z) * jax.nn.relu(jnp.abs(z) + p["b"])
            return h, None
        hT, _ = lax.scan(cell, jnp.zeros((B, NH)), xin)
        pred = (hT @ p["wout"])[:, 0] + p["bo"]
        return jnp.mean(jnp.square(pred - y))

    def step(p, ms, t, seq, y):
        l, g = jax.value_and_grad(loss)(p, seq, y)
        g = _clip_tree_norm(g, 1.0)
        ms = tmap(lambda s, g: 0.9 * s + 0.1 * g * g, ms, g)
        p = tmap(lambda w, g, s: w - 1e-3 * g / (jnp.sqrt(s) + 1e-6), p, g, ms)
        return l, p, ms
    p = {"refl": S(NREF, NH), "win": S(2, NH), "b": S(NH), "wout": S(NH, 1), "bo": S()}
    return step, (p, p, S(), S(64, 96, 2), S(64))


# ----------------------------------------------------------------------------- moe


def pyramid_residual_moe_sorted_token_dispatch():
    """Pyramid-Residual MoE (PR-MoE) language model: two causal decoder layers whose FFN is a
    dense GELU MLP that always runs plus a top-1 expert correction, with 4 experts in the
    first layer and 8 in the second (the pyramid); tokens are dispatched by sorting their
    expert ids (jnp.argsort), computing each token's slot from the sorted rank minus its
    expert's start offset (segment_sum counts and cumsum), scattering into an
    [experts, capacity, d] buffer with .at[].set(mode="drop") and gathering the outputs back
    with overflow tokens masked; cross-entropy plus a load-balancing loss; Adam with
    clipping and warmup."""
    H, CF = 4, 1.5

    def moe(q, x):
        b, t, d = x.shape
        E = q["w1"].shape[0]
        xs = x.reshape(b * t, d)
        n = xs.shape[0]
        cap = int(math.ceil(CF * n / E))
        probs = jax.nn.softmax(xs @ q["router"], -1)
        e = jnp.argmax(probs, -1)
        gate = jnp.max(probs, -1)
        order = jnp.argsort(e)
        counts = jax.ops.segment_sum(jnp.ones((n,), I32), e, E)
        starts = jnp.cumsum(counts) - counts
        slot_sorted = jnp.arange(n) - starts[e[order]]
        slot = jnp.zeros((n,), I32).at[order].set(slot_sorted)
        buf = jnp.zeros((E, cap, d), x.dtype).at[e, slot].set(xs, mode="drop")
        h = jax.nn.gelu(jnp.einsum("ecd,edf->ecf", buf, q["w1"]) + q["eb1"][:, None])
        out = jnp.einsum("ecf,efd->ecd", h, q["w2"])
        kept = (slot < cap).astype(x.dtype)
        y = out[e, jnp.minimum(slot, cap - 1)] * (kept * gate)[:, None]
        dense = jax.nn.gelu(xs @ q["d1"] + q["db1"]) @ q["d2"]
        frac = counts.astype(F32) / n
        aux = E * jnp.sum(frac * jnp.mean(probs, 0))
        return (dense + y).reshape(b, t, d), aux

    def attn(q, x):
        b, t, d = x.shape
        qq, kk, vv = (a.reshape(b, t, H, d // H) for a in jnp.split(x @ q["qkv"], 3, -1))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(d // H)
        s = jnp.where(_causal_mask(t), s, -1e9)
        return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d) @ q["o"]

    def loss(p, tok, tgt):
        x = p["emb"][tok] + p["pos"]
        aux = 0.0
        for q in p["layers"]:
            x = x + attn(q, _rmsnorm(x, q["n1"]))
            y, a = moe(q, _rmsnorm(x, q["n2"]))
            x, aux = x + y, aux + a
        return _int_xent(_rmsnorm(x, p["nf"]) @ p["out"], tgt) + 0.01 * aux

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        lr = 6e-4 * jnp.minimum(1.0, (t + 1.0) / 300.0)
        p, m, v = _adamw_tree(p, m, v, _clip_tree_norm(g, 1.0), t, lr=lr, wd=0.01)
        return l, p, m, v
    V, D, T, F, FE = 384, 64, 32, 128, 96

    def lay(E):
        return {"n1": S(D), "qkv": S(D, 3 * D), "o": S(D, D), "n2": S(D), "router": S(D, E),
                "w1": S(E, D, FE), "eb1": S(E, FE), "w2": S(E, FE, D), "d1": S(D, F),
                "db1": S(F), "d2": S(F, D)}
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [lay(4), lay(8)], "nf": S(D),
         "out": S(D, V)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T, dtype=I32))


# ----------------------------------------------------------------------------- vae


def dip_vae_aggregate_posterior_covariance_penalty():
    """DIP-VAE-II (disentangled inferred prior) on 28x28 binary images: a convolutional
    encoder (two strided 4x4 convs, dense) gives a diagonal Gaussian over 10 latents, the
    decoder (dense, reshape to 7x7, two lax.conv_transpose stride-2 upsamplings) gives
    Bernoulli logits; besides the ELBO, the covariance of the aggregate posterior --
    Cov[mu] over the batch plus the mean of the diagonal posterior variances -- is pushed
    towards the identity with separate off-diagonal and diagonal penalties; the reported
    diagnostic is the largest off-diagonal entry; Adam."""
    Z, LOD, LD = 10, 10.0, 100.0

    def convt(x, w):
        return lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def loss(p, x, eps):
        n = x.shape[0]
        h = jax.nn.relu(_conv2d(x, p["c1"], 2) + p["cb1"])
        h = jax.nn.relu(_conv2d(h, p["c2"], 2) + p["cb2"])
        h = jax.nn.relu(h.reshape(n, -1) @ p["e"] + p["eb"])
        mu, lv = h @ p["mu"] + p["mub"], jnp.clip(h @ p["lv"] + p["lvb"], -8.0, 8.0)
        z = mu + jnp.exp(0.5 * lv) * eps
        d = jax.nn.relu(z @ p["d"] + p["db"]).reshape(n, 7, 7, 32)
        d = jax.nn.relu(convt(d, p["t1"]) + p["tb1"])
        logits = convt(d, p["t2"]) + p["tb2"]
        rec = jnp.sum(jnp.maximum(logits, 0) - logits * x + jnp.log1p(jnp.exp(-jnp.abs(logits))),
                      (1, 2, 3))
        kl = 0.5 * jnp.sum(jnp.exp(lv) + jnp.square(mu) - 1.0 - lv, -1)
        mc = mu - jnp.mean(mu, 0)
        cov = mc.T @ mc / n + jnp.diag(jnp.mean(jnp.exp(lv), 0))
        off = cov - jnp.diag(jnp.diag(cov))
        pen = LOD * jnp.sum(jnp.square(off)) + LD * jnp.sum(jnp.square(jnp.diag(cov) - 1.0))
        return jnp.mean(rec + kl) + pen, jnp.max(jnp.abs(off))

    def step(p, m, v, t, x, eps):
        (l, off), g = jax.value_and_grad(loss, has_aux=True)(p, x, eps)
        p, m, v = _adamw_tree(p, m, v, g, t, lr=1e-3)
        return l, off, p, m, v
    p = {"c1": S(4, 4, 1, 32), "cb1": S(32), "c2": S(4, 4, 32, 32), "cb2": S(32),
         "e": S(7 * 7 * 32, 256), "eb": S(256), "mu": S(256, Z), "mub": S(Z), "lv": S(256, Z),
         "lvb": S(Z), "d": S(Z, 7 * 7 * 32), "db": S(7 * 7 * 32), "t1": S(4, 4, 32, 32),
         "tb1": S(32), "t2": S(4, 4, 32, 1), "tb2": S(1)}
    return step, (p, p, p, S(), S(64, 28, 28, 1), S(64, Z))


# ----------------------------------------------------------------------------- unet


def unext_shifted_token_mlp_bottleneck_segmenter():
    """UNeXt lesion segmenter on 32x32 RGB images: a convolutional encoder (3x3 conv-BN-ReLU
    at 16 and 32 channels with max-pooling) followed by two tokenized-MLP stages (strided
    3x3 patch embedding to 60 and 100 channels; shifted MLP -- channel groups rolled by
    -2..2 pixels along height before the first token MLP and along width before the second,
    with a depthwise 3x3 conv and GELU in between -- residual and LayerNorm); the decoder
    upsamples 2x bilinearly (separable 0.75 / 0.25 taps, edge-clamped), adds the encoder skips;
    binary cross-entropy plus soft Dice on the mask logits; Adam with cosine decay."""
    SHIFTS = (-2, -1, 0, 1, 2)

    def cbr(q, x, stats):
        h, st = _batchnorm_train(_conv2d(x, q["w"]), q["g"], q["b"])
        stats.append(st)
        return jax.nn.relu(h)

    def shift(x, axis):
        parts = jnp.split(x, len(SHIFTS), -1)
        return jnp.concatenate([jnp.roll(a, s, axis) for a, s in zip(parts, SHIFTS)], -1)

    def tok_stage(q, x):
        x = _conv2d(x, q["pe"], 2) + q["peb"]
        n, h, w, c = x.shape
        x = _layernorm(x, q["g0"], q["b0"])
        y = shift(_layernorm(x, q["g1"], q["b1"]), 1) @ q["m1"] + q["mb1"]
        y = jax.nn.gelu(_conv2d(y, q["dw"], groups=y.shape[-1]) + q["dwb"])
        y = shift(y, 2) @ q["m2"] + q["mb2"]
        return x + y

    def up_axis(x, axis):
        n = x.shape[axis]
        lo = jnp.concatenate([lax.slice_in_dim(x, 0, 1, axis=axis),
                              lax.slice_in_dim(x, 0, n - 1, axis=axis)], axis)
        hi = jnp.concatenate([lax.slice_in_dim(x, 1, n, axis=axis),
                              lax.slice_in_dim(x, n - 1, n, axis=axis)], axis)
        ev, od = 0.75 * x + 0.25 * lo, 0.75 * x + 0.25 * hi
        shp = list(x.shape)
        shp[axis] *= 2
        return jnp.stack([ev, od], axis + 1).reshape(shp)

    def up(x):
        return up_axis(up_axis(x, 1), 2)

    def loss(p, img, mask):
        stats = []
        e1 = cbr(p["e1"], img, stats)
        e2 = cbr(p["e2"], lax.reduce_window(e1, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                            "VALID"), stats)
        t1 = tok_stage(p["t1"], e2)
        t2 = tok_stage(p["t2"], t1)
        d = jax.nn.relu(_conv2d(up(t2), p["d2"]) + t1)
        d = jax.nn.relu(_conv2d(up(d), p["d1"]) + e2)
        d = cbr(p["d0"], up(d), stats) + e1
        logits = _conv2d(d, p["head"])[..., 0]
        bce = jnp.mean(jnp.maximum(logits, 0) - logits * mask + jnp.log1p(jnp.exp(-jnp.abs(logits))))
        pr = jax.nn.sigmoid(logits)
        inter = jnp.sum(pr * mask, (1, 2))
        dice = 1.0 - (2.0 * inter + 1.0) / (jnp.sum(pr, (1, 2)) + jnp.sum(mask, (1, 2)) + 1.0)
        return 0.5 * bce + jnp.mean(dice), stats

    def step(p, m, v, t, img, mask):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, mask)
        p, m, v = _adamw_tree(p, m, v, g, t, lr=_warmup_cosine(t, 1e-3, 20000.0), wd=1e-4)
        return l, stats, p, m, v

    def c(ci, co):
        return {"w": S(3, 3, ci, co), "g": S(co), "b": S(co)}

    def ts(ci, co):
        return {"pe": S(3, 3, ci, co), "peb": S(co), "g0": S(co), "b0": S(co), "g1": S(co),
                "b1": S(co), "m1": S(co, co), "mb1": S(co), "dw": S(3, 3, 1, co), "dwb": S(co),
                "m2": S(co, co), "mb2": S(co)}
    p = {"e1": c(3, 16), "e2": c(16, 32), "t1": ts(32, 60), "t2": ts(60, 100),
         "d2": S(3, 3, 100, 60), "d1": S(3, 3, 60, 32), "d0": c(32, 16), "head": S(1, 1, 16, 1)}
    return step, (p, p, p, S(), S(16, 32, 32, 3), S(16, 32, 32))


# ----------------------------------------------------------------------------- gnn


def residual_gated_graph_convnet_edge_gates():
    """Residual gated graph ConvNet (GatedGCN) for molecular property regression on a batch of
    16 graphs (512 nodes, 2048 directed edges, node and edge types embedded): every layer
    computes edge gates e_hat = C e + D h_dst + E h_src, soft-normalised attention
    sigmoid(e_hat) / (sum over incoming edges of sigmoid(e_hat)) with both sums done by
    jax.ops.segment_sum, updates nodes with A h + the gated sum of B h_src and edges with
    e_hat, each through batch norm, ReLU and a residual; four layers, a segment-mean
    readout per graph and an MLP regressor; L1 loss; Adam with a cosine schedule."""
    NL = 4

    def bn(x, g, b):
        mu, var = jnp.mean(x, 0), jnp.var(x, 0)
        return (x - mu) * lax.rsqrt(var + 1e-5) * g + b

    def layer(q, h, e, src, dst, N):
        Ah, Bh, Dh, Eh = (h @ q[k] for k in ("A", "B", "D", "E"))
        ehat = e @ q["C"] + Dh[dst] + Eh[src]
        sig = jax.nn.sigmoid(ehat)
        num = jax.ops.segment_sum(sig * Bh[src], dst, N)
        den = jax.ops.segment_sum(sig, dst, N)
        hn = Ah + num / (den + 1e-6)
        h = h + jax.nn.relu(bn(hn, q["hg"], q["hb"]))
        e = e + jax.nn.relu(bn(ehat, q["eg"], q["eb"]))
        return h, e

    def loss(p, ntype, etype, src, dst, gid, y):
        N = ntype.shape[0]
        G = y.shape[0]
        h = p["nemb"][ntype]
        e = p["eemb"][etype]
        for q in p["layers"]:
            h, e = layer(q, h, e, src, dst, N)
        cnt = jax.ops.segment_sum(jnp.ones((N,)), gid, G)
        hg = jax.ops.segment_sum(h, gid, G) / jnp.maximum(cnt, 1.0)[:, None]
        r = jax.nn.relu(hg @ p["r1"] + p["rb1"])
        r = jax.nn.relu(r @ p["r2"] + p["rb2"])
        pred = (r @ p["r3"])[:, 0]
        return jnp.mean(jnp.abs(pred - y))

    def step(p, m, v, t, *data):
        l, g = jax.value_and_grad(loss)(p, *data)
        p, m, v = _adamw_tree(p, m, v, g, t, lr=_warmup_cosine(t, 1e-3, 50000.0))
        return l, p, m, v
    N, E, G, D, NT, ET = 512, 2048, 16, 64, 28, 4
    q = {k: S(D, D) for k in ("A", "B", "C", "D", "E")}
    q.update(hg=S(D), hb=S(D), eg=S(D), eb=S(D))
    p = {"nemb": S(NT, D), "eemb": S(ET, D), "layers": [dict(q) for _ in range(NL)],
         "r1": S(D, D // 2), "rb1": S(D // 2), "r2": S(D // 2, D // 4), "rb2": S(D // 4),
         "r3": S(D // 4, 1)}
    return step, (p, p, p, S(), S(N, dtype=I32), S(E, dtype=I32), S(E, dtype=I32),
                  S(E, dtype=I32), S(N, dtype=I32), S(G))


# ----------------------------------------------------------------------------- quantization


def _sylvester_hadamard(n):
    h = np.ones((1, 1), np.float32)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return (h / math.sqrt(n)).astype(np.float32)


def hadamard_rotated_int4_per_token_activation_qat():
    """QuaRot-style rotated 4-bit quantisation-aware training of a small causal LM: in every
    SwiGLU FFN the activations are multiplied by a fixed orthonormal Sylvester-Hadamard
    matrix and the weights by its transpose (an exact identity in full precision), then the
    rotated activations are fake-quantised to int4 per token (absmax / 7) and the rotated
    weights to int4 per output channel with a learned clipping ratio (sigmoid of a
    parameter), all with straight-through rounding; attention stays in full precision;
    cross-entropy; AdamW; the mean weight quantisation error is reported."""
    H = 4
    D = 128
    HAD = _sylvester_hadamard(D)

    def ste_round(x):
        return x + lax.stop_gradient(jnp.round(x) - x)

    def q_act(x):
        s = jnp.maximum(jnp.max(jnp.abs(x), -1, keepdims=True), 1e-5) / 7.0
        return jnp.clip(ste_round(x / s), -8.0, 7.0) * s

    def q_w(w, clip_logit):
        s = jnp.maximum(jnp.max(jnp.abs(w), 0, keepdims=True), 1e-5) * jax.nn.sigmoid(clip_logit) / 7.0
        return jnp.clip(ste_round(w / s), -8.0, 7.0) * s

    def qlin(x, w, clip_logit):
        return q_act(x @ HAD) @ q_w(HAD.T @ w, clip_logit)

    def attn(q, x):
        b, t, d = x.shape
        qq, kk, vv = (a.reshape(b, t, H, d // H) for a in jnp.split(x @ q["qkv"], 3, -1))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(d // H)
        s = jnp.where(_causal_mask(t), s, -1e9)
        return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d) @ q["o"]

    def ffn(q, x):
        gate = jax.nn.silu(qlin(x, q["wg"], q["cg"]))
        upv = qlin(x, q["wu"], q["cu"])
        h = gate * upv
        return q_act(h) @ q_w(q["wd"], q["cd"])

    def loss(p, tok, tgt):
        x = p["emb"][tok]
        for q in p["layers"]:
            x = x + attn(q, _rmsnorm(x, q["n1"]))
            x = x + ffn(q, _rmsnorm(x, q["n2"]))
        return _int_xent(_rmsnorm(x, p["nf"]) @ p["emb"].T, tgt)

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        p, m, v = _adamw_tree(p, m, v, g, t, lr=3e-4, b2=0.95, wd=0.1)
        err = jnp.mean(jnp.stack([jnp.mean(jnp.abs(q_w(HAD.T @ q["wg"], q["cg"]) - HAD.T @ q["wg"]))
                                  for q in p["layers"]]))
        return l, err, p, m, v
    V, F = 256, 256
    q = {"n1": S(D), "qkv": S(D, 3 * D), "o": S(D, D), "n2": S(D), "wg": S(D, F), "cg": S(F),
         "wu": S(D, F), "cu": S(F), "wd": S(F, D), "cd": S(D)}
    p = {"emb": S(V, D), "layers": [q, dict(q)], "nf": S(D)}
    return step, (p, p, p, S(), S(16, 32, dtype=I32), S(16, 32, dtype=I32))


# ----------------------------------------------------------------------------- remat


def remat_convlstm_frame_scan_dots_no_batch_policy():
    """ConvLSTM encoder-forecaster for next-frame prediction on 16x16 single-channel clips: the
    ConvLSTM cell (one 3x3 convolution over the concatenated input and hidden state giving
    the four gates, peephole-free) is wrapped in jax.checkpoint with the
    dots_with_no_batch_dims_saveable policy; a lax.scan encodes 6 context frames and a second
    lax.scan continues from the encoder state for 4 autoregressive steps, feeding back each
    predicted frame (sigmoid of a 1x1 readout); binary cross-entropy on the 4 future frames;
    Adam with clipping."""
    HID, TCTX, TFUT = 32, 6, 4

    def cell(q, carry, x):
        h, c = carry
        z = _conv2d(jnp.concatenate([x, h], -1), q["w"]) + q["b"]
        i, f, o, g = jnp.split(z, 4, -1)
        c = jax.nn.sigmoid(f + 1.0) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return h, c
    cell_r = jax.checkpoint(cell, policy=CP.dots_with_no_batch_dims_saveable)

    def loss(p, clip):
        B = clip.shape[0]
        frames = jnp.moveaxis(clip, 1, 0)
        ctx, fut = frames[:TCTX], frames[TCTX:]
        zero = jnp.zeros((B,) + clip.shape[2:4] + (HID,))

        def enc(carry, x):
            return cell_r(p["enc"], carry, x), None
        (h, c), _ = lax.scan(enc, (zero, zero), ctx)

        def dec(carry, _):
            h, c, prev = carry
            h, c = cell_r(p["dec"], (h, c), prev)
            logit = _conv2d(h, p["read"]) + p["rb"]
            return (h, c, jax.nn.sigmoid(logit)), logit
        _, logits = lax.scan(dec, (h, c, ctx[-1]), None, length=TFUT)
        return jnp.mean(jnp.maximum(logits, 0) - logits * fut + jnp.log1p(jnp.exp(-jnp.abs(logits))))

    def step(p, m, v, t, clip):
        l, g = jax.value_and_grad(loss)(p, clip)
        p, m, v = _adamw_tree(p, m, v, _clip_tree_norm(g, 1.0), t, lr=1e-3)
        return l, p, m, v
    cellp = {"w": S(3, 3, 1 + HID, 4 * HID), "b": S(4 * HID)}
    p = {"enc": cellp, "dec": dict(cellp), "read": S(1, 1, HID, 1), "rb": S(1)}
    return step, (p, p, p, S(), S(8, TCTX + TFUT, 16, 16, 1))


def remat_two_level_grouped_layer_scan_sandwich_norm():
    """Masked-token encoder whose six Sandwich-LN transformer layers (LayerNorm before and
    after each sublayer) are stacked as 3 groups x 2 layers: an outer lax.scan over groups
    runs a group body checkpointed with nothing_saveable, and inside it an inner lax.scan
    (unroll=2) over the group's 2 layers runs a per-layer jax.checkpoint that saves only the
    values tagged "qkv_proj" and "ffn_in" with checkpoint_name (two-level nested remat);
    the masked positions (passed-in boolean mask) are replaced by a learned mask token and
    the loss is cross-entropy on them only; AdamW with clipping and warmup."""
    H, G, LPG = 4, 3, 2

    def layer(x, q):
        b, t, d = x.shape
        h = _layernorm(x, q["g1"], q["b1"])
        qkv = checkpoint_name(h @ q["qkv"], "qkv_proj")
        qq, kk, vv = (a.reshape(b, t, H, d // H) for a in jnp.split(qkv, 3, -1))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(d // H)
        a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d) @ q["o"]
        x = x + _layernorm(a, q["g2"], q["b2"])
        f = checkpoint_name(_layernorm(x, q["g3"], q["b3"]), "ffn_in")
        f = jax.nn.gelu(f @ q["f1"] + q["fb1"]) @ q["f2"]
        return x + _layernorm(f, q["g4"], q["b4"]), None
    layer_r = jax.checkpoint(layer, policy=CP.save_only_these_names("qkv_proj", "ffn_in"))

    def group(x, qs):
        x, _ = lax.scan(layer_r, x, qs, unroll=2)
        return x, None
    group_r = jax.checkpoint(group, policy=CP.nothing_saveable)

    def loss(p, tok, mask):
        x = jnp.where(mask[..., None], p["mtok"], p["emb"][tok]) + p["pos"]
        x, _ = lax.scan(group_r, x, p["stack"])
        logits = _layernorm(x, p["gf"], p["bf"]) @ p["emb"].T + p["ob"]
        logp = jax.nn.log_softmax(logits, -1)
        nll = -jnp.take_along_axis(logp, tok[..., None], -1)[..., 0]
        w = mask.astype(F32)
        return jnp.sum(nll * w) / jnp.maximum(jnp.sum(w), 1.0)

    def step(p, m, v, t, tok, mask):
        l, g = jax.value_and_grad(loss)(p, tok, mask)
        lr = 1e-3 * jnp.minimum(1.0, (t + 1.0) / 1000.0)
        p, m, v = _adamw_tree(p, m, v, _clip_tree_norm(g, 1.0), t, lr=lr, b2=0.98, wd=0.01)
        return l, p, m, v
    V, D, T, F = 512, 64, 64, 192
    ln = lambda: S(G, LPG, D)
    stack = {"g1": ln(), "b1": ln(), "qkv": S(G, LPG, D, 3 * D), "o": S(G, LPG, D, D),
             "g2": ln(), "b2": ln(), "g3": ln(), "b3": ln(), "f1": S(G, LPG, D, F),
             "fb1": S(G, LPG, F), "f2": S(G, LPG, F, D), "g4": ln(), "b4": ln()}
    p = {"emb": S(V, D), "mtok": S(D), "pos": S(T, D), "stack": stack, "gf": S(D), "bf": S(D),
         "ob": S(V)}
    return step, (p, p, p, S(), S(16, T, dtype=I32), S(16, T, dtype=jnp.bool_))


# ----------------------------------------------------------------------------- custom_vjp


_PTK_SIGMA = 0.5
_PTK_K = 8


def _ptk_indicator(theta):
    kth = lax.top_k(theta, _PTK_K)[0][..., -1:]
    return (theta >= kth).astype(theta.dtype)


@jax.custom_vjp
def _perturbed_topk_mask(theta, noise):
    return jnp.mean(_ptk_indicator(theta[None] + _PTK_SIGMA * noise), 0)


def _perturbed_topk_mask_fwd(theta, noise):
    ys = _ptk_indicator(theta[None] + _PTK_SIGMA * noise)
    return jnp.mean(ys, 0), (ys, noise)


def _perturbed_topk_mask_bwd(res, gy):
    ys, noise = res
    dots = jnp.sum(ys * gy[None], -1, keepdims=True)
    return jnp.mean(dots * noise, 0) / _PTK_SIGMA, jnp.zeros_like(noise)


_perturbed_topk_mask.defvjp(_perturbed_topk_mask_fwd, _perturbed_topk_mask_bwd)


def perturbed_topk_feature_gate_monte_carlo_vjp():
    """Instance-wise feature selection with a perturbed-optimiser top-k (Berthet et al.): a
    selector MLP scores the 64 input features of each example, the selection mask is the
    Monte-Carlo mean of hard top-8 indicators (lax.top_k threshold) of the scores plus
    Gaussian noise (16 passed-in noise samples), and a jax.custom_vjp supplies the
    perturbation gradient E[(g . y(theta + sigma Z)) Z] / sigma for the scores; a predictor
    MLP classifies the masked inputs; cross-entropy plus a small L2 on the scores; Adam for
    both networks."""

    def loss(p, x, labels, noise):
        h = jax.nn.relu(x @ p["s1"] + p["sb1"])
        theta = h @ p["s2"] + p["sb2"]
        mask = _perturbed_topk_mask(theta, noise)
        z = jax.nn.relu((x * mask) @ p["p1"] + p["pb1"])
        z = jax.nn.relu(z @ p["p2"] + p["pb2"])
        logits = z @ p["p3"] + p["pb3"]
        return _int_xent(logits, labels) + 1e-4 * jnp.mean(jnp.square(theta)), jnp.mean(mask)

    def step(p, m, v, t, x, labels, noise):
        (l, dens), g = jax.value_and_grad(loss, has_aux=True)(p, x, labels, noise)
        p, m, v = _adamw_tree(p, m, v, g, t, lr=1e-3)
        return l, dens, p, m, v
    F, H, C, NS, B = 64, 128, 10, 16, 128
    p = {"s1": S(F, H), "sb1": S(H), "s2": S(H, F), "sb2": S(F), "p1": S(F, H), "pb1": S(H),
         "p2": S(H, H), "pb2": S(H), "p3": S(H, C), "pb3": S(C)}
    return step, (p, p, p, S(), S(B, F), S(B, dtype=I32), S(NS, B, F))


# ----------------------------------------------------------------------------- control


def deepcluster_em_gaussian_mixture_while_pseudo_labels():
    """DeepCluster-style self-labelling step: an MLP encoder embeds 256 examples into 16 dims,
    a diagonal Gaussian mixture with 10 components (initialised from passed-in example
    indices) is fitted to the stop-gradient embeddings by EM inside a lax.while_loop that
    stops after 30 iterations or when the mean log-likelihood improves by less than 1e-4;
    the argmax responsibilities become pseudo-labels for a classifier head, and a lax.cond
    adds an entropy penalty on the mean prediction only when some cluster holds less than
    1 % of the mass (collapse guard); SGD with Nesterov momentum."""
    K, MAXIT = 10, 30

    def encode(p, x):
        h = jax.nn.relu(x @ p["e1"] + p["eb1"])
        h = jax.nn.relu(h @ p["e2"] + p["eb2"])
        z = h @ p["e3"]
        return z / (jnp.linalg.norm(z, axis=-1, keepdims=True) + 1e-6)

    def em(z, init_idx):
        n, d = z.shape

        def estep(mu, var, pi):
            ll = -0.5 * jnp.sum(jnp.square(z[:, None] - mu[None]) / var[None]
                                + jnp.log(2 * jnp.pi * var[None]), -1) + jnp.log(pi)[None]
            lse = jax.nn.logsumexp(ll, -1, keepdims=True)
            return jnp.exp(ll - lse), jnp.mean(lse)

        def cond(c):
            i, _, _, _, ll, prev = c
            return (i < MAXIT) & (jnp.abs(ll - prev) > 1e-4)

        def body(c):
            i, mu, var, pi, ll, _ = c
            r, _ = estep(mu, var, pi)
            nk = jnp.sum(r, 0) + 1e-6
            mu = (r.T @ z) / nk[:, None]
            var = (r.T @ jnp.square(z)) / nk[:, None] - jnp.square(mu) + 1e-3
            pi = nk / n
            _, ll_new = estep(mu, var, pi)
            return i + 1, mu, var, pi, ll_new, ll
        mu0 = z[init_idx]
        var0 = jnp.full((K, d), 0.1)
        pi0 = jnp.full((K,), 1.0 / K)
        it, mu, var, pi, ll, _ = lax.while_loop(
            cond, body, (0, mu0, var0, pi0, jnp.asarray(-1e9, F32), jnp.asarray(-2e9, F32)))
        r, _ = estep(mu, var, pi)
        return jnp.argmax(r, -1), pi, it

    def loss(p, x, pseudo, collapsed):
        z = encode(p, x)
        logits = z @ p["head"] + p["hb"]
        ce = _int_xent(logits, pseudo)

        def guard(lg):
            mp = jnp.mean(jax.nn.softmax(lg, -1), 0)
            return 0.5 * jnp.sum(mp * jnp.log(mp + 1e-8)) + jnp.log(float(K)) * 0.5
        pen = lax.cond(collapsed, guard, lambda lg: jnp.zeros((), lg.dtype), logits)
        return ce + pen

    def step(p, mom, x, init_idx):
        z = lax.stop_gradient(encode(p, x))
        pseudo, pi, it = em(z, init_idx)
        collapsed = jnp.min(pi) < 0.01
        l, g = jax.value_and_grad(loss)(p, x, pseudo, collapsed)
        mom = tmap(lambda b, g, w: 0.9 * b + g + 1e-5 * w, mom, g, p)
        p = tmap(lambda w, b, g: w - 0.05 * (g + 0.9 * b), p, mom, g)
        return l, it, p, mom
    F, H, Dz = 48, 128, 16
    p = {"e1": S(F, H), "eb1": S(H), "e2": S(H, H), "eb2": S(H), "e3": S(H, Dz),
         "head": S(Dz, K), "hb": S(K)}
    return step, (p, p, S(256, F), S(K, dtype=I32))


def reptile_inner_fori_switch_task_family_regression():
    """Reptile meta-learning over a mixture of regression task families: for each of 4 tasks
    in the meta-batch (an outer lax.fori_loop with dynamic indexing), the inner loop
    (lax.fori_loop of 5 SGD steps with jax.grad inside) adapts a copy of the MLP on the
    task's support points, the targets being generated in-graph by lax.switch on the task's
    family id (sinusoid, affine, or damped step, from passed-in amplitude / phase); the
    adapted weights are accumulated, the Reptile direction (meta weights minus the mean
    adapted weights) is applied with Adam, and the post-adaptation query loss is reported."""
    NT, NIN, ILR = 4, 5, 0.02

    def net(w, x):
        h = jnp.tanh(x @ w["w1"] + w["b1"])
        h = jnp.tanh(h @ w["w2"] + w["b2"])
        return h @ w["w3"] + w["b3"]

    def target(fam, amp, ph, x):
        return lax.switch(fam, [lambda x: amp * jnp.sin(x + ph),
                                lambda x: amp * 0.5 * x + ph,
                                lambda x: amp * jnp.tanh(4.0 * (x - ph)) * jnp.exp(-0.1 * x * x)],
                          x)

    def mse(w, x, y):
        return jnp.mean(jnp.square(net(w, x) - y))

    def step(p, m, v, t, fam, amp, ph, xs, xq):
        def task(i, c):
            acc, ql = c
            pick = lambda a: lax.dynamic_index_in_dim(a, i, keepdims=False)
            f, a, h, xsup, xqry = pick(fam), pick(amp), pick(ph), pick(xs), pick(xq)
            ysup, yqry = target(f, a, h, xsup), target(f, a, h, xqry)

            def inner(_, w):
                g = jax.grad(mse)(w, xsup, ysup)
                return tmap(lambda a, b: a - ILR * b, w, g)
            w = lax.fori_loop(0, NIN, inner, p)
            return tmap(jnp.add, acc, w), ql + mse(w, xqry, yqry)
        acc, ql = lax.fori_loop(0, NT, task, (tmap(jnp.zeros_like, p), jnp.zeros((), F32)))
        direction = tmap(lambda w, a: w - a / NT, p, acc)
        p, m, v = _adamw_tree(p, m, v, direction, t, lr=1e-3)
        return ql / NT, p, m, v
    H = 64
    p = {"w1": S(1, H), "b1": S(H), "w2": S(H, H), "b2": S(H), "w3": S(H, 1), "b3": S(1)}
    return step, (p, p, p, S(), S(NT, dtype=I32), S(NT), S(NT), S(NT, 32, 1), S(NT, 64, 1))


# ----------------------------------------------------------------------------- sort


def ordered_weighted_average_sorted_set_pooling():
    """Point-cloud classifier with sorting-based set pooling: a shared per-point MLP embeds 128
    points of 3-d coordinates into 64 features; ordered weighted averaging (OWA) pools each
    feature by sorting it over the points (jnp.sort, descending) and taking a learned
    softmax-weighted sum over the sorted ranks; a second branch scores every point, sorts
    the points by score with multi-operand lax.sort (score as the key, carrying the point
    index) and gathers the top 16 points' features for a score-weighted mean; concatenated
    pools feed an MLP head; cross-entropy; Adam with step decay."""
    NPTS, TOP = 128, 16

    def loss(p, pts, labels):
        B = pts.shape[0]
        h = jax.nn.relu(pts @ p["m1"] + p["mb1"])
        h = jax.nn.relu(h @ p["m2"] + p["mb2"])
        f = h @ p["m3"] + p["mb3"]
        srt = -jnp.sort(-f, axis=1)
        owa = jnp.einsum("bnc,nc->bc", srt, jax.nn.softmax(p["owa"], 0))
        score = (h @ p["sc"])[..., 0]
        idx = jnp.broadcast_to(jnp.arange(NPTS, dtype=I32), (B, NPTS))
        s_sorted, i_sorted = lax.sort((-score, idx), dimension=1, num_keys=1)
        top_i = i_sorted[:, :TOP]
        top_f = jnp.take_along_axis(f, top_i[..., None], 1)
        w = jax.nn.softmax(-s_sorted[:, :TOP], -1)
        sel = jnp.sum(top_f * w[..., None], 1)
        z = jax.nn.relu(jnp.concatenate([owa, sel], -1) @ p["h1"] + p["hb1"])
        return _int_xent(z @ p["h2"] + p["hb2"], labels)

    def step(p, m, v, t, pts, labels):
        l, g = jax.value_and_grad(loss)(p, pts, labels)
        lr = 1e-3 * 0.7 ** jnp.floor(t / 20000.0)
        p, m, v = _adamw_tree(p, m, v, g, t, lr=lr, wd=1e-4)
        return l, p, m, v
    C = 64
    p = {"m1": S(3, 64), "mb1": S(64), "m2": S(64, 128), "mb2": S(128), "m3": S(128, C),
         "mb3": S(C), "owa": S(NPTS, C), "sc": S(128, 1), "h1": S(2 * C, 128), "hb1": S(128),
         "h2": S(128, 40), "hb2": S(40)}
    return step, (p, p, p, S(), S(32, NPTS, 3), S(32, dtype=I32))


# ----------------------------------------------------------------------------- fft


def block_circulant_dense_layers_fft_matvec():
    """Block-circulant compressed MLP (CirCNN) on 768 input features: each hidden layer's
    weight matrix is made of 16x16 circulant blocks, each stored as its first column, so a
    layer is computed in the frequency domain -- jnp.fft.rfft of the input blocks and of the
    block vectors, a complex einsum summing over input blocks, and jnp.fft.irfft back --
    with a bias, batch norm (running statistics returned) and ReLU; two such layers of 512
    units and a dense softmax head over 10 classes; cross-entropy; SGD with Nesterov
    momentum and a cosine schedule."""
    BS = 16

    def circ(c, x):
        n = x.shape[0]
        p_, q_, _ = c.shape
        X = jnp.fft.rfft(x.reshape(n, p_, BS), axis=-1)
        C = jnp.fft.rfft(c, axis=-1)
        Y = jnp.einsum("npk,pqk->nqk", X, C)
        return jnp.fft.irfft(Y, n=BS, axis=-1).reshape(n, q_ * BS)

    def loss(p, x, labels):
        h, stats = x, []
        for q in p["circ"]:
            h, st = _batchnorm_train(circ(q["c"], h) + q["b"], q["g"], q["beta"], axes=(0,))
            stats.append(st)
            h = jax.nn.relu(h)
        return _int_xent(h @ p["head"] + p["hb"], labels), stats

    def step(p, mom, run, t, x, labels):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, x, labels)
        run = tmap(lambda r, s: 0.9 * r + 0.1 * s, run, lax.stop_gradient(stats))
        lr = _warmup_cosine(t, 0.05, 30000.0)
        mom = tmap(lambda b, g: 0.9 * b + g, mom, g)
        p = tmap(lambda w, g, b: w - lr * (g + 0.9 * b), p, g, mom)
        return l, p, mom, run
    dims = (768, 512, 512)
    p = {"circ": [{"c": S(a // BS, b // BS, BS), "b": S(b), "g": S(b), "beta": S(b)}
                  for a, b in zip(dims[:-1], dims[1:])],
         "head": S(512, 10), "hb": S(10)}
    run = [(S(512), S(512)), (S(512), S(512))]
    return step, (p, p, run, S(), S(128, 768), S(128, dtype=I32))


# ----------------------------------------------------------------------------- linalg


def deep_lda_generalized_eigen_scatter_ratio():
    """Deep linear discriminant analysis (DeepLDA): an MLP maps 64 features to a 32-d latent
    space, the within-class and between-class scatter matrices of the batch are built from
    one-hot class means (8 classes), the generalised eigenproblem Sb v = lambda Sw v is
    reduced with a Cholesky factor of the regularised Sw and two
    jax.scipy.linalg.solve_triangular calls to a symmetric problem solved by
    jnp.linalg.eigh, and the loss maximises the smallest of the top C-1 eigenvalues that
    lie within a margin of the minimum; Adam with weight decay."""
    C, MARGIN = 8, 1.0

    def loss(p, x, labels):
        h = jax.nn.leaky_relu(x @ p["w1"] + p["b1"], 0.1)
        h = jax.nn.leaky_relu(h @ p["w2"] + p["b2"], 0.1)
        z = h @ p["w3"]
        n, d = z.shape
        oh = jax.nn.one_hot(labels, C)
        cnt = jnp.sum(oh, 0) + 1e-6
        means = (oh.T @ z) / cnt[:, None]
        gm = jnp.mean(z, 0)
        zc = z - oh @ means
        Sw = zc.T @ zc / n + 1e-3 * jnp.eye(d)
        md = means - gm
        Sb = (md.T * (cnt / n)) @ md
        L = jnp.linalg.cholesky(Sw)
        A = solve_triangular(L, Sb, lower=True)
        M = solve_triangular(L, A.T, lower=True)
        M = 0.5 * (M + M.T)
        ev = jnp.linalg.eigh(M)[0]
        top = ev[-(C - 1):]
        keep = (top <= top[0] + MARGIN).astype(F32)
        return -jnp.sum(top * keep) / jnp.sum(keep), top[-1]

    def step(p, m, v, t, x, labels):
        (l, lmax), g = jax.value_and_grad(loss, has_aux=True)(p, x, labels)
        p, m, v = _adamw_tree(p, m, v, g, t, lr=1e-3, wd=1e-4)
        return l, lmax, p, m, v
    F, H, Dz = 64, 128, 32
    p = {"w1": S(F, H), "b1": S(H), "w2": S(H, H), "b2": S(H), "w3": S(H, Dz)}
    return step, (p, p, p, S(), S(256, F), S(256, dtype=I32))


# ----------------------------------------------------------------------------- scatter/gather


def field_aware_factorization_pairwise_embedding_lookup():
    """Field-aware factorisation machine (FFM) plus a deep tower for click-through prediction:
    each of 8 fields contributes one categorical id into a shared 4096-row table that holds
    one 8-d latent vector per (feature, target field); the pairwise term gathers the
    [batch, field, field, k] block and sums <v[x_i, f_j], v[x_j, f_i]> over the 28 field
    pairs (numpy triu indices); a linear term and an MLP over each feature's own-field
    vectors are added; binary cross-entropy; the table and linear weights take a sparse
    row-wise Adagrad step (gradients of the gathered rows scattered back with .at[].add),
    the MLP takes Adam."""
    NF, VOC, K = 8, 4096, 8
    I, J = np.triu_indices(NF, 1)

    def forward(dense, rows, lin_rows):
        ffm = jnp.sum(rows[:, I, J] * rows[:, J, I], (-1, -2))
        own = rows[:, np.arange(NF), np.arange(NF)].reshape(rows.shape[0], -1)
        h = jax.nn.relu(own @ dense["w1"] + dense["b1"])
        h = jax.nn.relu(h @ dense["w2"] + dense["b2"])
        return ffm + jnp.sum(lin_rows, -1) + (h @ dense["w3"])[:, 0] + dense["bias"]

    def loss(dense, rows, lin_rows, y):
        z = forward(dense, rows, lin_rows)
        return jnp.mean(jnp.maximum(z, 0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z))))

    def step(dense, m, v, table, lin, acc_t, acc_l, t, ids, y):
        rows = table[ids]
        lin_rows = lin[ids]
        l, (gd, gr, gl) = jax.value_and_grad(loss, argnums=(0, 1, 2))(dense, rows, lin_rows, y)
        flat = ids.reshape(-1)
        gr = gr.reshape(flat.shape[0], NF, K)
        acc_t = acc_t.at[flat].add(jnp.mean(jnp.square(gr), (1, 2)))
        acc_l = acc_l.at[flat].add(jnp.square(gl.reshape(-1)))
        table = table.at[flat].add(-0.05 * gr * lax.rsqrt(acc_t[flat] + 1e-8)[:, None, None])
        lin = lin.at[flat].add(-0.05 * gl.reshape(-1) * lax.rsqrt(acc_l[flat] + 1e-8))
        dense, m, v = _adamw_tree(dense, m, v, gd, t, lr=1e-3)
        return l, dense, m, v, table, lin, acc_t, acc_l
    dense = {"w1": S(NF * K, 128), "b1": S(128), "w2": S(128, 64), "b2": S(64), "w3": S(64, 1),
             "bias": S()}
    B = 512
    return step, (dense, dense, dense, S(VOC, NF, K), S(VOC), S(VOC), S(VOC), S(),
                  S(B, NF, dtype=I32), S(B))


# ----------------------------------------------------------------------------- dynamic slices


def moco_negative_queue_enqueue_two_view_crops():
    """MoCo v2 contrastive step with an in-graph negative queue: two 32x32 views are cut from
    each 40x40 image at passed-in offsets (jax.vmap of lax.dynamic_slice), one with a
    horizontal flip; a small conv encoder with an MLP projection embeds the query view and a
    momentum copy embeds the key view; InfoNCE at temperature 0.2 over the positive and the
    4096 queued negatives; SGD with momentum on the query encoder, an EMA of it into the key
    encoder, and the keys enqueued at the passed-in pointer with
    lax.dynamic_update_slice."""
    QLEN, TAU, CROP = 4096, 0.2, 32

    def encode(p, x):
        h = jax.nn.relu(_conv2d(x, p["c1"], 2) + p["cb1"])
        h = jax.nn.relu(_conv2d(h, p["c2"], 2) + p["cb2"])
        h = jax.nn.relu(_conv2d(h, p["c3"]) + p["cb3"])
        h = jnp.mean(h, (1, 2))
        z = jax.nn.relu(h @ p["p1"] + p["pb1"]) @ p["p2"]
        return z / (jnp.linalg.norm(z, axis=-1, keepdims=True) + 1e-6)

    def crop(img, off):
        return lax.dynamic_slice(img, (off[0], off[1], 0), (CROP, CROP, img.shape[-1]))

    def loss(p, xq, k, queue):
        q = encode(p, xq)
        pos = jnp.sum(q * k, -1, keepdims=True)
        neg = q @ queue.T
        logits = jnp.concatenate([pos, neg], -1) / TAU
        return -jnp.mean(jax.nn.log_softmax(logits, -1)[:, 0]), jnp.mean(pos)

    def step(p, mom, pk, queue, img, offs, ptr):
        xq = jax.vmap(crop)(img, offs[:, 0])
        xk = jax.vmap(crop)(img, offs[:, 1])[:, :, ::-1]
        k = lax.stop_gradient(encode(pk, xk))
        (l, pos), g = jax.value_and_grad(loss, has_aux=True)(p, xq, k, queue)
        mom = tmap(lambda b, g, w: 0.9 * b + g + 1e-4 * w, mom, g, p)
        p = tmap(lambda w, b: w - 0.03 * b, p, mom)
        pk = tmap(lambda a, b: 0.999 * a + 0.001 * b, pk, p)
        queue = lax.dynamic_update_slice(queue, k, (ptr, 0))
        return l, pos, p, mom, pk, queue, (ptr + k.shape[0]) % QLEN
    Dz = 64
    p = {"c1": S(3, 3, 3, 32), "cb1": S(32), "c2": S(3, 3, 32, 64), "cb2": S(64),
         "c3": S(3, 3, 64, 64), "cb3": S(64), "p1": S(64, 128), "pb1": S(128), "p2": S(128, Dz)}
    return step, (p, p, p, S(QLEN, Dz), S(32, 40, 40, 3), S(32, 2, 2, dtype=I32), S(dtype=I32))


# ----------------------------------------------------------------------------- mixed precision


def bfloat16_chunked_local_window_global_token_encoder():
    """Longformer-style token tagger run in bfloat16: 256 tokens are split into 8 chunks of 32
    and every chunk attends to itself and its two neighbouring chunks (keys built by padding
    and concatenating shifted chunk tensors, with a band mask of +-32 positions) plus 4
    global tokens, while the 4 global tokens attend to the whole sequence; attention scores,
    softmax and LayerNorm statistics are in float32, matmuls in bf16; two layers, a GELU FFN
    and a 9-way tag head; f32 cross-entropy with a static loss scale of 1024 undone on the
    f32 gradients; Adam on f32 master weights."""
    W, NG, H, SCALE = 32, 4, 4, 1024.0
    bf = lambda a: a.astype(BF16)

    def ln32(x, g, b):
        x = x.astype(F32)
        mu = jnp.mean(x, -1, keepdims=True)
        var = jnp.mean(jnp.square(x - mu), -1, keepdims=True)
        return bf((x - mu) * lax.rsqrt(var + 1e-5) * g + b)

    def heads(a):
        b, t, d = a.shape
        return a.reshape(b, t, H, d // H)

    def attend(qq, kk, vv, mask):
        s = jnp.einsum("...qhd,...khd->...hqk", qq, kk, preferred_element_type=F32)
        s = jnp.where(mask, s / math.sqrt(qq.shape[-1]), -1e9)
        a = bf(jax.nn.softmax(s, -1))
        return jnp.einsum("...hqk,...khd->...qhd", a, vv)

    def layer(q, x):
        b, t, d = x.shape
        nc = t // W
        h = ln32(x, q["g1"], q["b1"])
        qq, kk, vv = (heads(a) for a in jnp.split(h @ bf(q["qkv"]), 3, -1))
        gk, gv = kk[:, :NG], vv[:, :NG]
        qc = qq.reshape(b, nc, W, H, -1)

        def neigh(a, g):
            c = a.reshape(b, nc, W, H, -1)
            pad = jnp.zeros_like(c[:, :1])
            prev = jnp.concatenate([pad, c[:, :-1]], 1)
            nxt = jnp.concatenate([c[:, 1:], pad], 1)
            loc = jnp.concatenate([prev, c, nxt], 2)
            glob = jnp.broadcast_to(g[:, None], (b, nc, NG, H, c.shape[-1]))
            return jnp.concatenate([glob, loc], 2)
        ci = np.arange(nc)[:, None, None]
        qi = ci * W + np.arange(W)[None, :, None]
        ki = ci * W - W + np.arange(3 * W)[None, None, :]
        band = (np.abs(qi - ki) <= W) & (ki >= 0) & (ki < t)
        mask = np.concatenate([np.ones((nc, W, NG), bool), band], -1)[None, :, None]
        loc = attend(qc, neigh(kk, gk), neigh(vv, gv), mask).reshape(b, t, H, -1)
        glob = attend(qq[:, :NG], kk, vv, np.ones((1, 1, NG, t), bool))
        ctx = jnp.concatenate([glob, loc[:, NG:]], 1).reshape(b, t, d)
        x = x + ctx @ bf(q["o"])
        f = jax.nn.gelu(ln32(x, q["g2"], q["b2"]) @ bf(q["f1"]) + bf(q["fb1"]))
        return x + f @ bf(q["f2"])

    def loss(p, tok, tags):
        x = bf(p["emb"][tok] + p["pos"])
        for q in p["layers"]:
            x = layer(q, x)
        logits = (ln32(x, p["gf"], p["bf"]) @ bf(p["head"])).astype(F32)
        return _int_xent(logits, tags) * SCALE

    def step(p, m, v, t, tok, tags):
        ls, g = jax.value_and_grad(loss)(p, tok, tags)
        g = tmap(lambda a: a.astype(F32) / SCALE, g)
        p, m, v = _adamw_tree(p, m, v, g, t, lr=3e-4, wd=0.01)
        return ls / SCALE, p, m, v
    V, D, T, F = 1000, 64, 256, 256
    q = {"g1": S(D), "b1": S(D), "qkv": S(D, 3 * D), "o": S(D, D), "g2": S(D), "b2": S(D),
         "f1": S(D, F), "fb1": S(F), "f2": S(F, D)}
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [q, dict(q)], "gf": S(D), "bf": S(D),
         "head": S(D, 9)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T, dtype=I32))


# ----------------------------------------------------------------------------- optimizers


def mars_variance_reduced_adamw_gradient_correction():
    """MARS-AdamW (variance reduction through scaled stochastic recursive momentum) training a
    Kim-style text CNN: embeddings, three parallel 1-D convolutions of widths 3, 4 and 5 with
    max-over-time pooling, a highway layer and a linear head; the optimizer keeps the
    previous step's gradient, forms c = g + gamma * b1 / (1 - b1) * (g - g_prev), clips c to
    unit norm per tensor, and feeds it to AdamW moments with bias correction; the new
    gradient becomes the stored one; cross-entropy with a warmup-cosine schedule."""
    GAMMA, B1, B2 = 0.025, 0.95, 0.99

    def conv1d(x, w):
        return lax.conv_general_dilated(x, w, (1,), "VALID", dimension_numbers=("NWC", "WIO", "NWC"))

    def loss(p, tok, labels):
        x = p["emb"][tok]
        pooled = [jnp.max(jax.nn.relu(conv1d(x, q["w"]) + q["b"]), 1) for q in p["convs"]]
        h = jnp.concatenate(pooled, -1)
        tg = jax.nn.sigmoid(h @ p["hw_t"] + p["hb_t"])
        h = tg * jax.nn.relu(h @ p["hw_h"] + p["hb_h"]) + (1.0 - tg) * h
        return _int_xent(h @ p["out"] + p["ob"], labels)

    def step(p, m, v, gprev, t, tok, labels):
        l, g = jax.value_and_grad(loss)(p, tok, labels)

        def corr(g, gp):
            c = g + GAMMA * (B1 / (1.0 - B1)) * (g - gp)
            n = jnp.sqrt(jnp.sum(jnp.square(c)))
            return c / jnp.maximum(n, 1.0)
        c = tmap(corr, g, gprev)
        lr = _warmup_cosine(t, 3e-3, 20000.0, warm=200.0)
        p, m, v = _adamw_tree(p, m, v, c, t, lr=lr, b1=B1, b2=B2, wd=0.1)
        return l, p, m, v, g
    V, E, NFIL = 2000, 64, 96
    p = {"emb": S(V, E), "convs": [{"w": S(k, E, NFIL), "b": S(NFIL)} for k in (3, 4, 5)],
         "hw_t": S(3 * NFIL, 3 * NFIL), "hb_t": S(3 * NFIL), "hw_h": S(3 * NFIL, 3 * NFIL),
         "hb_h": S(3 * NFIL), "out": S(3 * NFIL, 5), "ob": S(5)}
    return step, (p, p, p, p, S(), S(64, 128, dtype=I32), S(64, dtype=I32))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [selu_alpha_dropout_self_normalizing_count_regressor,
            quaternion_hamilton_product_dense_classifier],
    "cnn": [csp_darknet_cross_stage_split_mish_stages,
            involution_pixelwise_generated_kernels_stem_net],
    "transformer": [mixture_of_softmaxes_decoder_lm_latent_contexts,
                    prefix_tuning_reparameterized_frozen_encoder_sentiment],
    "rnn": [hierarchical_multiscale_lstm_boundary_straight_through,
            householder_reflection_orthogonal_recurrence_modrelu],
    "moe": [pyramid_residual_moe_sorted_token_dispatch],
    "vae": [dip_vae_aggregate_posterior_covariance_penalty],
    "unet": [unext_shifted_token_mlp_bottleneck_segmenter],
    "gnn": [residual_gated_graph_convnet_edge_gates],
    "quant": [hadamard_rotated_int4_per_token_activation_qat],
    "remat": [remat_convlstm_frame_scan_dots_no_batch_policy,
              remat_two_level_grouped_layer_scan_sandwich_norm],
    "custom_vjp": [perturbed_topk_feature_gate_monte_carlo_vjp],
    "control": [deepcluster_em_gaussian_mixture_while_pseudo_labels,
                reptile_inner_fori_switch_task_family_regression],
    "sort": [ordered_weighted_average_sorted_set_pooling],
    "fft": [block_circulant_dense_layers_fft_matvec],
    "linalg": [deep_lda_generalized_eigen_scatter_ratio],
    "scatter_gather": [field_aware_factorization_pairwise_embedding_lookup],
    "dynamic": [moco_negative_queue_enqueue_two_view_crops],
    "mixed": [bfloat16_chunked_local_window_global_token_encoder],
    "optimizer": [mars_variance_reduced_adamw_gradient_correction],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["quaternion_hamilton_product_dense_classifier",
           "csp_darknet_cross_stage_split_mish_stages",
           "mixture_of_softmaxes_decoder_lm_latent_contexts",
           "hierarchical_multiscale_lstm_boundary_straight_through",
           "pyramid_residual_moe_sorted_token_dispatch",
           "unext_shifted_token_mlp_bottleneck_segmenter",
           "residual_gated_graph_convnet_edge_gates",
           "hadamard_rotated_int4_per_token_activation_qat",
           "remat_two_level_grouped_layer_scan_sandwich_norm",
           "block_circulant_dense_layers_fft_matvec",
           "bfloat16_chunked_local_window_global_token_encoder",
           "mars_variance_reduced_adamw_gradient_correction"]
SHARDED_SET = ["mixture_of_softmaxes_decoder_lm_latent_contexts",
               "bfloat16_chunked_local_window_global_token_encoder",
               "csp_darknet_cross_stage_split_mish_stages",
               "unext_shifted_token_mlp_bottleneck_segmenter",
               "remat_two_level_grouped_layer_scan_sandwich_norm",
               "selu_alpha_dropout_self_normalizing_count_regressor",
               "moco_negative_queue_enqueue_two_view_crops",
               "dip_vae_aggregate_posterior_covariance_penalty"]
