"""Invertible transforms with log-det-Jacobians (torch.distributions.transforms), for
TransformedDistribution: exp, affine, sigmoid, tanh (the squashing of SAC's policies),
power, their inverses (`t.inv`) and compositions. An optional cache of
the last (x, y) pair makes inverting a sample free, as torch's cache_size=1 does."""

import math
from numbers import Number

from . import constraints
from .distribution import _lucid


def _sum_rightmost(value, dim):
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1) if dim > 0 else value


class Transform:
    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = (None, None)
        self._inv = None

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self):
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = (x, y)
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = (x, y)
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __repr__(self):
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    def __repr__(self):
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """parts applied in order; an empty composition is the identity."""

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        if self._inv is None:
            self._inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv._inv = self
        return self._inv

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return _lucid().zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(a, b), event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        result = terms[0]
        for term in terms[1:]:
            result = result + term
        return result

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        return type(self).__name__ + "(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


class ExpTransform(Transform):
    domain, codomain, bijective, sign = constraints.real, constraints.positive, True, +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class SigmoidTransform(Transform):
    domain, codomain, bijective, sign = constraints.real, constraints.unit_interval, True, +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    def _call(self, x):
        finfo = _lucid().finfo(x.dtype)
        return x.sigmoid().clamp(min=finfo.tiny, max=1.0 - finfo.eps)

    def _inverse(self, y):
        finfo = _lucid().finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        softplus = _lucid().nn.functional.softplus
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    domain, codomain, bijective, sign = constraints.real, constraints.interval(-1.0, 1.0), True, +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) written without tanh, stable for large |x| (torch's)
        return 2.0 * (math.log(2.0) - x - _lucid().nn.functional.softplus(-2.0 * x))


class AffineTransform(Transform):
    """y = loc + scale x, over event_dim rightmost dims."""
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real,
                                                                                     self._event_dim)

    codomain = domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, Number) and isinstance(b, Number):
                if a != b:
                    return False
            elif not bool((a == b).all()):
                return False
        return True

    @property
    def sign(self):
        if isinstance(self.scale, Number):
            return 1 if self.scale > 0 else -1 if self.scale < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, Number):
            result = x.new_full(shape, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self._event_dim:
            result = result.reshape(tuple(result.shape[:result.dim() - self._event_dim]) + (-1,)).sum(-1)
            shape = shape[:len(shape) - self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return tuple(_lucid().broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                               tuple(getattr(self.scale, "shape", ()))))

    inverse_shape = forward_shape


class PowerTransform(Transform):
    """y = x^exponent on the positive reals."""
    domain, codomain, bijective = constraints.positive, constraints.positive, True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.exponent = exponent

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign() if not isinstance(self.exponent, Number) else (1 if self.exponent > 0 else -1)

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool((_as_tensor(self.exponent) == _as_tensor(
            other.exponent)).all())

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()


def _as_tensor(v):
    return v if not isinstance(v, Number) else _lucid().tensor(float(v))


class AbsTransform(Transform):
    """y = |x| (not bijective: its inverse takes the non-negative root)."""
    domain, codomain = constraints.real, constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


identity_transform = ComposeTransform([])

from .transforms_more import (CatTransform, CorrCholeskyTransform, CumulativeDistributionTransform,  # noqa: E402
                              IndependentTransform,
                              LowerCholeskyTransform, PositiveDefiniteTransform, ReshapeTransform, SoftmaxTransform,
                              SoftplusTransform, StackTransform, StickBreakingTransform)

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform",
           "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StackTransform",
           "StickBreakingTransform", "TanhTransform", "Transform", "identity_transform"]
