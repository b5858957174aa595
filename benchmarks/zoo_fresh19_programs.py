"""Nineteenth fresh set: 25 JAX programs written by a helper on 2026-11-29. It was kept
outside the repository as a held-out set, measured unseen at the start and end of that
day's second session, and committed then, when its misses were first read. Same interface
as zoo_programs.py::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh19_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh19_programs python benchmarks/accuracy.py --data DIR

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
tmap = jax.tree_util.tree_map
CP = jax.checkpoint_policies


def S(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


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


def _rms(x, g, eps=1e-6):
    return x * lax.rsqrt(jnp.mean(jnp.square(x), -1, keepdims=True) + eps) * g


def _bn(x, g, b, axes=(0, 1, 2), eps=1e-5):
    """Training-mode batch norm over ``axes``; returns the output and the batch (mean, var)."""
    m = jnp.mean(x, axes)
    v = jnp.var(x, axes)
    return (x - m) * lax.rsqrt(v + eps) * g + b, (m, v)


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
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(dh)
    if causal:
        s = jnp.where(np.tril(np.ones((tq, tk), bool)), s, -1e9)
    a = jax.nn.softmax(s, -1)
    o = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(b, tq, d)
    return o @ p[pre + "o"]


def _attn_params(p, pre, d):
    for k in "qkvo":
        p[pre + k] = S(d, d)
    return p


def _xent(logits, labels):
    logp = jax.nn.log_softmax(logits, -1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[..., None], -1))


def _bce(z, y):
    """Elementwise binary cross-entropy with logits."""
    return jnp.maximum(z, 0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z)))


def _global_clip(g, max_norm=1.0):
    n = jnp.sqrt(sum(jnp.sum(jnp.square(a)) for a in jax.tree_util.tree_leaves(g)))
    return tmap(lambda a: a * jnp.minimum(1.0, max_norm / (n + 1e-6)), g)


def _momentum(p, mom, g, lr, mu=0.9, wd=0.0, nesterov=False):
    g = tmap(lambda g, w: g + wd * w, g, p)
    mom = tmap(lambda m, g: mu * m + g, mom, g)
    if nesterov:
        return tmap(lambda w, g, m: w - lr * (g + mu * m), p, g, mom), mom
    return tmap(lambda w, m: w - lr * m, p, mom), mom


def _maxpool(x, k=2):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, k, k, 1), (1, k, k, 1), "VALID")


def _avgpool(x, k=2):
    n, h, w, c = x.shape
    return jnp.mean(x.reshape(n, h // k, k, w // k, k, c), (2, 4))


def _gru(q, h, x):
    zr = jax.nn.sigmoid(x @ q["gx"] + h @ q["gh"] + q["gb"])
    z, r = jnp.split(zr, 2, -1)
    hc = jnp.tanh(x @ q["cx"] + (r * h) @ q["ch"] + q["cb"])
    return (1 - z) * h + z * hc


def _gru_params(din, d):
    return {"gx": S(din, 2 * d), "gh": S(d, 2 * d), "gb": S(2 * d), "cx": S(din, d),
            "ch": S(d, d), "cb": S(d)}


def _sw(a):
    return jnp.swapaxes(a, 0, 1)


# ----------------------------------------------------------------------------- mlp


def _sparsemax(z):
    """Sparsemax along the last axis (sort, cumulative sum, support size, threshold)."""
    d = z.shape[-1]
    zs = -jnp.sort(-z, -1)
    k = jnp.arange(1, d + 1, dtype=z.dtype)
    cs = jnp.cumsum(zs, -1)
    kz = jnp.sum((1.0 + k * zs > cs).astype(z.dtype), -1, keepdims=True)
    tau = (jnp.take_along_axis(cs, kz.astype(I32) - 1, -1) - 1.0) / kz
    return jnp.maximum(z - tau, 0.0)


def tabnet_attentive_sparsemax_prior_steps():
    """TabNet classifier on 32 numeric features: input batch norm, a feature transformer of
    GLU layers (fc -> BN -> GLU, two shared across steps and two step-specific, residuals
    scaled by sqrt(0.5)), three decision steps whose attentive transformer produces a
    sparsemax feature mask (sort-based sparsemax) scaled by a prior that is multiplied by
    (gamma - M) after every step; decision outputs are the ReLU of the first half of each
    step's features, summed; loss is cross-entropy plus the mask-entropy sparsity term;
    BN running statistics returned; Adam with step decay and clipping."""
    NSTEP, ND, NA, GAMMA, LS = 3, 16, 16, 1.3, 1e-3

    def bn1(x, g, b):
        m, v = jnp.mean(x, 0), jnp.var(x, 0)
        return (x - m) * lax.rsqrt(v + 1e-5) * g + b, (m, v)

    def glu(q, x):
        h, st = bn1(x @ q["w"], q["g"], q["b"])
        a, gt = jnp.split(h, 2, -1)
        return a * jax.nn.sigmoid(gt), st

    def ftrans(shared, own, x):
        h, st = glu(shared[0], x)
        stats = [st]
        for q in shared[1:] + own:
            y, st = glu(q, h)
            stats.append(st)
            h = (h + y) * math.sqrt(0.5)
        return h, stats

    def loss(p, x, y):
        x, st0 = bn1(x, p["ig"], p["ib"])
        stats = [st0]
        prior = jnp.ones_like(x)
        h, st = ftrans(p["shared"], p["init"], x)
        stats += st
        a = h[:, ND:]
        out, ent = 0.0, 0.0
        for q in p["steps"]:
            z, st = bn1(a @ q["att"], q["ag"], q["ab"])
            stats.append(st)
            M = _sparsemax(z * prior)
            prior = prior * (GAMMA - M)
            ent = ent + jnp.mean(jnp.sum(-M * jnp.log(M + 1e-10), -1))
            h, st = ftrans(p["shared"], q["ft"], M * x)
            stats += st
            out = out + jax.nn.relu(h[:, :ND])
            a = h[:, ND:]
        logits = out @ p["fc"] + p["fcb"]
        return _xent(logits, y) + LS * ent / NSTEP, stats

    def step(p, m, v, run, t, x, y):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, x, y)
        run = tmap(lambda r, s: 0.98 * r + 0.02 * s, run, lax.stop_gradient(stats))
        lr = 2e-2 * 0.95 ** jnp.floor(t / 500.0)
        p, m, v = _adam(p, m, v, _global_clip(g, 2.0), t, lr=lr)
        return l, p, m, v, run
    F, W = 32, ND + NA
    gl = lambda i: {"w": S(i, 2 * W), "g": S(2 * W), "b": S(2 * W)}
    p = {"ig": S(F), "ib": S(F), "shared": [gl(F), gl(W)], "init": [gl(W), gl(W)],
         "steps": [{"att": S(NA, F), "ag": S(F), "ab": S(F), "ft": [gl(W), gl(W)]}
                   for _ in range(NSTEP)],
         "fc": S(ND, 4), "fcb": S(4)}
    st2 = lambda c: (S(c), S(c))
    run = [st2(F)] + [st2(2 * W)] * 4 + ([st2(F)] + [st2(2 * W)] * 4) * NSTEP
    return step, (p, p, p, run, S(), S(128, F), S(128, dtype=I32))


def deep_evidential_regression_nig():
    """Deep evidential regression for 16 targets: a residual pre-LN SiLU MLP outputs the four
    Normal-Inverse-Gamma parameters (gamma, softplus nu, 1 + softplus alpha, softplus beta)
    per target; the loss is the NIG negative log marginal likelihood (Student-t, with
    lax.lgamma) plus the evidence regulariser |y - gamma| (2 nu + alpha) whose weight is
    ramped in over the first 1000 steps; mean aleatoric and epistemic uncertainty are
    reported; Adam with linear warmup."""
    K, LAM = 16, 0.01

    def loss(p, x, y, t):
        h = jax.nn.silu(x @ p["w0"] + p["b0"])
        for q in p["res"]:
            h = h + jax.nn.silu(_ln(h, q["g"], q["b"]) @ q["w"] + q["bb"])
        gam, lnu, lal, lbe = jnp.split(h @ p["out"] + p["ob"], 4, -1)
        nu = jax.nn.softplus(lnu) + 1e-6
        alpha = jax.nn.softplus(lal) + 1.0 + 1e-6
        beta = jax.nn.softplus(lbe) + 1e-6
        om = 2.0 * beta * (1.0 + nu)
        nll = (0.5 * jnp.log(math.pi / nu) - alpha * jnp.log(om)
               + (alpha + 0.5) * jnp.log(nu * jnp.square(y - gam) + om)
               + lax.lgamma(alpha) - lax.lgamma(alpha + 0.5))
        reg = jnp.abs(y - gam) * (2.0 * nu + alpha)
        lam = LAM * jnp.minimum(1.0, t / 1000.0)
        alea = jnp.mean(beta / (alpha - 1.0))
        epi = jnp.mean(beta / (nu * (alpha - 1.0)))
        return jnp.mean(nll) + lam * jnp.mean(reg), (alea, epi)

    def step(p, m, v, t, x, y):
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, x, y, t)
        lr = 5e-4 * jnp.minimum(1.0, (t + 1.0) / 200.0)
        p, m, v = _adam(p, m, v, g, t, lr=lr)
        return l, aux, p, m, v
    Din, H = 32, 128
    r = {"g": S(H), "b": S(H), "w": S(H, H), "bb": S(H)}
    p = {"w0": S(Din, H), "b0": S(H), "res": [r, dict(r), dict(r)], "out": S(H, 4 * K),
         "ob": S(4 * K)}
    return step, (p, p, p, S(), S(128, Din), S(128, K))


# ----------------------------------------------------------------------------- cnn


def pyramidnet_shakedrop_additive_widening():
    """PyramidNet with ShakeDrop on 32x32 images: six pre-activation basic blocks whose width
    grows additively (32 -> 112 in steps of 16), strided at blocks 3 and 5, shortcuts are
    2x2 average pooling plus zero-padding of the missing channels; each residual branch is
    scaled by ShakeDrop with a per-example Bernoulli gate (keep probability decaying linearly
    to 0.5 with depth, from passed-in uniforms), forward coefficient alpha in [-1, 1] and a
    different backward coefficient beta in [0, 1] (stop_gradient trick); BN running
    averages returned; Nesterov SGD with a step schedule and weight decay."""
    CH = (32, 48, 64, 80, 96, 112)
    STRIDES = (1, 1, 2, 1, 2, 1)

    def shake(f, keep, a, b):
        fw = (keep + a - keep * a)[:, None, None, None]
        bw = (keep + b - keep * b)[:, None, None, None]
        return f * bw + lax.stop_gradient(f * fw - f * bw)

    def block(q, x, stride, pl, u, a, b):
        h, s1 = _bn(x, q["g0"], q["b0"])
        h = _conv(h, q["c1"], stride)
        h, s2 = _bn(h, q["g1"], q["b1"])
        h = _conv(jax.nn.relu(h), q["c2"])
        h, s3 = _bn(h, q["g2"], q["b2"])
        h = shake(h, (u < pl).astype(F32), a, b)
        sc = _avgpool(x) if stride == 2 else x
        sc = jnp.pad(sc, ((0, 0), (0, 0), (0, 0), (0, h.shape[-1] - sc.shape[-1])))
        return h + sc, (s1, s2, s3)

    def loss(p, img, labels, u, alpha, beta):
        h, st0 = _bn(_conv(img, p["stem"]), p["sg"], p["sb"])
        stats = [st0]
        nb = len(p["blocks"])
        for i, (q, s) in enumerate(zip(p["blocks"], STRIDES)):
            h, st = block(q, h, s, 1.0 - 0.5 * (i + 1) / nb, u[i], alpha[i], beta[i])
            stats.append(st)
        h, stf = _bn(h, p["fg"], p["fb"])
        stats.append(stf)
        logits = jnp.mean(jax.nn.relu(h), (1, 2)) @ p["fc"] + p["fcb"]
        return _xent(logits, labels), stats

    def step(p, mom, run, t, img, labels, u, alpha, beta):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, img, labels, u, alpha, beta)
        run = tmap(lambda r, s: 0.9 * r + 0.1 * s, run, lax.stop_gradient(stats))
        lr = 0.1 * jnp.where(t < 15000.0, 1.0, jnp.where(t < 22500.0, 0.1, 0.01))
        p, mom = _momentum(p, mom, g, lr, 0.9, 1e-4, nesterov=True)
        return l, p, mom, run
    blocks, run = [], [(S(16), S(16))]
    cin = 16
    for c in CH:
        blocks.append({"g0": S(cin), "b0": S(cin), "c1": S(3, 3, cin, c), "g1": S(c),
                       "b1": S(c), "c2": S(3, 3, c, c), "g2": S(c), "b2": S(c)})
        run.append(((S(cin), S(cin)), (S(c), S(c)), (S(c), S(c))))
        cin = c
    run.append((S(cin), S(cin)))
    p = {"stem": S(3, 3, 3, 16), "sg": S(16), "sb": S(16), "blocks": blocks, "fg": S(cin),
         "fb": S(cin), "fc": S(cin, 10), "fcb": S(10)}
    nb = len(CH)
    return step, (p, p, run, S(), S(32, 32, 32, 3), S(32, dtype=I32), S(nb, 32), S(nb, 32),
                  S(nb, 32))


# ----------------------------------------------------------------------------- transformer


def synthesizer_dense_random_mixed_lm():
    """Synthesizer language model: every layer mixes three attention-logit sources with learned
    softmax weights -- a dense synthesizer (a two-layer MLP of each token emits its own row of
    T logits per head), a factorised random synthesizer (learned per-head R1 R2^T of rank 8,
    independent of the input) and ordinary scaled dot-product logits -- under a numpy causal
    mask; pre-LN, GELU FFN, two layers, tied output embedding; Adam with linear warmup,
    inverse-sqrt decay and clipping."""
    T, H, RK = 32, 4, 8
    CAUSAL = np.tril(np.ones((T, T), np.float32))

    def layer(q, x):
        b, t, d = x.shape
        dh = d // H
        h = _ln(x, q["g1"], q["b1"])
        dense = jnp.einsum("btd,dhs->bhts", jax.nn.relu(h @ q["s1"] + q["sb1"]), q["s2"])
        rnd = jnp.einsum("htr,hsr->hts", q["r1"], q["r2"])[None]
        qq = (h @ q["q"]).reshape(b, t, H, dh)
        kk = (h @ q["k"]).reshape(b, t, H, dh)
        vv = (h @ q["v"]).reshape(b, t, H, dh)
        dot = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(dh)
        w = jax.nn.softmax(q["mix"])
        s = w[0] * dense + w[1] * rnd + w[2] * dot
        a = jax.nn.softmax(jnp.where(CAUSAL > 0, s, -1e9), -1)
        x = x + jnp.einsum("bhqk,bkhd->bqhd", a, vv).reshape(b, t, d) @ q["o"]
        return x + jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"] + q["fb1"]) @ q["f2"]

    def loss(p, tok, tgt):
        x = p["emb"][tok] + p["pos"]
        for q in p["layers"]:
            x = layer(q, x)
        return _xent(_ln(x, p["gf"], p["bf"]) @ p["emb"].T, tgt)

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        lr = 1e-3 * jnp.minimum((t + 1.0) / 400.0, jnp.sqrt(400.0 / (t + 1.0)))
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.98)
        return l, p, m, v
    V, D = 256, 64
    q = _attn_params({"g1": S(D), "b1": S(D), "s1": S(D, D), "sb1": S(D), "s2": S(D, H, T),
                      "r1": S(H, T, RK), "r2": S(H, T, RK), "mix": S(3), "g2": S(D),
                      "b2": S(D), "f1": S(D, 4 * D), "fb1": S(4 * D), "f2": S(4 * D, D)}, "", D)
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [q, dict(q)], "gf": S(D), "bf": S(D)}
    return step, (p, p, p, S(), S(16, T, dtype=I32), S(16, T, dtype=I32))


def crossvit_dual_branch_cls_cross_attention():
    """CrossViT on 32x32 images: a small-patch branch (4x4 patches, width 48) and a large-patch
    branch (8x8 patches, width 96), each with its own CLS token and positional embedding and
    a pre-LN encoder block; the branches exchange information by cross-attention fusion in
    which each branch's CLS token (projected to the other width) is the only query over the
    other branch's patch tokens, then projected back; one more encoder block per branch;
    the prediction averages both CLS heads; label-smoothed cross-entropy; AdamW with cosine
    decay and clipping."""
    def patches(img, w, b, k):
        x = _conv(img, w, k, "VALID") + b
        return x.reshape(x.shape[0], -1, x.shape[-1])

    def enc(q, x, heads):
        h = _ln(x, q["g1"], q["b1"])
        x = x + _mha(h, h, q, "", heads)
        return x + jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"] + q["fb1"]) @ q["f2"]

    def cross(q, xa, xb, heads):
        cls = xa[:, :1] @ q["fin"]
        kv = _ln(jnp.concatenate([cls, xb[:, 1:]], 1), q["g"], q["b"])
        c = cls + _mha(_ln(cls, q["g"], q["b"]), kv, q, "", heads)
        return jnp.concatenate([xa[:, :1] + c @ q["fout"], xa[:, 1:]], 1)

    def loss(p, img, labels):
        n = img.shape[0]
        xs = patches(img, p["ps"], p["psb"], 4) + p["poss"]
        xl = patches(img, p["pl"], p["plb"], 8) + p["posl"]
        xs = jnp.concatenate([jnp.broadcast_to(p["clss"], (n, 1, xs.shape[-1])), xs], 1)
        xl = jnp.concatenate([jnp.broadcast_to(p["clsl"], (n, 1, xl.shape[-1])), xl], 1)
        xs, xl = enc(p["es1"], xs, 3), enc(p["el1"], xl, 3)
        xs, xl = cross(p["cs"], xs, xl, 3), cross(p["cl"], xl, xs, 3)
        xs, xl = enc(p["es2"], xs, 3), enc(p["el2"], xl, 3)
        ls = _ln(xs[:, 0], p["gs"], p["bs"]) @ p["hs"]
        ll = _ln(xl[:, 0], p["gl"], p["bl"]) @ p["hl"]
        logits = 0.5 * (ls + ll)
        C = logits.shape[-1]
        tgt = jax.nn.one_hot(labels, C) * 0.9 + 0.1 / C
        return -jnp.mean(jnp.sum(tgt * jax.nn.log_softmax(logits, -1), -1))

    def step(p, m, v, t, img, labels):
        l, g = jax.value_and_grad(loss)(p, img, labels)
        lr = 5e-4 * 0.5 * (1.0 + jnp.cos(jnp.pi * jnp.minimum(t / 5000.0, 1.0)))
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=lr, wd=0.05)
        return l, p, m, v

    def blk(d):
        return _attn_params({"g1": S(d), "b1": S(d), "g2": S(d), "b2": S(d), "f1": S(d, 3 * d),
                             "fb1": S(3 * d), "f2": S(3 * d, d)}, "", d)

    def crs(da, db):
        return _attn_params({"fin": S(da, db), "fout": S(db, da), "g": S(db), "b": S(db)}, "", db)
    Ds, Dl = 48, 96
    p = {"ps": S(4, 4, 3, Ds), "psb": S(Ds), "pl": S(8, 8, 3, Dl), "plb": S(Dl),
         "poss": S(64, Ds), "posl": S(16, Dl), "clss": S(1, 1, Ds), "clsl": S(1, 1, Dl),
         "es1": blk(Ds), "el1": blk(Dl), "es2": blk(Ds), "el2": blk(Dl),
         "cs": crs(Ds, Dl), "cl": crs(Dl, Ds), "gs": S(Ds), "bs": S(Ds), "gl": S(Dl),
         "bl": S(Dl), "hs": S(Ds, 10), "hl": S(Dl, 10)}
    return step, (p, p, p, S(), S(32, 32, 32, 3), S(32, dtype=I32))


# ----------------------------------------------------------------------------- rnn / scan


def stack_rnn_soft_push_pop_scan():
    """Stack-augmented RNN (Joulin & Mikolov) for a counting language: a sigmoid recurrent
    cell reads the top two cells of each of two continuous stacks; per stack a softmax over
    {push, pop, no-op} mixes the pushed-down stack (new top sigmoid(D h)), the popped-up
    stack (bottom filled with -1) and the unchanged stack; all inside a lax.scan over 48
    symbols; next-symbol cross-entropy only on the deterministic positions (passed mask);
    Adam with clipping."""
    NS, DEPTH, K = 2, 16, 2

    def cell(p, carry, x):
        h, st = carry
        B = h.shape[0]
        top = st[:, :, :K].reshape(B, NS * K)
        h = jax.nn.sigmoid(x @ p["U"] + h @ p["R"] + top @ p["P"] + p["bh"])
        act = jax.nn.softmax((h @ p["A"] + p["ab"]).reshape(B, NS, 3), -1)
        pushed = jax.nn.sigmoid(h @ p["D"])
        down = jnp.concatenate([pushed[..., None], st[..., :-1]], -1)
        up = jnp.concatenate([st[..., 1:], jnp.full(st[..., :1].shape, -1.0)], -1)
        st = act[..., 0:1] * down + act[..., 1:2] * up + act[..., 2:3] * st
        return (h, st), h

    def loss(p, tok, tgt, mask):
        B = tok.shape[0]
        x = _sw(p["emb"][tok])
        h0 = jnp.zeros((B, p["R"].shape[0]))
        st0 = jnp.full((B, NS, DEPTH), -1.0)
        _, hs = lax.scan(lambda c, xt: cell(p, c, xt), (h0, st0), x)
        logits = _sw(hs) @ p["out"] + p["ob"]
        nll = -jnp.take_along_axis(jax.nn.log_softmax(logits, -1), tgt[..., None], -1)[..., 0]
        return jnp.sum(nll * mask) / jnp.maximum(jnp.sum(mask), 1.0)

    def step(p, m, v, t, tok, tgt, mask):
        l, g = jax.value_and_grad(loss)(p, tok, tgt, mask)
        p, m, v = _adam(p, m, v, _global_clip(g, 5.0), t, lr=1e-3)
        return l, p, m, v
    V, E, H = 16, 32, 64
    p = {"emb": S(V, E), "U": S(E, H), "R": S(H, H), "P": S(NS * K, H), "bh": S(H),
         "A": S(H, NS * 3), "ab": S(NS * 3), "D": S(H, NS), "out": S(H, V), "ob": S(V)}
    return step, (p, p, p, S(), S(32, 48, dtype=I32), S(32, 48, dtype=I32), S(32, 48))


def neural_cde_linear_path_heun_scan():
    """Neural controlled differential equation on irregularly observed series: missing values
    are forward-filled by a first lax.scan, the control path has channels (time, four
    filled features, cumulative observation intensity), and the hidden state follows
    dz = f(z) dX with f an MLP whose output is reshaped to a [hidden x channels] matrix
    (tanh), integrated along the piecewise-linear path by a Heun step per interval in a
    second lax.scan; binary outcome from the final state with BCE; Adam with clipping."""
    C, HZ, HF = 6, 32, 64

    def field(q, z):
        h = jax.nn.softplus(z @ q["w1"] + q["b1"])
        h = jax.nn.softplus(h @ q["w2"] + q["b2"])
        return jnp.tanh(h @ q["w3"] + q["b3"]).reshape(z.shape[0], HZ, C)

    def loss(p, vals, mask, times, y):
        T = vals.shape[1]

        def ffill(carry, inp):
            v, mk = inp
            carry = jnp.where(mk > 0, v, carry)
            return carry, carry
        _, filled = lax.scan(ffill, jnp.zeros_like(vals[:, 0]), (_sw(vals), _sw(mask)))
        cnt = jnp.mean(jnp.cumsum(mask, 1), -1, keepdims=True) / T
        X = jnp.concatenate([times[..., None], _sw(filled), cnt], -1)
        dX = X[:, 1:] - X[:, :-1]
        z0 = X[:, 0] @ p["init"] + p["ib"]

        def heun(z, dx):
            k1 = jnp.einsum("bhc,bc->bh", field(p["f"], z), dx)
            k2 = jnp.einsum("bhc,bc->bh", field(p["f"], z + k1), dx)
            return z + 0.5 * (k1 + k2), None
        zT, _ = lax.scan(heun, z0, _sw(dX))
        logit = (jax.nn.relu(zT @ p["o1"] + p["ob1"]) @ p["o2"])[:, 0] + p["ob2"]
        acc = jnp.mean(((logit > 0) == (y > 0.5)).astype(F32))
        return jnp.mean(_bce(logit, y)), acc

    def step(p, m, v, t, vals, mask, times, y):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, vals, mask, times, y)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=2e-3)
        return l, acc, p, m, v
    p = {"init": S(C, HZ), "ib": S(HZ),
         "f": {"w1": S(HZ, HF), "b1": S(HF), "w2": S(HF, HF), "b2": S(HF),
               "w3": S(HF, HZ * C), "b3": S(HZ * C)},
         "o1": S(HZ, 32), "ob1": S(32), "o2": S(32, 1), "ob2": S()}
    return step, (p, p, p, S(), S(32, 48, 4), S(32, 48, 4), S(32, 48), S(32))


# ----------------------------------------------------------------------------- moe


def mh_moe_subtoken_top2_merge():
    """Multi-head mixture-of-experts language model: in each MoE layer every token is
    projected and split into four sub-tokens, each sub-token is routed independently to its
    top-2 of eight GELU experts (lax.top_k on the router softmax, renormalised weights,
    combine matrix from one-hot sums; all experts evaluated densely by einsum), the outputs
    are merged back into the token and projected; two layers of causal attention + MH-MoE;
    loss is cross-entropy plus a Switch-style load-balancing term on the first choice and a
    router z-loss; Adam with clipping."""
    E, NH, TOPK = 8, 4, 2

    def moe(q, x):
        b, t, d = x.shape
        sub = (x @ q["split"]).reshape(b * t * NH, d // NH)
        logits = sub @ q["router"]
        probs = jax.nn.softmax(logits, -1)
        vals, idx = lax.top_k(probs, TOPK)
        vals = vals / jnp.sum(vals, -1, keepdims=True)
        comb = jnp.sum(jax.nn.one_hot(idx, E) * vals[..., None], 1)
        h = jax.nn.gelu(jnp.einsum("nd,edf->nef", sub, q["w1"]) + q["eb1"])
        out = jnp.einsum("nef,efd->ned", h, q["w2"])
        y = jnp.einsum("ne,ned->nd", comb, out).reshape(b, t, d)
        frac = jnp.mean(jax.nn.one_hot(idx[:, 0], E), 0)
        aux = E * jnp.sum(frac * jnp.mean(probs, 0))
        zl = jnp.mean(jnp.square(jax.nn.logsumexp(logits, -1)))
        return y @ q["merge"], aux, zl

    def loss(p, tok, tgt):
        x = p["emb"][tok] + p["pos"]
        aux, zl = 0.0, 0.0
        for q in p["layers"]:
            x = x + _mha(_ln(x, q["g1"], q["b1"]), _ln(x, q["g1"], q["b1"]), q, "", 4, True)
            y, a, z = moe(q, _ln(x, q["g2"], q["b2"]))
            x, aux, zl = x + y, aux + a, zl + z
        xe = _xent(_ln(x, p["gf"], p["bf"]) @ p["out"], tgt)
        return xe + 0.01 * aux + 1e-3 * zl, (xe, aux)

    def step(p, m, v, t, tok, tgt):
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, tok, tgt)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=7e-4)
        return l, aux, p, m, v
    V, D, T, F = 128, 64, 32, 64
    q = _attn_params({"g1": S(D), "b1": S(D), "g2": S(D), "b2": S(D), "split": S(D, D),
                      "router": S(D // NH, E), "w1": S(E, D // NH, F), "eb1": S(E, F),
                      "w2": S(E, F, D // NH), "merge": S(D, D)}, "", D)
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [q, dict(q)], "gf": S(D), "bf": S(D),
         "out": S(D, V)}
    return step, (p, p, p, S(), S(16, T, dtype=I32), S(16, T, dtype=I32))


# ----------------------------------------------------------------------------- vae


def vrnn_variational_rnn_learned_prior_scan():
    """Variational RNN (VRNN) on binary sequences: at every step of a lax.scan a feature MLP
    reads x_t, a learned Gaussian prior reads h_{t-1}, the approximate posterior reads both,
    z_t is reparameterised with passed-in noise, the Bernoulli decoder reads phi(z_t) and
    h_{t-1}, and a GRU consumes [phi(x_t), phi(z_t)]; the loss is the per-step BCE plus the
    analytic KL between the posterior and the step prior, with the KL weight annealed over
    5000 steps; Adam with clipping."""
    X, H, Z, P = 32, 64, 16, 32

    def mlp(q, x):
        return jax.nn.relu(x @ q["w"] + q["b"])

    def gauss(q, x):
        mu, lv = jnp.split(x @ q["w"] + q["b"], 2, -1)
        return mu, jnp.clip(lv, -8.0, 8.0)

    def loss(p, xs, eps, t):
        B = xs.shape[0]

        def body(h, inp):
            x, e = inp
            px = mlp(p["phx"], x)
            mp, lp = gauss(p["prior"], mlp(p["pri_h"], h))
            mq, lq = gauss(p["enc"], mlp(p["enc_h"], jnp.concatenate([px, h], -1)))
            z = mq + jnp.exp(0.5 * lq) * e
            pz = mlp(p["phz"], z)
            dl = mlp(p["dec_h"], jnp.concatenate([pz, h], -1)) @ p["dec"] + p["decb"]
            rec = jnp.sum(_bce(dl, x), -1)
            kl = 0.5 * jnp.sum(lp - lq + (jnp.exp(lq) + jnp.square(mq - mp)) * jnp.exp(-lp) - 1.0,
                               -1)
            h = _gru(p["gru"], h, jnp.concatenate([px, pz], -1))
            return h, (rec, kl)
        _, (rec, kl) = lax.scan(body, jnp.zeros((B, H)), (_sw(xs), _sw(eps)))
        beta = jnp.minimum(1.0, t / 5000.0)
        rec, kl = jnp.mean(jnp.sum(rec, 0)), jnp.mean(jnp.sum(kl, 0))
        return rec + beta * kl, (rec, kl)

    def step(p, m, v, t, xs, eps):
        (l, aux), g = jax.value_and_grad(loss, has_aux=True)(p, xs, eps, t)
        p, m, v = _adam(p, m, v, _global_clip(g, 5.0), t, lr=1e-3)
        return l, aux, p, m, v
    lin = lambda i, o: {"w": S(i, o), "b": S(o)}
    p = {"phx": lin(X, P), "phz": lin(Z, P), "pri_h": lin(H, P), "prior": lin(P, 2 * Z),
         "enc_h": lin(P + H, P), "enc": lin(P, 2 * Z), "dec_h": lin(P + H, P), "dec": S(P, X),
         "decb": S(X), "gru": _gru_params(2 * P, H)}
    return step, (p, p, p, S(), S(32, 24, X), S(32, 24, Z))


# ----------------------------------------------------------------------------- unet


def ncsn_unet_cond_instancenorm_dsm():
    """NCSNv2-style score network trained by denoising score matching over ten geometric noise
    levels (numpy constant table, per-example level index): a small U-Net of ELU residual
    blocks with conditional instance norm++ (per-level gamma, beta and alpha, the alpha term
    re-injecting the normalised per-channel means), average-pool downsampling and
    nearest-neighbour upsampling + conv with skip concatenation; the output is divided by
    sigma and the loss is 0.5 || sigma s(x + sigma n) + n ||^2; Adam with clipping and an
    EMA of the parameters."""
    L = 10
    SIGMAS = np.geomspace(1.0, 0.01, L).astype(np.float32)

    def cin(q, x, idx):
        mu = jnp.mean(x, (1, 2), keepdims=True)
        var = jnp.var(x, (1, 2), keepdims=True)
        m = jnp.mean(mu, -1, keepdims=True)
        s = jnp.sqrt(jnp.var(mu, -1, keepdims=True) + 1e-5)
        ex = lambda a: a[idx][:, None, None, :]
        return ex(q["g"]) * (x - mu) * lax.rsqrt(var + 1e-5) + ex(q["b"]) + ex(q["a"]) * (mu - m) / s

    def res(q, x, idx):
        h = _conv(jax.nn.elu(cin(q["n1"], x, idx)), q["c1"])
        h = _conv(jax.nn.elu(cin(q["n2"], h, idx)), q["c2"])
        return h + (_conv(x, q["sc"]) if "sc" in q else x)

    def up(x, w):
        return _conv(jnp.repeat(jnp.repeat(x, 2, 1), 2, 2), w)

    def net(p, x, idx):
        h = _conv(x, p["inc"])
        h1 = res(p["d1"], h, idx)
        h2 = res(p["d2"], _avgpool(h1), idx)
        h3 = res(p["mid"], _avgpool(h2), idx)
        u2 = res(p["u2"], jnp.concatenate([up(h3, p["w2"]), h2], -1), idx)
        u1 = res(p["u1"], jnp.concatenate([up(u2, p["w1"]), h1], -1), idx)
        return _conv(jax.nn.elu(cin(p["nf"], u1, idx)), p["outc"])

    def loss(p, x, idx, noise):
        sig = jnp.asarray(SIGMAS)[idx][:, None, None, None]
        s = net(p, x + sig * noise, idx) / sig
        return 0.5 * jnp.mean(jnp.sum(jnp.square(s * sig + noise), (1, 2, 3)))

    def step(p, m, v, ema, t, x, idx, noise):
        l, g = jax.value_and_grad(loss)(p, x, idx, noise)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=1e-4)
        ema = tmap(lambda e, w: 0.999 * e + 0.001 * w, ema, p)
        return l, p, m, v, ema

    def nrm(c):
        return {"g": S(L, c), "b": S(L, c), "a": S(L, c)}

    def rb(cin_, c):
        q = {"n1": nrm(cin_), "c1": S(3, 3, cin_, c), "n2": nrm(c), "c2": S(3, 3, c, c)}
        if cin_ != c:
            q["sc"] = S(1, 1, cin_, c)
        return q
    p = {"inc": S(3, 3, 3, 32), "d1": rb(32, 32), "d2": rb(32, 64), "mid": rb(64, 64),
         "w2": S(3, 3, 64, 64), "u2": rb(128, 64), "w1": S(3, 3, 64, 32), "u1": rb(64, 32),
         "nf": nrm(32), "outc": S(3, 3, 32, 3)}
    return step, (p, p, p, p, S(), S(16, 16, 16, 3), S(16, dtype=I32), S(16, 16, 16, 3))


# ----------------------------------------------------------------------------- gnn


def dimenet_lite_triplet_angular_messages():
    """DimeNet-style directional message passing for molecular energies: radial Bessel basis
    sin(n pi d / c) / d with a polynomial envelope, angular basis from Legendre polynomials
    P0..P3 of the angle between edges k->j and j->i (passed triplet edge indices) times the
    radial basis of d_kj; edge messages are embedded from both atom embeddings and the
    radial basis, then two interaction blocks aggregate basis-gated k->j messages onto each
    j->i edge with jax.ops.segment_sum over triplets; output blocks sum edges into atoms and
    atoms into molecules (segment_sum again); MSE to the energies; Adam with exponential
    decay and clipping."""
    NR, NL, CUT, NG = 8, 4, 5.0, 4
    PE = 5
    EA, EB, EC = -(PE + 1) * (PE + 2) / 2.0, PE * (PE + 2.0), -PE * (PE + 1) / 2.0

    def rbf(d):
        x = d / CUT
        env = 1.0 + EA * x ** PE + EB * x ** (PE + 1) + EC * x ** (PE + 2)
        env = jnp.where(x < 1.0, env, 0.0)
        n = jnp.arange(1, NR + 1, dtype=F32)
        return math.sqrt(2.0 / CUT) * (env / d)[:, None] * jnp.sin(n * jnp.pi * x[:, None])

    def out_block(q, m, rb, dst, N):
        a = jax.ops.segment_sum((rb @ q["rbf"]) * m, dst, N)
        return (jax.nn.silu(a @ q["w1"] + q["b1"]) @ q["w2"])[:, 0]

    def loss(p, pos, species, src, dst, t_kj, t_ji, graph, energy):
        N, E = pos.shape[0], src.shape[0]
        vec = pos[dst] - pos[src]
        d = jnp.sqrt(jnp.sum(jnp.square(vec), -1) + 1e-9)
        rb = rbf(d)
        cos = jnp.sum(-vec[t_kj] * vec[t_ji], -1) / (d[t_kj] * d[t_ji])
        leg = jnp.stack([jnp.ones_like(cos), cos, 1.5 * cos ** 2 - 0.5,
                         2.5 * cos ** 3 - 1.5 * cos], -1)
        sbf = (rb[t_kj][:, :, None] * leg[:, None, :]).reshape(-1, NR * NL)
        h = p["emb"][species]
        m = jax.nn.silu(jnp.concatenate([h[src], h[dst], rb @ p["rbf_e"]], -1) @ p["w_e"]
                        + p["b_e"])
        e_atom = out_block(p["out"][0], m, rb, dst, N)
        for q, qo in zip(p["inter"], p["out"][1:]):
            x_kj = jax.nn.silu(m @ q["w_kj"] + q["b_kj"]) * (rb @ q["rbf"])
            x_kj = (x_kj[t_kj] @ q["down"]) * (sbf @ q["sbf"])
            agg = jax.ops.segment_sum(x_kj @ q["up"], t_ji, E)
            hji = jax.nn.silu(m @ q["w_ji"] + q["b_ji"]) + agg
            m = m + jax.nn.silu(hji @ q["w_u"] + q["b_u"])
            e_atom = e_atom + out_block(qo, m, rb, dst, N)
        e_mol = jax.ops.segment_sum(e_atom, graph, NG)
        return jnp.mean(jnp.square(e_mol - energy))

    def step(p, m, v, t, pos, species, src, dst, t_kj, t_ji, graph, energy):
        l, g = jax.value_and_grad(loss)(p, pos, species, src, dst, t_kj, t_ji, graph, energy)
        lr = 1e-3 * 0.96 ** (t / 1000.0)
        p, m, v = _adam(p, m, v, _global_clip(g, 10.0), t, lr=lr)
        return l, p, m, v
    Hd, Hb = 64, 16
    inter = {"w_kj": S(Hd, Hd), "b_kj": S(Hd), "rbf": S(NR, Hd), "down": S(Hd, Hb),
             "sbf": S(NR * NL, Hb), "up": S(Hb, Hd), "w_ji": S(Hd, Hd), "b_ji": S(Hd),
             "w_u": S(Hd, Hd), "b_u": S(Hd)}
    outb = {"rbf": S(NR, Hd), "w1": S(Hd, Hd), "b1": S(Hd), "w2": S(Hd, 1)}
    p = {"emb": S(10, Hd), "rbf_e": S(NR, Hd), "w_e": S(3 * Hd, Hd), "b_e": S(Hd),
         "inter": [inter, dict(inter)], "out": [outb, dict(outb), dict(outb)]}
    N, E, TR = 64, 256, 512
    return step, (p, p, p, S(), S(N, 3), S(N, dtype=I32), S(E, dtype=I32), S(E, dtype=I32),
                  S(TR, dtype=I32), S(TR, dtype=I32), S(N, dtype=I32), S(NG))


# ----------------------------------------------------------------------------- quantization


def bitnet158_ternary_absmean_int8_act_lm():
    """BitNet b1.58 language model: every projection is a BitLinear -- RMSNorm, per-token
    absmax int8 activation fake-quantisation and absmean ternary weights {-1, 0, +1} * scale,
    both with straight-through estimators -- in two causal attention layers with a squared-ReLU
    FFN; embeddings and the output head stay in full precision; the two-stage schedule drops
    the learning rate and switches weight decay off halfway; the fraction of zero ternary
    weights is reported; Adam with clipping."""
    H = 4

    def ste(x, q):
        return x + lax.stop_gradient(q - x)

    def actq(x):
        s = 127.0 / jnp.maximum(jnp.max(jnp.abs(x), -1, keepdims=True), 1e-5)
        return ste(x, jnp.clip(jnp.round(x * s), -128.0, 127.0) / s)

    def wq(w):
        s = jnp.mean(jnp.abs(w)) + 1e-5
        return ste(w, jnp.clip(jnp.round(w / s), -1.0, 1.0) * s)

    def bitlinear(x, w, g):
        return actq(_rms(x, g)) @ wq(w)

    def layer(q, x):
        b, t, d = x.shape
        dh = d // H
        qq, kk, vv = (a.reshape(b, t, H, dh) for a in jnp.split(bitlinear(x, q["qkv"], q["n1"]), 3, -1))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(dh)
        s = jnp.where(np.tril(np.ones((t, t), bool)), s, -1e9)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv).reshape(b, t, d)
        x = x + bitlinear(o, q["o"], q["n2"])
        h = jnp.square(jax.nn.relu(bitlinear(x, q["up"], q["n3"])))
        return x + bitlinear(h, q["down"], q["n4"])

    def loss(p, tok, tgt):
        x = p["emb"][tok]
        for q in p["layers"]:
            x = layer(q, x)
        return _xent(_rms(x, p["nf"]) @ p["head"], tgt)

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        half = 5000.0
        lr = jnp.where(t < half, 1.5e-3 * (1.0 - 0.5 * t / half), 8e-4 * (1.0 - (t - half) / half))
        wd = jnp.where(t < half, 0.1, 0.0)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=jnp.maximum(lr, 1e-5), b2=0.95,
                        wd=wd)
        ws = [q[k] for q in p["layers"] for k in ("qkv", "o", "up", "down")]
        zero = jnp.mean(jnp.stack([jnp.mean((jnp.abs(w) < 0.5 * (jnp.mean(jnp.abs(w)) + 1e-5))
                                            .astype(F32)) for w in ws]))
        return l, zero, p, m, v
    V, D, T = 256, 64, 32
    q = {"n1": S(D), "qkv": S(D, 3 * D), "n2": S(D), "o": S(D, D), "n3": S(D),
         "up": S(D, 4 * D), "n4": S(4 * D), "down": S(4 * D, D)}
    p = {"emb": S(V, D), "layers": [q, dict(q)], "nf": S(D), "head": S(D, V)}
    return step, (p, p, p, S(), S(16, T, dtype=I32), S(16, T, dtype=I32))


# ----------------------------------------------------------------------------- remat


def remat_primer_scan_save_from_both_dconv():
    """Primer language model with scanned, rematerialised layers: q, k and v projections are
    each followed by a causal depthwise convolution over time (width 3, static shifted
    slices) tagged "dconv_out", the FFN uses squared ReLU; the scanned layer is wrapped in
    jax.checkpoint with save_from_both_policies(dots_with_no_batch_dims_saveable,
    save_only_these_names("dconv_out")), and the attention core inside it is checkpointed
    again with nothing_saveable (nested); untied head; Adam with inverse-sqrt schedule and
    clipping."""
    H, KC = 4, 3

    def dconv(x, w):
        t = x.shape[1]
        xp = jnp.pad(x, ((0, 0), (KC - 1, 0), (0, 0)))
        return sum(xp[:, i:i + t] * w[i] for i in range(KC))

    def core(qq, kk, vv):
        t, dh = qq.shape[1], qq.shape[-1]
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / math.sqrt(dh)
        s = jnp.where(np.tril(np.ones((t, t), bool)), s, -1e9)
        return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vv)
    core_r = jax.checkpoint(core, policy=CP.nothing_saveable)

    def block(x, q):
        b, t, d = x.shape
        h = _ln(x, q["g1"], q["b1"])
        qq, kk, vv = (checkpoint_name(dconv(h @ q[n], q["d" + n]), "dconv_out").reshape(
            b, t, H, d // H) for n in ("q", "k", "v"))
        x = x + core_r(qq, kk, vv).reshape(b, t, d) @ q["o"]
        f = jnp.square(jax.nn.relu(_ln(x, q["g2"], q["b2"]) @ q["f1"] + q["fb1"]))
        return x + f @ q["f2"], None
    body = jax.checkpoint(block, policy=CP.save_from_both_policies(
        CP.dots_with_no_batch_dims_saveable, CP.save_only_these_names("dconv_out")))

    def loss(p, tok, tgt):
        x = p["emb"][tok]
        x, _ = lax.scan(body, x, p["layers"])
        return _xent(_ln(x, p["gf"], p["bf"]) @ p["out"], tgt)

    def step(p, m, v, t, tok, tgt):
        l, g = jax.value_and_grad(loss)(p, tok, tgt)
        lr = 2e-3 * jnp.minimum(1.0, jnp.sqrt(500.0 / (t + 1.0)))
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.98)
        return l, p, m, v
    L, V, D, T = 4, 256, 64, 32
    layers = {"g1": S(L, D), "b1": S(L, D), "q": S(L, D, D), "k": S(L, D, D), "v": S(L, D, D),
              "dq": S(L, KC, D), "dk": S(L, KC, D), "dv": S(L, KC, D), "o": S(L, D, D),
              "g2": S(L, D), "b2": S(L, D), "f1": S(L, D, 4 * D), "fb1": S(L, 4 * D),
              "f2": S(L, 4 * D, D)}
    p = {"emb": S(V, D), "layers": layers, "gf": S(D), "bf": S(D), "out": S(D, V)}
    return step, (p, p, p, S(), S(16, T, dtype=I32), S(16, T, dtype=I32))


def remat_nested_poolformer_stages_dots_saveable():
    """PoolFormer (MetaFormer with 3x3 average-pool token mixing, pool(x) - x, GroupNorm(1),
    layer scale) on 32x32 images, two stages after a 4x4 patchify conv; every block is
    jax.checkpoint-ed with dots_saveable (the channel-MLP matmuls are kept, pooling and norms
    recomputed) and every stage is checkpointed again around its blocks with
    save_anything_except_these_names("mix_out") (nested remat); label-smoothed
    cross-entropy; AdamW with cosine decay and layer-wise learning-rate decay by stage."""
    def pool3(x):
        s = lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
        cnt = lax.reduce_window(jnp.ones((1,) + x.shape[1:3] + (1,), x.dtype), 0.0, lax.add,
                                (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
        return s / cnt

    def gn1(x, g, b):
        m = jnp.mean(x, (1, 2, 3), keepdims=True)
        v = jnp.mean(jnp.square(x - m), (1, 2, 3), keepdims=True)
        return (x - m) * lax.rsqrt(v + 1e-5) * g + b

    def block(x, q):
        h = gn1(x, q["g1"], q["b1"])
        x = x + q["ls1"] * checkpoint_name(pool3(h) - h, "mix_out")
        h = jax.nn.gelu(gn1(x, q["g2"], q["b2"]) @ q["w1"] + q["bb1"])
        return x + q["ls2"] * (h @ q["w2"] + q["bb2"])
    block_r = jax.checkpoint(block, policy=CP.dots_saveable)

    def stage(x, qs):
        for q in qs:
            x = block_r(x, q)
        return x
    stage_r = jax.checkpoint(stage, policy=CP.save_anything_except_these_names("mix_out"))

    def loss(p, img, labels):
        x = _conv(img, p["stem"]["w"], 4, "VALID") + p["stem"]["b"]
        x = stage_r(x, p["stage0"]["blocks"])
        x = _conv(x, p["stage1"]["down"], 2, "VALID") + p["stage1"]["db"]
        x = stage_r(x, p["stage1"]["blocks"])
        hd = p["head"]
        logits = _ln(jnp.mean(x, (1, 2)), hd["g"], hd["b"]) @ hd["w"] + hd["fb"]
        C = logits.shape[-1]
        tgt = jax.nn.one_hot(labels, C) * 0.9 + 0.1 / C
        return -jnp.mean(jnp.sum(tgt * jax.nn.log_softmax(logits, -1), -1))

    def step(p, m, v, t, img, labels):
        l, g = jax.value_and_grad(loss)(p, img, labels)
        lr = 1e-3 * 0.5 * (1.0 + jnp.cos(jnp.pi * jnp.minimum(t / 8000.0, 1.0)))
        scale = {"stem": 0.75 ** 2, "stage0": 0.75, "stage1": 1.0, "head": 1.0}
        p, m, v = dict(p), dict(m), dict(v)
        for k, s in scale.items():
            p[k], m[k], v[k] = _adam(p[k], m[k], v[k], g[k], t, lr=lr * s, wd=0.05)
        return l, p, m, v

    def blk(c):
        return {"g1": S(c), "b1": S(c), "ls1": S(c), "g2": S(c), "b2": S(c),
                "w1": S(c, 4 * c), "bb1": S(4 * c), "w2": S(4 * c, c), "bb2": S(c), "ls2": S(c)}
    p = {"stem": {"w": S(4, 4, 3, 32), "b": S(32)},
         "stage0": {"blocks": [blk(32), blk(32)]},
         "stage1": {"down": S(2, 2, 32, 64), "db": S(64), "blocks": [blk(64), blk(64)]},
         "head": {"g": S(64), "b": S(64), "w": S(64, 10), "fb": S(10)}}
    return step, (p, p, p, S(), S(32, 32, 32, 3), S(32, dtype=I32))


# ----------------------------------------------------------------------------- custom_vjp


def _rev_f(q, x):
    return jax.nn.gelu(_ln(x, q["g"], q["b"]) @ q["w1"] + q["b1"]) @ q["w2"]


def _rev_stack_impl(ps, x1, x2):
    def body(c, q):
        a, b = c
        a = a + _rev_f(q["f"], b)
        b = b + _rev_f(q["g"], a)
        return (a, b), None
    (y1, y2), _ = lax.scan(body, (x1, x2), ps)
    return y1, y2


@jax.custom_vjp
def _rev_stack(ps, x1, x2):
    return _rev_stack_impl(ps, x1, x2)


def _rev_stack_fwd(ps, x1, x2):
    y1, y2 = _rev_stack_impl(ps, x1, x2)
    return (y1, y2), (ps, y1, y2)


def _rev_stack_bwd(res, gy):
    ps, y1, y2 = res

    def body(c, q):
        y1, y2, g1, g2 = c
        gout, vjp_g = jax.vjp(_rev_f, q["g"], y1)
        x2 = y2 - gout
        dqg, dy1 = vjp_g(g2)
        g1 = g1 + dy1
        fout, vjp_f = jax.vjp(_rev_f, q["f"], x2)
        x1 = y1 - fout
        dqf, dx2 = vjp_f(g1)
        return (x1, x2, g1, g2 + dx2), {"f": dqf, "g": dqg}
    (_, _, g1, g2), dps = lax.scan(body, (y1, y2, gy[0], gy[1]), ps, reverse=True)
    return dps, g1, g2


_rev_stack.defvjp(_rev_stack_fwd, _rev_stack_bwd)


def revnet_reversible_coupling_custom_vjp():
    """Reversible residual network (RevNet) classifier: the embedded input is split into two
    halves and passed through six additive coupling blocks y1 = x1 + F(x2), y2 = x2 + G(y1)
    (pre-LN GELU MLPs, parameters stacked and run by lax.scan) inside a jax.custom_vjp whose
    forward keeps only the final outputs and whose backward scans the blocks in reverse,
    reconstructing each block's inputs from its outputs and taking jax.vjp of G and F;
    LayerNorm head; Nesterov momentum SGD with linear warmup and weight decay."""
    def loss(p, x, labels):
        h = x @ p["emb"] + p["eb"]
        x1, x2 = jnp.split(h, 2, -1)
        y1, y2 = _rev_stack(p["rev"], x1, x2)
        y = _ln(jnp.concatenate([y1, y2], -1), p["g"], p["b"])
        return _xent(y @ p["head"] + p["hb"], labels)

    def step(p, mom, t, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        lr = 0.05 * jnp.minimum(1.0, (t + 1.0) / 500.0)
        p, mom = _momentum(p, mom, g, lr, 0.9, 5e-4, nesterov=True)
        return l, p, mom
    L, Dh, F = 6, 64, 128
    f = {"g": S(L, Dh), "b": S(L, Dh), "w1": S(L, Dh, F), "b1": S(L, F), "w2": S(L, F, Dh)}
    p = {"emb": S(96, 2 * Dh), "eb": S(2 * Dh), "rev": {"f": f, "g": dict(f)},
         "g": S(2 * Dh), "b": S(2 * Dh), "head": S(2 * Dh, 10), "hb": S(10)}
    return step, (p, p, S(), S(128, 96), S(128, dtype=I32))


# ----------------------------------------------------------------------------- control


def ppo_epochs_fori_minibatch_cond_kl_stop():
    """PPO update phase: four epochs of four minibatches run in one lax.fori_loop; each
    iteration picks its minibatch rows from a passed-in per-epoch permutation with
    dynamic_index_in_dim / dynamic_slice_in_dim, computes the clipped surrogate, the clipped
    value loss and an entropy bonus for a shared-torso actor-critic, and applies the Adam
    update through lax.cond only while the approximate KL has stayed below 1.5x the target
    (early stopping flag carried through the loop); per-iteration KLs are written with
    .at[i].set."""
    EP, MB, NB, CLIP, TKL = 4, 4, 64, 0.2, 0.02

    def net(p, o):
        h = jnp.tanh(o @ p["w1"] + p["b1"])
        h = jnp.tanh(h @ p["w2"] + p["b2"])
        return h @ p["pi"] + p["pib"], (h @ p["vf"])[:, 0] + p["vb"]

    def ppo_loss(p, o, a, oldlp, adv, ret, oldv):
        logits, v = net(p, o)
        logp_all = jax.nn.log_softmax(logits, -1)
        lp = jnp.take_along_axis(logp_all, a[:, None], -1)[:, 0]
        ratio = jnp.exp(lp - oldlp)
        adv = (adv - jnp.mean(adv)) / (jnp.std(adv) + 1e-8)
        pg = -jnp.mean(jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - CLIP, 1 + CLIP) * adv))
        vc = oldv + jnp.clip(v - oldv, -CLIP, CLIP)
        vl = 0.5 * jnp.mean(jnp.maximum(jnp.square(v - ret), jnp.square(vc - ret)))
        ent = -jnp.mean(jnp.sum(jnp.exp(logp_all) * logp_all, -1))
        kl = jnp.mean((ratio - 1.0) - (lp - oldlp))
        return pg + 0.5 * vl - 0.01 * ent, kl

    def step(p, m, v, t, obs, act, oldlp, adv, ret, oldv, perms):
        def it(i, c):
            p, m, v, t, stop, kls = c
            row = lax.dynamic_index_in_dim(perms, i // MB, keepdims=False)
            idx = lax.dynamic_slice_in_dim(row, (i % MB) * NB, NB)
            (l, kl), g = jax.value_and_grad(ppo_loss, has_aux=True)(
                p, obs[idx], act[idx], oldlp[idx], adv[idx], ret[idx], oldv[idx])
            stop = stop | (kl > 1.5 * TKL)

            def upd(a):
                p, m, v, t = a
                t = t + 1.0
                p, m, v = _adam(p, m, v, _global_clip(g, 0.5), t, lr=3e-4, eps=1e-5)
                return p, m, v, t
            p, m, v, t = lax.cond(stop, lambda a: a, upd, (p, m, v, t))
            return p, m, v, t, stop, kls.at[i].set(kl)
        init = (p, m, v, t, jnp.zeros((), bool), jnp.zeros((EP * MB,), F32))
        return lax.fori_loop(0, EP * MB, it, init)
    O, H, A = 32, 64, 16
    p = {"w1": S(O, H), "b1": S(H), "w2": S(H, H), "b2": S(H), "pi": S(H, A), "pib": S(A),
         "vf": S(H, 1), "vb": S()}
    N = MB * NB
    return step, (p, p, p, S(), S(N, O), S(N, dtype=I32), S(N), S(N), S(N), S(N),
                  S(EP, N, dtype=I32))


def differentiable_physics_fori_switch_regime():
    """Differentiable-physics controller training: a tanh MLP policy pushes 64 point masses
    towards goal positions over 40 semi-implicit Euler steps in a lax.fori_loop (reverse-mode
    differentiated through the loop); the dynamics regime (gravity, quadratic drag, or a
    damped spring to an anchor) is a scalar argument dispatched with lax.switch every step,
    the ground reflects positions and damps velocities with jnp.where, and every tenth step
    a passed-in velocity kick is applied through lax.cond; loss is final distance + speed +
    control effort; Adam with clipping."""
    STEPS, DT = 40, 0.05

    def policy(p, s, goal):
        h = jnp.tanh(jnp.concatenate([s, goal], -1) @ p["w1"] + p["b1"])
        h = jnp.tanh(h @ p["w2"] + p["b2"])
        return 2.0 * jnp.tanh(h @ p["w3"])

    def loss(p, s0, goal, regime, kicks):
        fns = [lambda a: a[2] + jnp.array([0.0, -9.8], F32),
               lambda a: a[2] - 0.5 * a[1] * jnp.linalg.norm(a[1], axis=-1, keepdims=True),
               lambda a: a[2] - 4.0 * (a[0] - jnp.array([0.0, 1.0], F32)) - 0.2 * a[1]]

        def body(i, c):
            pos, vel, effort = c
            f = policy(p, jnp.concatenate([pos, vel], -1), goal)
            acc = lax.switch(regime, fns, (pos, vel, f))
            vel = vel + DT * acc
            pos = pos + DT * vel
            below = pos[:, 1:2] < 0.0
            pos = jnp.where(below, pos * jnp.array([1.0, -1.0], F32), pos)
            vel = jnp.where(below, vel * jnp.array([0.9, -0.8], F32), vel)
            vel = lax.cond(i % 10 == 5,
                           lambda vv: vv + lax.dynamic_index_in_dim(kicks, i // 10, keepdims=False),
                           lambda vv: vv, vel)
            return pos, vel, effort + jnp.sum(f * f, -1)
        B = s0.shape[0]
        pos, vel, effort = lax.fori_loop(0, STEPS, body, (s0[:, :2], s0[:, 2:], jnp.zeros((B,))))
        dist = jnp.sum(jnp.square(pos - goal), -1)
        return jnp.mean(dist + 0.1 * jnp.sum(jnp.square(vel), -1) + 1e-3 * effort / STEPS), \
            jnp.mean(jnp.sqrt(dist))

    def step(p, m, v, t, s0, goal, regime, kicks):
        (l, d), g = jax.value_and_grad(loss, has_aux=True)(p, s0, goal, regime, kicks)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=1e-3)
        return l, d, p, m, v
    H = 64
    p = {"w1": S(6, H), "b1": S(H), "w2": S(H, H), "b2": S(H), "w3": S(H, 2)}
    return step, (p, p, p, S(), S(64, 4), S(64, 2), S(dtype=I32), S(4, 64, 2))


# ----------------------------------------------------------------------------- sort / top_k


def reformer_lsh_sorted_chunk_attention():
    """Reformer language model with LSH attention: shared query/key vectors are hashed by
    passed-in random rotations (argmax over [xR, -xR], eight buckets per head), tokens are
    sorted by (bucket, position) with jnp.argsort, split into chunks of eight that attend to
    themselves and the previous chunk (jnp.roll) with unit-normalised keys, masked to the
    same bucket and causally by original position, attention to oneself only as a fallback;
    results are unsorted with the inverse permutation (argsort of the order); two layers,
    Adam with clipping."""
    NB, CH, H = 8, 8, 2

    def lsh_attn(q, x, rot):
        b, t, d = x.shape
        dh = d // H
        qk = (x @ q["qk"]).reshape(b, t, H, dh).transpose(0, 2, 1, 3)
        v = (x @ q["v"]).reshape(b, t, H, dh).transpose(0, 2, 1, 3)
        r = jnp.einsum("bhtd,hdr->bhtr", qk, rot)
        bucket = jnp.argmax(jnp.concatenate([r, -r], -1), -1)
        pos = jnp.broadcast_to(jnp.arange(t), bucket.shape)
        order = jnp.argsort(bucket * t + pos, -1)
        undo = jnp.argsort(order, -1)
        nc = t // CH
        gat = lambda a: jnp.take_along_axis(a, order[..., None], 2)
        cq = gat(qk).reshape(b, H, nc, CH, dh)
        cv = gat(v).reshape(b, H, nc, CH, dh)
        cp = jnp.take_along_axis(pos, order, -1).reshape(b, H, nc, CH)
        cb = jnp.take_along_axis(bucket, order, -1).reshape(b, H, nc, CH)
        ck = cq / (jnp.linalg.norm(cq, axis=-1, keepdims=True) + 1e-6)
        look = lambda a: jnp.concatenate([a, jnp.roll(a, 1, 2)], 3)
        K, Vv, KP, KB = look(ck), look(cv), look(cp), look(cb)
        s = jnp.einsum("bhncd,bhnkd->bhnck", cq, K) / math.sqrt(dh)
        ok = (KP[..., None, :] <= cp[..., :, None]) & (KB[..., None, :] == cb[..., :, None])
        s = jnp.where(ok, s, -1e9)
        s = jnp.where(KP[..., None, :] == cp[..., :, None], -1e5, s)
        o = jnp.einsum("bhnck,bhnkd->bhncd", jax.nn.softmax(s, -1), Vv).reshape(b, H, t, dh)
        o = jnp.take_along_axis(o, undo[..., None], 2)
        return o.transpose(0, 2, 1, 3).reshape(b, t, d) @ q["o"]

    def loss(p, tok, tgt, rots):
        x = p["emb"][tok] + p["pos"]
        for i, q in enumerate(p["layers"]):
            x = x + lsh_attn(q, _ln(x, q["g1"], q["b1"]), rots[i])
            x = x + jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"] + q["fb1"]) @ q["f2"]
        return _xent(_ln(x, p["gf"], p["bf"]) @ p["out"], tgt)

    def step(p, m, v, t, tok, tgt, rots):
        l, g = jax.value_and_grad(loss)(p, tok, tgt, rots)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=5e-4)
        return l, p, m, v
    V, D, T, L = 128, 64, 64, 2
    q = {"g1": S(D), "b1": S(D), "qk": S(D, D), "v": S(D, D), "o": S(D, D), "g2": S(D),
         "b2": S(D), "f1": S(D, 4 * D), "fb1": S(4 * D), "f2": S(4 * D, D)}
    p = {"emb": S(V, D), "pos": S(T, D), "layers": [q, dict(q)], "gf": S(D), "bf": S(D),
         "out": S(D, V)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T, dtype=I32),
                  S(L, H, D // H, NB // 2))


def topk_sparse_autoencoder_auxk_dead_latents():
    """TopK sparse autoencoder on model activations: inputs are centred by the decoder bias,
    the encoder pre-activations keep only their top 16 per example (lax.top_k, ReLU, scattered
    back to a dense code with a vmapped .at[].set), decoder rows are unit-norm; the loss is
    the normalised MSE plus an AuxK term in which the top 32 pre-activations among latents
    dead for more than 256 tokens (passed-in counters) reconstruct the residual error; the
    decoder gradient's component parallel to its rows is removed before Adam and rows are
    renormalised after; dead counters are reset for latents that fired."""
    D, NL, K, KAUX, DEAD = 64, 512, 16, 32, 256.0

    def topk_dense(pre, k):
        vals, idx = lax.top_k(pre, k)
        return jax.vmap(lambda a, i: jnp.zeros((pre.shape[-1],), pre.dtype).at[i].set(a))(
            jax.nn.relu(vals), idx)

    def loss(p, x, dead):
        pre = (x - p["bdec"]) @ p["enc"] + p["benc"]
        z = topk_dense(pre, K)
        rec = z @ p["dec"] + p["bdec"]
        var = jnp.mean(jnp.sum(jnp.square(x - jnp.mean(x, 0)), -1))
        mse = jnp.mean(jnp.sum(jnp.square(rec - x), -1)) / var
        e = lax.stop_gradient(x - rec)
        za = topk_dense(jnp.where(dead[None] > 0, pre, -1e9), KAUX)
        aux = jnp.mean(jnp.sum(jnp.square(za @ p["dec"] - e), -1)) / var
        return mse + aux / 32.0, (mse, z)

    def step(p, m, v, t, since, x):
        dead = (since > DEAD).astype(F32)
        (l, (mse, z)), g = jax.value_and_grad(loss, has_aux=True)(p, x, dead)
        W = p["dec"]
        g = dict(g, dec=g["dec"] - jnp.sum(g["dec"] * W, -1, keepdims=True) * W)
        p, m, v = _adam(p, m, v, g, t, lr=2e-4, eps=6.25e-10)
        p = dict(p, dec=p["dec"] / jnp.linalg.norm(p["dec"], axis=-1, keepdims=True))
        fired = jnp.any(z > 0, 0)
        since = jnp.where(fired, 0.0, since + x.shape[0])
        l0 = jnp.mean(jnp.sum((z > 0).astype(F32), -1))
        return l, mse, l0, p, m, v, since
    p = {"enc": S(D, NL), "benc": S(NL), "dec": S(NL, D), "bdec": S(D)}
    return step, (p, p, p, S(), S(NL), S(256, D))


# ----------------------------------------------------------------------------- fft


def hrr_holographic_binding_fft_memory():
    """Holographic reduced representation key-value memory: key and value symbols are embedded
    and projected onto unit-magnitude spectra (FFT, divide by |F|, inverse FFT), eight
    key/value pairs per example are bound by circular convolution (product of jnp.fft.fft
    spectra) and superposed into one trace; four queried keys are unbound by circular
    correlation (product with the conjugate spectrum), cleaned up by a pre-LN GELU MLP and
    classified by scaled cosine similarity against the projected value codebook;
    cross-entropy and accuracy; Adam."""
    D = 128

    def ffr(x):
        return jnp.fft.fft(x.astype(jnp.complex64), axis=-1)

    def proj(x):
        F = ffr(x)
        return jnp.real(jnp.fft.ifft(F / (jnp.abs(F) + 1e-6), axis=-1))

    def loss(p, keys, vals, qidx):
        kvec = proj(jnp.tanh(p["kemb"][keys] @ p["kw"]))
        code = proj(p["vemb"] @ p["vw"])
        vvec = code[vals]
        M = jnp.real(jnp.fft.ifft(jnp.sum(ffr(kvec) * ffr(vvec), 1), axis=-1))
        qk = jnp.take_along_axis(kvec, qidx[..., None], 1)
        ret = jnp.real(jnp.fft.ifft(ffr(M)[:, None] * jnp.conj(ffr(qk)), axis=-1))
        h = ret + jax.nn.gelu(_ln(ret, p["g"], p["b"]) @ p["c1"] + p["cb1"]) @ p["c2"]
        nrm = lambda a: a / (jnp.linalg.norm(a, axis=-1, keepdims=True) + 1e-6)
        logits = jnp.einsum("bqd,vd->bqv", nrm(h), nrm(code)) * jnp.exp(p["logs"])
        tgt = jnp.take_along_axis(vals, qidx, 1)
        acc = jnp.mean((jnp.argmax(logits, -1) == tgt).astype(F32))
        return _xent(logits, tgt), acc

    def step(p, m, v, t, keys, vals, qidx):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, keys, vals, qidx)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, acc, p, m, v
    E = 64
    p = {"kemb": S(256, E), "kw": S(E, D), "vemb": S(64, E), "vw": S(E, D), "g": S(D),
         "b": S(D), "c1": S(D, 2 * D), "cb1": S(2 * D), "c2": S(2 * D, D), "logs": S()}
    return step, (p, p, p, S(), S(32, 8, dtype=I32), S(32, 8, dtype=I32), S(32, 4, dtype=I32))


# ----------------------------------------------------------------------------- linalg


def dpp_subset_logdet_likelihood():
    """Determinantal point process basket model: item features pass through an MLP giving a
    quality q_i and a unit-norm 16-d diversity embedding phi_i, forming the low-rank
    L-ensemble kernel L = diag(q) Phi Phi^T diag(q) + eps I over 64 items; each observed
    basket (padded to 8 items with a mask) scores log det(L_Y) - log det(L + I), with the
    basket submatrix gathered by double indexing, padding replaced by identity rows and
    columns, and both log-determinants from Cholesky factors; log-quality regulariser;
    Adam with clipping."""
    N, KMAX = 64, 8

    def logdet(A):
        return 2.0 * jnp.sum(jnp.log(jnp.diagonal(jnp.linalg.cholesky(A), axis1=-2, axis2=-1)),
                             -1)

    def loss(p, feats, baskets, bmask):
        h = jax.nn.relu(feats @ p["w1"] + p["b1"])
        h = jax.nn.relu(h @ p["w2"] + p["b2"])
        lq = 1.5 * jnp.tanh((h @ p["wq"])[:, 0] + p["bq"])
        phi = h @ p["wd"]
        phi = phi / (jnp.linalg.norm(phi, axis=-1, keepdims=True) + 1e-6)
        B = jnp.exp(lq)[:, None] * phi
        L = B @ B.T + 1e-3 * jnp.eye(N)
        norm = logdet(L + jnp.eye(N))
        LY = L[baskets[:, :, None], baskets[:, None, :]]
        mm = bmask[:, :, None] * bmask[:, None, :]
        LY = LY * mm + jnp.eye(KMAX) * (1.0 - mm)
        ll = logdet(LY) - norm
        return -jnp.mean(ll) + 1e-2 * jnp.sum(jnp.square(lq)), jnp.mean(ll)

    def step(p, m, v, t, feats, baskets, bmask):
        (l, ll), g = jax.value_and_grad(loss, has_aux=True)(p, feats, baskets, bmask)
        p, m, v = _adam(p, m, v, _global_clip(g, 5.0), t, lr=1e-3)
        return l, ll, p, m, v
    F, H, R = 32, 64, 16
    p = {"w1": S(F, H), "b1": S(H), "w2": S(H, H), "b2": S(H), "wq": S(H, 1), "bq": S(),
         "wd": S(H, R)}
    return step, (p, p, p, S(), S(N, F), S(32, KMAX, dtype=I32), S(32, KMAX))


# ----------------------------------------------------------------------------- scatter/gather


def rotate_kg_self_adversarial_lazy_adam():
    """RotatE knowledge-graph embedding: entities are complex vectors (real and imaginary
    halves), relations are phases; the score gamma - sum |h o r - t| uses the complex
    rotation; sixteen corrupted tails per triple are gathered from the entity table and
    weighted by self-adversarial softmax weights (detached); N3 regularisation on the
    gathered rows; the table gradients come from the gathers' transposes (scatter-adds), and
    a lazy Adam updates values and moments only on rows touched by the batch (touched masks
    built with .at[].set scatters)."""
    NE, NR, DH, GAMMA, ALPHA = 2048, 64, 32, 6.0, 1.0

    def score(h, r, t):
        hr, hi = jnp.split(h, 2, -1)
        tr, ti = jnp.split(t, 2, -1)
        c, s = jnp.cos(r), jnp.sin(r)
        d = jnp.sqrt(jnp.square(hr * c - hi * s - tr) + jnp.square(hr * s + hi * c - ti) + 1e-9)
        return GAMMA - jnp.sum(d, -1)

    def loss(tabs, heads, rels, tails, negs):
        E = tabs["ent"]
        h, r, t = E[heads], tabs["rel"][rels] * math.pi, E[tails]
        pos = jax.nn.log_sigmoid(score(h, r, t))
        ns = score(h[:, None], r[:, None], E[negs])
        w = lax.stop_gradient(jax.nn.softmax(ALPHA * ns, -1))
        neg = jnp.sum(w * jax.nn.log_sigmoid(-ns), -1)
        n3 = 1e-4 * (jnp.sum(jnp.abs(h) ** 3) + jnp.sum(jnp.abs(t) ** 3)) / heads.shape[0]
        return -0.5 * jnp.mean(pos) - 0.5 * jnp.mean(neg) + n3

    def step(tabs, m, v, t, heads, rels, tails, negs):
        l, g = jax.value_and_grad(loss)(tabs, heads, rels, tails, negs)
        te = jnp.zeros((NE,), bool).at[heads].set(True).at[tails].set(True)
        te = te.at[negs.reshape(-1)].set(True)
        touched = {"ent": te[:, None], "rel": jnp.zeros((NR,), bool).at[rels].set(True)[:, None]}
        m2 = tmap(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v2 = tmap(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        c1, c2 = 1.0 - 0.9 ** t, 1.0 - 0.999 ** t
        new = tmap(lambda w, a, b: w - 1e-3 * (a / c1) / (jnp.sqrt(b / c2) + 1e-8), tabs, m2, v2)
        pick = lambda n, o: {k: jnp.where(touched[k], n[k], o[k]) for k in o}
        return l, pick(new, tabs), pick(m2, m), pick(v2, v)
    tabs = {"ent": S(NE, 2 * DH), "rel": S(NR, DH)}
    B = 128
    return step, (tabs, tabs, tabs, S(), S(B, dtype=I32), S(B, dtype=I32), S(B, dtype=I32),
                  S(B, 16, dtype=I32))


# ----------------------------------------------------------------------------- dynamic slices


def cpc_audio_dynamic_crop_infonce_future():
    """Contrastive predictive coding on raw audio: each waveform is cropped at a passed-in
    offset with a vmapped lax.dynamic_slice_in_dim, encoded by three strided 1-D convs (stride
    4 each, 2048 samples -> 32 frames) with a channel LayerNorm, a window of 24 frames is
    taken at a passed-in start with lax.dynamic_slice_in_dim, a GRU (lax.scan) summarises the
    past, and step-specific linear maps predict the frames 1..4 ahead, scored by InfoNCE
    against the other sequences' frames at the same time; Adam."""
    CROP, KF, TW = 2048, 4, 24

    def enc(p, x):
        h = x
        for i in range(3):
            h = lax.conv_general_dilated(h, p["c%d" % i], (4,), "SAME",
                                         dimension_numbers=("NWC", "WIO", "NWC"))
            h = jax.nn.relu(h + p["cb%d" % i])
        return _ln(h, p["g"], p["b"])

    def loss(p, wav, offs, t0):
        B = wav.shape[0]
        crops = jax.vmap(lambda w, o: lax.dynamic_slice_in_dim(w, o, CROP))(wav, offs)
        z = lax.dynamic_slice_in_dim(enc(p, crops[..., None]), t0, TW, 1)
        _, c = lax.scan(lambda h, x: (lambda hn: (hn, hn))(_gru(p["gru"], h, x)),
                        jnp.zeros((B, p["gru"]["ch"].shape[0])), _sw(z))
        c = _sw(c)
        total, acc = 0.0, 0.0
        for k in range(1, KF + 1):
            pred = c[:, :-k] @ p["W"][k - 1]
            logits = jnp.einsum("btc,ntc->tbn", pred, z[:, k:])
            lab = jnp.broadcast_to(jnp.arange(B), logits.shape[:2])
            total = total + _xent(logits, lab)
            acc = acc + jnp.mean((jnp.argmax(logits, -1) == lab).astype(F32))
        return total / KF, acc / KF

    def step(p, m, v, t, wav, offs, t0):
        (l, acc), g = jax.value_and_grad(loss, has_aux=True)(p, wav, offs, t0)
        p, m, v = _adam(p, m, v, g, t, lr=2e-4)
        return l, acc, p, m, v
    C, H = 64, 64
    p = {"c0": S(8, 1, 32), "cb0": S(32), "c1": S(8, 32, C), "cb1": S(C), "c2": S(8, C, C),
         "cb2": S(C), "g": S(C), "b": S(C), "gru": _gru_params(C, H), "W": S(KF, H, C)}
    return step, (p, p, p, S(), S(16, 4096), S(16, dtype=I32), S(dtype=I32))


