"""Normal (torch.distributions.Normal): loc and scale, reparameterised samples."""

import math

from .._size import Size
from . import constraints
from .distribution import _LOG_SQRT_2PI, _Located, _lucid, _standard_normal


class Normal(_Located):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(loc, scale, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale.pow(2)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with _lucid().no_grad():
            return _lucid().normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=Size()):
        eps = _standard_normal(self._extended_shape(sample_shape), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -((value - self.loc) ** 2) / (2 * self.scale**2) - self.scale.log() - _LOG_SQRT_2PI

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)).erf())

    def icdf(self, value):
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
