"""A training run saved mid-way and resumed in fresh objects reproduces the
uninterrupted run bit for bit: model, optimizer, scheduler and RNG state all travel
through lucid.save / lucid.load."""

import pytest

import lucid
import lucid.nn as nn


@pytest.fixture
def deterministic():
    """Bit for bit on the GPU too: cuDNN's fastest convolution gradients add with atomics
    unless deterministic algorithms are asked for (as in torch); the CPU's kernels are
    deterministic either way."""
    before = lucid.get_deterministic_debug_mode()
    lucid.use_deterministic_algorithms(True)
    yield
    lucid.set_deterministic_debug_mode(before)


def make():
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Dropout(0.3),
                          nn.Flatten(), nn.Linear(4 * 8 * 8, 10))
    opt = lucid.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.05)
    sched = lucid.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=20)
    return model, opt, sched


def train(model, opt, sched, steps):
    for _ in range(steps):
        x = lucid.randn(16, 1, 8, 8)  # drawn from the global generator: its state must travel too
        y = lucid.randint(0, 10, (16,))
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
    return [p.detach().clone() for p in model.state_dict().values()]


def test_resumed_run_matches_the_uninterrupted_one_bit_for_bit(tmp_path, deterministic):
    model, opt, sched = make()
    train(model, opt, sched, 6)
    path = tmp_path / "ckpt.pt"
    lucid.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                "rng": lucid.get_rng_state()}, path)
    expected = train(model, opt, sched, 6)

    model2, opt2, sched2 = make()
    lucid.manual_seed(123)  # a different generator state, which the checkpoint replaces
    ckpt = lucid.load(path)
    model2.load_state_dict(ckpt["model"])
    opt2.load_state_dict(ckpt["optimizer"])
    sched2.load_state_dict(ckpt["scheduler"])
    lucid.set_rng_state(ckpt["rng"])
    resumed = train(model2, opt2, sched2, 6)

    assert len(resumed) == len(expected)
    for a, b in zip(resumed, expected):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.to_bytes() == b.to_bytes()
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
