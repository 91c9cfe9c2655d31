"""lucid.quantization's arithmetic against torch: qparams, quantize / dequantize, and
fake_quantize values and straight-through gradients."""

import pytest
import torch

import lucid
import lucid.quantization as Q
from conftest import to_lucid, to_torch

# torch warns that its quantized tensor types are deprecated; they are still the reference.
pytestmark = pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor:UserWarning")


def _data(shape, seed=0, dtype=torch.float32, spread=3.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g, dtype=dtype) * spread)


# ---- descriptors ---------------------------------------------------------------------------

def test_qdtype_grids_and_storage():
    assert (Q.qint8.quant_min, Q.qint8.quant_max, Q.qint8.storage_dtype) == (-128, 127, lucid.int8)
    assert (Q.quint8.quant_min, Q.quint8.quant_max, Q.quint8.storage_dtype) == (0, 255, lucid.uint8)
    assert (Q.qint4.quant_min, Q.qint4.quant_max) == (-8, 7)
    assert (Q.qint32.quant_min, Q.qint32.quant_max) == (-2 ** 31, 2 ** 31 - 1)
    for d in (Q.qint8, Q.quint8, Q.qint4, Q.qint32):
        assert d.quant_max - d.quant_min + 1 == 2 ** d.bits
    assert repr(Q.qint8) == "lucid.quantization.qint8"


def test_qscheme_members_and_flags():
    assert Q.per_channel_symmetric is Q.QScheme.PER_CHANNEL_SYMMETRIC
    assert Q.per_channel_symmetric.is_per_channel and Q.per_channel_symmetric.is_symmetric
    assert not Q.per_tensor_affine.is_per_channel and not Q.per_tensor_affine.is_symmetric
    assert Q.per_tensor_symmetric.is_symmetric and Q.per_channel_affine.is_per_channel


def test_qparams_bundle_is_frozen():
    s, z = Q.calculate_qparams(-2.0, 6.0, Q.per_tensor_affine, Q.quint8)
    p = Q.QParams(s, z, Q.per_tensor_affine, Q.quint8)
    assert p.ch_axis is None
    with pytest.raises(Exception):
        p.ch_axis = 0


# ---- calculate_qparams vs torch's observers' formula ---------------------------------------

@pytest.mark.parametrize("qscheme,tq,qdtype,tdtype", [
    (Q.per_tensor_affine, torch.per_tensor_affine, Q.quint8, torch.quint8),
    (Q.per_tensor_affine, torch.per_tensor_affine, Q.qint8, torch.qint8),
    (Q.per_tensor_symmetric, torch.per_tensor_symmetric, Q.qint8, torch.qint8),
    (Q.per_tensor_symmetric, torch.per_tensor_symmetric, Q.quint8, torch.quint8),
])
@pytest.mark.parametrize("lo,hi", [(-2.0, 6.0), (0.5, 3.0), (-4.0, -1.0), (-0.3, 0.2)])
def test_calculate_qparams_matches_torch(qscheme, tq, qdtype, tdtype, lo, hi):
    obs = torch.ao.quantization.MinMaxObserver(dtype=tdtype, qscheme=tq)
    obs(torch.tensor([lo, hi]))
    ts, tz = obs.calculate_qparams()
    s, z = Q.calculate_qparams(lo, hi, qscheme, qdtype)
    assert s.item() == pytest.approx(ts.item(), rel=1e-6)
    assert int(z.item()) == int(tz.item())


def test_calculate_qparams_constant_range_floors_scale_at_eps():
    s, z = Q.calculate_qparams(0.0, 0.0, Q.per_tensor_affine, Q.qint8, eps=1e-5)
    assert s.item() == pytest.approx(1e-5)
    assert int(z.item()) == -128  # real 0 sits at the bottom of the grid, as in torch


