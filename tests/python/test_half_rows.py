"""float16 / bfloat16 on the CPU a block at a time (Note [16-bit rows], core/half_rows.h):
the elementwise loops, vector math, sums and casts widen 16-bit data to float with vector
instructions, compute in float, and round back once. These tests hold them to the bits
the element-by-element rules give: torch's for the arithmetic and the casts, the float32
kernel's rounded once for the vector math, the float64 sum's rounded for the sums; in
every layout the loops special-case, at sizes that take the vector bodies, the tails and
the thread split. Each instruction-set version is also run (LUCID_CPU_ISA) in a
subprocess."""
import os
import subprocess
import sys

import pytest
import torch

import lucid
from conftest import to_lucid, to_torch

# The CPU's kernels, bit for bit (the GPU's 16-bit rows are tested in test_gpu_*).
pytestmark = pytest.mark.usefixtures("cpu_default")

HALVES = ["float16", "bfloat16"]
N = 65536 + 13  # a partial vector and a partial block at the end, and two thread pieces


def _data(dtype, n=N, seed=0, positive=False):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(n, generator=g, dtype=torch.float64) * 4
    if positive:
        t = t.abs() + 0.01
    return t.to(getattr(torch, dtype))


def _bits(t):
    return t.contiguous().view(torch.int16)


