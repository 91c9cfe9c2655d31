"""lucid.distributions' Normal, Bernoulli, Uniform, Exponential, Laplace, Poisson,
Independent and kl_divergence against torch.distributions: densities, statistics and their
gradients (float64), sample shapes and statistics, reparameterised gradients, expand, reprs
and torch's validation errors."""

import math
import re

import pytest
import torch
import torch.distributions as TD

import lucid
import lucid.distributions as LD
from conftest import assert_close, to_lucid, to_torch


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def lucid_args(args, device):
    return {k: to_lucid(v, device).requires_grad_() if isinstance(v, torch.Tensor) else v for k, v in args.items()}


def torch_args(args):
    return {k: v.clone().requires_grad_() if isinstance(v, torch.Tensor) else v for k, v in args.items()}


LOC, SCALE = rand(2, 3, seed=1), rand(2, 3, seed=2).exp()
PROBS = torch.sigmoid(rand(2, 3, seed=3))
CASES = [
    ("Normal", {"loc": LOC, "scale": SCALE}, rand(2, 3, seed=4)),
    ("Normal", {"loc": LOC, "scale": 0.5}, rand(3, seed=5)),
    ("Bernoulli", {"probs": PROBS}, (rand(2, 3, seed=6) > 0).double()),
    ("Bernoulli", {"logits": rand(2, 3, seed=7)}, (rand(3, seed=8) > 0).double()),
    ("Uniform", {"low": LOC, "high": LOC + SCALE}, LOC + SCALE * torch.rand(2, 3, dtype=torch.float64)),
    ("Exponential", {"rate": SCALE}, rand(2, 3, seed=10).abs()),
    ("Laplace", {"loc": LOC, "scale": SCALE}, rand(2, 3, seed=11)),
    ("Poisson", {"rate": SCALE * 3}, torch.tensor([[0.0, 1, 2], [5, 0, 3]], dtype=torch.float64)),
]
NO_CDF, NO_ENTROPY, WITH_ICDF = {"Bernoulli", "Poisson"}, {"Poisson"}, {"Normal", "Exponential", "Laplace"}
IDS = [f"{c[0]}-{'-'.join(c[1])}" for c in CASES]


@pytest.mark.parametrize("name,args,value", CASES, ids=IDS)
def test_densities_statistics_and_gradients_match_torch(name, args, value, device):
    targs, largs = torch_args(args), lucid_args(args, device)
    td, ld = getattr(TD, name)(**targs), getattr(LD, name)(**largs)
    assert tuple(ld.batch_shape) == tuple(td.batch_shape) and tuple(ld.event_shape) == tuple(td.event_shape)
    lv = to_lucid(value, device)
    outs = ["log_prob", "mean", "variance", "stddev"] + (["cdf"] if name not in NO_CDF else []) + \
        (["entropy"] if name not in NO_ENTROPY else [])
    total_t = total_l = 0
    for what in outs:
        t = getattr(td, what)
        lo = getattr(ld, what)
        t, lo = (t(value), lo(lv)) if what in ("log_prob", "cdf") else (t() if callable(t) else t,
                                                                       lo() if callable(lo) else lo)
        assert_close(lo.detach(), t.detach(), rtol=1e-10, atol=1e-10)
        total_t, total_l = total_t + (t * t).sum(), total_l + (lo * lo).sum()
    if name in WITH_ICDF:
        q = torch.rand(2, 3, dtype=torch.float64) * 0.9 + 0.05
        assert_close(ld.icdf(to_lucid(q, device)).detach(), td.icdf(q).detach(), rtol=1e-8, atol=1e-8)
    torch.testing.assert_close(to_torch(ld.mode.detach().cpu()), td.mode.detach(), equal_nan=True)  # (Uniform: NaN)
    total_t.backward()
    total_l.backward()
    for k, v in targs.items():
        if isinstance(v, torch.Tensor):
            assert_close(largs[k].grad, v.grad, rtol=1e-8, atol=1e-8)
    assert repr(ld) == repr(td).replace("torch.", "lucid.")


@pytest.mark.parametrize("name,args", [("Normal", {"loc": 1.5, "scale": 2.0}), ("Bernoulli", {"probs": 0.3}),
                                       ("Uniform", {"low": -1.0, "high": 3.0}), ("Exponential", {"rate": 2.0}),
                                       ("Laplace", {"loc": -1.0, "scale": 0.5}), ("Poisson", {"rate": 3.5})])
