"""Upstream Lucid's own layers (nn/_functional_lucid_layers.py, nn/modules/lucid_layers.py):
NoisyLinear / noisy_linear / scaled_noise against the NoisyNet formulas written in torch
(outputs and the gradients of all four parameters), its held noise, reset_noise and
lucid.manual_seed, train against eval; VectorQuantizer / vector_quantize against NumPy
(indices are the argmin of the distances, the loss terms and perplexity by formula), the
straight-through gradient and which term trains what; FusedLinear against Linear plus its
activation and against torch, its Linear-compatible state_dict; the error messages."""

import math
import subprocess
import sys

import numpy as np
import pytest
import torch

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from conftest import to_lucid

gpu = pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")
f64 = lucid.float64


def arr(t):
    return np.asarray(t.detach().cpu().tolist(), dtype=np.float64)


def tt(t):
    """A float64 torch leaf (requiring grad) with lucid tensor t's values."""
    return torch.tensor(arr(t), dtype=torch.float64, requires_grad=True)


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def close(lt, ref, tol=1e-10):
    ref = ref.detach().numpy() if isinstance(ref, torch.Tensor) else np.asarray(ref, dtype=np.float64)
    np.testing.assert_allclose(arr(lt), ref, rtol=tol, atol=tol)


# ---- torch / NumPy references ----------------------------------------------------------------

def ref_f(e):
    """Fortunato et al. (2017), factorised noise: f(x) = sgn(x) sqrt(|x|)."""
    return torch.sign(e) * torch.sqrt(torch.abs(e))


def ref_noisy_linear(x, w_mu, w_sigma, b_mu, b_sigma, eps_in, eps_out):
    """Eq. (9)-(11) of the paper: w = mu_w + sigma_w * f(eps_out) f(eps_in)^T, b = mu_b + sigma_b * f(eps_out)."""
    w = w_mu + w_sigma * torch.outer(ref_f(eps_out), ref_f(eps_in))
    y = x @ w.T
    return y if b_mu is None else y + b_mu + b_sigma * ref_f(eps_out)


def ref_nearest(x, codebook):
    """The argmin over k of ||x - e_k||^2, every difference written out."""
    x, codebook = np.asarray(x), np.asarray(codebook)
    d = ((x[..., None, :] - codebook) ** 2).sum(-1)
    return d.argmin(-1)


def ref_perplexity(indices, k):
    p = np.bincount(np.asarray(indices).reshape(-1), minlength=k) / np.asarray(indices).size
    p = p[p > 0]
    return float(np.exp(-(p * np.log(p)).sum()))


# ---- scaled_noise ------------------------------------------------------------------------------

def test_scaled_noise_is_sign_times_root_of_magnitude(device):
    x = np.array([-9.0, -4.0, -0.25, 0.0, 0.25, 4.0, 9.0, 100.0])
    got = F.scaled_noise(lucid.tensor(x.tolist(), dtype=f64, device=device))
    close(got, np.sign(x) * np.sqrt(np.abs(x)), tol=0)
    r = lucid.randn(300, device=device)
    assert bool(((F.scaled_noise(r) * r) >= 0).all())  # keeps the sign


# ---- noisy_linear ---------------------------------------------------------------------------------

@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
def test_noisy_linear_matches_torch_values_and_gradients(device, bias):
    x, w_mu, w_sigma = rand(2, 3, 5, seed=1), rand(4, 5, seed=2), rand(4, 5, seed=3).abs()
    b_mu, b_sigma = (rand(4, seed=4), rand(4, seed=5).abs()) if bias else (None, None)
    eps_in, eps_out = rand(5, seed=6), rand(4, seed=7)
    operands = (x, w_mu, w_sigma, b_mu, b_sigma)
    leaves = [to_lucid(t, device).requires_grad_() if t is not None else None for t in operands]
    y = F.noisy_linear(*leaves, to_lucid(eps_in, device), to_lucid(eps_out, device))
    refs = [t.clone().requires_grad_() if t is not None else None for t in operands]
    want = ref_noisy_linear(*refs, eps_in, eps_out)
    close(y, want)
    g = rand(2, 3, 4, seed=8)
    (y * to_lucid(g, device)).sum().backward()
    (want * g).sum().backward()
    for got, ref in zip(leaves, refs):
        if ref is not None:
            close(got.grad, ref.grad)


