"""Eighteenth fresh set: 25 JAX programs written by a helper on 2026-11-29. It was kept
outside the repository as a held-out set, measured unseen at the start and end of that
day's session, and committed then, when its misses were first read. Same interface as
zoo_programs.py::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh18_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh18_programs python benchmarks/accuracy.py --data DIR

Written for JAX 0.4.30 up to the current release (no API newer than 0.4.30).
"""

from __future__ import annotations

import math

import numpy as np

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


def _gn(x, g, b, groups=8, eps=1e-5):
    """Group norm over NHWC."""
    n, h, w, c = x.shape
    xg = x.reshape(n, h, w, groups, c // groups)
    m = jnp.mean(xg, (1, 2, 4), keepdims=True)
    v = jnp.mean(jnp.square(xg - m), (1, 2, 4), keepdims=True)
    return ((xg - m) * lax.rsqrt(v + eps)).reshape(n, h, w, c) * g + b


def _lstm(q, carry, x):
    h, c = carry
    z = x @ q["wx"] + h @ q["wh"] + q["b"]
    i, f, g, o = jnp.split(z, 4, -1)
    c = jax.nn.sigmoid(f + 1.0) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    return jax.nn.sigmoid(o) * jnp.tanh(c), c


def _lstm_params(din, d):
    return {"wx": S(din, 4 * d), "wh": S(d, 4 * d), "b": S(4 * d)}


def _huber(r, delta=1.0):
    a = jnp.abs(r)
    return jnp.where(a < delta, 0.5 * r * r, delta * (a - 0.5 * delta))


# ----------------------------------------------------------------------------- mlp




def nbeats_interpretable_trend_seasonality():
    """Interpretable N-BEATS forecaster: a trend stack (polynomial basis of degree 3) and a
    seasonality stack (eight Fourier harmonics), two blocks each with their own four-layer
    ReLU MLPs; every block predicts one set of basis coefficients that gives both its backcast
    and its forecast (doubly residual: the backcast is subtracted from the running input and
    the forecasts are summed); inputs scaled by their mean absolute value; the loss is
    sMAPE/100 plus MASE against the seasonal-naive (lag 12) in-sample error; Adam with
    global-norm clipping."""
    L, H, DEG, HARM, M = 48, 16, 3, 8, 12

    def trend(n, scale):
        t = jnp.arange(n, dtype=F32) / scale
        return jnp.stack([t ** i for i in range(DEG + 1)])             # [DEG+1, n]

    def season(n, scale):
        t = jnp.arange(n, dtype=F32) / scale
        k = jnp.arange(HARM, dtype=F32)[:, None]
        return jnp.concatenate([jnp.cos(2 * jnp.pi * k * t), jnp.sin(2 * jnp.pi * k * t)], 0)

    def block(q, x, Tb, Tf):
        h = x
        for i in range(4):
            h = jax.nn.relu(h @ q["w%d" % i] + q["b%d" % i])
        th = h @ q["theta"]
        return th @ Tb, th @ Tf

    def loss(p, x, y):
        scale = jnp.mean(jnp.abs(x), 1, keepdims=True) + 1e-3
        r = x / scale
        f = jnp.zeros(y.shape)
        for stack, (Tb, Tf) in ((p["trend"], (trend(L, L), trend(H, L))),
                                (p["season"], (season(L, L), season(H, L)))):
            for q in stack:
                b, fc = block(q, r, Tb, Tf)
                r = r - b
                f = f + fc
        yhat = f * scale
        err = jnp.abs(y - yhat)
        smape = 200.0 * jnp.mean(err / (jnp.abs(y) + jnp.abs(yhat) + 1e-6))
        naive = jnp.mean(jnp.abs(x[:, M:] - x[:, :-M]), 1, keepdims=True) + 1e-6
        mase = jnp.mean(err / naive)
        return 0.01 * smape + mase, smape

    def step(p, m, v, t, x, y):
        (l, smape), g = jax.value_and_grad(loss, has_aux=True)(p, x, y)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=1e-3)
        return l, smape, p, m, v

    def blk(nb):
        q = {"w0": S(L, 128), "b0": S(128), "theta": S(128, nb)}
        for i in range(1, 4):
            q["w%d" % i], q["b%d" % i] = S(128, 128), S(128)
        return q
    p = {"trend": [blk(DEG + 1), blk(DEG + 1)], "season": [blk(2 * HARM), blk(2 * HARM)]}
    return step, (p, p, p, S(), S(64, L), S(64, H))


def deephit_discrete_time_survival_rank():
    """DeepHit survival model on 20 discrete time bins: an ELU/LayerNorm MLP outputs a softmax
    over the bins plus a 'beyond horizon' bin; the likelihood uses the bin mass for observed
    events and the survival 1 - CIF(t) for censored ones; the ranking loss compares, for
    every acceptable pair (i had the event before j's time), the cumulative incidence of i
    and j at t_i through exp(-(F_i - F_j) / sigma), with the CIF matrix built from a one-hot
    matmul; a concordance estimate is reported; Adam with L2 and inverse-sqrt decay."""
    K, SIG, ALPHA = 20, 0.1, 0.5

    def loss(p, x, tbin, event):
        h = x
        for i in range(3):
            h = jax.nn.elu(_ln(h @ p["w%d" % i] + p["b%d" % i], p["g%d" % i], p["n%d" % i]))
        pmf = jax.nn.softmax(h @ p["out"] + p["ob"], -1)[:, :K]         # drop the tail bin
        cif = jnp.cumsum(pmf, -1)
        oh = jax.nn.one_hot(tbin, K)
        p_t = jnp.sum(pmf * oh, -1)
        F_t = jnp.sum(cif * oh, -1)
        nll = -(event * jnp.log(p_t + 1e-8) + (1.0 - event) * jnp.log(1.0 - F_t + 1e-8))
        Mx = cif @ oh.T                                                # [j, i] = F_j(t_i)
        A = event[None, :] * (tbin[None, :] < tbin[:, None]).astype(F32)
        na = jnp.maximum(jnp.sum(A), 1.0)
        rank = jnp.sum(A * jnp.exp(-(F_t[None, :] - Mx) / SIG)) / na
        cidx = jnp.sum(A * (F_t[None, :] > Mx).astype(F32)) / na
        return jnp.mean(nll) + ALPHA * rank, cidx

    def step(p, m, v, t, x, tbin, event):
        (l, cidx), g = jax.value_and_grad(loss, has_aux=True)(p, x, tbin, event)
        g = tmap(lambda a, w: a + 1e-4 * w, g, p)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3 / jnp.sqrt(1.0 + t / 100.0))
        return l, cidx, p, m, v
    p = {"out": S(64, K + 1), "ob": S(K + 1)}
    for i, (a, b) in enumerate([(24, 64), (64, 64), (64, 64)]):
        p["w%d" % i], p["b%d" % i], p["g%d" % i], p["n%d" % i] = S(a, b), S(b), S(b), S(b)
    return step, (p, p, p, S(), S(64, 24), S(64, dtype=I32), S(64))


# ----------------------------------------------------------------------------- cnn


