"""Normalisation-layer workloads (issue 5): BatchNorm2d and GroupNorm forward, and
forward + backward, on a ResNet-sized activation [8, 64, 56, 56], against torch.
Registered into workloads.REGISTRY by the import at the end of workloads.py."""

import torch

from workloads import F32, workload

N, C, H, W = 8, 64, 56, 56
SHAPE = (N, C, H, W)
NUMEL = N * C * H * W


def _setup(requires_grad):
    def setup():
        import lucid
        from workloads import to_lucid
        gen = torch.Generator().manual_seed(0)
        x = torch.randn(*SHAPE, generator=gen)
        g = torch.randn(*SHAPE, generator=gen)
        w, b = torch.rand(C, generator=gen) + 0.5, torch.randn(C, generator=gen)
        ts = [x, g, w, b]
        ls = [to_lucid(t) for t in ts]
        if requires_grad:
            for t in (ts[0], ts[2], ts[3], ls[0], ls[2], ls[3]):
                t.requires_grad_(True)
        ts.append(torch.zeros(C)), ts.append(torch.ones(C))  # running stats
        ls.append(lucid.zeros(C)), ls.append(lucid.ones(C))
        return tuple(ls), tuple(ts)
    return setup


def _f(m):
    return m.nn.functional


def bn_forward(m, x, g, w, b, rm, rv):
    return _f(m).batch_norm(x, rm, rv, w, b, training=True)


def bn_train(m, x, g, w, b, rm, rv):
    y = _f(m).batch_norm(x, rm, rv, w, b, training=True)
    y.backward(g)
    x.grad = w.grad = b.grad = None
    return y


def bn_eval(m, x, g, w, b, rm, rv):
    return _f(m).batch_norm(x, rm, rv, w, b, training=False)


def gn_forward(m, x, g, w, b, rm, rv):
    return _f(m).group_norm(x, 32, w, b)


def gn_train(m, x, g, w, b, rm, rv):
    y = _f(m).group_norm(x, 32, w, b)
    y.backward(g)
    x.grad = w.grad = b.grad = None
    return y


# bytes: forward reads x twice (stats, then normalise) and writes y; backward reads dy and x
# twice and writes dx. The least traffic counted: x + y forward, + dy + x + dx backward.
_S = "[8,64,56,56]"
workload(f"BatchNorm2d forward (train) {_S}", "norm", _setup(False), bn_forward, nbytes=2 * NUMEL * F32)
workload(f"BatchNorm2d forward (eval) {_S}", "norm", _setup(False), bn_eval, nbytes=2 * NUMEL * F32)
workload(f"BatchNorm2d forward+backward {_S}", "norm", _setup(True), bn_train, nbytes=5 * NUMEL * F32)
workload(f"GroupNorm(32) forward {_S}", "norm", _setup(False), gn_forward, nbytes=2 * NUMEL * F32)
workload(f"GroupNorm(32) forward+backward {_S}", "norm", _setup(True), gn_train, nbytes=5 * NUMEL * F32)
