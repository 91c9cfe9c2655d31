"""Profiler sessions, and record_function ranges inside them.

A session runs the engine's op tally (the one lucid.compile.diagnose reads) on the
thread that starts it: every op that thread launches is recorded, the autograd
engine's backward ops included. Ops launched on other threads (DataLoader workers) are
not. One session runs per thread at a time, and not alongside lucid.compile.diagnose or
lucid.onnx.export, which use the same tally.
"""

import json
import threading
import time
from collections import defaultdict

from .. import _C
from ._records import MemoryStats, OpEvent, ProfileSummary, RecordedRange, SummaryList

__all__ = ["Profiler", "profile", "record_function"]

_local = threading.local()

_DEVICE_NAMES = {"cpu": "cpu", "gpu": "gpu", "cuda": "gpu"}


def _active():
    return getattr(_local, "profiler", None)


def _parse_activities(activities):
    """The devices whose ops a session keeps: None means every device."""
    if activities is None:
        return None
    if isinstance(activities, str):
        activities = [activities]
    devices = set()
    for activity in activities:
        name = activity if isinstance(activity, str) else getattr(activity, "name", None)
        device = _DEVICE_NAMES.get(name.lower()) if isinstance(name, str) else None
        if device is None:
            raise ValueError(f"unknown profiler activity {activity!r}; expected 'cpu', 'gpu' or 'cuda'")
        devices.add(device)
    return devices


def _gpu_available():
    return _C.gpu_device_count() > 0


