"""Categorical, as torch.distributions.Categorical: a distribution over the indices
0..K-1 of the last dimension of `probs` (non-negative weights, normalised here) or `logits`
(unnormalised log-probabilities); the dimensions before it are the batch shape.

As torch's, arguments and log_prob's values are validated by default (validate_args=None),
with torch's ValueError messages; `probs` and `logits` are each derived from the other when
first read, so gradients flow from log_prob and entropy back to whichever was given.
"""

import math

from .. import _dtype as D
from .._creation import arange
from .._multinomial import multinomial
from .._size import Size
from .._tensor import Tensor
from .distribution import Distribution


def _shape_str(t):
    return str(tuple(t.shape))


class Categorical(Distribution):
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given, name = (probs, "probs") if probs is not None else (logits, "logits")
        if not isinstance(given, Tensor):
            raise TypeError(f"Categorical(): `{name}` must be a Tensor, not {type(given).__name__}")
        if given.dim() < 1:
            raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
        if not given.dtype.is_floating_point:
            raise TypeError(f"Categorical(): `{name}` must have a floating-point dtype, not {given.dtype}")
        if probs is not None:
            self._probs, self._logits = probs / probs.sum(-1, keepdim=True), None
        else:
            self._probs, self._logits = None, logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param_name = name
        self._param = self._probs if probs is not None else self._logits
        self._num_events = self._param.shape[-1]
        self._batch_shape = Size(self._param.shape[:-1])
        self._validate_args = True if validate_args is None else bool(validate_args)
        if self._validate_args:
            self._validate_param()

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        param_shape = tuple(batch_shape) + (self._num_events,)
        new._probs = None if self._probs is None else self._probs.expand(param_shape)
        new._logits = None if self._logits is None else self._logits.expand(param_shape)
        new._param_name = self._param_name
        new._param = new._probs if self._param_name == "probs" else new._logits
        new._num_events, new._batch_shape = self._num_events, batch_shape
        new._validate_args = self._validate_args
        return new

    # -- parameters ---------------------------------------------------------------------
    @property
    def probs(self):
        if self._probs is None:
            self._probs = self._logits.softmax(-1)
        return self._probs

    @property
    def logits(self):
        if self._logits is None:
            eps = D.finfo(self._probs.dtype).eps  # torch's clamp_probs: log(0) would be -inf
            self._logits = self._probs.clamp(min=eps, max=1 - eps).log()
        return self._logits

    @property
    def param_shape(self):
        return Size(self._param.shape)

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return Size(())

    @property
    def mean(self):
        return self.probs.new_full(self._batch_shape, math.nan)

    @property
    def variance(self):
        return self.probs.new_full(self._batch_shape, math.nan)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    # -- sampling and densities ---------------------------------------------------------
    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        count = math.prod(sample_shape)
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        if count == 0:
            return probs_2d.new_empty(tuple(sample_shape) + tuple(self._batch_shape)).to(D.int64)
        samples_2d = multinomial(probs_2d, count, True).T
        return samples_2d.reshape(tuple(sample_shape) + tuple(self._batch_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = _broadcast(value.shape, self.logits.shape)
        value = value.expand(*shape[:-1], 1)
        return self.logits.expand(*shape).gather(-1, value).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=D.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = arange(self._num_events, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    # -- validation, as torch's Distribution ---------------------------------------------
    def _support_repr(self):
        return f"IntegerInterval(lower_bound=0, upper_bound={self._num_events - 1})"

    def _validate_param(self):
        value = self._param
        if self._param_name == "probs":
            ok = (value >= 0).all(dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)
            constraint = "Simplex()"
        else:
            ok = (value == value).all(dim=-1)
            constraint = "IndependentConstraint(Real(), 1)"
        if not ok.all().item():
            raise ValueError(f"Expected parameter {self._param_name} (Tensor of shape {_shape_str(value)}) of "
                             f"distribution {self!r} to satisfy the constraint {constraint}, but found "
                             f"invalid values:\n{value}")

    def _validate_sample(self, value):
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        expected = tuple(self._batch_shape)
        for i, j in zip(reversed(tuple(value.shape)), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{Size(value.shape)} vs {Size(expected)}.")
        ok = (value % 1 == 0) & (value >= 0) & (value <= self._num_events - 1)
        if not ok.all().item():
            raise ValueError(f"Expected value argument (Tensor of shape {_shape_str(value)}) to be within the "
                             f"support ({self._support_repr()}) of the distribution {self!r}, but found "
                             f"invalid values:\n{value}")

    def __repr__(self):
        # as torch's: the parameters computed so far (given, or derived when first read)
        shown = [(n, t) for n, t in (("probs", self._probs), ("logits", self._logits)) if t is not None]
        return "Categorical(" + ", ".join(f"{n}: {Size(t.shape)}" for n, t in shown) + ")"


def _broadcast(a, b):
    """The broadcast of shapes a and b (both are known to be compatible by then)."""
    a, b = tuple(a), tuple(b)
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    return tuple(y if x == 1 else x for x, y in zip(a, b))
