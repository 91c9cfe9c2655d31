"""lucid.profiler (also lucid.autograd.profiler): which ops a block of code runs.

    with lucid.profiler.profile() as prof:
        with lucid.profiler.record_function("forward"):
            loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table())

A session records every op the engine launches on its thread (name, output shape,
dtype, device), the wall-clock span of each record_function block and of the session,
and the GPU allocator's counters at its start and stop. The engine keeps no per-op
timing, FLOP or allocation counts, so none are reported.
"""

from ._profiler import Profiler, profile, record_function
from ._records import MemoryStats, OpEvent, ProfileSummary, RecordedRange

__all__ = ["MemoryStats", "OpEvent", "ProfileSummary", "Profiler", "profile", "record_function", "RecordedRange"]

# Importing it is the point: lucid.autograd.profiler, upstream's second path to these names.
from ..autograd import profiler as _autograd_profiler  # noqa: E402
del _autograd_profiler
