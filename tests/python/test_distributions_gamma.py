"""The gamma family against torch: lucid._standard_gamma's samples (their moments, the
same values on both devices, torch's edge values), the pathwise gradients
_standard_gamma_grad and _dirichlet_grad in every region of their approximations, the
reparameterised gradients of Gamma and Dirichlet samples, and Gamma, Chi2, InverseGamma,
Beta, Dirichlet, StudentT, FisherSnedecor and NegativeBinomial's densities, statistics,
their gradients (float64), KL divergences, expand and validation."""

import math

import numpy as np
import pytest
import torch
import torch.distributions as TD

import lucid
import lucid.distributions as LD
from conftest import assert_close, to_lucid, to_torch


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


POS = rand(2, 3, seed=1).exp() + 0.2  # concentrations, rates, degrees of freedom
POS2 = rand(2, 3, seed=2).exp() + 0.3


# ---- the sampler -------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.05, 0.3, 1.0, 2.5, 40.0])
def test_standard_gamma_samples_have_the_gammas_moments(alpha, device):
    lucid.manual_seed(1)
    a = lucid.full((100_000,), alpha, dtype=lucid.float64, device=device)
    s = lucid._standard_gamma(a)
    assert s.dtype == lucid.float64 and s.device == a.device and tuple(s.shape) == (100_000,)
    x = to_torch(s.cpu())
    assert (x > 0).all()
    assert abs(float(x.mean()) - alpha) < 0.02 * max(alpha, 1) ** 0.5 + 0.005
    assert abs(float(x.var()) / alpha - 1) < 0.05
    # the law itself: Kolmogorov-Smirnov distance to Gamma(alpha)'s CDF
    xs = x.sort().values
    cdf = torch.special.gammainc(torch.tensor(alpha, dtype=torch.float64), xs)
    ranks = torch.arange(1, len(xs) + 1, dtype=torch.float64) / len(xs)
    assert float((cdf - ranks).abs().max()) < 0.01


def test_standard_gamma_edge_values_are_torchs(device):
    a = lucid.tensor([-1.0, 0.0, float("nan"), float("inf"), 1e-30], device=device)
    got = lucid._standard_gamma(a).cpu().tolist()
    want = torch._standard_gamma(torch.tensor([-1.0, 0.0, float("nan"), float("inf"), 1e-30])).tolist()
    assert got == want  # (the smallest normal float for all but infinity)
    for dtype in (lucid.float16, lucid.bfloat16, lucid.float32):
        s = lucid._standard_gamma(lucid.full((1000,), 0.01, dtype=dtype, device=device))
        assert s.dtype == dtype and bool((s.float() >= lucid.finfo(dtype).tiny).all())
    with pytest.raises(NotImplementedError, match="_standard_gamma"):
        lucid._standard_gamma(lucid.ones(3, dtype=lucid.int64, device=device))
    with pytest.raises(TypeError, match="must be Tensor"):
        lucid._standard_gamma([1.0, 2.0])


def test_the_sampler_is_reproducible_and_the_same_on_every_device(devices):
    a = lucid.tensor(np.linspace(0.05, 30, 4001), dtype=lucid.float64)
    got = []
    for device in devices:
        lucid.manual_seed(7)
        first = lucid._standard_gamma(a.to(device)).cpu().numpy()
        again = lucid._standard_gamma(a.to(device)).cpu().numpy()
        lucid.manual_seed(7)
        np.testing.assert_array_equal(lucid._standard_gamma(a.to(device)).cpu().numpy(), first)
        assert not np.array_equal(first, again)  # (the generator moved on)
        got.append(first)
    for other in got[1:]:  # (CUDA's log, cos and pow may differ from the CPU's in the last bit)
        np.testing.assert_allclose(other, got[0], rtol=1e-12)


# ---- the pathwise gradients --------------------------------------------------------------


