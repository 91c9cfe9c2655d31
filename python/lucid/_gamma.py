"""polygamma and mvlgamma (torch's functions and Tensor methods), composed from the
engine's digamma, lgamma and Hurwitz zeta (csrc/ops/special_math.h)."""

import math

from . import _C
from ._tensor import Tensor


def _lucid():
    import lucid
    return lucid


def _floating(x):
    return x if x.dtype.is_floating_point else x.to(_lucid().get_default_dtype())


def polygamma(n, input):
    """The n-th derivative of digamma: digamma for n = 0, else (-1)^(n+1) n! zeta(n + 1, x)."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = _floating(input)
    if n == 0:
        return _lucid().digamma(x)
    # n! as a float (inf past 170!, as torch's float arithmetic gives)
    factorial = float(math.factorial(n)) if n <= 170 else math.inf
    return _C.special_zeta(float(n + 1), x) * ((-1.0) ** (n + 1) * factorial)


def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension p: sum_i lgamma(x - i/2) + p (p - 1) / 4 log(pi)."""
    L = _lucid()
    if not isinstance(p, int) or isinstance(p, bool):
        raise TypeError(f"mvlgamma(): argument 'p' must be int, not {type(p).__name__}")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _floating(input)
    if x.numel() and bool((x <= (p - 1) / 2).any()):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    halves = L.arange(p, dtype=x.dtype, device=x.device) * -0.5
    return L.lgamma(x.unsqueeze(-1) + halves).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


def _polygamma_method(self, n):
    return polygamma(n, self)


def _in_place(self, result):
    """self.copy_(result) when result's dtype casts to self's by type promotion, as torch's in-place ops."""
    L = _lucid()
    if not L.can_cast(result.dtype, self.dtype):
        name = lambda d: str(d).split(".")[-1].capitalize().replace("Float32", "Float").replace("Int64", "Long")
        raise RuntimeError(f"result type {name(result.dtype)} can't be cast to the desired output type "
                           f"{name(self.dtype)}")
    return self.copy_(result)


def _polygamma_(self, n):
    return _in_place(self, polygamma(n, self))


def _mvlgamma_(self, p):
    return _in_place(self, mvlgamma(self, p))


def install(namespace):
    namespace["polygamma"], namespace["mvlgamma"] = polygamma, mvlgamma
    Tensor.polygamma, Tensor.polygamma_ = _polygamma_method, _polygamma_
    Tensor.mvlgamma, Tensor.mvlgamma_ = mvlgamma, _mvlgamma_