# ----------------------------------------------------------------------------- mixed precision


_COS_T = 1000
_cos_t = np.arange(_COS_T + 1, dtype=np.float64) / _COS_T
_cos_ab = np.cos((_cos_t + 0.008) / 1.008 * np.pi / 2) ** 2
_ABAR = np.clip(_cos_ab[1:] / _cos_ab[0], 1e-5, 1.0).astype(np.float32)


def bf16_dit_adaln_zero_patch_diffusion():
    """Class-conditional DiT diffusion step in mixed precision: 16x16x4 latents noised with a
    cosine schedule (numpy constant table gathered by per-example timestep), patchified 2x2
    into 64 tokens, two DiT blocks in bfloat16 with adaLN-Zero modulation (shift, scale and
    gate for attention and MLP from the conditioning vector, LayerNorm statistics in f32,
    softmax in f32) and an adaLN final layer; conditioning is a sinusoidal timestep MLP plus
    a class embedding with classifier-free-guidance label dropout (null class); MSE on the
    predicted noise in f32; Adam on f32 master weights and an EMA."""
    P, C, H, NCLS = 2, 4, 4, 10
    FREQS = np.exp(-math.log(10000.0) * np.arange(64) / 64).astype(np.float32)
    bf = lambda w: w.astype(BF16)

    def ln0(x):
        x32 = x.astype(F32)
        m = jnp.mean(x32, -1, keepdims=True)
        v = jnp.mean(jnp.square(x32 - m), -1, keepdims=True)
        return ((x32 - m) * lax.rsqrt(v + 1e-6)).astype(BF16)

    def block(q, x, c):
        b, t, d = x.shape
        dh = d // H
        sh1, sc1, g1, sh2, sc2, g2 = jnp.split(jax.nn.silu(c) @ bf(q["ada"]) + bf(q["adab"]), 6, -1)
        h = ln0(x) * (1 + sc1[:, None]) + sh1[:, None]
        qq, kk, vv = (a.reshape(b, t, H, dh) for a in jnp.split(h @ bf(q["qkv"]), 3, -1))
        s = jnp.einsum("bqhd,bkhd->bhqk", qq, kk, preferred_element_type=F32) / math.sqrt(dh)
        a = jax.nn.softmax(s, -1).astype(BF16)
        o = jnp.einsum("bhqk,bkhd->bqhd", a, vv).reshape(b, t, d)
        x = x + g1[:, None] * (o @ bf(q["o"]))
        h = ln0(x) * (1 + sc2[:, None]) + sh2[:, None]
        return x + g2[:, None] * (jax.nn.gelu(h @ bf(q["f1"])) @ bf(q["f2"]))

    def loss(p, x0, labels, drop, tt, noise):
        n, S_, _, _ = x0.shape
        g = S_ // P
        ab = jnp.asarray(_ABAR)[tt][:, None, None, None]
        xt = jnp.sqrt(ab) * x0 + jnp.sqrt(1.0 - ab) * noise
        pt = xt.reshape(n, g, P, g, P, C).transpose(0, 1, 3, 2, 4, 5).reshape(n, g * g, P * P * C)
        x = bf(pt) @ bf(p["pe"]) + bf(p["pos"])
        a = tt.astype(F32)[:, None] * FREQS[None]
        temb = jnp.concatenate([jnp.cos(a), jnp.sin(a)], -1)
        lab = jnp.where(drop > 0, NCLS, labels)
        c = (jax.nn.silu(temb @ p["t1"] + p["tb1"]) @ p["t2"] + p["cls"][lab]).astype(BF16)
        for q in p["blocks"]:
            x = block(q, x, c)
        sh, sc = jnp.split(jax.nn.silu(c) @ bf(p["fada"]), 2, -1)
        out = ((ln0(x) * (1 + sc[:, None]) + sh[:, None]) @ bf(p["fo"])).astype(F32)
        eps = out.reshape(n, g, g, P, P, C).transpose(0, 1, 3, 2, 4, 5).reshape(n, S_, S_, C)
        return jnp.mean(jnp.square(eps - noise))

    def step(p, m, v, ema, t, x0, labels, drop, tt, noise):
        l, g = jax.value_and_grad(loss)(p, x0, labels, drop, tt, noise)
        g = tmap(lambda a: a.astype(F32), g)
        p, m, v = _adam(p, m, v, g, t, lr=1e-4)
        ema = tmap(lambda e, w: 0.9999 * e + 1e-4 * w, ema, p)
        return l, p, m, v, ema
    D = 128
    blk = {"ada": S(D, 6 * D), "adab": S(6 * D), "qkv": S(D, 3 * D), "o": S(D, D),
           "f1": S(D, 4 * D), "f2": S(4 * D, D)}
    p = {"pe": S(P * P * C, D), "pos": S(64, D), "t1": S(128, D), "tb1": S(D), "t2": S(D, D),
         "cls": S(NCLS + 1, D), "blocks": [blk, dict(blk)], "fada": S(D, 2 * D),
         "fo": S(D, P * P * C)}
    B = 16
    return step, (p, p, p, p, S(), S(B, 16, 16, C), S(B, dtype=I32), S(B), S(B, dtype=I32),
                  S(B, 16, 16, C))


