"""Observers, FakeQuantize and QConfig of lucid.quantization, against torch.ao.quantization
on the same data."""

import pytest
import torch
import torch.ao.quantization as tq

import lucid
import lucid.quantization as Q
from conftest import to_lucid, to_torch


def _batches(n, shape, seed=0, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=g) * (1 + i) + shift * i for i in range(n)]


def _feed(ours, theirs, batches):
    for b in batches:
        out = ours(to_lucid(b))
        theirs(b)
        assert out.tolist() == b.tolist()  # observers pass their input through unchanged


def _assert_qparams(ours, theirs, rel=1e-6):
    s, z = ours.calculate_qparams()
    ts, tz = theirs.calculate_qparams()
    assert s.reshape(-1).tolist() == pytest.approx(ts.reshape(-1).tolist(), rel=rel)
    assert [int(v) for v in z.reshape(-1).tolist()] == tz.reshape(-1).tolist()


@pytest.mark.parametrize("qscheme,tqs,qdtype,tdtype", [
    (Q.per_tensor_affine, torch.per_tensor_affine, Q.quint8, torch.quint8),
    (Q.per_tensor_symmetric, torch.per_tensor_symmetric, Q.qint8, torch.qint8),
    (Q.per_tensor_affine, torch.per_tensor_affine, Q.qint8, torch.qint8),
])
def test_minmax_observer_matches_torch(qscheme, tqs, qdtype, tdtype):
    ours = Q.MinMaxObserver(qscheme=qscheme, qdtype=qdtype)
    theirs = tq.MinMaxObserver(dtype=tdtype, qscheme=tqs)
    _feed(ours, theirs, _batches(4, (16, 32), seed=1, shift=0.3))
    assert ours.min_val.item() == pytest.approx(theirs.min_val.item())
    assert ours.max_val.item() == pytest.approx(theirs.max_val.item())
    _assert_qparams(ours, theirs)


def test_moving_average_minmax_observer_matches_torch():
    ours = Q.MovingAverageMinMaxObserver(averaging_constant=0.1)
    theirs = tq.MovingAverageMinMaxObserver(averaging_constant=0.1)
    _feed(ours, theirs, _batches(6, (8, 64), seed=2, shift=0.5))
    assert ours.min_val.item() == pytest.approx(theirs.min_val.item(), rel=1e-6)
    assert ours.max_val.item() == pytest.approx(theirs.max_val.item(), rel=1e-6)
    _assert_qparams(ours, theirs)


@pytest.mark.parametrize("ch_axis", [0, 1, -1])
@pytest.mark.parametrize("qscheme,tqs,qdtype,tdtype", [
    (Q.per_channel_symmetric, torch.per_channel_symmetric, Q.qint8, torch.qint8),
    (Q.per_channel_affine, torch.per_channel_affine, Q.quint8, torch.quint8),
])
def test_per_channel_minmax_observer_matches_torch(ch_axis, qscheme, tqs, qdtype, tdtype):
    ours = Q.PerChannelMinMaxObserver(ch_axis=ch_axis, qscheme=qscheme, qdtype=qdtype)
    theirs = tq.PerChannelMinMaxObserver(ch_axis=ch_axis, dtype=tdtype, qscheme=tqs)
    _feed(ours, theirs, _batches(3, (6, 5, 7), seed=3, shift=0.2))
    assert tuple(ours.min_val.shape) == tuple(theirs.min_val.shape)
    _assert_qparams(ours, theirs)


def test_moving_average_per_channel_observer_matches_torch():
    ours = Q.MovingAveragePerChannelMinMaxObserver(ch_axis=0, averaging_constant=0.25)
    theirs = tq.MovingAveragePerChannelMinMaxObserver(ch_axis=0, averaging_constant=0.25, dtype=torch.qint8,
                                                      qscheme=torch.per_channel_symmetric)
    _feed(ours, theirs, _batches(5, (4, 30), seed=4, shift=-0.4))
    assert ours.max_val.tolist() == pytest.approx(theirs.max_val.tolist(), rel=1e-6)
    _assert_qparams(ours, theirs)


