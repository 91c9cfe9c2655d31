"""Tensor.grad as a plain slot (before the autograd engine): assignment rules as PyTorch."""

import pytest
import torch

import lucid


def test_grad_starts_none_and_round_trips():
    t = lucid.zeros(2, 3, requires_grad=True)
    assert t.grad is None
    t.grad = lucid.arange(6, dtype=lucid.float32).reshape(2, 3)
    assert t.grad.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    t.grad = None
    assert t.grad is None


def test_non_contiguous_grad_is_stored_contiguously():
    t = lucid.zeros(2, 3)
    t.grad = lucid.arange(6, dtype=lucid.float32).reshape(3, 2).t()
    assert t.grad.is_contiguous()
    assert t.grad.tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]


@pytest.mark.parametrize("bad", [
    lambda m: m.zeros(3),
    lambda m: m.zeros(2, 3, dtype=m.float64),
])
def test_mismatched_grad_raises_like_torch(bad):
    tt = torch.zeros(2, 3)
    with pytest.raises(Exception) as te:
        tt.grad = bad(torch)
    t = lucid.zeros(2, 3)
    with pytest.raises(type(te.value), match="different"):
        t.grad = bad(lucid)


def test_non_tensor_grad_raises_type_error():
    with pytest.raises(TypeError):
        torch.zeros(2).grad = [1.0, 2.0]
    with pytest.raises(TypeError):
        lucid.zeros(2).grad = [1.0, 2.0]
