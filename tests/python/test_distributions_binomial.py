"""lucid.binomial (the engine's sampler: inversion below n p = 10, BTRS above) against
the binomial law, its edge values and errors against torch's, and Binomial and
Multinomial against torch.distributions: densities, statistics, entropies, gradients
(float64), enumerate_support, samples, expand, KL and validation."""

import math

import numpy as np
import pytest
import torch
import torch.distributions as TD

import lucid
import lucid.distributions as LD
from conftest import assert_close, to_lucid, to_torch


@pytest.mark.parametrize("n,p", [(20, 0.3), (7, 0.1), (100, 0.4), (1000, 0.97), (60, 0.5)])
def test_binomial_samples_follow_the_law(n, p, device):
    lucid.manual_seed(5)
    count = lucid.full((200_000,), float(n), dtype=lucid.float64, device=device)
    s = lucid.binomial(count, lucid.full((200_000,), p, dtype=lucid.float64, device=device))
    assert s.dtype == lucid.float64 and tuple(s.shape) == (200_000,)
    x = to_torch(s.cpu())
    assert bool((x == x.round()).all()) and bool(((x >= 0) & (x <= n)).all())
    # the empirical probabilities against the law's, value by value
    freq = torch.bincount(x.long(), minlength=n + 1).double() / len(x)
    pmf = TD.Binomial(n, torch.tensor(p, dtype=torch.float64)).log_prob(torch.arange(n + 1.0, dtype=torch.float64)).exp()
    assert float((freq - pmf).abs().max()) < 0.006


def test_binomial_edges_and_errors_are_torchs(device):
    n = lucid.tensor([10.0, 10, 0, 5, -1, 10, 10], device=device)
    p = lucid.tensor([0.0, 1.0, 0.5, math.nan, 0.5, 1.5, -0.5], device=device)
    got = lucid.binomial(n, p).cpu().tolist()
    assert got[:3] == [0.0, 10.0, 0.0] and math.isnan(got[3]) and got[4:] == [0.0, 10.0, 0.0]
    assert math.isnan(lucid.binomial(lucid.tensor([math.nan], device=device),
                                     lucid.tensor([0.5], device=device)).item())  # (torch's never returns)
    b = lucid.binomial(lucid.tensor([[10.0], [5.0]], device=device), lucid.tensor([0.3, 0.5], device=device))
    assert tuple(b.shape) == (2, 2)
    with pytest.raises(ValueError, match="binomial only supports floating-point dtypes for count, got: Long"):
        lucid.binomial(lucid.tensor([10], device=device), lucid.tensor([0.3], device=device))
    with pytest.raises(RuntimeError, match="Found dtype Float but expected Double"):
        lucid.binomial(lucid.tensor([10.0], dtype=lucid.float64, device=device), lucid.tensor([0.3], device=device))
    with pytest.raises(TypeError, match="must be Tensor"):
        lucid.binomial(10.0, lucid.tensor([0.3], device=device))


def test_binomial_samples_are_reproducible_and_agree_across_devices(devices):
    n = lucid.tensor(np.arange(1.0, 2001.0))
    p = lucid.tensor(np.linspace(0.01, 0.99, 2000))
    got = []
    for device in devices:
        lucid.manual_seed(9)
        first = lucid.binomial(n.to(device), p.to(device)).cpu().numpy()
        lucid.manual_seed(9)
        np.testing.assert_array_equal(lucid.binomial(n.to(device), p.to(device)).cpu().numpy(), first)
        got.append(first)
    for other in got[1:]:  # (an acceptance test may flip on the last bit of CUDA's lgamma: never in practice)
        assert np.mean(other != got[0]) < 1e-3


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def both(name, args, device):
    targs = {k: v.clone().requires_grad_() if isinstance(v, torch.Tensor) else v for k, v in args.items()}
    largs = {k: to_lucid(v, device).requires_grad_() if isinstance(v, torch.Tensor) else v for k, v in args.items()}
    return targs, largs, getattr(TD, name)(**targs), getattr(LD, name)(**largs)


PROBS = torch.sigmoid(rand(2, 3, seed=1))
SIMPLEX = torch.softmax(rand(2, 4, seed=2), -1)


@pytest.mark.parametrize("name,args,value", [
    ("Binomial", {"total_count": 10, "probs": PROBS}, torch.tensor([[0.0, 3, 10], [7, 1, 5]], dtype=torch.float64)),
    ("Binomial", {"total_count": torch.tensor([[5.0], [9.0]], dtype=torch.float64), "logits": rand(2, 3, seed=3)},
     torch.tensor([[0.0, 3, 5], [7, 1, 9]], dtype=torch.float64)),
    ("Multinomial", {"total_count": 8, "probs": SIMPLEX}, torch.tensor([[2.0, 1, 5, 0], [0, 0, 8, 0]],
                                                                       dtype=torch.float64)),
    ("Multinomial", {"total_count": 5, "logits": rand(2, 4, seed=4)}, torch.tensor([[1.0, 1, 1, 2], [5, 0, 0, 0]],
                                                                                   dtype=torch.float64))],
    ids=["binomial-probs", "binomial-logits", "multinomial-probs", "multinomial-logits"])
