"""lucid.dtypes: upstream Lucid's module of the dtype objects (the same objects as
lucid.float32, ...), with the dtype class and numpy's bool_ spelling."""

from ._dtype import (  # noqa: F401
    bfloat16, bool, cdouble, cfloat, complex64, complex128, double, dtype, float, float16, float32, float64, half,
    int, int8, int16, int32, int64, long, short, uint8,
)

bool_ = bool

__all__ = ["bfloat16", "bool", "bool_", "cdouble", "cfloat", "complex64", "complex128", "double", "dtype", "float",
           "float16", "float32", "float64", "half", "int", "int8", "int16", "int32", "int64", "long", "short", "uint8"]
