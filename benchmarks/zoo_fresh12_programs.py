"""Twelfth fresh set: 25 JAX programs written by a helper on 2026-11-28 (third session of that
day), kept outside the repository and measured as a held-out set at that session's start
(612f1cf) and at ad459bb only; tuned on from then (RESULTS.md, "Fates, 2026-11-28 third
session"). Same interface as zoo_programs.py::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh12_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh12_programs python benchmarks/accuracy.py --data DIR
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

F32 = jnp.float32
BF16 = jnp.bfloat16
I32 = jnp.int32
tmap = jax.tree_util.tree_map


def S(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


def _sgd(p, g, lr=0.05):
    return tmap(lambda a, b: a - lr * b, p, g)


def _ln(x, g, b, eps=1e-5):
    m = jnp.mean(x, -1, keepdims=True)
    v = jnp.mean(jnp.square(x - m), -1, keepdims=True)
    return (x - m) * lax.rsqrt(v + eps) * g + b


def _conv(x, w, stride=1, pad="SAME"):
    return lax.conv_general_dilated(x, w, (stride, stride), pad,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


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


def _dwconv(x, w, stride=1, dilation=1):
    """Depthwise NHWC convolution; w is [kh, kw, 1, C]."""
    return lax.conv_general_dilated(x, w, (stride, stride), "SAME",
                                    rhs_dilation=(dilation, dilation),
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                    feature_group_count=x.shape[-1])


def _xent(logits, labels):
    logp = jax.nn.log_softmax(logits, -1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[..., None], -1))


def _gn(x, g, b, groups=2):
    n, hh, ww, c = x.shape
    xg = x.reshape(n, hh, ww, groups, c // groups)
    m = jnp.mean(xg, (1, 2, 4), keepdims=True)
    v = jnp.var(xg, (1, 2, 4), keepdims=True)
    return ((xg - m) * lax.rsqrt(v + 1e-5)).reshape(x.shape) * g + b


# ----------------------------------------------------------------------------- mlp


def maxout_mlp_nesterov():
    """Two maxout layers (4 linear pieces, max over the pieces), soft-label cross-entropy,
    trained with Nesterov momentum SGD."""
    def maxout(x, w, b, k):
        z = x @ w + b
        return jnp.max(z.reshape(z.shape[:-1] + (-1, k)), -1)

    def loss(p, x, y):
        h = maxout(x, p["w1"], p["b1"], 4)
        h = maxout(h, p["w2"], p["b2"], 4)
        logp = jax.nn.log_softmax(h @ p["out"], -1)
        return -jnp.mean(jnp.sum(logp * y, -1))

    def step(p, vel, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        mu, lr = 0.9, 0.05
        vel = tmap(lambda v, g: mu * v - lr * g, vel, g)
        p = tmap(lambda p, v, g: p + mu * v - lr * g, p, vel, g)
        return l, p, vel
    p = {"w1": S(12, 64), "b1": S(64), "w2": S(16, 48), "b2": S(48), "out": S(12, 5)}
    return step, (p, p, S(16, 12), S(16, 5))


def wide_and_deep_ctr_adagrad():
    """Wide & Deep click-through model: per-field embeddings into a deep MLP, a wide linear part
    over hashed cross-feature ids, sigmoid cross-entropy, Adagrad update."""
    def loss(p, dense, cat_ids, cross_ids, y):
        b = dense.shape[0]
        emb = p["emb"][cat_ids]                              # [B,F,E]
        deep_in = jnp.concatenate([emb.reshape(b, -1), dense], -1)
        h = jax.nn.relu(deep_in @ p["w1"] + p["b1"])
        h = jax.nn.relu(h @ p["w2"] + p["b2"])
        deep = (h @ p["w3"])[:, 0]
        wide = jnp.sum(p["wide"][cross_ids], -1) + dense @ p["wd"]
        z = deep + wide + p["bias"]
        return jnp.mean(jnp.logaddexp(0.0, z) - y * z)

    def step(p, acc, dense, cat_ids, cross_ids, y):
        l, g = jax.value_and_grad(loss)(p, dense, cat_ids, cross_ids, y)
        acc = tmap(lambda a, g: a + g * g, acc, g)
        p = tmap(lambda p, a, g: p - 0.05 * g / (jnp.sqrt(a) + 1e-7), p, acc, g)
        return l, p, acc
    F, E, Dn = 4, 4, 5
    p = {"emb": S(50, E), "w1": S(F * E + Dn, 32), "b1": S(32), "w2": S(32, 16), "b2": S(16),
         "w3": S(16, 1), "wide": S(64), "wd": S(Dn), "bias": S()}
    return step, (p, p, S(16, Dn), S(16, F, dtype=I32), S(16, 3, dtype=I32), S(16))


# ----------------------------------------------------------------------------- cnn


def ghost_module_bottleneck():
    """GhostNet bottleneck: ghost modules (1x1 primary conv + cheap depthwise conv, concatenated),
    a stride-2 depthwise conv between them, a depthwise+1x1 shortcut, global-pool classifier."""
    def ghost(x, wp, wc, relu):
        prim = _conv(x, wp)
        if relu:
            prim = jax.nn.relu(prim)
        cheap = _dwconv(prim, wc)
        if relu:
            cheap = jax.nn.relu(cheap)
        return jnp.concatenate([prim, cheap], -1)

    def loss(p, x, labels):
        h = ghost(x, p["g1p"], p["g1c"], True)               # [N,8,8,16]
        h = _dwconv(h, p["dw"], stride=2)                    # [N,4,4,16]
        h = ghost(h, p["g2p"], p["g2c"], False)              # [N,4,4,8]
        sc = _conv(_dwconv(x, p["sdw"], stride=2), p["spw"])
        h = jax.nn.relu(h + sc)
        return _xent(jnp.mean(h, (1, 2)) @ p["fc"], labels)

    def step(p, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        return l, _sgd(p, g)
    p = {"g1p": S(1, 1, 4, 8), "g1c": S(3, 3, 1, 8), "dw": S(3, 3, 1, 16),
         "g2p": S(1, 1, 16, 4), "g2c": S(3, 3, 1, 4), "sdw": S(3, 3, 1, 4),
         "spw": S(1, 1, 4, 8), "fc": S(8, 5)}
    return step, (p, S(8, 8, 8, 4), S(8, dtype=I32))


def selective_kernel_attention():
    """SKNet unit: a grouped 3x3 branch and a dilated grouped 3x3 branch, fused by a softmax
    attention over branches computed from the globally pooled sum."""
    def gconv(x, w, dil):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME", rhs_dilation=(dil, dil),
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                        feature_group_count=2)

    def loss(p, x, labels):
        h = jax.nn.relu(_conv(x, p["stem"]))                 # [N,H,W,8]
        u0 = jax.nn.relu(gconv(h, p["k3"], 1))
        u1 = jax.nn.relu(gconv(h, p["k5"], 2))
        s = jnp.mean(u0 + u1, (1, 2))                        # [N,8]
        z = jax.nn.relu(s @ p["fc"])
        a = jax.nn.softmax((z @ p["fcab"]).reshape(-1, 2, 8), 1)
        v = a[:, 0, None, None, :] * u0 + a[:, 1, None, None, :] * u1
        return _xent(jnp.mean(v + h, (1, 2)) @ p["head"], labels)
    p = {"stem": S(3, 3, 3, 8), "k3": S(3, 3, 4, 8), "k5": S(3, 3, 4, 8), "fc": S(8, 4),
         "fcab": S(4, 16), "head": S(8, 6)}
    return jax.value_and_grad(loss), (p, S(8, 8, 8, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- transformer


def _rope(x):
    t, dh = x.shape[1], x.shape[-1]
    half = dh // 2
    freqs = 1.0 / (10000.0 ** (jnp.arange(half, dtype=F32) / half))
    ang = jnp.arange(t, dtype=F32)[:, None] * freqs[None]
    cos, sin = jnp.cos(ang)[None, :, None, :], jnp.sin(ang)[None, :, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return jnp.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1)


def talking_heads_rope_block():
    """Causal LM layer with rotary embeddings and talking-heads attention (head-mixing matrices
    before and after the softmax), RMSNorm, global-norm gradient clipping and SGD."""
    def rms(x, g):
        return x * lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * g

    def loss(p, tok):
        b, t = tok.shape
        H, dh = 4, 4
        x = p["emb"][tok]
        h = rms(x, p["g1"])
        q = _rope((h @ p["wq"]).reshape(b, t, H, dh))
        k = _rope((h @ p["wk"]).reshape(b, t, H, dh))
        v = (h @ p["wv"]).reshape(b, t, H, dh)
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / 2.0
        s = jnp.einsum("bhqk,hg->bgqk", s, p["pre_mix"])
        s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -1e9)
        a = jnp.einsum("bhqk,hg->bgqk", jax.nn.softmax(s, -1), p["post_mix"])
        x = x + jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(b, t, H * dh) @ p["wo"]
        h = rms(x, p["g2"])
        x = x + jax.nn.silu(h @ p["f1"]) @ p["f2"]
        logits = rms(x, p["gf"]) @ p["emb"].T
        return _xent(logits[:, :-1], tok[:, 1:])

    def step(p, tok):
        l, g = jax.value_and_grad(loss)(p, tok)
        gn = jnp.sqrt(sum(jnp.sum(a * a) for a in jax.tree_util.tree_leaves(g)))
        scale = jnp.minimum(1.0, 1.0 / (gn + 1e-6))
        return l, tmap(lambda p, g: p - 0.05 * scale * g, p, g), gn
    D, V = 16, 24
    p = {"emb": S(V, D), "g1": S(D), "g2": S(D), "gf": S(D), "wq": S(D, D), "wk": S(D, D),
         "wv": S(D, D), "wo": S(D, D), "pre_mix": S(4, 4), "post_mix": S(4, 4),
         "f1": S(D, 32), "f2": S(32, D)}
    return step, (p, S(8, 16, dtype=I32))


def xcit_channel_attention():
    """XCiT layer on image patches: cross-covariance attention over channels (L2-normalised q/k
    along tokens, per-head learnable temperature), depthwise-conv local patch interaction, MLP."""
    def loss(p, img, labels):
        n = img.shape[0]
        pt = img.reshape(n, 4, 2, 4, 2, 3).transpose(0, 1, 3, 2, 4, 5).reshape(n, 16, 12)
        x = pt @ p["patch"] + p["pos"]                      # [N,16,D]
        H, dh = 2, 8
        h = _ln(x, p["g1"], p["b1"])
        q = (h @ p["wq"]).reshape(n, 16, H, dh).transpose(0, 2, 3, 1)   # [N,H,dh,T]
        k = (h @ p["wk"]).reshape(n, 16, H, dh).transpose(0, 2, 3, 1)
        v = (h @ p["wv"]).reshape(n, 16, H, dh).transpose(0, 2, 3, 1)
        q = q / (jnp.linalg.norm(q, axis=-1, keepdims=True) + 1e-6)
        k = k / (jnp.linalg.norm(k, axis=-1, keepdims=True) + 1e-6)
        a = jax.nn.softmax(jnp.einsum("nhct,nhdt->nhcd", q, k) * p["temp"][None, :, None, None], -1)
        o = jnp.einsum("nhcd,nhdt->nhct", a, v).transpose(0, 3, 1, 2).reshape(n, 16, H * dh)
        x = x + o @ p["wo"]
        h = _ln(x, p["g2"], p["b2"]).reshape(n, 4, 4, -1)
        x = x + jax.nn.gelu(_dwconv(h, p["lpi"])).reshape(n, 16, -1)
        h = _ln(x, p["g3"], p["b3"])
        x = x + jax.nn.gelu(h @ p["f1"]) @ p["f2"]
        return _xent(jnp.mean(x, 1) @ p["head"], labels)
    D = 16
    p = {"patch": S(12, D), "pos": S(16, D), "wq": S(D, D), "wk": S(D, D), "wv": S(D, D),
         "wo": S(D, D), "temp": S(2), "lpi": S(3, 3, 1, D), "f1": S(D, 32), "f2": S(32, D),
         "head": S(D, 5)}
    for i in "123":
        p["g" + i] = S(D)
        p["b" + i] = S(D)
    return jax.value_and_grad(loss), (p, S(8, 8, 8, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- rnn / scan


def indrnn_relu_scan():
    """Two stacked IndRNN layers (element-wise recurrent weights, ReLU) in one lax.scan, sequence
    classification, SGD followed by clipping the recurrent weights to [-1, 1]."""
    def loss(p, x, labels):
        def body(c, xt):
            h1, h2 = c
            h1 = jax.nn.relu(xt @ p["w1"] + p["u1"] * h1 + p["b1"])
            h2 = jax.nn.relu(h1 @ p["w2"] + p["u2"] * h2 + p["b2"])
            return (h1, h2), None
        b = x.shape[0]
        H = p["u1"].shape[0]
        (_, h2), _ = lax.scan(body, (jnp.zeros((b, H)), jnp.zeros((b, H))),
                              jnp.swapaxes(x, 0, 1))
        return _xent(h2 @ p["out"], labels)

    def step(p, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        p = _sgd(p, g, 0.02)
        p = dict(p, u1=jnp.clip(p["u1"], -1.0, 1.0), u2=jnp.clip(p["u2"], -1.0, 1.0))
        return l, p
    H = 16
    p = {"w1": S(5, H), "u1": S(H), "b1": S(H), "w2": S(H, H), "u2": S(H), "b2": S(H),
         "out": S(H, 4)}
    return step, (p, S(8, 12, 5), S(8, dtype=I32))


def clockwork_rnn_periods():
    """Clockwork RNN: four hidden modules with periods 1, 2, 4, 8, updated only when t % period
    == 0, block-upper-triangular recurrence; scan over (t, x_t); regression on the last state."""
    def loss(p, x, y):
        M, K = 4, 4
        periods = jnp.array([1, 2, 4, 8], I32)
        blk = jnp.triu(jnp.ones((M, M)))
        mask = jnp.kron(blk, jnp.ones((K, K)))              # module i reads modules j >= i

        def body(h, inp):
            t, xt = inp
            active = jnp.repeat((t % periods) == 0, K)      # [M*K]
            new = jnp.tanh(h @ (p["wh"] * mask) + xt @ p["wx"] + p["b"])
            return jnp.where(active[None, :], new, h), None
        b, T, _ = x.shape
        h, _ = lax.scan(body, jnp.zeros((b, M * K)),
                        (jnp.arange(T, dtype=I32), jnp.swapaxes(x, 0, 1)))
        return jnp.mean((h @ p["out"] - y) ** 2)
    p = {"wh": S(16, 16), "wx": S(3, 16), "b": S(16), "out": S(16, 2)}
    return jax.value_and_grad(loss), (p, S(8, 16, 3), S(8, 2))


# ----------------------------------------------------------------------------- moe


def sinkhorn_routed_moe():
    """MoE with balanced top-1 routing: a few Sinkhorn normalisation steps (fori_loop, no
    gradient) choose each token's expert, capacity-limited one-hot dispatch/combine tensors,
    batched expert FFNs, gate from the un-normalised router softmax."""
    def loss(p, x, y):
        T = x.shape[0]
        E, C = 4, 10
        logits = x @ p["router"]
        lg = lax.stop_gradient(logits)

        def sk(_, l):
            l = l - jax.nn.logsumexp(l, 0, keepdims=True)
            return l - jax.nn.logsumexp(l, 1, keepdims=True)
        balanced = lax.fori_loop(0, 3, sk, lg)
        idx = jnp.argmax(balanced, -1)
        onehot = jax.nn.one_hot(idx, E)                     # [T,E]
        pos = (jnp.cumsum(onehot, 0) - 1.0) * onehot
        keep = onehot * (pos < C)
        dispatch = keep[..., None] * jax.nn.one_hot(pos.astype(I32), C)   # [T,E,C]
        gate = jnp.sum(jax.nn.softmax(logits, -1) * onehot, -1)
        xe = jnp.einsum("tec,td->ecd", dispatch, x)
        he = jax.nn.gelu(jnp.einsum("ecd,edh->ech", xe, p["w1"]))
        ye = jnp.einsum("ech,ehd->ecd", he, p["w2"])
        out = jnp.einsum("tec,ecd->td", dispatch * gate[:, None, None], ye)
        return jnp.mean(((x + out) @ p["head"] - y) ** 2)

    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return l, _sgd(p, g)
    D, H, E = 8, 16, 4
    p = {"router": S(D, E), "w1": S(E, D, H), "w2": S(E, H, D), "head": S(D, 3)}
    return step, (p, S(32, D), S(32, 3))


# ----------------------------------------------------------------------------- vae


def beta_vae_conv_bernoulli():
    """Convolutional beta-VAE (beta=4): strided-conv encoder, transposed-conv decoder producing
    Bernoulli logits, reparameterisation noise passed in, Adam update."""
    def loss(p, x, eps):
        n = x.shape[0]
        h = jax.nn.relu(_conv(x, p["e1"], 2))               # [N,4,4,8]
        h = jax.nn.relu(_conv(h, p["e2"], 2))               # [N,2,2,8]
        mu, lv = jnp.split(h.reshape(n, -1) @ p["eo"], 2, -1)
        z = mu + jnp.exp(0.5 * lv) * eps
        d = jax.nn.relu(z @ p["dz"]).reshape(n, 2, 2, 8)
        d = jax.nn.relu(lax.conv_transpose(d, p["d1"], (2, 2), "SAME",
                                           dimension_numbers=("NHWC", "HWIO", "NHWC")))
        logits = lax.conv_transpose(d, p["d2"], (2, 2), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))
        rec = jnp.sum(jnp.maximum(logits, 0) - logits * x
                      + jnp.log1p(jnp.exp(-jnp.abs(logits))), (1, 2, 3))
        kl = -0.5 * jnp.sum(1 + lv - mu ** 2 - jnp.exp(lv), -1)
        return jnp.mean(rec + 4.0 * kl)

    def step(p, m, v, x, eps):
        l, g = jax.value_and_grad(loss)(p, x, eps)
        m = tmap(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v = tmap(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        p = tmap(lambda p, m, v: p - 1e-3 * m / (jnp.sqrt(v) + 1e-8), p, m, v)
        return l, p, m, v
    Z = 4
    p = {"e1": S(3, 3, 1, 8), "e2": S(3, 3, 8, 8), "eo": S(32, 2 * Z), "dz": S(Z, 32),
         "d1": S(3, 3, 8, 8), "d2": S(3, 3, 8, 1)}
    return step, (p, p, p, S(8, 8, 8, 1), S(8, Z))


# ----------------------------------------------------------------------------- unet


def unet_bottleneck_self_attention():
    """Class-conditioned denoising U-Net: strided-conv downsampling, multi-head self-attention
    over the 2x2 bottleneck tokens with a class embedding added, transposed-conv upsampling
    with additive skips, MSE."""
    def up(x, w):
        return lax.conv_transpose(x, w, (2, 2), "SAME",
                                  dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def loss(p, x, cls, target):
        n = x.shape[0]
        h0 = jax.nn.silu(_gn(_conv(x, p["c0"]), p["g0"], p["b0"]))     # [N,8,8,8]
        h1 = jax.nn.silu(_gn(_conv(h0, p["c1"], 2), p["g1"], p["b1"]))  # [N,4,4,16]
        h2 = jax.nn.silu(_conv(h1, p["c2"], 2))                          # [N,2,2,16]
        tok = h2.reshape(n, 4, 16) + p["cls_emb"][cls][:, None, :]
        tok = tok + _mha(_ln(tok, p["ag"], p["ab"]), _ln(tok, p["ag"], p["ab"]), p, "a_", 2)
        u1 = jax.nn.silu(up(tok.reshape(n, 2, 2, 16), p["u1"])) + h1
        u0 = jax.nn.silu(up(u1, p["u0"])) + h0
        return jnp.mean((_conv(u0, p["out"]) - target) ** 2)
    p = {"c0": S(3, 3, 3, 8), "g0": S(8), "b0": S(8), "c1": S(3, 3, 8, 16), "g1": S(16),
         "b1": S(16), "c2": S(3, 3, 16, 16), "cls_emb": S(5, 16), "ag": S(16), "ab": S(16),
         "u1": S(2, 2, 16, 16), "u0": S(2, 2, 16, 8), "out": S(3, 3, 8, 3)}
    for k in "qkvo":
        p["a_" + k] = S(16, 16)
    return jax.value_and_grad(loss), (p, S(4, 8, 8, 3), S(4, dtype=I32), S(4, 8, 8, 3))


# ----------------------------------------------------------------------------- gnn


def schnet_energy_force_matching():
    """SchNet-style interatomic potential: Gaussian radial basis of edge distances, cosine
    cutoff, continuous-filter convolutions (segment_sum), per-molecule energy readout; trained
    on energies and forces (forces are -dE/dpos, so the step takes a second derivative)."""
    def ssp(x):
        return jax.nn.softplus(x) - jnp.log(2.0)

    def energy(p, pos, z, src, dst, gid):
        n = pos.shape[0]
        h = p["emb"][z]
        d = jnp.sqrt(jnp.sum((pos[src] - pos[dst]) ** 2, -1) + 1e-6)
        rbf = jnp.exp(-4.0 * (d[:, None] - jnp.linspace(0.0, 3.0, 8)[None]) ** 2)
        fcut = 0.5 * (jnp.cos(jnp.pi * jnp.minimum(d, 3.0) / 3.0) + 1.0)
        for i in range(2):
            w = (ssp(rbf @ p["f1"][i]) @ p["f2"][i]) * fcut[:, None]
            m = (h @ p["win"][i])[src] * w
            agg = jax.ops.segment_sum(m, dst, num_segments=n)
            h = h + ssp(agg @ p["o1"][i]) @ p["o2"][i]
        atom_e = (ssp(h @ p["r1"]) @ p["r2"])[:, 0]
        return jax.ops.segment_sum(atom_e, gid, num_segments=2)

    def loss(p, pos, z, src, dst, gid, e_ref, f_ref):
        e = energy(p, pos, z, src, dst, gid)
        f = -jax.grad(lambda r: jnp.sum(energy(p, r, z, src, dst, gid)))(pos)
        return jnp.mean((e - e_ref) ** 2) + 10.0 * jnp.mean((f - f_ref) ** 2)

    def step(p, pos, z, src, dst, gid, e_ref, f_ref):
        l, g = jax.value_and_grad(loss)(p, pos, z, src, dst, gid, e_ref, f_ref)
        return l, _sgd(p, g, 1e-3)
    F = 12
    p = {"emb": S(5, F), "f1": [S(8, F)] * 2, "f2": [S(F, F)] * 2, "win": [S(F, F)] * 2,
         "o1": [S(F, F)] * 2, "o2": [S(F, F)] * 2, "r1": S(F, 8), "r2": S(8, 1)}
    return step, (p, S(16, 3), S(16, dtype=I32), S(48, dtype=I32), S(48, dtype=I32),
                  S(16, dtype=I32), S(2), S(16, 3))


# ----------------------------------------------------------------------------- quant


def pact_conv_per_channel_qat():
    """Quantisation-aware training of a small conv net: 4-bit symmetric per-output-channel
    weight fake-quant and PACT activations (learnable clip alpha, 4-bit unsigned), both with
    straight-through rounding, plus L2 on the alphas."""
    def round_ste(x):
        return x + lax.stop_gradient(jnp.round(x) - x)

    def wq(w):
        s = jnp.max(jnp.abs(w), axis=(0, 1, 2), keepdims=True) / 7.0 + 1e-8
        return round_ste(jnp.clip(w / s, -8, 7)) * s

    def pact(x, alpha):
        y = 0.5 * (jnp.abs(x) - jnp.abs(x - alpha) + alpha)
        s = alpha / 15.0
        return round_ste(y / s) * s

    def loss(p, x, labels):
        h = pact(_conv(x, wq(p["c1"])), p["a1"])
        h = pact(_conv(h, wq(p["c2"]), 2), p["a2"])
        h = pact(_conv(h, wq(p["c3"])), p["a3"])
        return _xent(jnp.mean(h, (1, 2)) @ p["fc"], labels) + 1e-4 * (
            p["a1"] ** 2 + p["a2"] ** 2 + p["a3"] ** 2)

    def step(p, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        return l, _sgd(p, g, 0.01)
    p = {"c1": S(3, 3, 3, 8), "c2": S(3, 3, 8, 16), "c3": S(3, 3, 16, 16), "a1": S(),
         "a2": S(), "a3": S(), "fc": S(16, 10)}
    return step, (p, S(8, 8, 8, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- remat


def remat_conv_tower_dots_saveable():
    """Three residual conv blocks (conv, GroupNorm, GELU, conv), each under jax.checkpoint with
    the dots_saveable policy (saves convolutions and matmuls, recomputes the rest)."""
    policy = jax.checkpoint_policies.dots_saveable

    def block(q, x):
        h = jax.nn.gelu(_gn(_conv(x, q["c1"]), q["g"], q["b"]))
        return x + _conv(h, q["c2"])

    def loss(ps, x, labels):
        h = jax.nn.relu(_conv(x, ps["stem"]))
        for q in ps["blocks"]:
            h = jax.checkpoint(block, policy=policy)(q, h)
        return _xent(jnp.mean(h, (1, 2)) @ ps["fc"], labels)

    def step(ps, x, labels):
        l, g = jax.value_and_grad(loss)(ps, x, labels)
        return l, _sgd(ps, g)
    C = 8
    q = {"c1": S(3, 3, C, C), "g": S(C), "b": S(C), "c2": S(3, 3, C, C)}
    return step, ({"stem": S(3, 3, 3, C), "blocks": [q, q, q], "fc": S(C, 4)},
                  S(8, 8, 8, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- custom_vjp


@jax.custom_vjp
def _fused_xent(logits, labels):
    lse = jax.nn.logsumexp(logits, -1)
    return lse - jnp.take_along_axis(logits, labels[:, None], -1)[:, 0]


def _fused_xent_fwd(logits, labels):
    lse = jax.nn.logsumexp(logits, -1)
    out = lse - jnp.take_along_axis(logits, labels[:, None], -1)[:, 0]
    return out, (logits, lse, labels)


def _fused_xent_bwd(res, g):
    logits, lse, labels = res
    d = jnp.exp(logits - lse[:, None]) - jax.nn.one_hot(labels, logits.shape[-1])
    return g[:, None] * d, None


_fused_xent.defvjp(_fused_xent_fwd, _fused_xent_bwd)


def custom_vjp_fused_softmax_xent():
    """A two-layer classifier whose softmax cross-entropy is a custom_vjp (backward = softmax -
    one_hot from the saved logsumexp), with a z-loss on the logsumexp."""
    def loss(p, x, labels):
        h = jax.nn.gelu(x @ p["w1"] + p["b1"])
        logits = h @ p["w2"]
        z = jax.nn.logsumexp(logits, -1)
        return jnp.mean(_fused_xent(logits, labels)) + 1e-4 * jnp.mean(z ** 2)

    def step(p, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        return l, _sgd(p, g)
    p = {"w1": S(10, 32), "b1": S(32), "w2": S(32, 12)}
    return step, (p, S(16, 10), S(16, dtype=I32))


# ----------------------------------------------------------------------------- control


def nas_switch_ops_fori():
    """A searched architecture: fori_loop over four layers, each picking its op with lax.switch
    from an integer genome (dense-tanh, gated linear unit, or scaled skip), weights indexed
    dynamically from stacked parameters."""
    def loss(p, x, ops, y):
        def body(i, h):
            w = p["w"][i]
            v = p["v"][i]
            branches = [lambda h: jnp.tanh(h @ w),
                        lambda h: (h @ w) * jax.nn.sigmoid(h @ v),
                        lambda h: h * p["s"][i]]
            return h + lax.switch(ops[i], branches, h)
        h = lax.fori_loop(0, 4, body, x)
        return jnp.mean((h @ p["out"] - y) ** 2)

    def step(p, x, ops, y):
        l, g = jax.value_and_grad(loss)(p, x, ops, y)
        return l, _sgd(p, g)
    D = 12
    p = {"w": S(4, D, D), "v": S(4, D, D), "s": S(4), "out": S(D, 3)}
    return step, (p, S(16, D), S(4, dtype=I32), S(16, 3))


def conjugate_gradient_while_head():
    """Closed-form ridge head solved by conjugate gradient in a while_loop (stops when the
    residual norm is small or after 50 iterations) on support features; the backbone is then
    updated by the gradient of the query loss with that head held fixed."""
    def feats(p, x):
        return jnp.tanh(jnp.tanh(x @ p["w1"]) @ p["w2"])

    def cg(a, b):
        def cond(c):
            i, _, _, _, rs = c
            return (i < 50) & (jnp.sqrt(jnp.max(rs)) > 1e-5)

        def body(c):
            i, x, r, d, rs = c
            ad = a @ d
            alpha = rs / jnp.sum(d * ad, 0)
            x = x + alpha * d
            r = r - alpha * ad
            rs_new = jnp.sum(r * r, 0)
            return i + 1, x, r, r + (rs_new / rs) * d, rs_new
        x0 = jnp.zeros_like(b)
        _, x, _, _, _ = lax.while_loop(cond, body, (0, x0, b, b, jnp.sum(b * b, 0)))
        return x

    def qloss(p, head, xq, yq):
        return jnp.mean((feats(p, xq) @ head - yq) ** 2)

    def step(p, xs, ys, xq, yq):
        phi = feats(p, xs)
        a = phi.T @ phi + 0.1 * jnp.eye(phi.shape[1])
        head = cg(a, phi.T @ ys)
        l, g = jax.value_and_grad(qloss)(p, head, xq, yq)
        return l, _sgd(p, g)
    p = {"w1": S(6, 16), "w2": S(16, 10)}
    return step, (p, S(32, 6), S(32, 2), S(16, 6), S(16, 2))


# ----------------------------------------------------------------------------- sort / top_k


def coteaching_small_loss_argsort():
    """Co-teaching for noisy labels: two classifiers; each is trained only on the 75% of the
    batch with the smallest loss under the *other* network (argsort of per-example losses)."""
    def per_ex(p, x, labels):
        logp = jax.nn.log_softmax(jax.nn.relu(x @ p["a"]) @ p["b"], -1)
        return -jnp.take_along_axis(logp, labels[:, None], -1)[:, 0]

    def loss(ps, x, labels):
        l1 = per_ex(ps[0], x, labels)
        l2 = per_ex(ps[1], x, labels)
        k = (3 * x.shape[0]) // 4
        sel1 = jnp.argsort(lax.stop_gradient(l2))[:k]       # net 1 learns net 2's clean pick
        sel2 = jnp.argsort(lax.stop_gradient(l1))[:k]
        return jnp.mean(l1[sel1]) + jnp.mean(l2[sel2])

    def step(ps, x, labels):
        l, g = jax.value_and_grad(loss)(ps, x, labels)
        return l, _sgd(ps, g)
    p = {"a": S(8, 16), "b": S(16, 4)}
    return step, ((p, p), S(32, 8), S(32, dtype=I32))


# ----------------------------------------------------------------------------- fft


def fnet_fourier_mixing_block():
    """Two FNet encoder layers: token mixing by the real part of a 2-D FFT over (sequence,
    hidden), post-LN residuals, feed-forward; mean-pooled classification."""
    def loss(p, tok, labels):
        x = p["emb"][tok] + p["pos"]
        for i in range(2):
            mix = jnp.real(jnp.fft.fft2(x.astype(jnp.complex64), axes=(1, 2)))
            x = _ln(x + mix, p["g1"][i], p["b1"][i])
            x = _ln(x + jax.nn.gelu(x @ p["f1"][i]) @ p["f2"][i], p["g2"][i], p["b2"][i])
        return _xent(jnp.mean(x, 1) @ p["head"], labels)
    D, T = 16, 12
    p = {"emb": S(30, D), "pos": S(T, D), "g1": [S(D)] * 2, "b1": [S(D)] * 2,
         "g2": [S(D)] * 2, "b2": [S(D)] * 2, "f1": [S(D, 32)] * 2, "f2": [S(32, D)] * 2,
         "head": S(D, 3)}
    return jax.value_and_grad(loss), (p, S(8, T, dtype=I32), S(8, dtype=I32))


# ----------------------------------------------------------------------------- linalg


def cayley_orthogonal_solve():
    """Orthogonal RNN whose recurrent matrix is the Cayley transform of a skew-symmetric
    parameter, W = (I + A)^-1 (I - A) via jnp.linalg.solve, unrolled over six steps."""
    def loss(p, x, labels):
        n = p["a"].shape[0]
        a = p["a"] - p["a"].T
        eye = jnp.eye(n)
        w = jnp.linalg.solve(eye + a, eye - a)
        h = jnp.zeros((x.shape[0], n))
        for t in range(x.shape[1]):
            h = jnp.tanh(h @ w + x[:, t] @ p["u"] + p["b"])
        return _xent(h @ p["out"], labels)

    def step(p, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        return l, _sgd(p, g)
    H = 12
    p = {"a": S(H, H), "u": S(4, H), "b": S(H), "out": S(H, 3)}
    return step, (p, S(8, 6, 4), S(8, dtype=I32))


# ----------------------------------------------------------------------------- scatter/gather


def center_loss_scatter_update():
    """Softmax classifier with center loss: features pulled towards their class centre (gather
    by label); the centres are updated by scatter-added deltas divided by scatter-added class
    counts, outside the gradient."""
    def loss(p, centers, x, labels):
        f = jax.nn.relu(x @ p["w1"]) @ p["w2"]              # [B,F]
        ce = _xent(f @ p["cls"], labels)
        c = lax.stop_gradient(centers)[labels]
        return ce + 0.01 * 0.5 * jnp.mean(jnp.sum((f - c) ** 2, -1)), f

    def step(p, centers, x, labels):
        (l, f), g = jax.value_and_grad(loss, has_aux=True)(p, centers, x, labels)
        diff = centers[labels] - lax.stop_gradient(f)
        delta = jnp.zeros_like(centers).at[labels].add(diff)
        cnt = jnp.zeros(centers.shape[0]).at[labels].add(1.0)
        centers = centers - 0.5 * delta / (1.0 + cnt)[:, None]
        return l, _sgd(p, g), centers
    p = {"w1": S(10, 16), "w2": S(16, 6), "cls": S(6, 7)}
    return step, (p, S(7, 6), S(16, 10), S(16, dtype=I32))


# ----------------------------------------------------------------------------- dynamic slices


def tbptt_chunked_dynamic_slices():
    """Truncated BPTT: a scan over chunk indices takes each 6-step chunk of the sequence with
    dynamic_slice_in_dim, runs a GRU cell over it with the hidden state detached between chunks,
    and writes the chunk's outputs into a buffer with dynamic_update_slice_in_dim."""
    def gru(p, h, xt):
        zr = jax.nn.sigmoid(xt @ p["wzr"] + h @ p["uzr"])
        z, r = jnp.split(zr, 2, -1)
        n = jnp.tanh(xt @ p["wn"] + (r * h) @ p["un"])
        return (1 - z) * h + z * n

    def loss(p, x, y):
        b, T, _ = x.shape
        L = 6
        H = p["un"].shape[0]

        def chunk(carry, c):
            h, buf = carry
            xc = lax.dynamic_slice_in_dim(x, c * L, L, axis=1)
            h = lax.stop_gradient(h)
            outs = []
            for t in range(L):
                h = gru(p, h, xc[:, t])
                outs.append(h)
            buf = lax.dynamic_update_slice_in_dim(buf, jnp.stack(outs, 1), c * L, axis=1)
            return (h, buf), None
        (_, buf), _ = lax.scan(chunk, (jnp.zeros((b, H)), jnp.zeros((b, T, H))),
                               jnp.arange(T // L, dtype=I32))
        return jnp.mean((buf @ p["out"] - y) ** 2)

    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return l, _sgd(p, g)
    H = 8
    p = {"wzr": S(4, 2 * H), "uzr": S(H, 2 * H), "wn": S(4, H), "un": S(H, H), "out": S(H, 2)}
    return step, (p, S(8, 24, 4), S(8, 24, 2))


# ----------------------------------------------------------------------------- mixed precision


def bf16_conv_dynamic_loss_scale():
    """bf16 conv net with f32 master weights and dynamic loss scaling: scaled loss, unscaled
    grads, lax.cond skips the momentum update on non-finite grads, the scale halves on overflow
    and doubles after 100 good steps."""
    def loss(p, x, labels, scale):
        w = tmap(lambda a: a.astype(BF16), p)
        h = jax.nn.relu(_conv(x, w["c1"]))
        h = jax.nn.relu(_conv(h, w["c2"], 2))
        logits = (jnp.mean(h, (1, 2)) @ w["fc"]).astype(F32)
        l = _xent(logits, labels)
        return l * scale, l

    def step(p, mom, scale, good, x, labels):
        (_, l), g = jax.value_and_grad(loss, has_aux=True)(p, x, labels, scale)
        g = tmap(lambda a: a / scale, g)
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(a)) for a in jax.tree_util.tree_leaves(g)]))

        def apply(args):
            p, mom = args
            mom = tmap(lambda m, g: 0.9 * m + g, mom, g)
            return tmap(lambda p, m: p - 0.01 * m, p, mom), mom
        p, mom = lax.cond(finite, apply, lambda a: a, (p, mom))
        good = jnp.where(finite, good + 1, 0)
        grow = good >= 100
        scale = jnp.where(finite, jnp.where(grow, scale * 2.0, scale), scale * 0.5)
        good = jnp.where(grow, 0, good)
        return l, p, mom, scale, good
    p = {"c1": S(3, 3, 3, 16), "c2": S(3, 3, 16, 16), "fc": S(16, 10)}
    return step, (p, p, S(), S(dtype=I32), S(8, 8, 8, 3, dtype=BF16), S(8, dtype=I32))