def test_noisy_linear_zero_sigma_is_linear_and_the_noise_is_an_outer_product():
    x, mu, b = rand(5, 4, seed=1), rand(3, 4, seed=2), rand(3, seed=3)
    lx, lmu, lb = to_lucid(x), to_lucid(mu), to_lucid(b)
    close(F.noisy_linear(lx, lmu, lucid.zeros(3, 4, dtype=f64), lb, lucid.zeros(3, dtype=f64)), x @ mu.T + b)
    # sigma = 1, mu = 0, one input one-hot: column j of the weight is f(eps_out) * f(eps_in[j])
    e_in, e_out = rand(4, seed=4), rand(3, seed=5)
    y = F.noisy_linear(lucid.eye(4, dtype=f64), lucid.zeros(3, 4, dtype=f64), lucid.ones(3, 4, dtype=f64),
                       None, None, to_lucid(e_in), to_lucid(e_out))
    close(y, torch.outer(ref_f(e_in), ref_f(e_out)))


def test_noisy_linear_draws_missing_noise_from_lucids_generator():
    x, mu, sigma = lucid.randn(2, 4), lucid.randn(3, 4), lucid.ones(3, 4)
    lucid.manual_seed(11)
    a = F.noisy_linear(x, mu, sigma)
    lucid.manual_seed(11)
    b = F.noisy_linear(x, mu, sigma)
    lucid.manual_seed(11)
    e_in, e_out = lucid.randn(4), lucid.randn(3)
    close(a, arr(b), tol=0)
    close(a, arr(F.noisy_linear(x, mu, sigma, None, None, e_in, e_out)), tol=0)


@pytest.mark.parametrize("args, match", [
    (((2, 4), (12,), (12,), None, None, None, None), "weight_mu must be 2-D"),
    (((2, 4), (3, 4), (4, 3), None, None, None, None), "weight_sigma must have weight_mu's shape"),
    (((2, 4), (3, 4), (3, 4), (3,), None, None, None), "given together"),
    (((2, 4), (3, 4), (3, 4), None, (3,), None, None), "given together"),
    (((2, 4), (3, 4), (3, 4), (4,), (4,), None, None), r"bias_mu must have shape \(3,\)"),
    (((2, 4), (3, 4), (3, 4), (3,), (1,), None, None), r"bias_sigma must have shape \(3,\)"),
    (((2, 5), (3, 4), (3, 4), None, None, None, None), "last dimension must be in_features=4"),
    (((2, 4), (3, 4), (3, 4), None, None, (3,), None), r"epsilon_in must have shape \(4,\)"),
    (((2, 4), (3, 4), (3, 4), None, None, (4,), (4,)), r"epsilon_out must have shape \(3,\)"),
], ids=["weight-1d", "sigma-shape", "lone-bias-mu", "lone-bias-sigma", "bias-mu-shape", "bias-sigma-shape",
        "x-dim", "eps-in-shape", "eps-out-shape"])
def test_noisy_linear_rejects_mismatched_shapes(args, match):
    tensors = [None if s is None else lucid.randn(*s) for s in args]
    with pytest.raises(ValueError, match=match):
        F.noisy_linear(*tensors)


# ---- NoisyLinear ----------------------------------------------------------------------------------

@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
def test_noisy_linear_module_matches_torch_and_trains_all_four_parameters(device, bias):
    lucid.manual_seed(0)
    m = nn.NoisyLinear(5, 3, bias=bias, sigma_zero=0.7, device=device, dtype=f64)
    with lucid.no_grad():  # sigma away from its constant init, so a mix-up of the two would show
        m.weight_sigma.copy_(lucid.rand(3, 5, device=device, dtype=f64))
    x = rand(4, 5, seed=1)
    lx = to_lucid(x, device).requires_grad_()
    y = m(lx)
    names = ["weight_mu", "weight_sigma"] + (["bias_mu", "bias_sigma"] if bias else [])
    ref = {n: tt(getattr(m, n)) for n in names}
    xr = x.clone().requires_grad_()
    want = ref_noisy_linear(xr, ref["weight_mu"], ref["weight_sigma"], ref.get("bias_mu"), ref.get("bias_sigma"),
                            torch.tensor(arr(m.epsilon_in)), torch.tensor(arr(m.epsilon_out)))
    close(y, want)
    g = rand(4, 3, seed=2)
    (y * to_lucid(g, device)).sum().backward()
    (want * g).sum().backward()
    close(lx.grad, xr.grad)
    for n in names:
        assert float(getattr(m, n).grad.abs().sum()) > 0
        close(getattr(m, n).grad, ref[n].grad)
    if not bias:
        assert m.bias_mu is None and m.bias_sigma is None


