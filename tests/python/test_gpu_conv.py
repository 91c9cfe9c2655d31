"""Convolutions on the GPU (cuDNN; lucid's im2col + GEMM where cuDNN cannot express the
geometry; backend/cuda/conv.cpp): the functional tests' cases against lucid's CPU in
float32 and float64, forward and every gradient; float32 exact (no TF32) unless
lucid.backends.cudnn.allow_tf32; gradients the same bits on every run under
lucid.backends.cudnn.deterministic (cuDNN's fastest algorithms otherwise, as torch); unfold /
fold the CPU's bits. test_nn_conv.py compares the GPU with torch's CUDA."""

import pytest
import torch

import lucid
import lucid.nn.functional as LF
from conftest import to_lucid, to_torch
from test_nn_conv import CONV_CASES, TRANSPOSE_CASES

pytestmark = pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")


def _inputs(case, transpose, seed):
    nsp, n, cin, cout, sp, k, kw = case
    groups = kw.get("groups", 1)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, cin, *sp, generator=g, dtype=torch.float64)
    wshape = (cin, cout // groups, *k) if transpose else (cout, cin // groups, *k)
    w = torch.randn(*wshape, generator=g, dtype=torch.float64)
    b = torch.randn(cout, generator=g, dtype=torch.float64)
    return x, w, b


def _run(case, transpose, device, dtype, seed=5):
    """Output and (input, weight, bias) gradients of the case on `device`, as float64 torch tensors."""
    nsp, kw = case[0], case[6]
    x, w, b = _inputs(case, transpose, seed)
    lx, lw, lb = (to_lucid(t, device).to(getattr(lucid, dtype)).requires_grad_() for t in (x, w, b))
    fn = getattr(LF, f"conv_transpose{nsp}d" if transpose else f"conv{nsp}d")
    out = fn(lx, lw, lb, **kw)
    assert out.device == lx.device and out.dtype == lx.dtype
    gy = torch.randn(*out.shape, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64)
    out.backward(to_lucid(gy, device).to(out.dtype))
    return [to_torch(t.detach().cpu()).double() for t in (out, lx.grad, lw.grad, lb.grad)]


def _close(got, want, rel):
    for g, w in zip(got, want):
        assert g.shape == w.shape
        scale = max(1.0, float(w.abs().max()))
        assert float((g - w).abs().max()) <= rel * scale, float((g - w).abs().max())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_gpu_matches_cpu(case, dtype):
    if isinstance(case[6].get("padding"), str) and dtype == "float32":
        pytest.skip("one dtype is enough for the padding strings")
    _close(_run(case, False, "gpu", dtype), _run(case, False, "cpu", dtype), 1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", TRANSPOSE_CASES)
def test_conv_transpose_gpu_matches_cpu(case, dtype):
    _close(_run(case, True, "gpu", dtype), _run(case, True, "cpu", dtype), 1e-5 if dtype == "float32" else 1e-12)


# float16/bfloat16 run natively on the GPU (cuDNN's tensor cores, float32 accumulation);
# the CPU computes them in float32 and rounds once: the two differ by the rounding of
# differently ordered float32 sums, an ulp or two of the 16-bit result. The last two
# transposed cases are the GEMM route's (float32 inside, rounded once).
ULP = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("transpose,case", [(False, c) for c in CONV_CASES[:7]] + [(True, c) for c in TRANSPOSE_CASES])
def test_16bit_conv_gpu_matches_cpu_to_an_ulp_or_two(transpose, case, dtype):
    got, want = _run(case, transpose, "gpu", dtype), _run(case, transpose, "cpu", dtype)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        assert float(((g - w).abs() / w.abs().clamp(min=1.0)).max()) <= 2 * ULP[dtype]


# A convolution whose sums are long enough (576 products forward, 8192 for the weight)
# that TF32's 10-bit mantissa would show: its relative error is ~1e-3, float32's ~1e-6.
BIG = (2, 8, 64, 64, (32, 32), (3, 3), dict(padding=1))


def _big_error(transpose):
    got = _run(BIG, transpose, "gpu", "float32", seed=9)
    want = _run(BIG, transpose, "cpu", "float64", seed=9)
    return max(float((g - w).abs().max()) / float(w.abs().max()) for g, w in zip(got, want))


@pytest.mark.parametrize("transpose", [False, True])
def test_float32_is_exact_unless_tf32_is_allowed(transpose):
    assert not lucid.backends.cudnn.allow_tf32  # lucid's default (torch's is True)
    assert _big_error(transpose) < 2e-5
    lucid.backends.cuda.matmul.allow_tf32 = True  # the products' switch: not the convolutions'
    try:
        assert _big_error(transpose) < 2e-5
    finally:
        lucid.backends.cuda.matmul.allow_tf32 = False
    lucid.backends.cudnn.allow_tf32 = True
    try:
        assert _big_error(transpose) < 1e-2  # TF32 tensor cores may run now: close, not exact
    finally:
        lucid.backends.cudnn.allow_tf32 = False


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("switch", ["cudnn", "use_deterministic_algorithms"])
def test_gradients_are_deterministic_when_asked(transpose, switch):
    # large enough that cuDNN's fastest backward algorithms would be the atomic ones
    case = (2, 32, 32, 64, (28, 28), (3, 3), dict(padding=1, stride=1))
    if switch == "cudnn":
        lucid.backends.cudnn.deterministic = True
    else:
        lucid.use_deterministic_algorithms(True)
    try:
        first = _run(case, transpose, "gpu", "float32", seed=13)
        for _ in range(2):
            again = _run(case, transpose, "gpu", "float32", seed=13)
            assert all(torch.equal(a, b) for a, b in zip(first, again))
    finally:
        lucid.backends.cudnn.deterministic = False
        lucid.use_deterministic_algorithms(False)
    # and by default the same values (cuDNN's fastest algorithms may add in another order)
    default = _run(case, transpose, "gpu", "float32", seed=13)
    for a, b in zip(first, default):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-4)


def test_unfold_fold_equal_the_cpu_bits():
    x = torch.randn(3, 5, 9, 11, dtype=torch.float32)
    kw = dict(kernel_size=(3, 2), dilation=(2, 1), padding=(1, 2), stride=(2, 1))
    lu = {d: LF.unfold(to_lucid(x, d), **kw) for d in ("cpu", "gpu")}
    assert lu["gpu"].device.type == "gpu"
    assert lu["gpu"].cpu().tolist() == lu["cpu"].tolist()
    c = torch.randn(*lu["cpu"].shape, dtype=torch.float32)
    lf = {d: LF.fold(to_lucid(c, d), (9, 11), **kw) for d in ("cpu", "gpu")}
    assert lf["gpu"].cpu().tolist() == lf["cpu"].tolist()  # taps summed in the CPU's order


def test_conv_on_one_image_of_many_channels_and_pointwise():
    # 1x1 kernels, a 1x1 image, and a conv1d: the ranks and shapes cuDNN sees change
    for case in [(2, 3, 16, 8, (1, 1), (1, 1), {}), (2, 2, 8, 8, (5, 7), (1, 1), dict(stride=2)),
                 (1, 4, 6, 4, (50,), (5,), dict(padding=2, dilation=3, groups=2))]:
        _close(_run(case, False, "gpu", "float64"), _run(case, False, "cpu", "float64"), 1e-12)
