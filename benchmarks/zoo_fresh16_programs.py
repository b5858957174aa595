"""Sixteenth fresh set: 25 JAX programs written by a helper on 2026-11-28 (sixth session of
that day). It was kept outside the repository as a held-out set, measured unseen at the start
of the seventh session (2026-11-28), and committed then, when its misses were first read and
tuned on. ohem_topk_focal_segmentation has no H100 dump: the deviceless GPU compiler fails on
its bilinear-resize dot ("Couldn't find output tile sizes"). Same interface as
zoo_programs.py::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh16_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh16_programs python benchmarks/accuracy.py --data DIR

Written for JAX 0.4.30 up to the current release (no API newer than 0.4.30).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
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


def _adam(p, m, v, g, t, lr=1e-3, b1=0.9, b2=0.999, wd=0.0):
    m = tmap(lambda m, g: b1 * m + (1 - b1) * g, m, g)
    v = tmap(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
    c1 = 1.0 - b1 ** t
    c2 = 1.0 - b2 ** t
    p = tmap(lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + 1e-8) + wd * p), p, m, v)
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



def _up2(x):
    """Nearest-neighbour 2x upsampling of an NHWC tensor."""
    return jnp.repeat(jnp.repeat(x, 2, 1), 2, 2)


def _gn(x, g, b, groups=8, eps=1e-5):
    n, h, w, c = x.shape
    xr = x.reshape(n, h, w, groups, c // groups)
    m = jnp.mean(xr, (1, 2, 4), keepdims=True)
    v = jnp.var(xr, (1, 2, 4), keepdims=True)
    return ((xr - m) * lax.rsqrt(v + eps)).reshape(n, h, w, c) * g + b


def _leaf_clip(g, max_norm=1.0):
    """Clip every parameter tensor's gradient to its own norm (per-layer clipping)."""
    def one(a):
        n = jnp.sqrt(jnp.sum(jnp.square(a)))
        return a * jnp.minimum(1.0, max_norm / (n + 1e-6))
    return tmap(one, g)


def _log_normal(z, mu, lv):
    return -0.5 * (jnp.log(2 * jnp.pi) + lv + jnp.square(z - mu) * jnp.exp(-lv))


# ----------------------------------------------------------------------------- mlp


def nalu_log_space_arithmetic_mlp():
    """Neural arithmetic logic units for learning arithmetic over subsets of the inputs: each
    NALU layer ties its weights as tanh(W_hat) * sigmoid(M_hat), mixes an additive path x W and a
    multiplicative path exp(log(|x| + eps) W) with a learned sigmoid gate; two stacked NALUs,
    Huber loss plus a regulariser pushing the tied weights towards {-1, 0, 1}; each layer's
    gradient clipped to its own norm, then Adam."""
    def nalu(q, x):
        W = jnp.tanh(q["wh"]) * jax.nn.sigmoid(q["mh"])
        a = x @ W
        m = jnp.exp(jnp.log(jnp.abs(x) + 1e-7) @ W)
        g = jax.nn.sigmoid(x @ q["g"] + q["gb"])
        return g * a + (1 - g) * m, W

    def loss(p, x, y):
        h, W1 = nalu(p["l1"], x)
        out, W2 = nalu(p["l2"], h)
        d = out - y
        a = jnp.abs(d)
        hub = jnp.mean(jnp.where(a < 1.0, 0.5 * d * d, a - 0.5))
        reg = sum(jnp.mean(jnp.square(W) * jnp.square(1.0 - jnp.abs(W))) for W in (W1, W2))
        return hub + 0.1 * reg

    def step(p, m, v, t, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        g = {k: _global_clip(gk, 1.0) for k, gk in g.items()}
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v

    def lay(i, o):
        return {"wh": S(i, o), "mh": S(i, o), "g": S(i, o), "gb": S(o)}
    p = {"l1": lay(32, 16), "l2": lay(16, 4)}
    return step, (p, p, p, S(), S(16, 32), S(16, 4))


def dlrm_pairwise_dot_interaction():
    """DLRM recommendation model: a bottom MLP on log-scaled dense features, six embedding-bag
    tables (mean of three multi-hot ids each), the pairwise dot-product interaction of the seven
    vectors with the strict upper triangle gathered by triu_indices and concatenated with the
    dense vector, a top MLP and BCE; row-wise Adagrad (one accumulator per embedding row) for the
    tables and Adam for the MLPs."""
    NT = 6

    def loss(p, dense, bags, y):
        d = jax.nn.relu(jnp.log1p(jnp.abs(dense)) @ p["bot1"] + p["bb1"])
        d = jax.nn.relu(d @ p["bot2"] + p["bb2"])                      # [B,16]
        embs = [jnp.mean(p["emb%d" % i][bags[:, i]], 1) for i in range(NT)]
        z = jnp.stack([d] + embs, 1)                                     # [B,7,16]
        inter = jnp.einsum("bid,bjd->bij", z, z)
        iu, ju = jnp.triu_indices(NT + 1, 1)
        h = jnp.concatenate([d, inter[:, iu, ju]], -1)                  # [B,16+21]
        h = jax.nn.relu(h @ p["top1"] + p["tb1"])
        h = jax.nn.relu(h @ p["top2"] + p["tb2"])
        return jnp.mean(_bce((h @ p["top3"])[:, 0], y))

    def step(p, m, v, acc, t, dense, bags, y):
        l, g = jax.value_and_grad(loss)(p, dense, bags, y)
        mlp = [k for k in p if not k.startswith("emb")]
        dp, dm, dv = _adam({k: p[k] for k in mlp}, {k: m[k] for k in mlp}, {k: v[k] for k in mlp},
                           {k: g[k] for k in mlp}, t, lr=1e-3)
        newp, newacc = dict(dp), {}
        for i in range(NT):
            k = "emb%d" % i
            a = acc[k] + jnp.mean(g[k] * g[k], -1)
            newacc[k] = a
            newp[k] = p[k] - 0.05 * g[k] * lax.rsqrt(a + 1e-8)[:, None]
        return l, newp, dm, dv, newacc
    mlp = {"bot1": S(8, 32), "bb1": S(32), "bot2": S(32, 16), "bb2": S(16), "top1": S(37, 64),
           "tb1": S(64), "top2": S(64, 32), "tb2": S(32), "top3": S(32, 1)}
    p = dict(mlp, **{"emb%d" % i: S(64, 16) for i in range(NT)})
    acc = {"emb%d" % i: S(64) for i in range(NT)}
    return step, (p, mlp, mlp, acc, S(), S(16, 8), S(16, NT, 3, dtype=I32), S(16))


# ----------------------------------------------------------------------------- cnn


def hrnet_two_branch_exchange_fusion():
    """HRNet-style pose estimator: a strided stem, a high-resolution branch (16x16) and a low-
    resolution branch (8x8) kept in parallel through two stages of residual blocks, each stage
    ending in a multi-resolution exchange (1x1 conv + nearest upsampling low->high, strided 3x3
    conv high->low, summed); the fused maps predict keypoint heatmaps with a visibility-weighted
    MSE; batch-norm statistics folded into running averages; Adam."""
    def cbr(x, w, g, b, stride=1, relu=True):
        y, st = _bn(_conv(x, w, stride), g, b)
        return (jax.nn.relu(y) if relu else y), st

    def basic(q, x):
        h, s1 = cbr(x, q["c1"], q["g1"], q["b1"])
        h, s2 = cbr(h, q["c2"], q["g2"], q["b2"], relu=False)
        return jax.nn.relu(h + x), [s1, s2]

    def loss(p, img, heat, vis):
        stats = []
        hi, s = cbr(img, p["stem"], p["sg"], p["sb"], 2)
        stats.append(s)
        lo, s = cbr(hi, p["trans"], p["tg"], p["tb"], 2)
        stats.append(s)
        for q in p["stages"]:
            hi, s = basic(q["hi"], hi)
            stats += s
            lo, s = basic(q["lo"], lo)
            stats += s
            l2h, s = cbr(lo, q["l2h"], q["l2hg"], q["l2hb"], relu=False)
            stats.append(s)
            h2l, s = cbr(hi, q["h2l"], q["h2lg"], q["h2lb"], 2, relu=False)
            stats.append(s)
            hi, lo = jax.nn.relu(hi + _up2(l2h)), jax.nn.relu(lo + h2l)
        f = jnp.concatenate([hi, _up2(lo)], -1)
        pred = _conv(f, p["head"]) + p["hb"]
        err = jnp.mean(jnp.square(pred - heat), (1, 2)) * vis
        return 0.5 * jnp.mean(err), stats

    def step(p, m, v, run, t, img, heat, vis):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, heat, vis)
        run = tmap(lambda r, s: 0.9 * r + 0.1 * s, run, lax.stop_gradient(stats))
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v, run

    def basic_p(c):
        return {"c1": S(3, 3, c, c), "g1": S(c), "b1": S(c), "c2": S(3, 3, c, c), "g2": S(c),
                "b2": S(c)}

    def stage_p():
        return {"hi": basic_p(16), "lo": basic_p(32), "l2h": S(1, 1, 32, 16), "l2hg": S(16),
                "l2hb": S(16), "h2l": S(3, 3, 16, 32), "h2lg": S(32), "h2lb": S(32)}
    K = 8
    p = {"stem": S(3, 3, 3, 16), "sg": S(16), "sb": S(16), "trans": S(3, 3, 16, 32), "tg": S(32),
         "tb": S(32), "stages": [stage_p(), stage_p()], "head": S(1, 1, 48, K), "hb": S(K)}
    chans = [16, 32] + [16, 16, 32, 32, 16, 32] * 2
    run = [(S(c), S(c)) for c in chans]
    return step, (p, p, p, run, S(), S(8, 32, 32, 3), S(8, 16, 16, K), S(8, K))


# ----------------------------------------------------------------------------- transformer


