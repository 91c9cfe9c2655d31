"""Convolutions of small images with many channels, which run as one product over a
chunk of the batch (backend/cpu/conv_batched.cpp, Note [Batched small images]):
forward, input and weight gradients, conv_transpose, in float32 against a float64
torch reference and in float64 against float64 (with numerical gradients), over
1x1 to 8x8 images, strides, padding, dilation, groups, 1-3 spatial dims, several
chunks (a batch larger than one chunk), with and without bias, on 1 and 2 threads."""

import pytest
import torch
import torch.nn.functional as TF

import lucid
import lucid.nn.functional as LF
from conftest import to_lucid, to_torch

CASES = [
    # nsp, N, Cin, Cout, spatial, kernel, kwargs   (every one has Cout/g * Cin/g * K >= 2**14)
    (2, 4, 64, 64, (1, 1), (3, 3), dict(padding=1)),                     # the center tap only
    (2, 5, 64, 48, (4, 4), (3, 3), dict(padding=1)),
    (2, 3, 64, 64, (7, 5), (3, 3), dict(padding=1, stride=2)),           # strided, odd sizes
    (2, 70, 128, 128, (4, 4), (3, 3), dict(padding=1)),                  # 70 images of 16 positions: two chunks
    (2, 3, 128, 256, (3, 3), (1, 1), dict()),                            # pointwise
    (2, 3, 96, 192, (6, 6), (1, 1), dict(stride=2)),                     # a ResNet downsample
    (2, 4, 128, 128, (5, 6), (3, 3), dict(padding=2, dilation=2, groups=2)),
    (2, 2, 72, 80, (2, 3), (2, 3), dict(padding=(1, 0))),
    (1, 3, 128, 128, (9,), (3,), dict(padding=1)),
    (3, 2, 32, 64, (3, 2, 3), (3, 3, 3), dict(padding=1)),
]

CONV = {1: "conv1d", 2: "conv2d", 3: "conv3d"}


def close(l, ref, k):
    # float32 sums of k products against a float64 reference
    got = to_torch(l.detach()).double()
    assert got.shape == ref.shape, (tuple(got.shape), tuple(ref.shape))
    tol = 2e-6 * k ** 0.5 * (ref.abs().max().item() + 1)
    err = (got - ref).abs().max().item()
    assert err <= tol, (err, tol)


def run_both(fn, x, w, b, kw, seed, dtype):
    g = torch.Generator().manual_seed(seed)
    xd, wd = (t.double().requires_grad_() for t in (x, w))
    bd = None if b is None else b.double().requires_grad_()
    ref = getattr(TF, fn)(xd, wd, bd, **kw)
    gy = torch.randn(ref.shape, generator=g)
    ref.backward(gy.double())
    lx, lw = (to_lucid(t.to(dtype)).requires_grad_() for t in (x, w))
    lb = None if b is None else to_lucid(b.to(dtype)).requires_grad_()
    out = getattr(LF, fn)(lx, lw, lb, **kw)
    out.backward(to_lucid(gy.to(dtype)))
    return (out, ref.detach()), (lx.grad, xd.grad), (lw.grad, wd.grad), (None if b is None else (lb.grad, bd.grad))


