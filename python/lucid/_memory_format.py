"""Memory formats, as torch's: how the elements of a 4-d (5-d) image batch lie in memory.

contiguous_format is row-major [N, C, H, W]; channels_last keeps the same shape and
dims but stores each pixel's channels together ([N, H, W, C] memory, strides
(HWC, 1, WC, C)); channels_last_3d is the same for [N, C, D, H, W]. preserve_format
(the default of clone and the *_like functions) keeps a dense input's own strides.
cuDNN's tensor-core convolutions work in channels-last memory, so a channels-last
batch (and a model moved with `.to(memory_format=lucid.channels_last)`) runs its GPU
convolutions without layout copies. Elementwise ops keep dense layouts by themselves.
"""


class memory_format:
    """A memory format (lucid.contiguous_format, channels_last, channels_last_3d, preserve_format)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"lucid.{self._name}"

    def __reduce__(self):  # pickled by name: unpickling gives the same object
        return self._name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

# The order of the dims from the innermost (stride 1) out, per channels-last format and rank.
_CHANNELS_LAST_ORDER = {(channels_last, 4): (1, 3, 2, 0), (channels_last_3d, 5): (1, 4, 3, 2, 0)}


def _check(fmt, what):
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{what}(): argument 'memory_format' must be lucid.memory_format, not {type(fmt).__name__}")
    return fmt


def _order(t, fmt, what):
    """The innermost-first dim order of `fmt` for t's rank; raises as torch for a wrong rank."""
    order = _CHANNELS_LAST_ORDER.get((fmt, t.ndim))
    if order is None:
        rank = 4 if fmt is channels_last else 5
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")
    return order


def is_contiguous_as(t, fmt):
    """Tensor.is_contiguous(memory_format=fmt): t's strides are fmt's for its shape (dims
    of size 1 may have any stride, as in torch)."""
    fmt = _check(fmt, "is_contiguous")
    if fmt is contiguous_format:
        return t._is_contiguous()
    if fmt is preserve_format:
        raise RuntimeError("is_contiguous: preserve_format is not a memory layout to check against")
    order = _CHANNELS_LAST_ORDER.get((fmt, t.ndim))
    if order is None:
        return False
    shape, stride = t.shape, t.stride()
    expected = 1
    for d in order:
        if shape[d] != 1:
            if stride[d] != expected:
                return False
            expected *= shape[d]
    return True


def suggest(t):
    """torch's suggest_memory_format: channels_last(_3d) for a tensor laid out that way
    (and not also plainly contiguous), else contiguous_format."""
    for fmt, rank in ((channels_last, 4), (channels_last_3d, 5)):
        if t.ndim == rank and not t._is_contiguous() and is_contiguous_as(t, fmt):
            return fmt
    return contiguous_format


def to_format(t, fmt, what="contiguous"):
    """t laid out as `fmt` (t itself when it already is): a recorded copy, so gradients
    flow through it. preserve_format returns t."""
    fmt = _check(fmt, what)
    if fmt is preserve_format:
        return t
    if fmt is contiguous_format:
        return t._contiguous()
    order = _order(t, fmt, what)
    if is_contiguous_as(t, fmt):
        return t
    outer_first = order[::-1]  # e.g. (0, 2, 3, 1): [N, H, W, C]
    back = [outer_first.index(d) for d in range(t.ndim)]
    return t.permute(*outer_first)._contiguous().permute(*back)


def clone_as(t, fmt):
    """Tensor.clone(memory_format=fmt): a new copy in fmt's layout (preserve_format: t's own
    layout when dense, as lucid's copies keep dense layouts)."""
    fmt = _check(fmt, "clone")
    if fmt is preserve_format:
        return t._clone()
    if fmt is contiguous_format:
        return t._contiguous() if not t._is_contiguous() else t._clone()
    out = to_format(t, fmt, "clone")
    return t._clone() if out is t else out


def empty_as(shape, fmt, make):
    """A new tensor of `shape` in fmt's layout, `make(shape)` giving a contiguous one."""
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        return make(shape)
    order = _CHANNELS_LAST_ORDER.get((fmt, len(shape)))
    if order is None:
        rank = 4 if fmt is channels_last else 5
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")
    outer_first = order[::-1]
    back = [outer_first.index(d) for d in range(len(shape))]
    return make([shape[d] for d in outer_first]).permute(*back)


__all__ = ["memory_format", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]