def gamma_grid():
    """(alpha, x) pairs in each region of the approximation: x < 0.8, alpha > 8 near and
    away from the mode, and the rational fit between."""
    alpha = torch.tensor([0.1, 0.5, 1.0, 2.0, 5.0, 7.9, 8.5, 20.0, 100.0], dtype=torch.float64)
    x = torch.tensor([0.01, 0.3, 0.79, 0.81, 2.0, 7.5, 19.0, 21.0, 50.0, 95.0, 100.0, 130.0], dtype=torch.float64)
    return alpha[:, None].expand(9, 12).reshape(-1), x[None, :].expand(9, 12).reshape(-1)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_standard_gamma_grad_is_torchs(dtype, device):
    alpha, x = (t.to(dtype) for t in gamma_grid())
    want = torch._standard_gamma_grad(alpha, x)
    got = lucid._standard_gamma_grad(to_lucid(alpha, device), to_lucid(x, device))
    assert got.dtype == (lucid.float64 if dtype == torch.float64 else lucid.float32)
    tol = 1e-12 if dtype == torch.float64 else 2e-5  # (torch computes some float32 regions in float)
    assert_close(got, want, rtol=tol, atol=tol)
    # broadcasting and promotion, as torch's TensorIterator
    b = lucid._standard_gamma_grad(to_lucid(alpha[:3], device).float(), to_lucid(x[:3, None].double(), device))
    assert tuple(b.shape) == (3, 3) and b.dtype == lucid.float64


def test_dirichlet_grad_is_torchs(device):
    # each region: x near 0, x near 1, both concentrations large (near the mean and not), the fit
    x = torch.tensor([0.01, 0.2, 0.3, 0.97, 0.999, 0.5, 0.52, 0.7, 0.4, 0.6, 0.35], dtype=torch.float64)
    alpha = torch.tensor([0.5, 1.0, 1.0, 2.0, 3.0, 10.0, 10.0, 14.0, 2.0, 3.0, 1.5], dtype=torch.float64)
    total = torch.tensor([1.0, 3.0, 30.0, 2.5, 3.5, 20.0, 20.0, 21.0, 5.0, 4.0, 4.0], dtype=torch.float64)
    want = torch._dirichlet_grad(x, alpha, total)
    got = lucid._dirichlet_grad(to_lucid(x, device), to_lucid(alpha, device), to_lucid(total, device))
    assert_close(got, want, rtol=1e-10, atol=1e-12)


def test_gamma_samples_carry_the_pathwise_gradient(device):
    lucid.manual_seed(3)
    conc = to_lucid(POS, device).requires_grad_()
    rate = to_lucid(POS2, device).requires_grad_()
    s = LD.Gamma(conc, rate).rsample((4,))
    assert tuple(s.shape) == (4, 2, 3) and s.requires_grad
    s.sum().backward()
    # x = g / rate with g ~ Gamma(conc): dx/dconc = dg/dconc / rate, dx/drate = -x / rate
    g = (s.detach() * rate.detach()).cpu()
    dg = torch._standard_gamma_grad(POS.expand(4, 2, 3), to_torch(g))
    assert_close(conc.grad, (dg / POS2).sum(0), rtol=1e-9, atol=1e-12)
    assert_close(rate.grad, -(to_torch(s.detach().cpu()) / POS2).sum(0), rtol=1e-9, atol=1e-12)


def test_dirichlet_and_beta_samples_carry_torchs_gradient(device):
    lucid.manual_seed(4)
    conc = to_lucid(POS, device).requires_grad_()
    x = LD.Dirichlet(conc).rsample()
    assert tuple(x.shape) == (2, 3)
    assert_close(x.detach().sum(-1), torch.ones(2, dtype=torch.float64), rtol=1e-12, atol=1e-12)
    w = rand(2, 3, seed=5)
    (x * to_lucid(w, device)).sum().backward()
    xt = to_torch(x.detach().cpu())
    total = POS.sum(-1, True).expand_as(POS)
    want = torch._dirichlet_grad(xt, POS, total) * (w - (xt * w).sum(-1, True))  # (torch's _Dirichlet backward)
    assert_close(conc.grad, want, rtol=1e-9, atol=1e-12)
    a, b = to_lucid(POS[0], device).requires_grad_(), to_lucid(POS2[0], device).requires_grad_()
    y = LD.Beta(a, b).rsample((5,))
    assert tuple(y.shape) == (5, 3) and bool(((y > 0) & (y < 1)).all())
    y.sum().backward()
    assert a.grad is not None and b.grad is not None and bool((a.grad > 0).all()) and bool((b.grad < 0).all())


