"""A linear layer and its relu (Note [Product epilogues], docs/GPU_LAZY.md), timed in one process: lucid with
the relu in the product's epilogue (the product's result dies at the flush), lucid with the two kernels (the
product's result held, so the pass leaves the pair alone), torch eager and torch.compile. Per call, from 50 calls
between synchronisations, the best of five; then an MLP 784-512-512-10 Adam step (batch 128 and 8192) in plain
eager code, with the epilogues and without them (the model holding its products' results through the flush, so
the pass leaves each pair alone).

    python3 benchmarks/profiles/linear_relu.py [--rows 8192] [--n 1024]
"""

import argparse

import numpy as np
import torch

import lucid
import lucid.nn as lnn
import lucid.nn.functional as F
from fused_norm import per_call


def products(rows, n, dtype):
    rng = np.random.default_rng(0)
    x0, w0, b0 = (rng.standard_normal(s, dtype=np.float32) for s in ((rows, n), (n, n), (n,)))
    lx, lw, lb = (lucid.tensor(v, device="gpu").to(getattr(lucid, dtype)) for v in (x0, w0, b0))
    tx, tw, tb = (torch.tensor(v, device="cuda").to(getattr(torch, dtype)) for v in (x0, w0, b0))
    held = []

    def fused():
        y = F.relu(F.linear(lx, lw, lb))
        lucid.gpu.flush()
        return y

    def unfused():
        h = F.linear(lx, lw, lb)
        held.append(h)  # held at the flush: the relu stays its own kernel
        y = F.relu(h)
        lucid.gpu.flush()
        held.clear()
        return y

    def eager():
        return torch.relu(torch.nn.functional.linear(tx, tw, tb))

    compiled = torch.compile(eager)
    sync_l, sync_t = lucid.gpu.synchronize, torch.cuda.synchronize
    f, u = per_call(fused, sync_l), per_call(unfused, sync_l)
    e, c = per_call(eager, sync_t), per_call(compiled, sync_t)
    print(f"linear + relu {dtype} [{rows}, {n}] -> {n}: lucid {f * 1e6:.1f} us, lucid with the product's result held "
          f"{u * 1e6:.1f} us ({f / u:.2f}x), torch eager {e * 1e6:.1f} us ({f / e:.2f}x), torch.compile "
          f"{c * 1e6:.1f} us ({f / c:.2f}x)")


class MLP(lnn.Module):
    def __init__(self, hold):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = lnn.Linear(784, 512), lnn.Linear(512, 512), lnn.Linear(512, 10)
        self.hold, self.held = hold, []

    def forward(self, x):
        h1 = self.fc1(x)
        h2 = self.fc2(F.relu(h1))
        if self.hold:
            self.held = [h1, h2]  # the products' results outlive the flush: no epilogue
        return self.fc3(F.relu(h2))


def mlp_steps(batch):
    rng = np.random.default_rng(1)
    x = lucid.tensor(rng.standard_normal((batch, 784), dtype=np.float32), device="gpu")
    t = lucid.tensor(rng.integers(0, 10, batch), device="gpu")
    times = []
    for hold in (False, True):
        lucid.manual_seed(0)
        model = MLP(hold).to("gpu")
        opt = lucid.optim.Adam(model.parameters(), lr=1e-3)

        def step():
            opt.zero_grad()
            F.cross_entropy(model(x), t).backward()
            opt.step()
            model.held = []

        times.append(per_call(step, lucid.gpu.synchronize, calls=100))
    print(f"MLP 784-512-512-10 Adam step batch {batch}, plain eager code: with the epilogues {times[0] * 1e6:.1f} us, "
          f"without {times[1] * 1e6:.1f} us ({times[0] / times[1]:.2f}x)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=8192)
    ap.add_argument("--n", type=int, default=1024)
    args = ap.parse_args()
    products(args.rows, args.n, "float32")
    products(args.rows, args.n, "bfloat16")  # (no epilogue: the pass takes float32 and float64 products only)
    for batch in (128, 8192):
        mlp_steps(batch)


if __name__ == "__main__":
    main()
