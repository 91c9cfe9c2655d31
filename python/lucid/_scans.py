"""cummax, cummin and logcumsumexp as torch's, as log-step scans of lucid's elementwise
ops (Hillis and Steele: log2(n) passes, each combining every entry with the one 1, 2,
4, ... places before it), so they run on either device with those ops' gradients.
cummax/cummin carry (value, position) pairs and return the values as
input.gather(dim, positions), whose gradient is torch's CummaxBackward."""

import math

from . import _dtype as D
from . import return_types as _rt


def _lucid():
    import lucid
    return lucid


def _shift(t, dim, k, fill):
    """t moved k places along dim, the first k entries `fill`."""
    L = _lucid()
    n = t.shape[dim]
    head = L.full([k if d == dim % t.ndim else s for d, s in enumerate(t.shape)], fill, dtype=t.dtype,
                  device=t.device)
    return L.cat([head, t.narrow(dim, 0, n - k)], dim)


def _extreme_scan(input, dim, largest, name):
    L = _lucid()
    if input.dtype.is_complex:
        raise RuntimeError(f"{name}(): complex values have no order")
    if input.ndim == 0:
        return getattr(_rt, name)((input.clone(), L.zeros([], dtype=D.int64, device=input.device)))
    d = dim % input.ndim
    n = input.shape[d]
    floating = input.dtype.is_floating_point
    if input.dtype == D.bool:
        worst = not largest
    elif floating:
        worst = -math.inf if largest else math.inf
    else:
        info = L.iinfo(input.dtype)
        worst = info.min if largest else info.max
    shape = [n if i == d else 1 for i in range(input.ndim)]
    value = input.detach()
    position = L.arange(n, device=input.device).reshape(shape).expand(*input.shape)
    k = 1
    while k < n:
        before, before_at = _shift(value, d, k, worst), _shift(position, d, k, -1)
        # the later entry wins ties (torch's >=), a NaN wins and then stays
        later = (value >= before) if largest else (value <= before)
        if floating:
            later = value.isnan() | (~before.isnan() & later)
        value, position = L.where(later, value, before), L.where(later, position, before_at)
        k *= 2
    return getattr(_rt, name)((input.gather(d, position), position))


def cummax(input, dim):
    """(values, indices): the running maximum along dim and where it was last reached."""
    return _extreme_scan(input, dim, True, "cummax")


def cummin(input, dim):
    """(values, indices): the running minimum along dim and where it was last reached."""
    return _extreme_scan(input, dim, False, "cummin")


def logcumsumexp(input, dim):
    """log(cumsum(exp(input))) along dim, without overflow."""
    L = _lucid()
    if not input.dtype.is_floating_point:
        input = input.to(L.get_default_dtype())
    if input.ndim == 0:
        return input.clone()
    d = dim % input.ndim
    n = input.shape[d]
    value, k = input, 1
    while k < n:
        value = L.logaddexp(_shift(value, d, k, -math.inf), value)
        k *= 2
    return value if n > 1 else value.clone()