def make(nsp, n, cin, cout, spatial, kernel, groups, transpose, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, cin, *spatial, generator=g)
    wshape = (cin, cout // groups, *kernel) if transpose else (cout, cin // groups, *kernel)
    w = torch.randn(*wshape, generator=g) / (cin // groups * len(kernel)) ** 0.5
    b = torch.randn(cout, generator=g)
    return x, w, b


def window(k):
    size = 1
    for v in k:
        size *= v
    return size


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}d-{c[1]}x{c[2]}-{c[4]}-{c[6]}" for c in CASES])
def test_conv_float32_matches_float64(case, bias, threads):
    nsp, n, cin, cout, spatial, kernel, kw = case
    old = lucid.get_num_threads()
    lucid.set_num_threads(threads)
    try:
        x, w, b = make(nsp, n, cin, cout, spatial, kernel, kw.get("groups", 1), False, 0)
        res = run_both(CONV[nsp], x, w, b if bias else None, kw, 1, torch.float32)
    finally:
        lucid.set_num_threads(old)
    k_in = cin // kw.get("groups", 1) * window(kernel)
    out, gx, gw, gb = res
    close(*out, k_in)
    close(*gx, cout * window(kernel))
    close(*gw, n * out[1][0, 0].numel())
    if gb is not None:
        close(*gb, n * out[1][0, 0].numel())


TRANSPOSE_CASES = [
    # nsp, N, Cin, Cout, spatial, kernel, kwargs
    (2, 6, 128, 64, (2, 2), (3, 3), dict(stride=2, padding=1, output_padding=1)),
    (2, 4, 128, 128, (4, 4), (3, 3), dict(padding=1)),
    (2, 3, 128, 128, (3, 3), (2, 2), dict(stride=2, groups=2)),
    (1, 4, 256, 64, (5,), (4,), dict(stride=2, padding=1)),
]


@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=[f"{c[0]}d-{c[4]}-{c[6]}" for c in TRANSPOSE_CASES])
def test_conv_transpose_float32_matches_float64(case):
    nsp, n, cin, cout, spatial, kernel, kw = case
    x, w, b = make(nsp, n, cin, cout, spatial, kernel, kw.get("groups", 1), True, 2)
    out, gx, gw, gb = run_both(f"conv_transpose{nsp}d", x, w, b, kw, 3, torch.float32)
    k = cin * window(kernel)
    close(*out, k)
    close(*gx, k)
    close(*gw, n * x[0, 0].numel())
    close(*gb, n * out[1][0, 0].numel())


@pytest.mark.parametrize("case", CASES[:4] + CASES[6:7], ids=["1x1", "4x4", "stride2", "chunks", "groups"])
def test_conv_float64_matches_torch(case):
    nsp, n, cin, cout, spatial, kernel, kw = case
    x, w, b = make(nsp, n, cin, cout, spatial, kernel, kw.get("groups", 1), False, 4)
    for got, ref in run_both(CONV[nsp], x, w, b, kw, 5, torch.float64):
        assert got.dtype == lucid.float64
        torch.testing.assert_close(to_torch(got.detach()), ref, rtol=1e-10, atol=1e-10)


def test_gradcheck_batched_float64():
    # A small image with enough channels to take the batched path: numerical gradients
    # of the input (the weight has 18K elements, too many to difference one by one; its
    # gradient is checked against torch's above).
    g = torch.Generator().manual_seed(6)
    x = to_lucid(torch.randn(3, 32, 2, 2, generator=g, dtype=torch.float64)).requires_grad_()
    w = to_lucid(torch.randn(64, 32, 3, 3, generator=g, dtype=torch.float64) / 17)
    assert lucid.autograd.gradcheck(lambda a: LF.conv2d(a, w, padding=1, stride=(1, 2)), (x,), eps=1e-6, atol=1e-6)


def test_nonfinite_values_propagate_like_torch():
    # An inf in one image reaches only that image's outputs (each column of the product
    # is one image's), and a NaN weight reaches every output it touches.
    x = torch.randn(4, 64, 2, 2)
    w = torch.randn(64, 64, 3, 3) / 24
    x[1, 3, 0, 0] = float("inf")
    w[5, 0, 1, 1] = float("nan")
    ref = TF.conv2d(x, w, padding=1)
    got = to_torch(LF.conv2d(to_lucid(x), to_lucid(w), padding=1))
    assert torch.equal(got.isnan(), ref.isnan())
    assert torch.equal(got.isinf(), ref.isinf())
    fin = ref.isfinite()
    torch.testing.assert_close(got[fin], ref[fin], rtol=1e-4, atol=1e-4)
