"""Distribution, the base of lucid.distributions (torch.distributions.Distribution): batch
and event shapes, argument and sample validation with torch's messages (on by default,
Distribution.set_default_validate_args), sample through rsample without gradient, and the
derived statistics; plus the helpers the distributions share (broadcast_all, the
probs/logits conversions)."""

import functools
import math
from numbers import Number

from .. import _dtype as D
from .._size import Size
from .._tensor import Tensor
from . import constraints


def _lucid():
    import lucid
    return lucid


class Distribution:
    has_rsample = False
    has_enumerate_support = False
    _validate_args = True

    @staticmethod
    def set_default_validate_args(value):
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                    continue  # (a parameter derived lazily from the one given: probs from logits)
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                     f"{constraint!r}, but found invalid values:\n{value}")

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self)} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self)} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        with _lucid().no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        raise NotImplementedError

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()):
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _library_class(self):
        """The nearest public class of lucid.distributions' own in self's MRO: the class
        whose expand a shared base implements (torch's classes each name themselves), so a
        user subclass with its own __init__ and no expand gets torch's error."""
        for c in type(self).__mro__:
            if c.__module__.startswith("lucid.distributions") and not c.__name__.startswith("_"):
                return c
        return type(self)

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def _validate_sample(self, value):
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape, event = tuple(value.shape), tuple(self._event_shape)
        if shape[len(shape) - len(event):] != event:
            raise ValueError(f"The right-most size of value must match event_shape: {Size(shape)} vs "
                             f"{Size(event)}.")
        expected = tuple(self._batch_shape) + event
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {Size(shape)} vs "
                                 f"{Size(expected)}.")
        support = self.support
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, but found invalid "
                             f"values:\n{value}")

    def __repr__(self):
        shown = [k for k in self.arg_constraints if k in self.__dict__]
        parts = [f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
                 for p in shown]
        return type(self).__name__ + "(" + ", ".join(parts) + ")"


class lazy_property:
    """A parameter derived from another when first read, then kept (Bernoulli's probs from
    its logits); assigning it in __init__ takes precedence, as for a plain attribute."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self.fn(instance)
        instance.__dict__[self.fn.__name__] = value
        return value


def _batch_of(params, tensors):
    return Size() if all(isinstance(p, Number) for p in params) else tensors[0].shape


class _Located(Distribution):
    """A distribution of broadcast parameters named by _params (each an attribute), numbers
    or tensors; its batch shape is theirs (none when all are numbers), and expand expands
    each."""
    _params = ()

    def __init__(self, *values, validate_args=None):
        tensors = broadcast_all(*values)
        for name, t in zip(self._params, tensors):
            setattr(self, name, t)
        super().__init__(_batch_of(values, tensors), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(self._library_class(), _instance)
        batch_shape = Size(batch_shape)
        for name in self._params:
            setattr(new, name, getattr(self, name).expand(batch_shape))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new


class _LocScale(_Located):
    """A location-scale family on the real line (Normal, Laplace, Cauchy): loc real, scale
    positive, reparameterised samples; its mode is loc."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(loc, scale, validate_args=validate_args)

    @property
    def mode(self):
        return self.loc


class _BinaryProbs:
    """The probs and logits of a binary event (Bernoulli's, Geometric's): each derived from
    the other when first read."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)


def _expand_probs_or_logits(source, new, batch_shape):
    """new's probs and logits: source's (those it has computed so far) expanded to
    batch_shape, the one it was given as new's _param (the binary relaxed and continuous
    Bernoullis' expand)."""
    for name in ("probs", "logits"):
        if name in source.__dict__:
            setattr(new, name, getattr(source, name).expand(tuple(batch_shape)))
            new._param = getattr(new, name)


def broadcast_all(*values):
    """The values as tensors of one broadcast shape: numbers become tensors of the first
    tensor's dtype and device (the default float dtype when there is none)."""
    lucid = _lucid()
    tensors = [v for v in values if isinstance(v, Tensor)]
    for v in values:
        if not isinstance(v, (Tensor, int, float)):
            raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                             "implementing __torch_function__.")
    like = tensors[0] if tensors else None
    dtype = like.dtype if like is not None else lucid.get_default_dtype()
    device = like.device if like is not None else None
    as_tensors = [v if isinstance(v, Tensor) else lucid.tensor(float(v), dtype=dtype, device=device) for v in values]
    return lucid.broadcast_tensors(*as_tensors)


def clamp_probs(probs):
    eps = D.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def probs_to_logits(probs, is_binary=False):
    ps = clamp_probs(probs)
    return ps.log() - (-ps).log1p() if is_binary else ps.log()


def _tril_mask(n, diag, device):
    arange = _lucid().arange(n, device=device)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The entries of mat's lower triangle (below diagonal `diag`), row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """tril_matrix_to_vec's inverse: the D x D matrix whose lower triangle (below diagonal
    `diag`) holds vec, zeros elsewhere."""
    # D: the positive root of D^2 + (1 + 2 diag) D - |diag| (diag + 1) - 2 len(vec) = 0
    b = 1 + 2 * diag
    n = (-b + (b ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > _lucid().finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as the lower "
                         "triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat


def _standard_normal(shape, like):
    return _lucid().randn(tuple(shape), dtype=like.dtype, device=like.device)


_LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))