def test_noisy_linear_initialisation_is_the_papers():
    lucid.manual_seed(1)
    m = nn.NoisyLinear(16, 5, sigma_zero=0.5)
    bound = 1 / math.sqrt(16)
    for p in (m.weight_mu, m.bias_mu):
        v = arr(p)
        assert v.min() >= -bound and v.max() <= bound and v.std() > bound / 4  # uniform over the bound
    close(m.weight_sigma, np.full((5, 16), 0.5 / 4), tol=1e-7)
    close(m.bias_sigma, np.full(5, 0.5 / 4), tol=1e-7)
    assert nn.NoisyLinear(9, 2).sigma_zero == 0.5  # default: the paper's sigma_0 for factorised noise
    close(nn.NoisyLinear(9, 2).weight_sigma, np.full((2, 9), 0.5 / 3), tol=1e-7)


def test_noisy_linear_parameters_buffers_and_state_dict():
    m = nn.NoisyLinear(4, 3)
    assert [n for n, _ in m.named_parameters()] == ["weight_mu", "weight_sigma", "bias_mu", "bias_sigma"]
    assert [n for n, _ in m.named_buffers()] == ["epsilon_in", "epsilon_out"]
    assert tuple(m.epsilon_in.shape) == (4,) and tuple(m.epsilon_out.shape) == (3,)  # in + out draws, not in * out
    assert m.noise_in is m.epsilon_in and m.noise_out is m.epsilon_out  # upstream's other names
    assert not m.epsilon_in.requires_grad
    assert list(m.state_dict()) == ["weight_mu", "weight_sigma", "bias_mu", "bias_sigma", "epsilon_in", "epsilon_out"]
    assert [n for n, _ in nn.NoisyLinear(4, 3, bias=False).named_parameters()] == ["weight_mu", "weight_sigma"]
    # a reloaded layer is the same noisy network
    other = nn.NoisyLinear(4, 3)
    other.load_state_dict(m.state_dict())
    x = lucid.randn(2, 4)
    close(other(x), arr(m(x)), tol=0)
    assert "in_features=4, out_features=3, bias=True, sigma_zero=0.5" in repr(m)


def test_noisy_linear_holds_its_sample_until_reset_noise(device):
    m = nn.NoisyLinear(6, 4, device=device)
    x = lucid.randn(3, 6, device=device)
    first = arr(m(x))
    close(m(x), first, tol=0)  # two forwards are one network
    before = (arr(m.epsilon_in), arr(m.epsilon_out))
    m.reset_noise()
    assert not np.array_equal(arr(m.epsilon_in), before[0]) and not np.array_equal(arr(m.epsilon_out), before[1])
    second = arr(m(x))
    assert np.abs(second - first).max() > 1e-6
    m.resample()  # upstream's name
    assert np.abs(arr(m(x)) - second).max() > 1e-6
    assert m.epsilon_in.device.type == m.weight_mu.device.type


def test_noisy_linear_noise_follows_manual_seed():
    lucid.manual_seed(7)
    a = nn.NoisyLinear(5, 3)
    lucid.manual_seed(7)
    b = nn.NoisyLinear(5, 3)
    for name in ("weight_mu", "bias_mu", "epsilon_in", "epsilon_out"):
        close(getattr(a, name), arr(getattr(b, name)), tol=0)
    lucid.manual_seed(3)
    a.reset_noise()
    lucid.manual_seed(3)
    e_in, e_out = lucid.randn(5), lucid.randn(3)  # reset_noise's draws: lucid's generator, in then out
    close(a.epsilon_in, arr(e_in), tol=0)
    close(a.epsilon_out, arr(e_out), tol=0)