def resnext_grouped_conv_cutmix_box():
    """ResNeXt on 32x32 images with CutMix: a box (centre and size passed as int32) is cut
    from a permuted copy of the batch (mask from arange comparisons, clipped to the image) and
    pasted in, the mixing ratio is the exact pasted area; two strided bottleneck blocks with
    1x1 reduce, 3x3 grouped convolution of cardinality 8 (feature_group_count), 1x1 expand, a
    projected shortcut and BN everywhere; the loss mixes the two labels' cross-entropies; BN
    running averages returned; Nesterov SGD with cosine decay and weight decay."""
    G = 8

    def gconv(x, w, stride):
        return lax.conv_general_dilated(x, w, (stride, stride), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                        feature_group_count=G)

    def block(q, x, stride):
        h, s1 = _bn(_conv(x, q["c1"]), q["g1"], q["b1"])
        h, s2 = _bn(gconv(jax.nn.relu(h), q["c2"], stride), q["g2"], q["b2"])
        h, s3 = _bn(_conv(jax.nn.relu(h), q["c3"]), q["g3"], q["b3"])
        sc, s4 = _bn(_conv(x, q["proj"], stride), q["gp"], q["bp"])
        return jax.nn.relu(h + sc), (s1, s2, s3, s4)

    def loss(p, img, labels, perm, box):
        n, H, W, _ = img.shape
        y0, y1 = jnp.clip(box[0] - box[2] // 2, 0, H), jnp.clip(box[0] + box[2] // 2, 0, H)
        x0, x1 = jnp.clip(box[1] - box[3] // 2, 0, W), jnp.clip(box[1] + box[3] // 2, 0, W)
        ii, jj = jnp.arange(H)[:, None], jnp.arange(W)[None]
        m = ((ii >= y0) & (ii < y1) & (jj >= x0) & (jj < x1)).astype(F32)[None, :, :, None]
        lam = 1.0 - ((y1 - y0) * (x1 - x0)).astype(F32) / (H * W)
        x = img * (1.0 - m) + img[perm] * m
        h, st0 = _bn(_conv(x, p["stem"]), p["sg"], p["sb"])
        h = jax.nn.relu(h)
        stats = [st0]
        for q in p["blocks"]:
            h, st = block(q, h, 2)
            stats.append(st)
        logits = jnp.mean(h, (1, 2)) @ p["fc"] + p["fcb"]
        l = lam * _xent(logits, labels) + (1.0 - lam) * _xent(logits, labels[perm])
        return l, stats

    def step(p, mom, run, t, img, labels, perm, box):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels, perm, box)
        run = tmap(lambda r, s: 0.9 * r + 0.1 * s, run, lax.stop_gradient(stats))
        lr = 0.05 * 0.5 * (1.0 + jnp.cos(jnp.pi * jnp.minimum(t / 5000.0, 1.0)))
        p, mom = _momentum(p, mom, g, lr, 0.9, 5e-4, nesterov=True)
        return l, p, mom, run

    def blk(cin, mid, cout):
        q = {"c1": S(1, 1, cin, mid), "g1": S(mid), "b1": S(mid),
             "c2": S(3, 3, mid // G, mid), "g2": S(mid), "b2": S(mid),
             "c3": S(1, 1, mid, cout), "g3": S(cout), "b3": S(cout),
             "proj": S(1, 1, cin, cout), "gp": S(cout), "bp": S(cout)}
        st = tuple((S(c), S(c)) for c in (mid, mid, cout, cout))
        return q, st
    b1, s1 = blk(32, 64, 64)
    b2, s2 = blk(64, 128, 128)
    p = {"stem": S(3, 3, 3, 32), "sg": S(32), "sb": S(32), "blocks": [b1, b2],
         "fc": S(128, 10), "fcb": S(10)}
    run = [(S(32), S(32)), s1, s2]
    return step, (p, p, run, S(), S(32, 32, 32, 3), S(32, dtype=I32), S(32, dtype=I32),
                  S(4, dtype=I32))


# ----------------------------------------------------------------------------- transformer


def electra_replaced_token_detection():
    """ELECTRA pre-training step: a small post-LN generator (one layer, width 32) does masked
    language modelling on the input with masked positions replaced by a [MASK] id; its
    detached logits plus passed-in Gumbel noise are argmaxed to sample replacements; a wider
    discriminator (two layers, width 64, input projection from the shared token embedding)
    classifies every token as original or replaced with BCE (weight 50); the generator's MLM
    head is tied to the shared embedding; AdamW with linear warmup and decay, clipping."""
    V, MASK = 128, 127

    def enc_layer(q, x, heads):
        x = _ln(x + _mha(x, x, q, "", heads), q["g1"], q["b1"])
        return _ln(x + jax.nn.gelu(x @ q["f1"] + q["fb1"]) @ q["f2"], q["g2"], q["b2"])

    def loss(p, tok, mpos, gumbel):
        emb = p["emb"]
        g = emb[jnp.where(mpos > 0, MASK, tok)] + p["pos"]
        for q in p["gen"]:
            g = enc_layer(q, g, 2)
        glog = jax.nn.gelu(g @ p["gh"] + p["ghb"]) @ emb.T + p["gbias"]
        nll = -jnp.take_along_axis(jax.nn.log_softmax(glog, -1), tok[..., None], -1)[..., 0]
        mlm = jnp.sum(nll * mpos) / jnp.maximum(jnp.sum(mpos), 1.0)
        sampled = jnp.argmax(lax.stop_gradient(glog) + gumbel, -1)
        corrupt = jnp.where(mpos > 0, sampled, tok)
        is_rep = (corrupt != tok).astype(F32)
        d = (emb[corrupt] + p["pos"]) @ p["dproj"]
        for q in p["disc"]:
            d = enc_layer(q, d, 4)
        dl = (d @ p["dh"])[..., 0] + p["dhb"]
        disc = jnp.mean(_bce(dl, is_rep))
        acc = jnp.mean(((dl > 0) == (is_rep > 0)).astype(F32))
        return mlm + 50.0 * disc, (mlm, disc, acc)

    def step(p, m, v, t, tok, mpos, gumbel):
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, tok, mpos, gumbel)
        lr = 5e-4 * jnp.minimum(t / 1000.0, jnp.maximum(0.0, 1.0 - (t - 1000.0) / 9000.0))
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=lr, wd=0.01)
        return l, aux, p, m, v

    def lay(d, f):
        return _attn_params({"g1": S(d), "b1": S(d), "g2": S(d), "b2": S(d), "f1": S(d, f),
                             "fb1": S(f), "f2": S(f, d)}, "", d)
    E, D, T = 32, 64, 32
    p = {"emb": S(V, E), "pos": S(T, E), "gen": [lay(E, 64)], "gh": S(E, E), "ghb": S(E),
         "gbias": S(V), "dproj": S(E, D), "disc": [lay(D, 128), lay(D, 128)], "dh": S(D, 1),
         "dhb": S()}
    return step, (p, p, p, S(), S(16, T, dtype=I32), S(16, T), S(16, T, V))


def mega_ema_gated_laplace_attention():
    """MEGA language model: each layer runs a multi-dimensional damped EMA (per channel, four
    EMA dimensions with sigmoid alpha/delta, expansion beta and projection eta) realised as a
    causal Toeplitz kernel gathered from the closed-form impulse response and applied by
    einsum, then single-head gated attention whose shared Z gives Q and K by per-dimension
    scale and offset, the Laplace attention function 0.5 (1 + erf((s - mu) / (sigma sqrt 2)))
    under a causal mask, reset and update gates, and a GELU FFN; two layers, untied head;
    Adam with clipping."""
    NE = 4
    MU, SIGMA = math.sqrt(0.5), math.sqrt(1.0 / (4.0 * math.pi))

    def ema(q, x):
        T = x.shape[1]
        alpha, delta = jax.nn.sigmoid(q["alpha"]), jax.nn.sigmoid(q["delta"])   # [D,NE]
        decay = jnp.log(1.0 - alpha * delta)
        t = jnp.arange(T, dtype=F32)
        kern = jnp.sum((q["eta"] * alpha * q["beta"])[None] * jnp.exp(t[:, None, None] * decay[None]),
                       -1)                                            # [T,D]
        lag = jnp.arange(T)[:, None] - jnp.arange(T)[None]
        Kt = jnp.where((lag >= 0)[..., None], kern[jnp.clip(lag, 0, T - 1)], 0.0)
        return jnp.einsum("tsd,bsd->btd", Kt, x) + q["omega"] * x

    def layer(q, x):
        T = x.shape[1]
        h = _ln(x, q["g"], q["b"])
        xe = jax.nn.silu(ema(q, h))
        z = jax.nn.silu(xe @ q["wz"] + q["bz"])
        qq, kk = z * q["gq"] + q["bq"], z * q["gk"] + q["bk"]
        v = jax.nn.silu(h @ q["wv"] + q["bv"])
        s = jnp.einsum("bqz,bkz->bqk", qq, kk) / math.sqrt(z.shape[-1])
        a = 0.5 * (1.0 + lax.erf((s - MU) / (SIGMA * math.sqrt(2.0))))
        a = a * jnp.tril(jnp.ones((T, T)))[None] / T
        r = jax.nn.silu(xe @ q["wr"] + q["br"])
        u = jax.nn.sigmoid(xe @ q["wu"] + q["bu"])
        hh = jax.nn.silu(xe @ q["wh"] + (r * (a @ v)) @ q["uh"] + q["bh"])
        x = u * hh + (1.0 - u) * x
        return x + jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"]) @ q["f2"]

    def loss(p, tok, tgt):
        x = p["emb"][tok]
        for q in p["layers"]:
            x = layer(q, x)
        return _xent(_ln(x, p["gf"], p["bf"]) @ p["out"], tgt)

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=1e-3, b2=0.98)
        return l, p, m, v
    V, D, Z, T = 96, 64, 32, 32
    q = {"g": S(D), "b": S(D), "alpha": S(D, NE), "delta": S(D, NE), "beta": S(D, NE),
         "eta": S(D, NE), "omega": S(D), "wz": S(D, Z), "bz": S(Z), "gq": S(Z), "bq": S(Z),
         "gk": S(Z), "bk": S(Z), "wv": S(D, D), "bv": S(D), "wr": S(D, D), "br": S(D),
         "wu": S(D, D), "bu": S(D), "wh": S(D, D), "uh": S(D, D), "bh": S(D), "g2": S(D),
         "b2": S(D), "f1": S(D, 128), "f2": S(128, D)}
    p = {"emb": S(V, D), "layers": [q, dict(q)], "gf": S(D), "bf": S(D), "out": S(D, V)}
    return step, (p, p, p, S(), S(16, T, dtype=I32), S(16, T, dtype=I32))


# ----------------------------------------------------------------------------- rnn / scan


