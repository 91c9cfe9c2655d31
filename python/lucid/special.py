"""lucid.special: torch.special's functions, on either device, with their gradients where
torch has them. lgamma, digamma, i0, i0e, i1, i1e, erfcx and zeta are engine ops (the
Special unit of the elementwise table, csrc/ops/special_math.h); the rest compose lucid's
ops, among them the orthogonal polynomial families (by their recurrences, with torch's
special cases). Not yet here: gammainc/gammaincc, the Bessel functions of the first and
second kind and K0/K1, the Airy function."""

import math

# lucid's ops themselves (the package defines them before it imports this module)
from . import _C
from . import (digamma, erf, erfc, erfinv, exp2, expm1, i0, log1p, log_softmax, logit, logsumexp, polygamma,
               round, sinc, softmax, xlogy)
from . import lgamma as gammaln
from . import sigmoid as expit  # the logistic sigmoid
from . import mvlgamma as multigammaln
bessel_j0, bessel_j1 = _C.special_bessel_j0, _C.special_bessel_j1  # Bessel functions of the first kind
bessel_y0, bessel_y1 = _C.special_bessel_y0, _C.special_bessel_y1  # ... and of the second
modified_bessel_k0, modified_bessel_k1 = _C.special_modified_bessel_k0, _C.special_modified_bessel_k1
scaled_modified_bessel_k0 = _C.special_scaled_modified_bessel_k0  # e^x K0(x), e^x K1(x): no gradient, as torch
scaled_modified_bessel_k1 = _C.special_scaled_modified_bessel_k1
airy_ai = _C.special_airy_ai  # Airy's function Ai: no gradient, as torch
from . import igamma as gammainc  # the regularized incomplete gamma functions P(a, x) and Q(a, x)
from . import igammac as gammaincc

psi = digamma
modified_bessel_i0 = i0
i0e = _C.special_i0e
i1 = modified_bessel_i1 = _C.special_i1
i1e = _C.special_i1e
erfcx = _C.special_erfcx
zeta = _C.special_zeta

__all__ = ["gammainc", "gammaincc", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0",
           "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai", "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i0e",
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


# -- the orthogonal polynomial families: value of degree n at x, as torch's (its special
# cases, trigonometric forms and recurrences, per element in the engine:
# ops/polynomial_math.h), n a number or a tensor broadcast with x; no gradient, as torch --

def _chebyshev(kind, input, n):
    return getattr(_C, f"special_chebyshev_polynomial_{kind}")(input, n)


def chebyshev_polynomial_t(input, n):
    """Chebyshev polynomial of the first kind T_n(x)."""
    return _chebyshev("t", input, n)


def chebyshev_polynomial_u(input, n):
    """Chebyshev polynomial of the second kind U_n(x)."""
    return _chebyshev("u", input, n)


def chebyshev_polynomial_v(input, n):
    """Chebyshev polynomial of the third kind V_n(x)."""
    return _chebyshev("v", input, n)


def chebyshev_polynomial_w(input, n):
    """Chebyshev polynomial of the fourth kind W_n(x)."""
    return _chebyshev("w", input, n)


def _shifted(kind):
    def fn(input, n):
        x = input if input.dtype.is_floating_point else input.to(_lucid().get_default_dtype())
        return _chebyshev(kind, x + x - 1, n)
    fn.__name__ = f"shifted_chebyshev_polynomial_{kind}"
    fn.__doc__ = f"The Chebyshev polynomial {kind.upper()}_n(2x - 1) of [0, 1]."
    return fn


shifted_chebyshev_polynomial_t = _shifted("t")
shifted_chebyshev_polynomial_u = _shifted("u")
shifted_chebyshev_polynomial_v = _shifted("v")
shifted_chebyshev_polynomial_w = _shifted("w")


def hermite_polynomial_h(input, n):
    """The physicists' Hermite polynomial H_n(x): H_k = 2x H_{k-1} - 2(k-1) H_{k-2} (NaN past
    degree 128 in float32, 512 in float64, as torch's)."""
    return _C.special_hermite_polynomial_h(input, n)


def hermite_polynomial_he(input, n):
    """The probabilists' Hermite polynomial He_n(x): He_k = x He_{k-1} - (k-1) He_{k-2}."""
    return _C.special_hermite_polynomial_he(input, n)


def laguerre_polynomial_l(input, n):
    """The Laguerre polynomial L_n(x): k L_k = (2k - 1 - x) L_{k-1} - (k-1) L_{k-2}; 1 at x = 0."""
    return _C.special_laguerre_polynomial_l(input, n)


def legendre_polynomial_p(input, n):
    """The Legendre polynomial P_n(x): k P_k = (2k - 1) x P_{k-1} - (k-1) P_{k-2}."""
    return _C.special_legendre_polynomial_p(input, n)
