"""Whole training runs on the GPU against the same steps on the CPU: every kernel of a
step (convolution, batch norm, pooling, linear, LSTM, attention, cross entropy, the
optimizer) on the device, from the same weights to the same weights after 20 steps.
The models are float64, so that 20 steps of sums in another order stay far below the
tolerances while a wrong kernel does not."""

import copy

import pytest
import torch

import lucid
from conftest import to_torch

# The GPU against the CPU: a tensor made here without a device is the CPU side, whatever
# the run's default device (LUCID_TEST_DEFAULT_DEVICE).
pytestmark = [pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here"),
              pytest.mark.usefixtures("cpu_default")]
F = lucid.nn.functional


def _train(net, dev, make_opt, batch, steps=20):
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


def _same_training(cpu, make_opt, batch, rtol=1e-7, atol=1e-9, loss_rtol=1e-10):
    gpu = copy.deepcopy(cpu).to("gpu")
    lc = _train(cpu, "cpu", make_opt, batch)
    lg = _train(gpu, "gpu", make_opt, batch)
    assert lg == pytest.approx(lc, rel=loss_rtol)
    for (name, p), q in zip(cpu.named_parameters(), gpu.parameters()):
        assert q.device.type == "gpu"
        torch.testing.assert_close(to_torch(q.detach()), to_torch(p.detach()), rtol=rtol, atol=atol, msg=name)
    for (name, b), c in zip(cpu.named_buffers(), gpu.buffers()):
        torch.testing.assert_close(to_torch(c), to_torch(b), rtol=rtol, atol=atol, msg=name)


def test_resnet_steps_with_sgd():
    lucid.manual_seed(0)
    net = lucid.utils.models.resnet18(num_classes=5).double()
    batch = (lucid.randn(6, 3, 64, 64, dtype=lucid.float64), lucid.tensor([0, 1, 2, 3, 4, 0]))
    _same_training(net, lambda ps: lucid.optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=1e-4), batch)


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
    batch = (lucid.randn(5, 7, 8, dtype=lucid.float64), lucid.tensor([0, 3, 1, 2, 3]))
    _same_training(_Tagger().double(), lambda ps: lucid.optim.Adam(ps, lr=1e-2), batch)


def test_the_main_jobs_cnn_with_adamw():
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
    import train_fashion_mnist as main_job

    lucid.manual_seed(2)
    net = main_job.build_model(lucid).double()
    net[11].p = 0.0  # its dropout off: the two devices draw their masks in another order
    # The convolutions' biases sit before batch norms, which cancel them: their gradient is
    # zero up to rounding, which Adam would scale to full steps of noise. Frozen.
    net[0].bias.requires_grad_(False)
    net[4].bias.requires_grad_(False)
    batch = (lucid.randn(8, 1, 28, 28, dtype=lucid.float64), lucid.tensor([0, 1, 2, 3, 4, 5, 6, 7]))
    _same_training(net, lambda ps: lucid.optim.AdamW(ps, lr=1e-3), batch)


class _Encoder(lucid.nn.Module):
    def __init__(self):
        super().__init__()
        layer = lucid.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
        self.encoder = lucid.nn.TransformerEncoder(layer, 2)
        self.head = lucid.nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.encoder(x).mean(1))


def test_transformer_encoder_with_adam():
    lucid.manual_seed(3)
    batch = (lucid.randn(4, 6, 16, dtype=lucid.float64), lucid.tensor([0, 2, 1, 2]))
    _same_training(_Encoder().double(), lambda ps: lucid.optim.Adam(ps, lr=1e-3), batch)
