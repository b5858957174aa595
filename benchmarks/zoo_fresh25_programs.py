"""Twenty-fifth fresh set: 25 JAX programs written by a helper on 2026-11-29, kept outside the
repository as a held-out set, measured unseen at the start and end of that day's eighth session
and committed then (docstring kept at 3 lines: the dumps record line numbers)::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh25_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh25_programs python benchmarks/accuracy.py --data DIR

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


def deepsdf_auto_decoder_per_shape_latent_codes_clamped_l1_weightnorm_skip_mlp():
    """DeepSDF (Park et al.) auto-decoder for the signed distance functions of 256 training
    shapes: there is no encoder -- every shape owns a 64-dim latent code in a trainable
    table, gathered by the passed-in shape index of each of 16 shapes in the batch and
    broadcast to its 256 sampled points; an eight-layer ReLU MLP of width 256 with weight
    normalisation (w = g v / ||v|| per output unit) maps (code, xyz) to the SDF value,
    re-injecting the input (code, xyz) at the fifth layer by a skip concatenation, with
    dropout from a passed-in raw key and a tanh output; the loss is the L1 distance between
    prediction and target both clamped to [-0.1, 0.1] plus a zero-mean Gaussian prior (L2
    penalty) on the batch's codes; Adam with separate learning rates for the decoder and
    the code table, both halved every 500 steps; the clamped L1 term is returned."""
    NSH, Z, P, HID, NL, SKIP, DELTA = 256, 64, 256, 256, 8, 4, 0.1

    def decoder(q, inp, key):
        h = inp
        keys = jax.random.split(key, NL - 1)
        for i, (v, g, b) in enumerate(q["layers"]):
            if i == SKIP:
                h = jnp.concatenate([h, inp], -1)
            w = v * (g / jnp.sqrt(jnp.sum(jnp.square(v), 0) + 1e-12))
            h = h @ w + b
            if i < NL - 1:
                h = jax.nn.relu(h)
                h = jnp.where(jax.random.bernoulli(keys[i], 0.8, h.shape), h / 0.8, 0.0)
        return jnp.tanh(h[..., 0])

    def loss(p, ids, xyz, sdf, key):
        B = xyz.shape[0]
        codes = p["codes"][ids]
        inp = jnp.concatenate([jnp.broadcast_to(codes[:, None], (B, P, Z)), xyz], -1)
        pred = decoder(p["dec"], inp, key)
        l1 = jnp.mean(jnp.abs(jnp.clip(pred, -DELTA, DELTA) - jnp.clip(sdf, -DELTA, DELTA)))
        reg = 1e-4 * jnp.mean(jnp.sum(jnp.square(codes), -1))
        return l1 + reg, l1

    def step(p, m, v, t, ids, xyz, sdf, key):
        (l, l1), g = jax.value_and_grad(loss, has_aux=True)(p, ids, xyz, sdf, key)
        decay = 0.5 ** jnp.floor(t / 500.0)
        dec, md, vd = _adam_tree(p["dec"], m["dec"], v["dec"], g["dec"], t, lr=5e-4 * decay)
        codes, mc, vc = _adam_tree(p["codes"], m["codes"], v["codes"], g["codes"], t,
                                   lr=1e-3 * decay)
        return (l, l1, {"dec": dec, "codes": codes}, {"dec": md, "codes": mc},
                {"dec": vd, "codes": vc})
    layers = []
    for i in range(NL):
        ci = Z + 3 if i == 0 else HID
        co = 1 if i == NL - 1 else (HID - Z - 3 if i == SKIP - 1 else HID)
        layers.append((S(ci, co), S(co), S(co)))
    p = {"dec": {"layers": layers}, "codes": S(NSH, Z)}
    B = 16
    return step, (p, p, p, S(), S(B, dtype=I32), S(B, P, 3), S(B, P), S(2, dtype=U32))


def neumf_gmf_mlp_tower_fusion_bpr_sampled_negatives_implicit_recommender():
    """Neural matrix factorisation (NeuMF, He et al.) for implicit-feedback recommendation over
    4000 users and 6000 items: separate embedding tables for the generalised matrix
    factorisation branch (32-dim, element-wise product of the user and item vectors) and the
    MLP branch (64-dim, concatenated and passed through a 128-64-32 ReLU tower); the two
    branch outputs are concatenated and fused by a final linear layer into one score; each
    of 256 users in the batch has one observed item and 4 sampled negatives (passed-in
    indices); Bayesian personalised ranking loss -log sigmoid(s_pos - s_neg) averaged over
    the pairs plus an L2 penalty on only the embedding rows the batch uses; Adam with
    exponential decay; the hit rate of the positive against all its negatives is
    returned."""
    NU, NI, DG, DM, K = 4000, 6000, 32, 64, 4

    def score(p, u, i):
        g = p["ug"][u] * p["ig"][i]
        h = jnp.concatenate([p["um"][u], p["im"][i]], -1)
        for w, b in p["tower"]:
            h = jax.nn.relu(h @ w + b)
        return (jnp.concatenate([g, h], -1) @ p["fuse"])[..., 0] + p["fb"]

    def loss(p, users, pos, neg):
        un = jnp.broadcast_to(users[:, None], neg.shape)
        sp = score(p, users, pos)
        sn = score(p, un, neg)
        diff = sp[:, None] - sn
        bpr = -jnp.mean(jax.nn.log_sigmoid(diff))
        used = ((p["ug"], users), (p["um"], users), (p["ig"], pos), (p["im"], pos),
                (p["ig"], neg), (p["im"], neg))
        reg = sum(jnp.sum(jnp.square(tab[ix])) for tab, ix in used) / users.shape[0]
        hit = jnp.mean(jnp.all(diff > 0, -1).astype(F32))
        return bpr + 1e-5 * reg, hit

    def step(p, m, v, t, users, pos, neg):
        (l, hit), g = jax.value_and_grad(loss, has_aux=True)(p, users, pos, neg)
        p, m, v = _adam_tree(p, m, v, g, t, lr=1e-3 * 0.96 ** (t / 10000.0))
        return l, hit, p, m, v
    tower, ci = [], 2 * DM
    for co in (128, 64, 32):
        tower.append((S(ci, co), S(co)))
        ci = co
    p = {"ug": S(NU, DG), "ig": S(NI, DG), "um": S(NU, DM), "im": S(NI, DM), "tower": tower,
         "fuse": S(DG + 32, 1), "fb": S()}
    B = 256
    return step, (p, p, p, S(), S(B, dtype=I32), S(B, dtype=I32), S(B, K, dtype=I32))


# ----------------------------------------------------------------------------- cnn


def dla_deep_layer_aggregation_hierarchical_tree_roots_iterative_stage_merge_classifier():
    """Deep Layer Aggregation (DLA, Yu et al.) on 32x32 images: a 3x3 base conv (16) and a
    strided level conv (32); three stages (64 / 128 / 256 channels), the first two depth-1
    trees and the last a depth-2 tree, built from residual basic blocks: a tree's first
    block downsamples by 2 and its aggregation node (root) concatenates the children's
    outputs with the 2x2 max-pooled tree input (iterative deep aggregation of the previous
    stage), applies a 1x1 conv, BN and ReLU and adds a residual from the last child; a
    depth-2 tree nests two subtrees, the second one's root also taking the first subtree's
    output and the pooled input; global pooling and a linear classifier; cross-entropy; SGD
    with momentum, weight decay and step decay; BN batch statistics returned."""

    def bn(q, x, stats, relu=True):
        h, st = _bn(x, q["g"], q["b"], (0, 1, 2))
        stats.append(st)
        return jax.nn.relu(h) if relu else h

    def basic(q, x, stats, stride):
        h = bn(q["n1"], _conv(x, q["c1"], stride), stats)
        h = bn(q["n2"], _conv(h, q["c2"]), stats, relu=False)
        sc = x
        if "proj" in q:
            sc = bn(q["np"], _conv(x, q["proj"], stride), stats, relu=False)
        return jax.nn.relu(h + sc)

    def root(q, xs, stats):
        h = bn(q["n"], jnp.concatenate(xs, -1) @ q["w"], stats, relu=False)
        return jax.nn.relu(h + xs[0])

    def maxpool2(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def tree1(q, x, stats):
        a = basic(q["b1"], x, stats, 2)
        b = basic(q["b2"], a, stats, 1)
        return root(q["root"], [b, a, maxpool2(x)], stats)

    def tree2(q, x, stats):
        t1 = tree1(q["t1"], x, stats)
        a = basic(q["t2"]["b1"], t1, stats, 1)
        b = basic(q["t2"]["b2"], a, stats, 1)
        return root(q["t2"]["root"], [b, a, t1, maxpool2(x)], stats)

    def loss(p, img, labels):
        stats = []
        x = bn(p["n0"], _conv(img, p["base"]), stats)
        x = bn(p["n1"], _conv(x, p["level"], 2), stats)
        x = tree1(p["s1"], x, stats)
        x = tree1(p["s2"], x, stats)
        x = tree2(p["s3"], x, stats)
        logits = jnp.mean(x, (1, 2)) @ p["fc"] + p["fcb"]
        return _xent(logits, labels), stats

    def step(p, mom, t, img, labels):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels)
        lr = 0.05 * 0.1 ** jnp.floor(t / 30000.0)
        g = tmap(lambda g, w: g + (1e-4 * w if w.ndim >= 2 else 0.0), g, p)
        mom = tmap(lambda b, g: 0.9 * b + g, mom, g)
        p = tmap(lambda w, b: w - lr * b, p, mom)
        return l, stats, p, mom

    def nb(c):
        return {"g": S(c), "b": S(c)}

    def blk(ci, co):
        q = {"c1": S(3, 3, ci, co), "n1": nb(co), "c2": S(3, 3, co, co), "n2": nb(co)}
        if ci != co:
            q.update(proj=S(1, 1, ci, co), np=nb(co))
        return q

    def t1p(ci, co):
        return {"b1": blk(ci, co), "b2": blk(co, co),
                "root": {"w": S(2 * co + ci, co), "n": nb(co)}}
    s3 = {"t1": t1p(128, 256), "t2": {"b1": blk(256, 256), "b2": blk(256, 256),
                                      "root": {"w": S(3 * 256 + 128, 256), "n": nb(256)}}}
    p = {"base": S(3, 3, 3, 16), "n0": nb(16), "level": S(3, 3, 16, 32), "n1": nb(32),
         "s1": t1p(32, 64), "s2": t1p(64, 128), "s3": s3, "fc": S(256, 100), "fcb": S(100)}
    return step, (p, p, S(), S(16, 32, 32, 3), S(16, dtype=I32))


def dual_path_network_shared_residual_densely_connected_channel_split_grouped_classifier():
    """Dual Path Network (DPN, Chen et al.) on 32x32 images: every block reads the
    concatenation of a residual path and a densely connected path, applies BN-ReLU-1x1 conv,
    BN-ReLU-grouped 3x3 conv (8 groups, strided in a stage's first block) and BN-ReLU-1x1
    conv, and splits the result: the first R channels are added to the residual path
    (ResNet-style feature re-use) and the remaining k are appended to the dense path
    (DenseNet-style exploration); the first block of a stage projects its input into both
    paths with a BN-ReLU-1x1 conv; a 3x3 stem (32), three stages of two blocks (R = 64 /
    128 / 256, increments k = 16 / 32 / 32), a final BN-ReLU on the concatenated paths,
    global pooling and a linear head; label-smoothed cross-entropy; SGD with Nesterov
    momentum and cosine decay; BN batch statistics returned."""
    G = 8
    STAGES = ((64, 16, 1), (128, 32, 2), (256, 32, 2))

    def bnr(q, x, stats):
        h, st = _bn(x, q["g"], q["b"], (0, 1, 2))
        stats.append(st)
        return jax.nn.relu(h)

    def block(q, res, dense, stats, stride, R):
        x = res if dense is None else jnp.concatenate([res, dense], -1)
        if "proj" in q:
            pr = _conv(bnr(q["np"], x, stats), q["proj"], stride)
            res, dense = pr[..., :R], pr[..., R:]
        h = _conv(bnr(q["n1"], x, stats), q["c1"])
        h = _conv(bnr(q["n2"], h, stats), q["c2"], stride, groups=G)
        h = _conv(bnr(q["n3"], h, stats), q["c3"])
        return res + h[..., :R], jnp.concatenate([dense, h[..., R:]], -1)

    def loss(p, img, labels):
        stats = []
        res, dense = _conv(img, p["stem"]), None
        for (R, k, s), blocks in zip(STAGES, p["stages"]):
            if dense is not None:
                res, dense = jnp.concatenate([res, dense], -1), None
            for bi, q in enumerate(blocks):
                res, dense = block(q, res, dense, stats, s if bi == 0 else 1, R)
        x = bnr(p["nf"], jnp.concatenate([res, dense], -1), stats)
        logits = jnp.mean(x, (1, 2)) @ p["fc"] + p["fcb"]
        return _smooth_xent(logits, labels), stats

    def step(p, mom, t, img, labels):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels)
        lr = _cosine_lr(t, 0.1, 80000.0)
        g = tmap(lambda g, w: g + (1e-4 * w if w.ndim >= 2 else 0.0), g, p)
        mom = tmap(lambda b, g: 0.9 * b + g, mom, g)
        p = tmap(lambda w, g, b: w - lr * (g + 0.9 * b), p, g, mom)
        return l, stats, p, mom

    def nb(c):
        return {"g": S(c), "b": S(c)}
    stages, ci = [], 32
    for R, k, _ in STAGES:
        blocks = []
        for bi in range(2):
            bw = R // 2
            q = {"n1": nb(ci), "c1": S(1, 1, ci, bw), "n2": nb(bw), "c2": S(3, 3, bw // G, bw),
                 "n3": nb(bw), "c3": S(1, 1, bw, R + k)}
            if bi == 0:
                q.update(np=nb(ci), proj=S(1, 1, ci, R + 2 * k))
            blocks.append(q)
            ci = R + (3 + bi) * k
        stages.append(blocks)
    p = {"stem": S(3, 3, 3, 32), "stages": stages, "nf": nb(ci), "fc": S(ci, 100),
         "fcb": S(100)}
    return step, (p, p, S(), S(16, 32, 32, 3), S(16, dtype=I32))


# ----------------------------------------------------------------------------- transformer


def fastformer_additive_attention_global_query_key_elementwise_news_classifier():
    """Fastformer (Wu et al.) news-topic classifier over 64-token documents: each of two layers
    projects queries, keys and values, summarises the queries into one global query per head
    by additive attention (a softmax over tokens of a learned per-head scoring vector applied
    to the queries, scaled by 1/sqrt(d)), multiplies it element-wise into every key,
    summarises those products into a global key the same way, multiplies the global key
    element-wise into every value, and applies a linear transform plus the query residual;
    padded tokens (passed-in lengths) are excluded from both softmaxes; post-LN layers with
    a GELU FFN (width 128, 4 heads); an additive-attention-pooled document vector and an
    18-way head; cross-entropy; AdamW with linear warmup."""
    V, D, H, T, F, NL, NC = 3000, 128, 4, 64, 256, 2, 18
    DH = D // H

    def additive(x, w, mask):
        s = jnp.einsum("bthd,hd->bth", x, w) / math.sqrt(DH)
        s = jnp.where(mask[:, :, None], s, -1e9)
        return jnp.einsum("bth,bthd->bhd", jax.nn.softmax(s, 1), x)

    def layer(q, x, mask):
        b, t, d = x.shape
        qq, kk, vv = ((x @ q[n] + q[n + "b"]).reshape(b, t, H, DH) for n in ("wq", "wk", "wv"))
        gq = additive(qq, q["aq"], mask)
        gk = additive(kk * gq[:, None], q["ak"], mask)
        u = (vv * gk[:, None]).reshape(b, t, d)
        a = u @ q["wt"] + q["wtb"] + qq.reshape(b, t, d)
        x = _ln(x + a @ q["wo"] + q["wob"], q["g1"], q["b1"])
        return _ln(x + jax.nn.gelu(x @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"], q["g2"], q["b2"])

    def loss(p, tok, lens, labels):
        mask = jnp.arange(T)[None, :] < lens[:, None]
        x = _ln(p["emb"][tok] + p["pos"], p["eg"], p["eb"])
        for q in p["layers"]:
            x = layer(q, x, mask)
        s = (jnp.tanh(x @ p["pw"] + p["pb"]) @ p["pv"])[..., 0]
        a = jax.nn.softmax(jnp.where(mask, s, -1e9), -1)
        doc = jnp.einsum("bt,btd->bd", a, x)
        return _xent(doc @ p["head"] + p["hb"], labels)

    def step(p, m, v, t, tok, lens, labels):
        l, g = jax.value_and_grad(loss)(p, tok, lens, labels)
        lr = 1e-4 * jnp.minimum(1.0, (t + 1.0) / 2000.0)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr, wd=0.01)
        return l, p, m, v
    q = {"wq": S(D, D), "wqb": S(D), "wk": S(D, D), "wkb": S(D), "wv": S(D, D), "wvb": S(D),
         "aq": S(H, DH), "ak": S(H, DH), "wt": S(D, D), "wtb": S(D), "wo": S(D, D),
         "wob": S(D), "g1": S(D), "b1": S(D), "f1": S(D, F), "fb1": S(F), "f2": S(F, D),
         "fb2": S(D), "g2": S(D), "b2": S(D)}
    p = {"emb": S(V, D), "pos": S(T, D), "eg": S(D), "eb": S(D),
         "layers": [dict(q) for _ in range(NL)], "pw": S(D, D), "pb": S(D), "pv": S(D, 1),
         "head": S(D, NC), "hb": S(NC)}
    B = 16
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, dtype=I32), S(B, dtype=I32))


def charformer_gbst_gradient_based_subword_block_scoring_downsampled_byte_encoder():
    """Charformer (Tay et al.) byte-level sentiment classifier with gradient-based subword
    tokenisation (GBST): 192 UTF-8 bytes (259-symbol vocabulary) are embedded, mixed by a
    width-4 depthwise 1-D conv and mean-pooled into non-overlapping candidate blocks of
    sizes 1, 2, 3 and 4 (by reshaping) that are repeated back to byte resolution; a linear
    scorer rates every candidate at every position, the scores are softmaxed over the block
    sizes and calibrated by position-wise score attention (softmax(P P^T) P), and the
    score-weighted mixture of candidates is mean-pooled with a downsampling rate of 2 into
    96 latent subwords; two pre-LN transformer layers (width 128, 4 heads, GELU FFN with
    dropout from a passed-in raw key) run on the latent sequence; mean pooling and a 5-way
    head; cross-entropy; Adam with inverse-square-root decay after warmup."""
    V, D, H, T, F, NL, NC, DS = 259, 128, 4, 192, 512, 2, 5, 2
    SIZES = (1, 2, 3, 4)

    def gbst(p, x):
        b = x.shape[0]
        x = lax.conv_general_dilated(x, p["dw"], (1,), "SAME",
                                     dimension_numbers=("NWC", "WIO", "NWC"),
                                     feature_group_count=D) + p["dwb"]
        cands = []
        for s in SIZES:
            blk = jnp.mean(x.reshape(b, T // s, s, D), 2)
            cands.append(jnp.repeat(blk, s, 1))
        c = jnp.stack(cands, 2)
        sc = jax.nn.softmax((c @ p["score"])[..., 0], -1)
        sc = jax.nn.softmax(jnp.einsum("bis,bjs->bij", sc, sc), -1) @ sc
        x = jnp.einsum("bts,btsd->btd", sc, c)
        return jnp.mean(x.reshape(b, T // DS, DS, D), 2)

    def loss(p, tok, labels, key):
        keys = jax.random.split(key, NL)
        x = gbst(p, p["emb"][tok] + p["pos"])
        x = x + p["lpos"]
        for q, k in zip(p["layers"], keys):
            x = x + _mha(q["att"], _ln(x, q["g1"], q["b1"]), _ln(x, q["g1"], q["b1"]), H)
            h = jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"] + q["fb1"])
            h = jnp.where(jax.random.bernoulli(k, 0.9, h.shape), h / 0.9, 0.0)
            x = x + h @ q["f2"] + q["fb2"]
        x = _ln(x, p["gf"], p["bf"])
        return _xent(jnp.mean(x, 1) @ p["head"] + p["hb"], labels)

    def step(p, m, v, t, tok, labels, key):
        l, g = jax.value_and_grad(loss)(p, tok, labels, key)
        s = t + 1.0
        lr = 1e-3 * jnp.minimum(s / 1000.0, jnp.sqrt(1000.0 / s))
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr)
        return l, p, m, v
    q = {"g1": S(D), "b1": S(D), "att": _attn_params(D), "g2": S(D), "b2": S(D),
         "f1": S(D, F), "fb1": S(F), "f2": S(F, D), "fb2": S(D)}
    p = {"emb": S(V, D), "pos": S(T, D), "dw": S(4, 1, D), "dwb": S(D), "score": S(D, 1),
         "lpos": S(T // DS, D), "layers": [dict(q) for _ in range(NL)], "gf": S(D),
         "bf": S(D), "head": S(D, NC), "hb": S(NC)}
    B = 16
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, dtype=I32), S(2, dtype=U32))


# ----------------------------------------------------------------------------- rnn / scan


def skip_rnn_straight_through_binary_state_update_gate_budget_loss_scan():
    """Skip RNN (Campos et al.) that learns to skip state updates, on sequential digit
    classification from 64 steps of 16-dim feature rows (10 classes): a GRU cell of 128 units
    in a time-major lax.scan whose carry holds the hidden state and the cumulative update
    probability u; at each step the binary gate round(u), a straight-through estimator
    (forward rounding, identity gradient), chooses between the GRU update and copying the
    previous state; a sigmoid layer on the new state emits the increment delta_u, and u
    becomes delta_u after an update or u + min(delta_u, 1 - u) after a skip; the loss is
    the cross-entropy on the final state plus a budget term (lambda times the number of
    updates per sequence); Adam with global-norm clipping; the mean fraction of updated
    steps is returned."""
    T, DIN, N, NC, LAM = 64, 16, 128, 10, 1e-4

    def gru(q, h, x):
        zr = jax.nn.sigmoid(x @ q["wzr"] + h @ q["uzr"] + q["bzr"])
        z, r = jnp.split(zr, 2, -1)
        n = jnp.tanh(x @ q["wn"] + (r * h) @ q["un"] + q["bn"])
        return (1.0 - z) * n + z * h

    def loss(p, xs, labels):
        B = xs.shape[0]

        def cell(carry, x):
            h, u = carry
            ub = u + lax.stop_gradient(jnp.round(u) - u)
            hn = ub * gru(p["gru"], h, x) + (1.0 - ub) * h
            du = jax.nn.sigmoid(hn @ p["wu"] + p["bu"])
            u = ub * du + (1.0 - ub) * (u + jnp.minimum(du, 1.0 - u))
            return (hn, u), ub[:, 0]
        init = (jnp.zeros((B, N)), jnp.ones((B, 1)))
        (h, _), gates = lax.scan(cell, init, jnp.swapaxes(xs, 0, 1))
        ce = _xent(h @ p["out"] + p["ob"], labels)
        return ce + LAM * jnp.mean(jnp.sum(gates, 0)), jnp.mean(gates)

    def step(p, m, v, t, xs, labels):
        (l, frac), g = jax.value_and_grad(loss, has_aux=True)(p, xs, labels)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=1e-3)
        return l, frac, p, m, v
    gru_p = {"wzr": S(DIN, 2 * N), "uzr": S(N, 2 * N), "bzr": S(2 * N), "wn": S(DIN, N),
             "un": S(N, N), "bn": S(N)}
    p = {"gru": gru_p, "wu": S(N, 1), "bu": S(1), "out": S(N, NC), "ob": S(NC)}
    B = 32
    return step, (p, p, p, S(), S(B, T, DIN), S(B, dtype=I32))


def fast_weights_associative_memory_rnn_hebbian_inner_loop_layernorm_scan():
    """Fast-weights RNN (Ba, Hinton et al., "Using Fast Weights to Attend to the Recent Past")
    on the associative-retrieval task: 48-step sequences of key and value characters (37
    symbols) ending in a query key, 32 sequences per batch; a 128-unit ReLU RNN in a
    time-major lax.scan carries, besides its hidden state, a per-sequence fast-weight matrix
    A (128 x 128) that decays by lambda = 0.95 and adds the Hebbian outer product
    eta h h^T every step; the next hidden state comes from one inner-loop step
    h_s = ReLU(LN(W h + C x + A h_0)) from the preliminary state h_0 = ReLU(W h + C x), the
    fast-weight term computed as a batched matrix-vector product; a 100-unit ReLU layer and
    a 37-way softmax read the final state; cross-entropy; Adam with clipping; accuracy
    returned."""
    V, E, N, T, HID, LAMBDA, ETA = 37, 64, 128, 48, 100, 0.95, 0.5

    def loss(p, tok, labels):
        B = tok.shape[0]
        xs = jnp.swapaxes(p["emb"][tok], 0, 1)

        def cell(carry, x):
            h, A = carry
            pre = h @ p["w"] + x @ p["c"] + p["b"]
            h0 = jax.nn.relu(pre)
            hs = jax.nn.relu(_ln(pre + jnp.einsum("bij,bj->bi", A, h0), p["g"], p["gb"]))
            A = LAMBDA * A + ETA * jnp.einsum("bi,bj->bij", hs, hs)
            return (hs, A), None
        (h, _), _ = lax.scan(cell, (jnp.zeros((B, N)), jnp.zeros((B, N, N))), xs)
        logits = jax.nn.relu(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        acc = jnp.mean((jnp.argmax(logits, -1) == labels).astype(F32))
        return _xent(logits, labels), acc

    def step(p, m, v, t, tok, labels):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, tok, labels)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 5.0), t, lr=1e-4)
        return l, acc, p, m, v
    p = {"emb": S(V, E), "w": S(N, N), "c": S(E, N), "b": S(N), "g": S(N), "gb": S(N),
         "w1": S(N, HID), "b1": S(HID), "w2": S(HID, V), "b2": S(V)}
    B = 32
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, dtype=I32))


# ----------------------------------------------------------------------------- moe


def vmoe_batch_prioritized_routing_capacity_ordered_token_dispatch_vision_classifier():
    """Vision MoE (V-MoE, Riquelme et al.) with Batch Prioritized Routing on 32x32 images: a
    ViT (4x4 patches, 64 tokens, width 128, 4 heads, three pre-LN layers) whose last two MLPs
    are sparse mixtures of 8 GELU experts with top-2 softmax routing over all 1024 tokens of
    the batch; tokens are ranked by their highest routing weight (argsort, descending) and a
    token's slot in each chosen expert's buffer is the cumulative count of earlier-ranked
    assignments (all first choices before any second choice), so under a capacity of
    2 x 1024 / 8 slots per expert the least confident assignments are dropped; dispatch and
    combine are one-hot [token, expert, slot] einsums; the auxiliary loss is the importance
    loss (squared coefficient of variation of the experts' summed gate weights) plus a
    Switch-style load term; mean-pooled tokens and a 100-way head; cross-entropy; Adam with
    warmup-cosine."""
    PS, D, H, NL, E, K, F, NC = 4, 128, 4, 3, 8, 2, 256, 100

    def moe(q, x):
        b, t, d = x.shape
        n = b * t
        cap = K * n // E
        xf = x.reshape(n, d)
        probs = jax.nn.softmax(xf @ q["router"], -1)
        gate, idx = lax.top_k(probs, K)
        order = jnp.argsort(-gate[:, 0])
        inv = jnp.argsort(order)
        oh = jax.nn.one_hot(idx, E)
        flat = jnp.swapaxes(oh[order], 0, 1).reshape(K * n, E)
        pos = (jnp.cumsum(flat, 0) - flat).reshape(K, n, E)
        pos = jnp.swapaxes(pos, 0, 1)[inv]
        slot = jnp.sum(pos * oh, -1).astype(I32)
        keep = (slot < cap).astype(F32)
        disp = oh[..., None] * jax.nn.one_hot(slot, cap)[:, :, None, :] * keep[..., None, None]
        dispatch = jnp.sum(disp, 1)
        combine = jnp.sum(disp * gate[..., None, None], 1)
        ein = jnp.einsum("nec,nd->ecd", dispatch, xf)
        h = jax.nn.gelu(jnp.einsum("ecd,edf->ecf", ein, q["w1"]) + q["b1"][:, None])
        eo = jnp.einsum("ecf,efd->ecd", h, q["w2"]) + q["b2"][:, None]
        y = jnp.einsum("nec,ecd->nd", combine, eo)
        imp = jnp.sum(probs, 0)
        aux = jnp.var(imp) / jnp.square(jnp.mean(imp))
        aux = aux + E * jnp.sum(jnp.mean(oh[:, 0], 0) * jnp.mean(probs, 0))
        return y.reshape(b, t, d), aux

    def loss(p, img, labels):
        B = img.shape[0]
        g = img.shape[1] // PS
        x = img.reshape(B, g, PS, g, PS, 3).transpose(0, 1, 3, 2, 4, 5).reshape(B, g * g, -1)
        x = x @ p["patch"] + p["pb"] + p["pos"]
        aux = 0.0
        for i, q in enumerate(p["layers"]):
            h = _ln(x, q["g1"], q["b1"])
            x = x + _mha(q["att"], h, h, H)
            h = _ln(x, q["g2"], q["b2"])
            if "moe" in q:
                y, a = moe(q["moe"], h)
                aux = aux + a
            else:
                y = jax.nn.gelu(h @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]
            x = x + y
        x = _ln(x, p["gf"], p["bf"])
        ce = _xent(jnp.mean(x, 1) @ p["head"] + p["hb"], labels)
        return ce + 0.005 * aux, ce

    def step(p, m, v, t, img, labels):
        (l, ce), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels)
        lr = _cosine_lr(t, 1e-3, 50000.0, warm=2000.0)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr)
        return l, ce, p, m, v
    layers = []
    for i in range(NL):
        q = {"g1": S(D), "b1": S(D), "att": _attn_params(D), "g2": S(D), "b2": S(D)}
        if i == 0:
            q.update(f1=S(D, F), fb1=S(F), f2=S(F, D), fb2=S(D))
        else:
            q["moe"] = {"router": S(D, E), "w1": S(E, D, F), "b1": S(E, F), "w2": S(E, F, D),
                        "b2": S(E, D)}
        layers.append(q)
    p = {"patch": S(PS * PS * 3, D), "pb": S(D), "pos": S(64, D), "layers": layers,
         "gf": S(D), "bf": S(D), "head": S(D, NC), "hb": S(NC)}
    return step, (p, p, p, S(), S(16, 32, 32, 3), S(16, dtype=I32))


# ----------------------------------------------------------------------------- vae


def multimodal_vae_product_of_experts_gaussian_fusion_subsampled_elbo_terms():
    """Multimodal VAE (MVAE, Wu & Goodman) over paired 28x28 binarised digit images and their
    10-way labels: an image encoder MLP (784-512-512) and a label encoder (embedding and a
    512-unit layer) each emit a Gaussian expert over a 32-dim latent; a posterior is the
    product of the available experts and the standard-normal prior expert -- precisions add
    and the mean is the precision-weighted average; with ELBO sub-sampling the loss sums
    three ELBOs, for the joint posterior and for each unimodal posterior, each decoding both
    modalities (Bernoulli image likelihood from the logits of a 512-512-784 MLP, categorical
    label likelihood weighted by 50) from reparameterised samples with passed-in noise, with
    an analytic KL to the prior annealed linearly over the first 5000 steps; Adam; the
    joint ELBO is returned."""
    Z, HID, NX, NC, LW = 32, 512, 784, 10, 50.0

    def img_enc(q, x):
        h = jax.nn.swish(x @ q["w1"] + q["b1"])
        h = jax.nn.swish(h @ q["w2"] + q["b2"])
        return h @ q["mu"] + q["mub"], h @ q["lv"] + q["lvb"]

    def lab_enc(q, y):
        h = jax.nn.swish(q["emb"][y] @ q["w1"] + q["b1"])
        return h @ q["mu"] + q["mub"], h @ q["lv"] + q["lvb"]

    def poe(experts):
        prec = 1.0 + sum(jnp.exp(-lv) for _, lv in experts)
        mu = sum(m * jnp.exp(-lv) for m, lv in experts) / prec
        return mu, -jnp.log(prec)

    def elbo(p, mu, lv, eps, x, y, beta):
        z = mu + jnp.exp(0.5 * lv) * eps
        h = jax.nn.swish(z @ p["dx"]["w1"] + p["dx"]["b1"])
        h = jax.nn.swish(h @ p["dx"]["w2"] + p["dx"]["b2"])
        xl = h @ p["dx"]["out"] + p["dx"]["ob"]
        ll_x = -jnp.sum(_bce_logits(xl, x), -1)
        hy = jax.nn.swish(z @ p["dy"]["w1"] + p["dy"]["b1"])
        ylog = jax.nn.log_softmax(hy @ p["dy"]["out"] + p["dy"]["ob"], -1)
        ll_y = jnp.take_along_axis(ylog, y[:, None], -1)[:, 0]
        kl = 0.5 * jnp.sum(jnp.exp(lv) + jnp.square(mu) - 1.0 - lv, -1)
        return jnp.mean(ll_x + LW * ll_y - beta * kl)

    def loss(p, x, y, eps, t):
        beta = jnp.minimum(1.0, t / 5000.0)
        ex, ey = img_enc(p["ex"], x), lab_enc(p["ey"], y)
        joint = elbo(p, *poe([ex, ey]), eps[0], x, y, beta)
        only_x = elbo(p, *poe([ex]), eps[1], x, y, beta)
        only_y = elbo(p, *poe([ey]), eps[2], x, y, beta)
        return -(joint + only_x + only_y), joint

    def step(p, m, v, t, x, y, eps):
        (l, joint), g = jax.value_and_grad(loss, has_aux=True)(p, x, y, eps, t)
        p, m, v = _adam_tree(p, m, v, g, t, lr=1e-3)
        return l, joint, p, m, v

    def head(i):
        return {"mu": S(i, Z), "mub": S(Z), "lv": S(i, Z), "lvb": S(Z)}
    p = {"ex": dict(head(HID), w1=S(NX, HID), b1=S(HID), w2=S(HID, HID), b2=S(HID)),
         "ey": dict(head(HID), emb=S(NC, 64), w1=S(64, HID), b1=S(HID)),
         "dx": {"w1": S(Z, HID), "b1": S(HID), "w2": S(HID, HID), "b2": S(HID),
                "out": S(HID, NX), "ob": S(NX)},
         "dy": {"w1": S(Z, HID), "b1": S(HID), "out": S(HID, NC), "ob": S(NC)}}
    B = 64
    return step, (p, p, p, S(), S(B, NX), S(B, dtype=I32), S(3, B, Z))


# ----------------------------------------------------------------------------- unet


def u2net_nested_residual_u_blocks_dilated_bottom_deep_supervision_saliency():
    """U^2-Net (Qin et al.) salient-object detector for 32x32 images, scaled down: every stage
    is a residual U-block (RSU) -- an input conv, a small encoder of 3x3 conv-BN-ReLU layers
    with 2x2 max pooling, a dilated (rate 2) conv at its bottom, a decoder that upsamples by
    nearest-neighbour repetition and concatenates the encoder features, and the input conv's
    output added back; the outer U has encoder stages RSU-3, RSU-3 and a dilated RSU-3F
    (no pooling; dilations 1, 2, 4, 2, 1) with 2x2 max pooling between them, and an RSU-3
    decoder stage on the 4x-upsampled bottom concatenated with the first stage's features
    (a long skip); 3x3 side convs on the decoder and bottom stages give saliency logit maps,
    the bottom one bilinearly resized to full resolution (jax.image.resize), and a 1x1 conv
    fuses them; deep supervision sums the binary cross-entropies of the fused and side
    maps; Adam; BN batch statistics returned."""

    def cbr(q, x, stats, dil=1):
        h, st = _bn(_conv(x, q["w"], dil=dil), q["g"], q["b"], (0, 1, 2))
        stats.append(st)
        return jax.nn.relu(h)

    def pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def up(x, like):
        f = like.shape[1] // x.shape[1]
        return x if f == 1 else jnp.repeat(jnp.repeat(x, f, 1), f, 2)

    def rsu(q, x, stats):
        hin = cbr(q["in"], x, stats)
        enc, h = [], hin
        for i, e in enumerate(q["enc"]):
            h = cbr(e, h if i == 0 else pool(h), stats)
            enc.append(h)
        h = cbr(q["bot"], h, stats, dil=2)
        for i in reversed(range(len(enc))):
            h = cbr(q["dec"][i], jnp.concatenate([up(h, enc[i]), enc[i]], -1), stats)
        return h + hin

    def rsuf(q, x, stats):
        hin = cbr(q["in"], x, stats)
        e1 = cbr(q["enc"][0], hin, stats)
        e2 = cbr(q["enc"][1], e1, stats, dil=2)
        b = cbr(q["bot"], e2, stats, dil=4)
        d2 = cbr(q["dec"][1], jnp.concatenate([b, e2], -1), stats, dil=2)
        return cbr(q["dec"][0], jnp.concatenate([d2, e1], -1), stats) + hin

    def loss(p, img, mask):
        stats = []
        x1 = rsu(p["en1"], img, stats)
        x2 = rsu(p["en2"], pool(x1), stats)
        x3 = rsuf(p["en3"], pool(x2), stats)
        d1 = rsu(p["de1"], jnp.concatenate([up(x3, x1), x1], -1), stats)
        sides = []
        for f, (w, b) in zip((d1, x3), p["side"]):
            o = _conv(f, w) + b
            if o.shape[1] != img.shape[1]:
                o = jax.image.resize(o, img.shape[:3] + (1,), "bilinear")
            sides.append(o)
        fused = jnp.concatenate(sides, -1) @ p["fuse"] + p["fb"]
        tgt = mask[..., None]
        l = sum(jnp.mean(_bce_logits(s, tgt)) for s in sides + [fused])
        return l, stats

    def step(p, m, v, t, img, mask):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, mask)
        p, m, v = _adam_tree(p, m, v, g, t, lr=1e-3, eps=1e-8)
        return l, stats, p, m, v

    def c(ci, co):
        return {"w": S(3, 3, ci, co), "g": S(co), "b": S(co)}

    def rsu_p(ci, mid, co, depth):
        enc = [c(co, mid)] + [c(mid, mid) for _ in range(depth - 2)]
        dec = [c(2 * mid, co)] + [c(2 * mid, mid) for _ in range(depth - 2)]
        return {"in": c(ci, co), "enc": enc, "bot": c(mid, mid), "dec": dec}
    p = {"en1": rsu_p(3, 8, 16, 3), "en2": rsu_p(16, 16, 32, 3), "en3": rsu_p(32, 32, 64, 3),
         "de1": rsu_p(64 + 16, 16, 16, 3),
         "side": [(S(3, 3, co, 1), S(1)) for co in (16, 64)], "fuse": S(2, 1), "fb": S(1)}
    return step, (p, p, p, S(), S(8, 32, 32, 3), S(8, 32, 32))


# ----------------------------------------------------------------------------- gnn


def meshgraphnets_encode_process_decode_edge_node_residual_mlps_cloth_dynamics():
    """MeshGraphNets (Pfaff et al.) learned simulator for cloth dynamics on a 512-node triangle
    mesh with 3072 directed mesh edges (passed-in sender and receiver arrays): node inputs
    are the current velocity (x_t - x_(t-1)) and a one-hot node type (normal / handle /
    boundary), edge inputs the relative world-space and mesh-space displacements and their
    norms, all normalised by passed-in running statistics; encoder MLPs (two hidden layers
    of 128, LayerNorm) embed both; four message-passing steps with unshared weights update
    every edge by an MLP of [edge, sender, receiver] and every node by an MLP of [node, sum
    of its incoming edges (jax.ops.segment_sum)], both residual; a decoder MLP predicts the
    normalised acceleration; the loss is the MSE to the normalised target acceleration on
    normal nodes only; Adam with exponential decay to 1e-6."""
    N, NE, NT, HID, STEPS = 512, 3072, 3, 128, 4

    def mlp(q, x, ln=True):
        h = jax.nn.relu(x @ q["w1"] + q["b1"])
        h = jax.nn.relu(h @ q["w2"] + q["b2"])
        h = h @ q["w3"] + q["b3"]
        return _ln(h, q["g"], q["gb"]) if ln else h

    def loss(p, pos, prev, mesh, ntype, snd, rcv, acc, nstat, estat, ostat):
        vel = pos - prev
        nf = jnp.concatenate([vel, jax.nn.one_hot(ntype, NT)], -1)
        dw = pos[snd] - pos[rcv]
        dm = mesh[snd] - mesh[rcv]
        ef = jnp.concatenate([dw, jnp.linalg.norm(dw, axis=-1, keepdims=True), dm,
                              jnp.linalg.norm(dm, axis=-1, keepdims=True)], -1)
        h = mlp(p["nenc"], (nf - nstat[0]) / (nstat[1] + 1e-8))
        e = mlp(p["eenc"], (ef - estat[0]) / (estat[1] + 1e-8))
        for q in p["proc"]:
            e = e + mlp(q["edge"], jnp.concatenate([e, h[snd], h[rcv]], -1))
            agg = jax.ops.segment_sum(e, rcv, N)
            h = h + mlp(q["node"], jnp.concatenate([h, agg], -1))
        pred = mlp(p["dec"], h, ln=False)
        tgt = (acc - ostat[0]) / (ostat[1] + 1e-8)
        w = (ntype == 0).astype(F32)
        return jnp.sum(jnp.sum(jnp.square(pred - tgt), -1) * w) / jnp.maximum(jnp.sum(w), 1.0)

    def step(p, m, v, t, pos, prev, mesh, ntype, snd, rcv, acc, nstat, estat, ostat):
        l, g = jax.value_and_grad(loss)(p, pos, prev, mesh, ntype, snd, rcv, acc, nstat,
                                        estat, ostat)
        lr = 1e-4 * 0.1 ** (t / 5e6) + 1e-6
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr)
        return l, p, m, v

    def net(i, o):
        return {"w1": S(i, HID), "b1": S(HID), "w2": S(HID, HID), "b2": S(HID), "w3": S(HID, o),
                "b3": S(o), "g": S(o), "gb": S(o)}
    proc = [{"edge": net(3 * HID, HID), "node": net(2 * HID, HID)} for _ in range(STEPS)]
    p = {"nenc": net(3 + NT, HID), "eenc": net(7, HID), "proc": proc, "dec": net(HID, 3)}
    return step, (p, p, p, S(), S(N, 3), S(N, 3), S(N, 2), S(N, dtype=I32),
                  S(NE, dtype=I32), S(NE, dtype=I32), S(N, 3), S(2, 3 + NT), S(2, 7),
                  S(2, 3))


# ----------------------------------------------------------------------------- quantization


def llm_int8_vectorwise_quant_outlier_feature_decomposition_int8_dot_decoder_lm():
    """LLM.int8() (Dettmers et al.) mixed-precision decomposition in the linear layers of a
    two-layer decoder LM (width 128, 4 heads, 64 tokens, 512-word vocabulary): input feature
    columns whose absolute maximum over the batch's tokens exceeds 6 are outliers and are
    multiplied in float32, while the rest are quantised vector-wise -- int8 with one absmax
    scale per token row of the activations and one per output column of the weights -- and
    multiplied by a real int8 x int8 -> int32 lax.dot_general whose result is dequantised
    by the outer product of the scales; the quantised product reaches the loss in the
    forward pass only, the float product supplying the gradient (straight-through); the
    attention scores and the LM head stay in float32; cross-entropy; AdamW with
    warmup-cosine; the mean fraction of outlier columns is returned."""
    V, D, H, T, F, NL, THR = 512, 128, 4, 64, 512, 2, 6.0
    DH = D // H

    def int8_linear(x, w, b, fracs):
        xf = x.reshape(-1, x.shape[-1])
        out = jnp.max(jnp.abs(lax.stop_gradient(xf)), 0) > THR
        fracs.append(jnp.mean(out.astype(F32)))
        xr = jnp.where(out, 0.0, xf)
        xo = jnp.where(out, xf, 0.0)
        wr = jnp.where(out[:, None], 0.0, w)
        sx = lax.stop_gradient(jnp.max(jnp.abs(xr), 1, keepdims=True) / 127.0 + 1e-8)
        sw = lax.stop_gradient(jnp.max(jnp.abs(wr), 0, keepdims=True) / 127.0 + 1e-8)
        xq = jnp.clip(jnp.round(xr / sx), -127, 127).astype(I8)
        wq = jnp.clip(jnp.round(wr / sw), -127, 127).astype(I8)
        acc = lax.dot_general(xq, wq, (((1,), (0,)), ((), ())), preferred_element_type=I32)
        yq = acc.astype(F32) * sx * sw
        yf = xr @ w
        y = yf + lax.stop_gradient(yq - yf) + xo @ w + b
        return y.reshape(*x.shape[:-1], -1)

    def layer(q, x, fracs):
        b, t, d = x.shape
        h = _ln(x, q["g1"], q["b1"])
        qkv = int8_linear(h, q["qkv"], q["qkvb"], fracs)
        qq, kk, vv = (a.reshape(b, t, H, DH) for a in jnp.split(qkv, 3, -1))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(DH)
        s = jnp.where(_causal(t)[None, None], s, -1e9)
        a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d)
        x = x + int8_linear(a, q["o"], q["ob"], fracs)
        h = _ln(x, q["g2"], q["b2"])
        h = jax.nn.gelu(int8_linear(h, q["f1"], q["fb1"], fracs))
        return x + int8_linear(h, q["f2"], q["fb2"], fracs)

    def loss(p, tok, tgt):
        fracs = []
        x = p["emb"][tok] + p["pos"]
        for q in p["layers"]:
            x = layer(q, x, fracs)
        logits = _ln(x, p["gf"], p["bf"]) @ p["emb"].T
        return _xent(logits, tgt), sum(fracs) / len(fracs)

    def step(p, m, v, t, tok, tgt):
        (l, frac), g = jax.value_and_grad(loss, has_aux=True)(p, tok, tgt)
        lr = _cosine_lr(t, 3e-4, 40000.0, warm=1000.0)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.95, wd=0.1)
        return l, frac, p, m, v
    q = {"g1": S(D), "b1": S(D), "qkv": S(D, 3 * D), "qkvb": S(3 * D), "o": S(D, D),
         "ob": S(D), "g2": S(D), "b2": S(D), "f1": S(D, F), "fb1": S(F), "f2": S(F, D),
         "fb2": S(D)}
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [dict(q) for _ in range(NL)], "gf": S(D),
         "bf": S(D)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T, dtype=I32))


# ----------------------------------------------------------------------------- remat


def remat_longnet_dilated_segment_attention_scanned_layers_checkpoint_dots_policy():
    """LongNet-style (Ding et al.) decoder LM with dilated attention over 256 tokens, trained
    with rematerialisation: every layer mixes three (segment length, dilation) branches --
    (64, 1), (128, 2) and (256, 4) -- each splitting the sequence into segments, keeping every
    r-th position (reshape and index), running causal attention inside the sparsified
    segment and scattering the outputs back (zero padding along the dilation axis); the
    branches are combined per position by softmax weights of their attention log-sum-exps,
    a branch that skips a position giving it no weight; four pre-LN layers (width 128, 4
    heads, GELU FFN) are stacked and run by lax.scan over a jax.checkpoint'ed layer with the
    checkpoint_dots policy (matmul and einsum outputs saved, softmaxes and norms
    recomputed); cross-entropy; AdamW with clipping."""
    V, D, H, T, NL = 512, 128, 4, 256, 4
    DH = D // H
    BRANCHES = ((64, 1), (128, 2), (256, 4))

    def branch(qq, kk, vv, w, r):
        b, t, h, d = qq.shape
        ns, m = t // w, w // r

        def sel(a):
            return a.reshape(b, ns, m, r, h, d)[:, :, :, 0]
        s = jnp.einsum("bnqhd,bnkhd->bnhqk", sel(qq), sel(kk)) / math.sqrt(d)
        s = jnp.where(_causal(m), s, -1e9)
        lse = jax.nn.logsumexp(s, -1)
        o = jnp.einsum("bnhqk,bnkhd->bnqhd", jnp.exp(s - lse[..., None]), sel(vv))
        o = jnp.pad(o[:, :, :, None], ((0, 0), (0, 0), (0, 0), (0, r - 1), (0, 0), (0, 0)))
        lse = jnp.transpose(lse, (0, 1, 3, 2))[:, :, :, None]
        lse = jnp.pad(lse, ((0, 0), (0, 0), (0, 0), (0, r - 1), (0, 0)), constant_values=-1e9)
        return o.reshape(b, t, h, d), lse.reshape(b, t, h)

    def layer(x, q):
        b, t, d = x.shape
        h = _ln(x, q["g1"], q["b1"])
        qq, kk, vv = ((h @ q[n]).reshape(b, t, H, DH) for n in ("wq", "wk", "wv"))
        outs, lses = zip(*(branch(qq, kk, vv, w, r) for w, r in BRANCHES))
        wts = jax.nn.softmax(jnp.stack(lses), 0)
        o = sum(wi[..., None] * oi for wi, oi in zip(wts, outs)).reshape(b, t, d)
        x = x + o @ q["wo"]
        h = _ln(x, q["g2"], q["b2"])
        return x + jax.nn.gelu(h @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"], None
    layer_r = jax.checkpoint(layer, policy=CP.checkpoint_dots)

    def loss(p, tok, tgt):
        x = p["emb"][tok] + p["pos"]
        x, _ = lax.scan(layer_r, x, p["stack"])
        return _xent(_ln(x, p["gf"], p["bf"]) @ p["out"], tgt)

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=3e-4, b2=0.98, wd=0.01)
        return l, p, m, v
    stack = {"g1": S(NL, D), "b1": S(NL, D), "wq": S(NL, D, D), "wk": S(NL, D, D),
             "wv": S(NL, D, D), "wo": S(NL, D, D), "g2": S(NL, D), "b2": S(NL, D),
             "f1": S(NL, D, 4 * D), "fb1": S(NL, 4 * D), "f2": S(NL, 4 * D, D),
             "fb2": S(NL, D)}
    p = {"emb": S(V, D), "pos": S(T, D), "stack": stack, "gf": S(D), "bf": S(D),
         "out": S(D, V)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T, dtype=I32))


def remat_mobilenetv4_universal_inverted_bottleneck_save_any_names_but_expanded():
    """MobileNetV4-style (Qin et al. 2024) classifier on 32x32 images built from Universal
    Inverted Bottleneck blocks -- an optional depthwise conv before the expansion, a 1x1
    expansion, an optional (possibly strided) depthwise conv after it and a 1x1 projection,
    giving the ExtraDW, inverted-bottleneck, ConvNext-like and FFN variants -- each block a
    jax.checkpoint with the save_any_names_but_these("expanded") policy: the block's
    intermediates are tagged with checkpoint_name ("start_dw", "expanded", "mid_dw",
    "projected") and every tagged value except the wide expanded activation is saved; BN
    after every conv and ReLU after the expansion and the middle depthwise conv, layer scale
    and identity residuals where shapes allow; a 3x3 stride-2 stem (24), six blocks of all
    four kinds, a 1x1 conv to 320, global pooling and a linear head; cross-entropy; AdamW
    with cosine decay; BN batch statistics returned."""
    CFG = ((3, 3, 4, 32, 2), (0, 3, 4, 32, 1), (3, 0, 4, 64, 2), (0, 0, 2, 64, 1),
           (3, 3, 4, 96, 1), (0, 3, 4, 96, 1))

    def uib(q, x, cfg):
        sk, mk, _, co, s = cfg
        st = []

        def bn(n, h, relu):
            h, s_ = _bn(h, n["g"], n["b"], (0, 1, 2))
            st.append(s_)
            return jax.nn.relu(h) if relu else h
        h = x
        if sk:
            h = _conv(h, q["dw0"], 1 if mk else s, groups=h.shape[-1])
            h = checkpoint_name(bn(q["n0"], h, False), "start_dw")
        h = checkpoint_name(bn(q["n1"], h @ q["e"], True), "expanded")
        if mk:
            h = checkpoint_name(bn(q["n2"], _conv(h, q["dw1"], s, groups=h.shape[-1]), True),
                                "mid_dw")
        h = checkpoint_name(bn(q["n3"], h @ q["p"], False), "projected")
        if "ls" in q:
            h = x + q["ls"] * h
        return h, st
    uib_r = jax.checkpoint(uib, policy=CP.save_any_names_but_these("expanded"),
                           static_argnums=(2,))

    def loss(p, img, labels):
        stats = []
        h, st = _bn(_conv(img, p["stem"], 2), p["sn"]["g"], p["sn"]["b"], (0, 1, 2))
        x = jax.nn.relu(h)
        stats.append(st)
        for q, cfg in zip(p["blocks"], CFG):
            x, st = uib_r(q, x, cfg)
            stats.extend(st)
        h, st = _bn(x @ p["head"], p["hn"]["g"], p["hn"]["b"], (0, 1, 2))
        stats.append(st)
        h = jnp.mean(jax.nn.relu(h), (1, 2))
        return _xent(h @ p["fc"] + p["fcb"], labels), stats

    def step(p, m, v, t, img, labels):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels)
        lr = _cosine_lr(t, 2e-3, 100000.0, warm=1000.0)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr, wd=0.05)
        return l, stats, p, m, v

    def nb(c):
        return {"g": S(c), "b": S(c)}
    blocks, ci = [], 24
    for sk, mk, ex, co, s in CFG:
        e = ci * ex
        q = {"e": S(ci, e), "n1": nb(e), "p": S(e, co), "n3": nb(co)}
        if sk:
            q.update(dw0=S(sk, sk, 1, ci), n0=nb(ci))
        if mk:
            q.update(dw1=S(mk, mk, 1, e), n2=nb(e))
        if s == 1 and ci == co:
            q["ls"] = S(co)
        blocks.append(q)
        ci = co
    p = {"stem": S(3, 3, 3, 24), "sn": nb(24), "blocks": blocks, "head": S(ci, 320),
         "hn": nb(320), "fc": S(320, 100), "fcb": S(100)}
    return step, (p, p, p, S(), S(16, 32, 32, 3), S(16, dtype=I32))


# ----------------------------------------------------------------------------- custom_vjp


_LXENT_CHUNKS = 4


@jax.custom_vjp
def _chunked_linear_xent(h, w, labels):
    n = h.shape[0]
    c = n // _LXENT_CHUNKS
    total = 0.0
    for i in range(_LXENT_CHUNKS):
        logits = h[i * c:(i + 1) * c] @ w
        lab = labels[i * c:(i + 1) * c]
        total = total + jnp.sum(jax.nn.logsumexp(logits, -1)
                                - jnp.take_along_axis(logits, lab[:, None], -1)[:, 0])
    return total / n


def _chunked_linear_xent_fwd(h, w, labels):
    n = h.shape[0]
    c = n // _LXENT_CHUNKS
    total, dh, dw = 0.0, [], jnp.zeros_like(w)
    for i in range(_LXENT_CHUNKS):
        hc, lab = h[i * c:(i + 1) * c], labels[i * c:(i + 1) * c]
        logits = hc @ w
        lse = jax.nn.logsumexp(logits, -1)
        total = total + jnp.sum(lse - jnp.take_along_axis(logits, lab[:, None], -1)[:, 0])
        d = (jnp.exp(logits - lse[:, None]) - jax.nn.one_hot(lab, w.shape[1], dtype=h.dtype)) / n
        dh.append(d @ w.T)
        dw = dw + hc.T @ d
    return total / n, (jnp.concatenate(dh, 0), dw)


def _chunked_linear_xent_bwd(res, g):
    dh, dw = res
    return g * dh, g * dw, None


_chunked_linear_xent.defvjp(_chunked_linear_xent_fwd, _chunked_linear_xent_bwd)


def custom_vjp_chunked_fused_linear_cross_entropy_precomputed_grads_decoder_lm():
    """Decoder LM whose output projection and cross-entropy form one jax.custom_vjp function in
    the style of fused linear-cross-entropy kernels: the forward pass walks the 512 tokens in
    four chunks of 128, forming each chunk's logits over the 2048-word vocabulary, its
    log-sum-exp and loss, and immediately the chunk's gradients -- (softmax - onehot) / N
    multiplied back into the hidden states (d h = d W^T) and accumulated into the weight
    gradient (d W += h^T d) -- so no full logit tensor outlives a chunk; the saved residuals
    are just those two gradients and the backward pass scales them by the incoming
    cotangent (the integer labels get None); the trunk is two pre-LN layers of width 128
    with 4 heads, rotary embeddings and a GELU MLP; AdamW with warmup-cosine and clipping."""
    V, D, H, T, NL = 2048, 128, 4, 64, 2
    DH = D // H

    def attn(q, x):
        b, t, d = x.shape
        qq = _rope((x @ q["wq"]).reshape(b, t, H, DH))
        kk = _rope((x @ q["wk"]).reshape(b, t, H, DH))
        vv = (x @ q["wv"]).reshape(b, t, H, DH)
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(DH)
        s = jnp.where(_causal(t)[None, None], s, -1e9)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d)
        return o @ q["wo"]

    def loss(p, tok, tgt):
        x = p["emb"][tok]
        for q in p["layers"]:
            x = x + attn(q, _ln(x, q["g1"], q["b1"]))
            h = _ln(x, q["g2"], q["b2"])
            x = x + jax.nn.gelu(h @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]
        h = _ln(x, p["gf"], p["bf"])
        return _chunked_linear_xent(h.reshape(-1, D), p["out"], tgt.reshape(-1))

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        lr = _cosine_lr(t, 6e-4, 60000.0, warm=1000.0)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.95, wd=0.1)
        return l, p, m, v
    q = {"g1": S(D), "b1": S(D), "wq": S(D, D), "wk": S(D, D), "wv": S(D, D), "wo": S(D, D),
         "g2": S(D), "b2": S(D), "f1": S(D, 4 * D), "fb1": S(4 * D), "f2": S(4 * D, D),
         "fb2": S(D)}
    p = {"emb": S(V, D), "layers": [dict(q) for _ in range(NL)], "gf": S(D), "bf": S(D),
         "out": S(D, V)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T, dtype=I32))


# ----------------------------------------------------------------------------- control


def jem_energy_based_classifier_sgld_fori_replay_buffer_cond_reinit_joint_training():
    """Joint Energy-based Model (JEM, Grathwohl et al.): a small normalisation-free residual
    CNN on 16x16 RGB images is both a 10-way classifier and an energy model
    E(x) = -logsumexp f(x); every step draws negative samples by stochastic-gradient
    Langevin dynamics -- the starting points come from a persistent replay buffer of 512
    images (passed-in indices), except that a lax.cond switches to uniform noise for the
    whole batch during the first 1000 steps and a passed-in per-example mask reinitialises
    about 5% of them afterwards; a lax.fori_loop of 20 steps then moves x by -grad_x E(x)
    plus 0.01 times passed-in Gaussian noise read by dynamic indexing, with the parameters
    held fixed (stop_gradient); the samples are written back into the buffer with
    .at[].set; the loss is the cross-entropy on labelled data plus E(x_data) - E(x_sample)
    and a small energy-magnitude penalty; Adam; the updated buffer is returned."""
    NBUF, NSTEP, NC, C = 512, 20, 10, 64

    def f(q, x):
        h = jax.nn.swish(_conv(x, q["c0"]) + q["b0"])
        for blk in q["blocks"]:
            u = jax.nn.swish(_conv(h, blk["c1"]) + blk["b1"])
            h = h + _conv(u, blk["c2"]) + blk["b2"]
        h = jax.nn.swish(_conv(h, q["down"], 2) + q["db"])
        return jnp.mean(h, (1, 2)) @ q["fc"] + q["fcb"]

    def energy(q, x):
        return -jax.nn.logsumexp(f(q, x), -1)

    def loss(p, x, y, xs):
        logits = f(p, x)
        e_data = -jax.nn.logsumexp(logits, -1)
        e_samp = energy(p, xs)
        gen = jnp.mean(e_data) - jnp.mean(e_samp)
        reg = 0.01 * (jnp.mean(jnp.square(e_data)) + jnp.mean(jnp.square(e_samp)))
        ce = _xent(logits, y)
        return ce + gen + reg, (ce, gen)

    def step(p, m, v, t, buf, idx, x, y, noise_init, reinit, sgld_noise):
        ps = lax.stop_gradient(p)
        x0 = lax.cond(t < 1000.0, lambda a, b: a,
                      lambda a, b: jnp.where(reinit[:, None, None, None], a, b),
                      noise_init, buf[idx])

        def body(i, xs):
            gx = jax.grad(lambda a: jnp.sum(energy(ps, a)))(xs)
            return xs - gx + 0.01 * sgld_noise[i]
        xs = lax.stop_gradient(lax.fori_loop(0, NSTEP, body, x0))
        buf = buf.at[idx].set(xs)
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, x, y, xs)
        p, m, v = _adam_tree(p, m, v, g, t, lr=1e-4)
        return l, aux, p, m, v, buf
    blocks = [{"c1": S(3, 3, C, C), "b1": S(C), "c2": S(3, 3, C, C), "b2": S(C)}
              for _ in range(2)]
    p = {"c0": S(3, 3, 3, C), "b0": S(C), "blocks": blocks, "down": S(3, 3, C, 2 * C),
         "db": S(2 * C), "fc": S(2 * C, NC), "fcb": S(NC)}
    B = 32
    return step, (p, p, p, S(), S(NBUF, 16, 16, 3), S(B, dtype=I32), S(B, 16, 16, 3),
                  S(B, dtype=I32), S(B, 16, 16, 3), S(B, dtype=jnp.bool_),
                  S(NSTEP, B, 16, 16, 3))


def neural_cellular_automata_growing_fori_stochastic_update_alive_mask_switch_damage():
    """Growing neural cellular automata (Mordvintsev et al.) trained to grow and regenerate a
    32x32 RGBA target from a pool of 16-channel cell states: each update perceives the grid
    with fixed depthwise identity, Sobel-x and Sobel-y filters (48 channels), a per-cell MLP
    (1x1 convs 48 -> 128 -> 16) proposes a residual update applied only where a passed-in
    uniform exceeds 0.5 (stochastic, asynchronous cells), and only cells whose 3x3
    max-pooled alpha exceeds 0.1 both before and after the update survive (alive masking); before
    the 48-step lax.fori_loop rollout one of three damage patterns (none, a circular hole,
    the right half erased) is applied to the pool batch by lax.switch on a passed-in index;
    the loss is the MSE of the RGBA channels to the target; Adam on per-variable
    L2-normalised gradients with a step decay; the final states go back to the pool."""
    HW, CH, HID, STEPS = 32, 16, 128, 48
    ident = np.zeros((3, 3), np.float32)
    ident[1, 1] = 1.0
    sx = np.outer([1.0, 2.0, 1.0], [-1.0, 0.0, 1.0]).astype(np.float32) / 8.0
    filt = np.stack([ident, sx, sx.T], -1)
    KERN = np.tile(filt, (1, 1, CH))[:, :, None, :]
    yy, xx = np.meshgrid(np.arange(HW), np.arange(HW), indexing="ij")
    HOLE = (((yy - 16) ** 2 + (xx - 12) ** 2) > 36).astype(np.float32)[None, :, :, None]
    HALF = (xx < HW // 2).astype(np.float32)[None, :, :, None]

    def alive(x):
        a = lax.reduce_window(x[..., 3:4], -jnp.inf, lax.max, (1, 3, 3, 1), (1, 1, 1, 1),
                              "SAME")
        return a > 0.1

    def update(q, x, u):
        pre = alive(x)
        per = lax.conv_general_dilated(x, jnp.asarray(KERN), (1, 1), "SAME",
                                       dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                       feature_group_count=CH)
        dx = jax.nn.relu(per @ q["w1"] + q["b1"]) @ q["w2"]
        x = x + dx * (u > 0.5)
        return x * (pre & alive(x))

    def loss(p, seed, target, dmg, unif):
        x0 = lax.switch(dmg, [lambda s: s, lambda s: s * HOLE, lambda s: s * HALF], seed)
        x = lax.fori_loop(0, STEPS, lambda i, x: update(p, x, unif[i]), x0)
        return jnp.mean(jnp.square(x[..., :4] - target)), x

    def step(p, m, v, t, seed, target, dmg, unif):
        (l, x), g = jax.value_and_grad(loss, has_aux=True)(p, seed, target, dmg, unif)
        g = tmap(lambda a: a / (jnp.sqrt(jnp.sum(jnp.square(a))) + 1e-8), g)
        lr = 2e-3 * 0.1 ** jnp.floor(t / 2000.0)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr)
        return l, x, p, m, v
    p = {"w1": S(3 * CH, HID), "b1": S(HID), "w2": S(HID, CH)}
    B = 8
    return step, (p, p, p, S(), S(B, HW, HW, CH), S(B, HW, HW, 4), S(dtype=I32),
                  S(STEPS, B, HW, HW, 1))


# ----------------------------------------------------------------------------- sort


def lambdarank_delta_ndcg_weighted_pairwise_logistic_sorted_ideal_dcg_ranker():
    """LambdaRank (Burges et al.) learning to rank for web search, 32 queries of 48 candidate
    documents with 136 features (MSLR-style) and graded relevance 0-4: a three-layer MLP
    with batch-normalised inputs scores every document; within each query the current rank
    of every document comes from a descending argsort of the scores (inverted by a second
    argsort), the ideal DCG from jnp.sort of the gains 2^rel - 1 (descending, truncated at
    10), and every pair with differing relevance is weighted by |delta NDCG| -- the change
    in NDCG@10 from swapping the two documents' positions (stop-gradient) -- in a pairwise
    logistic loss log(1 + exp(-(s_i - s_j))); padded documents (passed-in mask) take no
    part; Adam; the batch NDCG@10 is returned."""
    L, NF, HID, KTRUNC = 48, 136, 256, 10

    def scores(p, x):
        xf = x.reshape(-1, NF)
        mu, var = jnp.mean(xf, 0), jnp.var(xf, 0)
        h = (x - mu) * lax.rsqrt(var + 1e-5)
        h = jax.nn.relu(h @ p["w1"] + p["b1"])
        h = jax.nn.relu(h @ p["w2"] + p["b2"])
        return (h @ p["w3"])[..., 0] + p["b3"]

    def disc(rank):
        return jnp.where(rank < KTRUNC, 1.0 / jnp.log2(rank + 2.0), 0.0)

    def loss(p, x, rel, valid):
        s = scores(p, x)
        sm = jnp.where(valid, s, -1e9)
        gain = jnp.where(valid, jnp.exp2(rel.astype(F32)) - 1.0, 0.0)
        rank = jnp.argsort(jnp.argsort(-lax.stop_gradient(sm), -1), -1).astype(F32)
        ideal = -jnp.sort(-gain, -1)
        idcg = jnp.sum(ideal * disc(jnp.arange(L, dtype=F32)), -1, keepdims=True)
        inv = 1.0 / jnp.maximum(idcg, 1e-6)
        d = disc(rank)
        delta = jnp.abs((gain[:, :, None] - gain[:, None, :]) * (d[:, :, None] - d[:, None, :]))
        delta = lax.stop_gradient(delta * inv[..., None])
        pair = (rel[:, :, None] > rel[:, None, :]) & valid[:, :, None] & valid[:, None, :]
        sdiff = s[:, :, None] - s[:, None, :]
        lam = jnp.where(pair, delta * jax.nn.softplus(-sdiff), 0.0)
        l = jnp.sum(lam) / jnp.maximum(jnp.sum(pair), 1)
        ndcg = jnp.mean(jnp.sum(gain * d, -1) * inv[:, 0])
        return l, ndcg

    def step(p, m, v, t, x, rel, valid):
        (l, ndcg), g = jax.value_and_grad(loss, has_aux=True)(p, x, rel, valid)
        p, m, v = _adam_tree(p, m, v, g, t, lr=1e-3)
        return l, ndcg, p, m, v
    p = {"w1": S(NF, HID), "b1": S(HID), "w2": S(HID, HID), "b2": S(HID), "w3": S(HID, 1),
         "b3": S()}
    Q = 32
    return step, (p, p, p, S(), S(Q, L, NF), S(Q, L, dtype=I32), S(Q, L, dtype=jnp.bool_))


# ----------------------------------------------------------------------------- fft


def complex_ratio_mask_speech_enhancement_rfft_stft_istft_overlap_add_sisnr():
    """Speech enhancement by complex ratio masking: the noisy 6272-sample waveform is framed
    into 48 frames of 256 samples with hop 128 (a gather by a constant index array),
    Hann-windowed and transformed by jnp.fft.rfft into 129 bins; a mask network reads the
    log-magnitude spectrogram through three 1-D convs over frames (kernel 3, the middle one
    dilated by 2, ReLU) and emits a bounded complex mask -- tanh of the norm as magnitude and
    the unit-normalised real / imaginary pair as phase -- that multiplies the noisy
    spectrum; jnp.fft.irfft, the synthesis window and overlap-add (the halves of consecutive
    frames summed by padding and reshaping) with window-power normalisation rebuild the
    waveform; the loss is the negative scale-invariant SNR to the clean signal plus a
    power-law-compressed magnitude L1 term against the clean spectrum; Adam with clipping;
    the SI-SNR is returned."""
    NFFT, HOP, NFR, CH = 256, 128, 48, 256
    NB = NFFT // 2 + 1
    NS = (NFR + 1) * HOP
    IDX = np.arange(NFR)[:, None] * HOP + np.arange(NFFT)[None, :]
    WIN = np.sqrt(np.hanning(NFFT + 1)[:-1]).astype(np.float32)
    wsq = np.zeros(NS, np.float32)
    for k in range(NFR):
        wsq[k * HOP:k * HOP + NFFT] += WIN ** 2
    WNORM = np.maximum(wsq, 1e-4).astype(np.float32)

    def stft(x):
        return jnp.fft.rfft(x[:, IDX] * WIN, axis=-1)

    def conv1(x, w, b, dil=1):
        return lax.conv_general_dilated(x, w, (1,), "SAME", rhs_dilation=(dil,),
                                        dimension_numbers=("NWC", "WIO", "NWC")) + b

    def loss(p, noisy, clean):
        spec = stft(noisy)
        feat = jnp.log(jnp.abs(spec) + 1e-6)
        h = jax.nn.relu(conv1(feat, p["c1"], p["b1"]))
        h = jax.nn.relu(conv1(h, p["c2"], p["b2"], 2))
        h = conv1(h, p["c3"], p["b3"])
        mr, mi = h[..., :NB], h[..., NB:]
        nrm = jnp.sqrt(mr * mr + mi * mi + 1e-8)
        mag = jnp.tanh(nrm)
        mask = lax.complex(mag * mr / nrm, mag * mi / nrm)
        est = spec * mask
        frames = jnp.fft.irfft(est, n=NFFT, axis=-1) * WIN
        a = jnp.pad(frames[..., :HOP], ((0, 0), (0, 1), (0, 0)))
        b = jnp.pad(frames[..., HOP:], ((0, 0), (1, 0), (0, 0)))
        y = (a + b).reshape(noisy.shape[0], NS) / WNORM
        ref = clean - jnp.mean(clean, -1, keepdims=True)
        y = y - jnp.mean(y, -1, keepdims=True)
        proj = jnp.sum(y * ref, -1, keepdims=True) / (jnp.sum(ref * ref, -1, keepdims=True) + 1e-8)
        st = proj * ref
        sisnr = 10.0 * jnp.log10(jnp.sum(st * st, -1) / (jnp.sum(jnp.square(y - st), -1) + 1e-8)
                                 + 1e-8)
        cmag = jnp.abs(stft(clean))
        spec_l1 = jnp.mean(jnp.abs(jnp.power(jnp.abs(est) + 1e-8, 0.3) - jnp.power(cmag + 1e-8, 0.3)))
        return -jnp.mean(sisnr) + spec_l1, jnp.mean(sisnr)

    def step(p, m, v, t, noisy, clean):
        (l, sisnr), g = jax.value_and_grad(loss, has_aux=True)(p, noisy, clean)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 5.0), t, lr=1e-3)
        return l, sisnr, p, m, v
    p = {"c1": S(3, NB, CH), "b1": S(CH), "c2": S(3, CH, CH), "b2": S(CH),
         "c3": S(3, CH, 2 * NB), "b3": S(2 * NB)}
    B = 8
    return step, (p, p, p, S(), S(B, NS), S(B, NS))


# ----------------------------------------------------------------------------- linalg


def deep_koopman_autoencoder_ridge_dmd_linalg_solve_multistep_latent_prediction():
    """Deep Koopman autoencoder (Lusch et al. / Takeishi et al.) for a nonlinear 16-dim
    dynamical system, 64 trajectories of 25 states: an MLP encoder lifts states to 32
    observables and an MLP decoder maps them back; the Koopman operator is not a parameter
    but fitted per batch by ridge-regularised dynamic mode decomposition on the first 16
    steps -- K = (Z0^T Z0 + lambda I)^(-1) Z0^T Z1 with jnp.linalg.solve -- and the loss adds
    reconstruction, one-step latent linearity over the fitting window, 8-step predictions
    from step 16 rolled out with successive powers of K and decoded, a hinge penalty on K's
    Frobenius norm above the latent width and weight decay; Adam; the relative prediction
    error is returned."""
    DX, DZ, HID, T0, NP_, LAMBDA = 16, 32, 128, 16, 8, 1e-3

    def mlp(q, x):
        h = jnp.tanh(x @ q["w1"] + q["b1"])
        h = jnp.tanh(h @ q["w2"] + q["b2"])
        return h @ q["w3"] + q["b3"]

    def loss(p, traj):
        z = mlp(p["enc"], traj)
        rec = jnp.mean(jnp.square(mlp(p["dec"], z) - traj))
        z0 = z[:, :T0 - 1].reshape(-1, DZ)
        z1 = z[:, 1:T0].reshape(-1, DZ)
        K = jnp.linalg.solve(z0.T @ z0 + LAMBDA * z0.shape[0] * jnp.eye(DZ), z0.T @ z1)
        lin = jnp.mean(jnp.square(z0 @ K - z1))
        zk, preds = z[:, T0], []
        for _ in range(NP_):
            zk = zk @ K
            preds.append(zk)
        zp = jnp.stack(preds, 1)
        xp = mlp(p["dec"], zp)
        true = traj[:, T0 + 1:T0 + 1 + NP_]
        pred = jnp.mean(jnp.square(xp - true))
        kpen = jax.nn.relu(jnp.sqrt(jnp.sum(jnp.square(K))) - math.sqrt(DZ))
        wd = sum(jnp.sum(jnp.square(w)) for w in leaves(p) if w.ndim == 2)
        rel = jnp.sqrt(jnp.sum(jnp.square(xp - true)) / jnp.sum(jnp.square(true)))
        return rec + lin + pred + 0.1 * kpen + 1e-6 * wd, rel

    def step(p, m, v, t, traj):
        (l, rel), g = jax.value_and_grad(loss, has_aux=True)(p, traj)
        p, m, v = _adam_tree(p, m, v, g, t, lr=1e-3)
        return l, rel, p, m, v

    def net(i, o):
        return {"w1": S(i, HID), "b1": S(HID), "w2": S(HID, HID), "b2": S(HID), "w3": S(HID, o),
                "b3": S(o)}
    p = {"enc": net(DX, DZ), "dec": net(DZ, DX)}
    return step, (p, p, p, S(), S(64, T0 + 1 + NP_, DX))


# ----------------------------------------------------------------------------- scatter/gather


def deep_interest_network_local_activation_unit_dice_minibatch_aware_regularization_ctr():
    """Deep Interest Network (DIN, Zhou et al.) click-through-rate model: each of 128 users has
    a behaviour history of up to 48 clicked goods (goods and category ids, padded, passed-in
    lengths), four profile fields and one candidate ad; embeddings (goods 20000 x 32,
    categories 500 x 16, profile 100 x 16) are gathered by index; the local activation unit
    -- an MLP with Dice activation on [e_b, e_a, e_b - e_a, e_b * e_a] -- gives each
    behaviour an unnormalised weight (no softmax) for a weighted sum of the history; the
    pooled interest, candidate and profile embeddings go through a 200-80 MLP with Dice
    (batch-statistics adaptive PReLU); binary cross-entropy; mini-batch aware
    regularisation penalises only the goods rows occurring in the batch, each occurrence
    weighted by the inverse of the row's passed-in global frequency and summed into
    per-row weights with .at[].add; Adam."""
    NG, NCAT, NPROF, DG, DC, L = 20000, 500, 100, 32, 16, 48
    DI = DG + DC

    def dice(q, s):
        mu, var = jnp.mean(s, 0), jnp.var(s, 0)
        pr = jax.nn.sigmoid((s - mu) * lax.rsqrt(var + 1e-8))
        return pr * s + (1.0 - pr) * q["alpha"] * s

    def loss(p, hg, hc, lens, prof, ag, ac, click, freq):
        B = hg.shape[0]
        valid = jnp.arange(L)[None, :] < lens[:, None]
        eb = jnp.concatenate([p["goods"][hg], p["cat"][hc]], -1)
        ea = jnp.concatenate([p["goods"][ag], p["cat"][ac]], -1)
        eab = jnp.broadcast_to(ea[:, None], eb.shape)
        u = jnp.concatenate([eb, eab, eb - eab, eb * eab], -1).reshape(B * L, 4 * DI)
        h = dice(p["au_d"], u @ p["au1"] + p["au_b1"])
        w = (h @ p["au2"] + p["au_b2"]).reshape(B, L)
        interest = jnp.sum(eb * (w * valid)[..., None], 1)
        pe = p["prof"][prof].reshape(B, -1)
        x = jnp.concatenate([pe, interest, ea], -1)
        x = dice(p["d1"], x @ p["w1"] + p["b1"])
        x = dice(p["d2"], x @ p["w2"] + p["b2"])
        z = (x @ p["w3"])[:, 0] + p["b3"]
        bce = jnp.mean(_bce_logits(z, click))
        ids = jnp.concatenate([hg, ag[:, None]], 1).reshape(-1)
        occ = jnp.concatenate([valid, jnp.ones((B, 1), bool)], 1).reshape(-1).astype(F32)
        roww = jnp.zeros((NG,)).at[ids].add(occ / freq[ids])
        mba = jnp.sum(roww * jnp.sum(jnp.square(p["goods"]), -1)) / B
        return bce + 0.01 * mba, bce

    def step(p, m, v, t, hg, hc, lens, prof, ag, ac, click, freq):
        (l, bce), g = jax.value_and_grad(loss, has_aux=True)(p, hg, hc, lens, prof, ag, ac,
                                                             click, freq)
        p, m, v = _adam_tree(p, m, v, g, t, lr=1e-3)
        return l, bce, p, m, v
    p = {"goods": S(NG, DG), "cat": S(NCAT, DC), "prof": S(NPROF, 16),
         "au1": S(4 * DI, 36), "au_b1": S(36), "au_d": {"alpha": S(36)}, "au2": S(36, 1),
         "au_b2": S(1), "w1": S(4 * 16 + 2 * DI, 200), "b1": S(200), "d1": {"alpha": S(200)},
         "w2": S(200, 80), "b2": S(80), "d2": {"alpha": S(80)}, "w3": S(80, 1), "b3": S()}
    B = 128
    return step, (p, p, p, S(), S(B, L, dtype=I32), S(B, L, dtype=I32), S(B, dtype=I32),
                  S(B, 4, dtype=I32), S(B, dtype=I32), S(B, dtype=I32), S(B), S(NG))


# ----------------------------------------------------------------------------- dynamic slices


def spanbert_span_masking_dynamic_update_slice_span_boundary_objective_encoder():
    """SpanBERT (Joshi et al.) pre-training on 64-token sequences: for every example four
    contiguous spans of up to 4 tokens (passed-in start positions and lengths) are masked by
    a lax.fori_loop that writes each span into the mask with lax.dynamic_update_slice
    (vmapped over examples), shorter spans trimmed by a position test, and the masked
    positions take the [MASK] embedding; a two-layer post-LN encoder (width 128, 4 heads,
    GELU); the masked-LM loss over masked positions plus the span-boundary objective: for
    every span the encoder outputs just outside it, cut with lax.dynamic_slice, and a
    relative-position embedding feed a two-layer GELU-LayerNorm head that predicts each
    token of the span (targets cut from the input with lax.dynamic_slice); both heads use
    the tied input embedding; AdamW with linear warmup and decay."""
    V, D, H, T, F, NL, NS, SL = 2000, 128, 4, 64, 512, 2, 4, 4

    def span_mask(starts, lens):
        def body(i, m):
            seg = (jnp.arange(SL) < lens[i]).astype(F32)
            cur = lax.dynamic_slice(m, (starts[i],), (SL,))
            return lax.dynamic_update_slice(m, jnp.maximum(cur, seg), (starts[i],))
        return lax.fori_loop(0, NS, body, jnp.zeros((T,), F32))

    def boundary(h, tok, s, n):
        left = lax.dynamic_slice(h, (s - 1, 0), (1, D))[0]
        right = lax.dynamic_slice(h, (s + n, 0), (1, D))[0]
        return left, right, lax.dynamic_slice(tok, (s,), (SL,))

    def loss(p, tok, starts, lens):
        mask = jax.vmap(span_mask)(starts, lens)
        x = jnp.where(mask[..., None] > 0, p["mask_emb"], p["emb"][tok]) + p["pos"]
        x = _ln(x, p["eg"], p["eb"])
        for q in p["layers"]:
            x = _ln(x + _mha(q["att"], x, x, H), q["g1"], q["b1"])
            x = _ln(x + jax.nn.gelu(x @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"], q["g2"], q["b2"])
        logp = jax.nn.log_softmax(x @ p["emb"].T + p["ob"], -1)
        nll = -jnp.take_along_axis(logp, tok[..., None], -1)[..., 0]
        mlm = jnp.sum(nll * mask) / jnp.maximum(jnp.sum(mask), 1.0)
        per_span = jax.vmap(boundary, (None, None, 0, 0))
        left, right, tgt = jax.vmap(per_span)(x, tok, starts, lens)
        B = tok.shape[0]
        z = jnp.concatenate([jnp.broadcast_to(left[:, :, None], (B, NS, SL, D)),
                             jnp.broadcast_to(right[:, :, None], (B, NS, SL, D)),
                             jnp.broadcast_to(p["rel"], (B, NS, SL, D))], -1)
        h = _ln(jax.nn.gelu(z @ p["s1"] + p["sb1"]), p["sg1"], p["sbb1"])
        h = _ln(jax.nn.gelu(h @ p["s2"] + p["sb2"]), p["sg2"], p["sbb2"])
        slp = jax.nn.log_softmax(h @ p["emb"].T + p["ob"], -1)
        snll = -jnp.take_along_axis(slp, tgt[..., None], -1)[..., 0]
        w = (jnp.arange(SL) < lens[..., None]).astype(F32)
        sbo = jnp.sum(snll * w) / jnp.maximum(jnp.sum(w), 1.0)
        return mlm + sbo, (mlm, sbo)

    def step(p, m, v, t, tok, starts, lens):
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, tok, starts, lens)
        lr = 1e-4 * jnp.minimum((t + 1.0) / 10000.0, jnp.maximum(0.0, 1.0 - t / 1e6))
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr, wd=0.01)
        return l, aux, p, m, v
    q = {"att": _attn_params(D), "g1": S(D), "b1": S(D), "f1": S(D, F), "fb1": S(F),
         "f2": S(F, D), "fb2": S(D), "g2": S(D), "b2": S(D)}
    p = {"emb": S(V, D), "mask_emb": S(D), "pos": S(T, D), "eg": S(D), "eb": S(D),
         "layers": [dict(q) for _ in range(NL)], "ob": S(V), "rel": S(SL, D),
         "s1": S(3 * D, D), "sb1": S(D), "sg1": S(D), "sbb1": S(D), "s2": S(D, D), "sb2": S(D),
         "sg2": S(D), "sbb2": S(D)}
    B = 16
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, NS, dtype=I32), S(B, NS, dtype=I32))


# ----------------------------------------------------------------------------- mixed precision


def bfloat16_fastspeech2_variance_adaptor_length_regulator_mel_decoder():
    """FastSpeech 2 (Ren et al.) text-to-mel model in bfloat16 with float32 master weights: 24
    phoneme tokens pass an encoder of two FFT blocks (self-attention and a two-conv 1-D
    feed-forward with kernel 3, post-LN) with sinusoidal positions; the variance adaptor
    has duration, pitch and energy predictors (two ReLU conv1d-LN layers and a linear
    output); the ground-truth pitch and energy are bucketised into 64 bins (comparisons
    against fixed boundaries) and their embeddings added; the length regulator expands the
    phoneme states to 80 mel frames by the ground-truth integer durations -- each frame's
    phoneme index counts the cumulative durations not exceeding it -- with frames past the
    total masked; a two-block FFT decoder and a linear layer predict 80 mel bins; the
    losses (mel L1, log-duration, pitch and energy MSE on non-padded phonemes),
    LayerNorms and softmaxes run in float32; Adam with the Noam schedule."""
    V, D, H, P, M, NMEL, NBIN, K, F = 80, 128, 2, 24, 80, 80, 64, 3, 512
    PITCH_BINS = np.linspace(-3.0, 3.0, NBIN - 1).astype(np.float32)
    bf = lambda a: a.astype(BF16)

    def ln(x, g, b):
        return bf(_ln(x.astype(F32), g, b))

    def conv1(x, w, b):
        return lax.conv_general_dilated(x, bf(w), (1,), "SAME",
                                        dimension_numbers=("NWC", "WIO", "NWC")) + bf(b)

    def fft_block(q, x, keymask):
        b, t, d = x.shape
        qq, kk, vv = ((x @ bf(q[n])).reshape(b, t, H, d // H) for n in ("wq", "wk", "wv"))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk, preferred_element_type=F32) / math.sqrt(d // H)
        s = jnp.where(keymask[:, None, None, :], s, -1e9)
        a = jnp.einsum("bhqk,bkhd->bqhd", bf(jax.nn.softmax(s, -1)), vv).reshape(b, t, d)
        x = ln(x + a @ bf(q["wo"]), q["g1"], q["b1"])
        h = jax.nn.relu(conv1(x, q["c1"], q["cb1"]))
        x = ln(x + conv1(h, q["c2"], q["cb2"]), q["g2"], q["b2"])
        return x * keymask[..., None].astype(BF16)

    def predictor(q, x):
        h = ln(jax.nn.relu(conv1(x, q["c1"], q["b1"])), q["g1"], q["bb1"])
        h = ln(jax.nn.relu(conv1(h, q["c2"], q["b2"])), q["g2"], q["bb2"])
        return (h @ bf(q["out"])).astype(F32)[..., 0] + q["ob"]

    def loss(p, ph, plen, dur, pitch, energy, mel):
        B = ph.shape[0]
        pmask = jnp.arange(P)[None, :] < plen[:, None]
        x = bf(p["emb"][ph] + _sinusoid(P, D))
        for q in p["enc"]:
            x = fft_block(q, x, pmask)
        logd = predictor(p["dur"], x)
        pp = predictor(p["pitch"], x)
        ep = predictor(p["energy"], x)
        pid = jnp.sum(pitch[..., None] > PITCH_BINS, -1)
        eid = jnp.sum(energy[..., None] > PITCH_BINS, -1)
        x = x + bf(p["pemb"][pid] + p["eemb"][eid])
        cum = jnp.cumsum(jnp.where(pmask, dur, 0), -1)
        frame = jnp.arange(M)
        idx = jnp.minimum(jnp.sum(cum[:, None, :] <= frame[None, :, None], -1), P - 1)
        fmask = frame[None, :] < cum[:, -1:]
        y = jnp.take_along_axis(x, idx[..., None], 1) + bf(jnp.asarray(_sinusoid(M, D)))
        for q in p["dec"]:
            y = fft_block(q, y, fmask)
        pred = (y @ bf(p["mel"])).astype(F32) + p["melb"]
        fw = fmask.astype(F32)[..., None]
        mel_l1 = jnp.sum(jnp.abs(pred - mel) * fw) / (jnp.maximum(jnp.sum(fw), 1.0) * NMEL)
        pw = pmask.astype(F32)
        npw = jnp.maximum(jnp.sum(pw), 1.0)
        dl = jnp.sum(jnp.square(logd - jnp.log(dur.astype(F32) + 1.0)) * pw) / npw
        pl = jnp.sum(jnp.square(pp - pitch) * pw) / npw
        el = jnp.sum(jnp.square(ep - energy) * pw) / npw
        return mel_l1 + dl + pl + el, mel_l1

    def step(p, m, v, t, ph, plen, dur, pitch, energy, mel):
        (l, mel_l1), g = jax.value_and_grad(loss, has_aux=True)(p, ph, plen, dur, pitch,
                                                                energy, mel)
        s = t + 1.0
        lr = D ** -0.5 * jnp.minimum(s ** -0.5, s * 4000.0 ** -1.5)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr, b2=0.98, eps=1e-9)
        return l, mel_l1, p, m, v
    blk = {"wq": S(D, D), "wk": S(D, D), "wv": S(D, D), "wo": S(D, D), "g1": S(D), "b1": S(D),
           "c1": S(K, D, F), "cb1": S(F), "c2": S(K, F, D), "cb2": S(D), "g2": S(D), "b2": S(D)}
    pred = {"c1": S(K, D, D), "b1": S(D), "g1": S(D), "bb1": S(D), "c2": S(K, D, D),
            "b2": S(D), "g2": S(D), "bb2": S(D), "out": S(D, 1), "ob": S()}
    p = {"emb": S(V, D), "enc": [dict(blk) for _ in range(2)], "dur": dict(pred),
         "pitch": dict(pred), "energy": dict(pred), "pemb": S(NBIN, D), "eemb": S(NBIN, D),
         "dec": [dict(blk) for _ in range(2)], "mel": S(D, NMEL), "melb": S(NMEL)}
    B = 16
    return step, (p, p, p, S(), S(B, P, dtype=I32), S(B, dtype=I32), S(B, P, dtype=I32),
                  S(B, P), S(B, P), S(B, M, NMEL))


# ----------------------------------------------------------------------------- optimizers


def adabound_dynamic_bound_clipped_adam_to_sgd_transition_wide_resnet_classifier():
    """AdaBound (Luo et al.) training of a pre-activation Wide ResNet on 32x32 images (a 3x3
    stem of 16 and three groups of one basic block of widths 64 / 128 / 256, BN-ReLU before
    every conv, 1x1 shortcuts where shapes change, dropout between a block's two convs from
    a passed-in raw key): Adam moments with bias correction, but the element-wise step
    alpha / (sqrt(v_hat) + eps) is clipped into the dynamic band
    [0.1 - 0.1 / ((1 - b2) t + 1), 0.1 + 0.1 / ((1 - b2) t)] that shrinks towards the final
    SGD rate 0.1, so training moves from Adam to SGD, and scaled by 1 / sqrt(t); the base
    rate alpha decays by 10x every 60000 steps; decoupled weight decay 5e-4 on
    the conv and dense kernels; label-smoothed cross-entropy; BN batch statistics
    returned."""
    B1, B2, FINAL = 0.9, 0.999, 0.1

    def bnr(q, x, stats):
        h, st = _bn(x, q["g"], q["b"], (0, 1, 2))
        stats.append(st)
        return jax.nn.relu(h)

    def block(q, x, stats, stride, key):
        o = bnr(q["n1"], x, stats)
        sc = _conv(o, q["sc"], stride) if "sc" in q else x
        h = _conv(o, q["c1"], stride)
        h = bnr(q["n2"], h, stats)
        h = jnp.where(jax.random.bernoulli(key, 0.7, h.shape), h / 0.7, 0.0)
        return sc + _conv(h, q["c2"])

    def loss(p, img, labels, key):
        stats = []
        keys = jax.random.split(key, 3)
        x = _conv(img, p["stem"])
        for i, q in enumerate(p["groups"]):
            x = block(q, x, stats, 1 if i == 0 else 2, keys[i])
        x = bnr(p["nf"], x, stats)
        return _smooth_xent(jnp.mean(x, (1, 2)) @ p["fc"] + p["fcb"], labels), stats

    def step(p, m, v, t, img, labels, key):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels, key)
        s = t + 1.0
        alpha = 1e-3 * 0.1 ** jnp.floor(t / 60000.0)
        final = FINAL * alpha / 1e-3
        lower = final * (1.0 - 1.0 / ((1.0 - B2) * s + 1.0))
        upper = final * (1.0 + 1.0 / ((1.0 - B2) * s))
        m = tmap(lambda m, g: B1 * m + (1 - B1) * g, m, g)
        v = tmap(lambda v, g: B2 * v + (1 - B2) * g * g, v, g)
        c1, c2 = 1.0 - B1 ** s, 1.0 - B2 ** s

        def upd(w, m, v):
            eta = jnp.clip(alpha / (jnp.sqrt(v / c2) + 1e-8), lower, upper) / jnp.sqrt(s)
            w = w - eta * m / c1
            return w - (alpha * 5e-4 * w if w.ndim >= 2 else 0.0)
        p = tmap(upd, p, m, v)
        return l, stats, p, m, v

    def nb(c):
        return {"g": S(c), "b": S(c)}
    groups, ci = [], 16
    for co in (64, 128, 256):
        groups.append({"n1": nb(ci), "c1": S(3, 3, ci, co), "n2": nb(co), "c2": S(3, 3, co, co),
                       "sc": S(1, 1, ci, co)})
        ci = co
    p = {"stem": S(3, 3, 3, 16), "groups": groups, "nf": nb(256), "fc": S(256, 10),
         "fcb": S(10)}
    return step, (p, p, p, S(), S(32, 32, 32, 3), S(32, dtype=I32), S(2, dtype=U32))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [deepsdf_auto_decoder_per_shape_latent_codes_clamped_l1_weightnorm_skip_mlp,
            neumf_gmf_mlp_tower_fusion_bpr_sampled_negatives_implicit_recommender],
    "cnn": [dla_deep_layer_aggregation_hierarchical_tree_roots_iterative_stage_merge_classifier,
            dual_path_network_shared_residual_densely_connected_channel_split_grouped_classifier],
    "transformer": [fastformer_additive_attention_global_query_key_elementwise_news_classifier,
                    charformer_gbst_gradient_based_subword_block_scoring_downsampled_byte_encoder],
    "rnn": [skip_rnn_straight_through_binary_state_update_gate_budget_loss_scan,
            fast_weights_associative_memory_rnn_hebbian_inner_loop_layernorm_scan],
    "moe": [vmoe_batch_prioritized_routing_capacity_ordered_token_dispatch_vision_classifier],
    "vae": [multimodal_vae_product_of_experts_gaussian_fusion_subsampled_elbo_terms],
    "unet": [u2net_nested_residual_u_blocks_dilated_bottom_deep_supervision_saliency],
    "gnn": [meshgraphnets_encode_process_decode_edge_node_residual_mlps_cloth_dynamics],
    "quant": [llm_int8_vectorwise_quant_outlier_feature_decomposition_int8_dot_decoder_lm],
    "remat": [remat_longnet_dilated_segment_attention_scanned_layers_checkpoint_dots_policy,
              remat_mobilenetv4_universal_inverted_bottleneck_save_any_names_but_expanded],
    "custom_vjp": [custom_vjp_chunked_fused_linear_cross_entropy_precomputed_grads_decoder_lm],
    "control": [jem_energy_based_classifier_sgld_fori_replay_buffer_cond_reinit_joint_training,
                neural_cellular_automata_growing_fori_stochastic_update_alive_mask_switch_damage],
    "sort": [lambdarank_delta_ndcg_weighted_pairwise_logistic_sorted_ideal_dcg_ranker],
    "fft": [complex_ratio_mask_speech_enhancement_rfft_stft_istft_overlap_add_sisnr],
    "linalg": [deep_koopman_autoencoder_ridge_dmd_linalg_solve_multistep_latent_prediction],
    "scatter_gather": [
        deep_interest_network_local_activation_unit_dice_minibatch_aware_regularization_ctr],
    "dynamic": [spanbert_span_masking_dynamic_update_slice_span_boundary_objective_encoder],
    "mixed": [bfloat16_fastspeech2_variance_adaptor_length_regulator_mel_decoder],
    "optimizer": [adabound_dynamic_bound_clipped_adam_to_sgd_transition_wide_resnet_classifier],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["deepsdf_auto_decoder_per_shape_latent_codes_clamped_l1_weightnorm_skip_mlp",
           "dla_deep_layer_aggregation_hierarchical_tree_roots_iterative_stage_merge_classifier",
           "fastformer_additive_attention_global_query_key_elementwise_news_classifier",
           "skip_rnn_straight_through_binary_state_update_gate_budget_loss_scan",
           "vmoe_batch_prioritized_routing_capacity_ordered_token_dispatch_vision_classifier",
           "multimodal_vae_product_of_experts_gaussian_fusion_subsampled_elbo_terms",
           "meshgraphnets_encode_process_decode_edge_node_residual_mlps_cloth_dynamics",
           "llm_int8_vectorwise_quant_outlier_feature_decomposition_int8_dot_decoder_lm",
           "remat_mobilenetv4_universal_inverted_bottleneck_save_any_names_but_expanded",
           "custom_vjp_chunked_fused_linear_cross_entropy_precomputed_grads_decoder_lm",
           "complex_ratio_mask_speech_enhancement_rfft_stft_istft_overlap_add_sisnr",
           "bfloat16_fastspeech2_variance_adaptor_length_regulator_mel_decoder"]
SHARDED_SET = ["bfloat16_fastspeech2_variance_adaptor_length_regulator_mel_decoder",
               "adabound_dynamic_bound_clipped_adam_to_sgd_transition_wide_resnet_classifier",
               "neumf_gmf_mlp_tower_fusion_bpr_sampled_negatives_implicit_recommender",
               "lambdarank_delta_ndcg_weighted_pairwise_logistic_sorted_ideal_dcg_ranker",
               "deep_interest_network_local_activation_unit_dice_minibatch_aware_regularization_ctr",
               "multimodal_vae_product_of_experts_gaussian_fusion_subsampled_elbo_terms",
               "spanbert_span_masking_dynamic_update_slice_span_boundary_objective_encoder",
               "remat_longnet_dilated_segment_attention_scanned_layers_checkpoint_dots_policy"]
