"""What lucid.cuda (lucid.gpu) tells about a GPU, under torch.cuda's names: its
properties, architectures, free memory, the allocator's counters as a summary, and the
per-process memory cap. The engine's side is csrc/backend/cuda/device_info.cpp."""

from __future__ import annotations

import warnings

from . import _C

__all__ = ["get_device_properties", "get_device_name", "get_device_capability", "is_bf16_supported",
           "is_tf32_supported", "get_arch_list", "get_gencode_flags", "mem_get_info", "max_memory_reserved",
           "memory_cached", "max_memory_cached", "reset_max_memory_cached", "reset_accumulated_memory_stats",
           "memory_summary", "set_per_process_memory_fraction", "get_per_process_memory_fraction"]


class _CudaDeviceProperties:
    """torch.cuda.get_device_properties()'s record: name, major, minor, total_memory,
    multi_processor_count, uuid, L2_cache_size, warp_size, ..."""

    __slots__ = ("name", "uuid", "major", "minor", "total_memory", "multi_processor_count",
                 "max_threads_per_multi_processor", "warp_size", "regs_per_multiprocessor", "L2_cache_size",
                 "is_integrated", "is_multi_gpu_board")

    def __init__(self, fields):
        for k in self.__slots__:
            setattr(self, k, fields[k])

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1 << 20)}MB, "
                f"multi_processor_count={self.multi_processor_count}, uuid={self.uuid[4:]}, "
                f"L2_cache_size={self.L2_cache_size // (1 << 20)}MB)")


def _gpu(device):
    from .gpu import _index  # (gpu imports this module)
    return _index(device)


def get_device_properties(device=None):
    return _CudaDeviceProperties(_C.gpu_device_properties(_gpu(device)))


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return (p.major, p.minor)


def is_bf16_supported(including_emulation=True):
    """True on a GPU of compute capability 8.0 or later (Ampere, Hopper): lucid's
    bfloat16 kernels use its native conversions and tensor-core products."""
    from .gpu import is_available
    return is_available() and get_device_capability() >= (8, 0)


def is_tf32_supported():
    from .gpu import is_available
    return is_available() and get_device_capability() >= (8, 0)


def get_arch_list():
    """The architectures this build carries code for: "sm_90" (machine code) and
    "compute_90" (PTX); [] without a GPU, as torch's."""
    from .gpu import is_available
    return list(_C.gpu_arch_list()) if is_available() else []


def get_gencode_flags():
    """get_arch_list() as nvcc's -gencode flags."""
    flags = []
    for arch in get_arch_list():
        kind, number = arch.split("_")
        flags.append(f"-gencode compute=compute_{number},code={kind}_{number}")
    return " ".join(flags)


def mem_get_info(device=None):
    """(free, total) bytes of the GPU as the driver counts them: other processes' use
    and lucid's cached blocks count as used."""
    return tuple(_C.gpu_memory_info(_gpu(device)))


def max_memory_reserved(device=None):
    """Peak of memory_reserved() since the start or the last reset_peak_memory_stats()."""
    return _C.gpu_memory_stats(_gpu(device))["max_reserved"]


def memory_cached(device=None):
    warnings.warn("lucid.cuda.memory_cached has been renamed to lucid.cuda.memory_reserved", FutureWarning,
                  stacklevel=2)
    return _C.gpu_memory_stats(_gpu(device))["reserved"]


def max_memory_cached(device=None):
    warnings.warn("lucid.cuda.max_memory_cached has been renamed to lucid.cuda.max_memory_reserved",
                  FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def reset_max_memory_cached(device=None):
    warnings.warn("lucid.cuda.reset_max_memory_cached now calls lucid.cuda.reset_peak_memory_stats, which "
                  "resets /all/ peak memory stats.", FutureWarning, stacklevel=2)
    _C.gpu_reset_peak_memory_stats(_gpu(device))


def reset_accumulated_memory_stats(device=None):
    """lucid's allocator keeps no accumulated counters (torch's allocation and free
    totals, retry and OOM counts), so there is nothing to reset; the device is checked."""
    _C.gpu_memory_stats(_gpu(device))


def _size(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024


def memory_summary(device=None, abbreviated=False):
    """A readable table of the allocator's counters for one GPU (torch.cuda.memory_summary's
    purpose; lucid's allocator has fewer counters, so the table is shorter)."""
    index = _gpu(device)
    s = _C.gpu_memory_stats(index)
    pending = _C.gpu_pending_stats(index)
    free, total = _C.gpu_memory_info(index)
    fraction = _C.gpu_memory_fraction(index)
    rows = [("Allocated memory", s["allocated"], s["max_allocated"]),
            ("Reserved memory", s["reserved"], s["max_reserved"]),
            ("Pending (recorded) bytes", pending["bytes"], None)]
    width = 72
    lines = ["=" * width, f"|{'lucid GPU memory summary, device ID ' + str(index):^{width - 2}}|", "-" * width,
             f"| {'Metric':<30}| {'Cur Usage':>17} | {'Peak Usage':>17} |", "-" * width]
    for name, cur, peak in rows:
        lines.append(f"| {name:<30}| {_size(cur):>17} | {_size(peak) if peak is not None else '':>17} |")
    lines.append("-" * width)
    lines.append(f"| {'Device free / total':<30}| {_size(free):>17} | {_size(total):>17} |")
    if fraction < 1.0:
        lines.append(f"| {'Process limit':<30}| {_size(int(total * fraction)):>17} | {fraction:>17.3f} |")
    lines.append(f"| {'Pending ops':<30}| {pending['ops']:>17} | {'':>17} |")
    lines.append("=" * width)
    return "\n".join(lines) + "\n"


def set_per_process_memory_fraction(fraction, device=None):
    """Caps what lucid's allocator holds from the GPU at fraction * its total memory; a
    request past it raises OutOfMemoryError (after the cache is released)."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    _C.gpu_set_memory_fraction(fraction, _gpu(device))


def get_per_process_memory_fraction(device=None):
    return _C.gpu_memory_fraction(_gpu(device))
