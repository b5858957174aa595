"""Twenty-sixth fresh set: 25 JAX programs written by a helper on 2026-11-29, kept outside the
repository as a held-out set to be measured unseen before anything is tuned on it (docstring
kept at 3 lines: the dumps record line numbers)::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh26_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh26_programs python benchmarks/accuracy.py --data DIR

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



def _mlp_layers(layers, x, act=jax.nn.relu):
    """Dense layers given as a list of (w, b) with ``act`` between them (none after the last)."""
    for i, (w, b) in enumerate(layers):
        x = x @ w + b
        if i < len(layers) - 1:
            x = act(x)
    return x


def _dense_spec(dims):
    return [(S(a, b), S(b)) for a, b in zip(dims[:-1], dims[1:])]


def _conv1d(x, w, stride=1, pad="SAME", dil=1, groups=1):
    return lax.conv_general_dilated(x, w, (stride,), pad, rhs_dilation=(dil,),
                                    dimension_numbers=("NWC", "WIO", "NWC"),
                                    feature_group_count=groups)


def _gru_cell(q, x, h):
    zr = jax.nn.sigmoid(x @ q["wzr"] + h @ q["uzr"] + q["bzr"])
    z, r = jnp.split(zr, 2, -1)
    n = jnp.tanh(x @ q["wn"] + (r * h) @ q["un"] + q["bn"])
    return (1.0 - z) * n + z * h


def _gru_spec(din, n):
    return {"wzr": S(din, 2 * n), "uzr": S(n, 2 * n), "bzr": S(2 * n), "wn": S(din, n),
            "un": S(n, n), "bn": S(n)}


# ----------------------------------------------------------------------------- mlp


def two_tower_retrieval_inbatch_sampled_softmax_logq_correction_hashed_feature_recommender():
    """Two-tower retrieval model (YouTube / Yi et al. style) trained with an in-batch sampled
    softmax: the query tower embeds the user id through two hash functions into a shared
    8192-bucket table (the two rows summed), mean-pools the embeddings of up to 32 previously
    watched items (passed-in lengths) and concatenates 16 dense features before a
    144-256-128-64 ReLU MLP; the candidate tower embeds the item id and its category and
    runs a 80-128-64 MLP; both outputs are L2-normalised and the 256 x 256 in-batch logits
    (temperature 0.05) have the log sampling probability of every candidate subtracted
    (logQ correction), duplicates of the positive item masked out; cross-entropy on the
    diagonal; Adagrad on the embedding tables, Adam on the towers; in-batch recall@10 is
    returned."""
    NBKT, NI, NCAT, L, DF, DE, TEMP = 8192, 20000, 400, 32, 16, 64, 0.05

    def tower(layers, x):
        x = _mlp_layers(layers, x)
        return x / jnp.maximum(jnp.linalg.norm(x, axis=-1, keepdims=True), 1e-6)

    def loss(p, uid, hist, hlen, dense, item, cat, logq):
        e = p["emb"]
        h1 = (uid * 7919 + 17) % NBKT
        h2 = (uid * 104729 + 31) % NBKT
        ue = e["uhash"][0][h1] + e["uhash"][1][h2]
        hm = (jnp.arange(L)[None, :] < hlen[:, None]).astype(F32)
        he = jnp.einsum("bl,bld->bd", hm, e["item"][hist])
        he = he / jnp.maximum(jnp.sum(hm, 1, keepdims=True), 1.0)
        q = tower(p["tower"]["q"], jnp.concatenate([ue, he, dense], -1))
        c = tower(p["tower"]["c"], jnp.concatenate([e["item"][item], e["cat"][cat]], -1))
        B = q.shape[0]
        logits = q @ c.T / TEMP - logq[None, :]
        dup = (item[:, None] == item[None, :]) & ~jnp.eye(B, dtype=bool)
        logits = jnp.where(dup, -1e9, logits)
        ce = _xent(logits, jnp.arange(B))
        rank = jnp.sum(logits > jnp.diagonal(logits)[:, None], -1)
        return ce, jnp.mean((rank < 10).astype(F32))

    def step(p, acc, m, v, t, uid, hist, hlen, dense, item, cat, logq):
        (l, rec), g = jax.value_and_grad(loss, has_aux=True)(p, uid, hist, hlen, dense, item,
                                                             cat, logq)
        acc = tmap(lambda a, g: a + g * g, acc, g["emb"])
        emb = tmap(lambda w, g, a: w - 0.05 * g / (jnp.sqrt(a) + 1e-7), p["emb"], g["emb"], acc)
        tw, m, v = _adam_tree(p["tower"], m, v, g["tower"], t, lr=1e-3)
        return l, rec, {"emb": emb, "tower": tw}, acc, m, v
    emb = {"uhash": S(2, NBKT, DE), "item": S(NI, DE), "cat": S(NCAT, 16)}
    tw = {"q": _dense_spec((2 * DE + DF, 256, 128, 64)), "c": _dense_spec((DE + 16, 128, 64))}
    B = 256
    return step, ({"emb": emb, "tower": tw}, emb, tw, tw, S(), S(B, dtype=I32),
                  S(B, L, dtype=I32), S(B, dtype=I32), S(B, DF), S(B, dtype=I32),
                  S(B, dtype=I32), S(B))


# ----------------------------------------------------------------------------- cnn


def regnety_squeeze_excite_group_width_bottleneck_lion_optimizer_classifier():
    """RegNetY-style classifier (Radosavovic et al.) on 32x32 images: a 3x3 stem of 32 and
    three stages of widths 48 / 104 / 208 (depths 1 / 2 / 2, the last two downsampling in
    their first block), every block a bottleneck-free Y block -- 1x1 conv-BN-ReLU, a 3x3
    grouped conv with a fixed group width of 8 (strided in a stage's first block)-BN-ReLU,
    squeeze-excitation with a reduction to a quarter of the block's input width, 1x1
    conv-BN -- with a projected (strided 1x1 conv-BN) shortcut where shapes change; global
    pooling and a 10-way head; cross-entropy; the Lion optimizer (Chen et al.): the update is
    the sign of an interpolation (beta1 0.9) of momentum and gradient, the momentum is then
    updated with beta2 0.99, decoupled weight decay on the kernels, warmup-cosine
    learning rate; BN batch statistics returned."""
    GW = 8
    STAGES = ((48, 1, 1), (104, 2, 2), (208, 2, 2))

    def bn(q, x, stats, relu=True):
        h, st = _bn(x, q["g"], q["b"], (0, 1, 2))
        stats.append(st)
        return jax.nn.relu(h) if relu else h

    def block(q, x, stats, stride):
        w = q["c1"].shape[-1]
        h = bn(q["n1"], x @ q["c1"], stats)
        h = bn(q["n2"], _conv(h, q["c2"], stride, groups=w // GW), stats)
        s = jax.nn.relu(jnp.mean(h, (1, 2)) @ q["se1"] + q["sb1"])
        h = h * jax.nn.sigmoid(s @ q["se2"] + q["sb2"])[:, None, None]
        h = bn(q["n3"], h @ q["c3"], stats, relu=False)
        sc = bn(q["np"], _conv(x, q["proj"], stride), stats, relu=False) if "proj" in q else x
        return jax.nn.relu(h + sc)

    def loss(p, img, labels):
        stats = []
        x = bn(p["sn"], _conv(img, p["stem"]), stats)
        for (w, d, s), blocks in zip(STAGES, p["stages"]):
            for i, q in enumerate(blocks):
                x = block(q, x, stats, s if i == 0 else 1)
        return _xent(jnp.mean(x, (1, 2)) @ p["fc"] + p["fcb"], labels), stats

    def step(p, m, t, img, labels):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels)
        lr = _cosine_lr(t, 3e-4, 50000.0, warm=500.0)
        upd = tmap(lambda m, g: jnp.sign(0.9 * m + 0.1 * g), m, g)
        p = tmap(lambda w, u: w - lr * (u + (0.1 * w if w.ndim >= 2 else 0.0)), p, upd)
        m = tmap(lambda m, g: 0.99 * m + 0.01 * g, m, g)
        return l, stats, p, m

    def nb(c):
        return {"g": S(c), "b": S(c)}
    stages, ci = [], 32
    for w, d, s in STAGES:
        blocks = []
        for i in range(d):
            se = ci // 4
            q = {"c1": S(ci, w), "n1": nb(w), "c2": S(3, 3, GW, w), "n2": nb(w),
                 "se1": S(w, se), "sb1": S(se), "se2": S(se, w), "sb2": S(w), "c3": S(w, w),
                 "n3": nb(w)}
            if ci != w or (i == 0 and s != 1):
                q.update(proj=S(1, 1, ci, w), np=nb(w))
            blocks.append(q)
            ci = w
        stages.append(blocks)
    p = {"stem": S(3, 3, 3, 32), "sn": nb(32), "stages": stages, "fc": S(208, 10),
         "fcb": S(10)}
    return step, (p, p, S(), S(32, 32, 32, 3), S(32, dtype=I32))


def shampoo_lite_blockwise_eigh_inverse_fourth_root_adagrad_grafting_convnet():
    """A small BN ConvNet (3x3 convs of 32 / 64 / 96 channels with 2x2 max pooling, global
    pooling, a 10-way head) on 32x32 images trained by a Shampoo-lite optimizer: every
    kernel is viewed as a (fan-in x fan-out) matrix and split row-wise into blocks of 96
    rows (one block when the fan-in does not divide); each block accumulates left and right
    statistics L += G G^T and R += G^T G, and its preconditioned direction
    L^(-1/4) G R^(-1/4) uses inverse fourth roots recomputed every step from jnp.linalg.eigh
    (eigenvalues clamped and regularised); the direction is grafted onto Adagrad -- rescaled
    block by block to the Frobenius norm of the diagonal Adagrad step -- and the plain
    Adagrad step is used for the first 10 steps; heavy-ball momentum 0.9, warmup-cosine
    learning rate; the 1-D parameters use Adagrad with momentum; cross-entropy."""
    BLK = 96

    def maxpool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def loss(p, img, labels):
        x = img
        stats = []
        for i, pool in ((1, True), (2, True), (3, False)):
            h, st = _bn(_conv(x, p[f"c{i}"]), p[f"n{i}"]["g"], p[f"n{i}"]["b"], (0, 1, 2))
            stats.append(st)
            x = jax.nn.relu(h)
            if pool:
                x = maxpool(x)
        return _xent(jnp.mean(x, (1, 2)) @ p["fc"] + p["fcb"], labels), stats

    def inv_root(stat):
        n = stat.shape[-1]
        w, vec = jnp.linalg.eigh(stat + 1e-6 * jnp.eye(n))
        w = jnp.power(jnp.maximum(w, 0.0) + 1e-6, -0.25)
        return (vec * w[..., None, :]) @ jnp.swapaxes(vec, -1, -2)

    def shampoo(g, st, t):
        nb, r, c = st["L"].shape[0], st["L"].shape[1], st["R"].shape[1]
        G = g.reshape(nb, r, c)
        L = st["L"] + G @ jnp.swapaxes(G, 1, 2)
        R = st["R"] + jnp.swapaxes(G, 1, 2) @ G
        A = st["A"] + g * g
        graft = g / (jnp.sqrt(A) + 1e-8)
        d = inv_root(L) @ G @ inv_root(R)
        gb = graft.reshape(nb, r, c)
        d = d * (jnp.sqrt(jnp.sum(gb * gb, (1, 2))) /
                 (jnp.sqrt(jnp.sum(d * d, (1, 2))) + 1e-12))[:, None, None]
        upd = jnp.where(t >= 10.0, d.reshape(g.shape), graft)
        return upd, dict(st, L=L, R=R, A=A)

    def step(p, st, t, img, labels):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels)
        lr = _cosine_lr(t, 0.05, 40000.0, warm=200.0)
        newp, newst = {}, {}
        for k in p:
            if k in ("n1", "n2", "n3"):
                newp[k], newst[k] = {}, {}
                for j in p[k]:
                    A = st[k][j]["A"] + g[k][j] ** 2
                    mom = 0.9 * st[k][j]["mom"] + g[k][j] / (jnp.sqrt(A) + 1e-8)
                    newp[k][j], newst[k][j] = p[k][j] - lr * mom, {"A": A, "mom": mom}
                continue
            if p[k].ndim == 1:
                A = st[k]["A"] + g[k] ** 2
                mom = 0.9 * st[k]["mom"] + g[k] / (jnp.sqrt(A) + 1e-8)
                newp[k], newst[k] = p[k] - lr * mom, {"A": A, "mom": mom}
                continue
            upd, s2 = shampoo(g[k], st[k], t)
            mom = 0.9 * st[k]["mom"] + upd
            newp[k], newst[k] = p[k] - lr * mom, dict(s2, mom=mom)
        return l, stats, newp, newst

    p = {"c1": S(3, 3, 3, 32), "n1": {"g": S(32), "b": S(32)}, "c2": S(3, 3, 32, 64),
         "n2": {"g": S(64), "b": S(64)}, "c3": S(3, 3, 64, 96), "n3": {"g": S(96), "b": S(96)},
         "fc": S(96, 10), "fcb": S(10)}
    st = {}
    for k, s in p.items():
        if isinstance(s, dict):
            st[k] = {j: {"A": s[j], "mom": s[j]} for j in s}
        elif len(s.shape) == 1:
            st[k] = {"A": s, "mom": s}
        else:
            rows, cols = int(np.prod(s.shape[:-1])), s.shape[-1]
            nb = rows // BLK if rows % BLK == 0 else 1
            st[k] = {"L": S(nb, rows // nb, rows // nb), "R": S(nb, cols, cols), "A": s,
                     "mom": s}
    return step, (p, st, S(), S(64, 32, 32, 3), S(64, dtype=I32))


# ----------------------------------------------------------------------------- transformer


def luna_linear_unified_nested_attention_pack_unpack_context_sequence_encoder():
    """Luna (Ma et al., linear unified nested attention) document classifier over 128-token
    inputs: besides the token sequence every layer carries an extra packed sequence of 16
    learned context vectors (with sinusoidal positions); the pack attention lets the 16
    context vectors attend over the (padding-masked) tokens, and the unpack attention lets
    every token attend over the packed result only, so both cost O(n x 16); the token
    stream and the context stream each get a residual post-LN update, the tokens then a
    GELU FFN (width 128, 4 heads, two layers); embedding dropout from a passed-in raw key;
    masked mean pooling and a 4-way head; cross-entropy; Adam with warmup and linear
    decay."""
    V, D, H, T, PL, F, NL, NC = 5000, 128, 4, 128, 16, 256, 2, 4

    def layer(q, x, pc, mask):
        packed = _mha(q["pack"], pc, x, H, mask=mask[:, None, None, :])
        unpacked = _mha(q["unpack"], x, packed, H)
        x = _ln(x + unpacked, q["g1"], q["b1"])
        pc = _ln(pc + packed, q["gp"], q["bp"])
        x = _ln(x + jax.nn.gelu(x @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"], q["g2"], q["b2"])
        return x, pc

    def loss(p, tok, lens, labels, key):
        B = tok.shape[0]
        mask = jnp.arange(T)[None, :] < lens[:, None]
        x = p["emb"][tok] * math.sqrt(D) + _sinusoid(T, D)
        x = jnp.where(jax.random.bernoulli(key, 0.9, x.shape), x / 0.9, 0.0)
        x = _ln(x, p["eg"], p["eb"])
        pc = jnp.broadcast_to(p["ctx"] + _sinusoid(PL, D), (B, PL, D))
        for q in p["layers"]:
            x, pc = layer(q, x, pc, mask)
        w = mask.astype(F32)[..., None]
        pooled = jnp.sum(x * w, 1) / jnp.maximum(jnp.sum(w, 1), 1.0)
        return _xent(pooled @ p["head"] + p["hb"], labels)

    def step(p, m, v, t, tok, lens, labels, key):
        l, g = jax.value_and_grad(loss)(p, tok, lens, labels, key)
        lr = 1e-4 * jnp.minimum((t + 1.0) / 4000.0, jnp.maximum(0.0, 1.0 - t / 200000.0))
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr, b2=0.98)
        return l, p, m, v
    q = {"pack": _attn_params(D), "unpack": _attn_params(D), "g1": S(D), "b1": S(D),
         "gp": S(D), "bp": S(D), "f1": S(D, F), "fb1": S(F), "f2": S(F, D), "fb2": S(D),
         "g2": S(D), "b2": S(D)}
    p = {"emb": S(V, D), "eg": S(D), "eb": S(D), "ctx": S(PL, D),
         "layers": [dict(q) for _ in range(NL)], "head": S(D, NC), "hb": S(NC)}
    B = 16
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, dtype=I32), S(B, dtype=I32),
                  S(2, dtype=U32))


def perceiver_ar_causal_latent_cross_attention_prefix_dropout_decoder_lm():
    """Perceiver AR (Hawthorne et al.) language model over 256-token contexts: the last 64
    positions become latents that cross-attend to all 256 input embeddings under a causal
    mask (latent i sees inputs up to its own position), with a random 15% of the prefix
    positions dropped from the cross-attention keys (passed-in raw key) as context
    regularisation; three causal self-attention layers (width 128, 4 heads, pre-LN, GELU
    MLP) then process only the 64 latents, and tied output embeddings predict the next
    token at each latent position; cross-entropy; AdamW with warmup-cosine and global-norm
    clipping."""
    V, D, H, T, NLAT, NL, F = 1024, 128, 4, 256, 64, 3, 512

    def mlp(q, x):
        return jax.nn.gelu(x @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]

    def loss(p, tok, tgt, key):
        B = tok.shape[0]
        x = p["emb"][tok] + p["pos"]
        keep = jax.random.bernoulli(key, 0.85, (B, T)) | (jnp.arange(T) >= T - NLAT)[None]
        qpos = T - NLAT + jnp.arange(NLAT)
        cmask = (jnp.arange(T)[None, :] <= qpos[:, None])[None, None] & keep[:, None, None, :]
        c = p["cross"]
        lat = x[:, T - NLAT:]
        lat = lat + _mha(c["att"], _ln(lat, c["gq"], c["bq"]), _ln(x, c["gk"], c["bk"]), H,
                         mask=cmask)
        lat = lat + mlp(c, _ln(lat, c["g2"], c["b2"]))
        for q in p["layers"]:
            h = _ln(lat, q["g1"], q["b1"])
            lat = lat + _mha(q["att"], h, h, H, mask=_causal(NLAT)[None, None])
            lat = lat + mlp(q, _ln(lat, q["g2"], q["b2"]))
        logits = _ln(lat, p["gf"], p["bf"]) @ p["emb"].T
        return _xent(logits, tgt)

    def step(p, m, v, t, tok, tgt, key):
        l, g = jax.value_and_grad(loss)(p, tok, tgt, key)
        lr = _cosine_lr(t, 3e-4, 100000.0, warm=2000.0)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.95, wd=0.1)
        return l, p, m, v

    def blk(extra):
        q = {"att": _attn_params(D), "g2": S(D), "b2": S(D), "f1": S(D, F), "fb1": S(F),
             "f2": S(F, D), "fb2": S(D)}
        q.update({k: S(D) for k in extra})
        return q
    p = {"emb": S(V, D), "pos": S(T, D), "cross": blk(("gq", "bq", "gk", "bk")),
         "layers": [blk(("g1", "b1")) for _ in range(NL)], "gf": S(D), "bf": S(D)}
    B = 8
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, NLAT, dtype=I32), S(2, dtype=U32))


def beit_masked_image_modeling_blockwise_mask_visual_tokens_relative_position_bias_llrd():
    """BEiT (Bao et al.) masked image modelling on 32x32 images cut into 64 patches of 4x4:
    patches under a passed-in blockwise mask are replaced by a learned [MASK] embedding; a
    ViT of three pre-LN layers (width 128, 4 heads, GELU MLP, layer-scale on both
    residual branches) uses no absolute positions but a per-layer, per-head relative
    position bias table of (2*8-1)^2 entries gathered by a constant relative index; q and v
    projections carry biases, k none; the head predicts, at the masked positions only, the
    passed-in visual-token ids of a 1024-entry image tokenizer; cross-entropy on masked
    patches; AdamW with warmup-cosine and layer-wise learning-rate decay 0.65 from the head
    down to the patch embedding; the masked-token accuracy is returned."""
    PS, G, D, H, NL, VOC, F, LD = 4, 8, 128, 4, 3, 1024, 512, 0.65
    N, DH = G * G, D // H
    coords = np.stack(np.meshgrid(np.arange(G), np.arange(G), indexing="ij"), -1).reshape(-1, 2)
    rel = coords[:, None] - coords[None] + (G - 1)
    RIDX = rel[..., 0] * (2 * G - 1) + rel[..., 1]

    def attn(q, x):
        b, t, d = x.shape
        qkv = (x @ q["qkv"]).reshape(b, t, 3, H, DH)
        qq = qkv[:, :, 0] + q["qb"].reshape(H, DH)
        kk = qkv[:, :, 1]
        vv = qkv[:, :, 2] + q["vb"].reshape(H, DH)
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(DH)
        s = s + jnp.transpose(q["rpb"][RIDX], (2, 0, 1))[None]
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d)
        return o @ q["o"] + q["ob"]

    def loss(p, img, bmask, vtok):
        B = img.shape[0]
        e = p["embed"]
        x = img.reshape(B, G, PS, G, PS, 3).transpose(0, 1, 3, 2, 4, 5).reshape(B, N, -1)
        x = x @ e["patch"] + e["pb"]
        x = jnp.where(bmask[..., None], e["mask_tok"], x)
        for q in p["layers"]:
            x = x + q["ls1"] * attn(q, _ln(x, q["g1"], q["b1"]))
            h = _ln(x, q["g2"], q["b2"])
            x = x + q["ls2"] * (jax.nn.gelu(h @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"])
        hd = p["head"]
        logits = _ln(x, hd["g"], hd["b"]) @ hd["w"] + hd["wb"]
        nll = -jnp.take_along_axis(jax.nn.log_softmax(logits, -1), vtok[..., None], -1)[..., 0]
        w = bmask.astype(F32)
        nw = jnp.maximum(jnp.sum(w), 1.0)
        acc = jnp.sum((jnp.argmax(logits, -1) == vtok) * w) / nw
        return jnp.sum(nll * w) / nw, acc

    def step(p, m, v, t, img, bmask, vtok):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, img, bmask, vtok)
        lr = _cosine_lr(t, 1.5e-3, 80000.0, warm=1000.0)
        np_, nm, nv = {}, {}, {}
        np_["embed"], nm["embed"], nv["embed"] = _adam_tree(
            p["embed"], m["embed"], v["embed"], g["embed"], t, lr=lr * LD ** (NL + 1),
            b2=0.999, wd=0.05)
        np_["layers"], nm["layers"], nv["layers"] = [], [], []
        for i in range(NL):
            a, b_, c = _adam_tree(p["layers"][i], m["layers"][i], v["layers"][i],
                                  g["layers"][i], t, lr=lr * LD ** (NL - i), wd=0.05)
            np_["layers"].append(a)
            nm["layers"].append(b_)
            nv["layers"].append(c)
        np_["head"], nm["head"], nv["head"] = _adam_tree(p["head"], m["head"], v["head"],
                                                         g["head"], t, lr=lr, wd=0.05)
        return l, acc, np_, nm, nv
    q = {"g1": S(D), "b1": S(D), "qkv": S(D, 3 * D), "qb": S(D), "vb": S(D),
         "rpb": S((2 * G - 1) ** 2, H), "o": S(D, D), "ob": S(D), "ls1": S(D), "g2": S(D),
         "b2": S(D), "f1": S(D, F), "fb1": S(F), "f2": S(F, D), "fb2": S(D), "ls2": S(D)}
    p = {"embed": {"patch": S(PS * PS * 3, D), "pb": S(D), "mask_tok": S(D)},
         "layers": [dict(q) for _ in range(NL)],
         "head": {"g": S(D), "b": S(D), "w": S(D, VOC), "wb": S(VOC)}}
    B = 32
    return step, (p, p, p, S(), S(B, 32, 32, 3), S(B, N, dtype=jnp.bool_), S(B, N, dtype=I32))


# ----------------------------------------------------------------------------- rnn / scan


def zoneout_lstm_stochastic_identity_state_preservation_char_lm_scan():
    """Character-level language model with a two-layer LSTM (256 units, 96-symbol vocabulary,
    64-step sequences of 32 examples) regularised by zoneout (Krueger et al.): per step,
    layer and unit, passed-in-key Bernoulli masks (drawn once for the whole sequence before
    a time-major lax.scan) keep the previous cell state with probability 0.15 and the
    previous hidden state with probability 0.05 instead of the new ones, a stochastic
    identity that lets gradients skip steps; the forget gate has a +1 bias; the top layer
    is projected to the 128-dim embedding space and scored against the tied input
    embeddings; cross-entropy; Adam with global-norm clipping at 0.25 and step decay; bits
    per character returned."""
    V, E, N, T, NLY, ZC, ZH = 96, 128, 256, 64, 2, 0.15, 0.05

    def loss(p, tok, tgt, key):
        B = tok.shape[0]
        kc, kh = jax.random.split(key)
        mc = jax.random.bernoulli(kc, ZC, (T, NLY, B, N)).astype(F32)
        mh = jax.random.bernoulli(kh, ZH, (T, NLY, B, N)).astype(F32)
        xs = jnp.swapaxes(p["emb"][tok], 0, 1)

        def cell(carry, inp):
            hs, cs = carry
            x, mci, mhi = inp
            nh, nc = [], []
            for l in range(NLY):
                q = p["lstm"][l]
                h, c = hs[l], cs[l]
                z = x @ q["wx"] + h @ q["wh"] + q["b"]
                i, f, g, o = jnp.split(z, 4, -1)
                c2 = jax.nn.sigmoid(f + 1.0) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
                h2 = jax.nn.sigmoid(o) * jnp.tanh(c2)
                c2 = mci[l] * c + (1.0 - mci[l]) * c2
                h2 = mhi[l] * h + (1.0 - mhi[l]) * h2
                nh.append(h2)
                nc.append(c2)
                x = h2
            return (jnp.stack(nh), jnp.stack(nc)), x
        z0 = jnp.zeros((NLY, B, N))
        _, hs = lax.scan(cell, (z0, z0), (xs, mc, mh))
        logits = (jnp.swapaxes(hs, 0, 1) @ p["proj"]) @ p["emb"].T + p["ob"]
        ce = _xent(logits, tgt)
        return ce, ce / math.log(2.0)

    def step(p, m, v, t, tok, tgt, key):
        (l, bpc), g = jax.value_and_grad(loss, has_aux=True)(p, tok, tgt, key)
        lr = 2e-3 * 0.5 ** jnp.floor(t / 20000.0)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 0.25), t, lr=lr)
        return l, bpc, p, m, v
    lstm = [{"wx": S(E if l == 0 else N, 4 * N), "wh": S(N, 4 * N), "b": S(4 * N)}
            for l in range(NLY)]
    p = {"emb": S(V, E), "lstm": lstm, "proj": S(N, E), "ob": S(V)}
    B = 32
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, T, dtype=I32), S(2, dtype=U32))


# ----------------------------------------------------------------------------- linalg


def linear_gaussian_state_space_kalman_filter_rts_smoother_reverse_scan_imputer():
    """Learned linear-Gaussian state-space model for 32 multivariate series (16 observed
    channels, 48 steps, 8 latent states) with missing time steps: an MLP turns 8 covariates
    per step into a control input added to the latent transition z' = A z + u; the process
    noise covariance is parameterised by a lower-triangular Cholesky factor and the
    observation noise by a softplus diagonal; a Kalman filter in lax.scan (per series, under
    vmap) computes the innovation covariance's Cholesky factor (jnp.linalg.cholesky), the
    gain and the innovation log-likelihood by cho_solve, skipping the update where the step
    is missing; a Rauch-Tung-Striebel smoother runs backwards (lax.scan reverse=True) with
    the smoother gain from jnp.linalg.solve; the loss is the negative filtering
    log-likelihood per step plus the MSE of the smoothed reconstruction on the held-out
    (missing) steps; Adam with clipping; both terms returned."""
    Z, Y, NU, T, HID = 8, 16, 8, 48, 64
    LOG2PI = math.log(2.0 * math.pi)

    def series(s, y, obs, u):
        Lq = jnp.tril(s["lq"])
        Q = Lq @ Lq.T + 1e-4 * jnp.eye(Z)
        R = jnp.diag(jax.nn.softplus(s["r"]) + 1e-4)
        L0 = jnp.tril(s["l0"])
        A, C = s["A"], s["C"]

        def fwd(carry, inp):
            m, P = carry
            yt, ot, ut = inp
            Sm = C @ P @ C.T + R
            cf = jnp.linalg.cholesky(Sm)
            r = yt - C @ m - s["d"]
            K = jax.scipy.linalg.cho_solve((cf, True), C @ P).T
            mu = m + K @ r
            Pu = P - K @ C @ P
            Pu = 0.5 * (Pu + Pu.T)
            ll = (-0.5 * r @ jax.scipy.linalg.cho_solve((cf, True), r)
                  - jnp.sum(jnp.log(jnp.diagonal(cf))) - 0.5 * Y * LOG2PI)
            mu = jnp.where(ot, mu, m)
            Pu = jnp.where(ot, Pu, P)
            mp = A @ mu + ut
            Pp = A @ Pu @ A.T + Q
            return (mp, Pp), (mu, Pu, mp, Pp, jnp.where(ot, ll, 0.0))
        init = (s["m0"], L0 @ L0.T + 1e-4 * jnp.eye(Z))
        _, (mu, Pu, mp, Pp, ll) = lax.scan(fwd, init, (y, obs, u))

        def bwd(carry, inp):
            ms, Ps = carry
            mu_t, Pu_t, mp_t, Pp_t = inp
            J = jnp.linalg.solve(Pp_t, A @ Pu_t).T
            ms = mu_t + J @ (ms - mp_t)
            Ps = Pu_t + J @ (Ps - Pp_t) @ J.T
            return (ms, Ps), ms
        _, msm = lax.scan(bwd, (mu[-1], Pu[-1]), (mu[:-1], Pu[:-1], mp[:-1], Pp[:-1]),
                          reverse=True)
        return jnp.sum(ll), jnp.concatenate([msm, mu[-1:]], 0)

    def loss(p, y, obs, cov):
        u = _mlp_layers(p["ctrl"], cov, jnp.tanh)
        ll, msm = jax.vmap(series, (None, 0, 0, 0))(p["ssm"], y, obs, u)
        yhat = msm @ p["ssm"]["C"].T + p["ssm"]["d"]
        miss = (~obs).astype(F32)[..., None]
        imp = jnp.sum(jnp.square(yhat - y) * miss) / jnp.maximum(jnp.sum(miss) * Y, 1.0)
        nll = -jnp.mean(ll) / T
        return nll + imp, (nll, imp)

    def step(p, m, v, t, y, obs, cov):
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, y, obs, cov)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 10.0), t, lr=3e-3)
        return l, aux, p, m, v
    ssm = {"A": S(Z, Z), "C": S(Y, Z), "d": S(Y), "lq": S(Z, Z), "r": S(Y), "m0": S(Z),
           "l0": S(Z, Z)}
    p = {"ssm": ssm, "ctrl": _dense_spec((NU, HID, HID, Z))}
    B = 32
    return step, (p, p, p, S(), S(B, T, Y), S(B, T, dtype=jnp.bool_), S(B, T, NU))


# ----------------------------------------------------------------------------- moe


def gshard_top2_grouped_dispatch_random_second_expert_capacity_translation_moe():
    """GShard-style (Lepikhin et al.) mixture-of-experts encoder-decoder translation model:
    32-token sources and targets, width 128, 4 heads, pre-LN; the encoder has a dense layer
    and an MoE layer, the decoder one layer (causal self-attention, cross-attention, MoE
    FFN); each MoE layer splits its tokens into 4 groups and routes each group separately
    to 8 ReLU experts with top-2 gating: the second expert is kept only when twice its
    normalised gate exceeds a passed-in uniform draw (random routing), each group's expert
    buffers hold capacity 2 x tokens / experts slots filled by cumulative counts (first
    choices before second choices), overflowing assignments are dropped, and dispatch and
    combine are one-hot [group, token, expert, slot] einsums; the auxiliary load-balancing
    loss is E^2 mean(fraction routed x mean gate); label-smoothed cross-entropy over
    non-padding targets; Adam with the inverse-square-root schedule."""
    V, D, H, TS, TT, E, F, G, CF = 2000, 128, 4, 32, 32, 8, 256, 4, 2.0

    def moe(q, x, u):
        b, t, d = x.shape
        n = b * t
        Sg = n // G
        cap = int(CF * Sg / E)
        xg = x.reshape(G, Sg, d)
        ug = u.reshape(G, Sg)
        probs = jax.nn.softmax(xg @ q["router"], -1)
        m1 = jax.nn.one_hot(jnp.argmax(probs, -1), E)
        g1 = jnp.sum(probs * m1, -1)
        m2 = jax.nn.one_hot(jnp.argmax(probs * (1.0 - m1), -1), E)
        g2 = jnp.sum(probs * m2, -1)
        aux = jnp.mean(jnp.sum(jnp.mean(m1, 1) * jnp.mean(probs, 1), -1)) * E * E
        den = g1 + g2 + 1e-9
        g1, g2 = g1 / den, g2 / den
        m2 = m2 * (2.0 * g2 > ug)[..., None]
        pos1 = jnp.cumsum(m1, 1) - m1
        m1 = m1 * (pos1 < cap)
        pos2 = jnp.cumsum(m2, 1) - m2 + jnp.sum(m1, 1, keepdims=True)
        m2 = m2 * (pos2 < cap)
        s1 = jnp.sum(pos1 * m1, -1).astype(I32)
        s2 = jnp.sum(pos2 * m2, -1).astype(I32)
        g1 = g1 * jnp.sum(m1, -1)
        g2 = g2 * jnp.sum(m2, -1)
        comb = (g1[..., None, None] * m1[..., None] * jax.nn.one_hot(s1, cap)[..., None, :]
                + g2[..., None, None] * m2[..., None] * jax.nn.one_hot(s2, cap)[..., None, :])
        disp = (comb > 0).astype(x.dtype)
        ein = jnp.einsum("gsec,gsd->egcd", disp, xg)
        h = jax.nn.relu(jnp.einsum("egcd,edf->egcf", ein, q["w1"]) + q["b1"][:, None, None])
        eo = jnp.einsum("egcf,efd->egcd", h, q["w2"]) + q["b2"][:, None, None]
        return jnp.einsum("gsec,egcd->gsd", comb, eo).reshape(b, t, d), aux

    def loss(p, src, dec_in, tgt, u_enc, u_dec):
        smask = (src != 0)[:, None, None, :]
        x = p["emb"][src] * math.sqrt(D) + _sinusoid(TS, D)
        aux = 0.0
        for i, q in enumerate(p["enc"]):
            h = _ln(x, q["g1"], q["b1"])
            x = x + _mha(q["att"], h, h, H, mask=smask)
            h = _ln(x, q["g2"], q["b2"])
            if "moe" in q:
                y, a = moe(q["moe"], h, u_enc)
                aux = aux + a
            else:
                y = jax.nn.relu(h @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]
            x = x + y
        mem = _ln(x, p["eg"], p["eb"])
        y = p["emb"][dec_in] * math.sqrt(D) + _sinusoid(TT, D)
        q = p["dec"]
        h = _ln(y, q["g1"], q["b1"])
        y = y + _mha(q["att"], h, h, H, mask=_causal(TT)[None, None])
        y = y + _mha(q["cross"], _ln(y, q["g2"], q["b2"]), mem, H, mask=smask)
        o, a = moe(q["moe"], _ln(y, q["g3"], q["b3"]), u_dec)
        y = _ln(y + o, p["dg"], p["db"])
        logits = y @ p["emb"].T
        w = (tgt != 0).astype(F32)
        tsm = jax.nn.one_hot(tgt, V) * 0.9 + 0.1 / V
        nll = -jnp.sum(tsm * jax.nn.log_softmax(logits, -1), -1)
        ce = jnp.sum(nll * w) / jnp.maximum(jnp.sum(w), 1.0)
        return ce + 0.01 * (aux + a), ce

    def step(p, m, v, t, src, dec_in, tgt, u_enc, u_dec):
        (l, ce), g = jax.value_and_grad(loss, has_aux=True)(p, src, dec_in, tgt, u_enc, u_dec)
        s = t + 1.0
        lr = D ** -0.5 * jnp.minimum(s ** -0.5, s * 4000.0 ** -1.5)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr, b2=0.98, eps=1e-9)
        return l, ce, p, m, v
    moe_p = {"router": S(D, E), "w1": S(E, D, F), "b1": S(E, F), "w2": S(E, F, D),
             "b2": S(E, D)}
    enc = [{"g1": S(D), "b1": S(D), "att": _attn_params(D), "g2": S(D), "b2": S(D),
            "f1": S(D, F), "fb1": S(F), "f2": S(F, D), "fb2": S(D)},
           {"g1": S(D), "b1": S(D), "att": _attn_params(D), "g2": S(D), "b2": S(D),
            "moe": dict(moe_p)}]
    dec = {"g1": S(D), "b1": S(D), "att": _attn_params(D), "g2": S(D), "b2": S(D),
           "cross": _attn_params(D), "g3": S(D), "b3": S(D), "moe": dict(moe_p)}
    p = {"emb": S(V, D), "enc": enc, "eg": S(D), "eb": S(D), "dec": dec, "dg": S(D),
         "db": S(D)}
    B = 16
    return step, (p, p, p, S(), S(B, TS, dtype=I32), S(B, TT, dtype=I32), S(B, TT, dtype=I32),
                  S(B, TS), S(B, TT))


# ----------------------------------------------------------------------------- unet / diffusion


def consistency_training_karras_sigma_discretization_pseudo_huber_ema_target_unet():
    """Consistency training (Song et al., consistency models) of a small U-Net on 32x32
    images without a pre-trained diffusion model: the number of discretisation steps N(k)
    grows with the training step as in the paper's schedule (s0 = 2, s1 = 150), the noise
    levels follow the Karras formula with rho = 7 between 0.002 and 80, and a passed-in
    uniform picks an adjacent pair (sigma_n, sigma_n+1) per example; the consistency
    function is c_skip(sigma) x + c_out(sigma) F(c_in(sigma) x, log sigma / 4) with the EDM
    preconditioning (sigma_data 0.5) and a U-Net (GroupNorm-SiLU residual blocks with
    timestep embeddings, two downsamplings, a self-attention bottleneck at 8x8, nearest
    upsampling with skip concatenations); the student sees x + sigma_n+1 z, the
    stop-gradient EMA target network x + sigma_n z with the same passed-in noise; the loss
    is the pseudo-Huber distance weighted by 1 / (sigma_n+1 - sigma_n); Adam, then the
    target EMA with the N-dependent decay mu(k) and a separate slow EMA for evaluation."""
    SMIN, SMAX, RHO, SD, S0, S1, KTOT = 0.002, 80.0, 7.0, 0.5, 2.0, 150.0, 400000.0
    C1, C2, TE = 32, 64, 128
    FREQ = np.exp(-math.log(10000.0) * np.arange(16) / 16).astype(np.float32)

    def res(q, x, te):
        h = _conv(jax.nn.silu(_gn(x, q["g1"], q["b1"])), q["c1"]) + q["cb1"]
        h = h + (jax.nn.silu(te) @ q["t"])[:, None, None]
        h = _conv(jax.nn.silu(_gn(h, q["g2"], q["b2"])), q["c2"]) + q["cb2"]
        return (x @ q["sc"] if "sc" in q else x) + h

    def up(x):
        return jnp.repeat(jnp.repeat(x, 2, 1), 2, 2)

    def unet(q, x, s):
        c = 0.25 * jnp.log(s)
        e = jnp.concatenate([jnp.sin(c[:, None] * 1000.0 * FREQ),
                             jnp.cos(c[:, None] * 1000.0 * FREQ)], -1)
        te = jax.nn.silu(e @ q["tw1"] + q["tb1"]) @ q["tw2"] + q["tb2"]
        h0 = _conv(x, q["cin"]) + q["cinb"]
        h1 = res(q["r1"], h0, te)
        h2 = res(q["r2"], _conv(h1, q["down1"], 2) + q["d1b"], te)
        mid = res(q["mid"], _conv(h2, q["down2"], 2) + q["d2b"], te)
        b, hh, ww, ch = mid.shape
        a = _gn(mid, q["ag"], q["ab"]).reshape(b, hh * ww, ch)
        mid = mid + _mha(q["att"], a, a, 1).reshape(b, hh, ww, ch)
        u = res(q["u2"], jnp.concatenate([up(mid), h2], -1), te)
        u = res(q["u1"], jnp.concatenate([up(u), h1], -1), te)
        return _conv(jax.nn.silu(_gn(u, q["go"], q["bo"])), q["cout"]) + q["coutb"]

    def cfn(q, x, s):
        cs = SD ** 2 / ((s - SMIN) ** 2 + SD ** 2)
        co = SD * (s - SMIN) / jnp.sqrt(SD ** 2 + s ** 2)
        ci = 1.0 / jnp.sqrt(s ** 2 + SD ** 2)
        bc = lambda a: a[:, None, None, None]
        return bc(cs) * x + bc(co) * unet(q, bc(ci) * x, s)

    def nk(t):
        return jnp.ceil(jnp.sqrt(t / KTOT * ((S1 + 1.0) ** 2 - S0 ** 2) + S0 ** 2) - 1.0) + 1.0

    def sigma(i, n):
        a, b = SMIN ** (1.0 / RHO), SMAX ** (1.0 / RHO)
        return (a + i / (n - 1.0) * (b - a)) ** RHO

    def loss(p, tgt, x, z, u, t):
        n_ = nk(t)
        i = jnp.floor(u * (n_ - 1.0))
        sn, sn1 = sigma(i, n_), sigma(i + 1.0, n_)
        bc = lambda a: a[:, None, None, None]
        student = cfn(p, x + bc(sn1) * z, sn1)
        target = lax.stop_gradient(cfn(tgt, x + bc(sn) * z, sn))
        c = 0.00054 * math.sqrt(32 * 32 * 3)
        d = jnp.sqrt(jnp.sum(jnp.square(student - target), (1, 2, 3)) + c * c) - c
        return jnp.mean(d / (sn1 - sn)), jnp.mean(d)

    def step(p, tgt, ema, m, v, t, x, z, u):
        (l, d), g = jax.value_and_grad(loss, has_aux=True)(p, tgt, x, z, u, t)
        p, m, v = _adam_tree(p, m, v, g, t, lr=2e-4)
        mu = jnp.exp(S0 * math.log(0.95) / nk(t))
        tgt = tmap(lambda a, b: mu * a + (1.0 - mu) * b, tgt, p)
        ema = tmap(lambda a, b: 0.9999 * a + 1e-4 * b, ema, p)
        return l, d, p, tgt, ema, m, v

    def rb(ci, co):
        q = {"g1": S(ci), "b1": S(ci), "c1": S(3, 3, ci, co), "cb1": S(co), "t": S(TE, co),
             "g2": S(co), "b2": S(co), "c2": S(3, 3, co, co), "cb2": S(co)}
        if ci != co:
            q["sc"] = S(ci, co)
        return q
    p = {"tw1": S(32, TE), "tb1": S(TE), "tw2": S(TE, TE), "tb2": S(TE),
         "cin": S(3, 3, 3, C1), "cinb": S(C1), "r1": rb(C1, C1), "down1": S(3, 3, C1, C1),
         "d1b": S(C1), "r2": rb(C1, C2), "down2": S(3, 3, C2, C2), "d2b": S(C2),
         "mid": rb(C2, C2), "ag": S(C2), "ab": S(C2), "att": _attn_params(C2),
         "u2": rb(2 * C2, C2), "u1": rb(C2 + C1, C1), "go": S(C1), "bo": S(C1),
         "cout": S(3, 3, C1, 3), "coutb": S(3)}
    B = 16
    return step, (p, p, p, p, p, S(), S(B, 32, 32, 3), S(B, 32, 32, 3), S(B))


# ----------------------------------------------------------------------------- mixed precision


def rectified_flow_mmdit_joint_text_image_attention_logit_normal_timesteps_bf16():
    """Rectified-flow training of an MMDiT (Stable Diffusion 3 style, Esser et al.) in
    bfloat16 with float32 master weights and residual streams: 16x16x4 latents are cut into
    64 tokens of 2x2 patches, 16 passed-in text-encoder tokens (64-dim) are projected to the
    width 128; every joint block gives the image and text streams their own adaLN
    modulation (shift, scale, gate for attention and MLP from the conditioning vector),
    their own q / k / v projections with RMS-normalised queries and keys, and one joint
    attention over the 80 concatenated tokens, then separate output projections and GELU
    MLPs; the conditioning vector sums an MLP of the sinusoidal timestep embedding and an
    MLP of the pooled text embedding, text conditioning dropped per example by a passed-in
    mask (classifier-free guidance training); timesteps are logit-normal (sigmoid of
    passed-in Gaussians), x_t = (1 - t) x0 + t eps and the model regresses the velocity
    eps - x0 with MSE after a final adaLN and unpatchify; matmuls in bf16, norms and
    softmax in float32; AdamW and an EMA of the weights."""
    HW, CL, PS, D, H, NL, TXT, DTXT, F = 16, 4, 2, 128, 4, 2, 16, 64, 512
    G_ = HW // PS
    NIMG, DH = G_ * G_, D // H
    bf = lambda a: a.astype(BF16)

    def ln(x):
        x = x.astype(F32)
        mu = jnp.mean(x, -1, keepdims=True)
        return (x - mu) * lax.rsqrt(jnp.mean(jnp.square(x - mu), -1, keepdims=True) + 1e-6)

    def block(q, xi, xt, c):
        B = xi.shape[0]
        mods, qkv = {}, {}
        for s, x in (("img", xi), ("txt", xt)):
            mods[s] = jnp.split((jax.nn.silu(c) @ q[s]["ada"] + q[s]["adab"])[:, None], 6, -1)
            sh, sc = mods[s][0], mods[s][1]
            h = bf(ln(x) * (1.0 + sc) + sh)
            a = (h @ bf(q[s]["qkv"])).reshape(B, x.shape[1], 3, H, DH)
            qkv[s] = (bf(_rms(a[:, :, 0].astype(F32), q[s]["qn"])),
                      bf(_rms(a[:, :, 1].astype(F32), q[s]["kn"])), a[:, :, 2])
        qq, kk, vv = (jnp.concatenate([qkv["txt"][i], qkv["img"][i]], 1) for i in range(3))
        sc_ = jnp.einsum("bqhd,bkhd->bhqk", qq, kk, preferred_element_type=F32) / math.sqrt(DH)
        o = jnp.einsum("bhqk,bkhd->bqhd", bf(jax.nn.softmax(sc_, -1)), vv)
        o = o.reshape(B, TXT + NIMG, D)
        outs = []
        for s, x, o_ in (("img", xi, o[:, TXT:]), ("txt", xt, o[:, :TXT])):
            _, _, g1, sh2, sc2, g2 = mods[s]
            x = x + g1 * (o_ @ bf(q[s]["o"])).astype(F32)
            h = bf(ln(x) * (1.0 + sc2) + sh2)
            x = x + g2 * (bf(jax.nn.gelu(h @ bf(q[s]["f1"]))) @ bf(q[s]["f2"])).astype(F32)
            outs.append(x)
        return outs

    def loss(p, x0, eps, tn, txt, pooled, drop):
        B = x0.shape[0]
        t = jax.nn.sigmoid(tn)
        bc = t[:, None, None, None]
        xt = (1.0 - bc) * x0 + bc * eps
        vel = eps - x0
        txt = jnp.where(drop[:, None, None], 0.0, txt)
        pooled = jnp.where(drop[:, None], 0.0, pooled)
        temb = jnp.asarray(_sinusoid(1001, D))[jnp.round(t * 1000).astype(I32)]
        c = (_mlp_layers(p["temb"], temb, jax.nn.silu)
             + _mlp_layers(p["pemb"], pooled, jax.nn.silu))
        pt = xt.reshape(B, G_, PS, G_, PS, CL).transpose(0, 1, 3, 2, 4, 5).reshape(B, NIMG, -1)
        xi = (bf(pt) @ bf(p["patch"])).astype(F32) + p["pb"] + p["pos"]
        xc = (bf(txt) @ bf(p["ctx"])).astype(F32) + p["ctxb"]
        for q in p["blocks"]:
            xi, xc = block(q, xi, xc, c)
        sh, sc = jnp.split(jax.nn.silu(c) @ p["fada"] + p["fadab"], 2, -1)
        out = (bf(ln(xi) * (1.0 + sc[:, None]) + sh[:, None]) @ bf(p["final"])).astype(F32)
        pred = out.reshape(B, G_, G_, PS, PS, CL).transpose(0, 1, 3, 2, 4, 5)
        pred = pred.reshape(B, HW, HW, CL)
        return jnp.mean(jnp.square(pred - vel))

    def step(p, ema, m, v, t, x0, eps, tn, txt, pooled, drop):
        l, g = jax.value_and_grad(loss)(p, x0, eps, tn, txt, pooled, drop)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=1e-4, wd=0.01)
        ema = tmap(lambda a, b: 0.9999 * a + 1e-4 * b, ema, p)
        return l, p, ema, m, v

    def stream():
        return {"ada": S(D, 6 * D), "adab": S(6 * D), "qkv": S(D, 3 * D), "qn": S(DH),
                "kn": S(DH), "o": S(D, D), "f1": S(D, F), "f2": S(F, D)}
    p = {"temb": _dense_spec((D, D, D)), "pemb": _dense_spec((DTXT, D, D)),
         "patch": S(PS * PS * CL, D), "pb": S(D), "pos": S(NIMG, D), "ctx": S(DTXT, D),
         "ctxb": S(D), "blocks": [{"img": stream(), "txt": stream()} for _ in range(NL)],
         "fada": S(D, 2 * D), "fadab": S(2 * D), "final": S(D, PS * PS * CL)}
    B = 16
    return step, (p, p, p, p, S(), S(B, HW, HW, CL), S(B, HW, HW, CL), S(B), S(B, TXT, DTXT),
                  S(B, DTXT), S(B, dtype=jnp.bool_))


def float16_wav2vec2_gumbel_vector_quantizer_contrastive_dynamic_loss_scale_pretraining():
    """wav2vec 2.0 (Baevski et al.) self-supervised pre-training in float16 with float32
    master weights and dynamic loss scaling: a four-layer strided conv feature encoder
    (kernel = stride 5, 4, 4, 4; 64 then 128 channels; per-channel group norm after the
    first conv, GELU) turns 20480 raw samples into 64 frames; LayerNorm and a projection
    give the transformer inputs, passed-in masked frames are replaced by a learned
    embedding, a grouped convolutional positional embedding (kernel 15, 8 groups) is
    added, and two post-LN layers (width 128, 4 heads, softmax in float32) produce the
    context vectors; a Gumbel-softmax product quantiser (2 groups x 64 codewords, passed-in
    Gumbel noise, temperature annealed from 2 to 0.5, hard one-hot forward with the soft
    gradient) quantises the unmasked features; the contrastive loss scores each masked
    frame's context against its true quantised vector and 10 passed-in distractor frames
    of the same utterance by cosine similarity / 0.1, plus the codebook diversity
    (perplexity) penalty and an L2 feature penalty; the loss is multiplied by the passed-in
    scale, the gradients unscaled and checked for non-finite values, a bad step is skipped
    and halves the scale, 2000 good steps double it; Adam."""
    NS, D, H, NL, F, C, G, NV, DQ, NNEG, DF = 20480, 128, 4, 2, 512, 128, 2, 64, 64, 10, 64
    F16 = jnp.float16
    h16 = lambda a: a.astype(F16)
    CONVS = ((1, 64, 5), (64, C, 4), (C, C, 4), (C, C, 4))

    def encoder(p, wav):
        x = h16(wav)[..., None]
        for i, (w, (ci, co, k)) in enumerate(zip(p["convs"], CONVS)):
            x = _conv1d(x, h16(w), k, "VALID")
            if i == 0:
                xf = x.astype(F32)
                mu = jnp.mean(xf, 1, keepdims=True)
                var = jnp.var(xf, 1, keepdims=True)
                x = h16((xf - mu) * lax.rsqrt(var + 1e-5) * p["gn_g"] + p["gn_b"])
            x = jax.nn.gelu(x)
        return x

    def layer(q, x):
        b, t, d = x.shape
        qq, kk, vv = ((x @ h16(q[n])).reshape(b, t, H, d // H) for n in ("wq", "wk", "wv"))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk, preferred_element_type=F32) / math.sqrt(d // H)
        a = jnp.einsum("bhqk,bkhd->bqhd", h16(jax.nn.softmax(s, -1)), vv).reshape(b, t, d)
        x = h16(_ln((x + a @ h16(q["wo"])).astype(F32), q["g1"], q["b1"]))
        h = jax.nn.gelu(x @ h16(q["f1"]) + h16(q["fb1"])) @ h16(q["f2"]) + h16(q["fb2"])
        return h16(_ln((x + h).astype(F32), q["g2"], q["b2"]))

    def loss(p, wav, mask, gumbel, negidx, tau):
        feats = encoder(p, wav)
        B, T, _ = feats.shape
        ff = _ln(feats.astype(F32), p["fg"], p["fb"])
        pen = jnp.mean(jnp.square(ff))
        x = h16(ff) @ h16(p["proj"]) + h16(p["projb"])
        ql = (h16(ff) @ h16(p["qw"])).astype(F32).reshape(B, T, G, NV) + p["qb"]
        soft = jax.nn.softmax((ql + gumbel) / tau, -1)
        hard = jax.nn.one_hot(jnp.argmax(soft, -1), NV)
        st = hard + soft - lax.stop_gradient(soft)
        qv = jnp.einsum("btgv,gvd->btgd", st, p["codebook"]).reshape(B, T, DQ) @ p["qproj"]
        avgp = jnp.mean(jax.nn.softmax(ql, -1), (0, 1))
        ppl = jnp.sum(jnp.exp(-jnp.sum(avgp * jnp.log(avgp + 1e-7), -1)))
        div = (G * NV - ppl) / (G * NV)
        x = jnp.where(mask[..., None], h16(p["memb"]), x)
        x = x + jax.nn.gelu(_conv1d(x, h16(p["pconv"]), groups=8) + h16(p["pconvb"]))
        x = h16(_ln(x.astype(F32), p["eg"], p["eb"]))
        for q in p["layers"]:
            x = layer(q, x)
        c = (x @ h16(p["final"])).astype(F32)
        negs = jax.vmap(lambda a, i: a[i])(qv, negidx)
        cands = jnp.concatenate([qv[:, :, None], negs], 2)
        cn = c / (jnp.linalg.norm(c, axis=-1, keepdims=True) + 1e-6)
        kn = cands / (jnp.linalg.norm(cands, axis=-1, keepdims=True) + 1e-6)
        sims = jnp.einsum("btd,btkd->btk", cn, kn) / 0.1
        nll = -jax.nn.log_softmax(sims, -1)[..., 0]
        w = mask.astype(F32)
        lc = jnp.sum(nll * w) / jnp.maximum(jnp.sum(w), 1.0)
        return lc + 0.1 * div + 10.0 * pen, (lc, ppl)

    def step(p, m, v, t, scale, good, wav, mask, gumbel, negidx):
        tau = jnp.maximum(2.0 * 0.999995 ** t, 0.5)

        def scaled(p):
            l, aux = loss(p, wav, mask, gumbel, negidx, tau)
            return l * scale, (l, aux)
        (_, (l, aux)), g = jax.value_and_grad(scaled, has_aux=True)(p)
        g = tmap(lambda a: a / scale, g)
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(a)) for a in leaves(g)]))
        p2, m2, v2 = _adam_tree(p, m, v, g, t, lr=5e-4, b2=0.98, wd=0.01)
        keep = lambda new, old: tmap(lambda a, b: jnp.where(finite, a, b), new, old)
        p, m, v = keep(p2, p), keep(m2, m), keep(v2, v)
        good = jnp.where(finite, good + 1, 0)
        scale = jnp.where(finite, jnp.where(good >= 2000, scale * 2.0, scale), scale * 0.5)
        good = jnp.where(good >= 2000, 0, good)
        return l, aux, p, m, v, scale, good
    q = {"wq": S(D, D), "wk": S(D, D), "wv": S(D, D), "wo": S(D, D), "g1": S(D), "b1": S(D),
         "f1": S(D, F), "fb1": S(F), "f2": S(F, D), "fb2": S(D), "g2": S(D), "b2": S(D)}
    p = {"convs": [S(k, ci, co) for ci, co, k in CONVS], "gn_g": S(64), "gn_b": S(64),
         "fg": S(C), "fb": S(C), "proj": S(C, D), "projb": S(D), "qw": S(C, G * NV),
         "qb": S(G, NV), "codebook": S(G, NV, DQ // G), "qproj": S(DQ, DF), "memb": S(D),
         "pconv": S(15, D // 8, D), "pconvb": S(D), "eg": S(D), "eb": S(D),
         "layers": [dict(q) for _ in range(NL)], "final": S(D, DF)}
    B, T = 8, NS // 320
    return step, (p, p, p, S(), S(), S(dtype=I32), S(B, NS), S(B, T, dtype=jnp.bool_),
                  S(B, T, G, NV), S(B, T, NNEG, dtype=I32))


# ----------------------------------------------------------------------------- gnn


def graph_transformer_laplacian_eigvec_sign_flip_segment_softmax_edge_attention_regressor():
    """Graph Transformer (Dwivedi & Bresson) for molecular property regression on a batch of
    32 graphs (512 atoms, 2048 directed bonds, passed-in source / destination / graph-id
    arrays): atoms embed their type plus a Laplacian positional encoding -- the 8 passed-in
    lowest eigenvectors, randomly sign-flipped per eigenvector by passed-in signs, through
    a small MLP -- and bonds their type; three layers of sparse multi-head attention over
    the edges (width 128, 4 heads): each edge's score q[dst] . k[src] / sqrt(d) is
    modulated by the edge features, normalised per destination node by a segment softmax
    (jax.ops.segment_max for stability, segment_sum for the denominator), and the
    edge-gated values are summed into the destination by segment_sum; the edges are
    updated from their per-head scores; pre-LN residual node and edge FFNs; mean readout
    per graph by segment_sum over graph ids, an MLP head and the L1 loss; AdamW with
    cosine decay."""
    N, E, NG, D, H, NL, K, NA, NBD = 512, 2048, 32, 128, 4, 3, 8, 16, 4
    DH = D // H

    def layer(q, h, e, src, dst):
        hn = _ln(h, q["g1"], q["b1"])
        en = _ln(e, q["ge"], q["be"])
        qq, kk, vv = ((hn @ q[n]).reshape(N, H, DH) for n in ("wq", "wk", "wv"))
        ew = (en @ q["we"]).reshape(E, H, DH)
        s = jnp.sum(qq[dst] * kk[src] * ew, -1) / math.sqrt(DH)
        smax = jax.ops.segment_max(s, dst, N)
        a = jnp.exp(s - lax.stop_gradient(smax)[dst])
        den = jax.ops.segment_sum(a, dst, N)
        alpha = a / (den[dst] + 1e-9)
        msg = alpha[..., None] * vv[src] * jax.nn.sigmoid(ew)
        agg = jax.ops.segment_sum(msg, dst, N).reshape(N, D)
        h = h + agg @ q["wo"]
        e = e + (s @ q["wse"]) + q["bse"]
        hn = _ln(h, q["g2"], q["b2"])
        h = h + jax.nn.relu(hn @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]
        en = _ln(e, q["g3"], q["b3"])
        e = e + jax.nn.relu(en @ q["e1"] + q["eb1"]) @ q["e2"] + q["eb2"]
        return h, e

    def loss(p, atom, bond, src, dst, gid, eig, sign, y):
        pe = _mlp_layers(p["pe"], eig * sign[None, :])
        h = p["aemb"][atom] + pe
        e = p["bemb"][bond]
        for q in p["layers"]:
            h, e = layer(q, h, e, src, dst)
        tot = jax.ops.segment_sum(h, gid, NG)
        cnt = jax.ops.segment_sum(jnp.ones((N, 1)), gid, NG)
        pred = _mlp_layers(p["head"], tot / jnp.maximum(cnt, 1.0))[:, 0]
        return jnp.mean(jnp.abs(pred - y))

    def step(p, m, v, t, atom, bond, src, dst, gid, eig, sign, y):
        l, g = jax.value_and_grad(loss)(p, atom, bond, src, dst, gid, eig, sign, y)
        p, m, v = _adam_tree(p, m, v, g, t, lr=_cosine_lr(t, 5e-4, 100000.0, warm=1000.0),
                             wd=0.01)
        return l, p, m, v
    q = {"g1": S(D), "b1": S(D), "ge": S(D), "be": S(D), "wq": S(D, D), "wk": S(D, D),
         "wv": S(D, D), "we": S(D, D), "wo": S(D, D), "wse": S(H, D), "bse": S(D),
         "g2": S(D), "b2": S(D), "f1": S(D, 2 * D), "fb1": S(2 * D), "f2": S(2 * D, D),
         "fb2": S(D), "g3": S(D), "b3": S(D), "e1": S(D, 2 * D), "eb1": S(2 * D),
         "e2": S(2 * D, D), "eb2": S(D)}
    p = {"aemb": S(NA, D), "bemb": S(NBD, D), "pe": _dense_spec((K, 64, D)),
         "layers": [dict(q) for _ in range(NL)], "head": _dense_spec((D, D, 1))}
    return step, (p, p, p, S(), S(N, dtype=I32), S(E, dtype=I32), S(E, dtype=I32),
                  S(E, dtype=I32), S(N, dtype=I32), S(N, K), S(K), S(NG))


def temporal_graph_network_memory_gru_last_message_scatter_link_prediction():
    """Temporal Graph Network (TGN, Rossi et al.) for future-link prediction on a stream of
    interaction events over 2048 nodes: a per-node memory (96-dim, with last-update times)
    is passed in and returned; each of the 256 events in the batch creates a message for
    both endpoints -- both memories, a learned cosine time encoding of the time since the
    node's last update and the 16-dim event features -- and the "last" aggregator keeps
    only each node's most recent message, found by a scatter-max of event order
    (.at[].max) into a node table; a GRU updates those nodes' memories, written back with
    .at[].set (losing duplicates by dropping out-of-range indices); the embedding module
    applies two-head temporal graph attention from each query node (source, destination
    and a passed-in negative destination) over 8 passed-in most recent neighbours --
    their updated memories, edge features and time encodings, with neighbours from the
    future masked; an MLP link predictor scores (source, destination) against (source,
    negative) with binary cross-entropy; Adam; the ranking accuracy is returned."""
    NN, DM, DF, DT, DE, K, NH = 2048, 96, 16, 32, 128, 8, 2

    def tenc(q, dt):
        return jnp.cos(dt[..., None] * q["w"] + q["b"])

    def embed(p, mem, nodes, qt, nbr, nbr_t, nbr_f):
        n = nodes.shape[0]
        q_in = jnp.concatenate([mem[nodes], tenc(p["time"], jnp.zeros_like(qt))], -1)
        kv_in = jnp.concatenate([mem[nbr], nbr_f, tenc(p["time"], qt[:, None] - nbr_t)], -1)
        qq = (q_in @ p["wq"]).reshape(n, NH, -1)
        kk = (kv_in @ p["wk"]).reshape(n, K, NH, -1)
        vv = (kv_in @ p["wv"]).reshape(n, K, NH, -1)
        s = jnp.einsum("nhd,nkhd->nhk", qq, kk) / math.sqrt(qq.shape[-1])
        s = jnp.where((nbr_t <= qt[:, None])[:, None, :], s, -1e9)
        o = jnp.einsum("nhk,nkhd->nhd", jax.nn.softmax(s, -1), vv).reshape(n, -1)
        return _mlp_layers(p["merge"], jnp.concatenate([o @ p["wo"], mem[nodes]], -1))

    def loss(p, mem, last_t, src, dst, neg, ts, feat, nbr, nbr_t, nbr_f):
        B = src.shape[0]
        nodes = jnp.concatenate([src, dst])
        other = jnp.concatenate([dst, src])
        tt = jnp.concatenate([ts, ts])
        msg = jnp.concatenate([mem[nodes], mem[other], tenc(p["time"], tt - last_t[nodes]),
                               jnp.concatenate([feat, feat])], -1)
        order = jnp.arange(2 * B)
        last = jnp.full((NN,), -1, I32).at[nodes].max(order)
        tgt = jnp.where(last[nodes] == order, nodes, NN)
        new = _gru_cell(p["gru"], msg, mem[nodes])
        mem2 = mem.at[tgt].set(new, mode="drop")
        last2 = last_t.at[tgt].set(tt, mode="drop")
        z = embed(p, mem2, jnp.concatenate([src, dst, neg]), jnp.concatenate([ts, ts, ts]),
                  nbr, nbr_t, nbr_f)
        zs, zd, zn = jnp.split(z, 3)
        sp = _mlp_layers(p["link"], jnp.concatenate([zs, zd], -1))[:, 0]
        sn = _mlp_layers(p["link"], jnp.concatenate([zs, zn], -1))[:, 0]
        l = jnp.mean(_bce_logits(sp, 1.0)) + jnp.mean(_bce_logits(sn, 0.0))
        return l, (jnp.mean((sp > sn).astype(F32)), lax.stop_gradient(mem2), last2)

    def step(p, m, v, t, mem, last_t, src, dst, neg, ts, feat, nbr, nbr_t, nbr_f):
        (l, (acc, mem, last_t)), g = jax.value_and_grad(loss, has_aux=True)(
            p, mem, last_t, src, dst, neg, ts, feat, nbr, nbr_t, nbr_f)
        p, m, v = _adam_tree(p, m, v, g, t, lr=1e-4)
        return l, acc, p, m, v, mem, last_t
    DMSG = 2 * DM + DT + DF
    DKV = DM + DF + DT
    p = {"time": {"w": S(DT), "b": S(DT)}, "gru": _gru_spec(DMSG, DM),
         "wq": S(DM + DT, DE), "wk": S(DKV, DE), "wv": S(DKV, DE), "wo": S(DE, DE),
         "merge": _dense_spec((DE + DM, DE, DE)), "link": _dense_spec((2 * DE, DE, 1))}
    B = 256
    return step, (p, p, p, S(), S(NN, DM), S(NN), S(B, dtype=I32), S(B, dtype=I32),
                  S(B, dtype=I32), S(B), S(B, DF), S(3 * B, K, dtype=I32), S(3 * B, K),
                  S(3 * B, K, DF))


# ----------------------------------------------------------------------------- quantization


def _fp8_qdq(x, scale, dtype, fmax):
    return jnp.clip(x / scale, -fmax, fmax).astype(dtype)


@jax.custom_vjp
def _fp8_delayed_matmul(x, w, sx, sw, sg):
    xq = _fp8_qdq(x, sx, jnp.float8_e4m3fn, 448.0).astype(F32) * sx
    wq = _fp8_qdq(w, sw, jnp.float8_e4m3fn, 448.0).astype(F32) * sw
    return xq @ wq


def _fp8_delayed_matmul_fwd(x, w, sx, sw, sg):
    xq = _fp8_qdq(x, sx, jnp.float8_e4m3fn, 448.0)
    wq = _fp8_qdq(w, sw, jnp.float8_e4m3fn, 448.0)
    return (xq.astype(F32) * sx) @ (wq.astype(F32) * sw), (xq, wq, sx, sw, sg)


def _fp8_delayed_matmul_bwd(res, g):
    xq, wq, sx, sw, sg = res
    gq = _fp8_qdq(g, sg, jnp.float8_e5m2, 57344.0).astype(F32) * sg
    dx = gq @ (wq.astype(F32) * sw).T
    dw = (xq.astype(F32) * sx).T @ gq
    return dx, dw, jnp.zeros_like(sx), jnp.zeros_like(sw), jnp.max(jnp.abs(g)).astype(sg.dtype)


_fp8_delayed_matmul.defvjp(_fp8_delayed_matmul_fwd, _fp8_delayed_matmul_bwd)


def fp8_delayed_scaling_amax_history_e4m3_forward_e5m2_backward_custom_vjp_resmlp():
    """FP8 training with delayed scaling (Transformer-Engine / Flax fp8 style) of a residual
    MLP classifier on flattened 28x28 inputs (784 -> 512, three pre-LN residual blocks
    512 -> 1024 -> 512 with GELU, a float32 10-way head): every hidden linear layer is a
    jax.custom_vjp whose forward quantises the activations and weights to float8_e4m3fn
    (saturating at 448) with per-tensor scales and multiplies the dequantised values, and
    whose backward quantises the incoming gradient to float8_e5m2 (saturating at 57344);
    the scales come from a passed-in 16-step amax history per layer and tensor
    (max over the history / fp8 max), and the new forward amaxes are returned as aux
    while the gradient amax is smuggled out as the cotangent of the gradient-scale input;
    the histories are rolled and the newest amaxes written at the front; cross-entropy;
    AdamW with clipping; the accuracy is returned."""
    DIN, D, F, NB, NC, AH = 784, 512, 1024, 3, 10, 16
    NLIN = 1 + 2 * NB
    FMAX = np.array([448.0, 448.0, 57344.0], np.float32)

    def loss(p, scales, x, y):
        amax = []

        def lin(i, h, w, b):
            lead = h.shape[:-1]
            h2 = h.reshape(-1, h.shape[-1])
            amax.append(jnp.stack([jnp.max(jnp.abs(lax.stop_gradient(h2))),
                                   jnp.max(jnp.abs(lax.stop_gradient(w)))]))
            out = _fp8_delayed_matmul(h2, w, scales[i, 0], scales[i, 1], scales[i, 2])
            return out.reshape(*lead, -1) + b
        h = lin(0, x, p["inp"], p["inpb"])
        for j, q in enumerate(p["blocks"]):
            u = _ln(h, q["g"], q["b"])
            u = jax.nn.gelu(lin(1 + 2 * j, u, q["w1"], q["b1"]))
            h = h + lin(2 + 2 * j, u, q["w2"], q["b2"])
        logits = _ln(h, p["gf"], p["bf"]) @ p["head"] + p["hb"]
        acc = jnp.mean((jnp.argmax(logits, -1) == y).astype(F32))
        return _xent(logits, y), (acc, jnp.stack(amax))

    def step(p, m, v, t, hist, x, y):
        scales = jnp.maximum(jnp.max(hist, -1), 1e-6) / FMAX
        (l, (acc, amx)), (g, gs) = jax.value_and_grad(loss, argnums=(0, 1), has_aux=True)(
            p, scales, x, y)
        new = jnp.concatenate([amx, gs[:, 2:3]], -1)
        hist = jnp.roll(hist, 1, -1).at[..., 0].set(new)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=1e-3, wd=1e-4)
        return l, acc, p, m, v, hist
    blk = {"g": S(D), "b": S(D), "w1": S(D, F), "b1": S(F), "w2": S(F, D), "b2": S(D)}
    p = {"inp": S(DIN, D), "inpb": S(D), "blocks": [dict(blk) for _ in range(NB)],
         "gf": S(D), "bf": S(D), "head": S(D, NC), "hb": S(NC)}
    B = 256
    return step, (p, p, p, S(), S(NLIN, 3, AH), S(B, DIN), S(B, dtype=I32))


# ----------------------------------------------------------------------------- remat


def remat_conformer_macaron_ffn_conv_module_save_only_these_names_policy():
    """Conformer (Gulati et al.) acoustic model trained with rematerialisation: 128 frames
    of 80-dim log-mel features, SpecAugment-masked by a passed-in multiplicative mask, are
    subsampled 4x by two strided 3x3 convs (32 channels) and projected to width 144 with
    sinusoidal positions; each of two Conformer blocks is a macaron pair of half-step
    swish FFNs around multi-head self-attention (4 heads) and a convolution module
    (pointwise conv to 2x width, GLU, depthwise conv of kernel 15, batch norm with batch
    statistics, swish, pointwise conv), closed by a LayerNorm; every block is a
    jax.checkpoint with the save_only_these_names policy keeping only the values tagged
    "ffn1_out", "mhsa_out" and "conv_out" by checkpoint_name; a frame-level 48-way phone
    classifier on the 32 subsampled frames; cross-entropy; Adam with the Noam schedule;
    BN batch statistics returned."""
    NMEL, TF, D, H, K, NL, NC, CS = 80, 128, 144, 4, 15, 2, 48, 32
    T = TF // 4

    def ffn(q, x):
        h = _ln(x, q["g"], q["b"])
        return jax.nn.swish(h @ q["w1"] + q["b1"]) @ q["w2"] + q["b2"]

    def block(q, x):
        st = []
        x = x + 0.5 * checkpoint_name(ffn(q["ff1"], x), "ffn1_out")
        h = _ln(x, q["ga"], q["ba"])
        x = x + checkpoint_name(_mha(q["att"], h, h, H), "mhsa_out")
        c = q["conv"]
        h = _ln(x, c["g"], c["b"]) @ c["pw1"] + c["pb1"]
        h = h[..., :D] * jax.nn.sigmoid(h[..., D:])
        h = _conv1d(h, c["dw"], groups=D)
        h, s = _bn(h, c["bg"], c["bb"], (0, 1))
        st.append(s)
        h = jax.nn.swish(h) @ c["pw2"] + c["pb2"]
        x = x + checkpoint_name(h, "conv_out")
        x = x + 0.5 * ffn(q["ff2"], x)
        return _ln(x, q["gf"], q["bf"]), st
    block_r = jax.checkpoint(block, policy=CP.save_only_these_names("ffn1_out", "mhsa_out",
                                                                    "conv_out"))

    def loss(p, mel, specmask, labels):
        B = mel.shape[0]
        x = (mel * specmask)[..., None]
        x = jax.nn.relu(_conv(x, p["s1"], 2) + p["s1b"])
        x = jax.nn.relu(_conv(x, p["s2"], 2) + p["s2b"])
        x = x.reshape(B, T, -1) @ p["inp"] + p["inpb"] + _sinusoid(T, D)
        stats = []
        for q in p["blocks"]:
            x, st = block_r(q, x)
            stats.extend(st)
        return _xent(x @ p["out"] + p["ob"], labels), stats

    def step(p, m, v, t, mel, specmask, labels):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, mel, specmask, labels)
        s = t + 1.0
        lr = 5.0 * D ** -0.5 * jnp.minimum(s ** -0.5, s * 10000.0 ** -1.5)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr, b2=0.98, eps=1e-9)
        return l, stats, p, m, v

    def ff():
        return {"g": S(D), "b": S(D), "w1": S(D, 4 * D), "b1": S(4 * D), "w2": S(4 * D, D),
                "b2": S(D)}
    conv = {"g": S(D), "b": S(D), "pw1": S(D, 2 * D), "pb1": S(2 * D), "dw": S(K, 1, D),
            "bg": S(D), "bb": S(D), "pw2": S(D, D), "pb2": S(D)}
    blk = {"ff1": ff(), "ga": S(D), "ba": S(D), "att": _attn_params(D), "conv": conv,
           "ff2": ff(), "gf": S(D), "bf": S(D)}
    p = {"s1": S(3, 3, 1, CS), "s1b": S(CS), "s2": S(3, 3, CS, CS), "s2b": S(CS),
         "inp": S(CS * NMEL // 4, D), "inpb": S(D),
         "blocks": [{k: (dict(vv) if isinstance(vv, dict) else vv) for k, vv in blk.items()}
                    for _ in range(NL)], "out": S(D, NC), "ob": S(NC)}
    B = 16
    return step, (p, p, p, S(), S(B, TF, NMEL), S(B, TF, NMEL), S(B, T, dtype=I32))


def remat_gpt_neox_parallel_residual_partial_rotary_dots_no_batch_dims_scan():
    """GPT-NeoX-style decoder LM (Black et al.) with rematerialisation: the four layers are
    stacked and run by lax.scan over a jax.checkpoint'ed layer with the
    dots_with_no_batch_dims_saveable policy (weight matmuls saved, batched attention
    einsums and everything elementwise recomputed); each layer uses the parallel residual
    x + attn(LN1(x)) + mlp(LN2(x)), a fused QKV projection laid out head-major, rotary
    embeddings on only the first quarter (8 of 32) of every head's dimensions and causal
    softmax attention, and a GELU MLP; 128 tokens, width 128, 4 heads, untied 1024-word
    output embedding; cross-entropy; AdamW with warmup-cosine and global-norm clipping."""
    V, D, H, T, NL, RD = 1024, 128, 4, 128, 4, 8
    DH = D // H

    def prope(x):
        return jnp.concatenate([_rope(x[..., :RD]), x[..., RD:]], -1)

    def layer(x, q):
        b, t, d = x.shape
        h = _ln(x, q["g1"], q["b1"])
        qkv = (h @ q["qkv"] + q["qkvb"]).reshape(b, t, H, 3, DH)
        qq, kk, vv = prope(qkv[:, :, :, 0]), prope(qkv[:, :, :, 1]), qkv[:, :, :, 2]
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(DH)
        s = jnp.where(_causal(t)[None, None], s, -1e9)
        a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d)
        m = _ln(x, q["g2"], q["b2"])
        mlp = jax.nn.gelu(m @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]
        return x + a @ q["wo"] + q["wob"] + mlp, None
    layer_r = jax.checkpoint(layer, policy=CP.dots_with_no_batch_dims_saveable)

    def loss(p, tok, tgt):
        x = p["emb"][tok]
        x, _ = lax.scan(layer_r, x, p["stack"])
        return _xent(_ln(x, p["gf"], p["bf"]) @ p["out"], tgt)

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        lr = _cosine_lr(t, 6e-4, 150000.0, warm=1500.0)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.95, wd=0.01)
        return l, p, m, v
    stack = {"g1": S(NL, D), "b1": S(NL, D), "qkv": S(NL, D, 3 * D), "qkvb": S(NL, 3 * D),
             "wo": S(NL, D, D), "wob": S(NL, D), "g2": S(NL, D), "b2": S(NL, D),
             "f1": S(NL, D, 4 * D), "fb1": S(NL, 4 * D), "f2": S(NL, 4 * D, D),
             "fb2": S(NL, D)}
    p = {"emb": S(V, D), "stack": stack, "gf": S(D), "bf": S(D), "out": S(D, V)}
    B = 16
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, T, dtype=I32))


# ----------------------------------------------------------------------------- custom_vjp


_ACTNN_GROUP = 256


def _actnn_compress(x, noise):
    n, k = x.shape
    xg = x.reshape(n, k // _ACTNN_GROUP, _ACTNN_GROUP)
    lo = jnp.min(xg, -1, keepdims=True)
    s = jnp.maximum(jnp.max(xg, -1, keepdims=True) - lo, 1e-8) / 255.0
    u = noise.reshape(xg.shape)
    q = jnp.clip(jnp.floor((xg - lo) / s + u), 0.0, 255.0).astype(jnp.uint8)
    return q, lo, s


@jax.custom_vjp
def _actnn_dense_relu(x, w, b, noise):
    return jax.nn.relu(x @ w + b)


def _actnn_dense_relu_fwd(x, w, b, noise):
    y = x @ w + b
    q, lo, s = _actnn_compress(x, noise)
    return jax.nn.relu(y), (q, lo, s, w, y > 0)


def _actnn_dense_relu_bwd(res, g):
    q, lo, s, w, pos = res
    gy = jnp.where(pos, g, 0.0)
    xd = (q.astype(F32) * s + lo).reshape(q.shape[0], -1)
    return gy @ w.T, xd.T @ gy, jnp.sum(gy, 0), jnp.zeros(xd.shape, F32)


_actnn_dense_relu.defvjp(_actnn_dense_relu_fwd, _actnn_dense_relu_bwd)


def custom_vjp_actnn_int8_compressed_saved_activations_relu_mlp_backward_dequant():
    """Activation-compressed training in the style of ActNN (Chen et al.): every hidden
    dense+ReLU layer of an MLP classifier on flattened 32x32x3 images (3072 -> 1024 ->
    1024 -> 512, then a float32 100-way head) is a jax.custom_vjp whose forward saves,
    instead of its float32 input, an 8-bit code per value -- per row and per group of 256
    features, min / range quantisation with stochastic rounding by passed-in uniform noise
    -- plus a boolean ReLU mask; the backward dequantises the codes to form the weight
    gradient x^T dy, while the input gradient dy W^T and the bias gradient need no saved
    activations; label-smoothed cross-entropy; SGD with Nesterov momentum, weight decay
    and a cosine schedule."""
    DIN, NC = 3072, 100
    DIMS = (DIN, 1024, 1024, 512)

    def loss(p, x, y, noises):
        h = x
        for (w, b), nz in zip(p["hidden"], noises):
            h = _actnn_dense_relu(h, w, b, nz)
        return _smooth_xent(h @ p["head"] + p["hb"], y)

    def step(p, mom, t, x, y, noises):
        l, g = jax.value_and_grad(loss)(p, x, y, noises)
        lr = _cosine_lr(t, 0.1, 60000.0)
        g = tmap(lambda g, w: g + (5e-4 * w if w.ndim >= 2 else 0.0), g, p)
        mom = tmap(lambda b, g: 0.9 * b + g, mom, g)
        p = tmap(lambda w, g, b: w - lr * (g + 0.9 * b), p, g, mom)
        return l, p, mom
    p = {"hidden": _dense_spec(DIMS), "head": S(DIMS[-1], NC), "hb": S(NC)}
    B = 128
    return step, (p, p, S(), S(B, DIN), S(B, dtype=I32), [S(B, d) for d in DIMS[:-1]])


# ----------------------------------------------------------------------------- control


def dreamer_rssm_world_model_imagination_fori_actor_critic_lambda_return_reverse_scan():
    """Dreamer (Hafner et al.) agent update on 16 replayed sequences of 32 steps (64-dim
    observations, 4-dim continuous actions, rewards): the world model is a recurrent
    state-space model -- a GRU deterministic state (128) and a Gaussian stochastic state
    (32) whose prior comes from the GRU state and whose posterior also sees the encoded
    observation, with passed-in reparameterisation noise -- unrolled by a time-major
    lax.scan and trained on observation reconstruction, reward prediction and a balanced
    KL (0.8 towards the prior, 0.2 towards the posterior) with free nats; from all 512
    posterior states (stop-gradient) a lax.fori_loop imagines 15 steps with the frozen
    world model and a tanh-Gaussian actor (passed-in noise), writing the imagined states
    into a buffer with .at[].set; rewards and target-critic values give lambda-returns by
    a reverse lax.scan; the actor maximises the discounted returns by backpropagating
    through the dynamics, plus an entropy bonus, and the critic regresses the
    stop-gradient returns; three Adam optimisers with their own learning rates and
    clipping."""
    OBS, ACT, DET, STO, HID, T, HOR, GAM, LAM = 64, 4, 128, 32, 128, 32, 15, 0.99, 0.95
    FEAT = DET + STO
    elu = jax.nn.elu

    def mlp(layers, x):
        return _mlp_layers(layers, x, elu)

    def prior(w, h, z, a):
        x = elu(jnp.concatenate([z, a], -1) @ w["pin"] + w["pinb"])
        h = _gru_cell(w["gru"], x, h)
        mu, sd = jnp.split(mlp(w["prior"], h), 2, -1)
        return h, mu, jax.nn.softplus(sd) + 0.1

    def posterior(w, h, e):
        mu, sd = jnp.split(mlp(w["post"], jnp.concatenate([h, e], -1)), 2, -1)
        return mu, jax.nn.softplus(sd) + 0.1

    def kl(m1, s1, m2, s2):
        return jnp.sum(jnp.log(s2 / s1) + (s1 ** 2 + (m1 - m2) ** 2) / (2 * s2 ** 2) - 0.5, -1)

    def world(w, obs, act, rew, eps):
        B = obs.shape[0]
        tm = lambda a: jnp.swapaxes(a, 0, 1)
        emb = mlp(w["enc"], obs)
        a_prev = jnp.concatenate([jnp.zeros((B, 1, ACT)), act[:, :-1]], 1)

        def cell(c, inp):
            h, z = c
            e, a, ep = inp
            h, pm, ps = prior(w, h, z, a)
            qm, qs = posterior(w, h, e)
            z = qm + qs * ep
            return (h, z), (h, z, pm, ps, qm, qs)
        _, (hs, zs, pm, ps, qm, qs) = lax.scan(cell, (jnp.zeros((B, DET)), jnp.zeros((B, STO))),
                                               (tm(emb), tm(a_prev), tm(eps)))
        feat = jnp.concatenate([hs, zs], -1)
        rec = jnp.mean(jnp.sum(jnp.square(mlp(w["dec"], feat) - tm(obs)), -1))
        rl = jnp.mean(jnp.square(mlp(w["rew"], feat)[..., 0] - tm(rew)))
        sg = lax.stop_gradient
        klv = (0.8 * jnp.maximum(kl(sg(qm), sg(qs), pm, ps), 1.0)
               + 0.2 * jnp.maximum(kl(qm, qs, sg(pm), sg(ps)), 1.0))
        return rec + rl + jnp.mean(klv), hs, zs

    def loss(p, obs, act, rew, eps, eps_a, eps_z):
        wm_loss, hs, zs = world(p["wm"], obs, act, rew, eps)
        w = lax.stop_gradient(p["wm"])
        h0 = lax.stop_gradient(hs.reshape(-1, DET))
        z0 = lax.stop_gradient(zs.reshape(-1, STO))
        n = h0.shape[0]

        def body(i, c):
            h, z, feats, ents = c
            f = jnp.concatenate([h, z], -1)
            mu, sd = jnp.split(mlp(p["actor"], f), 2, -1)
            sd = jax.nn.softplus(sd) + 1e-2
            a = jnp.tanh(mu + sd * eps_a[i])
            h, pm, ps = prior(w, h, z, a)
            z = pm + ps * eps_z[i]
            feats = feats.at[i + 1].set(jnp.concatenate([h, z], -1))
            ents = ents.at[i].set(jnp.sum(jnp.log(sd), -1))
            return h, z, feats, ents
        feats0 = jnp.zeros((HOR + 1, n, FEAT)).at[0].set(jnp.concatenate([h0, z0], -1))
        _, _, feats, ents = lax.fori_loop(0, HOR, body, (h0, z0, feats0, jnp.zeros((HOR, n))))
        rwd = mlp(w["rew"], feats)[..., 0]
        val = mlp(lax.stop_gradient(p["critic"]), feats)[..., 0]

        def lam_ret(c, inp):
            r, vn = inp
            R = r + GAM * ((1.0 - LAM) * vn + LAM * c)
            return R, R
        _, rets = lax.scan(lam_ret, val[-1], (rwd[1:], val[1:]), reverse=True)
        disc = jnp.asarray(GAM ** np.arange(HOR), F32)[:, None]
        actor_loss = -jnp.mean(disc * rets) - 1e-4 * jnp.mean(ents)
        vpred = mlp(p["critic"], lax.stop_gradient(feats[:-1]))[..., 0]
        critic_loss = 0.5 * jnp.mean(disc * jnp.square(vpred - lax.stop_gradient(rets)))
        return wm_loss + actor_loss + critic_loss, (wm_loss, actor_loss, critic_loss)

    def step(p, m, v, t, obs, act, rew, eps, eps_a, eps_z):
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, obs, act, rew, eps, eps_a,
                                                             eps_z)
        newp, newm, newv = {}, {}, {}
        for k, lr, clip in (("wm", 6e-4, 100.0), ("actor", 8e-5, 100.0),
                            ("critic", 8e-5, 100.0)):
            newp[k], newm[k], newv[k] = _adam_tree(p[k], m[k], v[k], _global_clip(g[k], clip),
                                                   t, lr=lr, eps=1e-5)
        return l, aux, newp, newm, newv
    wm = {"enc": _dense_spec((OBS, HID, HID)), "pin": S(STO + ACT, HID), "pinb": S(HID),
          "gru": _gru_spec(HID, DET), "prior": _dense_spec((DET, HID, 2 * STO)),
          "post": _dense_spec((DET + HID, HID, 2 * STO)), "dec": _dense_spec((FEAT, HID, OBS)),
          "rew": _dense_spec((FEAT, HID, 1))}
    p = {"wm": wm, "actor": _dense_spec((FEAT, HID, HID, 2 * ACT)),
         "critic": _dense_spec((FEAT, HID, HID, 1))}
    B = 16
    N = B * T
    return step, (p, p, p, S(), S(B, T, OBS), S(B, T, ACT), S(B, T), S(B, T, STO),
                  S(HOR, N, ACT), S(HOR, N, STO))


def differentiable_burgers_cfl_while_substeps_scan_cond_switch_integrator_learned_closure():
    """Differentiable-physics training of a learned subgrid closure for the viscous 1-D
    Burgers equation on a periodic 128-point grid (32 initial conditions, 6 coarse steps
    of 0.05 against a passed-in reference trajectory): the right-hand side is a central
    difference advection and diffusion term plus a circularly padded three-layer conv1d
    tanh closure; each coarse step chooses its number of substeps by a lax.while_loop
    that doubles it (up to 8) until the CFL number of the stop-gradient maximum speed
    falls below 0.5, then runs a lax.scan over 8 substep slots where lax.cond skips the
    slots beyond that number and lax.switch applies the integrator picked by a passed-in
    index (forward Euler, Heun, SSP-RK3); the coarse steps themselves are an outer
    lax.scan; the loss is the MSE to the reference at every coarse step; Adam with
    clipping; the substep counts are returned."""
    NX, MAXSUB, DT, NU, CFL, CH, KS = 128, 8, 0.05, 0.01, 0.5, 32, 5
    DX = 2.0 * math.pi / NX

    def c1(x, w, b):
        xp = jnp.concatenate([x[:, -(KS // 2):], x, x[:, :KS // 2]], 1)
        return _conv1d(xp, w, pad="VALID") + b

    def rhs(q, u):
        up, um = jnp.roll(u, -1, -1), jnp.roll(u, 1, -1)
        h = jnp.tanh(c1(u[..., None], q["w1"], q["b1"]))
        h = jnp.tanh(c1(h, q["w2"], q["b2"]))
        clo = c1(h, q["w3"], q["b3"])[..., 0]
        return -u * (up - um) / (2 * DX) + NU * (up - 2 * u + um) / DX ** 2 + clo

    def euler(q, u, h):
        return u + h * rhs(q, u)

    def heun(q, u, h):
        k1 = rhs(q, u)
        return u + 0.5 * h * (k1 + rhs(q, u + h * k1))

    def ssprk3(q, u, h):
        u1 = u + h * rhs(q, u)
        u2 = 0.75 * u + 0.25 * (u1 + h * rhs(q, u1))
        return u / 3.0 + 2.0 / 3.0 * (u2 + h * rhs(q, u2))

    def coarse(q, u, scheme):
        umax = lax.stop_gradient(jnp.max(jnp.abs(u)))
        n = lax.while_loop(lambda n: (DT / n.astype(F32) * umax / DX > CFL) & (n < MAXSUB),
                           lambda n: n * 2, jnp.int32(1))
        h = DT / n.astype(F32)

        def sub(u, i):
            u = lax.cond(i < n,
                         lambda u: lax.switch(scheme, [lambda a: euler(q, a, h),
                                                       lambda a: heun(q, a, h),
                                                       lambda a: ssprk3(q, a, h)], u),
                         lambda u: u, u)
            return u, None
        u, _ = lax.scan(sub, u, jnp.arange(MAXSUB))
        return u, n

    def loss(p, u0, ref, scheme):
        def outer(u, r):
            u, n = coarse(p, u, scheme)
            return u, (jnp.mean(jnp.square(u - r)), n)
        _, (errs, ns) = lax.scan(outer, u0, jnp.swapaxes(ref, 0, 1))
        return jnp.mean(errs), ns

    def step(p, m, v, t, u0, ref, scheme):
        (l, ns), g = jax.value_and_grad(loss, has_aux=True)(p, u0, ref, scheme)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=1e-3)
        return l, ns, p, m, v
    p = {"w1": S(KS, 1, CH), "b1": S(CH), "w2": S(KS, CH, CH), "b2": S(CH), "w3": S(KS, CH, 1),
         "b3": S(1)}
    B, K = 32, 6
    return step, (p, p, p, S(), S(B, NX), S(B, K, NX), S(dtype=I32))


# ----------------------------------------------------------------------------- sort / top_k


def memorizing_transformer_knn_external_memory_topk_retrieval_gated_combination_lm():
    """Memorizing Transformer (Wu et al.) decoder LM on 64-token segments: the second of
    three pre-LN layers (width 128, 4 heads) also attends into a passed-in non-trainable
    external memory of 1024 (key, value) pairs per sequence and head from earlier
    segments: L2-normalised queries score all memory keys, lax.top_k keeps the 32 best,
    the retrieved keys and values are gathered (vmapped indexing) and re-scored so the
    gradient reaches the query, and a learned per-head sigmoid gate mixes the memory
    attention output with the local causal attention; the segment's normalised keys and
    values are pushed into the memory FIFO (oldest 64 dropped, stop-gradient) and
    returned; tied embeddings; cross-entropy; AdamW with warmup-cosine."""
    V, D, H, T, NL, F, M, KNN, MEML = 1024, 128, 4, 64, 3, 512, 1024, 32, 1
    DH = D // H

    def layer(q, x, mem=None):
        b, t, d = x.shape
        h = _ln(x, q["g1"], q["b1"])
        qq, kk, vv = ((h @ q[n]).reshape(b, t, H, DH) for n in ("wq", "wk", "wv"))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(DH)
        s = jnp.where(_causal(t)[None, None], s, -1e9)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv)
        newkv = None
        if mem is not None:
            mk, mv = mem
            qn = qq / (jnp.linalg.norm(qq, axis=-1, keepdims=True) + 1e-6)
            kn = kk / (jnp.linalg.norm(kk, axis=-1, keepdims=True) + 1e-6)
            sm = jnp.einsum("bqhd,bmhd->bhqm", lax.stop_gradient(qn), mk)
            _, idx = lax.top_k(sm, KNN)
            gather = jax.vmap(jax.vmap(lambda a, i: a[i]))
            gk = gather(jnp.transpose(mk, (0, 2, 1, 3)), idx)
            gv = gather(jnp.transpose(mv, (0, 2, 1, 3)), idx)
            sc = jnp.einsum("bqhd,bhqkd->bhqk", qn, gk) * q["temp"][:, None, None]
            om = jnp.einsum("bhqk,bhqkd->bqhd", jax.nn.softmax(sc, -1), gv)
            gate = jax.nn.sigmoid(q["gate"])[:, None]
            o = gate * om + (1.0 - gate) * o
            newkv = (lax.stop_gradient(kn), lax.stop_gradient(vv))
        x = x + o.reshape(b, t, d) @ q["wo"]
        hh = _ln(x, q["g2"], q["b2"])
        return x + jax.nn.gelu(hh @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"], newkv

    def loss(p, tok, tgt, memk, memv):
        x = p["emb"][tok] + p["pos"]
        newkv = None
        for i, q in enumerate(p["layers"]):
            x, kv = layer(q, x, (memk, memv) if i == MEML else None)
            newkv = kv if kv is not None else newkv
        logits = _ln(x, p["gf"], p["bf"]) @ p["emb"].T
        nk, nv = newkv
        memk = jnp.concatenate([memk[:, T:], nk], 1)
        memv = jnp.concatenate([memv[:, T:], nv], 1)
        return _xent(logits, tgt), (memk, memv)

    def step(p, m, v, t, tok, tgt, memk, memv):
        (l, (memk, memv)), g = jax.value_and_grad(loss, has_aux=True)(p, tok, tgt, memk, memv)
        lr = _cosine_lr(t, 5e-4, 100000.0, warm=1000.0)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.98, wd=0.01)
        return l, p, m, v, memk, memv

    def blk(i):
        q = {"g1": S(D), "b1": S(D), "wq": S(D, D), "wk": S(D, D), "wv": S(D, D),
             "wo": S(D, D), "g2": S(D), "b2": S(D), "f1": S(D, F), "fb1": S(F), "f2": S(F, D),
             "fb2": S(D)}
        if i == MEML:
            q.update(gate=S(H), temp=S(H))
        return q
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [blk(i) for i in range(NL)], "gf": S(D),
         "bf": S(D)}
    B = 8
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, T, dtype=I32), S(B, M, H, DH),
                  S(B, M, H, DH))


# ----------------------------------------------------------------------------- fft


def _mel_filterbank_np(nfft, nmel, sr):
    hz2mel = lambda f: 2595.0 * np.log10(1.0 + f / 700.0)
    mel2hz = lambda m: 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    hz = mel2hz(np.linspace(hz2mel(20.0), hz2mel(sr / 2.0), nmel + 2))
    bins = np.fft.rfftfreq(nfft, 1.0 / sr)
    fb = np.zeros((len(bins), nmel), np.float32)
    for i in range(nmel):
        l, c, r = hz[i], hz[i + 1], hz[i + 2]
        fb[:, i] = np.maximum(0.0, np.minimum((bins - l) / (c - l), (r - bins) / (r - c)))
    return fb


def xvector_mfcc_rfft_mel_dct_frontend_tdnn_statistics_pooling_aam_softmax_speaker():
    """x-vector speaker embedding network (Snyder et al.) trained from raw 16 kHz waveforms
    with an in-graph MFCC front end: pre-emphasis, framing into 48 frames of 400 samples
    with hop 160 (a gather by a constant index array), a Hamming window, jnp.fft.rfft
    zero-padded to 512 points, the power spectrum, a 40-band triangular mel filterbank
    (constant matrix), log and a DCT-II matrix to 24 cepstra, and cepstral mean
    normalisation; five TDNN layers (dilated 1-D convs with kernels / dilations 5/1, 3/2,
    3/3, 1/1, 1/1, widths 256 and finally 768, each BN-ReLU), statistics pooling (mean and
    standard deviation over frames) and a 256-dim embedding layer; additive angular margin
    (ArcFace-style, s = 30, m = 0.2) softmax over 500 speakers with normalised class
    weights; SGD with momentum and weight decay; BN batch statistics returned."""
    NF, WIN, HOP, NFFT, NMEL, NCEP, SR, NSPK, EMB = 48, 400, 160, 512, 40, 24, 16000, 500, 256
    NSAMP = WIN + HOP * (NF - 1)
    IDX = np.arange(NF)[:, None] * HOP + np.arange(WIN)[None, :]
    HAM = np.hamming(WIN).astype(np.float32)
    FB = _mel_filterbank_np(NFFT, NMEL, SR)
    n = np.arange(NMEL)[:, None]
    k = np.arange(NCEP)[None, :]
    DCT = (np.cos(np.pi / NMEL * (n + 0.5) * k) * math.sqrt(2.0 / NMEL)).astype(np.float32)
    TDNN = ((5, 1, 256), (3, 2, 256), (3, 3, 256), (1, 1, 256), (1, 1, 768))
    SM, MM = 30.0, 0.2

    def mfcc(wav):
        x = jnp.concatenate([wav[:, :1], wav[:, 1:] - 0.97 * wav[:, :-1]], 1)
        spec = jnp.fft.rfft(x[:, IDX] * HAM, n=NFFT, axis=-1)
        power = jnp.square(jnp.abs(spec)) / NFFT
        c = jnp.log(power @ FB + 1e-6) @ DCT
        return c - jnp.mean(c, 1, keepdims=True)

    def loss(p, wav, spk):
        x = mfcc(wav)
        stats = []
        for q, (ks, dil, co) in zip(p["tdnn"], TDNN):
            h, st = _bn(_conv1d(x, q["w"], dil=dil) + q["b"], q["g"], q["bb"], (0, 1))
            stats.append(st)
            x = jax.nn.relu(h)
        pooled = jnp.concatenate([jnp.mean(x, 1), jnp.sqrt(jnp.var(x, 1) + 1e-5)], -1)
        e = pooled @ p["emb"] + p["embb"]
        en = e / (jnp.linalg.norm(e, axis=-1, keepdims=True) + 1e-6)
        wn = p["aam"] / (jnp.linalg.norm(p["aam"], axis=0, keepdims=True) + 1e-6)
        cos = jnp.clip(en @ wn, -1.0 + 1e-7, 1.0 - 1e-7)
        sin = jnp.sqrt(1.0 - cos * cos)
        phi = cos * math.cos(MM) - sin * math.sin(MM)
        phi = jnp.where(cos > math.cos(math.pi - MM), phi, cos - math.sin(math.pi - MM) * MM)
        oh = jax.nn.one_hot(spk, NSPK, dtype=bool)
        logits = SM * jnp.where(oh, phi, cos)
        return _xent(logits, spk), stats

    def step(p, mom, t, wav, spk):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, wav, spk)
        lr = 0.2 * 0.5 ** jnp.floor(t / 20000.0)
        g = tmap(lambda g, w: g + (2e-4 * w if w.ndim >= 2 else 0.0), g, p)
        mom = tmap(lambda b, g: 0.9 * b + g, mom, g)
        p = tmap(lambda w, b: w - lr * b, p, mom)
        return l, stats, p, mom
    tdnn, ci = [], NCEP
    for ks, dil, co in TDNN:
        tdnn.append({"w": S(ks, ci, co), "b": S(co), "g": S(co), "bb": S(co)})
        ci = co
    p = {"tdnn": tdnn, "emb": S(2 * ci, EMB), "embb": S(EMB), "aam": S(EMB, NSPK)}
    B = 32
    return step, (p, p, S(), S(B, NSAMP), S(B, dtype=I32))


# ----------------------------------------------------------------------------- scatter/gather


def product_key_memory_subkey_topk_cartesian_gather_value_table_decoder_lm():
    """Decoder LM whose second layer replaces its FFN by a product-key memory (Lample et al.):
    the query network (a linear layer followed by batch norm with batch statistics) gives
    two heads of 128-dim queries, each split into two halves scored against their own 128
    sub-keys; lax.top_k keeps 8 sub-keys per half, the 64 Cartesian combinations are scored
    by summing the halves and lax.top_k keeps the best 8, whose (i, j) pairs index a value
    table of 128 x 128 = 16384 rows (gathered, softmax-weighted and summed over heads); the
    memory-usage fraction is counted by a scatter-add of the selected indices; the rest is
    a two-layer pre-LN transformer (width 128, 4 heads, 64 tokens) with a dense GELU FFN in
    the first layer; cross-entropy; Adam with a higher learning rate and no weight decay
    for the value table, AdamW for the rest; BN batch statistics and usage returned."""
    V, D, H, T, F, NK, KNN, PH, DK = 1024, 128, 4, 64, 512, 128, 8, 2, 128
    NV = NK * NK

    def pkm(q, values, x, stats):
        b, t, d = x.shape
        n = b * t
        qq = (x @ q["wq"] + q["bq"]).reshape(n, PH * DK)
        qq, st = _bn(qq, q["qg"], q["qbb"], (0,))
        stats.append(st)
        qq = qq.reshape(n, PH, 2, DK // 2)
        s1 = jnp.einsum("nhd,hkd->nhk", qq[:, :, 0], q["k1"])
        s2 = jnp.einsum("nhd,hkd->nhk", qq[:, :, 1], q["k2"])
        v1, i1 = lax.top_k(s1, KNN)
        v2, i2 = lax.top_k(s2, KNN)
        allsc = (v1[..., :, None] + v2[..., None, :]).reshape(n, PH, KNN * KNN)
        sv, j = lax.top_k(allsc, KNN)
        idx = (jnp.take_along_axis(i1, j // KNN, -1) * NK
               + jnp.take_along_axis(i2, j % KNN, -1))
        w = jax.nn.softmax(sv, -1)
        out = jnp.einsum("nhk,nhkd->nd", w, values[idx])
        return out.reshape(b, t, d), idx

    def loss(p, tok, tgt):
        net = p["net"]
        x = net["emb"][tok] + net["pos"]
        stats, idx = [], None
        for i, q in enumerate(net["layers"]):
            h = _ln(x, q["g1"], q["b1"])
            x = x + _mha(q["att"], h, h, H, mask=_causal(T)[None, None])
            h = _ln(x, q["g2"], q["b2"])
            if "pkm" in q:
                y, idx = pkm(q["pkm"], p["values"], h, stats)
            else:
                y = jax.nn.gelu(h @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]
            x = x + y
        logits = _ln(x, net["gf"], net["bf"]) @ net["emb"].T
        usage = jnp.zeros((NV,)).at[idx.reshape(-1)].add(1.0)
        return _xent(logits, tgt), (stats, jnp.mean((usage > 0).astype(F32)))

    def step(p, m, v, t, tok, tgt):
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, tok, tgt)
        net, mn, vn = _adam_tree(p["net"], m["net"], v["net"], g["net"], t, lr=1e-4, wd=0.01)
        val, mv, vv = _adam_tree(p["values"], m["values"], v["values"], g["values"], t,
                                 lr=1e-3)
        return l, aux, {"net": net, "values": val}, {"net": mn, "values": mv}, \
            {"net": vn, "values": vv}
    l0 = {"g1": S(D), "b1": S(D), "att": _attn_params(D), "g2": S(D), "b2": S(D),
          "f1": S(D, F), "fb1": S(F), "f2": S(F, D), "fb2": S(D)}
    l1 = {"g1": S(D), "b1": S(D), "att": _attn_params(D), "g2": S(D), "b2": S(D),
          "pkm": {"wq": S(D, PH * DK), "bq": S(PH * DK), "qg": S(PH * DK), "qbb": S(PH * DK),
                  "k1": S(PH, NK, DK // 2), "k2": S(PH, NK, DK // 2)}}
    net = {"emb": S(V, D), "pos": S(T, D), "layers": [l0, l1], "gf": S(D), "bf": S(D)}
    p = {"net": net, "values": S(NV, D)}
    B = 8
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, T, dtype=I32))


# ----------------------------------------------------------------------------- dynamic slices


def packed_sequence_document_segment_ids_fori_dynamic_update_slice_packing_decoder_lm():
    """Decoder LM trained on packed sequences: every 128-token row is built in-graph from 6
    passed-in documents of up to 32 tokens (with lengths) by a lax.fori_loop (vmapped over
    the 16 rows) that writes each document's tokens, its segment id and its restarted
    position ids at the running offset with lax.dynamic_update_slice into buffers padded
    by one document length (so an overflowing document is cut at the row end) and
    advances the offset by the document's length; attention is causal and restricted to
    the same segment (block-diagonal), learned positional embeddings are indexed by the
    per-document positions, and the next-token loss counts only pairs inside one
    document; two pre-LN layers (width 128, 4 heads, GELU MLP); AdamW with warmup and
    linear decay; the packing efficiency (fraction of non-padding tokens) is returned."""
    V, D, H, T, NDOC, LMAX, NL, F = 2000, 128, 4, 128, 6, 32, 2, 512

    def pack(docs, lens):
        def body(i, c):
            tok, seg, pos, off = c
            valid = jnp.arange(LMAX) < lens[i]
            cur_t = lax.dynamic_slice(tok, (off,), (LMAX,))
            cur_s = lax.dynamic_slice(seg, (off,), (LMAX,))
            cur_p = lax.dynamic_slice(pos, (off,), (LMAX,))
            tok = lax.dynamic_update_slice(tok, jnp.where(valid, docs[i], cur_t), (off,))
            seg = lax.dynamic_update_slice(seg, jnp.where(valid, i + 1, cur_s), (off,))
            pos = lax.dynamic_update_slice(pos, jnp.where(valid, jnp.arange(LMAX), cur_p),
                                           (off,))
            return tok, seg, pos, jnp.minimum(off + lens[i], T)
        z = jnp.zeros((T + LMAX,), I32)
        tok, seg, pos, _ = lax.fori_loop(0, NDOC, body, (z, z, z, jnp.int32(0)))
        return tok[:T], seg[:T], pos[:T]

    def loss(p, docs, lens):
        tok, seg, pos = jax.vmap(pack)(docs, lens)
        x = p["emb"][tok] + p["pos"][pos]
        mask = (_causal(T)[None] & (seg[:, :, None] == seg[:, None, :])
                & (seg[:, None, :] > 0))[:, None]
        for q in p["layers"]:
            h = _ln(x, q["g1"], q["b1"])
            x = x + _mha(q["att"], h, h, H, mask=mask)
            h = _ln(x, q["g2"], q["b2"])
            x = x + jax.nn.gelu(h @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]
        logits = (_ln(x, p["gf"], p["bf"]) @ p["emb"].T)[:, :-1]
        nll = -jnp.take_along_axis(jax.nn.log_softmax(logits, -1), tok[:, 1:, None], -1)[..., 0]
        w = ((seg[:, :-1] == seg[:, 1:]) & (seg[:, 1:] > 0)).astype(F32)
        return jnp.sum(nll * w) / jnp.maximum(jnp.sum(w), 1.0), jnp.mean((seg > 0).astype(F32))

    def step(p, m, v, t, docs, lens):
        (l, eff), g = jax.value_and_grad(loss, has_aux=True)(p, docs, lens)
        lr = 3e-4 * jnp.minimum((t + 1.0) / 2000.0, jnp.maximum(0.05, 1.0 - t / 300000.0))
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.95, wd=0.1)
        return l, eff, p, m, v
    q = {"g1": S(D), "b1": S(D), "att": _attn_params(D), "g2": S(D), "b2": S(D),
         "f1": S(D, F), "fb1": S(F), "f2": S(F, D), "fb2": S(D)}
    p = {"emb": S(V, D), "pos": S(LMAX, D), "layers": [dict(q) for _ in range(NL)],
         "gf": S(D), "bf": S(D)}
    B = 16
    return step, (p, p, p, S(), S(B, NDOC, LMAX, dtype=I32), S(B, NDOC, dtype=I32))


# ----------------------------------------------------------------------------- optimizers


def _t5_buckets_np(tq, tk, bidir, nb=32, maxd=128):
    rel = np.arange(tk)[None, :] - np.arange(tq)[:, None]
    n = -rel
    ret = np.zeros_like(n)
    if bidir:
        nb //= 2
        ret = (n < 0).astype(np.int64) * nb
        n = np.abs(n)
    else:
        n = np.maximum(n, 0)
    exact = nb // 2
    large = exact + (np.log(np.maximum(n, 1) / exact) / math.log(maxd / exact)
                     * (nb - exact)).astype(np.int64)
    large = np.minimum(large, nb - 1)
    return (ret + np.where(n < exact, n, large)).astype(np.int32)


def adafactor_relative_step_update_clipping_factored_second_moment_t5_encoder_decoder():
    """T5-style encoder-decoder (Raffel et al.; two encoder and two decoder layers, width
    128, 4 heads, 64 source and 32 target tokens, RMS layer norms without bias or mean
    subtraction, gated-GELU FFNs, bucketed relative position biases shared across the layers
    of each stack -- bidirectional in the encoder, causal in the decoder -- no attention
    scaling, tied embeddings rescaled by d^-0.5 before the output) trained on span
    corruption targets with cross-entropy over non-padding targets plus a z-loss, by
    Adafactor (Shazeer & Stern): for matrices only row and column running means of the
    squared gradient are kept and their outer product (divided by the overall mean)
    stands in for the second moment, vectors keep a full second moment; the decay is
    1 - t^-0.8, the update is clipped to RMS 1 and the relative step size
    min(1e-2, 1/sqrt(t)) is scaled by the parameter's RMS (at least 1e-3); no momentum."""
    V, D, H, TE, TD, F, NLE, NLD, NB = 2000, 128, 4, 64, 32, 256, 2, 2, 32
    DH = D // H
    ENC_B = _t5_buckets_np(TE, TE, True)
    DEC_B = _t5_buckets_np(TD, TD, False)

    def attn(q, xq, xkv, bias=None, mask=None):
        b, tq, _ = xq.shape
        tk = xkv.shape[1]
        qq = (xq @ q["q"]).reshape(b, tq, H, DH)
        kk = (xkv @ q["k"]).reshape(b, tk, H, DH)
        vv = (xkv @ q["v"]).reshape(b, tk, H, DH)
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk)
        if bias is not None:
            s = s + bias
        if mask is not None:
            s = jnp.where(mask, s, -1e9)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, tq, D)
        return o @ q["o"]

    def ff(q, x):
        return (jax.nn.gelu(x @ q["wi0"]) * (x @ q["wi1"])) @ q["wo"]

    def loss(p, src, dec_in, tgt):
        smask = (src != 0)[:, None, None, :]
        x = p["emb"][src]
        eb = jnp.transpose(p["enc_rel"][ENC_B], (2, 0, 1))[None]
        for q in p["enc"]:
            h = _rms(x, q["n1"])
            x = x + attn(q["att"], h, h, eb, smask)
            x = x + ff(q["ff"], _rms(x, q["n2"]))
        mem = _rms(x, p["enc_n"])
        y = p["emb"][dec_in]
        db = jnp.transpose(p["dec_rel"][DEC_B], (2, 0, 1))[None]
        for q in p["dec"]:
            h = _rms(y, q["n1"])
            y = y + attn(q["att"], h, h, db, _causal(TD)[None, None])
            y = y + attn(q["cross"], _rms(y, q["n2"]), mem, None, smask)
            y = y + ff(q["ff"], _rms(y, q["n3"]))
        logits = (_rms(y, p["dec_n"]) * D ** -0.5) @ p["emb"].T
        lse = jax.nn.logsumexp(logits, -1)
        nll = lse - jnp.take_along_axis(logits, tgt[..., None], -1)[..., 0]
        w = (tgt != 0).astype(F32)
        nw = jnp.maximum(jnp.sum(w), 1.0)
        ce = jnp.sum(nll * w) / nw
        return ce + 1e-4 * jnp.sum(jnp.square(lse) * w) / nw, ce

    def adafactor(p, st, g, t):
        s = t + 1.0
        rho = jnp.minimum(1e-2, 1.0 / jnp.sqrt(s))
        beta2 = 1.0 - s ** -0.8

        def upd(w, g, st):
            g2 = g * g + 1e-30
            if w.ndim >= 2:
                vr, vc = st
                vr = beta2 * vr + (1.0 - beta2) * jnp.mean(g2, -1)
                vc = beta2 * vc + (1.0 - beta2) * jnp.mean(g2, -2)
                vhat = (vr[..., None] * vc[..., None, :]
                        / jnp.mean(vr, -1, keepdims=True)[..., None])
                new = (vr, vc)
            else:
                vhat = beta2 * st[0] + (1.0 - beta2) * g2
                new = (vhat,)
            u = g * lax.rsqrt(vhat)
            u = u / jnp.maximum(1.0, jnp.sqrt(jnp.mean(u * u)))
            alpha = jnp.maximum(1e-3, jnp.sqrt(jnp.mean(w * w))) * rho
            return w - alpha * u, new
        out = tmap(upd, p, g, st)
        return (tmap(lambda _, o: o[0], p, out), tmap(lambda _, o: o[1], p, out))

    def step(p, st, t, src, dec_in, tgt):
        (l, ce), g = jax.value_and_grad(loss, has_aux=True)(p, src, dec_in, tgt)
        p, st = adafactor(p, st, g, t)
        return l, ce, p, st

    def ffp():
        return {"wi0": S(D, F), "wi1": S(D, F), "wo": S(F, D)}

    def ap():
        return {"q": S(D, D), "k": S(D, D), "v": S(D, D), "o": S(D, D)}
    p = {"emb": S(V, D), "enc_rel": S(NB, H), "dec_rel": S(NB, H),
         "enc": [{"n1": S(D), "att": ap(), "n2": S(D), "ff": ffp()} for _ in range(NLE)],
         "enc_n": S(D),
         "dec": [{"n1": S(D), "att": ap(), "n2": S(D), "cross": ap(), "n3": S(D), "ff": ffp()}
                 for _ in range(NLD)],
         "dec_n": S(D)}
    st = tmap(lambda s: (S(*s.shape[:-1]), S(*s.shape[:-2], s.shape[-1]))
              if len(s.shape) >= 2 else (S(*s.shape),), p)
    B = 16
    return step, (p, st, S(), S(B, TE, dtype=I32), S(B, TD, dtype=I32), S(B, TD, dtype=I32))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [two_tower_retrieval_inbatch_sampled_softmax_logq_correction_hashed_feature_recommender],
    "cnn": [regnety_squeeze_excite_group_width_bottleneck_lion_optimizer_classifier],
    "transformer": [luna_linear_unified_nested_attention_pack_unpack_context_sequence_encoder,
                    perceiver_ar_causal_latent_cross_attention_prefix_dropout_decoder_lm,
                    beit_masked_image_modeling_blockwise_mask_visual_tokens_relative_position_bias_llrd],
    "rnn": [zoneout_lstm_stochastic_identity_state_preservation_char_lm_scan],
    "linalg": [linear_gaussian_state_space_kalman_filter_rts_smoother_reverse_scan_imputer],
    "moe": [gshard_top2_grouped_dispatch_random_second_expert_capacity_translation_moe],
    "unet": [consistency_training_karras_sigma_discretization_pseudo_huber_ema_target_unet],
    "gnn": [graph_transformer_laplacian_eigvec_sign_flip_segment_softmax_edge_attention_regressor,
            temporal_graph_network_memory_gru_last_message_scatter_link_prediction],
    "quant": [fp8_delayed_scaling_amax_history_e4m3_forward_e5m2_backward_custom_vjp_resmlp],
    "remat": [remat_conformer_macaron_ffn_conv_module_save_only_these_names_policy,
              remat_gpt_neox_parallel_residual_partial_rotary_dots_no_batch_dims_scan],
    "custom_vjp": [custom_vjp_actnn_int8_compressed_saved_activations_relu_mlp_backward_dequant],
    "control": [dreamer_rssm_world_model_imagination_fori_actor_critic_lambda_return_reverse_scan,
                differentiable_burgers_cfl_while_substeps_scan_cond_switch_integrator_learned_closure],
    "sort": [memorizing_transformer_knn_external_memory_topk_retrieval_gated_combination_lm],
    "fft": [xvector_mfcc_rfft_mel_dct_frontend_tdnn_statistics_pooling_aam_softmax_speaker],
    "scatter_gather": [product_key_memory_subkey_topk_cartesian_gather_value_table_decoder_lm],
    "dynamic": [packed_sequence_document_segment_ids_fori_dynamic_update_slice_packing_decoder_lm],
    "mixed": [rectified_flow_mmdit_joint_text_image_attention_logit_normal_timesteps_bf16,
              float16_wav2vec2_gumbel_vector_quantizer_contrastive_dynamic_loss_scale_pretraining],
    "optimizer": [adafactor_relative_step_update_clipping_factored_second_moment_t5_encoder_decoder,
                  shampoo_lite_blockwise_eigh_inverse_fourth_root_adagrad_grafting_convnet],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["regnety_squeeze_excite_group_width_bottleneck_lion_optimizer_classifier",
           "luna_linear_unified_nested_attention_pack_unpack_context_sequence_encoder",
           "perceiver_ar_causal_latent_cross_attention_prefix_dropout_decoder_lm",
           "zoneout_lstm_stochastic_identity_state_preservation_char_lm_scan",
           "gshard_top2_grouped_dispatch_random_second_expert_capacity_translation_moe",
           "consistency_training_karras_sigma_discretization_pseudo_huber_ema_target_unet",
           "rectified_flow_mmdit_joint_text_image_attention_logit_normal_timesteps_bf16",
           "graph_transformer_laplacian_eigvec_sign_flip_segment_softmax_edge_attention_regressor",
           "fp8_delayed_scaling_amax_history_e4m3_forward_e5m2_backward_custom_vjp_resmlp",
           "remat_conformer_macaron_ffn_conv_module_save_only_these_names_policy",
           "custom_vjp_actnn_int8_compressed_saved_activations_relu_mlp_backward_dequant",
           "xvector_mfcc_rfft_mel_dct_frontend_tdnn_statistics_pooling_aam_softmax_speaker"]
SHARDED_SET = ["two_tower_retrieval_inbatch_sampled_softmax_logq_correction_hashed_feature_recommender",
               "remat_gpt_neox_parallel_residual_partial_rotary_dots_no_batch_dims_scan",
               "adafactor_relative_step_update_clipping_factored_second_moment_t5_encoder_decoder",
               "packed_sequence_document_segment_ids_fori_dynamic_update_slice_packing_decoder_lm",
               "beit_masked_image_modeling_blockwise_mask_visual_tokens_relative_position_bias_llrd",
               "memorizing_transformer_knn_external_memory_topk_retrieval_gated_combination_lm",
               "float16_wav2vec2_gumbel_vector_quantizer_contrastive_dynamic_loss_scale_pretraining",
               "dreamer_rssm_world_model_imagination_fori_actor_critic_lambda_return_reverse_scan"]
