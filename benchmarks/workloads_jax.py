"""GPU rows against JAX's jit (issue 22's anchors: the MLP 784-512-512-10 Adam step at
3,691 steps/s for batch 128 and 2,130 for batch 8192 under jax.jit on the H200). lucid's
side is lucid.compile.fused_step (replayed from its fourth call, Note [Replayed steps]);
the other side is the same step written for JAX: forward, cross entropy, value_and_grad
and torch's Adam update, one jitted function with its state donated. Both start from
the same weights (torch's initialisation, as the other GPU training rows). Float32
products are exact on both sides: JAX's default GPU precision would use TF32 tensor
cores, lucid's and torch's default does not (its matmul precision is set to "highest").
The rows exist only where JAX is installed (the H200 has it)."""

import importlib.util
import os

import torch

import lucid

from workloads import to_lucid, workload

if importlib.util.find_spec("jax") is not None:
    # JAX takes 75% of the GPU's memory at its first use unless told otherwise.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def _jax_mlp_step(lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_default_matmul_precision", "highest")

    def loss_fn(params, x, y):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w.T + b
            if i < len(params) - 1:
                h = jax.nn.relu(h)
        logp = jax.nn.log_softmax(h)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    def step(params, m, v, t, x, y):
        loss, g = jax.value_and_grad(loss_fn)(params, x, y)
        t = t + 1
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        step_size = lr / (1 - b1 ** t)
        bias2_sqrt = jnp.sqrt(1 - b2 ** t)
        params = jax.tree_util.tree_map(
            lambda p, m, v: p - step_size * m / (jnp.sqrt(v) / bias2_sqrt + eps), params, m, v)
        return params, m, v, t, loss

    return jax, jax.jit(step, donate_argnums=(0, 1, 2))


class _JaxState:
    """The JAX side's carried state (params, Adam moments, step count) and last loss."""

    def __init__(self, jax, step, params, x, y):
        import jax.numpy as jnp

        self.step = step
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        self.state = (params, zeros, jax.tree_util.tree_map(jnp.zeros_like, params), jnp.float32(0))
        self.x, self.y = x, y
        self.loss = None

    def __call__(self):
        params, m, v, t, self.loss = self.step(*self.state, self.x, self.y)
        self.state = (params, m, v, t)
        return self.loss

    def sync(self):
        if self.loss is not None:
            self.loss.block_until_ready()


def _mlp_against_jax(batch):
    holder = {}

    def setup():
        import jax.numpy as jnp

        jax, step = _jax_mlp_step()
        torch.manual_seed(0)
        nn = torch.nn
        tm = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        lm = lucid.nn.Sequential(lucid.nn.Linear(784, 512), lucid.nn.ReLU(), lucid.nn.Linear(512, 512),
                                 lucid.nn.ReLU(), lucid.nn.Linear(512, 10))
        lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
        lm = lm.to("gpu")
        gen = torch.Generator().manual_seed(0)
        x, y = torch.randn(batch, 784, generator=gen), torch.randint(0, 10, (batch,), generator=gen)
        lstep = lucid.compile.fused_step(lm, lucid.nn.functional.cross_entropy,
                                         lucid.optim.Adam(lm.parameters(), lr=1e-3))
        layers = [(tm[i].weight, tm[i].bias) for i in (0, 2, 4)]
        params = [(jnp.asarray(w.detach().numpy()), jnp.asarray(b.detach().numpy())) for w, b in layers]
        holder["jax"] = _JaxState(jax, step, params, jnp.asarray(x.numpy()), jnp.asarray(y.numpy()))
        return (lstep, to_lucid(x, "gpu"), to_lucid(y, "gpu")), (holder["jax"],)

    def lucid_step(m, step, x, y):
        return step(x, y)

    workload(f"GPU MLP 784-512-512-10 batch {batch} training step (Adam) lucid.compile against JAX jit",
             "gpu train", setup, lucid_step, torch_fn=lambda m, state: state(),
             flops=3 * 2 * batch * (784 * 512 + 512 * 512 + 512 * 10), device="gpu", ceiling="none",
             other_sync=lambda: holder["jax"].sync())


if importlib.util.find_spec("jax") is not None:
    for _batch in (128, 8192):
        _mlp_against_jax(_batch)
