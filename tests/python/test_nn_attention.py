"""scaled_dot_product_attention, MultiheadAttention and the Transformer modules against
torch: identical weights (load_state_dict) and inputs give the same outputs and
gradients; masks, batch_first, norm_first, key padding, bad input. Tests taking `device`
run on the GPU too, against torch on "cuda"."""

import pytest
import torch

import lucid
import lucid.nn as lnn
import lucid.nn.functional as LF
import torch.nn.functional as TF
from conftest import to_lucid, to_torch, default_device


def tdev(device):
    """torch's name for lucid's device."""
    return "cuda" if device == "gpu" else "cpu"


def same(l, t, tol=1e-9):
    """lucid `l` has torch `t`'s values, and is on its device (gpu for cuda)."""
    assert tuple(l.shape) == tuple(t.shape)
    assert l.device.type == ("gpu" if t.is_cuda else "cpu"), (l.device, t.device)
    t = t.detach().cpu()
    assert torch.allclose(to_torch(l.detach()).double(), t.double(), atol=tol, rtol=tol, equal_nan=True), (l, t)


def leaf(t, device=None):
    device = device or default_device()
    return to_lucid(t.detach(), device).requires_grad_()


def copy_weights(lm, tm):
    sd = {k: to_lucid(v.cpu()) for k, v in tm.state_dict().items()}
    assert set(lm.state_dict()) == set(sd)
    lm.load_state_dict(sd)


def pair(lm, tm, device):
    """lm with tm's weights, both moved to `device` (torch's twin of it)."""
    copy_weights(lm, tm)
    return lm.to(device), tm.to(tdev(device))


def check_grads(lm, tm, tol=1e-8):
    for (n, lp), (_, tp) in zip(sorted(lm.named_parameters()), sorted(tm.named_parameters())):
        if tp.grad is None:
            assert lp.grad is None or float(lp.grad.abs().sum()) == 0, n
        else:
            same(lp.grad, tp.grad, tol)


D = torch.float64


@pytest.mark.parametrize("mask", [None, "bool", "float", "causal", "bool_bcast"])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_sdpa_matches_torch(mask, scale, device):
    q = torch.randn(2, 3, 5, 4, dtype=D, device=tdev(device), requires_grad=True)
    k = torch.randn(2, 3, 6, 4, dtype=D, device=tdev(device), requires_grad=True)
    v = torch.randn(2, 3, 6, 7, dtype=D, device=tdev(device), requires_grad=True)
    kw = {"scale": scale}
    if mask == "bool":
        m = torch.rand(2, 3, 5, 6, device=tdev(device)) > 0.3
        m[..., 0] = True
        kw["attn_mask"] = m
    elif mask == "bool_bcast":
        m = torch.rand(5, 6, device=tdev(device)) > 0.3
        m[..., 0] = True
        kw["attn_mask"] = m
    elif mask == "float":
        kw["attn_mask"] = torch.randn(5, 6, dtype=D, device=tdev(device))
    elif mask == "causal":
        kw["is_causal"] = True
    lq, lk, lv = leaf(q, device), leaf(k, device), leaf(v, device)
    lkw = {k2: (to_lucid(v2, device) if isinstance(v2, torch.Tensor) else v2) for k2, v2 in kw.items()}
    t = TF.scaled_dot_product_attention(q, k, v, **kw)
    l = LF.scaled_dot_product_attention(lq, lk, lv, **lkw)
    same(l, t)
    g = torch.randn_like(t)
    t.backward(g)
    l.backward(to_lucid(g, device))
    for a, b in ((lq, q), (lk, k), (lv, v)):
        same(a.grad, b.grad)


