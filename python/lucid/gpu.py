"""lucid.gpu (also importable as lucid.cuda): the GPU devices and their memory."""

from __future__ import annotations

from . import _C
from ._device import _resolve as _resolve_device

__all__ = ["is_available", "device_count", "synchronize", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "reset_peak_memory_stats", "empty_cache",
           "current_device", "OutOfMemoryError"]

# A device allocation that failed after lucid released its cache and tried again: a
# RuntimeError, as torch.cuda.OutOfMemoryError (also lucid.OutOfMemoryError).
OutOfMemoryError = _C.OutOfMemoryError


def is_available():
    """True when lucid was built with CUDA and a GPU is present."""
    return _C.gpu_device_count() > 0


def device_count():
    return _C.gpu_device_count()


def current_device():
    return 0


def _index(device):
    if device is None:
        return 0
    if isinstance(device, int):
        return device
    d = _resolve_device(device)
    if d.type != "gpu":
        raise ValueError(f"Expected a gpu device, but got: {d}")
    return d.index or 0


def synchronize(device=None):
    """Waits until all work queued on the GPU is done."""
    _C.gpu_synchronize(_index(device))


def memory_allocated(device=None):
    """Bytes held by live tensors on the GPU."""
    return _C.gpu_memory_stats(_index(device))["allocated"]


def max_memory_allocated(device=None):
    """Peak of memory_allocated() since the start or the last reset_peak_memory_stats()."""
    return _C.gpu_memory_stats(_index(device))["max_allocated"]


def memory_reserved(device=None):
    """Bytes the caching allocator holds from the driver, cached blocks included."""
    return _C.gpu_memory_stats(_index(device))["reserved"]


def reset_peak_memory_stats(device=None):
    _C.gpu_reset_peak_memory_stats(_index(device))


def empty_cache():
    """Returns cached, unused GPU memory to the driver."""
    _C.gpu_empty_cache()