class Profiler:
    """Records the ops the engine launches between start() and stop() (or inside a
    with-block), record_function ranges, and with_memory the GPU allocator's counters
    at both ends. activities ('cpu', 'gpu' / 'cuda'): the devices whose ops are kept
    (default: all); naming the GPU also makes each range wait for the GPU at its ends,
    so its time includes the GPU's work."""

    def __init__(self, with_memory=True, *, activities=None):
        self.with_memory = bool(with_memory)
        self._devices = _parse_activities(activities)
        self._sync_gpu = self._devices is not None and "gpu" in self._devices and _gpu_available()
        self._raw = []
        self._ranges, self._open = [], []
        self._running = False
        self._base = 0
        self._start_ns = self._first_start_ns = None
        self._elapsed_ns = 0
        self._memory = {"start": None, "stop": None}

    # -- session ----------------------------------------------------------------------

    def start(self):
        if self._running:
            raise RuntimeError("this Profiler is already running")
        if _active() is not None:
            raise RuntimeError("a lucid.profiler session is already running on this thread")
        if self._sync_gpu:
            _C.gpu_synchronize(0)
        _C._op_tally_begin()  # (refuses if lucid.compile.diagnose or onnx.export holds the tally)
        _local.profiler = self
        self._running = True
        self._base = len(self._raw)
        if self.with_memory:
            self._memory["start"] = self._snapshot()
        self._start_ns = time.perf_counter_ns()
        if self._first_start_ns is None:
            self._first_start_ns = self._start_ns

    def stop(self):
        if not self._running:
            raise RuntimeError("this Profiler is not running")
        if self._sync_gpu:
            _C.gpu_synchronize(0)
        now = time.perf_counter_ns()
        end_op = self._op_count()
        try:
            raw = _C._op_tally_end()
        finally:
            _local.profiler = None
            self._running = False
        self._raw.extend(raw)
        self._elapsed_ns += now - self._start_ns
        while self._open:  # ranges still open end with the session
            self._close(self._open[-1], now, end_op)
        if self.with_memory:
            self._memory["stop"] = self._snapshot()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        if self._running:
            self.stop()

    def clear(self):
        """Forgets what was recorded (a running session goes on recording)."""
        if self._running:
            raise RuntimeError("clear() needs the Profiler stopped")
        self._raw, self._ranges, self._open = [], [], []
        self._elapsed_ns, self._first_start_ns = 0, None
        self._memory = {"start": None, "stop": None}

    # -- results ----------------------------------------------------------------------

    def _keep(self, event):
        return self._devices is None or event.device in self._devices

    def events(self):
        """The recorded ops, in launch order (only the activities' devices)."""
        events = [OpEvent(raw, index) for index, raw in enumerate(self._raw)]
        return [e for e in events if self._keep(e)]

    def key_averages(self):
        """One ProfileSummary per op name, most called first."""
        by_name = defaultdict(list)
        for event in self.events():
            by_name[event.name].append(event)
        summaries = [ProfileSummary(name, events) for name, events in by_name.items()]
        return SummaryList(sorted(summaries, key=lambda s: (-s.count, s.name)))

    def table(self, sort_by="count", row_limit=None):
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit)

    def ranges(self):
        """The record_function ranges, in the order they opened, each with its ops."""
        events = [OpEvent(raw, index) for index, raw in enumerate(self._raw)]
        for r in self._ranges:
            if r.end_op is not None:
                r.ops = [e for e in events[r.first_op:r.end_op] if self._keep(e)]
        return list(self._ranges)

    @property
    def total_time_ns(self):
        """Wall-clock time the session ran (summed over its start/stop spans)."""
        if self._running:
            return self._elapsed_ns + time.perf_counter_ns() - self._start_ns
        return self._elapsed_ns

    def memory_stats(self, when="stop"):
        """The GPU allocator's counters at the session's start or stop (now, while it
        runs); None without with_memory or without a GPU. The CPU allocator keeps no
        counters, so there is nothing to report for it."""
        if when not in ("start", "stop"):
            raise ValueError(f"when must be 'start' or 'stop', got {when!r}")
        if not self.with_memory:
            return None
        if when == "stop" and self._running:
            return self._snapshot()
        return self._memory[when]

    def export_chrome_trace(self, path):
        """Writes the session and its ranges as a Chrome trace (chrome://tracing, Perfetto),
        each range with the count of each op it launched. The ops themselves carry no
        time, so they appear only as those counts."""
        origin = self._first_start_ns or 0
        counts = defaultdict(int)
        for event in self.events():
            counts[event.name] += 1
        trace = [{"name": "lucid.profiler session", "ph": "X", "ts": 0.0, "dur": self.total_time_ns / 1e3,
                  "pid": 0, "tid": 0, "args": {"ops": dict(counts)}}]
        for r in self.ranges():
            if r.end_ns is None:
                continue
            range_counts = defaultdict(int)
            for event in r.ops:
                range_counts[event.name] += 1
            trace.append({"name": r.name, "ph": "X", "ts": (r.start_ns - origin) / 1e3, "dur": r.time_ns / 1e3,
                          "pid": 0, "tid": 0, "args": {"ops": dict(range_counts), "synchronized": r.synchronized}})
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)

    # -- record_function's side -------------------------------------------------------

    def _op_count(self):
        return self._base + _C._op_tally_count()

    def _snapshot(self):
        return MemoryStats(_C.gpu_memory_stats(0), 0) if _gpu_available() else None

    def _open_range(self, name):
        if self._sync_gpu:
            _C.gpu_synchronize(0)
        r = RecordedRange(name, time.perf_counter_ns(), self._op_count(), len(self._open), self._sync_gpu)
        self._ranges.append(r)
        self._open.append(r)
        return r

    def _close(self, r, now=None, end_op=None):
        if self._sync_gpu and now is None:
            _C.gpu_synchronize(0)
        r.end_ns = time.perf_counter_ns() if now is None else now
        r.end_op = self._op_count() if end_op is None else end_op
        self._open.remove(r)


def profile(activities=None, with_memory=True):
    """A Profiler to use as a context manager: `with lucid.profiler.profile() as prof: ...`."""
    return Profiler(with_memory=with_memory, activities=activities)


class record_function:
    """Names a block in the running session (a context manager, or a decorator): the
    session records its wall-clock span and the ops launched inside. With no session
    running on this thread it records nothing."""

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError(f"record_function name must be a str, got {type(name).__name__}")
        self.name = name
        self._range = self._profiler = None

    def __enter__(self):
        self._profiler = _active()
        if self._profiler is not None:
            self._range = self._profiler._open_range(self.name)
        return self

    def __exit__(self, *exc):
        profiler, r = self._profiler, self._range
        self._profiler = self._range = None
        if profiler is not None and profiler._running and r in profiler._open:
            profiler._close(r)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)
        return wrapped
