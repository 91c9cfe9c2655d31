"""Dtype objects (lucid.float32, ...), the default dtype, finfo and iinfo."""

from __future__ import annotations

__all__ = [
    "dtype", "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
    "float32", "float64", "complex64", "complex128", "half", "float", "double", "short", "int", "long",
    "cfloat", "cdouble", "set_default_dtype", "get_default_dtype", "finfo", "iinfo", "promote_types",
]

import builtins


class dtype:
    """An element type. The integer code is the engine's Dtype enum value."""

    __slots__ = ("_code", "_name", "itemsize", "is_floating_point", "is_complex", "is_signed")

    def __init__(self, code, name, itemsize, kind):
        self._code = code
        self._name = name
        self.itemsize = itemsize
        self.is_floating_point = kind == "f"
        self.is_complex = kind == "c"
        self.is_signed = name not in ("bool", "uint8")

    def __repr__(self):
        return "lucid." + self._name

    __str__ = __repr__

    def __reduce__(self):
        return (_dtype_by_name, (self._name,))

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        if self.is_complex:
            return self
        if self.is_floating_point:
            return complex128 if self is float64 else complex64
        raise TypeError(f"to_complex is not supported for {self}")


_ALL = [
    dtype(0, "bool", 1, "b"), dtype(1, "uint8", 1, "i"), dtype(2, "int8", 1, "i"),
    dtype(3, "int16", 2, "i"), dtype(4, "int32", 4, "i"), dtype(5, "int64", 8, "i"),
    dtype(6, "float16", 2, "f"), dtype(7, "bfloat16", 2, "f"), dtype(8, "float32", 4, "f"),
    dtype(9, "float64", 8, "f"), dtype(10, "complex64", 8, "c"), dtype(11, "complex128", 16, "c"),
]
(bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128) = _ALL
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128
_BY_NAME = {d._name: d for d in _ALL}
# Python's own types as dtypes (torch's: float is float64, complex complex128).
_PY_TYPES = {builtins.float: float64, builtins.int: int64, builtins.bool: bool,
             builtins.complex: complex128}


# torch's scalar type names, which its messages use (Float, Double, Long, ComplexDouble, ...)
_TORCH_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _dtype_by_name(name):
    return _BY_NAME[name]


def _torch_name(d):
    """torch's name for a dtype in messages: 'Float' for lucid.float32, 'Long' for int64."""
    return _TORCH_NAMES[d._name]


def _from_code(code):
    return _ALL[code]


def _check(d, what="dtype"):
    if isinstance(d, builtins.type) and d in _PY_TYPES:  # dtype=float, as PyTorch accepts
        return _PY_TYPES[d]
    if not isinstance(d, dtype):
        raise TypeError(f"{what} must be a lucid.dtype (e.g. lucid.float32), but got "
                        f"{type(d).__name__} {d!r}")
    return d


def set_default_dtype(d):
    """Sets the dtype of Python floats in tensor creation and promotion (the engine
    keeps it, so ops and creation agree)."""
    from . import _C
    _check(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _C.set_default_dtype(d._code)


def get_default_dtype():
    from . import _C
    return _ALL[_C.get_default_dtype()]


def _default_complex():
    """The dtype of Python complex numbers in tensor creation: the complex type of the
    default float's precision (torch's)."""
    return get_default_dtype().to_complex()


def promote_types(type1, type2):
    from . import _C
    return _ALL[_C.promote_types(_check(type1)._code, _check(type2)._code)]


class finfo:
    """Machine limits of a floating-point dtype (torch.finfo)."""

    _TABLE = {
        # bits, eps, max, tiny (smallest normal), resolution
        "float16": (16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001),
        "bfloat16": (16, 0.0078125, 3.3895313892515355e38, 1.1754943508222875e-38, 0.01),
        "float32": (32, 1.1920928955078125e-07, 3.4028234663852886e38, 1.1754943508222875e-38, 1e-06),
        "float64": (64, 2.220446049250313e-16, 1.7976931348623157e308, 2.2250738585072014e-308, 1e-15),
        "complex64": (32, 1.1920928955078125e-07, 3.4028234663852886e38, 1.1754943508222875e-38, 1e-06),
        "complex128": (64, 2.220446049250313e-16, 1.7976931348623157e308, 2.2250738585072014e-308, 1e-15),
    }

    def __init__(self, type=None):
        d = get_default_dtype() if type is None else _check(type, "finfo's argument")
        if d._name not in self._TABLE:
            raise TypeError(f"finfo is not supported for {d}: it needs a floating-point or complex dtype")
        self.dtype = d.to_real()._name
        self.bits, self.eps, self.max, self.tiny, self.resolution = self._TABLE[d._name]
        self.min = -self.max
        self.smallest_normal = self.tiny

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype (torch.iinfo)."""

    def __init__(self, type):
        d = _check(type, "iinfo's argument")
        if d.is_floating_point or d.is_complex:
            raise TypeError(f"iinfo is not supported for {d}: it needs an integer dtype")
        self.dtype = d._name
        self.bits = d.itemsize * 8
        if d is bool:
            self.min, self.max = 0, 1
        elif d is uint8:
            self.min, self.max = 0, 255
        else:
            self.min, self.max = -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"