def nystromformer_landmark_pinv_attention():
    """Nystromformer text classifier: queries and keys are averaged over segments into eight
    landmarks, softmax attention is approximated as softmax(Q Kl^T) pinv(softmax(Ql Kl^T))
    softmax(Ql K^T) V with the Moore-Penrose inverse from six iterations of the cubic Newton
    scheme, plus a depthwise convolution over the values as a skip; two pre-LN layers, masked
    mean pooling, cross-entropy, AdamW with global clipping."""
    def pinv(K, iters=6):
        I = jnp.eye(K.shape[-1], dtype=K.dtype)
        Z = jnp.swapaxes(K, -1, -2) / (jnp.max(jnp.sum(jnp.abs(K), -2))
                                       * jnp.max(jnp.sum(jnp.abs(K), -1)))
        for _ in range(iters):
            KZ = K @ Z
            Z = 0.25 * Z @ (13 * I - KZ @ (15 * I - KZ @ (7 * I - KZ)))
        return Z

    def attn(q, x, H, m):
        b, T, d = x.shape
        dh = d // H
        split = lambda y: y.reshape(b, T, H, dh).transpose(0, 2, 1, 3)
        Q = split(x @ q["q"]) / dh ** 0.25
        K = split(x @ q["k"]) / dh ** 0.25
        V = split(x @ q["v"])
        Ql = Q.reshape(b, H, m, T // m, dh).mean(3)
        Kl = K.reshape(b, H, m, T // m, dh).mean(3)
        k1 = jax.nn.softmax(Q @ jnp.swapaxes(Kl, -1, -2), -1)
        k2 = jax.nn.softmax(Ql @ jnp.swapaxes(Kl, -1, -2), -1)
        k3 = jax.nn.softmax(Ql @ jnp.swapaxes(K, -1, -2), -1)
        out = k1 @ (pinv(k2) @ (k3 @ V))
        Vp = jnp.pad(V, ((0, 0), (0, 0), (2, 2), (0, 0)))
        for j in range(5):
            out = out + q["dw"][:, j][None, :, None, None] * Vp[:, :, j:j + T]
        return out.transpose(0, 2, 1, 3).reshape(b, T, d) @ q["o"]

    def loss(p, tok, pad, labels):
        x = p["emb"][tok] + p["pos"]
        for q in p["layers"]:
            x = x + attn(q, _ln(x, q["g1"], q["b1"]), 4, 8)
            x = x + jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"]) @ q["f2"]
        x = _ln(x, p["gf"], p["bf"])
        pooled = jnp.sum(x * pad[..., None], 1) / jnp.maximum(jnp.sum(pad, 1, keepdims=True), 1.0)
        return _xent(pooled @ p["head"] + p["hb"], labels)

    def step(p, m, v, t, tok, pad, labels):
        l, g = jax.value_and_grad(loss)(p, tok, pad, labels)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=5e-4, wd=0.01)
        return l, p, m, v
    D, T, V = 64, 64, 64
    q = _attn_params({"g1": S(D), "b1": S(D), "g2": S(D), "b2": S(D), "f1": S(D, 128),
                      "f2": S(128, D), "dw": S(4, 5)}, "", D)
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [q, dict(q)], "gf": S(D), "bf": S(D),
         "head": S(D, 4), "hb": S(4)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T), S(8, dtype=I32))


# ----------------------------------------------------------------------------- rnn / scan


