"""Wishart (torch.distributions'): the law of sums of df outer products of normal vectors
with covariance Sigma, given by Sigma, its inverse or its Cholesky factor L (all work is
done with L). Samples by Bartlett's decomposition: L A A^T L^T with A lower triangular,
chi-distributed on the diagonal (sqrt of Chi2(df - i)) and standard normal below it, so
they are reparameterised through the gamma sampler. As torch writes it, but for one
fix: torch's rsample takes every valid sample for a singular one and redraws it (with a
warning); lucid redraws only the samples that are not positive definite."""

import math
import warnings
from numbers import Number

from .._size import Size
from . import constraints
from .distribution import Distribution, _lucid, lazy_property
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _precision_to_scale_tril

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma: sum over i < p of digamma(x - i / 2)."""
    lucid = _lucid()
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = lucid.arange(p, dtype=x.dtype, device=x.device).div(2)
    return lucid.digamma(x.unsqueeze(-1) - halves.expand(tuple(x.shape) + (-1,))).sum(-1)


class Wishart(ExponentialFamily):
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite, "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        lucid = _lucid()
        given = [p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = Size(param.shape[:-2])
            self.df = lucid.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = Size(lucid.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(tuple(batch_shape))
        event_shape = Size(param.shape[-2:])
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        full = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(full)
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(full)
            self._unbroadcasted_scale_tril = lucid.linalg.cholesky(covariance_matrix)
        else:
            self.precision_matrix = param.expand(full)
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < ndim.",
                          stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        self._dist_chi2 = self._bartlett_chi2(batch_shape)

    def _bartlett_chi2(self, batch_shape):
        """Chi2(df - i) for the diagonal's entry i."""
        lucid = _lucid()
        tril = self._unbroadcasted_scale_tril
        steps = lucid.arange(self._event_shape[-1], dtype=tril.dtype, device=tril.device)
        return Chi2(self.df.unsqueeze(-1) - steps.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(tuple(batch_shape))
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    def _full(self, t):
        return t.expand(tuple(self._batch_shape + self._event_shape))

    @lazy_property
    def scale_tril(self):
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return self._full(tril @ tril.mT)

    @lazy_property
    def precision_matrix(self):
        lucid = _lucid()
        tril = self._unbroadcasted_scale_tril
        identity = lucid.eye(self._event_shape[-1], device=tril.device, dtype=tril.dtype)
        return self._full(lucid.cholesky_solve(identity, tril))

    def _per_batch(self, t):
        return t.view(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._per_batch(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = _lucid().where(factor <= 0, math.nan, factor)
        return self._per_batch(factor) * self.covariance_matrix

    @property
    def variance(self):
        cov = self.covariance_matrix
        diag = cov.diagonal(dim1=-2, dim2=-1)
        return self._per_batch(self.df) * (cov.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=Size()):
        lucid = _lucid()
        p = self._event_shape[-1]
        root = self._dist_chi2.rsample(sample_shape).sqrt()
        noise = root.clamp(min=lucid.finfo(root.dtype).eps).diag_embed(dim1=-2, dim2=-1)
        i, j = lucid.tril_indices(p, p, offset=-1)
        noise[..., i, j] = lucid.randn(tuple(Size(sample_shape) + self._batch_shape) + (p * (p - 1) // 2,),
                                       dtype=noise.dtype, device=noise.device)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.mT

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """Bartlett samples; a sample that is not positive definite (possible for
        ndim - 1 < df < ndim) is drawn again up to max_try_correction (10) times, and may
        stay singular (its log_prob is then -inf)."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self._singular(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample = _lucid().where(self._per_batch(singular), self._bartlett_sampling(sample_shape), sample)
                singular = self._singular(sample)
                if not bool(singular.any()):
                    break
        return sample

    def _singular(self, sample):
        return ~self.support.check(sample)

    def log_prob(self, value):
        lucid = _lucid()
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        return (-nu * (p * _LOG_2 / 2 + tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - lucid.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * lucid.linalg.slogdet(value).logabsdet
                - lucid.cholesky_solve(value, tril).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        lucid = _lucid()
        nu, p = self.df, self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _LOG_2 / 2 + tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + lucid.mvlgamma(nu / 2, p=p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        return -self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, x, y):
        lucid = _lucid()
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-lucid.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + lucid.mvlgamma(y + (p + 1) / 2, p=p))
