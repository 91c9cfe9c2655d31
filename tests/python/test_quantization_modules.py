"""lucid.nn.quantized / quantized.dynamic / qat / intrinsic modules, against torch's
quantized kernels where the two agree."""

import pytest
import torch
import torch.ao.nn.quantized as tnnq
import torch.ao.nn.quantized.dynamic as tnnqd

import lucid
import lucid.nn as nn
import lucid.quantization as Q
from conftest import to_lucid, to_torch

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

_MINMAX_QCONFIG = Q.QConfig(activation=Q.MinMaxObserver.with_args(),
                            weight=Q.PerChannelMinMaxObserver.with_args(ch_axis=0))


def _converted(float_module, calibration):
    wrapped = nn.Sequential(float_module)
    prepared = Q.prepare(wrapped, _MINMAX_QCONFIG)
    prepared(calibration)
    return Q.convert(prepared)[0]


def _torch_input(x, scale, zero_point):
    return torch.quantize_per_tensor(to_torch(x), scale, zero_point, torch.quint8)


def test_quantized_linear_matches_torch_quantized_linear():
    lucid.manual_seed(0)
    fl = nn.Linear(24, 10)
    x = lucid.randn(32, 24)
    q = _converted(fl, x)
    assert type(q) is nn.quantized.Linear and q.weight_int8.dtype == lucid.int8
    # 7-bit activation codes (0..127): fbgemm's AVX2 kernels (no VNNI) add pairs of u8 * s8
    # products in saturating 16-bit lanes, which 8-bit codes overflow (torch's own result
    # is then off by many steps); the range torch recommends there (reduce_range).
    sx, zx = 2.0 ** -4, 64
    qx = _torch_input(x, sx, zx)
    tq = tnnq.Linear(24, 10)
    w_codes = torch.quantize_per_channel(to_torch(q.weight()), to_torch(q.weight_scale).double(),
                                         to_torch(q.weight_zero_point).long(), 0, torch.qint8)
    assert w_codes.int_repr().tolist() == q.weight_int8.tolist()
    tq.set_weight_bias(w_codes, to_torch(q.bias))
    tq.scale, tq.zero_point = float(q.scale.item()), int(q.zero_point.item())
    expected = tq(qx).dequantize()
    ours = q(to_lucid(qx.dequantize()))
    step = q.scale.item()
    assert (to_torch(ours) - expected).abs().max().item() <= step * 1.01  # int requantization rounds once more
    assert (to_torch(ours) - to_torch(fl(x).detach())).abs().max().item() < 0.05


def test_quantized_conv2d_matches_torch_quantized_conv2d():
    lucid.manual_seed(1)
    fc = nn.Conv2d(3, 6, 3, padding=1, stride=2)
    x = lucid.randn(2, 3, 9, 9)
    q = _converted(fc, x)
    assert type(q) is nn.quantized.Conv2d
    # 7-bit activation codes (0..127): fbgemm's AVX2 kernels (no VNNI) add pairs of u8 * s8
    # products in saturating 16-bit lanes, which 8-bit codes overflow (torch's own result
    # is then off by many steps); the range torch recommends there (reduce_range).
    sx, zx = 2.0 ** -4, 64
    qx = _torch_input(x, sx, zx)
    tq = tnnq.Conv2d(3, 6, 3, padding=1, stride=2)
    w_codes = torch.quantize_per_channel(to_torch(q.weight()), to_torch(q.weight_scale).double(),
                                         to_torch(q.weight_zero_point).long(), 0, torch.qint8)
    tq.set_weight_bias(w_codes, to_torch(q.bias))
    tq.scale, tq.zero_point = float(q.scale.item()), int(q.zero_point.item())
    expected = tq(qx).dequantize()
    ours = q(to_lucid(qx.dequantize()))
    assert (to_torch(ours) - expected).abs().max().item() <= q.scale.item() * 1.01


@pytest.mark.parametrize("rank", [1, 3])
def test_quantized_conv_relu_other_ranks_close_to_float(rank):
    lucid.manual_seed(2)
    conv = getattr(nn, f"Conv{rank}d")(2, 4, 3, padding=1, padding_mode="reflect" if rank == 1 else "zeros")
    fused = getattr(nn.intrinsic, f"ConvReLU{rank}d")(conv, nn.ReLU())
    x = lucid.randn(2, 2, *([6] * rank))
    q = _converted(fused, x)
    assert type(q) is getattr(nn.quantized, f"ConvReLU{rank}d")
    reference = fused(x).detach()
    out = q(x)
    assert out.min().item() >= 0
    assert (out - reference).abs().max().item() < 0.03


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_quantized_conv_transpose_close_to_float(rank):
    lucid.manual_seed(3)
    ct = getattr(nn, f"ConvTranspose{rank}d")(4, 6, 3, stride=2, groups=2)
    x = lucid.randn(1, 4, *([4] * rank))
    q = _converted(ct, x)
    assert type(q) is getattr(nn.quantized, f"ConvTranspose{rank}d")
    assert tuple(q.weight_scale.shape) == (3,) and q.weight_ch_axis == 1
    assert (q(x) - ct(x).detach()).abs().max().item() < 0.03


