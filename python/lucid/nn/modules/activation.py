"""The activation modules beyond the basic ones in layers.py: each stores its
constructor arguments and calls the function of the same name in nn.functional;
extra_repr prints what torch prints."""

from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = ["ReLU6", "ELU", "SELU", "CELU", "Mish", "Softplus", "Softsign", "Softshrink", "Hardshrink", "Hardtanh",
           "Hardswish", "Hardsigmoid", "Tanhshrink", "Threshold", "LogSigmoid", "Softmin", "Softmax2d", "GLU",
           "PReLU", "RReLU"]


def _activation(name, fn, params, repr_fn=None):
    """A Module class whose __init__ takes `params` [(name, default)] like torch's."""

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        names = [p for p, _ in params]
        if len(args) > len(names):
            raise TypeError(f"{name}.__init__() takes at most {len(names)} arguments ({len(args)} given)")
        values = dict(params)
        values.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in values:
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument '{k}'")
            values[k] = v
        for k in names:
            setattr(self, k, values[k])

    def forward(self, input):
        kwargs = {p: getattr(self, p) for p, _ in params}
        if "training" in fn.__code__.co_varnames:
            kwargs["training"] = self.training
        return fn(input, **kwargs)

    def extra_repr(self):
        if repr_fn is not None:
            return repr_fn(self)
        parts = [f"{p}={getattr(self, p)}" for p, _ in params if p != "inplace"]
        if getattr(self, "inplace", False):
            parts.append("inplace=True")
        return ", ".join(parts)

    return type(name, (Module,), {"__init__": __init__, "forward": forward, "extra_repr": extra_repr,
                                  "__module__": __name__})


def _inplace_only(self):
    return "inplace=True" if self.inplace else ""


ReLU6 = _activation("ReLU6", F.relu6, [("inplace", False)], _inplace_only)
ELU = _activation("ELU", F.elu, [("alpha", 1.0), ("inplace", False)])
SELU = _activation("SELU", F.selu, [("inplace", False)], _inplace_only)
CELU = _activation("CELU", F.celu, [("alpha", 1.0), ("inplace", False)])
Mish = _activation("Mish", F.mish, [("inplace", False)], _inplace_only)
Softplus = _activation("Softplus", F.softplus, [("beta", 1.0), ("threshold", 20.0)])
Softsign = _activation("Softsign", F.softsign, [])
Softshrink = _activation("Softshrink", F.softshrink, [("lambd", 0.5)], lambda s: str(s.lambd))
Hardshrink = _activation("Hardshrink", F.hardshrink, [("lambd", 0.5)], lambda s: str(s.lambd))
Hardtanh = _activation("Hardtanh", F.hardtanh, [("min_val", -1.0), ("max_val", 1.0), ("inplace", False)])
Hardswish = _activation("Hardswish", F.hardswish, [("inplace", False)], _inplace_only)
Hardsigmoid = _activation("Hardsigmoid", F.hardsigmoid, [("inplace", False)], _inplace_only)
Tanhshrink = _activation("Tanhshrink", F.tanhshrink, [])
Threshold = _activation("Threshold", F.threshold, [("threshold", 0.0), ("value", 0.0), ("inplace", False)])
LogSigmoid = _activation("LogSigmoid", F.logsigmoid, [])
Softmin = _activation("Softmin", F.softmin, [("dim", None)])
GLU = _activation("GLU", F.glu, [("dim", -1)])
RReLU = _activation("RReLU", F.rrelu, [("lower", 1.0 / 8), ("upper", 1.0 / 3), ("inplace", False)])


class Softmax2d(Module):
    """Softmax over the channel dimension of [C, H, W] or [N, C, H, W] input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3)


class PReLU(Module):
    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        from ..._creation import full
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(full((num_parameters,), init, device=device, dtype=dtype))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"
