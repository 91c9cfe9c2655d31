"""Upstream Lucid's GroupedQueryAttention and MultiQueryAttention
(python/lucid/nn/modules/attention.py), checked against torch: with as many key / value
heads as query heads, against torch.nn.MultiheadAttention with the same weights; with
fewer, against MultiheadAttention given the key / value weights repeated per query head
(what grouped-query attention computes), gradients included."""

import numpy as np
import pytest
import torch

import lucid
import lucid.nn as nn


def to_torch(t):
    return torch.from_numpy(np.array(t.detach().cpu().numpy(), copy=True))


def torch_reference(m, group):
    """torch's MultiheadAttention holding m's weights, the key / value rows repeated for
    every query head (so a kv head's gradient is the sum over its group's copies)."""
    E, D = m.embed_dim, m.head_dim
    ref = torch.nn.MultiheadAttention(E, m.num_heads, dropout=0.0, bias=m.in_proj_bias is not None,
                                      add_bias_kv=m.bias_k is not None, add_zero_attn=m.add_zero_attn,
                                      kdim=m.kdim + 1, vdim=m.vdim + 1, batch_first=m.batch_first,
                                      dtype=torch.float64)  # (kdim + 1: separate weights, replaced below)

    def rep(w, dim):
        shape = list(w.shape)
        heads = w.unflatten(dim, (shape[dim] // D, 1, D))
        sizes = list(heads.shape)
        sizes[dim + 1] = group
        shape[dim] *= group
        return heads.expand(*sizes).reshape(shape)

    leaves = {name: to_torch(p).requires_grad_() for name, p in m.named_parameters()}
    expanded = {"q_proj_weight": leaves["q_proj_weight"], "out_proj.weight": leaves["out_proj.weight"],
                "k_proj_weight": rep(leaves["k_proj_weight"], 0), "v_proj_weight": rep(leaves["v_proj_weight"], 0)}
    if m.in_proj_bias is not None:
        expanded["out_proj.bias"] = leaves["out_proj.bias"]
        kv = m.num_kv_heads * D
        b_q, b_k, b_v = leaves["in_proj_bias"].split([E, kv, kv])
        expanded["in_proj_bias"] = torch.cat([b_q, rep(b_k, 0), rep(b_v, 0)])
    if m.bias_k is not None:
        expanded["bias_k"], expanded["bias_v"] = rep(leaves["bias_k"], 2), rep(leaves["bias_v"], 2)
    return ref, leaves, expanded


def run_torch(ref, expanded, *args, **kwargs):
    # the repeated tensors stand in for the module's parameters for this call
    return torch.func.functional_call(ref, expanded, args, kwargs)


@pytest.mark.parametrize("num_heads, num_kv_heads", [(4, 4), (4, 2), (6, 1), (8, 2)])
@pytest.mark.parametrize("batch_first", [False, True])
def test_matches_multihead_attention_with_repeated_key_value_heads(num_heads, num_kv_heads, batch_first):
    lucid.manual_seed(0)
    E, L, S, B = 24, 5, 7, 3
    m = nn.GroupedQueryAttention(E, num_heads, num_kv_heads, kdim=10, vdim=12, batch_first=batch_first,
                                 dtype=lucid.float64)
    rng = np.random.default_rng(1)
    shape = (B, L) if batch_first else (L, B)
    kshape = (B, S) if batch_first else (S, B)
    q0, k0, v0 = rng.standard_normal((*shape, E)), rng.standard_normal((*kshape, 10)), rng.standard_normal(
        (*kshape, 12))
    mask0 = rng.standard_normal((L, S))
    pad0 = np.zeros((B, S), bool)
    pad0[1, -2:] = True
    ref, leaves, expanded = torch_reference(m, num_heads // num_kv_heads)
    ins = [lucid.tensor(a, requires_grad=True) for a in (q0, k0, v0)]
    out, w = m(*ins, key_padding_mask=lucid.tensor(pad0), attn_mask=lucid.tensor(mask0))
    t_ins = [torch.tensor(a, requires_grad=True) for a in (q0, k0, v0)]
    t_out, t_w = run_torch(ref, expanded, *t_ins, key_padding_mask=torch.tensor(pad0), attn_mask=torch.tensor(mask0))
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.detach().numpy(), t_w.detach().numpy(), rtol=1e-10, atol=1e-12)
    g0 = rng.standard_normal(out.shape)
    (out * lucid.tensor(g0)).sum().backward()
    (t_out * torch.tensor(g0)).sum().backward()
    for a, b in zip(ins, t_ins):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-11)
    for name, p in m.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), leaves[name].grad.numpy(), rtol=1e-9, atol=1e-11, err_msg=name)


