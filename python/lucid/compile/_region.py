"""A compiled call's region on the lazy GPU (Note [Lazy GPU execution], csrc/core/pending.h):
inside it the end of backward() and of optimizer.step() do not flush, so the call's whole
work is one recorded list, fused as one and replayed as one CUDA graph; its end flushes.
Host reads (item(), tolist(), print, data-dependent shapes) still flush inside it: each is
a break, counted by pending_stats()["region_breaks"]."""

import contextlib

from .. import _C


def gpu_count():
    return _C.gpu_device_count()


def region_breaks():
    """Breaks of compiled regions on every GPU since the process started."""
    return sum(_C.gpu_pending_stats(d)["region_breaks"] for d in range(gpu_count()))


@contextlib.contextmanager
def region():
    _C.gpu_enter_region()
    try:
        yield
    finally:
        _C.gpu_exit_region()


@contextlib.contextmanager
def kernels_compiled_now():
    """For a call that traces a new signature: the GPU's generated kernels (fused chains)
    compile at its flush instead of in the background, so that the calls after it run
    them from the start (the compile cost is paid once, at the trace)."""
    if not gpu_count() or _C.gpu_kernel_compile() != "background":
        yield
        return
    _C.gpu_set_kernel_compile("sync")
    try:
        yield
    finally:
        _C.gpu_set_kernel_compile("background")
