"""Product epilogues at a flush (csrc/ops/fusion_products.cpp, Note [Product epilogues]): a product whose next
recorded call is a relu of its result runs as one cuBLASLt product with the RELU / RELU_BIAS epilogue, with the
unfused calls' results bit for bit; a product whose result is read again stays unfused. Every test needs a GPU
but the CPU's relu of -0."""

import math

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from test_gpu_fusion import assert_bitwise, fused_calls, needs_gpu


def as_arrays(got):
    got = got if isinstance(got, (tuple, list)) else (got,)
    return [g.float().cpu().numpy() if g.dtype in (lucid.float16, lucid.bfloat16) else g.cpu().numpy() for g in got]


def unfused_and_fused(fn):
    """fn() in lazy mode with fusion off, then on: both results as NumPy arrays, and how many calls the fused run
    replaced (fn's inputs are made and flushed before it is called)."""
    lazy, was = lucid.gpu.is_lazy(), lucid.gpu.is_fusion()
    lucid.gpu.set_lazy(True)
    try:
        out = []
        for fusion in (False, True):
            lucid.gpu.set_fusion(fusion)
            lucid.gpu.synchronize()
            before = fused_calls()
            got = fn()
            lucid.eval(*(got if isinstance(got, (tuple, list)) else (got,)))
            fused = fused_calls() - before
            out.append(as_arrays(got))
        return out[0], out[1], fused
    finally:
        lucid.gpu.set_fusion(was)
        lucid.gpu.set_lazy(lazy)


def gpu_tensor(shape, dtype, seed, special=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    if special:  # a zero row (products of +-0), a NaN and an infinity
        a[0] = 0.0
        a[1, 0] = np.nan
        a[2, 1] = np.inf
    t = lucid.tensor(a, device="gpu").to(dtype)
    lucid.eval(t)
    return t


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("m, k, n", [(64, 96, 80), (3, 7, 5), (4096, 1024, 1024), (1000, 300, 700)])
def test_linear_then_relu_is_one_product_with_the_unfused_bits(dtype, bias, m, k, n):
    dt = getattr(lucid, dtype)
    x = gpu_tensor((m, k), dt, 0, special=True)
    w = gpu_tensor((n, k), dt, 1)
    b = gpu_tensor((n,), dt, 2) if bias else None
    unfused, fused, count = unfused_and_fused(lambda: F.relu(F.linear(x, w, b)))
    # the product and its relu, one call, in float32 and float64 (the 16-bit products' tensor-core kernels turn
    # a NaN into 0 in some shapes' epilogues; float64's bias is addmm's addend, read from the output)
    assert count == (2 if dtype == "float32" or (dtype == "float64" and not bias) else 0)
    assert_bitwise(unfused, fused)
    expect = np.maximum(x.double().cpu().numpy() @ w.double().cpu().numpy().T +
                        (b.double().cpu().numpy() if bias else 0), 0)
    tol = {"float64": 1e-12, "float32": 1e-4, "float16": 5e-2, "bfloat16": 2e-1}[dtype]
    np.testing.assert_allclose(fused[0].astype(np.float64), np.where(np.isnan(expect), np.nan, expect),
                               rtol=tol, atol=tol)


@needs_gpu
def test_a_linear_of_more_dims_and_an_in_place_relu_fuse():
    x = gpu_tensor((4, 16, 96), lucid.float32, 3)
    w = gpu_tensor((48, 96), lucid.float32, 4)
    b = gpu_tensor((48,), lucid.float32, 5)
    unfused, fused, count = unfused_and_fused(lambda: F.relu(F.linear(x, w, b)))
    assert count == 2 and fused[0].shape == (4, 16, 48)
    assert_bitwise(unfused, fused)

    def in_place():
        h = x[0] @ w.t()
        return h.relu_()

    unfused, fused, count = unfused_and_fused(in_place)
    assert count == 2 and (fused[0] >= 0).all()
    assert_bitwise(unfused, fused)


@needs_gpu
def test_a_product_read_again_or_adding_its_old_output_stays_unfused():
    x = gpu_tensor((32, 64), lucid.float32, 6)
    w = gpu_tensor((64, 40), lucid.float32, 7)
    c = gpu_tensor((32, 40), lucid.float32, 8)

    def held():
        h = x @ w
        return h, F.relu(h)  # the product's own result is wanted too

    unfused, fused, count = unfused_and_fused(held)
    assert count == 0
    assert_bitwise(unfused, fused)
    assert (fused[0] < 0).any() and (fused[1] >= 0).all()

    unfused, fused, count = unfused_and_fused(lambda: F.relu(lucid.addmm(c, x, w, beta=0.5)))
    assert count == 0
    assert_bitwise(unfused, fused)

    was = lucid.backends.cuda.matmul.allow_tf32
    lucid.backends.cuda.matmul.allow_tf32 = True  # tensor-core kernels: left alone
    try:
        unfused, fused, count = unfused_and_fused(lambda: F.relu(x @ w))
    finally:
        lucid.backends.cuda.matmul.allow_tf32 = was
    assert count == 0
    assert_bitwise(unfused, fused)


@needs_gpu
def test_mlp_training_with_relu_epilogues_gives_the_unfused_parameters():
    def train():
        lucid.manual_seed(0)
        model = nn.Sequential(nn.Linear(48, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)).to("gpu")
        opt = lucid.optim.Adam(model.parameters(), lr=1e-2)
        x = gpu_tensor((32, 48), lucid.float32, 9)
        target = lucid.tensor(np.random.default_rng(10).integers(0, 10, 32), device="gpu")
        for _ in range(3):
            opt.zero_grad()
            F.cross_entropy(model(x), target).backward()
            opt.step()
        return [p.detach() for p in model.parameters()]

    unfused, fused, _ = unfused_and_fused(train)
    assert_bitwise(unfused, fused)


def test_relu_of_minus_zero_is_torchs_on_each_device(device):
    # torch's CPU relu keeps -0; its CUDA relu (max(x, 0)) gives +0, as cuBLASLt's RELU epilogue does
    got = F.relu(lucid.tensor([-0.0, 0.0, float("nan"), -1.5, 2.5], device=device)).tolist()
    assert math.copysign(1, got[0]) == (-1 if device == "cpu" else 1)
    assert math.copysign(1, got[1]) == 1 and math.isnan(got[2]) and got[3:] == [0.0, 2.5]
