"""Tensor methods of torch's that lucid composes from its own: output_nr, sgn_,
const_data_ptr, dim_order, nonzero_static (and lucid.nonzero_static), record_stream,
the Python-callable fills apply_ / map_ / map2_, as_subclass, the legacy new, and
is_inference. Installed onto the engine's class by install(), leaving any name it has."""

import builtins
import operator

from . import _dtype as D
from ._tensor import Tensor


def output_nr(self):
    """Which output of the op that made this tensor it is (0 for a leaf)."""
    return self._output_nr


def const_data_ptr(self):
    """The address of the first element (lucid has no read-only pointer of its own)."""
    return self.data_ptr()


def is_inference(self):
    """False: lucid's inference_mode is no_grad with a flag, it makes no inference tensors."""
    return False


def _sgn_(self):
    from ._complex import sgn
    from ._math_more import _in_place
    return _in_place(sgn, "sgn_")(self)


# ---- dim_order (torch/_tensor.py's, over lucid's strides) ------------------------------------
_AMBIGUOUS = "The tensor does not have unique dim order, or cannot map to exact one of the given memory formats."


def _should_swap(shape, strides, a, b):
    """torch's comparison of dims a and b in the order of their strides (-1: a is outer)."""
    def ge(x, y):
        if y == 0:
            return True
        if x == 0:
            return False
        return x >= y or x % y == 0
    sa, sb = strides[a], strides[b]
    if sa == 0 or sb == 0:
        return 0
    if sa == sb:
        return 0 if ge(shape[b], shape[a]) else 1
    if ge(sb, sa):
        return -1
    if ge(sa, sb):
        return 1
    return 0


def dim_order(self, *, ambiguity_check=False):
    """The dims from the outermost to the innermost in memory (a tuple). With
    ambiguity_check=True, RuntimeError when the order is not unique (a size-1 dim, equal
    strides); with a list of memory formats, also unless exactly one of them fits."""
    from ._memory_format import channels_last, memory_format
    if not isinstance(ambiguity_check, builtins.bool):
        if not isinstance(ambiguity_check, list) or not builtins.all(
                isinstance(f, memory_format) for f in ambiguity_check):
            raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    shape, strides = list(self.shape), list(self.stride())
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    check = ambiguity_check if isinstance(ambiguity_check, builtins.bool) else True
    several = builtins.any(x == y for x, y in zip(strides, strides[1:])) or builtins.any(s == 1 for s in shape)
    fits = builtins.sum(1 for f in formats if self.is_contiguous(memory_format=f))
    if check and several and fits != 1:
        raise RuntimeError(_AMBIGUOUS)
    ndim = self.dim()
    if ndim <= 1:
        return tuple(builtins.range(ndim))
    contiguous = self.is_contiguous()
    last = ndim == 4 and self.is_contiguous(memory_format=channels_last)
    if contiguous and not last:
        perm = list(builtins.range(ndim))
    elif last and not contiguous:
        perm = [0, 2, 3, 1]
    else:
        perm = list(builtins.range(ndim - 1, -1, -1))  # insertion sort, innermost first
        for i in builtins.range(1, ndim):
            d1 = i
            for d0 in builtins.range(i - 1, -1, -1):
                c = _should_swap(shape, strides, perm[d0], perm[d1])
                if c > 0:
                    perm[d0], perm[d1] = perm[d1], perm[d0]
                    d1 = d0
                elif c < 0:
                    break
        if ambiguity_check and builtins.any(_should_swap(shape, strides, perm[i], perm[i + 1]) != -1
                                            for i in builtins.range(ndim - 1)):
            raise RuntimeError("The tensor does not have unique dim order.")
        perm.reverse()
    return tuple(perm)


# ---- nonzero_static -----------------------------------------------------------------------
def nonzero_static(input, *, size, fill_value=-1):
    """The first `size` rows of input.nonzero() ([size, input.dim()], int64), padded with
    fill_value when there are fewer: a result whose shape does not depend on the data."""
    if isinstance(size, builtins.bool) or not isinstance(size, builtins.int):
        raise TypeError(f"nonzero_static(): argument 'size' must be int, not {type(size).__name__}")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    from ._creation import full
    from ._shape import cat
    found = input.nonzero()
    k = found.shape[0]
    if k >= size:
        return found[:size]
    pad = full((size - k, input.dim()), fill_value, dtype=D.int64, device=input.device)
    return cat([found, pad], 0)


