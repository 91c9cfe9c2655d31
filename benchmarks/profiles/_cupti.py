"""Each kernel of a repeated step, timed by CUPTI through torch's profiler, which records
every kernel of the process whichever library launched it (lucid's, cuBLAS's, cuDNN's,
XLA's, Triton's). No cache flush and no serialisation, as a real step runs (Nsight
Compute flushes L2 before each kernel). Shared by the *_kernels profiles."""

import time
from collections import defaultdict

import torch


def profile_kernels(name, run, sync, steps, warmup, top=None):
    """`run` `warmup` times, then `steps` times timed (waited for), then `steps` times
    profiled; prints the step's time, and each kernel's time and launches a step, the
    slowest first (the `top` slowest)."""
    for _ in range(warmup):
        run()
    sync()
    start = time.perf_counter()
    for _ in range(steps):
        run()
    sync()
    wall = (time.perf_counter() - start) / steps * 1e6
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            run()
        sync()
    per_kernel = defaultdict(lambda: [0, 0.0])
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA and ev.device_time > 0:
            entry = per_kernel[ev.name]
            entry[0] += 1
            entry[1] += ev.device_time
    total = sum(t for _, t in per_kernel.values()) / steps
    launches = sum(c for c, _ in per_kernel.values()) / steps
    print(f"\n== {name}: {wall:.1f} us a step (waited for), {launches:.1f} kernels, {total:.1f} us of kernel time")
    for kname, (count, t) in sorted(per_kernel.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{t / steps:9.2f} us  x{count / steps:5.1f}  {kname[:140]}")
