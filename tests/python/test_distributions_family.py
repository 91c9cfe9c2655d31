"""lucid.distributions' Cauchy, Geometric, OneHotCategorical, Gumbel, HalfNormal,
HalfCauchy, Pareto, Weibull, Kumaraswamy, GeneralizedPareto, the relaxed distributions,
MixtureSameFamily and LogisticNormal against torch.distributions (float64): densities,
cdfs, statistics and their gradients, samples, reprs and torch's validation errors."""

import math
import re

import pytest
import torch
import torch.distributions as TD

import lucid
import lucid.distributions as LD
from conftest import to_lucid, to_torch


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


LOC, SCALE, PROBS = rand(2, 3, seed=1), rand(2, 3, seed=2).exp(), torch.sigmoid(rand(2, 3, seed=3))
ONE_HOT = torch.nn.functional.one_hot(torch.tensor([2, 0]), 3).double()
CASES = [
    ("Cauchy", {"loc": LOC, "scale": SCALE}, rand(2, 3, seed=4), ["log_prob", "cdf", "entropy", "mode"]),
    ("Geometric", {"probs": PROBS}, torch.tensor([[0.0, 3, 1], [2, 0, 7]], dtype=torch.float64),
     ["log_prob", "entropy", "mean", "variance", "mode"]),
    ("Geometric", {"logits": rand(2, 3, seed=5)}, torch.tensor([[1.0, 0, 4], [0, 2, 1]], dtype=torch.float64),
     ["log_prob", "entropy", "mean", "variance"]),
    ("Gumbel", {"loc": LOC, "scale": SCALE}, rand(2, 3, seed=6),
     ["log_prob", "cdf", "entropy", "mean", "variance", "stddev", "mode"]),
    ("HalfNormal", {"scale": SCALE}, rand(2, 3, seed=7).abs(),
     ["log_prob", "cdf", "entropy", "mean", "variance", "mode"]),
    ("OneHotCategorical", {"probs": PROBS}, ONE_HOT, ["log_prob", "entropy", "mean", "variance", "mode"]),
    ("HalfCauchy", {"scale": SCALE}, rand(2, 3, seed=8).abs(), ["log_prob", "cdf", "entropy", "mean", "mode"]),
    ("Pareto", {"scale": SCALE, "alpha": SCALE + 2.5}, SCALE * (1 + rand(2, 3, seed=9).abs()),
     ["log_prob", "cdf", "entropy", "mean", "variance", "mode"]),
    ("Weibull", {"scale": SCALE, "concentration": SCALE + 1.0}, rand(2, 3, seed=10).abs() + 0.1,
     ["log_prob", "cdf", "entropy", "mean", "variance", "mode"]),
    ("Kumaraswamy", {"concentration1": SCALE + 1.0, "concentration0": SCALE + 1.5}, torch.sigmoid(rand(2, 3, seed=17)),
     ["log_prob", "cdf", "entropy", "mean", "variance"]),  # (torch's mode is NaN there, and lucid's)
]


@pytest.mark.parametrize("name,args,value,outs", CASES, ids=[f"{c[0]}-{'-'.join(c[1])}" for c in CASES])
def test_matches_torch(name, args, value, outs, device):
    targs = {k: v.clone().requires_grad_() for k, v in args.items()}
    largs = {k: to_lucid(v, device).requires_grad_() for k, v in args.items()}
    td, ld = getattr(TD, name)(**targs), getattr(LD, name)(**largs)
    assert tuple(ld.batch_shape) == tuple(td.batch_shape) and tuple(ld.event_shape) == tuple(td.event_shape)
    total_t = total_l = 0
    for what in outs:
        t, lo = getattr(td, what), getattr(ld, what)
        if what in ("log_prob", "cdf"):
            t, lo = t(value), lo(to_lucid(value, device))
        elif callable(t):
            t, lo = t(), lo()
        torch.testing.assert_close(to_torch(lo.detach().cpu()), t.detach(), rtol=1e-10, atol=1e-10)
        if t.requires_grad:
            total_t, total_l = total_t + (t * t).sum(), total_l + (lo * lo).sum()
    total_t.backward()
    total_l.backward()
    for k in args:
        torch.testing.assert_close(to_torch(largs[k].grad.cpu()), targs[k].grad, rtol=1e-8, atol=1e-8)
    assert repr(ld) == repr(td).replace("torch.", "lucid.")
    s = ld.sample((7,))
    assert tuple(s.shape) == (7,) + tuple(td.batch_shape) + tuple(td.event_shape) and not s.requires_grad
    assert tuple(ld.expand((4,) + tuple(ld.batch_shape)).batch_shape) == (4, 2, 3)[:1 + len(ld.batch_shape)]


