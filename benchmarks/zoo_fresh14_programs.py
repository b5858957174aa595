"""Fourteenth fresh set: 25 JAX programs written by a helper on 2026-11-28 (fourth session of
that day). It was kept outside the repository as a held-out set, measured unseen at the start
and end of that session, and committed on 2026-11-28 (fifth session), when its misses were
first read and tuned on. Same interface as zoo_programs.py::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh14_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh14_programs python benchmarks/accuracy.py --data DIR
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


def _conv(x, w, stride=1, pad="SAME"):
    return lax.conv_general_dilated(x, w, (stride, stride), pad,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _dwconv(x, w, stride=1):
    """Depthwise NHWC convolution; w is [kh, kw, 1, C]."""
    return lax.conv_general_dilated(x, w, (stride, stride), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                    feature_group_count=x.shape[-1])


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


def _attn_params(p, pre, d):
    for k in "qkvo":
        p[pre + k] = S(d, d)
    return p



def _global_clip(g, max_norm=1.0):
    n = jnp.sqrt(sum(jnp.sum(jnp.square(a)) for a in jax.tree_util.tree_leaves(g)))
    return tmap(lambda a: a * jnp.minimum(1.0, max_norm / (n + 1e-6)), g)


def _maxpool(x, k=2):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, k, k, 1), (1, k, k, 1), "VALID")


# ----------------------------------------------------------------------------- mlp


def barlow_twins_lars_projector():
    """Barlow Twins: two augmented views (passed in) through a shared MLP encoder and projector,
    embeddings standardised over the batch, the cross-correlation matrix pulled towards the
    identity (on-diagonal (1-c)^2 plus lambda times the off-diagonal c^2); LARS momentum SGD
    with per-layer trust ratios, gains and biases excluded from adaptation and weight decay."""
    def net(p, x):
        h = jax.nn.relu(_ln(x @ p["w1"], p["g1"], p["b1"]))
        h = jax.nn.relu(_ln(h @ p["w2"], p["g2"], p["b2"]))
        return h @ p["w3"]

    def loss(p, xa, xb):
        za, zb = net(p, xa), net(p, xb)
        n = za.shape[0]
        za = (za - jnp.mean(za, 0)) / (jnp.std(za, 0) + 1e-5)
        zb = (zb - jnp.mean(zb, 0)) / (jnp.std(zb, 0) + 1e-5)
        c = za.T @ zb / n
        d = jnp.diagonal(c)
        return jnp.sum((1.0 - d) ** 2) + 5e-3 * (jnp.sum(c * c) - jnp.sum(d * d))

    def step(p, mom, xa, xb):
        l, g = jax.value_and_grad(loss)(p, xa, xb)
        newp, newm = {}, {}
        for k in p:
            gk = g[k]
            if p[k].ndim > 1:
                gk = gk + 1e-6 * p[k]
                pn, gn = jnp.linalg.norm(p[k]), jnp.linalg.norm(gk)
                trust = jnp.where((pn > 0) & (gn > 0), 1e-3 * pn / gn, 1.0)
                gk = gk * trust
            newm[k] = 0.9 * mom[k] + gk
            newp[k] = p[k] - 0.2 * newm[k]
        return l, newp, newm
    D, H, E = 16, 32, 24
    p = {"w1": S(D, H), "g1": S(H), "b1": S(H), "w2": S(H, H), "g2": S(H), "b2": S(H),
         "w3": S(H, E)}
    return step, (p, p, S(32, D), S(32, D))


def byol_ema_target_predictor():
    """BYOL self-supervised step: an online encoder+projector followed by a predictor, a target
    encoder+projector whose weights are an exponential moving average of the online ones (decay
    following a cosine schedule in the step count), symmetrised normalised-MSE between the
    online predictions and the stop-gradient target projections; momentum SGD."""
    def enc(q, x):
        h = jax.nn.relu(x @ q["w1"] + q["b1"])
        h = jax.nn.relu(_ln(h @ q["w2"], q["g"], q["b"]))
        return h @ q["w3"]

    def pred(p, z):
        return jax.nn.relu(z @ p["p1"] + p["pb1"]) @ p["p2"]

    def reg(a, b):
        a = a / (jnp.linalg.norm(a, axis=-1, keepdims=True) + 1e-6)
        b = lax.stop_gradient(b)
        b = b / (jnp.linalg.norm(b, axis=-1, keepdims=True) + 1e-6)
        return 2.0 - 2.0 * jnp.sum(a * b, -1)

    def loss(p, tgt, v1, v2):
        o1, o2 = pred(p, enc(p["enc"], v1)), pred(p, enc(p["enc"], v2))
        t1, t2 = enc(tgt, v1), enc(tgt, v2)
        return jnp.mean(reg(o1, t2) + reg(o2, t1))

    def step(p, tgt, mom, t, v1, v2):
        l, g = jax.value_and_grad(loss)(p, tgt, v1, v2)
        mom = tmap(lambda m, g: 0.9 * m + g, mom, g)
        p = _sgd(p, mom, 0.03)
        tau = 1.0 - 0.004 * (jnp.cos(jnp.pi * jnp.minimum(t, 1000.0) / 1000.0) + 1.0) / 2.0
        tgt = tmap(lambda a, b: tau * a + (1.0 - tau) * b, tgt, p["enc"])
        return l, p, tgt, mom
    D, H, Z = 12, 32, 16
    e = {"w1": S(D, H), "b1": S(H), "w2": S(H, H), "g": S(H), "b": S(H), "w3": S(H, Z)}
    p = {"enc": e, "p1": S(Z, H), "pb1": S(H), "p2": S(H, Z)}
    return step, (p, e, p, S(), S(16, D), S(16, D))


# ----------------------------------------------------------------------------- cnn


def efficientnet_mbconv_se_drop_path():
    """EfficientNet-style stage: stem conv, an MBConv block (1x1 expansion, depthwise 3x3,
    squeeze-and-excitation, linear 1x1 projection) with a residual under stochastic depth (a
    per-example keep mask passed in, rescaled by the keep probability), a strided MBConv block,
    swish head; label-smoothed cross-entropy, RMSProp with momentum."""
    def mbconv(x, q, stride):
        h = jax.nn.swish(_conv(x, q["exp"]))
        h = jax.nn.swish(_dwconv(h, q["dw"], stride))
        s = jnp.mean(h, (1, 2))
        s = jax.nn.sigmoid(jax.nn.swish(s @ q["se1"] + q["seb1"]) @ q["se2"] + q["seb2"])
        h = h * s[:, None, None, :]
        return _conv(h, q["proj"])

    def loss(p, x, keep, labels):
        h = jax.nn.swish(_conv(x, p["stem"]))                      # [N,8,8,16]
        h = h + mbconv(h, p["b1"], 1) * (keep / 0.8)[:, None, None, None]
        h = mbconv(h, p["b2"], 2)                                    # [N,4,4,24]
        h = jax.nn.swish(_conv(h, p["head"]))
        logits = jnp.mean(h, (1, 2)) @ p["fc"]
        C = logits.shape[-1]
        tgt = jax.nn.one_hot(labels, C) * 0.9 + 0.1 / C
        return -jnp.mean(jnp.sum(tgt * jax.nn.log_softmax(logits), -1))

    def step(p, ms, mom, x, keep, labels):
        l, g = jax.value_and_grad(loss)(p, x, keep, labels)
        ms = tmap(lambda s, g: 0.9 * s + 0.1 * g * g, ms, g)
        mom = tmap(lambda m, g, s: 0.9 * m + 0.016 * g / jnp.sqrt(s + 1e-3), mom, g, ms)
        return l, tmap(lambda p, m: p - m, p, mom), ms, mom

    def blk(cin, e, cout):
        return {"exp": S(1, 1, cin, e), "dw": S(3, 3, 1, e), "se1": S(e, 4), "seb1": S(4),
                "se2": S(4, e), "seb2": S(e), "proj": S(1, 1, e, cout)}
    p = {"stem": S(3, 3, 3, 16), "b1": blk(16, 64, 16), "b2": blk(16, 48, 24),
         "head": S(1, 1, 24, 32), "fc": S(32, 10)}
    return step, (p, p, p, S(8, 8, 8, 3), S(8), S(8, dtype=I32))


def dcgan_hinge_spectral_norm_gan():
    """SNGAN/DCGAN training step: a transposed-convolution generator and a strided-conv
    discriminator whose weights are spectrally normalised by one power iteration per step (the
    u vectors are carried as state); discriminator hinge loss on real and detached fake images,
    then the generator's non-saturating hinge loss; Adam(0, 0.9) on both networks."""
    def sn(w, u):
        wm = w.reshape(-1, w.shape[-1]).T                            # [out, in]
        v = wm.T @ u
        v = v / (jnp.linalg.norm(v) + 1e-12)
        u2 = wm @ v
        u2 = u2 / (jnp.linalg.norm(u2) + 1e-12)
        u2, v = lax.stop_gradient(u2), lax.stop_gradient(v)
        return w / (u2 @ wm @ v), u2

    def gen(gp, z):
        n = z.shape[0]
        h = jax.nn.relu(z @ gp["fc"]).reshape(n, 4, 4, 16)
        h = lax.conv_transpose(h, gp["up"], (2, 2), "SAME",
                               dimension_numbers=("NHWC", "HWIO", "NHWC"))   # [N,8,8,8]
        h = jax.nn.relu(_ln(h, gp["g"], gp["b"]))
        return jnp.tanh(_conv(h, gp["out"]))

    def disc(dp, us, x):
        w1, u1 = sn(dp["c1"], us["c1"])
        w2, u2 = sn(dp["c2"], us["c2"])
        w3, u3 = sn(dp["fc"], us["fc"])
        h = jax.nn.leaky_relu(_conv(x, w1, 2), 0.1)                  # [N,4,4,16]
        h = jax.nn.leaky_relu(_conv(h, w2, 2), 0.1)                  # [N,2,2,32]
        return (h.reshape(h.shape[0], -1) @ w3)[:, 0], {"c1": u1, "c2": u2, "fc": u3}

    def d_loss(dp, us, real, fake):
        dr, us = disc(dp, us, real)
        df, _ = disc(dp, us, fake)
        return jnp.mean(jax.nn.relu(1.0 - dr)) + jnp.mean(jax.nn.relu(1.0 + df)), us

    def g_loss(gp, dp, us, z):
        df, _ = disc(dp, us, gen(gp, z))
        return -jnp.mean(df)

    def step(gp, dp, us, gm, gv, dm, dv, t, real, z):
        fake = lax.stop_gradient(gen(gp, z))
        (ld, us), gd = jax.value_and_grad(d_loss, has_aux=True)(dp, us, real, fake)
        dp, dm, dv = _adam(dp, dm, dv, gd, t, lr=4e-4, b1=0.0, b2=0.9)
        lg, gg = jax.value_and_grad(g_loss)(gp, dp, us, z)
        gp, gm, gv = _adam(gp, gm, gv, gg, t, lr=1e-4, b1=0.0, b2=0.9)
        return ld, lg, gp, dp, lax.stop_gradient(us), gm, gv, dm, dv
    gp = {"fc": S(16, 256), "up": S(3, 3, 16, 8), "g": S(8), "b": S(8), "out": S(3, 3, 8, 3)}
    dp = {"c1": S(3, 3, 3, 16), "c2": S(3, 3, 16, 32), "fc": S(128, 1)}
    us = {"c1": S(16), "c2": S(32), "fc": S(1)}
    return step, (gp, dp, us, gp, gp, dp, dp, S(), S(8, 8, 8, 3), S(8, 16))


