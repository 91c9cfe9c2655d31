"""lucid.quantization: upstream Lucid's quantization API (observers, QConfig, fake
quantization, eager prepare / prepare_qat / convert, dynamic quantization, fusion).

A quantized tensor is an ordinary integer lucid tensor of codes plus a float scale and
zero_point (upstream's "sidecar" representation; there is no qint8 tensor dtype).
"""

from ._qscheme import (QDtype, QScheme, per_channel_affine, per_channel_symmetric,  # noqa: F401
                       per_tensor_affine, per_tensor_symmetric, qint4, qint8, qint32, quint8)
from ._qparams import QParams, calculate_qparams  # noqa: F401
from ._functional import dequantize, fake_quantize, quantize  # noqa: F401
from .observer import (FixedQParamsObserver, HistogramObserver, MinMaxObserver,  # noqa: F401
                       MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver,
                       NoopObserver, ObserverBase, PerChannelMinMaxObserver, PlaceholderObserver)
from ._fake_quantize import FakeQuantize  # noqa: F401
from .qconfig import (QConfig, QConfigMapping, get_default_qat_qconfig,  # noqa: F401
                      get_default_qat_qconfig_mapping, get_default_qconfig, get_default_qconfig_mapping)
from ._prepare import convert, prepare, prepare_qat, quantize_dynamic  # noqa: F401
from .fuse_modules import fuse_modules, fuse_modules_qat  # noqa: F401
from ._quantize_fx import convert_fx, prepare_fx  # noqa: F401

__all__ = [
    "QScheme", "QDtype", "per_tensor_affine", "per_tensor_symmetric", "per_channel_affine",
    "per_channel_symmetric", "qint8", "quint8", "qint32", "qint4", "QParams", "calculate_qparams",
    "quantize", "dequantize", "fake_quantize", "ObserverBase", "MinMaxObserver",
    "MovingAverageMinMaxObserver", "PerChannelMinMaxObserver", "MovingAveragePerChannelMinMaxObserver",
    "HistogramObserver", "FixedQParamsObserver", "PlaceholderObserver", "NoopObserver", "FakeQuantize",
    "QConfig", "QConfigMapping", "get_default_qconfig", "get_default_qat_qconfig",
    "get_default_qconfig_mapping", "get_default_qat_qconfig_mapping", "prepare", "prepare_qat", "convert",
    "quantize_dynamic", "fuse_modules", "fuse_modules_qat", "prepare_fx", "convert_fx",
]