# ----------------------------------------------------------------------------- optimizers


def prodigy_dadapt_adam_distance_estimate():
    """Prodigy (learning-rate-free Adam) on a small GELU CNN for 32x32 images: besides Adam's
    moments (driven by d g and d^2 g^2) it keeps the initial parameters x0, a running
    weighted sum s of gradients and a scalar numerator r accumulating lr d^2 <g, x0 - x>
    (both decayed by sqrt(beta2)); the distance estimate d grows monotonically to
    max(d, r / ||s||_1); the step is lr d m / (sqrt(v) + d eps) plus decoupled weight decay,
    with a cosine schedule on the base rate of 1."""
    B1, B2, EPS, WD = 0.9, 0.999, 1e-8, 0.01

    def loss(p, img, labels):
        h = _maxpool(jax.nn.gelu(_conv(img, p["c1"]) + p["b1"]))
        h = _maxpool(jax.nn.gelu(_conv(h, p["c2"]) + p["b2"]))
        h = jax.nn.gelu(_conv(h, p["c3"]) + p["b3"])
        return _xent(jnp.mean(h, (1, 2)) @ p["fc"] + p["fcb"], labels)

    def step(p, p0, m, v, s, d, r, t, img, labels):
        l, g = jax.value_and_grad(loss)(p, img, labels)
        lr = 0.5 * (1.0 + jnp.cos(jnp.pi * jnp.minimum(t / 10000.0, 1.0)))
        sb2 = math.sqrt(B2)
        leaves = jax.tree_util.tree_leaves
        dot = sum(jnp.sum(a * (b - c)) for a, b, c in zip(leaves(g), leaves(p0), leaves(p)))
        m = tmap(lambda m, g: B1 * m + (1 - B1) * d * g, m, g)
        v = tmap(lambda v, g: B2 * v + (1 - B2) * d * d * g * g, v, g)
        r = sb2 * r + (1 - sb2) * lr * d * d * dot
        s = tmap(lambda s, g: sb2 * s + (1 - sb2) * lr * d * d * g, s, g)
        snorm = sum(jnp.sum(jnp.abs(a)) for a in leaves(s))
        d_new = jnp.maximum(d, r / (snorm + 1e-12))
        p = tmap(lambda w, m, v: w - lr * d * (m / (jnp.sqrt(v) + d * EPS) + WD * w), p, m, v)
        return l, p, m, v, s, d_new, r
    p = {"c1": S(3, 3, 3, 32), "b1": S(32), "c2": S(3, 3, 32, 64), "b2": S(64),
         "c3": S(3, 3, 64, 64), "b3": S(64), "fc": S(64, 10), "fcb": S(10)}
    return step, (p, p, p, p, p, S(), S(), S(), S(32, 32, 32, 3), S(32, dtype=I32))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [tabnet_attentive_sparsemax_prior_steps, deep_evidential_regression_nig],
    "cnn": [pyramidnet_shakedrop_additive_widening],
    "transformer": [synthesizer_dense_random_mixed_lm, crossvit_dual_branch_cls_cross_attention],
    "rnn": [stack_rnn_soft_push_pop_scan, neural_cde_linear_path_heun_scan],
    "moe": [mh_moe_subtoken_top2_merge],
    "vae": [vrnn_variational_rnn_learned_prior_scan],
    "unet": [ncsn_unet_cond_instancenorm_dsm],
    "gnn": [dimenet_lite_triplet_angular_messages],
    "quant": [bitnet158_ternary_absmean_int8_act_lm],
    "remat": [remat_primer_scan_save_from_both_dconv, remat_nested_poolformer_stages_dots_saveable],
    "custom_vjp": [revnet_reversible_coupling_custom_vjp],
    "control": [ppo_epochs_fori_minibatch_cond_kl_stop, differentiable_physics_fori_switch_regime],
    "sort": [reformer_lsh_sorted_chunk_attention, topk_sparse_autoencoder_auxk_dead_latents],
    "fft": [hrr_holographic_binding_fft_memory],
    "linalg": [dpp_subset_logdet_likelihood],
    "scatter_gather": [rotate_kg_self_adversarial_lazy_adam],
    "dynamic": [cpc_audio_dynamic_crop_infonce_future],
    "mixed": [bf16_dit_adaln_zero_patch_diffusion],
    "optimizer": [prodigy_dadapt_adam_distance_estimate],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["synthesizer_dense_random_mixed_lm", "deep_evidential_regression_nig",
           "pyramidnet_shakedrop_additive_widening", "stack_rnn_soft_push_pop_scan",
           "mh_moe_subtoken_top2_merge", "ncsn_unet_cond_instancenorm_dsm",
           "remat_primer_scan_save_from_both_dconv", "remat_nested_poolformer_stages_dots_saveable",
           "hrr_holographic_binding_fft_memory", "ppo_epochs_fori_minibatch_cond_kl_stop",
           "bf16_dit_adaln_zero_patch_diffusion", "prodigy_dadapt_adam_distance_estimate"]
SHARDED_SET = ["synthesizer_dense_random_mixed_lm", "deep_evidential_regression_nig",
               "remat_primer_scan_save_from_both_dconv", "bf16_dit_adaln_zero_patch_diffusion",
               "mh_moe_subtoken_top2_merge", "vrnn_variational_rnn_learned_prior_scan",
               "prodigy_dadapt_adam_distance_estimate", "pyramidnet_shakedrop_additive_widening"]
