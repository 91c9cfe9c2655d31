"""lucid.distributions: probability distributions with sampling and log-densities
(torch.distributions' counterpart): the Distribution base with torch's validation, Normal,
Bernoulli, ContinuousBernoulli, Uniform, Categorical, OneHotCategorical, Exponential,
Laplace, Cauchy, Gumbel, HalfNormal, HalfCauchy, Pareto, Weibull, GeneralizedPareto,
Kumaraswamy, the relaxed (Gumbel-softmax) ones, Geometric, Poisson, MultivariateNormal,
MixtureSameFamily, LogisticNormal, VonMises, Independent, TransformedDistribution (with
the transforms, here and in lucid.distributions.transforms, and biject_to /
transform_to), LogNormal and the ExponentialFamily base, kl_divergence and the
constraints."""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exp_family import ContinuousBernoulli, ExponentialFamily
from .exponential import Exponential, Laplace, Poisson
from .half_line import GeneralizedPareto, HalfCauchy, Pareto, Weibull
from .kumaraswamy import Kumaraswamy
from .independent import Independent
from .kl import kl_divergence, register_kl
from .mixture import LogisticNormal, MixtureSameFamily
from .more import Cauchy, Geometric, Gumbel, HalfNormal, OneHotCategorical
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .relaxed import (ExpRelaxedCategorical, LogitRelaxedBernoulli, OneHotCategoricalStraightThrough, RelaxedBernoulli,
                      RelaxedOneHotCategorical)
from .transformed_distribution import LogNormal, TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform,
                         CumulativeDistributionTransform, ExpTransform, IndependentTransform, LowerCholeskyTransform,
                         PositiveDefiniteTransform, PowerTransform, ReshapeTransform, SigmoidTransform,
                         SoftmaxTransform, SoftplusTransform, StackTransform, StickBreakingTransform, TanhTransform,
                         Transform, identity_transform)
from .constraint_registry import biject_to, transform_to
from .uniform import Uniform
from .von_mises import VonMises

__all__ = ["Bernoulli", "Categorical", "Cauchy", "ContinuousBernoulli", "Distribution", "Exponential",
           "ExponentialFamily", "GeneralizedPareto", "Geometric",
           "Gumbel", "HalfCauchy", "Kumaraswamy",
           "HalfNormal", "Independent", "Laplace", "LogNormal", "LogisticNormal", "MixtureSameFamily",
           "MultivariateNormal", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "VonMises", "Weibull",
           "TransformedDistribution", "Uniform", "constraints", "kl_divergence", "register_kl", "transforms",
           "biject_to", "transform_to",
           # the transforms, also at the top level as torch.distributions has them
           "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CumulativeDistributionTransform",
           "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StackTransform",
           "StickBreakingTransform", "TanhTransform", "Transform", "identity_transform"]