# ---- the distributions ---------------------------------------------------------------------


def lucid_args(args, device):
    return {k: to_lucid(v, device).requires_grad_() if isinstance(v, torch.Tensor) else v for k, v in args.items()}


def torch_args(args):
    return {k: v.clone().requires_grad_() if isinstance(v, torch.Tensor) else v for k, v in args.items()}


SIMPLEX = torch.softmax(rand(2, 3, seed=6), -1)
CASES = [
    ("Gamma", {"concentration": POS, "rate": POS2}, POS2 * 1.5, ["cdf", "entropy"]),
    ("Gamma", {"concentration": POS, "rate": 2.0}, POS2, ["entropy"]),
    ("Chi2", {"df": POS * 3}, POS2 * 2, ["cdf", "entropy"]),
    ("InverseGamma", {"concentration": POS * 2, "rate": POS2}, POS2 * 0.5, ["entropy"]),
    ("Beta", {"concentration1": POS, "concentration0": POS2}, torch.sigmoid(rand(2, 3, seed=7)), ["entropy"]),
    ("Dirichlet", {"concentration": POS}, SIMPLEX, ["entropy"]),
    ("StudentT", {"df": POS * 3, "loc": rand(2, 3, seed=8), "scale": POS2}, rand(2, 3, seed=9), ["entropy"]),
    ("StudentT", {"df": POS * 0.5}, rand(2, 3, seed=10), []),  # (df <= 1 and <= 2: NaN and infinite moments)
    ("FisherSnedecor", {"df1": POS * 4, "df2": POS2 * 5}, POS, []),
    ("NegativeBinomial", {"total_count": POS * 4, "probs": torch.sigmoid(rand(2, 3, seed=11))},
     torch.tensor([[0.0, 1, 2], [5, 0, 3]], dtype=torch.float64), []),
    ("NegativeBinomial", {"total_count": 3.0, "logits": rand(2, 3, seed=12)},
     torch.tensor([[0.0, 4, 2], [1, 7, 3]], dtype=torch.float64), []),
]
IDS = [f"{c[0]}-{'-'.join(c[1])}" for c in CASES]


@pytest.mark.parametrize("name,args,value,extra", CASES, ids=IDS)
def test_densities_statistics_and_gradients_match_torch(name, args, value, extra, device):
    targs, largs = torch_args(args), lucid_args(args, device)
    td, ld = getattr(TD, name)(**targs), getattr(LD, name)(**largs)
    assert tuple(ld.batch_shape) == tuple(td.batch_shape) and tuple(ld.event_shape) == tuple(td.event_shape)
    lv = to_lucid(value, device)
    total_t = total_l = 0
    for what in ["log_prob", "mean", "mode", "variance"] + extra:
        t, lo = getattr(td, what), getattr(ld, what)
        t, lo = (t(value), lo(lv)) if what in ("log_prob", "cdf") else (t() if callable(t) else t,
                                                                       lo() if callable(lo) else lo)
        torch.testing.assert_close(to_torch(lo.detach().cpu()), t.detach(), rtol=1e-9, atol=1e-10, equal_nan=True)
        if what == "cdf":
            continue  # (torch has no gradient of igamma in its first argument)
        finite = torch.isfinite(t.detach())
        total_t = total_t + (t * finite).nan_to_num().pow(2).sum()
        total_l = total_l + (lo * to_lucid(finite, device)).nan_to_num().pow(2).sum()
    total_t.backward()
    total_l.backward()
    for k, v in targs.items():
        if isinstance(v, torch.Tensor) and v.grad is not None:  # (NaN where a moment is undefined, as torch's)
            torch.testing.assert_close(to_torch(largs[k].grad.cpu()), v.grad, rtol=1e-8, atol=1e-8, equal_nan=True)
    batch = (4,) + tuple(td.batch_shape)
    assert tuple(ld.expand(batch).batch_shape) == batch
    assert tuple(ld.sample((5,)).shape) == (5,) + tuple(td.batch_shape) + tuple(td.event_shape)