# ---- record_stream --------------------------------------------------------------------------
def record_stream(self, stream):
    """Marks the tensor as used by work queued on `stream`, so its memory is not reused
    before that work ends. lucid queues all of a GPU's work on one stream (lucid.cuda.Stream
    is that stream), in order, so there is nothing to record: a GPU tensor and a Stream
    are checked and nothing else is done."""
    from .gpu import Stream
    if not isinstance(stream, Stream):  # (torch's binding raises RuntimeError here too)
        raise RuntimeError(f"record_stream(): argument 's' must be a lucid.cuda.Stream, not {type(stream).__name__}")
    if self.device.type != "gpu":
        raise NotImplementedError(f"record_stream() is for GPU tensors; this tensor is on {self.device}")


# ---- apply_ / map_ / map2_ ----------------------------------------------------------------------
def _store_as(dtype):
    """The conversion of a callable's result to an element of dtype, as torch's store_scalar:
    integer dtypes truncate floats (checked for range) and take integers; floating ones take
    real numbers; complex ones complex or real numbers; bool any number."""
    if dtype == D.bool:
        def conv(v):
            return builtins.bool(v) if isinstance(v, (builtins.float, complex)) else builtins.bool(operator.index(v))
        return conv
    if dtype.is_complex:
        def conv(v):
            return v if isinstance(v, complex) else _real(v)
        return conv
    if dtype.is_floating_point:
        return _real
    info = D.iinfo(dtype)

    def conv(v):
        if isinstance(v, complex):
            raise TypeError("'complex' object cannot be interpreted as an integer")
        if not isinstance(v, builtins.float):
            v = operator.index(v)
        if not info.min <= v <= info.max:  # (NaN fails both comparisons)
            raise RuntimeError(f"value cannot be converted to type {dtype._name} without overflow")
        return builtins.int(v)
    return conv


def _real(v):
    if isinstance(v, complex) or not hasattr(type(v), "__float__") and not hasattr(type(v), "__index__"):
        raise TypeError(f"must be real number, not {type(v).__name__}")
    return builtins.float(v)


def _callable_fill(name, self, others, fn):
    """self's elements replaced by fn(self's element, each other's element), in order."""
    if self.requires_grad or builtins.any(o.requires_grad for o in others):
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")
    for i, o in enumerate(others):
        if o.dtype != self.dtype or o.device != self.device:
            arg = "'other'" if name == "map_" else f"argument 'x{i + 1}'"
            raise TypeError(f"{name}: expected {self.type()} for {arg} (got {o.type()})")
    if self.device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")
    columns = [self.reshape(-1).tolist()] + [o.expand(self.shape).reshape(-1).tolist() for o in others]
    conv = _store_as(self.dtype)
    values = [conv(fn(*args)) for args in zip(*columns)]
    from ._creation import tensor
    self.copy_(tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


def _check_other(name, arg, pos, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type(value).__name__}")


def apply_(self, callable):
    """self[i] = callable(self[i]) for every element (CPU tensors only; slow: one Python
    call per element)."""
    return _callable_fill("apply_", self, [], callable)


def map_(self, tensor, callable):
    """self[i] = callable(self[i], tensor[i]), tensor broadcast to self's shape (CPU only)."""
    _check_other("map_", "other", 1, tensor)
    return _callable_fill("map_", self, [tensor], callable)


def map2_(self, x, y, callable):
    """self[i] = callable(self[i], x[i], y[i]), x and y broadcast to self's shape (CPU only)."""
    _check_other("map2_", "x1", 1, x)
    _check_other("map2_", "x2", 2, y)
    return _callable_fill("map2_", self, [x, y], callable)


# ---- as_subclass and new ----------------------------------------------------------------------
def as_subclass(self, cls):
    """self's data (an alias, in the autograd graph) as an instance of cls, a subclass of
    lucid.Tensor; cls.__init__ is not called. lucid has no __torch_function__, so the
    results of ops on it are plain lucid.Tensor."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    return Tensor.__new__(cls, self)


def new(self, *args, **kwargs):
    """The legacy constructor with self's dtype and device: new() (no elements),
    new(*sizes) (uninitialised), new(data) and new(tensor) (an alias; its dtype must be
    self's). device= may name another device of self's type."""
    from ._legacy import _new
    if "device" not in kwargs:
        kwargs["device"] = self.device
    return _new(self.dtype, self.is_cuda, args, kwargs)


def install(namespace):
    """The methods onto Tensor (where it has none of the name) and lucid.nonzero_static."""
    methods = {"sgn_": _sgn_, "const_data_ptr": const_data_ptr, "dim_order": dim_order,
               "nonzero_static": nonzero_static, "record_stream": record_stream, "apply_": apply_, "map_": map_,
               "map2_": map2_, "as_subclass": as_subclass, "new": new, "is_inference": is_inference,
               "output_nr": property(output_nr)}
    for name, value in methods.items():
        if name not in vars(Tensor):
            setattr(Tensor, name, value)
    from ._out import with_out
    namespace.setdefault("nonzero_static", with_out(nonzero_static, "nonzero_static", True))
