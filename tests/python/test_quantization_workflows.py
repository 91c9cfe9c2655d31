"""End-to-end flows of lucid.quantization: prepare -> calibrate -> convert, fuse_modules,
prepare_qat -> train -> convert, quantize_dynamic, prepare_fx / convert_fx, lazy loading."""

import subprocess
import sys

import pytest

import lucid
import lucid.nn as nn
import lucid.quantization as Q

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


class SmallConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = nn.quantized.QuantStub()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(8 * 6 * 6, 4)
        self.dequant = nn.quantized.DeQuantStub()

    def forward(self, x):
        x = self.relu(self.bn(self.conv(self.quant(x))))
        return self.dequant(self.fc(self.flatten(x)))


def _rel_err(a, b):
    return ((a - b).abs().max() / b.abs().max()).item()


def test_static_ptq_linear_model_close_to_float():
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    data = [lucid.randn(32, 16) for _ in range(4)]
    prepared = Q.prepare(model)
    assert not prepared.training and prepared is not model
    assert not hasattr(model[0], "activation_post_process")  # the original is untouched
    for batch in data:
        prepared(batch)
    converted = Q.convert(prepared)
    assert [type(m) for m in converted] == [nn.quantized.Linear, nn.ReLU, nn.quantized.Linear]
    x = lucid.randn(8, 16)
    assert _rel_err(converted(x), model(x).detach()) < 0.05


def test_static_ptq_conv_model_with_fusion():
    lucid.manual_seed(1)
    model = SmallConvNet()
    model.train()
    for _ in range(3):  # give BN non-trivial running statistics
        model(lucid.randn(8, 3, 6, 6) * 2 + 0.5)
    model.eval()
    fused = Q.fuse_modules(model, [["conv", "bn", "relu"]])
    assert type(fused.conv) is nn.intrinsic.ConvReLU2d
    assert type(fused.bn) is nn.Identity and type(fused.relu) is nn.Identity
    x = lucid.randn(4, 3, 6, 6)
    assert _rel_err(fused(x), model(x).detach()) < 1e-5  # folding BN is exact in eval
    fused.qconfig = Q.get_default_qconfig()
    prepared = Q.prepare(fused)
    for _ in range(4):
        prepared(lucid.randn(8, 3, 6, 6))
    converted = Q.convert(prepared)
    assert type(converted.quant) is nn.quantized.Quantize
    assert type(converted.conv) is nn.quantized.ConvReLU2d
    assert type(converted.dequant) is nn.quantized.DeQuantize
    assert _rel_err(converted(x), model(x).detach()) < 0.06


def test_qconfig_mapping_can_keep_layers_in_float():
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    mapping = Q.QConfigMapping().set_global(Q.get_default_qconfig()).set_module_name("1", None)
    prepared = Q.prepare(model, mapping)
    prepared(lucid.randn(5, 4))
    converted = Q.convert(prepared)
    assert type(converted[0]) is nn.quantized.Linear and type(converted[1]) is nn.Linear


def test_prepare_warns_when_nothing_is_selected():
    with pytest.warns(UserWarning, match="no module was selected"):
        Q.prepare(nn.Sequential(nn.ReLU()))
    with pytest.raises(TypeError, match="model must be an nn.Module"):
        Q.prepare("model")
    with pytest.raises(TypeError, match="qconfig must be a QConfig, a QConfigMapping or None"):
        Q.prepare(nn.Linear(2, 2), qconfig="fbgemm")


def test_qat_train_then_convert_close_to_float_and_to_qat_model():
    lucid.manual_seed(2)
    model = SmallConvNet()
    qconfig = Q.get_default_qat_qconfig()
    fused = Q.fuse_modules_qat(model, [["conv", "bn", "relu"]], qconfig)
    assert type(fused.conv) is nn.intrinsic.qat.ConvBnReLU2d
    qat = Q.prepare_qat(fused, qconfig)
    assert qat.training and type(qat.fc) is nn.qat.Linear
    assert isinstance(qat.quant.activation_post_process, Q.FakeQuantize)
    target = lucid.randn(16, 4)
    x = lucid.randn(16, 3, 6, 6)
    opt = lucid.optim.SGD(qat.parameters(), lr=0.05)
    before = None
    for _ in range(8):
        loss = ((qat(x) - target) ** 2).mean()
        before = loss.item() if before is None else before
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < before  # gradients flow through the fake quantization
    assert qat.conv.bn.num_batches_tracked.item() == 8  # BN keeps learning during QAT
    assert qat.conv.conv.weight.grad is not None and qat.conv.bn.weight.grad is not None
    qat.eval()
    converted = Q.convert(qat)
    assert type(converted.conv) is nn.quantized.ConvReLU2d and type(converted.fc) is nn.quantized.Linear
    reference = qat(x).detach()
    assert _rel_err(converted(x), reference) < 0.05
    with lucid.no_grad():
        float_out = qat.fc.to_float()(qat.flatten(lucid.relu(qat.conv.bn(qat.conv.conv(x)))))
    assert _rel_err(converted(x), float_out) < 0.1


def test_qat_linear_relu_and_embedding():
    lucid.manual_seed(3)
    model = nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 3))
    fused = Q.fuse_modules_qat(model, [["0", "1"]])
    qat = Q.prepare_qat(fused)
    assert type(qat[0]) is nn.qat.LinearReLU
    x = lucid.randn(10, 6)
    assert qat(x).shape == (10, 3)
    converted = Q.convert(qat.eval())
    assert type(converted[0]) is nn.quantized.LinearReLU
    assert _rel_err(converted(x), qat(x).detach()) < 0.03
    emb_model = nn.Sequential(nn.Embedding(12, 4))
    emb_qat = Q.prepare_qat(emb_model)
    assert type(emb_qat[0]) is nn.qat.Embedding
    ids = lucid.tensor([1, 5, 11])
    out = emb_qat(ids)
    assert (out - emb_model(ids).detach()).abs().max().item() < 0.02
    assert type(Q.convert(emb_qat)[0]) is nn.quantized.Embedding