def _same_bits(got, want):
    got = to_torch(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = want.isnan()
    assert torch.equal(got.isnan(), nan), "NaN in different places"
    diff = (_bits(got) != _bits(want)) & ~nan
    assert not diff.any(), f"{int(diff.sum())} of {want.numel()} elements differ, first at {diff.nonzero()[0].tolist()}"


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_binary_bits_in_every_layout(op, dtype):
    a, b = _data(dtype), _data(dtype, seed=1)
    la, lb = to_lucid(a), to_lucid(b)
    f, tf = getattr(lucid, op), getattr(torch, op)
    _same_bits(f(la, lb), tf(a, b))                                  # dense
    _same_bits(f(la, lb[7:8]), tf(a, b[7:8]))                        # one broadcast value
    _same_bits(f(la[7:8], lb), tf(a[7:8], b))
    m, tm = la[: 512 * 128].reshape(512, 128), a[: 512 * 128].reshape(512, 128)
    _same_bits(f(m, lb[:128]), tf(tm, b[:128]))                      # a row repeated
    _same_bits(f(m.t(), lb[:512]), tf(tm.t(), b[:512]))              # a transposed operand
    _same_bits(f(m[:, ::3], m[:, 1::3]), tf(tm[:, ::3], tm[:, 1::3]))  # strided rows


@pytest.mark.parametrize("dtype", HALVES)
def test_numbers_and_in_place_bits(dtype):
    # A number stays a float32 in a product (Note [Numbers in opmath]); the in-place forms
    # write through the same loops.
    # Dense rows with a number convert in registers (Note [16-bit arithmetic in
    # registers]): overflow to inf, subnormal results and a NaN as the blocks give them.
    a = _data(dtype)
    a[5], a[77] = float("nan"), float("inf")
    la = to_lucid(a)
    _same_bits(la * 0.998, a * 0.998)
    _same_bits(la + 0.1, a + 0.1)
    _same_bits(2.5 - la, 2.5 - a)
    _same_bits(la / 3.0, a / 3.0)
    _same_bits(la * 3e4, a * 3e4)
    _same_bits(la * 1e-6, a * 1e-6)
    _same_bits(la[:20] * 0.998, a[:20] * 0.998)  # shorter than a vector
    _same_bits(la.clamp(-1.5, 2.0), a.clamp(-1.5, 2.0))  # maximum, then minimum: a NaN wins
    b = _data(dtype, seed=2)
    b[9], b[77] = float("nan"), float("-inf")
    lb = to_lucid(b)
    _same_bits(lucid.maximum(la, lb), torch.maximum(a, b))
    _same_bits(lucid.minimum(la, lb), torch.minimum(a, b))
    la.mul_(0.999), a.mul_(0.999)
    _same_bits(la, a)


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("op", ["neg", "abs", "relu", "sqrt", "reciprocal", "floor", "sign"])
def test_exact_unary_bits(op, dtype):
    a = _data(dtype, positive=op in ("sqrt",))
    la = to_lucid(a)
    _same_bits(getattr(lucid, op)(la), getattr(torch, op)(a))
    _same_bits(getattr(lucid, op)(la[1::2]), getattr(torch, op)(a[1::2]))


@pytest.mark.parametrize("dtype", HALVES)
def test_neg_abs_and_relu_on_the_bits(dtype):
    # Every 16-bit pattern, NaNs, infinities and zeros included: on dense rows neg flips
    # bit 15 and abs clears it, as torch's vector kernels do, and relu zeroes exactly
    # the numbers below zero (-0 and NaNs stay). (Strided rows go through float, which
    # keeps everything but a NaN's payload, as torch's scalar loop does.)
    bits = lucid.arange(-32768, 32768, dtype=lucid.int32).to(lucid.int16)
    x = bits.view(getattr(lucid, dtype))
    flipped = [b ^ -32768 if b >= 0 else b & 0x7FFF for b in range(-32768, 32768)]
    cleared = [b & 0x7FFF for b in range(-32768, 32768)]
    assert (-x).view(lucid.int16).tolist() == flipped
    assert x.abs().view(lucid.int16).tolist() == cleared
    values = x.float().tolist()
    want = [0 if v < 0 else b for v, b in zip(values, range(-32768, 32768))]
    assert x.relu().view(lucid.int16).tolist() == want
    numbers = [i for i, nan in enumerate(x[1::2].isnan().tolist()) if not nan]
    strided = lucid.neg(x[1::2]).view(lucid.int16).tolist()
    assert [strided[i] for i in numbers] == [flipped[1::2][i] for i in numbers]
    tx = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(getattr(torch, dtype))
    assert (-tx).view(torch.int16).tolist() == flipped


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("op", ["exp", "log", "tanh", "sigmoid", "sin", "erf", "expm1", "log1p"])
def test_vector_math_is_the_float32_kernel_rounded_once(op, dtype):
    # A dense 16-bit row runs the float32 vector kernel on the widened block: exactly the
    # float32 op's result rounded once, as torch's CPU kernels map their float vectors.
    a = _data(dtype, positive=op in ("log", "log1p"))
    la = to_lucid(a)
    f = getattr(lucid, op)
    got = f(la)
    _same_bits(got, to_torch(f(la.float())).to(a.dtype))
    torch.testing.assert_close(to_torch(got), getattr(torch, op)(a), equal_nan=True)


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("shape,dim", [((N,), None), ((257, 301), 1), ((257, 301), 0), ((3, 4099, 33), 1),
                                       ((5, 40000), -1), ((64, 3, 7), (0, 2)), ((300, 1300), 0)])
def test_sums_are_the_float64_sum_rounded(shape, dim, dtype):
    # MomentBlock reads 16-bit rows through float windows (exact) and accumulates in
    # double: the float64 sum of the same values, rounded (to float, then to 16 bits),
    # and the float32 cast's own result in the same lanes and order, rounded.
    n = 1
    for s in shape:
        n *= s
    t = _data(dtype, n, seed=3).reshape(shape)
    lt = to_lucid(t)
    kw = {} if dim is None else {"dim": dim}
    for name in ("sum", "mean"):
        got = getattr(lucid, name)(lt, **kw)
        want = getattr(torch, name)(t.double(), **kw).float().to(t.dtype)
        _same_bits(got, want)
        _same_bits(got, to_torch(getattr(lucid, name)(lt.float(), **kw)).to(t.dtype))
        torch.testing.assert_close(to_torch(got), getattr(torch, name)(t, **kw), rtol=2e-2, atol=2e-2)
    for name, tkw in (("var", {}), ("std", {"correction": 0}), ("norm", None)):
        got = lucid.norm(lt, **kw) if tkw is None else getattr(lucid, name)(lt, **kw, **tkw)
        want = torch.norm(t.double(), **kw) if tkw is None else getattr(torch, name)(t.double(), **kw, **tkw)
        torch.testing.assert_close(to_torch(got).double(), want, rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("shape,dim", [((300000,), 0), ((2, 5003), 1), ((300, 2051), 0), ((3, 40, 5), 1)])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scans_are_the_float32_scans_rounded(shape, dim, op, dtype):
    # ScanDim reads 16-bit rows and columns through float windows (Note [16-bit rows]):
    # the float32 cast's scan (totals in double), rounded to 16 bits, long rows cut into
    # blocks (300000) included; and close to torch's, which accumulates in float.
    n = 1
    for s in shape:
        n *= s
    t = _data(dtype, n, seed=4).reshape(shape)
    if op == "cumprod":
        t = (1 + t.float() / 4000).to(t.dtype)
    lt = to_lucid(t)
    got = getattr(lucid, op)(lt, dim)
    _same_bits(got, to_torch(getattr(lucid, op)(lt.float(), dim)).to(t.dtype))
    want = getattr(torch, op)(t.double(), dim)
    torch.testing.assert_close(to_torch(got).double(), want, rtol=1e-2, atol=0.25)


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("shape,dim", [((37, 1000), 1), ((3, 5000), -1), ((4, 300, 1100), 1), ((5, 7, 9), 0)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_is_the_float32_softmax_rounded(shape, dim, log, dtype):
    # SoftmaxDim runs the float32 kernels on float copies of a row or a [n, 512] column
    # chunk (Note [16-bit softmax on the CPU]): the float32 softmax of the widened input,
    # rounded once; and its gradient within 16-bit rounding of torch's 16-bit one.
    n = 1
    for s in shape:
        n *= s
    t = _data(dtype, n, seed=5).reshape(shape)
    lt = to_lucid(t).requires_grad_()
    f = lucid.log_softmax if log else lucid.softmax
    tf = torch.log_softmax if log else torch.softmax
    y = f(lt, dim)
    _same_bits(y, to_torch(f(to_lucid(t).float(), dim)).to(t.dtype))
    g = _data(dtype, n, seed=6).reshape(shape)
    y.backward(to_lucid(g))
    tt = t.clone().requires_grad_()  # torch's own 16-bit gradient, from its 16-bit output
    tf(tt, dim).backward(g)
    scale = float(tt.grad.double().abs().max())
    torch.testing.assert_close(to_torch(lt.grad).double(), tt.grad.double(), rtol=2e-2, atol=1e-2 * scale)


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("shape", [(70000,), (257, 301), (3, 4099, 33), (64, 3, 7), (40, 2000)])
def test_extrema_and_indices_as_torch(shape, dtype):
    # ExtremumBlock walks 16-bit blocks (rows, or 16-row groups of a column tile) in float
    # and merges the groups in row order: torch's values and first indices, with ties
    # (repeated values) and a NaN, which wins.
    n = 1
    for s in shape:
        n *= s
    t = _data(dtype, n, seed=4).reshape(shape)
    t.view(-1)[::97] = t.view(-1)[5]
    if len(shape) > 1:
        t.view(-1)[1234 % n] = float("nan")
    lt = to_lucid(t)
    for d in range(len(shape)):
        for f in ("max", "min"):
            want, got = getattr(torch, f)(t, d), getattr(lucid, f)(lt, d)
            _same_bits(got[0], want.values)
            assert torch.equal(to_torch(got[1]), want.indices), (f, d)
            _same_bits(getattr(lucid, "a" + f)(lt, d), getattr(torch, "a" + f)(t, d))
            assert torch.equal(to_torch(getattr(lucid, "arg" + f)(lt, d)), getattr(torch, "arg" + f)(t, d))
    _same_bits(lt.max(), t.max())


@pytest.mark.parametrize("dtype", HALVES)
def test_casts_round_as_torch(dtype):
    # float32 -> 16 bits: to nearest even, ties, overflow to inf, subnormals, NaN, -0.
    special = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 65504.0, 65520.0, 65519.0,
                            1e-8, 6e-8, -3e-5, 3.0e38, 1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, 1.0 + 2 ** -11,
                            1.0 + 3 * 2 ** -11, 1.17e-38, 1e-40])
    g = torch.Generator().manual_seed(5)
    x = torch.cat([special, torch.randn(N, generator=g) * 1000, torch.randn(N, generator=g) * 1e-6])
    lx = to_lucid(x)
    td = getattr(torch, dtype)
    got = lx.to(getattr(lucid, dtype))
    _same_bits(got, x.to(td))
    back = to_torch(got.float())
    want = x.to(td).float()
    assert torch.equal(back.isnan(), want.isnan())
    assert torch.equal(back[~want.isnan()], want[~want.isnan()])


@pytest.mark.parametrize("isa", ["baseline", "avx2"])
def test_each_instruction_set(isa):
    # The vector versions picked at start-up: rerun this file's tests capped at `isa`.
    root = os.path.dirname(os.path.dirname(os.path.abspath(lucid.__file__)))
    env = dict(os.environ, LUCID_CPU_ISA=isa, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
                        "not instruction_set"], env=env, capture_output=True, text=True, cwd=os.path.dirname(__file__))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int16", "int8", "uint8", "bool"])
@pytest.mark.parametrize("shape", [(67, 130), (1000, 1030)])
def test_transposes_of_narrow_elements(shape, dtype):
    # 1- and 2-byte elements go through the 16 x 16 vector transpose as 32-bit lanes
    # (core/transpose.cpp: zero-extended, transposed, truncated), in copies and in an
    # elementwise op that reads one operand across its memory order.
    g = torch.Generator().manual_seed(7)
    t = (torch.randn(shape, generator=g) * 50).to(getattr(torch, dtype))
    u = (torch.randn(shape[::-1], generator=g) * 50).to(getattr(torch, dtype))
    lt, lu = to_lucid(t), to_lucid(u)
    assert torch.equal(to_torch(lt.t().contiguous()), t.t().contiguous())
    if dtype != "bool":
        assert torch.equal(to_torch(lucid.maximum(lt.t(), lu)), torch.maximum(t.t(), u))


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("rms", [False, True])
def test_layer_norm_reads_16_bits_as_the_float32_rows(rms, affine, dtype):
    # A 16-bit layer_norm / rms_norm on the CPU normalises each row in a float buffer
    # (layer_norm_half_rows): the float32 computation's bits, rounded once; gradients
    # as before (float32 copies), within 16-bit rounding of torch's. (rms_norm's default
    # eps is the dtype's: one eps for both.)
    t = _data(dtype, 37 * 1000 + 37 * 3, seed=8).reshape(37, 1003)
    w = (1 + _data(dtype, 1003, seed=9).float() / 10).to(t.dtype) if affine else None
    b = (_data(dtype, 1003, seed=10).float() / 10).to(t.dtype) if affine else None
    lt = to_lucid(t).requires_grad_()
    lw = to_lucid(w).requires_grad_() if affine else None
    lb = to_lucid(b) if affine else None
    F = lucid.nn.functional
    norm = (lambda x, w, b: F.rms_norm(x, (1003,), w, eps=1e-6)) if rms else (lambda x, w, b: F.layer_norm(x, (1003,), w, b))
    y = norm(lt, lw, lb)
    want = norm(lt.detach().float(), lw.detach().float() if affine else None, lb.float() if affine else None)
    _same_bits(y, to_torch(want).to(t.dtype))
    tnorm = (lambda x, w, b: torch.nn.functional.rms_norm(x, (1003,), w, eps=1e-6)) if rms else \
        (lambda x, w, b: torch.nn.functional.layer_norm(x, (1003,), w, b))
    want_t = tnorm(t.float(), w.float() if affine else None, b.float() if affine else None)
    torch.testing.assert_close(to_torch(y).float(), want_t, rtol=2e-2, atol=2e-2)
    g = _data(dtype, 37 * 1003, seed=11).reshape(37, 1003)
    y.backward(to_lucid(g))
    tt = t.float().requires_grad_()
    tnorm(tt, w.float() if affine else None, b.float() if affine else None).backward(g.float())
    torch.testing.assert_close(to_torch(lt.grad).float(), tt.grad, rtol=2e-2, atol=2e-2 * float(tt.grad.abs().max()))