# ----------------------------------------------------------------------------- transformer


def transformer_xl_memory_relpos():
    """Transformer-XL step on one segment: each of two layers attends over the cached memory of
    the previous segment (stop-gradient) concatenated with the current tokens, with sinusoidal
    relative positions, the global content and position biases u and v, and the pad-and-reshape
    relative shift; causal mask offset by the memory length; returns the new memories; Adam
    with global-norm clipping."""
    def rel_shift(x):
        b, h, t, k = x.shape
        x = jnp.pad(x, ((0, 0), (0, 0), (0, 0), (1, 0)))
        return x.reshape(b, h, k + 1, t)[:, :, 1:].reshape(b, h, t, k)

    def layer(q, x, mem, H):
        b, t, d = x.shape
        dh = d // H
        m = mem.shape[1]
        k_len = m + t
        cat = jnp.concatenate([lax.stop_gradient(mem), x], 1)
        h = _ln(cat, q["g1"], q["b1"])
        qh = (h[:, m:] @ q["q"]).reshape(b, t, H, dh)
        kh = (h @ q["k"]).reshape(b, k_len, H, dh)
        vh = (h @ q["v"]).reshape(b, k_len, H, dh)
        pos = jnp.arange(k_len - 1, -1, -1.0)
        inv = 1.0 / (10000.0 ** (jnp.arange(0, d, 2.0) / d))
        ang = pos[:, None] * inv[None]
        r = (jnp.concatenate([jnp.sin(ang), jnp.cos(ang)], -1) @ q["r"]).reshape(k_len, H, dh)
        ac = jnp.einsum("bqhd,bkhd->bhqk", qh + q["u"], kh)
        bd = rel_shift(jnp.einsum("bqhd,khd->bhqk", qh + q["vb"], r))
        s = (ac + bd) / jnp.sqrt(float(dh))
        mask = jnp.arange(k_len)[None, :] <= jnp.arange(t)[:, None] + m
        s = jnp.where(mask, s, -1e9)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vh).reshape(b, t, d)
        x = x + o @ q["o"]
        hh = _ln(x, q["g2"], q["b2"])
        return x + jax.nn.relu(hh @ q["f1"]) @ q["f2"]

    def loss(p, mems, tok, tgt):
        x = p["emb"][tok]
        new = []
        for i, q in enumerate(p["layers"]):
            new.append(x)
            x = layer(q, x, mems[:, i], 2)
        logits = _ln(x, p["gf"], p["bf"]) @ p["out"]
        M = mems.shape[2]
        newmem = jnp.stack([jnp.concatenate([mems[:, i], h], 1)[:, -M:]
                            for i, h in enumerate(new)], 1)
        return _xent(logits, tgt), lax.stop_gradient(newmem)

    def step(p, m, v, t, mems, tok, tgt):
        (l, mems), g = jax.value_and_grad(loss, has_aux=True)(p, mems, tok, tgt)
        p, m, v = _adam(p, m, v, _global_clip(g, 0.25), t, lr=2.5e-4)
        return l, p, m, v, mems
    D, V, H = 16, 24, 2
    q = _attn_params({"r": S(D, D), "u": S(H, D // H), "vb": S(H, D // H), "g1": S(D),
                      "b1": S(D), "g2": S(D), "b2": S(D), "f1": S(D, 32), "f2": S(32, D)}, "", D)
    p = {"emb": S(V, D), "layers": [q, dict(q)], "gf": S(D), "bf": S(D), "out": S(D, V)}
    return step, (p, p, p, S(), S(8, 2, 8, D), S(8, 8, dtype=I32), S(8, 8, dtype=I32))


def linformer_seq_projected_mlm():
    """Linformer encoder for masked-language modelling: keys and values are projected along the
    sequence axis (length 32 -> 8) by projections shared between heads and layers, two pre-LN
    layers; masked positions (mask passed in) replaced by a [MASK] id and the cross-entropy
    taken over them only; AdamW."""
    def layer(q, E, F, x, H):
        b, t, d = x.shape
        dh = d // H
        h = _ln(x, q["g1"], q["b1"])
        qh = (h @ q["q"]).reshape(b, t, H, dh)
        k = jnp.einsum("kt,btd->bkd", E, h @ q["k"]).reshape(b, -1, H, dh)
        v = jnp.einsum("kt,btd->bkd", F, h @ q["v"]).reshape(b, -1, H, dh)
        s = jnp.einsum("bqhd,bkhd->bhqk", qh, k) / jnp.sqrt(float(dh))
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), v).reshape(b, t, d)
        x = x + o @ q["o"]
        h = _ln(x, q["g2"], q["b2"])
        return x + jax.nn.gelu(h @ q["f1"]) @ q["f2"]

    def loss(p, tok, mask):
        V = p["emb"].shape[0]
        inp = jnp.where(mask > 0.5, V - 1, tok)
        x = p["emb"][inp] + p["pos"]
        for q in p["layers"]:
            x = layer(q, p["E"], p["F"], x, 2)
        logits = _ln(x, p["gf"], p["bf"]) @ p["emb"].T
        logp = jax.nn.log_softmax(logits, -1)
        nll = -jnp.take_along_axis(logp, tok[..., None], -1)[..., 0]
        w = (mask > 0.5).astype(F32)
        return jnp.sum(nll * w) / (jnp.sum(w) + 1.0)

    def step(p, m, v, t, tok, mask):
        l, g = jax.value_and_grad(loss)(p, tok, mask)
        p, m, v = _adam(p, m, v, g, t, lr=5e-4, wd=0.01)
        return l, p, m, v
    D, T, K, V = 16, 32, 8, 30
    q = _attn_params({"g1": S(D), "b1": S(D), "g2": S(D), "b2": S(D), "f1": S(D, 32),
                      "f2": S(32, D)}, "", D)
    p = {"emb": S(V, D), "pos": S(T, D), "E": S(K, T), "F": S(K, T), "layers": [q, dict(q)],
         "gf": S(D), "bf": S(D)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T))