def test_noisy_linear_eval_is_the_mean_network():
    m = nn.NoisyLinear(4, 3, dtype=f64)
    x = lucid.randn(5, 4, dtype=f64)
    noisy = arr(m(x))
    m.eval()
    y = m(x)
    close(y, arr(F.linear(x, m.weight_mu, m.bias_mu)), tol=0)
    assert np.abs(noisy - arr(y)).max() > 1e-6
    y.sum().backward()
    assert m.weight_sigma.grad is None and m.bias_sigma.grad is None and m.weight_mu.grad is not None
    m.train()
    close(m(x), noisy, tol=0)


def test_noisy_linear_factory_kwargs_and_batched_input(device):
    m = nn.NoisyLinear(4, 2, device=device, dtype=f64)
    for t in list(m.parameters()) + list(m.buffers()):
        assert t.dtype == f64 and t.device.type == device
    assert tuple(m(lucid.randn(2, 3, 4, device=device, dtype=f64)).shape) == (2, 3, 2)
    with pytest.raises(ValueError, match="last dimension must be in_features=4"):
        m(lucid.randn(2, 5, device=device, dtype=f64))


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(in_features=0, out_features=3), ValueError, "in_features must be positive, got 0"),
    (dict(in_features=4, out_features=-2), ValueError, "out_features must be positive, got -2"),
    (dict(in_features=4.0, out_features=3), TypeError, "in_features must be an int"),
    (dict(in_features=True, out_features=3), TypeError, "in_features must be an int"),
    (dict(in_features=4, out_features=3, sigma_zero=0.0), ValueError, "sigma_zero must be a positive number"),
    (dict(in_features=4, out_features=3, sigma_zero=-1.0), ValueError, "sigma_zero must be a positive number"),
    (dict(in_features=4, out_features=3, sigma_zero=float("nan")), ValueError, "sigma_zero"),
    (dict(in_features=4, out_features=3, sigma_zero="0.5"), ValueError, "sigma_zero"),
], ids=["in-zero", "out-negative", "in-float", "in-bool", "sigma-zero", "sigma-negative", "sigma-nan", "sigma-str"])
def test_noisy_linear_rejects_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        nn.NoisyLinear(**kwargs)


# ---- vector_quantize --------------------------------------------------------------------------

def test_vector_quantize_picks_the_numpy_argmin_and_returns_the_entries(device):
    x, codebook = rand(3, 5, 4, seed=1), rand(10, 4, seed=2)
    q, idx = F.vector_quantize(to_lucid(x, device), to_lucid(codebook, device))
    want = ref_nearest(x.numpy(), codebook.numpy())
    assert idx.dtype == lucid.int64 and tuple(idx.shape) == (3, 5)
    assert arr(idx).astype(np.int64).tolist() == want.tolist()
    close(q, codebook.numpy()[want], tol=0)  # the entries to the bit
    q, idx = F.vector_quantize(lucid.tensor([0.9, 1.1]), lucid.tensor([[0.0, 0.0], [1.0, 1.0]]))
    assert q.tolist() == [1.0, 1.0] and idx.tolist() == 1 and tuple(idx.shape) == ()


def test_vector_quantize_is_straight_through(device):
    x = to_lucid(rand(6, 3, seed=3), device).requires_grad_()
    codebook = to_lucid(rand(8, 3, seed=4), device).requires_grad_()
    q, _ = F.vector_quantize(x, codebook)
    g = rand(6, 3, seed=5)
    (q * to_lucid(g, device)).sum().backward()
    close(x.grad, g, tol=0)  # d quantized / d x is the identity
    assert codebook.grad is None  # no gradient to the codebook through quantized
    y = to_lucid(rand(6, 3, seed=3), device).requires_grad_()
    F.vector_quantize(y, codebook)[0].pow(2).sum().backward()  # the chain rule sees quantized's value
    close(y.grad, 2 * arr(F.vector_quantize(y, codebook)[0]))


@pytest.mark.parametrize("x_shape, cb_shape, error, match", [
    ((4, 3), (2, 8, 3), ValueError, r"codebook must be 2-D \(K, D\)"),
    ((4, 3), (8,), ValueError, "codebook must be 2-D"),
    ((4, 5), (8, 3), ValueError, "trailing axis must match the codebook's entry size 3"),
    ((4, 3), (0, 3), ValueError, "at least one entry"),
], ids=["codebook-3d", "codebook-1d", "dim-mismatch", "empty-codebook"])
def test_vector_quantize_rejects_mismatched_codebooks(x_shape, cb_shape, error, match):
    with pytest.raises(error, match=match):
        F.vector_quantize(lucid.randn(*x_shape), lucid.randn(*cb_shape))


