"""lucid.Tensor's PyTorch-facing API.

lucid.Tensor *is* the engine's class (`_C.Tensor`, a TensorImpl bound with
nanobind): no Python wrapper object sits between a tensor and its data, so a call
costs one nanobind dispatch, and an engine function that returns a tensor the user
already holds returns that same object. The methods below are written in Python
where they only parse arguments, and are installed onto the class at import; the
legacy API (the constructor lucid.Tensor(...), type, type_as) is _legacy.py's.
Sizes, strides and offsets are presented in elements, as PyTorch does; the engine
keeps strides in bytes.
"""

from __future__ import annotations

import builtins

from . import _C
from . import _dtype as D
from ._device import _from_code as _device_from_code, _resolve as _resolve_device
from ._indexing import getitem, setitem
from . import _memory_format
from ._size import Size, _parse_size
from ._storage import TypedStorage, UntypedStorage, set_ as _set_storage

__all__ = ["Tensor"]

_FLOAT_KINDS = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


def _sizes_or_keyword(args, keyword, name, method):
    """A method's sizes given as arguments, or as torch's one keyword (x.view(size=...), x.permute(dims=...))."""
    if not keyword:
        return args
    if args or set(keyword) != {name}:
        raise TypeError(f"{method}() got an unexpected keyword argument '{next(k for k in keyword if k != name)}'"
                        if set(keyword) - {name} else f"{method}() got multiple values for argument '{name}'")
    return (keyword[name],)


