"""nn.functional paths written in Python over lucid's ops, on the GPU: every tensor they
make (dropout masks, padding indices, causal masks, bag offsets, class ranges) must be
made on the input's device, and the results must be lucid's CPU results."""

import copy

import pytest
import torch

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

# The GPU against the CPU: a tensor made here without a device is the CPU side, whatever
# the run's default device (LUCID_TEST_DEFAULT_DEVICE).
pytestmark = [pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here"),
              pytest.mark.usefixtures("cpu_default")]


def _same(g, c, tol=1e-5):
    assert g.device.type == "gpu", g.device
    assert g.dtype == c.dtype and tuple(g.shape) == tuple(c.shape)
    torch.testing.assert_close(torch.tensor(g.cpu().tolist()), torch.tensor(c.tolist()), rtol=tol, atol=tol)


def _on_both(f, *args):
    """f over the CPU arguments and over GPU copies of them (tensors only)."""
    gpu = [a.to("gpu") if isinstance(a, lucid.Tensor) else a for a in args]
    return f(*gpu), f(*args)


@pytest.mark.parametrize("drop", [lambda x: F.dropout(x, 0.3), lambda x: F.dropout2d(x, 0.5),
                                  lambda x: F.alpha_dropout(x, 0.2, True)], ids=["dropout", "dropout2d", "alpha"])
def test_dropout_draws_its_mask_on_the_gpu_with_the_cpu_bits(drop):
    x = lucid.randn(8, 6, 5, 5)
    lucid.manual_seed(3)
    c = drop(x)
    lucid.manual_seed(3)
    g = drop(x.to("gpu"))
    _same(g, c, tol=0)
    lucid.manual_seed(4)
    assert not lucid.equal(drop(x.to("gpu")).cpu(), c)  # another seed, another mask


def test_dropout_backward_on_the_gpu():
    x = lucid.randn(100, 50, device="gpu", requires_grad=True)
    y = F.dropout(x, 0.4)
    y.sum().backward()
    assert x.grad.device.type == "gpu"
    keep = (y != 0).float()
    _same(x.grad, (keep / 0.6).cpu())


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_modes_on_the_gpu(mode):
    x = lucid.randn(2, 3, 5, 6)
    g, c = _on_both(lambda t: F.pad(t, (2, 1, 1, 3), mode=mode), x)
    _same(g, c, tol=0)


def test_causal_attention_on_the_gpu():
    q, k, v = lucid.randn(2, 3, 7, 8), lucid.randn(2, 3, 7, 8), lucid.randn(2, 3, 7, 8)
    g, c = _on_both(lambda a, b, d: F.scaled_dot_product_attention(a, b, d, is_causal=True), q, k, v)
    _same(g, c)


def test_multihead_attention_with_a_zero_attention_row_on_the_gpu():
    lucid.manual_seed(0)
    m = nn.MultiheadAttention(8, 2, add_zero_attn=True, batch_first=True)
    mg = copy.deepcopy(m).to("gpu")
    x = lucid.randn(3, 5, 8)
    c, _ = m(x, x, x)
    g, _ = mg(x.to("gpu"), x.to("gpu"), x.to("gpu"))
    _same(g, c)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_on_the_gpu(mode):
    w = lucid.randn(10, 4)
    idx = lucid.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    offsets = lucid.tensor([0, 4])
    g, c = _on_both(lambda a, i, o: F.embedding_bag(i, a, o, mode=mode), w, idx, offsets)
    _same(g, c)
    g, c = _on_both(lambda a, i: F.embedding_bag(i, a, mode=mode), w, idx.reshape(2, 4))
    _same(g, c)


def test_embedding_renorm_and_grad_scaling_on_the_gpu():
    w = lucid.randn(10, 4) * 3
    idx = lucid.tensor([1, 2, 2, 5])
    wg = w.to("gpu")
    F.embedding(idx.to("gpu"), wg, max_norm=1.0)
    F.embedding(idx, w, max_norm=1.0)
    _same(wg, w)
    wl = w.clone().requires_grad_()
    wgl = w.to("gpu").requires_grad_()
    F.embedding(idx, wl, scale_grad_by_freq=True).sum().backward()
    F.embedding(idx.to("gpu"), wgl, scale_grad_by_freq=True).sum().backward()
    _same(wgl.grad, wl.grad)


def test_margin_losses_on_the_gpu():
    x = lucid.randn(4, 5)
    y = lucid.tensor([[3, 0, -1, 1, 2], [1, 2, 3, 0, -1], [0, -1, 1, 1, 1], [4, 2, -1, 0, 0]])
    g, c = _on_both(F.multilabel_margin_loss, x, y)
    _same(g, c)
    t = lucid.tensor([1, 0, 4, 2])
    g, c = _on_both(F.multi_margin_loss, x, t)
    _same(g, c)


def test_max_unpool_on_the_gpu():
    x = lucid.randn(2, 3, 6, 6)
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    g, c = _on_both(lambda o, i: F.max_unpool2d(o, i, 2), out, idx)
    _same(g, c, tol=0)


def test_gradgradcheck_on_the_gpu():
    x = lucid.randn(4, dtype=lucid.float64, device="gpu", requires_grad=True)
    assert lucid.autograd.gradgradcheck(lambda t: (t.sin() * t.exp()).sum(), (x,))
