"""lucid.fft, as torch.fft: discrete Fourier transforms of any length over any dims,
complex (fft, ifft), real-input (rfft, irfft) and Hermitian (hfft, ihfft), in one, two
or n dims, with torch's `norm` modes and gradients; fftfreq, rfftfreq, fftshift and
ifftshift. stft and istft (lucid.stft, Tensor.stft) are built on them.

The transform itself is one engine op (csrc/ops/fft.h: MKL's DFTI on the CPU, cuFFT
on the GPU) over up to three trailing dims of a dense tensor; this module moves the
chosen dims there, pads or trims them to the sizes asked for, scales the result, and
gives the three transforms (complex, real-to-half, half-to-real) their gradients,
torch's (FunctionsManual.cpp): the adjoint transform, written with these same
Functions so that it is differentiable again. The Hermitian transforms are the real
ones of the conjugate (hfft(x) = irfft(conj(x)) with the norm mode swapped)."""

import math

from . import _C
from . import _dtype as D
from .autograd.function import Function

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
    "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

_MAX_RANK = 3  # the engine op's: MKL's and cuFFT's plans take up to three dims


# ---- the engine op over any dims -------------------------------------------------------

def _cpu_library():
    """Points the engine at the MKL that the `mkl` package installed, when neither the
    loader's search nor import's quick look found it (Note [The CPU's FFT library])."""
    global _library_set
    if _library_set:
        return
    _library_set = True
    from ._blas_env import mkl_library
    path = mkl_library(thorough=True)
    if path:
        _C._set_mkl_library(path)


_library_set = False


def _chunk(x, kind, inverse, dims, last_size=-1):
    """The engine's transform of x over `dims` (at most three; the last one is the
    half-spectrum dim of a real transform): those dims moved to the end, and back."""
    if x.device.type == "cpu":
        _cpu_library()
    nd = x.ndim
    perm = [d for d in range(nd) if d not in dims] + list(dims)
    identity = perm == list(range(nd))
    y = _C._fft(x if identity else x.permute(perm), kind, inverse, len(dims), last_size)
    if identity:
        return y
    back = [0] * nd
    for i, d in enumerate(perm):
        back[d] = i
    return y.permute(back)


def _c2c(x, dims, inverse):
    for i in range(0, len(dims), _MAX_RANK):
        x = _chunk(x, "c2c", inverse, dims[i:i + _MAX_RANK])
    return x


def _scaled(y, scale):
    return y if scale == 1.0 else y * scale


class _C2C(Function):
    """The complex transform over `dims`, times `scale`; its gradient is the
    transform of the other direction with the same scale (the DFT matrix is
    symmetric: its adjoint is its conjugate)."""

    @staticmethod
    def forward(ctx, x, dims, inverse, scale):
        ctx.args = dims, inverse, scale
        return _scaled(_c2c(x, dims, inverse), scale)

    @staticmethod
    def backward(ctx, g):
        dims, inverse, scale = ctx.args
        return _C2C.apply(g, dims, not inverse, scale), None, None, None


class _R2C(Function):
    """The real-to-half transform over `dims` (dims[-1] one-sided), times `scale`.
    Gradient: the half spectrum's gradient zero-filled to the full one, the inverse-
    direction complex transform, its real part."""

    @staticmethod
    def forward(ctx, x, dims, scale):
        ctx.args = dims, scale, x.shape[dims[-1]]
        y = _chunk(x, "r2c", False, dims[-_MAX_RANK:])
        return _scaled(_c2c(y, dims[:-_MAX_RANK], False), scale)

    @staticmethod
    def backward(ctx, g):
        dims, scale, n = ctx.args
        half = g.shape[dims[-1]]
        full = _resize(g, dims[-1], n) if n > half else g
        return _C2C.apply(full, dims, True, scale).real, None, None


class _C2R(Function):
    """The half-to-real transform over `dims` to a signal of `n` along dims[-1], times
    `scale`. Gradient (torch's): the real-to-half transform of the gradient, with the
    entries that stand for two of the full spectrum's (all but the first and, for
    even n, the last) doubled."""

    @staticmethod
    def forward(ctx, x, dims, n, scale):
        ctx.args = dims, n, scale
        # the other dims first, then a one-dimensional c2r: a multi-dimensional c2r
        # differs (between libraries too) where x is not exactly Hermitian; this is
        # numpy's and torch's result
        x = _c2c(x, dims[:-1], True)
        return _scaled(_chunk(x, "c2r", True, dims[-1:], n), scale)

    @staticmethod
    def backward(ctx, g):
        dims, n, scale = ctx.args
        gx = _R2C.apply(g, dims, scale)
        half = gx.shape[dims[-1]]
        doubled = n - half
        if doubled > 0:
            from . import ones
            w = ones(half, dtype=gx.dtype.to_real(), device=g.device)
            w[1:1 + doubled] = 2.0
            shape = [1] * gx.ndim
            shape[dims[-1]] = half
            gx = gx * w.reshape(shape)
        return gx, None, None, None