def test_samples(name, args, device):
    lucid.manual_seed(0)
    d = getattr(LD, name)(**{k: lucid.tensor(v, dtype=lucid.float64, device=device) for k, v in args.items()})
    s = d.sample((200_000,))
    assert tuple(s.shape) == (200_000,) and s.dtype == lucid.float64 and not s.requires_grad
    want = getattr(TD, name)(**{k: torch.tensor(v, dtype=torch.float64) for k, v in args.items()})
    assert abs(float(s.mean()) - float(want.mean)) < 0.02
    assert abs(float(s.std()) - float(want.stddev)) < 0.02
    assert tuple(d.expand((4, 2)).sample((3,)).shape) == (3, 4, 2)
    if name == "Bernoulli":
        assert set(s.unique().tolist()) == {0.0, 1.0}
        assert d.enumerate_support().tolist() == [0.0, 1.0]


def test_reparameterised_samples_carry_gradients(device):
    loc = to_lucid(LOC, device).requires_grad_()
    scale = to_lucid(SCALE, device).requires_grad_()
    x = LD.Normal(loc, scale).rsample((5,))
    assert tuple(x.shape) == (5, 2, 3)
    x.sum().backward()
    eps = (x.detach() - loc.detach()) / scale.detach()
    assert_close(loc.grad, torch.full((2, 3), 5.0, dtype=torch.float64), rtol=1e-12, atol=1e-12)
    assert_close(scale.grad, to_torch(eps.sum(0).cpu()), rtol=1e-10, atol=1e-10)
    low, high = lucid.zeros(3, dtype=lucid.float64, device=device).requires_grad_(), \
        lucid.ones(3, dtype=lucid.float64, device=device).requires_grad_()
    u = LD.Uniform(low, high).rsample()
    u.sum().backward()
    assert_close(high.grad, to_torch(u.detach().cpu()), rtol=1e-12, atol=1e-12)
    assert LD.Normal(0.0, 1.0).has_rsample and not LD.Bernoulli(0.5).has_rsample


def test_independent(device):
    base_t, base_l = TD.Normal(LOC, SCALE), LD.Normal(to_lucid(LOC, device), to_lucid(SCALE, device))
    it, il = TD.Independent(base_t, 1), LD.Independent(base_l, 1)
    assert tuple(il.batch_shape) == (2,) and tuple(il.event_shape) == (3,)
    v = rand(2, 3, seed=9)
    assert_close(il.log_prob(to_lucid(v, device)), it.log_prob(v), rtol=1e-12, atol=1e-12)
    assert_close(il.entropy(), it.entropy(), rtol=1e-12, atol=1e-12)
    assert tuple(il.sample((4,)).shape) == (4, 2, 3)
    assert tuple(il.expand((5, 2)).batch_shape) == (5, 2)
    assert repr(il) == repr(it).replace("torch.", "lucid.")
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        LD.Independent(base_l, 3)
    with pytest.raises(ValueError) as theirs:
        it.log_prob(torch.zeros(2, 4, dtype=torch.float64))
    with pytest.raises(ValueError) as ours:
        il.log_prob(lucid.zeros(2, 4, dtype=lucid.float64, device=device))
    assert str(ours.value) == str(theirs.value).replace("torch.", "lucid.")


