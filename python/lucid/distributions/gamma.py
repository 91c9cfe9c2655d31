"""The gamma family (torch.distributions'): Gamma, Chi2, InverseGamma, Dirichlet, Beta,
StudentT, FisherSnedecor and NegativeBinomial, with reparameterised samples where torch
has them (lucid._standard_gamma and the Dirichlet's pathwise gradient,
lucid/_gamma_samplers.py). As torch writes them."""

import math
from numbers import Number

from .._size import Size
from . import constraints
from .binomial import _CountedTrials
from .distribution import Distribution, _Located, _lucid, _standard_normal, broadcast_all, lazy_property
from .exp_family import ExponentialFamily
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["Beta", "Chi2", "Dirichlet", "FisherSnedecor", "Gamma", "InverseGamma", "NegativeBinomial", "StudentT"]


def _tiny(t):
    return _lucid().finfo(t.dtype).tiny


class Gamma(_Located, ExponentialFamily):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0
    _params = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=None):
        _Located.__init__(self, concentration, rate, validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        value = _lucid()._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value.clamp(min=_tiny(value))  # (a rate past the largest float would give 0)

    def log_prob(self, value):
        lucid = _lucid()
        value = lucid.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return lucid.xlogy(c, r) + lucid.xlogy(c - 1, value) - r * value - lucid.lgamma(c)

    def entropy(self):
        lucid = _lucid()
        c = self.concentration
        return c - lucid.log(self.rate) + lucid.lgamma(c) + (1.0 - c) * lucid.digamma(c)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        lucid = _lucid()
        return lucid.lgamma(x + 1) + (x + 1) * lucid.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _lucid().special.gammainc(self.concentration, self.rate * value)


class Chi2(Gamma):
    """Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        Gamma.__init__(self, 0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(Chi2, _instance))

    @property
    def df(self):
        return self.concentration * 2


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(concentration, rate)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-base.rate.new_ones(())), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(InverseGamma, _instance))

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        return _lucid().where(self.concentration > 1, self.rate / (self.concentration - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        c = self.concentration
        return _lucid().where(c > 2, self.rate.square() / ((c - 1).square() * (c - 2)), math.inf)

    def entropy(self):
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()


class Dirichlet(ExponentialFamily):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = concentration.shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape + self.event_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        from .._gamma_samplers import _rsample_dirichlet
        return _rsample_dirichlet(self.concentration.expand(tuple(self._extended_shape(sample_shape))))

    def log_prob(self, value):
        lucid = _lucid()
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return lucid.xlogy(c - 1.0, value).sum(-1) + lucid.lgamma(c.sum(-1)) - lucid.lgamma(c).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        lucid = _lucid()
        less_one = (self.concentration - 1).clamp(min=0.0)
        mode = less_one / less_one.sum(-1, True)
        # (every concentration below 1: the density peaks at a vertex, the largest one's)
        all_below = (self.concentration < 1).all(-1, keepdim=True)
        vertex = lucid.nn.functional.one_hot(mode.argmax(-1), less_one.shape[-1]).to(mode.dtype)
        return lucid.where(all_below, vertex, mode)

    @property
    def variance(self):
        c = self.concentration
        total = c.sum(-1, True)
        return c * (total - c) / (total.pow(2) * (total + 1))

    def entropy(self):
        lucid = _lucid()
        c = self.concentration
        k, total = c.size(-1), c.sum(-1)
        return (lucid.lgamma(c).sum(-1) - lucid.lgamma(total) - (k - total) * lucid.digamma(total)
                - ((c - 1.0) * lucid.digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - _lucid().lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    """Beta(concentration1, concentration0): the first coordinate of a Dirichlet of the two."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        lucid = _lucid()
        if isinstance(concentration1, Number) and isinstance(concentration0, Number):
            both = lucid.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = lucid.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(_lucid().stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        lucid = _lucid()
        return lucid.lgamma(x) + lucid.lgamma(y) - lucid.lgamma(x + y)


class StudentT(Distribution):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df, new.loc, new.scale = (getattr(self, n).expand(tuple(batch_shape)) for n in ("df", "loc", "scale"))
        new._chi2 = self._chi2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return _lucid().where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        lucid = _lucid()
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        return lucid.where(df > 2, finite, lucid.where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, self.df)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * _lucid().rsqrt(z / self.df))

    def log_prob(self, value):
        lucid = _lucid()
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi) + lucid.lgamma(0.5 * df)
             - lucid.lgamma(0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * lucid.log1p(y ** 2.0 / df) - z

    def entropy(self):
        lucid = _lucid()
        df = self.df
        lbeta = lucid.lgamma(0.5 * df) + math.lgamma(0.5) - lucid.lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (lucid.digamma(0.5 * (df + 1)) - lucid.digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)


class FisherSnedecor(Distribution):
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        given = (df1, df2)
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        batch = Size() if all(isinstance(v, Number) for v in given) else self.df1.shape
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = Size(batch_shape)
        new.df1, new.df2 = self.df1.expand(tuple(batch_shape)), self.df2.expand(tuple(batch_shape))
        new._gamma1, new._gamma2 = self._gamma1.expand(batch_shape), self._gamma2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = _lucid().where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return _lucid().where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self):
        df2 = _lucid().where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = _tiny(x2)
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        lucid = _lucid()
        if self._validate_args:
            self._validate_sample(value)
        half1, half2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        t1 = (half1 + half2).lgamma() - half1.lgamma() - half2.lgamma()
        t2 = half1 * ratio.log() + (half1 - 1) * lucid.log(value)
        t3 = (half1 + half2) * lucid.log1p(ratio * value)
        return t1 + t2 - t3


class NegativeBinomial(_CountedTrials):
    """The number of successes before total_count failures, each trial a success with
    probability probs: sampled as Poisson(Gamma(total_count, exp(-logits)))."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / _lucid().sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(self.total_count, _lucid().exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=Size()):
        lucid = _lucid()
        with lucid.no_grad():
            return lucid.poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value):
        lucid = _lucid()
        if self._validate_args:
            self._validate_sample(value)
        F = lucid.nn.functional
        total = self.total_count
        log_unnormalized = total * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = -lucid.lgamma(total + value) + lucid.lgamma(1.0 + value) + lucid.lgamma(total)
        log_normalization = log_normalization.masked_fill(total + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
