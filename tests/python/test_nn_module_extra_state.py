"""Module.get_extra_state / set_extra_state in state dicts, Module.to_empty, the
deprecated Module.register_backward_hook and torch.amp.grad_scaler's place, against torch."""

import warnings

import numpy as np
import pytest
import torch

import lucid
import lucid.nn as nn


def with_vocab(base):
    class Vocab(base.Module):
        def __init__(self):
            super().__init__()
            self.proj = base.Linear(2, 2)
            self.words = ["a", "b"]

        def get_extra_state(self):
            return {"words": list(self.words)}

        def set_extra_state(self, state):
            self.words = list(state["words"])

    return Vocab


@pytest.mark.parametrize("framework", ["lucid", "torch"])
def test_extra_state_rides_in_the_state_dict(framework):
    base = nn if framework == "lucid" else torch.nn
    Vocab = with_vocab(base)
    outer = base.Sequential(Vocab(), base.ReLU())
    outer[0].words = ["x", "y", "z"]
    sd = outer.state_dict()
    assert list(sd) == ["0._extra_state", "0.proj.weight", "0.proj.bias"]  # (a module's own keys first)
    assert sd["0._extra_state"] == {"words": ["x", "y", "z"]}
    other = base.Sequential(Vocab(), base.ReLU())
    other.load_state_dict(sd)
    assert other[0].words == ["x", "y", "z"]
    del sd["0._extra_state"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "0._extra_state"'):
        other.load_state_dict(sd)
    assert other.load_state_dict(sd, strict=False).missing_keys == ["0._extra_state"]  # (reported, not raised)


def test_extra_state_is_unexpected_where_a_module_has_none_and_the_defaults_raise():
    sd = {"weight": lucid.ones(2, 2), "bias": lucid.ones(2), "_extra_state": 1}
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "_extra_state"'):
        nn.Linear(2, 2).load_state_dict(sd)
    with pytest.raises(RuntimeError, match="should never be called"):
        nn.Linear(2, 2).get_extra_state()
    with pytest.raises(RuntimeError, match="should never be called"):
        nn.Linear(2, 2).set_extra_state(None)


def test_to_empty_moves_without_copying_and_keeps_parameters():
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    out = m.to_empty(device="cpu")
    assert out is m and isinstance(m[0].weight, nn.Parameter) and m[0].weight.requires_grad
    assert tuple(m[0].weight.shape) == (4, 3) and m[1].running_mean.dtype == lucid.float32
    shallow = nn.Sequential(nn.Linear(3, 4))
    child = shallow[0].weight
    shallow.to_empty(device="cpu", recurse=False)
    assert shallow[0].weight is child  # (the children's tensors stay)
    with pytest.raises(TypeError):
        m.to_empty("cpu")  # (device is keyword-only, as in torch)


def test_register_backward_hook_sees_grad_output_and_says_how_it_differs():
    lucid.manual_seed(0)
    m = nn.Linear(3, 2)
    seen = []
    with pytest.warns(UserWarning, match="runs it as a full backward hook"):
        handle = m.register_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
    x = lucid.randn(4, 3, requires_grad=True)
    (m(x) * 2).sum().backward()
    (gi,), (go,) = seen[0]
    np.testing.assert_array_equal(go.numpy(), np.full((4, 2), 2.0, np.float32))
    np.testing.assert_allclose(gi.numpy(), x.grad.numpy())
    handle.remove()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m(x).sum().backward()
    assert len(seen) == 1


def test_grad_scaler_module_path():
    from lucid.amp.grad_scaler import GradScaler
    assert GradScaler is lucid.amp.GradScaler
