"""Eleventh fresh set: 25 JAX programs written by a helper on 2026-11-28 (a later session
of that day), kept outside the repository until its end figures were in RESULTS.md and
measured at that session's start and end code only. Same interface as zoo_programs.py::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh11_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh11_programs python benchmarks/accuracy.py --data DIR
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


# ----------------------------------------------------------------------------- mlp


def highway_mlp_adamw():
    """Three highway layers in a Python loop, trained with a hand-written AdamW step."""
    def loss(p, x, y):
        h = jnp.tanh(x @ p["w_in"])
        for i in range(3):
            t = jax.nn.sigmoid(h @ p["wt"][i] + p["bt"][i])
            hh = jax.nn.relu(h @ p["wh"][i] + p["bh"][i])
            h = t * hh + (1.0 - t) * h
        return jnp.mean((h @ p["w_out"] - y) ** 2)

    def step(p, m, v, t, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        b1, b2, lr, wd = 0.9, 0.999, 1e-3, 0.01
        m = tmap(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = tmap(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        c1 = 1.0 / (1.0 - b1 ** t)
        c2 = 1.0 / (1.0 - b2 ** t)
        p = tmap(lambda p, m, v: p - lr * (m * c1 / (jnp.sqrt(v * c2) + 1e-8) + wd * p), p, m, v)
        return l, p, m, v
    H = 16
    p = {"w_in": S(10, H), "wt": [S(H, H)] * 3, "bt": [S(H)] * 3, "wh": [S(H, H)] * 3,
         "bh": [S(H)] * 3, "w_out": S(H, 3)}
    return step, (p, p, p, S(), S(16, 10), S(16, 3))


def gmlp_spatial_gating_layers():
    """gMLP: three layers with a spatial gating unit (token-mixing dense on half the channels)."""
    def layer(q, x):
        h = _ln(x, q["g"], q["b"])
        h = jax.nn.gelu(h @ q["w1"])                         # [B,T,2F]
        u, v = jnp.split(h, 2, -1)
        v = _ln(v, q["sg"], q["sb"])
        v = jnp.einsum("ts,bsf->btf", q["wsp"], v) + q["bsp"][None, :, None]
        return x + (u * v) @ q["w2"]

    def loss(ps, x, y):
        h = x
        for q in ps["layers"]:
            h = layer(q, h)
        return jnp.mean((jnp.mean(h, 1) @ ps["head"] - y) ** 2)

    def step(ps, x, y):
        l, g = jax.value_and_grad(loss)(ps, x, y)
        return l, _sgd(ps, g)
    D, F, T = 12, 8, 6
    q = {"g": S(D), "b": S(D), "w1": S(D, 2 * F), "sg": S(F), "sb": S(F), "wsp": S(T, T),
         "bsp": S(T), "w2": S(F, D)}
    return step, ({"layers": [q, q, q], "head": S(D, 2)}, S(8, T, D), S(8, 2))


# ----------------------------------------------------------------------------- cnn


def densenet_block_concat():
    """Dense block: three BN-ReLU-conv layers, each concatenated onto the running features,
    then a 1x1 transition and 2x2 average pool."""
    def bn(x, g, b):
        m = jnp.mean(x, (0, 1, 2))
        v = jnp.var(x, (0, 1, 2))
        return (x - m) * lax.rsqrt(v + 1e-5) * g + b

    def loss(p, x):
        feats = x
        for i in range(3):
            h = jax.nn.relu(bn(feats, p["g"][i], p["b"][i]))
            feats = jnp.concatenate([feats, _conv(h, p["w"][i])], -1)
        h = _conv(jax.nn.relu(feats), p["trans"])
        h = lax.reduce_window(h, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
        return jnp.mean(h ** 2)

    def step(p, x):
        l, g = jax.value_and_grad(loss)(p, x)
        return l, _sgd(p, g)
    C, G = 4, 4
    p = {"g": [S(C + G * i) for i in range(3)], "b": [S(C + G * i) for i in range(3)],
         "w": [S(3, 3, C + G * i, G) for i in range(3)], "trans": S(1, 1, C + 3 * G, 8)}
    return step, (p, S(8, 8, 8, C))


def coordconv_spatial_softmax():
    """CoordConv (x/y coordinate channels appended) followed by a spatial soft-argmax keypoint
    head, regressing keypoints."""
    def loss(p, img, kp):
        n, hh, ww, _ = img.shape
        ys = jnp.linspace(-1.0, 1.0, hh)
        xs = jnp.linspace(-1.0, 1.0, ww)
        yy, xx = jnp.meshgrid(ys, xs, indexing="ij")
        coords = jnp.broadcast_to(jnp.stack([yy, xx], -1)[None], (n, hh, ww, 2))
        h = jax.nn.relu(_conv(jnp.concatenate([img, coords], -1), p["w1"]))
        h = _conv(h, p["w2"])                                # [N,H,W,K]
        k = h.shape[-1]
        att = jax.nn.softmax(h.reshape(n, hh * ww, k) / p["temp"], axis=1)
        ey = jnp.einsum("npk,p->nk", att, yy.reshape(-1))
        ex = jnp.einsum("npk,p->nk", att, xx.reshape(-1))
        pred = jnp.stack([ey, ex], -1)                       # [N,K,2]
        return jnp.mean((pred - kp) ** 2)
    p = {"w1": S(3, 3, 5, 8), "w2": S(3, 3, 8, 4), "temp": S()}
    return jax.value_and_grad(loss), (p, S(8, 10, 10, 3), S(8, 4, 2))


# ----------------------------------------------------------------------------- transformer


def encoder_decoder_cross_attn():
    """One encoder layer and one decoder layer (causal self-attention, cross-attention),
    tied output embedding, token cross-entropy."""
    def loss(p, src, tgt_in, tgt_out):
        e = src @ p["src_proj"]
        e = _ln(e + _mha(e, e, p, "enc_", 2), p["eg1"], p["eb1"])
        e = _ln(e + jax.nn.relu(e @ p["enc_f1"]) @ p["enc_f2"], p["eg2"], p["eb2"])
        d = p["emb"][tgt_in]
        d = _ln(d + _mha(d, d, p, "dself_", 2, causal=True), p["dg1"], p["db1"])
        d = _ln(d + _mha(d, e, p, "dx_", 2), p["dg2"], p["db2"])
        d = _ln(d + jax.nn.relu(d @ p["dec_f1"]) @ p["dec_f2"], p["dg3"], p["db3"])
        logits = d @ p["emb"].T
        logp = jax.nn.log_softmax(logits, -1)
        return -jnp.mean(jnp.take_along_axis(logp, tgt_out[..., None], -1))

    def step(p, src, tgt_in, tgt_out):
        l, g = jax.value_and_grad(loss)(p, src, tgt_in, tgt_out)
        return l, _sgd(p, g)
    D, V = 16, 20
    p = {"src_proj": S(6, D), "emb": S(V, D), "enc_f1": S(D, 32), "enc_f2": S(32, D),
         "dec_f1": S(D, 32), "dec_f2": S(32, D)}
    for pre in ("enc_", "dself_", "dx_"):
        for k in "qkvo":
            p[pre + k] = S(D, D)
    for n in ("eg1", "eg2", "dg1", "dg2", "dg3"):
        p[n] = S(D)
        p[n.replace("g", "b")] = S(D)
    return step, (p, S(8, 8, 6), S(8, 8, dtype=I32), S(8, 8, dtype=I32))


def linear_attention_elu_kernel():
    """Causal linear attention (elu+1 feature map) via cumulative sums of k (x) v outer products."""
    def loss(p, x):
        q = jax.nn.elu(x @ p["wq"]) + 1.0
        k = jax.nn.elu(x @ p["wk"]) + 1.0
        v = x @ p["wv"]
        kv = jnp.cumsum(jnp.einsum("btd,bte->btde", k, v), axis=1)
        ksum = jnp.cumsum(k, axis=1)
        num = jnp.einsum("btd,btde->bte", q, kv)
        den = jnp.einsum("btd,btd->bt", q, ksum)[..., None]
        o = (num / (den + 1e-6)) @ p["wo"]
        h = x + o
        return jnp.mean((h[:, 1:] - x[:, :-1]) ** 2)
    D = 8
    p = {"wq": S(D, D), "wk": S(D, D), "wv": S(D, D), "wo": S(D, D)}
    return jax.value_and_grad(loss), (p, S(8, 12, D))


# ----------------------------------------------------------------------------- rnn / scan


def quasi_rnn_fo_pool():
    """QRNN: causal width-2 convolution for z/f/o gates, then fo-pooling with lax.scan."""
    def loss(p, x, y):
        xp = jnp.pad(x, ((0, 0), (1, 0), (0, 0)))
        gates = lax.conv_general_dilated(xp, p["conv"], (1,), "VALID",
                                         dimension_numbers=("NWC", "WIO", "NWC"))
        z, f, o = jnp.split(gates, 3, -1)
        z, f, o = jnp.tanh(z), jax.nn.sigmoid(f), jax.nn.sigmoid(o)

        def body(c, inp):
            zt, ft, ot = inp
            c = ft * c + (1.0 - ft) * zt
            return c, ot * c
        c0 = jnp.zeros((x.shape[0], z.shape[-1]))
        _, hs = lax.scan(body, c0, tuple(jnp.swapaxes(a, 0, 1) for a in (z, f, o)))
        return jnp.mean((hs[-1] @ p["out"] - y) ** 2)
    H = 12
    return jax.value_and_grad(loss), ({"conv": S(2, 6, 3 * H), "out": S(H, 2)},
                                      S(8, 9, 6), S(8, 2))


def attention_decoder_scan():
    """Bahdanau-attention RNN decoder in lax.scan over teacher-forced target embeddings."""
    def loss(p, x, tgt_in, tgt_out):
        enc = jnp.tanh(x @ p["we"])                          # [B,S,H]
        enc_proj = enc @ p["wa"]
        emb = p["emb"][tgt_in]                               # [B,T,E]

        def body(h, e_t):
            s = jnp.tanh(enc_proj + (h @ p["wb"])[:, None, :]) @ p["va"]   # [B,S]
            a = jax.nn.softmax(s, -1)
            ctx = jnp.einsum("bs,bsh->bh", a, enc)
            h = jnp.tanh(jnp.concatenate([e_t, ctx, h], -1) @ p["wh"])
            return h, h @ p["wout"]
        h0 = jnp.mean(enc, 1)
        _, logits = lax.scan(body, h0, jnp.swapaxes(emb, 0, 1))
        logp = jax.nn.log_softmax(jnp.swapaxes(logits, 0, 1), -1)
        return -jnp.mean(jnp.take_along_axis(logp, tgt_out[..., None], -1))
    H, E, V = 12, 6, 10
    p = {"we": S(5, H), "wa": S(H, H), "wb": S(H, H), "va": S(H), "emb": S(V, E),
         "wh": S(E + 2 * H, H), "wout": S(H, V)}
    return jax.value_and_grad(loss), (p, S(8, 7, 5), S(8, 4, dtype=I32), S(8, 4, dtype=I32))


# ----------------------------------------------------------------------------- moe


def moe_shared_expert_gather():
    """Top-2 routing where each token gathers its experts' weights (w1[idx]), plus an always-on
    shared expert and a load-balancing auxiliary loss."""
    def loss(p, x, y):
        logits = x @ p["router"]                             # [T,E]
        probs = jax.nn.softmax(logits, -1)
        top_v, top_i = lax.top_k(logits, 2)
        gates = jax.nn.softmax(top_v, -1)                    # [T,2]
        w1 = p["w1"][top_i]                                  # [T,2,D,H]
        w2 = p["w2"][top_i]                                  # [T,2,H,D]
        h = jax.nn.gelu(jnp.einsum("td,tkdh->tkh", x, w1))
        out = jnp.einsum("tkh,tkhd->tkd", h, w2)
        routed = jnp.sum(gates[..., None] * out, 1)
        shared = jax.nn.gelu(x @ p["s1"]) @ p["s2"]
        e = logits.shape[-1]
        frac = jnp.mean(jax.nn.one_hot(top_i[:, 0], e), 0)
        aux = e * jnp.sum(frac * jnp.mean(probs, 0))
        return jnp.mean(((x + routed + shared) @ p["head"] - y) ** 2) + 0.01 * aux

    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return l, _sgd(p, g)
    D, H, E = 8, 16, 4
    p = {"router": S(D, E), "w1": S(E, D, H), "w2": S(E, H, D), "s1": S(D, H), "s2": S(H, D),
         "head": S(D, 2)}
    return step, (p, S(16, D), S(16, 2))


# ----------------------------------------------------------------------------- vae


def hierarchical_vae_two_latents():
    """Two-level VAE: q(z1|x), q(z2|z1), conditional prior p(z1|z2), Bernoulli decoder;
    reparameterisation noise passed in."""
    def gauss_kl(mu_q, lv_q, mu_p, lv_p):
        return 0.5 * jnp.sum(lv_p - lv_q + (jnp.exp(lv_q) + (mu_q - mu_p) ** 2) / jnp.exp(lv_p)
                             - 1.0, -1)

    def loss(p, x, eps1, eps2):
        h1 = jax.nn.relu(x @ p["e1"])
        mu1, lv1 = jnp.split(h1 @ p["e1o"], 2, -1)
        z1 = mu1 + jnp.exp(0.5 * lv1) * eps1
        h2 = jax.nn.relu(z1 @ p["e2"])
        mu2, lv2 = jnp.split(h2 @ p["e2o"], 2, -1)
        z2 = mu2 + jnp.exp(0.5 * lv2) * eps2
        pmu1, plv1 = jnp.split(jnp.tanh(z2 @ p["pr"]) @ p["pro"], 2, -1)
        logits = jax.nn.relu(z1 @ p["d1"]) @ p["d2"]
        rec = jnp.sum(jnp.maximum(logits, 0) - logits * x + jnp.log1p(jnp.exp(-jnp.abs(logits))), -1)
        kl2 = gauss_kl(mu2, lv2, jnp.zeros_like(mu2), jnp.zeros_like(lv2))
        kl1 = gauss_kl(mu1, lv1, pmu1, plv1)
        return jnp.mean(rec + kl1 + kl2)

    def step(p, x, eps1, eps2):
        l, g = jax.value_and_grad(loss)(p, x, eps1, eps2)
        return l, _sgd(p, g, 1e-3)
    X, H, Z1, Z2 = 12, 16, 6, 3
    p = {"e1": S(X, H), "e1o": S(H, 2 * Z1), "e2": S(Z1, H), "e2o": S(H, 2 * Z2),
         "pr": S(Z2, H), "pro": S(H, 2 * Z1), "d1": S(Z1, H), "d2": S(H, X)}
    return step, (p, S(16, X), S(16, Z1), S(16, Z2))


# ----------------------------------------------------------------------------- unet


def unet_timestep_two_levels():
    """Two-level diffusion U-Net: sinusoidal timestep embedding, GroupNorm + SiLU, mean-pool
    down, nearest (repeat) up with skip concatenation, noise-prediction MSE."""
    def gn(x, g, b, groups=2):
        n, hh, ww, c = x.shape
        xg = x.reshape(n, hh, ww, groups, c // groups)
        m = jnp.mean(xg, (1, 2, 4), keepdims=True)
        v = jnp.var(xg, (1, 2, 4), keepdims=True)
        return ((xg - m) * lax.rsqrt(v + 1e-5)).reshape(x.shape) * g + b

    def down(x):
        n, hh, ww, c = x.shape
        return x.reshape(n, hh // 2, 2, ww // 2, 2, c).mean((2, 4))

    def up(x):
        return jnp.repeat(jnp.repeat(x, 2, 1), 2, 2)

    def loss(p, x, t, noise):
        half = 4
        freqs = jnp.exp(-jnp.log(1000.0) * jnp.arange(half) / half)
        temb = jnp.concatenate([jnp.sin(t[:, None] * freqs), jnp.cos(t[:, None] * freqs)], -1)
        temb = jax.nn.silu(temb @ p["t1"]) @ p["t2"]          # [N,8]
        h1 = jax.nn.silu(gn(_conv(x, p["c1"]), p["g1"], p["b1"])) + temb[:, None, None, :]
        h2 = jax.nn.silu(gn(_conv(down(h1), p["c2"]), p["g2"], p["b2"]))
        mid = jax.nn.silu(_conv(down(h2), p["cm"]))
        u2 = jax.nn.silu(_conv(jnp.concatenate([up(mid), h2], -1), p["u2"]))
        u1 = jax.nn.silu(_conv(jnp.concatenate([up(u2), h1], -1), p["u1"]))
        return jnp.mean((_conv(u1, p["out"]) - noise) ** 2)
    p = {"t1": S(8, 16), "t2": S(16, 8), "c1": S(3, 3, 3, 8), "g1": S(8), "b1": S(8),
         "c2": S(3, 3, 8, 16), "g2": S(16), "b2": S(16), "cm": S(3, 3, 16, 16),
         "u2": S(3, 3, 32, 8), "u1": S(3, 3, 16, 8), "out": S(1, 1, 8, 3)}
    return jax.value_and_grad(loss), (p, S(4, 8, 8, 3), S(4), S(4, 8, 8, 3))


# ----------------------------------------------------------------------------- gnn


def gin_batched_graph_readout():
    """Two GIN layers (segment_sum aggregation, learnable eps) over a batch of graphs, graph-level
    sum readout by segment_sum over graph ids, regression loss."""
    def loss(p, h, src, dst, graph_id, y):
        n = h.shape[0]
        for i in range(2):
            agg = jax.ops.segment_sum(h[src], dst, num_segments=n)
            z = (1.0 + p["eps"][i]) * h + agg
            h = jax.nn.relu(jax.nn.relu(z @ p["a"][i]) @ p["b"][i])
        g = jax.ops.segment_sum(h, graph_id, num_segments=y.shape[0])
        return jnp.mean((g @ p["out"] - y) ** 2)

    def step(p, h, src, dst, graph_id, y):
        l, g = jax.value_and_grad(loss)(p, h, src, dst, graph_id, y)
        return l, _sgd(p, g)
    p = {"eps": [S(), S()], "a": [S(6, 12), S(12, 12)], "b": [S(12, 12), S(12, 12)],
         "out": S(12, 1)}
    return step, (p, S(24, 6), S(56, dtype=I32), S(56, dtype=I32), S(24, dtype=I32), S(4, 1))


# ----------------------------------------------------------------------------- quant


def lsq_learned_step_quant():
    """LSQ: 4-bit weights and unsigned 4-bit activations with learnable step sizes, gradient
    scaling and straight-through rounding."""
    def round_ste(x):
        return x + lax.stop_gradient(jnp.round(x) - x)

    def grad_scale(s, g):
        return s * g + lax.stop_gradient(s - s * g)

    def quant(x, s, qn, qp):
        s = grad_scale(s, 1.0 / jnp.sqrt(x.size * qp))
        return round_ste(jnp.clip(x / s, qn, qp)) * s

    def loss(p, x, y):
        w1 = quant(p["w1"], p["sw1"], -8, 7)
        a = jax.nn.relu(x @ w1)
        a = quant(a, p["sa"], 0, 15)
        w2 = quant(p["w2"], p["sw2"], -8, 7)
        return jnp.mean((a @ w2 - y) ** 2)

    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return l, _sgd(p, g, 0.01)
    p = {"w1": S(10, 16), "sw1": S(), "sa": S(), "w2": S(16, 4), "sw2": S()}
    return step, (p, S(16, 10), S(16, 4))


# ----------------------------------------------------------------------------- remat


def remat_combined_policy_block():
    """Two pre-LN transformer blocks, each under jax.checkpoint with a policy combining
    dots_with_no_batch_dims_saveable and save_only_these_names('attn_out')."""
    from jax.ad_checkpoint import checkpoint_name
    pol = jax.checkpoint_policies
    policy = pol.save_from_both_policies(pol.dots_with_no_batch_dims_saveable,
                                         pol.save_only_these_names("attn_out"))

    def block(q, x):
        h = _ln(x, q["g1"], q["b1"])
        a = checkpoint_name(_mha(h, h, q, "", 2, causal=True), "attn_out")
        x = x + a
        h = _ln(x, q["g2"], q["b2"])
        return x + jax.nn.gelu(h @ q["f1"]) @ q["f2"]

    def loss(ps, x):
        h = x
        for q in ps:
            h = jax.checkpoint(block, policy=policy)(q, h)
        return jnp.mean((h[:, 1:] - x[:, :-1]) ** 2)

    def step(ps, x):
        l, g = jax.value_and_grad(loss)(ps, x)
        return l, _sgd(ps, g)
    D = 16
    q = {"q": S(D, D), "k": S(D, D), "v": S(D, D), "o": S(D, D), "g1": S(D), "b1": S(D),
         "g2": S(D), "b2": S(D), "f1": S(D, 32), "f2": S(32, D)}
    return step, ([q, q], S(8, 8, D))


# ----------------------------------------------------------------------------- custom_vjp


@jax.custom_vjp
def _ln_cv(x, g, b):
    return _ln(x, g, b)


def _ln_cv_fwd(x, g, b):
    m = jnp.mean(x, -1, keepdims=True)
    rstd = lax.rsqrt(jnp.mean(jnp.square(x - m), -1, keepdims=True) + 1e-5)
    xhat = (x - m) * rstd
    return xhat * g + b, (xhat, rstd, g)


def _ln_cv_bwd(res, dy):
    xhat, rstd, g = res
    n = xhat.shape[-1]
    dxhat = dy * g
    dx = rstd / n * (n * dxhat - jnp.sum(dxhat, -1, keepdims=True)
                     - xhat * jnp.sum(dxhat * xhat, -1, keepdims=True))
    red = tuple(range(dy.ndim - 1))
    return dx, jnp.sum(dy * xhat, red), jnp.sum(dy, red)


_ln_cv.defvjp(_ln_cv_fwd, _ln_cv_bwd)


def custom_vjp_layernorm_backward():
    """A residual MLP whose LayerNorm has a hand-written custom_vjp backward."""
    def loss(p, x, y):
        h = x @ p["w0"]
        for i in range(2):
            h = h + jax.nn.relu(_ln_cv(h, p["g"][i], p["b"][i]) @ p["w"][i])
        return jnp.mean((h @ p["out"] - y) ** 2)
    p = {"w0": S(6, 16), "g": [S(16)] * 2, "b": [S(16)] * 2, "w": [S(16, 16)] * 2,
         "out": S(16, 2)}
    return jax.value_and_grad(loss), (p, S(16, 6), S(16, 2))


# ----------------------------------------------------------------------------- control


def cond_skip_stacked_layers_fori():
    """fori_loop over a stack of layer weights indexed dynamically; lax.cond skips a layer when
    its gate is non-positive."""
    def loss(p, x, gate):
        def body(i, h):
            w = p["w"][i]
            b = p["b"][i]
            return lax.cond(gate[i] > 0, lambda h: h + jnp.tanh(h @ w + b), lambda h: h, h)
        h = lax.fori_loop(0, p["w"].shape[0], body, x)
        return jnp.mean(h ** 2)
    return jax.value_and_grad(loss), ({"w": S(4, 16, 16), "b": S(4, 16)}, S(8, 16), S(4))


def while_backtracking_line_search():
    """One gradient step of logistic regression with an Armijo backtracking line search in a
    while_loop (no outer differentiation)."""
    def f(w, x, y):
        z = x @ w
        return jnp.mean(jnp.maximum(z, 0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z))))

    def step(w, x, y):
        fw, g = jax.value_and_grad(f)(w, x, y)
        gg = jnp.sum(g * g)

        def cond(c):
            i, a = c
            return (i < 20) & (f(w - a * g, x, y) > fw - 1e-4 * a * gg)

        def body(c):
            i, a = c
            return i + 1, a * 0.5
        n, a = lax.while_loop(cond, body, (0, jnp.asarray(4.0, F32)))
        return w - a * g, a, n
    return step, (S(7), S(32, 7), S(32))


# ----------------------------------------------------------------------------- sort / top_k


def topk_knn_soft_vote():
    """Learned-metric k-NN: embed queries and support, lax.top_k over negative distances, gather
    support labels, softmax-weighted vote, NLL."""
    def loss(w, q, s, s_lab, q_lab):
        eq, es = q @ w, s @ w
        d = jnp.sum(eq ** 2, -1)[:, None] + jnp.sum(es ** 2, -1)[None] - 2 * eq @ es.T
        vals, idx = lax.top_k(-d, 5)                          # [Q,5]
        lab = s_lab[idx]
        wts = jax.nn.softmax(vals, -1)
        probs = jnp.sum(wts[..., None] * jax.nn.one_hot(lab, 4), 1)
        return -jnp.mean(jnp.log(jnp.take_along_axis(probs, q_lab[:, None], 1) + 1e-6))
    return jax.value_and_grad(loss), (S(6, 8), S(8, 6), S(32, 6), S(32, dtype=I32),
                                      S(8, dtype=I32))


# ----------------------------------------------------------------------------- fft


def hyena_implicit_filter_fft():
    """Hyena-style operator: an MLP over positional features generates a long filter (with an
    exponential decay window) applied by zero-padded rfft/irfft convolution, with gating."""
    def loss(p, x):
        b, t, d = x.shape
        pos = jnp.arange(t, dtype=F32) / t
        feats = jnp.stack([pos, jnp.sin(6.28 * pos), jnp.cos(6.28 * pos)], -1)   # [T,3]
        filt = jnp.sin(feats @ p["f1"]) @ p["f2"]                                # [T,D]
        filt = filt * jnp.exp(-jnp.abs(p["decay"]) * jnp.arange(t, dtype=F32)[:, None])
        u = x @ p["win"]
        v, g1, g2 = jnp.split(u, 3, -1)
        v = v * g1
        n = 2 * t
        y = jnp.fft.irfft(jnp.fft.rfft(v, n=n, axis=1) * jnp.fft.rfft(filt, n=n, axis=0)[None],
                          n=n, axis=1)[:, :t]
        y = (y + v * p["skip"]) * g2
        return jnp.mean((y @ p["wout"] - x) ** 2)
    D = 8
    p = {"f1": S(3, 16), "f2": S(16, D), "decay": S(D), "win": S(D, 3 * D), "skip": S(D),
         "wout": S(D, D)}
    return jax.value_and_grad(loss), (p, S(4, 16, D))


# ----------------------------------------------------------------------------- linalg


def procrustes_svd_alignment():
    """Orthogonal Procrustes: project, SVD of the cross-covariance, rotation U V^T, alignment
    loss differentiated through the SVD."""
    def loss(a, x, y):
        px = x @ a
        u, _, vt = jnp.linalg.svd(px.T @ y, full_matrices=False)
        r = u @ vt
        return jnp.mean((px @ r - y) ** 2) + 1e-3 * jnp.sum(a ** 2)
    return jax.value_and_grad(loss), (S(5, 4), S(20, 5), S(20, 4))


# ----------------------------------------------------------------------------- scatter/gather


def voxelize_scatter_mean():
    """Point features scattered into a 4x4x4 voxel grid (scatter-add sums and counts, mean),
    then a 3-D convolution; trained end to end through the scatter."""
    def loss(p, pts, target):
        f = jax.nn.relu(pts @ p["w"])                         # [P,C]
        ijk = jnp.clip(jnp.floor(pts * 4).astype(I32), 0, 3)
        flat = ijk[:, 0] * 16 + ijk[:, 1] * 4 + ijk[:, 2]
        c = f.shape[-1]
        sums = jnp.zeros((64, c)).at[flat].add(f)
        cnt = jnp.zeros((64,)).at[flat].add(1.0)
        grid = (sums / jnp.maximum(cnt, 1.0)[:, None]).reshape(1, 4, 4, 4, c)
        h = lax.conv_general_dilated(grid, p["k"], (1, 1, 1), "SAME",
                                     dimension_numbers=("NDHWC", "DHWIO", "NDHWC"))
        return jnp.mean((h[0] - target) ** 2)
    return jax.value_and_grad(loss), ({"w": S(3, 8), "k": S(2, 2, 2, 8, 4)}, S(64, 3),
                                      S(4, 4, 4, 4))


# ----------------------------------------------------------------------------- dynamic slices


def paste_patches_dynamic_update():
    """A generator makes five patches that a fori_loop alpha-blends into a canvas at dynamic
    offsets (dynamic_slice + dynamic_update_slice); loss against a target image."""
    def loss(w, z, offs, target):
        patches = jnp.tanh(z @ w).reshape(z.shape[0], 4, 4, 3)

        def body(i, canvas):
            oy, ox = offs[i, 0], offs[i, 1]
            cur = lax.dynamic_slice(canvas, (oy, ox, 0), (4, 4, 3))
            new = 0.5 * cur + 0.5 * lax.dynamic_index_in_dim(patches, i, 0, keepdims=False)
            return lax.dynamic_update_slice(canvas, new, (oy, ox, 0))
        canvas = lax.fori_loop(0, z.shape[0], body, jnp.zeros_like(target))
        return jnp.mean((canvas - target) ** 2)
    return jax.value_and_grad(loss), (S(6, 48), S(5, 6), S(5, 2, dtype=I32), S(16, 16, 3))


# ----------------------------------------------------------------------------- mixed precision


def bf16_preferred_f32_accum_adam():
    """f32 master weights cast to bf16, bf16 matmuls accumulating in f32
    (preferred_element_type), f32 loss, Adam update of the masters."""
    def loss(p, x, y):
        xb = x.astype(BF16)
        h = jnp.einsum("bd,dh->bh", xb, p["w1"].astype(BF16), preferred_element_type=F32)
        h = jax.nn.gelu(h + p["b1"]).astype(BF16)
        o = jnp.einsum("bh,hk->bk", h, p["w2"].astype(BF16), preferred_element_type=F32)
        return jnp.mean((o - y) ** 2)

    def step(p, m, v, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        m = tmap(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v = tmap(lambda v, g: 0.99 * v + 0.01 * g * g, v, g)
        p = tmap(lambda p, m, v: p - 1e-3 * m / (jnp.sqrt(v) + 1e-8), p, m, v)
        return l, p, m, v
    p = {"w1": S(16, 32), "b1": S(32), "w2": S(32, 4)}
    return step, (p, p, p, S(16, 16, dtype=BF16), S(16, 4))


# ----------------------------------------------------------------------------- optimizers


def adan_optimizer_step():
    """Adan: gradient, gradient-difference and squared-Nesterov-gradient moments, decoupled
    weight decay, on a two-layer MLP."""
    def loss(p, x, y):
        return jnp.mean((jnp.tanh(x @ p["a"]) @ p["b"] - y) ** 2)

    def step(p, st, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        b1, b2, b3, lr, wd = 0.02, 0.08, 0.01, 1e-3, 0.02
        diff = tmap(lambda g, gp: g - gp, g, st["g_prev"])
        m = tmap(lambda m, g: (1 - b1) * m + b1 * g, st["m"], g)
        v = tmap(lambda v, d: (1 - b2) * v + b2 * d, st["v"], diff)
        n = tmap(lambda n, g, d: (1 - b3) * n + b3 * (g + (1 - b2) * d) ** 2, st["n"], g, diff)
        p = tmap(lambda p, m, v, n: (p - lr * (m + (1 - b2) * v) / (jnp.sqrt(n) + 1e-8))
                 / (1 + lr * wd), p, m, v, n)
        return l, p, {"m": m, "v": v, "n": n, "g_prev": g}
    p = {"a": S(8, 16), "b": S(16, 3)}
    return step, (p, {"m": p, "v": p, "n": p, "g_prev": p}, S(16, 8), S(16, 3))


def rmsprop_centered_ema_polyak():
    """Centered RMSProp with momentum on a small 1-D conv model, plus a Polyak (EMA) copy of the
    parameters."""
    def loss(p, x, y):
        h = lax.conv_general_dilated(x, p["k"], (1,), "SAME",
                                     dimension_numbers=("NWC", "WIO", "NWC"))
        h = jnp.max(jax.nn.relu(h), 1)
        return jnp.mean((h @ p["w"] - y) ** 2)

    def step(p, ema, ms, mg, mom, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        rho, mu, lr = 0.9, 0.9, 1e-3
        ms = tmap(lambda a, g: rho * a + (1 - rho) * g * g, ms, g)
        mg = tmap(lambda a, g: rho * a + (1 - rho) * g, mg, g)
        mom = tmap(lambda b, g, s, m: mu * b + lr * g * lax.rsqrt(s - m * m + 1e-7),
                   mom, g, ms, mg)
        p = tmap(lambda p, b: p - b, p, mom)
        ema = tmap(lambda e, p: 0.99 * e + 0.01 * p, ema, p)
        return l, p, ema, ms, mg, mom
    p = {"k": S(3, 4, 8), "w": S(8, 2)}
    return step, (p, p, p, p, p, S(8, 12, 4), S(8, 2))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [highway_mlp_adamw, gmlp_spatial_gating_layers],
    "cnn": [densenet_block_concat, coordconv_spatial_softmax],
    "transformer": [encoder_decoder_cross_attn, linear_attention_elu_kernel],
    "rnn": [quasi_rnn_fo_pool, attention_decoder_scan],
    "moe": [moe_shared_expert_gather],
    "vae": [hierarchical_vae_two_latents],
    "unet": [unet_timestep_two_levels],
    "gnn": [gin_batched_graph_readout],
    "quant": [lsq_learned_step_quant],
    "remat": [remat_combined_policy_block],
    "custom_vjp": [custom_vjp_layernorm_backward],
    "control": [cond_skip_stacked_layers_fori, while_backtracking_line_search],
    "sort": [topk_knn_soft_vote],
    "fft": [hyena_implicit_filter_fft],
    "linalg": [procrustes_svd_alignment],
    "scatter_gather": [voxelize_scatter_mean],
    "dynamic": [paste_patches_dynamic_update],
    "mixed": [bf16_preferred_f32_accum_adam],
    "optimizer": [adan_optimizer_step, rmsprop_centered_ema_polyak],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["encoder_decoder_cross_attn", "linear_attention_elu_kernel", "quasi_rnn_fo_pool",
           "moe_shared_expert_gather", "unet_timestep_two_levels", "gin_batched_graph_readout",
           "lsq_learned_step_quant", "remat_combined_policy_block",
           "custom_vjp_layernorm_backward", "cond_skip_stacked_layers_fori",
           "topk_knn_soft_vote", "bf16_preferred_f32_accum_adam"]
SHARDED_SET = ["highway_mlp_adamw", "encoder_decoder_cross_attn", "densenet_block_concat",
               "gmlp_spatial_gating_layers", "moe_shared_expert_gather",
               "hierarchical_vae_two_latents", "remat_combined_policy_block",
               "bf16_preferred_f32_accum_adam"]
