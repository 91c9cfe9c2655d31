"""lucid.autograd.profiler: upstream Lucid's second path to lucid.profiler's names."""

from ..profiler import MemoryStats, OpEvent, ProfileSummary, Profiler, profile, record_function  # noqa: F401

__all__ = ["MemoryStats", "OpEvent", "ProfileSummary", "Profiler", "profile", "record_function"]
