"""torch functions and Tensor methods that real programs call and lucid lacked, composed from
lucid's ops (so they run on either device, with those ops' gradients): deg2rad, rad2deg,
cross, dist, aminmax, diagflat, renorm, vander, unravel_index, the trapezoid rule
(trapezoid, trapz, cumulative_trapezoid), the scatters into a slice, a select or a
diagonal, empty_strided, scalar_tensor, split_with_sizes; the methods fill_diagonal_,
sum_to_size, new_empty_strided, resize_ and the in-place cumsum_, cumprod_, addmm_, addmv_,
baddbmm_; the in-place view ops (unsqueeze_, t_, transpose_, ...: self becomes the view,
with its history); the random fills exponential_, geometric_, cauchy_ and log_normal_ (from
uniform_ draws, as torch's CPU kernels transform theirs; the streams are lucid's); and
torch's top-level names for nn.functional's activations (torch.selu, torch.relu_, ...)."""

import itertools
import math
import operator
import warnings

from . import _dtype as D
from . import return_types
from ._tensor import Tensor


def _lucid():
    import lucid
    return lucid


def _as_float(input):
    """Integer and bool inputs as the default float dtype, as torch's float-only ops take them."""
    return input if input.dtype.is_floating_point or input.dtype.is_complex else input.to(_lucid().get_default_dtype())


def deg2rad(input):
    return _as_float(input) * (math.pi / 180.0)


def rad2deg(input):
    return _as_float(input) * (180.0 / math.pi)


def cross(input, other, dim=None, *, out=None):
    """linalg.cross; without `dim`, the first dim of size 3 (torch's deprecated default)."""
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.", UserWarning, stacklevel=2)
        shape = _lucid().broadcast_shapes(input.shape, other.shape)
        dim = next((d for d, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError(f"no dimension of size 3 in input, got shape {list(shape)}")
    result = _lucid().linalg.cross(input, other, dim=dim)
    return result if out is None else out.copy_(result)


def dist(input, other, p=2):
    """The p-norm of input - other (broadcast)."""
    return _lucid().linalg.vector_norm(input - other, p)


def aminmax(input, *, dim=None, keepdim=False):
    if input.numel() == 0 and dim is None:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    if dim is None:
        lo, hi = input.min(), input.max()
        if keepdim:
            lo, hi = lo.reshape([1] * input.ndim), hi.reshape([1] * input.ndim)
    else:
        lo, hi = input.amin(dim, keepdim=keepdim), input.amax(dim, keepdim=keepdim)
    return return_types.aminmax((lo, hi))


def diagflat(input, offset=0):
    return _lucid().diag(input.flatten(), offset)


def renorm(input, p, dim, maxnorm):
    """Each slice input.select(dim, i) whose p-norm exceeds maxnorm scaled to norm maxnorm
    (times maxnorm / (norm + 1e-7), as torch's)."""
    if not input.dtype.is_floating_point and not input.dtype.is_complex:
        raise RuntimeError(f"renorm: expected a floating point or complex input, got {input.dtype}")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    dim = dim % input.ndim
    others = [d for d in range(input.ndim) if d != dim]
    norm = _lucid().linalg.vector_norm(input, p, dim=others, keepdim=True)
    factor = _lucid().where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).to(norm.dtype)
    return input * factor


def vander(x, N=None, increasing=False):
    """Columns x^0 .. x^(N-1) (or the reverse), N = len(x) by default; ints stay int64."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    base = x.to(D.int64) if not (x.dtype.is_floating_point or x.dtype.is_complex) else x
    powers = _lucid().arange(n, device=x.device)
    if not increasing:
        powers = powers.flip(0)
    if n == 0:
        return base.new_zeros((x.shape[0], 0))
    return base.unsqueeze(1).pow(powers.to(base.dtype) if base.dtype.is_floating_point else powers)


def unravel_index(indices, shape):
    """The coordinates of flat indices in `shape`, one tensor a dim (torch's modular
    arithmetic: indices outside the shape wrap, as torch's do)."""
    lucid = _lucid()
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index(): argument 'indices' must be a Tensor, not {type(indices).__name__}")
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype == D.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {D._torch_name(indices.dtype)}")
    if isinstance(shape, int):
        shape = (shape,)
    if not all(isinstance(d, int) for d in shape):
        raise TypeError(f"expected 'shape' sequence to only contain ints, but got {shape}")
    shape = tuple(shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if not all(d > 0 for d in shape) and indices.numel() > 0:
        raise ValueError(f"'shape' cannot have zero dimensions when 'indices' is non-empty, but got {shape}")
    coefs = list(reversed(list(itertools.accumulate(reversed(shape[1:] + (1,)), func=operator.mul))))
    flat = indices.to(D.int64).unsqueeze(-1)
    out = flat.floor_divide(lucid.tensor(coefs, dtype=D.int64, device=indices.device)) % lucid.tensor(
        list(shape), dtype=D.int64, device=indices.device)
    return out.unbind(-1)


def _spacing(y, x, dx, dim):
    """The widths between samples along dim: diff(x) for sample points, else dx."""
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: x and dx both given")
    if x is None:
        return 1.0 if dx is None else dx
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"trapezoid: There must be one `x` value for each sample point, got {x.shape[0]} "
                               f"and {y.shape[dim]}")
        view = [1] * y.ndim
        view[dim] = x.shape[0] - 1
        return x.diff().reshape(view)
    return x.diff(dim=dim)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    dim = dim % max(y.ndim, 1)
    if y.shape[dim] == 0:
        return _as_float(y).sum(dim) * 0
    y = _as_float(y)
    n = y.shape[dim]
    pairs = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    return (pairs * _spacing(y, x, dx, dim)).sum(dim) / 2


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    dim = dim % max(y.ndim, 1)
    y = _as_float(y)
    n = y.shape[dim]
    if n == 0:
        return y.narrow(dim, 0, 0)
    pairs = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    return (pairs * _spacing(y, x, dx, dim) / 2).cumsum(dim)


def _scatter_into(input, src, view_of):
    """input's copy with src written into the view view_of(copy) (gradients to both)."""
    out = input.clone()
    view = view_of(out)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(view.shape)}")
    view.copy_(src)
    return out


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    return _scatter_into(input, src, lambda t: t.__getitem__(
        (slice(None),) * (dim % input.ndim) + (slice(start, end, step),)))


def select_scatter(input, src, dim, index):
    return _scatter_into(input, src, lambda t: t.select(dim, index))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2))