def test_calculate_qparams_per_channel_vectors():
    lo, hi = lucid.tensor([-1.0, -0.5, 0.0]), lucid.tensor([1.0, 2.0, 0.25])
    s, z = Q.calculate_qparams(lo, hi, Q.per_channel_symmetric, Q.qint8)
    assert tuple(s.shape) == (3,)
    assert s.tolist() == pytest.approx([1 / 127.5, 2 / 127.5, 0.25 / 127.5], rel=1e-6)
    assert z.tolist() == [0.0, 0.0, 0.0]


def test_calculate_qparams_errors():
    with pytest.raises(TypeError, match="qscheme must be a lucid.quantization.QScheme"):
        Q.calculate_qparams(0.0, 1.0, "affine", Q.qint8)
    with pytest.raises(TypeError, match="qdtype must be a lucid.quantization.QDtype"):
        Q.calculate_qparams(0.0, 1.0, Q.per_tensor_affine, torch.qint8)
    with pytest.raises(ValueError, match="min_val must be <= max_val"):
        Q.calculate_qparams(float("inf"), float("-inf"), Q.per_tensor_affine, Q.qint8)
    with pytest.raises(ValueError, match="same shape"):
        Q.calculate_qparams(lucid.zeros(2), lucid.ones(3), Q.per_channel_affine, Q.qint8)


# ---- quantize / dequantize ------------------------------------------------------------------

@pytest.mark.parametrize("qdtype,tdtype,zp", [(Q.qint8, torch.qint8, 3), (Q.quint8, torch.quint8, 128)])
def test_quantize_per_tensor_int_values_match_torch(device, qdtype, tdtype, zp):
    xt = _data((6, 50), seed=1)
    scale = 2.0 ** -5  # a power of two: x / s and x * (1 / s) round identically
    q = Q.quantize(to_lucid(xt, device), scale, zp, qdtype)
    expected = torch.quantize_per_tensor(xt, scale, zp, tdtype).int_repr()
    assert q.dtype == qdtype.storage_dtype and q.device.type == device
    assert q.cpu().tolist() == expected.tolist()
    back = Q.dequantize(q, scale, zp)
    assert back.dtype == lucid.float32
    torch.testing.assert_close(to_torch(back.cpu()), torch.quantize_per_tensor(xt, scale, zp, tdtype).dequantize())


def test_quantize_with_observed_qparams_matches_torch():
    xt = _data((4, 300), seed=2)
    obs = torch.ao.quantization.MinMaxObserver(dtype=torch.quint8)
    obs(xt)
    ts, tz = obs.calculate_qparams()
    s, z = Q.calculate_qparams(float(xt.min()), float(xt.max()), Q.per_tensor_affine, Q.quint8)
    q = Q.quantize(to_lucid(xt), s, z, Q.quint8)
    expected = torch.quantize_per_tensor(xt, float(ts), int(tz), torch.quint8).int_repr().to(torch.int32)
    diff = (to_torch(q).to(torch.int32) - expected).abs()
    assert diff.max() <= 1 and (diff == 0).float().mean() > 0.99  # x/s vs x*(1/s) at .5 ties only


def test_quantize_per_channel_matches_torch():
    xt = _data((5, 3, 8), seed=3)
    scales = torch.tensor([2.0 ** -4, 2.0 ** -6, 2.0 ** -3], dtype=torch.float64)
    zps = torch.tensor([0, 5, -7])
    q = Q.quantize(to_lucid(xt), lucid.tensor(scales.tolist()), lucid.tensor(zps.tolist()), Q.qint8, ch_axis=1)
    expected = torch.quantize_per_channel(xt, scales, zps, 1, torch.qint8)
    assert q.tolist() == expected.int_repr().tolist()
    back = Q.dequantize(q, lucid.tensor(scales.tolist()), lucid.tensor(zps.tolist()), ch_axis=1)
    torch.testing.assert_close(to_torch(back), expected.dequantize())


