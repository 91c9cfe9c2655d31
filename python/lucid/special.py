"""lucid.special: torch.special's functions that lucid's ops compose (on either device,
with their gradients). Not yet here: the gamma family (gammaln, digamma, polygamma,
multigammaln, gammainc), the Bessel and Airy functions, zeta, erfcx and log_ndtr."""

import math

# lucid's ops themselves (the package defines them before it imports this module)
from . import erf, erfc, erfinv, exp2, expm1, log1p, log_softmax, logit, logsumexp, round, sinc, softmax, xlogy
from . import sigmoid as expit  # the logistic sigmoid

__all__ = ["entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "log1p", "log_softmax", "logit",
           "logsumexp", "ndtr", "ndtri", "round", "sinc", "softmax", "xlog1py", "xlogy"]


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