# ---- operands: dtypes, dims, sizes, norm -----------------------------------------------

def _floating(op, x):
    """x as float32, float64, complex64 or complex128 (integers and bools become the
    default float dtype, as torch's)."""
    if x.dtype in (D.float32, D.float64, D.complex64, D.complex128):
        return x
    if x.dtype in (D.float16, D.bfloat16):
        raise RuntimeError(f"{op}: Unsupported dtype {D._torch_name(x.dtype)}; convert to float32 first")
    return x.to(D.get_default_dtype())


def _real_input(op, x):
    x = _floating(op, x)
    if x.dtype.is_complex:
        raise TypeError(f"{op} expects a real input tensor, but got {D._torch_name(x.dtype)}")
    return x


def _complex_input(op, x):
    x = _floating(op, x)
    return x if x.dtype.is_complex else x.to(x.dtype.to_complex())


def _wrap(d, nd):
    if not -nd <= d < max(nd, 1) or nd == 0:
        lo, hi = (-nd, nd - 1) if nd else (-1, 0)
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})")
    return d % nd


def _dims_and_sizes(x, s, dim, all_dims_default=True):
    """torch's rule for (s, dim): dims to transform and the signal size along each
    (None where s leaves it as the input has it)."""
    nd = x.ndim
    if s is not None and not isinstance(s, (list, tuple)):
        s = (s,)
    if dim is None:
        if s is None:
            dims = list(range(nd)) if all_dims_default else [nd - 1]
        else:
            if len(s) > nd:
                raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {nd} dimensions.")
            dims = list(range(nd - len(s), nd))
    else:
        dims = [_wrap(d, nd) for d in ((dim,) if isinstance(dim, int) else dim)]
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    sizes = [None if s is None or s[i] == -1 else int(s[i]) for i in range(len(dims))]
    for n in sizes:
        if n is not None and n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    for d in dims:
        if x.shape[d] < 1 and not (s is not None and sizes[dims.index(d)]):
            raise RuntimeError(f"Invalid number of data points ({x.shape[d]}) specified")
    return dims, sizes


def _resize(x, dim, n):
    """x trimmed or zero-padded along `dim` to n entries."""
    have = x.shape[dim]
    if have == n:
        return x
    if have > n:
        return x.narrow(dim, 0, n)
    from . import cat, zeros
    shape = list(x.shape)
    shape[dim] = n - have
    return cat([x, zeros(shape, dtype=x.dtype, device=x.device)], dim)


def _resize_all(x, dims, sizes):
    for d, n in zip(dims, sizes):
        if n is not None:
            x = _resize(x, d, n)
    return x


