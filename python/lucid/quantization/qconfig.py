"""QConfig (how to observe activations and weights) and QConfigMapping (which QConfig
applies to which module: by qualified name, else by exact type, else global)."""

from typing import Callable, NamedTuple

from ._fake_quantize import FakeQuantize
from ._qscheme import per_channel_symmetric, per_tensor_affine, qint8, quint8
from .observer import HistogramObserver, MovingAverageMinMaxObserver, PerChannelMinMaxObserver

__all__ = ["QConfig", "QConfigMapping", "get_default_qconfig", "get_default_qat_qconfig",
           "get_default_qconfig_mapping", "get_default_qat_qconfig_mapping"]


class QConfig(NamedTuple):
    """Zero-argument factories for the activation and the weight observer (or FakeQuantize);
    factories, so every quantized layer gets observers of its own."""

    activation: Callable
    weight: Callable


def check_qconfig(qconfig, where):
    if qconfig is None:
        return None
    if not isinstance(qconfig, QConfig):
        raise TypeError(f"{where}: qconfig must be a lucid.quantization.QConfig (or None), got "
                        f"{type(qconfig).__name__}")
    for field in ("activation", "weight"):
        if not callable(getattr(qconfig, field)):
            raise TypeError(f"{where}: QConfig.{field} must be a zero-argument factory "
                            f"(e.g. MinMaxObserver.with_args(...)), got {getattr(qconfig, field)!r}")
    return qconfig


def get_default_qconfig():
    """Post-training static quantization: histogram quint8 activations, per-channel
    symmetric qint8 weights."""
    return QConfig(
        activation=HistogramObserver.with_args(qscheme=per_tensor_affine, qdtype=quint8),
        weight=PerChannelMinMaxObserver.with_args(ch_axis=0, qscheme=per_channel_symmetric, qdtype=qint8),
    )


def get_default_qat_qconfig():
    """Quantization-aware training: FakeQuantize over a moving-average quint8 activation
    observer and a per-channel symmetric qint8 weight observer."""
    return QConfig(
        activation=FakeQuantize.with_args(observer=MovingAverageMinMaxObserver,
                                          qscheme=per_tensor_affine, qdtype=quint8),
        weight=FakeQuantize.with_args(observer=PerChannelMinMaxObserver, ch_axis=0,
                                      qscheme=per_channel_symmetric, qdtype=qint8),
    )


class QConfigMapping:
    """Three tiers looked up most specific first: module name, exact module type, global.
    Any tier may map to None, which keeps the module in float."""

    def __init__(self):
        self._global = None
        self._object_type = {}
        self._module_name = {}

    def set_global(self, qconfig):
        self._global = check_qconfig(qconfig, "QConfigMapping.set_global")
        return self

    def set_object_type(self, module_type, qconfig):
        if not isinstance(module_type, type):
            raise TypeError(f"QConfigMapping.set_object_type: module_type must be a class, got {module_type!r}")
        self._object_type[module_type] = check_qconfig(qconfig, "QConfigMapping.set_object_type")
        return self

    def set_module_name(self, name, qconfig):
        if not isinstance(name, str):
            raise TypeError(f"QConfigMapping.set_module_name: name must be a str, got {name!r}")
        self._module_name[name] = check_qconfig(qconfig, "QConfigMapping.set_module_name")
        return self

    def get_qconfig(self, module_type, module_name):
        if module_name in self._module_name:
            return self._module_name[module_name]
        if module_type in self._object_type:
            return self._object_type[module_type]
        return self._global

    def __repr__(self):
        return (f"QConfigMapping(global={self._global is not None}, object_types="
                f"{[t.__name__ for t in self._object_type]}, module_names={list(self._module_name)})")


def get_default_qconfig_mapping():
    return QConfigMapping().set_global(get_default_qconfig())


def get_default_qat_qconfig_mapping():
    return QConfigMapping().set_global(get_default_qat_qconfig())
