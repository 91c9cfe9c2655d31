"""HalfCauchy, Pareto and Weibull (torch.distributions'): distributions on a half-line,
each a simpler one pushed through transforms as torch builds it (|x| of a Cauchy; scale
e^x of an Exponential; scale x^(1/k) of a unit Exponential), so that sampling,
reparameterised samples and log-densities come from TransformedDistribution."""

import math

from . import constraints
from .distribution import _lucid, broadcast_all
from .exponential import Exponential
from .more import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform, AffineTransform, ExpTransform, PowerTransform

__all__ = ["HalfCauchy", "Pareto", "Weibull"]

_EULER = 0.57721566490153286060


class HalfCauchy(TransformedDistribution):
    """|X| for X ~ Cauchy(0, scale)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(HalfCauchy, _instance))

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return self.scale.new_full(self._extended_shape(), math.inf)

    @property
    def mode(self):
        return self.scale * 0

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = _lucid().as_tensor(value, dtype=self.base_dist.scale.dtype, device=self.base_dist.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return _lucid().where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class Pareto(TransformedDistribution):
    """scale * e^X for X ~ Exponential(alpha): support [scale, inf)."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        super().__init__(base, [ExpTransform(), AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale, new.alpha = self.scale.expand(batch_shape), self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def support(self):
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)  # (infinite for alpha <= 1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)  # (infinite for alpha <= 2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Weibull(TransformedDistribution):
    """scale * X^(1 / concentration) for X ~ Exponential(1)."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(_lucid().ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal), AffineTransform(loc=0, scale=new.scale)]
        super(Weibull, new).__init__(base, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()

    @property
    def variance(self):
        return self.scale.pow(2) * ((1 + 2 * self.concentration_reciprocal).lgamma().exp()
                                    - (2 * (1 + self.concentration_reciprocal).lgamma()).exp())

    def entropy(self):
        return _EULER * (1 - self.concentration_reciprocal) + (self.scale * self.concentration_reciprocal).log() + 1