def _scale(norm, n, forward):
    """The factor of a transform over n points in torch's `norm` mode."""
    if norm is None or norm == "backward":
        return 1.0 if forward else 1.0 / n
    if norm == "forward":
        return 1.0 / n if forward else 1.0
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _swap(norm):
    """The mode of the opposite direction (a Hermitian transform is the real one
    of the other direction)."""
    _scale(norm, 1, True)  # validates
    return {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


def _points(x, dims):
    return math.prod(x.shape[d] for d in dims)


# ---- complex transforms ----------------------------------------------------------------

def _complex_fft(op, x, s, dim, norm, inverse, all_dims_default=True):
    x = _complex_input(op, x)
    dims, sizes = _dims_and_sizes(x, s, dim, all_dims_default)
    x = _resize_all(x, dims, sizes)
    return _C2C.apply(x, dims, inverse, _scale(norm, _points(x, dims), not inverse))


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional discrete Fourier transform along `dim` (padded or trimmed
    to n points)."""
    return _complex_fft("fft", input, None if n is None else (n,), (dim,), norm, False)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of fft."""
    return _complex_fft("ifft", input, None if n is None else (n,), (dim,), norm, True)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional transform (fftn over `dim`)."""
    return _complex_fft("fft2", input, s, dim, norm, False)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of fft2."""
    return _complex_fft("ifft2", input, s, dim, norm, True)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-dimensional transform over `dim` (every dim, or the last len(s))."""
    return _complex_fft("fftn", input, s, dim, norm, False)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of fftn."""
    return _complex_fft("ifftn", input, s, dim, norm, True)


# ---- real-input transforms and their inverses ------------------------------------------

def _rfft(op, x, s, dim, norm, all_dims_default=True):
    x = _real_input(op, x)
    dims, sizes = _dims_and_sizes(x, s, dim, all_dims_default)
    x = _resize_all(x, dims, sizes)
    return _R2C.apply(x, dims, _scale(norm, _points(x, dims), True))


def _irfft(op, x, s, dim, norm, all_dims_default=True):
    x = _complex_input(op, x)
    dims, sizes = _dims_and_sizes(x, s, dim, all_dims_default)
    last = dims[-1]
    n = sizes[-1] if sizes[-1] is not None else 2 * (x.shape[last] - 1)
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    x = _resize_all(x, dims[:-1], sizes[:-1])
    x = _resize(x, last, n // 2 + 1)
    points = _points(x, dims[:-1]) * n
    return _C2R.apply(x, dims, n, _scale(norm, points, False))


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The transform of a real signal along `dim`: its n // 2 + 1 non-negative
    frequencies (the rest are their conjugates)."""
    return _rfft("rfft", input, None if n is None else (n,), (dim,), norm)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of rfft: a real signal of n points (2 (m - 1) by default, for m
    input frequencies)."""
    return _irfft("irfft", input, None if n is None else (n,), (dim,), norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """rfftn over two dims."""
    return _rfft("rfft2", input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of rfft2."""
    return _irfft("irfft2", input, s, dim, norm)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-dimensional transform of a real signal, one-sided along the last dim."""
    return _rfft("rfftn", input, s, dim, norm)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of rfftn."""
    return _irfft("irfftn", input, s, dim, norm)


# ---- Hermitian transforms --------------------------------------------------------------

def _conj(x):
    return x.conj() if x.dtype.is_complex else x


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The transform of a Hermitian-symmetric signal given by its first half: a real
    spectrum of n points."""
    return _irfft("hfft", _conj(_complex_input("hfft", input)), None if n is None else (n,), (dim,), _swap(norm))


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of hfft: the half of a real signal's inverse transform."""
    return _conj(_rfft("ihfft", input, None if n is None else (n,), (dim,), _swap(norm)))


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """hfftn over two dims."""
    return _irfft("hfft2", _conj(_complex_input("hfft2", input)), s, dim, _swap(norm))


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of hfft2."""
    return _conj(_rfft("ihfft2", input, s, dim, _swap(norm)))


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-dimensional transform of a Hermitian-symmetric signal (half along the
    last dim): a real result."""
    return _irfft("hfftn", _conj(_complex_input("hfftn", input)), s, dim, _swap(norm))


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of hfftn."""
    return _conj(_rfft("ihfftn", input, s, dim, _swap(norm)))


# ---- frequencies and shifts ------------------------------------------------------------

def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point transform with spacing d: [0, 1, ...,
    (n - 1) // 2, -(n // 2), ..., -1] / (d n)."""
    from . import arange
    dtype, device = _factory_args(out, dtype, device)
    k = arange(n, dtype=dtype, device=device)
    if n > (n + 1) // 2:
        k[(n + 1) // 2:] -= n
    return _factory_result("fft_fftfreq", k * (1.0 / (n * d)), out, requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of rfft's output: [0, 1, ..., n // 2] / (d n)."""
    from . import arange
    dtype, device = _factory_args(out, dtype, device)
    k = arange(n // 2 + 1, dtype=dtype, device=device)
    return _factory_result("fft_rfftfreq", k * (1.0 / (n * d)), out, requires_grad)


def _factory_args(out, dtype, device):
    """A factory's dtype and device: the ones given, else out's, else the defaults."""
    from . import get_default_dtype
    if out is not None:
        dtype, device = dtype or out.dtype, device or out.device
    return dtype or get_default_dtype(), device


def _factory_result(name, k, out, requires_grad):
    if out is not None:
        _C._write_out(name, out, k, True)
        return out
    return k.requires_grad_(requires_grad) if requires_grad else k


def _shift(x, dim, up):
    from . import roll
    nd = x.ndim
    dims = list(range(nd)) if dim is None else [_wrap(d, nd) for d in ((dim,) if isinstance(dim, int) else dim)]
    if not dims:
        return x
    shifts = [(x.shape[d] if up else x.shape[d] + 1) // 2 for d in dims]
    return roll(x, shifts, dims)


def fftshift(input, dim=None):
    """Rolls the zero frequency to the middle of each of `dim` (all by default)."""
    return _shift(input, dim, True)


def ifftshift(input, dim=None):
    """The inverse of fftshift."""
    return _shift(input, dim, False)


def _install_out():
    """out= as torch's: the result written into `out`, whose dtype must be the
    result's."""
    from ._out import with_out
    namespace = globals()
    for name in __all__:
        if name not in ("fftfreq", "rfftfreq", "fftshift", "ifftshift"):  # (the factories write out themselves)
            namespace[name] = with_out(namespace[name], f"fft_{name}", True)


_install_out()