# ----------------------------------------------------------------------------- rnn / scan


def lmu_legendre_memory_scan():
    """Legendre Memory Unit sequence classifier: the fixed (A, B) of the Legendre delay system
    are built from iotas inside the step and discretised by the bilinear transform (linear
    solves), a scan carries the linear memory m and the nonlinear hidden state h with a learned
    scalar encoder u = e_x.x + e_h.h + e_m.m; cross-entropy on the final state, Adam."""
    def system(d, theta):
        i = jnp.arange(d, dtype=F32)[:, None]
        j = jnp.arange(d, dtype=F32)[None, :]
        sign = jnp.where((i - j) % 2 == 0, -1.0, 1.0)
        A = (2 * i + 1) * jnp.where(i < j, -1.0, sign) / theta
        B = (2 * jnp.arange(d, dtype=F32) + 1) * jnp.where(jnp.arange(d) % 2 == 0, 1.0, -1.0) / theta
        I = jnp.eye(d)
        lhs = I - 0.5 * A
        Ad = jnp.linalg.solve(lhs, I + 0.5 * A)
        Bd = jnp.linalg.solve(lhs, B[:, None])[:, 0]
        return Ad, Bd

    def loss(p, x, labels):
        b, T, _ = x.shape
        d = p["wm"].shape[0]
        H = p["wh"].shape[0]
        Ad, Bd = system(d, float(T))

        def body(c, xt):
            h, m = c
            u = xt @ p["ex"] + h @ p["eh"] + m @ p["em"]              # [B,1]
            m = m @ Ad.T + u * Bd[None, :]
            h = jnp.tanh(xt @ p["wx"] + h @ p["wh"] + m @ p["wm"])
            return (h, m), None
        (h, _), _ = lax.scan(body, (jnp.zeros((b, H)), jnp.zeros((b, d))),
                             jnp.swapaxes(x, 0, 1))
        return _xent(h @ p["out"], labels)

    def step(p, m, v, t, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        p, m, v = _adam(p, m, v, g, t)
        return l, p, m, v
    In, H, d = 4, 16, 8
    p = {"ex": S(In, 1), "eh": S(H, 1), "em": S(d, 1), "wx": S(In, H), "wh": S(H, H),
         "wm": S(d, H), "out": S(H, 5)}
    return step, (p, p, p, S(), S(16, 16, In), S(16, dtype=I32))


def ntm_content_address_scan():
    """Neural Turing Machine on a copy task: a tanh controller emits a key, key strength,
    interpolation gate, shift distribution over {-1,0,+1} and sharpening exponent; cosine
    content addressing, circular shift by jnp.roll, sharpening, then erase/add writes and a read
    of the 8-slot memory, all inside a scan; per-step bit predictions, BCE, RMSProp."""
    def loss(p, x, y):
        b, T, In = x.shape
        N, W = p["mem0"].shape
        H = p["uh"].shape[0]

        def body(c, xt):
            h, r, w, M = c
            h = jnp.tanh(xt @ p["wx"] + r @ p["wr"] + h @ p["uh"] + p["bh"])
            o = h @ p["head"]                                           # [B, 3W + 6]
            key, er, ad = o[:, :W], jax.nn.sigmoid(o[:, W:2 * W]), jnp.tanh(o[:, 2 * W:3 * W])
            beta = jax.nn.softplus(o[:, 3 * W])
            gate = jax.nn.sigmoid(o[:, 3 * W + 1])
            shift = jax.nn.softmax(o[:, 3 * W + 2:3 * W + 5], -1)
            gamma = 1.0 + jax.nn.softplus(o[:, 3 * W + 5])
            kn = key / (jnp.linalg.norm(key, axis=-1, keepdims=True) + 1e-6)
            Mn = M / (jnp.linalg.norm(M, axis=-1, keepdims=True) + 1e-6)
            wc = jax.nn.softmax(beta[:, None] * jnp.einsum("bw,bnw->bn", kn, Mn), -1)
            wg = gate[:, None] * wc + (1 - gate[:, None]) * w
            ws = (shift[:, 0:1] * jnp.roll(wg, -1, 1) + shift[:, 1:2] * wg
                  + shift[:, 2:3] * jnp.roll(wg, 1, 1))
            wp = (ws + 1e-6) ** gamma[:, None]
            w = wp / jnp.sum(wp, -1, keepdims=True)
            M = M * (1 - w[:, :, None] * er[:, None, :]) + w[:, :, None] * ad[:, None, :]
            r = jnp.einsum("bn,bnw->bw", w, M)
            return (h, r, w, M), jnp.concatenate([h, r], -1) @ p["out"]
        c0 = (jnp.zeros((b, H)), jnp.zeros((b, W)), jnp.full((b, N), 1.0 / N),
              jnp.broadcast_to(p["mem0"], (b, N, W)))
        _, z = lax.scan(body, c0, jnp.swapaxes(x, 0, 1))
        z = jnp.swapaxes(z, 0, 1)
        return jnp.mean(jnp.maximum(z, 0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z))))

    def step(p, ms, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        g = _global_clip(g, 10.0)
        ms = tmap(lambda s, g: 0.95 * s + 0.05 * g * g, ms, g)
        return l, tmap(lambda p, g, s: p - 1e-3 * g / jnp.sqrt(s + 1e-6), p, g, ms), ms
    In, H, N, W = 6, 24, 8, 8
    p = {"mem0": S(N, W), "wx": S(In, H), "wr": S(W, H), "uh": S(H, H), "bh": S(H),
         "head": S(H, 3 * W + 6), "out": S(H + W, In)}
    return step, (p, p, S(8, 12, In), S(8, 12, In))


# ----------------------------------------------------------------------------- moe


def mixture_of_depths_topk_router():
    """Mixture-of-Depths decoder: in each of two layers a linear router scores every token and
    only the top-k per sequence (lax.top_k, indices sorted back into order) are gathered, run
    through causal attention among themselves and an MLP, scaled by the router's sigmoid and
    scattered back as residual updates; the rest skip the layer; next-token loss plus a BCE aux
    loss teaching the router its own top-k membership; SGD."""
    def block(q, xs, pos):
        b, k, d = xs.shape
        H, dh = 2, d // 2
        h = _ln(xs, q["g1"], q["b1"])
        qq = (h @ q["q"]).reshape(b, k, H, dh)
        kk = (h @ q["k"]).reshape(b, k, H, dh)
        vv = (h @ q["v"]).reshape(b, k, H, dh)
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / jnp.sqrt(float(dh))
        causal = pos[:, None, :, None] >= pos[:, None, None, :]
        s = jnp.where(causal, s, -1e9)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, k, d)
        y = o @ q["o"]
        return y + jax.nn.gelu(_ln(xs + y, q["g2"], q["b2"]) @ q["f1"]) @ q["f2"]

    def loss(p, tok):
        b, T = tok.shape
        K = T // 4
        x = p["emb"][tok] + p["pos"]
        aux = 0.0
        bi = jnp.arange(b)[:, None]
        for q in p["layers"]:
            r = (x @ q["router"])[..., 0]                               # [B,T]
            _, idx = lax.top_k(r, K)
            idx = jnp.sort(idx, -1)
            xs = jnp.take_along_axis(x, idx[..., None], 1)
            gate = jax.nn.sigmoid(jnp.take_along_axis(r, idx, 1))[..., None]
            x = x.at[bi, idx].add(block(q, xs, idx) * gate)
            member = jnp.zeros((b, T)).at[bi, idx].set(1.0)
            aux = aux + jnp.mean(jnp.maximum(r, 0) - r * member + jnp.log1p(jnp.exp(-jnp.abs(r))))
        logits = _ln(x, p["gf"], p["bf"]) @ p["emb"].T
        return _xent(logits[:, :-1], tok[:, 1:]) + 0.1 * aux

    def step(p, tok):
        l, g = jax.value_and_grad(loss)(p, tok)
        return l, _sgd(p, g, 0.05)
    D, T, V = 16, 16, 28
    q = _attn_params({"router": S(D, 1), "g1": S(D), "b1": S(D), "g2": S(D), "b2": S(D),
                      "f1": S(D, 32), "f2": S(32, D)}, "", D)
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [q, dict(q)], "gf": S(D), "bf": S(D)}
    return step, (p, S(8, T, dtype=I32))


