"""Upstream Lucid's nn.utils.copy_parameters_and_buffers (python/lucid/nn/utils/copy_state.py)."""

import numpy as np
import pytest

import lucid
import lucid.nn as nn


def net(dtype=None):
    return nn.Sequential(nn.Linear(3, 4, dtype=dtype), nn.BatchNorm1d(4, dtype=dtype), nn.Linear(4, 2, dtype=dtype))


def test_values_are_copied_into_the_same_tensors():
    lucid.manual_seed(0)
    src, dst = net(), net()
    src(lucid.randn(8, 3))  # (running statistics to copy)
    before = {n: t for n, t in dst.named_parameters()}
    opt = lucid.optim.SGD(dst.parameters(), lr=0.1)
    nn.utils.copy_parameters_and_buffers(src, dst)
    for (n, s), (_, d) in zip(src.state_dict().items(), dst.state_dict().items()):
        np.testing.assert_array_equal(d.numpy(), s.numpy(), err_msg=n)
    for n, p in dst.named_parameters():
        assert p is before[n] and p.requires_grad and p.grad_fn is None
    (dst(lucid.randn(8, 3)) ** 2).sum().backward()  # the optimizer still steps the same tensors
    opt.step()
    assert not np.array_equal(dst[0].weight.detach().numpy(), src[0].weight.detach().numpy())


def test_dtypes_are_converted_to_the_destinations():
    src, dst = net(lucid.float64), net()
    nn.utils.copy_parameters_and_buffers(src, dst)
    assert dst[0].weight.dtype == lucid.float32
    np.testing.assert_allclose(dst[0].weight.detach().numpy(), src[0].weight.detach().numpy(), rtol=1e-6)


def test_mismatches_raise_before_anything_is_written():
    src, dst = net(), nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 3))
    kept = dst[0].weight.detach().clone()
    with pytest.raises(ValueError, match=r"parameter '2.weight' has shape \(2, 4\) on source but \(3, 4\) on dest"):
        nn.utils.copy_parameters_and_buffers(src, dst)
    np.testing.assert_array_equal(dst[0].weight.detach().numpy(), kept.numpy())
    with pytest.raises(KeyError, match="buffer '1.running_mean' of source is missing on dest"):
        nn.utils.copy_parameters_and_buffers(
            src, nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4, track_running_stats=False), nn.Linear(4, 2)))
    with pytest.raises(KeyError, match="parameter '1.weight' of source is missing"):
        nn.utils.copy_parameters_and_buffers(src, nn.Sequential(nn.Linear(3, 4)))
    with pytest.raises(TypeError, match="dest must be a Module, got dict"):
        nn.utils.copy_parameters_and_buffers(src, {})