def test_qat_conv_modules_of_every_rank():
    qconfig = Q.get_default_qat_qconfig()
    for rank in (1, 2, 3):
        conv = getattr(nn, f"Conv{rank}d")(2, 3, 3, padding=1)
        conv.qconfig = qconfig
        qat = getattr(nn.qat, f"Conv{rank}d").from_float(conv)
        assert qat.weight is conv.weight  # training continues on the same parameters
        x = lucid.randn(1, 2, *([5] * rank))
        assert (qat(x) - conv(x)).abs().max().item() < 0.05
        fused = getattr(nn.intrinsic.qat, f"ConvBn{rank}d")(
            getattr(nn, f"Conv{rank}d")(2, 3, 3), getattr(nn, f"BatchNorm{rank}d")(3), qconfig=qconfig)
        fused.eval()
        w, b = fused.folded_weight_and_bias()
        assert tuple(w.shape) == (3, 2, *([3] * rank)) and tuple(b.shape) == (3,)
        assert type(Q.convert(nn.Sequential(fused))[0]) is getattr(nn.quantized, f"Conv{rank}d")


def test_fuse_modules_errors():
    model = nn.Sequential(nn.BatchNorm1d(3), nn.ReLU())
    with pytest.raises(ValueError, match=r"cannot fuse \['BatchNorm1d', 'ReLU'\]"):
        Q.fuse_modules(model.eval(), [["0", "1"]])
    with pytest.raises(AttributeError, match="no submodule 'missing'"):
        Q.fuse_modules(model, [["0", "missing"]])
    conv_bn = nn.Sequential(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2))
    with pytest.raises(RuntimeError, match=r"call model.eval\(\) first"):
        Q.fuse_modules(conv_bn, [["0", "1"]])
    with pytest.raises(ValueError, match="at least two module names"):
        Q.fuse_modules(conv_bn.eval(), [["0"], ["1"]])


def test_quantize_dynamic_defaults_spec_and_bare_module():
    lucid.manual_seed(4)
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Sequential(nn.Linear(8, 2)))
    q = Q.quantize_dynamic(model)
    assert type(q[0]) is nn.quantized.dynamic.Linear and type(q[2][0]) is nn.quantized.dynamic.Linear
    assert type(model[0]) is nn.Linear  # not in place by default
    x = lucid.randn(4, 8)
    assert _rel_err(q(x), model(x).detach()) < 0.05
    bare = Q.quantize_dynamic(nn.Linear(8, 3), {nn.Linear})
    assert type(bare) is nn.quantized.dynamic.Linear
    assert type(Q.quantize_dynamic(nn.Linear(8, 3), dtype=Q.qint4).weight_int8) is lucid.Tensor
    assert Q.quantize_dynamic(nn.Linear(8, 3), dtype=Q.qint4).weight_int8.abs().max().item() <= 8
    with pytest.raises(ValueError, match="no dynamic quantized form for"):
        Q.quantize_dynamic(model, {nn.Conv2d})
    with pytest.raises(ValueError, match="weight dtype must be qint8 or qint4"):
        Q.quantize_dynamic(model, dtype=Q.quint8)
    with pytest.warns(UserWarning, match="has no module of the requested types"):
        Q.quantize_dynamic(nn.Sequential(nn.ReLU()))


def test_prepare_fx_wraps_boundaries():
    lucid.manual_seed(5)
    model = nn.Sequential(nn.Linear(6, 4), nn.ReLU())
    prepared = Q.prepare_fx(model, Q.get_default_qconfig(), example_inputs=(lucid.randn(1, 6),))
    assert type(prepared) is nn.quantized.QuantWrapper
    assert not isinstance(model, nn.quantized.QuantWrapper) and not hasattr(model[0], "activation_post_process")
    for _ in range(3):
        prepared(lucid.randn(16, 6))
    converted = Q.convert_fx(prepared)
    assert type(converted.quant) is nn.quantized.Quantize
    assert type(converted.module[0]) is nn.quantized.Linear
    x = lucid.randn(5, 6)
    assert _rel_err(converted(x), model(x).detach()) < 0.05


def test_deep_copied_prepared_model_feeds_its_own_observers():
    import copy
    prepared = Q.prepare(nn.Sequential(nn.Linear(3, 3)), Q.get_default_qconfig())
    twin = copy.deepcopy(prepared)
    twin(lucid.randn(4, 3))
    assert twin[0].activation_post_process.histogram.sum().item() == 12
    assert prepared[0].activation_post_process.histogram.sum().item() == 0
    again = Q.prepare(prepared, Q.get_default_qconfig(), inplace=True)
    assert again is prepared and len(prepared[0]._forward_hooks) == 1


def test_lazy_import_and_no_numpy_or_torch():
    code = ("import sys, lucid\n"
            "assert 'lucid.quantization' not in sys.modules and 'lucid.nn.quantized' not in sys.modules\n"
            "assert 'numpy' not in sys.modules and 'torch' not in sys.modules\n"
            "import lucid.nn as nn\n"
            "assert lucid.quantization.qint8.bits == 8 and nn.quantized.Linear and nn.qat.Linear\n"
            "assert nn.intrinsic.qat.ConvBn2d and nn.quantized.dynamic.LSTM\n"
            "assert 'numpy' not in sys.modules and 'torch' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)
    with pytest.raises(AttributeError, match="has no attribute 'quantizedd'"):
        nn.quantizedd
