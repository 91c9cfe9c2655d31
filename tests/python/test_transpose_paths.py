"""Copies and binary ops that read an operand across its memory order (a transposed
view): the 16 x 16 register transposes (core/transpose.cpp) with their row and
column edges, the streamed stores of outputs of 8 MiB and more, and the gathered
strip of run_binary (a transposed operand next to a contiguous one), against torch
for 4-byte and other dtypes. The copies and binary ops run on every device (on the GPU:
the strided copy and elementwise kernels); the streamed-store test is the CPU's."""
import pytest
import torch

import lucid
from conftest import to_torch, default_device

SHAPES = [(1, 1), (3, 17), (16, 16), (17, 33), (64, 64), (100, 130), (65, 1100), (1030, 70), (1500, 1500)]
DTYPES = ["float32", "int32", "float64", "float16", "bool"]


def _pair(shape, dtype, seed, device=None):
    device = device or default_device()
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(*shape, generator=g) * 50
    t = t > 0 if dtype == "bool" else t.to(getattr(torch, dtype))
    return lucid.from_numpy(t.numpy()).clone().to(device), t


def _same(got, want, device):
    assert got.device.type == device
    assert torch.equal(to_torch(got), want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_transposed_copy(shape, dtype, device):
    l, t = _pair(shape, dtype, 1, device)
    _same(l.t().contiguous(), t.t().contiguous(), device)
    # a batch of transposes (the copy's outer loop) and a transposed slice (offset rows)
    lb, tb = _pair((3,) + shape, dtype, 2, device)
    _same(lb.transpose(1, 2).contiguous(), tb.transpose(1, 2).contiguous(), device)
    if shape[0] > 2 and shape[1] > 2:
        _same(l[1:, 2:].t().contiguous(), t[1:, 2:].t().contiguous(), device)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_transposed_plus_contiguous(shape, dtype, device):
    l, t = _pair(shape, dtype, 3, device)
    lo, to = _pair(shape[::-1], dtype, 4, device)
    for got, want in ((l.t() + lo, t.t() + to), (lo - l.t(), to - t.t()), (l.t() * lo, t.t() * to)):
        _same(got, want, device)


def test_streamed_copy_is_complete():
    # 2100 x 1100 float32 = 8.8 MiB: past the streaming threshold, with edge rows and
    # columns; every element checked.
    t = torch.arange(2100 * 1100, dtype=torch.float32).reshape(2100, 1100)
    l = lucid.from_numpy(t.numpy())
    assert torch.equal(to_torch(l.t().contiguous()), t.t().contiguous())
    assert torch.equal(to_torch(l.t() + l.t()), t.t() * 2)