def test_vector_quantize_rejects_integer_and_mixed_dtype_inputs():
    with pytest.raises(TypeError, match="x must be a floating-point tensor"):
        F.vector_quantize(lucid.tensor([[1, 2]]), lucid.randn(3, 2))
    with pytest.raises(TypeError, match="must have the same dtype"):
        F.vector_quantize(lucid.randn(3, 2, dtype=f64), lucid.randn(3, 2))
    with pytest.raises(TypeError, match="must have the same dtype"):
        nn.VectorQuantizer(3, 2)(lucid.randn(4, 2, dtype=f64))


# ---- VectorQuantizer ------------------------------------------------------------------------------

def test_vector_quantizer_output_matches_numpy(device):
    lucid.manual_seed(2)
    vq = nn.VectorQuantizer(8, 4, commitment_cost=0.3, device=device, dtype=f64)
    x = np.random.RandomState(7).randn(3, 5, 4) * 0.3
    out = vq(lucid.tensor(x.tolist(), dtype=f64, device=device))
    codebook = arr(vq.weight)
    want = ref_nearest(x, codebook)
    hard = codebook[want]
    assert arr(out.indices).astype(np.int64).tolist() == want.tolist()
    close(out.quantized, hard, tol=0)
    mse = float(((hard - x) ** 2).mean())
    close(out.codebook_loss, mse)
    close(out.commitment_loss, mse)
    close(vq.loss(out), mse + 0.3 * mse)
    close(out.perplexity, ref_perplexity(want, 8))
    for t in (out.codebook_loss, out.commitment_loss, out.perplexity):
        assert tuple(t.shape) == ()


def test_vector_quantizer_gradients_match_torch(device):
    lucid.manual_seed(4)
    vq = nn.VectorQuantizer(6, 3, commitment_cost=0.25, device=device, dtype=f64)
    x = rand(10, 3, seed=6) * 0.2
    lx = to_lucid(x, device).requires_grad_()
    out = vq(lx)
    g = rand(10, 3, seed=7)
    (out.quantized * to_lucid(g, device)).sum().add(vq.loss(out)).backward()
    # the same objective in torch, VQ-VAE eq. (3) less the reconstruction term
    xr, w = x.clone().requires_grad_(), tt(vq.weight)
    e = w[torch.tensor(arr(out.indices).astype(np.int64))]
    st = xr + (e - xr).detach()
    loss = ((e - xr.detach()) ** 2).mean() + 0.25 * ((xr - e.detach()) ** 2).mean()
    ((st * g).sum() + loss).backward()
    close(lx.grad, xr.grad)
    close(vq.weight.grad, w.grad)


def test_vector_quantizer_each_term_trains_its_own_side():
    vq = nn.VectorQuantizer(16, 4)
    x = lucid.randn(6, 4, requires_grad=True)
    vq(x).quantized.sum().backward()
    assert vq.weight.grad is None and float(x.grad.abs().sum()) > 0  # straight through, past the codebook
    x = lucid.randn(6, 4, requires_grad=True)
    vq(x).codebook_loss.backward()
    assert x.grad is None and float(vq.weight.grad.abs().sum()) > 0
    vq.weight.grad = None
    vq(x).commitment_loss.backward()
    assert vq.weight.grad is None and float(x.grad.abs().sum()) > 0


def test_vector_quantizer_output_fields_and_tuple_unpacking():
    assert nn.VectorQuantizerOutput._fields == ("quantized", "indices", "codebook_loss", "commitment_loss",
                                               "perplexity")
    vq = nn.VectorQuantizer(16, 4)
    out = vq(lucid.randn(3, 4))
    assert isinstance(out, nn.VectorQuantizerOutput) and isinstance(out, tuple)
    quantized, indices, codebook_loss, commitment_loss, perplexity = out
    assert quantized is out.quantized and perplexity is out.perplexity
    assert tuple(quantized.shape) == (3, 4) and tuple(indices.shape) == (3,)


