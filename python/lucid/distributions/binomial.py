"""Binomial and Multinomial (torch.distributions'): Binomial samples from the engine's
sampler (lucid.binomial: inversion, or BTRS for many trials), Multinomial's as counts of
categorical draws. As torch writes them."""

import math

from .._size import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution, _BinaryProbs, _lucid, broadcast_all

__all__ = ["Binomial", "Multinomial"]


def _clamp_by_zero(x):
    """max(x, 0) with the gradient 1/2 at 0, as torch's Binomial takes it."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class _CountedTrials(_BinaryProbs, Distribution):
    """A count of trials and the probs or logits of each (Binomial's, NegativeBinomial's),
    broadcast together: the batch shape is theirs."""

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, given = ("probs", probs) if probs is not None else ("logits", logits)
        count, param = broadcast_all(total_count, given)
        setattr(self, name, param)
        self.total_count, self._param = count.type_as(param), param
        super().__init__(param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(self._library_class(), _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(tuple(batch_shape))
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(tuple(batch_shape)))
                new._param = getattr(new, name)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._param.shape


class Binomial(_CountedTrials):
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        super().__init__(total_count, probs, logits, validate_args=validate_args)

    @property
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        lucid = _lucid()
        shape = tuple(self._extended_shape(sample_shape))
        with lucid.no_grad():
            return lucid.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        lucid = _lucid()
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorials = lucid.lgamma(value + 1) + lucid.lgamma(n - value + 1)
        # k log p + (n - k) log(1 - p) = k logit - n max(logit, 0) - n log1p(exp(-|logit|))
        normalize = n * _clamp_by_zero(logits) + n * lucid.log1p(lucid.exp(-lucid.abs(logits))) - lucid.lgamma(n + 1)
        return value * logits - log_factorials - normalize

    def _homogeneous_count(self, what):
        count = int(self.total_count.max())
        if not bool(self.total_count.min() == count):
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return count

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        count = self._homogeneous_count("enumerate_support")
        values = _lucid().arange(1 + count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class Multinomial(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        lucid = _lucid()
        sample_shape = Size(sample_shape)
        draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        draws = draws.permute(*range(1, draws.dim()), 0)  # (sample, batch, total_count)
        counts = lucid.zeros(tuple(self._extended_shape(sample_shape)), dtype=draws.dtype, device=draws.device)
        counts.scatter_add_(-1, draws, lucid.ones_like(draws))
        return counts.type_as(self.probs)

    def entropy(self):
        lucid = _lucid()
        n = float(self.total_count)
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        return term1 + (binomial_probs * lucid.lgamma(support + 1)).sum([0, -1])

    def log_prob(self, value):
        lucid = _lucid()
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = lucid.lgamma(value.sum(-1) + 1)
        log_factorial_xs = lucid.lgamma(value + 1).sum(-1)
        # (a count of 0 on an impossible category adds nothing, not 0 * -inf)
        logits = lucid.where((value == 0) & (logits == -math.inf), 0.0, logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