# ---- tensor methods ----

def fill_diagonal_(self, fill_value, wrap=False):
    """The main diagonal (of a matrix, or of a tensor whose dims are all equal) set to
    fill_value; wrap: a tall matrix's diagonal starts again every columns + 1 rows (numpy's)."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    lucid = _lucid()
    if self.ndim > 2:
        if any(n != self.shape[0] for n in self.shape):
            raise RuntimeError("all dimensions of input must be of equal length")
        index = (lucid.arange(self.shape[0], device=self.device),) * self.ndim
    else:
        rows, cols = self.shape
        end = rows * cols if wrap else min(rows, cols) * cols
        flat = lucid.arange(0, end, cols + 1, device=self.device)
        index = (flat // cols, flat % cols)
    self[index] = fill_value
    return self


def sum_to_size(self, *size):
    """Sums over the leading dims and the dims `size` has as 1, to `size` (which must expand to self's shape)."""
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
    lead = self.ndim - len(size)
    if lead < 0 or any(s != 1 and s != self.shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(self.shape)}}}.")
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size) if s == 1 and self.shape[lead + i] != 1]
    return (self.sum(dims, keepdim=True) if dims else self).reshape(size)


def split_with_sizes(input, split_sizes, dim=0):
    sizes = [int(s) for s in split_sizes]
    n = input.shape[dim]
    if sum(sizes) != n or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                           f"dimension {dim % input.ndim}), but got split_sizes={sizes}")
    return input.split(sizes, dim)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor with the given strides over a storage just large enough."""
    lucid = _lucid()
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(size)} and {len(stride)}")
    if any(s < 0 for s in size) or any(st < 0 for st in stride):
        raise RuntimeError(f"empty_strided: sizes and strides must be non-negative, got {list(size)} and "
                           f"{list(stride)}")
    needed = 0 if 0 in size else 1 + sum((n - 1) * st for n, st in zip(size, stride))
    out = lucid.empty(needed, dtype=dtype, device=device).as_strided(size, stride)
    return out.requires_grad_() if requires_grad else out


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, **kwargs):
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A 0-dim tensor of the default float dtype (whatever s's type), as torch's."""
    lucid = _lucid()
    return lucid.tensor(s, dtype=dtype or lucid.get_default_dtype(), device=device, requires_grad=requires_grad)


# ---- the in-place view ops: self takes the view's shape and strides (and history) ----

def _view_in_place(name, view_of):
    def method(self, *args, **kwargs):
        self._become_view(view_of(self, *args, **kwargs))
        return self
    method.__name__ = name
    return method


def _contiguous_strides(size):
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def resize_(self, *size, memory_format=None):
    """self as a tensor of `size` over its storage from its offset, contiguous (or
    channels_last); a storage too small is replaced by a larger one holding its bytes
    (torch reallocates in place: other views keep the old storage here)."""
    from ._size import _parse_size
    lucid = _lucid()
    size = tuple(_parse_size(size, "resize_"))
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if memory_format in (None, lucid.contiguous_format, lucid.preserve_format):
        stride = _contiguous_strides(size)
    else:
        stride = lucid.empty(*size, memory_format=memory_format, device="cpu").stride()
    numel = math.prod(size)
    offset = self.storage_offset()
    held = self.untyped_storage().nbytes() // self.element_size()
    if offset + numel > held:
        grown = lucid.empty(offset + numel, dtype=self.dtype, device=self.device)
        if held:
            grown[:held] = self.as_strided((held,), (1,), 0)
        self._set_data(grown.as_strided(size, stride, offset))
    else:
        self._set_data(self.as_strided(size, stride, offset))
    return self


