"""Upstream Lucid's nn.functional names that torch lacks (lucid/nn/_functional_upstream.py),
against their definitions written in torch: values, gradients, shapes and errors."""

import pytest
import torch
import torch.nn.functional as TF

import lucid.nn.functional as F
from conftest import assert_close, to_lucid, to_torch


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_symlog_symexp_and_straight_through(device):
    x = rand(50, seed=1) * 30
    lx = to_lucid(x, device).requires_grad_()
    y = F.symlog(lx)
    assert_close(y, torch.sign(x) * torch.log1p(x.abs()), rtol=1e-12, atol=1e-12)
    assert_close(F.symexp(y), x, rtol=1e-10, atol=1e-10)
    y.sum().backward()
    assert_close(lx.grad, 1 / (1 + x.abs()), rtol=1e-12, atol=1e-12)
    soft = to_lucid(rand(6, seed=2), device).requires_grad_()
    hard = (soft > 0).double()
    out = F.straight_through(hard, soft)
    assert_close(out, to_torch(hard.cpu()), rtol=0, atol=0)
    (out * 3).sum().backward()
    assert_close(soft.grad, torch.full((6,), 3.0, dtype=torch.float64), rtol=0, atol=0)


def test_accuracy_and_correct_count(device):
    logits, target = rand(40, 7, seed=3), torch.randint(0, 7, (40,), generator=torch.Generator().manual_seed(4))
    want = (logits.argmax(-1) == target).double()
    ll, lt = to_lucid(logits, device), to_lucid(target, device)
    assert float(F.accuracy(ll, lt)) == pytest.approx(float(want.mean()))
    assert int(F.correct_count(ll, lt)) == int(want.sum())
    assert float(F.accuracy(ll.mT, lt, dim=0)) == pytest.approx(float(want.mean()))
    with pytest.raises(ValueError, match="does not match"):
        F.accuracy(ll, lt[:5])
    with pytest.raises(TypeError, match="class indices"):
        F.accuracy(ll, lt.double())


def test_repeat_kv_and_fused_linears(device):
    h = rand(2, 3, 5, 4, seed=5)
    want = h[:, :, None].expand(2, 3, 2, 5, 4).reshape(2, 6, 5, 4)  # (transformers' repeat_kv)
    assert_close(F.repeat_kv(to_lucid(h, device), 2), want, rtol=0, atol=0)
    with pytest.raises(ValueError, match="n_rep"):
        F.repeat_kv(to_lucid(h, device), 0)
    x, w, b = rand(8, 5, seed=6), rand(3, 5, seed=7), rand(3, seed=8)
    lx, lw, lb = (to_lucid(t, device) for t in (x, w, b))
    assert_close(F.fused_linear_relu(lx, lw, lb), TF.relu(TF.linear(x, w, b)), rtol=1e-12, atol=1e-12)
    for approximate in ("none", "tanh"):
        assert_close(F.fused_linear_gelu(lx, lw, lb, approximate), TF.gelu(TF.linear(x, w, b), approximate=approximate),
                     rtol=1e-12, atol=1e-12)


def test_nearest_codebook_and_two_hot(device):
    x, codebook = rand(30, 4, seed=9), rand(10, 4, seed=10)
    got = F.nearest_codebook(to_lucid(x, device), to_lucid(codebook, device))
    assert to_torch(got.cpu()).tolist() == torch.cdist(x, codebook).argmin(-1).tolist()
    with pytest.raises(ValueError, match="codebook must be"):
        F.nearest_codebook(to_lucid(x, device), to_lucid(codebook[:, :3], device))
    bins = torch.linspace(-2.0, 3.0, 11, dtype=torch.float64)
    values = torch.tensor([-5.0, -2.0, -1.3, 0.0, 0.26, 2.999, 3.0, 7.0], dtype=torch.float64)
    enc = to_torch(F.two_hot(to_lucid(values, device), to_lucid(bins, device)).cpu())
    assert tuple(enc.shape) == (8, 11) and bool((enc >= 0).all()) and bool((enc > 0).sum(-1).le(2).all())
    assert_close(enc.sum(-1), torch.ones(8, dtype=torch.float64), rtol=1e-12, atol=1e-12)
    assert_close((enc * bins).sum(-1), values.clamp(-2.0, 3.0), rtol=1e-12, atol=1e-12)