@pytest.mark.parametrize("shape", [(7, 8), (2, 5, 8), (2, 3, 4, 8)])
def test_vector_quantizer_acts_on_the_trailing_axis(shape):
    vq = nn.VectorQuantizer(32, 8)
    out = vq(lucid.randn(*shape))
    assert tuple(out.quantized.shape) == shape and tuple(out.indices.shape) == shape[:-1]
    assert vq.assign(lucid.randn(*shape)).dtype == lucid.int64


def test_vector_quantizer_parameters_init_and_repr():
    lucid.manual_seed(5)
    vq = nn.VectorQuantizer(num_embeddings=64, embedding_dim=8)
    assert [n for n, _ in vq.named_parameters()] == ["weight"] and list(vq.buffers()) == []
    assert tuple(vq.weight.shape) == (64, 8)
    v = arr(vq.weight)
    assert np.abs(v).max() <= 1 / 64 and v.std() > 1 / 64 / 4  # U(-1/K, 1/K)
    assert vq.commitment_cost == 0.25  # the paper's beta
    assert repr(vq) == "VectorQuantizer(num_embeddings=64, embedding_dim=8, commitment_cost=0.25)"
    lucid.manual_seed(5)
    close(nn.VectorQuantizer(64, 8).weight, v, tol=0)
    assert nn.VectorQuantizer(4, 2, dtype=f64).weight.dtype == f64


def test_vector_quantizer_assign_lookup_and_perplexity_bounds():
    vq = nn.VectorQuantizer(16, 4)
    x = lucid.randn(2, 5, 4)
    codes = vq.lookup(vq.assign(x))
    close(codes, arr(vq(x).quantized), tol=0)
    assert vq.assign(x).tolist() == vq(x).indices.tolist()
    assert vq.assign(vq.weight).tolist() == list(range(16))  # every entry is its own nearest
    assert float(vq(vq.weight).perplexity) == pytest.approx(16.0, rel=1e-5)  # all used evenly: K
    same = vq.weight[3].detach().reshape(1, 4).expand(32, 4)
    out = vq(same)
    assert float(out.perplexity) == pytest.approx(1.0, abs=1e-6) and set(out.indices.tolist()) == {3}


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(num_embeddings=0, embedding_dim=4), ValueError, "num_embeddings must be positive"),
    (dict(num_embeddings=4, embedding_dim=0), ValueError, "embedding_dim must be positive"),
    (dict(num_embeddings=4.5, embedding_dim=4), TypeError, "num_embeddings must be an int"),
    (dict(num_embeddings=4, embedding_dim=4, commitment_cost=-1.0), ValueError,
     "commitment_cost must be a number >= 0"),
    (dict(num_embeddings=4, embedding_dim=4, commitment_cost=None), ValueError, "commitment_cost"),
], ids=["k-zero", "d-zero", "k-float", "beta-negative", "beta-none"])
def test_vector_quantizer_rejects_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        nn.VectorQuantizer(**kwargs)


def test_vector_quantizer_rejects_a_mismatched_input():
    vq = nn.VectorQuantizer(8, 4)
    with pytest.raises(ValueError, match="VectorQuantizer: x's trailing axis must match the codebook's entry size 4"):
        vq(lucid.randn(2, 5))
    with pytest.raises(ValueError, match="trailing axis"):
        vq.assign(lucid.randn(3))


# ---- FusedLinear ----------------------------------------------------------------------------------

@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_fused_linear_is_linear_then_its_activation(device, activation):
    lucid.manual_seed(9)
    fused = nn.FusedLinear(5, 4, activation=activation, device=device, dtype=f64)
    lucid.manual_seed(9)
    plain = nn.Linear(5, 4, device=device, dtype=f64)
    close(fused.weight, arr(plain.weight), tol=0)  # nn.Linear's initialisation, draw for draw
    close(fused.bias, arr(plain.bias), tol=0)
    x = rand(3, 2, 5, seed=10) * 2
    lx = to_lucid(x, device).requires_grad_()
    y = fused(lx)
    act = (lambda t: F.relu(t)) if activation == "relu" else (lambda t: F.gelu(t, approximate="tanh"))
    close(y, arr(act(plain(to_lucid(x, device)))), tol=0)
    # and against torch, gradients included
    xr, w, b = x.clone().requires_grad_(), tt(fused.weight), tt(fused.bias)
    tact = torch.relu if activation == "relu" else (lambda t: torch.nn.functional.gelu(t, approximate="tanh"))
    want = tact(xr @ w.T + b)
    close(y, want)
    g = rand(3, 2, 4, seed=11)
    (y * to_lucid(g, device)).sum().backward()
    (want * g).sum().backward()
    for got, ref in ((lx, xr), (fused.weight, w), (fused.bias, b)):
        close(got.grad, ref.grad)


