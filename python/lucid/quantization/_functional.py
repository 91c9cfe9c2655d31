"""quantize / dequantize / fake_quantize: the arithmetic every other part builds on.

quantize:  q = clip(round(x / s) + z, qmin, qmax), cast to the grid's storage dtype
dequantize: x_hat = (q - z) * s
fake_quantize: dequantize(quantize(x)) kept in float, with a straight-through gradient
(1 where the unclipped code is inside the grid, 0 where it saturates), as torch's
fake_quantize_per_tensor_affine / per_channel_affine.
Rounding is half-to-even, like torch.
"""

import lucid
from lucid import Tensor
from lucid.autograd import Function

from ._qscheme import check_qdtype

__all__ = ["quantize", "dequantize", "fake_quantize"]


def _param_tensor(value, name, ref, where):
    """scale / zero_point as a tensor on ref's device, in ref's float dtype."""
    dtype = ref.dtype if ref.dtype.is_floating_point else lucid.float32
    if isinstance(value, Tensor):
        return value.to(device=ref.device, dtype=dtype)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return lucid.tensor(float(value), dtype=dtype, device=ref.device)
    raise TypeError(f"{where}: {name} must be a Tensor or a number, got {type(value).__name__}")


def _broadcastable(x, scale, zero_point, ch_axis, where):
    """Reshape per-channel (C,) parameters to broadcast along ch_axis of x."""
    scale = _param_tensor(scale, "scale", x, where)
    zero_point = _param_tensor(zero_point, "zero_point", x, where)
    if ch_axis is None:
        if scale.numel() != 1 or zero_point.numel() != 1:
            raise ValueError(f"{where}: per-tensor quantization needs a single scale and "
                             f"zero_point, got {scale.numel()} and {zero_point.numel()} values; "
                             f"pass ch_axis for per-channel parameters")
        return scale.reshape(()), zero_point.reshape(())
    ndim = x.ndim
    if not -ndim <= ch_axis < ndim:
        raise IndexError(f"{where}: ch_axis {ch_axis} is out of range for a {ndim}-d input")
    axis = ch_axis % ndim
    channels = x.shape[axis]
    shape = [1] * ndim
    shape[axis] = channels
    shaped = []
    for name, p in (("scale", scale), ("zero_point", zero_point)):
        if p.numel() == 1:  # one value shared by every channel (e.g. a symmetric zero_point of 0)
            shaped.append(p.reshape(()))
        elif p.numel() == channels:
            shaped.append(p.reshape(shape))
        else:
            raise ValueError(f"{where}: per-channel {name} must have {channels} values (size of "
                             f"axis {ch_axis}) or a single value, got {p.numel()}")
    return shaped[0], shaped[1]


def _check_input(x, where):
    if not isinstance(x, Tensor):
        raise TypeError(f"{where}: expected a Tensor input, got {type(x).__name__}")


def quantize(x, scale, zero_point, qdtype, ch_axis=None):
    """Integer codes of x on qdtype's grid, stored in qdtype's storage dtype."""
    _check_input(x, "quantize")
    check_qdtype(qdtype, "quantize")
    if not x.dtype.is_floating_point:
        raise TypeError(f"quantize: x must be a floating-point tensor, got {x.dtype}")
    s, z = _broadcastable(x, scale, zero_point, ch_axis, "quantize")
    codes = lucid.clip(lucid.round(x.detach() / s) + z, qdtype.quant_min, qdtype.quant_max)
    return codes.to(qdtype.storage_dtype)


def dequantize(q, scale, zero_point, ch_axis=None):
    """Float approximation (q - zero_point) * scale of integer codes (float32 for integer
    codes, the codes' own dtype when they are already float)."""
    _check_input(q, "dequantize")
    ref = q if q.dtype.is_floating_point else q.to(lucid.float32)
    s, z = _broadcastable(ref, scale, zero_point, ch_axis, "dequantize")
    return (ref - z) * s


class _FakeQuantizeSTE(Function):
    @staticmethod
    def forward(ctx, x, scale, zero_point, quant_min, quant_max):
        unclipped = lucid.round(x / scale) + zero_point
        codes = lucid.clip(unclipped, quant_min, quant_max)
        inside = (unclipped >= quant_min) & (unclipped <= quant_max)
        ctx.save_for_backward(inside.to(x.dtype))
        return (codes - zero_point) * scale

    @staticmethod
    def backward(ctx, grad):
        (inside,) = ctx.saved_tensors
        return grad * inside, None, None, None, None


def fake_quantize(x, scale, zero_point, quant_min, quant_max, ch_axis=None):
    """dequantize(quantize(x)) in x's float dtype, differentiable w.r.t. x with the
    straight-through estimator (gradient zeroed only where the code saturates)."""
    _check_input(x, "fake_quantize")
    if not x.dtype.is_floating_point:
        raise TypeError(f"fake_quantize: x must be a floating-point tensor, got {x.dtype}")
    if int(quant_min) > int(quant_max):
        raise ValueError(f"fake_quantize: quant_min ({quant_min}) must be <= quant_max ({quant_max})")
    s, z = _broadcastable(x, scale, zero_point, ch_axis, "fake_quantize")
    return _FakeQuantizeSTE.apply(x, s, z, int(quant_min), int(quant_max))
