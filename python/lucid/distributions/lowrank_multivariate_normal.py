"""LowRankMultivariateNormal (torch.distributions'): a multivariate normal whose covariance
is W W^T + diag(D), W of shape n x m with m small, computed through the m x m
"capacitance" I + W^T D^-1 W (Woodbury's identity for the Mahalanobis term, the matrix
determinant lemma for the log determinant), so a density costs O(n m^2), not O(n^3).
As torch writes it."""

import math

from .._size import Size
from . import constraints
from .distribution import Distribution, _lucid, _standard_normal, lazy_property
from .multivariate_normal import _mahalanobis

__all__ = ["LowRankMultivariateNormal"]


def _plus_identity(K):
    return K + _lucid().eye(K.shape[-1], dtype=K.dtype, device=K.device)


def _capacitance_tril(W, D):
    """The Cholesky factor of I + W^T D^-1 W."""
    wt_dinv = W.mT / D.unsqueeze(-2)
    return _lucid().linalg.cholesky(_plus_identity(wt_dinv @ W))


def _lowrank_logdet(D, capacitance_tril):
    """log det(W W^T + D) = log det(capacitance) + log det(D)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x = x^T D^-1 x - |C^-1 W^T D^-1 x|^2."""
    wt_dinv_x = ((W.mT / D.unsqueeze(-2)) @ x.unsqueeze(-1)).squeeze(-1)
    return (x.pow(2) / D).sum(-1) - _mahalanobis(capacitance_tril, wt_dinv_x)


def _woodbury_factor(d):
    """C^-1 W^T D^-1 of a low-rank normal (C its capacitance factor): precision =
    D^-1 - A^T A (Woodbury's identity)."""
    W, D = d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag
    return _lucid().linalg.solve_triangular(d._capacitance_tril, W.mT / D.unsqueeze(-2), upper=False)


class LowRankMultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        lucid = _lucid()
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {Size(event_shape)}")
        try:
            loc_, self.cov_factor, diag_ = lucid.broadcast_tensors(loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        self.loc, self.cov_diag = loc_[..., 0], diag_[..., 0]
        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = cov_factor, cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], Size(event_shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape + self.event_shape)
        new.loc, new.cov_diag = self.loc.expand(loc_shape), self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    def _full(self, t, event_dims):
        return t.expand(tuple(self._batch_shape) + tuple(self._event_shape) * event_dims)

    @lazy_property
    def variance(self):
        return self._full(self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag, 1)

    @lazy_property
    def scale_tril(self):
        # D^1/2 chol(I + D^-1/2 W W^T D^-1/2): the factor of the full covariance, n x n
        root = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / root
        return self._full(root * _lucid().linalg.cholesky(_plus_identity(scaled @ scaled.mT)), 2)

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        return self._full(W @ W.mT + _lucid().diag_embed(self._unbroadcasted_cov_diag), 2)

    @lazy_property
    def precision_matrix(self):
        A = _woodbury_factor(self)
        return self._full(_lucid().diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - A.mT @ A, 2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps_w = _standard_normal(tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:]), self.loc)
        eps_d = _standard_normal(shape, self.loc)
        return (self.loc + (self._unbroadcasted_cov_factor @ eps_w.unsqueeze(-1)).squeeze(-1)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        m = _lowrank_mahalanobis(W, D, value - self.loc, self._capacitance_tril)
        log_det = _lowrank_logdet(D, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + m)

    def entropy(self):
        log_det = _lowrank_logdet(self._unbroadcasted_cov_diag, self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h if len(self._batch_shape) == 0 else h.expand(tuple(self._batch_shape))