def test_dynamic_linear_matches_torch_dynamic_linear():
    lucid.manual_seed(4)
    fl = nn.Linear(32, 8)
    x = lucid.randn(16, 32)
    ours = Q.quantize_dynamic(nn.Sequential(fl))[0]
    assert type(ours) is nn.quantized.dynamic.Linear
    tl = torch.nn.Linear(32, 8)
    with torch.no_grad():
        tl.weight.copy_(to_torch(fl.weight.detach()))
        tl.bias.copy_(to_torch(fl.bias.detach()))
    tl.qconfig = torch.ao.quantization.per_channel_dynamic_qconfig
    theirs = tnnqd.Linear.from_float(tl)
    float_out = to_torch(fl(x).detach())
    ours_out, theirs_out = to_torch(ours(x)), theirs(to_torch(x))
    # torch quantizes the input on a 7-bit grid (reduce_range), lucid on 8 bits
    assert (ours_out - theirs_out).abs().max().item() < 0.05
    assert (ours_out - float_out).abs().max().item() < (theirs_out - float_out).abs().max().item() + 0.01
    assert ours_out.dtype == torch.float32


def test_dynamic_lstm_close_to_float_and_state_dict_has_only_int8_weights():
    lucid.manual_seed(5)
    lstm = nn.LSTM(6, 10, num_layers=2, batch_first=True)
    q = Q.quantize_dynamic(lstm)
    assert type(q) is nn.quantized.dynamic.LSTM
    x = lucid.randn(3, 5, 6)
    (out, (h, c)), (ref, (rh, rc)) = q(x), lstm(x)
    assert (out - ref.detach()).abs().max().item() < 0.02
    assert (h - rh.detach()).abs().max().item() < 0.02 and (c - rc.detach()).abs().max().item() < 0.04
    assert lstm.weight_ih_l0.requires_grad  # the float LSTM is left as it was
    keys = set(q.state_dict())
    assert "weight_ih_l0_int8" in keys and "weight_ih_l0" not in keys and "bias_hh_l1" in keys
    assert q.weight_hh_l1_int8.dtype == lucid.int8


def test_embedding_and_embedding_bag_quantized_per_row():
    lucid.manual_seed(6)
    emb, bag = nn.Embedding(20, 8, padding_idx=0), nn.EmbeddingBag(20, 8, mode="sum")
    qe, qb = nn.quantized.Embedding.from_float(emb), nn.quantized.EmbeddingBag.from_float(bag)
    idx = lucid.tensor([[1, 4, 19], [0, 2, 2]])
    assert tuple(qe.weight_scale.shape) == (20,) and qe.weight_int8.dtype == lucid.int8
    per_row_step = qe.weight_scale.reshape(20, 1)
    assert bool(((qe.weight() - emb.weight.detach()).abs() <= per_row_step * 0.501 + 1e-7).all().item())
    assert (qe(idx) - emb(idx).detach()).abs().max().item() < 0.02
    assert (qb(idx) - bag(idx).detach()).abs().max().item() < 0.05
    with pytest.raises(TypeError, match="indices must be an integer tensor"):
        qe(lucid.randn(3))


@pytest.mark.parametrize("name,float_module", [
    ("Sigmoid", nn.Sigmoid()), ("Tanh", nn.Tanh()), ("Hardsigmoid", nn.Hardsigmoid()),
    ("Hardswish", nn.Hardswish()), ("ELU", nn.ELU(alpha=0.7)), ("LeakyReLU", nn.LeakyReLU(0.3)),
])
def test_quantized_activations_sit_on_the_calibrated_grid(name, float_module):
    x = lucid.linspace(-5.0, 5.0, 201).reshape(3, 67)
    q = _converted(float_module, x)
    assert type(q) is getattr(nn.quantized, name)
    out = q(x)
    codes = out / q.scale + q.zero_point
    assert (codes - lucid.round(codes)).abs().max().item() < 1e-3  # every value is a grid point
    assert (out - float_module(x)).abs().max().item() <= q.scale.item() / 2 + 1e-6
    if name == "ELU":
        assert q.alpha == 0.7
    if name == "LeakyReLU":
        assert q.negative_slope == 0.3


def test_fixed_qparams_sigmoid_construction():
    q = nn.quantized.Sigmoid(1.0 / 256, 0)
    y = q(lucid.randn(50) * 4)
    assert bool(((y >= 0) & (y <= 255 / 256)).all().item())
    assert ((y * 256) - lucid.round(y * 256)).abs().max().item() == 0