def resize_as_(self, other, *, memory_format=None):
    return resize_(self, tuple(other.shape), memory_format=memory_format)


# ---- the random fills, from uniform draws ----

def _continuous(self, what):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{what} distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {D._torch_name(self.dtype)}")


def exponential_(self, lambd=1.0, *, generator=None):
    _continuous(self, "Exponential")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    u = self.uniform_(generator=generator)
    # -log(1 - u) / lambda, u in [0, 1): finite, and 0 only at u = 0
    return self.copy_(-(1.0 - u).log() / lambd)


def geometric_(self, p, *, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    u = _lucid().empty(self.shape, dtype=D.float64, device=self.device).uniform_(generator=generator)
    # the number of Bernoulli(p) trials up to the first success: ceil(log(1 - u) / log(1 - p)), at least 1
    trials = ((1.0 - u).log() / math.log1p(-p)).ceil().clamp(min=1.0)
    return self.copy_(trials.to(self.dtype))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    _continuous(self, "Cauchy")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    u = self.uniform_(generator=generator)
    return self.copy_(median + sigma * (math.pi * (u - 0.5)).tan())


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"log_normal_cpu\" not implemented for '{D._torch_name(self.dtype)}'")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return self.copy_(self.normal_(mean, std, generator=generator).exp())


def install(namespace):
    """lucid's functions and Tensor's methods from this module."""
    from ._math_more import _in_place
    for fn in (deg2rad, rad2deg, cross, dist, aminmax, diagflat, renorm):
        namespace[fn.__name__] = fn
        setattr(Tensor, fn.__name__, fn)
    for fn in (deg2rad, rad2deg, renorm):
        setattr(Tensor, fn.__name__ + "_", _in_place(fn, fn.__name__ + "_"))
    for fn in (vander, unravel_index, trapezoid, trapz, cumulative_trapezoid, slice_scatter, select_scatter,
               diagonal_scatter):
        namespace[fn.__name__] = fn
    for fn in (slice_scatter, select_scatter, diagonal_scatter):
        setattr(Tensor, fn.__name__, fn)
    for fn in (exponential_, geometric_, cauchy_, log_normal_, fill_diagonal_, sum_to_size, split_with_sizes,
               new_empty_strided):
        setattr(Tensor, fn.__name__, fn)
    for fn in (split_with_sizes, empty_strided, scalar_tensor):
        namespace[fn.__name__] = fn
    ns = namespace
    Tensor.squeeze_ = _view_in_place("squeeze_", lambda self, dim=None: self.squeeze() if dim is None
                                     else self.squeeze(dim))
    Tensor.unsqueeze_ = _view_in_place("unsqueeze_", lambda self, dim: self.unsqueeze(dim))
    Tensor.t_ = _view_in_place("t_", lambda self: self.t())
    Tensor.transpose_ = _view_in_place("transpose_", lambda self, dim0, dim1: self.transpose(dim0, dim1))
    Tensor.swapaxes_ = _view_in_place("swapaxes_", lambda self, axis0, axis1: self.transpose(axis0, axis1))
    Tensor.swapdims_ = _view_in_place("swapdims_", lambda self, dim0, dim1: self.transpose(dim0, dim1))
    Tensor.as_strided_ = _view_in_place("as_strided_", lambda self, size, stride, storage_offset=None:
                                        self.as_strided(size, stride, storage_offset))
    Tensor.resize_, Tensor.resize_as_ = resize_, resize_as_
    Tensor.cumsum_ = _in_place(lambda self, dim, *, dtype=None: ns["cumsum"](self, dim, dtype=dtype), "cumsum_")
    Tensor.cumprod_ = _in_place(lambda self, dim, *, dtype=None: ns["cumprod"](self, dim, dtype=dtype), "cumprod_")
    Tensor.addmm_ = _in_place(lambda self, mat1, mat2, *, beta=1, alpha=1: ns["addmm"](self, mat1, mat2, beta=beta,
                                                                                          alpha=alpha), "addmm_")
    Tensor.addmv_ = _in_place(lambda self, mat, vec, *, beta=1, alpha=1: ns["addmv"](self, mat, vec, beta=beta,
                                                                                        alpha=alpha), "addmv_")
    Tensor.baddbmm_ = _in_place(lambda self, b1, b2, *, beta=1, alpha=1: ns["baddbmm"](self, b1, b2, beta=beta,
                                                                                          alpha=alpha), "baddbmm_")
    # torch's top-level names for nn.functional's activations (torch.selu, torch.relu_, ...)
    F = namespace["nn"].functional
    for name in ("relu_", "selu", "selu_", "celu", "celu_", "threshold", "threshold_", "rrelu", "rrelu_", "prelu",
                 "hardshrink"):
        namespace[name] = getattr(F, name)
    Tensor.hardshrink = lambda self, lambd=0.5: F.hardshrink(self, lambd)
    Tensor.prelu = lambda self, weight: F.prelu(self, weight)
