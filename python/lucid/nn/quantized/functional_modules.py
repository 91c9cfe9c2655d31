"""FloatFunctional / QFunctional: merges (add, mul, cat, add_relu, ...) as module methods,
so a merge has a module whose output prepare can observe and convert can requantize."""

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.quantization._functional import fake_quantize
from lucid.quantization._qscheme import check_qdtype, quint8

__all__ = ["FloatFunctional", "QFunctional"]


class _Merges:
    def _finish(self, x):
        raise NotImplementedError

    def add(self, x, y):
        return self._finish(x + y)

    def add_scalar(self, x, y):
        return self._finish(x + y)

    def mul(self, x, y):
        return self._finish(x * y)

    def mul_scalar(self, x, y):
        return self._finish(x * y)

    def add_relu(self, x, y):
        return self._finish(F.relu(x + y))

    def cat(self, x, dim=0):
        return self._finish(lucid.cat(list(x), dim=dim))


class FloatFunctional(_Merges, nn.Module):
    """Float merges; after prepare their results feed activation_post_process (after
    prepare_qat, that FakeQuantize also rounds them)."""

    def _finish(self, x):
        observer = getattr(self, "activation_post_process", None)
        return x if observer is None else observer(x)

    def forward(self, x):
        raise RuntimeError("FloatFunctional is not called directly; use its add / mul / cat / "
                           "add_relu / add_scalar / mul_scalar methods")


class QFunctional(_Merges, nn.Module):
    """The converted FloatFunctional: every merge result is put on one calibrated grid."""

    def __init__(self, scale=1.0, zero_point=0, qdtype=quint8):
        super().__init__()
        self.qdtype = check_qdtype(qdtype, "QFunctional")
        self.register_buffer("scale", lucid.as_tensor(scale, dtype=lucid.float32).reshape(()))
        self.register_buffer("zero_point", lucid.as_tensor(zero_point, dtype=lucid.float32).reshape(()))

    def _finish(self, x):
        return fake_quantize(x, self.scale, self.zero_point, self.qdtype.quant_min, self.qdtype.quant_max)

    def forward(self, x):
        raise RuntimeError("QFunctional is not called directly; use its add / mul / cat / "
                           "add_relu / add_scalar / mul_scalar methods")

    @classmethod
    def from_float(cls, mod):
        if not isinstance(mod, FloatFunctional):
            raise TypeError(f"QFunctional.from_float expects a FloatFunctional, got {type(mod).__name__}")
        from ._utils import activation_qparams
        scale, zero_point, qdtype = activation_qparams(mod)
        return cls(scale, zero_point, qdtype)