class _TensorAPI:
    """Holder of the methods installed onto _C.Tensor (see _install)."""

    # NumPy defers to a tensor's reflected operators (np.float64(0.5) * t, np.ones(3) + t give tensors that
    # keep their gradients, not arrays), as it does for torch's tensors, which set the same priority
    __array_priority__ = 1000

    def __pos__(self):
        from ._aliases import positive
        return positive(self)

    # ---- metadata -----------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._shape)

    def size(self, dim=None):
        shape = self._shape
        if dim is None:
            return Size(shape)
        return shape[_wrap_dim(dim, len(shape))]

    @property
    def dtype(self):
        return D._from_code(self._dtype)

    @property
    def device(self):
        return _device_from_code(self._device)

    @property
    def is_cuda(self):
        return self._device >= 0

    is_gpu = is_cuda

    @property
    def is_cpu(self):
        return self._device < 0

    def dim(self):
        return self.ndim

    ndimension = dim

    def stride(self, dim=None):
        strides = self._strides
        if dim is None:
            return strides
        return strides[_wrap_dim(dim, len(strides))]

    def storage_offset(self):
        return self._storage_offset

    def is_contiguous(self, memory_format=None):
        if memory_format is None:
            return self._is_contiguous()
        return _memory_format.is_contiguous_as(self, memory_format)

    def numel(self):
        return self._numel

    nelement = numel

    def element_size(self):
        return self.itemsize

    def data_ptr(self):
        return self._data_ptr

    def untyped_storage(self):
        return UntypedStorage(self)

    def storage(self):
        return TypedStorage(self)

    set_ = _set_storage

    def __reduce_ex__(self, protocol):
        from ._pickle import reduce_tensor

        return reduce_tensor(self)

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def is_pinned(self):
        return self._storage_kind == "shared"

    # ---- autograd (the engine is csrc/autograd; grad_fn, is_leaf, retain_grad, detach
    # and detach_ are the engine's own methods) ------------------------------------------
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if not self.is_leaf:
            if not value:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to "
                                   "use a computed variable in a subgraph that doesn't require differentiation "
                                   "use var_no_grad = var.detach().")
            return
        if value and self.dtype._name not in _FLOAT_KINDS:
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               f"gradients (got {self.dtype})")
        self._requires_grad = builtins.bool(value)

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self):
        if not self.is_leaf and not self.retains_grad and self.requires_grad:
            import warnings
            warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                          "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
                          "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor.",
                          UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"assigned grad expected to be a Tensor or None but got {type(value).__name__}")
        self._set_grad(None if value is None else value)

    @property
    def data(self):
        return self.detach()

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
        self._set_data(value)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Adds d(self)/d(leaf) into each leaf's .grad (PyTorch's Tensor.backward)."""
        from .autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook):
        """hook(grad) runs when self's gradient is computed; it may return a replacement."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        from .autograd.graph import RemovableHandle
        return RemovableHandle(self._register_hook(hook))

    def register_post_accumulate_grad_hook(self, hook):
        """hook(tensor) runs after backward has added into this leaf's .grad (torch's hook
        for optimizer steps inside backward); it must return None."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        from .autograd.graph import RemovableHandle
        return RemovableHandle(self._register_post_accumulate_grad_hook(hook))

    # ---- reading out -------------------------------------------------------------------
    def item(self):
        return self._item()

    def tolist(self):
        return _C.tolist(self)

    def numpy(self, *, force=False):
        # A tensor that requires grad gives its data (detached), as upstream Lucid and the
        # engine contract do; PyTorch raises there (docs/API.md, "numpy()").
        if self.dtype is D.bfloat16:
            raise TypeError("Got unsupported ScalarType BFloat16: NumPy has no bfloat16; "
                            "convert first, e.g. tensor.float().numpy()")
        import numpy  # loaded only on request: `import lucid` never imports NumPy

        # GPU data is downloaded (the engine contract); host data is shared, zero-copy.
        host = self.detach() if self._device < 0 else self.detach().cpu()
        return numpy.from_dlpack(host)

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        if dtype is not None and arr.dtype != dtype:
            arr = arr.astype(dtype)
        elif copy:
            arr = arr.copy()
        return arr

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """A NumPy function's result on tensors (np.exp(t), t * np.ones(3)) as a tensor sharing its memory, as
        torch's (no gradient flows through NumPy)."""
        from ._creation import from_numpy
        return from_numpy(array)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if self.requires_grad:
            raise RuntimeError("Can't export a Tensor that requires grad through DLPack. "
                               "Use tensor.detach() first.")
        t = self
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            if tuple(dl_device)[0] != 1 or copy is False:
                raise BufferError(f"cannot export a {self.device} tensor to DLPack device {dl_device}")
            t = self.cpu()
        elif copy:
            t = self.clone()
        versioned = max_version is not None and tuple(max_version) >= (1, 0)
        return _C.to_dlpack(t, versioned)

    def __dlpack_device__(self):
        return _C.dlpack_device(self)

    def __repr__(self):
        if self._is_param:
            return "Parameter containing:\n" + _repr(self)
        return _repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self.item(), spec)
        return object.__format__(self, spec)  # (str(t); a format spec is a TypeError, as torch's)

    # ---- Python protocols --------------------------------------------------------------
    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self._select(0, i) for i in range(self._shape[0]))

    def _scalar(self):
        if self._numel != 1:
            raise ValueError("only one element tensors can be converted to Python scalars "
                             f"(this one has {self._numel})")
        return self._item()

    def _real_scalar(self, what):
        v = self._scalar()
        if isinstance(v, complex):
            if v.imag != 0:
                raise RuntimeError(f"value cannot be converted to type {what} without overflow: "
                                   f"{v} has an imaginary part")
            v = v.real
        return v

    def __bool__(self):
        n = self._numel
        if n != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'more than one value' if n else 'no values'}"
                               " is ambiguous")
        return builtins.bool(self._item())

    def __int__(self):
        return builtins.int(self._real_scalar("int64"))

    def __float__(self):
        return builtins.float(self._real_scalar("float64"))

    def __complex__(self):
        return complex(self._scalar())

    def __index__(self):
        if self.dtype.is_floating_point or self.dtype.is_complex or self._numel != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return builtins.int(self._item())

    def __getitem__(self, key):
        return getitem(self, key)

    def __setitem__(self, key, value):
        setitem(self, key, value if isinstance(value, Tensor) else value)

    def nonzero(self, *, as_tuple=False):
        out = self._nonzero()
        if not as_tuple:
            return out
        if self.ndim == 0:  # PyTorch treats a 0-d tensor as 1-d here
            return (self._view([1])._nonzero()._select(1, 0),)
        return tuple(out._select(1, d) for d in range(self.ndim))

    def argwhere(self):
        return self._nonzero()

    # ---- views -------------------------------------------------------------------------
    def view(self, *shape, **size):
        shape = _sizes_or_keyword(shape, size, "size", "view")
        if len(shape) == 1 and isinstance(shape[0], D.dtype):
            return self._view_dtype(shape[0]._code)  # the bytes as another dtype (not differentiable)
        return self._view(_parse_size(shape, "view", allow_negative=True))

    def view_as(self, other):
        return self.view(other.shape)

    def reshape(self, *shape, **keyword):
        shape = _sizes_or_keyword(shape, keyword, "shape", "reshape")
        return self._reshape(_parse_size(shape, "reshape", allow_negative=True))

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def permute(self, *dims, **keyword):
        dims = _sizes_or_keyword(dims, keyword, "dims", "permute")
        return self._permute(_parse_size(dims, "permute", allow_negative=True))

    def transpose(self, dim0, dim1):
        return self._transpose(dim0, dim1)

    swapaxes = swapdims = transpose

    def t(self):
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return self.transpose(0, -1 if self.ndim == 2 else 0)  # (below 2-d: a view of the same shape)

    @property
    def T(self):
        return self.permute(*range(self.ndim - 1, -1, -1))

    @property
    def mT(self):
        if self.ndim < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {self.ndim}-D tensor.")
        return self.transpose(-2, -1)

    def expand(self, *sizes, **keyword):
        sizes = _sizes_or_keyword(sizes, keyword, "size", "expand")
        return self._expand(_parse_size(sizes, "expand", allow_negative=True))

    def expand_as(self, other):
        return self.expand(other.shape)

    def broadcast_to(self, size):
        return self.expand(size)

    def squeeze(self, dim=None):
        if dim is None:
            dims = []
        elif isinstance(dim, (tuple, list)):
            dims = list(dim)
        else:
            dims = [dim]
        return self._squeeze(dims)

    def unsqueeze(self, dim):
        return self._unsqueeze(dim)

    def flatten(self, start_dim=0, end_dim=-1):
        return self._flatten(start_dim, end_dim)

    def unflatten(self, dim, sizes):
        return self._unflatten(dim, _parse_size((sizes,), "unflatten", allow_negative=True))

    def narrow(self, dim, start, length):
        return self._narrow(dim, _as_int(start), length)

    def select(self, dim, index):
        return self._select(dim, _as_int(index))

    def as_strided(self, size, stride, storage_offset=None):
        return self._as_strided(_parse_size((size,), "as_strided"),
                                           list(stride), storage_offset)

    def contiguous(self, memory_format=None):
        if memory_format is None:
            return self._contiguous()
        return _memory_format.to_format(self, memory_format)

    def unbind(self, dim=0):
        return tuple(_C._unbind(self, dim))  # one UnbindBackward0 node for every piece

    # ---- copies and in-place writes -------------------------------------------------------
    def clone(self, *, memory_format=None):
        if memory_format is None:  # preserve_format: lucid's copies keep dense layouts
            return self._clone()
        return _memory_format.clone_as(self, memory_format)

    def __deepcopy__(self, memo):
        """copy.deepcopy (and so deepcopy of a Module): a new leaf with its own copy of
        the data and of .grad, keeping requires_grad, the Parameter flag and a lazy
        module's placeholder mark (nn.parameter). As in torch, a tensor inside an
        autograd graph cannot be deep-copied."""
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment")
        if id(self) in memo:
            return memo[id(self)]
        import copy
        new = self.detach().clone()
        new.requires_grad_(self.requires_grad)
        new._is_param = self._is_param
        if self.grad is not None:
            new.grad = copy.deepcopy(self.grad, memo)
        from .nn import parameter
        parameter._copy_placeholder_mark(self, new)
        memo[id(self)] = new
        return new

    def copy_(self, src, non_blocking=False):
        if not isinstance(src, Tensor):
            raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
        self._copy(src)
        return self

    def fill_(self, value):
        if isinstance(value, Tensor):
            if value.ndim != 0:
                raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                                   f"{value.ndim} dimensions.")
            self._copy(value)
        else:
            self._fill(value)
        return self

    def zero_(self):
        self._fill(0)
        return self

    # ---- conversions -------------------------------------------------------------------------
    def to(self, *args, **kwargs):
        fmt = kwargs.pop("memory_format", None)
        dtype, device, copy = _parse_to_args(self, args, kwargs)
        out = self._to(dtype, device, copy)
        return out if fmt is None else _memory_format.to_format(out, fmt, "to")

    def _to(self, dtype=None, device=None, copy=False):
        impl = self
        if self.requires_grad and _C.is_grad_enabled():  # one recorded copy (ToCopyBackward0)
            dt = None if dtype is None or dtype._code == self._dtype else dtype._code
            dev = None if device is None or device._code == self._device else device._code
            if dt is None and dev is None:
                return self._clone() if copy else self
            return self._clone(dt, dev)
        if device is not None and device._code != impl._device:
            impl = impl._to_device(device._code)
            copy = copy and impl._storage_kind == "shared"  # a relabel shares bytes: honour copy=True
        if dtype is not None and dtype._code != impl._dtype:
            impl = impl._clone(dtype._code)
            copy = False
        if copy:
            impl = impl._clone()
        return impl

    def cpu(self):
        return self._to(device=_resolve_device("cpu"))

    def gpu(self, device=None):
        return self._to(device=_resolve_device("gpu" if device is None else device))

    def cuda(self, device=None, non_blocking=False):
        if isinstance(device, builtins.int):
            device = f"gpu:{device}"
        return self.gpu(device)

    def metal(self):
        """upstream Lucid's .metal(): to the GPU ("metal" is lucid's other name for it)."""
        return self.gpu()

    @property
    def is_metal(self):
        """upstream Lucid's: whether the tensor is on the GPU."""
        return self.device.type == "gpu"

    def pin_memory(self):
        if self.is_pinned():
            return self
        out = _C.empty(list(self._shape), self._dtype, -1, True)
        out.copy_(self)
        return out

    def is_shared(self):
        """False: lucid tensors cross to other processes by value (lucid.multiprocessing)."""
        return False

    def share_memory_(self):
        raise NotImplementedError(
            "share_memory_: lucid tensors cannot live in memory shared between processes; they reach other "
            "processes by value (pickled copies), so children's writes would not come back. Run the training in "
            "one process, or communicate results explicitly (a Queue, lucid.distributed).")

    def eval(self):
        """Runs the GPU's recorded ops and waits until every write to this tensor is done
        (MLX's eval); returns the tensor. A no-op on the CPU."""
        self._eval()
        return self

    def float(self):
        return self._to(D.float32)

    def double(self):
        return self._to(D.float64)

    def half(self):
        return self._to(D.float16)

    def bfloat16(self):
        return self._to(D.bfloat16)

    def long(self):
        return self._to(D.int64)

    def int(self):
        return self._to(D.int32)

    def short(self):
        return self._to(D.int16)

    def char(self):
        return self._to(D.int8)

    def byte(self):
        return self._to(D.uint8)

    def bool(self):
        return self._to(D.bool)

    def cfloat(self):
        return self._to(D.complex64)

    def cdouble(self):
        return self._to(D.complex128)

    # ---- new_* and random fills --------------------------------------------------------------
    def new_empty(self, *args, size=None, dtype=None, device=None, requires_grad=False):
        from ._creation import empty
        return empty(*args, size=size, dtype=dtype or self.dtype, device=device or self.device,
                     requires_grad=requires_grad)

    def new_zeros(self, *args, size=None, dtype=None, device=None, requires_grad=False):
        from ._creation import zeros
        return zeros(*args, size=size, dtype=dtype or self.dtype, device=device or self.device,
                     requires_grad=requires_grad)

    def new_ones(self, *args, size=None, dtype=None, device=None, requires_grad=False):
        from ._creation import ones
        return ones(*args, size=size, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        from ._creation import full
        return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        from ._creation import tensor
        return tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                      requires_grad=requires_grad)

    def uniform_(self, from_=0.0, to=1.0, *, generator=None):
        from ._random import _gen
        _C.uniform_(self, from_, to, _gen(generator))
        return self

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        from ._random import _gen
        _C.normal_(self, mean, std, _gen(generator))
        return self

    def random_(self, from_=0, to=None, *, generator=None):
        from ._random import _gen, _random_bounds
        low, high = _random_bounds(self.dtype, from_, to)
        _C.random_(self, low, high, _gen(generator))
        return self

    def bernoulli_(self, p=0.5, *, generator=None):
        from ._random import _gen
        if isinstance(p, Tensor):
            _C.bernoulli_tensor_(self, p.expand(self.shape), _gen(generator))
        else:
            _C.bernoulli_(self, p, _gen(generator))
        return self

    def bernoulli(self, p=None, *, generator=None):
        from ._random import bernoulli
        return bernoulli(self, p, generator=generator)

    # ---- sorting (_sort.py) -----------------------------------------------------------
    def sort(self, dim=-1, descending=False, stable=False):
        from ._sort import sort
        return sort(self, dim, descending, stable)

    def argsort(self, dim=-1, descending=False, stable=False):
        return _C._argsort(self, dim, bool(descending))

    def msort(self):
        from ._sort import msort
        return msort(self)

    def topk(self, k, dim=-1, largest=True, sorted=True):
        from ._sort import topk
        return topk(self, k, dim, largest, sorted)

    def kthvalue(self, k, dim=-1, keepdim=False):
        from ._sort import kthvalue
        return kthvalue(self, k, dim, keepdim)

    def median(self, dim=None, keepdim=False):
        from ._sort import median
        return median(self, dim, keepdim)

    def nanmedian(self, dim=None, keepdim=False):
        from ._sort import nanmedian
        return nanmedian(self, dim, keepdim)

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        from ._sort import unique
        return unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        from ._sort import unique_consecutive
        return unique_consecutive(self, return_inverse, return_counts, dim)

    # ---- arrangement (_shape_more.py) -----------------------------------------------------
    def ravel(self):
        return self.reshape(-1)

    def diff(self, n=1, dim=-1, prepend=None, append=None):
        from ._shape_more import diff
        return diff(self, n, dim, prepend, append)

    def rot90(self, k=1, dims=(0, 1)):
        from ._shape_more import rot90
        return rot90(self, k, dims)

    def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
        from ._shape_more import repeat_interleave
        return repeat_interleave(self, repeats, dim, output_size=output_size)

    def kron(self, other):
        from ._shape_more import kron
        return kron(self, other)

    def take(self, index):
        return self.reshape(-1)[index]

    # ---- statistics (_stats.py) ---------------------------------------------------------
    def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        from ._stats import quantile
        return quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        from ._stats import nanquantile
        return nanquantile(self, q, dim, keepdim, interpolation=interpolation)

    def mode(self, dim=-1, keepdim=False):
        from ._stats import mode
        return mode(self, dim, keepdim)

    def cov(self, *, correction=1, fweights=None, aweights=None):
        from ._stats import cov
        return cov(self, correction=correction, fweights=fweights, aweights=aweights)

    def corrcoef(self):
        from ._stats import corrcoef
        return corrcoef(self)

    def cummax(self, dim):
        from ._scans import cummax
        return cummax(self, dim)

    def cummin(self, dim):
        from ._scans import cummin
        return cummin(self, dim)

    def logcumsumexp(self, dim):
        from ._scans import logcumsumexp
        return logcumsumexp(self, dim)

    # ---- counting (_counting.py) --------------------------------------------------------
    def bincount(self, weights=None, minlength=0):
        from ._counting import bincount
        return bincount(self, weights, minlength)

    def histc(self, bins=100, min=0, max=0):
        from ._counting import histc
        return histc(self, bins, min, max)

    def histogram(self, bins, *, range=None, weight=None, density=False):
        from ._counting import histogram
        return histogram(self, bins, range=range, weight=weight, density=density)

    def nansum(self, dim=None, keepdim=False, *, dtype=None):
        from ._counting import nansum
        return nansum(self, dim, keepdim, dtype=dtype)

    def nanmean(self, dim=None, keepdim=False, *, dtype=None):
        from ._counting import nanmean
        return nanmean(self, dim, keepdim, dtype=dtype)

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        from ._multinomial import multinomial
        return multinomial(self, num_samples, replacement, generator=generator)


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


