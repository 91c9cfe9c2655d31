"""make_tensor (torch.testing.make_tensor): a tensor of a given shape, dtype and device
with values drawn uniformly from [low, high) by lucid's generator, as torch's: the
same default ranges, clamping to the dtype's range, errors and options."""

import collections.abc
import math
import warnings

from .. import _dtype as D

_INTEGRAL_TYPES = (D.uint8, D.int8, D.int16, D.int32, D.int64)
_FLOATING_TYPES = (D.float16, D.bfloat16, D.float32, D.float64)
_COMPLEX_TYPES = (D.complex64, D.complex128)
_BOOLEAN_OR_INTEGRAL_TYPES = (D.bool, *_INTEGRAL_TYPES)
_FLOATING_OR_COMPLEX_TYPES = (*_FLOATING_TYPES, *_COMPLEX_TYPES)


def _uniform_random_(t, low, high):
    # uniform_ needs high - low to be finite in t's dtype: draw half the range, then double
    if high - low >= D.finfo(t.dtype).max:
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def _low_high(dtype, low, high, *, lowest_inclusive, highest_exclusive, default_low, default_high):
    """The interval to draw from: the defaults for None, checked, clamped to the dtype's
    range, and for integer dtypes both ends rounded up (randint's high is exclusive)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    elif low == high and dtype in _FLOATING_OR_COMPLEX_TYPES:
        warnings.warn("Passing `low==high` to `lucid.testing.make_tensor` for floating or complex types is "
                      "deprecated since 2.1 and will be removed in 2.3. Use `lucid.full(...)` instead.",
                      FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest_inclusive or low >= highest_exclusive:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only "
                         f"supports [{lowest_inclusive}, {highest_exclusive})")
    low = min(max(low, lowest_inclusive), highest_exclusive)
    high = min(max(high, lowest_inclusive), highest_exclusive)
    if dtype in _BOOLEAN_OR_INTEGRAL_TYPES:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    r"""A tensor of `shape` (ints, or one sequence) filled with values drawn uniformly from
    [low, high), as torch.testing.make_tensor. Defaults: bool [0, 2), unsigned [0, 10),
    signed integers [-9, 10), floating and complex [-9, 9) (complex: each part).

    low / high outside the dtype's finite range are clamped to it. requires_grad is for
    floating and complex dtypes; noncontiguous=True gives a non-contiguous view (of a
    tensor twice as long in the last dim, from element 1 on, when there are at least two
    elements); memory_format (exclusive with noncontiguous) lays the result out so;
    exclude_zero replaces zeros with 1 (bool, integers) or the dtype's tiny (floating,
    complex).

    Raises ValueError for requires_grad with an integer or bool dtype, low >= high, a
    NaN bound, an interval outside the dtype, or noncontiguous with memory_format;
    TypeError for a dtype that is not one of lucid's.
    """
    from .._creation import empty
    from .._random import randint

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    if requires_grad and dtype in _BOOLEAN_OR_INTEGRAL_TYPES:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # twice the last dim, so the view below skips distinct values
        shape = (*shape[:-1], 2 * shape[-1])

    if dtype is D.bool:
        low, high = _low_high(dtype, low, high, lowest_inclusive=0, highest_exclusive=2, default_low=0,
                              default_high=2)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL_TYPES:
        info = D.iinfo(dtype)
        # randint cannot reach int64's maximum (its high is exclusive and an int64 itself)
        low, high = _low_high(dtype, low, high, lowest_inclusive=info.min,
                              highest_exclusive=info.max + (1 if dtype is not D.int64 else 0), default_low=-9,
                              default_high=10)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING_OR_COMPLEX_TYPES:
        info = D.finfo(dtype)
        low, high = _low_high(dtype, low, high, lowest_inclusive=info.min, highest_exclusive=info.max,
                              default_low=-9, default_high=9)
        result = empty(shape, device=device, dtype=dtype)
        if dtype in _COMPLEX_TYPES:
            from .._complex import view_as_real
            _uniform_random_(view_as_real(result), low, high)
        else:
            _uniform_random_(result, low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by lucid.testing.make_tensor().")

    if noncontiguous:
        result = result[..., 1::2]  # (from element 1: catches offset mistakes too)
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype in _BOOLEAN_OR_INTEGRAL_TYPES else D.finfo(dtype).tiny
    if dtype in _FLOATING_OR_COMPLEX_TYPES:
        result.requires_grad = requires_grad
    return result