def test_sdpa_gqa_and_gradcheck(device):
    q = torch.randn(1, 4, 3, 2, dtype=D, device=tdev(device))
    k = torch.randn(1, 2, 3, 2, dtype=D, device=tdev(device))
    v = torch.randn(1, 2, 3, 2, dtype=D, device=tdev(device))
    same(LF.scaled_dot_product_attention(to_lucid(q, device), to_lucid(k, device), to_lucid(v, device),
                                         enable_gqa=True),
         TF.scaled_dot_product_attention(q, k, v, enable_gqa=True))
    args = tuple(lucid.randn(2, 3, 2, dtype=lucid.float64, device=device, requires_grad=True) for _ in range(3))
    assert lucid.autograd.gradcheck(lambda a, b, c: LF.scaled_dot_product_attention(a, b, c, is_causal=True), args)


def test_sdpa_bad_input(device):
    q = lucid.randn(2, 3, 4, device=device)
    with pytest.raises(RuntimeError):
        LF.scaled_dot_product_attention(q, lucid.randn(2, 3, 5, device=device), lucid.randn(2, 3, 4, device=device))
    with pytest.raises(RuntimeError):
        LF.scaled_dot_product_attention(q, q, q, attn_mask=lucid.ones(3, 3, dtype=lucid.bool, device=device),
                                        is_causal=True)


MHA_CONFIGS = [
    {},
    {"bias": False},
    {"add_bias_kv": True},
    {"add_zero_attn": True},
    {"kdim": 3, "vdim": 5},
    {"batch_first": True},
    {"add_bias_kv": True, "add_zero_attn": True, "batch_first": True},
]


@pytest.mark.parametrize("cfg", MHA_CONFIGS)
@pytest.mark.parametrize("masks", [None, "attn_bool", "attn_float", "kpm", "both"])
@pytest.mark.parametrize("avg", [True, False])
def test_mha_matches_torch(cfg, masks, avg, device):
    torch.manual_seed(0)
    E, H, L, S, N = 8, 2, 4, 5, 3
    tm = torch.nn.MultiheadAttention(E, H, **cfg).double()
    lm = lnn.MultiheadAttention(E, H, **cfg).double()
    lm, tm = pair(lm, tm, device)
    bf = cfg.get("batch_first", False)
    qs = (N, L, E) if bf else (L, N, E)
    ks = (N, S, cfg.get("kdim", E)) if bf else (S, N, cfg.get("kdim", E))
    vs = (N, S, cfg.get("vdim", E)) if bf else (S, N, cfg.get("vdim", E))
    q, k, v = (torch.randn(*s, dtype=D, device=tdev(device), requires_grad=True) for s in (qs, ks, vs))
    kw = {}
    if masks in ("attn_bool", "both"):
        m = torch.rand(L, S) > 0.7
        m[:, 0] = False
        kw["attn_mask"] = m
    if masks == "attn_float":
        kw["attn_mask"] = torch.randn(N * H, L, S, dtype=D)
    if masks in ("kpm", "both"):
        m = torch.zeros(N, S, dtype=torch.bool)
        m[0, -2:] = True
        m[2, 1] = True
        kw["key_padding_mask"] = m
    kw = {a: b.to(tdev(device)) for a, b in kw.items()}
    lkw = {a: to_lucid(b, device) for a, b in kw.items()}
    lq, lk, lv = leaf(q, device), leaf(k, device), leaf(v, device)
    to, tw = tm(q, k, v, average_attn_weights=avg, **kw)
    lo, lw = lm(lq, lk, lv, average_attn_weights=avg, **lkw)
    same(lo, to)
    same(lw, tw)
    (to.sum() + (tw * tw).sum()).backward()
    (lo.sum() + (lw * lw).sum()).backward()
    for a, b in ((lq, q), (lk, k), (lv, v)):
        same(a.grad, b.grad)
    check_grads(lm, tm)