def test_bias_kv_zero_attn_unbatched_and_per_head_weights():
    lucid.manual_seed(2)
    E, L = 16, 4
    m = nn.GroupedQueryAttention(E, 4, 2, add_bias_kv=True, add_zero_attn=True, dtype=lucid.float64)
    ref, _, expanded = torch_reference(m, 2)
    x0 = np.random.default_rng(3).standard_normal((L, E))
    out, w = m(lucid.tensor(x0), lucid.tensor(x0), lucid.tensor(x0), average_attn_weights=False)
    t_out, t_w = run_torch(ref, expanded, *(torch.tensor(x0),) * 3, average_attn_weights=False)
    assert tuple(out.shape) == (L, E) and tuple(w.shape) == (4, L, L + 2)
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.numpy(), t_w.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_equal_heads_is_multihead_attention_and_need_weights_false():
    lucid.manual_seed(4)
    E = 12
    m = nn.GroupedQueryAttention(E, 3, 3, batch_first=True, dtype=lucid.float64)
    mha = nn.MultiheadAttention(E, 3, batch_first=True, kdim=E + 1, vdim=E + 1, dtype=lucid.float64)
    with lucid.no_grad():
        mha.q_proj_weight = nn.Parameter(m.q_proj_weight.clone())
        mha.k_proj_weight = nn.Parameter(m.k_proj_weight.clone())
        mha.v_proj_weight = nn.Parameter(m.v_proj_weight.clone())
        mha.in_proj_bias.copy_(m.in_proj_bias)
        mha.out_proj.weight.copy_(m.out_proj.weight)
        mha.out_proj.bias.copy_(m.out_proj.bias)
    x = lucid.randn(2, 5, E, dtype=lucid.float64)
    causal = nn.Transformer.generate_square_subsequent_mask(5, dtype=lucid.float64)
    a, none = m(x, x, x, need_weights=False, attn_mask=causal, is_causal=True)
    b, _ = mha(x, x, x, attn_mask=causal)
    assert none is None
    np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_multi_query_attention_has_one_key_value_head():
    m = nn.MultiQueryAttention(32, 8, bias=False)
    assert m.num_kv_heads == 1 and tuple(m.k_proj_weight.shape) == (4, 32)
    assert m.in_proj_bias is None and m.out_proj.bias is None
    assert sorted(n for n, _ in m.named_parameters()) == ["k_proj_weight", "out_proj.weight", "q_proj_weight",
                                                          "v_proj_weight"]
    x = lucid.randn(6, 2, 32)
    out, w = m(x, x, x)
    assert tuple(out.shape) == (6, 2, 32) and tuple(w.shape) == (2, 6, 6)
    np.testing.assert_allclose(w.sum(-1).numpy(), 1.0, rtol=1e-6)
    sd = m.state_dict()
    m2 = nn.MultiQueryAttention(32, 8, bias=False)
    m2.load_state_dict(sd)
    np.testing.assert_array_equal(m2(x, x, x)[0].numpy(), out.numpy())
    assert "num_kv_heads" not in repr(m) and "num_kv_heads=2" in repr(nn.GroupedQueryAttention(8, 4, 2))


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match=r"num_heads \(6\) must be a multiple of num_kv_heads \(4\)"):
        nn.GroupedQueryAttention(24, 6, 4)
    with pytest.raises(ValueError, match=r"embed_dim \(10\) must be divisible by num_heads \(4\)"):
        nn.GroupedQueryAttention(10, 4, 2)
    with pytest.raises(ValueError, match="num_kv_heads must be a positive int"):
        nn.GroupedQueryAttention(8, 4, 0)
    m = nn.GroupedQueryAttention(8, 4, 2)
    with pytest.raises(AssertionError, match="expecting embedding dimension of 8"):
        m(lucid.randn(3, 2, 6), lucid.randn(3, 2, 8), lucid.randn(3, 2, 8))
    with pytest.raises(RuntimeError, match="2D attn_mask"):
        m(lucid.randn(3, 2, 8), lucid.randn(4, 2, 8), lucid.randn(4, 2, 8), attn_mask=lucid.zeros(3, 3))


@pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")
def test_gpu_matches_the_cpu():
    lucid.manual_seed(5)
    m = nn.GroupedQueryAttention(32, 8, 2, batch_first=True)
    x = lucid.randn(2, 9, 32)
    want, w_want = m(x, x, x)
    m.to("gpu")
    got, w_got = m(x.to("gpu"), x.to("gpu"), x.to("gpu"))
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w_got.cpu().numpy(), w_want.numpy(), rtol=1e-4, atol=1e-5)
