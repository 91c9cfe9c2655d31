"""Quantized Linear and Linear+ReLU (int8 weight, output on the calibrated grid)."""

import lucid.nn as nn
import lucid.nn.functional as F

from ._utils import check_positive_int
from ._weighted import QuantizedWeighted

__all__ = ["Linear", "LinearReLU"]


class Linear(QuantizedWeighted):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features = check_positive_int(in_features, "in_features", type(self).__name__)
        self.out_features = check_positive_int(out_features, "out_features", type(self).__name__)
        self._init_buffers((out_features, in_features), out_features, out_features if bias else None)

    def _float_op(self, x, weight):
        if x.shape[-1] != self.in_features:
            raise ValueError(f"{type(self).__name__}: expected input with last dimension {self.in_features}, "
                             f"got shape {tuple(x.shape)}")
        return F.linear(x, weight.to(x.dtype), None if self.bias is None else self.bias.to(x.dtype))

    @classmethod
    def from_float(cls, mod):
        """From a calibrated nn.Linear / nn.intrinsic.LinearReLU (after prepare) or a
        trained nn.qat.Linear / LinearReLU (after prepare_qat)."""
        import lucid.nn.intrinsic as nni
        import lucid.nn.qat as nnqat
        accepted = (nnqat.LinearReLU, nni.LinearReLU) if cls._relu else (nnqat.Linear, nn.Linear)
        if type(mod) not in accepted:
            raise TypeError(f"quantized {cls.__name__}.from_float expects one of "
                            f"{[t.__name__ for t in accepted]}, got {type(mod).__name__}")
        linear = mod[0] if isinstance(mod, nni.LinearReLU) else mod
        q = cls(linear.in_features, linear.out_features, bias=linear.bias is not None)
        q._load_quantized(mod, linear.weight, linear.bias)
        return q

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"qdtype={self.out_qdtype.name}")


class LinearReLU(Linear):
    """Quantized Linear with ReLU applied before the output is put on its grid."""

    _relu = True