def test_mha_self_attention_no_weights_and_unbatched(device):
    tm = torch.nn.MultiheadAttention(6, 3).double()
    lm = lnn.MultiheadAttention(6, 3).double()
    lm, tm = pair(lm, tm, device)
    x = torch.randn(4, 6, dtype=D, device=tdev(device))
    lx = to_lucid(x, device)
    to, tw = tm(x, x, x)
    lo, lw = lm(lx, lx, lx)
    same(lo, to)
    same(lw, tw)
    x3 = torch.randn(4, 2, 6, dtype=D, device=tdev(device))
    lx3 = to_lucid(x3, device)
    lo, lw = lm(lx3, lx3, lx3, need_weights=False)
    assert lw is None
    same(lo, tm(x3, x3, x3, need_weights=False)[0])


@pytest.mark.parametrize("cfg,cross", [({}, False), ({}, True), ({"kdim": 3, "vdim": 5}, True),
                                       ({"bias": False}, False)])
def test_mha_batch_first_without_weights_matches_torch(cfg, cross, device):
    """The fused path projects a batch-first module's inputs as the contiguous [N, L, E]
    tensors they are (no copy, the bias inside the products): values and gradients as
    torch's, for self-attention, cross-attention and other key / value sizes."""
    torch.manual_seed(2)
    E, H, L, S, N = 8, 2, 4, 5, 3
    tm = torch.nn.MultiheadAttention(E, H, batch_first=True, **cfg).double()
    lm = lnn.MultiheadAttention(E, H, batch_first=True, **cfg).double()
    lm, tm = pair(lm, tm, device)
    q = torch.randn(N, L, E, dtype=D, device=tdev(device), requires_grad=True)
    if cross:
        k = torch.randn(N, S, cfg.get("kdim", E), dtype=D, device=tdev(device), requires_grad=True)
        v = torch.randn(N, S, cfg.get("vdim", E), dtype=D, device=tdev(device), requires_grad=True)
    else:
        k = v = q
    kpm = torch.zeros(N, k.shape[1], dtype=torch.bool, device=tdev(device))
    kpm[1, -1] = True
    lq = leaf(q, device)
    lk, lv = (leaf(k, device), leaf(v, device)) if cross else (lq, lq)
    to, _ = tm(q, k, v, need_weights=False, key_padding_mask=kpm)
    lo, lw = lm(lq, lk, lv, need_weights=False, key_padding_mask=to_lucid(kpm, device))
    assert lw is None and lo.is_contiguous()
    same(lo, to)
    (to * to).sum().backward()
    (lo * lo).sum().backward()
    for a, b in ((lq, q), (lk, k), (lv, v)) if cross else ((lq, q),):
        same(a.grad, b.grad, 1e-8)
    check_grads(lm, tm)


def test_mha_bad_input(device):
    with pytest.raises(AssertionError, match="divisible"):
        lnn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError):
        lnn.MultiheadAttention(0, 1)
    m = lnn.MultiheadAttention(4, 2).to(device)
    x = lucid.randn(3, 2, 4, device=device)
    with pytest.raises(RuntimeError, match="attn_mask"):
        m(x, x, x, attn_mask=lucid.zeros(2, 2, device=device))
    with pytest.raises(AssertionError):
        m(x, x, x, key_padding_mask=lucid.zeros(3, 3, dtype=lucid.bool, device=device))


@pytest.mark.parametrize("kw", [{}, {"norm_first": True}, {"activation": "gelu", "batch_first": True},
                                {"bias": False}, {"activation": TF.silu, "layer_norm_eps": 1e-3}])
