"""The kernels of one jitted JAX MLP 784-512-512-10 Adam step (batch 128), the step
that issue 22's JAX row times (benchmarks/workloads_jax.py), for Nsight Compute beside
mlp_step_kernels.py's lucid step: which kernels XLA runs and how long each takes.

    ncu --clock-control none --profile-from-start off --print-summary per-kernel \\
        --metrics gpu__time_duration.sum python3 benchmarks/profiles/mlp_step_kernels_jax.py

(torch is imported only for cudaProfilerStart/Stop, which act on the process.)"""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
from workloads_jax import _jax_mlp_step, _JaxState  # noqa: E402


def main():
    import jax.numpy as jnp

    jax, step = _jax_mlp_step()
    key = jax.random.PRNGKey(0)
    shapes = ((512, 784), (512, 512), (10, 512))
    params = [(jax.random.normal(key, s) * 0.03, jnp.zeros(s[0])) for s in shapes]
    x, y = jax.random.normal(key, (128, 784)), jax.random.randint(key, (128,), 0, 10)
    state = _JaxState(jax, step, params, x, y)
    for _ in range(6):
        state()
    state.sync()
    torch.cuda.profiler.start()
    state()
    state.sync()
    torch.cuda.profiler.stop()


if __name__ == "__main__":
    main()
