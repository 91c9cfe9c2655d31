"""lucid.gpu (also importable as lucid.cuda): the GPU devices and their memory."""

from __future__ import annotations

import atexit
import sys

from . import _C
from . import _device
from . import _nvtx as nvtx
from . import _random
from ._device import _resolve as _resolve_device
from ._gpu_info import (  # noqa: F401  (device properties, memory summary and cap)
    get_arch_list, get_device_capability, get_device_name, get_device_properties, get_gencode_flags,
    get_per_process_memory_fraction, is_bf16_supported, is_tf32_supported, max_memory_cached, max_memory_reserved,
    mem_get_info, memory_cached, memory_summary, reset_accumulated_memory_stats, reset_max_memory_cached,
    set_per_process_memory_fraction)
from ._gpu_info import __all__ as _info_names

# importable as lucid.gpu.nvtx and lucid.cuda.nvtx (torch.cuda.nvtx)
sys.modules[__name__ + ".nvtx"] = sys.modules["lucid.cuda.nvtx"] = nvtx

# The background kernel compiler stops (after the kernel in hand) while the interpreter
# still stands: at the C library's exit it would be torn down mid-compile (Note [The
# compiler thread at exit], csrc/backend/cuda/generated_kernels.cpp).
atexit.register(_C.gpu_stop_compiler)

__all__ = ["is_available", "device_count", "synchronize", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "memory_stats", "reset_peak_memory_stats",
           "reset_max_memory_allocated", "empty_cache", "current_device", "current_stream", "Stream", "Event",
           "OutOfMemoryError", "is_lazy", "set_lazy", "flush", "pending_stats",
           "is_graph_replay", "set_graph_replay", "is_fusion", "set_fusion", "is_norm_fusion",
           "set_norm_fusion", "kernel_compile",
           "set_kernel_compile", "generated_kernel_stats", "set_device", "device", "device_of", "is_initialized",
           "init", "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state",
           "set_rng_state", "get_rng_state_all", "set_rng_state_all", "default_stream", "set_stream", "stream",
           "StreamContext", "is_current_stream_capturing", "nvtx"] + list(_info_names)

# A device allocation that failed after lucid released its cache and tried again: a
# RuntimeError, as torch.cuda.OutOfMemoryError (also lucid.OutOfMemoryError).
OutOfMemoryError = _C.OutOfMemoryError


def is_available():
    """True when lucid was built with CUDA and a GPU is present."""
    return _C.gpu_device_count() > 0


def device_count():
    return _C.gpu_device_count()


def current_device():
    """The index of this thread's current GPU: where "gpu" / "cuda" without an index goes."""
    return getattr(_device._CURRENT_GPU, "index", 0)


def _index(device):
    if device is None:
        return current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    d = _resolve_device(device)
    if d.type != "gpu":
        raise ValueError(f"Expected a gpu device, but got: {d}")
    return current_device() if d.index is None else d.index


def set_device(device):
    """Makes `device` (an index, "gpu:N" / "cuda:N" or a device) this thread's current
    GPU: tensors made on "gpu" without an index go there. A negative index is ignored,
    as in torch."""
    index = _index(device)
    if index < 0:
        return
    if not 0 <= index < device_count():
        raise RuntimeError(f"set_device: gpu:{index} does not exist (lucid sees {device_count()} GPU(s))")
    _device._CURRENT_GPU.index = index


class device:
    """`with lucid.cuda.device(1):` makes gpu:1 current inside the block (torch.cuda.device);
    None or a negative index leaves the current GPU alone."""

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = current_device()
        if self.idx >= 0 and self.idx != self.prev_idx:
            set_device(self.idx)
        return self

    def __exit__(self, *exc):
        _device._CURRENT_GPU.index = self.prev_idx
        return False


class device_of(device):
    """`with lucid.cuda.device_of(t):` makes t's GPU current (a CPU tensor: no change)."""

    def __init__(self, obj):
        super().__init__((obj.device.index or 0) if obj.device.type == "gpu" else None)


def is_initialized():
    """True once lucid's GPU runtime is there (it starts with lucid when a GPU is present)."""
    return is_available()


def init():
    """torch.cuda.init(): lucid's GPU runtime starts at import; this checks there is one."""
    if not is_available():
        raise RuntimeError("lucid.cuda.init(): lucid has no GPU here (no CUDA build, driver or device)")


# Random numbers: lucid draws a GPU tensor's values from the same generator as a CPU
# tensor's (lucid._random: counter-based Philox on the host, uploaded), so the GPU's
# seed and state are the default generator's. Seeding "the GPU" seeds it.
def manual_seed(seed):
    _random.manual_seed(seed)


manual_seed_all = manual_seed


def seed():
    _random.seed()


seed_all = seed


def initial_seed():
    return _random.initial_seed()


def get_rng_state(device="cuda"):
    _index(device)
    return _random.get_rng_state()


def set_rng_state(new_state, device="cuda"):
    _index(device)
    _random.set_rng_state(new_state)


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def synchronize(device=None):
    """Runs the GPU's recorded ops and waits until all its work is done."""
    _C.gpu_synchronize(_index(device))


