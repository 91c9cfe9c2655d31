"""Shared conversion helpers: quantizing a float layer's weight and reading the output
qparams its activation observer calibrated."""

import math
import warnings

import lucid
from lucid.quantization._functional import quantize
from lucid.quantization._qscheme import per_channel_symmetric, qint8


def quantize_weight(mod, weight=None, default_ch_axis=0):
    """(codes, scale, zero_point, ch_axis) for mod's weight.

    A QAT layer's weight_fake_quant already tracks the trained weight: its qparams are
    refreshed on the final weight and reused, so inference rounds exactly as training
    did. A float layer runs its qconfig's weight observer; without a qconfig a per-channel
    symmetric qint8 observer along default_ch_axis is used.
    """
    from lucid.quantization.observer import PerChannelMinMaxObserver
    weight = (mod.weight if weight is None else weight).detach()
    observer = getattr(mod, "weight_fake_quant", None)
    if observer is not None:
        observer = observer.activation_post_process
    else:
        qconfig = getattr(mod, "qconfig", None)
        observer = qconfig.weight() if qconfig is not None else PerChannelMinMaxObserver(
            ch_axis=default_ch_axis, qscheme=per_channel_symmetric, qdtype=qint8)
        if hasattr(observer, "activation_post_process"):  # a QAT qconfig: FakeQuantize factory
            observer = observer.activation_post_process
    observer(weight)
    scale, zero_point = observer.calculate_qparams()
    scale, zero_point = scale.to(weight.device), zero_point.to(weight.device)
    codes = quantize(weight, scale, zero_point, observer.qdtype, ch_axis=observer.ch_axis)
    return codes, scale, zero_point, observer.ch_axis


def activation_qparams(mod):
    """(scale, zero_point, qdtype) from mod.activation_post_process (an observer after
    prepare, a FakeQuantize after prepare_qat)."""
    observer = getattr(mod, "activation_post_process", None)
    if observer is None:
        raise RuntimeError(f"cannot convert {type(mod).__name__}: it has no activation_post_process; "
                           "run lucid.quantization.prepare (and calibrate) or prepare_qat first")
    min_val = getattr(getattr(observer, "activation_post_process", observer), "min_val", None)
    if min_val is not None and math.isinf(float(min_val.reshape(-1)[0].item())):
        warnings.warn(f"converting {type(mod).__name__} whose activation observer saw no data; "
                      "its output range defaults to [0, 0]. Calibrate the prepared model before convert().",
                      stacklevel=3)
        scale, zero_point = lucid.tensor(1.0), lucid.tensor(float(observer.qdtype.quant_min))
    else:
        scale, zero_point = observer.calculate_qparams()
    device = _module_device(mod)
    return scale.detach().to(device), zero_point.detach().to(device), observer.qdtype


def _module_device(mod):
    for p in mod.parameters():
        return p.device
    for b in mod.buffers():
        return b.device
    return lucid.tensor(0.0).device


def check_positive_int(value, name, where):
    if not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
        raise ValueError(f"{where}: {name} must be a positive int, got {value!r}")
    return value


def check_conv_channels(mod, in_channels, out_channels, groups, name):
    """A quantized (transposed) convolution's channel counts, set on mod after checking."""
    mod.in_channels = check_positive_int(in_channels, "in_channels", name)
    mod.out_channels = check_positive_int(out_channels, "out_channels", name)
    mod.groups = check_positive_int(groups, "groups", name)
    if in_channels % groups or out_channels % groups:
        raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels ({out_channels}) "
                         f"must be divisible by groups ({groups})")
