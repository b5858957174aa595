"""Twenty-third fresh set: 25 JAX programs written by a helper on 2026-11-29, kept outside the
repository as a held-out set, measured unseen at the start and end of that day's sixth session
and committed then (docstring kept at 3 lines: the dumps record line numbers)::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh23_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh23_programs python benchmarks/accuracy.py --data DIR

Written for JAX 0.4.30 up to the current release (no API newer than 0.4.30).
"""

from __future__ import annotations

import math

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax
from jax.ad_checkpoint import checkpoint_name

F32 = jnp.float32
BF16 = jnp.bfloat16
I32 = jnp.int32
U32 = jnp.uint32
I8 = jnp.int8
tmap = jax.tree_util.tree_map
leaves = jax.tree_util.tree_leaves
CP = jax.checkpoint_policies


def S(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


def _adam_tree(p, m, v, g, t, lr=1e-3, b1=0.9, b2=0.999, wd=0.0, eps=1e-8):
    m = tmap(lambda m, g: b1 * m + (1 - b1) * g, m, g)
    v = tmap(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
    c1 = 1.0 - b1 ** t
    c2 = 1.0 - b2 ** t
    p = tmap(lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + wd * p), p, m, v)
    return p, m, v


def _ln(x, g, b, eps=1e-5):
    mu = jnp.mean(x, -1, keepdims=True)
    var = jnp.mean(jnp.square(x - mu), -1, keepdims=True)
    return (x - mu) * lax.rsqrt(var + eps) * g + b


def _rms(x, g, eps=1e-6):
    return x * lax.rsqrt(jnp.mean(jnp.square(x), -1, keepdims=True) + eps) * g


def _bn(x, g, b, axes, eps=1e-5):
    """Training-mode batch norm over ``axes``; returns the output and the batch (mean, var)."""
    mu = jnp.mean(x, axes)
    var = jnp.var(x, axes)
    return (x - mu) * lax.rsqrt(var + eps) * g + b, (mu, var)


def _conv(x, w, stride=1, pad="SAME", groups=1, dil=1):
    return lax.conv_general_dilated(x, w, (stride, stride), pad, rhs_dilation=(dil, dil),
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


def _cosine_lr(t, base, total, warm=0.0):
    c = 0.5 * (1.0 + jnp.cos(jnp.pi * jnp.minimum(t / total, 1.0)))
    if warm:
        c = c * jnp.minimum(1.0, (t + 1.0) / warm)
    return base * c


def _bce_logits(z, y):
    return jnp.maximum(z, 0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z)))


def _rope(x):
    """Rotary position embedding on [b, t, h, d] (d even), rotating half-split pairs."""
    t, d = x.shape[1], x.shape[-1]
    inv = 1.0 / (10000.0 ** (np.arange(0, d, 2) / d))
    ang = np.arange(t)[:, None] * inv[None, :]
    cos = jnp.asarray(np.cos(ang), x.dtype)[None, :, None, :]
    sin = jnp.asarray(np.sin(ang), x.dtype)[None, :, None, :]
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return jnp.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1)


def _causal(t):
    return np.tril(np.ones((t, t), bool))



def _gn(x, g, b, groups=8, eps=1e-5):
    """Group norm over the spatial axes and channel groups of an NHWC tensor."""
    n, h, w, c = x.shape
    xg = x.reshape(n, h, w, groups, c // groups)
    mu = jnp.mean(xg, (1, 2, 4), keepdims=True)
    var = jnp.var(xg, (1, 2, 4), keepdims=True)
    return ((xg - mu) * lax.rsqrt(var + eps)).reshape(n, h, w, c) * g + b


def _sinusoid(t, d):
    pos = np.arange(t)[:, None]
    inv = 1.0 / (10000.0 ** (np.arange(0, d, 2) / d))
    return np.concatenate([np.sin(pos * inv), np.cos(pos * inv)], -1).astype(np.float32)


def _mha(q, xq, xkv, heads, mask=None):
    """Multi-head attention with separate q / k / v / o projections; mask broadcasts to
    [b, h, tq, tk]."""
    b, tq, _ = xq.shape
    tk = xkv.shape[1]
    qq = (xq @ q["wq"]).reshape(b, tq, heads, -1)
    kk = (xkv @ q["wk"]).reshape(b, tk, heads, -1)
    vv = (xkv @ q["wv"]).reshape(b, tk, heads, -1)
    s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(qq.shape[-1])
    if mask is not None:
        s = jnp.where(mask, s, -1e9)
    a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, tq, -1)
    return a @ q["wo"]


def _attn_params(d, dk=None):
    dk = dk or d
    return {"wq": S(d, dk), "wk": S(d, dk), "wv": S(d, dk), "wo": S(dk, d)}


# ----------------------------------------------------------------------------- mlp


def xdeepfm_compressed_interaction_network_field_outer_products_ctr():
    """xDeepFM click-through-rate model (Lian et al.): 16 categorical fields, each with its own
    1000-row embedding table of width 16 and its own first-order weight table; a Compressed
    Interaction Network builds, layer by layer, the field-wise outer products of the current
    feature maps with the base embeddings (an einsum to [batch, H_k, 16, 16]) and compresses
    them with a 1x1 "convolution" (einsum over the map and field axes) to 64 maps, with
    split-half direct connections -- half of each layer goes on, half is sum-pooled over the
    embedding axis into the output; a plain DNN (256, 128) over the flattened embeddings and
    the linear part complete the logit; binary cross-entropy with L2 on the gathered
    embedding rows; Adam with global-norm clipping."""
    NF, VOC, E, HK = 16, 1000, 16, (64, 64, 64)
    FIDX = np.arange(NF)[None, :]

    def loss(p, ids, y):
        B = ids.shape[0]
        x0 = p["tables"][FIDX, ids]
        lin = jnp.sum(p["lin"][FIDX, ids], -1) + p["lb"]
        xk, pooled = x0, []
        for i, (w, b) in enumerate(p["cin"]):
            z = jnp.einsum("bhd,bmd->bhmd", xk, x0)
            h = jax.nn.relu(jnp.einsum("bhmd,hmo->bod", z, w) + b[:, None])
            if i < len(p["cin"]) - 1:
                nxt, out = jnp.split(h, 2, 1)
                xk = nxt
            else:
                out = h
            pooled.append(jnp.sum(out, -1))
        cin = jnp.concatenate(pooled, -1) @ p["cin_out"]
        h = x0.reshape(B, NF * E)
        for w, b in p["dnn"]:
            h = jax.nn.relu(h @ w + b)
        logit = lin + cin[:, 0] + (h @ p["dnn_out"])[:, 0]
        l2 = jnp.mean(jnp.sum(jnp.square(x0), (1, 2)))
        return jnp.mean(_bce_logits(logit, y)) + 1e-5 * l2

    def step(p, m, v, t, ids, y):
        l, g = jax.value_and_grad(loss)(p, ids, y)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 10.0), t, lr=1e-3)
        return l, p, m, v
    cin, hin, out_w = [], NF, 0
    for i, h in enumerate(HK):
        cin.append((S(hin, NF, h), S(h)))
        last = i == len(HK) - 1
        hin = h if last else h // 2
        out_w += h if last else h // 2
    p = {"tables": S(NF, VOC, E), "lin": S(NF, VOC), "lb": S(), "cin": cin,
         "cin_out": S(out_w, 1), "dnn": [(S(NF * E, 256), S(256)), (S(256, 128), S(128))],
         "dnn_out": S(128, 1)}
    B = 512
    return step, (p, p, p, S(), S(B, NF, dtype=I32), S(B))


def neural_additive_model_exu_feature_nets_interpretable_regressor():
    """Neural Additive Model (Agarwal et al.) for an interpretable housing-price regressor: each
    of 16 numeric features gets its own small network -- an ExU first layer (weights used
    through exp(w), applied to x - b, then ReLU-1 clipping to [0, 1]) of 256 units followed
    by two ReLU layers of 64 and 32 and a scalar output -- all 16 networks run at once as
    stacked parameters contracted by einsum; the prediction is the sum of the feature
    contributions plus a bias; feature dropout (whole contributions dropped with a passed-in
    raw key), dropout inside the nets, an output penalty on the squared contributions and
    weight decay; MSE; Adam with a per-epoch exponential learning-rate decay."""
    NF, HU, KEEP_F, KEEP = 16, 256, 0.9, 0.8

    def loss(p, x, y, key):
        k1, k2, k3 = jax.random.split(key, 3)
        h = jnp.clip(jnp.exp(p["exu_w"]) * (x[..., None] - p["exu_b"]), 0.0, 1.0)
        h = jax.nn.relu(jnp.einsum("bfh,fhk->bfk", h, p["w1"]) + p["b1"])
        h = jnp.where(jax.random.bernoulli(k1, KEEP, h.shape), h / KEEP, 0.0)
        h = jax.nn.relu(jnp.einsum("bfh,fhk->bfk", h, p["w2"]) + p["b2"])
        h = jnp.where(jax.random.bernoulli(k2, KEEP, h.shape), h / KEEP, 0.0)
        contrib = jnp.einsum("bfh,fh->bf", h, p["w3"]) + p["b3"]
        fmask = jax.random.bernoulli(k3, KEEP_F, contrib.shape)
        pred = jnp.sum(jnp.where(fmask, contrib / KEEP_F, 0.0), -1) + p["bias"]
        mse = jnp.mean(jnp.square(pred - y))
        return mse + 1e-3 * jnp.mean(jnp.square(contrib)), mse

    def step(p, m, v, t, x, y, key):
        (l, mse), g = jax.value_and_grad(loss, has_aux=True)(p, x, y, key)
        g = tmap(lambda g, w: g + (1e-6 * w if w.ndim >= 2 else 0.0), g, p)
        lr = 2e-3 * 0.995 ** jnp.floor(t / 100.0)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr)
        return l, mse, p, m, v
    p = {"exu_w": S(NF, HU), "exu_b": S(NF, HU), "w1": S(NF, HU, 64), "b1": S(NF, 64),
         "w2": S(NF, 64, 32), "b2": S(NF, 32), "w3": S(NF, 32), "b3": S(NF), "bias": S()}
    B = 1024
    return step, (p, p, p, S(), S(B, NF), S(B), S(2, dtype=U32))


# ----------------------------------------------------------------------------- cnn


def van_large_kernel_attention_dilated_depthwise_decomposition_classifier():
    """Visual Attention Network (VAN, Guo et al.) on 32x32 images: three stages of overlapping
    3x3 stride-2 patch embeddings with batch norm (widths 32 / 64 / 128, depths 1 / 2 / 1);
    each block is x + ls1 * Attention(BN(x)) and x + ls2 * MLP(BN(x)) where the attention is
    a 1x1 projection, GELU, large kernel attention -- a 5x5 depthwise conv, a 7x7 depthwise
    conv with dilation 3 and a 1x1 conv whose output multiplies the input -- and a second 1x1
    projection with a residual, and the MLP is 1x1 expand (ratio 4), 3x3 depthwise conv,
    GELU and 1x1 project; LayerNorm at the end of each stage; global pooling and a linear
    head; label-smoothed cross-entropy; AdamW with warmup-cosine; BN batch statistics
    returned."""
    DIMS, DEPTHS = (32, 64, 128), (1, 2, 1)

    def bn(q, x, stats):
        h, st = _bn(x, q["g"], q["b"], (0, 1, 2))
        stats.append(st)
        return h

    def dw(x, w, dil=1):
        return _conv(x, w, groups=x.shape[-1], dil=dil)

    def block(q, x, stats):
        h = bn(q["n1"], x, stats)
        u = jax.nn.gelu(h @ q["p1"] + q["pb1"])
        a = dw(u, q["dw5"]) + q["db5"]
        a = dw(a, q["dw7"], dil=3) + q["db7"]
        a = a @ q["pw"] + q["pwb"]
        h = (u * a) @ q["p2"] + q["pb2"] + h
        x = x + q["ls1"] * h
        h = bn(q["n2"], x, stats) @ q["f1"] + q["fb1"]
        h = jax.nn.gelu(dw(h, q["fdw"]) + q["fdb"]) @ q["f2"] + q["fb2"]
        return x + q["ls2"] * h

    def loss(p, img, labels):
        stats, x = [], img
        for st in p["stages"]:
            x = bn(st["en"], _conv(x, st["embed"], 2) + st["eb"], stats)
            for q in st["blocks"]:
                x = block(q, x, stats)
            x = _ln(x, st["lg"], st["lb"])
        logits = jnp.mean(x, (1, 2)) @ p["head"] + p["hb"]
        return _smooth_xent(logits, labels), stats

    def step(p, m, v, t, img, labels):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels)
        lr = _cosine_lr(t, 1e-3, 30000.0, warm=500.0)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr, wd=0.05)
        return l, stats, p, m, v

    def nb(c):
        return {"g": S(c), "b": S(c)}

    def blk(c):
        return {"n1": nb(c), "p1": S(c, c), "pb1": S(c), "dw5": S(5, 5, 1, c), "db5": S(c),
                "dw7": S(7, 7, 1, c), "db7": S(c), "pw": S(c, c), "pwb": S(c), "p2": S(c, c),
                "pb2": S(c), "ls1": S(c), "n2": nb(c), "f1": S(c, 4 * c), "fb1": S(4 * c),
                "fdw": S(3, 3, 1, 4 * c), "fdb": S(4 * c), "f2": S(4 * c, c), "fb2": S(c),
                "ls2": S(c)}
    stages, ci = [], 3
    for c, d in zip(DIMS, DEPTHS):
        stages.append({"embed": S(3, 3, ci, c), "eb": S(c), "en": nb(c),
                       "blocks": [blk(c) for _ in range(d)], "lg": S(c), "lb": S(c)})
        ci = c
    p = {"stages": stages, "head": S(DIMS[-1], 100), "hb": S(100)}
    return step, (p, p, p, S(), S(16, 32, 32, 3), S(16, dtype=I32))


