"""3x3 stride-1 float32 convolutions with at least 32 channels a group, which run as
Winograd F(2x2, 3x3) (backend/cpu/conv_winograd.cpp, Note [Winograd convolution]):
forward and input gradient (a stride-1 conv_transpose, the same code) against a
float64 torch reference over odd and even sizes, partial tiles and blocks, channel
counts that are not multiples of the product tile, groups, several paddings and
thread counts; and infs and NaNs propagating as torch's direct sums do."""

import math

import pytest
import torch
import torch.nn.functional as TF

import lucid
import lucid.nn.functional as LF
from conftest import to_lucid, to_torch


def assert_close(got, ref, terms):
    got = to_torch(got.detach()).double()
    assert got.shape == ref.shape, (tuple(got.shape), tuple(ref.shape))
    # float32 sums of `terms` products, each through transforms of at most 4 terms
    tol = 4e-6 * math.sqrt(terms) * (ref.abs().max().item() + 1)
    err = (got - ref).abs().max().item()
    assert err <= tol, (err, tol)


CASES = [
    # N, Cin, Cout, H, W, padding, groups, bias
    (2, 64, 64, 56, 56, 1, 1, True),     # the benchmark's layer: several blocks a sample
    (3, 32, 40, 13, 17, 1, 1, False),    # odd sizes: a half tile at the right and bottom
    (1, 48, 33, 9, 30, 0, 1, True),      # no padding; 33 outputs: a part-filled row tile
    (2, 64, 64, 16, 16, 2, 2, True),     # two groups, wider padding
    (1, 96, 64, 20, 21, 1, 1, True),
    (2, 32, 32, 12, 40, 3, 1, True),     # padding wider than the window
    (1, 40, 36, 64, 9, 1, 1, False),     # tall and narrow: one vector of tiles per row
]


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[1]}-{c[2]}ch-{c[3]}x{c[4]}-p{c[5]}-g{c[6]}" for c in CASES])
def test_forward_and_input_gradient_against_float64(case, threads):
    n, cin, cout, h, w, pad, groups, has_bias = case
    g = torch.Generator().manual_seed(cin * 1000 + h)
    x = torch.randn(n, cin, h, w, generator=g)
    wt = torch.randn(cout, cin // groups, 3, 3, generator=g) / (3 * math.sqrt(cin / groups))
    b = torch.randn(cout, generator=g) if has_bias else None
    xd = x.double().requires_grad_()
    ref = TF.conv2d(xd, wt.double(), b.double() if has_bias else None, padding=pad, groups=groups)
    gy = torch.randn(ref.shape, generator=g)
    ref.backward(gy.double())
    before = lucid.get_num_threads()
    lucid.set_num_threads(threads)
    try:
        lx = to_lucid(x).requires_grad_()
        out = LF.conv2d(lx, to_lucid(wt), to_lucid(b) if has_bias else None, padding=pad, groups=groups)
        out.backward(to_lucid(gy))
    finally:
        lucid.set_num_threads(before)
    assert_close(out, ref.detach(), 9 * cin // groups)
    assert_close(lx.grad, xd.grad, 9 * cout // groups)


def test_conv_transpose_stride_one_against_float64():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 64, 23, 26, generator=g)
    wt = torch.randn(64, 48, 3, 3, generator=g) / 24
    b = torch.randn(48, generator=g)
    ref = TF.conv_transpose2d(x.double(), wt.double(), b.double(), padding=1)
    got = LF.conv_transpose2d(to_lucid(x), to_lucid(wt), to_lucid(b), padding=1)
    assert_close(got, ref, 9 * 64)


def same_non_finite_pattern(got, ref):
    got = to_torch(got.detach())
    assert torch.equal(torch.isnan(got), torch.isnan(ref))
    assert torch.equal(torch.isposinf(got), torch.isposinf(ref))
    assert torch.equal(torch.isneginf(got), torch.isneginf(ref))
    fin = torch.isfinite(ref)
    assert torch.allclose(got[fin], ref[fin], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_non_finite_input_propagates_as_the_direct_sum(value):
    # Winograd's transforms would turn inf - inf into NaN where a direct sum has inf;
    # a sample holding one is computed directly. Sample 1 stays finite.
    g = torch.Generator().manual_seed(1)
    x = torch.randn(3, 32, 20, 20, generator=g)
    x[0, 3, 7, 9] = value
    x[2, 31, 0, 19] = value
    wt = torch.rand(32, 32, 3, 3, generator=g) + 0.1  # positive: inf stays inf
    ref = TF.conv2d(x, wt, padding=1)
    got = LF.conv2d(to_lucid(x), to_lucid(wt), padding=1)
    same_non_finite_pattern(got, ref)
    assert torch.isfinite(ref[1]).all()


def test_non_finite_weight_propagates_as_the_direct_sum():
    g = torch.Generator().manual_seed(2)
    x = torch.rand(2, 32, 16, 16, generator=g) + 0.5
    wt = torch.randn(32, 32, 3, 3, generator=g)
    # (centre taps: torch skips the taps that fall on padding, where lucid's direct
    # sum multiplies the padding's zeros, so a NaN or inf at an edge tap makes NaN on
    # the border in lucid only: docs/RELIABILITY.md)
    wt[4, 0, 1, 1] = math.inf
    wt[9, 5, 1, 1] = math.nan
    ref = TF.conv2d(x, wt, padding=1)
    got = LF.conv2d(to_lucid(x), to_lucid(wt), padding=1)
    same_non_finite_pattern(got, ref)
