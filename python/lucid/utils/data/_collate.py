"""default_collate and default_convert (torch.utils.data._utils.collate): turn the
samples a dataset returns into batches of tensors.

NumPy values are converted only when the user's program already imported NumPy (a
dataset cannot return an ndarray otherwise): this module never imports it."""

from __future__ import annotations

import collections.abc
import copy
import sys

from ... import _dtype as D
from ..._creation import as_tensor, tensor
from ..._shape import stack
from ..._tensor import Tensor

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map"]

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
    "found {}")

# NumPy dtype kinds with no tensor counterpart: bytes, str and Python objects.
_NUMPY_NON_NUMERIC_KINDS = frozenset("SaUO")


# ---- rebuilding containers ----------------------------------------------------------------

def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def _rebuild_mapping(like, items):
    """A mapping of `like`'s type holding `items` (a dict), or a plain dict when that type
    cannot be rebuilt from a dict. A mutable mapping is copied so that its extra state
    (a defaultdict's factory, an OrderedDict's order) survives."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(items)
            return clone
        return type(like)(items)
    except TypeError:
        return items


def _rebuild_sequence(like, values):
    """A sequence of `like`'s type holding `values` (a list), or the list itself."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(like)(values)
    except TypeError:
        return values


def _map_nested(data, leaf):
    """`data` with `leaf` applied to everything that is not a container. Tuples come back
    as lists (PyTorch's behaviour, kept for compatibility); namedtuples stay namedtuples."""
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: _map_nested(data[k], leaf) for k in data})
    if _is_namedtuple(data):
        return type(data)(*(_map_nested(d, leaf) for d in data))
    if isinstance(data, tuple):
        return [_map_nested(d, leaf) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [_map_nested(d, leaf) for d in data])
    return leaf(data)


# ---- NumPy values (only ever seen when the user imported NumPy) ---------------------------

def _numpy():
    return sys.modules.get("numpy")


def _is_numpy_value(obj):
    """An ndarray or a NumPy scalar (but not NumPy's str and bytes scalars, which are
    Python strings)."""
    np = _numpy()
    return (np is not None and isinstance(obj, (np.ndarray, np.generic))
            and not isinstance(obj, (str, bytes)))


def _check_numeric_numpy(arr):
    if arr.dtype.char in _NUMPY_NON_NUMERIC_KINDS:
        raise TypeError(default_collate_err_msg_format.format(arr.dtype))


# ---- default_convert ----------------------------------------------------------------------

def default_convert(data):
    """Converts NumPy arrays and scalars inside `data` to tensors, keeping containers
    (tuples become lists) and every other value as they are. The DataLoader's collate_fn
    when batching is off (batch_size=None)."""
    def leaf(x):
        if _is_numpy_value(x) and x.dtype.char not in _NUMPY_NON_NUMERIC_KINDS:
            return as_tensor(x)
        return x
    return _map_nested(data, leaf)


# ---- collate ------------------------------------------------------------------------------

def collate_tensor_fn(batch, *, collate_fn_map=None):
    # lucid.stack's error names the shapes that differ.
    return stack(batch, 0)


def collate_float_fn(batch, *, collate_fn_map=None):
    return tensor(batch, dtype=D.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    # int64, or bool when the samples are bools (bool is a subclass of int).
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    # The samples themselves (a list, or a tuple when they are a column of tuples), as
    # PyTorch returns them.
    return batch


# Per-type collate functions, tried on the batch's first sample: its exact type first,
# then isinstance in this order. Pass an extended copy to collate() to handle more types.
default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def _lookup(collate_fn_map, elem):
    fn = collate_fn_map.get(type(elem))
    if fn is not None:
        return fn
    for cls, fn in collate_fn_map.items():
        if isinstance(elem, cls):
            return fn
    return None


def _collate_numpy(batch, collate_fn_map):
    elem = batch[0]
    if isinstance(elem, _numpy().ndarray):
        _check_numeric_numpy(elem)
        return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)
    # A NumPy scalar: NumPy's own array keeps the scalars' dtype (float32 stays float32).
    return as_tensor(_numpy().asarray(batch))


def collate(batch, *, collate_fn_map=None):
    """Merges a list of samples into a batch, recursively: the first sample's type picks
    the rule (collate_fn_map, then containers), and every sample must have its structure.

    Tensors are stacked; Python ints, floats and bools become int64, float64 and bool
    tensors; strings stay as they are (the samples themselves); a Mapping becomes a
    mapping of batches, a namedtuple a namedtuple of batches, and any other sequence a
    list of batches (one per position)."""
    if len(batch) == 0:
        raise IndexError("collate needs a non-empty batch (a list of samples), got an empty "
                         f"{type(batch).__name__}")
    elem = batch[0]
    if collate_fn_map is not None:
        fn = _lookup(collate_fn_map, elem)
        if fn is not None:
            return fn(batch, collate_fn_map=collate_fn_map)
    if _is_numpy_value(elem):
        return _collate_numpy(batch, collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        for i, sample in enumerate(batch):
            missing = [key for key in elem if key not in sample]
            if missing:
                raise KeyError(f"collate: every sample needs the keys of the first one "
                               f"({list(elem)}), but sample {i} lacks {missing}")
        items = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                 for key in elem}
        return _rebuild_mapping(elem, items)
    if _is_namedtuple(elem):
        return type(elem)(*(collate(samples, collate_fn_map=collate_fn_map)
                            for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        sizes = [len(sample) for sample in batch]
        if any(size != sizes[0] for size in sizes):
            raise RuntimeError(f"each element in list of batch should be of equal size, got "
                               f"sizes {sizes}")
        columns = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # a list, as PyTorch returns for tuples
        return _rebuild_sequence(elem, columns)
    raise TypeError(default_collate_err_msg_format.format(type(elem)))


def default_collate(batch):
    """The DataLoader's collate_fn when batching: collate() with default_collate_fn_map.

    >>> default_collate([(lucid.tensor([1, 2]), 0), (lucid.tensor([3, 4]), 1)])
    [tensor([[1, 2],
            [3, 4]]), tensor([0, 1])]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