def condconv_per_example_mixture_kernels_grouped_batch_trick_classifier():
    """CondConv residual network (Yang et al., conditionally parameterised convolutions) on
    32x32 images: in every residual block both 3x3 convolutions are per-example mixtures of
    4 expert kernels with routing weights sigmoid(GAP(x) W_r); the mixed kernels
    [batch, 3, 3, c_in, c_out] are applied with the grouped-convolution trick -- the batch
    is folded into the channel axis and the convolution run with feature_group_count equal
    to the batch size -- followed by batch norm and ReLU; a plain conv stem, three stages
    (32 / 64 / 128, stride-2 1x1 projection shortcuts), global pooling and a linear head;
    label-smoothed cross-entropy; SGD with momentum, weight decay and cosine decay; BN
    batch statistics returned."""
    NE = 4

    def condconv(q, x, stride):
        B, H, W, C = x.shape
        r = jax.nn.sigmoid(jnp.mean(x, (1, 2)) @ q["route"] + q["rb"])
        w = jnp.einsum("be,ehwio->bhwio", r, q["experts"])
        co = w.shape[-1]
        w = w.transpose(1, 2, 3, 0, 4).reshape(3, 3, C, B * co)
        xf = x.transpose(1, 2, 0, 3).reshape(1, H, W, B * C)
        y = _conv(xf, w, stride, groups=B)
        ho, wo = y.shape[1], y.shape[2]
        return y.reshape(ho, wo, B, co).transpose(2, 0, 1, 3)

    def bnr(q, x, stats, relu=True):
        h, st = _bn(x, q["g"], q["b"], (0, 1, 2))
        stats.append(st)
        return jax.nn.relu(h) if relu else h

    def block(q, x, stats, stride):
        h = bnr(q["n1"], condconv(q["c1"], x, stride), stats)
        h = bnr(q["n2"], condconv(q["c2"], h, 1), stats, relu=False)
        sc = bnr(q["ns"], _conv(x, q["sc"], stride), stats, relu=False) if "sc" in q else x
        return jax.nn.relu(h + sc)

    def loss(p, img, labels):
        stats = []
        x = bnr(p["sn"], _conv(img, p["stem"]), stats)
        for si, st in enumerate(p["stages"]):
            for bi, q in enumerate(st):
                x = block(q, x, stats, 2 if (si and not bi) else 1)
        logits = jnp.mean(x, (1, 2)) @ p["fc"] + p["fcb"]
        return _smooth_xent(logits, labels), stats

    def step(p, mom, run, t, img, labels):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels)
        run = tmap(lambda r, s: 0.9 * r + 0.1 * s, run, lax.stop_gradient(stats))
        lr = _cosine_lr(t, 0.1, 50000.0)
        mom = tmap(lambda b, g, w: 0.9 * b + g + 1e-4 * w, mom, g, p)
        p = tmap(lambda w, b: w - lr * b, p, mom)
        return l, p, mom, run

    run = []

    def nb(c):
        run.append((S(c), S(c)))
        return {"g": S(c), "b": S(c)}

    def cc(ci, co):
        return {"route": S(ci, NE), "rb": S(NE), "experts": S(NE, 3, 3, ci, co)}
    stem = {"stem": S(3, 3, 3, 32), "sn": nb(32)}
    stages, ci = [], 32
    for co, n in ((32, 1), (64, 2), (128, 1)):
        st = []
        for bi in range(n):
            q = {"c1": cc(ci, co), "n1": nb(co), "c2": cc(co, co), "n2": nb(co)}
            if ci != co:
                q["sc"] = S(1, 1, ci, co)
                q["ns"] = nb(co)
            st.append(q)
            ci = co
        stages.append(st)
    p = dict(stem, stages=stages, fc=S(128, 10), fcb=S(10))
    return step, (p, p, run, S(), S(16, 32, 32, 3), S(16, dtype=I32))


# ----------------------------------------------------------------------------- transformer


def decision_transformer_interleaved_return_state_action_tokens():
    """Decision Transformer (Chen et al.) for offline continuous control: contexts of 16
    timesteps of (return-to-go, 17-dim state, 6-dim action) are embedded by three linear
    layers plus a shared 1000-row timestep embedding, interleaved into a 48-token sequence
    (stack and reshape), layer-normed and run through a three-layer causal GPT (4 heads,
    GELU MLP, pre-LN) whose attention also masks the left padding of short trajectories;
    actions are predicted from the hidden states of the state tokens through a tanh head,
    and returns and next states from the action tokens as auxiliary heads; masked MSE;
    AdamW with linear warmup and global-norm clipping at 0.25."""
    K, SD, AD, D, H, NL, MAXT = 16, 17, 6, 128, 4, 3, 1000

    def layer(q, x, mask):
        x = x + _mha(q["att"], _ln(x, q["g1"], q["b1"]), _ln(x, q["g1"], q["b1"]), H, mask)
        h = _ln(x, q["g2"], q["b2"])
        return x + jax.nn.gelu(h @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]

    def loss(p, rtg, states, actions, steps, valid):
        B = states.shape[0]
        te = p["time"][steps]
        er = rtg[..., None] * p["er"] + p["erb"] + te
        es = states @ p["es"] + p["esb"] + te
        ea = actions @ p["ea"] + p["eab"] + te
        x = jnp.stack([er, es, ea], 2).reshape(B, 3 * K, D)
        x = _ln(x, p["g"], p["b"])
        tv = jnp.repeat(valid, 3, 1)
        mask = _causal(3 * K)[None, None] & tv[:, None, None, :]
        for q in p["layers"]:
            x = layer(q, x, mask)
        x = _ln(x, p["gf"], p["bf"]).reshape(B, K, 3, D)
        pa = jnp.tanh(x[:, :, 1] @ p["pa"] + p["pab"])
        ps = x[:, :, 2] @ p["ps"] + p["psb"]
        pr = (x[:, :, 2] @ p["pr"])[..., 0]
        w = valid.astype(F32)
        n = jnp.maximum(jnp.sum(w), 1.0)
        la = jnp.sum(jnp.mean(jnp.square(pa - actions), -1) * w) / n
        ls = jnp.sum(jnp.mean(jnp.square(ps[:, :-1] - states[:, 1:]), -1) * w[:, 1:]) / n
        lr_ = jnp.sum(jnp.square(pr[:, :-1] - rtg[:, 1:]) * w[:, 1:]) / n
        return la + 0.1 * (ls + lr_), la

    def step(p, m, v, t, rtg, states, actions, steps, valid):
        (l, la), g = jax.value_and_grad(loss, has_aux=True)(p, rtg, states, actions, steps, valid)
        lr = 1e-4 * jnp.minimum(1.0, (t + 1.0) / 10000.0)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 0.25), t, lr=lr, wd=1e-4)
        return l, la, p, m, v
    q = {"att": _attn_params(D), "g1": S(D), "b1": S(D), "g2": S(D), "b2": S(D),
         "f1": S(D, 4 * D), "fb1": S(4 * D), "f2": S(4 * D, D), "fb2": S(D)}
    p = {"time": S(MAXT, D), "er": S(D), "erb": S(D), "es": S(SD, D), "esb": S(D),
         "ea": S(AD, D), "eab": S(D), "g": S(D), "b": S(D),
         "layers": [dict(q) for _ in range(NL)], "gf": S(D), "bf": S(D),
         "pa": S(D, AD), "pab": S(AD), "ps": S(D, SD), "psb": S(SD), "pr": S(D, 1)}
    B = 64
    return step, (p, p, p, S(), S(B, K), S(B, K, SD), S(B, K, AD), S(B, K, dtype=I32),
                  S(B, K, dtype=jnp.bool_))


def megabyte_patch_global_local_byte_decoder_lm():
    """MEGABYTE multiscale byte-level language model (Yu et al.): a 256-byte sequence is split
    into 32 patches of 8 bytes; the global model embeds each byte (width 32) plus a
    position, concatenates each patch's embeddings into one 256-wide patch vector, shifts
    the patch sequence right by one (a learned padding patch) and runs a two-layer causal
    transformer over patches; its outputs are projected and split into 8 per-byte vectors
    (width 64) that are added to the byte embeddings of the patch shifted right by one byte,
    and a two-layer causal local transformer runs over the 8 bytes of every patch (batched
    over batch x patches); a 256-way byte softmax; cross-entropy; AdamW with clipping."""
    P, DE, DL, H, NG, NLOC, T = 8, 32, 64, 4, 2, 2, 256
    NP_ = T // P
    DG = P * DE

    def layer(q, x):
        t = x.shape[1]
        h = _ln(x, q["g1"], q["b1"])
        x = x + _mha(q["att"], h, h, H, _causal(t)[None, None])
        h = _ln(x, q["g2"], q["b2"])
        return x + jax.nn.gelu(h @ q["f1"]) @ q["f2"]

    def loss(p, tok):
        B = tok.shape[0]
        eg = p["gemb"][tok] + p["gpos"]
        patches = eg.reshape(B, NP_, DG)
        patches = jnp.concatenate([jnp.broadcast_to(p["gpad"], (B, 1, DG)), patches[:, :-1]], 1)
        for q in p["glob"]:
            patches = layer(q, patches)
        hg = _ln(patches, p["gg"], p["gb"]) @ p["g2l"]
        hg = hg.reshape(B * NP_, P, DL)
        el = p["lemb"][tok].reshape(B * NP_, P, DL)
        el = jnp.concatenate([jnp.broadcast_to(p["lpad"], (B * NP_, 1, DL)), el[:, :-1]], 1)
        x = hg + el
        for q in p["loc"]:
            x = layer(q, x)
        logits = _ln(x, p["lg"], p["lb"]) @ p["out"]
        return _xent(logits.reshape(B, T, 256), tok)

    def step(p, m, v, t, tok):
        l, g = jax.value_and_grad(loss)(p, tok)
        lr = _cosine_lr(t, 2e-4, 80000.0, warm=500.0)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.95, wd=0.1)
        return l, p, m, v

    def lay(d):
        return {"g1": S(d), "b1": S(d), "att": _attn_params(d), "g2": S(d), "b2": S(d),
                "f1": S(d, 4 * d), "f2": S(4 * d, d)}
    p = {"gemb": S(256, DE), "gpos": S(T, DE), "gpad": S(DG), "glob": [lay(DG) for _ in range(NG)],
         "gg": S(DG), "gb": S(DG), "g2l": S(DG, P * DL), "lemb": S(256, DL), "lpad": S(DL),
         "loc": [lay(DL) for _ in range(NLOC)], "lg": S(DL), "lb": S(DL), "out": S(DL, 256)}
    return step, (p, p, p, S(), S(8, T, dtype=I32))


# ----------------------------------------------------------------------------- rnn / scan


def hawk_rglru_gated_linear_recurrence_temporal_conv_lm():
    """Hawk (Griffin family, De et al.) byte language model: each residual block is RMSNorm,
    then a GELU gate branch and a recurrent branch (linear, causal depthwise temporal conv of
    width 4, and a real-gated linear recurrent unit) multiplied and projected back, followed
    by a gated-GELU MLP block; the RG-LRU computes block-diagonal (per-head einsum)
    recurrence and input gates, a_t = sigmoid(Lambda)^(8 r_t) in log space, and
    h_t = a_t h_(t-1) + sqrt(1 - a_t^2) (i_t x_t) in a time-major lax.scan; two blocks of
    width 128, tied embeddings; cross-entropy; AdamW (b2 0.95) with global-norm clipping
    and warmup-cosine."""
    V, D, NH, T, KC, C = 256, 128, 4, 64, 4, 8.0
    DH = D // NH

    def rglru(q, x):
        b, t, d = x.shape
        xh = x.reshape(b, t, NH, DH)
        r = jax.nn.sigmoid(jnp.einsum("bthi,hij->bthj", xh, q["wa"]).reshape(b, t, d) + q["ba"])
        i = jax.nn.sigmoid(jnp.einsum("bthi,hij->bthj", xh, q["wx"]).reshape(b, t, d) + q["bx"])
        log_a = -C * r * jax.nn.softplus(-q["lam"])
        a = jnp.exp(log_a)
        mult = jnp.sqrt(jnp.maximum(1.0 - jnp.exp(2.0 * log_a), 1e-6))
        u = mult * i * x

        def cell(h, inp):
            at, ut = inp
            h = at * h + ut
            return h, h
        _, hs = lax.scan(cell, jnp.zeros((b, d)), (jnp.swapaxes(a, 0, 1), jnp.swapaxes(u, 0, 1)))
        return jnp.swapaxes(hs, 0, 1)

    def block(q, x):
        h = _rms(x, q["n1"])
        gate = jax.nn.gelu(h @ q["wg"])
        r = h @ q["wr"]
        r = jnp.pad(r, ((0, 0), (KC - 1, 0), (0, 0)))
        r = lax.conv_general_dilated(r, q["conv"], (1,), "VALID",
                                     dimension_numbers=("NWC", "WIO", "NWC"),
                                     feature_group_count=D) + q["cb"]
        x = x + (rglru(q, r) * gate) @ q["wo"]
        h = _rms(x, q["n2"])
        return x + (jax.nn.gelu(h @ q["m1"]) * (h @ q["m3"])) @ q["m2"]

    def loss(p, tok, tgt):
        x = p["emb"][tok] * math.sqrt(D)
        for q in p["blocks"]:
            x = block(q, x)
        return _xent(_rms(x, p["nf"]) @ p["emb"].T, tgt)

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        lr = _cosine_lr(t, 1e-3, 50000.0, warm=1000.0)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.95, wd=0.1)
        return l, p, m, v
    q = {"n1": S(D), "wg": S(D, D), "wr": S(D, D), "conv": S(KC, 1, D), "cb": S(D),
         "wa": S(NH, DH, DH), "ba": S(D), "wx": S(NH, DH, DH), "bx": S(D), "lam": S(D),
         "wo": S(D, D), "n2": S(D), "m1": S(D, 3 * D), "m3": S(D, 3 * D), "m2": S(3 * D, D)}
    p = {"emb": S(V, D), "blocks": [q, dict(q)], "nf": S(D)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T, dtype=I32))


