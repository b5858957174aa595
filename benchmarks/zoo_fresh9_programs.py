"""Ninth fresh set ("fresh 9"): 28 JAX programs written by a helper for a held-out measurement
in the 2026-11-28 session, kept outside the repository until its end figures were in
RESULTS.md (tuned on from then on). Same interface as zoo_programs.py::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh9_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh9_programs python benchmarks/accuracy.py --data DIR

Every program compiles under JAX 0.4.30 and the current JAX.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

F32 = jnp.float32
BF16 = jnp.bfloat16
I32 = jnp.int32


def S(*shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


def _tmap(f, *t):
    return jax.tree_util.tree_map(f, *t)


def _ln(x, eps=1e-5):
    m = jnp.mean(x, -1, keepdims=True)
    v = jnp.mean((x - m) ** 2, -1, keepdims=True)
    return (x - m) * lax.rsqrt(v + eps)


def _huber(r, d=1.0):
    a = jnp.abs(r)
    return jnp.where(a < d, 0.5 * r * r, d * (a - 0.5 * d))


# ----------------------------------------------------------------------------- cnn
def conv3d_instance_norm():
    """Video block: 3-D conv (NDHWC), instance norm, strided 3-D conv, SGD update."""
    dn = ("NDHWC", "DHWIO", "NDHWC")

    def inorm(h, g, b):
        m = jnp.mean(h, (1, 2, 3), keepdims=True)
        v = jnp.var(h, (1, 2, 3), keepdims=True)
        return (h - m) * lax.rsqrt(v + 1e-5) * g + b

    def loss(p, x, y):
        h = lax.conv_general_dilated(x, p["w1"], (1, 1, 1), "SAME", dimension_numbers=dn)
        h = jax.nn.leaky_relu(inorm(h, p["g"], p["b"]), 0.1)
        h = lax.conv_general_dilated(h, p["w2"], (1, 2, 2), "SAME", dimension_numbers=dn)
        logits = jnp.mean(h, (1, 2, 3))
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, -1))

    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return _tmap(lambda a, b: a - 0.1 * b, p, g), l
    p = {"w1": S(3, 3, 3, 3, 6), "g": S(6), "b": S(6), "w2": S(1, 3, 3, 6, 5)}
    return step, (p, S(8, 4, 6, 6, 3), S(8, 5))


def lrn_strided_maxpool():
    """AlexNet-style: conv, local response norm across channels (reduce_window on C),
    overlapping 3x3/2 max pool, average pool, dense."""
    def loss(p, x):
        h = lax.conv_general_dilated(x, p["w"], (2, 2), "VALID",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = jax.nn.relu(h)
        sq = lax.reduce_window(h * h, 0.0, lax.add, (1, 1, 1, 5), (1, 1, 1, 1),
                               ((0, 0), (0, 0), (0, 0), (2, 2)))
        h = h / (2.0 + 1e-4 * sq) ** 0.75
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "VALID")
        h = lax.reduce_window(h, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "VALID") / 4.0
        return jnp.mean((h.reshape(h.shape[0], -1) @ p["wd"]) ** 2)
    return jax.value_and_grad(loss), ({"w": S(5, 5, 3, 8), "wd": S(8 * 2 * 2, 4)}, S(4, 17, 17, 3))


# ----------------------------------------------------------------------------- transformer
def qk_norm_softcap_attention():
    """Gemma-style: per-head QK layer norm, partial rotary, tanh logit soft-capping, causal."""
    def rope(x, half):
        t = x.shape[1]
        inv = 1.0 / (10000 ** (jnp.arange(0, half, 2) / half))
        ang = jnp.arange(t)[:, None] * inv[None]
        c, s = jnp.cos(ang)[None, :, None], jnp.sin(ang)[None, :, None]
        xr, xp = x[..., :half], x[..., half:]
        a, b = xr[..., ::2], xr[..., 1::2]
        rot = jnp.stack([a * c - b * s, a * s + b * c], -1).reshape(xr.shape)
        return jnp.concatenate([rot, xp], -1)

    def loss(p, x):
        b, t, d = x.shape
        q = (x @ p["wq"]).reshape(b, t, 2, 8)
        k = (x @ p["wk"]).reshape(b, t, 2, 8)
        v = (x @ p["wv"]).reshape(b, t, 2, 8)
        q, k = rope(_ln(q) * p["qg"], 4), rope(_ln(k) * p["kg"], 4)
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(8.0)
        s = 30.0 * jnp.tanh(s / 30.0)
        s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -jnp.inf)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), v).reshape(b, t, d)
        return jnp.mean((x + o @ p["wo"]) ** 2)
    p = {"wq": S(16, 16), "wk": S(16, 16), "wv": S(16, 16), "wo": S(16, 16), "qg": S(8), "kg": S(8)}
    return jax.value_and_grad(loss), (p, S(8, 8, 16))


def mla_latent_kv_decode():
    """DeepSeek-style multi-head latent attention, one decode step: the new token's KV is
    compressed to a latent written into the cache at `pos`; keys/values are up-projected."""
    def step(p, x, cache, pos):
        lat = _ln(x @ p["wdkv"])                                   # (B, L)
        cache = lax.dynamic_update_slice(cache, lat[:, None, :], (0, pos, 0))
        k = jnp.einsum("btl,lhd->bthd", cache, p["wuk"])
        v = jnp.einsum("btl,lhd->bthd", cache, p["wuv"])
        q = jnp.einsum("bd,dhe->bhe", x, p["wq"])
        s = jnp.einsum("bhe,bthe->bht", q, k) / jnp.sqrt(4.0)
        valid = jnp.arange(cache.shape[1]) <= pos
        s = jnp.where(valid[None, None], s, -1e30)
        o = jnp.einsum("bht,bthe->bhe", jax.nn.softmax(s, -1), v).reshape(x.shape[0], -1)
        logits = (x + o @ p["wo"]) @ p["emb"].T
        return jnp.argmax(logits, -1).astype(I32), cache
    p = {"wdkv": S(12, 6), "wuk": S(6, 3, 4), "wuv": S(6, 3, 4), "wq": S(12, 3, 4),
         "wo": S(12, 12), "emb": S(20, 12)}
    return step, (p, S(4, 12), S(4, 10, 6), S(dtype=I32))


def prefix_lm_zloss_xent():
    """Prefix-LM: bidirectional over each row's prefix, causal after; next-token cross entropy
    with label smoothing, z-loss and an ignore index; one Adam step."""
    def loss(p, toks, plen):
        b, t = toks.shape
        x = p["emb"][toks]
        i = jnp.arange(t)
        m = (i[None, :, None] >= i[None, None, :]) | (i[None, None, :] < plen[:, None, None])
        s = jnp.einsum("btd,bsd->bts", x @ p["wq"], x @ p["wk"]) / 4.0
        a = jax.nn.softmax(jnp.where(m, s, -1e9), -1)
        h = x + jnp.einsum("bts,bsd->btd", a, x @ p["wv"])
        logits = _ln(h) @ p["emb"].T
        tgt = toks[:, 1:]
        lg = logits[:, :-1]
        lse = jax.nn.logsumexp(lg, -1)
        logp = lg - lse[..., None]
        nll = -jnp.take_along_axis(logp, tgt[..., None], -1)[..., 0]
        smooth = -jnp.mean(logp, -1)
        per = 0.9 * nll + 0.1 * smooth + 1e-4 * lse ** 2
        keep = (tgt != 0) & (i[None, 1:] >= plen[:, None])
        return jnp.sum(per * keep) / jnp.maximum(jnp.sum(keep), 1)

    def step(p, m, v, toks, plen):
        l, g = jax.value_and_grad(loss)(p, toks, plen)
        m = _tmap(lambda a, b: 0.9 * a + 0.1 * b, m, g)
        v = _tmap(lambda a, b: 0.999 * a + 0.001 * b * b, v, g)
        p = _tmap(lambda a, b, c: a - 1e-3 * b / (jnp.sqrt(c) + 1e-8), p, m, v)
        return p, m, v, l
    p = {"emb": S(24, 16), "wq": S(16, 16), "wk": S(16, 16), "wv": S(16, 16)}
    return step, (p, p, p, S(8, 7, dtype=I32), S(8, dtype=I32))


# ----------------------------------------------------------------------------- rnn
def lru_complex_assoc_scan():
    """Linear Recurrent Unit: complex diagonal recurrence (exp-parametrised), associative
    scan over time in complex64, real part projected out."""
    def loss(p, x):
        lam = jnp.exp(-jnp.exp(p["nu"]) + 1j * jnp.exp(p["theta"]))      # (N,) complex
        gamma = jnp.sqrt(1 - jnp.abs(lam) ** 2)
        bu = (x @ lax.complex(p["br"], p["bi"])) * gamma                 # (B, T, N)
        a = jnp.broadcast_to(lam, bu.shape)

        def comb(l, r):
            return r[0] * l[0], r[0] * l[1] + r[1]
        _, h = lax.associative_scan(comb, (a, bu), axis=1)
        y = jnp.real(h @ lax.complex(p["cr"], p["ci"])) + x * p["d"]
        return jnp.mean(jax.nn.gelu(y) ** 2)
    p = {"nu": S(8), "theta": S(8), "br": S(4, 8), "bi": S(4, 8), "cr": S(8, 4), "ci": S(8, 4),
         "d": S(4)}
    return jax.value_and_grad(loss), (p, S(8, 12, 4))


# ----------------------------------------------------------------------------- moe
def soft_moe_slots():
    """Soft MoE: dispatch weights softmax over tokens, combine weights softmax over slots,
    per-expert MLPs on the slot mixtures."""
    def loss(p, x):
        logits = jnp.einsum("btd,dn->btn", x, p["phi"])                 # n = experts * slots
        disp = jax.nn.softmax(logits, 1)
        comb = jax.nn.softmax(logits, 2)
        slots = jnp.einsum("btn,btd->bnd", disp, x).reshape(x.shape[0], 4, 2, -1)
        h = jax.nn.gelu(jnp.einsum("besd,edf->besf", slots, p["w1"]))
        out = jnp.einsum("besf,efd->besd", h, p["w2"]).reshape(x.shape[0], 8, -1)
        y = jnp.einsum("btn,bnd->btd", comb, out)
        return jnp.mean((y - x) ** 2)
    return jax.value_and_grad(loss), ({"phi": S(12, 8), "w1": S(4, 12, 16), "w2": S(4, 16, 12)},
                                      S(8, 6, 12))


def hash_routed_sorted_moe():
    """Hash-routed MoE: expert = multiplicative hash of the token id; tokens sorted by expert,
    each multiplied by its expert's gathered weights, then scattered back to order."""
    def loss(p, x, ids):
        e = ((ids.astype(jnp.uint32) * jnp.uint32(2654435761)) >> 28) % 4
        e = e.astype(I32)
        order = jnp.argsort(e)
        xs, es = x[order], e[order]
        h = jax.nn.relu(jnp.einsum("td,tdf->tf", xs, p["w1"][es]))
        ys = jnp.einsum("tf,tfd->td", h, p["w2"][es])
        y = jnp.zeros_like(x).at[order].set(ys)
        load = jax.ops.segment_sum(jnp.ones_like(ids, F32), e, 4)
        return jnp.mean((y + x) ** 2) + 1e-3 * jnp.var(load)
    return jax.value_and_grad(loss), ({"w1": S(4, 10, 12), "w2": S(4, 12, 10)},
                                      S(24, 10), S(24, dtype=I32))


