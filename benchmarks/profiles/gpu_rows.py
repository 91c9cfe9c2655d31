"""Where a GPU benchmark row's step time goes, lucid beside torch in one process:

    python3 benchmarks/profiles/gpu_rows.py "conv2d 3x3 64->64 56x56 batch 8" [--steps 20] [--top 12]

For each row whose name contains the argument, each side runs its step `--steps` times
(after a warm-up) three ways: timed without synchronising until the end (host time a
step: what the Python and C++ code cost, while the GPU queue absorbs the kernels), timed
with the sync (wall time a step), and under torch.profiler with CUPTI, which sees every
kernel and CUDA runtime call of the process, lucid's included. It prints per step: the
kernels by device time, the runtime calls by count and host time (a
cudaStreamSynchronize or cudaMalloc in a step shows here), the GPU's busy time and the
largest idle gaps between kernels with the kernel before each (a host stall between
two launches shows there)."""

import argparse
import collections
import os
import sys
import time

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

import lucid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from workloads import REGISTRY  # noqa: E402


def timed(fn, sync, steps):
    """(host seconds a step, wall seconds a step) of `steps` calls."""
    sync()
    start = time.perf_counter()
    for _ in range(steps):
        fn()
    host = time.perf_counter() - start
    sync()
    return host / steps, (time.perf_counter() - start) / steps


def report(label, fn, sync, steps, top):
    for _ in range(5):
        fn()
    host, wall = min(timed(fn, sync, steps) for _ in range(3))
    sync()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            fn()
        sync()
    events = prof.events()
    kernels = sorted((e for e in events if e.device_type == DeviceType.CUDA), key=lambda e: e.time_range.start)
    runtime = [e for e in events if e.device_type == DeviceType.CPU and e.name.startswith("cu")]
    busy = sum(e.time_range.elapsed_us() for e in kernels) / steps
    print(f"\n== {label}: wall {wall * 1e6:.1f} us a step, host {host * 1e6:.1f} us, "
          f"kernels {busy:.1f} us ({len(kernels) / steps:.1f} a step)")
    by_kernel = collections.defaultdict(lambda: [0, 0.0])
    for e in kernels:
        by_kernel[e.name][0] += 1
        by_kernel[e.name][1] += e.time_range.elapsed_us()
    for name, (n, us) in sorted(by_kernel.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"  {us / steps:8.1f} us {n / steps:5.1f}x  {name[:110]}")
    by_call = collections.defaultdict(lambda: [0, 0.0])
    for e in runtime:
        by_call[e.name][0] += 1
        by_call[e.name][1] += e.time_range.elapsed_us()
    print("  runtime calls a step (count, host us):")
    for name, (n, us) in sorted(by_call.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"  {us / steps:8.1f} us {n / steps:5.1f}x  {name[:80]}")
    gaps = [(b.time_range.start - a.time_range.end, a.name) for a, b in zip(kernels, kernels[1:])]
    idle = sum(g for g, _ in gaps if g > 0) / steps
    print(f"  idle between kernels: {idle:.1f} us a step; largest gaps (after kernel):")
    for g, name in sorted(gaps, reverse=True)[:min(top, 6)]:
        print(f"  {g:8.1f} us  {name[:100]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("only", help="rows whose name contains this")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    rows = [w for w in REGISTRY if w.device == "gpu" and args.only in w.name]
    if not rows:
        print(f"no GPU row matches {args.only!r}")
        return 1
    for w in rows:
        print(f"\n#### {w.name}")
        ls, ts = w.setup()
        tfn = w.torch_fn or w.fn
        report("lucid", lambda: w.fn(lucid, *ls), lucid.gpu.synchronize, args.steps, args.top)
        report("torch", lambda: tfn(torch, *ts), torch.cuda.synchronize, args.steps, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
