"""Twenty-seventh fresh set: 25 JAX programs written by a helper on 2026-11-30, kept outside the
repository as a held-out set to be measured unseen before anything is tuned on it (docstring
kept at 3 lines: the dumps record line numbers)::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh27_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh27_programs python benchmarks/accuracy.py --data DIR

Written for JAX 0.4.30 up to the current release (no API newer than 0.4.30).
"""

from __future__ import annotations

import functools
import math

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax
from jax.ad_checkpoint import checkpoint_name
from jax.scipy.special import gammaln
from jax.scipy.stats import norm as jnorm

F32 = jnp.float32
BF16 = jnp.bfloat16
F16 = jnp.float16
I32 = jnp.int32
U32 = jnp.uint32
tmap = jax.tree_util.tree_map
leaves = jax.tree_util.tree_leaves
CP = jax.checkpoint_policies


def S(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


def _adamw_moment_update(p, m, v, g, t, lr=1e-3, b1=0.9, b2=0.999, wd=0.0, eps=1e-8):
    """Adam with bias correction (step t counted from 0) and decoupled weight decay applied to
    the leaves of rank >= 2 only."""
    m = tmap(lambda m, g: b1 * m + (1 - b1) * g, m, g)
    v = tmap(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
    c1 = 1.0 - b1 ** (t + 1.0)
    c2 = 1.0 - b2 ** (t + 1.0)

    def upd(w, m, v):
        d = (m / c1) / (jnp.sqrt(v / c2) + eps)
        if wd and w.ndim >= 2:
            d = d + wd * w
        return w - lr * d
    return tmap(upd, p, m, v), m, v


def _layer_norm_lastdim(x, g, b, eps=1e-5):
    mu = jnp.mean(x, -1, keepdims=True)
    var = jnp.mean(jnp.square(x - mu), -1, keepdims=True)
    return (x - mu) * lax.rsqrt(var + eps) * g + b


def _rms_norm_lastdim(x, g, eps=1e-6):
    return x * lax.rsqrt(jnp.mean(jnp.square(x), -1, keepdims=True) + eps) * g


def _batch_norm_batch_stats(x, g, b, axes, eps=1e-5):
    """Training-mode batch norm over ``axes``; returns the output and the batch (mean, var)."""
    mu = jnp.mean(x, axes)
    var = jnp.var(x, axes)
    return (x - mu) * lax.rsqrt(var + eps) * g + b, (mu, var)


def _conv_nhwc_hwio(x, w, stride=1, pad="SAME", groups=1):
    return lax.conv_general_dilated(x, w, (stride, stride), pad,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                    feature_group_count=groups)


def _sparse_label_xent(logits, labels, weights=None):
    nll = -jnp.take_along_axis(jax.nn.log_softmax(logits, -1), labels[..., None], -1)[..., 0]
    if weights is None:
        return jnp.mean(nll)
    return jnp.sum(nll * weights) / jnp.maximum(jnp.sum(weights), 1.0)


def _label_smoothed_xent(logits, labels, eps=0.1):
    c = logits.shape[-1]
    tgt = jax.nn.one_hot(labels, c) * (1.0 - eps) + eps / c
    return -jnp.mean(jnp.sum(tgt * jax.nn.log_softmax(logits, -1), -1))


def _clip_tree_by_global_norm(g, max_norm=1.0):
    n = jnp.sqrt(sum(jnp.sum(jnp.square(a)) for a in leaves(g)))
    return tmap(lambda a: a * jnp.minimum(1.0, max_norm / (n + 1e-6)), g)


def _warmup_cosine_decay(t, base, total, warm=0.0):
    c = 0.5 * (1.0 + jnp.cos(jnp.pi * jnp.minimum(t / total, 1.0)))
    if warm:
        c = c * jnp.minimum(1.0, (t + 1.0) / warm)
    return base * c


def _sin_cos_position_table(pos, d):
    """Sinusoidal embeddings of the (numpy) positions ``pos``: [len(pos), d]."""
    inv = 1.0 / (10000.0 ** (np.arange(0, d, 2) / d))
    ang = np.asarray(pos, np.float64)[:, None] * inv[None, :]
    return np.concatenate([np.sin(ang), np.cos(ang)], -1).astype(np.float32)


def _causal_lower_mask(t):
    return np.tril(np.ones((t, t), bool))


def _multihead_attend(q, xq, xkv, heads, mask=None, bias=None):
    """Multi-head attention with q / k / v / o projections; ``mask`` and ``bias`` broadcast to
    [b, h, tq, tk]."""
    b, tq, _ = xq.shape
    tk = xkv.shape[1]
    qq = (xq @ q["wq"]).reshape(b, tq, heads, -1)
    kk = (xkv @ q["wk"]).reshape(b, tk, heads, -1)
    vv = (xkv @ q["wv"]).reshape(b, tk, heads, -1)
    s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(qq.shape[-1])
    if bias is not None:
        s = s + bias
    if mask is not None:
        s = jnp.where(mask, s, -1e9)
    a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, tq, -1)
    return a @ q["wo"]


def _mha_param_shapes(dq, dkv=None, dk=None, dout=None):
    dkv, dk = dkv or dq, dk or dq
    return {"wq": S(dq, dk), "wk": S(dkv, dk), "wv": S(dkv, dk), "wo": S(dk, dout or dq)}


def _dense_stack_forward(layers, x, act=jax.nn.relu):
    """Dense layers given as a list of (w, b) with ``act`` between them (none after the last)."""
    for i, (w, b) in enumerate(layers):
        x = x @ w + b
        if i < len(layers) - 1:
            x = act(x)
    return x


def _dense_stack_shapes(dims):
    return [(S(a, b), S(b)) for a, b in zip(dims[:-1], dims[1:])]


def _group_norm_nhwc(x, g, b, groups=8, eps=1e-5):
    n, h, w, c = x.shape
    xg = x.reshape(n, h, w, groups, c // groups)
    mu = jnp.mean(xg, (1, 2, 4), keepdims=True)
    var = jnp.var(xg, (1, 2, 4), keepdims=True)
    return ((xg - mu) * lax.rsqrt(var + eps)).reshape(n, h, w, c) * g + b


def _lstm_cell_step(q, x, h, c):
    z = x @ q["wx"] + h @ q["wh"] + q["b"]
    i, f, g, o = jnp.split(z, 4, -1)
    c = jax.nn.sigmoid(f + 1.0) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    return jax.nn.sigmoid(o) * jnp.tanh(c), c


def _lstm_cell_shapes(din, n):
    return {"wx": S(din, 4 * n), "wh": S(n, 4 * n), "b": S(4 * n)}


def _bce_with_logits(z, y):
    return jnp.maximum(z, 0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z)))


def _stack_shapes(spec, n):
    """The ShapeDtypeStructs of ``spec`` with a leading stacking dimension of ``n``."""
    return tmap(lambda s: S(n, *s.shape, dtype=s.dtype), spec)


# ----------------------------------------------------------------------------- mlp


def batchensemble_rank1_fast_weight_members_tabular_mlp_ensemble_nll_disagreement_classifier():
    """BatchEnsemble (Wen et al.) tabular classifier: 48 numeric features (signed log1p
    transformed) and 6 categorical fields (100 values each, 16-dim embeddings looked up from one
    stacked table) feed a 144-256-256-128-7 SiLU MLP whose every dense layer is shared by 4
    ensemble members, each member owning rank-1 fast weights r and s (W_i = W * r_i s_i^T,
    applied as ((x * r_i) W) * s_i) and its own bias; the batch of 256 is broadcast to all
    members; the loss is the mean member cross-entropy, and the ensemble's predictive NLL (log
    of the mean member probability), the pairwise member disagreement and the ensemble accuracy
    are returned; AdamW with warmup-cosine whose decoupled weight decay touches only the
    shared slow weights, plain Adam for the fast weights, biases and embeddings."""
    NNUM, NCAT, CARD, DE, M, NC = 48, 6, 100, 16, 4, 7
    DIMS = (NNUM + NCAT * DE, 256, 256, 128, NC)

    def forward(p, xnum, xcat):
        B = xnum.shape[0]
        emb = p["fast"]["emb"][jnp.arange(NCAT)[None, :], xcat].reshape(B, NCAT * DE)
        x = jnp.concatenate([jnp.sign(xnum) * jnp.log1p(jnp.abs(xnum)), emb], -1)
        h = jnp.broadcast_to(x, (M, B, x.shape[-1]))
        n = len(p["shared"])
        for i, (w, q) in enumerate(zip(p["shared"], p["fast"]["layers"])):
            h = ((h * q["r"][:, None]) @ w) * q["s"][:, None] + q["b"][:, None]
            if i < n - 1:
                h = jax.nn.silu(h)
        return h

    def loss(p, xnum, xcat, y):
        logits = forward(p, xnum, xcat)
        logp = jax.nn.log_softmax(logits, -1)
        yy = jnp.broadcast_to(y[None, :, None], logp.shape[:2] + (1,))
        member = -jnp.mean(jnp.take_along_axis(logp, yy, -1))
        ens = jax.nn.logsumexp(logp, 0) - math.log(M)
        ens_nll = -jnp.mean(jnp.take_along_axis(ens, y[:, None], -1))
        pred = jnp.argmax(logits, -1)
        dis = jnp.mean((pred[:, None] != pred[None, :]).astype(F32)) * M / (M - 1)
        acc = jnp.mean((jnp.argmax(ens, -1) == y).astype(F32))
        return member, (ens_nll, dis, acc)

    def step(p, m, v, t, xnum, xcat, y):
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, xnum, xcat, y)
        lr = _warmup_cosine_decay(t, 2e-3, 30000.0, warm=500.0)
        sh, ms, vs = _adamw_moment_update(p["shared"], m["shared"], v["shared"], g["shared"], t,
                                          lr=lr, wd=1e-4)
        fa, mf, vf = _adamw_moment_update(p["fast"], m["fast"], v["fast"], g["fast"], t, lr=lr)
        return l, aux, {"shared": sh, "fast": fa}, {"shared": ms, "fast": mf}, \
            {"shared": vs, "fast": vf}
    shared = [S(a, b) for a, b in zip(DIMS[:-1], DIMS[1:])]
    fast = {"emb": S(NCAT, CARD, DE),
            "layers": [{"r": S(M, a), "s": S(M, b), "b": S(M, b)}
                       for a, b in zip(DIMS[:-1], DIMS[1:])]}
    p = {"shared": shared, "fast": fast}
    B = 256
    return step, (p, p, p, S(), S(B, NNUM), S(B, NCAT, dtype=I32), S(B, dtype=I32))


# ----------------------------------------------------------------------------- cnn


def centernet_objects_as_points_penalty_reduced_focal_heatmap_size_offset_gather_detector():
    """CenterNet (Zhou et al., objects as points) detector on 64x64 images with output stride 4:
    a small BN-ReLU ResNet backbone (3x3 stride-2 stem of 32 channels, residual blocks at 32x32,
    16x16 and 8x8 with strided 3x3 convs between them, 64 / 128 channels) and one upsampling
    step (a stride-2 lax.conv_transpose from 8x8 back to 16x16 plus a lateral 3x3 conv of the
    16x16 features) feed three heads (3x3 conv-ReLU, 1x1 conv): an 8-class center heatmap, box
    sizes and sub-pixel center offsets; the heatmap loss is the penalty-reduced pixel-wise
    focal loss (alpha 2, beta 4) against a passed-in Gaussian-splatted target normalised by
    the number of peaks, and the size (weight 0.1) and offset L1 losses read the predictions at
    up to 32 passed-in object center indices (flattened, with a validity mask) by
    take_along_axis; the decoder's 3x3 max-pool peak extraction counts the detections above
    0.3; Adam with a step schedule; BN batch statistics returned."""
    NCLS, K, R = 8, 32, 4
    OH = 64 // R

    def bnr(q, x, stats, relu=True):
        y, st = _batch_norm_batch_stats(x, q["g"], q["b"], (0, 1, 2))
        stats.append(st)
        return jax.nn.relu(y) if relu else y

    def res(q, x, stats):
        h = bnr(q["n1"], _conv_nhwc_hwio(x, q["c1"]), stats)
        h = bnr(q["n2"], _conv_nhwc_hwio(h, q["c2"]), stats, relu=False)
        return jax.nn.relu(x + h)

    def head(q, x):
        h = jax.nn.relu(_conv_nhwc_hwio(x, q["w1"]) + q["b1"])
        return _conv_nhwc_hwio(h, q["w2"]) + q["b2"]

    def net(p, img, stats):
        x = bnr(p["stem_n"], _conv_nhwc_hwio(img, p["stem"], 2), stats)
        x = res(p["r1"], x, stats)
        x16 = res(p["r2"], bnr(p["d1n"], _conv_nhwc_hwio(x, p["d1"], 2), stats), stats)
        x8 = res(p["r3"], bnr(p["d2n"], _conv_nhwc_hwio(x16, p["d2"], 2), stats), stats)
        up = lax.conv_transpose(x8, p["up"], (2, 2), "SAME",
                                dimension_numbers=("NHWC", "HWIO", "NHWC"))
        f = jax.nn.relu(bnr(p["upn"], up, stats, relu=False) + _conv_nhwc_hwio(x16, p["lat"]))
        return head(p["hm"], f), head(p["wh"], f), head(p["off"], f)

    def loss(p, img, hm_t, ind, msk, wh_t, off_t):
        stats = []
        B = img.shape[0]
        hm, wh, off = net(p, img, stats)
        pr = jnp.clip(jax.nn.sigmoid(hm), 1e-4, 1.0 - 1e-4)
        pos = (hm_t >= 1.0).astype(F32)
        pl = jnp.log(pr) * jnp.square(1.0 - pr) * pos
        nl = jnp.log(1.0 - pr) * jnp.square(pr) * jnp.power(1.0 - hm_t, 4) * (1.0 - pos)
        focal = -(jnp.sum(pl) + jnp.sum(nl)) / jnp.maximum(jnp.sum(pos), 1.0)

        def at_centers(feat):
            return jnp.take_along_axis(feat.reshape(B, OH * OH, -1), ind[..., None], 1)
        w = msk[..., None].astype(F32)
        nw = jnp.maximum(2.0 * jnp.sum(w), 1.0)
        l_wh = jnp.sum(jnp.abs(at_centers(wh) - wh_t) * w) / nw
        l_off = jnp.sum(jnp.abs(at_centers(off) - off_t) * w) / nw
        sp = lax.stop_gradient(pr)
        hmax = lax.reduce_window(sp, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
        npk = jnp.sum(((sp == hmax) & (sp > 0.3)).astype(F32)) / B
        return focal + 0.1 * l_wh + l_off, (focal, l_wh, l_off, npk, stats)

    def step(p, m, v, t, img, hm_t, ind, msk, wh_t, off_t):
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, img, hm_t, ind, msk, wh_t, off_t)
        lr = 5e-4 * jnp.where(t < 90000.0, 1.0, jnp.where(t < 120000.0, 0.1, 0.01))
        p, m, v = _adamw_moment_update(p, m, v, g, t, lr=lr)
        return l, aux, p, m, v

    def nb(c):
        return {"g": S(c), "b": S(c)}

    def rb(c):
        return {"c1": S(3, 3, c, c), "n1": nb(c), "c2": S(3, 3, c, c), "n2": nb(c)}

    def hd(co):
        return {"w1": S(3, 3, 64, 64), "b1": S(64), "w2": S(1, 1, 64, co), "b2": S(co)}
    p = {"stem": S(3, 3, 3, 32), "stem_n": nb(32), "r1": rb(32), "d1": S(3, 3, 32, 64),
         "d1n": nb(64), "r2": rb(64), "d2": S(3, 3, 64, 128), "d2n": nb(128), "r3": rb(128),
         "up": S(3, 3, 128, 64), "upn": nb(64), "lat": S(3, 3, 64, 64), "hm": hd(NCLS),
         "wh": hd(2), "off": hd(2)}
    B = 16
    return step, (p, p, p, S(), S(B, 64, 64, 3), S(B, OH, OH, NCLS), S(B, K, dtype=I32),
                  S(B, K, dtype=jnp.bool_), S(B, K, 2), S(B, K, 2))


# ----------------------------------------------------------------------------- transformer


