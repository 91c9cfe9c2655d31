"""lucid.accelerator: torch.accelerator's device-neutral API over lucid's one accelerator
kind, the GPU (lucid.gpu, alias lucid.cuda).

As in torch, current_accelerator() is the accelerator lucid was built for (a GPU when the
extension was built with CUDA), whether or not one is present; check_available=True, and
is_available(), also ask that a GPU be there. Without one, the calls that need a device
(current_device_index, set_device_index, synchronize, device_index(i)) raise RuntimeError;
the memory statistics answer 0, and empty_cache does nothing, as torch's do.

Note [One current GPU]
lucid resolves "gpu" (and "cuda") to gpu:0; it has no per-thread current device to switch.
So current_device_index() is 0, and set_device_index / device_index accept the current
index (a no-op, as torch's for the device already current) and a negative one (torch's
no-op), and raise NotImplementedError for any other: name the device instead
(lucid.device("gpu", i), tensor.to(f"gpu:{i}")).
"""

import warnings

from . import _C
from . import gpu
from ._device import device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count", "device_index",
           "empty_cache", "is_available", "max_memory_allocated", "memory_allocated", "memory_reserved",
           "reset_peak_memory_stats", "set_device_idx", "set_device_index", "synchronize"]


def is_available():
    """True when lucid was built with CUDA and at least one GPU is visible."""
    return gpu.is_available()


def current_accelerator(check_available=False):
    """lucid.device("gpu") (torch's "cuda") when lucid was built with CUDA (and, with
    check_available=True, a GPU is present), else None. The index is None, as torch's."""
    if not _C._built_with_cuda:
        return None
    if check_available and not is_available():
        return None
    return _device("gpu")


def device_count():
    """The number of GPUs; 0 without an accelerator."""
    return gpu.device_count()


def _require():
    if current_accelerator() is None:
        raise RuntimeError("Accelerator expected: lucid was built without CUDA, so it has no accelerator")
    if not is_available():
        raise RuntimeError("No GPU was found: lucid was built with CUDA, but no device is visible "
                           "(check the driver and CUDA_VISIBLE_DEVICES)")


def _index(device, optional):
    """torch.accelerator's rule for a device argument: an int as is; a device (or string) of
    the accelerator's type, its index; no index: the current one when optional."""
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if isinstance(device, str):
        device = _device(device)
    index = None
    if isinstance(device, _device):
        acc = current_accelerator()
        if acc is None:
            raise RuntimeError("Accelerator expected")
        if acc.type != device.type:
            raise ValueError(f"{device.type} doesn't match the current accelerator {acc}.")
        index = device.index
    elif device is not None:
        raise TypeError(f"a device must be an int, a device string or a lucid.device, but got "
                        f"{type(device).__name__}")
    if index is None:
        if not optional:
            raise ValueError(f"Expected a lucid.device with a specified index or an integer, but got:{device}")
        return current_device_index()
    return index


def current_device_index():
    """The index of the current GPU: always 0 (Note [One current GPU])."""
    _require()
    return gpu.current_device()


def set_device_index(device, /):
    """Makes `device` current; see Note [One current GPU] for what lucid accepts."""
    index = _index(device, optional=False)
    _require()
    if index < 0:
        return
    if index >= device_count():
        raise RuntimeError(f"set_device_index: invalid device index {index}: this machine has "
                           f"{device_count()} GPU(s)")
    if index != current_device_index():
        raise NotImplementedError(f"set_device_index({index}): lucid has no current-device switch; \"gpu\" always "
                                  f"means gpu:0. Name the device instead: lucid.device('gpu', {index})")


def synchronize(device=None, /):
    """Waits for all work queued on the GPU (the current one by default) to finish."""
    index = _index(device, optional=True)
    _require()
    gpu.synchronize(index)


def current_device_idx():
    """Deprecated: current_device_index()."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device, /):
    """Deprecated: set_device_index()."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:
    """`with device_index(i):` makes GPU i current inside the block (None: no change); see
    Note [One current GPU]."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc_info):
        if self.idx is not None:
            set_device_index(self.prev_idx)


def _stat(fn, device):
    # as torch: statistics of a GPU that is not there (or not initialised) are zero
    if not is_available():
        return 0
    return fn(_index(device, optional=True))


def memory_allocated(device_index=None, /):
    """Bytes held by live tensors on the GPU; 0 without one."""
    return _stat(gpu.memory_allocated, device_index)


def max_memory_allocated(device_index=None, /):
    """The peak of memory_allocated() since the start or the last reset_peak_memory_stats()."""
    return _stat(gpu.max_memory_allocated, device_index)


def memory_reserved(device_index=None, /):
    """Bytes the caching allocator holds from the driver, cached blocks included."""
    return _stat(gpu.memory_reserved, device_index)


def reset_peak_memory_stats(device_index=None, /):
    if is_available():
        gpu.reset_peak_memory_stats(_index(device_index, optional=True))


def empty_cache():
    """Returns cached, unused GPU memory to the driver (nothing to do without a GPU)."""
    if is_available():
        gpu.empty_cache()
