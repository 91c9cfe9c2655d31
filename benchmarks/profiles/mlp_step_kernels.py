"""The kernels of one replayed MLP 784-512-512-10 Adam step (batch 128) under
lucid.compile.fused_step, for Nsight Compute: the step is bound by the GPU (issue 22's
JAX row), so what decides it is how many kernels it runs and how long each takes.
Run under ncu, which profiles only between the profiler start and stop below:

    ncu --clock-control none --profile-from-start off --print-summary per-kernel \\
        --metrics gpu__time_duration.sum python3 benchmarks/profiles/mlp_step_kernels.py

(torch is imported only for cudaProfilerStart/Stop, which act on the process.)"""

import torch

import lucid
from _mlp_step import mlp_fused_step


def main():
    step, x, y = mlp_fused_step(128)
    for _ in range(6):  # from the fourth call on, the step is replayed
        step(x, y)
    lucid.gpu.synchronize()
    torch.cuda.profiler.start()
    step(x, y)
    lucid.gpu.synchronize()
    torch.cuda.profiler.stop()
    print("replays", step.stats["replays"])


if __name__ == "__main__":
    main()
