"""Twenty-fourth fresh set: 25 JAX programs written by a helper on 2026-11-29, kept outside the
repository as a held-out set, measured unseen at the start and end of that day's seventh session
and committed then (docstring kept at 3 lines: the dumps record line numbers)::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh24_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh24_programs python benchmarks/accuracy.py --data DIR

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


def deep_hedging_shared_policy_mlp_cvar_rockafellar_uryasev_hedger():
    """Deep hedging (Buehler et al.) of a short at-the-money basket call on two assets over 24
    rebalancing dates: passed-in simulated log-price paths and a per-path realised-variance
    feature; at every date one shared three-layer ReLU MLP maps (time to maturity, both
    log-prices, current holdings, variance) to new holdings bounded by 1.5 tanh; the
    rebalancing is unrolled in Python, with proportional transaction costs on every change
    of holdings and on the final liquidation; the terminal P&L is a trainable premium plus
    the hedging gains minus the payoff and the costs; the risk measure is CVaR at level 0.05
    in the Rockafellar-Uryasev form w + E[(-PnL - w)+] / alpha with the VaR level w a
    trainable scalar; Adam with step decay; the mean P&L is returned."""
    NT, NA, HID, ALPHA, COST, T_MAT = 24, 2, 64, 0.05, 2e-3, 0.5

    def policy(q, feat):
        h = jax.nn.relu(feat @ q["w1"] + q["b1"])
        h = jax.nn.relu(h @ q["w2"] + q["b2"])
        return 1.5 * jnp.tanh(h @ q["w3"] + q["b3"])

    def loss(p, logs, var):
        B = logs.shape[0]
        s = jnp.exp(logs)
        hold = jnp.zeros((B, NA))
        gains = costs = jnp.zeros((B,))
        for k in range(NT):
            tau = jnp.full((B, 1), (NT - k) / NT * T_MAT)
            new = policy(p["pol"], jnp.concatenate([tau, logs[:, k], hold, var], -1))
            costs = costs + COST * jnp.sum(jnp.abs(new - hold) * s[:, k], -1)
            gains = gains + jnp.sum(new * (s[:, k + 1] - s[:, k]), -1)
            hold = new
        costs = costs + COST * jnp.sum(jnp.abs(hold) * s[:, -1], -1)
        payoff = jnp.maximum(jnp.mean(s[:, -1], -1) - 1.0, 0.0)
        pnl = p["premium"] + gains - payoff - costs
        cvar = p["w"] + jnp.mean(jax.nn.relu(-pnl - p["w"])) / ALPHA
        return cvar, jnp.mean(pnl)

    def step(p, m, v, t, logs, var):
        (l, mean_pnl), g = jax.value_and_grad(loss, has_aux=True)(p, logs, var)
        lr = 1e-3 * 0.5 ** jnp.floor(t / 2000.0)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr)
        return l, mean_pnl, p, m, v
    fin = 1 + 2 * NA + 1
    pol = {"w1": S(fin, HID), "b1": S(HID), "w2": S(HID, HID), "b2": S(HID), "w3": S(HID, NA),
           "b3": S(NA)}
    p = {"pol": pol, "premium": S(), "w": S()}
    B = 256
    return step, (p, p, p, S(), S(B, NT + 1, NA), S(B, 1))


def pinn_tanh_mlp_heat_equation_forward_over_reverse_residual_boundary_fit():
    """Physics-informed neural network (Raissi et al.) for the inverse 2-D heat equation
    u_t = kappa (u_xx + u_yy) on the unit square: a tanh MLP (3 -> 64 -> 64 -> 64 -> 1) maps
    (t, x, y) to u; at 512 collocation points the PDE residual uses u_t from jax.grad and
    the two second derivatives by forward-over-reverse differentiation (jax.jvp of jax.grad
    along the x and y unit vectors), all vmapped over points; the diffusivity is learned in
    log space; the loss adds the squared residual, the initial condition sin(pi x) sin(pi y)
    at 128 points, zero Dirichlet values at 128 boundary points and 128 noisy interior
    observations; Adam with exponential decay; the learned kappa is returned."""
    WIDTHS = (3, 64, 64, 64)
    EX, EY = np.array([0.0, 1.0, 0.0], np.float32), np.array([0.0, 0.0, 1.0], np.float32)

    def u(q, z):
        h = z
        for w, b in q["layers"]:
            h = jnp.tanh(h @ w + b)
        return (h @ q["out"])[0] + q["ob"]

    def residual(q, kappa, z):
        du = jax.grad(u, 1)
        d1 = du(q, z)
        uxx = jax.jvp(lambda a: du(q, a), (z,), (EX,))[1][1]
        uyy = jax.jvp(lambda a: du(q, a), (z,), (EY,))[1][2]
        return d1[0] - kappa * (uxx + uyy)

    def loss(p, col, init, bnd, obs, uobs):
        kappa = jnp.exp(p["log_kappa"])
        q = p["net"]
        r = jax.vmap(lambda z: residual(q, kappa, z))(col)
        ui = jax.vmap(lambda z: u(q, z))(init)
        target = jnp.sin(jnp.pi * init[:, 1]) * jnp.sin(jnp.pi * init[:, 2])
        ub = jax.vmap(lambda z: u(q, z))(bnd)
        uo = jax.vmap(lambda z: u(q, z))(obs)
        lp = jnp.mean(jnp.square(r))
        l = lp + jnp.mean(jnp.square(ui - target)) + jnp.mean(jnp.square(ub)) + \
            jnp.mean(jnp.square(uo - uobs))
        return l, (lp, kappa)

    def step(p, m, v, t, col, init, bnd, obs, uobs):
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, col, init, bnd, obs, uobs)
        lr = 1e-3 * 0.9 ** (t / 1000.0)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr)
        return l, aux, p, m, v
    layers = [(S(a, b), S(b)) for a, b in zip(WIDTHS[:-1], WIDTHS[1:])]
    p = {"net": {"layers": layers, "out": S(WIDTHS[-1], 1), "ob": S()}, "log_kappa": S()}
    return step, (p, p, p, S(), S(512, 3), S(128, 3), S(128, 3), S(128, 3), S(128))


# ----------------------------------------------------------------------------- cnn


def resnest_split_attention_radix_groups_cardinal_softmax_classifier():
    """ResNeSt (Zhang et al.) on 32x32 images: a deep stem of three 3x3 convs (16 / 16 / 32);
    three stages of one bottleneck each (outputs 64 / 128 / 256, bottleneck widths 32 / 64 /
    128) whose middle layer is split attention with radix 2 and cardinality 2 -- a grouped
    3x3 conv (feature_group_count 4) to radix x width channels, BN and ReLU, the radix splits
    summed and globally pooled, two grouped dense layers (einsum over the cardinal groups)
    giving per-split logits and an r-softmax over the radix axis inside each cardinal group
    that weights the splits; strided blocks average-pool 3x3 / 2 after the split attention
    and use the ResNet-D shortcut (2x2 average pooling then a 1x1 conv and BN); global
    pooling and a linear head; label-smoothed cross-entropy; SGD with Nesterov momentum,
    weight decay and cosine decay; BN batch statistics returned."""
    R, K = 2, 2

    def bn(q, x, stats, relu=True):
        h, st = _bn(x, q["g"], q["b"], (0, 1, 2))
        stats.append(st)
        return jax.nn.relu(h) if relu else h

    def split_attention(q, x, stats):
        B = x.shape[0]
        u = bn(q["n"], _conv(x, q["w"], groups=K * R), stats)
        w = u.shape[-1] // R
        splits = u.reshape(*u.shape[:3], R, w)
        gap = jnp.mean(jnp.sum(splits, 3), (1, 2)).reshape(B, K, w // K)
        a = jax.nn.relu(jnp.einsum("bkc,kci->bki", gap, q["fc1"]) + q["fb1"])
        logits = (jnp.einsum("bki,kio->bko", a, q["fc2"]) + q["fb2"]).reshape(B, K, R, w // K)
        att = jax.nn.softmax(logits, 2).transpose(0, 2, 1, 3).reshape(B, R, w)
        return jnp.sum(splits * att[:, None, None], 3)

    def avgpool(x, k, s, pad):
        ones = jnp.ones(x.shape[1:3])[None, :, :, None]
        win, st = (1, k, k, 1), (1, s, s, 1)
        tot = lax.reduce_window(x, 0.0, lax.add, win, st, pad)
        cnt = lax.reduce_window(ones, 0.0, lax.add, win, st, pad)
        return tot / cnt

    def block(q, x, stats, stride):
        h = bn(q["n1"], _conv(x, q["c1"]), stats)
        h = split_attention(q["sa"], h, stats)
        if stride > 1:
            h = avgpool(h, 3, 2, "SAME")
        h = bn(q["n3"], _conv(h, q["c3"]), stats, relu=False)
        sc = x
        if stride > 1:
            sc = avgpool(sc, 2, 2, "VALID")
        if "sc" in q:
            sc = bn(q["ns"], _conv(sc, q["sc"]), stats, relu=False)
        return jax.nn.relu(h + sc)

    def loss(p, img, labels):
        stats = []
        x = img
        for w, q in zip(p["stem"], p["stem_n"]):
            x = bn(q, _conv(x, w), stats)
        for i, q in enumerate(p["blocks"]):
            x = block(q, x, stats, 1 if i == 0 else 2)
        logits = jnp.mean(x, (1, 2)) @ p["fc"] + p["fcb"]
        return _smooth_xent(logits, labels), stats

    def step(p, mom, t, img, labels):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels)
        lr = _cosine_lr(t, 0.1, 60000.0, warm=1000.0)
        g = tmap(lambda g, w: g + (1e-4 * w if w.ndim >= 2 else 0.0), g, p)
        mom = tmap(lambda b, g: 0.9 * b + g, mom, g)
        p = tmap(lambda w, g, b: w - lr * (g + 0.9 * b), p, g, mom)
        return l, stats, p, mom

    def nb(c):
        return {"g": S(c), "b": S(c)}
    blocks, ci = [], 32
    for co in (64, 128, 256):
        w = co // 2
        inter = max(w * R // 4, 32)
        q = {"c1": S(1, 1, ci, w), "n1": nb(w),
             "sa": {"w": S(3, 3, w // (K * R), w * R), "n": nb(w * R),
                    "fc1": S(K, w // K, inter // K), "fb1": S(K, inter // K),
                    "fc2": S(K, inter // K, R * w // K), "fb2": S(K, R * w // K)},
             "c3": S(1, 1, w, co), "n3": nb(co), "sc": S(1, 1, ci, co), "ns": nb(co)}
        blocks.append(q)
        ci = co
    p = {"stem": [S(3, 3, 3, 16), S(3, 3, 16, 16), S(3, 3, 16, 32)],
         "stem_n": [nb(16), nb(16), nb(32)], "blocks": blocks, "fc": S(256, 100),
         "fcb": S(100)}
    return step, (p, p, S(), S(16, 32, 32, 3), S(16, dtype=I32))


def xception_entry_flow_separable_convs_strided_maxpool_residual_classifier():
    """Xception (Chollet) scaled to 32x32 images: an entry flow of two 3x3 conv-BN-ReLU layers
    (32 / 64) and three modules of [ReLU] separable conv - BN - ReLU - separable conv - BN
    followed by a 3x3 stride-2 max pool with SAME padding, each added to a strided 1x1
    conv-BN shortcut (widths 64 / 128 / 256); two middle-flow modules of three ReLU -
    separable conv - BN layers with identity residuals; an exit flow of a separable conv
    to 384, BN, ReLU, global pooling, dropout with a passed-in raw key and a linear head;
    every separable conv is a 3x3 depthwise conv (feature_group_count = channels) and a
    pointwise matmul; cross-entropy; SGD with momentum and polynomial decay; BN batch
    statistics returned."""

    def bn(q, x, stats, relu=False):
        h, st = _bn(x, q["g"], q["b"], (0, 1, 2))
        stats.append(st)
        return jax.nn.relu(h) if relu else h

    def sep(q, x):
        return _conv(x, q["dw"], groups=x.shape[-1]) @ q["pw"]

    def entry(q, x, stats, first):
        h = x if first else jax.nn.relu(x)
        h = bn(q["n1"], sep(q["s1"], h), stats, relu=True)
        h = bn(q["n2"], sep(q["s2"], h), stats)
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
        return h + bn(q["ns"], _conv(x, q["sc"], 2), stats)

    def middle(q, x, stats):
        h = x
        for s, n in zip(q["s"], q["n"]):
            h = bn(n, sep(s, jax.nn.relu(h)), stats)
        return x + h

    def loss(p, img, labels, key):
        stats = []
        x = bn(p["n1"], _conv(img, p["c1"]), stats, relu=True)
        x = bn(p["n2"], _conv(x, p["c2"]), stats, relu=True)
        for i, q in enumerate(p["entry"]):
            x = entry(q, x, stats, i == 0)
        for q in p["middle"]:
            x = middle(q, x, stats)
        x = bn(p["ne"], sep(p["exit"], x), stats, relu=True)
        h = jnp.mean(x, (1, 2))
        h = jnp.where(jax.random.bernoulli(key, 0.5, h.shape), h * 2.0, 0.0)
        return _xent(h @ p["fc"] + p["fcb"], labels), stats

    def step(p, mom, t, img, labels, key):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels, key)
        lr = 0.045 * jnp.square(1.0 - jnp.minimum(t / 80000.0, 1.0))
        mom = tmap(lambda b, g, w: 0.9 * b + g + 1e-5 * w, mom, g, p)
        p = tmap(lambda w, b: w - lr * b, p, mom)
        return l, stats, p, mom

    def nb(c):
        return {"g": S(c), "b": S(c)}

    def sp(ci, co):
        return {"dw": S(3, 3, 1, ci), "pw": S(ci, co)}
    entry_p, ci = [], 64
    for co in (64, 128, 256):
        entry_p.append({"s1": sp(ci, co), "n1": nb(co), "s2": sp(co, co), "n2": nb(co),
                        "sc": S(1, 1, ci, co), "ns": nb(co)})
        ci = co
    middle_p = [{"s": [sp(256, 256) for _ in range(3)], "n": [nb(256) for _ in range(3)]}
                for _ in range(2)]
    p = {"c1": S(3, 3, 3, 32), "n1": nb(32), "c2": S(3, 3, 32, 64), "n2": nb(64),
         "entry": entry_p, "middle": middle_p, "exit": sp(256, 384), "ne": nb(384),
         "fc": S(384, 100), "fcb": S(100)}
    return step, (p, p, S(), S(16, 32, 32, 3), S(16, dtype=I32), S(2, dtype=U32))


# ----------------------------------------------------------------------------- transformer


def bigbird_block_sparse_window_global_random_blocks_mlm_encoder():
    """BigBird (Zaheer et al.) masked-language-model encoder over 256 tokens in 16 blocks of
    16: every query block attends to its sliding window of three blocks (neighbours gathered
    with jnp.roll, wrapped-around blocks masked), to the global first block and to two
    random blocks whose indices are a fixed numpy draw per layer (gathered from the blocked
    keys and values), while the global first block attends densely to the whole sequence
    and replaces its block of the output; two post-LN BERT layers (4 heads, GELU, width
    128) with learned positions and token-type embeddings; the masked-LM head (dense, GELU,
    LayerNorm, tied decoder with bias) is scored only at the passed-in masked positions;
    AdamW with linear warmup and decay."""
    V, D, H, T, BS, NR, NL = 1000, 128, 4, 256, 16, 2, 2
    NB, DH = T // BS, D // H
    rng = np.random.RandomState(24)
    RAND = []
    for _ in range(NL):
        rows = []
        for i in range(NB):
            cand = [j for j in range(1, NB) if abs(j - i) > 1]
            rows.append(rng.choice(cand, NR, replace=False))
        RAND.append(np.asarray(rows, np.int32))
    bi = np.arange(NB)
    WIN_OK = np.stack([bi > 1, np.ones(NB, bool), bi < NB - 1], 1)
    KEY_OK = np.concatenate([np.repeat(WIN_OK, BS, 1), np.ones((NB, (1 + NR) * BS), bool)], 1)

    def attention(q, x, rand):
        b = x.shape[0]
        qq, kk, vv = ((x @ q[n] + q[n + "b"]).reshape(b, NB, BS, H, DH).transpose(0, 3, 1, 2, 4)
                      for n in ("wq", "wk", "wv"))

        def gathered(a):
            win = [jnp.roll(a, 1, 2), a, jnp.roll(a, -1, 2)]
            glob = jnp.broadcast_to(a[:, :, :1], a.shape)
            rnd = [a[:, :, rand[:, r]] for r in range(NR)]
            return jnp.concatenate(win + [glob] + rnd, 3)
        ks, vs = gathered(kk), gathered(vv)
        s = jnp.einsum("bhnqd,bhnkd->bhnqk", qq, ks) / math.sqrt(DH)
        s = jnp.where(KEY_OK[None, None, :, None, :], s, -1e9)
        o = jnp.einsum("bhnqk,bhnkd->bhnqd", jax.nn.softmax(s, -1), vs)
        kf, vf = kk.reshape(b, H, T, DH), vv.reshape(b, H, T, DH)
        sg = jnp.einsum("bhqd,bhkd->bhqk", qq[:, :, 0], kf) / math.sqrt(DH)
        og = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(sg, -1), vf)
        o = jnp.concatenate([og[:, :, None], o[:, :, 1:]], 2)
        return o.transpose(0, 2, 3, 1, 4).reshape(b, T, D) @ q["wo"] + q["wob"]

    def loss(p, tok, seg, mpos, mlab, mw):
        x = p["emb"][tok] + p["pos"] + p["type"][seg]
        x = _ln(x, p["eg"], p["eb"])
        for li, q in enumerate(p["layers"]):
            x = _ln(x + attention(q, x, RAND[li]), q["g1"], q["b1"])
            x = _ln(x + jax.nn.gelu(x @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"], q["g2"], q["b2"])
        h = jnp.take_along_axis(x, mpos[..., None], 1)
        h = _ln(jax.nn.gelu(h @ p["mt"] + p["mtb"]), p["mg"], p["mb"])
        logits = h @ p["emb"].T + p["ob"]
        nll = -jnp.take_along_axis(jax.nn.log_softmax(logits, -1), mlab[..., None], -1)[..., 0]
        return jnp.sum(nll * mw) / jnp.maximum(jnp.sum(mw), 1.0)

    def step(p, m, v, t, tok, seg, mpos, mlab, mw):
        l, g = jax.value_and_grad(loss)(p, tok, seg, mpos, mlab, mw)
        lr = 1e-4 * jnp.minimum((t + 1.0) / 10000.0, jnp.maximum(0.0, 1.0 - t / 500000.0))
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, wd=0.01)
        return l, p, m, v
    q = {"wq": S(D, D), "wqb": S(D), "wk": S(D, D), "wkb": S(D), "wv": S(D, D), "wvb": S(D),
         "wo": S(D, D), "wob": S(D), "g1": S(D), "b1": S(D), "f1": S(D, 4 * D), "fb1": S(4 * D),
         "f2": S(4 * D, D), "fb2": S(D), "g2": S(D), "b2": S(D)}
    p = {"emb": S(V, D), "pos": S(T, D), "type": S(2, D), "eg": S(D), "eb": S(D),
         "layers": [dict(q) for _ in range(NL)], "mt": S(D, D), "mtb": S(D), "mg": S(D),
         "mb": S(D), "ob": S(V)}
    B, NM = 8, 40
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, T, dtype=I32), S(B, NM, dtype=I32),
                  S(B, NM, dtype=I32), S(B, NM))


def music_transformer_relative_attention_skewing_trick_event_lm():
    """Music Transformer (Huang et al.) over MIDI-like performance events (128 note-on, 128
    note-off, 100 time-shift and 32 velocity tokens, 388 in all), 64-event windows: causal
    self-attention with relative position embeddings computed by the memory-efficient
    skewing trick -- the queries are multiplied by a per-layer table of 64 relative
    embeddings (shared by the heads), the [b, h, 64, 64] result is left-padded with a zero
    column, reshaped to [b, h, 65, 64] and its first row dropped, giving S_rel aligned with
    the absolute keys; three pre-LN layers (width 128, 8 heads, ReLU FFN of 512, dropout
    with a passed-in raw key); label-smoothed cross-entropy; Adam (b2 0.98) with the
    inverse-square-root Noam schedule."""
    V, D, H, T, F, NL, WARM = 388, 128, 8, 64, 512, 3, 4000.0
    DH = D // H

    def skew(qe):
        b, h, t, _ = qe.shape
        padded = jnp.pad(qe, ((0, 0), (0, 0), (0, 0), (1, 0)))
        return padded.reshape(b, h, t + 1, t)[:, :, 1:]

    def attn(q, x, keep):
        b, t, d = x.shape
        qq = (x @ q["wq"]).reshape(b, t, H, DH).transpose(0, 2, 1, 3)
        kk = (x @ q["wk"]).reshape(b, t, H, DH).transpose(0, 2, 1, 3)
        vv = (x @ q["wv"]).reshape(b, t, H, DH).transpose(0, 2, 1, 3)
        srel = skew(jnp.einsum("bhqd,rd->bhqr", qq, q["er"]))
        s = (jnp.einsum("bhqd,bhkd->bhqk", qq, kk) + srel) / math.sqrt(DH)
        s = jnp.where(_causal(t)[None, None], s, -1e9)
        a = jax.nn.softmax(s, -1)
        a = jnp.where(keep, a / 0.9, 0.0)
        o = jnp.einsum("bhqk,bhkd->bqhd", a, vv).reshape(b, t, d)
        return o @ q["wo"]

    def loss(p, tok, tgt, key):
        keys = jax.random.split(key, NL)
        x = p["emb"][tok] * math.sqrt(D)
        for q, k in zip(p["layers"], keys):
            keep = jax.random.bernoulli(k, 0.9, (tok.shape[0], H, T, T))
            x = x + attn(q, _ln(x, q["g1"], q["b1"]), keep)
            h = _ln(x, q["g2"], q["b2"])
            x = x + jax.nn.relu(h @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]
        logits = _ln(x, p["gf"], p["bf"]) @ p["out"]
        return _smooth_xent(logits, tgt)

    def step(p, m, v, t, tok, tgt, key):
        l, g = jax.value_and_grad(loss)(p, tok, tgt, key)
        s = t + 1.0
        lr = D ** -0.5 * jnp.minimum(s ** -0.5, s * WARM ** -1.5)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr, b2=0.98, eps=1e-9)
        return l, p, m, v
    q = {"g1": S(D), "b1": S(D), "wq": S(D, D), "wk": S(D, D), "wv": S(D, D), "wo": S(D, D),
         "er": S(T, DH), "g2": S(D), "b2": S(D), "f1": S(D, F), "fb1": S(F), "f2": S(F, D),
         "fb2": S(D)}
    p = {"emb": S(V, D), "layers": [dict(q) for _ in range(NL)], "gf": S(D), "bf": S(D),
         "out": S(D, V)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T, dtype=I32), S(2, dtype=U32))


# ----------------------------------------------------------------------------- rnn / scan


def hyperlstm_hypernetwork_weight_scaling_char_lm_scan():
    """HyperLSTM (Ha et al., HyperNetworks) character language model: at every step a small
    hyper-LSTM (32 units) reads the character embedding and the main LSTM's previous hidden
    state; its hidden state is projected to 8-dim embeddings z per gate for the input
    weights, the recurrent weights and the bias, which are linearly expanded (no bias) to
    per-unit scaling vectors d that multiply the main LSTM's (256 units) W_x x and W_h h
    row-wise, plus a dynamic bias; the main gates are layer-normalised per gate before the
    nonlinearities and the cell state is layer-normalised before the output tanh; both
    LSTMs run in one time-major lax.scan over 64 characters; a 128-way softmax; cross-entropy
    in bits per character; Adam with global-norm clipping."""
    V, E, N, NH, NZ, T = 128, 64, 256, 32, 8, 64

    def ln(x, g, b):
        return _ln(x, g, b)

    def cell(p, carry, x):
        h, c, hh, hc = carry
        hq = p["hyper"]
        zin = jnp.concatenate([x, h], -1)
        hi, hf, hg, ho = jnp.split(zin @ hq["wx"] + hh @ hq["wh"] + hq["b"], 4, -1)
        hc = jax.nn.sigmoid(hf + 1.0) * hc + jax.nn.sigmoid(hi) * jnp.tanh(hg)
        hh = jax.nn.sigmoid(ho) * jnp.tanh(hc)
        zx = (hh @ p["zx"] + p["zxb"]).reshape(-1, 4, NZ)
        zh = (hh @ p["zh"] + p["zhb"]).reshape(-1, 4, NZ)
        zb = (hh @ p["zb"]).reshape(-1, 4, NZ)
        dx = jnp.einsum("bgz,gzn->bgn", zx, p["dx"])
        dh = jnp.einsum("bgz,gzn->bgn", zh, p["dh"])
        db = jnp.einsum("bgz,gzn->bgn", zb, p["db"])
        wx = (x @ p["wx"]).reshape(-1, 4, N)
        wh = (h @ p["wh"]).reshape(-1, 4, N)
        gates = ln(dx * wx + dh * wh, p["lng"], p["lnb"]) + db + p["b"]
        i, f, g, o = (gates[:, k] for k in range(4))
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(ln(c, p["cg"], p["cb"]))
        return (h, c, hh, hc), h

    def loss(p, tok, tgt):
        B = tok.shape[0]
        xs = jnp.swapaxes(p["emb"][tok], 0, 1)
        z, zh = jnp.zeros((B, N)), jnp.zeros((B, NH))
        _, hs = lax.scan(lambda c, x: cell(p, c, x), (z, z, zh, zh), xs)
        logits = jnp.swapaxes(hs, 0, 1) @ p["out"] + p["ob"]
        return _xent(logits, tgt) / math.log(2.0)

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=1e-3)
        return l, p, m, v
    hyper = {"wx": S(E + N, 4 * NH), "wh": S(NH, 4 * NH), "b": S(4 * NH)}
    p = {"emb": S(V, E), "hyper": hyper, "zx": S(NH, 4 * NZ), "zxb": S(4 * NZ),
         "zh": S(NH, 4 * NZ), "zhb": S(4 * NZ), "zb": S(NH, 4 * NZ), "dx": S(4, NZ, N),
         "dh": S(4, NZ, N), "db": S(4, NZ, N), "wx": S(E, 4 * N), "wh": S(N, 4 * N),
         "lng": S(4, N), "lnb": S(4, N), "b": S(4, N), "cg": S(N), "cb": S(N),
         "out": S(N, V), "ob": S(V)}
    return step, (p, p, p, S(), S(16, T, dtype=I32), S(16, T, dtype=I32))


def on_lstm_ordered_neurons_cumax_master_gates_chunked_lm():
    """Ordered-Neurons LSTM (ON-LSTM, Shen et al.) word language model: two layers of 256 units
    in 16 chunks of 16; besides the usual gates each cell computes chunk-level master forget
    and input gates with cumax (a cumulative sum of a softmax over chunks: f~ = cumax(.),
    i~ = 1 - cumax(.)), expands them to the units, and mixes w = f~ i~ into the forget and
    input gates (f^ = f w + f~ - w, i^ = i w + i~ - w); each layer is a time-major lax.scan
    over 48 tokens; AWD-style variational dropout masks (the same for every step, drawn from
    a passed-in raw key) on the embeddings, between layers and on the output; tied 1000-word
    embedding and softmax; cross-entropy; SGD with gradient clipping at 0.25 and an
    averaged (Polyak) copy of the weights returned."""
    V, E, N, NCH, T = 1000, 256, 256, 16, 48
    CS = N // NCH

    def cumax(x):
        return jnp.cumsum(jax.nn.softmax(x, -1), -1)

    def layer(q, xs, mask_h):
        B = xs.shape[1]
        pre = xs @ q["wx"] + q["b"]

        def cell(carry, z):
            h, c = carry
            z = z + (h * mask_h) @ q["wh"]
            mf, mi = z[:, :NCH], z[:, NCH:2 * NCH]
            i, f, g, o = jnp.split(z[:, 2 * NCH:], 4, -1)
            mf = jnp.repeat(cumax(mf), CS, -1)
            mi = jnp.repeat(1.0 - cumax(mi), CS, -1)
            w = mf * mi
            f = jax.nn.sigmoid(f) * w + (mf - w)
            i = jax.nn.sigmoid(i) * w + (mi - w)
            c = f * c + i * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        z0 = jnp.zeros((B, N))
        _, hs = lax.scan(cell, (z0, z0), pre)
        return hs

    def loss(p, tok, tgt, key):
        B = tok.shape[0]
        ks = jax.random.split(key, 5)
        x = jnp.swapaxes(p["emb"][tok], 0, 1)
        x = jnp.where(jax.random.bernoulli(ks[0], 0.65, (1, B, E)), x / 0.65, 0.0)
        for li, q in enumerate(p["layers"]):
            mh = jax.random.bernoulli(ks[1 + li], 0.75, (B, N)) / 0.75
            x = layer(q, x, mh)
            x = jnp.where(jax.random.bernoulli(ks[3 + li], 0.7, (1, B, N)), x / 0.7, 0.0)
        logits = jnp.swapaxes(x, 0, 1) @ p["emb"].T + p["ob"]
        return _xent(logits, tgt)

    def step(p, avg, t, tok, tgt, key):
        l, g = jax.value_and_grad(loss)(p, tok, tgt, key)
        g = _global_clip(g, 0.25)
        p = tmap(lambda w, g: w - 30.0 * (g + 1.2e-6 * w), p, g)
        avg = tmap(lambda a, w: a + (w - a) / (t + 1.0), avg, p)
        return l, p, avg

    def lay(ci):
        return {"wx": S(ci, 2 * NCH + 4 * N), "wh": S(N, 2 * NCH + 4 * N), "b": S(2 * NCH + 4 * N)}
    p = {"emb": S(V, E), "layers": [lay(E), lay(N)], "ob": S(V)}
    return step, (p, p, S(), S(16, T, dtype=I32), S(16, T, dtype=I32), S(2, dtype=U32))


# ----------------------------------------------------------------------------- moe


def mixture_of_lora_adapters_top2_token_router_frozen_base_encoder_classifier():
    """Mixture-of-LoRA-experts fine-tuning (MoLoRA-style) of a frozen two-layer pre-LN text
    encoder for 6-way classification: the base weights arrive as a separate argument and get
    no gradient; the query, value and MLP-up projections each gain 4 rank-8 LoRA experts
    whose token-level router (a linear layer per adapted matrix) keeps the top 2 of a
    softmax (lax.top_k, gates renormalised and scattered into a dense [b, t, 4] gate
    matrix); all experts' low-rank products x A_e B_e are formed by einsums and combined
    with the sparse gates, scaled by alpha / r; padded tokens are masked in attention and
    in the mean pooling; trainable pooler and head; cross-entropy plus a Switch-style
    load-balancing loss per router; AdamW on the adapters, routers and head only."""
    E, K, R, D, H, T, V, F, NL, NC, ALPHA = 4, 2, 8, 128, 4, 64, 2000, 512, 2, 6, 16.0

    def lora(a, x, base_w):
        logits = x @ a["router"]
        probs = jax.nn.softmax(logits, -1)
        gate, idx = lax.top_k(probs, K)
        gate = gate / jnp.sum(gate, -1, keepdims=True)
        dense = jnp.sum(jax.nn.one_hot(idx, E) * gate[..., None], -2)
        low = jnp.einsum("btd,edr->bter", x, a["A"])
        delta = jnp.einsum("bter,erk->btek", low, a["B"])
        y = x @ base_w + (ALPHA / R) * jnp.einsum("bte,btek->btk", dense, delta)
        frac = jnp.mean(jax.nn.one_hot(idx[..., 0], E), (0, 1))
        bal = E * jnp.sum(frac * jnp.mean(probs, (0, 1)))
        return y, bal

    def layer(base, ad, x, keymask):
        b, t, d = x.shape
        h = _ln(x, base["g1"], base["b1"])
        qq, bq = lora(ad["q"], h, base["wq"])
        vv, bv = lora(ad["v"], h, base["wv"])
        kk = h @ base["wk"]
        qq, kk, vv = (a.reshape(b, t, H, d // H) for a in (qq, kk, vv))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(d // H)
        s = jnp.where(keymask[:, None, None, :], s, -1e9)
        a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d)
        x = x + a @ base["wo"]
        h = _ln(x, base["g2"], base["b2"])
        u, bu = lora(ad["up"], h, base["f1"])
        x = x + jax.nn.gelu(u + base["fb1"]) @ base["f2"] + base["fb2"]
        return x, bq + bv + bu

    def loss(tp, base, tok, lens, labels):
        keymask = jnp.arange(T)[None, :] < lens[:, None]
        x = base["emb"][tok] + base["pos"]
        bal = 0.0
        for bq, aq in zip(base["layers"], tp["adapters"]):
            x, b = layer(bq, aq, x, keymask)
            bal = bal + b
        x = _ln(x, base["gf"], base["bf"])
        w = keymask.astype(F32)[..., None]
        pooled = jnp.sum(x * w, 1) / jnp.maximum(jnp.sum(w, 1), 1.0)
        pooled = jnp.tanh(pooled @ tp["pool"] + tp["poolb"])
        ce = _xent(pooled @ tp["head"] + tp["hb"], labels)
        return ce + 0.01 * bal, ce

    def step(tp, m, v, t, base, tok, lens, labels):
        (l, ce), g = jax.value_and_grad(loss, has_aux=True)(tp, base, tok, lens, labels)
        lr = _cosine_lr(t, 3e-4, 20000.0, warm=200.0)
        tp, m, v = _adam_tree(tp, m, v, g, t, lr=lr, wd=0.01)
        return l, ce, tp, m, v

    def ad(dout):
        return {"router": S(D, E), "A": S(E, D, R), "B": S(E, R, dout)}
    blay = {"g1": S(D), "b1": S(D), "wq": S(D, D), "wk": S(D, D), "wv": S(D, D), "wo": S(D, D),
            "g2": S(D), "b2": S(D), "f1": S(D, F), "fb1": S(F), "f2": S(F, D), "fb2": S(D)}
    base = {"emb": S(V, D), "pos": S(T, D), "layers": [dict(blay) for _ in range(NL)],
            "gf": S(D), "bf": S(D)}
    tp = {"adapters": [{"q": ad(D), "v": ad(D), "up": ad(F)} for _ in range(NL)],
          "pool": S(D, D), "poolb": S(D), "head": S(D, NC), "hb": S(NC)}
    B = 16
    return step, (tp, tp, tp, S(), base, S(B, T, dtype=I32), S(B, dtype=I32), S(B, dtype=I32))


# ----------------------------------------------------------------------------- vae


def conv_vae_discretized_logistic_mixture_likelihood_pixel_decoder():
    """Convolutional VAE on 16x16 RGB 8-bit images (scaled to [-1, 1]) whose decoder output is
    a discretized mixture of 10 logistics (PixelCNN++, Salimans et al.) per pixel: a
    strided conv encoder (32 / 64 channels, 4x4 maps) gives a 32-dim diagonal Gaussian;
    the decoder (dense, two lax.conv_transpose 2x upsamplings, 3x3 convs) outputs 100
    channels -- mixture logits, 3 means, 3 log scales and 3 tanh channel-coupling
    coefficients per component; the likelihood couples the green and blue means linearly
    to the observed red and green values, integrates each logistic over the 1/127.5-wide bin
    with sigmoid differences, uses the edge cases for 0 and 255 and a log-density fallback
    for tiny bins, and log-sum-exps over components; negative ELBO in bits per dimension;
    Adam with exponential learning-rate decay."""
    NMIX, Z, HW = 10, 32, 16

    def enc(p, x):
        h = jax.nn.elu(_conv(x, p["e1"], 2) + p["eb1"])
        h = jax.nn.elu(_conv(h, p["e2"], 2) + p["eb2"])
        h = h.reshape(h.shape[0], -1)
        return h @ p["mu"] + p["mub"], h @ p["lv"] + p["lvb"]

    def dec(p, z):
        B = z.shape[0]
        h = jax.nn.elu(z @ p["d0"] + p["db0"]).reshape(B, 4, 4, 64)
        for w, b, c in p["ups"]:
            h = lax.conv_transpose(h, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
            h = jax.nn.elu(h + b)
            h = jax.nn.elu(_conv(h, c) + b)
        return _conv(h, p["out"]) + p["ob"]

    def dmol_logp(x, l):
        logit_pi = l[..., :NMIX]
        rest = l[..., NMIX:].reshape(*x.shape[:3], 3, 3 * NMIX)
        means, log_s, coeff = rest[..., :NMIX], rest[..., NMIX:2 * NMIX], rest[..., 2 * NMIX:]
        log_s = jnp.maximum(log_s, -7.0)
        coeff = jnp.tanh(coeff)
        xr, xg = x[..., 0:1], x[..., 1:2]
        m0 = means[..., 0, :]
        m1 = means[..., 1, :] + coeff[..., 0, :] * xr
        m2 = means[..., 2, :] + coeff[..., 1, :] * xr + coeff[..., 2, :] * xg
        mu = jnp.stack([m0, m1, m2], 3)
        xc = x[..., None]
        centered = xc - mu
        inv_s = jnp.exp(-log_s)
        plus = inv_s * (centered + 1.0 / 255.0)
        minus = inv_s * (centered - 1.0 / 255.0)
        cdf_plus, cdf_min = jax.nn.sigmoid(plus), jax.nn.sigmoid(minus)
        log_cdf_plus = plus - jax.nn.softplus(plus)
        log_one_minus_cdf_min = -jax.nn.softplus(minus)
        cdf_delta = cdf_plus - cdf_min
        mid = inv_s * centered
        log_pdf_mid = mid - log_s - 2.0 * jax.nn.softplus(mid)
        inner = jnp.where(cdf_delta > 1e-5, jnp.log(jnp.maximum(cdf_delta, 1e-12)),
                          log_pdf_mid - math.log(127.5))
        lp = jnp.where(xc < -0.999, log_cdf_plus,
                       jnp.where(xc > 0.999, log_one_minus_cdf_min, inner))
        lp = jnp.sum(lp, 3) + jax.nn.log_softmax(logit_pi, -1)
        return jnp.sum(jax.nn.logsumexp(lp, -1), (1, 2))

    def loss(p, x, eps):
        mu, lv = enc(p, x)
        z = mu + jnp.exp(0.5 * lv) * eps
        ll = dmol_logp(x, dec(p, z))
        kl = 0.5 * jnp.sum(jnp.exp(lv) + jnp.square(mu) - 1.0 - lv, -1)
        nelbo = jnp.mean(kl - ll)
        return nelbo / (HW * HW * 3 * math.log(2.0)), jnp.mean(kl)

    def step(p, m, v, t, x, eps):
        (l, kl), g = jax.value_and_grad(loss, has_aux=True)(p, x, eps)
        lr = 2e-3 * 0.99995 ** t
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr, b1=0.95, b2=0.9995)
        return l, kl, p, m, v
    p = {"e1": S(3, 3, 3, 32), "eb1": S(32), "e2": S(3, 3, 32, 64), "eb2": S(64),
         "mu": S(4 * 4 * 64, Z), "mub": S(Z), "lv": S(4 * 4 * 64, Z), "lvb": S(Z),
         "d0": S(Z, 4 * 4 * 64), "db0": S(4 * 4 * 64),
         "ups": [(S(3, 3, 64, 64), S(64), S(3, 3, 64, 64)) for _ in range(2)],
         "out": S(1, 1, 64, 10 * NMIX), "ob": S(10 * NMIX)}
    B = 32
    return step, (p, p, p, S(), S(B, HW, HW, 3), S(B, Z))


# ----------------------------------------------------------------------------- unet


def segnet_unet_hybrid_argmax_mask_unpooling_skip_concat_segmenter():
    """SegNet / U-Net hybrid for 6-class street-scene segmentation of 32x32 images: three
    encoder stages of two 3x3 conv-BN-ReLU layers (16 / 32 / 64) each end in 2x2 max pooling
    that also records the pooling switches -- the window is unfolded to a trailing axis of
    4, reduced with max and argmax; a bottleneck of two conv-BN-ReLU layers at 128; every
    decoder stage max-unpools with those switches (a one-hot of the argmax times the
    values, folded back to full resolution), concatenates the encoder features of that
    scale as in U-Net and applies two conv-BN-ReLU layers; a 1x1 head; cross-entropy with
    median-frequency class weights and an ignore label (255) for void pixels; Adam; BN
    batch statistics returned."""
    NC, IGN = 6, 255
    WEIGHTS = np.array([0.3, 0.6, 1.0, 2.5, 4.0, 1.5], np.float32)

    def cbr(q, x, stats):
        h, st = _bn(_conv(x, q["w"]), q["g"], q["b"], (0, 1, 2))
        stats.append(st)
        return jax.nn.relu(h)

    def pool(x):
        b, h, w, c = x.shape
        win = x.reshape(b, h // 2, 2, w // 2, 2, c).transpose(0, 1, 3, 5, 2, 4)
        win = win.reshape(b, h // 2, w // 2, c, 4)
        return jnp.max(win, -1), jnp.argmax(win, -1)

    def unpool(x, idx):
        b, h, w, c = x.shape
        full = jax.nn.one_hot(idx, 4, dtype=x.dtype) * x[..., None]
        full = full.reshape(b, h, w, c, 2, 2).transpose(0, 1, 4, 2, 5, 3)
        return full.reshape(b, 2 * h, 2 * w, c)

    def loss(p, img, lab):
        stats, skips, switches = [], [], []
        x = img
        for st in p["enc"]:
            for q in st:
                x = cbr(q, x, stats)
            skips.append(x)
            x, idx = pool(x)
            switches.append(idx)
        for q in p["mid"]:
            x = cbr(q, x, stats)
        x = x @ p["mid_proj"]
        for st in p["dec"]:
            x = unpool(x, switches.pop())
            x = jnp.concatenate([x, skips.pop()], -1)
            for q in st:
                x = cbr(q, x, stats)
        logits = x @ p["head"] + p["hb"]
        valid = lab != IGN
        safe = jnp.where(valid, lab, 0)
        nll = -jnp.take_along_axis(jax.nn.log_softmax(logits, -1), safe[..., None], -1)[..., 0]
        w = jnp.asarray(WEIGHTS)[safe] * valid
        return jnp.sum(nll * w) / jnp.maximum(jnp.sum(w), 1e-6), stats

    def step(p, m, v, t, img, lab):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, lab)
        p, m, v = _adam_tree(p, m, v, g, t, lr=1e-3, wd=5e-4)
        return l, stats, p, m, v

    def c(ci, co):
        return {"w": S(3, 3, ci, co), "g": S(co), "b": S(co)}
    W = (16, 32, 64)
    enc, ci = [], 3
    for w in W:
        enc.append([c(ci, w), c(w, w)])
        ci = w
    dec = []
    for w, wn in zip(W[::-1], (W[1], W[0], W[0])):
        dec.append([c(2 * w, w), c(w, wn)])
    p = {"enc": enc, "mid": [c(64, 128), c(128, 128)], "mid_proj": S(128, 64), "dec": dec,
         "head": S(W[0], NC), "hb": S(NC)}
    return step, (p, p, p, S(), S(8, 32, 32, 3), S(8, 32, 32, dtype=I32))


# ----------------------------------------------------------------------------- gnn


def deepergcn_genconv_learnable_softmax_aggregation_res_plus_blocks():
    """DeeperGCN (Li et al.) for multi-label node property prediction on a 512-node graph with
    4096 directed edges carrying 8-dim features (ogbn-proteins style, passed-in source and
    destination index arrays): a node encoder and an edge encoder; four GENConv layers in
    the pre-activation res+ order (LayerNorm, ReLU, GENConv, residual) where each message
    is ReLU(h_src + e) + eps and the aggregation is the learnable SoftMax_beta aggregator --
    per-channel edge softmax of beta m within each destination (jax.ops.segment_max for
    stability, segment_sum to normalise) weighting the messages -- followed by message
    normalisation (MsgNorm with a learnable scale) and a two-layer MLP; binary
    cross-entropy over 16 tasks on the passed-in training mask; Adam."""
    N, NE, FIN, FE, HID, NLAY, NT = 512, 4096, 32, 8, 64, 4, 16

    def genconv(q, h, e, src, dst):
        m = jax.nn.relu(h[src] + e) + 1e-7
        z = q["beta"] * m
        zmax = jax.ops.segment_max(z, dst, N)
        ez = jnp.exp(z - lax.stop_gradient(zmax)[dst])
        den = jax.ops.segment_sum(ez, dst, N)
        agg = jax.ops.segment_sum(ez * m, dst, N) / (den + 1e-16)
        agg = agg / (jnp.linalg.norm(agg, axis=-1, keepdims=True) + 1e-6)
        agg = agg * jnp.linalg.norm(h, axis=-1, keepdims=True) * q["msg_scale"]
        out = h + agg
        out = jax.nn.relu(_ln(out @ q["m1"] + q["mb1"], q["mg"], q["mbb"]))
        return out @ q["m2"] + q["mb2"]

    def loss(p, x, ef, src, dst, y, train):
        h = x @ p["nenc"] + p["nencb"]
        e = ef @ p["eenc"] + p["eencb"]
        h = genconv(p["layers"][0], h, e, src, dst)
        for q in p["layers"][1:]:
            h = h + genconv(q, jax.nn.relu(_ln(h, q["ng"], q["nb"])), e, src, dst)
        h = jax.nn.relu(_ln(h, p["fg"], p["fb"]))
        logits = h @ p["out"] + p["ob"]
        w = train.astype(F32)[:, None]
        return jnp.sum(_bce_logits(logits, y) * w) / (jnp.sum(w) * NT + 1e-6)

    def step(p, m, v, t, x, ef, src, dst, y, train):
        l, g = jax.value_and_grad(loss)(p, x, ef, src, dst, y, train)
        p, m, v = _adam_tree(p, m, v, g, t, lr=1e-3)
        return l, p, m, v
    q = {"beta": S(), "msg_scale": S(), "m1": S(HID, 2 * HID), "mb1": S(2 * HID),
         "mg": S(2 * HID), "mbb": S(2 * HID), "m2": S(2 * HID, HID), "mb2": S(HID),
         "ng": S(HID), "nb": S(HID)}
    p = {"nenc": S(FIN, HID), "nencb": S(HID), "eenc": S(FE, HID), "eencb": S(HID),
         "layers": [dict(q) for _ in range(NLAY)], "fg": S(HID), "fb": S(HID),
         "out": S(HID, NT), "ob": S(NT)}
    return step, (p, p, p, S(), S(N, FIN), S(NE, FE), S(NE, dtype=I32), S(NE, dtype=I32),
                  S(N, NT), S(N, dtype=jnp.bool_))


# ----------------------------------------------------------------------------- quantization


def ibert_integer_only_polynomial_gelu_exp_softmax_int8_encoder():
    """I-BERT-style (Kim et al.) quantisation-aware training of a two-layer encoder for
    sentence-pair classification, simulating integer-only inference: weights are fake-
    quantised to int8 per output channel and activations to int8 per tensor with dynamic
    max scales (straight-through rounding everywhere); GELU is replaced by i-GELU, the
    second-order polynomial erf approximation sign(x) [a (min(|x|, -b) + b)^2 + 1]; softmax
    by i-exp -- after subtracting the row max, x = -z ln2 + p with z = floor(-x / ln2),
    exp(p) ~ 0.3585 (p + 1.353)^2 + 0.344, shifted right by z (times 2^-z) -- and LayerNorm's
    standard deviation by i-sqrt, four Newton steps x <- floor((x + floor(n / x)) / 2) from
    a power-of-two start; 64 tokens with padding masks, width 128, 4 heads; cross-entropy on
    the first token; AdamW with linear decay."""
    V, D, H, T, F, NL, NC = 2000, 128, 4, 64, 512, 2, 3
    A_ERF, B_ERF, LN2 = -0.2888, -1.769, math.log(2.0)

    def ste(x, f):
        return x + lax.stop_gradient(f(x) - x)

    def fq_w(w):
        s = lax.stop_gradient(jnp.max(jnp.abs(w), 0) / 127.0 + 1e-8)
        return ste(w / s, lambda a: jnp.clip(jnp.round(a), -127, 127)) * s

    def fq_a(x):
        s = lax.stop_gradient(jnp.max(jnp.abs(x)) / 127.0 + 1e-8)
        return ste(x / s, lambda a: jnp.clip(jnp.round(a), -127, 127)) * s

    def qdense(x, w, b):
        return fq_a(x) @ fq_w(w) + b

    def i_gelu(x):
        u = x / math.sqrt(2.0)
        erf = jnp.sign(u) * (A_ERF * jnp.square(jnp.minimum(jnp.abs(u), -B_ERF) + B_ERF) + 1.0)
        return x * 0.5 * (1.0 + erf)

    def i_exp(x):
        z = ste(-x / LN2, jnp.floor)
        pp = x + z * LN2
        poly = 0.3585 * jnp.square(pp + 1.353) + 0.344
        return poly * jnp.exp2(-lax.stop_gradient(z))

    def i_softmax(s):
        e = i_exp(s - lax.stop_gradient(jnp.max(s, -1, keepdims=True)))
        return e / jnp.sum(e, -1, keepdims=True)

    def i_sqrt(n):
        x = jnp.exp2(jnp.ceil(jnp.log2(jnp.maximum(n, 1.0)) / 2.0))
        for _ in range(4):
            x = ste((x + n / x) / 2.0, jnp.floor)
        return jnp.maximum(x, 1.0)

    def i_layernorm(x, g, b):
        s = lax.stop_gradient(jnp.max(jnp.abs(x)) / 2 ** 15 + 1e-8)
        xi = ste(x / s, jnp.round)
        c = xi - jnp.mean(xi, -1, keepdims=True)
        std = i_sqrt(jnp.mean(jnp.square(c), -1, keepdims=True))
        return c / std * g + b

    def layer(q, x, keymask):
        b, t, d = x.shape
        qq, kk, vv = (qdense(x, q[n], q[n + "b"]).reshape(b, t, H, d // H)
                      for n in ("wq", "wk", "wv"))
        s = jnp.einsum("bqhd,bkhd->bhqk", fq_a(qq), fq_a(kk)) / math.sqrt(d // H)
        s = jnp.where(keymask[:, None, None, :], s, -1e4)
        a = jnp.einsum("bhqk,bkhd->bqhd", fq_a(i_softmax(s)), fq_a(vv)).reshape(b, t, d)
        x = i_layernorm(x + qdense(a, q["wo"], q["wob"]), q["g1"], q["b1"])
        h = i_gelu(qdense(x, q["f1"], q["fb1"]))
        return i_layernorm(x + qdense(h, q["f2"], q["fb2"]), q["g2"], q["b2"])

    def loss(p, tok, seg, lens, labels):
        keymask = jnp.arange(T)[None, :] < lens[:, None]
        x = p["emb"][tok] + p["pos"] + p["type"][seg]
        x = i_layernorm(x, p["eg"], p["eb"])
        for q in p["layers"]:
            x = layer(q, x, keymask)
        pooled = jnp.tanh(qdense(x[:, 0], p["pool"], p["poolb"]))
        return _xent(pooled @ p["head"] + p["hb"], labels)

    def step(p, m, v, t, tok, seg, lens, labels):
        l, g = jax.value_and_grad(loss)(p, tok, seg, lens, labels)
        lr = 2e-5 * jnp.maximum(0.0, 1.0 - t / 30000.0)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr, wd=0.01)
        return l, p, m, v
    q = {"wq": S(D, D), "wqb": S(D), "wk": S(D, D), "wkb": S(D), "wv": S(D, D), "wvb": S(D),
         "wo": S(D, D), "wob": S(D), "g1": S(D), "b1": S(D), "f1": S(D, F), "fb1": S(F),
         "f2": S(F, D), "fb2": S(D), "g2": S(D), "b2": S(D)}
    p = {"emb": S(V, D), "pos": S(T, D), "type": S(2, D), "eg": S(D), "eb": S(D),
         "layers": [dict(q) for _ in range(NL)], "pool": S(D, D), "poolb": S(D),
         "head": S(D, NC), "hb": S(NC)}
    B = 16
    return step, (p, p, p, S(), S(B, T, dtype=I32), S(B, T, dtype=I32), S(B, dtype=I32),
                  S(B, dtype=I32))


# ----------------------------------------------------------------------------- remat


def remat_two_level_scan_gated_conv_lm_nothing_saveable_outer_dots_inner():
    """Gated convolutional language model (GCNN, Dauphin et al.) trained with two-level
    (sqrt-decomposition) rematerialisation: six residual layers -- LayerNorm, a causal width-4
    convolution to twice the width (left zero padding) and a GLU, then a GLU feed-forward --
    have their parameters stacked as [2 groups, 3 layers]; an outer lax.scan over the groups
    runs a jax.checkpoint'ed group body with nothing_saveable (only the group inputs
    survive the forward pass), inside which an inner lax.scan over the three layers runs a
    jax.checkpoint'ed layer with dots_saveable (convolutions and matmuls kept, the gates
    recomputed); 512-token vocabulary, 64-token windows, width 128; cross-entropy; SGD with
    Nesterov momentum, gradient clipping at 0.1 and a small weight decay."""
    V, D, T, KC, G, L = 512, 128, 64, 4, 2, 3

    def layer(x, q):
        h = _ln(x, q["g1"], q["b1"])
        h = jnp.pad(h, ((0, 0), (KC - 1, 0), (0, 0)))
        h = lax.conv_general_dilated(h, q["conv"], (1,), "VALID",
                                     dimension_numbers=("NWC", "WIO", "NWC")) + q["cb"]
        a, b = jnp.split(h, 2, -1)
        x = x + a * jax.nn.sigmoid(b)
        h = _ln(x, q["g2"], q["b2"])
        u, gt = jnp.split(h @ q["f1"] + q["fb1"], 2, -1)
        return x + (u * jax.nn.sigmoid(gt)) @ q["f2"] + q["fb2"], None
    layer_r = jax.checkpoint(layer, policy=CP.dots_saveable)

    def group(x, qg):
        x, _ = lax.scan(layer_r, x, qg)
        return x, None
    group_r = jax.checkpoint(group, policy=CP.nothing_saveable)

    def loss(p, tok, tgt):
        x = p["emb"][tok]
        x, _ = lax.scan(group_r, x, p["stack"])
        return _xent(_ln(x, p["gf"], p["bf"]) @ p["out"] + p["ob"], tgt)

    def step(p, mom, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        g = _global_clip(g, 0.1)
        mom = tmap(lambda b, g: 0.99 * b + g, mom, g)
        p = tmap(lambda w, g, b: w - 1.0 * (g + 0.99 * b) - 1e-6 * w, p, g, mom)
        return l, p, mom
    stack = {"g1": S(G, L, D), "b1": S(G, L, D), "conv": S(G, L, KC, D, 2 * D),
             "cb": S(G, L, 2 * D), "g2": S(G, L, D), "b2": S(G, L, D), "f1": S(G, L, D, 4 * D),
             "fb1": S(G, L, 4 * D), "f2": S(G, L, 2 * D, D), "fb2": S(G, L, D)}
    p = {"emb": S(V, D), "stack": stack, "gf": S(D), "bf": S(D), "out": S(D, V), "ob": S(V)}
    return step, (p, p, S(), S(8, T, dtype=I32), S(8, T, dtype=I32))


def remat_efficientnetv2_fused_mbconv_save_from_both_names_and_dots_policy():
    """EfficientNetV2-style classifier (Tan & Le 2021) on 32x32 images with every block under
    jax.checkpoint with policy save_from_both_policies(save_only_these_names("expanded"),
    dots_with_no_batch_dims_saveable): the expanded activation of each block is tagged with
    checkpoint_name and kept, as are the pointwise (matmul) projections, while convolutions,
    batch norms and SiLUs are recomputed; a 3x3 stem (24), a fused-MBConv stage (expansion
    1, residual), a fused-MBConv stage (3x3 expand x4, stride 2, 1x1 project, 2 blocks) and
    an MBConv stage (1x1 expand x4, depthwise 3x3 stride 2, squeeze-excite, 1x1 project, 2
    blocks), stochastic depth per example from passed-in raw keys, a 1x1 head conv to 256,
    dropout and a linear layer; cross-entropy; RMSProp with momentum and an EMA of the
    weights; BN batch statistics returned."""

    def bn(q, x):
        h, st = _bn(x, q["g"], q["b"], (0, 1, 2))
        return h, st

    def drop_path(x, key, keep=0.9):
        m = jax.random.bernoulli(key, keep, (x.shape[0], 1, 1, 1))
        return jnp.where(m, x / keep, 0.0)

    def fused(q, x, key, stride):
        h, s1 = bn(q["n1"], _conv(x, q["e"], stride))
        h = checkpoint_name(jax.nn.silu(h), "expanded")
        st = [s1]
        if "p" in q:
            h, s2 = bn(q["n2"], h @ q["p"])
            st.append(s2)
        if stride == 1 and x.shape[-1] == h.shape[-1]:
            h = x + drop_path(h, key)
        return h, st

    def mbconv(q, x, key, stride):
        h, s1 = bn(q["n1"], x @ q["e"])
        h = checkpoint_name(jax.nn.silu(h), "expanded")
        h, s2 = bn(q["n2"], _conv(h, q["dw"], stride, groups=h.shape[-1]))
        h = jax.nn.silu(h)
        se = jax.nn.silu(jnp.mean(h, (1, 2)) @ q["s1"] + q["sb1"])
        h = h * jax.nn.sigmoid(se @ q["s2"] + q["sb2"])[:, None, None, :]
        h, s3 = bn(q["n3"], h @ q["p"])
        if stride == 1 and x.shape[-1] == h.shape[-1]:
            h = x + drop_path(h, key)
        return h, [s1, s2, s3]

    policy = CP.save_from_both_policies(CP.save_only_these_names("expanded"),
                                        CP.dots_with_no_batch_dims_saveable)
    fused_r = jax.checkpoint(fused, policy=policy, static_argnums=(3,))
    mbconv_r = jax.checkpoint(mbconv, policy=policy, static_argnums=(3,))

    def loss(p, img, labels, keys):
        stats = []
        h, st = bn(p["sn"], _conv(img, p["stem"]))
        x = jax.nn.silu(h)
        stats.append(st)
        ki = 0
        for fn, stage, first_stride in ((fused_r, p["s1"], 1), (fused_r, p["s2"], 2),
                                        (mbconv_r, p["s3"], 2)):
            for bi, q in enumerate(stage):
                x, st = fn(q, x, keys[ki], first_stride if bi == 0 else 1)
                ki += 1
                stats.extend(st)
        h, st = bn(p["hn"], x @ p["head"])
        stats.append(st)
        h = jnp.mean(jax.nn.silu(h), (1, 2))
        h = jnp.where(jax.random.bernoulli(keys[ki], 0.8, h.shape), h / 0.8, 0.0)
        return _xent(h @ p["fc"] + p["fcb"], labels), stats

    def step(p, ms, mom, ema, t, img, labels, keys):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels, keys)
        g = tmap(lambda g, w: g + (1e-5 * w if w.ndim >= 2 else 0.0), g, p)
        lr = 0.016 * 0.97 ** jnp.floor(t / 2400.0)
        ms = tmap(lambda s, g: 0.9 * s + 0.1 * g * g, ms, g)
        mom = tmap(lambda b, g, s: 0.9 * b + lr * g / jnp.sqrt(s + 1e-3), mom, g, ms)
        p = tmap(lambda w, b: w - b, p, mom)
        ema = tmap(lambda e, w: 0.9999 * e + 1e-4 * w, ema, p)
        return l, stats, p, ms, mom, ema

    def nb(c):
        return {"g": S(c), "b": S(c)}
    s1 = [{"e": S(3, 3, 24, 24), "n1": nb(24)}]
    s2, ci = [], 24
    for _ in range(2):
        s2.append({"e": S(3, 3, ci, 4 * ci), "n1": nb(4 * ci), "p": S(4 * ci, 48), "n2": nb(48)})
        ci = 48
    s3 = []
    for _ in range(2):
        e = 4 * ci
        s3.append({"e": S(ci, e), "n1": nb(e), "dw": S(3, 3, 1, e), "n2": nb(e),
                   "s1": S(e, ci // 4), "sb1": S(ci // 4), "s2": S(ci // 4, e), "sb2": S(e),
                   "p": S(e, 96), "n3": nb(96)})
        ci = 96
    p = {"stem": S(3, 3, 3, 24), "sn": nb(24), "s1": s1, "s2": s2, "s3": s3,
         "head": S(96, 256), "hn": nb(256), "fc": S(256, 100), "fcb": S(100)}
    nkeys = len(s1) + len(s2) + len(s3) + 1
    return step, (p, p, p, p, S(), S(16, 32, 32, 3), S(16, dtype=I32), S(nkeys, 2, dtype=U32))


# ----------------------------------------------------------------------------- custom_vjp


@jax.custom_vjp
def _fused_rms_norm(x, g):
    return x * lax.rsqrt(jnp.mean(jnp.square(x), -1, keepdims=True) + 1e-6) * g


def _fused_rms_norm_fwd(x, g):
    rstd = lax.rsqrt(jnp.mean(jnp.square(x), -1, keepdims=True) + 1e-6)
    return x * rstd * g, (x, g, rstd)


def _fused_rms_norm_bwd(res, dy):
    x, g, rstd = res
    xhat = x * rstd
    dg = jnp.sum(dy * xhat, tuple(range(dy.ndim - 1)))
    dxhat = dy * g
    dx = rstd * (dxhat - xhat * jnp.mean(dxhat * xhat, -1, keepdims=True))
    return dx, dg


_fused_rms_norm.defvjp(_fused_rms_norm_fwd, _fused_rms_norm_bwd)


@jax.custom_vjp
def _fused_swiglu(a, b):
    return jax.nn.silu(a) * b


def _fused_swiglu_fwd(a, b):
    return jax.nn.silu(a) * b, (a, b)


def _fused_swiglu_bwd(res, dy):
    a, b = res
    s = jax.nn.sigmoid(a)
    return dy * b * s * (1.0 + a * (1.0 - s)), dy * a * s


_fused_swiglu.defvjp(_fused_swiglu_fwd, _fused_swiglu_bwd)


def custom_vjp_fused_rmsnorm_swiglu_manual_backward_saved_rstd_decoder_lm():
    """LLaMA-style decoder LM whose RMSNorm and SwiGLU are jax.custom_vjp functions with
    hand-written backward passes: the RMSNorm forward saves its input, gain and the per-row
    reciprocal RMS, and its backward forms dx = rstd (dy g - xhat mean(dy g xhat)) and the
    gain gradient summed over the batch axes; the SwiGLU forward saves only its two inputs
    and the backward recomputes the sigmoid (d silu(a) = s (1 + a (1 - s))); three layers of
    width 128 with 4 query heads sharing 2 key-value heads (grouped-query attention) and
    rotary embeddings, causal, untied output head; cross-entropy; AdamW (b2 0.95) with
    warmup-cosine and global-norm clipping."""
    V, D, H, KV, T, F, NL = 512, 128, 4, 2, 64, 320, 3
    DH = D // H

    def attn(q, x):
        b, t, d = x.shape
        qq = _rope((x @ q["wq"]).reshape(b, t, H, DH))
        kk = _rope((x @ q["wk"]).reshape(b, t, KV, DH))
        vv = (x @ q["wv"]).reshape(b, t, KV, DH)
        kk, vv = jnp.repeat(kk, H // KV, 2), jnp.repeat(vv, H // KV, 2)
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(DH)
        s = jnp.where(_causal(t)[None, None], s, -1e9)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d)
        return o @ q["wo"]

    def loss(p, tok, tgt):
        x = p["emb"][tok]
        for q in p["layers"]:
            x = x + attn(q, _fused_rms_norm(x, q["n1"]))
            h = _fused_rms_norm(x, q["n2"])
            x = x + _fused_swiglu(h @ q["w1"], h @ q["w3"]) @ q["w2"]
        return _xent(_fused_rms_norm(x, p["nf"]) @ p["out"], tgt)

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        lr = _cosine_lr(t, 3e-4, 100000.0, warm=2000.0)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.95, wd=0.1)
        return l, p, m, v
    q = {"n1": S(D), "wq": S(D, D), "wk": S(D, KV * DH), "wv": S(D, KV * DH), "wo": S(D, D),
         "n2": S(D), "w1": S(D, F), "w3": S(D, F), "w2": S(F, D)}
    p = {"emb": S(V, D), "layers": [dict(q) for _ in range(NL)], "nf": S(D), "out": S(D, V)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T, dtype=I32))


# ----------------------------------------------------------------------------- control


def particle_filter_fori_ess_cond_systematic_resampling_learned_proposal():
    """Variational sequential Monte Carlo (Naesseth et al. / FIVO) for a learned nonlinear
    state-space model: 4-dim latent states, 2-dim observations, 64 particles per sequence,
    16 sequences of 24 steps; a lax.fori_loop over time draws particles from a learned
    Gaussian proposal q(x_t | x_(t-1), y_t) (MLP, reparameterised with passed-in noise read by
    dynamic indexing), scores them with the learned transition MLP and Gaussian emission
    MLP, accumulates the log marginal-likelihood estimate by log-mean-exp of the incremental
    weights, and, when the effective sample size of any sequence drops below half the
    particle count, resamples under lax.cond -- systematic resampling with passed-in
    uniforms, a cumulative sum of the normalised weights, counts of offsets below it for the
    ancestor indices and take_along_axis on the particles -- with stop-gradient weight
    resets; the loss is minus the mean estimate per step; Adam."""
    DX, DY, NP_, T, HID = 4, 2, 64, 24, 64

    def mlp(q, x):
        return jnp.tanh(x @ q["w1"] + q["b1"]) @ q["w2"] + q["b2"]

    def gauss_lp(x, mu, logs):
        return jnp.sum(-0.5 * jnp.square((x - mu) * jnp.exp(-logs)) - logs
                       - 0.5 * math.log(2 * math.pi), -1)

    def loss(p, ys, eps, us):
        B = ys.shape[0]

        def body(t, carry):
            x, logw, ll, nres = carry
            y = ys[:, t]
            yb = jnp.broadcast_to(y[:, None], (B, NP_, DY))
            prop = mlp(p["prop"], jnp.concatenate([x, yb], -1))
            qmu, qls = prop[..., :DX], jnp.clip(prop[..., DX:], -5.0, 2.0)
            xn = qmu + jnp.exp(qls) * eps[t]
            tmu = x + mlp(p["trans"], x)
            emu = mlp(p["emit"], xn)
            inc = gauss_lp(xn, tmu, p["tls"]) + gauss_lp(yb, emu, p["els"]) - \
                gauss_lp(xn, qmu, qls)
            logw = logw + inc
            ll = ll + jax.nn.logsumexp(logw, -1) - jax.nn.logsumexp(logw - inc, -1)
            wn = jax.nn.softmax(logw, -1)
            ess = 1.0 / jnp.sum(jnp.square(wn), -1)

            def resample(args):
                xn, logw = args
                cdf = jnp.cumsum(jax.nn.softmax(lax.stop_gradient(logw), -1), -1)
                pos = (us[t][:, None] + jnp.arange(NP_)) / NP_
                anc = jnp.minimum(jnp.sum(pos[:, :, None] > cdf[:, None, :], -1), NP_ - 1)
                xs = jnp.take_along_axis(xn, anc[..., None], 1)
                lw = jnp.take_along_axis(logw, anc, 1)
                return xs, lw - lax.stop_gradient(lw)
            xn, logw = lax.cond(jnp.any(ess < NP_ / 2), resample, lambda a: a, (xn, logw))
            return xn, logw, ll, nres + jnp.any(ess < NP_ / 2).astype(I32)
        x0 = jnp.broadcast_to(p["x0"], (B, NP_, DX))
        init = (x0, jnp.zeros((B, NP_)), jnp.zeros((B,)), jnp.zeros((), I32))
        _, _, ll, nres = lax.fori_loop(0, T, body, init)
        return -jnp.mean(ll) / T, nres

    def step(p, m, v, t, ys, eps, us):
        (l, nres), g = jax.value_and_grad(loss, has_aux=True)(p, ys, eps, us)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 10.0), t, lr=3e-4)
        return l, nres, p, m, v

    def net(i, o):
        return {"w1": S(i, HID), "b1": S(HID), "w2": S(HID, o), "b2": S(o)}
    p = {"prop": net(DX + DY, 2 * DX), "trans": net(DX, DX), "emit": net(DX, DY), "tls": S(DX),
         "els": S(DY), "x0": S(DX)}
    B = 16
    return step, (p, p, p, S(), S(B, T, DY), S(T, B, NP_, DX), S(T, B))


def self_critical_sequence_training_while_greedy_baseline_fori_sampled_reinforce():
    """Self-critical sequence training (Rennie et al.) of an attention captioner on 36 region
    features per image: a GRU decoder (256 units) with additive attention over the projected
    regions and a 1000-word vocabulary; the greedy baseline caption is decoded outside the
    gradient with a lax.while_loop that stops once every caption has emitted the end token
    or 16 words are written (tokens stored with .at[].set); the sampled caption is decoded
    inside the loss by a lax.fori_loop with Gumbel-max sampling from passed-in uniforms,
    accumulating the log-probabilities of the sampled words until each caption ends;
    both captions are scored against five references by a clipped unigram-overlap F1 proxy
    reward (bag-of-words counts); the loss is the REINFORCE objective with the greedy
    reward as baseline; Adam with clipping; the mean sampled reward is returned."""
    NR, FD, D, V, L, EOS, BOS, NREF = 36, 256, 256, 1000, 16, 0, 1, 5

    def init_state(p, feats):
        proj = feats @ p["fproj"]
        h = jnp.tanh(jnp.mean(feats, 1) @ p["hinit"])
        return proj, h

    def dstep(p, proj, feats, h, tok):
        e = jnp.tanh(proj + (h @ p["att_h"])[:, None, :]) @ p["att_v"]
        a = jax.nn.softmax(e[..., 0], -1)
        ctx = jnp.einsum("br,brf->bf", a, feats)
        x = jnp.concatenate([p["emb"][tok], ctx], -1)
        zr = jax.nn.sigmoid(x @ p["wzr"] + h @ p["uzr"] + p["bzr"])
        z, r = jnp.split(zr, 2, -1)
        n = jnp.tanh(x @ p["wn"] + (r * h) @ p["un"] + p["bn"])
        h = (1.0 - z) * n + z * h
        return h, h @ p["out"] + p["ob"]

    def reward(caps, lens, refs):
        B = caps.shape[0]
        valid = jnp.arange(L)[None, :] < lens[:, None]
        cnt = jnp.zeros((B, V)).at[jnp.arange(B)[:, None], caps].add(valid.astype(F32))
        rv = (refs != EOS).astype(F32)
        rc = jnp.zeros((B, NREF, V)).at[jnp.arange(B)[:, None, None],
                                        jnp.arange(NREF)[None, :, None], refs].add(rv)
        match = jnp.sum(jnp.minimum(cnt[:, None], rc), -1)
        prec = match / jnp.maximum(jnp.sum(cnt, -1, keepdims=True), 1.0)
        rec = match / jnp.maximum(jnp.sum(rc, -1), 1.0)
        return jnp.max(2 * prec * rec / jnp.maximum(prec + rec, 1e-6), -1)

    def greedy(p, feats):
        B = feats.shape[0]
        proj, h = init_state(p, feats)

        def cond(c):
            i, _, _, done, _ = c
            return (i < L) & ~jnp.all(done)

        def body(c):
            i, h, tok, done, caps = c
            h, logits = dstep(p, proj, feats, h, tok)
            tok = jnp.argmax(logits, -1).astype(I32)
            caps = caps.at[:, i].set(jnp.where(done, EOS, tok))
            return i + 1, h, tok, done | (tok == EOS), caps
        init = (jnp.zeros((), I32), h, jnp.full((B,), BOS, I32), jnp.zeros((B,), bool),
                jnp.full((B, L), EOS, I32))
        _, _, _, _, caps = lax.while_loop(cond, body, init)
        lens = jnp.sum(jnp.cumprod(caps != EOS, -1), -1)
        return caps, lens

    def loss(p, feats, refs, unif, base_r):
        B = feats.shape[0]
        proj, h = init_state(p, feats)

        def body(i, c):
            h, tok, done, caps, lp = c
            h, logits = dstep(p, proj, feats, h, tok)
            logp = jax.nn.log_softmax(logits, -1)
            gumbel = -jnp.log(-jnp.log(unif[:, i] + 1e-10) + 1e-10)
            tok = jnp.argmax(lax.stop_gradient(logp) + gumbel, -1).astype(I32)
            lpt = jnp.take_along_axis(logp, tok[:, None], -1)[:, 0]
            lp = lp + jnp.where(done, 0.0, lpt)
            caps = caps.at[:, i].set(jnp.where(done, EOS, tok))
            return h, tok, done | (tok == EOS), caps, lp
        init = (h, jnp.full((B,), BOS, I32), jnp.zeros((B,), bool), jnp.full((B, L), EOS, I32),
                jnp.zeros((B,)))
        _, _, _, caps, lp = lax.fori_loop(0, L, body, init)
        lens = jnp.sum(jnp.cumprod(caps != EOS, -1), -1)
        r = lax.stop_gradient(reward(caps, lens, refs))
        return -jnp.mean((r - base_r) * lp), jnp.mean(r)

    def step(p, m, v, t, feats, refs, unif):
        gcaps, glens = greedy(lax.stop_gradient(p), feats)
        base_r = reward(gcaps, glens, refs)
        (l, r), g = jax.value_and_grad(loss, has_aux=True)(p, feats, refs, unif, base_r)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 0.1), t, lr=5e-5)
        return l, r, jnp.mean(base_r), p, m, v
    p = {"fproj": S(FD, D), "hinit": S(FD, D), "att_h": S(D, D), "att_v": S(D, 1),
         "emb": S(V, D), "wzr": S(D + FD, 2 * D), "uzr": S(D, 2 * D), "bzr": S(2 * D),
         "wn": S(D + FD, D), "un": S(D, D), "bn": S(D), "out": S(D, V), "ob": S(V)}
    B = 16
    return step, (p, p, p, S(), S(B, NR, FD), S(B, NREF, L, dtype=I32), S(B, L, V))


# ----------------------------------------------------------------------------- sort


def partial_auc_sorted_hardest_negatives_squared_hinge_classifier():
    """One-way partial-AUC maximisation (false-positive rate in [0, 0.1]) for a fraud-detection
    style tabular classifier: a residual MLP (64 features, batch-normalised numeric inputs,
    two residual blocks of width 256) scores a batch of 128 positives and 1024 negatives;
    the negative scores are sorted in descending order with lax.sort carrying their indices
    (a two-operand sort) and the top 10% -- the hardest negatives that bound the partial
    AUC -- are kept; the loss is the mean squared hinge (1 - (s_pos - s_neg))+^2 over all
    positive / hard-negative pairs plus a small pointwise BCE warm-start term; the full and
    partial empirical AUC are returned from ranks computed with a double argsort of all
    scores (Mann-Whitney U); Adam with a step schedule."""
    NF, HID, NPOS, NNEG, FPR = 64, 256, 128, 1024, 0.1
    KHARD = int(NNEG * FPR)

    def score(p, x):
        mu, var = jnp.mean(x, 0), jnp.var(x, 0)
        h = (x - mu) * lax.rsqrt(var + 1e-5) * p["ig"] + p["ib"]
        h = jax.nn.relu(h @ p["w0"] + p["b0"])
        for q in p["blocks"]:
            u = jax.nn.relu(_ln(h, q["g"], q["b"]) @ q["w1"] + q["b1"])
            h = h + u @ q["w2"] + q["b2"]
        return (h @ p["out"])[:, 0] + p["ob"]

    def loss(p, xp, xn):
        s = score(p, jnp.concatenate([xp, xn], 0))
        sp, sn = s[:NPOS], s[NPOS:]
        idx = jnp.arange(NNEG, dtype=I32)
        neg_sorted, order = lax.sort((-sn, idx), num_keys=1)
        hard = -neg_sorted[:KHARD]
        margin = 1.0 - (sp[:, None] - hard[None, :])
        pauc_loss = jnp.mean(jnp.square(jax.nn.relu(margin)))
        y = jnp.concatenate([jnp.ones(NPOS), jnp.zeros(NNEG)])
        bce = jnp.mean(_bce_logits(s, y))
        return pauc_loss + 0.1 * bce, (s, order[:KHARD])

    def aucs(s):
        ranks = jnp.argsort(jnp.argsort(s)).astype(F32) + 1.0
        u = jnp.sum(ranks[:NPOS]) - NPOS * (NPOS + 1) / 2.0
        full = u / (NPOS * NNEG)
        sn_sorted = -jnp.sort(-s[NPOS:])[:KHARD]
        part = jnp.mean((s[:NPOS, None] > sn_sorted[None, :]).astype(F32))
        return full, part

    def step(p, m, v, t, xp, xn):
        (l, (s, hard_idx)), g = jax.value_and_grad(loss, has_aux=True)(p, xp, xn)
        lr = 1e-3 * 0.1 ** jnp.floor(t / 20000.0)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr, wd=1e-4)
        return l, aucs(lax.stop_gradient(s)), hard_idx, p, m, v
    blk = {"g": S(HID), "b": S(HID), "w1": S(HID, HID), "b1": S(HID), "w2": S(HID, HID),
           "b2": S(HID)}
    p = {"ig": S(NF), "ib": S(NF), "w0": S(NF, HID), "b0": S(HID), "blocks": [blk, dict(blk)],
         "out": S(HID, 1), "ob": S()}
    return step, (p, p, p, S(), S(NPOS, NF), S(NNEG, NF))


# ----------------------------------------------------------------------------- fft


def dcfnet_discriminative_correlation_filter_fourier_closed_form_tracker():
    """DCFNet (Wang et al.) visual tracker trained end to end through a discriminative
    correlation filter layer: a light conv feature net (two 3x3 convs, 32 channels, local
    response normalisation by a channel-window sum) embeds a 32x32 template patch and a
    32x32 search patch, both multiplied by a cosine (Hann) window; jnp.fft.fft2 over the
    spatial axes gives their spectra; the filter is solved in closed form per frequency,
    W = conj(Y) Z / (sum_c Z conj(Z) + lambda), from the spectrum of the ideal Gaussian
    response; the response to the search patch is the real part of the inverse FFT of the
    channel sum of conj(W) X; the loss is the squared error to the passed-in shifted
    Gaussian label map; SGD with momentum, weight decay and a log-space learning-rate
    decay; the peak location error is returned."""
    HW, C, LAM, SIG = 32, 32, 1e-4, 2.0
    hann = np.hanning(HW + 2)[1:-1].astype(np.float32)
    WIN = (hann[:, None] * hann[None, :])[None, :, :, None]
    ys, xs = np.meshgrid(np.arange(HW) - HW // 2, np.arange(HW) - HW // 2, indexing="ij")
    Y0 = np.roll(np.exp(-0.5 * (ys ** 2 + xs ** 2) / SIG ** 2), (-(HW // 2), -(HW // 2)), (0, 1))
    YF = np.fft.fft2(Y0).astype(np.complex64)[None, :, :, None]

    def feat(p, x):
        h = jax.nn.relu(_conv(x, p["c1"]) + p["b1"])
        h = _conv(h, p["c2"]) + p["b2"]
        sq = lax.reduce_window(jnp.square(h), 0.0, lax.add, (1, 1, 1, 5), (1, 1, 1, 1), "SAME")
        h = h / jnp.power(1.0 + 1e-4 * sq, 0.75)
        return h * WIN

    def loss(p, z, x, label):
        zf = jnp.fft.fft2(feat(p, z), axes=(1, 2))
        xf = jnp.fft.fft2(feat(p, x), axes=(1, 2))
        kzz = jnp.sum(jnp.real(zf * jnp.conj(zf)), -1, keepdims=True)
        alpha = zf * jnp.conj(YF) / (kzz + LAM)
        resp = jnp.real(jnp.fft.ifft2(jnp.sum(jnp.conj(alpha) * xf, -1), axes=(1, 2)))
        err = jnp.sum(jnp.square(resp - label), (1, 2))
        peak = jnp.argmax(resp.reshape(resp.shape[0], -1), -1)
        gt = jnp.argmax(label.reshape(label.shape[0], -1), -1)
        dy = (peak // HW - gt // HW).astype(F32)
        dx = (peak % HW - gt % HW).astype(F32)
        return jnp.mean(err), jnp.mean(jnp.sqrt(dy * dy + dx * dx))

    def step(p, mom, t, z, x, label):
        (l, perr), g = jax.value_and_grad(loss, has_aux=True)(p, z, x, label)
        lr = 1e-2 * jnp.exp(math.log(1e-3) * jnp.minimum(t / 50000.0, 1.0))
        mom = tmap(lambda b, g, w: 0.9 * b + g + 5e-5 * w, mom, g, p)
        p = tmap(lambda w, b: w - lr * b, p, mom)
        return l, perr, p, mom
    p = {"c1": S(3, 3, 3, C), "b1": S(C), "c2": S(3, 3, C, C), "b2": S(C)}
    B = 16
    return step, (p, p, S(), S(B, HW, HW, 3), S(B, HW, HW, 3), S(B, HW, HW))


# ----------------------------------------------------------------------------- linalg


def lowrank_plus_diagonal_gaussian_woodbury_cholesky_multivariate_forecaster():
    """GPVar-style multivariate probabilistic forecaster (Salinas et al. 2019) for 64 related
    series: a shared MLP reads each series' 48-step scaled history plus a learned series
    embedding and emits, for each of 4 horizon steps, a mean, a softplus diagonal variance
    and an 8-dim factor row, so the joint covariance across series is D + V V^T; the
    Gaussian log-likelihood of the 64-dim target vectors uses the Woodbury identity and the
    matrix determinant lemma -- the 8x8 capacity matrix I + V^T D^-1 V is factorised with
    jnp.linalg.cholesky and the solves use jax.scipy.linalg.solve_triangular -- batched over
    examples and horizons; mean-scaling of every series; negative log-likelihood per
    series; Adam with clipping."""
    NS, CTX, HOR, R, E, HID = 64, 48, 4, 8, 16, 128

    def loss(p, hist, target):
        B = hist.shape[0]
        scale = jnp.mean(jnp.abs(hist), -1, keepdims=True) + 1.0
        hs, ts = hist / scale, target / scale
        emb = jnp.broadcast_to(p["emb"], (B, NS, E))
        h = jax.nn.relu(jnp.concatenate([hs, emb], -1) @ p["w1"] + p["b1"])
        h = jax.nn.relu(h @ p["w2"] + p["b2"])
        mu = (h @ p["wmu"] + p["bmu"]).reshape(B, NS, HOR).transpose(0, 2, 1)
        d = jax.nn.softplus(h @ p["wd"] + p["bd"]).reshape(B, NS, HOR).transpose(0, 2, 1) + 1e-3
        vf = (h @ p["wv"] + p["bv"]).reshape(B, NS, HOR, R).transpose(0, 2, 1, 3)
        z = ts.transpose(0, 2, 1) - mu
        dinv_v = vf / d[..., None]
        cap = jnp.eye(R) + jnp.einsum("bhnr,bhns->bhrs", vf, dinv_v)
        lc = jnp.linalg.cholesky(cap)
        w = jax.scipy.linalg.solve_triangular(lc, jnp.einsum("bhnr,bhn->bhr", dinv_v, z)[..., None],
                                              lower=True)[..., 0]
        quad = jnp.sum(z * z / d, -1) - jnp.sum(jnp.square(w), -1)
        logdet = jnp.sum(jnp.log(d), -1) + 2.0 * jnp.sum(jnp.log(jnp.diagonal(lc, 0, -2, -1)), -1)
        nll = 0.5 * (quad + logdet + NS * math.log(2 * math.pi))
        nll = nll + jnp.sum(jnp.log(scale[..., 0]), -1)[:, None]
        return jnp.mean(nll) / NS

    def step(p, m, v, t, hist, target):
        l, g = jax.value_and_grad(loss)(p, hist, target)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 10.0), t, lr=1e-3)
        return l, p, m, v
    p = {"emb": S(NS, E), "w1": S(CTX + E, HID), "b1": S(HID), "w2": S(HID, HID), "b2": S(HID),
         "wmu": S(HID, HOR), "bmu": S(HOR), "wd": S(HID, HOR), "bd": S(HOR),
         "wv": S(HID, HOR * R), "bv": S(HOR * R)}
    B = 32
    return step, (p, p, p, S(), S(B, NS, CTX), S(B, NS, HOR))


# ----------------------------------------------------------------------------- scatter/gather


def pointnet_plus_plus_knn_grouping_gather_set_abstraction_classifier():
    """PointNet++ (Qi et al.) single-scale-grouping classifier on 512-point clouds: two set
    abstraction levels take passed-in farthest-point-sampling indices (128 then 32
    centroids) gathered with take_along_axis, group the 16 nearest neighbours of each
    centroid by lax.top_k on negative squared distances, gather the neighbours' coordinates
    (made relative to the centroid) and features with batched advanced indexing (scatter-
    adds in the backward pass), run a shared point-wise MLP with batch norm (32-32-64, then
    64-64-128) and max-pool over each group; a global abstraction (128-256 MLP and max over
    the centroids), a dense head with dropout from a passed-in raw key and 40 classes;
    label-smoothed cross-entropy; Adam with step decay; BN batch statistics returned."""
    NPTS, K, NCLS = 512, 16, 40

    def smlp(layers, x, stats):
        for q in layers:
            h = x @ q["w"] + q["b"]
            axes = tuple(range(h.ndim - 1))
            h, st = _bn(h, q["g"], q["bb"], axes)
            stats.append(st)
            x = jax.nn.relu(h)
        return x

    def set_abstraction(layers, xyz, feats, cidx, stats):
        B = xyz.shape[0]
        cxyz = jnp.take_along_axis(xyz, cidx[..., None], 1)
        d2 = jnp.sum(jnp.square(cxyz[:, :, None] - xyz[:, None]), -1)
        _, nbr = lax.top_k(-d2, K)
        bidx = jnp.arange(B)[:, None, None]
        rel = xyz[bidx, nbr] - cxyz[:, :, None]
        grouped = rel if feats is None else jnp.concatenate([rel, feats[bidx, nbr]], -1)
        return cxyz, jnp.max(smlp(layers, grouped, stats), 2)

    def loss(p, pts, fps1, fps2, labels, key):
        stats = []
        xyz1, f1 = set_abstraction(p["sa1"], pts, None, fps1, stats)
        xyz2, f2 = set_abstraction(p["sa2"], xyz1, f1, fps2, stats)
        g = jnp.max(smlp(p["sa3"], jnp.concatenate([xyz2, f2], -1), stats), 1)
        h = jax.nn.relu(g @ p["fc1"] + p["fb1"])
        h = jnp.where(jax.random.bernoulli(key, 0.6, h.shape), h / 0.6, 0.0)
        return _smooth_xent(h @ p["fc2"] + p["fb2"], labels, 0.2), stats

    def step(p, m, v, t, pts, fps1, fps2, labels, key):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, pts, fps1, fps2, labels, key)
        lr = 1e-3 * 0.7 ** jnp.floor(t / 20000.0)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr, wd=1e-4)
        return l, stats, p, m, v

    def mlp_p(ci, widths):
        out = []
        for co in widths:
            out.append({"w": S(ci, co), "b": S(co), "g": S(co), "bb": S(co)})
            ci = co
        return out
    p = {"sa1": mlp_p(3, (32, 32, 64)), "sa2": mlp_p(3 + 64, (64, 64, 128)),
         "sa3": mlp_p(3 + 128, (128, 256)), "fc1": S(256, 128), "fb1": S(128),
         "fc2": S(128, NCLS), "fb2": S(NCLS)}
    B = 16
    return step, (p, p, p, S(), S(B, NPTS, 3), S(B, 128, dtype=I32), S(B, 32, dtype=I32),
                  S(B, dtype=I32), S(2, dtype=U32))


# ----------------------------------------------------------------------------- dynamic slices


def streaming_chunked_attention_kv_ring_buffer_dynamic_update_slice_scan_lm():
    """Streaming (chunked) transformer LM trained the way it is served: a 128-token sequence is
    processed in 8 chunks of 16 by a lax.scan over the chunk index; each chunk's embeddings
    are cut with lax.dynamic_slice, and every layer keeps a key / value ring buffer of three
    chunks (48 slots) plus the absolute positions held in each slot in the scan carry,
    written with lax.dynamic_update_slice at slot (c mod 3) x 16; the chunk's queries attend
    over the buffer with a mask of causal, in-window (positions within 48) and filled slots;
    two pre-LN layers of width 128 (4 heads, learned absolute positions sliced the same
    way, GELU MLP); cross-entropy over all tokens; AdamW with warmup-cosine and clipping."""
    V, D, H, T, C, NBUF, NL = 512, 128, 4, 128, 16, 3, 2
    NC, W, DH = T // C, NBUF * C, D // H

    def loss(p, tok, tgt):
        B = tok.shape[0]
        x_all = p["emb"][tok]

        def chunk(carry, c):
            kbuf, vbuf, pbuf = carry
            start = c * C
            x = lax.dynamic_slice(x_all, (0, start, 0), (B, C, D))
            x = x + lax.dynamic_slice(p["pos"], (start, 0), (C, D))
            qpos = start + jnp.arange(C)
            slot = (c % NBUF) * C
            pbuf = lax.dynamic_update_slice(pbuf, qpos, (slot,))
            ok = (pbuf[None, :] <= qpos[:, None]) & (pbuf[None, :] > qpos[:, None] - W) & \
                (pbuf[None, :] >= 0)
            nk, nv = [], []
            for li, q in enumerate(p["layers"]):
                h = _ln(x, q["g1"], q["b1"])
                qq = (h @ q["wq"]).reshape(B, C, H, DH)
                kb = lax.dynamic_update_slice(kbuf[li], h @ q["wk"], (0, slot, 0))
                vb = lax.dynamic_update_slice(vbuf[li], h @ q["wv"], (0, slot, 0))
                nk.append(kb)
                nv.append(vb)
                s = jnp.einsum("bqhd,bkhd->bhqk", qq, kb.reshape(B, W, H, DH)) / math.sqrt(DH)
                s = jnp.where(ok[None, None], s, -1e9)
                a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vb.reshape(B, W, H, DH))
                x = x + a.reshape(B, C, D) @ q["wo"]
                h = _ln(x, q["g2"], q["b2"])
                x = x + jax.nn.gelu(h @ q["f1"] + q["fb1"]) @ q["f2"] + q["fb2"]
            logits = _ln(x, p["gf"], p["bf"]) @ p["out"]
            return (jnp.stack(nk), jnp.stack(nv), pbuf), logits
        kv0 = jnp.zeros((NL, B, W, D))
        init = (kv0, kv0, jnp.full((W,), -1, I32))
        _, logits = lax.scan(chunk, init, jnp.arange(NC))
        logits = jnp.swapaxes(logits, 0, 1).reshape(B, T, V)
        return _xent(logits, tgt)

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        lr = _cosine_lr(t, 6e-4, 50000.0, warm=1000.0)
        p, m, v = _adam_tree(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.95, wd=0.1)
        return l, p, m, v
    q = {"g1": S(D), "b1": S(D), "wq": S(D, D), "wk": S(D, D), "wv": S(D, D), "wo": S(D, D),
         "g2": S(D), "b2": S(D), "f1": S(D, 4 * D), "fb1": S(4 * D), "f2": S(4 * D, D),
         "fb2": S(D)}
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [dict(q) for _ in range(NL)], "gf": S(D),
         "bf": S(D), "out": S(D, V)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T, dtype=I32))


# ----------------------------------------------------------------------------- mixed precision


def bfloat16_segformer_efficient_spatial_reduction_attention_mixffn_decoder():
    """SegFormer (Xie et al.) semantic segmentation of 64x64 images in bfloat16 with float32
    master weights: a hierarchical Mix Transformer encoder of three stages (one block each)
    with overlapping patch embeddings (7x7 stride 4, then 3x3 stride 2 twice; widths 32 /
    64 / 128; token grids 16x16, 8x8, 4x4), efficient self-attention whose keys and values
    come from a strided spatial-reduction conv (ratios 4 / 2 / 1) followed by LayerNorm, and
    Mix-FFN blocks (dense, 3x3 depthwise conv, GELU, dense) without positional encodings; an
    all-MLP decoder projects every stage to 64 channels, bilinearly resizes them to 16x16
    (jax.image.resize), concatenates, fuses and predicts 8 classes that are resized to full
    resolution; LayerNorms, softmax and cross-entropy (ignore label 255) run in float32;
    AdamW with polynomial decay."""
    NC, IGN, DEC = 8, 255, 64
    STAGES = ((7, 4, 32, 1, 4), (3, 2, 64, 2, 2), (3, 2, 128, 4, 1))
    bf = lambda a: a.astype(BF16)

    def ln(x, g, b):
        return bf(_ln(x.astype(F32), g, b))

    def conv(x, w, stride, groups=1):
        return lax.conv_general_dilated(x, bf(w), (stride, stride), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                        feature_group_count=groups)

    def attention(q, x, hw, heads, sr):
        b, n, d = x.shape
        qq = (x @ bf(q["wq"])).reshape(b, n, heads, d // heads)
        kvin = x
        if sr > 1:
            m = conv(x.reshape(b, hw, hw, d), q["sr"], sr) + bf(q["srb"])
            kvin = ln(m.reshape(b, -1, d), q["sg"], q["sb"])
        nk = kvin.shape[1]
        kk = (kvin @ bf(q["wk"])).reshape(b, nk, heads, d // heads)
        vv = (kvin @ bf(q["wv"])).reshape(b, nk, heads, d // heads)
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk, preferred_element_type=F32)
        a = bf(jax.nn.softmax(s / math.sqrt(d // heads), -1))
        o = jnp.einsum("bhqk,bkhd->bqhd", a, vv).reshape(b, n, d)
        return o @ bf(q["wo"]) + bf(q["bo"])

    def mixffn(q, x, hw):
        b, n, d = x.shape
        h = x @ bf(q["f1"]) + bf(q["fb1"])
        h = conv(h.reshape(b, hw, hw, -1), q["dw"], 1, groups=h.shape[-1]).reshape(b, n, -1)
        return jax.nn.gelu(h + bf(q["dwb"])) @ bf(q["f2"]) + bf(q["fb2"])

    def loss(p, img, lab):
        B, HWI = img.shape[0], img.shape[1]
        x = bf(img)
        feats = []
        for (k, s, d, heads, sr), st in zip(STAGES, p["stages"]):
            x = conv(x, st["pe"], s) + bf(st["peb"])
            hw = x.shape[1]
            x = ln(x.reshape(B, hw * hw, d), st["pg"], st["pb"])
            for q in st["blocks"]:
                x = x + attention(q, ln(x, q["g1"], q["b1"]), hw, heads, sr)
                x = x + mixffn(q, ln(x, q["g2"], q["b2"]), hw)
            x = ln(x, st["ng"], st["nb"]).reshape(B, hw, hw, d)
            feats.append(x)
        side = feats[0].shape[1]
        ups = []
        for f, w in zip(feats, p["proj"]):
            h = f @ bf(w)
            ups.append(jax.image.resize(h, (B, side, side, DEC), "bilinear"))
        h = jnp.concatenate(ups[::-1], -1) @ bf(p["fuse"])
        h, _ = _bn(h.astype(F32), p["fg"], p["fbn"], (0, 1, 2))
        logits = bf(jax.nn.relu(h)) @ bf(p["cls"]) + bf(p["clsb"])
        logits = jax.image.resize(logits.astype(F32), (B, HWI, HWI, NC), "bilinear")
        valid = lab != IGN
        safe = jnp.where(valid, lab, 0)
        nll = -jnp.take_along_axis(jax.nn.log_softmax(logits, -1), safe[..., None], -1)[..., 0]
        return jnp.sum(nll * valid) / jnp.maximum(jnp.sum(valid), 1)

    def step(p, m, v, t, img, lab):
        l, g = jax.value_and_grad(loss)(p, img, lab)
        lr = 6e-5 * jnp.power(1.0 - jnp.minimum(t / 160000.0, 1.0), 1.0)
        p, m, v = _adam_tree(p, m, v, g, t, lr=lr, wd=0.01)
        return l, p, m, v
    stages, ci = [], 3
    for k, s, d, heads, sr in STAGES:
        blk = {"g1": S(d), "b1": S(d), "wq": S(d, d), "wk": S(d, d), "wv": S(d, d),
               "wo": S(d, d), "bo": S(d), "g2": S(d), "b2": S(d), "f1": S(d, 4 * d),
               "fb1": S(4 * d), "dw": S(3, 3, 1, 4 * d), "dwb": S(4 * d), "f2": S(4 * d, d),
               "fb2": S(d)}
        if sr > 1:
            blk.update(sr=S(sr, sr, d, d), srb=S(d), sg=S(d), sb=S(d))
        stages.append({"pe": S(k, k, ci, d), "peb": S(d), "pg": S(d), "pb": S(d),
                       "blocks": [blk], "ng": S(d), "nb": S(d)})
        ci = d
    p = {"stages": stages, "proj": [S(d, DEC) for _, _, d, _, _ in STAGES],
         "fuse": S(3 * DEC, DEC), "fg": S(DEC), "fbn": S(DEC), "cls": S(DEC, NC), "clsb": S(NC)}
    return step, (p, p, p, S(), S(8, 64, 64, 3), S(8, 64, 64, dtype=I32))


# ----------------------------------------------------------------------------- optimizers


def muon_newton_schulz_orthogonalized_momentum_hidden_matrices_adamw_rest_vit():
    """Muon (Jordan et al. 2024) training of a ViT on 32x32 images (4x4 patches, 64 tokens plus
    a class token, three pre-LN layers of width 128, 4 heads): the hidden weight matrices
    (fused qkv, attention output, MLP in and out) get Nesterov momentum orthogonalised by
    five steps of the quintic Newton-Schulz iteration X <- a X + (b A + c A^2) X with
    A = X X^T, (a, b, c) = (3.4445, -4.7750, 2.0315), on the Frobenius-normalised update
    (transposed first when it has more rows than columns) and scaled by
    sqrt(max(1, rows / cols)); the patch embedding, positions, class token, head, gains and
    biases get AdamW; both with decoupled weight decay and a shared warmup-cosine schedule;
    label-smoothed cross-entropy."""
    PS, D, H, NL, NC, NS = 4, 128, 4, 3, 100, 5
    A_, B_, C_ = 3.4445, -4.7750, 2.0315

    def layer(mat, vec, x):
        b, t, d = x.shape
        h = _ln(x, vec["g1"], vec["b1"])
        qkv = h @ mat["qkv"] + vec["qkvb"]
        qq, kk, vv = (a.reshape(b, t, H, d // H) for a in jnp.split(qkv, 3, -1))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(d // H)
        a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d)
        x = x + a @ mat["o"] + vec["ob"]
        h = _ln(x, vec["g2"], vec["b2"])
        return x + jax.nn.gelu(h @ mat["f1"] + vec["fb1"]) @ mat["f2"] + vec["fb2"]

    def loss(p, img, labels):
        B = img.shape[0]
        g = img.shape[1] // PS
        r = p["rest"]
        x = img.reshape(B, g, PS, g, PS, 3).transpose(0, 1, 3, 2, 4, 5).reshape(B, g * g, -1)
        x = x @ r["patch"] + r["pb"]
        x = jnp.concatenate([jnp.broadcast_to(r["cls"], (B, 1, D)), x], 1) + r["pos"]
        for mat, vec in zip(p["mats"], p["vecs"]):
            x = layer(mat, vec, x)
        logits = _ln(x[:, 0], r["gf"], r["bf"]) @ r["head"] + r["hb"]
        return _smooth_xent(logits, labels)

    def newton_schulz(g):
        tr = g.shape[0] > g.shape[1]
        x = g.T if tr else g
        x = x / (jnp.linalg.norm(x) + 1e-7)
        for _ in range(NS):
            a = x @ x.T
            x = A_ * x + (B_ * a + C_ * a @ a) @ x
        x = x.T if tr else x
        return x * math.sqrt(max(1.0, g.shape[0] / g.shape[1]))

    def step(p, mbuf, am, av, t, img, labels):
        l, g = jax.value_and_grad(loss)(p, img, labels)
        sched = _cosine_lr(t, 1.0, 20000.0, warm=500.0)
        mbuf = tmap(lambda b, g: 0.95 * b + g, mbuf, g["mats"])
        upd = tmap(lambda b, g: newton_schulz(g + 0.95 * b), mbuf, g["mats"])
        mats = tmap(lambda w, u: w - 0.02 * sched * (u + 0.01 * w), p["mats"], upd)
        other = {"vecs": p["vecs"], "rest": p["rest"]}
        gother = {"vecs": g["vecs"], "rest": g["rest"]}
        other, am, av = _adam_tree(other, am, av, gother, t, lr=3e-4 * sched, b2=0.95, wd=0.01)
        return l, dict(other, mats=mats), mbuf, am, av
    mat = {"qkv": S(D, 3 * D), "o": S(D, D), "f1": S(D, 4 * D), "f2": S(4 * D, D)}
    vec = {"g1": S(D), "b1": S(D), "qkvb": S(3 * D), "ob": S(D), "g2": S(D), "b2": S(D),
           "fb1": S(4 * D), "fb2": S(D)}
    rest = {"patch": S(PS * PS * 3, D), "pb": S(D), "cls": S(D), "pos": S(65, D), "gf": S(D),
            "bf": S(D), "head": S(D, NC), "hb": S(NC)}
    mats = [dict(mat) for _ in range(NL)]
    vecs = [dict(vec) for _ in range(NL)]
    p = {"mats": mats, "vecs": vecs, "rest": rest}
    other = {"vecs": vecs, "rest": rest}
    return step, (p, mats, other, other, S(), S(16, 32, 32, 3), S(16, dtype=I32))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [deep_hedging_shared_policy_mlp_cvar_rockafellar_uryasev_hedger,
            pinn_tanh_mlp_heat_equation_forward_over_reverse_residual_boundary_fit],
    "cnn": [resnest_split_attention_radix_groups_cardinal_softmax_classifier,
            xception_entry_flow_separable_convs_strided_maxpool_residual_classifier],
    "transformer": [bigbird_block_sparse_window_global_random_blocks_mlm_encoder,
                    music_transformer_relative_attention_skewing_trick_event_lm],
    "rnn": [hyperlstm_hypernetwork_weight_scaling_char_lm_scan,
            on_lstm_ordered_neurons_cumax_master_gates_chunked_lm],
    "moe": [mixture_of_lora_adapters_top2_token_router_frozen_base_encoder_classifier],
    "vae": [conv_vae_discretized_logistic_mixture_likelihood_pixel_decoder],
    "unet": [segnet_unet_hybrid_argmax_mask_unpooling_skip_concat_segmenter],
    "gnn": [deepergcn_genconv_learnable_softmax_aggregation_res_plus_blocks],
    "quant": [ibert_integer_only_polynomial_gelu_exp_softmax_int8_encoder],
    "remat": [remat_two_level_scan_gated_conv_lm_nothing_saveable_outer_dots_inner,
              remat_efficientnetv2_fused_mbconv_save_from_both_names_and_dots_policy],
    "custom_vjp": [custom_vjp_fused_rmsnorm_swiglu_manual_backward_saved_rstd_decoder_lm],
    "control": [particle_filter_fori_ess_cond_systematic_resampling_learned_proposal,
                self_critical_sequence_training_while_greedy_baseline_fori_sampled_reinforce],
    "sort": [partial_auc_sorted_hardest_negatives_squared_hinge_classifier],
    "fft": [dcfnet_discriminative_correlation_filter_fourier_closed_form_tracker],
    "linalg": [lowrank_plus_diagonal_gaussian_woodbury_cholesky_multivariate_forecaster],
    "scatter_gather": [pointnet_plus_plus_knn_grouping_gather_set_abstraction_classifier],
    "dynamic": [streaming_chunked_attention_kv_ring_buffer_dynamic_update_slice_scan_lm],
    "mixed": [bfloat16_segformer_efficient_spatial_reduction_attention_mixffn_decoder],
    "optimizer": [muon_newton_schulz_orthogonalized_momentum_hidden_matrices_adamw_rest_vit],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["pinn_tanh_mlp_heat_equation_forward_over_reverse_residual_boundary_fit",
           "resnest_split_attention_radix_groups_cardinal_softmax_classifier",
           "music_transformer_relative_attention_skewing_trick_event_lm",
           "hyperlstm_hypernetwork_weight_scaling_char_lm_scan",
           "mixture_of_lora_adapters_top2_token_router_frozen_base_encoder_classifier",
           "conv_vae_discretized_logistic_mixture_likelihood_pixel_decoder",
           "deepergcn_genconv_learnable_softmax_aggregation_res_plus_blocks",
           "ibert_integer_only_polynomial_gelu_exp_softmax_int8_encoder",
           "remat_efficientnetv2_fused_mbconv_save_from_both_names_and_dots_policy",
           "custom_vjp_fused_rmsnorm_swiglu_manual_backward_saved_rstd_decoder_lm",
           "dcfnet_discriminative_correlation_filter_fourier_closed_form_tracker",
           "bfloat16_segformer_efficient_spatial_reduction_attention_mixffn_decoder"]
SHARDED_SET = ["bfloat16_segformer_efficient_spatial_reduction_attention_mixffn_decoder",
               "muon_newton_schulz_orthogonalized_momentum_hidden_matrices_adamw_rest_vit",
               "bigbird_block_sparse_window_global_random_blocks_mlm_encoder",
               "xception_entry_flow_separable_convs_strided_maxpool_residual_classifier",
               "segnet_unet_hybrid_argmax_mask_unpooling_skip_concat_segmenter",
               "deep_hedging_shared_policy_mlp_cvar_rockafellar_uryasev_hedger",
               "streaming_chunked_attention_kv_ring_buffer_dynamic_update_slice_scan_lm",
               "remat_two_level_scan_gated_conv_lm_nothing_saveable_outer_dots_inner"]