def _as_int(v):
    return v.__index__() if isinstance(v, Tensor) else v


def _parse_to_args(self, args, kwargs):
    """Tensor.to's overloads: to(device), to(dtype), to(device, dtype), to(tensor)."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, D.dtype) or (isinstance(a, type) and a in D._PY_TYPES):  # (t.to(float), as in torch)
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, builtins.int)) or hasattr(a, "_code"):
            device = a
        elif isinstance(a, builtins.bool):
            pass  # non_blocking / copy given positionally
        else:
            raise TypeError(f"to() received an invalid argument {a!r}: expected a dtype, a device "
                            "or a Tensor")
    if dtype is not None:
        dtype = D._check(dtype)
    return dtype, None if device is None else _resolve_device(device), copy


def _repr(t, prefix="tensor("):
    """torch._tensor_str._str_intern: data from the engine, then the suffixes."""
    impl = t
    opts = _C.get_print_options()
    indent = len(prefix)
    suffixes = []
    if impl._device >= 0:
        suffixes.append(f"device='{t.device}'")
    dt = t.dtype
    default = D.get_default_dtype()
    if impl._numel == 0:
        if impl.ndim != 1:
            suffixes.append(f"size={tuple(impl._shape)}")
        if dt is not default:
            suffixes.append(f"dtype={dt}")
        data = "[]"
    else:
        if not opts["edgeitems"]:
            suffixes.append(f"size={tuple(impl._shape)}")
        if dt not in (default, D._default_complex(), D.int64, D.bool):
            suffixes.append(f"dtype={dt}")
        data = impl._to_string(indent)
    if impl.grad_fn is not None:
        suffixes.append(f"grad_fn=<{impl.grad_fn.name()}>")
    elif impl._requires_grad:
        suffixes.append("requires_grad=True")
    out = [data]
    last_line_len = len(data) - data.rfind("\n") + 1
    for s in suffixes:
        if last_line_len + len(s) + 2 > opts["linewidth"]:
            out.append(",\n" + " " * indent + s)
            last_line_len = indent + len(s)
        else:
            out.append(", " + s)
            last_line_len += len(s) + 2
    return prefix + "".join(out) + ")"


Tensor = _C.Tensor


def _install():
    """Puts _TensorAPI's methods and properties onto the engine's class."""
    skip = {"__dict__", "__weakref__", "__module__", "__qualname__", "__doc__"}
    for name, value in vars(_TensorAPI).items():
        if name not in skip:
            setattr(Tensor, name, value)
    Tensor.__module__ = "lucid"


_install()