# ----------------------------------------------------------------------------- optimizers


def shampoo_inverse_root_step():
    """Shampoo on a two-layer MLP: left/right Kronecker statistics per weight matrix, inverse
    fourth roots by eigh, preconditioned direction grafted to the gradient norm; Adagrad for
    the biases."""
    def loss(p, x, y):
        return jnp.mean((jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - y) ** 2)

    def inv_root(m):
        lam, q = jnp.linalg.eigh(m)
        return (q * (jnp.maximum(lam, 0.0) + 1e-4) ** -0.25) @ q.T

    def step(p, st, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        new_p, new_st = dict(p), dict(st)
        for k in ("w1", "w2"):
            gk = g[k]
            L = st["L_" + k] + gk @ gk.T
            R = st["R_" + k] + gk.T @ gk
            d = inv_root(L) @ gk @ inv_root(R)
            d = d * (jnp.linalg.norm(gk) / (jnp.linalg.norm(d) + 1e-12))
            new_p[k] = p[k] - 0.05 * d
            new_st["L_" + k], new_st["R_" + k] = L, R
        for k in ("b1", "b2"):
            a = st["a_" + k] + g[k] ** 2
            new_p[k] = p[k] - 0.05 * g[k] / (jnp.sqrt(a) + 1e-7)
            new_st["a_" + k] = a
        return l, new_p, new_st
    p = {"w1": S(8, 12), "b1": S(12), "w2": S(12, 4), "b2": S(4)}
    st = {"L_w1": S(8, 8), "R_w1": S(12, 12), "L_w2": S(12, 12), "R_w2": S(4, 4),
          "a_b1": S(12), "a_b2": S(4)}
    return step, (p, st, S(16, 8), S(16, 4))


def adahessian_hutchinson_step():
    """AdaHessian: Hutchinson estimate of the Hessian diagonal (z * Hz via a jvp of the
    gradient with a Rademacher z passed in), spatially averaged over the conv kernel window,
    Adam-style moments of gradient and Hessian diagonal with bias correction."""
    def loss(p, x, y):
        h = lax.conv_general_dilated(x, p["k"], (1,), "SAME",
                                     dimension_numbers=("NWC", "WIO", "NWC"))
        return jnp.mean((jnp.mean(jnp.tanh(h), 1) @ p["w"] - y) ** 2)

    def step(p, m, v, t, z, x, y):
        gfn = jax.grad(loss)
        l, g = jax.value_and_grad(loss)(p, x, y)
        _, hz = jax.jvp(lambda q: gfn(q, x, y), (p,), (z,))
        d = tmap(lambda z, hz: jnp.abs(z * hz), z, hz)
        d = dict(d, k=jnp.broadcast_to(jnp.mean(d["k"], 0, keepdims=True), d["k"].shape))
        b1, b2, lr = 0.9, 0.999, 0.1
        m = tmap(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = tmap(lambda v, d: b2 * v + (1 - b2) * d * d, v, d)
        c1 = 1.0 - b1 ** t
        c2 = 1.0 - b2 ** t
        p = tmap(lambda p, m, v: p - lr * (m / c1) / (jnp.sqrt(v / c2) + 1e-4), p, m, v)
        return l, p, m, v
    p = {"k": S(3, 4, 8), "w": S(8, 2)}
    return step, (p, p, p, S(), p, S(8, 10, 4), S(8, 2))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [maxout_mlp_nesterov, wide_and_deep_ctr_adagrad],
    "cnn": [ghost_module_bottleneck, selective_kernel_attention],
    "transformer": [talking_heads_rope_block, xcit_channel_attention],
    "rnn": [indrnn_relu_scan, clockwork_rnn_periods],
    "moe": [sinkhorn_routed_moe],
    "vae": [beta_vae_conv_bernoulli],
    "unet": [unet_bottleneck_self_attention],
    "gnn": [schnet_energy_force_matching],
    "quant": [pact_conv_per_channel_qat],
    "remat": [remat_conv_tower_dots_saveable],
    "custom_vjp": [custom_vjp_fused_softmax_xent],
    "control": [nas_switch_ops_fori, conjugate_gradient_while_head],
    "sort": [coteaching_small_loss_argsort],
    "fft": [fnet_fourier_mixing_block],
    "linalg": [cayley_orthogonal_solve],
    "scatter_gather": [center_loss_scatter_update],
    "dynamic": [tbptt_chunked_dynamic_slices],
    "mixed": [bf16_conv_dynamic_loss_scale],
    "optimizer": [shampoo_inverse_root_step, adahessian_hutchinson_step],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["talking_heads_rope_block", "xcit_channel_attention", "indrnn_relu_scan",
           "sinkhorn_routed_moe", "unet_bottleneck_self_attention",
           "schnet_energy_force_matching", "pact_conv_per_channel_qat",
           "remat_conv_tower_dots_saveable", "custom_vjp_fused_softmax_xent",
           "nas_switch_ops_fori", "coteaching_small_loss_argsort",
           "bf16_conv_dynamic_loss_scale"]
SHARDED_SET = ["maxout_mlp_nesterov", "talking_heads_rope_block", "ghost_module_bottleneck",
               "wide_and_deep_ctr_adagrad", "sinkhorn_routed_moe", "beta_vae_conv_bernoulli",
               "remat_conv_tower_dots_saveable", "bf16_conv_dynamic_loss_scale"]
