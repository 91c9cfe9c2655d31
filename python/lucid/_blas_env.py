"""Configures OpenBLAS before the engine loads it: its CPU kernels and how long its
idle threads spin; and finds MKL (mkl_library), which the engine opens at its first use.

Debian 12's OpenBLAS (0.3.21, DYNAMIC_ARCH) picks its kernels from the CPU model
number when the library loads, and falls back to "Prescott" (SSE3, ~4x slower sgemm)
for CPUs newer than it knows, even when they have AVX-512. The choice is made once, in
the library's constructor, from the OPENBLAS_CORETYPE environment variable when set,
so lucid sets it from the CPU's feature flags before `lucid._C` (which links OpenBLAS)
is imported.

After each product OpenBLAS's worker threads spin (calling sched_yield) for
2^OPENBLAS_THREAD_TIMEOUT cycles, 2^28 (~0.1 s) by default, before they sleep. A
spinning worker takes a core from the elementwise op that follows a matmul on lucid's
own pool, so lucid caps the spin at 2^19 cycles (~0.2 ms), the same time its own pool
threads spin before sleeping (core/parallel.cpp): long enough that back-to-back
products (an RNN's steps) never pay a wake-up, short enough that other work gets the
cores. A value the user set is left alone.
"""

import os


def _kernel_for_flags(flags):
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "Cooperlake" if "avx512_bf16" in flags else "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "Haswell"
    return None


def configure():
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "19")
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


def mkl_library(thorough=False):
    """The path of the libmkl_rt that PyPI's `mkl` package installed (where the loader's
    own search would miss it), or None: the environment's lib folder (a glob, fast
    enough for import), then, when `thorough`, the package's own file list (~30 ms)."""
    import glob
    import sys
    candidates = glob.glob(os.path.join(sys.prefix, "lib", "libmkl_rt.so*"))
    if not candidates and thorough:
        import importlib.metadata
        try:
            candidates = [str(f.locate()) for f in importlib.metadata.files("mkl") or ()
                          if f.name.startswith("libmkl_rt.so")]
        except importlib.metadata.PackageNotFoundError:
            pass
    found = [p for p in sorted(candidates, reverse=True) if os.path.exists(p)]
    return os.path.abspath(found[0]) if found else None


configure()