def mogrifier_lstm_char_scan():
    """Mogrifier LSTM character model: before every LSTM update the input and the previous
    hidden state gate each other for five rounds (x <- 2 sigmoid(Q_i h) x on odd rounds,
    h <- 2 sigmoid(R_i x) h on even ones, each Q_i / R_i factorised to rank 16), all inside a
    lax.scan over 32 steps; truncated BPTT state passed in and returned detached; untied
    softmax head; Adam with clipping."""
    R = 5

    def cell(q, carry, x):
        h, c = carry
        for i in range(R):
            if i % 2 == 0:
                x = 2.0 * jax.nn.sigmoid((h @ q["ql"][i // 2]) @ q["qr"][i // 2]) * x
            else:
                h = 2.0 * jax.nn.sigmoid((x @ q["rl"][i // 2]) @ q["rr"][i // 2]) * h
        h, c = _lstm(q, (h, c), x)
        return (h, c), h

    def loss(p, tok, tgt, h0, c0):
        x = jnp.swapaxes(p["emb"][tok], 0, 1)
        (h, c), hs = lax.scan(lambda cr, xt: cell(p["cell"], cr, xt), (h0, c0), x)
        logits = jnp.swapaxes(hs, 0, 1) @ p["out"] + p["ob"]
        return _xent(logits, tgt), (h, c)

    def step(p, m, v, t, tok, tgt, h0, c0):
        (l, (h, c)), g = jax.value_and_grad(loss, has_aux=True)(p, tok, tgt, h0, c0)
        p, m, v = _adam(p, m, v, _global_clip(g, 0.25), t, lr=2e-3)
        return l, p, m, v, lax.stop_gradient(h), lax.stop_gradient(c)
    V, D, K = 64, 64, 16
    cellp = dict(_lstm_params(D, D), ql=S(3, D, K), qr=S(3, K, D), rl=S(2, D, K), rr=S(2, K, D))
    p = {"emb": S(V, D), "cell": cellp, "out": S(D, V), "ob": S(V)}
    return step, (p, p, p, S(), S(16, 32, dtype=I32), S(16, 32, dtype=I32), S(16, D), S(16, D))


def pointer_network_sort_decoder_scan():
    """Pointer network that learns to sort sets of 12 two-feature items: an LSTM encoder scan,
    then an LSTM decoder scan with teacher forcing (the next input is the embedding of the
    previously pointed item, gathered by the target order), additive attention
    v^T tanh(W1 e + W2 d) over the encoder states as pointer logits, clipped by 10 tanh, with
    the already-chosen positions masked (exclusive cumsum of the target one-hots);
    cross-entropy over positions and exact-order accuracy; Adam."""
    N, D = 12, 32

    def loss(p, xs, order):
        B = xs.shape[0]
        e_in = jnp.tanh(xs @ p["inp"] + p["inb"])                       # [B,N,D]
        sw = lambda a: jnp.swapaxes(a, 0, 1)
        z = (jnp.zeros((B, D)), jnp.zeros((B, D)))

        def enc(carry, x):
            carry = _lstm(p["enc"], carry, x)
            return carry, carry[0]
        carry, E = lax.scan(enc, z, sw(e_in))
        We = sw(E) @ p["w1"]
        prev = jnp.take_along_axis(e_in, order[..., None], 1)
        dec_in = jnp.concatenate([jnp.broadcast_to(p["start"], (B, 1, D)), prev[:, :-1]], 1)
        chosen = jax.nn.one_hot(order, N)
        used = jnp.cumsum(chosen, 1) - chosen

        def dec(carry, inp):
            x, used_t = inp
            carry = _lstm(p["dec"], carry, x)
            u = jnp.einsum("bnd,d->bn", jnp.tanh(We + (carry[0] @ p["w2"])[:, None]), p["v"])
            return carry, jnp.where(used_t > 0, -1e9, 10.0 * jnp.tanh(u))
        _, logits = lax.scan(dec, carry, (sw(dec_in), sw(used)))
        logits = sw(logits)
        exact = jnp.all(jnp.argmax(logits, -1) == order, -1)
        return _xent(logits, order), jnp.mean(exact.astype(F32))

    def step(p, m, v, t, xs, order):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, xs, order)
        p, m, v = _adam(p, m, v, _global_clip(g, 2.0), t, lr=1e-3)
        return l, acc, p, m, v
    p = {"inp": S(2, D), "inb": S(D), "enc": _lstm_params(D, D), "dec": _lstm_params(D, D),
         "w1": S(D, D), "w2": S(D, D), "v": S(D), "start": S(1, 1, D)}
    return step, (p, p, p, S(), S(16, N, 2), S(16, N, dtype=I32))


# ----------------------------------------------------------------------------- moe


def mmoe_multigate_uncertainty_weighted():
    """Multi-gate mixture-of-experts (MMoE) recommender with two tasks: dense features
    (LayerNorm) and four categorical fields looked up in one shared embedding table feed
    eight shared ReLU experts (stacked weights, einsum over the expert axis); each task has
    its own softmax gate over the experts and its own tower: click-through (BCE) and log
    dwell time (Huber, only on clicked rows); the two losses are combined with learned
    homoscedastic-uncertainty weights exp(-s_k) L_k + s_k; Adam."""
    E, NT = 8, 2

    def loss(p, dense, cats, click, dwell):
        B = dense.shape[0]
        x = jnp.concatenate([_ln(dense, p["dg"], p["db"]), p["emb"][cats].reshape(B, -1)], -1)
        h = jax.nn.relu(jnp.einsum("bi,eih->beh", x, p["e1"]) + p["eb1"])
        ex = jax.nn.relu(jnp.einsum("beh,eho->beo", h, p["e2"]) + p["eb2"])
        outs, ents = [], 0.0
        for k in range(NT):
            gate = jax.nn.softmax(x @ p["gates"][k], -1)
            ents = ents - jnp.mean(jnp.sum(gate * jnp.log(gate + 1e-9), -1))
            mix = jnp.einsum("be,beo->bo", gate, ex)
            q = p["towers"][k]
            outs.append((jax.nn.relu(mix @ q["w1"] + q["b1"]) @ q["w2"] + q["b2"])[:, 0])
        l_ctr = jnp.mean(_bce(outs[0], click))
        l_dw = jnp.sum(click * _huber(outs[1] - jnp.log1p(dwell))) / jnp.maximum(jnp.sum(click), 1.0)
        s = p["logvar"]
        total = jnp.exp(-s[0]) * l_ctr + 0.5 * jnp.exp(-s[1]) * l_dw + 0.5 * jnp.sum(s)
        return total, (l_ctr, l_dw, ents)

    def step(p, m, v, t, dense, cats, click, dwell):
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, dense, cats, click, dwell)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, aux, p, m, v
    Dn, Ed, Fi = 32, 16, 4
    In = Dn + Ed * Fi
    tower = {"w1": S(32, 16), "b1": S(16), "w2": S(16, 1), "b2": S(1)}
    p = {"dg": S(Dn), "db": S(Dn), "emb": S(256, Ed), "e1": S(E, In, 64), "eb1": S(E, 64),
         "e2": S(E, 64, 32), "eb2": S(E, 32), "gates": [S(In, E), S(In, E)],
         "towers": [tower, dict(tower)], "logvar": S(NT)}
    return step, (p, p, p, S(), S(64, Dn), S(64, Fi, dtype=I32), S(64), S(64))


# ----------------------------------------------------------------------------- vae


def wae_mmd_imq_conv_autoencoder():
    """Wasserstein auto-encoder (WAE-MMD) on 32x32 grayscale images: a deterministic strided
    conv encoder to a 16-d code and a transposed-conv decoder; the divergence is the unbiased
    MMD between the batch codes and passed-in prior samples with an inverse multiquadric
    kernel C / (C + ||x - y||^2) summed over seven scales (off-diagonal means via masks);
    squared-error reconstruction; Adam with a step decay at 30 epochs' worth of steps."""
    Z, LAM = 16, 10.0

    def enc(p, x):
        h = jax.nn.relu(_conv(x, p["c1"], 2) + p["cb1"])
        h = jax.nn.relu(_conv(h, p["c2"], 2) + p["cb2"])
        h = jax.nn.relu(_conv(h, p["c3"], 2) + p["cb3"])
        return h.reshape(h.shape[0], -1) @ p["ez"] + p["ezb"]

    def dec(p, z):
        up = lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = jax.nn.relu(z @ p["dz"] + p["dzb"]).reshape(z.shape[0], 4, 4, 64)
        h = jax.nn.relu(up(h, p["u1"]) + p["ub1"])
        h = jax.nn.relu(up(h, p["u2"]) + p["ub2"])
        return jax.nn.sigmoid(up(h, p["u3"]) + p["ub3"])

    def imq(a, b):
        d2 = jnp.sum(jnp.square(a[:, None] - b[None]), -1)
        return sum(c / (c + d2) for c in [2.0 * Z * s for s in (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)])

    def loss(p, x, zp):
        z = enc(p, x)
        n = z.shape[0]
        off = 1.0 - jnp.eye(n)
        mmd = (jnp.sum(imq(z, z) * off) + jnp.sum(imq(zp, zp) * off)) / (n * (n - 1)) \
            - 2.0 * jnp.mean(imq(z, zp))
        rec = jnp.mean(jnp.sum(jnp.square(dec(p, z) - x), (1, 2, 3)))
        return rec + LAM * mmd, mmd

    def step(p, m, v, t, x, zp):
        (l, mmd), g = jax.value_and_grad(loss, has_aux=True)(p, x, zp)
        lr = jnp.where(t < 30000.0, 1e-3, 5e-4)
        p, m, v = _adam(p, m, v, g, t, lr=lr, b1=0.5)
        return l, mmd, p, m, v
    p = {"c1": S(4, 4, 1, 32), "cb1": S(32), "c2": S(4, 4, 32, 64), "cb2": S(64),
         "c3": S(4, 4, 64, 64), "cb3": S(64), "ez": S(1024, Z), "ezb": S(Z),
         "dz": S(Z, 1024), "dzb": S(1024), "u1": S(4, 4, 64, 64), "ub1": S(64),
         "u2": S(4, 4, 64, 32), "ub2": S(32), "u3": S(4, 4, 32, 1), "ub3": S(1)}
    return step, (p, p, p, S(), S(32, 32, 32, 1), S(32, Z))


# ----------------------------------------------------------------------------- unet


def unet_deep_supervision_tversky_side_heads():
    """U-Net for 4-class segmentation with deep supervision: GroupNorm/SiLU double-conv blocks,
    average-pool downsampling, nearest-neighbour (jnp.repeat) upsampling followed by a conv,
    skip concatenation; a 1x1 side head at each of the three decoder resolutions is trained
    against the average-pooled one-hot target (soft labels) with cross-entropy plus a Tversky
    loss (alpha 0.3, beta 0.7) on the foreground classes, weighted 0.25 / 0.5 / 1; Adam."""
    C, AL, BE = 4, 0.3, 0.7

    def dbl(q, x):
        h = jax.nn.silu(_gn(_conv(x, q["w1"]), q["g1"], q["b1"]))
        return jax.nn.silu(_gn(_conv(h, q["w2"]), q["g2"], q["b2"]))

    def pool(x, k=2):
        n, h, w, c = x.shape
        return jnp.mean(x.reshape(n, h // k, k, w // k, k, c), (2, 4))

    def up(x, w):
        return _conv(jnp.repeat(jnp.repeat(x, 2, 1), 2, 2), w)

    def seg_loss(logits, tgt):
        xe = -jnp.mean(jnp.sum(tgt * jax.nn.log_softmax(logits, -1), -1))
        pr = jax.nn.softmax(logits, -1)[..., 1:]
        tg = tgt[..., 1:]
        tp = jnp.sum(pr * tg, (0, 1, 2))
        fp = jnp.sum(pr * (1 - tg), (0, 1, 2))
        fn = jnp.sum((1 - pr) * tg, (0, 1, 2))
        tv = 1.0 - jnp.mean((tp + 1.0) / (tp + AL * fp + BE * fn + 1.0))
        return xe + tv

    def loss(p, img, labels):
        h = img
        skips = []
        for q in p["down"]:
            h = dbl(q, h)
            skips.append(h)
            h = pool(h)
        h = dbl(p["mid"], h)
        tgt = jax.nn.one_hot(labels, C)
        total = 0.0
        for q, w, s, hd, wt in zip(p["up"], p["upw"], reversed(skips), p["heads"],
                                   (0.25, 0.5, 1.0)):
            h = dbl(q, jnp.concatenate([up(h, w), s], -1))
            k = tgt.shape[1] // h.shape[1]
            t = pool(tgt, k) if k > 1 else tgt
            total = total + wt * seg_loss(_conv(h, hd["w"]) + hd["b"], t)
        return total

    def step(p, m, v, t, img, labels):
        l, g = jax.value_and_grad(loss)(p, img, labels)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v

    def db(cin, cout):
        return {"w1": S(3, 3, cin, cout), "g1": S(cout), "b1": S(cout),
                "w2": S(3, 3, cout, cout), "g2": S(cout), "b2": S(cout)}
    hd = lambda c: {"w": S(1, 1, c, C), "b": S(C)}
    p = {"down": [db(3, 16), db(16, 32), db(32, 64)], "mid": db(64, 128),
         "upw": [S(3, 3, 128, 64), S(3, 3, 64, 32), S(3, 3, 32, 16)],
         "up": [db(128, 64), db(64, 32), db(32, 16)], "heads": [hd(64), hd(32), hd(16)]}
    return step, (p, p, p, S(), S(8, 32, 32, 3), S(8, 32, 32, dtype=I32))


# ----------------------------------------------------------------------------- gnn


def appnp_personalized_pagerank_edge_drop():
    """APPNP node classifier: a two-layer MLP on (feature-dropout-masked) node features gives
    per-node logits, then ten steps of approximate personalised PageRank propagation
    Z <- (1 - alpha) A_hat Z + alpha H run in a lax.fori_loop, where A_hat is the symmetric
    normalisation (jax.ops.segment_sum degrees) of the graph with self-loops and with each
    edge's weight multiplied by a passed-in DropEdge keep mask; masked training-node
    cross-entropy, L2 on the first layer only; Adam."""
    K, ALPHA = 10, 0.1

    def loss(p, x, src, dst, keep, fmask, labels, train_mask):
        N = x.shape[0]
        h = jax.nn.relu((x * fmask) @ p["w1"] + p["b1"])
        h0 = h @ p["w2"] + p["b2"]
        loops = jnp.arange(N)
        s = jnp.concatenate([src, loops])
        d = jnp.concatenate([dst, loops])
        w = jnp.concatenate([keep, jnp.ones((N,), F32)])
        deg = jax.ops.segment_sum(w, d, N)
        norm = w * lax.rsqrt(deg[s]) * lax.rsqrt(deg[d])

        def prop(_, z):
            return (1 - ALPHA) * jax.ops.segment_sum(z[s] * norm[:, None], d, N) + ALPHA * h0
        z = lax.fori_loop(0, K, prop, h0)
        logp = jax.nn.log_softmax(z, -1)
        nll = -jnp.take_along_axis(logp, labels[:, None], -1)[:, 0]
        l = jnp.sum(nll * train_mask) / jnp.maximum(jnp.sum(train_mask), 1.0)
        return l + 5e-3 * jnp.sum(jnp.square(p["w1"]))

    def step(p, m, v, t, x, src, dst, keep, fmask, labels, train_mask):
        l, g = jax.value_and_grad(loss)(p, x, src, dst, keep, fmask, labels, train_mask)
        p, m, v = _adam(p, m, v, g, t, lr=1e-2)
        return l, p, m, v
    N, E, F, H, C = 128, 512, 32, 64, 7
    p = {"w1": S(F, H), "b1": S(H), "w2": S(H, C), "b2": S(C)}
    return step, (p, p, p, S(), S(N, F), S(E, dtype=I32), S(E, dtype=I32), S(E), S(N, F),
                  S(N, dtype=I32), S(N))


# ----------------------------------------------------------------------------- quantization


def adaround_rectified_sigmoid_reconstruction():
    """AdaRound post-training quantisation of a two-layer block (BRECQ-style block
    reconstruction): frozen float weights, 4-bit symmetric per-output-channel scales from
    their absmax, and trainable rounding variables V whose rectified sigmoid
    h(V) = clip(sigmoid(V) (zeta - gamma) + gamma, 0, 1) is added to floor(W / s) before
    clipping to [-8, 7]; the loss is the MSE between the float and quantised block outputs
    plus lambda * sum(1 - |2h - 1|^beta) with beta annealed from 20 to 2 by the step count;
    the fraction of already-hard rounding decisions is reported; Adam on V only."""
    ZETA, GAMMA, TOTAL = 1.1, -0.1, 10000.0

    def hsig(V):
        return jnp.clip(jax.nn.sigmoid(V) * (ZETA - GAMMA) + GAMMA, 0.0, 1.0)

    def quant(W, V):
        s = jnp.max(jnp.abs(W), 0, keepdims=True) / 7.0 + 1e-8
        return s * jnp.clip(jnp.floor(W / s) + hsig(V), -8.0, 7.0)

    def block(W1, b1, W2, b2, x):
        return jax.nn.relu(x @ W1 + b1) @ W2 + b2

    def loss(V, fp, x, t):
        ref = block(fp["w1"], fp["b1"], fp["w2"], fp["b2"], x)
        out = block(quant(fp["w1"], V["v1"]), fp["b1"], quant(fp["w2"], V["v2"]), fp["b2"], x)
        rec = jnp.mean(jnp.sum(jnp.square(out - ref), -1))
        beta = 2.0 + 18.0 * jnp.maximum(0.0, 1.0 - t / TOTAL)
        reg = sum(jnp.sum(1.0 - jnp.abs(2.0 * hsig(a) - 1.0) ** beta) for a in (V["v1"], V["v2"]))
        warm = (t > 0.2 * TOTAL).astype(F32)
        return rec + warm * 0.01 * reg, rec

    def step(V, m, v, t, fp, x):
        (l, rec), g = jax.value_and_grad(loss, has_aux=True)(V, fp, x, t)
        V, m, v = _adam(V, m, v, g, t, lr=1e-3)
        hard = jnp.mean(jnp.stack([jnp.mean(((hsig(a) == 0) | (hsig(a) == 1)).astype(F32))
                                   for a in (V["v1"], V["v2"])]))
        return l, rec, hard, V, m, v
    V = {"v1": S(96, 128), "v2": S(128, 64)}
    fp = {"w1": S(96, 128), "b1": S(128), "w2": S(128, 64), "b2": S(64)}
    return step, (V, V, V, S(), fp, S(128, 96))


# ----------------------------------------------------------------------------- remat


def remat_deit_distill_token_scan_names_but():
    """DeiT with a distillation token on 20x24 images: [cls; dist; 30 patch tokens of 4x4]
    through four pre-LN blocks stacked and run by lax.scan, the scanned block wrapped in
    jax.checkpoint with
    save_any_names_but_these("attn_probs", "ffn_hidden") and prevent_cse=False, where the
    block tags its qkv projection, attention output and MLP output too (so those are saved
    and the probabilities and hidden FFN activations are recomputed); hard distillation: the
    class head learns the labels, the distillation head the argmax of passed-in teacher
    logits; AdamW with cosine decay and clipping."""
    H = 4

    def block(x, q):
        b, t, d = x.shape
        dh = d // H
        h = _ln(x, q["g1"], q["b1"])
        qkv = checkpoint_name(h @ q["qkv"], "qkv")
        qq, kk, vv = (a.reshape(b, t, H, dh) for a in jnp.split(qkv, 3, -1))
        a = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(dh), -1)
        a = checkpoint_name(a, "attn_probs")
        o = checkpoint_name(jnp.einsum("bhqk,bkhd->bqhd", a, vv).reshape(b, t, d) @ q["o"],
                            "attn_out")
        x = x + o
        f = checkpoint_name(jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"] + q["fb1"]),
                            "ffn_hidden")
        return x + checkpoint_name(f @ q["f2"], "mlp_out"), None
    body = jax.checkpoint(block, prevent_cse=False,
                          policy=jax.checkpoint_policies.save_any_names_but_these(
                              "attn_probs", "ffn_hidden"))

    def loss(p, img, labels, teacher):
        x = _conv(img, p["patch"], 4, "VALID") + p["pb"]
        n, D = x.shape[0], x.shape[-1]
        x = x.reshape(n, -1, D) + p["pos"]
        x = jnp.concatenate([jnp.broadcast_to(p["cls"], (n, 1, D)),
                             jnp.broadcast_to(p["dist"], (n, 1, D)), x], 1)
        x, _ = lax.scan(body, x, p["blocks"])
        x = _ln(x, p["gf"], p["bf"])
        l_cls = _xent(x[:, 0] @ p["head"] + p["hb"], labels)
        l_dist = _xent(x[:, 1] @ p["dhead"] + p["dhb"], jnp.argmax(teacher, -1))
        return 0.5 * l_cls + 0.5 * l_dist

    def step(p, m, v, t, img, labels, teacher):
        l, g = jax.value_and_grad(loss)(p, img, labels, teacher)
        lr = 5e-4 * 0.5 * (1.0 + jnp.cos(jnp.pi * jnp.minimum(t / 3000.0, 1.0)))
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=lr, wd=0.05)
        return l, p, m, v
    L, D = 4, 64
    blocks = {"g1": S(L, D), "b1": S(L, D), "qkv": S(L, D, 3 * D), "o": S(L, D, D),
              "g2": S(L, D), "b2": S(L, D), "f1": S(L, D, 128), "fb1": S(L, 128),
              "f2": S(L, 128, D)}
    p = {"patch": S(4, 4, 3, D), "pb": S(D), "pos": S(30, D), "cls": S(1, 1, D),
         "dist": S(1, 1, D), "blocks": blocks, "gf": S(D), "bf": S(D), "head": S(D, 10),
         "hb": S(10), "dhead": S(D, 10), "dhb": S(10)}
    return step, (p, p, p, S(), S(16, 20, 24, 3), S(16, dtype=I32), S(16, 10))


def _pixelcnn_mask(k, c_in, c_out, center):
    m = [[1.0 if (i < k // 2 or (i == k // 2 and (j < k // 2 or (center and j == k // 2))))
          else 0.0 for j in range(k)] for i in range(k)]
    return np.broadcast_to(np.array(m, np.float32)[:, :, None, None], (k, k, c_in, c_out))


def remat_gated_pixelcnn_nested_masked_conv():
    """Class-conditional gated PixelCNN on 16x16 images quantised to 32 levels: a 5x5 type-A
    masked input conv, then four gated residual layers (3x3 type-B masked conv to 2C
    channels, tanh * sigmoid gate with a class-embedding bias, 1x1 output conv) stacked and
    run by lax.scan; each layer is jax.checkpoint-ed with save_only_these_names("gate_out"),
    and inside it the masked conv + gate is checkpointed again with nothing_saveable (nested
    remat); 32-way per-pixel softmax, loss in bits per dimension; Adam."""
    LV, C = 32, 32
    mA = _pixelcnn_mask(5, 1, C, False)
    mB = _pixelcnn_mask(3, C, 2 * C, True)

    def gate(x, q, cb):
        h = _conv(x, q["w"] * mB) + q["b"] + cb[:, None, None, :]
        a, g = jnp.split(h, 2, -1)
        return checkpoint_name(jnp.tanh(a) * jax.nn.sigmoid(g), "gate_out")
    gate_r = jax.checkpoint(gate, policy=jax.checkpoint_policies.nothing_saveable)

    def layer(carry, q):
        x, cemb = carry
        y = gate_r(x, q, cemb @ q["cproj"])
        return (x + _conv(y, q["o"]) + q["ob"], cemb), None
    layer_r = jax.checkpoint(layer, policy=jax.checkpoint_policies.save_only_these_names("gate_out"))

    def loss(p, pix, labels):
        x = (pix.astype(F32) / (LV - 1) * 2.0 - 1.0)[..., None]
        h = _conv(x, p["inw"] * mA) + p["inb"]
        (h, _), _ = lax.scan(layer_r, (h, p["cls"][labels]), p["layers"])
        h = jax.nn.relu(_conv(jax.nn.relu(h), p["o1"]) + p["o1b"])
        logits = _conv(h, p["o2"]) + p["o2b"]
        return _xent(logits, pix) / math.log(2.0)

    def step(p, m, v, t, pix, labels):
        l, g = jax.value_and_grad(loss)(p, pix, labels)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3, b2=0.995)
        return l, p, m, v
    L = 4
    layers = {"w": S(L, 3, 3, C, 2 * C), "b": S(L, 2 * C), "cproj": S(L, 16, 2 * C),
              "o": S(L, 1, 1, C, C), "ob": S(L, C)}
    p = {"inw": S(5, 5, 1, C), "inb": S(C), "cls": S(10, 16), "layers": layers,
         "o1": S(1, 1, C, 64), "o1b": S(64), "o2": S(1, 1, 64, LV), "o2b": S(LV)}
    return step, (p, p, p, S(), S(16, 16, 16, dtype=I32), S(16, dtype=I32))


# ----------------------------------------------------------------------------- custom_vjp


_ODE_STEPS, _ODE_T = 6, 1.0


def _ode_f(th, z, t):
    return jnp.tanh(z @ th["w1"] + t * th["wt"] + th["b1"]) @ th["w2"] + th["b2"]


def _rk4(f, y, t, dt):
    k1 = f(y, t)
    k2 = f(tmap(lambda a, k: a + 0.5 * dt * k, y, k1), t + 0.5 * dt)
    k3 = f(tmap(lambda a, k: a + 0.5 * dt * k, y, k2), t + 0.5 * dt)
    k4 = f(tmap(lambda a, k: a + dt * k, y, k3), t + dt)
    return tmap(lambda a, b, c, d, e: a + dt / 6.0 * (b + 2 * c + 2 * d + e), y, k1, k2, k3, k4)


def _ode_solve(th, z0):
    dt = _ODE_T / _ODE_STEPS
    return lax.fori_loop(0, _ODE_STEPS,
                         lambda i, z: _rk4(lambda y, t: _ode_f(th, y, t), z, i * dt, dt), z0)


@jax.custom_vjp
def _odeint_adjoint(th, z0):
    return _ode_solve(th, z0)


def _odeint_adjoint_fwd(th, z0):
    zT = _ode_solve(th, z0)
    return zT, (th, zT)


def _odeint_adjoint_bwd(res, g):
    th, zT = res
    dt = _ODE_T / _ODE_STEPS

    def aug(state, t):
        z, a, _ = state
        f, vjp = jax.vjp(lambda zz, tt: _ode_f(tt, zz, t), z, th)
        az, ath = vjp(a)
        return (f, -az, tmap(jnp.negative, ath))

    def body(i, state):
        return _rk4(aug, state, _ODE_T - i * dt, -dt)
    state = (zT, g, tmap(jnp.zeros_like, th))
    _, a0, ath = lax.fori_loop(0, _ODE_STEPS, body, state)
    return ath, a0


_odeint_adjoint.defvjp(_odeint_adjoint_fwd, _odeint_adjoint_bwd)


def neural_ode_adjoint_custom_vjp_rk4():
    """Neural ODE classifier trained with the adjoint method: a linear encoder to a 32-d state,
    an ODE block dz/dt = f(z, t) (tanh MLP with a time input) integrated by six RK4 steps in a
    lax.fori_loop, wrapped in jax.custom_vjp whose backward integrates the augmented adjoint
    system (z, a, a_theta) backwards in time with the same RK4 stepper, using jax.vjp of the
    dynamics for a df/dz and a df/dtheta; linear decoder, cross-entropy; momentum SGD."""
    def loss(p, x, labels):
        z0 = jnp.tanh(x @ p["enc"] + p["eb"])
        zT = _odeint_adjoint(p["ode"], z0)
        return _xent(zT @ p["dec"] + p["db"], labels)

    def step(p, mom, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        p, mom = _momentum(p, mom, g, 0.05, 0.9, 1e-4)
        return l, p, mom
    Z, H = 32, 64
    p = {"enc": S(8, Z), "eb": S(Z), "ode": {"w1": S(Z, H), "wt": S(H), "b1": S(H),
                                             "w2": S(H, Z), "b2": S(Z)},
         "dec": S(Z, 4), "db": S(4)}
    return step, (p, p, S(64, 8), S(64, dtype=I32))


# ----------------------------------------------------------------------------- control


def sphere_tracing_sdf_while_implicit_hit():
    """IDR-style neural implicit surface fitting: an SDF MLP (softplus, geometric feature
    output) is sphere-traced along 128 rays in a lax.while_loop (stops when every ray has
    converged, escaped, or after 48 steps; also tracks the point of minimum SDF); the hit
    depth is detached and re-attached by one implicit-differentiation step
    t - (sdf(x) - sg(sdf(x))) / sg(n . d); a rendering MLP reads the hit point, the normal
    (jax.grad of the SDF w.r.t. the point, differentiated again) and the view direction; L1
    colour loss on hit rays inside the object mask, BCE mask loss on -50 * min-SDF, and an
    eikonal loss on passed-in points; Adam."""
    MAXIT, EPS, FAR = 48, 1e-3, 4.0

    def sdf_net(q, x):
        h = x
        for i in range(3):
            h = jax.nn.softplus(100.0 * (h @ q["w%d" % i] + q["b%d" % i])) / 100.0
        o = h @ q["wo"] + q["bo"]
        return o[..., 0], o[..., 1:]

    def sdf(q, x):
        return sdf_net(q, x)[0]

    def trace(q, o, d):
        R = o.shape[0]

        def cond(st):
            i, t, done, tmin, smin = st
            return (i < MAXIT) & ~jnp.all(done)

        def body(st):
            i, t, done, tmin, smin = st
            s = sdf(q, o + t[:, None] * d)
            better = s < smin
            tmin, smin = jnp.where(better, t, tmin), jnp.where(better, s, smin)
            t = jnp.where(done, t, t + s)
            done = done | (jnp.abs(s) < EPS) | (t > FAR)
            return i + 1, t, done, tmin, smin
        z = jnp.zeros((R,), F32)
        st = (0, z, jnp.zeros((R,), bool), z, jnp.full((R,), 1e9, F32))
        _, t, done, tmin, _ = lax.while_loop(cond, body, st)
        return t, (t <= FAR), tmin

    def loss(p, o, d, rgb, mask, pts):
        q = p["sdf"]
        t, hit, tmin = trace(lax.stop_gradient(q), o, d)
        t, tmin = lax.stop_gradient(t), lax.stop_gradient(tmin)
        x0 = o + t[:, None] * d
        s0 = sdf(q, x0)
        n0 = jax.vmap(jax.grad(lambda x: sdf(q, x)))(x0)
        t_diff = t - (s0 - lax.stop_gradient(s0)) / lax.stop_gradient(
            jnp.sum(n0 * d, -1) - 1e-3)
        x = o + t_diff[:, None] * d
        _, feat = sdf_net(q, x)
        nrm = jax.vmap(jax.grad(lambda y: sdf(q, y)))(x)
        r = p["rend"]
        h = jax.nn.relu(jnp.concatenate([x, nrm, d, feat], -1) @ r["w1"] + r["b1"])
        col = jax.nn.sigmoid(jax.nn.relu(h @ r["w2"] + r["b2"]) @ r["w3"] + r["b3"])
        sel = hit.astype(F32) * mask
        l_rgb = jnp.sum(sel[:, None] * jnp.abs(col - rgb)) / jnp.maximum(jnp.sum(sel), 1.0)
        smin = sdf(q, o + tmin[:, None] * d)
        l_mask = jnp.mean((1.0 - sel) * _bce(-50.0 * smin, mask))
        ge = jax.vmap(jax.grad(lambda y: sdf(q, y)))(pts)
        l_eik = jnp.mean(jnp.square(jnp.linalg.norm(ge, axis=-1) - 1.0))
        return l_rgb + 100.0 * l_mask / 50.0 + 0.1 * l_eik

    def step(p, m, v, t, o, d, rgb, mask, pts):
        l, g = jax.value_and_grad(loss)(p, o, d, rgb, mask, pts)
        p, m, v = _adam(p, m, v, g, t, lr=5e-4)
        return l, p, m, v
    Hd, Fd = 64, 16
    sdfp = {"w0": S(3, Hd), "b0": S(Hd), "w1": S(Hd, Hd), "b1": S(Hd), "w2": S(Hd, Hd),
            "b2": S(Hd), "wo": S(Hd, 1 + Fd), "bo": S(1 + Fd)}
    rend = {"w1": S(9 + Fd, Hd), "b1": S(Hd), "w2": S(Hd, Hd), "b2": S(Hd), "w3": S(Hd, 3),
            "b3": S(3)}
    p = {"sdf": sdfp, "rend": rend}
    R = 128
    return step, (p, p, p, S(), S(R, 3), S(R, 3), S(R, 3), S(R), S(R, 3))


def randaugment_vmapped_switch_cond_skip():
    """RandAugment-style training of a small CNN: each image gets two operations chosen by
    passed-in ids and applied with lax.switch under jax.vmap (identity, flip, brightness,
    contrast, invert, rot90, solarize, roll) at a per-image magnitude; label-smoothed
    cross-entropy; the momentum update is applied through lax.cond only when the global
    gradient norm is finite and below 1e3, otherwise parameters and momentum pass through
    unchanged and a skip counter increments."""
    def ops():
        return [lambda im, m: im,
                lambda im, m: im[:, ::-1],
                lambda im, m: jnp.clip(im * (1.0 + m), 0.0, 1.0),
                lambda im, m: jnp.clip((im - jnp.mean(im)) * (1.0 + m) + jnp.mean(im), 0.0, 1.0),
                lambda im, m: 1.0 - im,
                lambda im, m: jnp.rot90(im, 1, (0, 1)),
                lambda im, m: jnp.where(im > 1.0 - 0.5 * m, 1.0 - im, im),
                lambda im, m: jnp.roll(im, 4, 1)]

    def augment(im, o1, o2, mag):
        fs = ops()
        return lax.switch(o2, fs, lax.switch(o1, fs, im, mag), mag)

    def loss(p, img, labels):
        h = img
        for q in p["convs"]:
            h = _maxpool(jax.nn.relu(_conv(h, q["w"]) + q["b"]))
        logits = jnp.mean(h, (1, 2)) @ p["fc"] + p["fcb"]
        V = logits.shape[-1]
        tgt = jax.nn.one_hot(labels, V) * 0.9 + 0.1 / V
        return -jnp.mean(jnp.sum(tgt * jax.nn.log_softmax(logits, -1), -1))

    def step(p, mom, skips, img, labels, op1, op2, mags):
        x = jax.vmap(augment)(img, op1, op2, mags)
        l, g = jax.value_and_grad(loss)(p, x, labels)
        gn = jnp.sqrt(sum(jnp.sum(jnp.square(a)) for a in jax.tree_util.tree_leaves(g)))
        ok = jnp.isfinite(gn) & (gn < 1e3)
        p, mom, skips = lax.cond(ok, lambda a: (*_momentum(a[0], a[1], g, 0.05, 0.9, 5e-4), a[2]),
                                 lambda a: (a[0], a[1], a[2] + 1), (p, mom, skips))
        return l, gn, p, mom, skips
    cv = lambda i, o: {"w": S(3, 3, i, o), "b": S(o)}
    p = {"convs": [cv(3, 32), cv(32, 64), cv(64, 64)], "fc": S(64, 10), "fcb": S(10)}
    return step, (p, p, S(dtype=I32), S(32, 32, 32, 3), S(32, dtype=I32), S(32, dtype=I32),
                  S(32, dtype=I32), S(32))


# ----------------------------------------------------------------------------- sort / top_k


def sliced_wasserstein_projection_sort_ae():
    """Sliced-Wasserstein auto-encoder on 8x8 images: an MLP encoder to an 8-d code and a
    Bernoulli MLP decoder; the latent regulariser projects the batch codes and an equal batch
    of passed-in prior samples onto 50 passed-in random directions (row-normalised), sorts
    each projection along the batch (jnp.sort) and takes the mean squared difference of the
    sorted values (the 1-D optimal transport); also a median-matching term from the sorted
    projections; Adam."""
    Z, LAM = 8, 10.0

    def loss(p, x, prior, dirs):
        h = jax.nn.relu(x @ p["e1"] + p["eb1"])
        h = jax.nn.relu(h @ p["e2"] + p["eb2"])
        z = h @ p["ez"] + p["ezb"]
        hd = jax.nn.relu(z @ p["d1"] + p["db1"])
        hd = jax.nn.relu(hd @ p["d2"] + p["db2"])
        rec = jnp.mean(jnp.sum(_bce(hd @ p["d3"] + p["db3"], x), -1))
        th = dirs / jnp.linalg.norm(dirs, axis=-1, keepdims=True)
        pz, pp = jnp.sort(z @ th.T, 0), jnp.sort(prior @ th.T, 0)
        sw = jnp.mean(jnp.square(pz - pp))
        mid = z.shape[0] // 2
        med = jnp.mean(jnp.abs(pz[mid] - pp[mid]))
        return rec + LAM * sw + med, sw

    def step(p, m, v, t, x, prior, dirs):
        (l, sw), g = jax.value_and_grad(loss, has_aux=True)(p, x, prior, dirs)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, sw, p, m, v
    p = {"e1": S(64, 128), "eb1": S(128), "e2": S(128, 64), "eb2": S(64), "ez": S(64, Z),
         "ezb": S(Z), "d1": S(Z, 64), "db1": S(64), "d2": S(64, 128), "db2": S(128),
         "d3": S(128, 64), "db3": S(64)}
    return step, (p, p, p, S(), S(64, 64), S(64, Z), S(50, Z))


def graph_unet_gpool_topk_unpool():
    """Graph U-Net for node classification on batches of dense 32-node graphs: GCN layers with
    D^-1/2 (A + I) D^-1/2 normalisation; gPool keeps the top-k nodes (lax.top_k of the
    projection score y = X p / ||p||, 32 -> 16 -> 8), gates them by sigmoid(y), and uses the
    two-hop augmented adjacency A^2 restricted to the kept nodes (double gather); gUnpool
    scatters the features back to their positions (.at[idx].set, vmapped) and adds the skip;
    masked per-node cross-entropy; Adam."""
    KS = (16, 8)

    def gcn(A, X, W, b):
        n = A.shape[-1]
        Ah = A + jnp.eye(n)
        dinv = lax.rsqrt(jnp.sum(Ah, -1))
        return jax.nn.relu(jnp.einsum("ij,jf->if", dinv[:, None] * Ah * dinv[None], X @ W) + b)

    def pool(A, X, pv, k):
        y = X @ pv / (jnp.linalg.norm(pv) + 1e-6)
        vals, idx = lax.top_k(y, k)
        Xk = X[idx] * jax.nn.sigmoid(vals)[:, None]
        A2 = jnp.minimum(A @ A + A, 1.0)
        return A2[idx][:, idx], Xk, idx

    def net(p, A, X):
        X = gcn(A, X, p["win"], p["bin"])
        stack = []
        for q, k in zip(p["down"], KS):
            stack.append((A, X))
            A, X, idx = pool(A, X, q["p"], k)
            X = gcn(A, X, q["w"], q["b"])
            stack[-1] = stack[-1] + (idx,)
        for q, (A0, X0, idx) in zip(p["up"], reversed(stack)):
            Xu = jnp.zeros((A0.shape[0], X.shape[-1])).at[idx].set(X)
            X = gcn(A0, Xu + X0, q["w"], q["b"])
        return X @ p["out"] + p["ob"]

    def loss(p, A, X, labels, mask):
        logits = jax.vmap(net, in_axes=(None, 0, 0))(p, A, X)
        nll = -jnp.take_along_axis(jax.nn.log_softmax(logits, -1), labels[..., None], -1)[..., 0]
        return jnp.sum(nll * mask) / jnp.maximum(jnp.sum(mask), 1.0)

    def step(p, m, v, t, A, X, labels, mask):
        l, g = jax.value_and_grad(loss)(p, A, X, labels, mask)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3, wd=1e-4)
        return l, p, m, v
    Hd = 48
    lay = {"w": S(Hd, Hd), "b": S(Hd)}
    p = {"win": S(12, Hd), "bin": S(Hd), "down": [dict(lay, p=S(Hd)), dict(lay, p=S(Hd))],
         "up": [dict(lay), dict(lay)], "out": S(Hd, 5), "ob": S(5)}
    return step, (p, p, p, S(), S(8, 32, 32), S(8, 32, 12), S(8, 32, dtype=I32), S(8, 32))


# ----------------------------------------------------------------------------- fft


def phase_correlation_soft_argmax_registration():
    """Learned phase-correlation image registration: a shared conv feature extractor (two 3x3
    convs, 16 channels) runs on both images of each pair; the per-channel cross-power spectrum
    from jnp.fft.fft2, summed over channels and normalised to unit magnitude, is inverted with
    ifft2 to a correlation surface; a soft-argmax with a learned temperature over wrapped
    (signed) offsets predicts the translation; Huber loss to the true shift plus a
    peak-sharpness term; Adam."""
    def feats(p, x):
        h = jax.nn.relu(_conv(x, p["c1"]) + p["b1"])
        return _conv(h, p["c2"]) + p["b2"]

    def loss(p, a, b, shift):
        fa, fb = feats(p, a), feats(p, b)
        n, H, W, _ = fa.shape
        Fa, Fb = jnp.fft.fft2(fa, axes=(1, 2)), jnp.fft.fft2(fb, axes=(1, 2))
        R = jnp.sum(Fb * jnp.conj(Fa), -1)
        R = R / (jnp.abs(R) + 1e-6)
        r = jnp.real(jnp.fft.ifft2(R, axes=(1, 2)))
        pr = jax.nn.softmax(r.reshape(n, -1) * jnp.exp(p["logtemp"]), -1).reshape(n, H, W)
        oy = jnp.where(jnp.arange(H) < H // 2, jnp.arange(H), jnp.arange(H) - H).astype(F32)
        ox = jnp.where(jnp.arange(W) < W // 2, jnp.arange(W), jnp.arange(W) - W).astype(F32)
        pred = jnp.stack([jnp.sum(pr * oy[None, :, None], (1, 2)),
                          jnp.sum(pr * ox[None, None, :], (1, 2))], -1)
        sharp = -jnp.mean(jnp.max(r.reshape(n, -1), -1))
        return jnp.mean(_huber(pred - shift)) + 0.1 * sharp, pred

    def step(p, m, v, t, a, b, shift):
        (l, pred), g = jax.value_and_grad(loss, has_aux=True)(p, a, b, shift)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v
    p = {"c1": S(3, 3, 1, 16), "b1": S(16), "c2": S(3, 3, 16, 16), "b2": S(16), "logtemp": S()}
    return step, (p, p, p, S(), S(16, 32, 32, 1), S(16, 32, 32, 1), S(16, 2))


# ----------------------------------------------------------------------------- linalg


def kronecker_grid_gp_eigh_marginal():
    """Deep-kernel Gaussian process on a 16 x 24 grid with a Kronecker-structured covariance
    K = K1 (x) K2: each axis' coordinates go through a small tanh MLP and an RBF kernel with
    learned scale and lengthscale; both factors are eigendecomposed with jnp.linalg.eigh, and
    the exact marginal likelihood of four fields is computed in the eigenbasis
    (Q1^T Y Q2 divided elementwise by lambda1 lambda2^T + noise, log-determinant as the sum
    of logs); Adam on the kernel hyperparameters and the feature MLPs."""
    def feat(q, x):
        h = jnp.tanh(x[:, None] @ q["w1"] + q["b1"])
        return h @ q["w2"]

    def kern(q, x):
        f = feat(q, x) / jnp.exp(q["loglen"])
        d2 = jnp.sum(jnp.square(f[:, None] - f[None]), -1)
        return jnp.exp(q["logs"]) * jnp.exp(-0.5 * d2) + 1e-5 * jnp.eye(x.shape[0])

    def loss(p, x1, x2, Y):
        l1, Q1 = jnp.linalg.eigh(kern(p["k1"], x1))
        l2, Q2 = jnp.linalg.eigh(kern(p["k2"], x2))
        lam = jnp.maximum(l1, 0.0)[:, None] * jnp.maximum(l2, 0.0)[None] + jnp.exp(p["lognoise"])
        Yt = jnp.einsum("ia,nij,jb->nab", Q1, Y, Q2)
        quad = jnp.sum(jnp.square(Yt) / lam, (1, 2))
        N = Y.shape[1] * Y.shape[2]
        nll = 0.5 * quad + 0.5 * jnp.sum(jnp.log(lam)) + 0.5 * N * math.log(2 * math.pi)
        return jnp.mean(nll) / N

    def step(p, m, v, t, x1, x2, Y):
        l, g = jax.value_and_grad(loss)(p, x1, x2, Y)
        p, m, v = _adam(p, m, v, g, t, lr=1e-2)
        return l, p, m, v
    kq = {"w1": S(1, 32), "b1": S(32), "w2": S(32, 4), "loglen": S(), "logs": S()}
    p = {"k1": kq, "k2": dict(kq), "lognoise": S()}
    return step, (p, p, p, S(), S(16), S(24), S(4, 16, 24))


# ----------------------------------------------------------------------------- scatter/gather


def skipgram_negative_sampling_sparse_rows():
    """word2vec skip-gram with negative sampling and sparse row updates: the centre, context
    and five negative rows are gathered from the input and output embedding tables, the
    gradient is taken only with respect to those gathered rows, weighted by a frequency
    subsampling factor gathered from a table, and written back with scatter-adds
    (.at[].add), using per-row Adagrad accumulators that are themselves scatter-updated and
    gathered back; linearly decayed learning rate."""
    def loss(u, vc, vn, w):
        pos = jax.nn.log_sigmoid(jnp.sum(u * vc, -1))
        neg = jnp.sum(jax.nn.log_sigmoid(-jnp.einsum("bd,bkd->bk", u, vn)), -1)
        return -jnp.sum(w * (pos + neg)) / jnp.maximum(jnp.sum(w), 1.0)

    def step(W_in, W_out, acc_in, acc_out, t, center, context, negs, freq):
        D = W_in.shape[1]
        u, vc, vn = W_in[center], W_out[context], W_out[negs]
        w = jnp.minimum(1.0, jnp.sqrt(1e-3 / (freq[center] + 1e-9)))
        l, (gu, gvc, gvn) = jax.value_and_grad(loss, argnums=(0, 1, 2))(u, vc, vn, w)
        gvn = gvn.reshape(-1, D)
        nidx = negs.reshape(-1)
        acc_in = acc_in.at[center].add(jnp.mean(gu * gu, -1))
        acc_out = acc_out.at[context].add(jnp.mean(gvc * gvc, -1)).at[nidx].add(
            jnp.mean(gvn * gvn, -1))
        lr = 0.5 * jnp.maximum(1e-4, 1.0 - t / 1e5)
        W_in = W_in.at[center].add(-lr * gu * lax.rsqrt(acc_in[center] + 1e-8)[:, None])
        W_out = W_out.at[context].add(-lr * gvc * lax.rsqrt(acc_out[context] + 1e-8)[:, None])
        W_out = W_out.at[nidx].add(-lr * gvn * lax.rsqrt(acc_out[nidx] + 1e-8)[:, None])
        return l, W_in, W_out, acc_in, acc_out
    V, D, B, K = 2000, 64, 256, 5
    return step, (S(V, D), S(V, D), S(V), S(V), S(), S(B, dtype=I32), S(B, dtype=I32),
                  S(B, K, dtype=I32), S(V))


# ----------------------------------------------------------------------------- dynamic slices


def recurrent_attention_glimpse_reinforce():
    """Recurrent Attention Model (RAM): over six glimpses, a retina extracts an 8x8 and a
    downscaled 16x16 patch around the current location from the zero-padded image with
    lax.dynamic_slice (traced, detached integer offsets, vmapped over the batch) inside a
    lax.scan; a glimpse network fuses patch and location, a GRU core updates the state, and a
    Gaussian location policy (fixed std, passed-in noise) proposes the next location; the
    classifier is trained by cross-entropy, the location policy by REINFORCE with a learned
    baseline on the 0/1 reward; Adam."""
    STEPS, G, PAD, SIG = 6, 8, 8, 0.15

    def retina(padded, loc):
        H = padded.shape[0] - 2 * PAD
        c = jnp.round((loc + 1.0) * 0.5 * (H - 1)).astype(I32) + PAD
        g1 = lax.dynamic_slice(padded, (c[0] - G // 2, c[1] - G // 2, 0), (G, G, 1))
        g2 = lax.dynamic_slice(padded, (c[0] - G, c[1] - G, 0), (2 * G, 2 * G, 1))
        g2 = jnp.mean(g2.reshape(G, 2, G, 2, 1), (1, 3))
        return jnp.concatenate([g1.reshape(-1), g2.reshape(-1)])

    def loss(p, img, labels, noise):
        B = img.shape[0]
        padded = jnp.pad(img, ((0, 0), (PAD, PAD), (PAD, PAD), (0, 0)))

        def body(carry, eps):
            h, loc = carry
            gl = jax.vmap(retina)(padded, lax.stop_gradient(loc))
            g = jax.nn.relu(jax.nn.relu(gl @ p["wg"] + p["bg"]) + jax.nn.relu(loc @ p["wl"]))
            zr = jax.nn.sigmoid(g @ p["gx"] + h @ p["gh"] + p["gb"])
            z, r = jnp.split(zr, 2, -1)
            hc = jnp.tanh(g @ p["cx"] + (r * h) @ p["ch"] + p["cb"])
            h = (1 - z) * h + z * hc
            mu = jnp.tanh(lax.stop_gradient(h) @ p["wmu"])
            loc_new = jnp.clip(lax.stop_gradient(mu) + SIG * eps, -1.0, 1.0)
            logpi = -jnp.sum(jnp.square(loc_new - mu), -1) / (2 * SIG * SIG)
            base = (lax.stop_gradient(h) @ p["wb"])[:, 0]
            return (h, loc_new), (logpi, base)
        h0 = jnp.zeros((B, p["gh"].shape[0]))
        (h, _), (logpi, base) = lax.scan(body, (h0, jnp.zeros((B, 2))), noise)
        logits = h @ p["wa"] + p["ba"]
        R = (jnp.argmax(logits, -1) == labels).astype(F32)
        adv = lax.stop_gradient(R[None] - base)
        reinforce = -jnp.mean(jnp.sum(logpi * adv, 0))
        return _xent(logits, labels) + reinforce + jnp.mean(jnp.square(base - R[None])), \
            jnp.mean(R)

    def step(p, m, v, t, img, labels, noise):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels, noise)
        p, m, v = _adam(p, m, v, g, t, lr=3e-4)
        return l, acc, p, m, v
    Hd = 128
    p = {"wg": S(2 * G * G, Hd), "bg": S(Hd), "wl": S(2, Hd), "gx": S(Hd, 2 * Hd),
         "gh": S(Hd, 2 * Hd), "gb": S(2 * Hd), "cx": S(Hd, Hd), "ch": S(Hd, Hd), "cb": S(Hd),
         "wmu": S(Hd, 2), "wb": S(Hd, 1), "wa": S(Hd, 10), "ba": S(10)}
    return step, (p, p, p, S(), S(32, 32, 32, 1), S(32, dtype=I32), S(STEPS, 32, 2))


# ----------------------------------------------------------------------------- mixed precision


def bf16_swav_sinkhorn_swapped_prototypes():
    """SwAV self-supervised step in mixed precision: two augmented views through a bfloat16
    conv encoder and MLP projector (f32 master weights cast per use, LayerNorm statistics in
    f32), L2-normalised embeddings scored against 96 L2-normalised prototypes with a bf16
    matmul accumulated in f32; codes from three Sinkhorn-Knopp iterations in f32 on the
    detached scores; swapped-prediction cross-entropy at temperature 0.1; prototype
    gradients zeroed during the first 313 steps; momentum SGD in f32 with the prototypes
    renormalised after the update."""
    EPS, TAU, NP = 0.05, 0.1, 96

    def bconv(x, w, s):
        return lax.conv_general_dilated(x.astype(BF16), w.astype(BF16), (s, s), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def embed(p, x):
        h = jax.nn.relu(bconv(x, p["c1"], 2) + p["cb1"].astype(BF16))
        h = jax.nn.relu(bconv(h, p["c2"], 2) + p["cb2"].astype(BF16))
        h = jnp.mean(h.astype(F32), (1, 2))
        h = _ln(h, p["g"], p["b"]).astype(BF16)
        h = jax.nn.relu(h @ p["m1"].astype(BF16))
        z = (h @ p["m2"].astype(BF16)).astype(F32)
        return z / (jnp.linalg.norm(z, axis=-1, keepdims=True) + 1e-6)

    def sinkhorn(s):
        Q = jnp.exp((s - jnp.max(s)) / EPS).T                          # [K,B]
        Q = Q / jnp.sum(Q)
        K, B = Q.shape
        for _ in range(3):
            Q = Q / jnp.sum(Q, 1, keepdims=True) / K
            Q = Q / jnp.sum(Q, 0, keepdims=True) / B
        return (Q * B).T

    def loss(p, x1, x2):
        C = p["protos"]
        C = C / jnp.linalg.norm(C, axis=0, keepdims=True)
        s1 = jnp.einsum("bd,dk->bk", embed(p, x1).astype(BF16), C.astype(BF16),
                        preferred_element_type=F32)
        s2 = jnp.einsum("bd,dk->bk", embed(p, x2).astype(BF16), C.astype(BF16),
                        preferred_element_type=F32)
        q1, q2 = sinkhorn(lax.stop_gradient(s1)), sinkhorn(lax.stop_gradient(s2))
        l = -0.5 * jnp.mean(jnp.sum(q1 * jax.nn.log_softmax(s2 / TAU, -1), -1)
                            + jnp.sum(q2 * jax.nn.log_softmax(s1 / TAU, -1), -1))
        return l

    def step(p, mom, t, x1, x2):
        l, g = jax.value_and_grad(loss)(p, x1, x2)
        g = tmap(lambda a: a.astype(F32), g)
        g = dict(g, protos=jnp.where(t < 313.0, 0.0, g["protos"]))
        p, mom = _momentum(p, mom, g, 0.06, 0.9, 1e-6)
        C = p["protos"]
        p = dict(p, protos=C / jnp.linalg.norm(C, axis=0, keepdims=True))
        return l, p, mom
    p = {"c1": S(3, 3, 3, 32), "cb1": S(32), "c2": S(3, 3, 32, 64), "cb2": S(64), "g": S(64),
         "b": S(64), "m1": S(64, 128), "m2": S(128, 64), "protos": S(64, NP)}
    return step, (p, p, S(), S(32, 16, 16, 3), S(32, 16, 16, 3))


# ----------------------------------------------------------------------------- optimizers


def ademamix_dual_ema_alpha_beta_schedule():
    """AdEMAMix on a residual MLP tabular classifier (four pre-LN residual blocks of width 128,
    SiLU): besides Adam's fast EMA m1 and second moment nu it keeps a slow EMA m2 whose
    coefficient beta3 is warmed up on the schedule exp(log b1 log b3 / ((1 - s) log b3
    + s log b1)) and whose mixing weight alpha is ramped linearly; the update is
    (m1 / c1 + alpha m2) / (sqrt(nu / c2) + eps) plus decoupled weight decay."""
    B1, B2, B3, ALPHA, TW = 0.9, 0.999, 0.9999, 5.0, 5000.0

    def loss(p, x, y):
        h = x @ p["win"] + p["bin"]
        for q in p["blocks"]:
            h = h + jax.nn.silu(_ln(h, q["g"], q["b"]) @ q["w1"] + q["b1"]) @ q["w2"]
        return _xent(_ln(h, p["gf"], p["bf"]) @ p["out"], y)

    def step(p, m1, m2, nu, t, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        s = jnp.minimum(t / TW, 1.0)
        lb1, lb3 = math.log(B1), math.log(B3)
        b3 = jnp.exp(lb1 * lb3 / ((1.0 - s) * lb3 + s * lb1))
        alpha = ALPHA * s
        m1 = tmap(lambda m, g: B1 * m + (1 - B1) * g, m1, g)
        m2 = tmap(lambda m, g: b3 * m + (1 - b3) * g, m2, g)
        nu = tmap(lambda n, g: B2 * n + (1 - B2) * g * g, nu, g)
        c1, c2 = 1.0 - B1 ** t, 1.0 - B2 ** t
        p = tmap(lambda w, a, b, n: w - 1e-3 * ((a / c1 + alpha * b) / (jnp.sqrt(n / c2) + 1e-8)
                                                + 0.01 * w), p, m1, m2, nu)
        return l, p, m1, m2, nu
    D = 128
    blk = {"g": S(D), "b": S(D), "w1": S(D, 256), "b1": S(256), "w2": S(256, D)}
    p = {"win": S(48, D), "bin": S(D), "blocks": [blk, dict(blk), dict(blk), dict(blk)],
         "gf": S(D), "bf": S(D), "out": S(D, 8)}
    return step, (p, p, p, p, S(), S(64, 48), S(64, dtype=I32))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [nbeats_interpretable_trend_seasonality, deephit_discrete_time_survival_rank],
    "cnn": [resnext_grouped_conv_cutmix_box],
    "transformer": [electra_replaced_token_detection, mega_ema_gated_laplace_attention],
    "rnn": [mogrifier_lstm_char_scan, pointer_network_sort_decoder_scan],
    "moe": [mmoe_multigate_uncertainty_weighted],
    "vae": [wae_mmd_imq_conv_autoencoder],
    "unet": [unet_deep_supervision_tversky_side_heads],
    "gnn": [appnp_personalized_pagerank_edge_drop],
    "quant": [adaround_rectified_sigmoid_reconstruction],
    "remat": [remat_deit_distill_token_scan_names_but, remat_gated_pixelcnn_nested_masked_conv],
    "custom_vjp": [neural_ode_adjoint_custom_vjp_rk4],
    "control": [sphere_tracing_sdf_while_implicit_hit, randaugment_vmapped_switch_cond_skip],
    "sort": [sliced_wasserstein_projection_sort_ae, graph_unet_gpool_topk_unpool],
    "fft": [phase_correlation_soft_argmax_registration],
    "linalg": [kronecker_grid_gp_eigh_marginal],
    "scatter_gather": [skipgram_negative_sampling_sparse_rows],
    "dynamic": [recurrent_attention_glimpse_reinforce],
    "mixed": [bf16_swav_sinkhorn_swapped_prototypes],
    "optimizer": [ademamix_dual_ema_alpha_beta_schedule],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["electra_replaced_token_detection", "mega_ema_gated_laplace_attention",
           "resnext_grouped_conv_cutmix_box", "mogrifier_lstm_char_scan",
           "mmoe_multigate_uncertainty_weighted", "unet_deep_supervision_tversky_side_heads",
           "remat_deit_distill_token_scan_names_but", "remat_gated_pixelcnn_nested_masked_conv",
           "phase_correlation_soft_argmax_registration", "randaugment_vmapped_switch_cond_skip",
           "bf16_swav_sinkhorn_swapped_prototypes", "ademamix_dual_ema_alpha_beta_schedule"]
SHARDED_SET = ["electra_replaced_token_detection", "nbeats_interpretable_trend_seasonality",
               "remat_deit_distill_token_scan_names_but", "bf16_swav_sinkhorn_swapped_prototypes",
               "mmoe_multigate_uncertainty_weighted", "wae_mmd_imq_conv_autoencoder",
               "ademamix_dual_ema_alpha_beta_schedule", "resnext_grouped_conv_cutmix_box"]