def retro_chunked_cross_attention_retrieved_neighbour_encoder_shifted_chunks_decoder_lm():
    """RETRO (Borgeaud et al.) decoder LM over 128-token sequences split into 8 chunks of 16:
    every chunk comes with 2 passed-in retrieved neighbours of 32 tokens (neighbour plus
    continuation); a one-layer bidirectional neighbour encoder (own positions) conditions on
    the decoder activations of its chunk through cross-attention, computed once at the first
    retrieval layer and reused; decoder layers 1 and 2 of 3 (width 128, 4 heads, pre-LN, GELU
    MLP, causal self-attention) add chunked cross-attention: the sequence is shifted left by
    chunk - 1 positions and padded, each shifted chunk attends to the 64 encoded neighbour
    tokens of its own chunk, and the result is shifted back so the first 15 tokens see no
    retrieval and no token sees the neighbours of a chunk it has not finished; tied
    embeddings; cross-entropy; AdamW with warmup-cosine and clipping."""
    V, D, H, T, CH, KN, R, F, NL, CCA = 2048, 128, 4, 128, 16, 2, 32, 512, 3, (1, 2)
    NCH = T // CH

    def ffn(q, x):
        return jax.nn.gelu(x @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]

    def encoder(p, nbr, chunk_act):
        B = nbr.shape[0]
        e = p["enc"]
        x = (p["emb"][nbr] + e["pos"]).reshape(B * NCH * KN, R, D)
        ctx = jnp.repeat(chunk_act.reshape(B * NCH, CH, D), KN, axis=0)
        for q in e["layers"]:
            h = _layer_norm_lastdim(x, q["g1"], q["b1"])
            x = x + _multihead_attend(q["att"], h, h, H)
            x = x + _multihead_attend(q["cross"], _layer_norm_lastdim(x, q["g2"], q["b2"]), ctx, H)
            x = x + ffn(q, _layer_norm_lastdim(x, q["g3"], q["b3"]))
        return _layer_norm_lastdim(x, e["gf"], e["bf"]).reshape(B, NCH, KN * R, D)

    def chunked_cross(q, h, enc):
        B = h.shape[0]
        hs = jnp.pad(h[:, CH - 1:], ((0, 0), (0, CH - 1), (0, 0))).reshape(B * NCH, CH, D)
        o = _multihead_attend(q, hs, enc.reshape(B * NCH, KN * R, D), H).reshape(B, T, D)
        return jnp.pad(o, ((0, 0), (CH - 1, 0), (0, 0)))[:, :T]

    def loss(p, tok, tgt, nbr):
        B = tok.shape[0]
        x = p["emb"][tok] + p["pos"]
        enc = None
        for i, q in enumerate(p["dec"]):
            h = _layer_norm_lastdim(x, q["g1"], q["b1"])
            x = x + _multihead_attend(q["att"], h, h, H, mask=_causal_lower_mask(T)[None, None])
            if i in CCA:
                if enc is None:
                    enc = encoder(p, nbr, x.reshape(B, NCH, CH, D))
                x = x + chunked_cross(q["cca"], _layer_norm_lastdim(x, q["gc"], q["bc"]), enc)
            x = x + ffn(q, _layer_norm_lastdim(x, q["g2"], q["b2"]))
        logits = _layer_norm_lastdim(x, p["gf"], p["bf"]) @ p["emb"].T
        return _sparse_label_xent(logits, tgt)

    def step(p, m, v, t, tok, tgt, nbr):
        l, g = jax.value_and_grad(loss)(p, tok, tgt, nbr)
        lr = _warmup_cosine_decay(t, 2e-4, 200000.0, warm=4000.0)
        p, m, v = _adamw_moment_update(p, m, v, _clip_tree_by_global_norm(g, 1.0), t, lr=lr,
                                       b2=0.95, wd=0.1)
        return l, p, m, v

    def ff():
        return {"f1": S(D, F), "fb1": S(F), "f2": S(F, D), "fb2": S(D)}
    dec = []
    for i in range(NL):
        q = {"g1": S(D), "b1": S(D), "att": _mha_param_shapes(D), "g2": S(D), "b2": S(D), **ff()}
        if i in CCA:
            q.update(gc=S(D), bc=S(D), cca=_mha_param_shapes(D))
        dec.append(q)
    enc = {"pos": S(R, D), "gf": S(D), "bf": S(D),
           "layers": [{"g1": S(D), "b1": S(D), "att": _mha_param_shapes(D), "g2": S(D),
                       "b2": S(D), "cross": _mha_param_shapes(D), "g3": S(D), "b3": S(D),
                       **ff()}]}
    p = {"emb": S(V, D), "pos": S(T, D), "dec": dec, "enc": enc, "gf": S(D), "bf": S(D)}
    B = 8
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, T, dtype=I32),
                  S(B, NCH, KN, R, dtype=I32))


