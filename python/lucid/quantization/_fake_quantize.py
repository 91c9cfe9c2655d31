"""FakeQuantize: an observer plus fake_quantize, the building block of QAT."""

import functools

import lucid
import lucid.nn as nn

from ._functional import fake_quantize
from .observer import MovingAverageMinMaxObserver, ObserverBase

__all__ = ["FakeQuantize"]


class FakeQuantize(nn.Module):
    """forward: update the wrapped observer and refresh (scale, zero_point) from it (while
    the observer is enabled), then fake-quantize x (while fake-quant is enabled)."""

    def __init__(self, observer=MovingAverageMinMaxObserver, **observer_kwargs):
        super().__init__()
        if not callable(observer):
            raise TypeError(f"FakeQuantize: observer must be an observer class or factory, got {observer!r}")
        built = observer(**observer_kwargs)
        if not isinstance(built, ObserverBase):
            raise TypeError(f"FakeQuantize: observer must build an ObserverBase, got {type(built).__name__}")
        self.activation_post_process = built
        self.qdtype = built.qdtype
        self.qscheme = built.qscheme
        self.ch_axis = built.ch_axis
        self.quant_min, self.quant_max = built.qdtype.quant_min, built.qdtype.quant_max
        self.register_buffer("scale", lucid.tensor(1.0))
        self.register_buffer("zero_point", lucid.tensor(0.0))
        self.observer_enabled = True
        self.fake_quant_enabled = True

    def forward(self, x):
        if self.observer_enabled:
            self.activation_post_process(x)
            scale, zero_point = self.activation_post_process._qparams_after_observing()
            self.scale, self.zero_point = scale.detach(), zero_point.detach()
        if not self.fake_quant_enabled:
            return x
        return fake_quantize(x, self.scale, self.zero_point, self.quant_min, self.quant_max, self.ch_axis)

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def enable_observer(self, enabled=True):
        self.observer_enabled = bool(enabled)
        return self

    def disable_observer(self):
        return self.enable_observer(False)

    def enable_fake_quant(self, enabled=True):
        self.fake_quant_enabled = bool(enabled)
        return self

    def disable_fake_quant(self):
        return self.enable_fake_quant(False)

    @classmethod
    def with_args(cls, **kwargs):
        return functools.partial(cls, **kwargs)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # Per-channel scale / zero_point are (C,) once trained but scalar when fresh.
        for name in ("scale", "zero_point"):
            saved = state_dict.get(prefix + name)
            if saved is not None and tuple(saved.shape) != tuple(self._buffers[name].shape):
                self._buffers[name] = lucid.empty(tuple(saved.shape), device=self._buffers[name].device)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def extra_repr(self):
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
                f"qdtype={self.qdtype!r}, qscheme={self.qscheme!r}, ch_axis={self.ch_axis}")