# ----------------------------------------------------------------------------- vae / flow
def realnvp_coupling_flow():
    """RealNVP: alternating-mask affine coupling layers, tanh-bounded log scales, log det,
    standard-normal negative log likelihood."""
    def coupling(p, x, mask):
        xm = x * mask
        h = jnp.tanh(xm @ p["w"] + p["b"])
        s = jnp.tanh(h @ p["ws"]) * (1 - mask)
        t = (h @ p["wt"]) * (1 - mask)
        return xm + (1 - mask) * (x * jnp.exp(s) + t), jnp.sum(s, -1)

    def loss(ps, x):
        mask = (jnp.arange(x.shape[-1]) % 2).astype(F32)
        ld = 0.0
        for i, p in enumerate(ps):
            x, l = coupling(p, x, mask if i % 2 == 0 else 1 - mask)
            ld = ld + l
        logpz = -0.5 * jnp.sum(x ** 2, -1) - 0.5 * x.shape[-1] * jnp.log(2 * jnp.pi)
        return -jnp.mean(logpz + ld)
    lay = {"w": S(6, 16), "b": S(16), "ws": S(16, 6), "wt": S(16, 6)}
    return jax.value_and_grad(loss), ([lay, lay, lay, lay], S(16, 6))


# ----------------------------------------------------------------------------- unet
def attention_gate_unet_resize():
    """Attention U-Net level: strided-conv down, bilinear jax.image.resize up, additive
    attention gate on the skip, concat, conv, dice-style loss."""
    dn = ("NHWC", "HWIO", "NHWC")

    def conv(x, w, s=1):
        return lax.conv_general_dilated(x, w, (s, s), "SAME", dimension_numbers=dn)

    def loss(p, x, y):
        e = jax.nn.relu(conv(x, p["e"]))                               # (B, 8, 8, 6)
        d = jax.nn.relu(conv(e, p["d"], 2))                            # (B, 4, 4, 8)
        up = jax.image.resize(d, e.shape[:3] + (d.shape[-1],), "bilinear")
        att = jax.nn.sigmoid(jax.nn.relu(e @ p["ge"] + up @ p["gd"]) @ p["psi"])
        h = jnp.concatenate([e * att, up], -1)
        o = jax.nn.sigmoid(conv(h, p["o"]))
        inter = jnp.sum(o * y, (1, 2, 3))
        return 1 - jnp.mean((2 * inter + 1) / (jnp.sum(o, (1, 2, 3)) + jnp.sum(y, (1, 2, 3)) + 1))
    p = {"e": S(3, 3, 2, 6), "d": S(3, 3, 6, 8), "ge": S(6, 4), "gd": S(8, 4), "psi": S(4, 1),
         "o": S(3, 3, 14, 1)}
    return jax.value_and_grad(loss), (p, S(4, 8, 8, 2), S(4, 8, 8, 1))


