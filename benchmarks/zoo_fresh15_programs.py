"""Fifteenth fresh set: 25 JAX programs written by a helper on 2026-11-28 (fifth session of
that day). It was kept outside the repository as a held-out set, measured unseen at the start
and end of that session, and committed on 2026-11-28 (sixth session), when its misses were
first read and tuned on. Same interface as zoo_programs.py::

    HLODIFF_ZOO_PROGRAMS=zoo_fresh15_programs python benchmarks/zoo.py --out DIR
    HLODIFF_ZOO_PROGRAMS=zoo_fresh15_programs python benchmarks/accuracy.py --data DIR
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


# ----------------------------------------------------------------------------- mlp


def siren_sine_implicit_image_fit():
    """SIREN implicit neural representation: pixel coordinates through four sine layers
    (omega_0 = 30) to RGB; the loss fits the colours and, Poisson-style, the spatial image
    gradients, so the coordinate Jacobian of the network (jax.jacrev vmapped over the pixels)
    is differentiated again for the parameter update; Adam."""
    def net(p, c):                                                     # c: [2]
        h = jnp.sin(30.0 * (c @ p["w0"] + p["b0"]))
        for i in range(1, 4):
            h = jnp.sin(30.0 * (h @ p["w%d" % i] + p["b%d" % i]))
        return h @ p["wo"] + p["bo"]

    def loss(p, coords, rgb, grad_t):
        f = lambda c: net(p, c)
        out = jax.vmap(f)(coords)                                      # [N,3]
        jac = jax.vmap(jax.jacrev(f))(coords)                          # [N,3,2]
        return jnp.mean(jnp.square(out - rgb)) + 0.05 * jnp.mean(jnp.square(jac - grad_t))

    def step(p, m, v, t, coords, rgb, grad_t):
        l, g = jax.value_and_grad(loss)(p, coords, rgb, grad_t)
        p, m, v = _adam(p, m, v, g, t, lr=1e-4)
        return l, p, m, v
    H = 48
    p = {"w0": S(2, H), "b0": S(H), "wo": S(H, 3), "bo": S(3)}
    for i in range(1, 4):
        p["w%d" % i], p["b%d" % i] = S(H, H), S(H)
    return step, (p, p, p, S(), S(128, 2), S(128, 3), S(128, 3, 2))


def dcn_v2_low_rank_cross_ctr():
    """DCN-V2 click-through model: four categorical embeddings concatenated with log-scaled
    dense features form x0; three cross layers each a gated mixture of two low-rank experts
    x_{l+1} = sum_e g_e(x_l) * x0 * (U_e tanh(C_e tanh(V_e^T x_l)) + b) + x_l, in parallel with a
    deep ReLU tower; BCE on the concatenation; embeddings trained with Adagrad, dense weights
    with Adam."""
    def loss(p, cat, dense, y):
        emb = [p["emb%d" % i][cat[:, i]] for i in range(4)]
        x0 = jnp.concatenate(emb + [jnp.log1p(jnp.abs(dense))], -1)
        x = x0
        for l in range(3):
            gate = jax.nn.softmax(x @ p["gate"][l], -1)                # [B,E]
            lo = jnp.tanh(jnp.einsum("bd,edr->ber", x, p["V"][l]))
            lo = jnp.tanh(jnp.einsum("ber,ers->bes", lo, p["C"][l]))
            up = jnp.einsum("bes,eds->bed", lo, p["U"][l]) + p["cb"][l][None, None]
            x = jnp.einsum("be,bed->bd", gate, x0[:, None] * up) + x
        d = jax.nn.relu(x0 @ p["d1"] + p["db1"])
        d = jax.nn.relu(d @ p["d2"] + p["db2"])
        z = (jnp.concatenate([x, d], -1) @ p["out"])[:, 0]
        return jnp.mean(_bce(z, y))

    def step(p, m, v, t, cat, dense, y):
        l, g = jax.value_and_grad(loss)(p, cat, dense, y)
        newp, newm, newv = {}, {}, {}
        dense_keys = [k for k in p if not k.startswith("emb")]
        dp, dm, dv = _adam({k: p[k] for k in dense_keys}, {k: m[k] for k in dense_keys},
                           {k: v[k] for k in dense_keys}, {k: g[k] for k in dense_keys}, t)
        newp.update(dp)
        newm.update(dm)
        newv.update(dv)
        for k in p:
            if k.startswith("emb"):
                acc = v[k] + g[k] * g[k]
                newv[k] = acc
                newm[k] = m[k]
                newp[k] = p[k] - 0.05 * g[k] / (jnp.sqrt(acc) + 1e-7)
        return l, newp, newm, newv
    E, Dd, R, NE = 8, 6, 8, 2
    d0 = 4 * E + Dd
    p = {"emb0": S(24, E), "emb1": S(16, E), "emb2": S(40, E), "emb3": S(12, E),
         "gate": S(3, d0, NE), "V": S(3, NE, d0, R), "C": S(3, NE, R, R), "U": S(3, NE, d0, R),
         "cb": S(3, d0), "d1": S(d0, 64), "db1": S(64), "d2": S(64, 32), "db2": S(32),
         "out": S(d0 + 32, 1)}
    return step, (p, p, p, S(), S(16, 4, dtype=I32), S(16, Dd), S(16))


# ----------------------------------------------------------------------------- cnn


def repvgg_multibranch_bn_block():
    """RepVGG at training time: every block sums a 3x3 conv+BN branch, a 1x1 conv+BN branch
    and (when shapes allow) an identity BN branch before the ReLU; four blocks, two of them
    strided; the batch statistics of every BN are folded into running averages returned as
    state; cross-entropy, Nesterov momentum SGD with L2 weight decay."""
    strides = (2, 1, 2, 1)

    def block(q, x, stride):
        y3, s3 = _bn(_conv(x, q["k3"], stride), q["g3"], q["b3"])
        y1, s1 = _bn(_conv(x, q["k1"], stride), q["g1"], q["b1"])
        y, st = y3 + y1, {"s3": s3, "s1": s1}
        if "gi" in q:
            yi, si = _bn(x, q["gi"], q["bi"])
            y, st["si"] = y + yi, si
        return jax.nn.relu(y), st

    def loss(p, x, labels):
        h, stats = x, []
        for q, s in zip(p["blocks"], strides):
            h, st = block(q, h, s)
            stats.append(st)
        logits = jnp.mean(h, (1, 2)) @ p["fc"] + p["fcb"]
        return _xent(logits, labels), stats

    def step(p, mom, run, x, labels):
        (l, stats), g = jax.value_and_grad(loss, has_aux=True)(p, x, labels)
        run = tmap(lambda r, s: 0.9 * r + 0.1 * s, run, lax.stop_gradient(stats))
        g = tmap(lambda g, w: g + 1e-4 * w, g, p)
        mom = tmap(lambda m, g: 0.9 * m + g, mom, g)
        p = tmap(lambda w, g, m: w - 0.1 * (g + 0.9 * m), p, g, mom)
        return l, p, mom, run

    def blk(cin, cout, ident):
        q = {"k3": S(3, 3, cin, cout), "g3": S(cout), "b3": S(cout), "k1": S(1, 1, cin, cout),
             "g1": S(cout), "b1": S(cout)}
        st = {"s3": (S(cout), S(cout)), "s1": (S(cout), S(cout))}
        if ident:
            q["gi"], q["bi"] = S(cin), S(cin)
            st["si"] = (S(cin), S(cin))
        return q, st
    specs = [blk(3, 16, False), blk(16, 16, True), blk(16, 32, False), blk(32, 32, True)]
    p = {"blocks": [q for q, _ in specs], "fc": S(32, 10), "fcb": S(10)}
    run = [st for _, st in specs]
    return step, (p, p, run, S(16, 16, 16, 3), S(16, dtype=I32))


def fcos_centerness_giou_head():
    """FCOS anchor-free detector on one feature level: a small strided backbone, GroupNorm
    classification and regression towers, per-location sigmoid focal loss over the classes,
    exp(scale * x) * stride distances to the box sides trained with a GIoU loss, and a
    centerness branch trained by BCE against sqrt(min/max) targets, both on positive locations,
    the GIoU weighted by the centerness target; momentum SGD with clipping."""
    def gn(x, g, b, groups=4):
        n, h, w, c = x.shape
        xr = x.reshape(n, h, w, groups, c // groups)
        m = jnp.mean(xr, (1, 2, 4), keepdims=True)
        v = jnp.var(xr, (1, 2, 4), keepdims=True)
        return ((xr - m) * lax.rsqrt(v + 1e-5)).reshape(n, h, w, c) * g + b

    def loss(p, x, cls_t, box_t):
        f = jax.nn.relu(_conv(x, p["stem"], 2))                        # [N,8,8,16]
        f = jax.nn.relu(_conv(f, p["c2"]))                              # [N,8,8,32]
        ct = jax.nn.relu(gn(_conv(f, p["ct"]), p["cg"], p["cb"]))
        rt = jax.nn.relu(gn(_conv(f, p["rt"]), p["rg"], p["rb"]))
        cls = _conv(ct, p["cls"])                                       # [N,8,8,C]
        ctr = _conv(rt, p["ctr"])[..., 0]
        reg = jnp.exp(p["scale"] * _conv(rt, p["reg"])) * 2.0          # [N,8,8,4] ltrb
        C = cls.shape[-1]
        pos = (cls_t > 0).astype(F32)
        npos = jnp.maximum(jnp.sum(pos), 1.0)
        oh = jax.nn.one_hot(cls_t - 1, C)
        pr = jax.nn.sigmoid(cls)
        pt = pr * oh + (1 - pr) * (1 - oh)
        focal = (0.25 * oh + 0.75 * (1 - oh)) * jnp.square(1 - pt) * _bce(cls, oh)
        l_cls = jnp.sum(focal) / npos
        box_t = jnp.where(pos[..., None] > 0, box_t, 1.0)                 # dummy boxes off-object
        tl, tt, tr, tb = [box_t[..., i] for i in range(4)]
        pl, pt_, pr_, pb = [reg[..., i] for i in range(4)]
        area_t = (tl + tr) * (tt + tb)
        area_p = (pl + pr_) * (pt_ + pb)
        iw = jnp.minimum(pl, tl) + jnp.minimum(pr_, tr)
        ih = jnp.minimum(pt_, tt) + jnp.minimum(pb, tb)
        inter = iw * ih
        union = area_t + area_p - inter
        enc = (jnp.maximum(pl, tl) + jnp.maximum(pr_, tr)) * (jnp.maximum(pt_, tt) + jnp.maximum(pb, tb))
        giou = inter / (union + 1e-7) - (enc - union) / (enc + 1e-7)
        ctr_t = jnp.sqrt(jnp.minimum(tl, tr) / jnp.maximum(jnp.maximum(tl, tr), 1e-6)
                         * jnp.minimum(tt, tb) / jnp.maximum(jnp.maximum(tt, tb), 1e-6))
        ctr_t = lax.stop_gradient(ctr_t)
        l_reg = jnp.sum(pos * ctr_t * (1 - giou)) / jnp.maximum(jnp.sum(pos * ctr_t), 1e-6)
        l_ctr = jnp.sum(pos * _bce(ctr, ctr_t)) / npos
        return l_cls + l_reg + l_ctr

    def step(p, mom, x, cls_t, box_t):
        l, g = jax.value_and_grad(loss)(p, x, cls_t, box_t)
        g = _global_clip(tmap(lambda g, w: g + 1e-4 * w, g, p), 3.0)
        mom = tmap(lambda m, g: 0.9 * m + g, mom, g)
        return l, _sgd(p, mom, 0.01), mom
    p = {"stem": S(3, 3, 3, 16), "c2": S(3, 3, 16, 32), "ct": S(3, 3, 32, 32), "cg": S(32),
         "cb": S(32), "rt": S(3, 3, 32, 32), "rg": S(32), "rb": S(32), "cls": S(3, 3, 32, 4),
         "ctr": S(3, 3, 32, 1), "reg": S(3, 3, 32, 4), "scale": S()}
    return step, (p, p, S(8, 16, 16, 3), S(8, 8, 8, dtype=I32), S(8, 8, 8, 4))


# ----------------------------------------------------------------------------- transformer


def deberta_disentangled_relpos_attention():
    """DeBERTa encoder for masked-language modelling: disentangled attention whose scores sum
    content-to-content, content-to-position (queries against the shared relative-position
    embeddings, gathered at the clipped bucket delta(i, j)) and position-to-content (keys against
    position queries, gathered at delta(j, i) and transposed), scaled by 1/sqrt(3d); post-LN
    layers with a padding mask; an enhanced mask decoder re-runs the last layer with absolute
    positions added; tied MLM head; AdamW with linear warmup."""
    def layer(q, x, rel, idx, pad, H):
        b, t, d = x.shape
        dh = d // H
        qc = (x @ q["q"]).reshape(b, t, H, dh)
        kc = (x @ q["k"]).reshape(b, t, H, dh)
        vc = (x @ q["v"]).reshape(b, t, H, dh)
        R = rel.shape[0]
        qr = (rel @ q["q"]).reshape(R, H, dh)
        kr = (rel @ q["k"]).reshape(R, H, dh)
        ix = jnp.broadcast_to(idx, (b, H, t, t))
        c2c = jnp.einsum("bqhd,bkhd->bhqk", qc, kc)
        c2p = jnp.take_along_axis(jnp.einsum("bqhd,rhd->bhqr", qc, kr), ix, -1)
        p2c = jnp.take_along_axis(jnp.einsum("bkhd,rhd->bhkr", kc, qr), ix, -1)
        s = (c2c + c2p + jnp.swapaxes(p2c, -1, -2)) / jnp.sqrt(3.0 * dh)
        s = jnp.where(pad[:, None, None, :] > 0.5, s, -1e9)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), vc).reshape(b, t, d)
        x = _ln(x + o @ q["o"], q["g1"], q["b1"])
        return _ln(x + jax.nn.gelu(x @ q["f1"]) @ q["f2"], q["g2"], q["b2"])

    def loss(p, tok, mask, pad):
        b, T = tok.shape
        V = p["emb"].shape[0]
        k = p["rel"].shape[0] // 2
        idx = jnp.clip(jnp.arange(T)[:, None] - jnp.arange(T)[None, :] + k, 0, 2 * k - 1)
        inp = jnp.where(mask > 0.5, V - 1, tok)
        x = _ln(p["emb"][inp], p["ge"], p["be"])
        rel = _ln(p["rel"], p["gr"], p["br"])
        for q in p["layers"]:
            x = layer(q, x, rel, idx, pad, 4)
        x = layer(p["layers"][-1], x + p["abs"], rel, idx, pad, 4)        # enhanced mask decoder
        h = _ln(jax.nn.gelu(x @ p["head"]), p["gh"], p["bh"])
        logits = h @ p["emb"].T + p["bias"]
        nll = -jnp.take_along_axis(jax.nn.log_softmax(logits, -1), tok[..., None], -1)[..., 0]
        w = (mask > 0.5).astype(F32) * pad
        return jnp.sum(nll * w) / jnp.maximum(jnp.sum(w), 1.0)

    def step(p, m, v, t, tok, mask, pad):
        l, g = jax.value_and_grad(loss)(p, tok, mask, pad)
        lr = 1e-3 * jnp.minimum(1.0, t / 100.0)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=lr, b2=0.98, wd=0.01)
        return l, p, m, v
    D, T, V, K = 32, 16, 40, 4
    q = _attn_params({"g1": S(D), "b1": S(D), "g2": S(D), "b2": S(D), "f1": S(D, 64),
                      "f2": S(64, D)}, "", D)
    p = {"emb": S(V, D), "ge": S(D), "be": S(D), "rel": S(2 * K, D), "gr": S(D), "br": S(D),
         "layers": [q, dict(q)], "abs": S(T, D), "head": S(D, D), "gh": S(D), "bh": S(D),
         "bias": S(V)}
    return step, (p, p, p, S(), S(8, T, dtype=I32), S(8, T), S(8, T))


def mae_shuffled_patch_reconstruction():
    """Masked autoencoder pre-training on 16x16 images: patchify into 4x4 patches, shuffle per
    image by argsort of passed-in noise and keep a quarter, encode the visible patches (no class
    token) through two pre-LN blocks, append mask tokens in a narrower decoder and
    unshuffle them by the inverse permutation (take_along_axis), predict per-patch normalised
    pixels and take the MSE over masked patches only; AdamW(0.9, 0.95)."""
    def patchify(x, P):
        n, h, w, c = x.shape
        x = x.reshape(n, h // P, P, w // P, P, c).transpose(0, 1, 3, 2, 4, 5)
        return x.reshape(n, (h // P) * (w // P), P * P * c)

    def block(q, x, H):
        h = _ln(x, q["g1"], q["b1"])
        x = x + _mha(h, h, q, "", H)
        return x + jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"]) @ q["f2"]

    def loss(p, imgs, noise):
        patches = patchify(imgs, 4)                                     # [N,16,48]
        n, L, _ = patches.shape
        keep = L // 4
        ids_shuffle = jnp.argsort(noise, 1)
        ids_restore = jnp.argsort(ids_shuffle, 1)
        x = patches @ p["pe"] + p["peb"] + p["pos"]
        x = jnp.take_along_axis(x, ids_shuffle[:, :keep, None], 1)
        for q in p["enc"]:
            x = block(q, x, 4)
        y = _ln(x, p["ge"], p["be"]) @ p["dec_in"]
        Dd = y.shape[-1]
        y = jnp.concatenate([y, jnp.broadcast_to(p["mask_tok"], (n, L - keep, Dd))], 1)
        y = jnp.take_along_axis(y, ids_restore[..., None], 1) + p["dec_pos"]
        y = block(p["dec"], y, 2)
        pred = _ln(y, p["gd"], p["bd"]) @ p["pred"]
        mu = jnp.mean(patches, -1, keepdims=True)
        var = jnp.var(patches, -1, keepdims=True)
        target = (patches - mu) / jnp.sqrt(var + 1e-6)
        msk = jnp.take_along_axis(jnp.ones((n, L)).at[:, :keep].set(0.0), ids_restore, 1)
        return jnp.sum(jnp.mean(jnp.square(pred - target), -1) * msk) / jnp.sum(msk)

    def step(p, m, v, t, imgs, noise):
        l, g = jax.value_and_grad(loss)(p, imgs, noise)
        p, m, v = _adam(p, m, v, g, t, lr=1.5e-4, b2=0.95, wd=0.05)
        return l, p, m, v

    def blk(d, f):
        return _attn_params({"g1": S(d), "b1": S(d), "g2": S(d), "b2": S(d), "f1": S(d, f),
                             "f2": S(f, d)}, "", d)
    D, Dd, L = 32, 16, 16
    p = {"pe": S(48, D), "peb": S(D), "pos": S(L, D),
         "enc": [blk(D, 64), blk(D, 64)], "ge": S(D), "be": S(D), "dec_in": S(D, Dd),
         "mask_tok": S(1, 1, Dd), "dec_pos": S(L, Dd), "dec": blk(Dd, 32), "gd": S(Dd),
         "bd": S(Dd), "pred": S(Dd, 48)}
    return step, (p, p, p, S(), S(8, 16, 16, 3), S(8, L))


# ----------------------------------------------------------------------------- rnn / scan


def rwkv_time_mix_wkv_scan():
    """RWKV-4 language model: token-shift interpolation for the receptance, key and value
    projections, the WKV recurrence with per-channel decay exp(-exp(w)) and a bonus u for the
    current token computed by lax.scan in the numerically stable form that carries the running
    maximum exponent; channel-mixing with squared-ReLU keys and a sigmoid receptance gate; two
    layers, next-token loss, AdamW with clipping."""
    def shift(x):
        return jnp.pad(x, ((0, 0), (1, 0), (0, 0)))[:, :-1]

    def wkv(w, u, k, v):
        def body(c, kv):
            a, bb, pm = c
            kt, vt = kv
            ww = u + kt
            q = jnp.maximum(pm, ww)
            e1, e2 = jnp.exp(pm - q), jnp.exp(ww - q)
            out = (e1 * a + e2 * vt) / (e1 * bb + e2)
            ww = pm + w
            q = jnp.maximum(ww, kt)
            e1, e2 = jnp.exp(ww - q), jnp.exp(kt - q)
            return (e1 * a + e2 * vt, e1 * bb + e2, q), out
        B, T, D = k.shape
        c0 = (jnp.zeros((B, D)), jnp.zeros((B, D)), jnp.full((B, D), -1e30))
        _, out = lax.scan(body, c0, (jnp.swapaxes(k, 0, 1), jnp.swapaxes(v, 0, 1)))
        return jnp.swapaxes(out, 0, 1)

    def layer(q, x):
        h = _ln(x, q["g1"], q["b1"])
        hs = shift(h)
        mix = lambda mu: h * mu + hs * (1 - mu)
        k = mix(q["mk"]) @ q["k"]
        v = mix(q["mv"]) @ q["v"]
        r = jax.nn.sigmoid(mix(q["mr"]) @ q["r"])
        x = x + (r * wkv(-jnp.exp(q["decay"]), q["first"], k, v)) @ q["o"]
        h = _ln(x, q["g2"], q["b2"])
        hs = shift(h)
        kk = jnp.square(jax.nn.relu((h * q["ck"] + hs * (1 - q["ck"])) @ q["fk"]))
        rr = jax.nn.sigmoid((h * q["cr"] + hs * (1 - q["cr"])) @ q["fr"])
        return x + rr * (kk @ q["fv"])

    def loss(p, tok):
        x = _ln(p["emb"][tok], p["g0"], p["b0"])
        for q in p["layers"]:
            x = layer(q, x)
        logits = _ln(x, p["gf"], p["bf"]) @ p["head"]
        return _xent(logits[:, :-1], tok[:, 1:])

    def step(p, m, v, t, tok):
        l, g = jax.value_and_grad(loss)(p, tok)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=6e-4, b2=0.99, wd=0.01)
        return l, p, m, v
    D, V, F = 32, 32, 64
    q = {"g1": S(D), "b1": S(D), "mk": S(D), "mv": S(D), "mr": S(D), "k": S(D, D), "v": S(D, D),
         "r": S(D, D), "o": S(D, D), "decay": S(D), "first": S(D), "g2": S(D), "b2": S(D),
         "ck": S(D), "cr": S(D), "fk": S(D, F), "fr": S(D, D), "fv": S(F, D)}
    p = {"emb": S(V, D), "g0": S(D), "b0": S(D), "layers": [q, dict(q)], "gf": S(D), "bf": S(D),
         "head": S(D, V)}
    return step, (p, p, p, S(), S(8, 16, dtype=I32))


# ----------------------------------------------------------------------------- moe


def stmoe_top2_capacity_zloss():
    """ST-MoE style decoder: a dense layer followed by a sparse layer whose FFN is four experts
    with top-2 routing (gates renormalised), a capacity of 1.25 x tokens x 2 / experts filled
    first-choices-first by a cumulative sum, overflow dropped, dispatch/combine tensors built
    from one-hots and applied by einsums; load-balancing loss on top-1 assignments and the
    router z-loss; next-token loss, Adam with clipping."""
    def moe(q, x):
        b, t, d = x.shape
        n = b * t
        E = q["router"].shape[1]
        xf = x.reshape(n, d)
        logits = xf @ q["router"]
        z_loss = jnp.mean(jnp.square(jax.nn.logsumexp(logits, -1)))
        probs = jax.nn.softmax(logits, -1)
        gates, idx = lax.top_k(probs, 2)                                # [n,2]
        gates = gates / jnp.sum(gates, -1, keepdims=True)
        cap = int(1.25 * n * 2 / E)
        mask = jax.nn.one_hot(idx, E)                                   # [n,2,E]
        m_flat = jnp.swapaxes(mask, 0, 1).reshape(2 * n, E)
        pos = (jnp.cumsum(m_flat, 0) - 1.0) * m_flat
        pos = jnp.swapaxes(pos.reshape(2, n, E), 0, 1)
        keep = mask * (pos < cap)
        pos_oh = jax.nn.one_hot(jnp.sum(pos * keep, -1).astype(I32), cap)   # [n,2,cap]
        disp = jnp.einsum("nke,nkc->nec", keep, pos_oh)
        comb = jnp.einsum("nke,nkc,nk->nec", keep, pos_oh, gates)
        ein = jnp.einsum("nec,nd->ecd", disp, xf)
        h = jax.nn.gelu(jnp.einsum("ecd,edf->ecf", ein, q["w1"]) + q["eb1"][:, None])
        eout = jnp.einsum("ecf,efd->ecd", h, q["w2"])
        y = jnp.einsum("nec,ecd->nd", comb, eout)
        bal = E * jnp.sum(jnp.mean(mask[:, 0], 0) * jnp.mean(probs, 0))
        return y.reshape(b, t, d), bal, z_loss

    def attn(q, x):
        return x + _mha(_ln(x, q["g1"], q["b1"]), _ln(x, q["g1"], q["b1"]), q, "", 4, causal=True)

    def loss(p, tok):
        x = p["emb"][tok] + p["pos"]
        q = p["dense"]
        x = attn(q, x)
        x = x + jax.nn.gelu(_ln(x, q["g2"], q["b2"]) @ q["f1"]) @ q["f2"]
        q = p["sparse"]
        x = attn(q, x)
        y, bal, z = moe(q, _ln(x, q["g2"], q["b2"]))
        x = x + y
        logits = _ln(x, p["gf"], p["bf"]) @ p["emb"].T
        return _xent(logits[:, :-1], tok[:, 1:]) + 0.01 * bal + 1e-3 * z

    def step(p, m, v, t, tok):
        l, g = jax.value_and_grad(loss)(p, tok)
        p, m, v = _adam(p, m, v, _global_clip(g, 1.0), t, lr=1e-3)
        return l, p, m, v
    D, T, V, E, F = 32, 8, 36, 4, 64
    base = {"g1": S(D), "b1": S(D), "g2": S(D), "b2": S(D)}
    dense = _attn_params(dict(base, f1=S(D, F), f2=S(F, D)), "", D)
    sparse = _attn_params(dict(base, router=S(D, E), w1=S(E, D, F), eb1=S(E, F), w2=S(E, F, D)), "", D)
    p = {"emb": S(V, D), "pos": S(T, D), "dense": dense, "sparse": sparse, "gf": S(D), "bf": S(D)}
    return step, (p, p, p, S(), S(8, T, dtype=I32))


# ----------------------------------------------------------------------------- vae


def tcvae_minibatch_weighted_tc():
    """beta-TCVAE: Gaussian MLP encoder, Bernoulli decoder, and the ELBO's KL split into index-
    code mutual information, total correlation and dimension-wise KL using minibatch-weighted
    sampling estimates of log q(z) and prod_j log q(z_j) from the [N, N, Z] matrix of log
    densities of every sample under every posterior (logsumexp over the batch); beta annealed
    linearly in the step count; Adam."""
    def log_normal(z, mu, lv):
        return -0.5 * (jnp.log(2 * jnp.pi) + lv + jnp.square(z - mu) * jnp.exp(-lv))

    def loss(p, x, eps, beta):
        h = jax.nn.relu(x @ p["e1"] + p["eb1"])
        h = jax.nn.relu(h @ p["e2"] + p["eb2"])
        mu, lv = h @ p["mu"] + p["mub"], h @ p["lv"] + p["lvb"]
        z = mu + jnp.exp(0.5 * lv) * eps
        d = jax.nn.relu(z @ p["d1"] + p["db1"])
        d = jax.nn.relu(d @ p["d2"] + p["db2"])
        rec = jnp.sum(_bce(d @ p["d3"] + p["db3"], x), -1)
        N = x.shape[0]
        lognm = jnp.log(N * 60000.0)
        logqzx = jnp.sum(log_normal(z, mu, lv), -1)
        logpz = jnp.sum(log_normal(z, 0.0, 0.0), -1)
        mat = log_normal(z[:, None], mu[None], lv[None])               # [N,N,Z]
        logqz = jax.nn.logsumexp(jnp.sum(mat, -1), 1) - lognm
        logprod = jnp.sum(jax.nn.logsumexp(mat, 1) - lognm, -1)
        mi, tc, kl = logqzx - logqz, logqz - logprod, logprod - logpz
        return jnp.mean(rec + mi + beta * tc + kl), (jnp.mean(mi), jnp.mean(tc))

    def step(p, m, v, t, x, eps):
        beta = 1.0 + 5.0 * jnp.minimum(t / 5000.0, 1.0)
        (l, (mi, tc)), g = jax.value_and_grad(loss, has_aux=True)(p, x, eps, beta)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, mi, tc, p, m, v
    D, H, Z = 64, 64, 6
    p = {"e1": S(D, H), "eb1": S(H), "e2": S(H, H), "eb2": S(H), "mu": S(H, Z), "mub": S(Z),
         "lv": S(H, Z), "lvb": S(Z), "d1": S(Z, H), "db1": S(H), "d2": S(H, H), "db2": S(H),
         "d3": S(H, D), "db3": S(D)}
    return step, (p, p, p, S(), S(16, D), S(16, Z))


# ----------------------------------------------------------------------------- unet


def wave_unet_sisdr_separation():
    """Wave-U-Net source separation on raw audio: three downsampling levels (1-D conv, leaky
    ReLU, decimation by two), a bottleneck, linear-interpolation upsampling with crop-free
    concatenation of the skips, the input mixture concatenated before the output conv; the
    second source is the difference output (mixture minus the first); negative scale-invariant
    SDR on zero-mean signals, Adam."""
    def up(x):
        n, t, c = x.shape
        return jax.image.resize(x, (n, 2 * t, c), "linear")

    def sisdr(e, s):
        e = e - jnp.mean(e, 1, keepdims=True)
        s = s - jnp.mean(s, 1, keepdims=True)
        alpha = jnp.sum(e * s, 1, keepdims=True) / (jnp.sum(s * s, 1, keepdims=True) + 1e-8)
        tgt = alpha * s
        noise = e - tgt
        return 10.0 * jnp.log10(jnp.sum(tgt * tgt, 1) / (jnp.sum(noise * noise, 1) + 1e-8) + 1e-8)

    def loss(p, mix, src):
        h, skips = mix, []
        for i in range(3):
            h = jax.nn.leaky_relu(_c1d(h, p["down%d" % i]) + p["db%d" % i], 0.2)
            skips.append(h)
            h = h[:, ::2]
        h = jax.nn.leaky_relu(_c1d(h, p["mid"]) + p["mb"], 0.2)
        for i in reversed(range(3)):
            h = jnp.concatenate([up(h), skips[i]], -1)
            h = jax.nn.leaky_relu(_c1d(h, p["up%d" % i]) + p["ub%d" % i], 0.2)
        est = jnp.tanh(_c1d(jnp.concatenate([h, mix], -1), p["out"]))
        est = jnp.concatenate([est, mix - est], -1)                    # [N,T,2]
        return -jnp.mean(sisdr(est, src))

    def step(p, m, v, t, mix, src):
        l, g = jax.value_and_grad(loss)(p, mix, src)
        p, m, v = _adam(p, m, v, g, t, lr=1e-4)
        return l, p, m, v
    ch = [1, 16, 24, 32]
    p = {"mid": S(15, 32, 40), "mb": S(40), "out": S(1, 17, 1)}
    ups = [16, 24, 32]
    below = [24, 32, 40]
    for i in range(3):
        p["down%d" % i], p["db%d" % i] = S(15, ch[i], ch[i + 1]), S(ch[i + 1])
        p["up%d" % i], p["ub%d" % i] = S(5, below[i] + ch[i + 1], ups[i]), S(ups[i])
    return step, (p, p, p, S(), S(4, 256, 1), S(4, 256, 2))


# ----------------------------------------------------------------------------- gnn


def egnn_equivariant_coord_update():
    """E(n)-equivariant GNN for molecular energies with coordinate denoising: edge messages
    from both node features, the squared distance and edge attributes, soft edge attention,
    coordinates moved by the degree-normalised segment_sum of relative positions weighted by a
    tanh-bounded message MLP, residual node updates from segment_sum-aggregated messages; per-
    graph energy readout by segment_sum; MSE on energies plus denoised-position error; Adam."""
    def layer(q, h, x, ef, src, dst):
        n = h.shape[0]
        rel = x[dst] - x[src]
        d2 = jnp.sum(rel * rel, -1, keepdims=True)
        m = jax.nn.silu(jnp.concatenate([h[dst], h[src], d2, ef], -1) @ q["e1"] + q["eb1"])
        m = jax.nn.silu(m @ q["e2"] + q["eb2"])
        m = m * jax.nn.sigmoid(m @ q["att"])
        w = jnp.tanh(jax.nn.silu(m @ q["x1"]) @ q["x2"])               # [E,1]
        deg = jax.ops.segment_sum(jnp.ones(src.shape[0]), dst, num_segments=n)
        x = x + jax.ops.segment_sum(rel * w, dst, num_segments=n) / jnp.maximum(deg, 1.0)[:, None]
        agg = jax.ops.segment_sum(m, dst, num_segments=n)
        h = h + jax.nn.silu(jnp.concatenate([h, agg], -1) @ q["n1"] + q["nb1"]) @ q["n2"]
        return h, x

    def loss(p, nf, pos, noise, ef, src, dst, gid, energy):
        G = energy.shape[0]
        h, x = nf @ p["emb"], pos + noise
        for q in p["layers"]:
            h, x = layer(q, h, x, ef, src, dst)
        e = jax.ops.segment_sum(jax.nn.silu(h @ p["o1"]) @ p["o2"], gid, num_segments=G)[:, 0]
        return jnp.mean(jnp.square(e - energy)) + jnp.mean(jnp.sum(jnp.square(x - pos), -1))

    def step(p, m, v, t, nf, pos, noise, ef, src, dst, gid, energy):
        l, g = jax.value_and_grad(loss)(p, nf, pos, noise, ef, src, dst, gid, energy)
        p, m, v = _adam(p, m, v, _global_clip(g, 10.0), t, lr=5e-4)
        return l, p, m, v
    F, Fn, Fe = 32, 6, 2
    q = {"e1": S(2 * F + 1 + Fe, F), "eb1": S(F), "e2": S(F, F), "eb2": S(F), "att": S(F, 1),
         "x1": S(F, F), "x2": S(F, 1), "n1": S(2 * F, F), "nb1": S(F), "n2": S(F, F)}
    p = {"emb": S(Fn, F), "layers": [q, dict(q), dict(q)], "o1": S(F, F), "o2": S(F, 1)}
    return step, (p, p, p, S(), S(24, Fn), S(24, 3), S(24, 3), S(72, Fe), S(72, dtype=I32),
                  S(72, dtype=I32), S(24, dtype=I32), S(4))


# ----------------------------------------------------------------------------- quant


def dorefa_kbit_weights_activations():
    """DoReFa-Net quantisation-aware training: weights tanh-normalised to [0, 1], quantised to k
    bits with a straight-through round and mapped back to [-1, 1] (2-bit in the first hidden
    conv, 4-bit in the second), activations clipped to [0, 1] and quantised to 4 bits; first
    and last layers in full precision, training-mode batch norm; Adam."""
    def quant(x, k):
        n = float(2 ** k - 1)
        return x + lax.stop_gradient(jnp.round(x * n) / n - x)

    def qw(w, k):
        t = jnp.tanh(w)
        t = t / (2.0 * jnp.max(jnp.abs(t))) + 0.5
        return 2.0 * quant(t, k) - 1.0

    def qa(x, k):
        return quant(jnp.clip(x, 0.0, 1.0), k)

    def loss(p, x, labels):
        h = jax.nn.relu(_bn(_conv(x, p["c0"]), p["g0"], p["b0"])[0])  # [N,8,8,16]
        h = qa(h, 4)
        h = qa(_bn(_conv(h, qw(p["c1"], 2)), p["g1"], p["b1"])[0], 4)
        h = _maxpool(h)                                                 # [N,4,4,16]
        h = qa(_bn(_conv(h, qw(p["c2"], 4)), p["g2"], p["b2"])[0], 4)  # [N,4,4,32]
        return _xent(jnp.mean(h, (1, 2)) @ p["fc"] + p["fcb"], labels)

    def step(p, m, v, t, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v
    p = {"c0": S(3, 3, 3, 16), "g0": S(16), "b0": S(16), "c1": S(3, 3, 16, 16), "g1": S(16),
         "b1": S(16), "c2": S(3, 3, 16, 32), "g2": S(32), "b2": S(32), "fc": S(32, 10),
         "fcb": S(10)}
    return step, (p, p, p, S(), S(8, 8, 8, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- remat


def remat_convmixer_scanned_depthwise():
    """ConvMixer with its four blocks' parameters stacked on a leading axis and run by
    lax.scan, the scanned block wrapped in jax.checkpoint with the
    dots_with_no_batch_dims_saveable policy (prevent_cse off): 5x5 depthwise conv, GELU and BN
    in a residual, then pointwise 1x1 mixing as an einsum, GELU and BN; patch-embedding stem,
    global pooling, cross-entropy, AdamW."""
    def bn(x, g, b):
        return _bn(x, g, b)[0]

    def block(x, q):
        y = bn(jax.nn.gelu(_dwconv(x, q["dw"]) + q["dwb"]), q["g1"], q["b1"])
        x = x + y
        y = jnp.einsum("nhwc,cd->nhwd", x, q["pw"]) + q["pwb"]
        return bn(jax.nn.gelu(y), q["g2"], q["b2"]), None

    def loss(p, x, labels):
        h = bn(jax.nn.gelu(_conv(x, p["patch"], 2, "VALID") + p["pb"]), p["g0"], p["b0"])
        body = jax.checkpoint(block, prevent_cse=False,
                              policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable)
        h, _ = lax.scan(body, h, p["blocks"])
        return _xent(jnp.mean(h, (1, 2)) @ p["fc"], labels)

    def step(p, m, v, t, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3, wd=0.05)
        return l, p, m, v
    L, C = 4, 32
    blocks = {"dw": S(L, 5, 5, 1, C), "dwb": S(L, C), "g1": S(L, C), "b1": S(L, C),
              "pw": S(L, C, C), "pwb": S(L, C), "g2": S(L, C), "b2": S(L, C)}
    p = {"patch": S(2, 2, 3, C), "pb": S(C), "g0": S(C), "b0": S(C), "blocks": blocks,
         "fc": S(C, 10)}
    return step, (p, p, p, S(), S(8, 16, 16, 3), S(8, dtype=I32))


def remat_hourglass_shortened_transformer():
    """Hourglass causal transformer: a full-resolution pre-block, tokens shifted right by k-1
    and shortened 2x by a linear projection of concatenated pairs, two blocks at the short
    resolution, linear upsampling back with a residual, a full-resolution post-block; the
    full-resolution blocks are checkpointed with checkpoint_dots, the shortened ones with
    save_only_these_names for the tagged attention output and FFN input; tied next-token head,
    Adam."""
    def block(q, x):
        h = _ln(x, q["g1"], q["b1"])
        x = x + checkpoint_name(_mha(h, h, q, "", 4, causal=True), "attn_out")
        f = checkpoint_name(_ln(x, q["g2"], q["b2"]) @ q["f1"], "ffn_in")
        return x + jax.nn.gelu(f) @ q["f2"]
    full = jax.checkpoint(block, policy=jax.checkpoint_policies.checkpoint_dots)
    short = jax.checkpoint(block, policy=jax.checkpoint_policies.save_only_these_names(
        "attn_out", "ffn_in"))

    def loss(p, tok):
        b, T = tok.shape
        k = 2
        x = p["emb"][tok] + p["pos"]
        x = full(p["pre"], x)
        D = x.shape[-1]
        xs = jnp.pad(x, ((0, 0), (k - 1, 0), (0, 0)))[:, :T]
        s = xs.reshape(b, T // k, k * D) @ p["down"]
        for q in p["mid"]:
            s = short(q, s)
        x = x + (s @ p["up"]).reshape(b, T, D)
        x = full(p["post"], x)
        logits = _ln(x, p["gf"], p["bf"]) @ p["emb"].T
        return _xent(logits[:, :-1], tok[:, 1:])

    def step(p, m, v, t, tok):
        l, g = jax.value_and_grad(loss)(p, tok)
        p, m, v = _adam(p, m, v, g, t, lr=3e-4)
        return l, p, m, v
    D, T, V = 32, 16, 48
    q = _attn_params({"g1": S(D), "b1": S(D), "g2": S(D), "b2": S(D), "f1": S(D, 64),
                      "f2": S(64, D)}, "", D)
    p = {"emb": S(V, D), "pos": S(T, D), "pre": q, "down": S(2 * D, D), "mid": [dict(q), dict(q)],
         "up": S(D, 2 * D), "post": dict(q), "gf": S(D), "bf": S(D)}
    return step, (p, p, p, S(), S(8, T, dtype=I32))


# ----------------------------------------------------------------------------- custom_vjp


def _poincare_dist_fwd(u, v):
    uu = jnp.sum(u * u, -1)
    vv = jnp.sum(v * v, -1)
    alpha, beta = 1.0 - uu, 1.0 - vv
    gamma = 1.0 + 2.0 * jnp.sum(jnp.square(u - v), -1) / (alpha * beta)
    return jnp.arccosh(gamma), (u, v, uu, vv, alpha, beta, gamma)


@jax.custom_vjp
def _poincare_dist(u, v):
    return _poincare_dist_fwd(u, v)[0]


def _poincare_dist_bwd(res, g):
    u, v, uu, vv, alpha, beta, gamma = res
    uv = jnp.sum(u * v, -1)
    c = 4.0 / jnp.sqrt(jnp.maximum(gamma * gamma - 1.0, 1e-10))
    gu = (c / beta)[..., None] * (((vv - 2 * uv + 1) / jnp.square(alpha))[..., None] * u
                                  - v / alpha[..., None])
    gv = (c / alpha)[..., None] * (((uu - 2 * uv + 1) / jnp.square(beta))[..., None] * v
                                   - u / beta[..., None])
    return g[..., None] * gu, g[..., None] * gv


_poincare_dist.defvjp(_poincare_dist_fwd, _poincare_dist_bwd)


def poincare_embedding_custom_vjp_arcosh():
    """Poincare-ball embeddings of a hierarchy: the hyperbolic distance arcosh(1 + 2|u-v|^2 /
    ((1-|u|^2)(1-|v|^2))) is a custom_vjp whose backward is the closed form with the
    sqrt(gamma^2 - 1) term clamped; softmax loss of each node against its parent and five
    negatives; Riemannian SGD (Euclidean gradient scaled by (1-|theta|^2)^2/4, reduced during
    burn-in) with projection back inside the ball."""
    def loss(emb, u, vs):
        ev = emb[vs]                                                    # [B,K,D]
        eu = jnp.broadcast_to(emb[u][:, None], ev.shape)
        d = _poincare_dist(eu, ev)
        return -jnp.mean(jax.nn.log_softmax(-d, -1)[:, 0])

    def step(emb, t, u, vs):
        l, g = jax.value_and_grad(loss)(emb, u, vs)
        lr = jnp.where(t < 20.0, 0.03, 0.3)
        scale = jnp.square(1.0 - jnp.sum(emb * emb, -1, keepdims=True)) / 4.0
        emb = emb - lr * scale * g
        nrm = jnp.linalg.norm(emb, axis=-1, keepdims=True)
        emb = jnp.where(nrm >= 1.0 - 1e-5, emb / nrm * (1.0 - 1e-5), emb)
        return l, emb
    return step, (S(128, 10), S(), S(16, dtype=I32), S(16, 6, dtype=I32))


# ----------------------------------------------------------------------------- control


def multisteps_scan_cond_apply_update():
    """optax.MultiSteps-style gradient accumulation inside one jitted call: a lax.scan over four
    micro-batches computes the gradient of a Kim-style text CNN (embedding, parallel width-3
    and width-5 1-D convolutions, max-over-time, linear), accumulates it, and a lax.cond inside
    the scan applies the Adam update and resets the accumulator every second micro-step (the
    mini-step counter is carried in and out)."""
    def model(p, tok):
        e = p["emb"][tok]
        h3 = jax.nn.relu(_c1d(e, p["c3"]) + p["b3"])
        h5 = jax.nn.relu(_c1d(e, p["c5"]) + p["b5"])
        f = jnp.concatenate([jnp.max(h3, 1), jnp.max(h5, 1)], -1)
        return f @ p["fc"] + p["fcb"]

    def loss(p, tok, y):
        return _xent(model(p, tok), y)

    def step(p, m, v, acc, t, ms, toks, ys):
        every = 2

        def body(c, batch):
            p, m, v, acc, t, i = c
            l, g = jax.value_and_grad(loss)(p, *batch)
            acc = tmap(lambda a, g: a + g / every, acc, g)

            def apply(s):
                p, m, v, acc, t = s
                t = t + 1.0
                p, m, v = _adam(p, m, v, acc, t, lr=1e-3)
                return p, m, v, tmap(jnp.zeros_like, acc), t
            p, m, v, acc, t = lax.cond((i + 1) % every == 0, apply, lambda s: s, (p, m, v, acc, t))
            return (p, m, v, acc, t, i + 1), l
        (p, m, v, acc, t, ms), ls = lax.scan(body, (p, m, v, acc, t, ms), (toks, ys))
        return jnp.mean(ls), p, m, v, acc, t, ms
    V, E, C = 50, 16, 4
    p = {"emb": S(V, E), "c3": S(3, E, 24), "b3": S(24), "c5": S(5, E, 24), "b5": S(24),
         "fc": S(48, C), "fcb": S(C)}
    return step, (p, p, p, p, S(), S(dtype=I32), S(4, 8, 20, dtype=I32), S(4, 8, dtype=I32))


def multitask_switch_task_heads():
    """Multi-task learning with one task per batch: a shared LayerNorm/GELU trunk, and
    lax.switch on the batch's task id selects the head and loss (softmax classification, Huber
    regression, or multi-label BCE) inside the differentiated function; Adam with a per-task
    learning rate looked up by task id, and a per-task EMA of the loss updated with .at[].set."""
    def trunk(p, x):
        h = jax.nn.gelu(_ln(x @ p["w1"] + p["b1"], p["g1"], p["bb1"]))
        return jax.nn.gelu(_ln(h @ p["w2"] + p["b2"], p["g2"], p["bb2"]))

    def loss(p, x, task, ycls, yreg, ymulti):
        h = trunk(p, x)

        def cls(h):
            return _xent(h @ p["hc"], ycls)

        def reg(h):
            d = h @ p["hr"] - yreg
            a = jnp.abs(d)
            return jnp.mean(jnp.where(a < 1.0, 0.5 * d * d, a - 0.5))

        def multi(h):
            return jnp.mean(_bce(h @ p["hm"], ymulti))
        return lax.switch(task, [cls, reg, multi], h)

    def step(p, m, v, t, ema, x, task, ycls, yreg, ymulti):
        l, g = jax.value_and_grad(loss)(p, x, task, ycls, yreg, ymulti)
        lr = jnp.array([1e-3, 3e-4, 1e-3])[task]
        p, m, v = _adam(p, m, v, g, t, lr=lr)
        ema = ema.at[task].set(0.99 * ema[task] + 0.01 * l)
        return l, p, m, v, ema
    D, H = 20, 48
    p = {"w1": S(D, H), "b1": S(H), "g1": S(H), "bb1": S(H), "w2": S(H, H), "b2": S(H),
         "g2": S(H), "bb2": S(H), "hc": S(H, 6), "hr": S(H, 3), "hm": S(H, 6)}
    return step, (p, p, p, S(), S(3), S(16, D), S(dtype=I32), S(16, dtype=I32), S(16, 3),
                  S(16, 6))


def ista_sparse_coding_dictionary_while():
    """Sparse coding with dictionary learning: the Lipschitz constant of the dictionary is
    estimated by power iteration (fori_loop), codes are inferred by FISTA in a lax.while_loop
    that exits when the relative change of the codes falls below a tolerance or after 100
    iterations; then a gradient step on the reconstruction loss with columns projected onto the
    unit ball, and a predictive-sparse-decomposition encoder regressed onto the codes."""
    def lipschitz(W):
        def body(_, v):
            v = W.T @ (W @ v)
            return v / (jnp.linalg.norm(v) + 1e-12)
        k = W.shape[1]
        v = lax.fori_loop(0, 20, body, jnp.ones((k,)) / jnp.sqrt(float(k)))
        return jnp.sum(jnp.square(W @ v)) * 1.01

    def shrink(z, th):
        return jnp.sign(z) * jax.nn.relu(jnp.abs(z) - th)

    def fista(W, x, lam):
        L = lipschitz(W)

        def cond(c):
            _, _, _, it, delta = c
            return (it < 100) & (delta > 1e-4)

        def body(c):
            z, y, tk, it, _ = c
            grad = (y @ W.T - x) @ W
            zn = shrink(y - grad / L, lam / L)
            tn = 0.5 * (1.0 + jnp.sqrt(1.0 + 4.0 * tk * tk))
            y = zn + ((tk - 1.0) / tn) * (zn - z)
            delta = jnp.max(jnp.abs(zn - z)) / (jnp.max(jnp.abs(z)) + 1e-8)
            return zn, y, tn, it + 1, delta
        z0 = jnp.zeros((x.shape[0], W.shape[1]))
        c0 = (z0, z0, jnp.ones((), F32), jnp.zeros((), I32), jnp.full((), jnp.inf, F32))
        z, _, _, it, _ = lax.while_loop(cond, body, c0)
        return z, it

    def dict_loss(W, x, z):
        return 0.5 * jnp.mean(jnp.sum(jnp.square(x - z @ W.T), -1))

    def enc_loss(pe, x, z, lam):
        zh = shrink(x @ pe["we"] + pe["be"], jax.nn.softplus(pe["th"]) * lam)
        return jnp.mean(jnp.sum(jnp.square(zh - z), -1))

    def step(W, pe, x, lam):
        z, it = fista(lax.stop_gradient(W), x, lam)
        z = lax.stop_gradient(z)
        l, gW = jax.value_and_grad(dict_loss)(W, x, z)
        W = W - 0.1 * gW
        W = W / jnp.maximum(jnp.linalg.norm(W, axis=0, keepdims=True), 1.0)
        le, ge = jax.value_and_grad(enc_loss)(pe, x, z, lam)
        return l, le, it, W, _sgd(pe, ge, 0.05)
    D, K = 32, 64
    pe = {"we": S(D, K), "be": S(K), "th": S(K)}
    return step, (S(D, K), pe, S(16, D), S())


# ----------------------------------------------------------------------------- sort / top_k


def listmle_plackett_luce_sorted():
    """Learning to rank with ListMLE: an MLP scores every document of each query; per list
    (vmapped) the documents are sorted by relevance (ties broken by passed-in noise, padding
    last) with argsort, and the Plackett-Luce negative log-likelihood of that order is summed
    from a reverse cumulative logsumexp of the permuted scores; NDCG@5 from lax.top_k of the
    scores is reported; Adam."""
    def score(p, f):
        h = jax.nn.relu(f @ p["w1"] + p["b1"])
        h = jax.nn.relu(h @ p["w2"] + p["b2"])
        return (h @ p["w3"])[..., 0]

    def list_loss(s, rel, tie, valid):
        key = jnp.where(valid > 0.5, rel + 1e-3 * tie, -1e9)
        perm = jnp.argsort(-key)
        ss, vv = s[perm], valid[perm]
        vv = (vv > 0.5).astype(F32)
        tail = lax.cumlogsumexp(jnp.where(vv > 0.5, ss, -1e9), reverse=True)
        return jnp.sum((tail - ss) * vv)

    def ndcg5(s, rel, valid):
        _, top = lax.top_k(jnp.where(valid > 0.5, s, -jnp.inf), 5)
        disc = 1.0 / jnp.log2(jnp.arange(5, dtype=F32) + 2.0)
        dcg = jnp.sum((jnp.exp2(rel[top]) - 1.0) * valid[top] * disc)
        ideal, _ = lax.top_k(rel * valid, 5)
        return dcg / (jnp.sum((jnp.exp2(ideal) - 1.0) * disc) + 1e-9)

    def loss(p, f, rel, tie, valid):
        s = score(p, f)
        l = jnp.mean(jax.vmap(list_loss)(s, rel, tie, valid))
        return l, jnp.mean(jax.vmap(ndcg5)(lax.stop_gradient(s), rel, valid))

    def step(p, m, v, t, f, rel, tie, valid):
        (l, ndcg), g = jax.value_and_grad(loss, has_aux=True)(p, f, rel, tie, valid)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, ndcg, p, m, v
    F, H = 16, 48
    p = {"w1": S(F, H), "b1": S(H), "w2": S(H, H), "b2": S(H), "w3": S(H, 1)}
    return step, (p, p, p, S(), S(8, 12, F), S(8, 12), S(8, 12), S(8, 12))


# ----------------------------------------------------------------------------- fft


def gfnet_global_filter_layers():
    """GFNet image classifier: 4x4 patch embedding to an 8x8 token grid, two blocks each a
    LayerNorm, a global filter (rfft2 over the grid, elementwise product with a learned complex
    filter held as real and imaginary parameters, irfft2), LayerNorm and GELU MLP with a
    residual; pooled head, cross-entropy; AdEMAMix optimiser (fast and slow first-moment EMAs,
    the slow one mixed in with a warmed-up alpha)."""
    def gfilter(q, x):
        n, h, w, c = x.shape
        X = jnp.fft.rfft2(x, axes=(1, 2))
        X = X * (q["wre"] + 1j * q["wim"])
        return jnp.fft.irfft2(X, s=(h, w), axes=(1, 2))

    def loss(p, x, labels):
        h = _conv(x, p["patch"], 4, "VALID") + p["pb"]                 # [N,8,8,D]
        for q in p["blocks"]:
            y = gfilter(q, _ln(h, q["g1"], q["b1"]))
            h = h + jax.nn.gelu(_ln(y, q["g2"], q["b2"]) @ q["f1"]) @ q["f2"]
        f = _ln(jnp.mean(h, (1, 2)), p["gf"], p["bf"])
        return _xent(f @ p["head"], labels)

    def step(p, m1, m2, v, t, x, labels):
        l, g = jax.value_and_grad(loss)(p, x, labels)
        b1, b2, b3, lr, wd = 0.9, 0.999, 0.9999, 1e-3, 0.05
        alpha = 5.0 * jnp.minimum(t / 1000.0, 1.0)
        m1 = tmap(lambda m, g: b1 * m + (1 - b1) * g, m1, g)
        m2 = tmap(lambda m, g: b3 * m + (1 - b3) * g, m2, g)
        v = tmap(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        c1, c2 = 1.0 - b1 ** t, 1.0 - b2 ** t
        p = tmap(lambda p, a, s, v: p - lr * ((a / c1 + alpha * s) / (jnp.sqrt(v / c2) + 1e-8)
                                              + wd * p), p, m1, m2, v)
        return l, p, m1, m2, v
    D = 32
    q = {"g1": S(D), "b1": S(D), "wre": S(8, 5, D), "wim": S(8, 5, D), "g2": S(D), "b2": S(D),
         "f1": S(D, 64), "f2": S(64, D)}
    p = {"patch": S(4, 4, 3, D), "pb": S(D), "blocks": [q, dict(q)], "gf": S(D), "bf": S(D),
         "head": S(D, 10)}
    return step, (p, p, p, p, S(), S(8, 32, 32, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- linalg


def deep_cca_two_view_eigh():
    """Deep CCA: two sigmoid MLPs embed the two views; with centred outputs and ridge-
    regularised covariances, T = S11^-1/2 S12 S22^-1/2 is formed from inverse square roots by
    jnp.linalg.eigh and the loss is minus the sum of the top-k canonical correlations (square
    roots of the top eigenvalues of T^T T); RMSProp; a ridge linear probe on the first view's
    embedding is fitted by jnp.linalg.solve and its accuracy reported."""
    def mlp(q, x):
        h = jax.nn.sigmoid(x @ q["w1"] + q["b1"])
        h = jax.nn.sigmoid(h @ q["w2"] + q["b2"])
        return h @ q["w3"]

    def inv_sqrt(Sm):
        e, V = jnp.linalg.eigh(Sm)
        return (V * lax.rsqrt(jnp.maximum(e, 1e-6))) @ V.T

    def loss(p, x1, x2):
        H1, H2 = mlp(p["f"], x1), mlp(p["g"], x2)
        n, o = H1.shape
        H1 = H1 - jnp.mean(H1, 0)
        H2 = H2 - jnp.mean(H2, 0)
        I = jnp.eye(o)
        S11 = H1.T @ H1 / (n - 1) + 1e-3 * I
        S22 = H2.T @ H2 / (n - 1) + 1e-3 * I
        S12 = H1.T @ H2 / (n - 1)
        T = inv_sqrt(S11) @ S12 @ inv_sqrt(S22)
        ev = jnp.linalg.eigh(T.T @ T)[0]
        return -jnp.sum(jnp.sqrt(jnp.maximum(ev[-4:], 1e-9))), H1

    def step(p, ms, x1, x2, labels):
        (l, H1), g = jax.value_and_grad(loss, has_aux=True)(p, x1, x2)
        ms = tmap(lambda s, g: 0.9 * s + 0.1 * g * g, ms, g)
        p = tmap(lambda p, g, s: p - 1e-3 * g / (jnp.sqrt(s) + 1e-6), p, g, ms)
        H = lax.stop_gradient(H1)
        Y = jax.nn.one_hot(labels, 3)
        Wp = jnp.linalg.solve(H.T @ H + 0.1 * jnp.eye(H.shape[1]), H.T @ Y)
        acc = jnp.mean((jnp.argmax(H @ Wp, -1) == labels).astype(F32))
        return l, acc, p, ms
    O, Hd = 6, 32
    f = {"w1": S(20, Hd), "b1": S(Hd), "w2": S(Hd, Hd), "b2": S(Hd), "w3": S(Hd, O)}
    g = {"w1": S(24, Hd), "b1": S(Hd), "w2": S(Hd, Hd), "b2": S(Hd), "w3": S(Hd, O)}
    p = {"f": f, "g": g}
    return step, (p, p, S(16, 20), S(16, 24), S(16, dtype=I32))


# ----------------------------------------------------------------------------- scatter/gather


def pointpillars_scatter_bev_grid():
    """PointPillars detector on tiny point clouds: each point is assigned to a pillar of an 8x8
    bird's-eye grid; pillar point counts and coordinate sums by .at[].add give per-pillar means
    that are gathered back to decorate the points (offsets to pillar mean and centre); a
    PointNet layer, per-pillar max by .at[].max, occupancy by .at[].set, scattered onto the BEV
    canvas (vmapped over the batch); a conv backbone with CenterNet focal heatmap and L1 box
    losses; Adam."""
    G = 8

    def pillarize(q, pts):
        ix = jnp.clip(jnp.floor(pts[:, 0] * G), 0, G - 1).astype(I32)
        iy = jnp.clip(jnp.floor(pts[:, 1] * G), 0, G - 1).astype(I32)
        pid = iy * G + ix
        cnt = jnp.zeros((G * G,)).at[pid].add(1.0)
        mean = jnp.zeros((G * G, 3)).at[pid].add(pts[:, :3]) / jnp.maximum(cnt, 1.0)[:, None]
        ctr = jnp.stack([(ix + 0.5) / G, (iy + 0.5) / G], -1)
        feat = jnp.concatenate([pts, pts[:, :3] - mean[pid], pts[:, :2] - ctr], -1)
        f = jax.nn.relu(_ln(feat @ q["pn"], q["pg"], q["pb"]))          # [P,C]
        C = f.shape[-1]
        pmax = jnp.full((G * G, C), -jnp.inf).at[pid].max(f)
        pmax = jnp.where(cnt[:, None] > 0, pmax, 0.0)
        occ = jnp.zeros((G * G,)).at[pid].set(1.0)
        return jnp.concatenate([pmax, occ[:, None]], -1).reshape(G, G, C + 1)

    def loss(p, pts, heat, box):
        bev = jax.vmap(lambda c: pillarize(p, c))(pts)                 # [B,G,G,C+1]
        h = jax.nn.relu(_conv(bev, p["c1"]))
        h = jax.nn.relu(_conv(h, p["c2"]))
        hm = jax.nn.sigmoid(_conv(h, p["hm"]))
        hm = jnp.clip(hm, 1e-4, 1 - 1e-4)
        bx = _conv(h, p["bx"])
        pos = (heat >= 0.99).astype(F32)
        npos = jnp.maximum(jnp.sum(pos), 1.0)
        fl = (pos * jnp.square(1 - hm) * jnp.log(hm)
              + (1 - pos) * (1 - heat) ** 4 * jnp.square(hm) * jnp.log(1 - hm))
        l1 = jnp.sum(jnp.abs(bx - box) * pos) / npos
        return -jnp.sum(fl) / npos + l1

    def step(p, m, v, t, pts, heat, box):
        l, g = jax.value_and_grad(loss)(p, pts, heat, box)
        p, m, v = _adam(p, m, v, g, t, lr=2e-3)
        return l, p, m, v
    C = 16
    p = {"pn": S(9, C), "pg": S(C), "pb": S(C), "c1": S(3, 3, C + 1, 32), "c2": S(3, 3, 32, 32),
         "hm": S(3, 3, 32, 1), "bx": S(3, 3, 32, 4)}
    return step, (p, p, p, S(), S(4, 64, 4), S(4, 8, 8, 1), S(4, 8, 8, 4))


# ----------------------------------------------------------------------------- dynamic slices


def soft_dtw_row_fori_update():
    """Time-series forecasting trained with a soft-DTW loss: an MLP forecasts 12 two-channel
    steps from a 24-step history; the soft-DTW accumulated-cost matrix is filled row by row in
    a fori_loop, each row computed by an inner scan over columns (soft-min of the three
    predecessors) and written with lax.dynamic_update_slice; reverse-mode through both loops;
    soft-DTW plus a small MSE, Adam."""
    def softmin(a, b, c, gamma):
        return -gamma * jax.nn.logsumexp(jnp.stack([-a, -b, -c]) / gamma, 0)

    def sdtw(Cm, gamma):
        B, T, U = Cm.shape
        big = 1e10
        R = jnp.full((B, T + 1, U + 1), big).at[:, 0, 0].set(0.0)

        def row(i, R):
            prev = lax.dynamic_slice_in_dim(R, i - 1, 1, 1)[:, 0]      # [B,U+1]
            ci = lax.dynamic_slice_in_dim(Cm, i - 1, 1, 1)[:, 0]       # [B,U]

            def cell(left, j):
                val = ci[:, j] + softmin(prev[:, j], prev[:, j + 1], left, gamma)
                return val, val
            _, vals = lax.scan(cell, jnp.full((B,), big), jnp.arange(U))
            new = jnp.concatenate([jnp.full((B, 1), big), vals.T], 1)
            return lax.dynamic_update_slice(R, new[:, None, :], (0, i, 0))
        R = lax.fori_loop(1, T + 1, row, R)
        return R[:, T, U]

    def loss(p, hist, target):
        b = hist.shape[0]
        h = jax.nn.gelu(hist.reshape(b, -1) @ p["w1"] + p["b1"])
        h = jax.nn.gelu(h @ p["w2"] + p["b2"])
        pred = (h @ p["w3"]).reshape(target.shape)                      # [B,12,2]
        Cm = jnp.sum(jnp.square(pred[:, :, None] - target[:, None]), -1)
        return jnp.mean(sdtw(Cm, 0.1)) + 0.1 * jnp.mean(jnp.square(pred - target))

    def step(p, m, v, t, hist, target):
        l, g = jax.value_and_grad(loss)(p, hist, target)
        p, m, v = _adam(p, m, v, g, t, lr=1e-3)
        return l, p, m, v
    p = {"w1": S(48, 64), "b1": S(64), "w2": S(64, 64), "b2": S(64), "w3": S(64, 24)}
    return step, (p, p, p, S(), S(8, 24, 2), S(8, 12, 2))


# ----------------------------------------------------------------------------- mixed precision


def bf16_tokenlearner_video_classifier():
    """Video classifier with TokenLearner in bfloat16: per-frame 2x2 patch embedding (bf16 conv,
    output upcast to f32), a TokenLearner module whose MLP produces eight spatial attention maps
    softmaxed over all tokens of the clip to pool 64 tokens down to 8, then a transformer block
    with bf16 matmuls and f32 softmax/LayerNorm statistics; f32 master weights, Adam with
    first moments stored in bf16."""
    def mm(a, w):
        return jnp.einsum("...d,de->...e", a.astype(BF16), w.astype(BF16),
                          preferred_element_type=F32)

    def loss(p, vid, labels):
        b, f, hh, ww, c = vid.shape
        x = lax.conv_general_dilated(vid.reshape(b * f, hh, ww, c).astype(BF16),
                                     p["patch"].astype(BF16), (2, 2), "VALID",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC")).astype(F32)
        D = x.shape[-1]
        x = x.reshape(b, -1, D) + p["pos"]                              # [B,64,D] f32
        a = mm(jax.nn.gelu(mm(_ln(x, p["tg"], p["tb"]), p["tl1"])), p["tl2"])
        a = jax.nn.softmax(a, axis=1)                                   # [B,N,S]
        tok = jnp.einsum("bns,bnd->bsd", a.astype(BF16), x.astype(BF16),
                         preferred_element_type=F32)
        H = 4
        dh = D // H
        n = tok.shape[1]
        h = _ln(tok, p["g1"], p["b1"])
        q, k, v = (mm(h, p[w]).astype(BF16).reshape(b, n, H, dh) for w in ("q", "k", "v"))
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k, preferred_element_type=F32) / jnp.sqrt(float(dh))
        att = jax.nn.softmax(s, -1).astype(BF16)
        o = jnp.einsum("bhqk,bkhd->bqhd", att, v, preferred_element_type=F32).reshape(b, n, D)
        tok = tok + mm(o, p["o"])
        tok = tok + mm(jax.nn.gelu(mm(_ln(tok, p["g2"], p["b2"]), p["f1"])), p["f2"])
        logits = mm(_ln(jnp.mean(tok, 1), p["gf"], p["bf"]), p["head"])
        return _xent(logits, labels)

    def step(p, m, v, t, vid, labels):
        l, g = jax.value_and_grad(loss)(p, vid, labels)
        m = tmap(lambda m, g: (0.9 * m.astype(F32) + 0.1 * g).astype(BF16), m, g)
        v = tmap(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        c1, c2 = 1.0 - 0.9 ** t, 1.0 - 0.999 ** t
        p = tmap(lambda p, m, v: p - 1e-3 * (m.astype(F32) / c1) / (jnp.sqrt(v / c2) + 1e-8),
                 p, m, v)
        return l, p, m, v
    D, Sn = 32, 8
    p = _attn_params({"patch": S(2, 2, 3, D), "pos": S(64, D), "tg": S(D), "tb": S(D),
                      "tl1": S(D, D), "tl2": S(D, Sn), "g1": S(D), "b1": S(D), "g2": S(D),
                      "b2": S(D), "f1": S(D, 64), "f2": S(64, D), "gf": S(D), "bf": S(D),
                      "head": S(D, 10)}, "", D)
    m = tmap(lambda s: S(*s.shape, dtype=BF16), p)
    return step, (p, m, p, S(), S(8, 4, 8, 8, 3), S(8, dtype=I32))


# ----------------------------------------------------------------------------- optimizers


def schedule_free_adamw_interpolation():
    """Schedule-Free AdamW on a keyword-spotting 1-D conv net (conv, dilated residual conv,
    LayerNorm, average pooling over frames): the gradient is taken at the interpolation
    y = (1 - b1) z + b1 x, the base iterate z takes an Adam-normalised step with warmup and the
    sqrt(1 - b2^t) correction plus weight decay at y, and the averaged iterate x moves towards
    z with weight lr^2 / sum(lr^2); no learning-rate schedule."""
    def loss(p, mel, labels):
        h = jax.nn.relu(_ln(_c1d(mel, p["c1"]) + p["cb1"], p["g1"], p["b1"]))
        h = h + jax.nn.relu(_ln(_c1d(h, p["c2"], 2) + p["cb2"], p["g2"], p["b2"]))
        h = jax.nn.relu(_ln(_c1d(h, p["c3"], 4) + p["cb3"], p["g3"], p["b3"]))
        return _xent(jnp.mean(h, 1) @ p["fc"] + p["fcb"], labels)

    def step(z, x, v, t, lr_sum, mel, labels):
        b1, b2, lr_max, wd = 0.9, 0.999, 2e-3, 1e-4
        y = tmap(lambda z, x: (1 - b1) * z + b1 * x, z, x)
        l, g = jax.value_and_grad(loss)(y, mel, labels)
        v = tmap(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        lr = lr_max * jnp.minimum(1.0, t / 100.0) * jnp.sqrt(1.0 - b2 ** t)
        z = tmap(lambda z, g, v, y: z - lr * (g / (jnp.sqrt(v) + 1e-8) + wd * y), z, g, v, y)
        lr_sum = lr_sum + lr * lr
        c = lr * lr / lr_sum
        x = tmap(lambda x, z: (1 - c) * x + c * z, x, z)
        return l, z, x, v, lr_sum
    F, C = 20, 32
    p = {"c1": S(3, F, C), "cb1": S(C), "g1": S(C), "b1": S(C), "c2": S(3, C, C), "cb2": S(C),
         "g2": S(C), "b2": S(C), "c3": S(3, C, C), "cb3": S(C), "g3": S(C), "b3": S(C),
         "fc": S(C, 12), "fcb": S(12)}
    return step, (p, p, p, S(), S(), S(16, 32, F), S(16, dtype=I32))


PROGRAMS = {}
for _fam, _fns in {
    "mlp": [siren_sine_implicit_image_fit, dcn_v2_low_rank_cross_ctr],
    "cnn": [repvgg_multibranch_bn_block, fcos_centerness_giou_head],
    "transformer": [deberta_disentangled_relpos_attention, mae_shuffled_patch_reconstruction],
    "rnn": [rwkv_time_mix_wkv_scan],
    "moe": [stmoe_top2_capacity_zloss],
    "vae": [tcvae_minibatch_weighted_tc],
    "unet": [wave_unet_sisdr_separation],
    "gnn": [egnn_equivariant_coord_update],
    "quant": [dorefa_kbit_weights_activations],
    "remat": [remat_convmixer_scanned_depthwise, remat_hourglass_shortened_transformer],
    "custom_vjp": [poincare_embedding_custom_vjp_arcosh],
    "control": [multisteps_scan_cond_apply_update, multitask_switch_task_heads,
                ista_sparse_coding_dictionary_while],
    "sort": [listmle_plackett_luce_sorted],
    "fft": [gfnet_global_filter_layers],
    "linalg": [deep_cca_two_view_eigh],
    "scatter_gather": [pointpillars_scatter_bev_grid],
    "dynamic": [soft_dtw_row_fori_update],
    "mixed": [bf16_tokenlearner_video_classifier],
    "optimizer": [schedule_free_adamw_interpolation],
}.items():
    for _f in _fns:
        PROGRAMS[_f.__name__] = (_fam, _f)

HOLDOUT = set(PROGRAMS)
GPU_SET = ["deberta_disentangled_relpos_attention", "mae_shuffled_patch_reconstruction",
           "repvgg_multibranch_bn_block", "fcos_centerness_giou_head", "rwkv_time_mix_wkv_scan",
           "stmoe_top2_capacity_zloss", "wave_unet_sisdr_separation",
           "remat_convmixer_scanned_depthwise", "remat_hourglass_shortened_transformer",
           "multisteps_scan_cond_apply_update", "multitask_switch_task_heads",
           "bf16_tokenlearner_video_classifier"]
SHARDED_SET = ["dcn_v2_low_rank_cross_ctr", "deberta_disentangled_relpos_attention",
               "repvgg_multibranch_bn_block", "stmoe_top2_capacity_zloss",
               "remat_hourglass_shortened_transformer", "tcvae_minibatch_weighted_tc",
               "schedule_free_adamw_interpolation", "bf16_tokenlearner_video_classifier"]
