"""Thirteenth fresh set: 25 JAX programs written by a helper on 2026-11-28 (fourth session of
that day), kept outside the repository until that session's held-out figures (at its start
and at its held-out check) were recorded in RESULTS.md, tuned on after. Same interface as
zoo_programs.py::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh13_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh13_programs python benchmarks/accuracy.py --data DIR
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


# ----------------------------------------------------------------------------- mlp


def nerf_posenc_volume_render():
    """NeRF-style radiance field: sinusoidal positional encoding of ray sample points, an MLP
    with a skip connection re-injecting the encoding, view-dependent colour head, and
    alpha compositing along each ray (exclusive cumulative transmittance); photometric MSE,
    Adam."""
    def posenc(x, L):
        freqs = (2.0 ** jnp.arange(L, dtype=F32)) * jnp.pi
        xf = x[..., None, :] * freqs[:, None]                    # [..., L, 3]
        enc = jnp.concatenate([jnp.sin(xf), jnp.cos(xf)], -2)
        return jnp.concatenate([x, enc.reshape(x.shape[:-1] + (-1,))], -1)

    def loss(p, ro, rd, t, rgb_ref):
        R, Sn = ro.shape[0], t.shape[0]
        pts = ro[:, None, :] + rd[:, None, :] * t[None, :, None]     # [R,S,3]
        e = posenc(pts, 4)                                       # [R,S,27]
        h = jax.nn.relu(e @ p["w1"] + p["b1"])
        h = jax.nn.relu(h @ p["w2"] + p["b2"])
        h = jax.nn.relu(jnp.concatenate([h, e], -1) @ p["w3"] + p["b3"])
        sigma = jax.nn.relu(h @ p["ws"])[..., 0]                 # [R,S]
        dirs = rd / jnp.linalg.norm(rd, axis=-1, keepdims=True)
        de = jnp.broadcast_to(posenc(dirs, 2)[:, None, :], (R, Sn, 15))
        c = jax.nn.sigmoid(jax.nn.relu(jnp.concatenate([h, de], -1) @ p["wc1"]) @ p["wc2"])
        delta = jnp.concatenate([t[1:] - t[:-1], jnp.full((1,), 1e10)])[None, :]
        sd = sigma * delta
        alpha = 1.0 - jnp.exp(-sd)
        trans = jnp.exp(-jnp.concatenate([jnp.zeros((R, 1)), jnp.cumsum(sd[:, :-1], -1)], -1))
        w = alpha * trans
        rgb = jnp.sum(w[..., None] * c, 1)
        return jnp.mean((rgb - rgb_ref) ** 2)

    def step(p, m, v, t_step, ro, rd, t, rgb_ref):
        l, g = jax.value_and_grad(loss)(p, ro, rd, t, rgb_ref)
        p, m, v = _adam(p, m, v, g, t_step, lr=5e-4)
        return l, p, m, v
    W = 32
    p = {"w1": S(27, W), "b1": S(W), "w2": S(W, W), "b2": S(W), "w3": S(W + 27, W), "b3": S(W),
         "ws": S(W, 1), "wc1": S(W + 15, 16), "wc2": S(16, 3)}
    return step, (p, p, p, S(), S(32, 3), S(32, 3), S(16), S(32, 3))


def kan_rbf_basis_mlp():
    """Kolmogorov-Arnold network: each edge is a learned univariate function, a weighted sum of
    Gaussian radial basis functions on a fixed grid plus a SiLU base branch; two KAN layers with
    a tanh squashing in between, MSE with an L1 sparsity penalty on the spline coefficients,
    SGD with decoupled weight decay."""
    def kan(x, c, wb):
        grid = jnp.linspace(-2.0, 2.0, 8)
        phi = jnp.exp(-jnp.square((x[..., None] - grid) / 0.5))  # [B,I,G]
        return jnp.einsum("big,igo->bo", phi, c) + jax.nn.silu(x) @ wb

    def loss(p, x, y):
        h = jnp.tanh(kan(x, p["c1"], p["wb1"])) * 2.0
        out = kan(h, p["c2"], p["wb2"])
        l1 = jnp.mean(jnp.abs(p["c1"])) + jnp.mean(jnp.abs(p["c2"]))
        return jnp.mean((out - y) ** 2) + 1e-3 * l1

    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return l, tmap(lambda p, g: p * (1 - 1e-4) - 0.02 * g, p, g)
    p = {"c1": S(6, 8, 10), "wb1": S(6, 10), "c2": S(10, 8, 2), "wb2": S(10, 2)}
    return step, (p, S(32, 6), S(32, 2))


# ----------------------------------------------------------------------------- cnn


def res2net_hierarchical_split():
    """Res2Net bottleneck: 1x1 conv, the channels split into four groups where group i's 3x3 conv
    also sees group i-1's output (hierarchical residual-like connections), concat, 1x1 conv,
    training-mode batch norm whose running statistics are updated by the step."""
    def bn(x, g, b, rm, rv):
        m = jnp.mean(x, (0, 1, 2))
        v = jnp.var(x, (0, 1, 2))
        y = (x - m) * lax.rsqrt(v + 1e-5) * g + b
        return y, 0.9 * rm + 0.1 * m, 0.9 * rv + 0.1 * v

    def loss(p, st, x, labels):
        h = jax.nn.relu(_conv(x, p["stem"]))                     # [N,8,8,16]
        u = jax.nn.relu(_conv(h, p["in"]))
        xs = jnp.split(u, 4, -1)
        ys = [xs[0]]
        prev = None
        for i in range(1, 4):
            inp = xs[i] if prev is None else xs[i] + prev
            prev = jax.nn.relu(_conv(inp, p["k%d" % i]))
            ys.append(prev)
        o = _conv(jnp.concatenate(ys, -1), p["out"])
        o, rm, rv = bn(o, p["g"], p["b"], st["rm"], st["rv"])
        h = jax.nn.relu(o + h)
        return _xent(jnp.mean(h, (1, 2)) @ p["fc"], labels), {"rm": rm, "rv": rv}

    def step(p, st, x, labels):
        (l, st), g = jax.value_and_grad(loss, has_aux=True)(p, st, x, labels)
        return l, _sgd(p, g), lax.stop_gradient(st)
    p = {"stem": S(3, 3, 3, 16), "in": S(1, 1, 16, 16), "k1": S(3, 3, 4, 4),
         "k2": S(3, 3, 4, 4), "k3": S(3, 3, 4, 4), "out": S(1, 1, 16, 16), "g": S(16),
         "b": S(16), "fc": S(16, 6)}
    return step, (p, {"rm": S(16), "rv": S(16)}, S(8, 8, 8, 3), S(8, dtype=I32))


def octave_conv_hi_lo():
    """Two Octave-convolution layers: feature maps split into a high-frequency part at full
    resolution and a low-frequency part at half resolution, with H->H, H->L (average pool then
    conv), L->H (conv then nearest upsample) and L->L paths; momentum SGD."""
    def pool(x):
        n, h, w, c = x.shape
        return jnp.mean(x.reshape(n, h // 2, 2, w // 2, 2, c), (2, 4))

    def up(x):
        return jnp.repeat(jnp.repeat(x, 2, 1), 2, 2)

    def octave(hi, lo, q):
        nh = _conv(hi, q["hh"]) + up(_conv(lo, q["lh"]))
        nl = _conv(lo, q["ll"]) + _conv(pool(hi), q["hl"])
        return jax.nn.relu(nh), jax.nn.relu(nl)

    def loss(p, x, labels):
        hi = jax.nn.relu(_conv(x, p["sh"]))                      # [N,8,8,6]
        lo = jax.nn.relu(_conv(pool(x), p["sl"]))                # [N,4,4,2]
        for q in p["layers"]:
            hi, lo = octave(hi, lo, q)
        f = jnp.concatenate([jnp.mean(hi, (1, 2)), jnp.mean(lo, (1, 2))], -1)
        return _xent(f @ p["fc"], labels)

    def step(p, mom, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        mom = tmap(lambda m, g: 0.9 * m + g, mom, g)
        return l, _sgd(p, mom, 0.02), mom
    q = {"hh": S(3, 3, 6, 6), "lh": S(3, 3, 2, 6), "ll": S(3, 3, 2, 2), "hl": S(3, 3, 6, 2)}
    p = {"sh": S(3, 3, 3, 6), "sl": S(3, 3, 3, 2), "layers": [q, q], "fc": S(8, 5)}
    return step, (p, p, S(8, 8, 8, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- transformer


def performer_favor_causal_lm():
    """Performer causal LM layer: FAVOR+ positive random features exp(w.x - |x|^2/2) with the
    random projection passed in, causal linear attention by prefix sums of phi(k) v^T and
    phi(k), pre-LN, GELU FFN, tied embeddings, AdamW."""
    def phi(x, w):
        xw = jnp.einsum("bthd,md->bthm", x, w)
        return jnp.exp(xw - 0.5 * jnp.sum(x * x, -1, keepdims=True)
                       - jnp.max(lax.stop_gradient(xw), -1, keepdims=True)) / jnp.sqrt(w.shape[0])

    def loss(p, proj, tok):
        b, t = tok.shape
        H, dh = 2, 8
        x = p["emb"][tok] + p["pos"]
        h = _ln(x, p["g1"], p["b1"])
        q = (h @ p["wq"]).reshape(b, t, H, dh) / dh ** 0.25
        k = (h @ p["wk"]).reshape(b, t, H, dh) / dh ** 0.25
        v = (h @ p["wv"]).reshape(b, t, H, dh)
        qf, kf = phi(q, proj), phi(k, proj)                      # [B,T,H,M]
        kv = jnp.cumsum(jnp.einsum("bthm,bthd->bthmd", kf, v), 1)
        ksum = jnp.cumsum(kf, 1)
        num = jnp.einsum("bthm,bthmd->bthd", qf, kv)
        den = jnp.einsum("bthm,bthm->bth", qf, ksum)[..., None] + 1e-6
        x = x + (num / den).reshape(b, t, H * dh) @ p["wo"]
        h = _ln(x, p["g2"], p["b2"])
        x = x + jax.nn.gelu(h @ p["f1"]) @ p["f2"]
        logits = _ln(x, p["gf"], p["bf"]) @ p["emb"].T
        return _xent(logits[:, :-1], tok[:, 1:])

    def step(p, m, v, t, proj, tok):
        l, g = jax.value_and_grad(loss)(p, proj, tok)
        p, m, v = _adam(p, m, v, g, t, wd=0.01)
        return l, p, m, v
    D, V, T = 16, 32, 16
    p = {"emb": S(V, D), "pos": S(T, D), "wq": S(D, D), "wk": S(D, D), "wv": S(D, D),
         "wo": S(D, D), "f1": S(D, 32), "f2": S(32, D)}
    for k in ("1", "2", "f"):
        p["g" + k] = S(D)
        p["b" + k] = S(D)
    return step, (p, p, p, S(), S(16, 8), S(8, T, dtype=I32))


def funnel_pool_query_block():
    """Funnel-Transformer encoder: a full-length attention layer, then two funnel layers whose
    queries are stride-2 mean-pooled tokens attending to the unpooled sequence (sequence length
    16 -> 8 -> 4); classification from the first pooled token; linear-warmup SGD."""
    def layer(p, i, q_in, kv_in):
        pre = "l%d_" % i
        x = q_in + _mha(_ln(q_in, p[pre + "g1"], p[pre + "b1"]),
                        _ln(kv_in, p[pre + "g1"], p[pre + "b1"]), p, pre, 2)
        h = _ln(x, p[pre + "g2"], p[pre + "b2"])
        return x + jax.nn.relu(h @ p[pre + "f1"]) @ p[pre + "f2"]

    def pool(x):
        b, t, d = x.shape
        return jnp.mean(x.reshape(b, t // 2, 2, d), 2)

    def loss(p, tok, labels):
        x = p["emb"][tok] + p["pos"]
        x = layer(p, 0, x, x)
        x = layer(p, 1, pool(x), x)
        x = layer(p, 2, pool(x), x)
        return _xent(x[:, 0] @ p["head"], labels)

    def step(p, t, tok, labels):
        l, g = jax.value_and_grad(loss)(p, tok, labels)
        lr = 0.05 * jnp.minimum(1.0, (t + 1.0) / 100.0)
        return l, tmap(lambda p, g: p - lr * g, p, g)
    D = 16
    p = {"emb": S(40, D), "pos": S(16, D), "head": S(D, 4)}
    for i in range(3):
        pre = "l%d_" % i
        _attn_params(p, pre, D)
        p.update({pre + "g1": S(D), pre + "b1": S(D), pre + "g2": S(D), pre + "b2": S(D),
                  pre + "f1": S(D, 32), pre + "f2": S(32, D)})
    return step, (p, S(), S(8, 16, dtype=I32), S(8, dtype=I32))


# ----------------------------------------------------------------------------- rnn / scan


def grud_decay_missing_values():
    """GRU-D for irregularly sampled series with missing values: input decay towards the
    empirical mean and hidden-state decay, both exp(-relu(.)) of the time since the last
    observation; the last observed value is carried through the scan; binary cross-entropy."""
    def loss(p, x, m, delta, xmean, y):
        b, T, D = x.shape
        H = p["uh"].shape[0]

        def body(c, inp):
            h, xlast = c
            xt, mt, dt = inp
            gx = jnp.exp(-jax.nn.relu(dt * p["wgx"] + p["bgx"]))
            xhat = mt * xt + (1 - mt) * (gx * xlast + (1 - gx) * xmean)
            xlast = jnp.where(mt > 0, xt, xlast)
            gh = jnp.exp(-jax.nn.relu(dt @ p["wgh"] + p["bgh"]))
            h = gh * h
            inp2 = jnp.concatenate([xhat, mt], -1)
            zr = jax.nn.sigmoid(inp2 @ p["wzr"] + h @ p["uzr"])
            z, r = jnp.split(zr, 2, -1)
            n = jnp.tanh(inp2 @ p["wh"] + (r * h) @ p["uh"])
            h = (1 - z) * h + z * n
            return (h, xlast), None
        seq = tuple(jnp.swapaxes(a, 0, 1) for a in (x, m, delta))
        (h, _), _ = lax.scan(body, (jnp.zeros((b, H)), jnp.broadcast_to(xmean, (b, D))), seq)
        z = (h @ p["out"])[:, 0]
        return jnp.mean(jnp.logaddexp(0.0, z) - y * z)

    def step(p, x, m, delta, xmean, y):
        l, g = jax.value_and_grad(loss)(p, x, m, delta, xmean, y)
        return l, _sgd(p, g)
    D, H = 5, 16
    p = {"wgx": S(D), "bgx": S(D), "wgh": S(D, H), "bgh": S(H), "wzr": S(2 * D, 2 * H),
         "uzr": S(H, 2 * H), "wh": S(2 * D, H), "uh": S(H, H), "out": S(H, 1)}
    return step, (p, S(16, 12, D), S(16, 12, D), S(16, 12, D), S(D), S(16))


def mlstm_multiplicative_scan():
    """Multiplicative LSTM character model: the intermediate state m = (x W_mx) * (h W_mh)
    replaces h in the gate pre-activations; scan over time with per-step logits collected,
    next-character cross-entropy, gradient clipping by value."""
    def loss(p, tok):
        b, T = tok.shape
        H = p["wmh"].shape[0]
        xs = jnp.swapaxes(p["emb"][tok[:, :-1]], 0, 1)

        def body(c, xt):
            h, cell = c
            m = (xt @ p["wmx"]) * (h @ p["wmh"])
            gates = xt @ p["wx"] + m @ p["wm"] + p["b"]
            i, f, o, u = jnp.split(gates, 4, -1)
            cell = jax.nn.sigmoid(f) * cell + jax.nn.sigmoid(i) * jnp.tanh(u)
            h = jax.nn.sigmoid(o) * jnp.tanh(cell)
            return (h, cell), h @ p["out"]
        _, logits = lax.scan(body, (jnp.zeros((b, H)), jnp.zeros((b, H))), xs)
        return _xent(jnp.swapaxes(logits, 0, 1), tok[:, 1:])

    def step(p, tok):
        l, g = jax.value_and_grad(loss)(p, tok)
        g = tmap(lambda a: jnp.clip(a, -1.0, 1.0), g)
        return l, _sgd(p, g, 0.1)
    E, H, V = 8, 16, 20
    p = {"emb": S(V, E), "wmx": S(E, H), "wmh": S(H, H), "wx": S(E, 4 * H), "wm": S(H, 4 * H),
         "b": S(4 * H), "out": S(H, V)}
    return step, (p, S(8, 14, dtype=I32))


# ----------------------------------------------------------------------------- moe


def hierarchical_moe_two_level_gate():
    """Two-level mixture of experts: a group gate picks one of two expert groups per token
    (argmax), a second gate inside the chosen group keeps the top-2 of three experts
    (lax.top_k, renormalised); experts evaluated densely and combined with the sparse weights;
    switch-style load-balancing loss on both levels."""
    def loss(p, x, y):
        T, D = x.shape
        G, E = 2, 3
        pg = jax.nn.softmax(x @ p["wg"], -1)                     # [T,G]
        gi = jnp.argmax(pg, -1)
        goh = jax.nn.one_hot(gi, G)
        pe = jax.nn.softmax(jnp.einsum("td,gde->tge", x, p["we"]), -1)   # [T,G,E]
        pe_sel = jnp.einsum("tge,tg->te", pe, goh)
        topv, topi = lax.top_k(pe_sel, 2)
        topv = topv / jnp.sum(topv, -1, keepdims=True)
        ew = jnp.sum(jax.nn.one_hot(topi, E) * topv[..., None], 1)      # [T,E]
        w = goh[:, :, None] * ew[:, None, :] * jnp.sum(pg * goh, -1)[:, None, None]
        h = jax.nn.gelu(jnp.einsum("td,gedh->tgeh", x, p["w1"]))
        out = jnp.einsum("tgeh,gehd,tge->td", h, p["w2"], w)
        aux = G * jnp.sum(jnp.mean(goh, 0) * jnp.mean(pg, 0))
        aux = aux + E * jnp.sum(jnp.mean(jax.nn.one_hot(topi[:, 0], E), 0) * jnp.mean(pe_sel, 0))
        return jnp.mean(((x + out) @ p["head"] - y) ** 2) + 0.01 * aux

    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return l, _sgd(p, g)
    D, H = 8, 16
    p = {"wg": S(D, 2), "we": S(2, D, 3), "w1": S(2, 3, D, H), "w2": S(2, 3, H, D),
         "head": S(D, 2)}
    return step, (p, S(32, D), S(32, 2))


# ----------------------------------------------------------------------------- vae


def gumbel_softmax_categorical_vae():
    """Categorical VAE: four latent categorical variables with six classes each, Gumbel noise
    passed in, temperature-annealed softmax relaxation with a straight-through hard one-hot,
    Bernoulli decoder, KL to the uniform prior; Adam."""
    def loss(p, x, gnoise, tau):
        n = x.shape[0]
        N, K = 4, 6
        h = jax.nn.relu(x @ p["e1"] + p["eb1"])
        logits = (h @ p["e2"]).reshape(n, N, K)
        y = jax.nn.softmax((logits + gnoise) / tau, -1)
        hard = jax.nn.one_hot(jnp.argmax(y, -1), K)
        z = (hard + y - lax.stop_gradient(y)).reshape(n, N * K)
        d = jax.nn.relu(z @ p["d1"] + p["db1"])
        xl = d @ p["d2"]
        rec = jnp.sum(jnp.maximum(xl, 0) - xl * x + jnp.log1p(jnp.exp(-jnp.abs(xl))), -1)
        q = jax.nn.softmax(logits, -1)
        kl = jnp.sum(q * (jnp.log(q + 1e-10) + jnp.log(float(K))), (1, 2))
        return jnp.mean(rec + kl)

    def step(p, m, v, t, x, gnoise):
        tau = jnp.maximum(0.5, jnp.exp(-3e-5 * t))
        l, g = jax.value_and_grad(loss)(p, x, gnoise, tau)
        p, m, v = _adam(p, m, v, g, t)
        return l, p, m, v
    D = 20
    p = {"e1": S(D, 32), "eb1": S(32), "e2": S(32, 24), "d1": S(24, 32), "db1": S(32),
         "d2": S(32, D)}
    return step, (p, p, p, S(), S(16, D), S(16, 4, 6))


# ----------------------------------------------------------------------------- unet


def partial_conv_inpainting_unet():
    """Inpainting U-Net of partial convolutions: each conv sees the masked input renormalised by
    the window's valid-pixel fraction and propagates an updated mask; stride-2 encoder, nearest
    upsampling decoder with concatenated skips and masks; hole/valid-weighted L1 loss."""
    def pconv(x, m, w, b, stride=1):
        cnt = lax.conv_general_dilated(m, jnp.ones((3, 3, 1, 1)), (stride, stride), "SAME",
                                       dimension_numbers=("NHWC", "HWIO", "NHWC"))
        out = _conv(x * m, w, stride)
        ratio = 9.0 / (cnt + 1e-6)
        valid = (cnt > 0).astype(F32)
        return (out * ratio + b) * valid, valid

    def up(x):
        return jnp.repeat(jnp.repeat(x, 2, 1), 2, 2)

    def loss(p, img, mask):
        x = img * mask
        h1, m1 = pconv(x, mask, p["e1"], p["be1"])               # [N,8,8,8]
        h1 = jax.nn.relu(h1)
        h2, m2 = pconv(h1, m1, p["e2"], p["be2"], 2)             # [N,4,4,16]
        h2 = jax.nn.relu(h2)
        h3, m3 = pconv(h2, m2, p["e3"], p["be3"], 2)             # [N,2,2,16]
        h3 = jax.nn.relu(h3)
        u2 = jnp.concatenate([up(h3), h2], -1)
        mu2 = jnp.maximum(up(m3), m2)
        d2, md2 = pconv(u2, mu2, p["d2"], p["bd2"])
        d2 = jax.nn.leaky_relu(d2, 0.2)
        u1 = jnp.concatenate([up(d2), h1], -1)
        mu1 = jnp.maximum(up(md2), m1)
        d1, _ = pconv(u1, mu1, p["d1"], p["bd1"])
        out = jax.nn.sigmoid(_conv(jax.nn.leaky_relu(d1, 0.2), p["o"]))
        err = jnp.abs(out - img)
        return jnp.mean(err * mask) + 6.0 * jnp.mean(err * (1 - mask))

    def step(p, img, mask):
        l, g = jax.value_and_grad(loss)(p, img, mask)
        return l, _sgd(p, g, 0.01)
    p = {"e1": S(3, 3, 3, 8), "be1": S(8), "e2": S(3, 3, 8, 16), "be2": S(16),
         "e3": S(3, 3, 16, 16), "be3": S(16), "d2": S(3, 3, 32, 16), "bd2": S(16),
         "d1": S(3, 3, 24, 8), "bd1": S(8), "o": S(3, 3, 8, 3)}
    return step, (p, S(4, 8, 8, 3), S(4, 8, 8, 1))


# ----------------------------------------------------------------------------- gnn


def gine_edge_features_virtual_node():
    """GINE (graph isomorphism network with edge features): messages relu(h_src + edge MLP),
    summed per destination, (1 + eps) self weighting, two-layer node MLPs; a virtual node per
    graph gathered into and pooled from its nodes between layers; sum + max readout regression."""
    def loss(p, nf, ef, src, dst, gid, y):
        n = nf.shape[0]
        G = y.shape[0]
        h = nf @ p["enc"]
        vn = jnp.zeros((G, h.shape[1]))
        for i in range(2):
            h = h + vn[gid]
            msg = jax.nn.relu(h[src] + ef @ p["we"][i])
            agg = jax.ops.segment_sum(msg, dst, num_segments=n)
            z = (1.0 + p["eps"][i]) * h + agg
            h = jax.nn.relu(jax.nn.relu(z @ p["m1"][i]) @ p["m2"][i])
            pooled = jax.ops.segment_sum(h, gid, num_segments=G)
            vn = jax.nn.relu((vn + pooled) @ p["vn"][i])
        ro = jnp.concatenate([jax.ops.segment_sum(h, gid, num_segments=G),
                              jax.ops.segment_max(h, gid, num_segments=G)], -1)
        return jnp.mean((ro @ p["head"] - y) ** 2)

    def step(p, nf, ef, src, dst, gid, y):
        l, g = jax.value_and_grad(loss)(p, nf, ef, src, dst, gid, y)
        return l, _sgd(p, g, 0.01)
    F, Fn, Fe = 16, 6, 4
    p = {"enc": S(Fn, F), "we": [S(Fe, F)] * 2, "eps": [S()] * 2, "m1": [S(F, F)] * 2,
         "m2": [S(F, F)] * 2, "vn": [S(F, F)] * 2, "head": S(2 * F, 1)}
    return step, (p, S(24, Fn), S(64, Fe), S(64, dtype=I32), S(64, dtype=I32),
                  S(24, dtype=I32), S(3, 1))


# ----------------------------------------------------------------------------- quant


def qlora_int8_frozen_base():
    """LoRA fine-tuning of a frozen int8 weight-only quantised MLP (per-output-channel scales,
    dequantised on the fly): rank-4 adapters with dropout masks passed in, only the adapters
    and the head are trained, with Adam."""
    def layer(x, wq, s, a, b, drop):
        w = wq.astype(F32) * s[None, :]
        return x @ w + ((x * drop) @ a) @ b * (8.0 / 4.0)

    def loss(lp, frozen, x, drops, labels):
        h = jax.nn.gelu(layer(x, frozen["q1"], frozen["s1"], lp["a1"], lp["b1"], drops[0]))
        h = jax.nn.gelu(layer(h, frozen["q2"], frozen["s2"], lp["a2"], lp["b2"], drops[1]))
        return _xent(h @ lp["head"], labels)

    def step(lp, m, v, t, frozen, x, drops, labels):
        l, g = jax.value_and_grad(loss)(lp, frozen, x, drops, labels)
        lp, m, v = _adam(lp, m, v, g, t, lr=2e-4)
        return l, lp, m, v
    D, H, r = 16, 32, 4
    lp = {"a1": S(D, r), "b1": S(r, H), "a2": S(H, r), "b2": S(r, H), "head": S(H, 6)}
    frozen = {"q1": S(D, H, dtype=jnp.int8), "s1": S(H), "q2": S(H, H, dtype=jnp.int8),
              "s2": S(H)}
    drops = (S(16, D), S(16, H))
    return step, (lp, lp, lp, S(), frozen, S(16, D), drops, S(16, dtype=I32))


# ----------------------------------------------------------------------------- remat


def remat_isab_set_transformer():
    """Set Transformer: two induced-set-attention blocks (inducing points attend to the set,
    the set attends back), each under jax.checkpoint with the
    checkpoint_dots_with_no_batch_dims policy, then pooling by multi-head attention from a
    learned seed; set-level classification, SGD."""
    policy = jax.checkpoint_policies.checkpoint_dots_with_no_batch_dims

    def mab(q, x, qp, pre):
        h = q + _mha(q, x, qp, pre, 2)
        h = _ln(h, qp[pre + "g"], qp[pre + "b"])
        return _ln(h + jax.nn.relu(h @ qp[pre + "f"]), qp[pre + "g2"], qp[pre + "b2"])

    def isab(qp, x):
        ind = jnp.broadcast_to(qp["ind"], (x.shape[0],) + qp["ind"].shape)
        hid = mab(ind, x, qp, "a_")
        return mab(x, hid, qp, "b_")

    def loss(ps, x, labels):
        h = x @ ps["in"]
        for qp in ps["blocks"]:
            h = jax.checkpoint(isab, policy=policy)(qp, h)
        seed = jnp.broadcast_to(ps["seed"], (x.shape[0], 1, h.shape[-1]))
        pooled = mab(seed, h, ps["pma"], "p_")[:, 0]
        return _xent(pooled @ ps["head"], labels)

    def step(ps, x, labels):
        l, g = jax.value_and_grad(loss)(ps, x, labels)
        return l, _sgd(ps, g)
    D = 16

    def mab_p(p, pre):
        _attn_params(p, pre, D)
        p.update({pre + "g": S(D), pre + "b": S(D), pre + "g2": S(D), pre + "b2": S(D),
                  pre + "f": S(D, D)})
        return p
    qp = mab_p(mab_p({"ind": S(4, D)}, "a_"), "b_")
    ps = {"in": S(3, D), "blocks": [qp, qp], "seed": S(1, D), "pma": mab_p({}, "p_"),
          "head": S(D, 4)}
    return step, (ps, S(8, 16, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- custom_vjp


@jax.custom_vjp
def _safe_l2n(x):
    return x / jnp.maximum(jnp.linalg.norm(x, axis=-1, keepdims=True), 1e-6)


def _safe_l2n_fwd(x):
    n = jnp.maximum(jnp.linalg.norm(x, axis=-1, keepdims=True), 1e-6)
    y = x / n
    return y, (y, n)


def _safe_l2n_bwd(res, g):
    y, n = res
    return ((g - y * jnp.sum(g * y, -1, keepdims=True)) / n,)


_safe_l2n.defvjp(_safe_l2n_fwd, _safe_l2n_bwd)


def custom_vjp_safe_l2norm_cosface():
    """CosFace (large-margin cosine) classifier: features and class weights are L2-normalised by
    a custom_vjp whose backward projects out the radial component, logits s*(cos - m*onehot);
    MLP embedding, SGD."""
    def loss(p, x, labels):
        f = jax.nn.relu(x @ p["w1"] + p["b1"]) @ p["w2"]
        cos = _safe_l2n(f) @ _safe_l2n(p["cls"]).T
        logits = 16.0 * (cos - 0.3 * jax.nn.one_hot(labels, cos.shape[-1]))
        return _xent(logits, labels)

    def step(p, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        return l, _sgd(p, g, 0.1)
    p = {"w1": S(12, 32), "b1": S(32), "w2": S(32, 8), "cls": S(7, 8)}
    return step, (p, S(16, 12), S(16, dtype=I32))


# ----------------------------------------------------------------------------- control


def act_ponder_fori_halting():
    """Adaptive Computation Time: up to five pondering steps in a fori_loop, each guarded by a
    lax.cond that skips the cell once every example has halted; halting probabilities,
    remainders and the ponder cost are accumulated; MSE plus ponder penalty."""
    def loss(p, x, y):
        b = x.shape[0]
        H = p["wh"].shape[0]

        def cell(st, i):
            h, acc, cum, halted, ponder = st
            h = jnp.tanh(h @ p["wh"] + x @ p["wx"] + p["step_emb"][i])
            ph = jax.nn.sigmoid(h @ p["whalt"] + p["bhalt"])[:, 0]
            ph = jnp.where(i == 4, 1.0, ph)
            new_cum = cum + ph
            stop = (new_cum > 0.99) & (halted == 0)
            w = jnp.where(halted > 0, 0.0, jnp.where(stop, 1.0 - cum, ph))
            ponder = ponder + jnp.where(halted > 0, 0.0, jnp.where(stop, 1.0 - cum, 1.0))
            acc = acc + w[:, None] * h
            halted = jnp.where(stop, 1.0, halted)
            cum = jnp.where(halted > 0, cum, new_cum)
            return h, acc, cum, halted, ponder

        def body(i, st):
            return lax.cond(jnp.all(st[3] > 0), lambda s: s, lambda s: cell(s, i), st)
        z = jnp.zeros((b,))
        st = (jnp.zeros((b, H)), jnp.zeros((b, H)), z, z, z)
        _, acc, _, _, ponder = lax.fori_loop(0, 5, body, st)
        return jnp.mean((acc @ p["out"] - y) ** 2) + 0.01 * jnp.mean(ponder)

    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return l, _sgd(p, g)
    H = 16
    p = {"wh": S(H, H), "wx": S(6, H), "step_emb": S(5, H), "whalt": S(H, 1), "bhalt": S(),
         "out": S(H, 2)}
    return step, (p, S(16, 6), S(16, 2))


def deep_kmeans_lloyd_while():
    """Deep clustering: an autoencoder's codes are clustered by Lloyd's k-means in a while_loop
    (until no assignment changes or 20 iterations, no gradient), then the encoder is pulled
    towards the assigned centroids alongside the reconstruction loss; the step returns the new
    centroids."""
    def enc(p, x):
        return jnp.tanh(x @ p["e1"]) @ p["e2"]

    def lloyd(z, c0):
        def assign(c):
            d = jnp.sum((z[:, None, :] - c[None]) ** 2, -1)
            return jnp.argmin(d, -1)

        def update(a, c):
            oh = jax.nn.one_hot(a, c.shape[0])
            cnt = jnp.sum(oh, 0)[:, None]
            return jnp.where(cnt > 0, (oh.T @ z) / jnp.maximum(cnt, 1.0), c)

        def cond(s):
            i, _, changed, _ = s
            return (i < 20) & changed

        def body(s):
            i, c, _, a = s
            c = update(a, c)
            a2 = assign(c)
            return i + 1, c, jnp.any(a2 != a), a2
        a0 = assign(c0)
        _, c, _, a = lax.while_loop(cond, body, (0, c0, jnp.array(True), a0))
        return c, a

    def loss(p, x, c, a):
        z = enc(p, x)
        rec = jnp.mean((jnp.tanh(z @ p["d1"]) @ p["d2"] - x) ** 2)
        return rec + 0.1 * jnp.mean(jnp.sum((z - c[a]) ** 2, -1))

    def step(p, cent, x):
        z = lax.stop_gradient(enc(p, x))
        c, a = lloyd(z, cent)
        l, g = jax.value_and_grad(loss)(p, x, c, a)
        return l, _sgd(p, g), c
    p = {"e1": S(10, 16), "e2": S(16, 4), "d1": S(4, 16), "d2": S(16, 10)}
    return step, (p, S(4, 4), S(32, 10))


# ----------------------------------------------------------------------------- sort / top_k


def trimmed_mean_per_example_grads():
    """Byzantine-robust aggregation: per-example gradients by vmap(grad), each coordinate's
    values sorted across the batch and the two smallest and two largest dropped before
    averaging (coordinate-wise trimmed mean); SGD."""
    def ex_loss(p, x, label):
        h = jax.nn.relu(x @ p["w1"] + p["b1"])
        logp = jax.nn.log_softmax(h @ p["w2"])
        return -logp[label]

    def step(p, x, labels):
        l = jnp.mean(jax.vmap(ex_loss, (None, 0, 0))(p, x, labels))
        gs = jax.vmap(jax.grad(ex_loss), (None, 0, 0))(p, x, labels)
        g = tmap(lambda a: jnp.mean(jnp.sort(a, 0)[2:-2], 0), gs)
        return l, _sgd(p, g)
    p = {"w1": S(8, 16), "b1": S(16), "w2": S(16, 4)}
    return step, (p, S(16, 8), S(16, dtype=I32))


# ----------------------------------------------------------------------------- fft


def spectral_pooling_rfft2_cnn():
    """CNN with spectral pooling: conv features are taken to the frequency domain by rfft2, the
    lowest frequencies cropped (8x8 -> 4x4), and brought back by irfft2; second conv, global
    pool, cross-entropy; Adagrad."""
    def spool(x):
        f = jnp.fft.rfft2(x, axes=(1, 2))                        # [N,8,5,C]
        f = jnp.concatenate([f[:, :2], f[:, -2:]], 1)[:, :, :3]  # [N,4,3,C]
        return jnp.fft.irfft2(f, s=(4, 4), axes=(1, 2))

    def loss(p, x, labels):
        h = jax.nn.relu(_conv(x, p["c1"]))
        h = spool(h)
        h = jax.nn.relu(_conv(h, p["c2"]))
        return _xent(jnp.mean(h, (1, 2)) @ p["fc"], labels)

    def step(p, acc, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        acc = tmap(lambda a, g: a + g * g, acc, g)
        return l, tmap(lambda p, a, g: p - 0.05 * g / (jnp.sqrt(a) + 1e-7), p, acc, g), acc
    p = {"c1": S(3, 3, 3, 8), "c2": S(3, 3, 8, 16), "fc": S(16, 5)}
    return step, (p, p, S(8, 8, 8, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- linalg


def dagmm_cholesky_energy():
    """DAGMM anomaly model: autoencoder code plus reconstruction features feed an estimation
    network giving soft GMM memberships; mixture weights, means and full covariances from those
    memberships, sample energy via Cholesky factors and triangular solves, with a penalty on
    small covariance diagonals."""
    def loss(p, x):
        n = x.shape[0]
        zc = jnp.tanh(x @ p["e1"]) @ p["e2"]                     # [N,2]
        xr = jnp.tanh(zc @ p["d1"]) @ p["d2"]
        rel = jnp.linalg.norm(x - xr, axis=-1) / (jnp.linalg.norm(x, axis=-1) + 1e-6)
        cos = jnp.sum(x * xr, -1) / (jnp.linalg.norm(x, axis=-1) * jnp.linalg.norm(xr, axis=-1) + 1e-6)
        z = jnp.concatenate([zc, rel[:, None], cos[:, None]], -1)   # [N,4]
        gam = jax.nn.softmax(jnp.tanh(z @ p["s1"]) @ p["s2"], -1)   # [N,K]
        phi = jnp.mean(gam, 0)
        mu = (gam.T @ z) / jnp.sum(gam, 0)[:, None]             # [K,4]
        dz = z[None] - mu[:, None]                               # [K,N,4]
        cov = jnp.einsum("nk,kni,knj->kij", gam, dz, dz) / jnp.sum(gam, 0)[:, None, None]
        cov = cov + 1e-3 * jnp.eye(4)
        L = jnp.linalg.cholesky(cov)
        sol = jax.vmap(lambda l, d: jax.scipy.linalg.solve_triangular(l, d.T, lower=True))(L, dz)
        maha = jnp.sum(sol ** 2, 1)                              # [K,N]
        logdet = 2.0 * jnp.sum(jnp.log(jnp.diagonal(L, axis1=1, axis2=2)), -1)
        logp = jnp.log(phi)[:, None] - 0.5 * maha - 0.5 * logdet[:, None] - 2.0 * jnp.log(2 * jnp.pi)
        energy = -jax.nn.logsumexp(logp, 0)
        pen = jnp.sum(1.0 / jnp.diagonal(cov, axis1=1, axis2=2))
        return jnp.mean((x - xr) ** 2) + 0.1 * jnp.mean(energy) + 0.005 * pen

    def step(p, m, v, t, x):
        l, g = jax.value_and_grad(loss)(p, x)
        p, m, v = _adam(p, m, v, g, t, lr=1e-4)
        return l, p, m, v
    p = {"e1": S(12, 16), "e2": S(16, 2), "d1": S(2, 16), "d2": S(16, 12), "s1": S(4, 10),
         "s2": S(10, 3)}
    return step, (p, p, p, S(), S(32, 12))


# ----------------------------------------------------------------------------- scatter/gather


def keypoint_heatmap_scatter_gather():
    """Keypoint detection: target heatmaps built by scattering ones at the keypoint pixels
    (flattened index) and blurring with a fixed depthwise kernel; predicted heatmaps trained by
    MSE plus a soft-argmax coordinate loss, and a descriptor loss on features gathered at the
    keypoint locations."""
    def loss(p, img, kp, kcls):
        blur = jnp.array([[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]) / 16.0
        n, Hh, Ww, _ = img.shape
        K = kp.shape[1]
        f = jax.nn.relu(_conv(img, p["c1"]))
        f = jax.nn.relu(_conv(f, p["c2"]))                       # [N,8,8,16]
        hm = _conv(f, p["hm"])                                   # [N,8,8,K]
        flat = kp[..., 0] * Ww + kp[..., 1]                      # [N,K]
        tgt = jnp.zeros((n, Hh * Ww, K)).at[
            jnp.arange(n)[:, None], flat, jnp.arange(K)[None, :]].add(1.0)
        tgt = _dwconv(tgt.reshape(n, Hh, Ww, K), jnp.broadcast_to(blur[:, :, None, None],
                                                                   (3, 3, 1, K)))
        l_hm = jnp.mean((hm - tgt) ** 2)
        prob = jax.nn.softmax(hm.reshape(n, Hh * Ww, K), 1)
        ys = (jnp.arange(Hh * Ww) // Ww).astype(F32)
        xs = (jnp.arange(Hh * Ww) % Ww).astype(F32)
        coord = jnp.stack([jnp.einsum("npk,p->nk", prob, ys), jnp.einsum("npk,p->nk", prob, xs)], -1)
        l_coord = jnp.mean(jnp.abs(coord - kp.astype(F32)))
        desc = jnp.take_along_axis(f.reshape(n, Hh * Ww, -1), flat[..., None], 1)   # [N,K,16]
        l_desc = _xent(desc @ p["dcls"], kcls)
        return l_hm + 0.1 * l_coord + l_desc

    def step(p, img, kp, kcls):
        l, g = jax.value_and_grad(loss)(p, img, kp, kcls)
        return l, _sgd(p, g, 0.02)
    p = {"c1": S(3, 3, 3, 8), "c2": S(3, 3, 8, 16), "hm": S(3, 3, 16, 3), "dcls": S(16, 5)}
    return step, (p, S(8, 8, 8, 3), S(8, 3, 2, dtype=I32), S(8, 3, dtype=I32))


# ----------------------------------------------------------------------------- dynamic slices


def random_crop_cutout_dynamic_slice():
    """Data augmentation inside the step: per-example random crops (vmap of dynamic_slice at
    offsets passed in), horizontal flips by a mask, and cutout (dynamic_update_slice of a zero
    patch at a per-example position), then a small CNN trained with momentum SGD."""
    def augment(img, off, flip, cut):
        x = lax.dynamic_slice(img, (off[0], off[1], 0), (8, 8, img.shape[-1]))
        x = jnp.where(flip > 0, x[:, ::-1], x)
        return lax.dynamic_update_slice(x, jnp.zeros((3, 3, x.shape[-1])), (cut[0], cut[1], 0))

    def loss(p, x, labels):
        h = jax.nn.relu(_conv(x, p["c1"]))
        h = jax.nn.relu(_conv(h, p["c2"], 2))
        return _xent(jnp.mean(h, (1, 2)) @ p["fc"], labels)

    def step(p, mom, imgs, offs, flips, cuts, labels):
        x = jax.vmap(augment)(imgs, offs, flips, cuts)
        l, g = jax.value_and_grad(loss)(p, x, labels)
        mom = tmap(lambda m, g: 0.9 * m + g, mom, g)
        return l, _sgd(p, mom, 0.01), mom
    p = {"c1": S(3, 3, 3, 8), "c2": S(3, 3, 8, 16), "fc": S(16, 10)}
    return step, (p, p, S(16, 12, 12, 3), S(16, 2, dtype=I32), S(16, dtype=I32),
                  S(16, 2, dtype=I32), S(16, dtype=I32))


# ----------------------------------------------------------------------------- mixed precision


def bf16_params_kahan_summation_sgd():
    """Pure-bf16 training without f32 master weights: bf16 parameters and compute (layer norm
    statistics and the loss in f32), updates applied with Kahan-compensated summation whose
    compensation buffers are bf16 too."""
    def loss(p, x, labels):
        h = x.astype(BF16) @ p["w1"]
        hf = h.astype(F32)
        m = jnp.mean(hf, -1, keepdims=True)
        v = jnp.var(hf, -1, keepdims=True)
        h = ((hf - m) * lax.rsqrt(v + 1e-5)).astype(BF16) * p["g"]
        h = jax.nn.gelu(h) @ p["w2"]
        logits = (jax.nn.relu(h) @ p["w3"]).astype(F32)
        return _xent(logits, labels)

    def step(p, comp, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)

        def kahan(pp, c, gg):
            u = -0.01 * gg.astype(F32)
            y = (u - c.astype(F32)).astype(BF16)
            t = pp + y
            c = ((t - pp) - y)
            return t, c
        out = tmap(kahan, p, comp, g)
        p = tmap(lambda o: o[0], out, is_leaf=lambda o: isinstance(o, tuple))
        comp = tmap(lambda o: o[1], out, is_leaf=lambda o: isinstance(o, tuple))
        return l, p, comp
    p = {"w1": S(16, 64, dtype=BF16), "g": S(64, dtype=BF16), "w2": S(64, 32, dtype=BF16),
         "w3": S(32, 8, dtype=BF16)}
    return step, (p, p, S(32, 16), S(32, dtype=I32))


# ----------------------------------------------------------------------------- optimizers


def sophia_gnb_clipped_step():
    """Sophia-G: the Gauss-Newton-Bartlett Hessian-diagonal estimate (batch size times the
    squared gradient of the loss on labels sampled from the model, passed in) refreshed every
    tenth step under lax.cond; EMA of gradients, element-wise clipped preconditioned update,
    decoupled weight decay."""
    def loss(p, x, labels):
        h = jax.nn.gelu(x @ p["w1"] + p["b1"])
        h = jax.nn.gelu(h @ p["w2"] + p["b2"])
        return _xent(h @ p["w3"], labels)

    def step(p, m, hess, t, x, labels, sampled):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        m = tmap(lambda m, g: 0.965 * m + 0.035 * g, m, g)

        def refresh(hh):
            gs = jax.grad(loss)(p, x, sampled)
            return tmap(lambda h, gg: 0.99 * h + 0.01 * x.shape[0] * gg * gg, hh, gs)
        hess = lax.cond(t % 10 == 0, refresh, lambda hh: hh, hess)
        p = tmap(lambda p, m, h: p * (1 - 1e-4) - 1e-3 * jnp.clip(
            m / jnp.maximum(0.05 * h, 1e-12), -1.0, 1.0), p, m, hess)
        return l, p, m, hess
    p = {"w1": S(10, 32), "b1": S(32), "w2": S(32, 32), "b2": S(32), "w3": S(32, 6)}
    return step, (p, p, p, S(dtype=I32), S(16, 10), S(16, dtype=I32), S(16, dtype=I32))


def lookahead_radam_step():
    """Lookahead over RAdam on a 1-D convolutional text classifier: RAdam's variance
    rectification term chooses between the adaptive and the momentum-only update per step, and
    every fifth step a lax.cond moves the slow weights towards the fast ones and resets the
    fast weights."""
    def loss(p, tok, labels):
        x = p["emb"][tok]                                        # [B,T,E]
        h = lax.conv_general_dilated(x, p["k"], (1,), "SAME",
                                     dimension_numbers=("NWC", "WIO", "NWC"))
        h = jnp.max(jax.nn.relu(h + p["kb"]), 1)
        return _xent(h @ p["out"], labels)

    def step(fast, slow, m, v, t, tok, labels):
        l, g = jax.value_and_grad(loss)(fast, tok, labels)
        b1, b2, lr = 0.9, 0.999, 1e-3
        m = tmap(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = tmap(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        rho_inf = 2.0 / (1 - b2) - 1.0
        rho = rho_inf - 2.0 * t * b2 ** t / (1 - b2 ** t)
        r = jnp.sqrt(jnp.maximum((rho - 4) * (rho - 2) * rho_inf, 0.0)
                     / ((rho_inf - 4) * (rho_inf - 2) * jnp.maximum(rho, 1e-6)))
        mhat_c = 1.0 / (1 - b1 ** t)

        def upd(p, m, v):
            adaptive = r * m * mhat_c / (jnp.sqrt(v / (1 - b2 ** t)) + 1e-8)
            return p - lr * jnp.where(rho > 5.0, adaptive, m * mhat_c)
        fast = tmap(upd, fast, m, v)

        def sync(fs):
            f, s = fs
            s = tmap(lambda s, f: s + 0.5 * (f - s), s, f)
            return s, s
        fast, slow = lax.cond(jnp.mod(t, 5.0) == 0, sync, lambda fs: fs, (fast, slow))
        return l, fast, slow, m, v
    p = {"emb": S(50, 8), "k": S(3, 8, 16), "kb": S(16), "out": S(16, 3)}
    return step, (p, p, p, p, S(), S(16, 20, dtype=I32), S(16, dtype=I32))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [nerf_posenc_volume_render, kan_rbf_basis_mlp],
    "cnn": [res2net_hierarchical_split, octave_conv_hi_lo],
    "transformer": [performer_favor_causal_lm, funnel_pool_query_block],
    "rnn": [grud_decay_missing_values, mlstm_multiplicative_scan],
    "moe": [hierarchical_moe_two_level_gate],
    "vae": [gumbel_softmax_categorical_vae],
    "unet": [partial_conv_inpainting_unet],
    "gnn": [gine_edge_features_virtual_node],
    "quant": [qlora_int8_frozen_base],
    "remat": [remat_isab_set_transformer],
    "custom_vjp": [custom_vjp_safe_l2norm_cosface],
    "control": [act_ponder_fori_halting, deep_kmeans_lloyd_while],
    "sort": [trimmed_mean_per_example_grads],
    "fft": [spectral_pooling_rfft2_cnn],
    "linalg": [dagmm_cholesky_energy],
    "scatter_gather": [keypoint_heatmap_scatter_gather],
    "dynamic": [random_crop_cutout_dynamic_slice],
    "mixed": [bf16_params_kahan_summation_sgd],
    "optimizer": [sophia_gnb_clipped_step, lookahead_radam_step],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["performer_favor_causal_lm", "funnel_pool_query_block", "res2net_hierarchical_split",
           "mlstm_multiplicative_scan", "hierarchical_moe_two_level_gate",
           "partial_conv_inpainting_unet", "gine_edge_features_virtual_node",
           "qlora_int8_frozen_base", "remat_isab_set_transformer",
           "custom_vjp_safe_l2norm_cosface", "act_ponder_fori_halting",
           "bf16_params_kahan_summation_sgd"]
SHARDED_SET = ["nerf_posenc_volume_render", "performer_favor_causal_lm",
               "res2net_hierarchical_split", "hierarchical_moe_two_level_gate",
               "random_crop_cutout_dynamic_slice", "gumbel_softmax_categorical_vae",
               "remat_isab_set_transformer", "bf16_params_kahan_summation_sgd"]
