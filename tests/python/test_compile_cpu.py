"""Compiled CPU chains (Note [Compiled CPU chains], csrc/ops/fusion.h): inside a compiled
call the CPU records its fusable elementwise calls and runs each chain block by block with
the ops' own row kernels. The results are the eager ones bit for bit; everything that
touches the bytes (host reads, other ops, memory shared with NumPy) sees every write in
program order."""

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import _C

pytestmark = pytest.mark.usefixtures("cpu_default")  # tests of the CPU (conftest.py)

N = 3 * 4096 + 77  # above the recording threshold (16,384 elements) once doubled; an odd tail
FLOATS = ["float32", "float64", "float16", "bfloat16"]
BITS = {"float32": lucid.int32, "float64": lucid.int64, "float16": lucid.int16, "bfloat16": lucid.int16}


def cpu_stats():
    return _C.cpu_pending_stats()


def bits(t):
    return t.contiguous().view(BITS[str(t.dtype).split(".")[-1]]).tolist()


def assert_same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert bits(a) == bits(b)


def chain(x):
    y = lucid.sin(x * 1.5 + 0.5) * x
    return lucid.sigmoid(lucid.exp(lucid.tanh(y) - 0.25)) + 1.0


@pytest.mark.parametrize("dtype", FLOATS)
def test_a_compiled_chain_is_fused_with_the_eager_bits(dtype):
    x = (lucid.randn(2, N) * 3).to(getattr(lucid, dtype))
    compiled = lucid.compile(chain)
    before = cpu_stats()["fused_calls"]
    got = compiled(x)
    assert cpu_stats()["fused_calls"] - before == 9  # the whole chain: one program
    assert cpu_stats()["ops"] == 0  # the region's end ran the list
    assert_same_bits(got, chain(x))


UNARY = ["exp", "expm1", "log", "log1p", "log2", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid", "atan",
         "asinh", "erf", "erfc", "abs", "neg", "floor", "ceil", "round", "trunc", "reciprocal", "sign", "relu"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow", "atan2", "hypot", "fmod", "remainder",
          "floor_divide", "logaddexp", "xlogy", "fmax", "fmin", "_threshold_backward"]


@pytest.mark.parametrize("dtype", FLOATS)
def test_every_fusable_op_gives_its_eager_bits(dtype):
    lucid.manual_seed(0)
    d = getattr(lucid, dtype)
    a = (lucid.rand(2, N) * 4 + 0.25).to(d)  # positive: the logs and roots are defined
    b = (lucid.randn(2, N) * 2).to(d)

    def unary_chain(a):
        out = []
        for name in UNARY:
            out.append(getattr(lucid, name)(a * 0.75 - 0.5))
        return out

    def binary_chain(a, b):
        return [getattr(lucid, name)(a + 0.125, b) for name in BINARY]

    for fn, args in ((unary_chain, (a,)), (binary_chain, (a, b))):
        eager = fn(*args)
        before = cpu_stats()["fused_calls"]
        got = lucid.compile(fn)(*args)
        assert cpu_stats()["fused_calls"] > before
        for name, e, g in zip(UNARY if fn is unary_chain else BINARY, eager, got):
            assert bits(e) == bits(g), name


@pytest.mark.parametrize("dtype", FLOATS)
def test_a_repeated_row_joins_the_chain(dtype):
    d = getattr(lucid, dtype)
    x = lucid.randn(37, 8, 100).to(d)  # rows of 800 elements: blocks of 2,048 start mid-row
    bias = lucid.randn(8, 100).to(d)
    scale = lucid.randn(100).to(d)

    def fn(t):
        return lucid.tanh(t + bias) * scale - lucid.sigmoid(bias * t) + 0.5

    before = cpu_stats()["fused_calls"]
    got = lucid.compile(fn)(x)
    assert cpu_stats()["fused_calls"] - before == 7  # the rows' ops too: one program
    assert_same_bits(got, fn(x))


@pytest.mark.parametrize("dtype", FLOATS)
def test_where_joins_the_chain_with_the_eager_bits(dtype):
    """where(cond, x, y) is a step of the program: its bool condition read as 0 or 1
    (also as a row repeated along the batch), numbers converted to the dtype as the where
    kernel converts them (1/3 rounds to the dtype, then is selected as it is)."""
    d = getattr(lucid, dtype)
    lucid.manual_seed(3)
    x = (lucid.randn(2, N) * 3).to(d)
    keep = lucid.rand(2, N) > 0.3
    row = lucid.rand(N) > 0.5  # [N], broadcast over the batch

    def fn(t):
        a = lucid.where(keep, t * 1.5, 1.0 / 3.0)
        b = lucid.where(row, lucid.tanh(a), a - 0.25)
        return lucid.where(keep, -2.0, b) + t, a

    before = cpu_stats()["fused_calls"]
    got = lucid.compile(fn)(x)
    assert cpu_stats()["fused_calls"] - before == 7  # one program
    for g, e in zip(got, fn(x)):
        assert_same_bits(g, e)


