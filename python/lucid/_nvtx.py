"""lucid.cuda.nvtx (torch.cuda.nvtx): NVTX ranges and marks that Nsight Systems shows on
its timeline, around the host code that records GPU work. Without a profiler attached
they cost a function call. lucid's GPU work runs at flushes (lazy), so a range marks
where the work was recorded; lucid.cuda.synchronize() inside it puts the kernels there too."""

import contextlib

from . import _C

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]


def range_push(msg):
    """Opens a nested range; returns its depth (0-based), or a negative number on error."""
    return _C.gpu_nvtx_range_push(str(msg))


def range_pop():
    """Closes the innermost range of this thread; returns its depth, or -1 if none was open."""
    return _C.gpu_nvtx_range_pop()


def range_start(msg):
    """Starts a range that need not nest or end on this thread; returns its id for range_end."""
    return _C.gpu_nvtx_range_start(str(msg))


def range_end(range_id):
    _C.gpu_nvtx_range_end(int(range_id))


def mark(msg):
    """An instant event on the timeline."""
    _C.gpu_nvtx_mark(str(msg))


@contextlib.contextmanager
def range(msg, *args, **kwargs):
    """`with lucid.cuda.nvtx.range("forward"):` a range around the block; msg is
    formatted with args and kwargs (str.format), as torch's."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