# ----------------------------------------------------------------------------- vae


def iwae_importance_weighted_bound():
    """Importance-weighted autoencoder: a Gaussian encoder, five reparameterised samples per
    example (standard-normal noise passed in), a Bernoulli decoder, log importance weights
    log p(x|z) + log p(z) - log q(z|x) combined by logsumexp into the IWAE bound; Adam."""
    def loss(p, x, eps):
        K = eps.shape[1]
        h = jnp.tanh(x @ p["e1"] + p["eb1"])
        mu, lv = h @ p["mu"], h @ p["lv"]
        std = jnp.exp(0.5 * lv)
        z = mu[:, None] + std[:, None] * eps                            # [N,K,Z]
        d = jnp.tanh(z @ p["d1"] + p["db1"])
        xl = d @ p["d2"]
        logpx = -jnp.sum(jnp.maximum(xl, 0) - xl * x[:, None] + jnp.log1p(jnp.exp(-jnp.abs(xl))), -1)
        logpz = -0.5 * jnp.sum(z * z + jnp.log(2 * jnp.pi), -1)
        logq = -0.5 * jnp.sum(eps * eps + lv[:, None] + jnp.log(2 * jnp.pi), -1)
        logw = logpx + logpz - logq
        return -jnp.mean(jax.nn.logsumexp(logw, 1) - jnp.log(float(K)))

    def step(p, m, v, t, x, eps):
        l, g = jax.value_and_grad(loss)(p, x, eps)
        p, m, v = _adam(p, m, v, g, t)
        return l, p, m, v
    D, H, Z = 24, 32, 4
    p = {"e1": S(D, H), "eb1": S(H), "mu": S(H, Z), "lv": S(H, Z), "d1": S(Z, H), "db1": S(H),
         "d2": S(H, D)}
    return step, (p, p, p, S(), S(16, D), S(16, 5, Z))


# ----------------------------------------------------------------------------- unet


def unet3plus_full_scale_skips():
    """UNet 3+ segmentation: a three-level encoder; each decoder level fuses every encoder
    level (max-pooled down or bilinearly resized up to its resolution, each through its own
    3x3 conv) plus the deeper decoder output; deep supervision from both decoder levels with
    BCE plus soft-Dice; momentum SGD."""
    def up(x, f):
        n, h, w, c = x.shape
        return jax.image.resize(x, (n, h * f, w * f, c), "bilinear")

    def cbr(x, w):
        return jax.nn.relu(_conv(x, w))

    def seg_loss(logit, mask):
        pr = jax.nn.sigmoid(logit)
        bce = jnp.mean(jnp.maximum(logit, 0) - logit * mask + jnp.log1p(jnp.exp(-jnp.abs(logit))))
        inter = jnp.sum(pr * mask, (1, 2, 3))
        dice = 1 - (2 * inter + 1) / (jnp.sum(pr, (1, 2, 3)) + jnp.sum(mask, (1, 2, 3)) + 1)
        return bce + jnp.mean(dice)

    def loss(p, x, mask):
        e1 = cbr(cbr(x, p["e1a"]), p["e1b"])                            # [N,16,16,8]
        e2 = cbr(_maxpool(e1), p["e2"])                                 # [N,8,8,16]
        e3 = cbr(_maxpool(e2), p["e3"])                                 # [N,4,4,32]
        d2 = jnp.concatenate([cbr(_maxpool(e1), p["s12"]), cbr(e2, p["s22"]),
                              cbr(up(e3, 2), p["s32"])], -1)
        d2 = cbr(d2, p["f2"])                                           # [N,8,8,24]
        d1 = jnp.concatenate([cbr(e1, p["s11"]), cbr(up(d2, 2), p["s21"]),
                              cbr(up(e3, 4), p["s31"])], -1)
        d1 = cbr(d1, p["f1"])                                           # [N,16,16,24]
        o1 = _conv(d1, p["o1"])
        o2 = up(_conv(d2, p["o2"]), 2)
        return seg_loss(o1, mask) + 0.4 * seg_loss(o2, mask)

    def step(p, mom, x, mask):
        l, g = jax.value_and_grad(loss)(p, x, mask)
        mom = tmap(lambda m, g: 0.9 * m + g, mom, g)
        return l, _sgd(p, mom, 0.01), mom
    p = {"e1a": S(3, 3, 3, 8), "e1b": S(3, 3, 8, 8), "e2": S(3, 3, 8, 16), "e3": S(3, 3, 16, 32),
         "s12": S(3, 3, 8, 8), "s22": S(3, 3, 16, 8), "s32": S(3, 3, 32, 8),
         "f2": S(3, 3, 24, 24), "s11": S(3, 3, 8, 8), "s21": S(3, 3, 24, 8),
         "s31": S(3, 3, 32, 8), "f1": S(3, 3, 24, 24), "o1": S(3, 3, 24, 1), "o2": S(3, 3, 24, 1)}
    return step, (p, p, S(4, 16, 16, 3), S(4, 16, 16, 1))


# ----------------------------------------------------------------------------- gnn


def pna_multi_aggregator_scalers():
    """Principal Neighbourhood Aggregation: edge messages from (source, destination, edge
    features) aggregated per node by mean, max, min (segment_max/segment_min with empty
    neighbourhoods zeroed) and standard deviation, each under identity, amplification and
    attenuation degree scalers log(d+1)/delta; two residual layers, mean graph readout, MSE;
    Adam."""
    def layer(q, h, ef, src, dst, deg, delta):
        n = h.shape[0]
        msg = jax.nn.relu(jnp.concatenate([h[src], h[dst], ef], -1) @ q["pre"])
        cnt = jnp.maximum(deg, 1.0)[:, None]
        s = jax.ops.segment_sum(msg, dst, num_segments=n)
        mean = s / cnt
        sq = jax.ops.segment_sum(msg * msg, dst, num_segments=n) / cnt
        std = jnp.sqrt(jax.nn.relu(sq - mean * mean) + 1e-5)
        has = (deg > 0)[:, None]
        mx = jnp.where(has, jax.ops.segment_max(msg, dst, num_segments=n), 0.0)
        mn = jnp.where(has, jax.ops.segment_min(msg, dst, num_segments=n), 0.0)
        agg = jnp.concatenate([mean, mx, mn, std], -1)
        logd = jnp.log(deg + 1.0)[:, None]
        scaled = jnp.concatenate([agg, agg * logd / delta, agg * delta / jnp.maximum(logd, 1e-2)], -1)
        out = jnp.concatenate([h, scaled], -1) @ q["post"]
        return h + jax.nn.relu(_ln(out, q["g"], q["b"]))

    def loss(p, nf, ef, src, dst, gid, y):
        n, G = nf.shape[0], y.shape[0]
        deg = jax.ops.segment_sum(jnp.ones(src.shape[0]), dst, num_segments=n)
        delta = jnp.mean(jnp.log(deg + 1.0))
        h = nf @ p["enc"]
        for q in p["layers"]:
            h = layer(q, h, ef, src, dst, deg, delta)
        cnt = jax.ops.segment_sum(jnp.ones(n), gid, num_segments=G)
        ro = jax.ops.segment_sum(h, gid, num_segments=G) / jnp.maximum(cnt, 1.0)[:, None]
        return jnp.mean((jax.nn.relu(ro @ p["r1"]) @ p["r2"] - y) ** 2)

    def step(p, m, v, t, nf, ef, src, dst, gid, y):
        l, g = jax.value_and_grad(loss)(p, nf, ef, src, dst, gid, y)
        p, m, v = _adam(p, m, v, g, t)
        return l, p, m, v
    F, Fn, Fe = 16, 5, 3
    q = {"pre": S(2 * F + Fe, F), "post": S(F + 12 * F, F), "g": S(F), "b": S(F)}
    p = {"enc": S(Fn, F), "layers": [q, dict(q)], "r1": S(F, F), "r2": S(F, 1)}
    return step, (p, p, p, S(), S(20, Fn), S(48, Fe), S(48, dtype=I32), S(48, dtype=I32),
                  S(20, dtype=I32), S(4, 1))