def rnn_transducer_lstm_encoder_predictor_joint_lattice_loss():
    """RNN-Transducer speech recogniser (Graves 2012): 40-dim log-mel frames are stacked in
    pairs (time reduction to 40 steps) and encoded by two LSTM layers (lax.scan), the label
    history (blank-prefixed, 12 labels) by an embedding and a one-layer LSTM prediction
    network; a joint network tanh(W_e enc + W_p pred) gives a [batch, T, U + 1, 32] lattice
    of log-probabilities; the transducer log-likelihood is the forward algorithm over that
    lattice -- a lax.scan over time whose within-row recursion over labels is solved in
    closed form with a cumulative label-emission sum and lax.cumlogsumexp -- read at each
    utterance's (length - 1, label count) node; mean negative log-likelihood over the
    batch; Adam with global-norm clipping."""
    FEAT, T0, U, V, H, E = 40, 80, 12, 32, 96, 32
    T = T0 // 2
    NEG = -1e9

    def lstm(q, xs, h0):
        pre = xs @ q["wx"] + q["b"]

        def cell(c, z):
            h, cc = c
            i, f, g, o = jnp.split(z + h @ q["wh"], 4, -1)
            cc = jax.nn.sigmoid(f + 1.0) * cc + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(cc)
            return (h, cc), h
        _, hs = lax.scan(cell, (h0, h0), pre)
        return hs

    def loss(p, feats, flen, labels, ulen):
        B = feats.shape[0]
        x = jnp.swapaxes(feats.reshape(B, T, 2 * FEAT), 0, 1)
        z0 = jnp.zeros((B, H))
        for q in p["enc"]:
            x = lstm(q, x, z0)
        enc = jnp.swapaxes(x, 0, 1) @ p["je"]
        yin = jnp.concatenate([jnp.zeros((B, 1), I32), labels], 1)
        pr = lstm(p["pred"], jnp.swapaxes(p["emb"][yin], 0, 1), z0)
        pred = jnp.swapaxes(pr, 0, 1) @ p["jp"]
        joint = jnp.tanh(enc[:, :, None] + pred[:, None] + p["jb"]) @ p["jo"] + p["job"]
        logp = jax.nn.log_softmax(joint, -1)
        blank = logp[..., 0]
        emit = jnp.take_along_axis(logp[:, :, :U], labels[:, None, :, None], -1)[..., 0]
        umask = jnp.arange(U)[None, :] < ulen[:, None]
        emit = jnp.where(umask[:, None], emit, NEG)
        cum = jnp.concatenate([jnp.zeros((B, T, 1)), jnp.cumsum(emit, -1)], -1)

        def row(a, e_cum):
            return e_cum + lax.cumlogsumexp(a - e_cum, axis=1)
        first = row(jnp.full((B, U + 1), NEG).at[:, 0].set(0.0), cum[:, 0])

        def fwd(alpha, inp):
            bl, e_cum = inp
            nxt = row(alpha + bl, e_cum)
            return nxt, nxt
        _, rest = lax.scan(fwd, first, (jnp.swapaxes(blank[:, :-1], 0, 1),
                                        jnp.swapaxes(cum[:, 1:], 0, 1)))
        alphas = jnp.concatenate([first[None], rest], 0)
        bidx = jnp.arange(B)
        final = alphas[flen - 1, bidx, ulen] + blank[bidx, flen - 1, ulen]
        return -jnp.mean(final)

    def step(p, m, v, t, feats, flen, labels, ulen):
        l, g = jax.value_and_grad(loss)(p, feats, flen, labels, ulen)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 5.0), t, lr=5e-4)
        return l, p, m, v

    def cell(i):
        return {"wx": S(i, 4 * H), "wh": S(H, 4 * H), "b": S(4 * H)}
    p = {"enc": [cell(2 * FEAT), cell(H)], "emb": S(V, E), "pred": cell(E), "je": S(H, H),
         "jp": S(H, H), "jb": S(H), "jo": S(H, V), "job": S(V)}
    B = 16
    return step, (p, p, p, S(), S(B, T0, FEAT), S(B, dtype=I32), S(B, U, dtype=I32),
                  S(B, dtype=I32))


# ----------------------------------------------------------------------------- moe


def mixture_of_attention_heads_topk_query_experts_shared_kv():
    """Mixture-of-attention-heads decoder LM (MoA, Zhang et al.): in each of two layers a
    router picks, per token, the top 2 of 8 attention experts (softmax gates renormalised
    over the chosen pair); every expert owns a query and an output projection, gathered per
    token from the stacked expert weights, while the key and value projections are shared
    (one head of width 32, multi-query style); each selected expert attends causally over
    the shared keys and values and its gated output is projected back by its own output
    matrix; a GELU MLP follows each attention; cross-entropy plus a load-balancing loss
    (squared coefficient of variation of expert importance and load) and a router z-loss;
    AdamW with warmup-cosine."""
    E, K, D, DH, T, V, NL = 8, 2, 128, 32, 64, 512, 2

    def cv2(a):
        return jnp.var(a) / (jnp.square(jnp.mean(a)) + 1e-10)

    def moa(q, x):
        b, t, d = x.shape
        logits = x @ q["router"]
        probs = jax.nn.softmax(logits, -1)
        gate, idx = lax.top_k(probs, K)
        gate = gate / jnp.sum(gate, -1, keepdims=True)
        kk = x @ q["wk"]
        vv = x @ q["wv"]
        qq = jnp.einsum("btd,btkde->btke", x, q["wq"][idx])
        s = jnp.einsum("btke,bse->bkts", qq, kk) / math.sqrt(DH)
        s = jnp.where(_causal(t)[None, None], s, -1e9)
        o = jnp.einsum("bkts,bse->btke", jax.nn.softmax(s, -1), vv)
        out = jnp.einsum("btke,btked->btd", o * gate[..., None], q["wo"][idx])
        importance = jnp.sum(probs, (0, 1))
        load = jnp.sum(jax.nn.one_hot(idx, E), (0, 1, 2))
        z = jnp.mean(jnp.square(jax.nn.logsumexp(logits, -1)))
        return out, cv2(importance) + cv2(load), z

    def loss(p, tok, tgt):
        x = p["emb"][tok] + p["pos"]
        aux = zl = 0.0
        for q in p["layers"]:
            a, bal, z = moa(q, _ln(x, q["g1"], q["b1"]))
            x = x + a
            h = _ln(x, q["g2"], q["b2"])
            x = x + jax.nn.gelu(h @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]
            aux, zl = aux + bal, zl + z
        ce = _xent(_ln(x, p["gf"], p["bf"]) @ p["out"], tgt)
        return ce + 1e-2 * aux + 1e-3 * zl, ce

    def step(p, m, v, t, tok, tgt):
        (l, ce), g = jax.value_and_grad(loss, has_aux=True)(p, tok, tgt)
        lr = _cosine_lr(t, 5e-4, 40000.0, warm=400.0)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, wd=0.01)
        return l, ce, p, m, v
    q = {"g1": S(D), "b1": S(D), "router": S(D, E), "wq": S(E, D, DH), "wo": S(E, DH, D),
         "wk": S(D, DH), "wv": S(D, DH), "g2": S(D), "b2": S(D), "f1": S(D, 4 * D),
         "fb1": S(4 * D), "f2": S(4 * D, D), "fb2": S(D)}
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [dict(q) for _ in range(NL)], "gf": S(D),
         "bf": S(D), "out": S(D, V)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T, dtype=I32))


# ----------------------------------------------------------------------------- vae