def maxvit_multi_axis_block_grid_attention_mbconv_relative_bias_mixup_classifier():
    """MaxViT (Tu et al.) classifier on 32x32 images: a 3x3 conv stem (32 channels, BN-GELU)
    and two stages of one MaxViT block each (widths 64 and 128, both downsampling by 2); a
    block is an MBConv (pre-BN, 1x1 expansion x4, BN-GELU, strided 3x3 depthwise conv,
    BN-GELU, squeeze-excitation at a quarter width, 1x1 projection, with an average-pool +
    1x1 projected shortcut), then block attention over non-overlapping 4x4 windows and grid
    attention over a dilated 4x4 grid (tokens strided across the whole map), each a pre-LN
    multi-head self-attention with a per-layer relative position bias table of 7 x 7 entries
    gathered by a constant index, plus a GELU MLP; global pooling, LayerNorm and a 100-way
    head; mixup with a passed-in ratio and permutation, label smoothing 0.1; AdamW with
    warmup-cosine; BN batch statistics returned."""
    WS, DH, NC, EXP = 4, 32, 100, 4
    STAGES = ((64, 2), (128, 2))
    co = np.stack(np.meshgrid(np.arange(WS), np.arange(WS), indexing="ij"), -1).reshape(-1, 2)
    rel = co[:, None] - co[None] + (WS - 1)
    RIDX = rel[..., 0] * (2 * WS - 1) + rel[..., 1]

    def bn(q, x, stats):
        y, st = _batch_norm_batch_stats(x, q["g"], q["b"], (0, 1, 2))
        stats.append(st)
        return y

    def mbconv(q, x, stride, stats):
        ce = q["exp"].shape[-1]
        h = bn(q["n0"], x, stats)
        h = jax.nn.gelu(bn(q["n1"], h @ q["exp"], stats))
        h = jax.nn.gelu(bn(q["n2"], _conv_nhwc_hwio(h, q["dw"], stride, groups=ce), stats))
        s = jax.nn.silu(jnp.mean(h, (1, 2)) @ q["se1"] + q["sb1"]) @ q["se2"] + q["sb2"]
        h = (h * jax.nn.sigmoid(s)[:, None, None]) @ q["proj"]
        sc = lax.reduce_window(x, 0.0, lax.add, (1, stride, stride, 1), (1, stride, stride, 1),
                               "VALID") / (stride * stride)
        return sc @ q["sc"] + h

    def part_block(x):
        B, Hh, Ww, C = x.shape
        y = x.reshape(B, Hh // WS, WS, Ww // WS, WS, C).transpose(0, 1, 3, 2, 4, 5)
        return y.reshape(-1, WS * WS, C)

    def unpart_block(y, shape):
        B, Hh, Ww, C = shape
        y = y.reshape(B, Hh // WS, Ww // WS, WS, WS, C).transpose(0, 1, 3, 2, 4, 5)
        return y.reshape(shape)

    def part_grid(x):
        B, Hh, Ww, C = x.shape
        y = x.reshape(B, WS, Hh // WS, WS, Ww // WS, C).transpose(0, 2, 4, 1, 3, 5)
        return y.reshape(-1, WS * WS, C)

    def unpart_grid(y, shape):
        B, Hh, Ww, C = shape
        y = y.reshape(B, Hh // WS, Ww // WS, WS, WS, C).transpose(0, 3, 1, 4, 2, 5)
        return y.reshape(shape)

    def rel_attn(q, x):
        n, t, c = x.shape
        heads = c // DH
        qkv = (x @ q["qkv"] + q["qkvb"]).reshape(n, t, 3, heads, DH)
        s = jnp.einsum("nqhd,nkhd->nhqk", qkv[:, :, 0], qkv[:, :, 1]) / math.sqrt(DH)
        s = s + jnp.transpose(q["rpb"][RIDX], (2, 0, 1))[None]
        o = jnp.einsum("nhqk,nkhd->nqhd", jax.nn.softmax(s, -1), qkv[:, :, 2]).reshape(n, t, c)
        return o @ q["o"] + q["ob"]

    def tpart(q, x, part, unpart):
        shape = x.shape
        y = part(x)
        y = y + rel_attn(q, _layer_norm_lastdim(y, q["g1"], q["b1"]))
        h = _layer_norm_lastdim(y, q["g2"], q["b2"])
        y = y + jax.nn.gelu(h @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]
        return unpart(y, shape)

    def loss(p, img, lam, perm, y):
        stats = []
        x = lam * img + (1.0 - lam) * img[perm]
        x = jax.nn.gelu(bn(p["stem_n"], _conv_nhwc_hwio(x, p["stem"]), stats))
        for q, (c, s) in zip(p["stages"], STAGES):
            x = mbconv(q["mb"], x, s, stats)
            x = tpart(q["blk"], x, part_block, unpart_block)
            x = tpart(q["grid"], x, part_grid, unpart_grid)
        f = _layer_norm_lastdim(jnp.mean(x, (1, 2)), p["gf"], p["bf"])
        logits = f @ p["head"] + p["hb"]
        l = (lam * _label_smoothed_xent(logits, y)
             + (1.0 - lam) * _label_smoothed_xent(logits, y[perm]))
        return l, stats

    def step(p, m, v, t, img, lam, perm, y):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, lam, perm, y)
        lr = _warmup_cosine_decay(t, 1e-3, 100000.0, warm=2000.0)
        p, m, v = _adamw_moment_update(p, m, v, g, t, lr=lr, wd=0.05)
        return l, stats, p, m, v

    def nb(c):
        return {"g": S(c), "b": S(c)}

    def tp(c):
        return {"g1": S(c), "b1": S(c), "qkv": S(c, 3 * c), "qkvb": S(3 * c),
                "rpb": S((2 * WS - 1) ** 2, c // DH), "o": S(c, c), "ob": S(c), "g2": S(c),
                "b2": S(c), "f1": S(c, 4 * c), "fb1": S(4 * c), "f2": S(4 * c, c), "fb2": S(c)}
    stages, ci = [], 32
    for c, s in STAGES:
        ce, se = EXP * ci, ci // 4
        mb = {"n0": nb(ci), "exp": S(ci, ce), "n1": nb(ce), "dw": S(3, 3, 1, ce), "n2": nb(ce),
              "se1": S(ce, se), "sb1": S(se), "se2": S(se, ce), "sb2": S(ce),
              "proj": S(ce, c), "sc": S(ci, c)}
        stages.append({"mb": mb, "blk": tp(c), "grid": tp(c)})
        ci = c
    p = {"stem": S(3, 3, 3, 32), "stem_n": nb(32), "stages": stages, "gf": S(ci), "bf": S(ci),
         "head": S(ci, NC), "hb": S(NC)}
    B = 32
    return step, (p, p, p, S(), S(B, 32, 32, 3), S(), S(B, dtype=I32), S(B, dtype=I32))


def xlnet_two_stream_permutation_lm_relative_attention_content_query_partial_prediction():
    """XLNet (Yang et al.) permutation language modelling over 64-token sequences: a passed-in
    random factorisation order per sequence (the rank of each position) defines the two-stream
    attention masks -- the content stream of a position sees every position not later in the
    order including itself, the query stream only strictly earlier ones and never its own
    token, starting from a learned mask embedding; three post-LN layers (width 128, 4 heads,
    GELU MLP) share their weights between the streams (queries from the stream, keys and
    values from the content stream) and use Transformer-XL relative attention: sinusoidal
    encodings of the 128 relative distances are projected per layer, gathered into a
    [query, key] table and scored with separate content and position biases; only the last
    11 positions of each order are predicted (partial prediction) from the query stream with
    tied embeddings; cross-entropy; Adam with warmup and linear decay and clipping."""
    V, D, H, T, NL, F, NPRED = 2048, 128, 4, 64, 3, 512, 11
    DH = D // H
    REL = (np.arange(T)[:, None] - np.arange(T)[None, :] + T).astype(np.int32)
    RTAB = _sin_cos_position_table(np.arange(2 * T) - T, D)

    def rel_attn(q, xq, h, rk, mask):
        b = h.shape[0]
        qq = (xq @ q["wq"]).reshape(b, T, H, DH)
        kk = (h @ q["wk"]).reshape(b, T, H, DH)
        vv = (h @ q["wv"]).reshape(b, T, H, DH)
        ac = jnp.einsum("bqhd,bkhd->bhqk", qq + q["rw"], kk)
        bd = jnp.einsum("bqhd,qkhd->bhqk", qq + q["rr"], rk)
        s = jnp.where(mask, (ac + bd) / math.sqrt(DH), -1e30)
        a = jnp.where(mask, jax.nn.softmax(s, -1), 0.0)
        return jnp.einsum("bhqk,bkhd->bqhd", a, vv).reshape(b, T, D) @ q["wo"]

    def ffn(q, x):
        return _layer_norm_lastdim(
            x + jax.nn.gelu(x @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"], q["g2"], q["b2"])

    def loss(p, tok, rank):
        B = tok.shape[0]
        mc = (rank[:, None, :] <= rank[:, :, None])[:, None]
        mq = (rank[:, None, :] < rank[:, :, None])[:, None]
        h = p["emb"][tok]
        g = jnp.broadcast_to(p["mask_emb"], (B, T, D))
        for q in p["layers"]:
            rk = (RTAB @ q["wr"]).reshape(2 * T, H, DH)[REL]
            hh = _layer_norm_lastdim(h + rel_attn(q, h, h, rk, mc), q["g1"], q["b1"])
            gg = _layer_norm_lastdim(g + rel_attn(q, g, h, rk, mq), q["g1"], q["b1"])
            h, g = ffn(q, hh), ffn(q, gg)
        logits = g @ p["emb"].T + p["ob"]
        w = (rank >= T - NPRED).astype(F32)
        return _sparse_label_xent(logits, tok, w)

    def step(p, m, v, t, tok, rank):
        l, g = jax.value_and_grad(loss)(p, tok, rank)
        lr = 4e-4 * jnp.minimum((t + 1.0) / 10000.0, jnp.maximum(0.0, 1.0 - t / 500000.0))
        p, m, v = _adamw_moment_update(p, m, v, _clip_tree_by_global_norm(g, 1.0), t, lr=lr,
                                       eps=1e-6, wd=0.01)
        return l, p, m, v
    q = {"wq": S(D, D), "wk": S(D, D), "wv": S(D, D), "wo": S(D, D), "wr": S(D, D),
         "rw": S(H, DH), "rr": S(H, DH), "g1": S(D), "b1": S(D), "f1": S(D, F), "fb1": S(F),
         "f2": S(F, D), "fb2": S(D), "g2": S(D), "b2": S(D)}
    p = {"emb": S(V, D), "mask_emb": S(D), "layers": [dict(q) for _ in range(NL)], "ob": S(V)}
    B = 16
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, T, dtype=I32))


# ----------------------------------------------------------------------------- rnn


def deepar_lstm_negative_binomial_likelihood_mean_scaled_teacher_forced_forecast_rollout():
    """DeepAR (Salinas et al.) probabilistic forecaster for 32 count series: 48 context and 16
    prediction steps, 4 time covariates per step and a 8-dim embedding of the series id; each
    series is scaled by 1 + its context mean, and the input at a step is the previous scaled
    value, the covariates and the embedding; a two-layer LSTM (64 units, lax.scan, time-major)
    emits the mean (softplus, rescaled) and shape (softplus, divided by the square root of the
    scale) of a negative binomial whose log-likelihood (gammaln terms) is maximised over all
    observed steps (passed-in mask) with teacher forcing; a second lax.scan continues from the
    context state feeding back its own stop-gradient predicted means as a forecast roll-out,
    whose MAE against the prediction range is returned; Adam with clipping at 10."""
    TC, TP, NCOV, NSER, DE, N, NLY = 48, 16, 4, 500, 8, 64, 2
    T = TC + TP

    def nb_loglik(z, mu, alpha):
        r = 1.0 / alpha
        return (gammaln(z + r) - gammaln(z + 1.0) - gammaln(r)
                - r * jnp.log1p(alpha * mu) + z * (jnp.log(alpha * mu) - jnp.log1p(alpha * mu)))

    def cells(p, carry, x):
        hs, cs = carry
        nh, nc = [], []
        for l in range(NLY):
            h, c = _lstm_cell_step(p["lstm"][l], x, hs[l], cs[l])
            nh.append(h)
            nc.append(c)
            x = h
        return (jnp.stack(nh), jnp.stack(nc)), x

    def emit(p, h, scale):
        mu = jax.nn.softplus(h @ p["wmu"] + p["bmu"])[..., 0] * scale
        alpha = jax.nn.softplus(h @ p["wa"] + p["ba"])[..., 0] / jnp.sqrt(scale) + 1e-4
        return mu + 1e-6, alpha

    def loss(p, z, cov, sid, obs):
        B = z.shape[0]
        scale = 1.0 + jnp.mean(z[:, :TC], 1)
        e = p["semb"][sid]
        zprev = jnp.concatenate([jnp.zeros((B, 1)), z[:, :-1]], 1) / scale[:, None]
        inp = jnp.concatenate([zprev[..., None], cov, jnp.broadcast_to(e[:, None], (B, T, DE))],
                              -1)
        inp = jnp.swapaxes(inp, 0, 1)
        z0 = jnp.zeros((NLY, B, N))
        run = lambda c, x: cells(p, c, x)
        state, hc = lax.scan(run, (z0, z0), inp[:TC])
        _, hp = lax.scan(run, state, inp[TC:])
        hs = jnp.concatenate([hc, hp], 0)
        mu, alpha = emit(p, hs, scale[None])
        w = jnp.swapaxes(obs, 0, 1).astype(F32)
        nll = -jnp.sum(nb_loglik(jnp.swapaxes(z, 0, 1), mu, alpha) * w) / jnp.maximum(
            jnp.sum(w), 1.0)

        def fstep(c, x_t):
            st, zp = c
            x = jnp.concatenate([(zp / scale)[:, None], x_t, e], -1)
            st, h = cells(p, st, x)
            m_, _ = emit(p, h, scale)
            return (st, lax.stop_gradient(m_)), m_
        _, fc = lax.scan(fstep, (state, z[:, TC - 1]), jnp.swapaxes(cov[:, TC:], 0, 1))
        mae = jnp.mean(jnp.abs(jnp.swapaxes(fc, 0, 1) - z[:, TC:]))
        return nll, mae

    def step(p, m, v, t, z, cov, sid, obs):
        (l, mae), g = jax.value_and_grad(loss, has_aux=True)(p, z, cov, sid, obs)
        p, m, v = _adamw_moment_update(p, m, v, _clip_tree_by_global_norm(g, 10.0), t, lr=1e-3)
        return l, mae, p, m, v
    lstm = [_lstm_cell_shapes(1 + NCOV + DE if l == 0 else N, N) for l in range(NLY)]
    p = {"semb": S(NSER, DE), "lstm": lstm, "wmu": S(N, 1), "bmu": S(1), "wa": S(N, 1),
         "ba": S(1)}
    B = 32
    return step, (p, p, p, S(), S(B, T), S(B, T, NCOV), S(B, dtype=I32),
                  S(B, T, dtype=jnp.bool_))


# ----------------------------------------------------------------------------- linalg


def differentiable_lqr_riccati_reverse_scan_linalg_solve_learned_dynamics_imitation():
    """Differentiable LQR imitation learning (Amos et al., differentiable MPC, in its
    unconstrained linear-quadratic form): a learned linear model x' = A x + B u (8 states, 4
    controls) and a learned cost -- state cost diag(exp(q)) + L L^T with a rank-2 factor,
    control cost diag(exp(r)), terminal cost Q + M M^T -- define a 20-step finite-horizon LQR
    whose time-varying feedback gains come from the backward Riccati recursion in a reverse
    lax.scan (gains by jnp.linalg.solve of R + B^T P B, symmetrised cost-to-go); the gains
    are rolled out from 32 passed-in initial states by a forward lax.scan, and the loss is
    the MSE to the passed-in expert controls plus the one-step prediction error of the model
    on the expert transitions; the optimal cost x0^T P0 x0 and the spectral norm of the first
    closed-loop matrix (singular values) are returned; Adam with clipping."""
    NX, NU, T, RK = 8, 4, 20, 2

    def riccati(A, Bm, Q, R, PT):
        def back(P, _):
            BtP = Bm.T @ P
            K = jnp.linalg.solve(R + BtP @ Bm, BtP @ A)
            P = Q + A.T @ P @ (A - Bm @ K)
            return 0.5 * (P + P.T), K
        return lax.scan(back, PT, None, length=T, reverse=True)

    def loss(p, x0, xe, ue):
        A, Bm = p["A"], p["B"]
        Q = jnp.diag(jnp.exp(p["q"])) + p["lq"] @ p["lq"].T
        R = jnp.diag(jnp.exp(p["r"]))
        P0, Ks = riccati(A, Bm, Q, R, Q + p["lt"] @ p["lt"].T)

        def fwd(x, K):
            u = -x @ K.T
            return x @ A.T + u @ Bm.T, u
        _, us = lax.scan(fwd, x0, Ks)
        imit = jnp.mean(jnp.square(jnp.swapaxes(us, 0, 1) - ue))
        pred = xe[:, :-1] @ A.T + ue @ Bm.T
        fit = jnp.mean(jnp.square(pred - xe[:, 1:]))
        cost = 0.5 * jnp.mean(jnp.einsum("bi,ij,bj->b", x0, P0, x0))
        return imit + fit, (imit, fit, cost, Ks[0])

    def step(p, m, v, t, x0, xe, ue):
        (l, (imit, fit, cost, K0)), g = jax.value_and_grad(loss, has_aux=True)(p, x0, xe, ue)
        acl = lax.stop_gradient(p["A"] - p["B"] @ K0)
        rho = jnp.linalg.svd(acl, compute_uv=False)[0]
        p, m, v = _adamw_moment_update(p, m, v, _clip_tree_by_global_norm(g, 5.0), t, lr=3e-3)
        return l, (imit, fit, cost, rho), p, m, v
    p = {"A": S(NX, NX), "B": S(NX, NU), "q": S(NX), "lq": S(NX, RK), "r": S(NU),
         "lt": S(NX, NX)}
    NB = 32
    return step, (p, p, p, S(), S(NB, NX), S(NB, T + 1, NX), S(NB, T, NU))


# ----------------------------------------------------------------------------- moe


def sparsely_gated_noisy_topk_moe_normal_cdf_load_estimator_cv_squared_lstm_lm():
    """Sparsely-gated mixture-of-experts language model after Shazeer et al. (2017): an
    embedding (128), an LSTM layer (256), a residual MoE layer of 16 ReLU experts
    (256-512-256) and a second LSTM layer, projected back to 128 and scored against the tied
    embeddings, over 32 x 32 tokens; the noisy top-k gate adds passed-in standard normal noise
    scaled by a learned softplus noise level to the clean gating logits, lax.top_k keeps k=4
    (and the 5th value as threshold), a softmax over the kept logits is scattered back to all
    experts by one-hot sums; the smooth load estimator is the probability, from the normal
    CDF, that each expert would still be selected under fresh noise (measured against the kth
    or the (k+1)th noisy logit depending on whether it is in the top k), and the auxiliary
    loss is the squared coefficient of variation of the per-expert importance and load;
    cross-entropy plus 0.01 x the auxiliary loss; Adam with clipping."""
    V, E_, N, NE, K, F, T = 2048, 128, 256, 16, 4, 512, 32

    def lstm(q, xs):
        B = xs.shape[0]

        def cell(c, x):
            h, cc = _lstm_cell_step(q, x, *c)
            return (h, cc), h
        z = jnp.zeros((B, N))
        _, hs = lax.scan(cell, (z, z), jnp.swapaxes(xs, 0, 1))
        return jnp.swapaxes(hs, 0, 1)

    def cv_sq(x):
        return jnp.var(x) / (jnp.square(jnp.mean(x)) + 1e-10)

    def moe(q, x, noise):
        b, t, d = x.shape
        xf = x.reshape(-1, d)
        clean = xf @ q["wg"]
        std = jax.nn.softplus(xf @ q["wn"]) + 1e-2
        noisy = clean + noise.reshape(-1, NE) * std
        top, idx = lax.top_k(noisy, K + 1)
        gk = jax.nn.softmax(top[:, :K], -1)
        gates = jnp.sum(jax.nn.one_hot(idx[:, :K], NE) * gk[..., None], 1)
        thr_in, thr_out = top[:, K:K + 1], top[:, K - 1:K]
        prob = jnp.where(noisy > thr_in, jnorm.cdf((clean - thr_in) / std),
                         jnorm.cdf((clean - thr_out) / std))
        aux = cv_sq(jnp.sum(gates, 0)) + cv_sq(jnp.sum(prob, 0))
        h = jax.nn.relu(jnp.einsum("nd,edf->nef", xf, q["w1"]) + q["b1"])
        eo = jnp.einsum("nef,efd->ned", h, q["w2"]) + q["b2"]
        return jnp.einsum("ne,ned->nd", gates, eo).reshape(b, t, d), aux

    def loss(p, tok, tgt, noise):
        x = lstm(p["l1"], p["emb"][tok])
        y, aux = moe(p["moe"], x, noise)
        x = lstm(p["l2"], x + y)
        logits = (x @ p["proj"]) @ p["emb"].T + p["ob"]
        ce = _sparse_label_xent(logits, tgt)
        return ce + 0.01 * aux, (ce, aux)

    def step(p, m, v, t, tok, tgt, noise):
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, tok, tgt, noise)
        p, m, v = _adamw_moment_update(p, m, v, _clip_tree_by_global_norm(g, 1.0), t, lr=1e-3)
        return l, aux, p, m, v
    p = {"emb": S(V, E_), "l1": _lstm_cell_shapes(E_, N), "l2": _lstm_cell_shapes(N, N),
         "moe": {"wg": S(N, NE), "wn": S(N, NE), "w1": S(NE, N, F), "b1": S(NE, F),
                 "w2": S(NE, F, N), "b2": S(NE, N)},
         "proj": S(N, E_), "ob": S(V)}
    B = 32
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, T, dtype=I32), S(B, T, NE))


# ----------------------------------------------------------------------------- unet / diffusion


def sr3_super_resolution_diffusion_bicubic_upsampled_concat_noise_level_film_unet():
    """SR3 (Saharia et al.) 8x8 -> 32x32 super-resolution diffusion training: the passed-in
    low-resolution image is upsampled x4 in-graph by separable bicubic interpolation (Keys
    kernel, a = -0.5, half-pixel centres: edge padding, five shifted slices per axis weighted
    by constant per-phase taps, phases interleaved by stack and reshape) and concatenated
    with the noisy high-resolution image; the noise level sqrt(gamma) is drawn uniformly
    between the two adjacent values of a 2000-step linear schedule around a passed-in step
    index (the piecewise continuous sampling of the paper), embedded sinusoidally and by an
    MLP, and injected into every GroupNorm-SiLU residual block of a U-Net (channels 32 / 64 /
    96, two strided-conv downsamplings, nearest jax.image.resize upsamplings with skip
    concatenations) as FiLM scale and shift; the network predicts the noise with an L1 loss;
    Adam and an EMA of the weights."""
    HR, NT, TE = 32, 2000, 128
    C1, C2, C3 = 32, 64, 96
    ab = np.cumprod(1.0 - np.linspace(1e-6, 0.01, NT))
    SQRT_AB = np.sqrt(np.concatenate([[1.0], ab])).astype(np.float32)
    FREQ = np.exp(-math.log(10000.0) * np.arange(TE // 2) / (TE // 2)).astype(np.float32)
    ax = np.abs(((np.arange(4) + 0.5) / 4 - 0.5)[:, None] - np.arange(-2, 3)[None, :])
    WTAP = np.where(ax <= 1, 1.5 * ax ** 3 - 2.5 * ax ** 2 + 1,
                    np.where(ax < 2, -0.5 * ax ** 3 + 2.5 * ax ** 2 - 4 * ax + 2, 0.0))

    def bicubic_x4(x, axis):
        n = x.shape[axis]
        pad = [(0, 0)] * x.ndim
        pad[axis] = (2, 2)
        xp = jnp.pad(x, pad, mode="edge")
        taps = [lax.slice_in_dim(xp, j, j + n, axis=axis) for j in range(5)]
        phases = [sum(float(WTAP[r, j]) * taps[j] for j in range(5)) for r in range(4)]
        shape = list(x.shape)
        shape[axis] = 4 * n
        return jnp.stack(phases, axis + 1).reshape(shape)

    def res(q, x, emb):
        h = _conv_nhwc_hwio(jax.nn.silu(_group_norm_nhwc(x, q["g1"], q["b1"])), q["c1"]) + q["cb1"]
        sc, sh = jnp.split(emb @ q["film"] + q["filmb"], 2, -1)
        h = _group_norm_nhwc(h, q["g2"], q["b2"]) * (1.0 + sc[:, None, None]) + sh[:, None, None]
        h = _conv_nhwc_hwio(jax.nn.silu(h), q["c2"]) + q["cb2"]
        return (x @ q["skip"] if "skip" in q else x) + h

    def up(x):
        b, h, w, c = x.shape
        return jax.image.resize(x, (b, 2 * h, 2 * w, c), "nearest")

    def unet(q, x, g):
        e = 5000.0 * g[:, None] * FREQ
        emb = jnp.concatenate([jnp.sin(e), jnp.cos(e)], -1)
        emb = _dense_stack_forward(q["temb"], emb, jax.nn.silu)
        h1 = res(q["r1"], _conv_nhwc_hwio(x, q["cin"]) + q["cinb"], emb)
        h2 = res(q["r2"], _conv_nhwc_hwio(h1, q["down1"], 2) + q["d1b"], emb)
        h3 = res(q["r3"], _conv_nhwc_hwio(h2, q["down2"], 2) + q["d2b"], emb)
        h3 = res(q["mid"], h3, emb)
        u = res(q["u2"], jnp.concatenate([up(h3), h2], -1), emb)
        u = res(q["u1"], jnp.concatenate([up(u), h1], -1), emb)
        u = jax.nn.silu(_group_norm_nhwc(u, q["go"], q["bo"]))
        return _conv_nhwc_hwio(u, q["cout"]) + q["coutb"]

    def loss(p, hr, lr_img, tidx, u, eps):
        B = hr.shape[0]
        cond = bicubic_x4(bicubic_x4(lr_img, 1), 2)
        lo, hi = jnp.asarray(SQRT_AB)[tidx], jnp.asarray(SQRT_AB)[tidx - 1]
        g = lo + u * (hi - lo)
        bc = lambda a: a[:, None, None, None]
        yt = bc(g) * hr + bc(jnp.sqrt(1.0 - g * g)) * eps
        pred = unet(p, jnp.concatenate([cond, yt], -1), g)
        return jnp.mean(jnp.abs(pred - eps))

    def step(p, ema, m, v, t, hr, lr_img, tidx, u, eps):
        l, g = jax.value_and_grad(loss)(p, hr, lr_img, tidx, u, eps)
        p, m, v = _adamw_moment_update(p, m, v, g, t, lr=1e-4)
        ema = tmap(lambda a, b: 0.9999 * a + 1e-4 * b, ema, p)
        return l, p, ema, m, v

    def rb(ci, co):
        q = {"g1": S(ci), "b1": S(ci), "c1": S(3, 3, ci, co), "cb1": S(co),
             "film": S(TE, 2 * co), "filmb": S(2 * co), "g2": S(co), "b2": S(co),
             "c2": S(3, 3, co, co), "cb2": S(co)}
        if ci != co:
            q["skip"] = S(ci, co)
        return q
    p = {"temb": _dense_stack_shapes((TE, TE, TE)), "cin": S(3, 3, 6, C1), "cinb": S(C1),
         "r1": rb(C1, C1), "down1": S(3, 3, C1, C1), "d1b": S(C1), "r2": rb(C1, C2),
         "down2": S(3, 3, C2, C2), "d2b": S(C2), "r3": rb(C2, C3), "mid": rb(C3, C3),
         "u2": rb(C3 + C2, C2), "u1": rb(C2 + C1, C1), "go": S(C1), "bo": S(C1),
         "cout": S(3, 3, C1, 3), "coutb": S(3)}
    B = 16
    return step, (p, p, p, p, S(), S(B, HR, HR, 3), S(B, 8, 8, 3), S(B, dtype=I32), S(B),
                  S(B, HR, HR, 3))


# ----------------------------------------------------------------------------- gnn


def lightgcn_symmetric_degree_normalized_propagation_layer_mean_bpr_edge_dropout_recommender():
    """LightGCN (He et al.) collaborative filtering on a bipartite graph of 2048 users and 4096
    items with 16384 passed-in interaction edges: the edges are thinned by a passed-in
    dropout mask, user and item degrees are counted by segment_sum and every kept edge weighted
    by 1 / sqrt(deg_u deg_i); three propagation layers without weights or nonlinearities
    alternate item -> user and user -> item segment_sum aggregations of the 64-dim embeddings,
    and the final embeddings are the mean over the layers (including the ego embeddings); a
    batch of 1024 (user, positive item, negative item) triples is scored by dot products with
    the BPR loss plus L2 regularisation of the batch's ego embeddings; Adam; the fraction of
    correctly ordered pairs is returned."""
    NU, NI, D, E, K = 2048, 4096, 64, 16384, 3

    def propagate(eu, ei, u, i, keep):
        kf = keep.astype(F32)
        du = jax.ops.segment_sum(kf, u, NU)
        di = jax.ops.segment_sum(kf, i, NI)
        w = (kf * lax.rsqrt(jnp.maximum(du[u], 1.0)) * lax.rsqrt(jnp.maximum(di[i], 1.0)))[:, None]
        su, si = [eu], [ei]
        for _ in range(K):
            eu, ei = (jax.ops.segment_sum(w * ei[i], u, NU),
                      jax.ops.segment_sum(w * eu[u], i, NI))
            su.append(eu)
            si.append(ei)
        return jnp.mean(jnp.stack(su), 0), jnp.mean(jnp.stack(si), 0)

    def loss(p, u, i, keep, bu, bp, bn):
        fu, fi = propagate(p["user"], p["item"], u, i, keep)
        xu, xp, xn = fu[bu], fi[bp], fi[bn]
        diff = jnp.sum(xu * xp, -1) - jnp.sum(xu * xn, -1)
        reg = 0.5 * (jnp.sum(jnp.square(p["user"][bu])) + jnp.sum(jnp.square(p["item"][bp]))
                     + jnp.sum(jnp.square(p["item"][bn]))) / bu.shape[0]
        return jnp.mean(jax.nn.softplus(-diff)) + 1e-4 * reg, jnp.mean((diff > 0).astype(F32))

    def step(p, m, v, t, u, i, keep, bu, bp, bn):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, u, i, keep, bu, bp, bn)
        p, m, v = _adamw_moment_update(p, m, v, g, t, lr=1e-3)
        return l, acc, p, m, v
    p = {"user": S(NU, D), "item": S(NI, D)}
    B = 1024
    return step, (p, p, p, S(), S(E, dtype=I32), S(E, dtype=I32), S(E, dtype=jnp.bool_),
                  S(B, dtype=I32), S(B, dtype=I32), S(B, dtype=I32))


def hgt_heterogeneous_graph_transformer_typed_projections_relation_priors_segment_softmax_classifier():
    """Heterogeneous Graph Transformer (Hu et al.) node classifier on an academic-style graph
    of 1024 nodes of 3 types (papers, authors, venues; passed-in type ids, 64 raw features)
    and 4096 edges of 4 relation types (passed-in source, destination and relation arrays):
    node-type-specific input, key, query, value and output projections (computed for every
    type and picked per node by take_along_axis), relation-specific per-head attention and
    message matrices applied to the gathered source keys and values (again computed for every
    relation and picked per edge), a learned per-relation, per-head prior scaling each score,
    a segment softmax over the incoming edges of every destination (segment_max,
    segment_sum), aggregation by segment_sum, GELU, and a type-specific gated skip connection
    followed by LayerNorm; two layers (width 128, 4 heads); a 12-way classifier on the
    labelled paper nodes (passed-in mask); cross-entropy; AdamW with warmup-cosine."""
    N, E, NT, NR, DIN, D, H, NL, NC = 1024, 4096, 3, 4, 64, 128, 4, 2, 12
    DH = D // H

    def typed(w, x, ntype):
        y = jnp.einsum("nd,tde->nte", x, w)
        return jnp.take_along_axis(y, ntype[:, None, None], 1)[:, 0]

    def per_rel(w, a, etype):
        y = jnp.einsum("ehd,rhdf->erhf", a, w)
        return jnp.take_along_axis(y, etype[:, None, None, None], 1)[:, 0]

    def layer(q, h, ntype, src, dst, etype):
        kk = typed(q["wk"], h, ntype).reshape(N, H, DH)
        qq = typed(q["wq"], h, ntype).reshape(N, H, DH)
        vv = typed(q["wv"], h, ntype).reshape(N, H, DH)
        ks = per_rel(q["watt"], kk[src], etype)
        vs = per_rel(q["wmsg"], vv[src], etype)
        s = jnp.sum(ks * qq[dst], -1) * q["prior"][etype] / math.sqrt(DH)
        smax = jax.ops.segment_max(s, dst, N)
        a = jnp.exp(s - lax.stop_gradient(smax)[dst])
        alpha = a / (jax.ops.segment_sum(a, dst, N)[dst] + 1e-9)
        agg = jax.ops.segment_sum(alpha[..., None] * vs, dst, N).reshape(N, D)
        out = typed(q["wa"], jax.nn.gelu(agg), ntype)
        beta = jax.nn.sigmoid(q["skip"][ntype])[:, None]
        return _layer_norm_lastdim(beta * out + (1.0 - beta) * h, q["g"], q["b"])

    def loss(p, x, ntype, src, dst, etype, labels, lmask):
        h = jnp.tanh(typed(p["win"], x, ntype) + p["bin"][ntype])
        for q in p["layers"]:
            h = layer(q, h, ntype, src, dst, etype)
        logits = h @ p["head"] + p["hb"]
        w = (lmask & (ntype == 0)).astype(F32)
        acc = jnp.sum((jnp.argmax(logits, -1) == labels) * w) / jnp.maximum(jnp.sum(w), 1.0)
        return _sparse_label_xent(logits, labels, w), acc

    def step(p, m, v, t, x, ntype, src, dst, etype, labels, lmask):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, x, ntype, src, dst, etype,
                                                             labels, lmask)
        lr = _warmup_cosine_decay(t, 1e-3, 20000.0, warm=200.0)
        p, m, v = _adamw_moment_update(p, m, v, g, t, lr=lr, wd=0.01)
        return l, acc, p, m, v
    q = {"wk": S(NT, D, D), "wq": S(NT, D, D), "wv": S(NT, D, D), "watt": S(NR, H, DH, DH),
         "wmsg": S(NR, H, DH, DH), "prior": S(NR, H), "wa": S(NT, D, D), "skip": S(NT),
         "g": S(D), "b": S(D)}
    p = {"win": S(NT, DIN, D), "bin": S(NT, D), "layers": [dict(q) for _ in range(NL)],
         "head": S(D, NC), "hb": S(NC)}
    return step, (p, p, p, S(), S(N, DIN), S(N, dtype=I32), S(E, dtype=I32), S(E, dtype=I32),
                  S(E, dtype=I32), S(N, dtype=I32), S(N, dtype=jnp.bool_))


# ----------------------------------------------------------------------------- quantization


def gptq_act_order_cholesky_inverse_hessian_columnwise_error_feedback_int4_group_quantizer():
    """GPTQ (Frantar et al.) post-training 4-bit quantisation of a two-layer MLP (256 -> 512 ->
    256) from 512 passed-in calibration inputs: for each layer the Hessian proxy 2 X^T X / n
    gets dead columns fixed and 1% mean-diagonal damping, columns are permuted in descending
    Hessian-diagonal order (act-order, argsort), the upper Cholesky factor of the inverse
    Hessian is formed (jnp.linalg.cholesky, cho_solve), and a lax.fori_loop over the input
    columns quantises one column at a time (asymmetric min-max, groups of 64 consecutive
    columns whose scale and zero point are recomputed by lax.cond at each group start from
    the already-updated weights) and spreads its scaled quantisation error onto the remaining
    columns (dynamic slices of the factor); the second layer is calibrated on the outputs of
    the quantised first layer; the integer codes, scales, zero points, group indices of the
    original columns and the relative output errors are returned."""
    NCAL, DIN, DHID, DOUT, G, BITS = 512, 256, 512, 256, 64, 4
    QMAX = float(2 ** BITS - 1)

    def qparams(wg):
        lo = jnp.minimum(jnp.min(wg, -1), 0.0)
        hi = jnp.maximum(jnp.max(wg, -1), 0.0)
        scale = jnp.maximum(hi - lo, 1e-8) / QMAX
        return scale, jnp.round(-lo / scale)

    def quantize_layer(W, X):
        dout, din = W.shape
        Hm = 2.0 * X.T @ X / X.shape[0]
        dead = jnp.diagonal(Hm) == 0.0
        Hm = Hm + jnp.diag(dead.astype(F32))
        W = jnp.where(dead[None, :], 0.0, W)
        perm = jnp.argsort(-jnp.diagonal(Hm))
        inv = jnp.argsort(perm)
        W = W[:, perm]
        Hm = Hm[perm][:, perm]
        Hm = Hm + 0.01 * jnp.mean(jnp.diagonal(Hm)) * jnp.eye(din)
        Hinv = jax.scipy.linalg.cho_solve((jnp.linalg.cholesky(Hm), True), jnp.eye(din))
        U = jnp.linalg.cholesky(Hinv).T
        cols = jnp.arange(din)

        def body(i, c):
            W, Q, codes, scales, zeros, s, z = c
            s, z = lax.cond(i % G == 0,
                            lambda W: qparams(lax.dynamic_slice(W, (0, i), (dout, G))),
                            lambda W: (s, z), W)
            w = lax.dynamic_slice(W, (0, i), (dout, 1))[:, 0]
            code = jnp.clip(jnp.round(w / s) + z, 0.0, QMAX)
            qw = s * (code - z)
            urow = lax.dynamic_slice(U, (i, 0), (1, din))[0]
            e = (w - qw) / urow[i]
            W = W - jnp.where(cols[None, :] > i, e[:, None] * urow[None, :], 0.0)
            Q = lax.dynamic_update_slice(Q, qw[:, None], (0, i))
            codes = lax.dynamic_update_slice(codes, code.astype(jnp.uint8)[:, None], (0, i))
            scales = lax.dynamic_update_slice(scales, s[:, None], (0, i // G))
            zeros = lax.dynamic_update_slice(zeros, z[:, None], (0, i // G))
            return W, Q, codes, scales, zeros, s, z
        init = (W, jnp.zeros_like(W), jnp.zeros(W.shape, jnp.uint8),
                jnp.zeros((dout, din // G)), jnp.zeros((dout, din // G)), jnp.ones((dout,)),
                jnp.zeros((dout,)))
        _, Q, codes, scales, zeros, _, _ = lax.fori_loop(0, din, body, init)
        return Q[:, inv], codes[:, inv], scales, zeros, inv // G

    def calibrate(w1, b1, w2, b2, X):
        Q1, c1, s1, z1, g1 = quantize_layer(w1, X)
        Hq = jax.nn.relu(X @ Q1.T + b1)
        Q2, c2, s2, z2, g2 = quantize_layer(w2, Hq)
        ref1 = X @ w1.T
        ref = jax.nn.relu(ref1 + b1) @ w2.T + b2
        out = Hq @ Q2.T + b2
        e1 = jnp.sum(jnp.square(X @ Q1.T - ref1)) / jnp.sum(jnp.square(ref1))
        e2 = jnp.sum(jnp.square(out - ref)) / jnp.sum(jnp.square(ref))
        return (c1, s1, z1, g1), (c2, s2, z2, g2), (e1, e2)
    return calibrate, (S(DHID, DIN), S(DHID), S(DOUT, DHID), S(DOUT), S(NCAL, DIN))


# ----------------------------------------------------------------------------- remat


def remat_swinv2_scaled_cosine_log_cpb_shifted_windows_scan_save_anything_except_names():
    """Swin Transformer V2 (Liu et al.) classifier on 32x32 images trained with
    rematerialisation: 2x2 patches give a 16x16 token map (width 96, 3 heads) attended in
    8x8 windows; every block uses scaled cosine attention (cosine similarity of queries and
    keys times a learned, clamped per-head logit scale), a log-spaced continuous position
    bias (a small MLP over the log-scaled relative coordinates evaluated on the 15 x 15 table,
    gathered by a constant index, 16 x sigmoid) and residual post-normalisation; a pair of
    blocks -- plain windows, then windows shifted by 4 with jnp.roll and the constant
    cross-region attention mask -- is the body of a lax.scan over two stacked pairs, wrapped
    in jax.checkpoint with save_anything_except_these_names dropping the tagged attention
    logits and MLP hidden activations from the residuals; mean pooling, LayerNorm and a
    10-way head; label-smoothed cross-entropy; AdamW with warmup-cosine and clipping."""
    IMG, PS, D, H, WS, NPAIR, NC, F = 32, 2, 96, 3, 8, 2, 10, 384
    G = IMG // PS
    NW, NTOK, DH, SH = (G // WS) ** 2, WS * WS, D // H, WS // 2
    r = np.arange(-(WS - 1), WS, dtype=np.float64)
    rc = np.stack(np.meshgrid(r, r, indexing="ij"), -1) / (WS - 1) * 8.0
    LOGREL = (np.sign(rc) * np.log2(np.abs(rc) + 1.0) / np.log2(8.0)).reshape(-1, 2).astype(
        np.float32)
    co = np.stack(np.meshgrid(np.arange(WS), np.arange(WS), indexing="ij"), -1).reshape(-1, 2)
    rel = co[:, None] - co[None] + (WS - 1)
    RIDX = rel[..., 0] * (2 * WS - 1) + rel[..., 1]
    lab = np.zeros((G, G), np.int32)
    cnt = 0
    for hs in (slice(0, -WS), slice(-WS, -SH), slice(-SH, None)):
        for ws in (slice(0, -WS), slice(-WS, -SH), slice(-SH, None)):
            lab[hs, ws] = cnt
            cnt += 1
    lw = lab.reshape(G // WS, WS, G // WS, WS).transpose(0, 2, 1, 3).reshape(NW, NTOK)
    SMASK = lw[:, :, None] == lw[:, None, :]

    def windows(x):
        B = x.shape[0]
        y = x.reshape(B, G // WS, WS, G // WS, WS, D).transpose(0, 1, 3, 2, 4, 5)
        return y.reshape(B * NW, NTOK, D)

    def unwindows(y, B):
        y = y.reshape(B, G // WS, G // WS, WS, WS, D).transpose(0, 1, 3, 2, 4, 5)
        return y.reshape(B, G, G, D)

    def attention(q, x, B, shifted):
        n = x.shape[0]
        qkv = (x @ q["qkv"] + q["qkvb"]).reshape(n, NTOK, 3, H, DH)
        l2 = lambda a: a / (jnp.linalg.norm(a, axis=-1, keepdims=True) + 1e-6)
        s = jnp.einsum("nqhd,nkhd->nhqk", l2(qkv[:, :, 0]), l2(qkv[:, :, 1]))
        s = s * jnp.exp(jnp.minimum(q["lscale"], math.log(100.0)))[:, None, None]
        cpb = 16.0 * jax.nn.sigmoid(_dense_stack_forward(q["cpb"], jnp.asarray(LOGREL)))
        s = s + jnp.transpose(cpb[RIDX], (2, 0, 1))[None]
        if shifted:
            s = jnp.where(SMASK[None, :, None], s.reshape(B, NW, H, NTOK, NTOK), -100.0)
            s = s.reshape(n, H, NTOK, NTOK)
        s = checkpoint_name(s, "attn_logits")
        o = jnp.einsum("nhqk,nkhd->nqhd", jax.nn.softmax(s, -1), qkv[:, :, 2])
        return o.reshape(n, NTOK, D) @ q["proj"] + q["projb"]

    def block(q, x, shift):
        B = x.shape[0]
        xs = jnp.roll(x, (-shift, -shift), (1, 2)) if shift else x
        y = unwindows(attention(q, windows(xs), B, bool(shift)), B)
        if shift:
            y = jnp.roll(y, (shift, shift), (1, 2))
        x = x + _layer_norm_lastdim(y, q["g1"], q["b1"])
        hmid = checkpoint_name(jax.nn.gelu(x @ q["f1"] + q["fb1"]), "mlp_hidden")
        return x + _layer_norm_lastdim(hmid @ q["f2"] + q["fb2"], q["g2"], q["b2"])

    def pair(x, q):
        return block(q["b"], block(q["a"], x, 0), SH), None
    pair_r = jax.checkpoint(pair, policy=CP.save_anything_except_these_names("attn_logits",
                                                                             "mlp_hidden"))

    def loss(p, img, y):
        B = img.shape[0]
        x = img.reshape(B, G, PS, G, PS, 3).transpose(0, 1, 3, 2, 4, 5).reshape(B, G, G, -1)
        x = _layer_norm_lastdim(x @ p["patch"] + p["pb"], p["pg"], p["pbb"])
        x, _ = lax.scan(pair_r, x, p["stack"])
        f = _layer_norm_lastdim(jnp.mean(x, (1, 2)), p["gf"], p["bf"])
        return _label_smoothed_xent(f @ p["head"] + p["hb"], y)

    def step(p, m, v, t, img, y):
        l, g = jax.value_and_grad(loss)(p, img, y)
        lr = _warmup_cosine_decay(t, 1e-3, 60000.0, warm=1000.0)
        p, m, v = _adamw_moment_update(p, m, v, _clip_tree_by_global_norm(g, 5.0), t, lr=lr,
                                       wd=0.05)
        return l, p, m, v
    blk = {"qkv": S(D, 3 * D), "qkvb": S(3 * D), "lscale": S(H),
           "cpb": _dense_stack_shapes((2, 64, H)), "proj": S(D, D), "projb": S(D), "g1": S(D),
           "b1": S(D), "f1": S(D, F), "fb1": S(F), "f2": S(F, D), "fb2": S(D), "g2": S(D),
           "b2": S(D)}
    p = {"patch": S(PS * PS * 3, D), "pb": S(D), "pg": S(D), "pbb": S(D),
         "stack": _stack_shapes({"a": blk, "b": blk}, NPAIR), "gf": S(D), "bf": S(D),
         "head": S(D, NC), "hb": S(NC)}
    B = 16
    return step, (p, p, p, S(), S(B, IMG, IMG, 3), S(B, dtype=I32))


def remat_perceiver_io_scanned_latent_blocks_checkpoint_dots_prevent_cse_false_byte_mlm():
    """Perceiver IO (Jaegle et al.) masked language model over 256 UTF-8 bytes (vocabulary 262
    with special ids) trained with rematerialisation: passed-in masked positions are replaced
    by the [MASK] id, byte embeddings plus learned positions (width 64) are read into 64
    latents (width 128) by a padding-masked cross-attention block that is a jax.checkpoint
    with the nothing_saveable policy; four latent self-attention blocks (4 heads, GELU MLP)
    are stacked and run by lax.scan over a jax.checkpoint(prevent_cse=False) body with the
    checkpoint_dots policy (every matmul saved, elementwise work recomputed); the decoder
    cross-attends 256 learned output queries (width 64) to the latents and predicts the bytes;
    cross-entropy on the masked positions only; AdamW with warmup-cosine and clipping."""
    V, T, NLAT, DL, DI, H, NL, MASK_ID = 262, 256, 64, 128, 64, 4, 4, 3

    def mlp(q, x):
        return jax.nn.gelu(x @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]

    def encode(q, z, x, pad):
        hq = _layer_norm_lastdim(z, q["gq"], q["bq"])
        hk = _layer_norm_lastdim(x, q["gk"], q["bk"])
        z = z + _multihead_attend(q["att"], hq, hk, 1, mask=pad[:, None, None, :])
        return z + mlp(q, _layer_norm_lastdim(z, q["g2"], q["b2"]))
    encode_r = jax.checkpoint(encode, policy=CP.nothing_saveable)

    def latent_block(z, q):
        h = _layer_norm_lastdim(z, q["g1"], q["b1"])
        z = z + _multihead_attend(q["att"], h, h, H)
        return z + mlp(q, _layer_norm_lastdim(z, q["g2"], q["b2"])), None
    latent_r = jax.checkpoint(latent_block, prevent_cse=False, policy=CP.checkpoint_dots)

    def loss(p, tok, masked, pad):
        B = tok.shape[0]
        x = p["emb"][jnp.where(masked, MASK_ID, tok)] + p["pos"]
        z = jnp.broadcast_to(p["latents"], (B, NLAT, DL))
        z = encode_r(p["enc"], z, x, pad)
        z, _ = lax.scan(latent_r, z, p["stack"])
        d = p["dec"]
        qd = jnp.broadcast_to(p["queries"], (B, T, DI))
        o = qd + _multihead_attend(d["att"], _layer_norm_lastdim(qd, d["gq"], d["bq"]),
                                   _layer_norm_lastdim(z, d["gk"], d["bk"]), 1)
        o = o + mlp(d, _layer_norm_lastdim(o, d["g2"], d["b2"]))
        logits = o @ p["out"] + p["ob"]
        return _sparse_label_xent(logits, tok, (masked & pad).astype(F32))

    def step(p, m, v, t, tok, masked, pad):
        l, g = jax.value_and_grad(loss)(p, tok, masked, pad)
        lr = _warmup_cosine_decay(t, 3e-4, 200000.0, warm=2000.0)
        p, m, v = _adamw_moment_update(p, m, v, _clip_tree_by_global_norm(g, 1.0), t, lr=lr,
                                       wd=0.1)
        return l, p, m, v

    def xa(dq, dkv):
        return {"gq": S(dq), "bq": S(dq), "gk": S(dkv), "bk": S(dkv),
                "att": _mha_param_shapes(dq, dkv, DL, dq), "g2": S(dq), "b2": S(dq),
                "f1": S(dq, 2 * dq), "fb1": S(2 * dq), "f2": S(2 * dq, dq), "fb2": S(dq)}
    lat = {"g1": S(DL), "b1": S(DL), "att": _mha_param_shapes(DL), "g2": S(DL), "b2": S(DL),
           "f1": S(DL, 4 * DL), "fb1": S(4 * DL), "f2": S(4 * DL, DL), "fb2": S(DL)}
    p = {"emb": S(V, DI), "pos": S(T, DI), "latents": S(NLAT, DL), "enc": xa(DL, DI),
         "stack": _stack_shapes(lat, NL), "queries": S(T, DI), "dec": xa(DI, DL),
         "out": S(DI, V), "ob": S(V)}
    B = 16
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, T, dtype=jnp.bool_),
                  S(B, T, dtype=jnp.bool_))


# ----------------------------------------------------------------------------- custom_vjp


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def _sorted_scatter_embedding_bag(nrows, table, ids, weights):
    return jnp.einsum("bl,bld->bd", weights, table[ids])


def _sorted_scatter_embedding_bag_fwd(nrows, table, ids, weights):
    rows = table[ids]
    return jnp.einsum("bl,bld->bd", weights, rows), (ids, weights, rows)


def _sorted_scatter_embedding_bag_bwd(nrows, res, g):
    ids, weights, rows = res
    gr = (weights[..., None] * g[:, None, :]).reshape(-1, g.shape[-1])
    flat = ids.reshape(-1)
    sid, order = lax.sort((flat, jnp.arange(flat.shape[0], dtype=I32)), num_keys=2)
    dtable = jax.ops.segment_sum(gr[order], sid, nrows, indices_are_sorted=True)
    dweights = jnp.einsum("bld,bd->bl", rows, g)
    return dtable, np.zeros(ids.shape, dtype=jax.dtypes.float0), dweights


_sorted_scatter_embedding_bag.defvjp(_sorted_scatter_embedding_bag_fwd,
                                     _sorted_scatter_embedding_bag_bwd)


def custom_vjp_deterministic_embedding_bag_sorted_segment_sum_backward_hashed_ngram_fasttext():
    """fastText-style (Joulin et al.) news classifier with title and body fields: each field is
    a bag of its word ids (30000-word vocabulary) and of hashed word bigrams and trigrams (a
    uint32 multiplicative hash into 65536 buckets stored after the words in one 64-dim table),
    averaged over the valid positions given by passed-in lengths; the bag is a jax.custom_vjp
    whose backward produces the table gradient deterministically -- the flattened ids are
    sorted with their positions as a second key (two-operand lax.sort, ties broken by
    position) and the weighted cotangent rows summed in that order by segment_sum with
    indices_are_sorted -- instead of an unordered scatter-add, and also returns the gradient
    of the bag weights; the two field vectors are concatenated into a linear 20-way softmax
    classifier; cross-entropy; SGD with the linearly decaying fastText learning rate; the
    accuracy is returned."""
    VW, NBKT, D, NC, LT, LB = 30000, 65536, 64, 20, 16, 128
    NROWS = VW + NBKT

    def field(table, w, n):
        L = w.shape[1]
        wu = w.astype(U32)
        h2 = (wu[:, :-1] * U32(2654435761)) ^ (wu[:, 1:] * U32(40503))
        h3 = (h2[:, :-1] * U32(2246822519)) ^ (wu[:, 2:] * U32(3266489917))
        big = (h2 % U32(NBKT)).astype(I32) + VW
        tri = (h3 % U32(NBKT)).astype(I32) + VW
        ids = jnp.concatenate([w, big, tri], 1)
        pos = jnp.arange(L)[None, :]
        vw = (pos < n[:, None]).astype(F32)
        vb = (pos[:, 1:] < n[:, None]).astype(F32)
        vt = (pos[:, 2:] < n[:, None]).astype(F32)
        wts = jnp.concatenate([vw, vb, vt], 1)
        wts = wts / jnp.maximum(jnp.sum(wts, 1, keepdims=True), 1.0)
        return _sorted_scatter_embedding_bag(NROWS, table, ids, wts)

    def loss(p, title, tlen, body, blen, y):
        h = jnp.concatenate([field(p["emb"], title, tlen), field(p["emb"], body, blen)], -1)
        logits = h @ p["w"] + p["b"]
        return _sparse_label_xent(logits, y), jnp.mean((jnp.argmax(logits, -1) == y).astype(F32))

    def step(p, t, title, tlen, body, blen, y):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, title, tlen, body, blen, y)
        lr = 0.5 * jnp.maximum(1.0 - t / 500000.0, 1e-4)
        p = tmap(lambda w, g: w - lr * g, p, g)
        return l, acc, p
    p = {"emb": S(NROWS, D), "w": S(2 * D, NC), "b": S(NC)}
    B = 64
    return step, (p, S(), S(B, LT, dtype=I32), S(B, dtype=I32), S(B, LB, dtype=I32),
                  S(B, dtype=I32), S(B, dtype=I32))


# ----------------------------------------------------------------------------- control


def muzero_batched_mcts_puct_while_descend_fori_simulations_minmax_q_backup_acting():
    """MuZero (Schrittwieser et al.) acting step: for 16 passed-in observations (32-dim) the
    representation network gives min-max normalised 64-dim root states, the prediction
    network priors (mixed with passed-in Dirichlet noise, 25%) and values; a Monte-Carlo tree
    search of 16 simulations per root (vmapped) keeps a fixed-size tree of 17 nodes in arrays
    (states, priors, child table, visit counts, value sums, rewards, parent links) inside a
    lax.fori_loop; each simulation descends by lax.while_loop while the PUCT-selected child
    exists (Q values min-max normalised over the tree), expands the leaf with the dynamics
    network (next state, reward) and the prediction network, and backs the discounted value
    up to the root by a second lax.while_loop over the parent links while updating the
    min-max bounds; the root visit distribution is the policy target, and the action is
    sampled with passed-in Gumbel noise or taken greedily, chosen by lax.cond on a passed-in
    flag; root values returned."""
    OBS, DS, A, NSIM, HID, C1, GAM = 32, 64, 4, 16, 128, 1.25, 0.997
    NN = NSIM + 1

    def scale01(s):
        lo, hi = jnp.min(s, -1, keepdims=True), jnp.max(s, -1, keepdims=True)
        return (s - lo) / (hi - lo + 1e-6)

    def represent(p, o):
        return scale01(_dense_stack_forward(p["rep"], o))

    def dynamics(p, s, a):
        h = _dense_stack_forward(p["dyn"], jnp.concatenate([s, jax.nn.one_hot(a, A)], -1))
        s2 = scale01(h)
        return s2, _dense_stack_forward(p["rew"], s2)[0]

    def predict(p, s):
        out = _dense_stack_forward(p["pred"], s)
        return jax.nn.softmax(out[:A]), jnp.tanh(out[A])

    def search(p, obs, dnoise, gumbel, sample):
        s0 = represent(p, obs)
        pr0, v0 = predict(p, s0)
        tree = {"emb": jnp.zeros((NN, DS)).at[0].set(s0),
                "prior": jnp.zeros((NN, A)).at[0].set(0.75 * pr0 + 0.25 * dnoise),
                "child": jnp.full((NN, A), -1, I32), "visit": jnp.zeros((NN, A)),
                "vsum": jnp.zeros((NN, A)), "rew": jnp.zeros((NN, A)),
                "parent": jnp.zeros((NN,), I32), "pact": jnp.zeros((NN,), I32),
                "qmin": jnp.float32(jnp.inf), "qmax": jnp.float32(-jnp.inf)}

        def select(tr, node):
            n = tr["visit"][node]
            q = tr["rew"][node] + GAM * tr["vsum"][node] / jnp.maximum(n, 1.0)
            span = tr["qmax"] - tr["qmin"]
            qn = jnp.where((n > 0) & (span > 0), (q - tr["qmin"]) / jnp.where(span > 0, span, 1.0),
                           0.0)
            u = C1 * tr["prior"][node] * jnp.sqrt(jnp.sum(n) + 1.0) / (1.0 + n)
            return jnp.argmax(qn + u).astype(I32)

        def simulate(i, tr):
            leaf, a = lax.while_loop(lambda c: tr["child"][c[0], c[1]] >= 0,
                                     lambda c: (tr["child"][c[0], c[1]],
                                                select(tr, tr["child"][c[0], c[1]])),
                                     (jnp.int32(0), select(tr, 0)))
            s2, r = dynamics(p, tr["emb"][leaf], a)
            pr, v = predict(p, s2)
            new = i + 1
            tr = dict(tr, emb=tr["emb"].at[new].set(s2), prior=tr["prior"].at[new].set(pr),
                      child=tr["child"].at[leaf, a].set(new), rew=tr["rew"].at[leaf, a].set(r),
                      parent=tr["parent"].at[new].set(leaf), pact=tr["pact"].at[new].set(a))

            def backup(c):
                cur, G, tr = c
                par, act = tr["parent"][cur], tr["pact"][cur]
                vs = tr["vsum"].at[par, act].add(G)
                vc = tr["visit"].at[par, act].add(1.0)
                q = tr["rew"][par, act] + GAM * vs[par, act] / vc[par, act]
                tr = dict(tr, vsum=vs, visit=vc, qmin=jnp.minimum(tr["qmin"], q),
                          qmax=jnp.maximum(tr["qmax"], q))
                return par, tr["rew"][par, act] + GAM * G, tr
            _, _, tr = lax.while_loop(lambda c: c[0] > 0, backup, (new, v, tr))
            return tr
        tree = lax.fori_loop(0, NSIM, simulate, tree)
        visits = tree["visit"][0]
        pi = visits / jnp.maximum(jnp.sum(visits), 1.0)
        action = lax.cond(sample, lambda: jnp.argmax(jnp.log(pi + 1e-9) + gumbel),
                          lambda: jnp.argmax(visits))
        root_v = jnp.sum(tree["vsum"][0]) / jnp.maximum(jnp.sum(visits), 1.0)
        return pi, action, root_v, v0

    def act(p, obs, dnoise, gumbel, sample):
        return jax.vmap(search, (None, 0, 0, 0, None))(p, obs, dnoise, gumbel, sample)
    p = {"rep": _dense_stack_shapes((OBS, HID, DS)), "dyn": _dense_stack_shapes((DS + A, HID, DS)),
         "rew": _dense_stack_shapes((DS, HID, 1)), "pred": _dense_stack_shapes((DS, HID, A + 1))}
    B = 16
    return act, (p, S(B, OBS), S(B, A), S(B, A), S(dtype=jnp.bool_))


def mask_predict_cmlm_length_prediction_fori_refinement_cond_remask_lowest_confidence_decoder():
    """Mask-Predict (Ghazvininejad et al.) non-autoregressive translation inference with a
    conditional masked language model: a two-layer post-LN encoder (width 128, 4 heads) over
    32 source tokens, a target-length classifier on the masked-mean-pooled encoding (argmax,
    clipped to 1..32), then 6 refinement iterations in a lax.fori_loop: a two-layer decoder
    with bidirectional self-attention over the current target (padding beyond the predicted
    length masked) and cross-attention predicts every position, masked positions take the
    argmax token (special ids excluded) and its log-probability, and the number of tokens to
    re-mask shrinks linearly -- lax.cond skips the re-masking on the last iteration, otherwise
    the lowest-confidence positions (double argsort ranks) are reset to [MASK]; the
    translations, lengths and average log-probabilities are returned."""
    V, D, H, TS, TT, NLE, NLD, F, NIT = 2048, 128, 4, 32, 32, 2, 2, 512, 6
    PAD, MASK, NSPECIAL = 0, 3, 4

    def ffn(q, x):
        return _layer_norm_lastdim(x + jax.nn.relu(x @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"],
                                   q["g2"], q["b2"])

    def encode(p, src):
        smask = (src != PAD)[:, None, None, :]
        x = p["emb"][src] * math.sqrt(D) + p["spos"]
        for q in p["enc"]:
            x = _layer_norm_lastdim(x + _multihead_attend(q["att"], x, x, H, mask=smask),
                                    q["g1"], q["b1"])
            x = ffn(q, x)
        return x, smask

    def decode(p, tok, valid, mem, smask):
        x = p["emb"][tok] * math.sqrt(D) + p["tpos"]
        for q in p["dec"]:
            x = _layer_norm_lastdim(x + _multihead_attend(q["att"], x, x, H,
                                                          mask=valid[:, None, None, :]),
                                    q["g1"], q["b1"])
            x = _layer_norm_lastdim(x + _multihead_attend(q["cross"], x, mem, H, mask=smask),
                                    q["gc"], q["bc"])
            x = ffn(q, x)
        logits = x @ p["emb"].T
        return jnp.where(jnp.arange(V) < NSPECIAL, -1e9, logits)

    def translate(p, src):
        B = src.shape[0]
        mem, smask = encode(p, src)
        sm = smask[:, 0, 0, :, None].astype(F32)
        pooled = jnp.sum(mem * sm, 1) / jnp.maximum(jnp.sum(sm, 1), 1.0)
        L = jnp.clip(jnp.argmax(pooled @ p["len_w"] + p["len_b"], -1), 1, TT)
        valid = jnp.arange(TT)[None, :] < L[:, None]
        tok = jnp.where(valid, MASK, PAD).astype(I32)
        probs = jnp.zeros((B, TT))

        def body(it, c):
            tok, probs = c
            logp = jax.nn.log_softmax(decode(p, tok, valid, mem, smask), -1)
            m = tok == MASK
            tok = jnp.where(m, jnp.argmax(logp, -1).astype(I32), tok)
            probs = jnp.where(m, jnp.max(logp, -1), probs)
            n = (L * (NIT - 1 - it)) // NIT

            def remask(c):
                tok, probs = c
                rank = jnp.argsort(jnp.argsort(jnp.where(valid, probs, jnp.inf), -1), -1)
                return jnp.where(rank < n[:, None], MASK, tok), probs
            return lax.cond(jnp.any(n > 0), remask, lambda c: c, (tok, probs))
        tok, probs = lax.fori_loop(0, NIT, body, (tok, probs))
        score = jnp.sum(jnp.where(valid, probs, 0.0), -1) / L
        return tok, L, score

    def lay(cross):
        q = {"att": _mha_param_shapes(D), "g1": S(D), "b1": S(D), "f1": S(D, F), "fb1": S(F),
             "f2": S(F, D), "fb2": S(D), "g2": S(D), "b2": S(D)}
        if cross:
            q.update(cross=_mha_param_shapes(D), gc=S(D), bc=S(D))
        return q
    p = {"emb": S(V, D), "spos": S(TS, D), "tpos": S(TT, D), "enc": [lay(False) for _ in range(NLE)],
         "dec": [lay(True) for _ in range(NLD)], "len_w": S(D, TT + 1), "len_b": S(TT + 1)}
    B = 16
    return translate, (p, S(B, TS, dtype=I32))


# ----------------------------------------------------------------------------- sort


def ssd_anchor_box_decoding_argsort_iou_matrix_greedy_nms_fori_multi_key_sort_detection_inference():
    """SSD (Liu et al.) detection inference on 8 images of 64x64: a ReLU conv backbone (stages of a
    3x3 stride-2 conv and a 3x3 conv, 32 / 64 / 128 / 128 / 128 channels) gives 8x8, 4x4 and 2x2
    feature maps with 4 anchors per cell (two scales and aspect ratios 1, 2, 1/2, constant numpy
    anchor boxes) and 3x3 conv heads for 6-way class logits and box deltas; boxes are decoded
    with the usual centre / size variances (0.1, 0.2) and softmax scores taken; per image (vmap)
    and per foreground class (vmap) the candidates are ordered by jnp.argsort of their scores
    and cut to the best 100, the pairwise IoU matrix is formed and greedy non-maximum
    suppression (IoU 0.45, score 0.05) runs as a lax.fori_loop over the sorted candidates; the
    survivors of all classes are merged by a three-operand lax.sort keyed on the score and the
    best 20 kept with their boxes, scores and classes."""
    IMG, NA, NCLS, PRE, MAXDET, IOU_T, SCORE_T = 64, 4, 6, 100, 20, 0.45, 0.05

    def anchors():
        out = []
        for fm, scales in ((8, (0.15, 0.3)), (4, (0.4, 0.6)), (2, (0.7, 0.9))):
            c = (np.arange(fm) + 0.5) / fm
            cy, cx = np.meshgrid(c, c, indexing="ij")
            per = [(scales[0], 1.0), (scales[0], 2.0), (scales[0], 0.5),
                   (math.sqrt(scales[0] * scales[1]), 1.0)]
            a = [np.stack([cx, cy, np.full_like(cx, s * math.sqrt(r)),
                           np.full_like(cx, s / math.sqrt(r))], -1) for s, r in per]
            out.append(np.stack(a, 2).reshape(-1, 4))
        return np.concatenate(out, 0).astype(np.float32)
    ANCH = anchors()
    NANCH = ANCH.shape[0]

    def net(p, img):
        x = img
        feats = []
        for i, q in enumerate(p["backbone"]):
            x = jax.nn.relu(_conv_nhwc_hwio(x, q["w1"], 2) + q["b1"])
            x = jax.nn.relu(_conv_nhwc_hwio(x, q["w2"]) + q["b2"])
            if i >= 2:
                feats.append(x)
        cls, box = [], []
        for f, q in zip(feats, p["heads"]):
            B = f.shape[0]
            cls.append((_conv_nhwc_hwio(f, q["cw"]) + q["cb"]).reshape(B, -1, NCLS))
            box.append((_conv_nhwc_hwio(f, q["bw"]) + q["bb"]).reshape(B, -1, 4))
        return jnp.concatenate(cls, 1), jnp.concatenate(box, 1)

    def decode(d):
        a = jnp.asarray(ANCH)
        cxy = a[:, :2] + d[..., :2] * 0.1 * a[:, 2:]
        wh = a[:, 2:] * jnp.exp(d[..., 2:] * 0.2)
        return jnp.concatenate([cxy - 0.5 * wh, cxy + 0.5 * wh], -1)

    def iou_matrix(b):
        lt = jnp.maximum(b[:, None, :2], b[None, :, :2])
        rb = jnp.minimum(b[:, None, 2:], b[None, :, 2:])
        inter = jnp.prod(jnp.maximum(rb - lt, 0.0), -1)
        area = jnp.prod(b[:, 2:] - b[:, :2], -1)
        return inter / (area[:, None] + area[None, :] - inter + 1e-9)

    def nms_class(boxes, sc):
        order = jnp.argsort(-sc)[:PRE]
        b, s = boxes[order], sc[order]
        iou = iou_matrix(b)
        later = jnp.arange(PRE)

        def body(i, keep):
            return keep & ~((iou[i] > IOU_T) & (later > i) & keep[i])
        keep = lax.fori_loop(0, PRE, body, s > SCORE_T)
        return b, jnp.where(keep, s, 0.0)

    def per_image(boxes, scores):
        b, s = jax.vmap(nms_class, (None, 1))(boxes, scores[:, 1:])
        cls = jnp.broadcast_to(jnp.arange(1, NCLS)[:, None], s.shape).reshape(-1)
        idx = jnp.arange(cls.shape[0])
        negs, cls, idx = lax.sort((-s.reshape(-1), cls, idx), num_keys=1)
        top = idx[:MAXDET]
        return b.reshape(-1, 4)[top], -negs[:MAXDET], cls[:MAXDET]

    def detect(p, img):
        logits, deltas = net(p, img)
        boxes = jnp.clip(decode(deltas), 0.0, 1.0)
        scores = jax.nn.softmax(logits, -1)
        b, s, c = jax.vmap(per_image)(boxes, scores)
        return b * IMG, s, c, jnp.sum(s > 0, -1)
    chans = (3, 32, 64, 128, 128, 128)
    p = {"backbone": [{"w1": S(3, 3, a, b), "b1": S(b), "w2": S(3, 3, b, b), "b2": S(b)}
                      for a, b in zip(chans[:-1], chans[1:])],
         "heads": [{"cw": S(3, 3, 128, NA * NCLS), "cb": S(NA * NCLS), "bw": S(3, 3, 128, NA * 4),
                    "bb": S(NA * 4)} for _ in range(3)]}
    assert NANCH == (64 + 16 + 4) * NA
    B = 8
    return detect, (p, S(B, IMG, IMG, 3))


# ----------------------------------------------------------------------------- fft


def unrolled_mri_cascade_kspace_soft_data_consistency_fft2_undersampling_cnn_reconstruction():
    """Deep cascade reconstruction of undersampled MRI (Schlemper et al.): 8 passed-in complex
    64x64 ground-truth images (real and imaginary channels) are transformed with a centred
    orthonormal jnp.fft.fft2 (fftshift / ifftshift) and undersampled by passed-in per-image
    phase-encode line masks; starting from the zero-filled ifft2 reconstruction, four cascades
    each apply a residual five-layer CNN denoiser (2 -> 32 -> 32 -> 32 -> 32 -> 2 channels,
    leaky ReLU) to the real / imaginary channels and a soft data-consistency step in k-space
    that blends the predicted and measured samples on the acquired lines with a learned
    softplus weight; the loss is the L1 error of the magnitude images plus the complex MSE;
    Adam with clipping; the PSNR is returned."""
    N, NCASC, CH, NCONV = 64, 4, 32, 5

    def fft2c(x):
        return jnp.fft.fftshift(jnp.fft.fft2(jnp.fft.ifftshift(x, axes=(-2, -1)), norm="ortho"),
                                axes=(-2, -1))

    def ifft2c(k):
        return jnp.fft.fftshift(jnp.fft.ifft2(jnp.fft.ifftshift(k, axes=(-2, -1)), norm="ortho"),
                                axes=(-2, -1))

    def to_c(x):
        return lax.complex(x[..., 0], x[..., 1])

    def to_r(z):
        return jnp.stack([jnp.real(z), jnp.imag(z)], -1)

    def denoise(q, x):
        h = x
        for i, (w, b) in enumerate(q["convs"]):
            h = _conv_nhwc_hwio(h, w) + b
            if i < NCONV - 1:
                h = jax.nn.leaky_relu(h, 0.01)
        return x + h

    def loss(p, img, lines):
        xgt = to_c(img)
        m = lines[:, None, :]
        k0 = jnp.where(m, fft2c(xgt), 0.0)
        x = ifft2c(k0)
        for q in p["cascades"]:
            k = fft2c(to_c(denoise(q, to_r(x))))
            lam = jax.nn.softplus(q["lam"])
            x = ifft2c(jnp.where(m, (k + lam * k0) / (1.0 + lam), k))
        mag, gt = jnp.abs(x), jnp.abs(xgt)
        mse = jnp.mean(jnp.square(jnp.abs(x - xgt)))
        psnr = 10.0 * jnp.log10(jnp.max(gt) ** 2 / (mse + 1e-12))
        return jnp.mean(jnp.abs(mag - gt)) + mse, psnr

    def step(p, m, v, t, img, lines):
        (l, psnr), g = jax.value_and_grad(loss, has_aux=True)(p, img, lines)
        p, m, v = _adamw_moment_update(p, m, v, _clip_tree_by_global_norm(g, 1.0), t, lr=5e-4)
        return l, psnr, p, m, v
    chans = (2,) + (CH,) * (NCONV - 1) + (2,)
    casc = {"convs": [(S(3, 3, a, b), S(b)) for a, b in zip(chans[:-1], chans[1:])], "lam": S()}
    p = {"cascades": [casc for _ in range(NCASC)]}
    B = 8
    return step, (p, p, p, S(), S(B, N, N, 2), S(B, N, dtype=jnp.bool_))


# ----------------------------------------------------------------------------- scatter/gather


def routing_transformer_balanced_topk_cluster_gather_scatter_add_attention_online_kmeans_lm():
    """Routing Transformer (Roy et al.) decoder LM over 256 tokens (width 128, 4 heads, pre-LN,
    GELU MLP): the first layer uses local attention in causal blocks of 32 looking back one
    block, the second content-based routing attention -- the unit-normalised queries are scored
    against 8 passed-in k-means centroids per head, every cluster takes its 32 most affine
    tokens (lax.top_k over the sequence, a balanced assignment, indices re-sorted into causal
    order), gathers their queries, keys and values by advanced indexing, attends causally by
    original position inside the cluster, and scatter-adds (.at[].add) the outputs back to
    the sequence, divided by how many clusters picked each token; the centroids are updated
    online as an exponential moving average of the scatter-added means of the tokens assigned
    to them (nearest centroid) and returned with the token coverage; tied embeddings;
    cross-entropy; Adam with warmup-cosine and clipping."""
    V, D, H, T, NCL, W, F, BLK = 2048, 128, 4, 256, 8, 32, 512, 32
    DH, NBLK = D // H, T // BLK

    def proj(q, x, n):
        return (x @ q[n]).reshape(x.shape[0], T, H, DH)

    def local_attn(q, x):
        b = x.shape[0]
        qq, kk, vv = (proj(q, x, n).reshape(b, NBLK, BLK, H, DH) for n in ("wq", "wk", "wv"))
        prev = lambda a: jnp.concatenate([jnp.zeros_like(a[:, :1]), a[:, :-1]], 1)
        k2 = jnp.concatenate([prev(kk), kk], 2)
        v2 = jnp.concatenate([prev(vv), vv], 2)
        s = jnp.einsum("bnqhd,bnkhd->bnhqk", qq, k2) / math.sqrt(DH)
        qi, ki = np.arange(BLK)[:, None] + BLK, np.arange(2 * BLK)[None, :]
        mask = (ki <= qi)[None] & ((np.arange(NBLK) > 0)[:, None, None] | (ki >= BLK)[None])
        s = jnp.where(mask[None, :, None], s, -1e9)
        o = jnp.einsum("bnhqk,bnkhd->bnqhd", jax.nn.softmax(s, -1), v2)
        return o.reshape(b, T, D) @ q["wo"]

    def routing_attn(q, x, cent):
        b = x.shape[0]
        qq, kk, vv = (proj(q, x, n).transpose(0, 2, 1, 3) for n in ("wq", "wk", "wv"))
        qn = qq / (jnp.linalg.norm(qq, axis=-1, keepdims=True) + 1e-6)
        aff = jnp.einsum("bhtd,hcd->bhct", lax.stop_gradient(qn), cent)
        _, idx = lax.top_k(aff, W)
        idx = jnp.sort(idx, -1)
        bi = jnp.arange(b)[:, None, None, None]
        hi = jnp.arange(H)[None, :, None, None]
        gq, gk, gv = qq[bi, hi, idx], kk[bi, hi, idx], vv[bi, hi, idx]
        s = jnp.einsum("bhcqd,bhckd->bhcqk", gq, gk) / math.sqrt(DH)
        s = jnp.where(idx[..., :, None] >= idx[..., None, :], s, -1e9)
        o = jnp.einsum("bhcqk,bhckd->bhcqd", jax.nn.softmax(s, -1), gv)
        out = jnp.zeros((b, H, T, DH)).at[bi, hi, idx].add(o)
        cnt = jnp.zeros((b, H, T)).at[bi, hi, idx].add(1.0)
        out = out / jnp.maximum(cnt, 1.0)[..., None]
        assign = jnp.argmax(aff, 2)
        hix = jnp.broadcast_to(jnp.arange(H)[None, :, None], assign.shape)
        sums = jnp.zeros((H, NCL, DH)).at[hix, assign].add(lax.stop_gradient(qn))
        counts = jnp.zeros((H, NCL)).at[hix, assign].add(1.0)
        means = jnp.where(counts[..., None] > 0, sums / jnp.maximum(counts, 1.0)[..., None], cent)
        newc = 0.99 * cent + 0.01 * means
        newc = newc / (jnp.linalg.norm(newc, axis=-1, keepdims=True) + 1e-6)
        cover = jnp.mean((cnt > 0).astype(F32))
        return out.transpose(0, 2, 1, 3).reshape(b, T, D) @ q["wo"], newc, cover

    def loss(p, tok, tgt, cent):
        x = p["emb"][tok] + p["pos"]
        q0, q1 = p["layers"]
        x = x + local_attn(q0, _layer_norm_lastdim(x, q0["g1"], q0["b1"]))
        x = x + mlp(q0, _layer_norm_lastdim(x, q0["g2"], q0["b2"]))
        a, cent, cover = routing_attn(q1, _layer_norm_lastdim(x, q1["g1"], q1["b1"]), cent)
        x = x + a
        x = x + mlp(q1, _layer_norm_lastdim(x, q1["g2"], q1["b2"]))
        logits = _layer_norm_lastdim(x, p["gf"], p["bf"]) @ p["emb"].T
        return _sparse_label_xent(logits, tgt), (cent, cover)

    def mlp(q, x):
        return jax.nn.gelu(x @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]

    def step(p, m, v, t, tok, tgt, cent):
        (l, (cent, cover)), g = jax.value_and_grad(loss, has_aux=True)(p, tok, tgt, cent)
        lr = _warmup_cosine_decay(t, 4e-4, 150000.0, warm=2000.0)
        p, m, v = _adamw_moment_update(p, m, v, _clip_tree_by_global_norm(g, 1.0), t, lr=lr,
                                       b2=0.98)
        return l, cover, p, m, v, cent
    q = {"g1": S(D), "b1": S(D), "wq": S(D, D), "wk": S(D, D), "wv": S(D, D), "wo": S(D, D),
         "g2": S(D), "b2": S(D), "f1": S(D, F), "fb1": S(F), "f2": S(F, D), "fb2": S(D)}
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [dict(q), dict(q)], "gf": S(D), "bf": S(D)}
    B = 8
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, T, dtype=I32), S(H, NCL, DH))


# ----------------------------------------------------------------------------- dynamic slices


def paged_attention_block_table_kv_cache_dynamic_update_slice_continuous_batching_decode():
    """Continuous-batching LLM decoding with a paged KV cache (vLLM-style PagedAttention): 8
    in-flight sequences own passed-in block tables of 16 page ids into a shared bfloat16 pool
    of 128 pages of 16 tokens per layer (two decoder layers, width 128, 4 heads, RMS norms,
    rotary positions at each sequence's own length, SwiGLU MLP); a lax.fori_loop generates 4
    greedy tokens: at every step and layer the new key and value of each sequence are written
    into its current page and slot by lax.dynamic_update_slice inside a fori_loop over the
    sequences, the pages listed in the block tables are gathered into a contiguous 256-token
    view, attention is masked beyond each sequence's length, and finished (inactive)
    sequences keep their token and length; the new tokens are written into the output buffer
    by dynamic_update_slice; the updated pools, lengths, tokens and log-probabilities are
    returned."""
    V, D, H, NL, PAGE, NPAGE, MAXBLK, NSTEP, F = 1024, 128, 4, 2, 16, 128, 16, 4, 384
    DH, MAXLEN = D // H, PAGE * MAXBLK
    INV = (1.0 / (10000.0 ** (np.arange(0, DH, 2) / DH))).astype(np.float32)

    def rope_at(x, pos):
        ang = pos[:, None].astype(F32) * INV[None, :]
        c, s = jnp.cos(ang)[:, None], jnp.sin(ang)[:, None]
        x1, x2 = x[..., :DH // 2], x[..., DH // 2:]
        return jnp.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], -1)

    def decode_one(p, kp, vp, table, lens, tok):
        B = tok.shape[0]
        x = p["emb"][tok]
        blk = jnp.take_along_axis(table, (lens // PAGE)[:, None], 1)[:, 0]
        slot = lens % PAGE
        valid = jnp.arange(MAXLEN)[None, :] <= lens[:, None]
        for l, q in enumerate(p["layers"]):
            h = _rms_norm_lastdim(x, q["n1"])
            qq = rope_at((h @ q["wq"]).reshape(B, H, DH), lens)
            kk = rope_at((h @ q["wk"]).reshape(B, H, DH), lens).astype(BF16)
            vv = (h @ q["wv"]).reshape(B, H, DH).astype(BF16)

            def write(i, c):
                kp, vp = c
                at = (jnp.int32(l), blk[i], slot[i], jnp.int32(0), jnp.int32(0))
                kp = lax.dynamic_update_slice(kp, kk[i][None, None, None], at)
                vp = lax.dynamic_update_slice(vp, vv[i][None, None, None], at)
                return kp, vp
            kp, vp = lax.fori_loop(0, B, write, (kp, vp))
            kc = kp[l][table].reshape(B, MAXLEN, H, DH).astype(F32)
            vc = vp[l][table].reshape(B, MAXLEN, H, DH).astype(F32)
            s = jnp.einsum("bhd,bthd->bht", qq, kc) / math.sqrt(DH)
            s = jnp.where(valid[:, None], s, -1e30)
            o = jnp.einsum("bht,bthd->bhd", jax.nn.softmax(s, -1), vc).reshape(B, D)
            x = x + o @ q["wo"]
            h = _rms_norm_lastdim(x, q["n2"])
            x = x + (jax.nn.silu(h @ q["w1"]) * (h @ q["w3"])) @ q["w2"]
        lp = jax.nn.log_softmax(_rms_norm_lastdim(x, p["nf"]) @ p["out"], -1)
        return kp, vp, jnp.argmax(lp, -1).astype(I32), jnp.max(lp, -1)

    def serve(p, kp, vp, table, lens, tok, active):
        B = tok.shape[0]

        def body(i, c):
            kp, vp, lens, tok, outs, lps = c
            kp, vp, nxt, lp = decode_one(p, kp, vp, table, lens, tok)
            nxt = jnp.where(active, nxt, tok)
            outs = lax.dynamic_update_slice(outs, nxt[:, None], (jnp.int32(0), i))
            lps = lax.dynamic_update_slice(lps, jnp.where(active, lp, 0.0)[:, None],
                                           (jnp.int32(0), i))
            return kp, vp, lens + active.astype(I32), nxt, outs, lps
        init = (kp, vp, lens, tok, jnp.zeros((B, NSTEP), I32), jnp.zeros((B, NSTEP)))
        return lax.fori_loop(0, NSTEP, body, init)
    q = {"n1": S(D), "wq": S(D, D), "wk": S(D, D), "wv": S(D, D), "wo": S(D, D), "n2": S(D),
         "w1": S(D, F), "w3": S(D, F), "w2": S(F, D)}
    p = {"emb": S(V, D), "layers": [dict(q) for _ in range(NL)], "nf": S(D), "out": S(D, V)}
    pool = S(NL, NPAGE, PAGE, H, DH, dtype=BF16)
    B = 8
    return serve, (p, pool, pool, S(B, MAXBLK, dtype=I32), S(B, dtype=I32), S(B, dtype=I32),
                   S(B, dtype=jnp.bool_))


# ----------------------------------------------------------------------------- mixed precision


def bfloat16_bert_mlm_nsp_gathered_masked_positions_post_ln_lamb_trust_ratio_pretraining():
    """BERT (Devlin et al.) pre-training step in bfloat16 with float32 master weights: word,
    position and segment embeddings, three post-LN encoder layers (width 128, 4 heads, GELU
    FFN of 512) with the additive -10000 attention mask from the passed-in input mask, matmuls
    in bf16 with float32 softmax, LayerNorm and residuals; as in the reference implementation
    the final hidden states are gathered only at the 20 passed-in masked positions
    (max_predictions_per_seq, with ids and weights), transformed (dense-GELU-LayerNorm) and
    scored against the tied word embeddings plus an output bias; the next-sentence head is a
    tanh pooler on [CLS] and a 2-way classifier; the loss is the weighted masked-LM
    cross-entropy plus the NSP cross-entropy; LAMB (You et al.): Adam directions plus weight
    decay rescaled per tensor by the trust ratio ||w|| / ||u|| (matrices only), with
    warmup and linear decay and global-norm clipping."""
    V, D, H, T, NL, F, NPRED = 4096, 128, 4, 128, 3, 512, 20
    DH = D // H
    bf = lambda a: a.astype(BF16)

    def dense(x, w, b):
        return (bf(x) @ bf(w)).astype(F32) + b

    def attn(q, x, mask):
        b = x.shape[0]
        qkv = dense(x, q["qkv"], q["qkvb"]).reshape(b, T, 3, H, DH)
        s = jnp.einsum("bqhd,bkhd->bhqk", bf(qkv[:, :, 0]), bf(qkv[:, :, 1]),
                       preferred_element_type=F32) / math.sqrt(DH)
        s = s + (1.0 - mask) * -10000.0
        o = jnp.einsum("bhqk,bkhd->bqhd", bf(jax.nn.softmax(s, -1)), bf(qkv[:, :, 2]))
        return dense(o.reshape(b, T, D), q["o"], q["ob"])

    def loss(p, ids, types, imask, mpos, mids, mw, nsp):
        e, c = p["emb"], p["cls"]
        x = _layer_norm_lastdim(e["word"][ids] + e["pos"] + e["type"][types], e["g"], e["b"])
        mask = imask[:, None, None, :].astype(F32)
        for q in p["layers"]:
            x = _layer_norm_lastdim(x + attn(q, x, mask), q["g1"], q["b1"])
            h = jax.nn.gelu(dense(x, q["f1"], q["fb1"]))
            x = _layer_norm_lastdim(x + dense(h, q["f2"], q["fb2"]), q["g2"], q["b2"])
        hm = jnp.take_along_axis(x, mpos[..., None], 1)
        hm = _layer_norm_lastdim(jax.nn.gelu(dense(hm, c["tw"], c["tb"])), c["g"], c["b"])
        logits = jnp.einsum("bpd,vd->bpv", bf(hm), bf(e["word"]),
                            preferred_element_type=F32) + c["ob"]
        mlm = _sparse_label_xent(logits, mids, mw)
        pooled = jnp.tanh(dense(x[:, 0], c["pw"], c["pb"]))
        nspl = _sparse_label_xent(dense(pooled, c["nw"], c["nb"]), nsp)
        return mlm + nspl, (mlm, nspl)

    def lamb(p, m, v, g, t, lr, b1=0.9, b2=0.999, wd=0.01, eps=1e-6):
        m = tmap(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = tmap(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        c1, c2 = 1.0 - b1 ** (t + 1.0), 1.0 - b2 ** (t + 1.0)

        def upd(w, m, v):
            u = (m / c1) / (jnp.sqrt(v / c2) + eps)
            if w.ndim < 2:
                return w - lr * u
            u = u + wd * w
            wn, un = jnp.linalg.norm(w), jnp.linalg.norm(u)
            return w - lr * jnp.where((wn > 0) & (un > 0), wn / un, 1.0) * u
        return tmap(upd, p, m, v), m, v

    def step(p, m, v, t, ids, types, imask, mpos, mids, mw, nsp):
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, ids, types, imask, mpos, mids,
                                                             mw, nsp)
        lr = 2e-3 * jnp.minimum((t + 1.0) / 2000.0, jnp.maximum(0.0, 1.0 - t / 100000.0))
        p, m, v = lamb(p, m, v, _clip_tree_by_global_norm(g, 1.0), t, lr)
        return l, aux, p, m, v
    q = {"qkv": S(D, 3 * D), "qkvb": S(3 * D), "o": S(D, D), "ob": S(D), "g1": S(D), "b1": S(D),
         "f1": S(D, F), "fb1": S(F), "f2": S(F, D), "fb2": S(D), "g2": S(D), "b2": S(D)}
    p = {"emb": {"word": S(V, D), "pos": S(T, D), "type": S(2, D), "g": S(D), "b": S(D)},
         "layers": [dict(q) for _ in range(NL)],
         "cls": {"tw": S(D, D), "tb": S(D), "g": S(D), "b": S(D), "ob": S(V), "pw": S(D, D),
                 "pb": S(D), "nw": S(D, 2), "nb": S(2)}}
    B = 16
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, T, dtype=I32), S(B, T, dtype=jnp.bool_),
                  S(B, NPRED, dtype=I32), S(B, NPRED, dtype=I32), S(B, NPRED), S(B, dtype=I32))


def float16_t5_style_encoder_inf_overflow_clamp_fp32_rmsnorm_static_loss_scale_token_tagger():
    """Token tagging (9 BIO tags, NER-style) with a T5-style encoder run in float16 with
    float32 master weights: float16 embeddings, three pre-norm layers (width 128, 4 heads, no
    attention scaling, gated-GELU FFN of 256) whose RMS norms compute in float32 and cast
    back, attention logits accumulated in float32 plus a learned per-head relative position
    bias over distances clipped to +-32 (gathered by a constant index), and after every
    residual addition the Hugging Face T5 overflow guard: if any value is infinite the hidden
    states are clamped to the float16 maximum minus 1000; masked token cross-entropy in
    float32; a static loss scale of 1024 with the gradients unscaled in float32, the update
    skipped (params and moments kept by jnp.where) when any gradient is not finite; AdamW;
    the tag accuracy and the finiteness flag are returned."""
    V, D, H, T, NL, F, NC, MAXREL, LS = 4096, 128, 4, 128, 3, 256, 9, 32, 1024.0
    DH = D // H
    h16 = lambda a: a.astype(F16)
    FMAX = float(np.finfo(np.float16).max)
    REL = (np.clip(np.arange(T)[None, :] - np.arange(T)[:, None], -MAXREL, MAXREL)
           + MAXREL).astype(np.int32)

    def clamp_inf(x):
        c = jnp.where(jnp.any(jnp.isinf(x)), FMAX - 1000.0, FMAX).astype(F16)
        return jnp.clip(x, -c, c)

    def rms16(x, g):
        xf = x.astype(F32)
        return h16(xf * lax.rsqrt(jnp.mean(jnp.square(xf), -1, keepdims=True) + 1e-6) * g)

    def layer(q, x, bias, mask):
        b = x.shape[0]
        h = rms16(x, q["n1"])
        qq, kk, vv = ((h @ h16(q[n])).reshape(b, T, H, DH) for n in ("wq", "wk", "wv"))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk, preferred_element_type=F32) + bias
        a = h16(jax.nn.softmax(jnp.where(mask, s, -1e9), -1))
        x = clamp_inf(x + jnp.einsum("bhqk,bkhd->bqhd", a, vv).reshape(b, T, D) @ h16(q["wo"]))
        h = rms16(x, q["n2"])
        f = (jax.nn.gelu(h @ h16(q["wi0"])) * (h @ h16(q["wi1"]))) @ h16(q["wo2"])
        return clamp_inf(x + f)

    def loss(p, tok, lab, lmask):
        x = h16(p["emb"][tok])
        bias = jnp.transpose(p["rel"][REL], (2, 0, 1))[None]
        mask = (tok != 0)[:, None, None, :]
        for q in p["layers"]:
            x = layer(q, x, bias, mask)
        logits = (rms16(x, p["nf"]) @ h16(p["cls"])).astype(F32) + p["cb"]
        w = lmask.astype(F32)
        acc = jnp.sum((jnp.argmax(logits, -1) == lab) * w) / jnp.maximum(jnp.sum(w), 1.0)
        return _sparse_label_xent(logits, lab, w), acc

    def step(p, m, v, t, tok, lab, lmask):
        def scaled(p):
            l, acc = loss(p, tok, lab, lmask)
            return l * LS, (l, acc)
        (_, (l, acc)), g = jax.value_and_grad(scaled, has_aux=True)(p)
        g = tmap(lambda a: a.astype(F32) / LS, g)
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(a)) for a in leaves(g)]))
        new = _adamw_moment_update(p, m, v, g, t, lr=5e-4, wd=0.01)
        p, m, v = tmap(lambda a, b: jnp.where(finite, a, b), new, (p, m, v))
        return l, acc, finite, p, m, v
    q = {"n1": S(D), "wq": S(D, D), "wk": S(D, D), "wv": S(D, D), "wo": S(D, D), "n2": S(D),
         "wi0": S(D, F), "wi1": S(D, F), "wo2": S(F, D)}
    p = {"emb": S(V, D), "rel": S(2 * MAXREL + 1, H), "layers": [dict(q) for _ in range(NL)],
         "nf": S(D), "cls": S(D, NC), "cb": S(NC)}
    B = 16
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, T, dtype=I32), S(B, T, dtype=jnp.bool_))


