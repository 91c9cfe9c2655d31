"""kl_divergence for every pair torch.distributions.kl registers, against torch's value
(float64; infinite where p's support leaves q's), and torch's errors."""

import pytest
import torch
import torch.distributions as TD
import torch.distributions.kl as TK

import lucid.distributions as LD
from conftest import to_lucid, to_torch


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def pos(seed, low=0.3):
    return rand(3, seed=seed).exp() + low


def unit(seed):
    return torch.sigmoid(rand(3, seed=seed)) * 0.8 + 0.1


# each family's arguments, two draws (p's and q's), as torch tensors
MAKERS = {
    "Bernoulli": lambda s: {"probs": unit(s)},
    "Beta": lambda s: {"concentration1": pos(s), "concentration0": pos(s + 1)},
    "Binomial": lambda s: {"total_count": 10 - s % 3, "probs": unit(s)},
    "Categorical": lambda s: {"probs": torch.softmax(rand(3, 4, seed=s), -1)},
    "Cauchy": lambda s: {"loc": rand(3, seed=s), "scale": pos(s)},
    "ContinuousBernoulli": lambda s: {"probs": unit(s)},
    "Dirichlet": lambda s: {"concentration": rand(3, 4, seed=s).exp() + 0.3},
    "Exponential": lambda s: {"rate": pos(s)},
    "Gamma": lambda s: {"concentration": pos(s), "rate": pos(s + 1)},
    "Geometric": lambda s: {"probs": unit(s)},
    "Gumbel": lambda s: {"loc": rand(3, seed=s), "scale": pos(s)},
    "HalfNormal": lambda s: {"scale": pos(s)},
    "Laplace": lambda s: {"loc": rand(3, seed=s), "scale": pos(s)},
    # (batched factors: torch's LowRank-MultivariateNormal pair cannot broadcast an unbatched one)
    "LowRankMultivariateNormal": lambda s: {"loc": rand(3, 4, seed=s), "cov_factor": rand(3, 4, 2, seed=s + 1),
                                            "cov_diag": rand(3, 4, seed=s + 2).exp() + 0.5},
    "MultivariateNormal": lambda s: {"loc": rand(3, 4, seed=s),
                                     "scale_tril": torch.eye(4, dtype=torch.float64) * 1.5
                                     + rand(3, 4, 4, seed=s + 1).tril(-1) * 0.3},
    "Normal": lambda s: {"loc": rand(3, seed=s), "scale": pos(s)},
    "OneHotCategorical": lambda s: {"probs": torch.softmax(rand(3, 4, seed=s), -1)},
    "Pareto": lambda s: {"scale": pos(s), "alpha": torch.tensor([0.8, 1.5, 3.0], dtype=torch.float64) + s % 2},
    "Poisson": lambda s: {"rate": pos(s)},
    "Uniform": lambda s: {"low": unit(s) * 0.4, "high": unit(s) * 0.4 + 0.5},
}
PAIRS = sorted({(p.__name__, q.__name__) for p, q in TK._KL_REGISTRY if p.__name__ in MAKERS and q.__name__ in MAKERS})


def build(module, name, args, device):
    convert = (lambda v: v) if module is TD else (lambda v: to_lucid(v, device) if isinstance(v, torch.Tensor) else v)
    return getattr(module, name)(**{k: convert(v) for k, v in args.items()})


@pytest.mark.parametrize("p_name,q_name", PAIRS, ids=[f"{p}-{q}" for p, q in PAIRS])
def test_every_pair_torch_registers(p_name, q_name, device):
    p_args, q_args = MAKERS[p_name](1), MAKERS[q_name](5)
    if {p_name, q_name} == {"Binomial"}:
        q_args["total_count"] = p_args["total_count"]
    want = TD.kl_divergence(build(TD, p_name, p_args, device), build(TD, q_name, q_args, device))
    got = LD.kl_divergence(build(LD, p_name, p_args, device), build(LD, q_name, q_args, device))
    torch.testing.assert_close(to_torch(got.detach().cpu()), want.detach(), rtol=1e-9, atol=1e-9, equal_nan=True)


def test_the_registry_is_torchs_and_errors_are_too(device):
    ours = {(p.__name__, q.__name__) for p, q in LD.kl._KL}
    assert {(p.__name__, q.__name__) for p, q in TK._KL_REGISTRY} <= ours
    with pytest.raises(NotImplementedError, match="different exponential families"):
        LD.kl.kl_divergence(LD.Wishart(5.0, covariance_matrix=to_lucid(torch.eye(2, dtype=torch.float64), device)),
                            LD.Dirichlet(to_lucid(pos(1), device)))
    with pytest.raises(NotImplementedError, match="No KL"):
        LD.kl_divergence(LD.Normal(0.0, 1.0), LD.Binomial(3, 0.5))
