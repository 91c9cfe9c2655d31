"""The kernels of one step of the big Transformer encoder (4 layers d1024 seq 1024 batch 16,
bfloat16 autocast, Adam): lucid.compile.fused_step against torch.compile, each kernel
timed by CUPTI through torch's profiler (and the step's time, waited for, before) as the steps run (it records every kernel of the
process, whichever library launched it). Where the two sides' kernel time differs, by
kernel family: the products, attention, elementwise and reductions.

    python3 benchmarks/profiles/encoder_step_kernels.py [steps]"""

import os
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import torch  # noqa: E402

import lucid  # noqa: E402
import workloads_train_gpu as w  # noqa: E402


def sides():
    big = w.BIG
    setup = w._compiled_setup(w._encoder(big["layers"], big["d"], big["heads"], big["ff"]),
                              lambda gen: [torch.randn(big["batch"], big["seq"], big["d"], generator=gen)],
                              loss_fn=w._float_mean_square)
    lucid_args, torch_args = setup()
    return (("lucid.compile", lambda: w._compiled_autocast_step(lucid, *lucid_args), lucid.gpu.synchronize),
            ("torch.compile", lambda: w._compiled_autocast_step(torch, *torch_args), torch.cuda.synchronize))


def profile(name, run, sync, steps):
    for _ in range(6):  # lucid replays from the fourth call; torch.compile compiles at the first
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
    for kname, (count, t) in sorted(per_kernel.items(), key=lambda kv: -kv[1][1])[:45]:
        print(f"{t / steps:9.1f} us  x{count / steps:5.1f}  {kname[:140]}")


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    for name, run, sync in sides():
        profile(name, run, sync, steps)


if __name__ == "__main__":
    main()