def test_in_place_ops_views_and_reads_inside_a_compiled_call():
    x = lucid.randn(4, N)

    def fn(t):
        t = t.clone()
        row = t[1]  # a view, read after writes to its base
        t.mul_(2.0)
        t.add_(1.0)
        first = row.tolist()  # a host read inside the call: the writes run first
        total = (t * 3.0).sum().item()  # a reduction (not fused) reads what was recorded
        t.sub_(0.5)
        return t, first, total

    t, first, total = lucid.compile(fn)(x)
    e_t, e_first, e_total = fn(x)
    assert first == e_first and total == e_total
    assert_same_bits(t, e_t)
    assert_same_bits(x, x.clone())  # (the input is untouched)


def test_an_op_between_chains_sees_their_results():
    x = lucid.randn(64, 512)
    w = lucid.randn(512, 256)

    def fn(x):
        h = lucid.tanh(x * 0.5 + 1.0)  # a chain, then a product that reads it
        y = h @ w
        return lucid.exp(y * 0.01 - 1.0)

    assert_same_bits(lucid.compile(fn)(x), fn(x))


def test_gradients_through_a_compiled_chain_are_the_eager_ones():
    x = lucid.randn(2, N, requires_grad=True)
    x2 = x.detach().clone().requires_grad_()
    chain(x).sum().backward()
    lucid.compile(chain)(x2).sum().backward()
    assert_same_bits(x.grad, x2.grad)


def test_memory_shared_with_numpy_is_read_when_the_op_is_called():
    imported = np.ones(2 * N, dtype=np.float32)
    t = lucid.from_numpy(imported)
    exported = lucid.ones(2 * N)
    view = exported.numpy()  # zero-copy: NumPy may write it at any time

    def fn(a, b):
        y = a * 2.0
        z = b * 2.0
        imported[0] = 5.0  # writes no lucid op sees
        view[0] = 7.0
        return y, z

    y, z = lucid.compile(fn)(t, exported)
    assert y[0].item() == 2.0 and z[0].item() == 2.0
    assert y[1].item() == 2.0 and z[1].item() == 2.0


def test_small_tensors_and_fusion_off_run_when_called():
    small = lucid.randn(100)
    big = lucid.randn(2, N)
    compiled = lucid.compile(lambda t: lucid.exp(t * 2.0) + 1.0)
    before = cpu_stats()["fused_calls"]
    compiled(small)
    assert cpu_stats()["fused_calls"] == before
    lucid.gpu.set_fusion(False)
    try:
        compiled(big)
        assert cpu_stats()["fused_calls"] == before
    finally:
        lucid.gpu.set_fusion(True)
    assert_same_bits(compiled(big), lucid.exp(big * 2.0) + 1.0)
    assert cpu_stats()["fused_calls"] == before + 3


def test_an_error_inside_a_compiled_call_still_runs_what_was_recorded():
    x = lucid.randn(2, N)
    out = lucid.empty(2, N)

    def fn(x):
        lucid.mul(x, 3.0, out=out)
        return x @ lucid.randn(3, 3)  # a shape error, raised at the call

    with pytest.raises(RuntimeError):
        lucid.compile(fn)(x)
    assert cpu_stats()["ops"] == 0
    assert_same_bits(out, x * 3.0)


def test_a_compiled_training_step_on_the_cpu_matches_eager():
    lucid.manual_seed(3)
    w1 = lucid.randn(64, 2048) * 0.05
    eager_w, compiled_w = w1.clone().requires_grad_(), w1.clone().requires_grad_()
    x = lucid.randn(32, 64)

    def step(w):
        h = x @ w
        loss = (F.gelu(h) * 0.5 + lucid.tanh(h) * 0.25).square().mean()
        loss.backward()
        with lucid.no_grad():
            w.sub_(w.grad * 0.1)
            w.grad = None
        return loss

    compiled = lucid.compile(step)
    for _ in range(3):
        a, b = step(eager_w), compiled(compiled_w)
        assert a.item() == b.item()
    assert_same_bits(eager_w, compiled_w)
