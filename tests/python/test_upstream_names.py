"""Upstream Lucid's names beside torch's and torch's conjugate-transpose properties
(python/lucid/_upstream.py): isreal, Tensor.mH / H / adjoint on complex tensors,
histogram2d against numpy, pad, expand_dims against numpy, squeeze_all, to_dlpack,
is_storage, bool_."""

import numpy as np
import pytest
import torch

import lucid
from conftest import to_lucid, to_torch


def test_isreal_and_conjugate_transposes(device):
    z = torch.tensor([[1 + 2j, 3.0], [0j, -1j]], dtype=torch.complex128)
    lz = to_lucid(z, device)
    assert lucid.isreal(lz).tolist() == torch.isreal(z).tolist() == lz.isreal().tolist()
    assert lucid.isreal(lucid.tensor([1.5, 2.0], device=device)).tolist() == [True, True]
    for got, want in ((lz.mH, z.mH), (lz.H, z.H), (lucid.adjoint(lz), z.adjoint()), (lz.adjoint(), z.adjoint())):
        assert got.tolist() == want.tolist()
    batch = torch.randn(3, 2, 4)
    assert to_lucid(batch, device).mH.tolist() == batch.mH.tolist()
    assert lucid.tensor(2.0, device=device).H.item() == 2.0
    with pytest.raises(RuntimeError, match="only supported on matrices"):
        lucid.ones(3, device=device).H
    with pytest.raises(RuntimeError, match="only supported on matrices or batches"):
        lucid.ones(3, device=device).mH
    g = lz.detach().requires_grad_()  # the conjugate transpose's gradient is the gradient's
    (g.mH * to_lucid(z.mH, device)).abs().sum().backward()
    zt = z.clone().requires_grad_()
    (zt.mH * z.mH).abs().sum().backward()
    torch.testing.assert_close(to_torch(g.grad.cpu()), zt.grad)


def test_histogram2d_matches_numpy(device):
    rng = np.random.default_rng(0)
    x, y = rng.random(200), rng.random(200) * 3
    for kwargs in ({"bins": (4, 5), "range": [[0, 1], [0, 3]]}, {"bins": 6}, {"bins": 3, "density": True}):
        h, xe, ye = lucid.histogram2d(lucid.tensor(x, device=device), lucid.tensor(y, device=device), **kwargs)
        nh, nxe, nye = np.histogram2d(x, y, **kwargs)
        np.testing.assert_allclose(h.cpu().numpy(), nh, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(xe.cpu().numpy(), nxe, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(ye.cpu().numpy(), nye, rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match="1-D tensors of one length"):
        lucid.histogram2d(lucid.ones(3, device=device), lucid.ones(4, device=device))


def test_shape_names(device):
    t = lucid.arange(6.0, device=device).reshape(2, 3)
    for axis in (0, -1, (0, -1), (1, 2)):
        assert tuple(t.expand_dims(axis).shape) == np.expand_dims(np.ones((2, 3)), axis).shape
    with pytest.raises(IndexError, match="out of range"):
        t.expand_dims(4)
    assert tuple(lucid.ones(1, 2, 1, 3, device=device).squeeze_all().shape) == (2, 3)
    assert lucid.pad(t, (1, 2)).tolist() == torch.nn.functional.pad(torch.arange(6.0).reshape(2, 3), (1, 2)).tolist()
    assert t.pad((0, 0, 1, 0), value=7.0).tolist()[0] == [7.0, 7.0, 7.0]
    assert lucid.bool_ is lucid.bool


def test_cube_in_place(device):
    t = lucid.tensor([-2.0, 0.5, 3.0], device=device)
    assert t.cube_() is t and t.tolist() == [-8.0, 0.125, 27.0]
    i = lucid.tensor([-3, 2], device=device)
    assert i.cube_().tolist() == [-27, 8] and i.dtype == lucid.int64


def test_dlpack_capsule_and_storage():
    t = lucid.arange(4.0)
    assert torch.from_dlpack(lucid.to_dlpack(t)).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert lucid.is_storage(t.untyped_storage()) and not lucid.is_storage(t)


def test_typing_names_as_upstream():
    """Upstream's aliases annotate, and its protocols check by attributes."""
    import typing

    def f(x: lucid.TensorLike, d: lucid.DTypeLike = None, dev: lucid.DeviceLike = None,
          s: lucid.ShapeLike = 3) -> lucid.TensorOrScalar:
        return lucid.tensor(x, dtype=d, device=dev).reshape(s)

    assert f([1.0, 2.0, 3.0], lucid.float64).tolist() == [1.0, 2.0, 3.0]
    assert lucid.Tensor in typing.get_args(lucid.TensorOrScalar) and float in typing.get_args(lucid.Scalar)
    t = lucid.ones(2, requires_grad=True)
    for proto in (lucid.HasShape, lucid.SupportsGrad, lucid.SupportsNumpyConversion, lucid.TensorLikeProtocol):
        assert isinstance(t, proto) and not isinstance(3.0, proto)
    assert isinstance(np.ones(2), lucid.HasShape) and not isinstance(np.ones(2), lucid.SupportsGrad)
    assert isinstance(lucid.nn.Linear(2, 2).state_dict(), typing.get_origin(lucid.StateDict))


def test_dtypes_module():
    """lucid.dtypes holds the dtype objects themselves."""
    from lucid import dtypes
    for name in dtypes.__all__:
        assert getattr(dtypes, name) is (lucid.bool if name == "bool_" else getattr(lucid, name))
    assert lucid.zeros(2, dtype=lucid.dtypes.int16).dtype is lucid.int16 and isinstance(dtypes.half, dtypes.dtype)


def test_upstream_nn_spellings():
    import lucid.nn as nn
    assert nn.MultilabelMarginLoss is nn.MultiLabelMarginLoss is nn.modules.MultilabelMarginLoss
    assert nn.RemovableHandle is nn.hooks.RemovableHandle
    assert nn.utils.pad_sequence is nn.utils.rnn.pad_sequence and nn.utils.PackedSequence is nn.utils.rnn.PackedSequence
    handle = nn.register_module_load_state_dict_pre_hook(lambda *args: None)
    handle.remove()
