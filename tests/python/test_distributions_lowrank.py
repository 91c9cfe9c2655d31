"""LowRankMultivariateNormal against torch.distributions': log_prob, entropy, the
covariance, precision and scale_tril it builds, their gradients (float64), samples,
expand and its argument errors."""

import pytest
import torch
import torch.distributions as TD

import lucid
import lucid.distributions as LD
from conftest import assert_close, to_lucid


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


LOC, W, D = rand(2, 5, seed=1), rand(5, 2, seed=2), rand(2, 5, seed=3).exp() + 0.2


def test_densities_matrices_and_gradients_match_torch(device):
    targs = [t.clone().requires_grad_() for t in (LOC, W, D)]
    largs = [to_lucid(t, device).requires_grad_() for t in (LOC, W, D)]
    td, ld = TD.LowRankMultivariateNormal(*targs), LD.LowRankMultivariateNormal(*largs)
    assert tuple(ld.batch_shape) == (2,) and tuple(ld.event_shape) == (5,)
    value = rand(3, 2, 5, seed=4)
    total_t = total_l = 0
    for what in ("log_prob", "entropy", "mean", "variance", "scale_tril", "covariance_matrix", "precision_matrix"):
        t, lo = getattr(td, what), getattr(ld, what)
        if what == "log_prob":
            t, lo = t(value), lo(to_lucid(value, device))
        elif what == "entropy":
            t, lo = t(), lo()
        assert_close(lo.detach(), t.detach(), rtol=1e-10, atol=1e-10)
        total_t, total_l = total_t + (t * t).sum(), total_l + (lo * lo).sum()
    total_t.backward()
    total_l.backward()
    for t, lo in zip(targs, largs):
        assert_close(lo.grad, t.grad, rtol=1e-8, atol=1e-8)


def test_samples_shapes_and_statistics(device):
    lucid.manual_seed(0)
    loc, w, d = (to_lucid(t, device).requires_grad_() for t in (LOC[0], W, D[0]))
    dist = LD.LowRankMultivariateNormal(loc, w, d)
    s = dist.rsample((100_000,))
    assert tuple(s.shape) == (100_000, 5) and s.requires_grad
    centred = (s.detach() - s.detach().mean(0)).double()
    cov = centred.mT @ centred / (len(centred) - 1)
    assert_close(cov, W @ W.mT + torch.diag(D[0]), rtol=0.05, atol=0.05)
    s.sum().backward()
    assert_close(loc.grad, torch.full((5,), 100_000.0, dtype=torch.float64), rtol=1e-12, atol=1e-6)
    e = dist.expand((3,))
    assert tuple(e.batch_shape) == (3,) and tuple(e.sample((2,)).shape) == (2, 3, 5)


def test_argument_errors_are_torchs(device):
    loc, w, d = (to_lucid(t, device) for t in (LOC, W, D))
    with pytest.raises(ValueError, match="loc must be at least one-dimensional"):
        LD.LowRankMultivariateNormal(loc[0, 0], w, d)
    with pytest.raises(ValueError, match="cov_factor must be at least two-dimensional"):
        LD.LowRankMultivariateNormal(loc, w[:, 0], d)
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices with shape 5 x m"):
        LD.LowRankMultivariateNormal(loc, w[:4], d)
    with pytest.raises(ValueError, match="cov_diag must be a batch of vectors"):
        LD.LowRankMultivariateNormal(loc, w, d[:, :4])
    with pytest.raises(ValueError, match="Incompatible batch shapes"):
        LD.LowRankMultivariateNormal(loc, w.expand(3, 5, 2), d)