def test_kl_divergence(device):
    pairs = [(lambda m, t: m.Normal(t(LOC), t(SCALE)), lambda m, t: m.Normal(t(LOC * 0.5), t(SCALE * 2))),
             (lambda m, t: m.Bernoulli(t(PROBS)), lambda m, t: m.Bernoulli(t(PROBS.flip(0)))),
             (lambda m, t: m.Categorical(t(PROBS)), lambda m, t: m.Categorical(t(PROBS.flip(1)))),
             (lambda m, t: m.Uniform(t(LOC), t(LOC + SCALE)), lambda m, t: m.Uniform(t(LOC - 1), t(LOC + SCALE + 1))),
             (lambda m, t: m.Uniform(t(LOC), t(LOC + SCALE)), lambda m, t: m.Uniform(t(LOC + 0.1), t(LOC + SCALE))),
             (lambda m, t: m.Exponential(t(SCALE)), lambda m, t: m.Exponential(t(SCALE.flip(0)))),
             (lambda m, t: m.Laplace(t(LOC), t(SCALE)), lambda m, t: m.Laplace(t(-LOC), t(SCALE * 0.7))),
             (lambda m, t: m.Poisson(t(SCALE)), lambda m, t: m.Poisson(t(SCALE * 2))),
             (lambda m, t: m.Independent(m.Normal(t(LOC), t(SCALE)), 1),
              lambda m, t: m.Independent(m.Normal(t(LOC * 0), t(SCALE)), 1))]
    for p, q in pairs:
        want = TD.kl_divergence(p(TD, lambda x: x), q(TD, lambda x: x))
        got = LD.kl_divergence(p(LD, lambda x: to_lucid(x, device)), q(LD, lambda x: to_lucid(x, device)))
        assert_close(got, want, rtol=1e-10, atol=1e-10)
    with pytest.raises(NotImplementedError, match="No KL"):
        LD.kl_divergence(LD.Normal(0.0, 1.0), LD.Bernoulli(0.5))

    class Shifted(LD.Normal):  # a subclass finds its parent's pair
        pass
    assert_close(LD.kl_divergence(Shifted(0.0, 1.0), LD.Normal(1.0, 1.0)), torch.tensor(0.5))

    @LD.register_kl(Shifted, LD.Normal)
    def _(p, q):
        return lucid.tensor(-1.0)
    assert float(LD.kl_divergence(Shifted(0.0, 1.0), LD.Normal(1.0, 1.0))) == -1.0


@pytest.mark.parametrize("make", [
    lambda m: m.Normal(0.0, -1.0),
    lambda m: m.Normal(0.0, 1.0).log_prob(1.0),
    lambda m: m.Normal(_t(m, [0.0, 0.0]), 1.0).log_prob(_t(m, [0.0, 0.0, 0.0])),
    lambda m: m.Uniform(1.0, 0.0),
    lambda m: m.Uniform(0.0, 1.0).log_prob(_t(m, 2.0)),
    lambda m: m.Bernoulli(probs=_t(m, [1.5])),
    lambda m: m.Bernoulli(_t(m, 0.3)).log_prob(_t(m, 0.5)),
    lambda m: m.Bernoulli(),
    lambda m: m.Bernoulli(probs=0.5, logits=0.0),
    lambda m: m.Normal(_t(m, [0.0, float("nan")]), 1.0),
    lambda m: m.Exponential(_t(m, [1.0, 0.0])),
    lambda m: m.Exponential(1.0).log_prob(_t(m, -1.0)),
    lambda m: m.Poisson(_t(m, [-1.0])),
    lambda m: m.Poisson(2.0).log_prob(_t(m, 1.5)),
    lambda m: m.Laplace(0.0, _t(m, [0.0])),
])
def test_invalid_arguments_raise_as_torch(make):
    with pytest.raises(Exception) as theirs:
        make(TD)
    with pytest.raises(type(theirs.value)) as ours:
        make(LD)
    head = str(theirs.value).split("found invalid values")[0].replace("torch.", "lucid.")
    mine = re.sub(r", device='gpu:\d+'", "", str(ours.value))  # torch's are CPU tensors
    assert mine.startswith(head), (str(ours.value), str(theirs.value))


def _t(m, v):
    return (torch if m is TD else lucid).tensor(v)


def test_validation_off_and_default():
    assert float(LD.Normal(0.0, 1.0, validate_args=False).log_prob(lucid.tensor(0.0))) == pytest.approx(
        -0.5 * math.log(2 * math.pi))
    LD.Distribution.set_default_validate_args(False)
    try:
        LD.Normal(0.0, -1.0)  # not checked
    finally:
        LD.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        LD.Normal(0.0, -1.0)
    assert isinstance(LD.Categorical(lucid.tensor([0.5, 0.5])), LD.Distribution)


def _spd(n, *batch, seed=0):
    a = rand(*batch, n, n, seed=seed)
    return a @ a.mT + n * torch.eye(n, dtype=torch.float64)