# ----------------------------------------------------------------------------- quant


def xnor_binary_conv_ste():
    """XNOR-Net: a full-precision stem, then two binary conv layers whose inputs are batch-
    normalised and binarised by sign with a clipped straight-through estimator, scaled per
    pixel by the mean absolute activation (a box-filtered K map), and whose weights are
    binarised per output channel with scale mean|w|; full-precision classifier, Adam."""
    def ste_sign(x):
        c = jnp.clip(x, -1.0, 1.0)
        return c + lax.stop_gradient(jnp.sign(x) - c)

    def bconv(x, w, g, b):
        m = jnp.mean(x, (0, 1, 2))
        v = jnp.var(x, (0, 1, 2))
        x = (x - m) * lax.rsqrt(v + 1e-5) * g + b
        A = jnp.mean(jnp.abs(x), -1, keepdims=True)
        K = lax.conv_general_dilated(A, jnp.full((3, 3, 1, 1), 1.0 / 9.0), (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        alpha = jnp.mean(jnp.abs(w), (0, 1, 2))
        wb = ste_sign(w) * alpha
        return _conv(ste_sign(x), wb) * K

    def loss(p, x, labels):
        h = jax.nn.relu(_conv(x, p["stem"]))                            # [N,8,8,16]
        h = h + bconv(h, p["w1"], p["g1"], p["b1"])
        h = _maxpool(h)                                                 # [N,4,4,16]
        h = bconv(h, p["w2"], p["g2"], p["b2"])                         # [N,4,4,32]
        return _xent(jnp.mean(jax.nn.relu(h), (1, 2)) @ p["fc"], labels)

    def step(p, m, v, t, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v
    p = {"stem": S(3, 3, 3, 16), "w1": S(3, 3, 16, 16), "g1": S(16), "b1": S(16),
         "w2": S(3, 3, 16, 32), "g2": S(16), "b2": S(16), "fc": S(32, 10)}
    return step, (p, p, p, S(), S(8, 8, 8, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- remat


def remat_nested_names_but_these():
    """Nested rematerialisation over four pre-LN transformer blocks: each block is checkpointed
    with save_any_names_but_these (everything tagged is saved except the FFN hidden activations
    and the attention probabilities), and each pair of blocks is wrapped again in an outer
    checkpoint saving only the tagged block outputs; classification from the mean token, SGD
    with momentum."""
    inner = jax.checkpoint_policies.save_any_names_but_these("ffn_hidden", "attn_probs")
    outer = jax.checkpoint_policies.save_only_these_names("block_out")

    def block(q, x):
        b, t, d = x.shape
        H, dh = 2, d // 2
        h = _ln(x, q["g1"], q["b1"])
        qq = checkpoint_name((h @ q["q"]).reshape(b, t, H, dh), "qkv")
        kk = checkpoint_name((h @ q["k"]).reshape(b, t, H, dh), "qkv")
        vv = checkpoint_name((h @ q["v"]).reshape(b, t, H, dh), "qkv")
        a = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / jnp.sqrt(float(dh)), -1)
        a = checkpoint_name(a, "attn_probs")
        o = jnp.einsum("bhqk,bkhd->bqhd", a, vv).reshape(b, t, d)
        x = x + checkpoint_name(o @ q["o"], "attn_out")
        f = checkpoint_name(jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"]), "ffn_hidden")
        return checkpoint_name(x + f @ q["f2"], "block_out")

    def pair(qs, x):
        for q in qs:
            x = jax.checkpoint(block, policy=inner)(q, x)
        return x

    def loss(p, x, labels):
        h = x @ p["inp"]
        for i in range(0, len(p["blocks"]), 2):
            h = jax.checkpoint(pair, policy=outer)(p["blocks"][i:i + 2], h)
        return _xent(jnp.mean(h, 1) @ p["head"], labels)

    def step(p, mom, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        mom = tmap(lambda m, g: 0.9 * m + g, mom, g)
        return l, _sgd(p, mom, 0.01), mom
    D = 16
    q = _attn_params({"g1": S(D), "b1": S(D), "g2": S(D), "b2": S(D), "f1": S(D, 48),
                      "f2": S(48, D)}, "", D)
    p = {"inp": S(6, D), "blocks": [dict(q) for _ in range(4)], "head": S(D, 5)}
    return step, (p, p, S(8, 16, 6), S(8, dtype=I32))


# ----------------------------------------------------------------------------- custom_vjp


def _entmax15_fwd_impl(z):
    x = z / 2.0
    mx = jnp.max(x, -1, keepdims=True)

    def body(_, lh):
        lo, hi = lh
        mid = 0.5 * (lo + hi)
        f = jnp.sum(jnp.square(jax.nn.relu(x - mid)), -1, keepdims=True) - 1.0
        return jnp.where(f >= 0, mid, lo), jnp.where(f >= 0, hi, mid)
    lo, hi = lax.fori_loop(0, 24, body, (mx - 1.0, mx))
    p = jnp.square(jax.nn.relu(x - 0.5 * (lo + hi)))
    return p / jnp.sum(p, -1, keepdims=True)


@jax.custom_vjp
def _entmax15(z):
    return _entmax15_fwd_impl(z)


def _entmax15_fwd(z):
    p = _entmax15_fwd_impl(z)
    return p, p


def _entmax15_bwd(p, dy):
    s = jnp.sqrt(p)
    dx = dy * s
    q = jnp.sum(dx, -1, keepdims=True) / jnp.sum(s, -1, keepdims=True)
    return (dx - q * s,)


_entmax15.defvjp(_entmax15_fwd, _entmax15_bwd)


def custom_vjp_entmax15_bisection():
    """Sparse-attention transformer layer with 1.5-entmax instead of softmax: the forward finds
    the threshold by 24 bisection steps in a fori_loop, the custom_vjp backward is the closed
    form (sqrt(p)-weighted, mean-centred); the classifier's output also goes through entmax
    and is trained with the entmax-1.5 (Tsallis) loss; SGD."""
    def loss(p, x, labels):
        h = _ln(x @ p["inp"], p["g1"], p["b1"])
        b, t, d = h.shape
        H, dh = 2, d // 2
        q = (h @ p["q"]).reshape(b, t, H, dh)
        k = (h @ p["k"]).reshape(b, t, H, dh)
        v = (h @ p["v"]).reshape(b, t, H, dh)
        a = _entmax15(jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(float(dh)))
        h = h + jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(b, t, d) @ p["o"]
        h = h + jax.nn.relu(_ln(h, p["g2"], p["b2"]) @ p["f1"]) @ p["f2"]
        z = jnp.mean(h, 1) @ p["head"]
        pr = _entmax15(z)
        oh = jax.nn.one_hot(labels, z.shape[-1])
        # entmax-1.5 loss: (1 - sum p^1.5) / 0.75 + <p - y, z>
        tsallis = (1.0 - jnp.sum(pr ** 1.5, -1)) / 0.75
        return jnp.mean(tsallis + jnp.sum((pr - oh) * z, -1))

    def step(p, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        return l, _sgd(p, g, 0.05)
    D = 16
    p = _attn_params({"inp": S(8, D), "g1": S(D), "b1": S(D), "g2": S(D), "b2": S(D),
                      "f1": S(D, 32), "f2": S(32, D), "head": S(D, 6)}, "", D)
    return step, (p, S(8, 16, 8), S(8, dtype=I32))


# ----------------------------------------------------------------------------- control


def scheduled_sampling_cond_scan():
    """Seq2seq GRU decoder trained with scheduled sampling: at each scan step a lax.cond, driven
    by a per-step coin (passed in) against the inverse-sigmoid teacher-forcing probability for
    the current training step, feeds either the ground-truth previous token's embedding or the
    embedding of the model's own argmax prediction; mean-of-embeddings encoder context;
    cross-entropy, SGD with gradient clipping."""
    def loss(p, src, tgt, coin, eps):
        b, T = tgt.shape
        ctx = jnp.tanh(jnp.mean(p["emb_s"][src], 1) @ p["wc"])         # [B,H]
        prev = jnp.concatenate([jnp.zeros((b, 1), I32), tgt[:, :-1]], 1)

        def body(c, inp):
            h, logits = c
            y_prev, ct = inp
            e = lax.cond(ct < eps,
                         lambda yl: p["emb_t"][yl[0]],
                         lambda yl: p["emb_t"][jnp.argmax(yl[1], -1)],
                         (y_prev, logits))
            xin = jnp.concatenate([e, ctx], -1)
            zr = jax.nn.sigmoid(xin @ p["wzr"] + h @ p["uzr"] + p["bzr"])
            z, r = jnp.split(zr, 2, -1)
            n = jnp.tanh(xin @ p["wn"] + (r * h) @ p["un"])
            h = (1 - z) * h + z * n
            logits = h @ p["out"]
            return (h, logits), logits
        V = p["out"].shape[1]
        _, lg = lax.scan(body, (ctx, jnp.zeros((b, V))), (jnp.swapaxes(prev, 0, 1), coin))
        return _xent(jnp.swapaxes(lg, 0, 1), tgt)

    def step(p, t, src, tgt, coin):
        k = 200.0
        eps = k / (k + jnp.exp(t / k))
        l, g = jax.value_and_grad(loss)(p, src, tgt, coin, eps)
        return l, _sgd(p, _global_clip(g, 5.0), 0.1)
    E, H, V = 8, 16, 14
    p = {"emb_s": S(V, E), "emb_t": S(V, E), "wc": S(E, H), "wzr": S(E + H, 2 * H),
         "uzr": S(H, 2 * H), "bzr": S(2 * H), "wn": S(E + H, H), "un": S(H, H), "out": S(H, V)}
    return step, (p, S(), S(16, 9, dtype=I32), S(16, 10, dtype=I32), S(10))


def grad_accum_fori_microbatches():
    """Gradient accumulation: the global batch of 32 is split into four micro-batches taken by
    dynamic_slice_in_dim inside a fori_loop; each iteration computes value_and_grad of a
    LayerNorm MLP classifier and adds to running gradient and loss sums; the averaged gradient
    is clipped by global norm and applied with AdamW."""
    def loss(p, x, y):
        h = jax.nn.gelu(_ln(x @ p["w1"] + p["b1"], p["g1"], p["bb1"]))
        h = jax.nn.gelu(_ln(h @ p["w2"] + p["b2"], p["g2"], p["bb2"]))
        return _xent(h @ p["w3"], y)

    def step(p, m, v, t, x, y):
        mb = 8
        nmb = x.shape[0] // mb

        def body(i, acc):
            gs, ls = acc
            xb = lax.dynamic_slice_in_dim(x, i * mb, mb, 0)
            yb = lax.dynamic_slice_in_dim(y, i * mb, mb, 0)
            l, g = jax.value_and_grad(loss)(p, xb, yb)
            return tmap(jnp.add, gs, g), ls + l
        g, l = lax.fori_loop(0, nmb, body, (tmap(jnp.zeros_like, p), jnp.zeros((), F32)))
        g = _global_clip(tmap(lambda a: a / nmb, g), 1.0)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3, wd=0.05)
        return l / nmb, p, m, v
    D, H = 12, 32
    p = {"w1": S(D, H), "b1": S(H), "g1": S(H), "bb1": S(H), "w2": S(H, H), "b2": S(H),
         "g2": S(H), "bb2": S(H), "w3": S(H, 7)}
    return step, (p, p, p, S(), S(32, D), S(32, dtype=I32))


# ----------------------------------------------------------------------------- sort / top_k


def lovasz_hinge_sorted_errors():
    """Binary segmentation with the Lovasz hinge: per image the hinge errors are sorted in
    decreasing order (argsort + gather), the ground truth permuted alike, and the Lovasz
    extension's gradient of the Jaccard loss (from cumulative sums of the sorted labels) weights
    the relu'd sorted errors; small CNN, Adam."""
    def lovasz_grad(gs):
        tot = jnp.sum(gs)
        inter = tot - jnp.cumsum(gs)
        union = tot + jnp.cumsum(1.0 - gs)
        jac = 1.0 - inter / union
        return jnp.concatenate([jac[:1], jac[1:] - jac[:-1]])

    def per_image(logit, lab):
        logit, lab = logit.reshape(-1), lab.reshape(-1)
        err = 1.0 - logit * (2.0 * lab - 1.0)
        perm = jnp.argsort(-err)
        es, gs = err[perm], lab[perm]
        return jnp.dot(jax.nn.relu(es), lax.stop_gradient(lovasz_grad(gs)))

    def loss(p, x, mask):
        h = jax.nn.relu(_conv(x, p["c1"]))
        h = jax.nn.relu(_conv(h, p["c2"]))
        logit = _conv(h, p["c3"])[..., 0]
        lab = (mask > 0.5).astype(F32)
        return jnp.mean(jax.vmap(per_image)(logit, lab))

    def step(p, m, v, t, x, mask):
        l, g = jax.value_and_grad(loss)(p, x, mask)
        p, m, v = _adam(p, m, v, g, t)
        return l, p, m, v
    p = {"c1": S(3, 3, 3, 8), "c2": S(3, 3, 8, 8), "c3": S(3, 3, 8, 1)}
    return step, (p, p, p, S(), S(8, 8, 8, 3), S(8, 8, 8))


# ----------------------------------------------------------------------------- fft


def s4d_vandermonde_fft_conv():
    """S4D sequence model: each channel's convolution kernel is generated from a diagonal
    complex state-space model (learned log-step, negative real and imaginary parts of A, complex
    C) by zero-order-hold discretisation and a Vandermonde sum, then applied as a causal long
    convolution via rfft/irfft of length 2L with a skip term D; two residual pre-LN layers,
    mean pooling, cross-entropy, Adam."""
    def kernel(q, L):
        dt = jnp.exp(q["log_dt"])                                       # [H]
        A = -jnp.exp(q["log_a_re"]) + 1j * q["a_im"]                    # [H,N]
        C = q["c_re"] + 1j * q["c_im"]
        dtA = dt[:, None] * A
        Cf = C * (jnp.exp(dtA) - 1.0) / A
        l = jnp.arange(L, dtype=F32)
        return 2.0 * jnp.real(jnp.einsum("hn,hnl->hl", Cf, jnp.exp(dtA[:, :, None] * l)))

    def s4(q, u):
        L = u.shape[1]
        K = kernel(q, L)
        uf = jnp.fft.rfft(u, n=2 * L, axis=1)
        kf = jnp.fft.rfft(K, n=2 * L, axis=-1).T
        y = jnp.fft.irfft(uf * kf[None], n=2 * L, axis=1)[:, :L]
        return y + u * q["D"]

    def loss(p, x, labels):
        h = x @ p["inp"]
        for q in p["layers"]:
            y = s4(q, _ln(h, q["g"], q["b"]))
            h = h + jax.nn.gelu(y) @ q["out"]
        return _xent(jnp.mean(h, 1) @ p["head"], labels)

    def step(p, m, v, t, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        p, m, v = _adam(p, m, v, g, t, lr=2e-3)
        return l, p, m, v
    H, N = 16, 8
    q = {"log_dt": S(H), "log_a_re": S(H, N), "a_im": S(H, N), "c_re": S(H, N), "c_im": S(H, N),
         "D": S(H), "g": S(H), "b": S(H), "out": S(H, H)}
    p = {"inp": S(3, H), "layers": [q, dict(q)], "head": S(H, 4)}
    return step, (p, p, p, S(), S(8, 32, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- linalg


def kfac_kronecker_cholesky_precondition():
    """K-FAC on a two-layer tanh MLP: per-layer Kronecker factors, the activation second moment
    A = a^T a / n (bias column appended) and the pre-activation-gradient second moment G
    (gradients taken w.r.t. zero perturbations of the pre-activations), kept as running
    averages; Tikhonov-damped factors are Cholesky-factored and the weight gradient
    preconditioned as A^-1 grad G^-1 by cho_solve; momentum SGD."""
    def loss(p, eps, x, labels):
        n = x.shape[0]
        a0 = jnp.concatenate([x, jnp.ones((n, 1))], -1)
        h = jnp.tanh(a0 @ p["w1"] + eps[0])
        a1 = jnp.concatenate([h, jnp.ones((n, 1))], -1)
        logits = a1 @ p["w2"] + eps[1]
        return _xent(logits, labels), (a0, a1)

    def step(p, mom, fa, fg, x, labels):
        n = x.shape[0]
        eps = [jnp.zeros((n, p["w1"].shape[1])), jnp.zeros((n, p["w2"].shape[1]))]
        (l, acts), (g, ge) = jax.value_and_grad(loss, (0, 1), has_aux=True)(p, eps, x, labels)
        names = ["w1", "w2"]
        new_fa, new_fg, nat = [], [], {}
        for i, k in enumerate(names):
            A = acts[i].T @ acts[i] / n
            gs = ge[i] * n
            G = gs.T @ gs / n
            fai = 0.95 * fa[i] + 0.05 * A
            fgi = 0.95 * fg[i] + 0.05 * G
            new_fa.append(fai)
            new_fg.append(fgi)
            la = jnp.linalg.cholesky(fai + 0.03 * jnp.eye(fai.shape[0]))
            lg = jnp.linalg.cholesky(fgi + 0.03 * jnp.eye(fgi.shape[0]))
            u = jax.scipy.linalg.cho_solve((la, True), g[k])
            nat[k] = jax.scipy.linalg.cho_solve((lg, True), u.T).T
        mom = tmap(lambda m, d: 0.9 * m + d, mom, nat)
        return l, _sgd(p, mom, 0.01), mom, new_fa, new_fg
    D, H, C = 8, 16, 4
    p = {"w1": S(D + 1, H), "w2": S(H + 1, C)}
    return step, (p, p, [S(D + 1, D + 1), S(H + 1, H + 1)], [S(H, H), S(C, C)], S(32, D),
                  S(32, dtype=I32))


# ----------------------------------------------------------------------------- scatter/gather


def deformable_conv_bilinear_gather():
    """Modulated deformable convolution (DCNv2): a conv predicts per-pixel offsets for each of
    the nine kernel taps and a sigmoid modulation; features are bilinearly sampled at the
    shifted locations by four flat-index gathers with zero padding outside the image, modulated,
    and contracted with the deformable kernel; global pooling, cross-entropy, SGD."""
    def sample(f, py, px):
        Hh, Ww, C = f.shape
        flat = f.reshape(Hh * Ww, C)
        y0, x0 = jnp.floor(py), jnp.floor(px)
        wy, wx = py - y0, px - x0
        out = 0.0
        for dy in (0, 1):
            for dx in (0, 1):
                yy, xx = y0 + dy, x0 + dx
                w = (wy if dy else 1.0 - wy) * (wx if dx else 1.0 - wx)
                valid = (yy >= 0) & (yy <= Hh - 1) & (xx >= 0) & (xx <= Ww - 1)
                idx = (jnp.clip(yy, 0, Hh - 1).astype(I32) * Ww
                       + jnp.clip(xx, 0, Ww - 1).astype(I32))
                out = out + (w * valid)[..., None] * flat[idx]
        return out                                                     # [H,W,9,C]

    def loss(p, x, labels):
        f = jax.nn.relu(_conv(x, p["stem"]))                            # [N,8,8,8]
        n, Hh, Ww, C = f.shape
        off = 2.0 * jnp.tanh(_conv(f, p["off"])).reshape(n, Hh, Ww, 9, 2)
        mod = jax.nn.sigmoid(_conv(f, p["mod"]))                        # [N,H,W,9]
        ky = (jnp.arange(9) // 3 - 1).astype(F32)
        kx = (jnp.arange(9) % 3 - 1).astype(F32)
        gy = jnp.arange(Hh, dtype=F32)[:, None, None] + ky
        gx = jnp.arange(Ww, dtype=F32)[None, :, None] + kx
        py = gy[None] + off[..., 0]
        px = gx[None] + off[..., 1]
        smp = jax.vmap(sample)(f, py, px) * mod[..., None]              # [N,H,W,9,C]
        h = jax.nn.relu(jnp.einsum("nhwkc,kco->nhwo", smp, p["dk"]) + p["db"])
        return _xent(jnp.mean(h, (1, 2)) @ p["fc"], labels)

    def step(p, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        return l, _sgd(p, g, 0.02)
    p = {"stem": S(3, 3, 3, 8), "off": S(3, 3, 8, 18), "mod": S(3, 3, 8, 9), "dk": S(9, 8, 16),
         "db": S(16), "fc": S(16, 6)}
    return step, (p, S(8, 8, 8, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- dynamic slices


def blockwise_online_softmax_attention():
    """Memory-efficient causal attention in a small LM: keys and values are visited in blocks of
    eight by lax.dynamic_slice_in_dim inside a fori_loop, with the running maximum, normaliser
    and output rescaled online (flash-attention recurrence); reverse-mode differentiated through
    the loop; pre-LN layer with a GELU MLP, next-token loss, Adam."""
    def attn(q, k, v, blk):
        b, t, H, dh = q.shape
        qpos = jnp.arange(t)

        def body(i, c):
            m, l, o = c
            kb = lax.dynamic_slice_in_dim(k, i * blk, blk, 1)
            vb = lax.dynamic_slice_in_dim(v, i * blk, blk, 1)
            s = jnp.einsum("bqhd,bkhd->bhqk", q, kb) / jnp.sqrt(float(dh))
            kpos = i * blk + jnp.arange(blk)
            s = jnp.where(kpos[None, :] <= qpos[:, None], s, -1e30)
            mn = jnp.maximum(m, jnp.max(s, -1))
            pe = jnp.exp(s - mn[..., None])
            corr = jnp.exp(m - mn)
            l = l * corr + jnp.sum(pe, -1)
            o = o * corr[..., None] + jnp.einsum("bhqk,bkhd->bhqd", pe, vb)
            return mn, l, o
        c0 = (jnp.full((b, H, t), -1e30), jnp.zeros((b, H, t)), jnp.zeros((b, H, t, dh)))
        _, l, o = lax.fori_loop(0, t // blk, body, c0)
        return jnp.swapaxes(o / l[..., None], 1, 2)                    # [B,T,H,dh]

    def loss(p, tok):
        b, t = tok.shape
        H, d = 2, p["emb"].shape[1]
        x = p["emb"][tok] + p["pos"]
        h = _ln(x, p["g1"], p["b1"])
        q = (h @ p["q"]).reshape(b, t, H, d // H)
        k = (h @ p["k"]).reshape(b, t, H, d // H)
        v = (h @ p["v"]).reshape(b, t, H, d // H)
        x = x + attn(q, k, v, 8).reshape(b, t, d) @ p["o"]
        x = x + jax.nn.gelu(_ln(x, p["g2"], p["b2"]) @ p["f1"]) @ p["f2"]
        logits = _ln(x, p["gf"], p["bf"]) @ p["emb"].T
        return _xent(logits[:, :-1], tok[:, 1:])

    def step(p, m, v, t, tok):
        l, g = jax.value_and_grad(loss)(p, tok)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v
    D, T, V = 16, 32, 26
    p = _attn_params({"emb": S(V, D), "pos": S(T, D), "g1": S(D), "b1": S(D), "g2": S(D),
                      "b2": S(D), "f1": S(D, 32), "f2": S(32, D), "gf": S(D), "bf": S(D)}, "", D)
    return step, (p, p, p, S(), S(8, T, dtype=I32))


# ----------------------------------------------------------------------------- mixed precision


def fp16_dynamic_scale_skip_nonfinite():
    """float16 mixed precision with f32 master weights: parameters cast to f16 for an attention
    + MLP token mixer (softmax and layer-norm statistics in f32), the loss multiplied by a
    dynamic loss scale; gradients unscaled, and when any is non-finite the Adam update is
    skipped (jnp.where over the whole state) and the scale halved, otherwise the scale doubles
    after 200 good steps."""
    F16 = jnp.float16

    def ln16(h, g, b):
        hf = h.astype(F32)
        m = jnp.mean(hf, -1, keepdims=True)
        v = jnp.var(hf, -1, keepdims=True)
        return ((hf - m) * lax.rsqrt(v + 1e-5) * g + b).astype(F16)

    def loss(p, x, labels, scale):
        c = tmap(lambda a: a.astype(F16), p)
        b, t, _ = x.shape
        h = x.astype(F16) @ c["inp"]
        d = h.shape[-1]
        a = ln16(h, p["g1"], p["b1"])
        q, k, v = a @ c["q"], a @ c["k"], a @ c["v"]
        s = jnp.einsum("bqd,bkd->bqk", q, k).astype(F32) / jnp.sqrt(float(d))
        att = jax.nn.softmax(s, -1).astype(F16)
        h = h + jnp.einsum("bqk,bkd->bqd", att, v) @ c["o"]
        h = h + jax.nn.gelu(ln16(h, p["g2"], p["b2"]) @ c["f1"]) @ c["f2"]
        logits = (jnp.mean(h, 1) @ c["head"]).astype(F32)
        return _xent(logits, labels) * scale

    def step(p, m, v, t, scale, good, x, labels):
        sl, g = jax.value_and_grad(loss)(p, x, labels, scale)
        g = tmap(lambda a: a / scale, g)
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(a)) for a in jax.tree_util.tree_leaves(g)]))
        g = tmap(lambda a: jnp.where(finite, a, 0.0), g)
        p2, m2, v2 = _adam(p, m, v, g, t, lr=1e-3)
        sel = lambda new, old: jnp.where(finite, new, old)
        p, m, v = tmap(sel, p2, p), tmap(sel, m2, m), tmap(sel, v2, v)
        good = jnp.where(finite, good + 1, 0)
        grow = good >= 200
        new_scale = jnp.where(finite, jnp.where(grow, scale * 2.0, scale), scale * 0.5)
        good = jnp.where(grow, 0, good)
        return sl / scale, p, m, v, new_scale, good
    D = 32
    p = _attn_params({"inp": S(8, D), "g1": S(D), "b1": S(D), "g2": S(D), "b2": S(D),
                      "f1": S(D, 64), "f2": S(64, D), "head": S(D, 5)}, "", D)
    return step, (p, p, p, S(), S(), S(dtype=I32), S(16, 8, 8), S(16, dtype=I32))


# ----------------------------------------------------------------------------- optimizers


def novograd_jasper_conv1d():
    """Jasper-style 1-D convolutional acoustic model (prolog conv, a residual block of two
    batch-normalised convs with a 1x1 projected skip, a dilated conv, 1x1 output) trained
    framewise with NovoGrad: per-layer scalar second moments of the gradient norm (initialised
    on the first step), layer-normalised gradients plus decoupled weight decay into first
    moments."""
    def c1d(x, w, dil=1):
        return lax.conv_general_dilated(x, w, (1,), "SAME", rhs_dilation=(dil,),
                                        dimension_numbers=("NWC", "WIO", "NWC"))

    def bn(x, g, b):
        m = jnp.mean(x, (0, 1))
        v = jnp.var(x, (0, 1))
        return (x - m) * lax.rsqrt(v + 1e-5) * g + b

    def loss(p, x, labels):
        h = jax.nn.relu(bn(c1d(x, p["pro"]), p["gp"], p["bp"]))        # [B,T,24]
        r = jax.nn.relu(bn(c1d(h, p["r1"]), p["g1"], p["b1"]))
        r = bn(c1d(r, p["r2"]), p["g2"], p["b2"])
        h = jax.nn.relu(r + bn(c1d(h, p["skip"]), p["gs"], p["bs"]))
        h = jax.nn.relu(bn(c1d(h, p["dil"], 2), p["gd"], p["bd"]))
        return _xent(c1d(h, p["out"]), labels)

    def step(p, m, v, t, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        b1, b2, lr, wd = 0.95, 0.98, 1e-2, 1e-3
        newp, newm, newv = {}, {}, {}
        for k in p:
            gn2 = jnp.sum(g[k] * g[k])
            vk = jnp.where(t <= 1, gn2, b2 * v[k] + (1 - b2) * gn2)
            d = g[k] / (jnp.sqrt(vk) + 1e-8)
            if p[k].ndim > 1:
                d = d + wd * p[k]
            newm[k] = b1 * m[k] + d
            newv[k] = vk
            newp[k] = p[k] - lr * newm[k]
        return l, newp, newm, newv
    F, C, V = 10, 24, 12
    p = {"pro": S(5, F, C), "gp": S(C), "bp": S(C), "r1": S(5, C, C), "g1": S(C), "b1": S(C),
         "r2": S(5, C, C), "g2": S(C), "b2": S(C), "skip": S(1, C, C), "gs": S(C), "bs": S(C),
         "dil": S(3, C, C), "gd": S(C), "bd": S(C), "out": S(1, C, V)}
    vs = {k: S() for k in p}
    return step, (p, p, vs, S(), S(8, 24, F), S(8, 24, dtype=I32))


def adabelief_centralized_tabular():
    """Tabular click model with entity embeddings for three categorical fields concatenated
    with numeric features, a two-layer MLP and a BCE loss; AdaBelief (second moment of the
    gradient's deviation from its EMA, bias-corrected, decoupled weight decay) with gradient
    centralisation on the dense weight matrices."""
    def loss(p, cat, num, y):
        e = jnp.concatenate([p["e%d" % i][cat[:, i]] for i in range(3)] + [num], -1)
        h = jax.nn.relu(e @ p["w1"] + p["b1"])
        h = jax.nn.relu(h @ p["w2"] + p["b2"])
        z = (h @ p["w3"])[:, 0]
        lab = (y > 0.5).astype(F32)
        return jnp.mean(jnp.maximum(z, 0) - z * lab + jnp.log1p(jnp.exp(-jnp.abs(z))))

    def step(p, m, s, t, cat, num, y):
        l, g = jax.value_and_grad(loss)(p, cat, num, y)
        g = {k: (a - jnp.mean(a, 0, keepdims=True) if k.startswith("w") else a)
             for k, a in g.items()}
        b1, b2, lr = 0.9, 0.999, 1e-3
        m = tmap(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        s = tmap(lambda s, g, m: b2 * s + (1 - b2) * (g - m) ** 2 + 1e-16, s, g, m)
        c1, c2 = 1.0 - b1 ** t, 1.0 - b2 ** t
        p = tmap(lambda p, m, s: p - lr * ((m / c1) / (jnp.sqrt(s / c2) + 1e-16) + 1e-2 * p),
                 p, m, s)
        return l, p, m, s
    p = {"e0": S(10, 4), "e1": S(12, 4), "e2": S(7, 4), "w1": S(17, 32), "b1": S(32),
         "w2": S(32, 16), "b2": S(16), "w3": S(16, 1)}
    return step, (p, p, p, S(), S(32, 3, dtype=I32), S(32, 5), S(32))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [barlow_twins_lars_projector, byol_ema_target_predictor],
    "cnn": [efficientnet_mbconv_se_drop_path, dcgan_hinge_spectral_norm_gan],
    "transformer": [transformer_xl_memory_relpos, linformer_seq_projected_mlm],
    "rnn": [lmu_legendre_memory_scan, ntm_content_address_scan],
    "moe": [mixture_of_depths_topk_router],
    "vae": [iwae_importance_weighted_bound],
    "unet": [unet3plus_full_scale_skips],
    "gnn": [pna_multi_aggregator_scalers],
    "quant": [xnor_binary_conv_ste],
    "remat": [remat_nested_names_but_these],
    "custom_vjp": [custom_vjp_entmax15_bisection],
    "control": [scheduled_sampling_cond_scan, grad_accum_fori_microbatches],
    "sort": [lovasz_hinge_sorted_errors],
    "fft": [s4d_vandermonde_fft_conv],
    "linalg": [kfac_kronecker_cholesky_precondition],
    "scatter_gather": [deformable_conv_bilinear_gather],
    "dynamic": [blockwise_online_softmax_attention],
    "mixed": [fp16_dynamic_scale_skip_nonfinite],
    "optimizer": [novograd_jasper_conv1d, adabelief_centralized_tabular],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["transformer_xl_memory_relpos", "linformer_seq_projected_mlm",
           "efficientnet_mbconv_se_drop_path", "dcgan_hinge_spectral_norm_gan",
           "ntm_content_address_scan", "mixture_of_depths_topk_router",
           "unet3plus_full_scale_skips", "xnor_binary_conv_ste", "remat_nested_names_but_these",
           "custom_vjp_entmax15_bisection", "scheduled_sampling_cond_scan",
           "fp16_dynamic_scale_skip_nonfinite"]
SHARDED_SET = ["barlow_twins_lars_projector", "transformer_xl_memory_relpos",
               "efficientnet_mbconv_se_drop_path", "mixture_of_depths_topk_router",
               "grad_accum_fori_microbatches", "iwae_importance_weighted_bound",
               "remat_nested_names_but_these", "fp16_dynamic_scale_skip_nonfinite"]
