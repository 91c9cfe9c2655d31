"""lucid.distributions: probability distributions with sampling and log-densities
(torch.distributions' counterpart): the Distribution base with torch's validation, Normal,
Bernoulli, Uniform, Categorical, Exponential, Laplace, Poisson, MultivariateNormal,
Independent, kl_divergence and the constraints."""

from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exponential import Exponential, Laplace, Poisson
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Exponential", "Independent", "Laplace", "MultivariateNormal",
           "Normal", "Poisson", "Uniform", "constraints", "kl_divergence", "register_kl"]