def test_sample_statistics(device):
    lucid.manual_seed(3)
    n = 200_000
    g = LD.Geometric(lucid.tensor(0.25, dtype=lucid.float64, device=device)).sample((n,))
    assert abs(float(g.mean()) - 3.0) < 0.05 and float(g.min()) == 0.0
    c = to_torch(LD.Cauchy(1.0, 2.0).sample((n,)).cpu())
    assert torch.allclose(torch.quantile(c, torch.tensor([0.25, 0.5, 0.75])), torch.tensor([-1.0, 1.0, 3.0]),
                          atol=0.05)
    gu = LD.Gumbel(lucid.tensor(0.5, dtype=lucid.float64, device=device), 2.0).rsample((n,))
    assert abs(float(gu.mean()) - (0.5 + 2.0 * 0.5772156649)) < 0.03
    h = LD.HalfNormal(lucid.tensor(2.0, dtype=lucid.float64, device=device)).sample((n,))
    assert float(h.min()) >= 0 and abs(float(h.mean()) - 2.0 * (2 / torch.pi) ** 0.5) < 0.02
    oh = LD.OneHotCategorical(lucid.tensor([0.1, 0.6, 0.3], device=device)).sample((n,))
    assert torch.allclose(to_torch(oh.mean(0).cpu()), torch.tensor([0.1, 0.6, 0.3]), atol=0.01)
    assert LD.OneHotCategorical(lucid.tensor([0.5, 0.5])).enumerate_support().tolist() == [[1.0, 0.0], [0.0, 1.0]]
    hc = to_torch(LD.HalfCauchy(lucid.tensor(2.0, dtype=lucid.float64, device=device)).sample((n,)).cpu())
    assert float(hc.min()) >= 0 and abs(float(hc.median()) - 2.0) < 0.05
    p = LD.Pareto(lucid.tensor(1.0, dtype=lucid.float64, device=device), 3.0).sample((n,))
    assert float(p.min()) >= 1.0 and abs(float(p.mean()) - 1.5) < 0.02
    w = LD.Weibull(lucid.tensor(2.0, dtype=lucid.float64, device=device), 1.5).sample((n,))
    assert abs(float(w.mean()) - 2 * math.gamma(1 + 1 / 1.5)) < 0.02


