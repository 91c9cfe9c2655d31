"""What a profiling session records: the engine's ops, named ranges, memory snapshots.

Only what the engine measures is reported. The engine's op tally gives each op it
launches (name, output shape, dtype, device, and whether a lazy GPU queued it rather
than running it at once); it keeps no per-op time, FLOP count or allocation, so none
is reported here either. Wall-clock time is measured for record_function ranges and
for the session as a whole; memory comes from the GPU allocator's counters.
"""

from math import prod

__all__ = ["OpEvent", "ProfileSummary", "MemoryStats", "RecordedRange", "SummaryList"]


class OpEvent:
    """One op the engine launched while a session ran; impl is the engine's record
    (name, output shape, dtype name, "cpu" or "gpu", queued-by-a-lazy-GPU flag)."""

    __slots__ = ("name", "shape", "dtype", "device", "recorded", "index")

    def __init__(self, impl, index=None):
        name, shape, dtype, device, recorded = impl
        self.name, self.shape, self.dtype = str(name), [int(s) for s in shape], str(dtype)
        self.device, self.recorded = str(device), bool(recorded)
        self.index = index  # its place in the session's launch order

    @property
    def numel(self):
        """Elements of the op's (first) output."""
        return prod(self.shape)

    def __repr__(self):
        queued = ", recorded=True" if self.recorded else ""
        return f"OpEvent(name={self.name!r}, shape={self.shape}, dtype={self.dtype}, device={self.device}{queued})"


class ProfileSummary:
    """The events of one op name, taken together."""

    def __init__(self, name, events):
        self.name = name
        self.events = list(events)

    @property
    def count(self):
        return len(self.events)

    @property
    def total_numel(self):
        """Output elements over all the calls."""
        return sum(e.numel for e in self.events)

    @property
    def devices(self):
        return sorted({e.device for e in self.events})

    @property
    def shapes(self):
        """The distinct output shapes, in the order first seen."""
        seen = []
        for e in self.events:
            if e.shape not in seen:
                seen.append(e.shape)
        return seen

    def __repr__(self):
        return f"ProfileSummary(name={self.name!r}, count={self.count}, total_numel={self.total_numel})"


class SummaryList(list):
    """key_averages()'s list of ProfileSummary, with torch's table() to print it."""

    def table(self, sort_by="count", row_limit=None):
        if sort_by not in ("count", "total_numel", "name"):
            raise ValueError(f"sort_by must be 'count', 'total_numel' or 'name', got {sort_by!r} (the engine "
                             "records no per-op time or memory to sort by)")
        rows = sorted(self, key=lambda s: s.name if sort_by == "name" else (-getattr(s, sort_by), s.name))
        if row_limit is not None:
            rows = rows[:row_limit]
        header = ("Name", "Calls", "Output elements", "Devices", "Shapes")
        body = [(s.name, str(s.count), str(s.total_numel), ",".join(s.devices),
                 "; ".join(str(shape) for shape in s.shapes[:3]) + (" ..." if len(s.shapes) > 3 else ""))
                for s in rows]
        widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
        line = "  ".join("-" * w for w in widths)
        fmt = "  ".join("{:<%d}" % w for w in widths)
        return "\n".join([line, fmt.format(*header), line, *(fmt.format(*r) for r in body), line])


class MemoryStats:
    """A snapshot of a GPU allocator's counters; impl is the engine's dict
    (allocated, max_allocated, reserved)."""

    def __init__(self, impl, device=0):
        self.current_bytes = int(impl["allocated"])
        self.peak_bytes = int(impl["max_allocated"])  # since the start or reset_peak_memory_stats()
        self.reserved_bytes = int(impl["reserved"])
        self.device = device

    def __repr__(self):
        return (f"MemoryStats(device=gpu:{self.device}, current={self.current_bytes / 1024:.1f}KB, "
                f"peak={self.peak_bytes / 1024:.1f}KB, reserved={self.reserved_bytes / 1024:.1f}KB)")


class RecordedRange:
    """A record_function block: its wall-clock span and the ops launched inside it.
    synchronized: the GPU's work was waited for at both ends, so the span includes it."""

    def __init__(self, name, start_ns, first_op, depth, synchronized):
        self.name, self.start_ns, self.depth = name, start_ns, depth
        self.end_ns = None
        self.first_op, self.end_op = first_op, None
        self.synchronized = synchronized
        self.ops = []

    @property
    def time_ns(self):
        return None if self.end_ns is None else self.end_ns - self.start_ns

    @property
    def time_us(self):
        return None if self.end_ns is None else self.time_ns / 1e3

    @property
    def time_ms(self):
        return None if self.end_ns is None else self.time_ns / 1e6

    def __repr__(self):
        span = "open" if self.end_ns is None else f"{self.time_us:.1f}us"
        return f"RecordedRange(name={self.name!r}, {span}, ops={len(self.ops)})"