def is_lazy():
    """True when GPU ops are recorded and run at the next flush (the default; LUCID_LAZY=0
    turns it off), False when each runs as it is called."""
    return _C.gpu_lazy()


def set_lazy(enabled):
    """Turns lazy GPU execution on or off (off runs what is recorded first). Eager mode
    raises a kernel's errors at the op that caused them: a debugging aid."""
    _C.gpu_set_lazy(bool(enabled))


def flush(device=None):
    """Queues the GPU's recorded ops on its stream without waiting for them
    (device None: every GPU)."""
    _C.gpu_flush(-1 if device is None else _index(device))


def pending_stats(device=None):
    """The recorded, not yet run, work of a GPU: {"ops", "bytes" (output memory they keep
    alive), "flushes" (since the process started), "graph_runs" (flushes replayed as a
    CUDA graph), "graph_abandoned" (flushes whose capture gave way to running op by op), "fused_calls"
    (recorded ops run inside fused elementwise kernels), "region_breaks" (flushes inside
    lucid.compile's compiled calls before their end: host reads that split a call's work), "replays"
    (training steps run again from a capture: lucid.compile.fused_step), "fixed_replays" (those of them
    launched from graphs captured once: a capture whose calls allocate runs its replays as flushes)}."""
    return dict(_C.gpu_pending_stats(_index(device)))


def is_fusion():
    """True when chains of recorded elementwise ops run as one fused kernel at a flush
    (the default; LUCID_FUSION=0 turns it off)."""
    return _C.gpu_fusion()


def set_fusion(enabled):
    """Turns the fusion of recorded elementwise chains on or off (off: each op runs its
    own kernel; results are the same bit for bit)."""
    _C.gpu_set_fusion(bool(enabled))


def is_norm_fusion():
    """True when a flush runs each layer_norm / rms_norm (and its backward), and each
    softmax / log_softmax over the last dim, with the elementwise calls around it as one
    generated kernel (results the same bit for bit).
    On by default; LUCID_NORM_FUSION=0 in the environment switches it off at start."""
    return _C.gpu_norm_fusion()


def set_norm_fusion(enabled):
    """Turns is_norm_fusion() on or off (it also needs set_fusion's fusion on)."""
    _C.gpu_set_norm_fusion(bool(enabled))


def kernel_compile():
    """How kernels that lucid generates at run time (fused elementwise chains) are
    compiled: "background" (the default: by a background thread, the chain running
    interpreted until its kernel is ready), "sync" (before the chain runs) or "off"
    (never: fused chains are interpreted). LUCID_KERNEL_COMPILE sets it at start."""
    return _C.gpu_kernel_compile()


def set_kernel_compile(mode):
    """Sets kernel_compile()'s mode: "background", "sync" or "off" (a ValueError otherwise).
    Compiled kernels are cached on disk under $LUCID_CACHE_DIR/kernels (default
    ~/.cache/lucid/kernels; LUCID_CACHE_DIR="" keeps them in memory only)."""
    _C.gpu_set_kernel_compile(str(mode))


def generated_kernel_stats():
    """The generated kernels of this process: {"compiled" (by NVRTC), "loaded" (from the
    disk cache), "failed" (sources that did not compile or load), "compiling" (queued or
    under way), "last_error" (the last failure's message), "fused_launches" (fused calls
    run by generated kernels), "fused_norm_launches", "fused_norm_backward_launches",
    "fused_softmax_launches" and "fused_reduce_launches" (layer_norm / rms_norm calls, their
    backwards, softmax / log_softmax calls over the last dim, and sums / means over it,
    run with their elementwise neighbours as one kernel)}."""
    return dict(_C.gpu_generated_kernel_stats())


def is_graph_replay():
    """True when a flush whose ops repeat an earlier flush's (a training step) is captured
    and replayed as a CUDA graph (the default; LUCID_CUDA_GRAPHS=0 turns it off)."""
    return _C.gpu_graph_replay()


def set_graph_replay(enabled):
    """Turns the replay of repeated flushes as CUDA graphs on or off (off: every flush
    launches its ops one by one, a debugging aid)."""
    _C.gpu_set_graph_replay(bool(enabled))


def _memory_counter(device, name):
    # 0 without a GPU, as torch's counters report before CUDA is initialised (a CPU run's logging)
    return _C.gpu_memory_stats(_index(device))[name] if is_available() else 0


def memory_allocated(device=None):
    """Bytes held by live tensors on the GPU (0 on a machine without one)."""
    return _memory_counter(device, "allocated")


def max_memory_allocated(device=None):
    """Peak of memory_allocated() since the start or the last reset_peak_memory_stats()."""
    return _memory_counter(device, "max_allocated")


def memory_reserved(device=None):
    """Bytes the caching allocator holds from the driver, cached blocks included."""
    return _memory_counter(device, "reserved")


