"""Complex numbers as torch's (complex64 and complex128):
view_as_real / view_as_complex and the real and imag views (engine views of the same
storage, each differentiable), complex, polar, angle and the conjugates.

lucid's conj is a copy (conj_physical), not torch's lazy conjugate bit: is_conj is
always False and resolve_conj returns its input. A program sees the same values; it
pays one elementwise pass where torch would defer it."""

import math

from . import _dtype as D
from . import _out
from ._tensor import Tensor

__all__ = ["view_as_real", "view_as_complex", "real", "imag", "complex", "polar", "angle", "sgn", "conj",
           "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "is_neg"]


def _check(fn, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def view_as_real(input):
    """[..., 2] real view of a complex tensor (float32 for complex64, float64 for
    complex128): (real, imaginary) pairs."""
    _check("view_as_real", input)
    return input._view_as_real()


def view_as_complex(input):
    """Complex view of a float32 (complex64) or float64 (complex128) tensor [..., 2]
    whose last dim has stride 1."""
    _check("view_as_complex", input)
    return input._view_as_complex()


def real(input):
    """The real part: a view of a complex tensor's real parts; a real tensor itself."""
    _check("real", input)
    return input._view_as_real().select(-1, 0) if input.dtype.is_complex else input


def imag(input):
    """The imaginary part: a view; real tensors have none (torch's RuntimeError)."""
    _check("imag", input)
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return input._view_as_real().select(-1, 1)


def complex(real, imag, *, out=None):
    """real + i imag (parts broadcast; float32 or float16 parts give complex64, float64
    complex128)."""
    from . import broadcast_tensors, stack
    for name, t in (("real", real), ("imag", imag)):
        if not isinstance(t, Tensor):
            raise TypeError(f"complex(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if real.dtype != imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {real.dtype} but got scalar type {imag.dtype} for "
                           "second argument")
    if real.dtype not in (D.float32, D.float64, D.float16, D.bfloat16):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {real.dtype} and "
                           f"{imag.dtype}")
    part = D.float64 if real.dtype == D.float64 else D.float32
    re, im = broadcast_tensors(real.to(part), imag.to(part))
    return stack([re, im], -1)._view_as_complex()


def polar(abs, angle, *, out=None):
    """abs * (cos(angle) + i sin(angle))."""
    return complex(abs * angle.cos(), abs * angle.sin())


def angle(input, *, out=None):
    """The argument atan2(imag, real) of a complex tensor; for a real one pi where it is
    negative, 0 elsewhere (NaN stays NaN), as torch."""
    _check("angle", input)
    from . import atan2, where
    if input.dtype.is_complex:
        return atan2(imag(input), real(input))
    x = input if input.dtype.is_floating_point else input.to(D.get_default_dtype())
    return where(x < 0, math.pi, where(x.isnan(), x, x * 0))


def sgn(input, *, out=None):
    """z / |z| (0 at 0) for complex input; sign(x) for real input (torch.sgn)."""
    _check("sgn", input)
    if not input.dtype.is_complex:
        return input.sign()
    from . import where
    r = input.abs()
    return input / where(r == 0, 1.0, r)


def conj(input):
    """The complex conjugate (a copy; real tensors come back as they are)."""
    _check("conj", input)
    return input._conj()


def conj_physical(input, *, out=None):
    _check("conj_physical", input)
    return input._conj()


def resolve_conj(input):
    return input


def resolve_neg(input):
    return input


def is_conj(input):
    return False


def is_neg(input):
    return False


# out= as torch's (exact dtype, resized): _out.py's wrapper
complex, polar, angle, sgn, conj_physical = (_out.with_out(f, f.__name__, True)
                                             for f in (complex, polar, angle, sgn, conj_physical))


def _set_part(part):
    """Tensor.real = v / Tensor.imag = v: v (a number or tensor, broadcast) copied into the view."""
    def setter(self, value):
        view = part(self)
        if isinstance(value, Tensor):
            view.copy_(value)
        else:
            view.fill_(value)
    return setter


def _install_methods():
    Tensor.real = property(real, _set_part(real))
    Tensor.imag = property(imag, _set_part(imag))
    for name in ("conj", "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "is_neg", "angle", "sgn"):
        setattr(Tensor, name, globals()[name])


_install_methods()
