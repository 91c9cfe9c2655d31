"""The gamma family's samplers and their pathwise gradients, under torch's private names
(torch._standard_gamma, _standard_gamma_grad, _sample_dirichlet, _dirichlet_grad), which
lucid.distributions' Gamma, Beta, Dirichlet and the laws built on them use. Samples come
from the engine (Marsaglia and Tsang's method, each element from its own Philox stream:
Note [Element streams]); gradients are the implicit reparameterization's,
d x / d alpha = -(dF/d alpha) / (dF/dx), by the approximations of Jankowiak and
Obermeyer (2018) that torch uses (csrc/backend/common/gamma_grads.h)."""

from . import _C
from ._tensor import Tensor
from .autograd.function import Function, once_differentiable

__all__ = ["_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet", "_dirichlet_grad"]


def _generator(generator):
    from ._random import _gen
    return _gen(generator)


def _check_tensor(name, value, position=1, arg="self"):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not {type(value).__name__}")


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, alpha, generator):
        sample = _C.standard_gamma(alpha, _generator(generator))
        ctx.save_for_backward(alpha, sample)
        return sample

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        alpha, sample = ctx.saved_tensors
        return grad * _C.standard_gamma_grad(alpha, sample), None


def _standard_gamma(input, generator=None):
    """A Gamma(input[i], 1) sample per element, in input's (floating) dtype, at least the
    dtype's smallest normal number; differentiable in input by the pathwise gradient."""
    _check_tensor("_standard_gamma", input)
    if input.requires_grad:
        return _StandardGamma.apply(input, generator)
    return _C.standard_gamma(input, _generator(generator))


def _standard_gamma_grad(input, output):
    """d output / d input for standard gamma samples `output` of concentrations `input`."""
    _check_tensor("_standard_gamma_grad", input)
    _check_tensor("_standard_gamma_grad", output, 2, "output")
    return _C.standard_gamma_grad(input.detach(), output.detach())


def _dirichlet_grad(x, alpha, total):
    """The pathwise derivative of a Beta(alpha, total - alpha) sample x in alpha, over
    1 - x: the piece of a Dirichlet sample's gradient for one coordinate."""
    for position, (arg, value) in enumerate((("x", x), ("alpha", alpha), ("total", total)), 1):
        _check_tensor("_dirichlet_grad", value, position, arg)
    return _C.dirichlet_grad(x.detach(), alpha.detach(), total.detach())


def _sample_dirichlet(input, generator=None):
    """Dirichlet(input) samples along the last dim: gammas over their sum, clamped into
    [tiny, 1 - eps] as torch's are. No gradient (Dirichlet.rsample adds torch's)."""
    _check_tensor("_sample_dirichlet", input)
    from ._dtype import finfo
    alpha = input.detach()
    if alpha.dim() == 0:
        raise RuntimeError("_sample_dirichlet: the concentration needs at least one dimension")
    gammas = _C.standard_gamma(alpha, _generator(generator))
    info = finfo(alpha.dtype)
    return (gammas / gammas.sum(-1, keepdim=True)).clamp(info.tiny, 1 - info.eps)


class _Dirichlet(Function):
    """Dirichlet samples with torch's reparameterized gradient: each coordinate's Beta
    marginal's pathwise derivative, projected onto the simplex."""

    @staticmethod
    def forward(ctx, concentration, generator):
        x = _sample_dirichlet(concentration, generator)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        x, concentration = ctx.saved_tensors
        total = concentration.sum(-1, keepdim=True).expand_as(concentration)
        g = _C.dirichlet_grad(x, concentration, total)
        return g * (grad - (x * grad).sum(-1, keepdim=True)), None


def _rsample_dirichlet(concentration, generator=None):
    if concentration.requires_grad:
        return _Dirichlet.apply(concentration, generator)
    return _sample_dirichlet(concentration, generator)
