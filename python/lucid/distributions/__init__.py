"""lucid.distributions: probability distributions with sampling and log-densities
(torch.distributions' counterpart): the Distribution base with torch's validation, Normal,
Bernoulli, Uniform, Categorical, Independent, kl_divergence and the constraints."""

from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .independent import Independent
from .kl import kl_divergence, register_kl
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Independent", "Normal", "Uniform", "constraints",
           "kl_divergence", "register_kl"]