def test_quantize_saturates_and_round_trip_error_is_half_a_step():
    x = lucid.linspace(-1.0, 1.0, 101)
    q = Q.quantize(x, 0.01, 0, Q.qint4)
    assert q.dtype == lucid.int8 and q.min().item() == -8 and q.max().item() == 7
    inside = lucid.linspace(-0.07, 0.07, 57)
    err = (Q.dequantize(Q.quantize(inside, 0.01, 0, Q.qint8), 0.01, 0) - inside).abs().max().item()
    assert err <= 0.005 + 1e-7


def test_quantize_errors():
    x = lucid.randn(4, 3)
    with pytest.raises(TypeError, match="expected a Tensor"):
        Q.quantize([1.0], 0.1, 0, Q.qint8)
    with pytest.raises(TypeError, match="floating-point"):
        Q.quantize(lucid.tensor([1, 2]), 0.1, 0, Q.qint8)
    with pytest.raises(TypeError, match="qdtype must be"):
        Q.quantize(x, 0.1, 0, lucid.int8)
    with pytest.raises(ValueError, match="per-channel scale must have 3 values"):
        Q.quantize(x, lucid.ones(4), 0, Q.qint8, ch_axis=1)
    with pytest.raises(ValueError, match="single scale and zero_point"):
        Q.quantize(x, lucid.ones(3), 0, Q.qint8)
    with pytest.raises(IndexError, match="ch_axis 2 is out of range"):
        Q.dequantize(x, lucid.ones(3), 0, ch_axis=2)
    with pytest.raises(TypeError, match="scale must be a Tensor or a number"):
        Q.dequantize(x, "0.1", 0)


# ---- fake_quantize --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_fake_quantize_per_tensor_values_and_ste_gradient(device, dtype):
    xt = _data((8, 40), seed=4, dtype=dtype, spread=2.0)
    scale, zp, qmin, qmax = 2.0 ** -5, 10, -128, 127  # the grid covers about [-4.3, 3.7]
    x = to_lucid(xt, device).requires_grad_(True)
    y = Q.fake_quantize(x, scale, zp, qmin, qmax)
    w = _data((8, 40), seed=5, dtype=dtype)
    (y * to_lucid(w, device)).sum().backward()
    xt.requires_grad_(True)
    yt = torch.fake_quantize_per_tensor_affine(xt, scale, zp, qmin, qmax)
    (yt * w).sum().backward()
    assert y.dtype == x.dtype
    torch.testing.assert_close(to_torch(y.detach().cpu()), yt.detach(), rtol=0, atol=0)
    torch.testing.assert_close(to_torch(x.grad.cpu()), xt.grad, rtol=0, atol=0)
    assert 0 < (xt.grad == 0).sum() < xt.numel()  # some values saturated, most did not


def test_fake_quantize_per_channel_values_and_gradient():
    xt = _data((4, 3, 5), seed=6, dtype=torch.float64)
    scales = torch.tensor([2.0 ** -3, 2.0 ** -6, 2.0 ** -4])  # torch wants float32 scales
    zps = torch.tensor([0, 20, -3], dtype=torch.int32)
    x = to_lucid(xt).requires_grad_(True)
    y = Q.fake_quantize(x, lucid.tensor(scales.tolist()), lucid.tensor(zps.tolist()), -128, 127, ch_axis=1)
    y.sum().backward()
    xt.requires_grad_(True)
    yt = torch.fake_quantize_per_channel_affine(xt, scales, zps, 1, -128, 127)
    yt.sum().backward()
    torch.testing.assert_close(to_torch(y.detach()), yt.detach(), rtol=0, atol=0)
    torch.testing.assert_close(to_torch(x.grad), xt.grad, rtol=0, atol=0)


def test_fake_quantize_errors():
    x = lucid.randn(3)
    with pytest.raises(ValueError, match=r"quant_min \(5\) must be <= quant_max \(1\)"):
        Q.fake_quantize(x, 0.1, 0, 5, 1)
    with pytest.raises(TypeError, match="floating-point"):
        Q.fake_quantize(lucid.tensor([1, 2, 3]), 0.1, 0, 0, 255)
