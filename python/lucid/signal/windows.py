"""lucid.signal.windows, as torch.signal.windows: window functions of M points, symmetric
(sym=True, for filter design) or periodic (sym=False, for spectral analysis), in the
default floating dtype unless dtype says otherwise, on `device`. A window's shape
parameters may also be given by position, as upstream Lucid's (gaussian(M, std)), and
upstream's general_gaussian is here too (scipy's; torch has none)."""

import math

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_gaussian",
           "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _lucid():
    import lucid
    return lucid


def _checks(name, M, dtype):
    L = _lucid()
    if not isinstance(M, int) or isinstance(M, bool):
        raise TypeError(f"{name}(): argument 'M' must be int, not {type(M).__name__}")
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    dtype = dtype or L.get_default_dtype()
    if not dtype.is_floating_point:
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M, dtype, device, requires_grad):
    """The windows of 0 and 1 points (empty, and [1.0]); None for longer ones."""
    if M > 1:
        return None
    L = _lucid()
    return L.ones(M, dtype=dtype, device=device, requires_grad=requires_grad)


def _ramp(start, step, M, dtype, device):
    """start, start + step, ..., M points (torch.linspace from start to start + (M - 1) step)."""
    L = _lucid()
    return L.linspace(start, start + (M - 1) * step, M, dtype=dtype, device=device)


def _done(w, requires_grad):
    return w.requires_grad_() if requires_grad else w


def exponential(M, center=None, tau=1.0, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """exp(-|n - center| / tau)."""
    dtype = _checks("exponential", M, dtype)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if (w := _trivial(M, dtype, device, requires_grad)) is not None:
        return w
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _ramp(-center / tau, 1 / tau, M, dtype, device)
    return _done(_lucid().exp(-k.abs()), requires_grad)


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """sin(pi (n + 1/2) / M) (M + 1 for a periodic window)."""
    dtype = _checks("cosine", M, dtype)
    if (w := _trivial(M, dtype, device, requires_grad)) is not None:
        return w
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return _done(_lucid().sin(_ramp(0.5 * step, step, M, dtype, device)), requires_grad)


def gaussian(M, std=1.0, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """exp(-(n - (M - 1) / 2)^2 / (2 std^2))."""
    dtype = _checks("gaussian", M, dtype)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if (w := _trivial(M, dtype, device, requires_grad)) is not None:
        return w
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / (std * math.sqrt(2))
    k = _ramp(start * c, c, M, dtype, device)
    return _done(_lucid().exp(-k * k), requires_grad)


def general_gaussian(M, p, sig, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """exp(-|n - (M - 1) / 2|^(2 p) / (2 sig^(2 p))): p = 1 is gaussian(std=sig), p = 1/2
    Laplace's shape (scipy.signal.windows.general_gaussian)."""
    dtype = _checks("general_gaussian", M, dtype)
    if sig <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {sig} instead.")
    if p <= 0:
        raise ValueError(f"Shape parameter p must be positive, got: {p} instead.")
    if (w := _trivial(M, dtype, device, requires_grad)) is not None:
        return w
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    k = _ramp(start / sig, 1 / sig, M, dtype, device)
    return _done(_lucid().exp(-0.5 * k.abs().pow(2 * p)), requires_grad)


def kaiser(M, beta=12.0, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)."""
    L = _lucid()
    dtype = _checks("kaiser", M, dtype)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if (w := _trivial(M, dtype, device, requires_grad)) is not None:
        return w
    b = L.tensor(float(beta), dtype=dtype, device=device)
    step = 2.0 * beta / (M if not sym else M - 1)
    k = _ramp(-beta, step, M, dtype, device).clamp(max=float(b))
    return _done(L.i0(L.sqrt((b * b - k * k).clamp(min=0.0))) / L.i0(b), requires_grad)


def general_cosine(M, a=None, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """sum_i (-1)^i a_i cos(2 pi i n / (M - 1))."""
    L = _lucid()
    dtype = _checks("general_cosine", M, dtype)
    if a is None or not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    if (w := _trivial(M, dtype, device, requires_grad)) is not None:
        return w
    k = _ramp(0.0, 2 * math.pi / (M if not sym else M - 1), M, dtype, device)
    coeffs = L.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device)
    orders = L.arange(len(a), dtype=dtype, device=device)
    return _done((coeffs.unsqueeze(-1) * L.cos(orders.unsqueeze(-1) * k)).sum(0), requires_grad)


def general_hamming(M, alpha=0.54, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_hamming(M, sym=sym, dtype=dtype, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, device=device, requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_cosine(M, a=[0.42, 0.50, 0.08], sym=sym, dtype=dtype, device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """1 - |2n / (M - 1) - 1|."""
    dtype = _checks("bartlett", M, dtype)
    if (w := _trivial(M, dtype, device, requires_grad)) is not None:
        return w
    k = _ramp(-1.0, 2 / (M if not sym else M - 1), M, dtype, device)
    return _done(1 - k.abs(), requires_grad)