def xlstm_slstm_exp_gate_stabilized_scan():
    """xLSTM sLSTM language model: exponential input gates and sigmoid forget gates in log
    space, stabilised by a carried running maximum m_t = max(log f_t + m_{t-1}, i_t), a
    normaliser state n_t, and block-diagonal (per-head) recurrent weights, all in a lax.scan over
    time; per-head group norm of the hidden states and a GLU up/down projection in each residual
    block; next-character loss, AdamW with clipping."""
    def slstm(q, x, H):
        B, T, D = x.shape
        dh = D // H
        wx = jnp.einsum("btd,dge->btge", x, q["w"]) + q["bias"]           # [B,T,4,D]

        def body(c, wxt):
            h, cc, n, m = c
            rh = jnp.einsum("bhd,hdge->bghe", h.reshape(B, H, dh), q["r"]).reshape(B, 4, D)
            gt = wxt + rh
            i_t, f_t, z_t, o_t = gt[:, 0], gt[:, 1], gt[:, 2], gt[:, 3]
            log_f = jax.nn.log_sigmoid(f_t)
            m_new = jnp.maximum(log_f + m, i_t)
            ig = jnp.exp(i_t - m_new)
            fg = jnp.exp(log_f + m - m_new)
            cc = fg * cc + ig * jnp.tanh(z_t)
            n = fg * n + ig
            h = jax.nn.sigmoid(o_t) * cc / n
            return (h, cc, n, m_new), h
        z = jnp.zeros((B, D))
        _, hs = lax.scan(body, (z, z, z, z), jnp.swapaxes(wx, 0, 1))
        return jnp.swapaxes(hs, 0, 1)

    def head_norm(h, g, H):
        B, T, D = h.shape
        hr = h.reshape(B, T, H, D // H)
        m = jnp.mean(hr, -1, keepdims=True)
        v = jnp.var(hr, -1, keepdims=True)
        return ((hr - m) * lax.rsqrt(v + 1e-5)).reshape(B, T, D) * g

    def loss(p, tok):
        x = p["emb"][tok]
        for q in p["blocks"]:
            x = x + head_norm(slstm(q, _ln(x, q["g1"], q["b1"]), 4), q["gn"], 4)
            h = _ln(x, q["g2"], q["b2"])
            x = x + (jax.nn.gelu(h @ q["u1"]) * (h @ q["u2"])) @ q["down"]
        logits = _ln(x, p["gf"], p["bf"]) @ p["head"]
        return _xent(logits[:, :-1], tok[:, 1:])

    def step(p, m, v, t, tok):
        l, g = jax.value_and_grad(loss)(p, tok)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=1e-3, b2=0.98, wd=0.1)
        return l, p, m, v
    D, V, H = 32, 48, 4
    q = {"g1": S(D), "b1": S(D), "w": S(D, 4, D), "bias": S(4, D), "r": S(H, D // H, 4, D // H),
         "gn": S(D), "g2": S(D), "b2": S(D), "u1": S(D, 64), "u2": S(D, 64), "down": S(64, D)}
    p = {"emb": S(V, D), "blocks": [q, dict(q)], "gf": S(D), "bf": S(D), "head": S(D, V)}
    return step, (p, p, p, S(), S(8, 24, dtype=I32))


def phased_lstm_time_gate_scan():
    """Phased LSTM on irregularly sampled sensor sequences: an LSTM cell inside lax.scan whose
    cell and hidden updates are gated by a per-unit time gate, the phase mod(t - s, tau) / tau
    opening the gate linearly up then down during a fraction r_on of each learned period (with a
    small leak when closed); padded steps keep the state; classification from the last state,
    Adam."""
    def kgate(tt, tau, s, r_on=0.05, alpha=1e-3):
        phi = jnp.mod(tt[:, None] - s, tau) / tau
        return jnp.where(phi < 0.5 * r_on, 2 * phi / r_on,
                         jnp.where(phi < r_on, 2 - 2 * phi / r_on, alpha * phi))

    def loss(p, x, ts, mask, labels):
        B = x.shape[0]
        Hd = p["wh"].shape[0]
        tau = jnp.exp(p["log_tau"])
        xw = jnp.einsum("btf,fg->btg", x, p["wx"])

        def body(c, inp):
            h, cs = c
            xt, tt, mt = inp
            z = xt + h @ p["wh"] + p["b"]
            i, f, o, g = jnp.split(z, 4, -1)
            ct = jax.nn.sigmoid(f) * cs + jax.nn.sigmoid(i) * jnp.tanh(g)
            ht = jax.nn.sigmoid(o) * jnp.tanh(ct)
            k = kgate(tt, tau, p["shift"]) * mt[:, None]
            return (k * ht + (1 - k) * h, k * ct + (1 - k) * cs), None
        z = jnp.zeros((B, Hd))
        (h, _), _ = lax.scan(body, (z, z), (jnp.swapaxes(xw, 0, 1), ts.T, mask.T))
        return _xent(jax.nn.relu(h @ p["f1"] + p["fb1"]) @ p["f2"], labels)

    def step(p, m, v, t, x, ts, mask, labels):
        l, g = jax.value_and_grad(loss)(p, x, ts, mask, labels)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v
    F, Hd = 8, 32
    p = {"wx": S(F, 4 * Hd), "wh": S(Hd, 4 * Hd), "b": S(4 * Hd), "log_tau": S(Hd),
         "shift": S(Hd), "f1": S(Hd, 32), "fb1": S(32), "f2": S(32, 6)}
    return step, (p, p, p, S(), S(16, 32, F), S(16, 32), S(16, 32), S(16, dtype=I32))


# ----------------------------------------------------------------------------- moe


def dselect_k_smooth_step_moe():
    """Multi-task mixture of experts with DSelect-k gates: each task's gate has k=2 selectors,
    each choosing one of eight experts through three binary codes passed through the cubic
    smooth-step function (the expert's weight is the product over its bits of S(z) or 1 - S(z)),
    selectors mixed by a softmax; an entropy regulariser drives the codes to binary; dense
    expert evaluation by einsum; a classification and a regression tower; Adam."""
    E, NB = 8, 3

    def smooth_step(z, gamma=1.0):
        cubic = -2.0 / gamma ** 3 * z ** 3 + 1.5 / gamma * z + 0.5
        return jnp.where(z <= -gamma / 2, 0.0, jnp.where(z >= gamma / 2, 1.0, cubic))

    def gate(q, x):
        B = x.shape[0]
        k = q["wa"].shape[1]
        bits = ((jnp.arange(E)[:, None] >> jnp.arange(NB)[None]) & 1).astype(F32)   # [E,NB]
        s = smooth_step((x @ q["wz"]).reshape(B, k, NB))[:, :, None, :]           # [B,k,1,NB]
        r = jnp.prod(bits * s + (1 - bits) * (1 - s), -1)                          # [B,k,E]
        w = jnp.einsum("bk,bke->be", jax.nn.softmax(x @ q["wa"], -1), r)
        ent = -jnp.mean(jnp.sum(r * jnp.log(r + 1e-6), -1))
        return w, ent

    def loss(p, x, ycls, yreg):
        h = jax.nn.relu(jnp.einsum("bd,edh->beh", x, p["w1"]) + p["b1"])
        out = jnp.einsum("beh,ehd->bed", h, p["w2"]) + p["b2"]             # [B,E,O]
        w_c, e_c = gate(p["gc"], x)
        w_r, e_r = gate(p["gr"], x)
        tc = jax.nn.relu(jnp.einsum("be,bed->bd", w_c, out) @ p["tc1"]) @ p["tc2"]
        tr = jax.nn.relu(jnp.einsum("be,bed->bd", w_r, out) @ p["tr1"]) @ p["tr2"]
        return _xent(tc, ycls) + jnp.mean(jnp.square(tr - yreg)) + 1e-2 * (e_c + e_r)

    def step(p, m, v, t, x, ycls, yreg):
        l, g = jax.value_and_grad(loss)(p, x, ycls, yreg)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v
    D, Hh, O, K = 32, 64, 32, 2
    gate_p = {"wz": S(D, K * NB), "wa": S(D, K)}
    p = {"w1": S(E, D, Hh), "b1": S(E, Hh), "w2": S(E, Hh, O), "b2": S(E, O), "gc": gate_p,
         "gr": dict(gate_p), "tc1": S(O, 32), "tc2": S(32, 5), "tr1": S(O, 32), "tr2": S(32, 2)}
    return step, (p, p, p, S(), S(16, D), S(16, dtype=I32), S(16, 2))


# ----------------------------------------------------------------------------- vae


def vampprior_pseudo_input_mixture_vae():
    """VAE with a VampPrior: the prior is the uniform mixture of the encoder's posteriors at
    sixteen learned pseudo-inputs (hard-clipped to [0, 1]); log p(z) is a logsumexp over the
    mixture components; gated-dense decoder with Bernoulli likelihood; KL warm-up over the first
    hundred steps; Adam."""
    def enc(p, x):
        h = jnp.tanh(x @ p["e1"] + p["eb1"])
        h = jnp.tanh(h @ p["e2"] + p["eb2"])
        return h @ p["mu"] + p["mub"], jnp.clip(h @ p["lv"] + p["lvb"], -6.0, 2.0)

    def loss(p, x, eps, beta):
        mu, lv = enc(p, x)
        z = mu + jnp.exp(0.5 * lv) * eps
        Kc = p["pseudo"].shape[0]
        pm, plv = enc(p, jnp.clip(p["pseudo"], 0.0, 1.0))
        lp = jnp.sum(_log_normal(z[:, None], pm[None], plv[None]), -1)          # [B,K]
        log_pz = jax.nn.logsumexp(lp, 1) - jnp.log(float(Kc))
        log_qz = jnp.sum(_log_normal(z, mu, lv), -1)
        d = (z @ p["d1"] + p["db1"]) * jax.nn.sigmoid(z @ p["dg1"] + p["dgb1"])
        d = (d @ p["d2"] + p["db2"]) * jax.nn.sigmoid(d @ p["dg2"] + p["dgb2"])
        rec = jnp.sum(_bce(d @ p["d3"] + p["db3"], x), -1)
        return jnp.mean(rec + beta * (log_qz - log_pz))

    def step(p, m, v, t, x, eps):
        beta = jnp.minimum(1.0, t / 100.0)
        l, g = jax.value_and_grad(loss)(p, x, eps, beta)
        p, m, v = _adam(p, m, v, g, t, lr=5e-4)
        return l, p, m, v
    D, H, Z, K = 64, 64, 8, 16
    p = {"e1": S(D, H), "eb1": S(H), "e2": S(H, H), "eb2": S(H), "mu": S(H, Z), "mub": S(Z),
         "lv": S(H, Z), "lvb": S(Z), "pseudo": S(K, D), "d1": S(Z, H), "db1": S(H),
         "dg1": S(Z, H), "dgb1": S(H), "d2": S(H, H), "db2": S(H), "dg2": S(H, H), "dgb2": S(H),
         "d3": S(H, D), "db3": S(D)}
    return step, (p, p, p, S(), S(16, D), S(16, Z))


def stick_breaking_kumaraswamy_vae():
    """Stick-breaking VAE: the encoder gives Kumaraswamy(a, b) parameters for seven sticks,
    fractions are sampled by the inverse CDF (1 - u^(1/b))^(1/a) from passed-in uniforms and
    turned into eight mixture weights by a cumulative product of the remainders; the KL to the
    Beta(1, alpha0) prior uses digamma, lgamma and a ten-term Taylor series of Beta functions;
    MLP decoder from the weights, Bernoulli likelihood; Adam."""
    from jax.scipy.special import digamma

    def loss(p, x, u, alpha0):
        h = jax.nn.softplus(x @ p["e1"] + p["eb1"])
        h = jax.nn.softplus(h @ p["e2"] + p["eb2"])
        a = jax.nn.softplus(h @ p["a"] + p["ab"]) + 1e-2
        b = jax.nn.softplus(h @ p["b"] + p["bb"]) + 1e-2
        u = jnp.clip(u, 1e-4, 1 - 1e-4)
        v = jnp.clip((1 - u ** (1 / b)) ** (1 / a), 1e-5, 1 - 1e-5)      # [B,K-1]
        ones = jnp.ones_like(v[:, :1])
        rem = jnp.cumprod(1 - v, -1)
        pi = jnp.concatenate([v, ones], -1) * jnp.concatenate([ones, rem], -1)
        kl = ((a - 1.0) / a) * (-0.57721566 - digamma(b) - 1.0 / b) + jnp.log(a * b) \
            - jnp.log(alpha0) - (b - 1.0) / b
        taylor = 0.0
        for mm in range(1, 11):
            taylor = taylor + jnp.exp(lax.lgamma(mm / a) + lax.lgamma(b)
                                      - lax.lgamma(mm / a + b)) / (mm + a * b)
        kl = kl + (alpha0 - 1.0) * b * taylor
        d = jax.nn.relu(pi @ p["d1"] + p["db1"])
        d = jax.nn.relu(d @ p["d2"] + p["db2"])
        rec = jnp.sum(_bce(d @ p["d3"] + p["db3"], x), -1)
        return jnp.mean(rec + jnp.sum(kl, -1))

    def step(p, m, v, t, x, u, alpha0):
        l, g = jax.value_and_grad(loss)(p, x, u, alpha0)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v
    D, H, K = 64, 64, 8
    p = {"e1": S(D, H), "eb1": S(H), "e2": S(H, H), "eb2": S(H), "a": S(H, K - 1),
         "ab": S(K - 1), "b": S(H, K - 1), "bb": S(K - 1), "d1": S(K, H), "db1": S(H),
         "d2": S(H, H), "db2": S(H), "d3": S(H, D), "db3": S(D)}
    return step, (p, p, p, S(), S(16, D), S(16, K - 1), S())


# ----------------------------------------------------------------------------- unet


def unet_plus_plus_nested_dense_skips():
    """UNet++ for binary segmentation: a three-level encoder (double conv blocks, max-pooling),
    nested decoder nodes X01, X11, X02 that each concatenate every earlier node of their level
    with the upsampled node below (dense skip pathways), and deep supervision from X01 and X02
    averaged; BCE plus soft Dice per image; Adam."""
    def cb(q, x):
        h = jax.nn.relu(_conv(x, q["c1"]) + q["b1"])
        return jax.nn.relu(_conv(h, q["c2"]) + q["b2"])

    def loss(p, img, mask):
        x00 = cb(p["x00"], img)
        x10 = cb(p["x10"], _maxpool(x00))
        x20 = cb(p["x20"], _maxpool(x10))
        x01 = cb(p["x01"], jnp.concatenate([x00, _up2(x10)], -1))
        x11 = cb(p["x11"], jnp.concatenate([x10, _up2(x20)], -1))
        x02 = cb(p["x02"], jnp.concatenate([x00, x01, _up2(x11)], -1))
        total = 0.0
        for h, w in ((x01, p["o1"]), (x02, p["o2"])):
            z = _conv(h, w)[..., 0]
            pr = jax.nn.sigmoid(z)
            inter = jnp.sum(pr * mask, (1, 2))
            dice = 1 - (2 * inter + 1) / (jnp.sum(pr, (1, 2)) + jnp.sum(mask, (1, 2)) + 1)
            total = total + jnp.mean(_bce(z, mask)) + jnp.mean(dice)
        return total / 2

    def step(p, m, v, t, img, mask):
        l, g = jax.value_and_grad(loss)(p, img, mask)
        p, m, v = _adam(p, m, v, g, t, lr=3e-4)
        return l, p, m, v

    def blk(i, o):
        return {"c1": S(3, 3, i, o), "b1": S(o), "c2": S(3, 3, o, o), "b2": S(o)}
    p = {"x00": blk(1, 16), "x10": blk(16, 32), "x20": blk(32, 64), "x01": blk(48, 16),
         "x11": blk(96, 32), "x02": blk(64, 16), "o1": S(1, 1, 16, 1), "o2": S(1, 1, 16, 1)}
    return step, (p, p, p, S(), S(8, 32, 32, 1), S(8, 32, 32))


# ----------------------------------------------------------------------------- gnn


def rgcn_basis_decomposition_relations():
    """Relational GCN on a small knowledge graph: per-relation weights W_r = sum_b a_rb V_b
    (basis decomposition), messages h_src W_rel normalised by the per-(node, relation)
    in-degree (a segment_sum over dst * R + rel) and aggregated by segment_sum, plus a self-loop;
    two layers; masked entity classification and a DistMult link-prediction loss on scored
    triples; L2 on the bases; Adam."""
    R = 4

    def layer(q, h, src, dst, rel):
        n = h.shape[0]
        hb = jnp.einsum("ed,bdo->ebo", h[src], q["V"])
        msg = jnp.einsum("eb,ebo->eo", q["a"][rel], hb)
        key = dst * R + rel
        cnt = jax.ops.segment_sum(jnp.ones(rel.shape, F32), key, num_segments=n * R)
        msg = msg / jnp.maximum(cnt[key], 1.0)[:, None]
        return jax.ops.segment_sum(msg, dst, num_segments=n) + h @ q["self"] + q["bias"]

    def loss(p, feat, src, dst, rel, labels, lmask, head, tail, trel, tlabel):
        h = jax.nn.relu(layer(p["l1"], feat, src, dst, rel))
        h = layer(p["l2"], h, src, dst, rel)
        logp = jax.nn.log_softmax(h @ p["cls"], -1)
        nll = -jnp.take_along_axis(logp, labels[:, None], -1)[:, 0]
        node = jnp.sum(nll * lmask) / jnp.maximum(jnp.sum(lmask), 1.0)
        s = jnp.sum(h[head] * p["relemb"][trel] * h[tail], -1)
        reg = jnp.sum(jnp.square(p["l1"]["V"])) + jnp.sum(jnp.square(p["l2"]["V"]))
        return node + 0.5 * jnp.mean(_bce(s, tlabel)) + 5e-4 * reg

    def step(p, m, v, t, *batch):
        l, g = jax.value_and_grad(loss)(p, *batch)
        p, m, v = _adam(p, m, v, g, t, lr=1e-2)
        return l, p, m, v

    def lay(i, o, B=2):
        return {"V": S(B, i, o), "a": S(R, B), "self": S(i, o), "bias": S(o)}
    N, E, Fi, Hd, T = 64, 256, 16, 32, 32
    p = {"l1": lay(Fi, Hd), "l2": lay(Hd, Hd), "cls": S(Hd, 5), "relemb": S(R, Hd)}
    Ei = lambda n: S(n, dtype=I32)
    return step, (p, p, p, S(), S(N, Fi), Ei(E), Ei(E), Ei(E), Ei(N), S(N), Ei(T), Ei(T), Ei(T),
                  S(T))


# ----------------------------------------------------------------------------- quant


def apot_additive_powers_two_quant():
    """APoT quantisation-aware training of a small CNN: weights are standardised, clipped by a
    learned alpha and snapped (argmin over levels built in the step) to additive powers-of-two
    levels, sums of one term from {0, 1, 2^-2, 2^-4} and one from {0, 2^-1, 2^-3, 2^-5}, with a
    straight-through estimator that still passes gradient to alpha; activations are 4-bit uniform
    with a learned PACT clip; first conv and classifier stay full precision; momentum SGD."""
    def levels():
        s0 = jnp.array([0.0, 1.0, 2.0 ** -2, 2.0 ** -4])
        s1 = jnp.array([0.0, 2.0 ** -1, 2.0 ** -3, 2.0 ** -5])
        lv = (s0[:, None] + s1[None, :]).reshape(-1)
        lv = lv / jnp.max(lv)
        return jnp.concatenate([-lv, lv])

    def qw(w, alpha):
        w = (w - jnp.mean(w)) / (jnp.std(w) + 1e-6)
        wc = jnp.clip(w / alpha, -1.0, 1.0)
        L = levels()
        q = L[jnp.argmin(jnp.abs(wc[..., None] - L), -1)]
        return alpha * (wc + lax.stop_gradient(q - wc))

    def qa(x, beta):
        a = jnp.clip(x, 0.0, beta)
        q = jnp.round(a / beta * 15.0) / 15.0 * beta
        return a + lax.stop_gradient(q - a)

    def loss(p, x, labels):
        h = jax.nn.relu(_bn(_conv(x, p["c0"]), p["g0"], p["b0"])[0])
        h = qa(_bn(_conv(h, qw(p["c1"], p["a1"]), 2), p["g1"], p["b1"])[0], p["pa1"])
        h = qa(_bn(_conv(h, qw(p["c2"], p["a2"]), 2), p["g2"], p["b2"])[0], p["pa2"])
        return _xent(jnp.mean(h, (1, 2)) @ p["fc"] + p["fcb"], labels)

    def step(p, mom, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        g = tmap(lambda g, w: g + 5e-4 * w, g, p)
        mom = tmap(lambda m, g: 0.9 * m + g, mom, g)
        return l, _sgd(p, mom, 0.02), mom
    p = {"c0": S(3, 3, 3, 16), "g0": S(16), "b0": S(16), "c1": S(3, 3, 16, 32), "a1": S(),
         "g1": S(32), "b1": S(32), "pa1": S(), "c2": S(3, 3, 32, 64), "a2": S(), "g2": S(64),
         "b2": S(64), "pa2": S(), "fc": S(64, 10), "fcb": S(10)}
    return step, (p, p, S(16, 16, 16, 3), S(16, dtype=I32))


# ----------------------------------------------------------------------------- remat


def remat_scanned_normformer_named_saves():
    """NormFormer causal LM with its four layers stacked and run by lax.scan over a
    jax.checkpoint'ed block whose policy saves only the names 'qkv_proj' and 'ffn_act'; inside,
    the attention core is itself rematerialised with nothing_saveable (nested remat); NormFormer
    extras: learned per-head scaling of the attention output, a LayerNorm after attention and one
    after the FFN activation; tied embeddings, Adam with clipping."""
    H = 4

    def block(x, q):
        b, T, d = x.shape
        dh = d // H
        h = _ln(x, q["g1"], q["b1"])
        qkv = checkpoint_name(h @ q["qkv"], "qkv_proj")

        def core(qkv):
            Q, K, V = (a.reshape(b, T, H, dh) for a in jnp.split(qkv, 3, -1))
            s = jnp.einsum("bqhd,bkhd->bhqk", Q, K) / jnp.sqrt(float(dh))
            s = jnp.where(jnp.tril(jnp.ones((T, T), bool)), s, -1e9)
            return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), V)
        o = jax.checkpoint(core, policy=jax.checkpoint_policies.nothing_saveable)(qkv)
        o = (o * q["hscale"][None, None, :, None]).reshape(b, T, d)
        x = x + _ln(o @ q["o"], q["g2"], q["b2"])
        f = checkpoint_name(jax.nn.gelu(_ln(x, q["g3"], q["b3"]) @ q["f1"]), "ffn_act")
        return x + _ln(f, q["g4"], q["b4"]) @ q["f2"], None
    body = jax.checkpoint(block, policy=jax.checkpoint_policies.save_only_these_names(
        "qkv_proj", "ffn_act"))

    def loss(p, tok):
        x = p["emb"][tok] + p["pos"]
        x, _ = lax.scan(body, x, p["layers"])
        logits = _ln(x, p["gf"], p["bf"]) @ p["emb"].T
        return _xent(logits[:, :-1], tok[:, 1:])

    def step(p, m, v, t, tok):
        l, g = jax.value_and_grad(loss)(p, tok)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=3e-4, b2=0.98)
        return l, p, m, v
    L, D, T, V, F = 4, 64, 32, 64, 128
    layers = {"g1": S(L, D), "b1": S(L, D), "qkv": S(L, D, 3 * D), "hscale": S(L, H),
              "o": S(L, D, D), "g2": S(L, D), "b2": S(L, D), "g3": S(L, D), "b3": S(L, D),
              "f1": S(L, D, F), "g4": S(L, F), "b4": S(L, F), "f2": S(L, F, D)}
    p = {"emb": S(V, D), "pos": S(T, D), "layers": layers, "gf": S(D), "bf": S(D)}
    return step, (p, p, p, S(), S(8, T, dtype=I32))