@pytest.mark.parametrize("kind,rel", [("uniform", 0.01), ("gauss", 0.05), ("outlier", 0.01)])
def test_histogram_observer_close_to_torch(kind, rel):
    g = torch.Generator().manual_seed(5)
    data = {"uniform": torch.rand(20000, generator=g) * 4 - 1,
            "gauss": torch.randn(20000, generator=g),
            "outlier": torch.cat([torch.randn(20000, generator=g), torch.tensor([40.0])])}[kind]
    ours, theirs = Q.HistogramObserver(), tq.HistogramObserver()
    for chunk in data.split(5000):  # later chunks widen the range: the histogram is rebinned
        ours(to_lucid(chunk))
        theirs(chunk)
    assert float(ours.histogram.sum().item()) == data.numel()  # rebinning keeps every count
    s, z = ours.calculate_qparams()
    ts, tz = theirs.calculate_qparams()
    assert s.item() == pytest.approx(ts.item(), rel=rel)
    assert abs(int(z.item()) - int(tz.item())) <= max(1, int(255 * rel))


def test_histogram_observer_heavy_tails_close_to_torch():
    torch.manual_seed(6)
    for data in (torch.distributions.Cauchy(0.0, 1.0).sample((50000,)),
                 torch.distributions.StudentT(2.0).sample((50000,))):
        ours, theirs = Q.HistogramObserver(), tq.HistogramObserver()
        ours(to_lucid(data))
        theirs(data)
        assert ours.calculate_qparams()[0].item() == pytest.approx(theirs.calculate_qparams()[0].item(), rel=1e-3)


def test_fixed_placeholder_and_noop_observers():
    fixed = Q.FixedQParamsObserver(scale=1.0 / 256, zero_point=0)
    x = lucid.randn(3, 4)
    assert fixed(x) is x
    s, z = fixed.calculate_qparams()
    assert (s.item(), z.item()) == (1.0 / 256, 0.0)
    for cls in (Q.PlaceholderObserver, Q.NoopObserver):
        obs = cls(qdtype=Q.qint8)
        assert obs(x) is x and obs.qdtype is Q.qint8
        with pytest.raises(RuntimeError, match="collects no statistics"):
            obs.calculate_qparams()
    assert issubclass(Q.NoopObserver, Q.PlaceholderObserver)
    assert Q.observer.MinMaxObserver is Q.MinMaxObserver


def test_observer_errors():
    with pytest.raises(RuntimeError, match="no data observed yet"):
        Q.MinMaxObserver().calculate_qparams()
    with pytest.raises(ValueError, match="needs a per-channel qscheme"):
        Q.PerChannelMinMaxObserver(qscheme=Q.per_tensor_affine)
    with pytest.raises(ValueError, match="is per-tensor"):
        Q.MinMaxObserver(qscheme=Q.per_channel_affine)
    with pytest.raises(ValueError, match=r"averaging_constant must be in \(0, 1\]"):
        Q.MovingAverageMinMaxObserver(averaging_constant=0)
    with pytest.raises(TypeError, match="floating-point"):
        Q.MinMaxObserver()(lucid.tensor([1, 2]))
    with pytest.raises(ValueError, match="zero_point 300 is outside"):
        Q.FixedQParamsObserver(0.1, 300)
    obs = Q.PerChannelMinMaxObserver()
    obs(lucid.randn(4, 3))
    with pytest.raises(ValueError, match="saw 5 channels, but earlier batches had 4"):
        obs(lucid.randn(5, 3))
    with pytest.raises(IndexError, match="ch_axis 3 is out of range"):
        Q.PerChannelMinMaxObserver(ch_axis=3)(lucid.randn(2, 2))
    with pytest.raises(ValueError, match="bins must be a positive int"):
        Q.HistogramObserver(bins=0)


def test_per_channel_observer_state_dict_loads_into_fresh_observer():
    obs = Q.PerChannelMinMaxObserver(ch_axis=0)
    obs(lucid.randn(6, 3))
    fresh = Q.PerChannelMinMaxObserver(ch_axis=0)
    fresh.load_state_dict(obs.state_dict())
    assert fresh.min_val.tolist() == obs.min_val.tolist()
    assert fresh.calculate_qparams()[0].tolist() == obs.calculate_qparams()[0].tolist()


def test_with_args_builds_independent_observers():
    factory = Q.PerChannelMinMaxObserver.with_args(ch_axis=1)
    a, b = factory(), factory()
    assert a is not b and a.ch_axis == 1
    a(lucid.randn(2, 3))
    assert b.min_val.ndim == 0  # b saw nothing


# ---- FakeQuantize ---------------------------------------------------------------------------

