"""Chooses OpenBLAS's CPU kernels before the engine loads OpenBLAS.

Debian 12's OpenBLAS (0.3.21, DYNAMIC_ARCH) picks its kernels from the CPU model
number when the library loads, and falls back to "Prescott" (SSE3, ~4x slower sgemm)
for CPUs newer than it knows, even when they have AVX-512. The choice is made once, in
the library's constructor, from the OPENBLAS_CORETYPE environment variable when set,
so lucid sets it from the CPU's feature flags before `lucid._C` (which links OpenBLAS)
is imported. A value the user set is left alone.
"""

import os


def _kernel_for_flags(flags):
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "Cooperlake" if "avx512_bf16" in flags else "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "Haswell"
    return None


def configure():
    if "OPENBLAS_CORETYPE" in os.environ:
        return
    try:
        with open("/proc/cpuinfo") as f:  # Linux; elsewhere OpenBLAS decides alone
            for line in f:
                if line.startswith("flags"):
                    core = _kernel_for_flags(set(line.split(":", 1)[1].split()))
                    if core:
                        os.environ["OPENBLAS_CORETYPE"] = core
                    return
    except OSError:
        return


configure()
