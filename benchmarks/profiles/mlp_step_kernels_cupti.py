"""The kernels of one MLP 784-512-512-10 Adam step (batch 128), lucid.compile.fused_step
against JAX's jit, each kernel timed by CUPTI as the step runs (no cache flush, no
serialisation: Nsight Compute flushes L2 before each kernel, which a real step never
does, and it segfaults in XLA's process). torch's profiler records every kernel of the
process through CUPTI, whichever library launched it; torch runs no kernel itself here.

    XLA_FLAGS=--xla_dump_to=$OUT/xla python3 benchmarks/profiles/mlp_step_kernels_cupti.py [batch] [lucid]

(`lucid`: lucid's side only) prints, for each side, the kernels of one step (mean over the steps profiled) and their
total; the XLA dump shows which fusions and library calls JAX chose."""

import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


import lucid  # noqa: E402
from _cupti import profile_kernels  # noqa: E402
from _mlp_step import mlp_fused_step  # noqa: E402

STEPS = 20


def lucid_side(batch):
    step, x, y = mlp_fused_step(batch)
    return lambda: step(x, y), lucid.gpu.synchronize


def jax_side(batch):
    import jax.numpy as jnp
    from workloads_jax import _jax_mlp_step, _JaxState

    jax, step = _jax_mlp_step()
    key = jax.random.PRNGKey(0)
    sizes = [(512, 784), (512, 512), (10, 512)]
    params = [(0.03 * jax.random.normal(jax.random.fold_in(key, i), s), jnp.zeros(s[0])) for i, s in enumerate(sizes)]
    x = jax.random.normal(key, (batch, 784))
    y = jax.random.randint(key, (batch,), 0, 10)
    state = _JaxState(jax, step, params, x, y)
    return state, state.sync


def main():
    batch = int(sys.argv[1]) if len(sys.argv) > 1 else 128
    # lucid replays from the fourth call; JAX compiles at the first
    profile_kernels(f"lucid.compile, batch {batch}", *lucid_side(batch), STEPS, warmup=8)
    if sys.argv[2:] != ["lucid"]:
        profile_kernels(f"JAX jit, batch {batch}", *jax_side(batch), STEPS, warmup=8)


if __name__ == "__main__":
    main()
