"""Optimizer steps: the fused step of lucid.optim against torch.optim's default step on
the same CPU tensors (torch's default on CPU is its single-tensor loop)."""

import math

import torch

from workloads import to_lucid, workload

# 10 [1000, 1000] weights and their 10 biases: 10.01M float32 parameters
SHAPES = [(1000, 1000)] * 10 + [(1000,)] * 10
NUMEL = sum(math.prod(s) for s in SHAPES)


def _adam_setup():
    gen = torch.Generator().manual_seed(0)
    ts = [torch.randn(s, generator=gen) for s in SHAPES]
    gs = [torch.randn(s, generator=gen) for s in SHAPES]
    import lucid

    lp = [lucid.nn.Parameter(to_lucid(t)) for t in ts]
    tp = [torch.nn.Parameter(t.clone()) for t in ts]
    for p, g in zip(lp, gs):
        p.grad = to_lucid(g)
    for p, g in zip(tp, gs):
        p.grad = g.clone()
    return (lucid.optim.Adam(lp, lr=1e-3),), (torch.optim.Adam(tp, lr=1e-3),)


def adam_step(m, opt):
    opt.step()


# each element: read parameter, gradient and both moments; write parameter and both moments
workload(f"Adam step, {NUMEL / 1e6:.1f}M parameters in {len(SHAPES)} tensors", "training", _adam_setup, adam_step,
         nbytes=7 * 4 * NUMEL)
