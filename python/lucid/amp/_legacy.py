"""torch.cuda.amp and torch.cpu.amp, deprecated in torch but common in training scripts:
lucid.cuda.amp (= lucid.gpu.amp) and lucid.cpu.amp, each autocast fixed to its device
type and warning as torch's do."""

import sys
import types
import warnings

from ._autocast import autocast as _autocast
from ._grad_scaler import GradScaler as _GradScaler


def _deprecated(old, new):
    warnings.warn(f"`{old}` is deprecated. Please use `{new}` instead.", FutureWarning, stacklevel=3)


class _DeviceAutocast(_autocast):
    _device_type = None

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        where = "cuda" if self._device_type == "cuda" else "cpu"
        _deprecated(f"lucid.{where}.amp.autocast(args...)", f"lucid.amp.autocast('{self._device_type}', args...)")
        super().__init__(self._device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class cuda_autocast(_DeviceAutocast):
    _device_type = "cuda"


class cpu_autocast(_DeviceAutocast):
    _device_type = "cpu"


class cuda_GradScaler(_GradScaler):
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        _deprecated("lucid.cuda.amp.GradScaler(args...)", "lucid.amp.GradScaler('cuda', args...)")
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


def cuda_custom_fwd(fwd=None, *, cast_inputs=None):
    """torch.cuda.amp.custom_fwd: custom_fwd for device_type "cuda"."""
    from ._custom import custom_fwd
    return custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def cuda_custom_bwd(bwd):
    """torch.cuda.amp.custom_bwd: custom_bwd for device_type "cuda"."""
    from ._custom import custom_bwd
    return custom_bwd(bwd, device_type="cuda")


def _module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


def install(lucid):
    """lucid.gpu.amp (also lucid.cuda.amp) and the lucid.cpu module with its amp; returns lucid.cpu."""
    lucid.gpu.amp = _module("lucid.gpu.amp", autocast=cuda_autocast, GradScaler=cuda_GradScaler,
                            custom_fwd=cuda_custom_fwd, custom_bwd=cuda_custom_bwd)
    sys.modules["lucid.cuda.amp"] = lucid.gpu.amp
    return _module("lucid.cpu", amp=_module("lucid.cpu.amp", autocast=cpu_autocast))
