"""Page-locking a batch's tensors, so that copies to the GPU can run asynchronously."""

from __future__ import annotations

from ... import gpu
from ..._tensor import Tensor
from ._collate import _map_nested


def pin_memory(data):
    """`data` with every tensor (and every object with a pin_memory() method) pinned."""
    def leaf(x):
        if isinstance(x, Tensor) or callable(getattr(x, "pin_memory", None)):
            return x.pin_memory()
        return x
    return _map_nested(data, leaf)


def pinning_available():
    """Pinned memory only helps (and only exists) with a GPU; without one pin_memory=True
    is a silent no-op, so the same script runs on CPU-only machines."""
    return gpu.is_available()
