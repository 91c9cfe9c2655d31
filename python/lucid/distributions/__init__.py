"""lucid.distributions: probability distributions with sampling and log-densities
(torch.distributions' counterpart): the Distribution base with torch's validation, Normal,
Bernoulli, ContinuousBernoulli, Uniform, Categorical, OneHotCategorical, Exponential,
Laplace, Cauchy, Gumbel, HalfNormal, HalfCauchy, Pareto, Weibull, GeneralizedPareto, the
gamma family (Gamma, Chi2, InverseGamma, Beta, Dirichlet, StudentT, FisherSnedecor,
NegativeBinomial), Binomial, Multinomial, Wishart, LKJCholesky,
Kumaraswamy, the relaxed (Gumbel-softmax) ones, Geometric, Poisson, MultivariateNormal, LowRankMultivariateNormal,
MixtureSameFamily, LogisticNormal, VonMises, Independent, TransformedDistribution (with
the transforms, here and in lucid.distributions.transforms, and biject_to /
transform_to), LogNormal and the ExponentialFamily base, kl_divergence and the
constraints."""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .binomial import Binomial, Multinomial
from .categorical import Categorical
from .distribution import Distribution
from .exp_family import ContinuousBernoulli, ExponentialFamily
from .exponential import Exponential, Laplace, Poisson
from .gamma import Beta, Chi2, Dirichlet, FisherSnedecor, Gamma, InverseGamma, NegativeBinomial, StudentT
from .half_line import GeneralizedPareto, HalfCauchy, Pareto, Weibull
from .kumaraswamy import Kumaraswamy
from .lkj_cholesky import LKJCholesky
from .independent import Independent
from .kl import kl_divergence, register_kl
from . import kl_more  # noqa: F401,E402  (registers the rest of torch's KL pairs)
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture import LogisticNormal, MixtureSameFamily
from .more import Cauchy, Geometric, Gumbel, HalfNormal, OneHotCategorical
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .relaxed import (ExpRelaxedCategorical, LogitRelaxedBernoulli, OneHotCategoricalStraightThrough, RelaxedBernoulli,
                      RelaxedOneHotCategorical)
from .transformed_distribution import LogNormal, TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform, CorrCholeskyTransform,
                         CumulativeDistributionTransform, ExpTransform, IndependentTransform, LowerCholeskyTransform,
                         PositiveDefiniteTransform, PowerTransform, ReshapeTransform, SigmoidTransform,
                         SoftmaxTransform, SoftplusTransform, StackTransform, StickBreakingTransform, TanhTransform,
                         Transform, identity_transform)
from .constraint_registry import biject_to, transform_to
from .uniform import Uniform
from .von_mises import VonMises
from .wishart import Wishart

__all__ = ["Bernoulli", "Beta", "Binomial", "Multinomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet", "Distribution",
           "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric",
           "InverseGamma", "LKJCholesky", "LowRankMultivariateNormal", "Wishart", "NegativeBinomial", "StudentT",
           "Gumbel", "HalfCauchy", "Kumaraswamy",
           "HalfNormal", "Independent", "Laplace", "LogNormal", "LogisticNormal", "MixtureSameFamily",
           "MultivariateNormal", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "VonMises", "Weibull",
           "TransformedDistribution", "Uniform", "constraints", "kl_divergence", "register_kl", "transforms",
           "biject_to", "transform_to",
           # the transforms, also at the top level as torch.distributions has them
           "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform",
           "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StackTransform",
           "StickBreakingTransform", "TanhTransform", "Transform", "identity_transform"]


def _torch_module_aliases():
    """torch.distributions keeps each distribution in a module of its own
    (torch.distributions.cauchy, ...); lucid groups some. These aliases make
    `from lucid.distributions.cauchy import Cauchy` (and lucid.distributions.cauchy.Cauchy)
    run as the torch spelling does."""
    import sys
    import types
    from . import distribution as _distribution
    modules = {
        "beta": ["Beta"], "cauchy": ["Cauchy"], "chi2": ["Chi2"], "continuous_bernoulli": ["ContinuousBernoulli"],
        "dirichlet": ["Dirichlet"], "fishersnedecor": ["FisherSnedecor"], "generalized_pareto": ["GeneralizedPareto"],
        "geometric": ["Geometric"], "gumbel": ["Gumbel"], "half_cauchy": ["HalfCauchy"], "half_normal": ["HalfNormal"],
        "inverse_gamma": ["InverseGamma"], "laplace": ["Laplace"], "log_normal": ["LogNormal"],
        "logistic_normal": ["LogisticNormal"], "mixture_same_family": ["MixtureSameFamily"],
        "multinomial": ["Multinomial"], "negative_binomial": ["NegativeBinomial"],
        "one_hot_categorical": ["OneHotCategorical", "OneHotCategoricalStraightThrough"], "pareto": ["Pareto"],
        "poisson": ["Poisson"], "relaxed_bernoulli": ["LogitRelaxedBernoulli", "RelaxedBernoulli"],
        "relaxed_categorical": ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"], "studentT": ["StudentT"],
        "weibull": ["Weibull"]}
    namespace = globals()
    for name, members in modules.items():
        module = types.ModuleType(f"{__name__}.{name}")
        for member in members:
            setattr(module, member, namespace[member])
        module.__all__ = members
        sys.modules[module.__name__] = namespace[name] = module
    utils = types.ModuleType(f"{__name__}.utils")
    for member in ("broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits",
                   "tril_matrix_to_vec", "vec_to_tril_matrix"):
        setattr(utils, member, getattr(_distribution, member))
    utils.euler_constant = 0.57721566490153286060  # (Euler-Mascheroni, as torch's utils names it)
    sys.modules[utils.__name__] = namespace["utils"] = utils


_torch_module_aliases()