def test_stubs_quantize_dequantize_and_wrapper():
    x = lucid.randn(4, 5)
    stub = nn.quantized.QuantStub()
    assert stub(x) is x and nn.quantized.DeQuantStub()(x) is x
    qz = nn.quantized.Quantize(0.1, 128)
    expected = torch.fake_quantize_per_tensor_affine(to_torch(x), 0.1, 128, 0, 255)
    torch.testing.assert_close(to_torch(qz(x)), expected, rtol=0, atol=0.1001)
    ids = lucid.tensor([1, 2, 3])
    assert qz(ids) is ids
    assert nn.quantized.DeQuantize()(x) is x
    wrapped = nn.quantized.QuantWrapper(nn.Linear(5, 2))
    assert [n for n, _ in wrapped.named_children()] == ["quant", "dequant", "module"]
    assert tuple(wrapped(x).shape) == (4, 2)


def test_float_functional_observed_then_quantized():
    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 6)
            self.skip = nn.quantized.FloatFunctional()

        def forward(self, x):
            return self.skip.add_relu(self.fc(x), x)

    lucid.manual_seed(7)
    model = Residual()
    x = lucid.randn(8, 6)
    prepared = Q.prepare(model, _MINMAX_QCONFIG)
    prepared(x)
    assert prepared.skip.activation_post_process.max_val.item() > 0
    converted = Q.convert(prepared)
    assert type(converted.skip) is nn.quantized.QFunctional
    assert (converted(x) - model(x).detach()).abs().max().item() < 0.03
    qf = nn.quantized.QFunctional(0.5, 0)
    assert qf.cat([lucid.tensor([0.2]), lucid.tensor([1.3])]).tolist() == [0.0, 1.5]
    assert qf.mul_scalar(lucid.tensor([0.6]), 2.0).tolist() == [1.0]
    with pytest.raises(RuntimeError, match="use its add / mul"):
        nn.quantized.FloatFunctional()(x)


def test_group_wise_weight_only_linear():
    lucid.manual_seed(8)
    fl = nn.Linear(64, 5)
    x = lucid.randn(3, 64)
    for bits, tol in ((8, 0.01), (4, 0.2)):
        q = nn.quantized.QuantizedLinearMLX.from_float(fl, bits=bits, group_size=32, relu=True)
        assert tuple(q.scales.shape) == (5, 2) and int(q.packed_weight.max().item()) <= 2 ** bits - 1
        assert (q(x) - lucid.relu(fl(x)).detach()).abs().max().item() < tol
    with pytest.raises(ValueError, match="must be a multiple of group_size"):
        nn.quantized.QuantizedLinearMLX(60, 5, group_size=32)
    with pytest.raises(ValueError, match="bits must be one of"):
        nn.quantized.QuantizedLinearMLX(64, 5, bits=5)


def test_quantized_state_dict_round_trip():
    lucid.manual_seed(9)
    q = _converted(nn.Linear(8, 3), lucid.randn(10, 8))
    fresh = nn.quantized.Linear(8, 3)
    fresh.load_state_dict(q.state_dict())
    x = lucid.randn(4, 8)
    assert fresh(x).tolist() == q(x).tolist()
    assert set(q.state_dict()) == {"weight_int8", "weight_scale", "weight_zero_point", "bias", "scale", "zero_point"}


def test_module_errors():
    with pytest.raises(ValueError, match="in_features must be a positive int"):
        nn.quantized.Linear(0, 3)
    with pytest.raises(ValueError, match="expected input with last dimension 4"):
        nn.quantized.Linear(4, 2)(lucid.randn(3, 5))
    with pytest.raises(TypeError, match="from_float expects one of"):
        nn.quantized.Linear.from_float(nn.Conv2d(1, 1, 1))
    with pytest.raises(RuntimeError, match="has no activation_post_process"):
        nn.quantized.Linear.from_float(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="must be divisible by groups"):
        nn.quantized.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(TypeError, match="first module must be Linear"):
        nn.intrinsic.LinearReLU(nn.Conv2d(1, 1, 1), nn.ReLU())
    with pytest.raises(ValueError, match="needs a qconfig"):
        nn.qat.Linear(3, 2)
    with pytest.raises(TypeError, match="bn must be nn.BatchNorm2d"):
        nn.intrinsic.qat.ConvBn2d(nn.Conv2d(1, 2, 1), nn.BatchNorm1d(2), qconfig=Q.get_default_qat_qconfig())
    with pytest.raises(TypeError, match="dynamic LSTM wraps an nn.LSTM"):
        nn.quantized.dynamic.LSTM(nn.GRU(2, 2))