# ----------------------------------------------------------------------------- gnn
def mpnn_gru_readout():
    """MPNN: edge network messages from gathered sender features and edge features,
    segment_sum to receivers, GRU node update (2 rounds), segment_max graph readout."""
    def gru(p, h, m):
        zr = jax.nn.sigmoid(m @ p["uz"] + h @ p["wz"])
        z, r = jnp.split(zr, 2, -1)
        n = jnp.tanh(m @ p["un"] + (r * h) @ p["wn"])
        return (1 - z) * h + z * n

    def loss(p, h, ef, snd, rcv, gid, y):
        for _ in range(2):
            msg = jax.nn.relu(jnp.concatenate([h[snd], ef], -1) @ p["we"])
            agg = jax.ops.segment_sum(msg, rcv, h.shape[0])
            h = gru(p, h, agg)
        g = jax.ops.segment_max(h, gid, 4)
        return jnp.mean((g @ p["wo"] - y) ** 2)
    p = {"we": S(8 + 3, 8), "uz": S(8, 16), "wz": S(8, 16), "un": S(8, 8), "wn": S(8, 8),
         "wo": S(8, 1)}
    return jax.value_and_grad(loss), (p, S(16, 8), S(40, 3), S(40, dtype=I32), S(40, dtype=I32),
                                      S(16, dtype=I32), S(4, 1))