@pytest.mark.parametrize("make", [
    lambda m, t: m.Geometric(t([0.0, 0.5])),
    lambda m, t: m.Geometric(t([1.5])),
    lambda m, t: m.Geometric(t([0.5])).log_prob(t([0.5])),
    lambda m, t: m.Cauchy(0.0, t([-1.0])),
    lambda m, t: m.HalfNormal(t([1.0])).log_prob(t([-1.0])),
    lambda m, t: m.OneHotCategorical(t([0.5, 0.5])).log_prob(t([1.0, 1.0])),
    lambda m, t: m.Gumbel(0.0, t([0.0])),
    lambda m, t: m.HalfCauchy(t([-1.0])),
    lambda m, t: m.Pareto(t([1.0]), t([0.0])),
    lambda m, t: m.Pareto(t([2.0]), t([1.0])).log_prob(t([1.5])),
    lambda m, t: m.Weibull(t([1.0]), t([-2.0])),
    lambda m, t: m.Kumaraswamy(t([1.0]), t([0.0])),
    lambda m, t: m.GeneralizedPareto(t([0.0]), t([-1.0]), t([0.1])),
])
def test_invalid_arguments_raise_as_torch(make):
    with pytest.raises(Exception) as theirs:
        make(TD, lambda v: torch.tensor(v))
    with pytest.raises(type(theirs.value)) as ours:
        make(LD, lambda v: lucid.tensor(v))
    head = str(theirs.value).split("found invalid values")[0].replace("torch.", "lucid.")
    mine = re.sub(r", device='gpu:\d+'", "", str(ours.value))  # torch's are CPU tensors
    assert mine.startswith(head), (str(ours.value), str(theirs.value))


# ---- the relaxed (Concrete / Gumbel-softmax) distributions --------------------------------


@pytest.mark.parametrize("name", ["RelaxedBernoulli", "RelaxedOneHotCategorical"])
@pytest.mark.parametrize("param", ["logits", "probs"])
def test_relaxed_distributions_match_torch(name, param, device):
    logits = rand(2, 3, seed=11)
    value = logits.sigmoid() if param == "probs" and name == "RelaxedBernoulli" else \
        logits.softmax(-1) if param == "probs" else logits
    t = torch.tensor(0.7, dtype=torch.float64)
    tv = value.clone().requires_grad_()
    lv = to_lucid(value, device).requires_grad_()
    td = getattr(TD, name)(t, **{param: tv})
    ld = getattr(LD, name)(to_lucid(t, device), **{param: lv})
    x = td.sample((5,))
    tl, ll = td.log_prob(x), ld.log_prob(to_lucid(x, device))
    torch.testing.assert_close(to_torch(ll.detach().cpu()), tl.detach(), rtol=1e-10, atol=1e-10)
    tl.sum().backward()
    ll.sum().backward()
    torch.testing.assert_close(to_torch(lv.grad.cpu()), tv.grad, rtol=1e-8, atol=1e-8)
    assert repr(ld) == repr(td).replace("torch.", "lucid.")
    s = ld.rsample((4,))
    assert tuple(s.shape) == (4, 2, 3) and s.requires_grad and bool(ld.support.check(s).all())
    assert tuple(ld.expand((7, 2, 3) if name == "RelaxedBernoulli" else (7, 2)).batch_shape) == \
        ((7, 2, 3) if name == "RelaxedBernoulli" else (7, 2))


def test_a_cold_relaxed_one_hot_sample_is_nearly_one_hot_and_straight_through_passes_gradients():
    lucid.manual_seed(0)
    logits = lucid.tensor([[2.0, 0.0, -1.0]], dtype=lucid.float64)
    s = LD.RelaxedOneHotCategorical(lucid.tensor(0.01, dtype=lucid.float64), logits=logits).sample((400,))
    # (nearly all: where two perturbed scores fall within the temperature of each other, the
    # sample splits between them)
    assert float((s.max(-1)[0] > 0.99).double().mean()) > 0.95
    probs = lucid.tensor([0.2, 0.5, 0.3], dtype=lucid.float64).requires_grad_()
    d = LD.OneHotCategoricalStraightThrough(probs=probs)
    r = d.rsample((3,))
    assert set(r.detach().sum(-1).tolist()) == {1.0} and set(r.detach().flatten().tolist()) <= {0.0, 1.0}
    (r * lucid.tensor([1.0, 2.0, 3.0], dtype=lucid.float64)).sum().backward()
    assert probs.grad is not None and float(probs.grad.abs().sum()) > 0


# ---- MixtureSameFamily and LogisticNormal ----------------------------------------------------


