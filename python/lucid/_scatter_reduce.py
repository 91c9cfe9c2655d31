"""scatter_reduce and index_reduce, as torch's: each element of src reduced into
input's element its index names ("sum", "prod", "mean", "amax", "amin"), over input's
own value too unless include_self=False.

The reductions run in the engine's Scatter primitive (add, multiply, and the extrema,
whose NaNs win as in torch's), on the CPU and the GPU. "sum" and "mean" are written with
differentiable ops, so their gradients come from the ops; "prod", "amax" and "amin"
carry torch's gradients (scatter_reduce_backward): the product's divided by each
factor, with the single-zero case computed without it, and the extrema's shared
evenly among the elements that attain them.
"""

from . import _C
from ._tensor import Tensor
from .autograd.function import Function, once_differentiable

_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _check(name, input, dim, index, src, reduce):
    if reduce not in _REDUCES:
        raise RuntimeError(f"{name}(): reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if not isinstance(src, Tensor):
        raise TypeError(f"{name}(): argument 'src' must be Tensor, not {type(src).__name__}")
    if src.dtype != input.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    if input.dtype.is_complex and reduce in ("amax", "amin"):
        raise RuntimeError(f"{name}(): {reduce} is not supported for complex tensors")


def _identity(reduce, dtype):
    """What a reduction starts from where include_self=False drops input's value."""
    from . import iinfo
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype == _bool():
        return reduce == "amin"
    if dtype.is_floating_point:
        return float("-inf") if reduce == "amax" else float("inf")
    return iinfo(dtype).min if reduce == "amax" else iinfo(dtype).max


def _bool():
    from . import _dtype
    return _dtype.bool


def _reduced(input, dim, index, src, reduce, include_self):
    """The forward: input's copy with src reduced into it (no mean's division)."""
    base = input if include_self else input.scatter(dim, index, _identity(reduce, input.dtype))
    if reduce in ("sum", "mean"):
        return base.scatter_add(dim, index, src)
    return _C._scatter(base, dim, index, src, "multiply" if reduce == "prod" else reduce)


def _counts(input, dim, index, src, include_self):
    """How many values each element of the mean averages (at least 1)."""
    from . import ones_like, zeros_like
    count = (ones_like(input) if include_self else zeros_like(input)).scatter_add(dim, index, ones_like(src))
    return count.masked_fill(count == 0, 1)


class ScatterReduce(Function):
    """prod, amax and amin with torch's gradients."""

    @staticmethod
    def forward(ctx, input, dim, index, src, reduce, include_self):
        out = _reduced(input, dim, index, src, reduce, include_self)
        ctx.dim, ctx.reduce, ctx.include_self = dim, reduce, include_self
        ctx.save_for_backward(input, index, src, out)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        from . import where, zeros_like
        input, index, src, result = ctx.saved_tensors
        dim, reduce, include_self = ctx.dim, ctx.reduce, ctx.include_self
        if reduce == "prod":
            # d/d input = result / input, d/d src = result / src, with a zero factor's
            # exclusive product computed directly (a single zero at its position)
            masked_input = input.masked_fill(input == 0, 1)
            grad_input = grad * _reduced(masked_input, dim, index, src, reduce, include_self) / masked_input
            src_zero = src == 0
            zeros_there = zeros_like(input).scatter_add(dim, index, src_zero.to(input.dtype)).gather(dim, index)
            single_zero = src_zero & (zeros_there == 1)
            without_zero = _reduced(input, dim, index, src.masked_fill(single_zero, 1), reduce, include_self)
            grad_src = where(single_zero, (grad * without_zero).gather(dim, index),
                             (grad * result).gather(dim, index) / src.masked_fill(src_zero, 1))
        else:  # amax / amin: shared evenly among the elements equal to the result
            value = result.gather(dim, index)
            input_is = (input == result).to(input.dtype)
            src_is = (src == value).to(input.dtype)
            share = grad / input_is.scatter_add(dim, index, src_is)
            grad_input = input_is * share
            grad_src = src_is * share.gather(dim, index)
        if not include_self:
            grad_input = grad_input.scatter(dim, index, 0)
        return (grad_input if ctx.needs_input_grad[0] else None, None, None,
                grad_src if ctx.needs_input_grad[3] else None, None, None)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """torch.scatter_reduce: out[index[i][j]][j] = reduce(out[...], src[i][j]) (dim = 0)."""
    _check("scatter_reduce", input, dim, index, src, reduce)
    if reduce in ("prod", "amax", "amin"):
        return ScatterReduce.apply(input, dim, index, src, reduce, include_self)
    out = _reduced(input, dim, index, src, reduce, include_self)
    if reduce == "mean":
        count = _counts(input, dim, index, src, include_self)
        floating = input.dtype.is_floating_point or input.dtype.is_complex
        out = out / count if floating else out.div(count, rounding_mode="floor")
    return out


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Tensor.index_reduce: input's slices along dim named by the 1-d index reduced with
    source's ("prod", "mean", "amax", "amin"), as scatter_reduce over the index spread
    along the other dims."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if not isinstance(index, Tensor) or index.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    nd = max(input.ndim, 1)
    d = dim + nd if dim < 0 else dim
    if not 0 <= d < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    if source.ndim and index.numel() != source.shape[d]:
        raise RuntimeError("index_reduce_(): Number of indices should be equal to source.size(dim)")
    shape = [1] * source.ndim
    if source.ndim:
        shape[d] = -1
    spread = index.reshape(shape).expand(*source.shape) if source.ndim else index.reshape(())
    return scatter_reduce(input, d, spread, source, reduce, include_self=include_self)


def _install():
    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        self.copy_(scatter_reduce(self, dim, index, src, reduce, include_self=include_self))
        return self

    def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
        self.copy_(index_reduce(self, dim, index, source, reduce, include_self=include_self))
        return self

    Tensor.scatter_reduce = scatter_reduce
    Tensor.scatter_reduce_ = scatter_reduce_
    Tensor.index_reduce = index_reduce
    Tensor.index_reduce_ = index_reduce_


_install()
