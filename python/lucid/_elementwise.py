"""Python-level pieces of the elementwise op set: the functions whose arguments
are dtypes (result_type, can_cast). The ops themselves are engine functions
(csrc/ops/elementwise_table.h, csrc/bindings/elementwise_extra.cpp)."""

from . import _C
from ._dtype import dtype as _dtype, _ALL

__all__ = ["result_type", "can_cast"]


def result_type(tensor1, tensor2):
    """torch.result_type: the dtype an op on these tensors / numbers computes in."""
    return _ALL[_C._result_type(tensor1, tensor2)]


def can_cast(from_, to):
    """torch.can_cast: whether casting from_ to `to` is allowed by type promotion."""
    for name, d in (("from_", from_), ("to", to)):
        if not isinstance(d, _dtype):
            raise TypeError(f"can_cast(): argument '{name}' must be lucid.dtype, not {type(d).__name__}")
    return _C._can_cast(from_._code, to._code)