@pytest.mark.parametrize("multivariate", [False, True])
def test_mixture_same_family_matches_torch(multivariate, device):
    logits, loc, scale = rand(2, 3, seed=12), rand(2, 3, seed=13), rand(2, 3, seed=14).exp()
    targs = [v.clone().requires_grad_() for v in (logits, loc, scale)]
    largs = [to_lucid(v, device).requires_grad_() for v in (logits, loc, scale)]

    def build(m, lg, lc, sc):
        if multivariate:  # (a mixture of 3 diagonal Gaussians over R^2)
            return m.MixtureSameFamily(m.Categorical(logits=lg[0]), m.Independent(m.Normal(lc.T, sc.T), 1))
        return m.MixtureSameFamily(m.Categorical(logits=lg), m.Normal(lc, sc))

    td, ld = build(TD, *targs), build(LD, *largs)
    x = td.sample((5,))
    total_t = td.log_prob(x).sum() + td.mean.sum() + td.variance.sum()
    total_l = ld.log_prob(to_lucid(x, device)).sum() + ld.mean.sum() + ld.variance.sum()
    torch.testing.assert_close(to_torch(total_l.detach().cpu()), total_t.detach(), rtol=1e-10, atol=1e-10)
    if not multivariate:
        torch.testing.assert_close(to_torch(ld.cdf(to_lucid(x, device)).detach().cpu()), td.cdf(x).detach())
    total_t.backward()
    total_l.backward()
    for t, lo in zip(targs, largs):
        torch.testing.assert_close(to_torch(lo.grad.cpu()), t.grad, rtol=1e-8, atol=1e-8)
    assert repr(ld) == repr(td).replace("torch.", "lucid.")
    assert tuple(ld.sample((4,)).shape) == tuple(td.sample((4,)).shape)
    assert tuple(ld.expand((7,) + tuple(ld.batch_shape)).batch_shape) == (7,) + tuple(td.batch_shape)


def test_mixture_same_family_refuses_what_torch_refuses():
    cat, normal = LD.Categorical(logits=lucid.zeros(3)), LD.Normal(lucid.zeros(4), lucid.ones(4))
    with pytest.raises(ValueError, match="does not equal `component_distribution.batch_shape\\[-1\\]`"):
        LD.MixtureSameFamily(cat, normal)
    with pytest.raises(ValueError, match="needs to be an  instance of torch.distributions.Categorical"):
        LD.MixtureSameFamily(normal, normal)


def test_logistic_normal_matches_torch(device):
    loc, scale = rand(2, 3, seed=15), rand(2, 3, seed=16).exp()
    td, ld = TD.LogisticNormal(loc, scale), LD.LogisticNormal(to_lucid(loc, device), to_lucid(scale, device))
    y = td.sample((4,))
    torch.testing.assert_close(to_torch(ld.log_prob(to_lucid(y, device)).cpu()), td.log_prob(y), rtol=1e-10,
                               atol=1e-10)
    s = ld.rsample((4,))
    assert tuple(s.shape) == (4, 2, 4) and bool(LD.constraints.simplex.check(s).all())
    assert repr(ld) == repr(td).replace("torch.", "lucid.")


def test_generalized_pareto_matches_torch():
    # (float32: torch 2.15's GeneralizedPareto compares its concentration with a float32 zero)
    loc, scale = rand(2, 3, seed=20).float(), rand(2, 3, seed=21).exp().float()
    conc = torch.tensor([[0.0, 0.2, -0.3], [0.1, -0.1, 0.4]])
    td = TD.GeneralizedPareto(loc, scale, conc)
    ld = LD.GeneralizedPareto(to_lucid(loc), to_lucid(scale), to_lucid(conc))
    x = td.sample((5,))
    for what in ("log_prob", "cdf", "log_survival_function", "icdf"):
        arg = td.cdf(x) if what == "icdf" else x
        torch.testing.assert_close(to_torch(getattr(ld, what)(to_lucid(arg))), getattr(td, what)(arg), rtol=1e-5,
                                   atol=1e-5)
    for what in ("mean", "variance", "mode"):
        torch.testing.assert_close(to_torch(getattr(ld, what)), getattr(td, what), equal_nan=True)
    torch.testing.assert_close(to_torch(ld.entropy()), td.entropy())
    assert tuple(ld.rsample((4,)).shape) == (4, 2, 3) and repr(ld) == repr(td).replace("torch.", "lucid.")