@pytest.mark.parametrize("name,args,mean,var", [
    ("Gamma", {"concentration": 3.0, "rate": 2.0}, 1.5, 0.75),
    ("Chi2", {"df": 4.0}, 4.0, 8.0),
    ("Beta", {"concentration1": 2.0, "concentration0": 5.0}, 2 / 7, 10 / (49 * 8)),
    ("StudentT", {"df": 6.0, "loc": 1.0, "scale": 2.0}, 1.0, 4 * 6 / 4),
    ("FisherSnedecor", {"df1": 6.0, "df2": 12.0}, 1.2, 2 * 144 * 16 / (6 * 100 * 8)),
    ("InverseGamma", {"concentration": 5.0, "rate": 2.0}, 0.5, 4 / (16 * 3)),
    ("NegativeBinomial", {"total_count": 4.0, "probs": 0.3}, 4 * 0.3 / 0.7, 4 * 0.3 / 0.49)])
def test_samples_have_the_laws_moments(name, args, mean, var, device):
    lucid.manual_seed(0)
    d = getattr(LD, name)(**{k: lucid.tensor(v, dtype=lucid.float64, device=device) for k, v in args.items()})
    s = d.sample((200_000,))
    assert tuple(s.shape) == (200_000,) and s.dtype == lucid.float64 and not s.requires_grad
    assert abs(float(s.mean()) - mean) < 0.02 * max(1.0, abs(mean))
    assert abs(float(s.var()) / var - 1) < 0.06
    if name == "NegativeBinomial":
        assert bool((s == s.round()).all())


def test_dirichlet_samples_and_statistics(device):
    lucid.manual_seed(2)
    conc = lucid.tensor([0.5, 2.0, 4.0], dtype=lucid.float64, device=device)
    s = LD.Dirichlet(conc).sample((100_000,))
    assert tuple(s.shape) == (100_000, 3)
    assert_close(s.mean(0), torch.tensor([0.5, 2.0, 4.0], dtype=torch.float64) / 6.5, rtol=0.01, atol=0.003)
    # every concentration below 1: the mode is the vertex of the largest
    td, ld = TD.Dirichlet(torch.tensor([0.2, 0.7, 0.5])), LD.Dirichlet(lucid.tensor([0.2, 0.7, 0.5], device=device))
    assert_close(ld.mode, td.mode, rtol=0, atol=0)


def test_kl_divergences_match_torch(device):
    pairs = [("Gamma", {"concentration": POS, "rate": POS2}, {"concentration": POS2, "rate": POS}),
             ("Beta", {"concentration1": POS, "concentration0": POS2}, {"concentration1": POS2 * 2,
                                                                        "concentration0": POS}),
             ("Dirichlet", {"concentration": POS}, {"concentration": POS2})]
    for name, p, q in pairs:
        want = TD.kl_divergence(getattr(TD, name)(**p), getattr(TD, name)(**q))
        got = LD.kl_divergence(getattr(LD, name)(**lucid_args(p, device)), getattr(LD, name)(**lucid_args(q, device)))
        assert_close(got, want, rtol=1e-10, atol=1e-10)


def test_validation_is_torchs(device):
    with pytest.raises(ValueError, match="concentration"):
        LD.Gamma(lucid.tensor([-1.0], device=device), 1.0, validate_args=True)
    with pytest.raises(ValueError, match="at least one-dimensional"):
        LD.Dirichlet(lucid.tensor(1.0, device=device))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        LD.NegativeBinomial(3.0)
    with pytest.raises(ValueError):
        LD.Beta(1.0, 2.0, validate_args=True).log_prob(lucid.tensor(1.5, device=device))
    assert math.isnan(float(LD.StudentT(0.5).mean))