def test_fused_linear_defaults_names_and_linear_state_dict():
    m = nn.FusedLinear(6, 3)
    assert m.activation == "relu"
    assert list(m.state_dict()) == ["weight", "bias"]
    assert repr(m) == "FusedLinear(in_features=6, out_features=3, activation='relu', bias=True)"
    assert not isinstance(m, nn.Linear)
    lin = nn.Linear(6, 3)
    m.load_state_dict(lin.state_dict())  # a Linear's checkpoint loads, strict
    x = lucid.randn(4, 6)
    close(m(x), arr(F.relu(lin(x))), tol=0)
    back = nn.Linear(6, 3)
    back.load_state_dict(nn.FusedLinear(6, 3, activation="gelu").state_dict())
    nobias = nn.FusedLinear(6, 3, bias=False, activation="gelu")
    assert nobias.bias is None and list(nobias.state_dict()) == ["weight"]
    nobias.load_state_dict(nn.Linear(6, 3, bias=False).state_dict())
    close(nobias(x), arr(F.gelu(F.linear(x, nobias.weight), approximate="tanh")), tol=0)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(activation="tanh"), ValueError, r"unsupported activation 'tanh'; choose from \['gelu', 'relu'\]"),
    (dict(activation="ReLU"), ValueError, r"choose from \['gelu', 'relu'\]"),
    (dict(activation=None), ValueError, "unsupported activation None"),
    (dict(in_features=0), ValueError, "FusedLinear: in_features must be positive"),
    (dict(out_features=-1), ValueError, "FusedLinear: out_features must be positive"),
], ids=["tanh", "capitalised", "none", "in-zero", "out-negative"])
def test_fused_linear_rejects_bad_arguments(kwargs, error, match):
    args = dict(in_features=4, out_features=3)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        nn.FusedLinear(**args)


# ---- names, imports, GPU -------------------------------------------------------------------------

def test_names_are_exported():
    for name in ("NoisyLinear", "VectorQuantizer", "VectorQuantizerOutput", "FusedLinear"):
        assert getattr(nn, name) is getattr(nn.modules, name) and name in nn.modules.__all__
    for name in ("noisy_linear", "scaled_noise", "vector_quantize"):
        assert callable(getattr(F, name)) and name in F.__all__


def test_import_lucid_imports_neither_numpy_nor_torch():
    code = ("import sys, lucid, lucid.nn as nn; x = lucid.randn(2, 4); nn.NoisyLinear(4, 3)(x); "
            "nn.VectorQuantizer(8, 4)(x); nn.FusedLinear(4, 3, 'gelu')(x); "
            "assert 'numpy' not in sys.modules and 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@gpu
def test_noisy_linear_moved_to_gpu_keeps_its_noise_and_values():
    m = nn.NoisyLinear(5, 3)
    x = lucid.randn(4, 5)
    want = arr(m(x))
    m.to("gpu")
    assert m.epsilon_in.device.type == "gpu" and m.weight_mu.device.type == "gpu"
    close(m(x.to("gpu")), want, tol=1e-5)
    m.reset_noise()
    assert m.epsilon_out.device.type == "gpu"
    assert m(x.to("gpu")).device.type == "gpu"


@gpu
def test_vector_quantizer_and_fused_linear_on_gpu_match_cpu():
    vq = nn.VectorQuantizer(16, 4)
    x = lucid.randn(3, 7, 4) * 0.1
    c = vq(x)
    vq.to("gpu")
    g = vq(x.to("gpu"))
    assert g.indices.device.type == "gpu" and g.indices.tolist() == c.indices.tolist()
    for a, b in zip(g, c):
        close(a, arr(b), tol=1e-5)
    fused = nn.FusedLinear(4, 3, activation="gelu")
    want = arr(fused(x))
    close(fused.to("gpu")(x.to("gpu")), want, tol=1e-5)