@pytest.mark.parametrize("form", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal(form, device):
    cov = _spd(3, 2, seed=40)
    matrix = {"covariance_matrix": cov, "precision_matrix": torch.linalg.inv(cov),
              "scale_tril": torch.linalg.cholesky(cov)}[form]
    loc = rand(4, 1, 3, seed=41)  # broadcasts against the matrices' batch of 2
    tl, tm = loc.clone().requires_grad_(), matrix.clone().requires_grad_()
    ll, lm = to_lucid(loc, device).requires_grad_(), to_lucid(matrix, device).requires_grad_()
    td, ld = TD.MultivariateNormal(tl, **{form: tm}), LD.MultivariateNormal(ll, **{form: lm})
    assert tuple(ld.batch_shape) == tuple(td.batch_shape) == (4, 2) and tuple(ld.event_shape) == (3,)
    v = rand(5, 4, 2, 3, seed=42)
    total_t = total_l = 0
    for t, lo in ((td.log_prob(v), ld.log_prob(to_lucid(v, device))), (td.entropy(), ld.entropy()),
                  (td.variance, ld.variance), (td.covariance_matrix, ld.covariance_matrix),
                  (td.precision_matrix, ld.precision_matrix), (td.scale_tril, ld.scale_tril), (td.mean, ld.mean)):
        assert_close(lo.detach(), t.detach(), rtol=1e-9, atol=1e-9)
        total_t, total_l = total_t + (t * t).sum(), total_l + (lo * lo).sum()
    total_t.backward()
    total_l.backward()
    assert_close(ll.grad, tl.grad, rtol=1e-8, atol=1e-8)
    # (scale_tril: only its lower triangle is read; torch's cholesky_inverse still sends the upper
    # triangle a gradient, lucid's does not, so the lower triangles are compared)
    lower = (lambda g: g.tril()) if form == "scale_tril" else (lambda g: g)
    assert_close(lower(lm.grad), lower(tm.grad), rtol=1e-7, atol=1e-7)
    assert tuple(ld.rsample((6,)).shape) == (6, 4, 2, 3) and tuple(ld.expand((3, 4, 2)).sample().shape) == (3, 4, 2, 3)
    other_t = TD.MultivariateNormal(loc * 0, covariance_matrix=_spd(3, seed=43))
    other_l = LD.MultivariateNormal(to_lucid(loc * 0, device), covariance_matrix=to_lucid(_spd(3, seed=43), device))
    assert_close(LD.kl_divergence(ld, other_l).detach(), TD.kl_divergence(td, other_t).detach(), rtol=1e-9,
                 atol=1e-9)


def test_multivariate_normal_samples_and_errors(device):
    cov = _spd(2, seed=44)
    lucid.manual_seed(2)
    d = LD.MultivariateNormal(lucid.tensor([1.0, -2.0], dtype=lucid.float64, device=device),
                              covariance_matrix=to_lucid(cov, device))
    s = to_torch(d.sample((100_000,)).cpu())
    assert torch.allclose(s.mean(0), torch.tensor([1.0, -2.0], dtype=torch.float64), atol=0.03)
    assert torch.allclose(torch.cov(s.T), cov, rtol=0.03, atol=0.03)
    for make in (lambda m, t: m.MultivariateNormal(t(torch.tensor(0.0)), t(cov)),
                 lambda m, t: m.MultivariateNormal(t(torch.zeros(2)), t(cov), scale_tril=t(cov)),
                 lambda m, t: m.MultivariateNormal(t(torch.zeros(2))),
                 lambda m, t: m.MultivariateNormal(t(torch.zeros(2)), t(-cov)),
                 lambda m, t: m.MultivariateNormal(t(torch.zeros(2)), scale_tril=t(cov)),
                 lambda m, t: m.MultivariateNormal(t(torch.zeros(2)), t(torch.zeros(2)))):
        with pytest.raises(Exception) as theirs:
            make(TD, lambda x: x.double())
        with pytest.raises(type(theirs.value)) as ours:
            make(LD, lambda x: to_lucid(x.double(), device))
        head = str(theirs.value).split("found invalid values")[0].replace("torch.", "lucid.")
        assert str(ours.value).startswith(head), (str(ours.value), str(theirs.value))


@pytest.mark.parametrize("name,args", [("Exponential", (1.0,)), ("HalfNormal", (1.0,)), ("Binomial", (3, 0.5)),
                                       ("RelaxedBernoulli", (0.5, 0.3))])
def test_subclasses_with_their_own_init_must_define_expand(name, args):
    """torch's rule, kept where lucid's classes share one expand: a subclass that changes
    __init__ must say how to expand; one that does not inherits expand."""
    for module in (TD, LD):
        base = getattr(module, name)
        custom = type("Custom", (base,), {"__init__": lambda self, *a: base.__init__(self, *a)})
        with pytest.raises(NotImplementedError, match="Subclass Custom of " + name):
            custom(*args).expand((2,))
        plain = type("Plain", (base,), {})
        assert type(plain(*args).expand((2,))) is plain
