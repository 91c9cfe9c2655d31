"""lucid.special: torch.special's functions, on either device, with their gradients where
torch has them. lgamma, digamma, i0, i0e, i1, i1e, erfcx and zeta are engine ops (the
Special unit of the elementwise table, csrc/ops/special_math.h); the rest compose lucid's
ops. Not yet here: gammainc/gammaincc, the Bessel functions of the first and second kind
and K0/K1, the Airy function, the orthogonal polynomial families."""

import math

# lucid's ops themselves (the package defines them before it imports this module)
from . import _C
from . import (digamma, erf, erfc, erfinv, exp2, expm1, i0, log1p, log_softmax, logit, logsumexp, polygamma,
               round, sinc, softmax, xlogy)
from . import lgamma as gammaln
from . import sigmoid as expit  # the logistic sigmoid
from . import mvlgamma as multigammaln

psi = digamma
modified_bessel_i0 = i0
i0e = _C.special_i0e
i1 = modified_bessel_i1 = _C.special_i1
i1e = _C.special_i1e
erfcx = _C.special_erfcx
zeta = _C.special_zeta

__all__ = ["digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i0e",
           "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax",
           "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]


def _lucid():
    import lucid
    return lucid


def xlog1py(input, other):
    """input * log1p(other), 0 where input is 0 (unless other is NaN)."""
    L = _lucid()
    if not isinstance(input, L.Tensor):
        input = L.tensor(input, device=other.device)
    if not isinstance(other, L.Tensor):
        other = L.tensor(other, device=input.device)
    product = input * L.log1p(other)
    return L.where((input == 0) & ~other.isnan(), L.zeros_like(product), product)


def entr(input):
    """-x log x elementwise: 0 at 0, -inf below 0."""
    L = _lucid()
    x = input if input.dtype.is_floating_point else input.to(L.get_default_dtype())
    positive = x > 0
    safe = L.where(positive, x, L.ones_like(x))
    value = L.where(positive, -safe * safe.log(), L.zeros_like(x))
    return L.where(x < 0, L.full_like(x, -math.inf), value)


def ndtr(input):
    """The standard normal distribution's CDF."""
    L = _lucid()
    x = input if input.dtype.is_floating_point else input.to(L.get_default_dtype())
    return 0.5 * L.erfc(x * -math.sqrt(0.5))


def ndtri(input):
    """ndtr's inverse: the standard normal quantile of probability p."""
    L = _lucid()
    p = input if input.dtype.is_floating_point else input.to(L.get_default_dtype())
    return math.sqrt(2.0) * L.erfinv(2 * p - 1)


def log_ndtr(input):
    """log of the standard normal CDF, accurate far into both tails (torch's: through erfcx
    below -1, log1p of the upper tail above)."""
    L = _lucid()
    x = input if input.dtype.is_floating_point else input.to(L.get_default_dtype())
    lower = x < -1
    # each branch sees only inputs it is meant for, so the other's gradient stays finite
    xl, xu = L.where(lower, x, L.full_like(x, -1.0)), L.where(lower, L.zeros_like(x), x)
    low = L.log(erfcx(xl * -math.sqrt(0.5)) * 0.5) - xl * xl * 0.5
    high = L.log1p(L.erfc(xu * math.sqrt(0.5)) * -0.5)
    return L.where(lower, low, high)


def spherical_bessel_j0(input):
    """sin(x) / x: 1 at 0, 0 at +-inf."""
    L = _lucid()
    x = input if input.dtype.is_floating_point else input.to(L.get_default_dtype())
    zero, infinite = x == 0, x.isinf()
    safe = L.where(zero | infinite, L.ones_like(x), x)
    return L.where(zero, L.ones_like(x), L.where(infinite, L.zeros_like(x), L.sin(safe) / safe))