# ----------------------------------------------------------------------------- quant
def fp8_e5m2_backward_cast():
    """FP8 training matmul with a custom VJP: forward operands scaled to e4m3, the incoming
    gradient scaled to e5m2, dots accumulate in f32."""
    E4, E5 = jnp.float8_e4m3fn, jnp.float8_e5m2

    def scale(x, mx):
        return jnp.maximum(jnp.max(jnp.abs(x)), 1e-6) / mx

    @jax.custom_vjp
    def mm(x, w):
        return fwd(x, w)[0]

    def fwd(x, w):
        sx, sw = scale(x, 448.0), scale(w, 448.0)
        xq, wq = (x / sx).astype(E4), (w / sw).astype(E4)
        y = lax.dot(xq, wq, preferred_element_type=F32) * (sx * sw)
        return y, (xq, wq, sx, sw)

    def bwd(res, g):
        xq, wq, sx, sw = res
        sg = scale(g, 57344.0)
        gq = (g / sg).astype(E5)
        dx = lax.dot_general(gq, wq, (((1,), (1,)), ((), ())), preferred_element_type=F32) * (sg * sw)
        dw = lax.dot_general(xq, gq, (((0,), (0,)), ((), ())), preferred_element_type=F32) * (sx * sg)
        return dx, dw
    mm.defvjp(fwd, bwd)

    def loss(p, x):
        h = jax.nn.gelu(mm(x, p["w1"]))
        return jnp.mean(mm(h, p["w2"]) ** 2)
    return jax.value_and_grad(loss), ({"w1": S(16, 32), "w2": S(32, 16)}, S(8, 16))


# ----------------------------------------------------------------------------- remat
def remat_except_names_scan():
    """Layers under lax.scan, each rematerialised with save_anything_except_these_names:
    the named attention scores and MLP hidden are recomputed, everything else saved."""
    from jax.ad_checkpoint import checkpoint_name
    pol = jax.checkpoint_policies.save_anything_except_these_names("scores", "hidden")

    def layer(x, p):
        s = checkpoint_name(jnp.einsum("btd,bsd->bts", x @ p["wq"], x @ p["wk"]) / 3.0, "scores")
        x = x + jnp.einsum("bts,bsd->btd", jax.nn.softmax(s, -1), x)
        h = checkpoint_name(jax.nn.gelu(x @ p["w1"]), "hidden")
        return _ln(x + h @ p["w2"]), None

    def loss(ps, x):
        x, _ = lax.scan(jax.checkpoint(layer, policy=pol), x, ps)
        return jnp.mean(x ** 2)
    ps = {"wq": S(3, 10, 10), "wk": S(3, 10, 10), "w1": S(3, 10, 20), "w2": S(3, 20, 10)}
    return jax.value_and_grad(loss), (ps, S(4, 5, 10))


