"""QParams and calculate_qparams: turning an observed [min, max] into (scale, zero_point)."""

from dataclasses import dataclass

import lucid
from lucid import Tensor

from ._qscheme import QDtype, QScheme, check_qdtype, check_qscheme

__all__ = ["QParams", "calculate_qparams"]


@dataclass(frozen=True)
class QParams:
    """The metadata that makes an integer code tensor readable as real numbers."""

    scale: Tensor
    zero_point: Tensor
    qscheme: QScheme
    qdtype: QDtype
    ch_axis: int | None = None


def _as_float_tensor(value, name):
    if isinstance(value, Tensor):
        return value if value.dtype.is_floating_point else value.to(lucid.float32)
    if isinstance(value, (int, float)):
        return lucid.tensor(float(value))
    raise TypeError(f"calculate_qparams: {name} must be a Tensor or a number, got {type(value).__name__}")


def calculate_qparams(min_val, max_val, qscheme, qdtype, eps=1e-8):
    """(scale, zero_point) mapping [min_val, max_val] onto qdtype's grid, elementwise, so
    scalar ranges give per-tensor parameters and length-C ranges per-channel ones.

    The range is widened to contain 0 so that real zero (padding) is exactly representable.
    Affine: scale = (max - min) / (qmax - qmin), zero_point = clip(qmin - round(min / scale)).
    Symmetric: scale = max(|min|, |max|) / ((qmax - qmin) / 2), zero_point pinned to 0
    (signed grid) or the grid midpoint (unsigned). scale is floored at eps. These are
    torch.ao.quantization's formulas; zero_point comes back as a float tensor holding an
    integer value.
    """
    check_qscheme(qscheme, "calculate_qparams")
    check_qdtype(qdtype, "calculate_qparams")
    lo = _as_float_tensor(min_val, "min_val")
    hi = _as_float_tensor(max_val, "max_val")
    if tuple(lo.shape) != tuple(hi.shape):
        raise ValueError(f"calculate_qparams: min_val and max_val must have the same shape, "
                         f"got {tuple(lo.shape)} and {tuple(hi.shape)}")
    if hi.device != lo.device:
        hi = hi.to(lo.device)
    # Checked where it costs no device sync: numbers, and tensors on the CPU (on the GPU it
    # would stall every QAT step).
    numbers = not isinstance(min_val, Tensor) and not isinstance(max_val, Tensor)
    if (numbers and min_val > max_val) or (lo.device.type == "cpu" and bool((lo > hi).any().item())):
        raise ValueError("calculate_qparams: min_val must be <= max_val everywhere (has the "
                         "observer seen any data yet?)")
    qmin, qmax = qdtype.quant_min, qdtype.quant_max
    lo = lucid.minimum(lo, lucid.zeros_like(lo))
    hi = lucid.maximum(hi, lucid.zeros_like(hi))
    floor = lucid.full_like(hi, eps)
    if qscheme.is_symmetric:
        max_abs = lucid.maximum(-lo, hi)
        scale = lucid.maximum(max_abs / ((qmax - qmin) / 2.0), floor)
        pinned = 0.0 if qdtype.signed else float((qmin + qmax + 1) // 2)
        zero_point = lucid.full_like(scale, pinned)
    else:
        scale = lucid.maximum((hi - lo) / float(qmax - qmin), floor)
        zero_point = lucid.clip(qmin - lucid.round(lo / scale), qmin, qmax)
    return scale, zero_point