def test_encoder_layer_and_encoder_match_torch(kw, device):
    torch.manual_seed(1)
    lkw = dict(kw)
    if kw.get("activation") is TF.silu:
        lkw["activation"] = LF.silu
    tl = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **kw).double()
    ll = lnn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **lkw).double()
    copy_weights(ll, tl)
    tm = torch.nn.TransformerEncoder(tl, 2, norm=torch.nn.LayerNorm(8).double(), enable_nested_tensor=False)
    lm = lnn.TransformerEncoder(ll, 2, norm=lnn.LayerNorm(8).double())
    lm, tm = pair(lm, tm, device)
    x = torch.randn(3, 5, 8, dtype=D, device=tdev(device), requires_grad=True)
    lx = leaf(x, device)
    n = 5 if kw.get("batch_first") else 3
    mask = torch.nn.Transformer.generate_square_subsequent_mask(n, dtype=D, device=tdev(device))
    lmask = lnn.Transformer.generate_square_subsequent_mask(n, dtype=lucid.float64, device=device)
    same(lmask, mask)
    to = tm(x, mask=mask)
    lo = lm(lx, mask=lmask)
    same(lo, to)
    to.pow(2).sum().backward()
    lo.pow(2).sum().backward()
    same(lx.grad, x.grad, 1e-8)
    check_grads(lm, tm)
    # train mode with dropout=0 equals eval mode
    lm.eval()
    same(lm(lx, mask=lmask), to)


def test_decoder_and_transformer_match_torch(device):
    torch.manual_seed(2)
    tm = torch.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, batch_first=True).double()
    lm = lnn.Transformer(8, 2, 2, 2, 16, dropout=0.0, batch_first=True).double()
    lm, tm = pair(lm, tm, device)
    src = torch.randn(2, 5, 8, dtype=D, device=tdev(device), requires_grad=True)
    tgt = torch.randn(2, 4, 8, dtype=D, device=tdev(device), requires_grad=True)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=D, device=tdev(device))
    kpm = torch.zeros(2, 5, dtype=torch.bool, device=tdev(device))
    kpm[1, -1] = True
    to = tm(src, tgt, tgt_mask=tmask, src_key_padding_mask=kpm, memory_key_padding_mask=kpm)
    ls, lt = leaf(src, device), leaf(tgt, device)
    lo = lm(ls, lt, tgt_mask=to_lucid(tmask, device), src_key_padding_mask=to_lucid(kpm, device),
            memory_key_padding_mask=to_lucid(kpm, device))
    same(lo, to)
    to.sum().backward()
    lo.sum().backward()
    same(ls.grad, src.grad, 1e-8)
    same(lt.grad, tgt.grad, 1e-8)
    check_grads(lm, tm)


def test_decoder_layer_norm_first(device):
    tl = torch.nn.TransformerDecoderLayer(8, 4, 12, dropout=0.0, norm_first=True).double()
    ll = lnn.TransformerDecoderLayer(8, 4, 12, dropout=0.0, norm_first=True).double()
    ll, tl = pair(ll, tl, device)
    tgt, mem = torch.randn(3, 2, 8, dtype=D, device=tdev(device)), torch.randn(4, 2, 8, dtype=D, device=tdev(device))
    same(ll(to_lucid(tgt, device), to_lucid(mem, device)), tl(tgt, mem))


def test_transformer_bad_input(device):
    with pytest.raises(RuntimeError, match="relu/gelu"):
        lnn.TransformerEncoderLayer(4, 2, activation="tanh")
    m = lnn.Transformer(4, 2, 1, 1, 8).to(device)
    with pytest.raises(RuntimeError, match="batch number"):
        m(lucid.randn(3, 2, 4, device=device), lucid.randn(3, 5, 4, device=device))


def test_encoder_layers_are_independent_copies(device):
    layer = lnn.TransformerEncoderLayer(4, 2, 8).to(device)
    enc = lnn.TransformerEncoder(layer, 2)
    p0 = enc.layers[0].linear1.weight
    p1 = enc.layers[1].linear1.weight
    assert p0 is not p1 and p0 is not layer.linear1.weight
    assert p0.device.type == p1.device.type == device
    assert torch.equal(to_torch(p0.detach()), to_torch(p1.detach()))
    with lucid.no_grad():
        p0.add_(1.0)
    assert not torch.equal(to_torch(p0.detach()), to_torch(p1.detach()))
    assert len(list(enc.parameters())) == 2 * len(list(layer.parameters()))


