"""Lazy modules (nn.modules.lazy): LazyLinear, LazyConv*, LazyBatchNorm*, LazyInstanceNorm*
infer their input size at the first call, materialize their UninitializedParameter /
UninitializedBuffer placeholders in place and become the eager layer, as torch's do."""

import warnings

import numpy as np
import pytest
import torch

import lucid
import lucid.nn as nn
from lucid.nn.modules.lazy import LazyModuleMixin
from lucid.nn.parameter import is_lazy

pytestmark = pytest.mark.filterwarnings("ignore:Lazy modules are a new feature")


def both(shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return lucid.tensor(x), torch.tensor(x)


def test_lazy_linear_becomes_a_linear_initialised_as_an_eager_one():
    m = nn.LazyLinear(3)
    assert isinstance(m.weight, nn.UninitializedParameter) and isinstance(m.weight, nn.Parameter)
    assert is_lazy(m.weight) and is_lazy(m.bias) and m.has_uninitialized_params()
    assert m.in_features == 0 and repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    x, _ = both((4, 7))
    lucid.manual_seed(5)
    y = m(x)
    lucid.manual_seed(5)
    eager = nn.Linear(7, 3)
    assert type(m) is nn.Linear and m.in_features == 7
    assert not isinstance(m.weight, nn.UninitializedParameter) and isinstance(m.weight, nn.Parameter)
    assert tuple(m.weight.shape) == (3, 7) and tuple(m.bias.shape) == (3,)
    np.testing.assert_array_equal(m.weight.detach().numpy(), eager.weight.detach().numpy())
    np.testing.assert_array_equal(m.bias.detach().numpy(), eager.bias.detach().numpy())
    np.testing.assert_allclose(y.detach().numpy(), eager(x).detach().numpy(), rtol=1e-6)
    assert not m._forward_pre_hooks  # (the initialising hook is gone)


def test_an_optimizer_made_before_the_first_call_trains_the_materialized_parameters():
    m = nn.LazyLinear(2, bias=False)
    opt = lucid.optim.SGD(m.parameters(), lr=0.5)
    x, _ = both((3, 4), 1)
    m(x).sum().backward()
    before = m.weight.detach().clone()
    opt.step()
    np.testing.assert_allclose(m.weight.detach().numpy(), (before - 0.5 * m.weight.grad).numpy(), rtol=1e-6)
    assert m.bias is None


@pytest.mark.parametrize("name, args, shape", [
    ("LazyConv1d", (6, 3), (2, 4, 9)),
    ("LazyConv2d", (6, 3), (2, 4, 9, 9)),
    ("LazyConv2d", (6, (3, 1)), (4, 9, 9)),  # unbatched: channels at dim 0
    ("LazyConv3d", (6, 2), (1, 4, 5, 5, 5)),
    ("LazyConvTranspose1d", (6, 3), (2, 4, 9)),
    ("LazyConvTranspose2d", (6, 3), (2, 4, 9, 9)),
    ("LazyConvTranspose3d", (6, 2), (1, 4, 5, 5, 5)),
])
@pytest.mark.parametrize("groups", [1, 2])
def test_lazy_convolutions_match_torchs(name, args, shape, groups):
    x, tx = both(shape, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m, tm = getattr(nn, name)(*args, groups=groups), getattr(torch.nn, name)(*args, groups=groups)
    assert m.in_channels == 0 and is_lazy(m.weight)
    y = m(x)
    ty = tm(tx)
    assert type(m).__name__ == type(tm).__name__ == name.replace("Lazy", "")
    assert m.in_channels == tm.in_channels == 4
    assert tuple(m.weight.shape) == tuple(tm.weight.shape) and tuple(m.bias.shape) == tuple(tm.bias.shape)
    with torch.no_grad():  # (torch's weights into lucid's layer: the same convolution)
        m.weight.data = lucid.tensor(tm.weight.numpy())
        m.bias.data = lucid.tensor(tm.bias.numpy())
    np.testing.assert_allclose(m(x).detach().numpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert tuple(y.shape) == tuple(ty.shape)


def test_a_lazy_convolution_refuses_inputs_it_cannot_read():
    m = nn.LazyConv2d(4, 3)
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input to LazyConv2d"):
        m(lucid.randn(2, 3, 4, 5, 6))
    assert is_lazy(m.weight) and type(m) is nn.LazyConv2d  # (still lazy: a later call may initialise it)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(lucid.randn(1, 3, 5, 5))


@pytest.mark.parametrize("name, shape", [("LazyBatchNorm1d", (8, 5)), ("LazyBatchNorm1d", (8, 5, 3)),
                                         ("LazyBatchNorm2d", (4, 5, 3, 3)), ("LazyBatchNorm3d", (2, 5, 2, 3, 3)),
                                         ("LazyInstanceNorm1d", (4, 5, 6)),
                                         ("LazyInstanceNorm2d", (2, 5, 4, 4)), ("LazyInstanceNorm3d", (2, 5, 2, 3, 3))])
def test_lazy_norms_match_torchs(name, shape):
    x, tx = both(shape, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m, tm = getattr(nn, name)(), getattr(torch.nn, name)()
    assert is_lazy(m.weight) and is_lazy(m.running_mean) and isinstance(m.running_var, nn.UninitializedBuffer)
    assert not isinstance(m.running_var, nn.UninitializedParameter)
    y, ty = m(x), tm(tx)
    assert type(m).__name__ == type(tm).__name__ == name.replace("Lazy", "")
    assert m.num_features == tm.num_features == 5
    for a in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(m, a).detach().numpy(), getattr(tm, a).detach().numpy(), rtol=1e-5, atol=1e-8,
                                   err_msg=a)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_an_unbatched_instance_norm_takes_its_channels_from_dim_0():
    # (torch 2.11-2.15's lazy instance norms read dim 1 here and then refuse their own input)
    m = nn.LazyInstanceNorm1d()
    y = m(lucid.randn(5, 6))
    assert m.num_features == 5 and tuple(m.weight.shape) == (5,) and tuple(y.shape) == (5, 6)


def test_a_lazy_norm_without_affine_or_statistics_has_nothing_to_infer():
    m = nn.LazyBatchNorm1d(affine=False, track_running_stats=False)
    assert m.weight is None and m.running_mean is None and not m.has_uninitialized_params()
    m(lucid.randn(6, 3))
    assert type(m) is nn.BatchNorm1d  # (num_features stays 0, as torch's)


def test_loading_a_state_dict_materializes_the_placeholders():
    eager = nn.Linear(5, 2)
    m = nn.LazyLinear(2)
    sd = m.state_dict()
    assert set(sd) == {"weight", "bias"} and is_lazy(sd["weight"])  # (placeholders saved as themselves)
    m.load_state_dict(eager.state_dict())
    assert not m.has_uninitialized_params() and tuple(m.weight.shape) == (2, 5)
    np.testing.assert_array_equal(m.weight.detach().numpy(), eager.weight.detach().numpy())
    x = lucid.randn(3, 5)
    np.testing.assert_array_equal(m(x).detach().numpy(), eager(x).detach().numpy())
    assert type(m) is nn.Linear
    # a lazy state dict into a lazy module leaves it lazy; into an initialized one, it is refused
    fresh = nn.LazyLinear(2)
    fresh.load_state_dict(nn.LazyLinear(2).state_dict())
    assert fresh.has_uninitialized_params()
    with pytest.raises(RuntimeError, match="shape of an uninitialized parameter"):
        eager.load_state_dict(nn.LazyLinear(2).state_dict())


def test_placeholders_outside_modules():
    p = nn.UninitializedParameter(requires_grad=False, dtype=lucid.float64)
    assert is_lazy(p) and p.dtype == lucid.float64 and not p.requires_grad and hasattr(p, "materialize")
    p.materialize((2, 3))
    assert not is_lazy(p) and tuple(p.shape) == (2, 3) and isinstance(p, nn.Parameter)
    assert not isinstance(p, nn.UninitializedParameter) and not hasattr(p, "materialize")
    assert not hasattr(lucid.zeros(2), "materialize") and not is_lazy(lucid.zeros(2))
    with pytest.raises(AttributeError):
        lucid.zeros(2).materialize((3,))

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.kept = nn.UninitializedBuffer()
            self.scratch = nn.UninitializedBuffer(persistent=False)

    h = Holder()
    assert set(dict(h.named_buffers())) == {"kept", "scratch"} and set(h.state_dict()) == {"kept"}


def test_a_lazy_module_of_ones_own():
    class Scale(LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.UninitializedParameter()

        def initialize_parameters(self, x):
            self.scale.materialize(x.shape[1:])
            with lucid.no_grad():
                self.scale.fill_(2.0)

        def forward(self, x):
            return x * self.scale

    s = Scale()
    out = s(lucid.ones(3, 4))
    assert type(s) is Scale and tuple(s.scale.shape) == (4,)
    np.testing.assert_array_equal(out.numpy(), np.full((3, 4), 2.0, np.float32))

    class Forgetful(LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.UninitializedParameter()

        def initialize_parameters(self, x):
            pass

        def forward(self, x):
            return x

    with pytest.raises(RuntimeError, match="module Forgetful has not been fully initialized"):
        Forgetful()(lucid.ones(2))


def test_making_a_lazy_layer_warns_as_torch_and_upstream_lucid_do():
    with pytest.warns(nn.UninitializedParameterWarning, match="Lazy modules are a new feature"):
        nn.LazyLinear(2)
    assert issubclass(nn.UninitializedParameterWarning, UserWarning)


def test_a_deep_copy_before_the_first_call_is_lazy_too():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = nn.Sequential(nn.LazyLinear(3), nn.ReLU(), nn.LazyLinear(2))
    import copy
    twin = copy.deepcopy(model)
    assert is_lazy(twin[0].weight) and is_lazy(twin[2].bias)
    assert tuple(twin(lucid.randn(4, 7)).shape) == (4, 2) and type(twin[0]) is nn.Linear
    assert is_lazy(model[0].weight)  # (the original is still to be called, and takes another width)
    assert tuple(model(lucid.randn(4, 5)).shape) == (4, 2) and tuple(model[0].weight.shape) == (3, 5)
