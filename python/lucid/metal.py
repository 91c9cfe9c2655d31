"""lucid.metal: upstream Lucid's namespace for its GPU (Apple's Metal), here the NVIDIA
GPU that lucid's "metal" device name also means, so upstream programs run unchanged.

Shared memory, Metal's MTLResourceStorageModeShared, is lucid's page-locked host memory
mapped into the GPU (Note [Storage kinds]): the CPU and the GPU read the same bytes, and
moving such a tensor between them is a relabel, as on Apple silicon. upstream's
run_kernel takes Metal Shading Language, which an NVIDIA GPU cannot run; lucid's custom
kernels are lucid.fast.cuda_kernel (CUDA C++), so run_kernel is not here.
"""

from . import gpu as _gpu

__all__ = ["is_available", "synchronize", "empty_cache", "manual_seed", "memory_allocated", "max_memory_allocated",
           "reset_peak_memory_stats", "get_cache_memory", "get_device_name", "MetalStream", "MetalEvent",
           "shared_tensor", "to_shared", "is_shared"]


def is_available():
    return _gpu.is_available()


def synchronize():
    _gpu.synchronize()


def empty_cache():
    _gpu.empty_cache()


def manual_seed(seed):
    """Seeds the generator GPU draws come from (lucid's default generator)."""
    _gpu.manual_seed(seed)


def memory_allocated():
    return _gpu.memory_allocated()


def max_memory_allocated():
    return _gpu.max_memory_allocated()


def reset_peak_memory_stats():
    _gpu.reset_peak_memory_stats()


def get_cache_memory():
    """Bytes the allocator holds from the GPU without a live tensor in them."""
    return _gpu.memory_reserved() - _gpu.memory_allocated()


def get_device_name():
    return _gpu.get_device_name()


class MetalStream:
    """The GPU's stream as a context manager: the work queued inside the block has
    finished when it ends. priority is accepted, as upstream's, and has no effect."""

    def __init__(self, priority=0):
        self._priority = priority
        self._stream = _gpu.current_stream()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.synchronize()

    def synchronize(self):
        self._stream.synchronize()


class MetalEvent(_gpu.Event):
    """A timing point on the GPU's stream (lucid.cuda.Event: elapsed_time measures GPU
    time between two recorded events)."""

    def __init__(self, enable_timing=False):
        super().__init__(enable_timing=enable_timing)


def shared_tensor(shape, dtype=None, requires_grad=False):
    """A zero-filled CPU tensor in shared memory: .to("metal") / .to("gpu") of it copies
    nothing."""
    from . import _C
    from . import _dtype as D
    from ._size import _parse_size
    dtype = D.float32 if dtype is None else D._check(dtype)
    t = _C.empty(list(_parse_size(shape, "shared_tensor")), dtype._code, -1, True)
    t.zero_()
    if requires_grad:
        t.requires_grad_()
    return t


def to_shared(tensor):
    """tensor in shared memory, on its device (at most one copy; none if it is already)."""
    if is_shared(tensor):
        return tensor
    shared = tensor.detach().cpu().pin_memory()
    out = shared if tensor.device.type == "cpu" else shared.to(tensor.device)
    return out.requires_grad_() if tensor.requires_grad and tensor.is_leaf else out


def is_shared(tensor):
    return tensor._storage_kind == "shared"
