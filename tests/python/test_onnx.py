"""lucid.onnx.export (python/lucid/onnx): the file is a real ONNX model (onnx's checker
passes it) that onnxruntime runs with lucid's outputs to float tolerance, for an MLP, a
CNN, a Transformer encoder and an LSTM, also at other sizes along dynamic axes; what it
cannot write raises UnsupportedOperatorError naming the op."""

import concurrent.futures
import importlib.util
import io
import multiprocessing

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

import _onnxruntime_worker

onnx = pytest.importorskip("onnx")
if importlib.util.find_spec("onnxruntime") is None:
    pytest.skip("onnxruntime is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def onnxruntime_process():
    """onnxruntime in a spawned process (_onnxruntime_worker.py says why)."""
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


@pytest.fixture(autouse=True)
def _ort(onnxruntime_process):
    global _pool
    _pool = onnxruntime_process
    yield


_pool = None


def ort_run(blob, feeds):
    return _pool.submit(_onnxruntime_worker.run, blob, feeds).result(timeout=300)


def exported(model, args, **kw):
    buf = io.BytesIO()
    lucid.onnx.export(model, args, buf, **kw)
    return buf.getvalue()


def flat(value):
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flat(v)]
    return [value]


def assert_runs_like_lucid(blob, model, inputs, names, atol=1e-5):
    got = ort_run(blob, {n: x.numpy() for n, x in zip(names, inputs)})
    if isinstance(model, nn.Module):
        model.eval()
    with lucid.no_grad():
        want = flat(model(*inputs))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=atol)


def mlp():
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 5))


def activations():
    """Each fused activation (Note [Fused activations]) and hardtanh (Note [Clamp in one
    pass]) between products."""
    return nn.Sequential(nn.Linear(20, 32), nn.GELU(approximate="tanh"), nn.Linear(32, 32), nn.SiLU(),
                         nn.Linear(32, 32), nn.Hardswish(), nn.Linear(32, 32), nn.Hardsigmoid(), nn.Linear(32, 32),
                         nn.ReLU6(), nn.Linear(32, 32), nn.Hardtanh(-0.3, 0.4), nn.Linear(32, 32), nn.Softplus(),
                         nn.Linear(32, 32), nn.LogSigmoid(), nn.Linear(32, 32), nn.Mish(), nn.Linear(32, 32),
                         nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.PReLU(32), nn.Linear(32, 32), nn.Softshrink(0.3),
                         nn.Linear(32, 32), nn.Hardshrink(0.2), nn.Linear(32, 5))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, groups=2)
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv1(x))), 2)
        x = F.adaptive_avg_pool2d(self.conv2(x).sigmoid(), 1)
        return self.head(x.flatten(1)).log_softmax(-1)


def encoder(**kw):
    layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.1, **kw)
    return nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(16))