def memory_stats(device=None):
    """The allocator's counters under torch.cuda.memory_stats()'s names."""
    s = _C.gpu_memory_stats(_index(device))
    p = _C.gpu_pending_stats(_index(device))
    return {"allocated_bytes.all.current": s["allocated"], "allocated_bytes.all.peak": s["max_allocated"],
            "reserved_bytes.all.current": s["reserved"], "pending_ops.current": p["ops"],
            "pending_bytes.current": p["bytes"]}


def reset_peak_memory_stats(device=None):
    """Starts max_memory_allocated() over from what is allocated now."""
    _C.gpu_reset_peak_memory_stats(_index(device))


reset_max_memory_allocated = reset_peak_memory_stats


def empty_cache():
    """Returns cached, unused GPU memory to the driver."""
    _C.gpu_empty_cache()


class Stream:
    """The one stream lucid queues a GPU's work on (lucid has no side streams): what
    torch.cuda.current_stream() gives, for code that records events or synchronises on it.
    Stream() is that stream too, so code written for side streams runs its work in order
    on the one stream: the same results, without the overlap (priority is accepted and
    has no effect)."""

    def __init__(self, device=None, priority=0, **kwargs):
        self.device_index = _index(device)
        self.priority = int(priority)

    def query(self):
        """True when all work queued on the stream has finished."""
        e = Event()
        e.record(self)
        return e.query()

    def wait_stream(self, stream):
        """Later work on this stream starts after the work queued so far on `stream`: the
        same stream already runs in order; another GPU's is waited for with an event."""
        if stream.device_index != self.device_index:
            self.wait_event(stream.record_event())

    @property
    def cuda_stream(self):
        return _C.gpu_stream_handle(self.device_index)

    def synchronize(self):
        synchronize(self.device_index)

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event):
        event.wait(self)

    def __eq__(self, other):
        return isinstance(other, Stream) and other.device_index == self.device_index

    def __hash__(self):
        return hash(("lucid.gpu.Stream", self.device_index))

    def __repr__(self):
        return f"<lucid.gpu.Stream device=gpu:{self.device_index}>"


def current_stream(device=None):
    return Stream(device)


def default_stream(device=None):
    return Stream(device)


def set_stream(stream):
    """Makes `stream` current: it is lucid's one stream of its GPU, so this makes its GPU current."""
    if not isinstance(stream, Stream):
        raise TypeError(f"set_stream expects a lucid.cuda.Stream, got {type(stream).__name__}")
    set_device(stream.device_index)


class StreamContext:
    """`with lucid.cuda.stream(s):` runs the block with s current (its GPU current; its
    work queues on lucid's one stream of that GPU). None leaves everything as it is."""

    def __init__(self, stream):
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(f"stream() expects a lucid.cuda.Stream or None, got {type(stream).__name__}")
        self.stream = stream
        self._prev = None

    def __enter__(self):
        if self.stream is not None:
            self._prev = current_device()
            set_device(self.stream.device_index)
        return self.stream

    def __exit__(self, *exc):
        if self._prev is not None:
            _device._CURRENT_GPU.index = self._prev
        return False


def stream(stream):
    return StreamContext(stream)


def is_current_stream_capturing():
    """False: lucid captures CUDA graphs itself, at flushes, never while Python code runs."""
    return False


class Event:
    """A marker in a GPU's stream, as torch.cuda.Event: record() it after some work,
    then synchronize() on it, query() it, make later work wait() for it, or time the
    work between two timing events with elapsed_time() (milliseconds)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise NotImplementedError("lucid.gpu.Event(interprocess=True) is not supported")
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self._handle = None
        self._device = None

    def _stream_device(self, stream):
        device = stream.device_index if isinstance(stream, Stream) else _index(stream)
        if self._device is not None and device != self._device:
            raise RuntimeError(f"Event device gpu:{self._device} does not match recording stream's device "
                               f"gpu:{device}.")
        return device

    def record(self, stream=None):
        device = self._stream_device(stream)
        if self._handle is None:
            self._handle, self._device = _C.gpu_event_create(device, self.enable_timing), device
        _C.gpu_event_record(self._handle, device)

    def wait(self, stream=None):
        """Later work on `stream` (the GPU's) starts after this event: no host wait."""
        if self._handle is not None:
            _C.gpu_event_wait(self._handle, self._stream_device(stream))

    def query(self):
        """True when the work recorded before this event has finished (or nothing was recorded)."""
        return self._handle is None or _C.gpu_event_query(self._handle, self._device)

    def synchronize(self):
        """Waits on the host until the work recorded before this event has finished."""
        if self._handle is not None:
            _C.gpu_event_synchronize(self._handle, self._device)

    def elapsed_time(self, end_event):
        """Milliseconds between this event and end_event, both recorded timing events."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._handle is None or end_event._handle is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return _C.gpu_event_elapsed_ms(self._handle, end_event._handle, self._device)

    def __del__(self):
        if getattr(self, "_handle", None) is not None:
            try:
                _C.gpu_event_destroy(self._handle, self._device)
            except Exception:  # interpreter shutdown: the module may be gone first
                pass
            self._handle = None

    def __repr__(self):
        return f"<lucid.gpu.Event {'recorded on gpu:%d' % self._device if self._handle else 'uninitialized'}>"
