"""torch's top-level window functions (hann_window, ...): lucid.signal.windows' windows,
periodic by default (a window of window_length + 1 points without its last)."""

from .signal import windows as W


def _check(name, window_length, dtype):
    if not isinstance(window_length, int) or isinstance(window_length, bool):
        raise TypeError(f"{name}(): argument 'window_length' must be int, not {type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    _check("hann_window", window_length, dtype)
    return W.hann(window_length, sym=not periodic, dtype=dtype, device=device, requires_grad=requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    _check("hamming_window", window_length, dtype)
    return W.general_cosine(window_length, a=[alpha, beta], sym=not periodic, dtype=dtype, device=device,
                            requires_grad=requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    _check("blackman_window", window_length, dtype)
    return W.blackman(window_length, sym=not periodic, dtype=dtype, device=device, requires_grad=requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    _check("bartlett_window", window_length, dtype)
    return W.bartlett(window_length, sym=not periodic, dtype=dtype, device=device, requires_grad=requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    _check("kaiser_window", window_length, dtype)
    return W.kaiser(window_length, beta=beta, sym=not periodic, dtype=dtype, device=device,
                    requires_grad=requires_grad)


__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window"]