# ----------------------------------------------------------------------------- custom_vjp
def sparsemax_custom_vjp():
    """Sparsemax attention with a hand-written VJP: sort-based threshold forward, support-set
    projection backward."""
    @jax.custom_vjp
    def sparsemax(z):
        return _fwd(z)[0]

    def _fwd(z):
        zs = jnp.flip(jnp.sort(z, -1), -1)
        k = jnp.arange(1, z.shape[-1] + 1, dtype=z.dtype)
        cs = jnp.cumsum(zs, -1)
        supp = 1 + k * zs > cs
        kz = jnp.sum(supp, -1, keepdims=True)
        tau = (jnp.take_along_axis(cs, kz.astype(I32) - 1, -1) - 1) / kz
        out = jnp.maximum(z - tau, 0)
        return out, out

    def _bwd(out, g):
        s = (out > 0).astype(g.dtype)
        v = jnp.sum(g * s, -1, keepdims=True) / jnp.sum(s, -1, keepdims=True)
        return (s * (g - v),)
    sparsemax.defvjp(_fwd, _bwd)

    def loss(p, x):
        s = jnp.einsum("btd,bsd->bts", x @ p["wq"], x @ p["wk"]) / 3.0
        o = jnp.einsum("bts,bsd->btd", sparsemax(s), x @ p["wv"])
        return jnp.mean((o - x) ** 2)
    return jax.value_and_grad(loss), ({"wq": S(9, 9), "wk": S(9, 9), "wv": S(9, 9)}, S(4, 7, 9))


def deq_fixed_point_vjp():
    """Deep equilibrium layer: z* = tanh(W z* + U x) by a while-loop fixed-point iteration;
    the custom VJP solves the adjoint fixed point with another while loop."""
    def f(w, z, ux):
        return jnp.tanh(z @ w + ux)

    def solve(g, z0):
        def cond(c):
            return (c[2] < 30) & (jnp.max(jnp.abs(c[0] - c[1])) > 1e-4)

        def body(c):
            return g(c[0]), c[0], c[2] + 1
        return lax.while_loop(cond, body, (g(z0), z0, 0))[0]

    @jax.custom_vjp
    def deq(w, ux):
        return solve(lambda z: f(w, z, ux), jnp.zeros_like(ux))

    def deq_fwd(w, ux):
        z = deq(w, ux)
        return z, (w, ux, z)

    def deq_bwd(res, g):
        w, ux, z = res
        _, vjp = jax.vjp(lambda zz: f(w, zz, ux), z)
        u = solve(lambda uu: vjp(uu)[0] + g, jnp.zeros_like(g))
        _, vjp_p = jax.vjp(lambda ww, xx: f(ww, z, xx), w, ux)
        return vjp_p(u)
    deq.defvjp(deq_fwd, deq_bwd)

    def loss(p, x, y):
        z = deq(0.3 * p["w"], x @ p["u"])
        return jnp.mean((z @ p["o"] - y) ** 2)
    return jax.value_and_grad(loss), ({"w": S(10, 10), "u": S(6, 10), "o": S(10, 2)},
                                      S(8, 6), S(8, 2))


# ----------------------------------------------------------------------------- control
def hmc_leapfrog_fori():
    """One HMC transition for Bayesian logistic regression: gradient of the log density inside
    a leapfrog fori_loop, Metropolis accept/reject with a random uniform."""
    def logp(w, x, y):
        z = x @ w
        return jnp.sum(y * z - jax.nn.softplus(z)) - 0.5 * jnp.sum(w * w)

    def step(w, x, y, key):
        k1, k2 = jax.random.split(key)
        m = jax.random.normal(k1, w.shape)
        g = jax.grad(logp)

        def leap(_, c):
            q, pm = c
            pm = pm + 0.05 * g(q, x, y)
            q = q + 0.1 * pm
            pm = pm + 0.05 * g(q, x, y)
            return q, pm
        q, pm = lax.fori_loop(0, 5, leap, (w, m))
        h0 = -logp(w, x, y) + 0.5 * jnp.sum(m * m)
        h1 = -logp(q, x, y) + 0.5 * jnp.sum(pm * pm)
        acc = jnp.log(jax.random.uniform(k2)) < h0 - h1
        return jnp.where(acc, q, w), acc
    return step, (S(6), S(32, 6), S(32), S(2, dtype=jnp.uint32))


