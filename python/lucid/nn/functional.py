"""lucid.nn.functional: stateless neural-network functions, as torch.nn.functional."""

import builtins as _builtins

from ._reduction import legacy_reduction as _legacy_reduction
from .. import _C, _dtype, _limits
from ..autograd.function import Function as _Function
from ..amp._autocast import policy as _autocast_policy  # Note [Autocast]

__all__ = ["linear", "pad", "relu", "relu_", "leaky_relu", "leaky_relu_", "gelu", "silu", "sigmoid", "tanh", "softmax", "log_softmax",
           "dropout", "mse_loss", "l1_loss", "nll_loss", "cross_entropy"]


def linear(input, weight, bias=None):
    """input @ weight.T + bias (weight is [out_features, in_features] or 1-D)."""
    return _C._linear(input, weight, bias)


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: `pad` lists (left, right) pairs starting from the last
    dim. constant: new elements are `value` (negative pads crop); reflect, replicate,
    circular: new elements are read from the input through an index per padded dim
    (index_select), so the backward is index_add, the adjoint of each mode."""
    from .. import _shape, arange, where

    pads = [int(p) for p in pad]
    nd = input.ndim
    if len(pads) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pads) // 2 > nd:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pads)} and input of dimension {nd}")
    pairs = [(nd - 1 - i, pads[2 * i], pads[2 * i + 1]) for i in range(len(pads) // 2)]
    if mode == "constant":
        fill = 0 if value is None else value
        for d, lo, hi in pairs:
            n = input.shape[d]
            if n + lo + hi < 0:
                raise RuntimeError(f"The input size {n}, plus negative padding {lo} and {hi} resulted in a negative "
                                   f"output size, which is invalid. Check dimension {d} of your input.")
        return _ConstantPad.apply(input, tuple(pads), fill)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    npad = len(pads) // 2
    if not (1 <= npad <= 3 and nd in (npad + 1, npad + 2)):
        raise NotImplementedError("Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now")
    if any(s == 0 for s in input.shape[nd - npad - 1:]):  # a batch dim (the first of npad + 2) may be empty
        raise RuntimeError(f"Expected {npad + 1}D or {npad + 2}D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {list(input.shape)}")
    out_shape = list(input.shape)
    for d, lo, hi in pairs:
        out_shape[d] += lo + hi
    _limits.check_fits(out_shape, f"pad(mode='{mode}') output", _builtins.max(_limits.PY_LIST_BYTES, input.element_size()))
    out = input
    for d, lo, hi in pairs:
        n = input.shape[d]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {d} of input {list(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "circular" and (lo < 0 or hi < 0):  # torch crops first, then wraps around what is left
            out = out.narrow(d, _builtins.max(-lo, 0), n - _builtins.max(-lo, 0) - _builtins.max(-hi, 0))
            lo, hi = _builtins.max(lo, 0), _builtins.max(hi, 0)
        out = _IndexPad.apply(out, d, lo, hi, mode)
    return out


def _pad_source(n, lo, hi, mode, device):
    """The input position each output position i in [-lo, n + hi) of a reflect /
    replicate / circular pad reads, computed on the device (a Python list of them cost
    milliseconds for long signals: stft's pad)."""
    from .. import arange, where
    i = arange(-lo, n + hi, dtype=_dtype.int64, device=device)
    if mode == "reflect":
        return where(i < n, i.abs(), 2 * (n - 1) - i)
    if mode == "replicate":
        return i.clamp(0, n - 1)
    return i.remainder(n)


class _IndexPad(_Function):
    """reflect / replicate / circular padding of one dim d: output position i reads input
    position _pad_source(i). With pads of 0 and more, the forward is a cat of the input and
    its two edges (reflect: flipped; replicate: expanded), one pass, and the gradient is
    the middle's plus each edge's added where it was read. (Reading through index_select
    and adding back through index_add took 2-4x torch's time.) A negative pad (a crop)
    takes those two general routes."""

    @staticmethod
    def forward(ctx, x, d, lo, hi, mode):
        from .. import _shape
        ctx.args = (x.shape, d, lo, hi, mode)
        n = x.shape[d]
        if lo < 0 or hi < 0:
            return x.index_select(d, _pad_source(n, lo, hi, mode, x.device))
        if mode == "reflect":
            parts = [x.narrow(d, 1, lo).flip(d), x, x.narrow(d, n - 1 - hi, hi).flip(d)]
        elif mode == "replicate":
            def edge(at, k):
                shape = list(x.shape)
                shape[d] = k
                return x.narrow(d, at, 1).expand(shape)
            parts = [edge(0, lo), x, edge(n - 1, hi)]
        else:
            parts = [x.narrow(d, n - lo, lo), x, x.narrow(d, 0, hi)]
        return _shape.cat([p for p in parts if p.shape[d]], d)

    @staticmethod
    def backward(ctx, grad):
        shape, d, lo, hi, mode = ctx.args
        n = shape[d]
        if lo < 0 or hi < 0:
            return grad.new_zeros(shape).index_add(d, _pad_source(n, lo, hi, mode, grad.device), grad), None, None, None, None
        g = grad.narrow(d, lo, n).clone()
        left, right = grad.narrow(d, 0, lo), grad.narrow(d, lo + n, hi)
        if mode == "reflect":
            g.narrow(d, 1, lo).add_(left.flip(d))
            g.narrow(d, n - 1 - hi, hi).add_(right.flip(d))
        elif mode == "replicate":
            if lo:
                g.narrow(d, 0, 1).add_(left.sum(d, keepdim=True))
            if hi:
                g.narrow(d, n - 1, 1).add_(right.sum(d, keepdim=True))
        else:
            g.narrow(d, n - lo, lo).add_(left)
            g.narrow(d, 0, hi).add_(right)
        return g, None, None, None, None


def _constant_pad_forward(input, pads, fill):
    """The output made once, filled, with the input's kept part copied into it: one pass
    each (a cat per padded dim took twice torch's time)."""
    nd = input.ndim
    out_shape, kept = list(input.shape), input
    for i in range(len(pads) // 2):
        d, lo, hi = nd - 1 - i, pads[2 * i], pads[2 * i + 1]
        out_shape[d] += lo + hi
    out = input.new_full(out_shape, fill)
    inner = out
    for i in range(len(pads) // 2):
        d, lo, hi = nd - 1 - i, pads[2 * i], pads[2 * i + 1]
        n = input.shape[d]
        keep = n + _builtins.min(lo, 0) + _builtins.min(hi, 0)
        kept = kept.narrow(d, -_builtins.min(lo, 0), keep)
        inner = inner.narrow(d, _builtins.max(lo, 0), keep)
    if kept.numel():
        inner.copy_(kept)
    return out


class _ConstantPad(_Function):
    """constant_pad_nd; its gradient is the pad with the pads negated (torch's
    ConstantPadNdBackward0): the padding cropped, what the pad cropped given zeros."""

    @staticmethod
    def forward(ctx, input, pads, fill):
        ctx.pads = pads
        return _constant_pad_forward(input, pads, fill)

    @staticmethod
    def backward(ctx, grad):
        return _ConstantPad.apply(grad, tuple(-p for p in ctx.pads), 0), None, None


# ---- activations (compositions of engine ops; fused kernels come with issue 5's C++ work) ----
def relu(input, inplace=False):
    # Note [In-place activations] (activations_more.py)
    from .activations_more import _inplace
    return _inplace(input, _C.relu, inplace, "", kernel=lambda x: x.relu_()) if inplace else _C.relu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    # Note [In-place activations] (activations_more.py)
    from .activations_more import _inplace, _slope_check
    _float_only(input, "leaky_relu_cpu")
    # one fused kernel, and the slope op times g for its gradient (ops/activation_functors.h)
    return _inplace(input, lambda x: _C._leaky_relu(x, negative_slope), inplace,
                    _slope_check("leaky_relu", negative_slope))


def relu_(input):
    return relu(input, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def _float_only(input, kernel):
    """torch's refusal of an activation on integer, bool and complex tensors."""
    if not input.is_floating_point():
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype._torch_name(input.dtype)}'")


def gelu(input, approximate="none"):
    """x Phi(x), or its tanh approximation: one fused kernel, and one for its gradient."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_only(input, "GeluKernelImpl")
    return _C._gelu_tanh(input) if approximate == "tanh" else _C._gelu(input)


def silu(input, inplace=False):
    """x sigmoid(x): one fused kernel, and one for its gradient."""
    from .activations_more import _inplace
    if not input.is_complex():  # (torch's silu takes complex tensors, without a gradient)
        _float_only(input, "silu_cpu")
    return _inplace(input, _C._silu, inplace)


def sigmoid(input):
    return _C.sigmoid(input)


def tanh(input):
    return _C.tanh(input)


def _implicit_softmax_dim(name, input, stacklevel):
    """torch's deprecated choice when softmax & co. get no dim (old code relies on it): 0
    for 0-, 1- and 3-d inputs, else 1, with torch's warning."""
    import warnings
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as "
                  "an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if input.dim() in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_softmax_dim("softmax", input, _stacklevel)
    return _C.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_softmax_dim("log_softmax", input, _stacklevel)
    return _C.log_softmax(input, dim, dtype=dtype)


def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    from .._random import rand_like
    # the scaled mask, which the gradient needs; the in-place form multiplies into
    # input (mul_), as ATen's dropout_ does
    noise = input.new_zeros(()) if p == 1.0 else (rand_like(input) >= p).to(input.dtype) / (1.0 - p)
    return input.mul_(noise) if inplace else input * noise


# ---- losses --------------------------------------------------------------------------------------
def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    raise ValueError(f"{reduction} is not a valid value for reduction")


class _MseLoss(_Function):
    """mse_loss of input and target of one shape: torch's node (MseLossBackward0) and its
    backward, 2 / numel (for mean) * (x - t) * g, bit for bit; a pass fewer than the
    composite's gradient (CPU [4096, 1024] forward + backward 17.5 ms against 19.2)."""

    _node_name = "MseLossBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction):
        ctx.save_for_backward(input, target)
        ctx.reduction = reduction
        # square(): the same bits as d * d
        return _reduce((input - target).square(), reduction)

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        d = (x - t) * (2.0 / x.numel() if ctx.reduction == "mean" and x.numel() else 2.0) * grad
        return d if ctx.needs_input_grad[0] else None, -d if ctx.needs_input_grad[1] else None, None


@_legacy_reduction
@_autocast_policy("mse_loss")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if weight is None and getattr(input, "shape", None) == getattr(target, "shape", False):
        return _MseLoss.apply(input, target, reduction)
    return _weighted_reduce((input - target).square(), reduction, weight, input)


@_legacy_reduction
@_autocast_policy("l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    return _weighted_reduce((input - target).abs(), reduction, weight, input)


def _weighted_reduce(loss, reduction, weight, input):
    """mse_loss's and l1_loss's reduction; with a weight of input's size, torch's weighted mean sum(w l) / sum(w)."""
    if weight is None:
        return _reduce(loss, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean":
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


def _class_index_operands(input, target):
    """nll_loss's and cross_entropy's input [N, C, ...] and class-index target [N, ...],
    checked as torch checks them; a 1-D input (one sample) and its 0-d target as a batch of one."""
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if target.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    if target.dtype == _dtype.uint8:  # torch takes Byte class indices too
        target = target.long()
    batched = input.dim() > 1
    scores = input if batched else input.unsqueeze(0)
    tgt = target if batched else target.unsqueeze(0)
    if not tgt.dim() or tgt.shape[0] != scores.shape[0]:
        raise ValueError(f"Expected input batch_size ({scores.shape[0]}) to match target batch_size "
                         f"({tgt.shape[0] if tgt.dim() else 0}).")
    expected = [scores.shape[0]] + list(scores.shape[2:])
    if list(tgt.shape) != expected:
        raise RuntimeError(f"Expected target size {expected}, got {list(tgt.shape)}")
    return scores, tgt


@_legacy_reduction
@_autocast_policy("nll_loss")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """input: [N, C, ...] log-probabilities; target: [N, ...] class indices (int64). One
    engine op, forward and backward (csrc/ops/cross_entropy.cpp, with log_probs)."""
    logp, tgt = _class_index_operands(input, target)
    loss = _C._nll_loss(logp, tgt, weight, int(ignore_index), reduction)
    return loss.squeeze(0) if reduction == "none" and input.dim() == 1 else loss


@_legacy_reduction
@_autocast_policy("cross_entropy")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Class indices (int64 target) or class probabilities (floating target), as torch."""
    if not target.dtype.is_floating_point:
        # class indices: one engine op, forward and backward (csrc/ops/cross_entropy.cpp)
        logits, tgt = _class_index_operands(input, target)
        loss = _C._cross_entropy(logits, tgt, weight, int(ignore_index), reduction, float(label_smoothing))
        return loss.squeeze(0) if reduction == "none" and input.dim() == 1 else loss
    # probabilities
    cls_dim = 1 if input.dim() > 1 else 0
    logp = log_softmax(input, dim=cls_dim)
    n = input.shape[cls_dim]
    tgt = target * (1 - label_smoothing) + label_smoothing / n if label_smoothing else target
    term = logp * tgt
    if weight is not None:
        shape = [1] * logp.dim()
        shape[cls_dim] = n
        term = term * weight.reshape(shape)
    loss = -term.sum(dim=cls_dim)
    if reduction == "mean":  # over the samples (an empty batch gives 0 / 0 = nan, as torch)
        return loss.sum() / loss.numel() if loss.dim() else loss
    return _reduce(loss, reduction)


from .activations_more import *  # noqa: E402,F401,F403
from .activations_more import __all__ as _more  # noqa: E402

__all__ += _more

from .losses_more import *  # noqa: E402,F401,F403
from .losses_more import __all__ as _losses  # noqa: E402

__all__ += _losses

from ._functional_batchnorm import *  # noqa: E402,F401,F403
from ._functional_batchnorm import __all__ as _batchnorm  # noqa: E402
from ._functional_embedding import *  # noqa: E402,F401,F403
from ._functional_embedding import __all__ as _embedding  # noqa: E402
from ._functional_dropout import *  # noqa: E402,F401,F403
from ._functional_dropout import __all__ as _dropout_nd  # noqa: E402

__all__ += _batchnorm + _embedding + _dropout_nd
from ._functional_seq import *  # noqa: E402,F401,F403
from ._functional_seq import __all__ as _seq  # noqa: E402

__all__ += _seq

from ._functional_resample import *  # noqa: E402,F401,F403
from ._functional_resample import __all__ as _resample  # noqa: E402

__all__ += _resample

from ._functional_misc import *  # noqa: E402,F401,F403
from ._functional_misc import __all__ as _misc  # noqa: E402

__all__ += _misc

from ._functional_conv import *  # noqa: E402,F401,F403
from ._functional_conv import __all__ as _conv  # noqa: E402
from ._functional_fractional import *  # noqa: E402,F401,F403
from ._functional_fractional import __all__ as _fractional  # noqa: E402

__all__ += _conv + _fractional

from ._functional_upstream import *  # noqa: E402,F401,F403
from ._functional_upstream import __all__ as _upstream  # noqa: E402

__all__ += _upstream

# upstream Lucid's own functions: positional tables and rotary embedding; noisy linear,
# vector quantization
from ._functional_positional import *  # noqa: E402,F401,F403
from ._functional_positional import __all__ as _positional  # noqa: E402
from ._functional_lucid_layers import *  # noqa: E402,F401,F403
from ._functional_lucid_layers import __all__ as _lucid_layers  # noqa: E402

__all__ += _positional + _lucid_layers
