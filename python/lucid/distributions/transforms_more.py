"""More of torch.distributions.transforms: softplus, reshape, independent, softmax,
stick-breaking (the simplex's bijection), lower-Cholesky and positive-definite maps, a
distribution's cdf as a transform, and transforms applied slice by slice (cat, stack).
Re-exported by lucid.distributions.transforms."""

from . import constraints
import math

from .distribution import _lucid, tril_matrix_to_vec, vec_to_tril_matrix
from .transforms import Transform, _sum_rightmost

__all__ = ["CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "ReshapeTransform", "SoftmaxTransform", "SoftplusTransform", "StackTransform",
           "StickBreakingTransform"]


def _softplus(x):
    return _lucid().nn.functional.softplus(x)


def _clipped_sigmoid(x):
    finfo = _lucid().finfo(x.dtype)
    return x.sigmoid().clamp(min=finfo.tiny, max=1.0 - finfo.eps)


def _vector_shape(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")
    return shape


class SoftplusTransform(Transform):
    """y = log(1 + e^x)."""
    domain, codomain, bijective, sign = constraints.real, constraints.positive, True, +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    def _call(self, x):
        return _softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x)


class ReshapeTransform(Transform):
    """The rightmost dims `in_shape` reshaped to `out_shape` (as many elements)."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = _lucid().Size(in_shape), _lucid().Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ReshapeTransform(self.in_shape, self.out_shape,
                                                                            cache_size=cache_size)

    def _call(self, x):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch + tuple(self.out_shape))

    def _inverse(self, y):
        batch = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]))

    def _reshaped(self, shape, have, want):
        if len(shape) < len(have):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(have)
        if tuple(shape[cut:]) != tuple(have):
            raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got {tuple(have)}")
        return tuple(shape[:cut]) + tuple(want)

    def forward_shape(self, shape):
        return self._reshaped(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._reshaped(shape, self.out_shape, self.in_shape)


class IndependentTransform(Transform):
    """`base_transform` over `reinterpreted_batch_ndims` more rightmost dims, its
    log-det-Jacobian summed over them."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else IndependentTransform(
            self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class SoftmaxTransform(Transform):
    """The last dim's softmax (not bijective: its inverse is one of the logits that map there)."""
    domain, codomain = constraints.real_vector, constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        return _vector_shape(shape)

    def inverse_shape(self, shape):
        return _vector_shape(shape)


class StickBreakingTransform(Transform):
    """R^K onto the (K + 1)-simplex by breaking a stick: bijective, with a log-det-Jacobian
    (torch's: the offset keeps zero at the simplex's centre)."""
    domain, codomain, bijective = constraints.real_vector, constraints.simplex, True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    def _call(self, x):
        pad = _lucid().nn.functional.pad
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        return pad(z, [0, 1], value=1) * pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = y.shape[-1] - y.new_ones(y_crop.shape[-1]).cumsum(-1)
        sf = (1 - y_crop.cumsum(-1)).clamp(min=_lucid().finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        x = x - offset.log()
        return (-x + _lucid().nn.functional.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        shape = _vector_shape(shape)
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        shape = _vector_shape(shape)
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """A square matrix onto a lower-triangular one with a positive diagonal (the strict
    lower triangle kept, the diagonal exponentiated)."""
    domain, codomain = constraints.independent(constraints.real, 2), constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class CorrCholeskyTransform(Transform):
    """A vector of D (D - 1) / 2 reals onto the Cholesky factor of a D x D correlation
    matrix: tanh into (-1, 1), then stick-breaking on the squares row by row, so each row
    has norm 1 (Stan's parameterisation, as torch's)."""
    domain, codomain, bijective = constraints.real_vector, constraints.corr_cholesky, True

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    def _call(self, x):
        lucid = _lucid()
        eps = lucid.finfo(x.dtype).eps
        r = vec_to_tril_matrix(lucid.tanh(x).clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # y = r * sqrt(prod of (1 - r^2) to its left): the remaining length of each row
        z1m_cumprod_sqrt = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + lucid.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * lucid.nn.functional.pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        lucid = _lucid()
        y_cumsum = 1 - lucid.cumsum(y * y, dim=-1)
        shifted = lucid.nn.functional.pad(y_cumsum[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(shifted, diag=-1).sqrt()
        return (t.log1p() - t.neg().log1p()) / 2  # (atanh)

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        # (of x and the strict lower triangle of y: the spaces differ in dimension)
        y1m_cumsum = 1 - (y * y).cumsum(dim=-1)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + _softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattend lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)


class PositiveDefiniteTransform(Transform):
    """A square matrix onto a positive-definite one: L L^T of its lower-Cholesky map."""
    domain, codomain = constraints.independent(constraints.real, 2), constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(_lucid().linalg.cholesky(y))


class CumulativeDistributionTransform(Transform):
    """A distribution's cdf, from its support onto [0, 1]; the log-det-Jacobian is its log-density."""
    bijective, codomain, sign = True, constraints.unit_interval, +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CumulativeDistributionTransform(self.distribution,
                                                                                           cache_size=cache_size)


def _check_dim(t, dim, size, what):
    if not -t.dim() <= dim < t.dim():
        raise ValueError(f"dim {dim} out of range for {what} with {t.dim()} dimensions")
    if t.shape[dim] != size:
        raise ValueError(f"{what}.size({dim}) = {t.shape[dim]} must equal {size}")


class CatTransform(Transform):
    """tseq[i] over the i-th slice (lengths[i] long, 1 by default) of dim `dim`, the
    results concatenated again."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise ValueError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CatTransform(self.transforms, self.dim, self.lengths,
                                                                        cache_size)

    def _slices(self, t):
        start = 0
        for length in self.lengths:
            yield t.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        _check_dim(x, self.dim, self.length, "x")
        return _lucid().cat([t(s) for t, s in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        _check_dim(y, self.dim, self.length, "y")
        return _lucid().cat([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_dim(x, self.dim, self.length, "x")
        _check_dim(y, self.dim, self.length, "y")
        terms = []
        for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y)):
            term = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        if dim < 0:
            return _lucid().cat(terms, dim)
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """tseq[i] over the i-th index of dim `dim`, the results stacked again."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms, self.dim = list(tseq), dim

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z):
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _call(self, x):
        _check_dim(x, self.dim, len(self.transforms), "x")
        return _lucid().stack([t(s) for s, t in zip(self._slices(x), self.transforms)], self.dim)

    def _inverse(self, y):
        _check_dim(y, self.dim, len(self.transforms), "y")
        return _lucid().stack([t.inv(s) for s, t in zip(self._slices(y), self.transforms)], self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_dim(x, self.dim, len(self.transforms), "x")
        _check_dim(y, self.dim, len(self.transforms), "y")
        return _lucid().stack([t.log_abs_det_jacobian(xs, ys)
                               for xs, ys, t in zip(self._slices(x), self._slices(y), self.transforms)], self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