CASES = {
    "mlp": (mlp, [(4, 20)], {0: "batch"}, [(9, 20)]),
    "activations": (activations, [(4, 20)], {0: "batch"}, [(9, 20)]),
    "cnn": (CNN, [(2, 3, 16, 16)], {0: "batch"}, [(5, 3, 16, 16)]),
    "transformer": (lambda: encoder(batch_first=True), [(2, 6, 16)], {0: "batch", 1: "seq"}, [(3, 11, 16)]),
    "transformer_seq_first_gelu": (lambda: encoder(activation="gelu", norm_first=True), [(6, 2, 16)],
                                   {0: "seq", 1: "batch"}, [(4, 5, 16)]),
    "lstm": (lambda: nn.LSTM(8, 16, num_layers=2), [(5, 3, 8)], {0: "seq", 1: "batch"}, [(9, 2, 8)]),
    "lstm_bidirectional_batch_first": (lambda: nn.LSTM(8, 12, batch_first=True, bidirectional=True), [(3, 5, 8)],
                                       {0: "batch", 1: "seq"}, [(4, 7, 8)]),
    "gru": (lambda: nn.GRU(8, 16, num_layers=2, bidirectional=True), [(5, 3, 8)], {0: "seq", 1: "batch"},
            [(6, 4, 8)]),
    # a plain RNN and an LSTM with proj_size unroll over their time steps (through
    # lucid.addmm, whose native function sits in closures the trace reaches too), from
    # zeros of the batch's size (ConstantOfShape of the input's batch): a dynamic batch,
    # a static sequence
    "rnn": (lambda: nn.RNN(8, 16, num_layers=2, nonlinearity="tanh"), [(5, 3, 8)], {1: "batch"}, [(5, 7, 8)]),
    "lstm_proj": (lambda: nn.LSTM(8, 16, num_layers=2, proj_size=5, bidirectional=True), [(4, 3, 8)], {1: "batch"},
                  [(4, 6, 8)]),
    "lstm_proj_batch_first": (lambda: nn.LSTM(8, 12, proj_size=3, batch_first=True), [(2, 5, 8)], {0: "batch"},
                              [(7, 5, 8)]),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("opset", [17, 18])
def test_models_run_in_onnxruntime_like_lucid(name, opset):
    make, shapes, axes, other = CASES[name]
    lucid.manual_seed(0)
    model = make()
    model.train()
    inputs = [lucid.randn(*s) for s in shapes]
    blob = exported(model, tuple(inputs), input_names=["x"], opset_version=opset)
    proto = onnx.load_from_string(blob)
    onnx.checker.check_model(proto)
    assert proto.ir_version == 8  # the oldest that carries opsets 17 and 18: older runtimes read it
    assert model.training  # the model's mode is restored
    assert_runs_like_lucid(blob, model, inputs, ["x"])
    # dynamic axes: the same graph at other sizes
    n_out = len(flat(model(*inputs)))
    outputs = [f"y{i}" for i in range(n_out)]
    blob = exported(model, tuple(inputs), input_names=["x"], output_names=outputs, opset_version=opset,
                    dynamic_axes={"x": axes})
    assert_runs_like_lucid(blob, model, [lucid.randn(*s) for s in other], ["x"])


@pytest.mark.parametrize("make", [lambda: nn.RNN(8, 16), lambda: nn.LSTM(8, 16, proj_size=4)])
def test_an_unrolled_rnn_with_a_dynamic_sequence_is_refused_not_baked(make):
    """A graph unrolled over 5 steps would give 5 steps for any input: the exporter sees
    the trace at a longer sequence run more operations and refuses."""
    with pytest.raises(lucid.onnx.UnsupportedOperatorError, match="different number of operations"):
        exported(make(), lucid.randn(5, 3, 8), input_names=["x"], dynamic_axes={"x": {0: "seq", 1: "batch"}})


def test_a_constant_of_several_values_sized_by_a_dynamic_axis_is_still_refused():
    def fn(x):
        return x + lucid.arange(x.shape[0], dtype=lucid.float32)[:, None]

    with pytest.raises(lucid.onnx.UnsupportedOperatorError, match="depends on the size of a dynamic axis"):
        exported(fn, lucid.randn(5, 3), input_names=["x"], dynamic_axes={"x": {0: "n"}})


def test_a_transformer_decoder_with_a_causal_mask():
    lucid.manual_seed(0)
    layer = nn.TransformerDecoderLayer(16, 4, dim_feedforward=32, batch_first=True)
    model = nn.TransformerDecoder(layer, 2)
    tgt, memory = lucid.randn(2, 5, 16), lucid.randn(2, 7, 16)

    def decode(tgt, memory):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
        return model(tgt, memory, tgt_mask=mask)

    model.eval()
    blob = exported(decode, (tgt, memory), input_names=["tgt", "memory"],
                    dynamic_axes={"tgt": {0: "batch"}, "memory": {0: "batch", 1: "source"}})
    assert_runs_like_lucid(blob, decode, [lucid.randn(3, 5, 16), lucid.randn(3, 9, 16)], ["tgt", "memory"])
    # the mask is made with the target's length: a dynamic target length is refused, not baked
    with pytest.raises(lucid.onnx.UnsupportedOperatorError, match="dynamic axis"):
        exported(decode, (tgt, memory), input_names=["tgt", "memory"], dynamic_axes={"tgt": {1: "len"}})


def test_parameters_are_named_initializers_and_a_path_works(tmp_path):
    model = mlp()
    path = tmp_path / "mlp.onnx"
    lucid.onnx.export(model, lucid.randn(2, 20), str(path), input_names=["features"], output_names=["logits"])
    proto = onnx.load(str(path))
    names = {i.name for i in proto.graph.initializer}
    assert {"0.weight", "0.bias", "4.weight"} <= names
    assert [i.name for i in proto.graph.input] == ["features"]
    assert [o.name for o in proto.graph.output] == ["logits"]
    assert proto.producer_name == "lucid"


def test_functions_and_elementwise_chains():
    def f(x, y):
        z = (x.exp() - 1).clamp(min=0.1) * y.sum(1, keepdim=True) + lucid.where(x > 0, x, y)
        rows = x.unbind(0)
        return (z.softmax(-1).mean(0).rsqrt(), x.transpose(0, 1).reshape(2, -1), -x[1:, ::2],
                lucid.ones(3, 3).addmm(x, y.transpose(0, 1), alpha=0.5), rows[0] * rows[2])

    x, y = lucid.randn(3, 4), lucid.randn(3, 4)
    assert_runs_like_lucid(exported(f, (x, y), input_names=["x", "y"]), f, [x, y], ["x", "y"])


def test_unsupported_operations_raise_naming_them():
    class Cumsum(nn.Module):
        def forward(self, x):
            return lucid.cumsum(x, 0)

    class Branches(nn.Module):
        def forward(self, x):
            return x * 2 if x.sum() > 0 else x

    class Sorts(nn.Module):
        def forward(self, x):
            return x.sort().values

    with pytest.raises(lucid.onnx.UnsupportedOperatorError, match="cumsum"):
        exported(Cumsum(), lucid.randn(3))
    with pytest.raises(lucid.onnx.UnsupportedOperatorError, match="reads a traced tensor's values"):
        exported(Branches(), lucid.randn(3))
    with pytest.raises(lucid.onnx.UnsupportedOperatorError, match="sort"):
        exported(Sorts(), lucid.randn(3))
    # a native call the trace cannot wrap (kept where it does not look): the ops it
    # launches are still counted by the engine's tally, and named
    hidden = {"matmul": lucid.matmul}
    with pytest.raises(lucid.onnx.UnsupportedOperatorError, match="through a path the exporter does not follow"):
        exported(lambda a, b: hidden["matmul"](a, b), (lucid.randn(2, 2), lucid.randn(2, 2)))
    assert issubclass(lucid.onnx.UnsupportedOperatorError, RuntimeError)


def test_a_size_a_dynamic_axis_decides_is_refused_not_baked():
    class Positional(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("table", lucid.randn(1, 32, 4))

        def forward(self, x):
            return x + self.table[:, : x.shape[1]]

    model, x = Positional(), lucid.randn(2, 5, 4)
    assert_runs_like_lucid(exported(model, x, input_names=["x"]), model, [x], ["x"])  # static: fine
    with pytest.raises(lucid.onnx.UnsupportedOperatorError, match="dynamic axis"):
        exported(model, x, input_names=["x"], dynamic_axes={"x": {1: "seq"}})


def test_arguments_are_checked_and_lucid_is_left_as_it_was():
    model, x = mlp(), lucid.randn(2, 20)
    relu, exp, add = lucid._C.relu, lucid.exp, lucid.Tensor.__add__
    with pytest.raises(ValueError, match="opset_version must be an int from 17"):
        exported(model, x, opset_version=13)
    with pytest.raises(ValueError, match="neither an input nor an output name"):
        exported(model, x, input_names=["x"], dynamic_axes={"z": {0: "b"}})
    with pytest.raises(TypeError, match="args must be a tensor or a tuple"):
        exported(model, [x])
    with pytest.raises(ValueError, match="2 input names for 1 inputs"):
        exported(model, x, input_names=["a", "b"])
    with pytest.raises(TypeError, match="unexpected keyword"):
        exported(model, x, operator_export_type="ONNX")
    with pytest.raises(lucid.onnx.UnsupportedOperatorError):
        exported(lambda t: t.cumsum(0), x)
    assert lucid._C.relu is relu and lucid.exp is exp and lucid.Tensor.__add__ is add
    assert not lucid.onnx.is_in_onnx_export()


def test_the_test_process_never_loads_onnxruntime():
    import sys

    exported(mlp(), lucid.randn(2, 20))
    assert "onnxruntime" not in sys.modules  # its threads would deadlock later forks (_onnxruntime_worker.py)