def iaf_made_autoregressive_posterior_free_bits_vae_adamax():
    """VAE with an inverse-autoregressive-flow posterior (Kingma et al. 2016) on binarised
    28x28 digits: an MLP encoder gives a diagonal Gaussian over 16 latents and a 64-dim
    context; two IAF steps, each a MADE network (masked linear layers with static degree
    masks: input -> hidden -> hidden -> mean and gate outputs, the context added to the first
    hidden layer, ELU), update z <- sigma z + (1 - sigma) m with sigma = sigmoid(s + 1.5)
    and the latent order reversed between steps; the per-dimension log q(z) (base density
    minus the log-gates) against a standard-normal prior gives a per-dimension KL estimate,
    summed in groups of 4 with free bits (each group's batch mean clamped below at 0.25 nats);
    Bernoulli decoder MLP; Adamax with bias correction."""
    X, HID, Z, HC, HM, LAM = 784, 400, 16, 64, 64, 0.25
    d_in = np.arange(1, Z + 1)
    d_h1 = np.arange(HM) % (Z - 1) + 1
    d_h2 = np.arange(HM) % (Z - 1) + 1
    M1 = (d_h1[None, :] >= d_in[:, None]).astype(np.float32)
    M2 = (d_h2[None, :] >= d_h1[:, None]).astype(np.float32)
    M3 = (d_in[None, :] > d_h2[:, None]).astype(np.float32)

    def iaf(q, z, hc):
        h = jax.nn.elu(z @ (q["w1"] * M1) + hc @ q["wc"] + q["b1"])
        h = jax.nn.elu(h @ (q["w2"] * M2) + q["b2"])
        m = h @ (q["wm"] * M3) + q["bm"]
        s = h @ (q["ws"] * M3) + q["bs"]
        sig = jax.nn.sigmoid(s + 1.5)
        return sig * z + (1.0 - sig) * m, jnp.log(sig)

    def loss(p, x, eps):
        h = jnp.tanh(x @ p["e1"] + p["eb1"])
        h = jnp.tanh(h @ p["e2"] + p["eb2"])
        mu, logsig, hc = h @ p["mu"] + p["mub"], h @ p["ls"] + p["lsb"], h @ p["ctx"]
        z = mu + jnp.exp(logsig) * eps
        logq = -0.5 * jnp.square(eps) - logsig - 0.5 * math.log(2 * math.pi)
        for i, q in enumerate(p["flows"]):
            z, lg = iaf(q, z, hc)
            logq = logq - lg
            if i < len(p["flows"]) - 1:
                z, logq = z[:, ::-1], logq[:, ::-1]
        logp = -0.5 * jnp.square(z) - 0.5 * math.log(2 * math.pi)
        kl = logq - logp
        kl_groups = jnp.mean(kl, 0).reshape(Z // 4, 4).sum(-1)
        kl_fb = jnp.sum(jnp.maximum(kl_groups, LAM))
        d = jnp.tanh(z @ p["d1"] + p["db1"])
        d = jnp.tanh(d @ p["d2"] + p["db2"])
        rec = jnp.mean(jnp.sum(_bce_logits(d @ p["d3"] + p["db3"], x), -1))
        return rec + kl_fb, rec + jnp.sum(jnp.mean(kl, 0))

    def step(p, m, u, t, x, eps):
        (l, elbo), g = jax.value_and_grad(loss, has_aux=True)(p, x, eps)
        m = tmap(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        u = tmap(lambda u, g: jnp.maximum(0.999 * u, jnp.abs(g)), u, g)
        lr = 2e-3 / (1.0 - 0.9 ** t)
        p = tmap(lambda w, m, u: w - lr * m / (u + 1e-8), p, m, u)
        return l, elbo, p, m, u
    flow = {"w1": S(Z, HM), "wc": S(HC, HM), "b1": S(HM), "w2": S(HM, HM), "b2": S(HM),
            "wm": S(HM, Z), "bm": S(Z), "ws": S(HM, Z), "bs": S(Z)}
    p = {"e1": S(X, HID), "eb1": S(HID), "e2": S(HID, HID), "eb2": S(HID), "mu": S(HID, Z),
         "mub": S(Z), "ls": S(HID, Z), "lsb": S(Z), "ctx": S(HID, HC),
         "flows": [flow, dict(flow)], "d1": S(Z, HID), "db1": S(HID), "d2": S(HID, HID),
         "db2": S(HID), "d3": S(HID, X), "db3": S(X)}
    B = 128
    return step, (p, p, p, S(), S(B, X), S(B, Z))


# ----------------------------------------------------------------------------- unet


def resunet_plus_plus_squeeze_excite_aspp_bridge_attention_decoder():
    """ResUNet++ (Jha et al.) for polyp-style binary segmentation of 32x32 RGB images: a
    residual stem and two strided pre-activation residual blocks (BN-ReLU-conv twice plus
    a strided 1x1 shortcut, widths 16 / 32 / 64) each followed by squeeze-and-excite;
    an atrous spatial pyramid pooling bridge (3x3 convs with dilations 1, 2 and 3 plus a
    1x1 branch, summed); every decoder stage applies an attention block (BN-ReLU-conv on the
    encoder skip, max-pooled, added to BN-ReLU-conv of the decoder map, BN-ReLU-conv, then
    multiplied into the decoder map), nearest-neighbour 2x upsampling, concatenation with
    the skip and a residual block; a final ASPP and 1x1 head; BCE plus soft Dice; Adam; BN
    batch statistics returned."""

    def bn(q, x, stats):
        h, st = _bn(x, q["g"], q["b"], (0, 1, 2))
        stats.append(st)
        return h

    def brc(q, x, stats, stride=1, dil=1):
        return _conv(jax.nn.relu(bn(q["n"], x, stats)), q["w"], stride, dil=dil)

    def se(q, x):
        s = jax.nn.relu(jnp.mean(x, (1, 2)) @ q["s1"])
        return x * jax.nn.sigmoid(s @ q["s2"])[:, None, None, :]

    def resblock(q, x, stats, stride):
        h = brc(q["a"], x, stats, stride)
        h = brc(q["b"], h, stats)
        return h + bn(q["ns"], _conv(x, q["sc"], stride), stats)

    def aspp(q, x, stats):
        out = bn(q["n0"], _conv(x, q["w0"]), stats)
        for i, d in enumerate((1, 2, 3)):
            out = out + bn(q[f"n{d}"], _conv(x, q[f"w{d}"], dil=d), stats)
        return out @ q["proj"]

    def up(x):
        return jnp.repeat(jnp.repeat(x, 2, 1), 2, 2)

    def attention(q, skip, x, stats):
        a = brc(q["e"], skip, stats)
        a = lax.reduce_window(a, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        b = brc(q["d"], x, stats)
        return brc(q["o"], a + b, stats) * x

    def loss(p, img, mask):
        stats = []
        s = p["stem"]
        h = _conv(jax.nn.relu(bn(s["n1"], _conv(img, s["w1"]), stats)), s["w2"])
        x = se(s["se"], h + bn(s["ns"], _conv(img, s["sc"]), stats))
        skips = [x]
        for q in p["enc"]:
            x = se(q["se"], resblock(q["res"], x, stats, 2))
            skips.append(x)
        x = aspp(p["bridge"], skips.pop(), stats)
        for q in p["dec"]:
            skip = skips.pop()
            x = attention(q["att"], skip, x, stats)
            x = resblock(q["res"], jnp.concatenate([up(x), skip], -1), stats, 1)
        logits = (aspp(p["out_aspp"], x, stats) @ p["head"])[..., 0] + p["hb"]
        pr = jax.nn.sigmoid(logits)
        inter = jnp.sum(pr * mask, (1, 2))
        dice = 1.0 - (2.0 * inter + 1.0) / (jnp.sum(pr, (1, 2)) + jnp.sum(mask, (1, 2)) + 1.0)
        return jnp.mean(_bce_logits(logits, mask)) + jnp.mean(dice), stats

    def step(p, m, v, t, img, mask):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, mask)
        p, m, v = _adam_tree(p, m, v, g, t, lr=1e-4)
        return l, stats, p, m, v

    def nb(c):
        return {"g": S(c), "b": S(c)}

    def brc_p(ci, co, k=3):
        return {"n": nb(ci), "w": S(k, k, ci, co)}

    def res_p(ci, co):
        return {"a": brc_p(ci, co), "b": brc_p(co, co), "sc": S(1, 1, ci, co), "ns": nb(co)}

    def se_p(c):
        return {"s1": S(c, max(c // 8, 4)), "s2": S(max(c // 8, 4), c)}

    def aspp_p(ci, co):
        q = {"w0": S(1, 1, ci, co), "n0": nb(co), "proj": S(co, co)}
        for d in (1, 2, 3):
            q[f"w{d}"] = S(3, 3, ci, co)
            q[f"n{d}"] = nb(co)
        return q
    W = (16, 32, 64)
    stem = {"w1": S(3, 3, 3, W[0]), "n1": nb(W[0]), "w2": S(3, 3, W[0], W[0]),
            "sc": S(1, 1, 3, W[0]), "ns": nb(W[0]), "se": se_p(W[0])}
    enc = [{"res": res_p(W[i], W[i + 1]), "se": se_p(W[i + 1])} for i in range(2)]
    dec, ci = [], 2 * W[2]
    for sc in (W[1], W[0]):
        dec.append({"att": {"e": brc_p(sc, ci), "d": brc_p(ci, ci), "o": brc_p(ci, ci)},
                    "res": res_p(ci + sc, sc)})
        ci = sc
    p = {"stem": stem, "enc": enc, "bridge": aspp_p(W[2], 2 * W[2]), "dec": dec,
         "out_aspp": aspp_p(W[0], W[0]), "head": S(W[0], 1), "hb": S()}
    return step, (p, p, p, S(), S(8, 32, 32, 3), S(8, 32, 32))


# ----------------------------------------------------------------------------- gnn


def painn_equivariant_scalar_vector_messages_energy_force_fit():
    """PaiNN (polarizable atom interaction network, Schuett et al.) fitted to energies and
    forces of a batch of 8 small molecules with 16 atoms each (all intra-molecule pairs as
    edges, static index arrays): scalar features come from an atom-type embedding and
    vector features start at zero; three interaction blocks each send messages built from
    a per-atom MLP filtered by 20 sinc radial basis functions under a cosine cutoff
    (scalar, vector-gated and direction terms) aggregated with jax.ops.segment_sum, then an
    update mixing the vector channels by two linear maps (norm and scalar product feed an
    MLP gate); an atom-wise energy MLP with per-type reference energies is summed per
    molecule; forces are minus the gradient of the energy with respect to the positions;
    loss = energy MSE + 10 x force MSE (a gradient of a gradient); Adam with clipping."""
    G, NA, F, NRBF, RC, NT, NI = 8, 16, 64, 20, 5.0, 10, 3
    N = G * NA
    ii, jj = np.nonzero(~np.eye(NA, dtype=bool))
    SRC = (np.arange(G)[:, None] * NA + jj[None, :]).reshape(-1).astype(np.int32)
    DST = (np.arange(G)[:, None] * NA + ii[None, :]).reshape(-1).astype(np.int32)
    MOL = np.repeat(np.arange(G), NA).astype(np.int32)

    def energy(p, pos, z):
        rij = pos[SRC] - pos[DST]
        d = jnp.sqrt(jnp.sum(jnp.square(rij), -1) + 1e-9)
        u = rij / d[:, None]
        n = np.arange(1, NRBF + 1, dtype=np.float32)
        rbf = jnp.sin(n * jnp.pi * d[:, None] / RC) / d[:, None]
        fcut = jnp.where(d < RC, 0.5 * (jnp.cos(jnp.pi * d / RC) + 1.0), 0.0)
        s = p["emb"][z]
        v = jnp.zeros((N, 3, F))
        for q in p["inter"]:
            phi = jax.nn.silu(s @ q["m1"] + q["mb1"]) @ q["m2"] + q["mb2"]
            w = (rbf @ q["wr"] + q["wrb"]) * fcut[:, None]
            ds, dvv, dvs = jnp.split(phi[SRC] * w, 3, -1)
            dv = v[SRC] * dvv[:, None, :] + dvs[:, None, :] * u[:, :, None]
            s = s + jax.ops.segment_sum(ds, DST, N)
            v = v + jax.ops.segment_sum(dv, DST, N)
            uv, vv = v @ q["U"], v @ q["V"]
            vn = jnp.sqrt(jnp.sum(jnp.square(vv), 1) + 1e-8)
            a = jax.nn.silu(jnp.concatenate([s, vn], -1) @ q["u1"] + q["ub1"]) @ q["u2"] + q["ub2"]
            avv, asv, ass = jnp.split(a, 3, -1)
            v = v + avv[:, None, :] * uv
            s = s + asv * jnp.sum(uv * vv, 1) + ass
        e_atom = (jax.nn.silu(s @ p["o1"] + p["ob1"]) @ p["o2"])[:, 0] + p["ref"][z]
        return jax.ops.segment_sum(e_atom, MOL, G)

    def loss(p, pos, z, e_ref, f_ref):
        def total(x):
            e = energy(p, x, z)
            return jnp.sum(e), e
        (_, e), de = jax.value_and_grad(total, has_aux=True)(pos)
        le = jnp.mean(jnp.square(e - e_ref))
        lf = jnp.mean(jnp.square(-de - f_ref))
        return le + 10.0 * lf, (le, lf)

    def step(p, m, v, t, pos, z, e_ref, f_ref):
        (l, parts), g = jax.value_and_grad(loss, has_aux=True)(p, pos, z, e_ref, f_ref)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 10.0), t, lr=5e-4)
        return l, parts, p, m, v
    q = {"m1": S(F, F), "mb1": S(F), "m2": S(F, 3 * F), "mb2": S(3 * F), "wr": S(NRBF, 3 * F),
         "wrb": S(3 * F), "U": S(F, F), "V": S(F, F), "u1": S(2 * F, F), "ub1": S(F),
         "u2": S(F, 3 * F), "ub2": S(3 * F)}
    p = {"emb": S(NT, F), "inter": [dict(q) for _ in range(NI)], "o1": S(F, F // 2),
         "ob1": S(F // 2), "o2": S(F // 2, 1), "ref": S(NT)}
    return step, (p, p, p, S(), S(N, 3), S(N, dtype=I32), S(G), S(N, 3))


# ----------------------------------------------------------------------------- quantization


def bn_folded_conv_qat_per_channel_int8_ema_activation_ranges():
    """Quantisation-aware training with batch-norm folding (Jacob et al., the TF-Lite recipe)
    of a MobileNet-v1-style network on 32x32 images: every convolution (the 3x3 stem, and
    depthwise 3x3 plus pointwise 1x1 pairs at widths 64 / 128 / 128 / 256) is first run in
    float to get the batch mean and variance of its outputs, then the BN scale is folded
    into the weights, which are fake-quantised to int8 per output channel (symmetric,
    straight-through) and convolved again with the folded bias added; ReLU6 outputs are
    fake-quantised to uint8 with asymmetric ranges (scale and zero point) taken from
    exponential moving averages of the batch min / max, with a clipped straight-through
    gradient; float classifier; cross-entropy; SGD with momentum and cosine decay; BN and
    range EMAs returned."""

    def fq_weight(w):
        s = lax.stop_gradient(jnp.max(jnp.abs(w), tuple(range(w.ndim - 1))) / 127.0 + 1e-8)
        return w + lax.stop_gradient(jnp.clip(jnp.round(w / s), -127, 127) * s - w)

    def fq_act(x, rng):
        lo = jnp.minimum(rng[0], 0.0)
        hi = jnp.maximum(rng[1], lo + 1e-3)
        scale = (hi - lo) / 255.0
        zp = jnp.round(-lo / scale)
        xc = jnp.clip(x, lo, hi)
        xq = (jnp.clip(jnp.round(xc / scale) + zp, 0.0, 255.0) - zp) * scale
        return xc + lax.stop_gradient(xq - xc)

    def folded(q, x, stats, stride=1, groups=1):
        yf = _conv(x, q["w"], stride, groups=groups)
        mu, var = jnp.mean(yf, (0, 1, 2)), jnp.var(yf, (0, 1, 2))
        stats.append((mu, var))
        sig = jnp.sqrt(var + 1e-3)
        y = _conv(x, fq_weight(q["w"] * (q["g"] / sig)), stride, groups=groups)
        return y + (q["b"] - q["g"] * mu / sig)

    def act(x, rng, obs):
        x = jnp.clip(x, 0.0, 6.0)
        obs.append(lax.stop_gradient(jnp.stack([jnp.min(x), jnp.max(x)])))
        return fq_act(x, rng)

    def loss(p, ranges, img, labels):
        stats, obs, ri = [], [], 0
        x = act(folded(p["stem"], img, stats), ranges[ri], obs)
        for q, stride in zip(p["blocks"], (1, 2, 1, 2)):
            ri += 1
            x = act(folded(q["dw"], x, stats, stride, groups=x.shape[-1]), ranges[ri], obs)
            ri += 1
            x = act(folded(q["pw"], x, stats), ranges[ri], obs)
        logits = jnp.mean(x, (1, 2)) @ p["fc"] + p["fcb"]
        return _xent(logits, labels), (stats, obs)

    def step(p, mom, run, ranges, t, img, labels):
        (l, (stats, obs)), g = jax.value_and_grad(loss, has_aux=True)(p, ranges, img, labels)
        run = tmap(lambda r, s: 0.99 * r + 0.01 * s, run, lax.stop_gradient(stats))
        ranges = [0.99 * r + 0.01 * o for r, o in zip(ranges, obs)]
        lr = _cosine_lr(t, 0.05, 60000.0)
        mom = tmap(lambda b, g, w: 0.9 * b + g + 4e-5 * w, mom, g, p)
        p = tmap(lambda w, b: w - lr * b, p, mom)
        return l, p, mom, run, ranges

    def conv(k, ci, co):
        return {"w": S(k, k, ci, co), "g": S(co), "b": S(co)}
    blocks, ci = [], 32
    for co in (64, 128, 128, 256):
        blocks.append({"dw": conv(3, 1, ci), "pw": conv(1, ci, co)})
        ci = co
    p = {"stem": conv(3, 3, 32), "blocks": blocks, "fc": S(256, 10), "fcb": S(10)}
    widths = [32] + [c for ci_, co in zip((32, 64, 128, 128), (64, 128, 128, 256))
                     for c in (ci_, co)]
    run = [(S(c), S(c)) for c in widths]
    ranges = [S(2) for _ in widths]
    return step, (p, p, run, ranges, S(), S(32, 32, 32, 3), S(32, dtype=I32))


# ----------------------------------------------------------------------------- remat


def remat_scanned_vit_register_tokens_save_only_qkv_names_nested_mlp():
    """Vision Transformer with register tokens (Darcet et al.) on 32x32 images: 4x4 patches
    (64 tokens) plus 16 learned registers, six pre-LN layers with LayerScale
    stacked and run by lax.scan over a jax.checkpoint'ed layer whose policy is
    save_only_these_names("qkv", "attn_out") -- the fused q / k / v projection and the
    attention output projection are tagged with checkpoint_name and kept, everything else
    (softmax probabilities, LayerNorms) is recomputed -- while the GELU MLP inside each
    layer is a nested jax.checkpoint with dots_with_no_batch_dims_saveable; the patch tokens
    are average-pooled for the head, the registers are discarded; label-smoothed
    cross-entropy; AdamW with warmup-cosine and global-norm clipping."""
    PS, D, H, L, NREG, NC = 4, 128, 4, 6, 16, 100

    def mlp(q, h):
        return jax.nn.gelu(h @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]
    mlp_r = jax.checkpoint(mlp, policy=CP.dots_with_no_batch_dims_saveable)

    def layer(x, q):
        b, t, d = x.shape
        h = _ln(x, q["g1"], q["b1"])
        qkv = checkpoint_name(h @ q["qkv"] + q["qkvb"], "qkv")
        qq, kk, vv = (a.reshape(b, t, H, d // H) for a in jnp.split(qkv, 3, -1))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(d // H)
        a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d)
        a = checkpoint_name(a @ q["o"] + q["ob"], "attn_out")
        x = x + q["ls1"] * a
        x = x + q["ls2"] * mlp_r(q, _ln(x, q["g2"], q["b2"]))
        return x, None
    layer_r = jax.checkpoint(layer, policy=CP.save_only_these_names("qkv", "attn_out"))

    def loss(p, img, labels):
        B = img.shape[0]
        g = img.shape[1] // PS
        x = img.reshape(B, g, PS, g, PS, 3).transpose(0, 1, 3, 2, 4, 5).reshape(B, g * g, -1)
        x = x @ p["patch"] + p["pb"] + p["pos"]
        reg = jnp.broadcast_to(p["reg"], (B, NREG, D))
        x = jnp.concatenate([reg, x], 1)
        x, _ = lax.scan(layer_r, x, p["stack"])
        pooled = jnp.mean(x[:, NREG:], 1)
        logits = _ln(pooled, p["gf"], p["bf"]) @ p["head"] + p["hb"]
        return _smooth_xent(logits, labels)

    def step(p, m, v, t, img, labels):
        l, g = jax.value_and_grad(loss)(p, img, labels)
        lr = _cosine_lr(t, 1e-3, 60000.0, warm=2000.0)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, wd=0.05)
        return l, p, m, v
    stack = {"g1": S(L, D), "b1": S(L, D), "qkv": S(L, D, 3 * D), "qkvb": S(L, 3 * D),
             "o": S(L, D, D), "ob": S(L, D), "ls1": S(L, D), "g2": S(L, D), "b2": S(L, D),
             "f1": S(L, D, 4 * D), "fb1": S(L, 4 * D), "f2": S(L, 4 * D, D), "fb2": S(L, D),
             "ls2": S(L, D)}
    p = {"patch": S(PS * PS * 3, D), "pb": S(D), "pos": S(64, D), "reg": S(NREG, D),
         "stack": stack, "gf": S(D), "bf": S(D), "head": S(D, NC), "hb": S(NC)}
    return step, (p, p, p, S(), S(16, 32, 32, 3), S(16, dtype=I32))


def remat_memory_efficient_densenet_shared_concat_bn_relu_recompute():
    """Memory-efficient DenseNet-BC (Pleiss et al.) on 32x32 images: growth rate 12, three dense
    blocks of four bottleneck layers with 0.5-compression transitions (BN-ReLU-1x1 conv and
    2x2 average pooling); the concatenate-BN-ReLU-1x1-conv bottleneck of every layer is a
    jax.checkpoint with nothing_saveable (so the growing concatenation and its normalised
    copy are recomputed in the backward pass instead of stored), nested inside a per-layer
    jax.checkpoint with save_only_these_names("new_features") that keeps only the 12 new
    feature maps of each layer; batch-norm statistics leave the checkpoints as outputs;
    global pooling and a linear head; cross-entropy; SGD with Nesterov momentum and weight
    decay and a step schedule; BN batch statistics returned."""
    K, NLAYER = 12, 4

    def bottleneck(q, feats):
        h, st = _bn(jnp.concatenate(feats, -1), q["g1"], q["b1"], (0, 1, 2))
        return _conv(jax.nn.relu(h), q["w1"]), st
    bottleneck_r = jax.checkpoint(bottleneck, policy=CP.nothing_saveable)

    def dense_layer(q, feats):
        h, st1 = bottleneck_r(q, feats)
        h, st2 = _bn(h, q["g2"], q["b2"], (0, 1, 2))
        new = checkpoint_name(_conv(jax.nn.relu(h), q["w2"]), "new_features")
        return new, (st1, st2)
    dense_layer_r = jax.checkpoint(dense_layer, policy=CP.save_only_these_names("new_features"))

    def loss(p, img, labels):
        stats = []
        x = _conv(img, p["stem"])
        for blk in p["blocks"]:
            feats = [x]
            for q in blk["layers"]:
                new, st = dense_layer_r(q, tuple(feats))
                stats.extend(st)
                feats.append(new)
            x = jnp.concatenate(feats, -1)
            if "trans" in blk:
                tq = blk["trans"]
                h, st = _bn(x, tq["g"], tq["b"], (0, 1, 2))
                stats.append(st)
                x = _conv(jax.nn.relu(h), tq["w"])
                x = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
        h, st = _bn(x, p["g"], p["b"], (0, 1, 2))
        stats.append(st)
        logits = jnp.mean(jax.nn.relu(h), (1, 2)) @ p["fc"] + p["fcb"]
        return _xent(logits, labels), stats

    def step(p, mom, t, img, labels):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels)
        lr = 0.1 * 0.1 ** jnp.floor(t / 30000.0)
        mom = tmap(lambda b, g, w: 0.9 * b + g + 1e-4 * w, mom, g, p)
        p = tmap(lambda w, g, b, ww: w - lr * (g + 1e-4 * ww + 0.9 * b), p, g, mom, p)
        return l, stats, p, mom
    blocks, c = [], 24
    for bi in range(3):
        layers = []
        for _ in range(NLAYER):
            layers.append({"g1": S(c), "b1": S(c), "w1": S(1, 1, c, 4 * K), "g2": S(4 * K),
                           "b2": S(4 * K), "w2": S(3, 3, 4 * K, K)})
            c += K
        blk = {"layers": layers}
        if bi < 2:
            blk["trans"] = {"g": S(c), "b": S(c), "w": S(1, 1, c, c // 2)}
            c //= 2
        blocks.append(blk)
    p = {"stem": S(3, 3, 3, 24), "blocks": blocks, "g": S(c), "b": S(c), "fc": S(c, 10),
         "fcb": S(10)}
    return step, (p, p, S(), S(32, 32, 32, 3), S(32, dtype=I32))


# ----------------------------------------------------------------------------- custom_vjp


_FA_BLOCK = 16


def _fa_blocks(k):
    b, h, t, d = k.shape
    return jnp.moveaxis(k.reshape(b, h, t // _FA_BLOCK, _FA_BLOCK, d), 2, 0)


def _fa_unblock(kb):
    nb, b, h, bk, d = kb.shape
    return jnp.moveaxis(kb, 0, 2).reshape(b, h, nb * bk, d)


def _fa_scores(q, kb, j):
    t = q.shape[2]
    kpos = j * _FA_BLOCK + jnp.arange(_FA_BLOCK)
    s = jnp.einsum("bhqd,bhkd->bhqk", q, kb) / math.sqrt(q.shape[-1])
    return jnp.where(jnp.arange(t)[:, None] >= kpos[None, :], s, -1e30)


def _fa_forward(q, k, v):
    b, h, t, d = q.shape

    def body(carry, inp):
        m, l, acc = carry
        j, kb, vb = inp
        s = _fa_scores(q, kb, j)
        m_new = jnp.maximum(m, jnp.max(s, -1))
        pe = jnp.exp(s - m_new[..., None])
        corr = jnp.exp(m - m_new)
        l = l * corr + jnp.sum(pe, -1)
        acc = acc * corr[..., None] + jnp.einsum("bhqk,bhkd->bhqd", pe, vb)
        return (m_new, l, acc), None
    init = (jnp.full((b, h, t), -1e30), jnp.zeros((b, h, t)), jnp.zeros_like(q))
    (m, l, acc), _ = lax.scan(body, init, (jnp.arange(t // _FA_BLOCK), _fa_blocks(k),
                                           _fa_blocks(v)))
    return acc / l[..., None], m + jnp.log(l)


@jax.custom_vjp
def _flash_attention(q, k, v):
    return _fa_forward(q, k, v)[0]


def _flash_attention_fwd(q, k, v):
    o, lse = _fa_forward(q, k, v)
    return o, (q, k, v, o, lse)


def _flash_attention_bwd(res, do):
    q, k, v, o, lse = res
    delta = jnp.sum(do * o, -1)
    scale = 1.0 / math.sqrt(q.shape[-1])

    def body(dq, inp):
        j, kb, vb = inp
        pm = jnp.exp(_fa_scores(q, kb, j) - lse[..., None])
        dvb = jnp.einsum("bhqk,bhqd->bhkd", pm, do)
        dp = jnp.einsum("bhqd,bhkd->bhqk", do, vb)
        ds = pm * (dp - delta[..., None]) * scale
        dq = dq + jnp.einsum("bhqk,bhkd->bhqd", ds, kb)
        dkb = jnp.einsum("bhqk,bhqd->bhkd", ds, q)
        return dq, (dkb, dvb)
    t = q.shape[2]
    dq, (dk, dv) = lax.scan(body, jnp.zeros_like(q), (jnp.arange(t // _FA_BLOCK), _fa_blocks(k),
                                                      _fa_blocks(v)))
    return dq, _fa_unblock(dk), _fa_unblock(dv)


_flash_attention.defvjp(_flash_attention_fwd, _flash_attention_bwd)


def custom_vjp_flash_style_attention_saved_logsumexp_recompute_backward_lm():
    """Decoder language model whose causal attention is a jax.custom_vjp written in the
    FlashAttention style: the forward pass is a lax.scan over key blocks of 16 with an
    online softmax (running max, running normaliser, rescaled accumulator) and saves only
    q, k, v, the output and the per-row log-sum-exp; the hand-written backward is a second
    lax.scan over key blocks that recomputes the block probabilities from the saved
    log-sum-exp and accumulates dq while emitting per-block dk and dv (delta = rowsum(dO * O)
    trick); two pre-RMSNorm layers with rotary embeddings and a SwiGLU MLP, tied embeddings;
    cross-entropy; AdamW with warmup-cosine and global-norm clipping."""
    V, D, H, T, F, NL = 512, 128, 4, 64, 256, 2

    def attn(q, x):
        b, t, d = x.shape
        qq = _rope((x @ q["wq"]).reshape(b, t, H, d // H)).transpose(0, 2, 1, 3)
        kk = _rope((x @ q["wk"]).reshape(b, t, H, d // H)).transpose(0, 2, 1, 3)
        vv = (x @ q["wv"]).reshape(b, t, H, d // H).transpose(0, 2, 1, 3)
        o = _flash_attention(qq, kk, vv)
        return o.transpose(0, 2, 1, 3).reshape(b, t, d) @ q["wo"]

    def loss(p, tok, tgt):
        x = p["emb"][tok]
        for q in p["layers"]:
            x = x + attn(q, _rms(x, q["n1"]))
            h = _rms(x, q["n2"])
            x = x + (jax.nn.silu(h @ q["w1"]) * (h @ q["w3"])) @ q["w2"]
        return _xent(_rms(x, p["nf"]) @ p["emb"].T, tgt)

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        lr = _cosine_lr(t, 6e-4, 60000.0, warm=600.0)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.95, wd=0.1)
        return l, p, m, v
    q = {"n1": S(D), "wq": S(D, D), "wk": S(D, D), "wv": S(D, D), "wo": S(D, D), "n2": S(D),
         "w1": S(D, F), "w3": S(D, F), "w2": S(F, D)}
    p = {"emb": S(V, D), "layers": [dict(q) for _ in range(NL)], "nf": S(D)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T, dtype=I32))


# ----------------------------------------------------------------------------- control


def raft_iterative_flow_refinement_fori_correlation_lookup_gru():
    """RAFT-style optical flow (Teed & Deng) on 32x32 frame pairs: a shared group-normed
    feature encoder (two stride-2 convs and a 1x1) gives 8x8x64 features of both frames and
    a context encoder gives the initial GRU state (tanh) and context (ReLU); the all-pairs
    correlation volume [b, 8, 8, 8, 8] and its 2x2-average-pooled level form a two-level
    pyramid; six refinement iterations run in a lax.fori_loop: the coordinates are detached,
    a radius-2 window (5x5 points) is bilinearly sampled from every level (corner gathers
    with zero padding), a motion encoder mixes the correlation features and the current
    flow, a ConvGRU updates the hidden state and a flow head adds a delta; the sequence
    loss sums gamma-weighted (0.8) L1 errors of every iterate against the 1/4-resolution
    ground truth inside the loop carry; AdamW with a one-cycle-like schedule and clipping;
    the final end-point error is returned."""
    ITERS, R, C, HD, CD, GAMMA, HW = 6, 2, 64, 48, 32, 0.8, 8
    ys, xs = np.meshgrid(np.arange(HW), np.arange(HW), indexing="ij")
    GRID = np.stack([xs, ys], -1).astype(np.float32)
    dy, dx = np.meshgrid(np.arange(-R, R + 1), np.arange(-R, R + 1), indexing="ij")
    DELTA = np.stack([dx, dy], -1).reshape(1, -1, 2).astype(np.float32)

    def encode(q, x):
        x = jax.nn.relu(_gn(_conv(x, q["c1"], 2) + q["b1"], q["g1"], q["n1"]))
        x = jax.nn.relu(_gn(_conv(x, q["c2"], 2) + q["b2"], q["g2"], q["n2"]))
        return _conv(x, q["c3"]) + q["b3"]

    def bilinear(img, pts):
        n, h, w = img.shape
        flat = img.reshape(n, h * w)
        x, y = pts[..., 0], pts[..., 1]
        x0, y0 = jnp.floor(x), jnp.floor(y)
        wx, wy = x - x0, y - y0

        def tap(xi, yi):
            valid = (xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)
            idx = (jnp.clip(yi, 0, h - 1) * w + jnp.clip(xi, 0, w - 1)).astype(I32)
            return jnp.where(valid, jnp.take_along_axis(flat, idx, 1), 0.0)
        return (tap(x0, y0) * (1 - wx) * (1 - wy) + tap(x0 + 1, y0) * wx * (1 - wy)
                + tap(x0, y0 + 1) * (1 - wx) * wy + tap(x0 + 1, y0 + 1) * wx * wy)

    def update(q, net, inp, corr_f, flow):
        c = jax.nn.relu(_conv(corr_f, q["c1"]) + q["cb1"])
        f = jax.nn.relu(_conv(flow, q["f1"]) + q["fb1"])
        mo = jax.nn.relu(_conv(jnp.concatenate([c, f], -1), q["m"]) + q["mb"])
        x = jnp.concatenate([inp, mo, flow], -1)
        hx = jnp.concatenate([net, x], -1)
        z = jax.nn.sigmoid(_conv(hx, q["z"]) + q["zb"])
        r = jax.nn.sigmoid(_conv(hx, q["r"]) + q["rb"])
        qh = jnp.tanh(_conv(jnp.concatenate([r * net, x], -1), q["q"]) + q["qb"])
        net = (1 - z) * net + z * qh
        return net, _conv(jax.nn.relu(_conv(net, q["h1"]) + q["hb1"]), q["h2"])

    def loss(p, img1, img2, gt):
        B = img1.shape[0]
        f = encode(p["fnet"], jnp.concatenate([img1, img2], 0))
        f1, f2 = f[:B], f[B:]
        ctx = encode(p["cnet"], img1)
        net0, inp = jnp.tanh(ctx[..., :HD]), jax.nn.relu(ctx[..., HD:])
        corr = jnp.einsum("bhwc,buvc->bhwuv", f1, f2) / math.sqrt(C)
        c0 = corr.reshape(B * HW * HW, HW, HW)
        c1 = c0.reshape(B * HW * HW, HW // 2, 2, HW // 2, 2).mean((2, 4))
        pyramid = [c0, c1]

        def lookup(coords):
            out = []
            for lvl, cmap in enumerate(pyramid):
                pts = coords.reshape(B * HW * HW, 1, 2) / 2 ** lvl + DELTA
                out.append(bilinear(cmap, pts))
            return jnp.concatenate(out, -1).reshape(B, HW, HW, -1)

        def body(i, carry):
            net, coords, acc = carry
            coords = lax.stop_gradient(coords)
            flow = coords - GRID
            net, delta = update(p["upd"], net, inp, lookup(coords), flow)
            coords = coords + delta
            w = jnp.power(GAMMA, (ITERS - 1 - i).astype(F32))
            return net, coords, acc + w * jnp.mean(jnp.abs(coords - GRID - gt))
        coords0 = jnp.broadcast_to(GRID, (B, HW, HW, 2))
        _, coords, acc = lax.fori_loop(0, ITERS, body, (net0, coords0, jnp.zeros((), F32)))
        epe = jnp.mean(jnp.sqrt(jnp.sum(jnp.square(coords - GRID - gt), -1)))
        return acc, epe

    def step(p, m, v, t, img1, img2, gt):
        (l, epe), g = jax.value_and_grad(loss, has_aux=True)(p, img1, img2, gt)
        lr = 4e-4 * jnp.minimum((t + 1.0) / 500.0, jnp.maximum(0.0, 1.0 - t / 100000.0))
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, wd=1e-5)
        return l, epe, p, m, v

    def enc_p(co):
        return {"c1": S(3, 3, 3, 32), "b1": S(32), "g1": S(32), "n1": S(32),
                "c2": S(3, 3, 32, 64), "b2": S(64), "g2": S(64), "n2": S(64),
                "c3": S(1, 1, 64, co), "b3": S(co)}
    NCF = 2 * (2 * R + 1) ** 2
    XD = CD + 62 + 2
    upd = {"c1": S(1, 1, NCF, 64), "cb1": S(64), "f1": S(3, 3, 2, 32), "fb1": S(32),
           "m": S(3, 3, 96, 62), "mb": S(62), "z": S(3, 3, HD + XD, HD), "zb": S(HD),
           "r": S(3, 3, HD + XD, HD), "rb": S(HD), "q": S(3, 3, HD + XD, HD),
           "qb": S(HD), "h1": S(3, 3, HD, 64), "hb1": S(64), "h2": S(3, 3, 64, 2)}
    p = {"fnet": enc_p(C), "cnet": enc_p(HD + CD), "upd": upd}
    B = 8
    return step, (p, p, p, S(), S(B, 32, 32, 3), S(B, 32, 32, 3), S(B, HW, HW, 2))


def mean_teacher_consistency_switch_rampup_phases_cond_ema_teacher():
    """Mean Teacher semi-supervised image classifier (Tarvainen & Valpola) on 32x32 images: a
    conv net (three stages of two 3x3 conv-BN-LeakyReLU(0.1) layers with max pooling,
    widths 32 / 64 / 128, global pooling, linear head) is trained on 16 labelled and 32
    unlabelled images; student and teacher see the unlabelled batch under different
    passed-in additive noise and the consistency cost is the squared distance of their
    softmax outputs; its weight follows a three-phase schedule chosen by lax.switch on the
    step (sigmoid-shaped ramp-up, constant, cosine ramp-down); Adam with a learning-rate
    ramp-up; the teacher is updated by lax.cond -- a plain copy of the student during the
    first 1000 steps, an EMA with decay 0.999 afterwards."""
    RUP, RDOWN, TOTAL, EMA_START, MAXW = 5000.0, 40000.0, 50000.0, 1000.0, 10.0

    def model(p, x):
        for st in p["stages"]:
            for q in st:
                h, _ = _bn(_conv(x, q["w"]) + q["cb"], q["g"], q["b"], (0, 1, 2))
                x = jax.nn.leaky_relu(h, 0.1)
            x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return jnp.mean(x, (1, 2)) @ p["fc"] + p["fcb"]

    def cons_weight(t):
        phase = (t >= RUP).astype(I32) + (t >= RDOWN).astype(I32)
        return lax.switch(phase, [
            lambda t: MAXW * jnp.exp(-5.0 * jnp.square(1.0 - t / RUP)),
            lambda t: jnp.full((), MAXW, F32),
            lambda t: MAXW * 0.5 * (1.0 + jnp.cos(jnp.pi * (t - RDOWN) / (TOTAL - RDOWN)))], t)

    def loss(p, tp, xl, yl, xu, ns, nt, w):
        ce = _xent(model(p, xl), yl)
        su = jax.nn.softmax(model(p, xu + ns), -1)
        tu = lax.stop_gradient(jax.nn.softmax(model(tp, xu + nt), -1))
        cons = jnp.mean(jnp.sum(jnp.square(su - tu), -1))
        return ce + w * cons, (ce, cons)

    def step(p, m, v, tp, t, xl, yl, xu, ns, nt):
        w = cons_weight(t)
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, tp, xl, yl, xu, ns, nt, w)
        lr = 3e-3 * jnp.exp(-5.0 * jnp.square(1.0 - jnp.minimum(t, RUP) / RUP))
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr, b2=0.99)
        tp = lax.cond(t < EMA_START, lambda tp, p: p,
                      lambda tp, p: tmap(lambda a, b: 0.999 * a + 0.001 * b, tp, p), tp, p)
        return l, aux, w, p, m, v, tp
    stages, ci = [], 3
    for c in (32, 64, 128):
        st = []
        for _ in range(2):
            st.append({"w": S(3, 3, ci, c), "cb": S(c), "g": S(c), "b": S(c)})
            ci = c
        stages.append(st)
    p = {"stages": stages, "fc": S(128, 10), "fcb": S(10)}
    return step, (p, p, p, p, S(), S(16, 32, 32, 3), S(16, dtype=I32), S(32, 32, 32, 3),
                  S(32, 32, 32, 3), S(32, 32, 32, 3))


# ----------------------------------------------------------------------------- sort


def sortpool_dgcnn_graph_classifier_last_channel_ordering_conv1d():
    """DGCNN with SortPooling (Zhang et al. 2018) for binary graph classification on a batch of
    32 padded graphs of up to 32 nodes (dense adjacency and node masks): four graph
    convolutions tanh(D^-1 (A + I) Z W) of widths 32 / 32 / 32 / 1 are concatenated into
    97-channel node descriptors; SortPooling orders the nodes of every graph by the last
    channel, breaking ties by the previous one, with a two-key variadic lax.sort carrying
    the node indices (padding nodes sorted last), keeps the top 20 with take_along_axis
    and flattens them; a 1-D convolution with kernel and stride 97 (one step per node),
    max-pooling, a width-5 convolution, a dense layer with dropout (passed-in raw key) and
    a softmax head; cross-entropy; Adam."""
    G, NMAX, FIN, KS = 32, 32, 16, 20
    CH = (32, 32, 32, 1)
    TOT = sum(CH)

    def loss(p, x, adj, nmask, labels, key):
        nm = nmask.astype(F32)
        a = (adj + jnp.eye(NMAX)) * nm[:, :, None] * nm[:, None, :]
        dinv = 1.0 / jnp.maximum(jnp.sum(a, -1), 1.0)
        z, outs = x, []
        for w in p["gc"]:
            z = jnp.tanh(dinv[..., None] * (a @ (z @ w)))
            outs.append(z)
        h = jnp.concatenate(outs, -1)
        k1 = lax.stop_gradient(jnp.where(nmask, h[..., -1], -2.0))
        k2 = lax.stop_gradient(jnp.where(nmask, h[..., -2], -2.0))
        iota = jnp.broadcast_to(jnp.arange(NMAX, dtype=I32), (G, NMAX))
        _, _, order = lax.sort((-k1, -k2, iota), dimension=1, num_keys=2)
        top = order[:, :KS]
        hs = jnp.take_along_axis(h, top[..., None], 1) * \
            jnp.take_along_axis(nm, top, 1)[..., None]
        c = hs.reshape(G, KS * TOT, 1)
        c = jax.nn.relu(lax.conv_general_dilated(c, p["c1"], (TOT,), "VALID",
                                                 dimension_numbers=("NWC", "WIO", "NWC"))
                        + p["cb1"])
        c = lax.reduce_window(c, -jnp.inf, lax.max, (1, 2, 1), (1, 2, 1), "VALID")
        c = jax.nn.relu(lax.conv_general_dilated(c, p["c2"], (1,), "VALID",
                                                 dimension_numbers=("NWC", "WIO", "NWC"))
                        + p["cb2"])
        d = jax.nn.relu(c.reshape(G, -1) @ p["d1"] + p["db1"])
        d = jnp.where(jax.random.bernoulli(key, 0.5, d.shape), d * 2.0, 0.0)
        logits = d @ p["d2"] + p["db2"]
        acc = jnp.mean((jnp.argmax(logits, -1) == labels).astype(F32))
        return _xent(logits, labels), acc

    def step(p, m, v, t, x, adj, nmask, labels, key):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, x, adj, nmask, labels, key)
        p, m, v = _adam_tree(p, m, v, g, t, lr=1e-4)
        return l, acc, p, m, v
    gc, ci = [], FIN
    for c in CH:
        gc.append(S(ci, c))
        ci = c
    p = {"gc": gc, "c1": S(TOT, 1, 16), "cb1": S(16), "c2": S(5, 16, 32), "cb2": S(32),
         "d1": S((KS // 2 - 4) * 32, 128), "db1": S(128), "d2": S(128, 2), "db2": S(2)}
    return step, (p, p, p, S(), S(G, NMAX, FIN), S(G, NMAX, NMAX), S(G, NMAX, dtype=jnp.bool_),
                  S(G, dtype=I32), S(2, dtype=U32))


# ----------------------------------------------------------------------------- fft


def spectral_burgers_solver_learned_closure_unrolled_rfft_derivatives():
    """Learned subgrid closure for a pseudo-spectral 1-D viscous Burgers solver on a 64-point
    periodic grid (differentiable physics): each solver step takes jnp.fft.rfft of the
    state, forms u_x and u_xx by multiplying with i k and -k^2 and irfft, evaluates the
    2/3-dealiased nonlinear flux -1/2 d(u^2)/dx in Fourier space, adds a correction
    predicted by a circular-padded 1-D CNN (three width-5 convolutions, GELU) from
    [u, u_x, u_xx], and advances with a semi-implicit (implicit-viscosity) Euler step in
    Fourier space; 16 steps are unrolled with lax.scan and compared with a downsampled
    high-resolution reference trajectory by a discounted MSE plus a log energy-spectrum
    penalty; Adam with step decay."""
    N, STEPS, NU, DT = 64, 16, 0.01, 0.01
    K = np.fft.rfftfreq(N, d=1.0 / N).astype(np.float32)
    DEALIAS = (K < (2.0 / 3.0) * (N / 2)).astype(np.float32)
    DISC = (0.97 ** np.arange(STEPS)).astype(np.float32)

    def conv_wrap(x, w, b):
        pad = (w.shape[0] - 1) // 2
        x = jnp.pad(x, ((0, 0), (pad, pad), (0, 0)), mode="wrap")
        return lax.conv_general_dilated(x, w, (1,), "VALID",
                                        dimension_numbers=("NWC", "WIO", "NWC")) + b

    def closure(q, feats):
        h = jax.nn.gelu(conv_wrap(feats, q["w1"], q["b1"]))
        h = jax.nn.gelu(conv_wrap(h, q["w2"], q["b2"]))
        return conv_wrap(h, q["w3"], q["b3"])[..., 0]

    def solver_step(q, u):
        uh = jnp.fft.rfft(u)
        ux = jnp.fft.irfft(1j * K * uh, n=N)
        uxx = jnp.fft.irfft(-(K ** 2) * uh, n=N)
        nl = -0.5j * K * jnp.fft.rfft(u * u) * DEALIAS
        corr = closure(q, jnp.stack([u, ux, uxx], -1))
        uh = (uh + DT * (nl + jnp.fft.rfft(corr))) / (1.0 + NU * K ** 2 * DT)
        return jnp.fft.irfft(uh, n=N)

    def logspec(u):
        f = jnp.fft.rfft(u)
        return 0.5 * jnp.log(jnp.square(f.real) + jnp.square(f.imag) + 1e-8)

    def loss(p, u0, ref):
        def body(u, r):
            u = solver_step(p, u)
            err = jnp.mean(jnp.square(u - r))
            spec = jnp.mean(jnp.square(logspec(u) - logspec(r)))
            return u, (err, spec)
        _, (errs, specs) = lax.scan(body, u0, jnp.swapaxes(ref, 0, 1))
        mse = jnp.sum(DISC * errs) / DISC.sum()
        return mse + 0.01 * jnp.mean(specs), errs[-1]

    def step(p, m, v, t, u0, ref):
        (l, last), g = jax.value_and_grad(loss, has_aux=True)(p, u0, ref)
        lr = 1e-3 * 0.5 ** jnp.floor(t / 5000.0)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr)
        return l, last, p, m, v
    p = {"w1": S(5, 3, 32), "b1": S(32), "w2": S(5, 32, 32), "b2": S(32), "w3": S(5, 32, 1),
         "b3": S(1)}
    B = 32
    return step, (p, p, p, S(), S(B, N), S(B, STEPS, N))


# ----------------------------------------------------------------------------- linalg


def learnable_triangulation_soft_argmax_heatmaps_dlt_svd_pose3d():
    """Learnable algebraic triangulation for multi-view 3-D human pose (Iskakov et al.): a
    shared CNN backbone maps each of 4 calibrated 32x32 views to 17 joint heatmaps at
    16x16 and per-joint confidences (global pooling, sigmoid); a soft-argmax with a learned
    inverse temperature gives 2-D joint locations in image pixels; for every joint the
    confidence-weighted direct-linear-transform system (two rows per view, x P_3 - P_1 and
    y P_3 - P_2, from the passed-in 3x4 projection matrices) is solved by
    jnp.linalg.svd -- the right singular vector of the smallest singular value, then
    dehomogenised; L1 loss on the 3-D joints; Adam with global-norm clipping; the mean
    per-joint position error is returned."""
    V, J, IMG, HM = 4, 17, 32, 16
    ys, xs = np.meshgrid(np.arange(HM), np.arange(HM), indexing="ij")
    COORD = (np.stack([xs, ys], -1).reshape(HM * HM, 2).astype(np.float32) + 0.5) * \
        (IMG / HM) - 0.5

    def backbone(q, x):
        h = jax.nn.relu(_conv(x, q["c1"]) + q["b1"])
        h = jax.nn.relu(_conv(h, q["c2"], 2) + q["b2"])
        h = jax.nn.relu(_conv(h, q["c3"]) + q["b3"])
        hm = _conv(h, q["hm"]) + q["hmb"]
        conf = jax.nn.sigmoid(jnp.mean(h, (1, 2)) @ q["cf"] + q["cfb"])
        return hm, conf

    def loss(p, imgs, proj, gt):
        B = imgs.shape[0]
        hm, conf = backbone(p, imgs.reshape(B * V, IMG, IMG, 3))
        hm = hm.reshape(B, V, HM * HM, J) * jnp.exp(p["log_beta"])
        prob = jax.nn.softmax(hm, 2)
        uv = jnp.einsum("bvnj,nc->bvjc", prob, COORD)
        w = conf.reshape(B, V, J)
        ax = uv[..., 0:1] * proj[:, :, None, 2, :] - proj[:, :, None, 0, :]
        ay = uv[..., 1:2] * proj[:, :, None, 2, :] - proj[:, :, None, 1, :]
        a = jnp.stack([ax, ay], 2) * w[:, :, None, :, None]
        a = a.transpose(0, 3, 1, 2, 4).reshape(B, J, 2 * V, 4)
        _, _, vt = jnp.linalg.svd(a, full_matrices=False)
        xh = vt[..., -1, :]
        den = xh[..., 3:4]
        den = jnp.where(jnp.abs(den) < 1e-6, 1e-6, den)
        x3 = xh[..., :3] / den
        mpjpe = jnp.mean(jnp.sqrt(jnp.sum(jnp.square(x3 - gt), -1)))
        return jnp.mean(jnp.abs(x3 - gt)), mpjpe

    def step(p, m, v, t, imgs, proj, gt):
        (l, mpjpe), g = jax.value_and_grad(loss, has_aux=True)(p, imgs, proj, gt)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=1e-4)
        return l, mpjpe, p, m, v
    p = {"c1": S(3, 3, 3, 32), "b1": S(32), "c2": S(3, 3, 32, 64), "b2": S(64),
         "c3": S(3, 3, 64, 64), "b3": S(64), "hm": S(1, 1, 64, J), "hmb": S(J),
         "cf": S(64, J), "cfb": S(J), "log_beta": S()}
    B = 8
    return step, (p, p, p, S(), S(B, V, IMG, IMG, 3), S(B, V, 3, 4), S(B, J, 3))


# ----------------------------------------------------------------------------- scatter/gather


def deformable_detr_multiscale_deformable_attention_bilinear_sampling_encoder():
    """Deformable DETR (Zhu et al.) detector head on 32x32 images: a small CNN gives feature
    levels at 8x8 and 4x4 (80 tokens with sine positions and level embeddings); one encoder
    layer and one decoder layer use multi-scale deformable attention -- per query, head,
    level and point (4 heads x 2 levels x 4 points) sampling offsets and softmax attention
    weights are predicted by linear layers, added to the query's reference point, and the
    per-level value maps are bilinearly sampled at those locations through flattened corner
    indices (take_along_axis gathers with zero padding outside the map, scatter-adds in the
    backward pass); 16 decoder queries with learned reference points, self-attention and
    FFNs; sigmoid focal classification over 5 classes and L1 box regression against
    pre-matched targets; AdamW with clipping at 0.1."""
    D, H, NP, NQ, NCLS, F = 64, 4, 4, 16, 5, 128
    DH = D // H
    SHAPES = ((8, 8), (4, 4))
    NLV = len(SHAPES)
    STARTS = (0, 64)
    NTOK = 80
    refs = []
    for h, w in SHAPES:
        yy, xx = np.meshgrid((np.arange(h) + 0.5) / h, (np.arange(w) + 0.5) / w, indexing="ij")
        refs.append(np.stack([xx, yy], -1).reshape(-1, 2))
    REF_ENC = np.concatenate(refs).astype(np.float32)
    POS = np.concatenate([_sinusoid(h * w, D) for h, w in SHAPES])
    NORM = np.array([[w, h] for h, w in SHAPES], np.float32)

    def sample(value, loc):
        B, Q = loc.shape[:2]
        outs = []
        for lv, (hl, wl) in enumerate(SHAPES):
            v = value[:, STARTS[lv]:STARTS[lv] + hl * wl].transpose(0, 2, 1, 3)
            pts = loc[:, :, :, lv].transpose(0, 2, 1, 3, 4).reshape(B, H, Q * NP, 2)
            x = pts[..., 0] * wl - 0.5
            y = pts[..., 1] * hl - 0.5
            x0, y0 = jnp.floor(x), jnp.floor(y)
            wx, wy = x - x0, y - y0

            def tap(xi, yi):
                ok = (xi >= 0) & (xi <= wl - 1) & (yi >= 0) & (yi <= hl - 1)
                idx = (jnp.clip(yi, 0, hl - 1) * wl + jnp.clip(xi, 0, wl - 1)).astype(I32)
                return jnp.take_along_axis(v, idx[..., None], 2) * ok[..., None]
            s = (tap(x0, y0) * ((1 - wx) * (1 - wy))[..., None]
                 + tap(x0 + 1, y0) * (wx * (1 - wy))[..., None]
                 + tap(x0, y0 + 1) * ((1 - wx) * wy)[..., None]
                 + tap(x0 + 1, y0 + 1) * (wx * wy)[..., None])
            outs.append(s.reshape(B, H, Q, NP, DH))
        return jnp.stack(outs, 3)

    def msda(q, query, ref, src):
        B, Q, _ = query.shape
        value = (src @ q["wv"] + q["bv"]).reshape(B, NTOK, H, DH)
        off = (query @ q["woff"] + q["boff"]).reshape(B, Q, H, NLV, NP, 2)
        aw = jax.nn.softmax((query @ q["waw"] + q["baw"]).reshape(B, Q, H, NLV * NP), -1)
        aw = aw.reshape(B, Q, H, NLV, NP)
        loc = ref[:, :, None, None, None, :] + off / NORM[None, None, None, :, None, :]
        samp = sample(value, loc)
        out = jnp.einsum("bqhlp,bhqlpd->bqhd", aw, samp).reshape(B, Q, D)
        return out @ q["wo"] + q["bo"]

    def ffn(q, x):
        return jax.nn.relu(x @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]

    def loss(p, img, labels, boxes):
        B = img.shape[0]
        h = jax.nn.relu(_conv(img, p["c1"], 2) + p["cb1"])
        h = jax.nn.relu(_conv(h, p["c2"], 2) + p["cb2"])
        l0 = h @ p["in0"]
        l1 = jax.nn.relu(_conv(h, p["c3"], 2) + p["cb3"]) @ p["in1"]
        src = jnp.concatenate([l0.reshape(B, -1, D), l1.reshape(B, -1, D)], 1)
        pos = POS + jnp.concatenate([jnp.broadcast_to(p["lvl"][i], (hl * wl, D))
                                     for i, (hl, wl) in enumerate(SHAPES)])
        e = p["enc"]
        ref = jnp.broadcast_to(REF_ENC, (B, NTOK, 2))
        src = _ln(src + msda(e["msda"], src + pos, ref, src), e["g1"], e["b1"])
        mem = _ln(src + ffn(e, src), e["g2"], e["b2"])
        d = p["dec"]
        qpos = jnp.broadcast_to(p["qpos"], (B, NQ, D))
        tgt = jnp.broadcast_to(p["tgt"], (B, NQ, D))
        ref_d = jax.nn.sigmoid(qpos @ p["wref"] + p["bref"])
        tgt = _ln(tgt + _mha(d["sa"], tgt + qpos, tgt + qpos, H), d["g0"], d["b0"])
        tgt = _ln(tgt + msda(d["msda"], tgt + qpos, ref_d, mem), d["g1"], d["b1"])
        tgt = _ln(tgt + ffn(d, tgt), d["g2"], d["b2"])
        logits = tgt @ p["cls"] + p["clsb"]
        inv = jnp.log(ref_d / (1.0 - ref_d + 1e-6) + 1e-6)
        bx = jax.nn.relu(tgt @ p["bx1"] + p["bxb1"]) @ p["bx2"] + p["bxb2"]
        pred = jax.nn.sigmoid(bx + jnp.concatenate([inv, jnp.zeros_like(inv)], -1))
        y = jax.nn.one_hot(labels, NCLS + 1)[..., :NCLS]
        pr = jax.nn.sigmoid(logits)
        ce = _bce_logits(logits, y)
        pt = pr * y + (1 - pr) * (1 - y)
        focal = jnp.sum(ce * jnp.square(1 - pt) * (0.25 * y + 0.75 * (1 - y))) / (B * NQ)
        matched = (labels < NCLS).astype(F32)[..., None]
        l1 = jnp.sum(jnp.abs(pred - boxes) * matched) / jnp.maximum(jnp.sum(matched), 1.0)
        return 2.0 * focal + 5.0 * l1, (focal, l1)

    def step(p, m, v, t, img, labels, boxes):
        (l, parts), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels, boxes)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 0.1), t, lr=2e-4, wd=1e-4)
        return l, parts, p, m, v

    def msda_p():
        return {"wv": S(D, D), "bv": S(D), "woff": S(D, H * NLV * NP * 2),
                "boff": S(H * NLV * NP * 2), "waw": S(D, H * NLV * NP), "baw": S(H * NLV * NP),
                "wo": S(D, D), "bo": S(D)}

    def ffn_p():
        return {"f1": S(D, F), "fb1": S(F), "f2": S(F, D), "fb2": S(D)}
    enc = dict(ffn_p(), msda=msda_p(), g1=S(D), b1=S(D), g2=S(D), b2=S(D))
    dec = dict(ffn_p(), sa=_attn_params(D), msda=msda_p(), g0=S(D), b0=S(D), g1=S(D), b1=S(D),
               g2=S(D), b2=S(D))
    p = {"c1": S(3, 3, 3, 32), "cb1": S(32), "c2": S(3, 3, 32, 64), "cb2": S(64),
         "c3": S(3, 3, 64, 64), "cb3": S(64), "in0": S(64, D), "in1": S(64, D), "lvl": S(NLV, D),
         "enc": enc, "dec": dec, "qpos": S(NQ, D), "tgt": S(NQ, D), "wref": S(D, 2),
         "bref": S(2), "cls": S(D, NCLS), "clsb": S(NCLS), "bx1": S(D, D), "bxb1": S(D),
         "bx2": S(D, 4), "bxb2": S(4)}
    B = 8
    return step, (p, p, p, S(), S(B, 32, 32, 3), S(B, NQ, dtype=I32), S(B, NQ, 4))


# ----------------------------------------------------------------------------- dynamic slices


def dino_multicrop_dynamic_slice_views_centered_sharpened_teacher():
    """DINO self-distillation (Caron et al.) with multi-crop on 32x32 images: two 24x24 global
    and two 16x16 local crops are cut from the batch with lax.dynamic_slice at passed-in
    per-view offsets, and each crop's patch position embeddings are likewise
    lax.dynamic_slice'd out of the full-image 8x8 position grid at the crop's patch offset;
    a ViT-tiny student (4x4 patches, class token, two layers) with a three-layer GELU
    projection head, L2 normalisation and a weight-normalised 256-prototype layer sees all
    four crops, the EMA teacher only the global ones; the loss is the cross-entropy between
    the centred, sharpened (temperature 0.04) teacher softmax and the student softmax
    (temperature 0.1) over all pairs of different views; AdamW with clipping; the teacher
    momentum follows a cosine schedule, the centre an EMA of the teacher batch mean, and the
    step's loss is written into an on-device loss history with lax.dynamic_update_slice."""
    PS, D, H, NL, K, GC, LC, NG, NLC, HIST = 4, 64, 4, 2, 256, 24, 16, 2, 2, 128
    TS, TT, TOTAL = 0.1, 0.04, 100000.0

    def vit(q, x, off):
        B, c = x.shape[0], x.shape[1]
        g = c // PS
        x = x.reshape(B, g, PS, g, PS, 3).transpose(0, 1, 3, 2, 4, 5).reshape(B, g * g, -1)
        pos = lax.dynamic_slice(q["pos"], (off[0] // PS, off[1] // PS, 0), (g, g, D))
        x = x @ q["patch"] + q["pb"] + pos.reshape(g * g, D)
        x = jnp.concatenate([jnp.broadcast_to(q["cls"], (B, 1, D)), x], 1)
        for lq in q["layers"]:
            h = _ln(x, lq["g1"], lq["b1"])
            x = x + _mha(lq["att"], h, h, H)
            h = _ln(x, lq["g2"], lq["b2"])
            x = x + jax.nn.gelu(h @ lq["f1"] + lq["fb1"]) @ lq["f2"] + lq["fb2"]
        z = _ln(x[:, 0], q["gf"], q["bf"])
        z = jax.nn.gelu(z @ q["h1"] + q["hb1"])
        z = jax.nn.gelu(z @ q["h2"] + q["hb2"])
        z = z @ q["h3"] + q["hb3"]
        z = z / (jnp.linalg.norm(z, axis=-1, keepdims=True) + 1e-6)
        wn = q["proto"] / jnp.linalg.norm(q["proto"], axis=0, keepdims=True)
        return z @ wn

    def crop(imgs, off, size):
        return lax.dynamic_slice(imgs, (0, off[0], off[1], 0), (imgs.shape[0], size, size, 3))

    def loss(sp, tp, center, imgs, goff, loff):
        views = [(crop(imgs, goff[i], GC), goff[i]) for i in range(NG)]
        views += [(crop(imgs, loff[i], LC), loff[i]) for i in range(NLC)]
        s_out = [vit(sp, x, o) for x, o in views]
        t_out = [lax.stop_gradient(vit(tp, x, o)) for x, o in views[:NG]]
        total, n = 0.0, 0
        for i, t in enumerate(t_out):
            tprob = jax.nn.softmax((t - center) / TT, -1)
            for j, s in enumerate(s_out):
                if i == j:
                    continue
                total = total + jnp.mean(jnp.sum(-tprob * jax.nn.log_softmax(s / TS, -1), -1))
                n += 1
        return total / n, jnp.mean(jnp.concatenate(t_out, 0), 0)

    def step(sp, m, v, tp, center, hist, t, imgs, goff, loff):
        (l, tmean), g = jax.value_and_grad(loss, has_aux=True)(sp, tp, center, imgs, goff, loff)
        lr = _cosine_lr(t, 5e-4, TOTAL, warm=1000.0)
        sp, m, v = _adam_tree(sp, m, v, _global_clip(g, 3.0), t, lr=lr, wd=0.04)
        mom = 1.0 - 0.004 * 0.5 * (1.0 + jnp.cos(jnp.pi * jnp.minimum(t / TOTAL, 1.0)))
        tp = tmap(lambda a, b: mom * a + (1.0 - mom) * b, tp, sp)
        center = 0.9 * center + 0.1 * tmean
        hist = lax.dynamic_update_slice(hist, l[None], (t.astype(I32) % HIST,))
        return l, sp, m, v, tp, center, hist
    lay = {"g1": S(D), "b1": S(D), "att": _attn_params(D), "g2": S(D), "b2": S(D),
           "f1": S(D, 4 * D), "fb1": S(4 * D), "f2": S(4 * D, D), "fb2": S(D)}
    p = {"patch": S(PS * PS * 3, D), "pb": S(D), "pos": S(32 // PS, 32 // PS, D), "cls": S(D),
         "layers": [dict(lay) for _ in range(NL)], "gf": S(D), "bf": S(D),
         "h1": S(D, 256), "hb1": S(256), "h2": S(256, 256), "hb2": S(256), "h3": S(256, 64),
         "hb3": S(64), "proto": S(64, K)}
    return step, (p, p, p, p, S(K), S(HIST), S(), S(16, 32, 32, 3), S(NG, 2, dtype=I32),
                  S(NLC, 2, dtype=I32))


# ----------------------------------------------------------------------------- mixed precision


def bfloat16_whisper_style_conv_stem_encoder_decoder_transcriber():
    """Whisper-style speech transcriber run in bfloat16 with float32 master weights: 40-bin
    log-mel frames (128 steps) pass through a width-3 conv and a stride-2 width-3 conv with
    GELU, sinusoidal positions and two pre-LN encoder layers (key projections without bias);
    a text decoder with learned positions runs two pre-LN layers of causal self-attention,
    cross-attention to the encoder output and GELU MLPs; the output logits use the tied
    token embedding; matmuls, convolutions and attention values are bf16 while LayerNorm,
    the attention softmax (scores accumulated in f32) and the masked cross-entropy over
    the transcript lengths are float32; AdamW with linear warmup and decay and global-norm
    clipping."""
    NMEL, T, D, H, U, V, NE, NDL = 40, 128, 128, 4, 24, 512, 2, 2
    bf = lambda a: a.astype(BF16)

    def ln(x, q, k):
        return bf(_ln(x.astype(F32), q[k + "g"], q[k + "b"]))

    def attn(q, xq, xkv, mask=None):
        b, tq, d = xq.shape
        tk = xkv.shape[1]
        qq = (xq @ bf(q["wq"]) + bf(q["bq"])).reshape(b, tq, H, d // H)
        kk = (xkv @ bf(q["wk"])).reshape(b, tk, H, d // H)
        vv = (xkv @ bf(q["wv"]) + bf(q["bv"])).reshape(b, tk, H, d // H)
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk, preferred_element_type=F32) / math.sqrt(d // H)
        if mask is not None:
            s = jnp.where(mask, s, -1e9)
        a = bf(jax.nn.softmax(s, -1))
        o = jnp.einsum("bhqk,bkhd->bqhd", a, vv).reshape(b, tq, d)
        return o @ bf(q["wo"]) + bf(q["bo"])

    def mlp(q, x):
        return jax.nn.gelu(x @ bf(q["f1"]) + bf(q["fb1"])) @ bf(q["f2"]) + bf(q["fb2"])

    def conv1d(x, w, b, stride=1):
        return lax.conv_general_dilated(x, bf(w), (stride,), [(1, 1)],
                                        dimension_numbers=("NWC", "WIO", "NWC")) + bf(b)

    def loss(p, mel, tok, tlen):
        x = jax.nn.gelu(conv1d(bf(mel), p["conv1"], p["cb1"]))
        x = jax.nn.gelu(conv1d(x, p["conv2"], p["cb2"], 2))
        x = x + bf(_sinusoid(T // 2, D))
        for q in p["enc"]:
            h = ln(x, q, "a")
            x = x + attn(q["att"], h, h)
            x = x + mlp(q, ln(x, q, "m"))
        enc = ln(x, p, "ep")
        inp, tgt = tok[:, :-1], tok[:, 1:]
        y = bf(p["emb"][inp] + p["pos"])
        causal = _causal(U)[None, None]
        for q in p["dec"]:
            h = ln(y, q, "a")
            y = y + attn(q["att"], h, h, causal)
            y = y + attn(q["xatt"], ln(y, q, "x"), enc)
            y = y + mlp(q, ln(y, q, "m"))
        logits = (ln(y, p, "dp") @ bf(p["emb"]).T).astype(F32)
        logp = jax.nn.log_softmax(logits, -1)
        nll = -jnp.take_along_axis(logp, tgt[..., None], -1)[..., 0]
        w = (jnp.arange(U)[None, :] < tlen[:, None]).astype(F32)
        return jnp.sum(nll * w) / jnp.maximum(jnp.sum(w), 1.0)

    def step(p, m, v, t, mel, tok, tlen):
        l, g = jax.value_and_grad(loss)(p, mel, tok, tlen)
        lr = 1e-3 * jnp.minimum((t + 1.0) / 2048.0, jnp.maximum(0.0, 1.0 - t / 100000.0))
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, wd=0.1)
        return l, p, m, v

    def att_p():
        return {"wq": S(D, D), "bq": S(D), "wk": S(D, D), "wv": S(D, D), "bv": S(D),
                "wo": S(D, D), "bo": S(D)}

    def mlp_p():
        return {"f1": S(D, 4 * D), "fb1": S(4 * D), "f2": S(4 * D, D), "fb2": S(D)}
    enc = [dict(mlp_p(), att=att_p(), ag=S(D), ab=S(D), mg=S(D), mb=S(D)) for _ in range(NE)]
    dec = [dict(mlp_p(), att=att_p(), xatt=att_p(), ag=S(D), ab=S(D), xg=S(D), xb=S(D),
                mg=S(D), mb=S(D)) for _ in range(NDL)]
    p = {"conv1": S(3, NMEL, D), "cb1": S(D), "conv2": S(3, D, D), "cb2": S(D), "enc": enc,
         "epg": S(D), "epb": S(D), "emb": S(V, D), "pos": S(U, D), "dec": dec, "dpg": S(D),
         "dpb": S(D)}
    B = 16
    return step, (p, p, p, S(), S(B, T, NMEL), S(B, U + 1, dtype=I32), S(B, dtype=I32))


# ----------------------------------------------------------------------------- optimizers


def adam_mini_blockwise_shared_second_moment_per_head_decoder_lm():
    """Adam-mini (Zhang et al. 2024) training of a two-layer pre-LN decoder LM: the gradient's
    first moment is kept per parameter, but the second moment is one scalar per block of
    the Hessian's near-block-diagonal structure -- per attention head for the query and
    key projections (a reshape to [d, heads, head_dim] and a mean of squares over the
    other axes), per output neuron for the value, attention-output and MLP matrices, and
    one per tensor for LayerNorm gains and biases -- each broadcast back over its block in
    the update; the token embedding and the untied output head keep ordinary element-wise
    Adam; decoupled weight decay on matrices; warmup-cosine; global-norm clipping."""
    V, D, H, T, F, NL = 512, 128, 4, 64, 512, 2
    DH = D // H
    B1, B2, EPS = 0.9, 0.95, 1e-8

    def attn(q, x):
        b, t, d = x.shape
        qq = (x @ q["wq"]).reshape(b, t, H, DH)
        kk = (x @ q["wk"]).reshape(b, t, H, DH)
        vv = (x @ q["wv"]).reshape(b, t, H, DH)
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(DH)
        s = jnp.where(_causal(t), s, -1e9)
        return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d) @ q["wo"]

    def loss(p, tok, tgt):
        x = p["emb"][tok] + p["pos"]
        for q in p["layers"]:
            x = x + attn(q, _ln(x, q["g1"], q["b1"]))
            h = _ln(x, q["g2"], q["b2"])
            x = x + jax.nn.gelu(h @ q["f1"]) @ q["f2"]
        return _xent(_ln(x, p["gf"], p["bf"]) @ p["out"], tgt)

    def block_sq(name, g):
        if name in ("wq", "wk"):
            return jnp.mean(jnp.square(g.reshape(D, H, DH)), (0, 2))
        if name in ("wv", "wo", "f1", "f2"):
            return jnp.mean(jnp.square(g), 0)
        return jnp.mean(jnp.square(g))

    def expand(name, v, shape):
        if name in ("wq", "wk"):
            return jnp.broadcast_to(v[None, :, None], (D, H, DH)).reshape(shape)
        if name in ("wv", "wo", "f1", "f2"):
            return v[None, :]
        return v

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        g = _global_clip(g, 1.0)
        lr = _cosine_lr(t, 1e-3, 50000.0, warm=500.0)
        c1, c2 = 1.0 - B1 ** t, 1.0 - B2 ** t
        m = tmap(lambda m, g: B1 * m + (1 - B1) * g, m, g)

        def upd(w, mm, vv, wd=True):
            u = (mm / c1) / (jnp.sqrt(vv / c2) + EPS)
            return w - lr * (u + (0.1 * w if (wd and w.ndim >= 2) else 0.0))
        newp, newv = dict(p), dict(v)
        for k in ("emb", "pos", "out", "gf", "bf"):
            newv[k] = B2 * v[k] + (1 - B2) * jnp.square(g[k])
            newp[k] = upd(p[k], m[k], newv[k], wd=k == "out")
        layers, vlayers = [], []
        for q, mq, vq, gq in zip(p["layers"], m["layers"], v["layers"], g["layers"]):
            nq, nv = {}, {}
            for k in q:
                nv[k] = B2 * vq[k] + (1 - B2) * block_sq(k, gq[k])
                nq[k] = upd(q[k], mq[k], expand(k, nv[k], q[k].shape))
            layers.append(nq)
            vlayers.append(nv)
        newp["layers"], newv["layers"] = layers, vlayers
        return l, newp, m, newv
    q = {"g1": S(D), "b1": S(D), "wq": S(D, D), "wk": S(D, D), "wv": S(D, D), "wo": S(D, D),
         "g2": S(D), "b2": S(D), "f1": S(D, F), "f2": S(F, D)}
    vq = {"g1": S(), "b1": S(), "wq": S(H), "wk": S(H), "wv": S(D), "wo": S(D), "g2": S(),
          "b2": S(), "f1": S(F), "f2": S(D)}
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [dict(q) for _ in range(NL)], "gf": S(D),
         "bf": S(D), "out": S(D, V)}
    v = dict(p, layers=[dict(vq) for _ in range(NL)])
    return step, (p, p, v, S(), S(8, T, dtype=I32), S(8, T, dtype=I32))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [xdeepfm_compressed_interaction_network_field_outer_products_ctr,
            neural_additive_model_exu_feature_nets_interpretable_regressor],
    "cnn": [van_large_kernel_attention_dilated_depthwise_decomposition_classifier,
            condconv_per_example_mixture_kernels_grouped_batch_trick_classifier],
    "transformer": [decision_transformer_interleaved_return_state_action_tokens,
                    megabyte_patch_global_local_byte_decoder_lm],
    "rnn": [hawk_rglru_gated_linear_recurrence_temporal_conv_lm,
            rnn_transducer_lstm_encoder_predictor_joint_lattice_loss],
    "moe": [mixture_of_attention_heads_topk_query_experts_shared_kv],
    "vae": [iaf_made_autoregressive_posterior_free_bits_vae_adamax],
    "unet": [resunet_plus_plus_squeeze_excite_aspp_bridge_attention_decoder],
    "gnn": [painn_equivariant_scalar_vector_messages_energy_force_fit],
    "quant": [bn_folded_conv_qat_per_channel_int8_ema_activation_ranges],
    "remat": [remat_scanned_vit_register_tokens_save_only_qkv_names_nested_mlp,
              remat_memory_efficient_densenet_shared_concat_bn_relu_recompute],
    "custom_vjp": [custom_vjp_flash_style_attention_saved_logsumexp_recompute_backward_lm],
    "control": [raft_iterative_flow_refinement_fori_correlation_lookup_gru,
                mean_teacher_consistency_switch_rampup_phases_cond_ema_teacher],
    "sort": [sortpool_dgcnn_graph_classifier_last_channel_ordering_conv1d],
    "fft": [spectral_burgers_solver_learned_closure_unrolled_rfft_derivatives],
    "linalg": [learnable_triangulation_soft_argmax_heatmaps_dlt_svd_pose3d],
    "scatter_gather": [deformable_detr_multiscale_deformable_attention_bilinear_sampling_encoder],
    "dynamic": [dino_multicrop_dynamic_slice_views_centered_sharpened_teacher],
    "mixed": [bfloat16_whisper_style_conv_stem_encoder_decoder_transcriber],
    "optimizer": [adam_mini_blockwise_shared_second_moment_per_head_decoder_lm],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["xdeepfm_compressed_interaction_network_field_outer_products_ctr",
           "van_large_kernel_attention_dilated_depthwise_decomposition_classifier",
           "decision_transformer_interleaved_return_state_action_tokens",
           "hawk_rglru_gated_linear_recurrence_temporal_conv_lm",
           "mixture_of_attention_heads_topk_query_experts_shared_kv",
           "resunet_plus_plus_squeeze_excite_aspp_bridge_attention_decoder",
           "painn_equivariant_scalar_vector_messages_energy_force_fit",
           "bn_folded_conv_qat_per_channel_int8_ema_activation_ranges",
           "remat_scanned_vit_register_tokens_save_only_qkv_names_nested_mlp",
           "custom_vjp_flash_style_attention_saved_logsumexp_recompute_backward_lm",
           "spectral_burgers_solver_learned_closure_unrolled_rfft_derivatives",
           "bfloat16_whisper_style_conv_stem_encoder_decoder_transcriber"]
SHARDED_SET = ["bfloat16_whisper_style_conv_stem_encoder_decoder_transcriber",
               "remat_scanned_vit_register_tokens_save_only_qkv_names_nested_mlp",
               "van_large_kernel_attention_dilated_depthwise_decomposition_classifier",
               "decision_transformer_interleaved_return_state_action_tokens",
               "resunet_plus_plus_squeeze_excite_aspp_bridge_attention_decoder",
               "neural_additive_model_exu_feature_nets_interpretable_regressor",
               "dino_multicrop_dynamic_slice_views_centered_sharpened_teacher",
               "megabyte_patch_global_local_byte_decoder_lm"]
