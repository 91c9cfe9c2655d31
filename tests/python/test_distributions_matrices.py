"""The matrix-valued laws against torch.distributions': LowRankMultivariateNormal (log_prob,
entropy, the covariance, precision and scale_tril it builds, their gradients in float64,
samples, expand, argument errors), Wishart and LKJCholesky (densities, statistics,
samples in the support with the right mean, their gradients), CorrCholeskyTransform and
the tril helpers of distributions.utils."""

import warnings

import pytest
import torch
import torch.distributions as TD

import lucid
import lucid.distributions as LD
from conftest import assert_close, to_lucid, to_torch


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


def spd(n, seed):
    a = rand(n, n, seed=seed)
    return a @ a.mT + torch.eye(n, dtype=torch.float64)


@pytest.mark.parametrize("given", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_matches_torch(given, device):
    cov = spd(3, 20)
    param = {"covariance_matrix": cov, "precision_matrix": torch.linalg.inv(cov),
             "scale_tril": torch.linalg.cholesky(cov)}[given]
    df = torch.tensor([4.5, 7.0], dtype=torch.float64)
    targs = {"df": df.clone().requires_grad_(), given: param.clone().requires_grad_()}
    largs = {"df": to_lucid(df, device).requires_grad_(), given: to_lucid(param, device).requires_grad_()}
    td, ld = TD.Wishart(**targs), LD.Wishart(**largs)
    assert tuple(ld.batch_shape) == (2,) and tuple(ld.event_shape) == (3, 3)
    value = torch.stack([spd(3, 21), spd(3, 22)])
    total_t = total_l = 0
    for what in ("log_prob", "entropy", "mean", "mode", "variance", "covariance_matrix", "precision_matrix",
                 "scale_tril"):
        t, lo = getattr(td, what), getattr(ld, what)
        if what == "log_prob":
            t, lo = t(value), lo(to_lucid(value, device))
        elif what == "entropy":
            t, lo = t(), lo()
        assert_close(lo.detach(), t.detach(), rtol=1e-9, atol=1e-9)
        total_t, total_l = total_t + (t * t).sum(), total_l + (lo * lo).sum()
    total_t.backward()
    total_l.backward()
    for k in targs:
        got, want = largs[k].grad, targs[k].grad
        if k == "scale_tril":  # (torch's cholesky_solve also sends gradient to the upper triangle it never reads)
            got, want = got.tril(), want.tril()
        assert_close(got, want, rtol=1e-7, atol=1e-7)


def test_wishart_samples_are_positive_definite_with_the_right_mean(device):
    lucid.manual_seed(1)
    cov = spd(3, 23)
    d = LD.Wishart(lucid.tensor(6.0, dtype=lucid.float64, device=device), covariance_matrix=to_lucid(cov, device))
    s = d.rsample((20_000,))
    assert tuple(s.shape) == (20_000, 3, 3) and bool(LD.constraints.positive_definite.check(s).all())
    assert_close(s.mean(0), 6.0 * cov, rtol=0.05, atol=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no false alarm of singular samples, which torch raises for every draw)
        d.sample((3,))
    with pytest.raises(ValueError, match="expected to be greater than ndim - 1 = 2"):
        LD.Wishart(lucid.tensor(1.5, device=device), covariance_matrix=to_lucid(cov, device))
    with pytest.raises(AssertionError, match="Exactly one of"):
        LD.Wishart(5.0)


def test_lkj_cholesky_matches_torch_and_samples_correlations(device):
    conc = torch.tensor([0.5, 1.0, 3.0], dtype=torch.float64)
    td = TD.LKJCholesky(4, conc)
    lc = to_lucid(conc, device).requires_grad_()
    ld = LD.LKJCholesky(4, lc)
    lucid.manual_seed(2)
    s = ld.sample((5000,))
    assert tuple(s.shape) == (5000, 3, 4, 4) and bool(LD.constraints.corr_cholesky.check(s).all())
    value = s[:7]
    lp = ld.log_prob(value)
    assert_close(lp.detach(), td.log_prob(to_torch(value.cpu())), rtol=1e-10, atol=1e-10)
    lp.sum().backward()
    tc = conc.clone().requires_grad_()
    TD.LKJCholesky(4, tc).log_prob(to_torch(value.cpu())).sum().backward()
    assert_close(lc.grad, tc.grad, rtol=1e-8, atol=1e-8)
    # an off-diagonal correlation of LKJ(eta) in dim d is 2 Beta(b, b) - 1, b = eta - 1 + d / 2
    corr = (s @ s.mT)[..., 0, 1]
    b = conc + 1.0
    assert_close(corr.var(0), 1 / (2 * b + 1), rtol=0.1, atol=0.01)
    with pytest.raises(ValueError, match="greater than or equal to 2"):
        LD.LKJCholesky(1)


def test_corr_cholesky_transform_and_tril_helpers(device):
    x = rand(5, 6, seed=30)
    tt, lt = TD.transforms.CorrCholeskyTransform(), LD.CorrCholeskyTransform()
    y, ly = tt(x), lt(to_lucid(x, device))
    assert_close(ly, y, rtol=1e-12, atol=1e-12)
    assert_close(lt.inv(ly), x, rtol=1e-9, atol=1e-9)
    assert_close(lt.log_abs_det_jacobian(to_lucid(x, device), ly), tt.log_abs_det_jacobian(x, y), rtol=1e-10,
                 atol=1e-10)
    assert lt.forward_shape((2, 6)) == (2, 4, 4) and lt.inverse_shape((2, 4, 4)) == (2, 6)
    with pytest.raises(ValueError, match="flattend lower-diagonal"):
        lt.forward_shape((5,))
    assert isinstance(LD.biject_to(LD.constraints.corr_cholesky), LD.CorrCholeskyTransform)
    from lucid.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix
    m = rand(3, 4, 4, seed=31)
    for diag in (-1, 0):
        v = tril_matrix_to_vec(to_lucid(m, device), diag)
        assert_close(v, TD.utils.tril_matrix_to_vec(m, diag), rtol=0, atol=0)
        assert_close(vec_to_tril_matrix(v, diag), TD.utils.vec_to_tril_matrix(TD.utils.tril_matrix_to_vec(m, diag),
                                                                               diag), rtol=0, atol=0)
    with pytest.raises(ValueError, match="cannot be expressed as the lower triangular part"):
        vec_to_tril_matrix(lucid.zeros(5, device=device))
