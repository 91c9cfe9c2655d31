"""The MLP 784-512-512-10 Adam step (issue 22's MLP rows) under
lucid.compile.fused_step, on the GPU: what the profiles of that step share."""

import lucid


def mlp_fused_step(batch=128):
    """(step, x, y): the compiled step and a batch for it; call step(x, y)."""
    nn, F = lucid.nn, lucid.nn.functional
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10)).to("gpu")
    step = lucid.compile.fused_step(model, F.cross_entropy, lucid.optim.Adam(model.parameters(), lr=1e-3))
    return step, lucid.randn(batch, 784, device="gpu"), lucid.randint(0, 10, (batch,), device="gpu")