# ----------------------------------------------------------------------------- optimizers


def soap_shampoo_eigenbasis_adam_switch_eigh_init_power_qr_refresh_mlp_mixer():
    """An MLP-Mixer (Tolstikhin et al.; 4x4 patches of 32x32 images, 64 tokens, width 128, two
    layers with token-mixing MLPs of 128 and channel-mixing MLPs of 256, a 10-way head)
    trained with SOAP (Vyas et al., Shampoo with Adam in the preconditioner's eigenbasis): for
    every weight matrix the left and right Kronecker statistics G G^T and G^T G are tracked
    by EMAs, the gradient and the (original-space) momentum are rotated into the eigenbases
    Q_L, Q_R, the second moment is kept in the rotated space, and the Adam direction is
    rotated back; the eigenbases are set by jnp.linalg.eigh at the first step and otherwise
    refreshed every 10 steps by one power-iteration step with jnp.linalg.qr after re-sorting
    the columns (and the second moment's rows or columns) by their estimated eigenvalues
    (argsort), the three cases chosen by lax.switch; biases and norms use AdamW; decoupled
    weight decay, warmup-cosine learning rate; the accuracy is returned."""
    IMG, PS, D, DT, DC, NL, NC, FREQ = 32, 4, 128, 128, 256, 2, 10, 10.0
    G = IMG // PS
    NTOK = G * G
    B1, B2, SB, EPS = 0.95, 0.95, 0.95, 1e-8

    def model(p, img):
        B = img.shape[0]
        x = img.reshape(B, G, PS, G, PS, 3).transpose(0, 1, 3, 2, 4, 5).reshape(B, NTOK, -1)
        x = x @ p["patch"] + p["pb"]
        for q in p["layers"]:
            h = jnp.swapaxes(_layer_norm_lastdim(x, q["g1"], q["b1"]), 1, 2)
            h = jax.nn.gelu(h @ q["t1"] + q["tb1"]) @ q["t2"] + q["tb2"]
            x = x + jnp.swapaxes(h, 1, 2)
            h = _layer_norm_lastdim(x, q["g2"], q["b2"])
            x = x + jax.nn.gelu(h @ q["c1"] + q["cb1"]) @ q["c2"] + q["cb2"]
        f = _layer_norm_lastdim(jnp.mean(x, 1), p["gf"], p["bf"])
        return f @ p["head"] + p["hb"]

    def loss(p, img, y):
        logits = model(p, img)
        return _sparse_label_xent(logits, y), jnp.mean((jnp.argmax(logits, -1) == y).astype(F32))

    def soap(w, g, st, t, lr):
        c1, c2 = 1.0 - B1 ** (t + 1.0), 1.0 - B2 ** (t + 1.0)
        if w.ndim < 2:
            m = B1 * st["m"] + (1 - B1) * g
            v = B2 * st["v"] + (1 - B2) * g * g
            return w - lr * (m / c1) / (jnp.sqrt(v / c2) + EPS), {"m": m, "v": v}
        QL, QR = st["QL"], st["QR"]
        m = B1 * st["m"] + (1 - B1) * g
        gp = QL.T @ g @ QR
        vv = B2 * st["v"] + (1 - B2) * gp * gp
        u = QL @ (((QL.T @ m @ QR) / c1) / (jnp.sqrt(vv / c2) + EPS)) @ QR.T
        w = w - lr * (u + 0.01 * w)
        L = SB * st["L"] + (1 - SB) * g @ g.T
        R = SB * st["R"] + (1 - SB) * g.T @ g

        def init(a):
            L, R, QL, QR, vv = a
            el = jnp.linalg.eigh(L + 1e-30 * jnp.eye(L.shape[0]))[1][:, ::-1]
            er = jnp.linalg.eigh(R + 1e-30 * jnp.eye(R.shape[0]))[1][:, ::-1]
            return el, er, vv

        def refresh(a):
            L, R, QL, QR, vv = a

            def one(M, Q, vv, axis):
                order = jnp.argsort(-jnp.diagonal(Q.T @ M @ Q))
                Q = Q[:, order]
                return jnp.linalg.qr(M @ Q)[0], jnp.take(vv, order, axis=axis)
            QL, vv = one(L, QL, vv, 0)
            QR, vv = one(R, QR, vv, 1)
            return QL, QR, vv
        br = jnp.where(t == 0.0, 0, jnp.where(jnp.mod(t, FREQ) == 0.0, 1, 2)).astype(I32)
        QL, QR, vv = lax.switch(br, [init, refresh, lambda a: (a[2], a[3], a[4])],
                                (L, R, QL, QR, vv))
        return w, {"L": L, "R": R, "QL": QL, "QR": QR, "m": m, "v": vv}

    def step(p, st, t, img, y):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, img, y)
        lr = _warmup_cosine_decay(t, 3e-3, 20000.0, warm=200.0)
        out = tmap(lambda w, g, s: soap(w, g, s, t, lr), p, g, st)
        return (l, acc, tmap(lambda _, o: o[0], p, out), tmap(lambda _, o: o[1], p, out))
    q = {"g1": S(D), "b1": S(D), "t1": S(NTOK, DT), "tb1": S(DT), "t2": S(DT, NTOK),
         "tb2": S(NTOK), "g2": S(D), "b2": S(D), "c1": S(D, DC), "cb1": S(DC), "c2": S(DC, D),
         "cb2": S(D)}
    p = {"patch": S(PS * PS * 3, D), "pb": S(D), "layers": [dict(q) for _ in range(NL)],
         "gf": S(D), "bf": S(D), "head": S(D, NC), "hb": S(NC)}
    st = tmap(lambda s: {"m": s, "v": s} if len(s.shape) < 2 else
              {"L": S(s.shape[0], s.shape[0]), "R": S(s.shape[1], s.shape[1]),
               "QL": S(s.shape[0], s.shape[0]), "QR": S(s.shape[1], s.shape[1]), "m": s, "v": s},
              p)
    B = 64
    return step, (p, st, S(), S(B, IMG, IMG, 3), S(B, dtype=I32))


