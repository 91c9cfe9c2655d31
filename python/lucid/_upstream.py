"""Names upstream Lucid has beside torch's (lucid-3.8-api.md), and torch's conjugate-
transpose properties: isreal, Tensor.mH / H, to_dlpack, is_storage, histogram2d,
lucid.pad and Tensor.pad, Tensor.expand_dims (numpy's name for unsqueeze),
Tensor.squeeze_all, Tensor.cube_ (upstream's in-place cube), lucid.bool_, lucid.eval. Each is a composition of existing ops, so it runs on
either device with their gradients."""

from . import _dtype as D
from ._storage import TypedStorage, UntypedStorage
from ._tensor import Tensor

bool_ = D.bool  # upstream Lucid's (numpy's) spelling


def isreal(input):
    """True where an element is real: a complex tensor's imaginary part is zero; every
    element of a real tensor (torch.isreal)."""
    from . import ones_like
    if input.dtype.is_complex:
        return input.imag == 0
    return ones_like(input, dtype=D.bool)


def _mH(self):
    """The conjugate transpose of the last two dims (torch's Tensor.mH)."""
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {self.ndim}-D "
                           "tensor.")
    from . import adjoint
    return adjoint(self)


def _H(self):
    """The conjugate transpose of a matrix (torch's Tensor.H; a 0-d tensor is itself)."""
    if self.ndim == 0:
        return self
    if self.ndim != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
    return _mH(self)


def to_dlpack(tensor):
    """A DLPack capsule of the tensor's memory (torch.utils.dlpack.to_dlpack)."""
    return tensor.__dlpack__()


def is_storage(obj):
    """Whether obj is a storage (what Tensor.untyped_storage returns)."""
    return isinstance(obj, (UntypedStorage, TypedStorage))


def pad(input, pad, mode="constant", value=None):
    """nn.functional.pad as a top-level function and Tensor method (upstream Lucid's)."""
    from .nn.functional import pad as _pad
    return _pad(input, pad, mode=mode, value=value)


def histogram2d(x, y, bins=10, range=None, density=False):
    """numpy's histogram2d: (hist [nx, ny], x_edges, y_edges) of the points (x[i], y[i]);
    bins a count, a pair of counts or a pair of edge tensors; range [[xmin, xmax],
    [ymin, ymax]]."""
    from . import histogramdd, stack
    if x.shape != y.shape or x.ndim != 1:
        raise RuntimeError(f"histogram2d: x and y must be 1-D tensors of one length, but got {list(x.shape)} and "
                           f"{list(y.shape)}")
    flat_range = None if range is None else [float(v) for pair in range for v in pair]
    bins = list(bins) if isinstance(bins, (list, tuple)) else bins
    hist, edges = histogramdd(stack([x, y], -1), bins, range=flat_range, density=density)
    return hist, edges[0], edges[1]


def _expand_dims(self, axis):
    """numpy's expand_dims: a size-1 dim inserted at each of `axis` (an int or a tuple,
    positions in the result)."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    nd = self.ndim + len(axes)
    positions = sorted(a % nd if -nd <= a < nd else _out_of_range(a, nd) for a in axes)
    if len(set(positions)) != len(positions):
        raise ValueError(f"expand_dims: repeated axis in {axis}")
    out = self
    for p in positions:
        out = out.unsqueeze(p)
    return out


def eval(*tensors):
    """Computes the tensors given (any nesting of lists, tuples and dicts of them) and
    waits for them: a lazy GPU runs what it has recorded (upstream Lucid's and MLX's
    eval). Returns None, as mx.eval does."""
    devices = set()

    def visit(x):
        if isinstance(x, Tensor):
            if x.device.type == "gpu":
                devices.add(x.device.index or 0)
        elif isinstance(x, (list, tuple)):
            for v in x:
                visit(v)
        elif isinstance(x, dict):
            for v in x.values():
                visit(v)
        else:
            raise TypeError(f"eval() takes tensors, or lists, tuples and dicts of them, not {type(x).__name__}")

    visit(tensors)
    from . import gpu
    for d in sorted(devices):
        gpu.synchronize(d)


def _out_of_range(a, nd):
    raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {a})")


def install(namespace):
    for fn in (isreal, to_dlpack, is_storage, pad, histogram2d, eval):
        namespace[fn.__name__] = fn
    namespace["bool_"] = bool_
    Tensor.mH = property(_mH)
    Tensor.H = property(_H)
    Tensor.pad = pad
    Tensor.isreal = isreal
    Tensor.expand_dims = _expand_dims
    Tensor.squeeze_all = lambda self: self.squeeze()
    Tensor.cube_ = lambda self: self.pow_(3)