def test_von_mises_matches_torch(device):
    loc = torch.tensor([0.5, -2.0, 3.0], dtype=torch.float64)
    kappa = torch.tensor([0.3, 2.0, 8.0], dtype=torch.float64)
    tk, lk = kappa.clone().requires_grad_(), to_lucid(kappa, device).requires_grad_()
    td, ld = TD.VonMises(loc, tk), LD.VonMises(to_lucid(loc, device), lk)
    x = td.sample((5,))
    tl, ll = td.log_prob(x), ld.log_prob(to_lucid(x, device))
    torch.testing.assert_close(to_torch(ll.detach().cpu()), tl.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(to_torch(ld.variance.detach().cpu()), td.variance.detach(), rtol=1e-12, atol=1e-12)
    tl.sum().backward()
    ll.sum().backward()
    torch.testing.assert_close(to_torch(lk.grad.cpu()), tk.grad, rtol=1e-10, atol=1e-10)
    assert repr(ld) == repr(td).replace("torch.", "lucid.")
    lucid.manual_seed(0)
    s = to_torch(ld.sample((20000,)).cpu())
    assert float(s.min()) >= -torch.pi and float(s.max()) < torch.pi
    circular_mean = torch.atan2(s.sin().mean(0), s.cos().mean(0))
    assert torch.allclose(circular_mean[1:], loc[1:], atol=0.05)  # (kappa 0.3 spreads too widely to say)
    assert tuple(ld.expand((4, 3)).batch_shape) == (4, 3)


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_continuous_bernoulli_matches_torch_on_both_sides_of_its_unstable_region(param, device):
    # (0.4995 and 0.5 fall in the Taylor region around 1/2, the others in the closed forms)
    value = torch.tensor([0.1, 0.4995, 0.5, 0.7, 0.95], dtype=torch.float64) if param == "probs" else \
        torch.tensor([-3.0, -0.001, 0.0, 0.5, 4.0], dtype=torch.float64)
    tv, lv = value.clone().requires_grad_(), to_lucid(value, device).requires_grad_()
    td, ld = TD.ContinuousBernoulli(**{param: tv}), LD.ContinuousBernoulli(**{param: lv})
    x = torch.tensor([0.2, 0.5, 0.01, 0.99, 0.7], dtype=torch.float64)
    lx = to_lucid(x, device)
    total_t = td.log_prob(x).sum() + td.cdf(x).sum() + td.icdf(x).sum() + td.mean.sum() + td.variance.sum() + \
        td.entropy().sum()
    total_l = ld.log_prob(lx).sum() + ld.cdf(lx).sum() + ld.icdf(lx).sum() + ld.mean.sum() + ld.variance.sum() + \
        ld.entropy().sum()
    torch.testing.assert_close(to_torch(total_l.detach().cpu()), total_t.detach(), rtol=1e-12, atol=1e-12)
    total_t.backward()
    total_l.backward()
    torch.testing.assert_close(to_torch(lv.grad.cpu()), tv.grad, rtol=1e-9, atol=1e-9)
    # the exponential family's entropy (natural parameters, autograd) agrees with the closed form
    torch.testing.assert_close(to_torch(LD.ExponentialFamily.entropy(ld).detach().cpu()), td.entropy().detach(),
                               rtol=1e-9, atol=1e-9)
    assert repr(ld) == repr(td).replace("torch.", "lucid.")
    s = ld.rsample((3,))
    assert tuple(s.shape) == (3, 5) and s.requires_grad and bool(((s >= 0) & (s <= 1)).all())
