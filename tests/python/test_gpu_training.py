"""Whole training steps on the GPU against the same steps on the CPU: every kernel of a
step (convolution, batch norm, pooling, linear, LSTM, cross entropy, the optimizer) on
the device, from the same weights to the same weights."""

import copy

import pytest
import torch

import lucid
from conftest import to_torch

pytestmark = pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")
F = lucid.nn.functional


def _train(net, dev, make_opt, batch, steps=3):
    x, y = (t.to(dev) for t in batch)
    opt = make_opt(net.parameters())
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _same_training(cpu, make_opt, batch, rtol=2e-3, atol=2e-4, loss_rtol=1e-4):
    gpu = copy.deepcopy(cpu).to("gpu")
    lc = _train(cpu, "cpu", make_opt, batch)
    lg = _train(gpu, "gpu", make_opt, batch)
    assert lg == pytest.approx(lc, rel=loss_rtol)
    for (name, p), q in zip(cpu.named_parameters(), gpu.parameters()):
        assert q.device.type == "gpu"
        torch.testing.assert_close(to_torch(q.detach()), to_torch(p.detach()), rtol=rtol, atol=atol, msg=name)


def test_resnet_steps_with_sgd():
    # float64: in float32 the sums in another order, through three steps and the batch
    # norms of 24 values a channel at the end, drift 2e-4 apart and hide nothing
    lucid.manual_seed(0)
    net = lucid.utils.models.resnet18(num_classes=5).double()
    batch = (lucid.randn(6, 3, 64, 64, dtype=lucid.float64), lucid.tensor([0, 1, 2, 3, 4, 0]))
    _same_training(net, lambda ps: lucid.optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=1e-4), batch,
                   rtol=1e-7, atol=1e-9, loss_rtol=1e-10)


class _Tagger(lucid.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = lucid.nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.head = lucid.nn.Linear(16, 4)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def test_lstm_steps_with_adam():
    lucid.manual_seed(1)
    batch = (lucid.randn(5, 7, 8), lucid.tensor([0, 3, 1, 2, 3]))
    _same_training(_Tagger(), lambda ps: lucid.optim.Adam(ps, lr=1e-2), batch)


def test_small_cnn_steps_with_adamw():
    lucid.manual_seed(2)
    net = lucid.nn.Sequential(
        # no bias before batch norm: its gradient is rounding noise, which Adam scales up to lr
        lucid.nn.Conv2d(1, 8, 3, padding=1, bias=False), lucid.nn.BatchNorm2d(8), lucid.nn.ReLU(), lucid.nn.MaxPool2d(2),
        lucid.nn.Conv2d(8, 16, 3, padding=1), lucid.nn.ReLU(), lucid.nn.AdaptiveAvgPool2d(1), lucid.nn.Flatten(),
        lucid.nn.Dropout(0.0), lucid.nn.Linear(16, 10))
    batch = (lucid.randn(8, 1, 28, 28), lucid.tensor([0, 1, 2, 3, 4, 5, 6, 7]))
    _same_training(net, lambda ps: lucid.optim.AdamW(ps, lr=1e-3), batch)
