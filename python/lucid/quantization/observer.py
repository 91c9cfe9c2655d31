"""Observers: modules that watch tensors during calibration and turn what they saw into
(scale, zero_point). forward records statistics and returns its input unchanged.

Statistics live in buffers so they travel with state_dict and .to(device). The running
min/max buffers start at (+inf, -inf); per-channel observers learn the channel count from
the first batch, so their buffers change shape then (and a checkpoint of a calibrated
observer loads into a fresh one).
"""

import functools
import math

import lucid
import lucid.nn as nn

from ._qparams import calculate_qparams
from ._qscheme import (check_qdtype, check_qscheme, per_channel_symmetric, per_tensor_affine,
                       qint8, quint8)

__all__ = ["ObserverBase", "MinMaxObserver", "MovingAverageMinMaxObserver", "PerChannelMinMaxObserver",
           "MovingAveragePerChannelMinMaxObserver", "HistogramObserver", "FixedQParamsObserver",
           "PlaceholderObserver", "NoopObserver"]


class ObserverBase(nn.Module):
    """Base of all observers: stores qscheme / qdtype / ch_axis / eps; subclasses fill in
    forward (collect) and calculate_qparams (reduce)."""

    def __init__(self, qscheme, qdtype, ch_axis=None, eps=1e-8):
        super().__init__()
        name = type(self).__name__
        self.qscheme = check_qscheme(qscheme, name)
        self.qdtype = check_qdtype(qdtype, name)
        if not (isinstance(eps, (int, float)) and eps > 0):
            raise ValueError(f"{name}: eps must be a positive number, got {eps!r}")
        self.ch_axis = ch_axis if qscheme.is_per_channel else None
        self.eps = float(eps)

    def calculate_qparams(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement calculate_qparams")

    def _qparams_after_observing(self):
        return self.calculate_qparams()

    @classmethod
    def with_args(cls, **kwargs):
        """A zero-argument factory building this observer with kwargs (for QConfig)."""
        return functools.partial(cls, **kwargs)

    def _check_observed(self, x):
        if not isinstance(x, lucid.Tensor):
            raise TypeError(f"{type(self).__name__}: expected a Tensor, got {type(x).__name__}")
        if not x.dtype.is_floating_point:
            raise TypeError(f"{type(self).__name__}: can only observe floating-point tensors, got {x.dtype}")
        if x.numel() == 0:
            raise ValueError(f"{type(self).__name__}: cannot observe an empty tensor")

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # A calibrated per-channel observer's buffers are (C,), a fresh one's are scalar:
        # take the saved shape rather than reporting a size mismatch.
        for name, current in list(self._buffers.items()):
            saved = state_dict.get(prefix + name)
            if current is not None and saved is not None and tuple(saved.shape) != tuple(current.shape):
                self._buffers[name] = lucid.empty(tuple(saved.shape), dtype=current.dtype,
                                                  device=current.device)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def _follow_device(self, x):
        """Move the running buffers to the observed tensor's device (a model moved to the
        GPU after prepare() would otherwise mix devices)."""
        for name, buf in list(self._buffers.items()):
            if buf is not None and buf.device != x.device:
                self._buffers[name] = buf.to(x.device)

    def _require_calibrated(self):
        if math.isinf(float(self.min_val.reshape(-1)[0].item())):
            raise RuntimeError(f"{type(self).__name__}.calculate_qparams: no data observed yet; "
                               "run calibration batches through the observer first")

    def extra_repr(self):
        return f"qscheme={self.qscheme!r}, qdtype={self.qdtype!r}"


def _seed_range(module):
    module.register_buffer("min_val", lucid.tensor(float("inf")))
    module.register_buffer("max_val", lucid.tensor(float("-inf")))


class _RangeObserver(ObserverBase):
    """An observer that keeps a running min_val / max_val (per tensor or per channel) and
    derives its qparams from them."""

    def calculate_qparams(self):
        self._require_calibrated()
        return self._qparams_after_observing()

    def _qparams_after_observing(self):
        # FakeQuantize calls this right after forward, when the range is known to be set.
        return calculate_qparams(self.min_val, self.max_val, self.qscheme, self.qdtype, self.eps)

    def reset_min_max_vals(self):
        _seed_range(self)


class MinMaxObserver(_RangeObserver):
    """Per-tensor cumulative min / max."""

    def __init__(self, qscheme=per_tensor_affine, qdtype=quint8, eps=1e-8):
        super().__init__(qscheme, qdtype, None, eps)
        if qscheme.is_per_channel:
            raise ValueError(f"{type(self).__name__} is per-tensor; got {qscheme!r} (use "
                             "PerChannelMinMaxObserver for per-channel schemes)")
        _seed_range(self)

    def _batch_range(self, x):
        self._follow_device(x)
        x = x.detach()
        return x.min().to(lucid.float32), x.max().to(lucid.float32)

    def forward(self, x):
        self._check_observed(x)
        lo, hi = self._batch_range(x)
        self.min_val = lucid.minimum(self.min_val, lo)
        self.max_val = lucid.maximum(self.max_val, hi)
        return x



def _check_averaging_constant(c, name):
    if not (isinstance(c, (int, float)) and 0 < c <= 1):
        raise ValueError(f"{name}: averaging_constant must be in (0, 1], got {c!r}")
    return float(c)


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Per-tensor exponential moving average of each batch's min / max; the first batch
    seeds the range."""

    def __init__(self, qscheme=per_tensor_affine, qdtype=quint8, averaging_constant=0.01, eps=1e-8):
        super().__init__(qscheme, qdtype, eps)
        self.averaging_constant = _check_averaging_constant(averaging_constant, type(self).__name__)

    def forward(self, x):
        self._check_observed(x)
        lo, hi = self._batch_range(x)
        # The first batch (range still at its +-inf seed) is taken as is; lucid.where
        # decides on the device, with no host round trip per training step.
        first = lucid.isinf(self.min_val)
        c = self.averaging_constant
        self.min_val = lucid.where(first, lo, self.min_val + c * (lo - self.min_val))
        self.max_val = lucid.where(first, hi, self.max_val + c * (hi - self.max_val))
        return x


class PerChannelMinMaxObserver(_RangeObserver):
    """Cumulative min / max of each slice along ch_axis (weights: ch_axis=0)."""

    def __init__(self, ch_axis=0, qscheme=per_channel_symmetric, qdtype=qint8, eps=1e-8):
        if not check_qscheme(qscheme, type(self).__name__).is_per_channel:
            raise ValueError(f"{type(self).__name__} needs a per-channel qscheme, got {qscheme!r}")
        if not isinstance(ch_axis, int):
            raise TypeError(f"{type(self).__name__}: ch_axis must be an int, got {ch_axis!r}")
        super().__init__(qscheme, qdtype, ch_axis, eps)
        _seed_range(self)

    def _batch_range(self, x):
        if not -x.ndim <= self.ch_axis < max(x.ndim, 1):
            raise IndexError(f"{type(self).__name__}: ch_axis {self.ch_axis} is out of range for a "
                             f"{x.ndim}-d input")
        self._follow_device(x)
        rows = lucid.movedim(x.detach(), self.ch_axis, 0)
        rows = rows.reshape(rows.shape[0], -1).to(lucid.float32)
        return lucid.amin(rows, dim=1), lucid.amax(rows, dim=1)

    def _check_channels(self, lo):
        if self.min_val.ndim == 1 and self.min_val.shape[0] != lo.shape[0]:
            raise ValueError(f"{type(self).__name__}: saw {lo.shape[0]} channels, but earlier "
                             f"batches had {self.min_val.shape[0]}")

    def forward(self, x):
        self._check_observed(x)
        lo, hi = self._batch_range(x)
        self._check_channels(lo)
        self.min_val = lucid.minimum(self.min_val, lo)
        self.max_val = lucid.maximum(self.max_val, hi)
        return x



class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel exponential moving average of min / max; the first batch seeds it."""

    def __init__(self, ch_axis=0, qscheme=per_channel_symmetric, qdtype=qint8,
                 averaging_constant=0.01, eps=1e-8):
        super().__init__(ch_axis, qscheme, qdtype, eps)
        self.averaging_constant = _check_averaging_constant(averaging_constant, type(self).__name__)

    def forward(self, x):
        self._check_observed(x)
        lo, hi = self._batch_range(x)
        self._check_channels(lo)
        if self.min_val.ndim == 0:
            self.min_val, self.max_val = lo, hi
        else:
            c = self.averaging_constant
            self.min_val = self.min_val + c * (lo - self.min_val)
            self.max_val = self.max_val + c * (hi - self.max_val)
        return x


from ._histogram_observer import HistogramObserver  # noqa: E402  (kept in its own file: it is long)


class FixedQParamsObserver(ObserverBase):
    """Fixed (scale, zero_point) for ops with a known output range (sigmoid: 1/256, 0)."""

    def __init__(self, scale, zero_point, qscheme=per_tensor_affine, qdtype=quint8, eps=1e-8):
        super().__init__(qscheme, qdtype, None, eps)
        if not (isinstance(scale, (int, float)) and scale > 0):
            raise ValueError(f"FixedQParamsObserver: scale must be a positive number, got {scale!r}")
        if not qdtype.quant_min <= int(zero_point) <= qdtype.quant_max:
            raise ValueError(f"FixedQParamsObserver: zero_point {zero_point} is outside {qdtype!r}'s "
                             f"range [{qdtype.quant_min}, {qdtype.quant_max}]")
        self.register_buffer("scale", lucid.tensor(float(scale)))
        self.register_buffer("zero_point", lucid.tensor(float(int(zero_point))))

    def forward(self, x):
        return x

    def calculate_qparams(self):
        return self.scale, self.zero_point


class PlaceholderObserver(ObserverBase):
    """Records only the target qscheme / qdtype (e.g. dynamic quantization computes the
    activation's qparams at run time); asking it for qparams is an error."""

    def __init__(self, qscheme=per_tensor_affine, qdtype=quint8, eps=1e-8):
        super().__init__(qscheme, qdtype, None, eps)

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise RuntimeError(f"{type(self).__name__} collects no statistics, so it has no qparams; "
                           "use a MinMaxObserver / HistogramObserver to calibrate a range")


class NoopObserver(PlaceholderObserver):
    """A PlaceholderObserver named for "leave this tensor unquantized"."""
