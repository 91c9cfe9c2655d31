"""Convolution workloads: a ResNet-style 3x3 conv forward + backward, and a small CNN
training step (conv-relu-pool x2 + linear, SGD by hand), the same code for lucid and
torch (m.nn.functional)."""

import torch

from workloads import to_lucid, workload

N, C, HW = 8, 64, 56


def _conv_setup():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(N, C, HW, HW, generator=gen)
    w = torch.randn(C, C, 3, 3, generator=gen) * (C * 9) ** -0.5
    b = torch.zeros(C)
    ls = [to_lucid(t) for t in (x, w, b)]
    ts = [x, w.clone(), b.clone()]
    for t in ls + ts:
        t.requires_grad_(True)
    return tuple(ls), tuple(ts)


def conv_fwd_bwd(m, x, w, b):
    y = m.nn.functional.conv2d(x, w, b, padding=1)
    y.sum().backward()
    x.grad = w.grad = b.grad = None
    return y


# forward 2*N*C*C*9*HW*HW; backward twice that (input and weight gradients)
workload(f"conv2d fwd+bwd 3x3 {C}->{C} ch, {HW}x{HW}, batch {N}", "conv", _conv_setup, conv_fwd_bwd,
         flops=3 * 2 * N * C * C * 9 * HW * HW)

B, K = 32, 10


def _cnn_setup():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(B, 1, 28, 28, generator=gen)
    onehot = torch.nn.functional.one_hot(torch.randint(0, K, (B,), generator=gen), K).float()
    params = [torch.randn(16, 1, 3, 3, generator=gen) / 3, torch.zeros(16),
              torch.randn(32, 16, 3, 3, generator=gen) / 12, torch.zeros(32),
              torch.randn(32 * 7 * 7, K, generator=gen) / 40, torch.zeros(K)]
    ls = [to_lucid(t) for t in [x, onehot] + params]
    ts = [x, onehot] + [p.clone() for p in params]
    for p in ls[2:] + ts[2:]:
        p.requires_grad_(True)
    return tuple(ls), tuple(ts)


def cnn_step(m, x, onehot, w1, b1, w2, b2, w3, b3, lr=0.01):
    F = m.nn.functional
    h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1, padding=1)), 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2, padding=1)), 2)
    logits = m.matmul(h.flatten(1), w3) + b3
    loss = -(m.log_softmax(logits, dim=1) * onehot).sum() / x.shape[0]
    loss.backward()
    with m.no_grad():
        for p in (w1, b1, w2, b2, w3, b3):
            p.sub_(p.grad * lr)
            p.grad = None
    return loss


# the two convolutions and the linear layer, forward + both backward products
workload(f"CNN training step [{B},1,28,28] conv16-pool-conv32-pool-linear", "training", _cnn_setup, cnn_step,
         flops=3 * 2 * B * (16 * 9 * 28 * 28 + 32 * 16 * 9 * 14 * 14 + 32 * 49 * K))