def test_fake_quantize_module_matches_torch_over_batches():
    ours = Q.FakeQuantize(observer=Q.MovingAverageMinMaxObserver, averaging_constant=0.2)
    theirs = tq.FakeQuantize(observer=tq.MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                             averaging_constant=0.2)
    # torch on lucid's default device: on a GPU both divide by a number as x * (1 / s)
    # (torch's CUDA rule), which may round the scale's last bit otherwise than the CPU.
    on_gpu = lucid.get_default_device().type == "gpu" and torch.cuda.is_available()
    theirs = theirs.to("cuda" if on_gpu else "cpu")
    for b in _batches(4, (10, 20), seed=7, shift=0.3):
        y, ty = ours(to_lucid(b)), theirs(b.to("cuda") if on_gpu else b).cpu()
        assert ours.scale.item() == pytest.approx(theirs.scale.item(), rel=1e-6)
        assert int(ours.zero_point.item()) == int(theirs.zero_point.item())
        # x / s vs torch's x * (1 / s) may differ by one step exactly at rounding ties
        torch.testing.assert_close(to_torch(y), ty, rtol=0, atol=theirs.scale.item() * 1.001)
        assert (to_torch(y) == ty).float().mean() > 0.99


def test_fake_quantize_module_per_channel_weight_and_gradient():
    fq = Q.get_default_qat_qconfig().weight()
    g = torch.Generator().manual_seed(8)
    base = torch.rand(5, 7, generator=g, dtype=torch.float64)
    # each row's largest magnitude is negative, so no value sits on the +127.5 rounding tie
    # that a symmetric scale (max|w| / 127.5) creates for a positive maximum
    base[:, 0] = -2.0
    w = to_lucid(base).requires_grad_(True)
    out = fq(w)
    out.sum().backward()
    assert tuple(fq.scale.shape) == (5,) and fq.zero_point.tolist() == [0.0] * 5
    wt = base.clone().requires_grad_(True)
    expected = torch.fake_quantize_per_channel_affine(
        wt, to_torch(fq.scale.to(lucid.float32)), to_torch(fq.zero_point).to(torch.int32), 0, -128, 127)
    expected.sum().backward()
    torch.testing.assert_close(to_torch(out.detach()), expected.detach(), rtol=1e-6, atol=1e-6)
    assert w.grad.tolist() == wt.grad.tolist() == [[1.0] * 7] * 5


def test_fake_quantize_toggles():
    fq = Q.FakeQuantize()
    fq(lucid.randn(8, 8))
    frozen = fq.scale.item()
    fq.disable_observer()
    fq(lucid.randn(8, 8) * 100)
    assert fq.scale.item() == frozen
    fq.disable_fake_quant()
    x = lucid.randn(4) * 100
    assert fq(x).tolist() == x.tolist()
    assert fq.enable_fake_quant() is fq and fq.enable_observer() is fq
    with pytest.raises(TypeError, match="observer must be an observer class"):
        Q.FakeQuantize(observer=3)


# ---- QConfig / QConfigMapping ---------------------------------------------------------------

def test_default_qconfigs_build_expected_observers():
    ptq, qat = Q.get_default_qconfig(), Q.get_default_qat_qconfig()
    assert type(ptq.activation()) is Q.HistogramObserver
    assert type(ptq.weight()) is Q.PerChannelMinMaxObserver
    act, wt = qat.activation(), qat.weight()
    assert type(act) is Q.FakeQuantize and type(act.activation_post_process) is Q.MovingAverageMinMaxObserver
    assert wt.qdtype is Q.qint8 and wt.ch_axis == 0 and wt.qscheme is Q.per_channel_symmetric
    assert ptq.activation() is not ptq.activation()
    assert Q.qconfig.QConfig is Q.QConfig


def test_qconfig_mapping_resolution_order():
    import lucid.nn as nn
    qc, other = Q.get_default_qconfig(), Q.get_default_qat_qconfig()
    mapping = Q.QConfigMapping().set_global(qc).set_object_type(nn.Linear, None).set_module_name("head", other)
    assert mapping.get_qconfig(nn.Linear, "head") is other
    assert mapping.get_qconfig(nn.Linear, "body.fc") is None
    assert mapping.get_qconfig(nn.Conv2d, "features.0") is qc
    assert Q.get_default_qconfig_mapping().get_qconfig(nn.Linear, "x") is not None
    assert type(Q.get_default_qat_qconfig_mapping().get_qconfig(nn.Linear, "x").activation()) is Q.FakeQuantize
    with pytest.raises(TypeError, match="qconfig must be a lucid.quantization.QConfig"):
        Q.QConfigMapping().set_global("default")
    with pytest.raises(TypeError, match="module_type must be a class"):
        Q.QConfigMapping().set_object_type("Linear", qc)