def ftrl_proximal_l1_l2_hashed_wide_weights_plus_adam_deepfm_ctr():
    """Click-through-rate model in the style of production CTR systems (McMahan et al.'s
    FTRL-Proximal for the wide part, DeepFM for the rest): 26 categorical fields of raw ids
    are hashed in-graph (uint32 multiplicative hash with a per-field salt and an xor-shift)
    into one 32768-bucket space; 13 count features are log1p-transformed; the logit sums a
    per-bucket wide weight for every field, a dense linear term, the factorisation-machine
    second-order interactions of 16-dim field embeddings (the dense features scaled onto
    their own embedding vectors) and a 624-256-128-1 ReLU MLP on the flattened embeddings;
    binary cross-entropy over 512 examples; the wide weights are trained by per-coordinate
    FTRL-Proximal with L1 and L2 regularisation (accumulators z and n, closed-form sparse
    weights), the rest by Adam; the calibration (mean prediction / click rate) and the
    sparsity of the wide weights are returned."""
    NF, ND, NB, DV = 26, 13, 32768, 16
    ALPHA, BETA, L1, L2 = 0.05, 1.0, 1.0, 1.0

    def hashed(raw):
        f = jnp.arange(NF, dtype=U32)[None, :]
        h = raw.astype(U32) * U32(2654435761) + f * U32(0x9E3779B9)
        h = h ^ (h >> U32(15))
        return (h % U32(NB)).astype(I32)

    def logit(wide, p, ids, dense):
        B = ids.shape[0]
        xd = jnp.log1p(jnp.maximum(dense, 0.0))
        lin = jnp.sum(wide[ids], -1) + xd @ p["wd"] + p["b"]
        vv = jnp.concatenate([p["emb"][ids], xd[..., None] * p["dv"]], 1)
        fm = 0.5 * jnp.sum(jnp.square(jnp.sum(vv, 1)) - jnp.sum(jnp.square(vv), 1), -1)
        deep = _dense_stack_forward(p["mlp"], vv.reshape(B, -1))[:, 0]
        return lin + fm + deep

    def loss(wide, p, ids, dense, y):
        z = logit(wide, p, ids, dense)
        return jnp.mean(_bce_with_logits(z, y)), jax.nn.sigmoid(z)

    def step(wide, zacc, nacc, p, m, v, t, raw, dense, y):
        ids = hashed(raw)
        (l, pr), (gw, gp) = jax.value_and_grad(loss, argnums=(0, 1), has_aux=True)(
            wide, p, ids, dense, y)
        gw = gw * ids.shape[0]
        sigma = (jnp.sqrt(nacc + gw * gw) - jnp.sqrt(nacc)) / ALPHA
        zacc = zacc + gw - sigma * wide
        nacc = nacc + gw * gw
        wide = jnp.where(jnp.abs(zacc) <= L1, 0.0,
                         -(zacc - jnp.sign(zacc) * L1) / ((BETA + jnp.sqrt(nacc)) / ALPHA + L2))
        p, m, v = _adamw_moment_update(p, m, v, gp, t, lr=1e-3)
        calib = jnp.mean(pr) / jnp.maximum(jnp.mean(y), 1e-6)
        return l, calib, jnp.mean((wide == 0.0).astype(F32)), wide, zacc, nacc, p, m, v
    p = {"wd": S(ND), "b": S(), "emb": S(NB, DV), "dv": S(ND, DV),
         "mlp": _dense_stack_shapes(((NF + ND) * DV, 256, 128, 1))}
    B = 512
    return step, (S(NB), S(NB), S(NB), p, p, p, S(), S(B, NF, dtype=I32), S(B, ND), S(B))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [batchensemble_rank1_fast_weight_members_tabular_mlp_ensemble_nll_disagreement_classifier],
    "cnn": [centernet_objects_as_points_penalty_reduced_focal_heatmap_size_offset_gather_detector],
    "transformer": [retro_chunked_cross_attention_retrieved_neighbour_encoder_shifted_chunks_decoder_lm,
                    maxvit_multi_axis_block_grid_attention_mbconv_relative_bias_mixup_classifier,
                    xlnet_two_stream_permutation_lm_relative_attention_content_query_partial_prediction],
    "rnn": [deepar_lstm_negative_binomial_likelihood_mean_scaled_teacher_forced_forecast_rollout],
    "linalg": [differentiable_lqr_riccati_reverse_scan_linalg_solve_learned_dynamics_imitation],
    "moe": [sparsely_gated_noisy_topk_moe_normal_cdf_load_estimator_cv_squared_lstm_lm],
    "unet": [sr3_super_resolution_diffusion_bicubic_upsampled_concat_noise_level_film_unet],
    "gnn": [lightgcn_symmetric_degree_normalized_propagation_layer_mean_bpr_edge_dropout_recommender,
            hgt_heterogeneous_graph_transformer_typed_projections_relation_priors_segment_softmax_classifier],
    "quant": [gptq_act_order_cholesky_inverse_hessian_columnwise_error_feedback_int4_group_quantizer],
    "remat": [remat_swinv2_scaled_cosine_log_cpb_shifted_windows_scan_save_anything_except_names,
              remat_perceiver_io_scanned_latent_blocks_checkpoint_dots_prevent_cse_false_byte_mlm],
    "custom_vjp": [custom_vjp_deterministic_embedding_bag_sorted_segment_sum_backward_hashed_ngram_fasttext],
    "control": [muzero_batched_mcts_puct_while_descend_fori_simulations_minmax_q_backup_acting,
                mask_predict_cmlm_length_prediction_fori_refinement_cond_remask_lowest_confidence_decoder],
    "sort": [ssd_anchor_box_decoding_argsort_iou_matrix_greedy_nms_fori_multi_key_sort_detection_inference],
    "fft": [unrolled_mri_cascade_kspace_soft_data_consistency_fft2_undersampling_cnn_reconstruction],
    "scatter_gather": [routing_transformer_balanced_topk_cluster_gather_scatter_add_attention_online_kmeans_lm],
    "dynamic": [paged_attention_block_table_kv_cache_dynamic_update_slice_continuous_batching_decode],
    "mixed": [bfloat16_bert_mlm_nsp_gathered_masked_positions_post_ln_lamb_trust_ratio_pretraining,
              float16_t5_style_encoder_inf_overflow_clamp_fp32_rmsnorm_static_loss_scale_token_tagger],
    "optimizer": [soap_shampoo_eigenbasis_adam_switch_eigh_init_power_qr_refresh_mlp_mixer,
                  ftrl_proximal_l1_l2_hashed_wide_weights_plus_adam_deepfm_ctr],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["centernet_objects_as_points_penalty_reduced_focal_heatmap_size_offset_gather_detector",
           "retro_chunked_cross_attention_retrieved_neighbour_encoder_shifted_chunks_decoder_lm",
           "maxvit_multi_axis_block_grid_attention_mbconv_relative_bias_mixup_classifier",
           "deepar_lstm_negative_binomial_likelihood_mean_scaled_teacher_forced_forecast_rollout",
           "sparsely_gated_noisy_topk_moe_normal_cdf_load_estimator_cv_squared_lstm_lm",
           "sr3_super_resolution_diffusion_bicubic_upsampled_concat_noise_level_film_unet",
           "hgt_heterogeneous_graph_transformer_typed_projections_relation_priors_segment_softmax_classifier",
           "remat_swinv2_scaled_cosine_log_cpb_shifted_windows_scan_save_anything_except_names",
           "custom_vjp_deterministic_embedding_bag_sorted_segment_sum_backward_hashed_ngram_fasttext",
           "unrolled_mri_cascade_kspace_soft_data_consistency_fft2_undersampling_cnn_reconstruction",
           "bfloat16_bert_mlm_nsp_gathered_masked_positions_post_ln_lamb_trust_ratio_pretraining",
           "float16_t5_style_encoder_inf_overflow_clamp_fp32_rmsnorm_static_loss_scale_token_tagger"]
SHARDED_SET = ["batchensemble_rank1_fast_weight_members_tabular_mlp_ensemble_nll_disagreement_classifier",
               "xlnet_two_stream_permutation_lm_relative_attention_content_query_partial_prediction",
               "lightgcn_symmetric_degree_normalized_propagation_layer_mean_bpr_edge_dropout_recommender",
               "remat_perceiver_io_scanned_latent_blocks_checkpoint_dots_prevent_cse_false_byte_mlm",
               "paged_attention_block_table_kv_cache_dynamic_update_slice_continuous_batching_decode",
               "mask_predict_cmlm_length_prediction_fori_refinement_cond_remask_lowest_confidence_decoder",
               "ftrl_proximal_l1_l2_hashed_wide_weights_plus_adam_deepfm_ctr",
               "muzero_batched_mcts_puct_while_descend_fori_simulations_minmax_q_backup_acting"]
