"""float32 stride-1 convolutions, which run as implicit products over the padded
image (backend/cpu/conv_direct.cpp, Note [Direct convolution]): forward, input and
weight gradients and conv_transpose against a float64 torch reference, over edge
tiles, several k slices, groups, dilation, 1-3 spatial dims, extra padding, the
per-sample and the threaded-product splits, on 1 and 2 threads."""

import pytest
import torch
import torch.nn.functional as TF

import lucid
import lucid.nn.functional as LF
from conftest import to_lucid, to_torch


def close(l, ref, k):
    # float32 sums of k products against a float64 reference
    got = to_torch(l.detach()).double()
    assert got.shape == ref.shape, (tuple(got.shape), tuple(ref.shape))
    tol = 2e-6 * k ** 0.5 * (ref.abs().max().item() + 1)
    err = (got - ref).abs().max().item()
    assert err <= tol, (err, tol)


CASES = [
    # nsp, N, Cin, Cout, spatial, kernel, kwargs
    (2, 2, 8, 16, (9, 11), (3, 3), dict(padding=1)),
    (2, 3, 64, 64, (12, 10), (3, 3), dict(padding=1)),            # k = 576: two k slices; 3 samples
    (2, 4, 6, 12, (10, 7), (3, 2), dict(padding=(1, 0), dilation=(2, 1), groups=3)),
    (2, 2, 5, 5, (8, 9), (3, 3), dict(padding=4)),                # padding wider than the window
    (2, 2, 4, 7, (6, 5), (4, 2), dict(padding="same", dilation=(1, 2))),
    (2, 1, 3, 13, (20, 21), (5, 5), dict(padding=2)),             # 13 channels: edge row tiles
    (1, 2, 5, 9, (40,), (5,), dict(padding=2)),
    (1, 3, 16, 32, (100,), (3,), dict(dilation=3)),
    (3, 2, 4, 8, (5, 6, 7), (3, 3, 3), dict(padding=1, groups=2)),
    (3, 1, 3, 6, (4, 5, 6), (2, 3, 1), dict(padding=(1, 0, 0))),
]


def check_against_float64(fn, x, w, b, kw, out_window, in_window, seed):
    """fn (a torch.nn.functional name, the same in lucid) in float32 against float64:
    output and the three gradients, each sum out_window / in_window / positions long."""
    g = torch.Generator().manual_seed(seed)
    xd, wd, bd = (t.double().requires_grad_() for t in (x, w, b))
    ref = getattr(TF, fn)(xd, wd, bd, **kw)
    gy = torch.randn(ref.shape, generator=g)
    ref.backward(gy.double())
    lx, lw, lb = (to_lucid(t).requires_grad_() for t in (x, w, b))
    out = getattr(LF, fn)(lx, lw, lb, **kw)
    assert out.dtype == lucid.float32
    out.backward(to_lucid(gy))
    positions = x.shape[0] * out[0, 0].numel()
    close(out, ref.detach(), out_window)
    close(lx.grad, xd.grad, in_window)
    close(lw.grad, wd.grad, positions)
    close(lb.grad, bd.grad, positions)


def window_size(k):
    size = 1
    for d in k:
        size *= d
    return size


@pytest.mark.parametrize("case", CASES)
def test_direct_conv_matches_torch(case, threads):
    nsp, n, cin, cout, sp, k, kw = case
    groups = kw.get("groups", 1)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, cin, *sp, generator=g)
    w = torch.randn(cout, cin // groups, *k, generator=g)
    b = torch.randn(cout, generator=g)
    check_against_float64(f"conv{nsp}d", x, w, b, kw, cin // groups * window_size(k), cout * window_size(k), 1)


TRANSPOSE_CASES = [
    (2, 2, 8, 16, (9, 11), (3, 3), dict(padding=1)),
    (2, 3, 12, 6, (7, 8), (3, 2), dict(padding=(2, 0), dilation=(1, 2), groups=3)),
    (2, 2, 4, 5, (6, 6), (3, 3), dict(padding=3)),    # padding past dil * (k - 1): the column path
    (1, 2, 9, 5, (30,), (4,), {}),
    (3, 1, 4, 6, (4, 5, 3), (3, 3, 3), dict(padding=1, groups=2)),
]


@pytest.mark.parametrize("case", TRANSPOSE_CASES)
def test_direct_conv_transpose_matches_torch(case, threads):
    nsp, n, cin, cout, sp, k, kw = case
    groups = kw.get("groups", 1)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(n, cin, *sp, generator=g)
    w = torch.randn(cin, cout // groups, *k, generator=g)
    b = torch.randn(cout, generator=g)
    check_against_float64(f"conv_transpose{nsp}d", x, w, b, kw, cin * window_size(k), cout * window_size(k), 2)


def test_direct_conv_empty_batch_and_same_bits_across_threads():
    x = lucid.randn(0, 8, 10, 10).requires_grad_()
    w = lucid.randn(16, 8, 3, 3).requires_grad_()
    out = LF.conv2d(x, w, padding=1)
    assert tuple(out.shape) == (0, 16, 10, 10)
    out.sum().backward()
    assert float(w.grad.abs().sum()) == 0.0 and tuple(x.grad.shape) == (0, 8, 10, 10)
    # the per-sample split (samples divide among the threads) and the products run
    # together (they do not: 3 samples on 2 threads, 2 or 3 on 4, where each product
    # is split too) give the same bits: every output is one thread's sum in k order
    before = lucid.get_num_threads()
    try:
        for n in [2, 3, 4]:
            x = lucid.randn(n, 16, 14, 14)
            w = lucid.randn(32, 16, 3, 3)
            b = lucid.randn(32)
            results = []
            for t in [1, 2, 4]:
                lucid.set_num_threads(t)
                results.append(to_torch(LF.conv2d(x, w, b, padding=1)).clone())
            assert torch.equal(results[0], results[1]) and torch.equal(results[0], results[2])
            ref = TF.conv2d(to_torch(x).double(), to_torch(w).double(), to_torch(b).double(), padding=1)
            close(lucid.from_dlpack(results[2]), ref, 16 * 9)
    finally:
        lucid.set_num_threads(before)