def vmap_while_per_example():
    """Per-example Newton root finding (x^3 + a x - b = 0) under vmap, so the while loop has a
    batched predicate and per-example trip counts; a small net reads the roots."""
    def root(a, b):
        def cond(c):
            return (c[1] < 20) & (jnp.abs(c[0] ** 3 + a * c[0] - b) > 1e-5)

        def body(c):
            x = c[0]
            return x - (x ** 3 + a * x - b) / (3 * x * x + a), c[1] + 1
        x, n = lax.while_loop(cond, body, (b / (jnp.abs(a) + 1.0), 0))
        return x, n

    def f(p, a, b):
        x, n = jax.vmap(jax.vmap(root))(jnp.abs(a) + 0.5, b)
        return jnp.tanh(x @ p["w"]) @ p["v"], jnp.max(n)
    return f, ({"w": S(5, 8), "v": S(8, 2)}, S(8, 5), S(8, 5))


# ----------------------------------------------------------------------------- sort
def approx_topk_retrieval():
    """Retrieval-augmented readout: lax.approx_max_k over query/database scores (indices
    not differentiated), gathered neighbours, softmax over their scores."""
    def loss(p, q, db, y):
        qe = _ln(q @ p["wq"])
        scores = qe @ db.T
        _, idx = lax.approx_max_k(lax.stop_gradient(scores), 4)
        nb = db[idx]                                                 # (B, 4, D)
        s = jnp.einsum("bd,bkd->bk", qe, nb)
        r = jnp.einsum("bk,bkd->bd", jax.nn.softmax(s, -1), nb)
        return jnp.mean((r @ p["wo"] - y) ** 2)
    return jax.value_and_grad(loss), ({"wq": S(10, 8), "wo": S(8, 3)}, S(8, 10), S(64, 8), S(8, 3))


def unique_counts_weighting():
    """Token-frequency reweighted loss: jnp.unique with a static size, counts and inverse
    indices, inverse-frequency weights gathered back per token."""
    def loss(p, toks, y):
        u, inv, cnt = jnp.unique(toks, size=16, fill_value=-1, return_inverse=True,
                                 return_counts=True)
        w = 1.0 / jnp.maximum(cnt, 1).astype(F32)
        wt = w[inv.reshape(toks.shape)]
        h = jnp.tanh(p["emb"][toks] @ p["w"])
        per = jnp.sum((h - y) ** 2, -1)
        del u
        return jnp.sum(per * wt) / jnp.sum(wt)
    return jax.value_and_grad(loss), ({"emb": S(32, 6), "w": S(6, 4)}, S(30, dtype=I32), S(30, 4))


# ----------------------------------------------------------------------------- loss
def siglip_sigmoid_loss():
    """SigLIP: L2-normalised image/text towers, all-pairs sigmoid loss with a learnable
    temperature (log) and bias."""
    def loss(p, img, txt):
        zi = img @ p["wi"]
        zt = jnp.tanh(txt @ p["wt1"]) @ p["wt2"]
        zi = zi / jnp.linalg.norm(zi, axis=-1, keepdims=True)
        zt = zt / jnp.linalg.norm(zt, axis=-1, keepdims=True)
        logits = zi @ zt.T * jnp.exp(p["t"]) + p["b"]
        lab = 2 * jnp.eye(img.shape[0]) - 1
        return -jnp.sum(jax.nn.log_sigmoid(lab * logits)) / img.shape[0]
    p = {"wi": S(12, 8), "wt1": S(10, 16), "wt2": S(16, 8), "t": S(), "b": S()}
    return jax.value_and_grad(loss), (p, S(16, 12), S(16, 10))


def cox_partial_likelihood():
    """Cox proportional hazards: risks from an MLP, patients sorted by descending time,
    reverse cumulative logsumexp risk sets, censored events masked."""
    def loss(p, x, t, ev):
        r = (jnp.tanh(x @ p["w"]) @ p["v"])[:, 0]
        o = jnp.argsort(-t)
        rs, es = r[o], ev[o]
        lse = lax.cumlogsumexp(rs)
        return -jnp.sum((rs - lse) * es) / jnp.maximum(jnp.sum(es), 1.0)
    return jax.value_and_grad(loss), ({"w": S(5, 8), "v": S(8, 1)}, S(24, 5), S(24), S(24))