def test_densities_statistics_and_gradients_match_torch(name, args, value, device):
    targs, largs, td, ld = both(name, args, device)
    assert tuple(ld.batch_shape) == tuple(td.batch_shape) and tuple(ld.event_shape) == tuple(td.event_shape)
    whats = ["log_prob", "mean", "variance"] + (["mode"] if name == "Binomial" else [])
    if name == "Multinomial" or isinstance(args["total_count"], int):
        whats.append("entropy")
    total_t = total_l = 0
    for what in whats:
        t, lo = getattr(td, what), getattr(ld, what)
        if what == "log_prob":
            t, lo = t(value), lo(to_lucid(value, device))
        elif callable(t):
            t, lo = t(), lo()
        # (torch 2.11's Multinomial entropy takes lgamma(n + 1) of an integer tensor: in float32)
        tol = 1e-6 if (name, what) == ("Multinomial", "entropy") else 1e-10
        assert_close(lo.detach(), t.detach(), rtol=tol, atol=tol)
        total_t, total_l = total_t + (t * t).sum(), total_l + (lo * lo).sum()
    total_t.backward()
    total_l.backward()
    for k, v in targs.items():
        if isinstance(v, torch.Tensor) and v.grad is not None:
            assert_close(largs[k].grad, v.grad, rtol=1e-8, atol=1e-8)
    s = ld.sample((6,))
    assert tuple(s.shape) == (6,) + tuple(td.batch_shape) + tuple(td.event_shape) and not s.requires_grad
    batch = (3,) + tuple(td.batch_shape)
    assert tuple(ld.expand(batch).sample().shape) == batch + tuple(td.event_shape)
    if name == "Multinomial":
        assert bool((s.sum(-1) == args["total_count"]).all())
    else:
        assert_close(ld.enumerate_support(), td.enumerate_support(), rtol=0, atol=0) if isinstance(
            args["total_count"], int) else None


def test_sample_moments(device):
    lucid.manual_seed(3)
    b = LD.Binomial(30, lucid.tensor([0.2, 0.9], dtype=lucid.float64, device=device)).sample((100_000,))
    assert_close(b.mean(0), torch.tensor([6.0, 27.0], dtype=torch.float64), rtol=0.01, atol=0.01)
    m = LD.Multinomial(12, lucid.tensor([0.1, 0.6, 0.3], dtype=lucid.float64, device=device)).sample((50_000,))
    assert_close(m.mean(0), torch.tensor([1.2, 7.2, 3.6], dtype=torch.float64), rtol=0.01, atol=0.02)


def test_kl_and_validation(device):
    p, q = (PROBS, 10), (PROBS.flip(0), 7)
    want = TD.kl_divergence(TD.Binomial(p[1], p[0]), TD.Binomial(q[1], q[0]))
    got = LD.kl_divergence(LD.Binomial(p[1], to_lucid(p[0], device)), LD.Binomial(q[1], to_lucid(q[0], device)))
    assert_close(got, want, rtol=1e-10, atol=1e-10)  # (infinite where p has more trials)
    with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
        LD.kl_divergence(LD.Binomial(3, to_lucid(PROBS, device)), LD.Binomial(5, to_lucid(PROBS, device)))
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count"):
        LD.Multinomial(lucid.tensor(3.0), lucid.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match="support"):
        LD.Binomial(5, lucid.tensor(0.5, device=device), validate_args=True).log_prob(lucid.tensor(6.0, device=device))
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
        LD.Binomial(lucid.tensor([3.0, 4.0]), lucid.tensor([0.5, 0.5])).entropy()


def test_torchs_module_layout_is_importable():
    """torch.distributions.<module>.<Class> for each of torch's modules and the
    distributions they define."""
    import importlib
    import types
    lacking = set()
    for name in dir(TD):
        module = getattr(TD, name)
        if not isinstance(module, types.ModuleType) or name in lacking:
            continue
        ours = importlib.import_module(f"lucid.distributions.{name}")
        for member in getattr(module, "__all__", []):
            if isinstance(getattr(module, member), type) and issubclass(getattr(module, member), TD.Distribution):
                assert getattr(ours, member).__name__ == member, (name, member)
    from lucid.distributions.utils import broadcast_all, euler_constant, probs_to_logits  # noqa: F401
    assert abs(euler_constant - TD.utils.euler_constant) < 1e-15
