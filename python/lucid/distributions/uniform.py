"""Uniform (torch.distributions.Uniform) on [low, high): reparameterised samples."""

from .._size import Size
from . import constraints
from .distribution import _Located, _lucid


class Uniform(_Located):
    has_rsample = True
    _params = ("low", "high")

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        super().__init__(low, high, validate_args=validate_args)

    @property
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.high * float("nan")

    @property
    def stddev(self):
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        rand = _lucid().rand(tuple(shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = (self.low <= value).to(self.low.dtype)
        ub = (self.high > value).to(self.low.dtype)
        return (lb * ub).log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()