# ----------------------------------------------------------------------------- fft
def fno_spectral_conv():
    """Fourier Neural Operator layer: rfft2, keep the low modes, complex per-mode channel
    mixing (weights built with lax.complex), irfft2, plus a pointwise path."""
    def loss(p, x):
        b, h, w, c = x.shape
        xf = jnp.fft.rfft2(x, axes=(1, 2))                          # (B, H, W//2+1, C)
        wc = lax.complex(p["wr"], p["wi"])                           # (3, 3, C, C)
        top = jnp.einsum("bxyc,xycd->bxyd", xf[:, :3, :3], wc)
        out = jnp.zeros((b, h, w // 2 + 1, c), jnp.complex64).at[:, :3, :3].set(top)
        y = jnp.fft.irfft2(out, s=(h, w), axes=(1, 2)) + x @ p["pw"]
        return jnp.mean(jax.nn.gelu(y) ** 2)
    return jax.value_and_grad(loss), ({"wr": S(3, 3, 4, 4), "wi": S(3, 3, 4, 4), "pw": S(4, 4)},
                                      S(4, 8, 8, 4))


# ----------------------------------------------------------------------------- linalg
def svd_nuclear_norm_grad():
    """Low-rank regulariser: batched thin SVD, nuclear norm plus a rank-2 reconstruction
    error, differentiated through the SVD."""
    def loss(w, x):
        m = jnp.einsum("bi,ij->bij", x, w).reshape(x.shape[0], 4, -1)
        u, s, vt = jnp.linalg.svd(m, full_matrices=False)
        rec = jnp.einsum("bik,bk,bkj->bij", u[..., :2], s[..., :2], vt[..., :2, :])
        return jnp.mean(jnp.sum(s, -1)) + jnp.mean((m - rec) ** 2)
    return jax.value_and_grad(loss), (S(6, 12), S(4, 6))


def coo_spmm_segment():
    """Sparse (COO) times dense in both directions: gather rows by column index, scale by
    the nonzero values, segment_sum to rows; then the transpose product by the other index."""
    def loss(vals, dense, row, col, y):
        ax = jax.ops.segment_sum(vals[:, None] * dense[col], row, 12)        # (12, F)
        h = jax.nn.relu(ax)
        atx = jax.ops.segment_sum(vals[:, None] * h[row], col, dense.shape[0])
        return jnp.mean((atx - y) ** 2)
    return jax.value_and_grad(loss, argnums=(0, 1)), (S(30), S(10, 5), S(30, dtype=I32),
                                                     S(30, dtype=I32), S(10, 5))


# ----------------------------------------------------------------------------- dynamic
def speculative_decode_accept():
    """Speculative decoding verify step: target logits for draft tokens, greedy agreement,
    accepted prefix length by cumprod, accepted tokens plus a correction written into the
    output buffer at a dynamic offset."""
    def step(p, draft, ctx, buf, pos):
        h = jnp.tanh(p["emb"][draft] + ctx[:, None, :])              # (B, K, D)
        logits = h @ p["emb"].T
        tgt = jnp.argmax(logits, -1).astype(I32)                     # (B, K)
        ok = jnp.cumprod((tgt[:, :-1] == draft[:, 1:]).astype(I32), -1)
        n = jnp.sum(ok, -1)                                          # (B,)
        fix = jnp.take_along_axis(tgt, n[:, None], -1)
        k = draft.shape[1]
        keep = jnp.arange(k)[None] < (n[:, None] + 1)
        toks = jnp.where(keep, draft, 0)
        toks = jnp.where(jnp.arange(k)[None] == (n[:, None] + 1), fix, toks)
        buf = lax.dynamic_update_slice(buf, toks, (0, pos))
        return buf, pos + jnp.min(n) + 1
    return step, ({"emb": S(20, 8)}, S(4, 5, dtype=I32), S(4, 8), S(4, 16, dtype=I32), S(dtype=I32))


def dynamic_roll_shift_window():
    """Data-dependent alignment: a traced circular shift (jnp.roll with a computed shift) and
    a dynamic_slice_in_dim window starting at the argmax energy frame."""
    def loss(p, x, ref):
        e = jnp.sum(x ** 2, (0, 2))
        c = jnp.argmax(jnp.correlate(jnp.sum(ref, 1), jnp.sum(x, (0, 2)), "full"))
        shift = c - (x.shape[1] - 1)
        xs = jnp.roll(x, shift, axis=1)
        start = jnp.clip(jnp.argmax(e) - 2, 0, x.shape[1] - 5)
        win = lax.dynamic_slice_in_dim(xs, start, 5, axis=1)
        return jnp.mean((jnp.tanh(win @ p["w"]) @ p["v"]) ** 2)
    return jax.value_and_grad(loss), ({"w": S(6, 8), "v": S(8, 2)}, S(8, 12, 6), S(12, 6))


# ----------------------------------------------------------------------------- mlp
def sam_two_pass_step():
    """Sharpness-Aware Minimisation: gradient, normalised ascent perturbation, second gradient
    at the perturbed point, SGD with momentum."""
    def loss(p, x, y):
        h = jax.nn.swish(x @ p["w1"] + p["b1"])
        return jnp.mean(_huber(h @ p["w2"] - y))

    def step(p, mom, x, y):
        g = jax.grad(loss)(p, x, y)
        gn = jnp.sqrt(sum(jnp.sum(a * a) for a in jax.tree_util.tree_leaves(g)))
        pe = _tmap(lambda a, b: a + 0.05 * b / (gn + 1e-12), p, g)
        l, g2 = jax.value_and_grad(loss)(pe, x, y)
        mom = _tmap(lambda m, b: 0.9 * m + b, mom, g2)
        return _tmap(lambda a, m: a - 0.01 * m, p, mom), mom, l
    p = {"w1": S(10, 16), "b1": S(16), "w2": S(16, 4)}
    return step, (p, p, S(16, 10), S(16, 4))


def lion_bf16_momentum():
    """Lion optimiser with bf16 momentum state and decoupled weight decay, plus an EMA copy
    of the parameters; bf16 forward, f32 master weights."""
    def loss(p, x, y):
        pb = _tmap(lambda a: a.astype(BF16), p)
        h = jax.nn.gelu(x.astype(BF16) @ pb["w1"])
        o = (h @ pb["w2"]).astype(F32)
        return jnp.mean(jax.nn.softplus(-y * o))

    def step(p, m, ema, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        upd = _tmap(lambda mm, gg: jnp.sign(0.9 * mm.astype(F32) + 0.1 * gg), m, g)
        p = _tmap(lambda a, u: a - 1e-4 * (u + 0.1 * a), p, upd)
        m = _tmap(lambda mm, gg: (0.99 * mm.astype(F32) + 0.01 * gg).astype(BF16), m, g)
        ema = _tmap(lambda e, a: 0.999 * e + 0.001 * a, ema, p)
        return p, m, ema, l
    p = {"w1": S(12, 24), "w2": S(24, 4)}
    mb = {"w1": S(12, 24, dtype=BF16), "w2": S(24, 4, dtype=BF16)}
    return step, (p, mb, p, S(16, 12), S(16, 4))


PROGRAMS: dict[str, tuple[str, object]] = {}
for _fam, _fns in {
    "cnn": [conv3d_instance_norm, lrn_strided_maxpool],
    "transformer": [qk_norm_softcap_attention, mla_latent_kv_decode, prefix_lm_zloss_xent],
    "rnn": [lru_complex_assoc_scan],
    "moe": [soft_moe_slots, hash_routed_sorted_moe],
    "vae": [realnvp_coupling_flow],
    "unet": [attention_gate_unet_resize],
    "gnn": [mpnn_gru_readout],
    "quant": [fp8_e5m2_backward_cast],
    "remat": [remat_except_names_scan],
    "custom_vjp": [sparsemax_custom_vjp, deq_fixed_point_vjp],
    "control": [hmc_leapfrog_fori, vmap_while_per_example],
    "sort": [approx_topk_retrieval, unique_counts_weighting],
    "loss": [siglip_sigmoid_loss, cox_partial_likelihood],
    "fft": [fno_spectral_conv],
    "linalg": [svd_nuclear_norm_grad],
    "scatter_gather": [coo_spmm_segment],
    "dynamic": [speculative_decode_accept, dynamic_roll_shift_window],
    "mlp": [sam_two_pass_step, lion_bf16_momentum],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["conv3d_instance_norm", "qk_norm_softcap_attention", "mla_latent_kv_decode",
           "prefix_lm_zloss_xent", "lru_complex_assoc_scan", "soft_moe_slots",
           "attention_gate_unet_resize", "fp8_e5m2_backward_cast", "remat_except_names_scan",
           "sparsemax_custom_vjp", "fno_spectral_conv", "siglip_sigmoid_loss"]
SHARDED_SET = ["qk_norm_softcap_attention", "soft_moe_slots", "siglip_sigmoid_loss",
               "conv3d_instance_norm", "lion_bf16_momentum", "prefix_lm_zloss_xent",
               "mpnn_gru_readout", "sam_two_pass_step"]