def test_dropout_in_attention(device):
    q = lucid.randn(2, 3, 4, device=device)
    assert float(LF.scaled_dot_product_attention(q, q, q, dropout_p=1.0).abs().sum()) == 0.0
    m = lnn.MultiheadAttention(4, 2, dropout=0.5).to(device)
    x = lucid.randn(3, 2, 4, device=device)
    m.eval()
    a = m(x, x, x)[0]
    assert torch.equal(to_torch(a.detach()), to_torch(m(x, x, x)[0].detach()))
    m.train()
    lucid.manual_seed(0)
    b = m(x, x, x)[0]
    assert not torch.allclose(to_torch(a.detach()), to_torch(b.detach()))


def test_fully_masked_rows_match_torch(device):
    q = torch.randn(1, 2, 3, 4, dtype=D, device=tdev(device), requires_grad=True)
    m = torch.ones(3, 3, dtype=torch.bool, device=tdev(device))
    m[0] = False
    lq = leaf(q, device)
    t = TF.scaled_dot_product_attention(q, q, q, attn_mask=m)
    l = LF.scaled_dot_product_attention(lq, lq, lq, attn_mask=to_lucid(m, device))
    same(l, t)
    t.sum().backward()
    l.sum().backward()
    same(lq.grad, q.grad)
    tm = torch.nn.MultiheadAttention(4, 2).double()
    lm = lnn.MultiheadAttention(4, 2).double()
    lm, tm = pair(lm, tm, device)
    x = torch.randn(3, 2, 4, dtype=D, device=tdev(device))
    kpm = torch.tensor([[True, True, True], [False, True, False]], device=tdev(device))
    lx = to_lucid(x, device)
    same(lm(lx, lx, lx, key_padding_mask=to_lucid(kpm, device), need_weights=False)[0],
         tm(x, x, x, key_padding_mask=kpm, need_weights=False)[0])


def test_mha_and_encoder_layer_gradcheck(device):
    m = lnn.MultiheadAttention(4, 2, add_bias_kv=True).double().to(device)
    kpm = lucid.tensor([[False, False, True]], device=device)
    q = lucid.randn(2, 1, 4, dtype=lucid.float64, device=device, requires_grad=True)
    kv = lucid.randn(3, 1, 4, dtype=lucid.float64, device=device, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda q, kv: m(q, kv, kv, key_padding_mask=kpm)[0], (q, kv))
    layer = lnn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, activation="gelu", norm_first=True).double().to(device)
    x = lucid.randn(3, 1, 4, dtype=lucid.float64, device=device, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda x: layer(x), (x,))


def test_transformer_unbatched_and_float_key_padding_mask(device):
    torch.manual_seed(7)
    tm = torch.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0).double()
    lm = lnn.Transformer(8, 2, 1, 1, 16, dropout=0.0).double()
    lm, tm = pair(lm, tm, device)
    src, tgt = (torch.randn(n, 8, dtype=D, device=tdev(device)) for n in (5, 3))
    same(lm(to_lucid(src, device), to_lucid(tgt, device)), tm(src, tgt))
    mha_t = torch.nn.MultiheadAttention(8, 4, kdim=3, vdim=5).double()
    mha_l = lnn.MultiheadAttention(8, 4, kdim=3, vdim=5).double()
    mha_l, mha_t = pair(mha_l, mha_t, device)
    q, k, v, kpm = (torch.randn(*s, dtype=D, device=tdev(device)) for s in ((2, 3, 8), (4, 3, 3), (4, 3, 5), (3, 4)))
    lq, lk, lv = to_lucid(q, device), to_lucid(k, device), to_lucid(v, device)
    same(mha_l(lq, lk, lv, key_padding_mask=to_lucid(kpm, device), need_weights=False)[0],
         mha_t(q, k, v, key_padding_mask=kpm, need_weights=False)[0])