def remat_nested_pvt_spatial_reduction():
    """Pyramid Vision Transformer in bfloat16 compute with nested remat: spatial-reduction
    attention whose keys/values come from a strided conv + LayerNorm of the token grid (tagged
    'sra_kv'), MLP hidden tagged 'mlp_hidden'; every block is jax.checkpoint'ed with
    dots_saveable, and every stage (two blocks + norm) is wrapped again in an outer checkpoint
    with save_any_names_but_these('sra_kv'); patch merging between stages; label-smoothed
    cross-entropy, f32 master weights, AdamW."""
    def mm(a, w):
        return jnp.einsum("...d,de->...e", a.astype(BF16), w.astype(BF16),
                          preferred_element_type=F32)

    def sra(q, x, hw, sr, H):
        b, n, d = x.shape
        dh = d // H
        Q = mm(x, q["q"]).reshape(b, n, H, dh)
        if sr > 1:
            g = x.reshape(b, hw, hw, d).astype(BF16)
            kvin = lax.conv_general_dilated(g, q["sr"].astype(BF16), (sr, sr), "VALID",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))
            kvin = _ln(kvin.astype(F32).reshape(b, -1, d), q["gs"], q["bs"])
        else:
            kvin = x
        kvin = checkpoint_name(kvin, "sra_kv")
        m = kvin.shape[1]
        K = mm(kvin, q["k"]).astype(BF16).reshape(b, m, H, dh)
        V = mm(kvin, q["v"]).astype(BF16).reshape(b, m, H, dh)
        s = jnp.einsum("bqhd,bkhd->bhqk", Q.astype(BF16), K,
                       preferred_element_type=F32) / jnp.sqrt(float(dh))
        a = jax.nn.softmax(s, -1).astype(BF16)
        o = jnp.einsum("bhqk,bkhd->bqhd", a, V, preferred_element_type=F32).reshape(b, n, d)
        return mm(o, q["o"])

    def block(q, x, hw, sr, H):
        x = x + sra(q, _ln(x, q["g1"], q["b1"]), hw, sr, H)
        hm = checkpoint_name(jax.nn.gelu(mm(_ln(x, q["g2"], q["b2"]), q["f1"])), "mlp_hidden")
        return x + mm(hm, q["f2"])
    inner = jax.checkpoint(block, static_argnums=(2, 3, 4),
                           policy=jax.checkpoint_policies.dots_saveable)

    def stage(qs, x, hw, sr, H):
        for q in qs["blocks"]:
            x = inner(q, x, hw, sr, H)
        return _ln(x, qs["gn"], qs["bn"])
    outer = jax.checkpoint(stage, static_argnums=(2, 3, 4),
                           policy=jax.checkpoint_policies.save_any_names_but_these("sra_kv"))

    def loss(p, img, labels):
        b = img.shape[0]
        x = _conv(img.astype(BF16), p["pe1"].astype(BF16), 4, "VALID").astype(F32)   # [B,8,8,32]
        x = x.reshape(b, 64, -1) + p["pos1"]
        x = outer(p["s1"], x, 8, 2, 2)
        x = _conv(x.reshape(b, 8, 8, -1).astype(BF16), p["pe2"].astype(BF16), 2,
                  "VALID").astype(F32)
        x = x.reshape(b, 16, -1) + p["pos2"]
        x = outer(p["s2"], x, 4, 1, 4)
        logits = mm(jnp.mean(x, 1), p["head"]) + p["hb"]
        C = logits.shape[-1]
        tgt = jax.nn.one_hot(labels, C) * 0.9 + 0.1 / C
        return -jnp.mean(jnp.sum(tgt * jax.nn.log_softmax(logits, -1), -1))

    def step(p, m, v, t, img, labels):
        l, g = jax.value_and_grad(loss)(p, img, labels)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3, wd=0.05)
        return l, p, m, v

    def blk(d, sr):
        q = _attn_params({"g1": S(d), "b1": S(d), "g2": S(d), "b2": S(d), "f1": S(d, 2 * d),
                          "f2": S(2 * d, d)}, "", d)
        if sr > 1:
            q.update(sr=S(sr, sr, d, d), gs=S(d), bs=S(d))
        return q
    p = {"pe1": S(4, 4, 3, 32), "pos1": S(64, 32),
         "s1": {"blocks": [blk(32, 2), blk(32, 2)], "gn": S(32), "bn": S(32)},
         "pe2": S(2, 2, 32, 64), "pos2": S(16, 64),
         "s2": {"blocks": [blk(64, 1), blk(64, 1)], "gn": S(64), "bn": S(64)},
         "head": S(64, 10), "hb": S(10)}
    return step, (p, p, p, S(), S(8, 32, 32, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- custom_vjp


def _pau_fwd(x, a, b):
    xp = jnp.stack([x ** j for j in range(a.shape[0])], -1)
    P = xp @ a
    Bq = xp[..., 1:b.shape[0] + 1] @ b
    Q = 1.0 + jnp.abs(Bq)
    return P / Q, (xp, a, b, P, Bq, Q)


@jax.custom_vjp
def _pau(x, a, b):
    return _pau_fwd(x, a, b)[0]


def _pau_bwd(res, g):
    xp, a, b, P, Bq, Q = res
    na, nb = a.shape[0], b.shape[0]
    dP = sum(j * a[j] * xp[..., j - 1] for j in range(1, na))
    dB = sum(k * b[k - 1] * xp[..., k - 1] for k in range(1, nb + 1))
    sgn = jnp.sign(Bq)
    dx = (dP * Q - P * sgn * dB) / jnp.square(Q)
    da = jnp.sum((g / Q)[..., None] * xp, axis=tuple(range(g.ndim)))
    db = -jnp.sum((g * P * sgn / jnp.square(Q))[..., None] * xp[..., 1:nb + 1],
                  axis=tuple(range(g.ndim)))
    return g * dx, da, db


_pau.defvjp(_pau_fwd, _pau_bwd)


def pade_rational_activation_custom_vjp():
    """MLP classifier with learnable Pade activation units (safe PAU: degree-5 numerator over
    1 + |degree-4 polynomial|), each layer's rational function a jax.custom_vjp whose backward
    returns the closed-form input gradient and the coefficient gradients reduced over the batch
    and features (as in the PAU paper's CUDA kernel); three PAU layers with LayerNorm, Adam with
    a smaller learning rate for the rational coefficients."""
    def loss(p, x, labels):
        h = x
        for i in range(3):
            h = _ln(h @ p["w%d" % i] + p["b%d" % i], p["g%d" % i], p["bb%d" % i])
            h = _pau(h, p["pa%d" % i], p["pb%d" % i])
        return _xent(h @ p["out"] + p["ob"], labels)

    def step(p, m, v, t, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        g = {k: (0.1 * gk if k.startswith("p") else gk) for k, gk in g.items()}
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v
    dims = [32, 64, 64, 64]
    p = {"out": S(64, 10), "ob": S(10)}
    for i in range(3):
        p.update({"w%d" % i: S(dims[i], dims[i + 1]), "b%d" % i: S(dims[i + 1]),
                  "g%d" % i: S(dims[i + 1]), "bb%d" % i: S(dims[i + 1]), "pa%d" % i: S(6),
                  "pb%d" % i: S(4)})
    return step, (p, p, p, S(), S(16, 32), S(16, dtype=I32))


# ----------------------------------------------------------------------------- control


def lbfgs_two_loop_history_fori():
    """Full-batch L-BFGS on a small MLP classifier with flattened parameters (ravel_pytree): the
    search direction from the two-loop recursion over a circular history of six (s, y) pairs
    (two fori_loops with masked entries), an Armijo backtracking line search in a while_loop,
    and a lax.cond that pushes the new pair into the history with dynamic_update_slice only
    when the curvature s.y is positive."""
    from jax.flatten_util import ravel_pytree
    shapes = {"w1": (24, 16), "b1": (16,), "w2": (16, 4), "b2": (4,)}
    M = 6

    def model_loss(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        reg = 1e-3 * (jnp.sum(jnp.square(p["w1"])) + jnp.sum(jnp.square(p["w2"])))
        return _xent(h @ p["w2"] + p["b2"], y) + reg

    def step(flat, Sh, Yh, rho, k, x, y):
        _, unravel = ravel_pytree({n: jnp.zeros(s) for n, s in shapes.items()})
        f = lambda w: model_loss(unravel(w), x, y)
        l, g = jax.value_and_grad(f)(flat)
        nh = jnp.minimum(k, M)

        def loop1(i, c):
            q, al = c
            j = (k - 1 - i) % M
            a = jnp.where(i < nh, rho[j] * jnp.dot(Sh[j], q), 0.0)
            return q - a * Yh[j], al.at[j].set(a)
        q, al = lax.fori_loop(0, M, loop1, (g, jnp.zeros((M,), F32)))
        jl = (k - 1) % M
        gamma = jnp.where(k > 0, jnp.dot(Sh[jl], Yh[jl]) / (jnp.dot(Yh[jl], Yh[jl]) + 1e-10), 1e-2)

        def loop2(i, r):
            j = (k - nh + i) % M
            beta = rho[j] * jnp.dot(Yh[j], r)
            return r + jnp.where(i < nh, al[j] - beta, 0.0) * Sh[j]
        d = -lax.fori_loop(0, M, loop2, gamma * q)
        gd = jnp.dot(g, d)

        def cond(c):
            st, fn, it = c
            return (fn > l + 1e-4 * st * gd) & (it < 20)

        def body(c):
            st, _, it = c
            st = 0.5 * st
            return st, f(flat + st * d), it + 1
        st, fnew, its = lax.while_loop(cond, body, (jnp.ones((), F32), f(flat + d),
                                                     jnp.zeros((), I32)))
        new = flat + st * d
        s, yv = new - flat, jax.grad(f)(new) - g
        sy = jnp.dot(s, yv)

        def push(c):
            Sh, Yh, rho, k = c
            j = k % M
            Sh = lax.dynamic_update_slice(Sh, s[None], (j, 0))
            Yh = lax.dynamic_update_slice(Yh, yv[None], (j, 0))
            return Sh, Yh, rho.at[j].set(1.0 / sy), k + 1
        Sh, Yh, rho, k = lax.cond(sy > 1e-10, push, lambda c: c, (Sh, Yh, rho, k))
        return fnew, its, new, Sh, Yh, rho, k
    n = 24 * 16 + 16 + 16 * 4 + 4
    return step, (S(n), S(M, n), S(M, n), S(M), S(dtype=I32), S(64, 24), S(64, dtype=I32))


# ----------------------------------------------------------------------------- sort / top_k


def ohem_topk_focal_segmentation():
    """Semantic segmentation with online hard example mining: a small dilated FCN at half
    resolution, bilinear upsampling of the logits, per-pixel focal loss with an ignore label
    (255), and per image only the quarter of pixels with the largest loss (lax.top_k over the
    flattened map) contribute; pixel accuracy reported; Adam."""
    def loss(p, img, labels):
        h = jax.nn.relu(_conv(img, p["c1"]) + p["b1"])
        h = jax.nn.relu(_conv(h, p["c2"], 2) + p["b2"])
        h = jax.nn.relu(lax.conv_general_dilated(h, p["c3"], (1, 1), "SAME", rhs_dilation=(2, 2),
                                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
                        + p["b3"])
        z = _conv(h, p["cls"]) + p["cb"]
        n, hh, ww, C = z.shape
        z = jax.image.resize(z, (n, 2 * hh, 2 * ww, C), "bilinear")
        valid = labels != 255
        lab = jnp.where(valid, labels, 0)
        lp = jnp.take_along_axis(jax.nn.log_softmax(z, -1), lab[..., None], -1)[..., 0]
        focal = -jnp.square(1 - jnp.exp(lp)) * lp * valid
        flat = focal.reshape(n, -1)
        top, _ = lax.top_k(flat, flat.shape[1] // 4)
        acc = jnp.sum((jnp.argmax(z, -1) == lab) * valid) / jnp.maximum(jnp.sum(valid), 1)
        return jnp.mean(top), acc

    def step(p, m, v, t, img, labels):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, acc, p, m, v
    p = {"c1": S(3, 3, 3, 16), "b1": S(16), "c2": S(3, 3, 16, 32), "b2": S(32),
         "c3": S(3, 3, 32, 32), "b3": S(32), "cls": S(1, 1, 32, 6), "cb": S(6)}
    return step, (p, p, p, S(), S(8, 32, 32, 3), S(8, 32, 32, dtype=I32))


def dgcnn_edgeconv_knn_topk():
    """DGCNN point-cloud classifier: points are rotated by passed-in matrices, then two EdgeConv
    layers each build a k-nearest-neighbour graph (lax.top_k of negative squared distances, in
    input space and then dynamically in feature space), gather neighbour features, apply an MLP
    to [x_i, x_j - x_i] and max over the neighbours; concatenated features, global max and mean
    pooling, an MLP head with label smoothing; Adam."""
    def knn(f, k):
        inner = jnp.einsum("bnc,bmc->bnm", f, f)
        sq = jnp.sum(f * f, -1)
        _, idx = lax.top_k(2 * inner - sq[:, :, None] - sq[:, None, :], k)
        return idx

    def edgeconv(q, f, k):
        idx = knn(lax.stop_gradient(f), k)
        nb = jax.vmap(lambda a, i: a[i])(f, idx)                         # [B,N,k,C]
        ctr = jnp.broadcast_to(f[:, :, None], nb.shape)
        e = jnp.concatenate([ctr, nb - ctr], -1)
        h = jax.nn.leaky_relu(_ln(e @ q["w1"], q["g1"], q["b1"]), 0.2)
        return jnp.max(jax.nn.leaky_relu(h @ q["w2"], 0.2), 2)

    def loss(p, pts, rot, labels):
        x = jnp.einsum("bnc,bcd->bnd", pts, rot)
        f1 = edgeconv(p["e1"], x, 8)
        f2 = edgeconv(p["e2"], f1, 8)
        h = jax.nn.leaky_relu(jnp.concatenate([f1, f2], -1) @ p["w3"], 0.2)
        g = jnp.concatenate([jnp.max(h, 1), jnp.mean(h, 1)], -1)
        g = jax.nn.leaky_relu(_ln(g @ p["f1"], p["gf"], p["bf"]), 0.2)
        logits = g @ p["f2"] + p["fb"]
        C = logits.shape[-1]
        tgt = jax.nn.one_hot(labels, C) * 0.8 + 0.2 / C
        return -jnp.mean(jnp.sum(tgt * jax.nn.log_softmax(logits, -1), -1))

    def step(p, m, v, t, pts, rot, labels):
        l, g = jax.value_and_grad(loss)(p, pts, rot, labels)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v
    p = {"e1": {"w1": S(6, 32), "g1": S(32), "b1": S(32), "w2": S(32, 32)},
         "e2": {"w1": S(64, 32), "g1": S(32), "b1": S(32), "w2": S(32, 32)},
         "w3": S(64, 128), "f1": S(256, 64), "gf": S(64), "bf": S(64), "f2": S(64, 10),
         "fb": S(10)}
    return step, (p, p, p, S(), S(8, 64, 3), S(8, 3, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- fft


def wiener_deconv_fft_learned_prior():
    """Non-blind deblurring with a learned Wiener filter: each image's blur kernel is zero-padded
    and circularly centred, the image and kernel go to the frequency domain by fft2, the
    deconvolution conj(K) Y / (|K|^2 + lambda |G|^2) uses a learned 3x3 regulariser filter G and a
    per-image lambda predicted by a small noise-estimation CNN; ifft2, a residual refinement CNN;
    L1 plus a Fourier-amplitude loss; Adam."""
    def loss(p, blurred, kern, sharp):
        B, Hh, Ww = blurred.shape
        kk = kern.shape[-1]
        kp = jnp.zeros((B, Hh, Ww)).at[:, :kk, :kk].set(kern)
        Kf = jnp.fft.fft2(jnp.roll(kp, (-(kk // 2), -(kk // 2)), (1, 2)))
        gp = jnp.roll(jnp.zeros((Hh, Ww)).at[:3, :3].set(p["reg"]), (-1, -1), (0, 1))
        Gf = jnp.fft.fft2(gp)
        h = jax.nn.relu(_conv(blurred[..., None], p["n1"], 2))
        h = jax.nn.relu(_conv(h, p["n2"], 2))
        lam = jax.nn.softplus(jnp.mean(h, (1, 2)) @ p["nl"] + p["nlb"])[:, 0]
        Yf = jnp.fft.fft2(blurred)
        den = jnp.square(jnp.abs(Kf)) + lam[:, None, None] * jnp.square(jnp.abs(Gf)) + 1e-4
        x = jnp.real(jnp.fft.ifft2(jnp.conj(Kf) * Yf / den))[..., None]
        r = jax.nn.relu(_conv(x, p["r1"]) + p["rb1"])
        r = jax.nn.relu(_conv(r, p["r2"]) + p["rb2"])
        out = (x + _conv(r, p["r3"]))[..., 0]
        l1 = jnp.mean(jnp.abs(out - sharp))
        amp = jnp.mean(jnp.abs(jnp.abs(jnp.fft.fft2(out)) - jnp.abs(jnp.fft.fft2(sharp))))
        return l1 + 0.01 * amp

    def step(p, m, v, t, blurred, kern, sharp):
        l, g = jax.value_and_grad(loss)(p, blurred, kern, sharp)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v
    p = {"reg": S(3, 3), "n1": S(3, 3, 1, 16), "n2": S(3, 3, 16, 16), "nl": S(16, 1),
         "nlb": S(1), "r1": S(3, 3, 1, 16), "rb1": S(16), "r2": S(3, 3, 16, 16), "rb2": S(16),
         "r3": S(3, 3, 16, 1)}
    return step, (p, p, p, S(), S(8, 32, 32), S(8, 7, 7), S(8, 32, 32))


# ----------------------------------------------------------------------------- linalg


def sparse_gp_titsias_cholesky_elbo():
    """Deep-kernel sparse Gaussian process regression with Titsias' collapsed variational bound:
    an MLP maps inputs to features, an RBF kernel with learned lengthscales over sixteen learned
    inducing points; Cholesky of K_mm, triangular solves for A = L^-1 K_mn / sigma, Cholesky of
    I + A A^T, and the bound's log-determinant, data-fit and trace terms; predictive means at
    test inputs reported; Adam."""
    from jax.scipy.linalg import solve_triangular

    def feat(p, x):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return h @ p["w2"] + p["b2"]

    def rbf(a, b, ls, var):
        d2 = jnp.sum(jnp.square(a[:, None] / ls - b[None] / ls), -1)
        return var * jnp.exp(-0.5 * d2)

    def loss(p, x, y, xs):
        f, fs = feat(p, x), feat(p, xs)
        N, M = f.shape[0], p["Z"].shape[0]
        ls = jax.nn.softplus(p["ls"]) + 1e-3
        var = jax.nn.softplus(p["var"]) + 1e-3
        s2 = jax.nn.softplus(p["noise"]) + 1e-4
        Kmm = rbf(p["Z"], p["Z"], ls, var) + 1e-4 * jnp.eye(M)
        Kmn = rbf(p["Z"], f, ls, var)
        L = jnp.linalg.cholesky(Kmm)
        A = solve_triangular(L, Kmn, lower=True) / jnp.sqrt(s2)
        LB = jnp.linalg.cholesky(jnp.eye(M) + A @ A.T)
        c = solve_triangular(LB, A @ y, lower=True) / jnp.sqrt(s2)
        elbo = (-0.5 * N * jnp.log(2 * jnp.pi) - jnp.sum(jnp.log(jnp.diagonal(LB)))
                - 0.5 * N * jnp.log(s2) - 0.5 * jnp.dot(y, y) / s2 + 0.5 * jnp.dot(c, c)
                - 0.5 * N * var / s2 + 0.5 * jnp.sum(jnp.square(A)))
        Ksm = rbf(fs, p["Z"], ls, var)
        tmp = solve_triangular(L.T, solve_triangular(LB.T, c, lower=False), lower=False)
        return -elbo / N, Ksm @ tmp

    def step(p, m, v, t, x, y, xs):
        (l, pred), g = jax.value_and_grad(loss, has_aux=True)(p, x, y, xs)
        p, m, v = _adam(p, m, v, g, t, lr=1e-2)
        return l, pred, p, m, v
    Fi, Hd, Dz, M = 12, 32, 8, 16
    p = {"w1": S(Fi, Hd), "b1": S(Hd), "w2": S(Hd, Dz), "b2": S(Dz), "Z": S(M, Dz), "ls": S(Dz),
         "var": S(), "noise": S()}
    return step, (p, p, p, S(), S(64, Fi), S(64), S(16, Fi))


def sylvester_flow_qr_triangular():
    """VAE with orthogonal Sylvester normalising flows: four flow steps z' = z + Q R1 tanh(R2 Q^T
    z + b), each Q orthogonal from jnp.linalg.qr of a learned square matrix (a batched QR), R1 and
    R2 amortised upper-triangular matrices from the encoder (triu mask, tanh diagonals), the
    log-determinant from the diagonals; the ELBO with the flow's log-det, Bernoulli decoder;
    Adam."""
    def loss(p, x, eps):
        h = jax.nn.softplus(x @ p["e1"] + p["eb1"])
        h = jax.nn.softplus(h @ p["e2"] + p["eb2"])
        mu, lv = h @ p["mu"] + p["mub"], h @ p["lv"] + p["lvb"]
        Z = mu.shape[-1]
        Kf = p["qraw"].shape[0]
        B = x.shape[0]
        Q, _ = jnp.linalg.qr(p["qraw"])                                  # [K,Z,Z]
        triu = jnp.triu(jnp.ones((Z, Z)), 1)
        eye = jnp.eye(Z)
        d1 = jnp.tanh(h @ p["d1"]).reshape(B, Kf, Z)
        d2 = jnp.tanh(h @ p["d2"]).reshape(B, Kf, Z)
        R1 = (h @ p["r1"]).reshape(B, Kf, Z, Z) * triu + d1[..., None] * eye
        R2 = (h @ p["r2"]).reshape(B, Kf, Z, Z) * triu + d2[..., None] * eye
        bq = (h @ p["bq"]).reshape(B, Kf, Z)
        z0 = mu + jnp.exp(0.5 * lv) * eps
        z, logdet = z0, 0.0
        for k in range(Kf):
            pre = jnp.einsum("bij,bj->bi", R2[:, k], z @ Q[k]) + bq[:, k]
            hp = jnp.tanh(pre)
            z = z + jnp.einsum("bij,bj->bi", R1[:, k], hp) @ Q[k].T
            logdet = logdet + jnp.sum(jnp.log(jnp.abs(1 + (1 - hp * hp) * d1[:, k] * d2[:, k])
                                              + 1e-8), -1)
        d = jax.nn.softplus(z @ p["g1"] + p["gb1"])
        d = jax.nn.softplus(d @ p["g2"] + p["gb2"])
        rec = jnp.sum(_bce(d @ p["g3"] + p["gb3"], x), -1)
        lq = jnp.sum(_log_normal(z0, mu, lv), -1)
        lp = jnp.sum(_log_normal(z, 0.0, 0.0), -1)
        return jnp.mean(rec + lq - logdet - lp)

    def step(p, m, v, t, x, eps):
        l, g = jax.value_and_grad(loss)(p, x, eps)
        p, m, v = _adam(p, m, v, g, t, lr=5e-4)
        return l, p, m, v
    D, H, Z, K = 64, 64, 8, 4
    p = {"e1": S(D, H), "eb1": S(H), "e2": S(H, H), "eb2": S(H), "mu": S(H, Z), "mub": S(Z),
         "lv": S(H, Z), "lvb": S(Z), "qraw": S(K, Z, Z), "d1": S(H, K * Z), "d2": S(H, K * Z),
         "r1": S(H, K * Z * Z), "r2": S(H, K * Z * Z), "bq": S(H, K * Z), "g1": S(Z, H),
         "gb1": S(H), "g2": S(H, H), "gb2": S(H), "g3": S(H, D), "gb3": S(D)}
    return step, (p, p, p, S(), S(16, D), S(16, Z))


# ----------------------------------------------------------------------------- scatter/gather


def submanifold_sparse_conv_grid_lookup():
    """Submanifold sparse 3-D convolution for voxel segmentation: per scene (vmapped) the active
    voxels are scattered into a dense 16^3 index grid (.at[].set), each voxel's 27 neighbours are
    looked up (offsets built in the step, out-of-bounds and empty sites masked), neighbour
    features gathered and contracted with a [27, Cin, Cout] kernel; three layers with a residual
    and LayerNorm, per-voxel cross-entropy over valid voxels; Adam."""
    G = 16

    def neighbours(coords):
        N = coords.shape[0]
        r = jnp.arange(-1, 2)
        offs = jnp.stack(jnp.meshgrid(r, r, r, indexing="ij"), -1).reshape(27, 3)
        lin = lambda c: (c[..., 0] * G + c[..., 1]) * G + c[..., 2]
        grid = jnp.full((G ** 3,), -1, I32).at[lin(coords)].set(jnp.arange(N, dtype=I32))
        nb = coords[:, None] + offs[None]
        inb = jnp.all((nb >= 0) & (nb < G), -1)
        return jnp.where(inb, grid[lin(jnp.clip(nb, 0, G - 1))], -1)

    def sconv(w, f, idx):
        g = f[jnp.maximum(idx, 0)] * (idx >= 0).astype(F32)[..., None]
        return jnp.einsum("nkc,kco->no", g, w)

    def scene(p, coords, feats, labels, valid):
        idx = neighbours(coords)
        h = jax.nn.relu(_ln(sconv(p["c1"], feats, idx), p["g1"], p["b1"]))
        h = h + jax.nn.relu(_ln(sconv(p["c2"], h, idx), p["g2"], p["b2"]))
        h = jax.nn.relu(_ln(sconv(p["c3"], h, idx), p["g3"], p["b3"]))
        logp = jax.nn.log_softmax(h @ p["cls"], -1)
        nll = -jnp.take_along_axis(logp, labels[:, None], -1)[:, 0]
        return jnp.sum(nll * valid), jnp.sum(valid)

    def loss(p, coords, feats, labels, valid):
        s, n = jax.vmap(lambda *a: scene(p, *a))(coords, feats, labels, valid)
        return jnp.sum(s) / jnp.maximum(jnp.sum(n), 1.0)

    def step(p, m, v, t, coords, feats, labels, valid):
        l, g = jax.value_and_grad(loss)(p, coords, feats, labels, valid)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v
    C = 16
    p = {"c1": S(27, 4, C), "g1": S(C), "b1": S(C), "c2": S(27, C, C), "g2": S(C), "b2": S(C),
         "c3": S(27, C, C), "g3": S(C), "b3": S(C), "cls": S(C, 8)}
    return step, (p, p, p, S(), S(4, 128, 3, dtype=I32), S(4, 128, 4), S(4, 128, dtype=I32),
                  S(4, 128))


# ----------------------------------------------------------------------------- dynamic slices


def compressive_transformer_segment_memory_dus():
    """Compressive Transformer language model over a 64-token sequence processed in four
    16-token segments by a fori_loop: each segment is cut from the embeddings by dynamic_slice,
    attends to [compressed memory, memory, itself (causal)], writes its logits into a buffer with
    dynamic_update_slice; the old memory is compressed 2x by a strided linear map into a rolling
    compressed-memory buffer (dynamic_update_slice), with an attention-reconstruction loss on
    stopped activations; next-token loss, Adam with clipping."""
    Ts, NS, H = 16, 4, 4

    def attend(q, x, ctx, mask):
        b, t, d = x.shape
        n = ctx.shape[1]
        dh = d // H
        Q = (x @ q["q"]).reshape(b, t, H, dh)
        K = (ctx @ q["k"]).reshape(b, n, H, dh)
        V = (ctx @ q["v"]).reshape(b, n, H, dh)
        s = jnp.einsum("bqhd,bkhd->bhqk", Q, K) / jnp.sqrt(float(dh))
        s = jnp.where(mask, s, -1e9)
        return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), V).reshape(b, t, d) @ q["o"]

    def loss(p, tok):
        B, T = tok.shape
        D = p["emb"].shape[1]
        V = p["emb"].shape[0]
        emb = p["emb"][tok]
        nm = 2 * Ts
        mask = jnp.concatenate([jnp.ones((Ts, nm), bool), jnp.tril(jnp.ones((Ts, Ts), bool))], 1)
        full = jnp.ones((Ts, Ts), bool)

        def seg(i, c):
            mem, cmem, logits, rec = c
            x = lax.dynamic_slice_in_dim(emb, i * Ts, Ts, 1) + p["pos"]
            h = _ln(x, p["g1"], p["b1"])
            ctx = jnp.concatenate([_ln(jnp.concatenate([cmem, mem], 1), p["g1"], p["b1"]), h], 1)
            x = x + attend(p, h, ctx, mask)
            x = x + jax.nn.gelu(_ln(x, p["g2"], p["b2"]) @ p["f1"]) @ p["f2"]
            lg = _ln(x, p["gf"], p["bf"]) @ p["emb"].T
            logits = lax.dynamic_update_slice(logits, lg, (0, i * Ts, 0))
            comp = mem.reshape(B, Ts // 2, 2 * D) @ p["comp"]
            qs, hs, ms = lax.stop_gradient((p, h, mem))
            rec = rec + jnp.mean(jnp.square(attend(qs, hs, ms, full)
                                            - attend(qs, hs, comp, full[:, :Ts // 2])))
            cmem = lax.dynamic_update_slice(jnp.roll(cmem, -(Ts // 2), 1), lax.stop_gradient(comp),
                                            (0, Ts // 2, 0))
            return lax.stop_gradient(x), cmem, logits, rec
        z = jnp.zeros((B, Ts, D))
        _, _, logits, rec = lax.fori_loop(0, NS, seg, (z, z, jnp.zeros((B, T, V)),
                                                       jnp.zeros((), F32)))
        return _xent(logits[:, :-1], tok[:, 1:]) + rec / NS

    def step(p, m, v, t, tok):
        l, g = jax.value_and_grad(loss)(p, tok)
        p, m, v = _adam(p, m, v, _global_clip(g, 0.5), t, lr=3e-4)
        return l, p, m, v
    D, V = 32, 64
    p = _attn_params({"emb": S(V, D), "pos": S(Ts, D), "g1": S(D), "b1": S(D), "g2": S(D),
                      "b2": S(D), "f1": S(D, 64), "f2": S(64, D), "gf": S(D), "bf": S(D),
                      "comp": S(2 * D, D)}, "", D)
    return step, (p, p, p, S(), S(8, Ts * NS, dtype=I32))


# ----------------------------------------------------------------------------- mixed precision


def bf16_vpred_minsnr_diffusion_unet():
    """Diffusion training step for a two-level UNet in bfloat16: cosine schedule alpha = cos(pi
    t / 2), v-prediction target alpha * eps - sigma * x0, min-SNR-5 loss weighting; bf16
    convolutions (outputs upcast) and matmuls with f32 accumulation, f32 GroupNorm, sinusoidal
    timestep embedding added in every residual block, bf16 self-attention at the 8x8 level; a static loss scale with
    a finiteness check that skips the update, Adam on f32 masters and an EMA of the weights."""
    def conv(x, w, stride=1):
        return lax.conv_general_dilated(x.astype(BF16), w.astype(BF16), (stride, stride), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC")).astype(F32)

    def mm(a, w):
        return jnp.einsum("...d,de->...e", a.astype(BF16), w.astype(BF16),
                          preferred_element_type=F32)

    def res(q, x, te):
        h = conv(jax.nn.silu(_gn(x, q["g1"], q["b1"])), q["c1"])
        h = h + mm(jax.nn.silu(te), q["t"])[:, None, None]
        h = conv(jax.nn.silu(_gn(h, q["g2"], q["b2"])), q["c2"])
        return (conv(x, q["sk"]) if "sk" in q else x) + h

    def self_attn(q, x):
        b, hh, ww, c = x.shape
        t = _gn(x, q["ga"], q["ba"]).reshape(b, hh * ww, c)
        Q, K, V = (mm(t, q[k]).astype(BF16) for k in ("q", "k", "v"))
        s = jnp.einsum("bqc,bkc->bqk", Q, K, preferred_element_type=F32) / jnp.sqrt(float(c))
        o = jnp.einsum("bqk,bkc->bqc", jax.nn.softmax(s, -1).astype(BF16), V,
                       preferred_element_type=F32)
        return x + mm(o, q["o"]).reshape(b, hh, ww, c)

    def loss(p, x0, eps, t):
        t = jnp.clip(t, 1e-3, 1 - 1e-3)
        a, s = jnp.cos(0.5 * jnp.pi * t), jnp.sin(0.5 * jnp.pi * t)
        A, Sg = a[:, None, None, None], s[:, None, None, None]
        xt = A * x0 + Sg * eps
        target = A * eps - Sg * x0
        half = 16
        freqs = jnp.exp(-jnp.log(10000.0) * jnp.arange(half, dtype=F32) / half)
        ang = 1000.0 * t[:, None] * freqs
        te = mm(jax.nn.silu(mm(jnp.concatenate([jnp.sin(ang), jnp.cos(ang)], -1), p["te1"])),
                p["te2"])
        h1 = res(p["r1"], conv(xt, p["cin"]), te)                      # [B,16,16,32]
        h2 = res(p["r2"], conv(h1, p["down"], 2), te)                  # [B,8,8,64]
        h2 = self_attn(p["attn"], h2)
        h3 = res(p["r3"], jnp.concatenate([_up2(h2), h1], -1), te)     # [B,16,16,32]
        out = conv(jax.nn.silu(_gn(h3, p["go"], p["bo"])), p["cout"])
        snr = jnp.square(a / s)
        w = jnp.minimum(snr, 5.0) / (snr + 1.0)
        return jnp.mean(w * jnp.mean(jnp.square(out - target), (1, 2, 3)))

    def step(p, m, v, ema, t_opt, x0, eps, t):
        scale = 1024.0
        l, g = jax.value_and_grad(lambda p: scale * loss(p, x0, eps, t))(p)
        g = tmap(lambda a: a / scale, g)
        ok = jnp.all(jnp.stack([jnp.all(jnp.isfinite(a)) for a in jax.tree_util.tree_leaves(g)]))
        g = tmap(lambda a: jnp.where(ok, a, 0.0), g)
        np_, nm, nv = _adam(p, m, v, g, t_opt, lr=2e-4)
        keep = lambda new, old: tmap(lambda a, b: jnp.where(ok, a, b), new, old)
        p, m, v = keep(np_, p), keep(nm, m), keep(nv, v)
        ema = tmap(lambda e, w: 0.999 * e + 0.001 * w, ema, p)
        return l / scale, ok, p, m, v, ema

    def rb(i, o, E=64):
        q = {"g1": S(i), "b1": S(i), "c1": S(3, 3, i, o), "t": S(E, o), "g2": S(o), "b2": S(o),
             "c2": S(3, 3, o, o)}
        if i != o:
            q["sk"] = S(1, 1, i, o)
        return q
    p = {"te1": S(32, 64), "te2": S(64, 64), "cin": S(3, 3, 3, 32), "r1": rb(32, 32),
         "down": S(3, 3, 32, 64), "r2": rb(64, 64),
         "attn": {"ga": S(64), "ba": S(64), "q": S(64, 64), "k": S(64, 64), "v": S(64, 64),
                  "o": S(64, 64)},
         "r3": rb(96, 32), "go": S(32), "bo": S(32), "cout": S(3, 3, 32, 3)}
    return step, (p, p, p, p, S(), S(8, 16, 16, 3), S(8, 16, 16, 3), S(8))


# ----------------------------------------------------------------------------- optimizers


def sm3_cover_accumulator_optimizer():
    """SM3-II optimiser on a character-CNN text classifier: every parameter tensor keeps one
    accumulator vector per axis (the cover), nu = min over the broadcast accumulators + g^2, each
    accumulator updated to the max of nu over the other axes, update g / sqrt(nu) with momentum;
    gradients clipped per tensor; the learning rate from a lax.switch over warmup, constant and
    cosine-decay phases."""
    def loss(p, tok, labels):
        e = p["emb"][tok]
        h = jax.nn.relu(_c1d(e, p["c1"]) + p["cb1"])
        h = jax.nn.relu(_c1d(h, p["c2"], 2) + p["cb2"])
        f = jnp.concatenate([jnp.max(h, 1), jnp.mean(h, 1)], -1)
        f = jax.nn.relu(f @ p["f1"] + p["fb1"])
        return _xent(f @ p["f2"] + p["fb2"], labels)

    def sm3(w, g, accs, mom, lr):
        nd = g.ndim
        nu = None
        for ax, a in enumerate(accs):
            shape = [1] * nd
            shape[ax] = g.shape[ax]
            ar = a.reshape(shape)
            nu = ar if nu is None else jnp.minimum(nu, ar)
        nu = nu + g * g
        new = tuple(jnp.max(nu, axis=tuple(i for i in range(nd) if i != ax)) for ax in range(nd))
        upd = jnp.where(nu > 0, g * lax.rsqrt(jnp.maximum(nu, 1e-30)), 0.0)
        mom = 0.9 * mom + upd
        return w - lr * mom, new, mom

    def step(p, acc, mom, t, tok, labels):
        l, g = jax.value_and_grad(loss)(p, tok, labels)
        g = _leaf_clip(g, 1.0)
        warm, total = 100.0, 2000.0
        phase = (t >= warm).astype(I32) + (t >= 0.5 * total).astype(I32)
        lr = lax.switch(phase, [
            lambda t: 0.1 * t / warm,
            lambda t: jnp.full((), 0.1, F32),
            lambda t: 0.05 * (1 + jnp.cos(jnp.pi * jnp.minimum((t - 0.5 * total) / (0.5 * total),
                                                                1.0)))], t)
        newp, newacc, newmom = {}, {}, {}
        for k in p:
            newp[k], newacc[k], newmom[k] = sm3(p[k], g[k], acc[k], mom[k], lr)
        return l, newp, newacc, newmom
    V, E, C = 64, 32, 64
    p = {"emb": S(V, E), "c1": S(5, E, C), "cb1": S(C), "c2": S(3, C, C), "cb2": S(C),
         "f1": S(2 * C, 64), "fb1": S(64), "f2": S(64, 8), "fb2": S(8)}
    acc = {k: tuple(S(n) for n in s.shape) for k, s in p.items()}
    return step, (p, acc, p, S(), S(16, 48, dtype=I32), S(16, dtype=I32))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [nalu_log_space_arithmetic_mlp, dlrm_pairwise_dot_interaction],
    "cnn": [hrnet_two_branch_exchange_fusion],
    "transformer": [nystromformer_landmark_pinv_attention],
    "rnn": [xlstm_slstm_exp_gate_stabilized_scan, phased_lstm_time_gate_scan],
    "moe": [dselect_k_smooth_step_moe],
    "vae": [vampprior_pseudo_input_mixture_vae, stick_breaking_kumaraswamy_vae],
    "unet": [unet_plus_plus_nested_dense_skips],
    "gnn": [rgcn_basis_decomposition_relations],
    "quant": [apot_additive_powers_two_quant],
    "remat": [remat_scanned_normformer_named_saves, remat_nested_pvt_spatial_reduction],
    "custom_vjp": [pade_rational_activation_custom_vjp],
    "control": [lbfgs_two_loop_history_fori],
    "sort": [ohem_topk_focal_segmentation, dgcnn_edgeconv_knn_topk],
    "fft": [wiener_deconv_fft_learned_prior],
    "linalg": [sparse_gp_titsias_cholesky_elbo, sylvester_flow_qr_triangular],
    "scatter_gather": [submanifold_sparse_conv_grid_lookup],
    "dynamic": [compressive_transformer_segment_memory_dus],
    "mixed": [bf16_vpred_minsnr_diffusion_unet],
    "optimizer": [sm3_cover_accumulator_optimizer],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["nystromformer_landmark_pinv_attention", "hrnet_two_branch_exchange_fusion",
           "xlstm_slstm_exp_gate_stabilized_scan", "dselect_k_smooth_step_moe",
           "unet_plus_plus_nested_dense_skips", "remat_scanned_normformer_named_saves",
           "remat_nested_pvt_spatial_reduction", "ohem_topk_focal_segmentation",
           "dgcnn_edgeconv_knn_topk", "compressive_transformer_segment_memory_dus",
           "bf16_vpred_minsnr_diffusion_unet", "dlrm_pairwise_dot_interaction"]
SHARDED_SET = ["remat_scanned_normformer_named_saves", "dlrm_pairwise_dot_interaction",
               "nystromformer_landmark_pinv_attention", "bf16_vpred_minsnr_diffusion_unet",
               "dselect_k_smooth_step_moe", "vampprior_pseudo_input_mixture_vae",
               "sm3_cover_accumulator_optimizer", "hrnet_two_branch_exchange_fusion"]
