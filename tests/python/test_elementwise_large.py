"""Elementwise ops on tensors large enough to take the vector loops' bodies and
tails, and the thread-pool split (> 2 * 32768 elements), in every layout the CPU
loops special-case: dense, tensor-with-scalar, row broadcast, transposed. Each
instruction-set version is also run (LUCID_CPU_ISA) in a subprocess."""
import os
import subprocess
import sys

import pytest
import torch

import lucid
from conftest import to_torch

N = 65536 + 13  # a partial vector at the end, and two thread pieces

UNARY = ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "expm1", "log1p", "erf", "erfc", "exp2",
         "log2", "asinh", "atan", "rsqrt", "reciprocal", "neg", "abs", "floor", "relu"]
BINARY = ["add", "sub", "mul", "div", "maximum", "lt", "pow", "atan2"]


def _data(dtype, positive=False):
    g = torch.Generator().manual_seed(0)
    t = torch.randn(N, generator=g, dtype=torch.float64) * 4
    if positive:
        t = t.abs() + 0.01
    return t.to(getattr(torch, dtype))


def _same(l, t, dtype):
    got = to_torch(l)
    tol = dict(rtol=1.3e-6, atol=1e-5) if dtype == "float32" else dict(rtol=1e-7, atol=1e-7)
    torch.testing.assert_close(got, t, equal_nan=True, **tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", UNARY)
def test_unary_large(op, dtype):
    t = _data(dtype, positive=op in ("log", "sqrt", "log1p", "log2", "rsqrt"))
    l = lucid.tensor(t.tolist(), dtype=getattr(lucid, dtype))
    _same(getattr(lucid, op)(l), getattr(torch, op)(t), dtype)
    # Non-contiguous: every other element (the strided loop, split over threads).
    _same(getattr(lucid, op)(l[::2]), getattr(torch, op)(t[::2]), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "float16"])
@pytest.mark.parametrize("op", BINARY)
def test_binary_large_layouts(op, dtype):
    if dtype in ("int32", "int64") and op in ("div", "pow", "atan2"):
        pytest.skip("float ops")
    a, b = _data("float64"), _data("float64").flip(0)
    if dtype in ("int32", "int64"):
        a, b = (a * 8).round(), (b * 8).round()
    a, b = a.to(getattr(torch, dtype)), b.to(getattr(torch, dtype))
    la = lucid.tensor(a.tolist(), dtype=getattr(lucid, dtype))
    lb = lucid.tensor(b.tolist(), dtype=getattr(lucid, dtype))
    f, tf = getattr(lucid, op), getattr(torch, op)

    def same(l, t):
        if t.dtype == torch.float16:
            torch.testing.assert_close(to_torch(l), t, equal_nan=True, rtol=1e-3, atol=1e-3)
        elif t.is_floating_point():
            _same(l, t, "float32" if t.dtype == torch.float32 else "float64")
        else:
            assert torch.equal(to_torch(l), t)

    same(f(la, lb), tf(a, b))                                  # dense
    same(f(la, lb[7:8]), tf(a, b[7:8]))                        # tensor with one broadcast value
    same(f(la[7:8], lb), tf(a[7:8], b))
    m, tm = la[: 512 * 128].reshape(512, 128), a[: 512 * 128].reshape(512, 128)
    same(f(m, lb[:128]), tf(tm, b[:128]))                      # row broadcast
    same(f(m.t(), lb[:512]), tf(tm.t(), b[:512]))            # transposed operand
    same(f(m.t(), m.t()), tf(tm.t(), tm.t()))                  # transposed output layout
    same(f(m[:, ::3], m[:, 1::3]), tf(tm[:, ::3], tm[:, 1::3]))  # strided rows


@pytest.mark.parametrize("isa", ["baseline", "avx2"])
def test_each_instruction_set(isa):
    # The vector versions picked at start-up: rerun this file's tests capped at `isa`.
    root = os.path.dirname(os.path.dirname(os.path.abspath(lucid.__file__)))
    env = dict(os.environ, LUCID_CPU_ISA=isa, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
                        "not instruction_set and float32"],
                       env=env, capture_output=True, text=True, cwd=os.path.dirname(__file__))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


@pytest.mark.parametrize("shape,row", [((40, 33), (33,)), ((3, 5, 64), (1, 1, 64)), ((7, 4, 32), (4, 32)),
                                       ((300, 257), (1, 257)), ((2, 70000), (70000,))])
@pytest.mark.parametrize("op", ["add", "sub", "div", "lt", "maximum"])
def test_row_broadcast_fast_path_matches_torch(shape, row, op):
    # A contiguous tensor with a row repeated over its leading dims, on either side
    # (the bias-add path of run_binary), against torch, including bool outputs.
    gen = torch.Generator().manual_seed(len(shape) + row[-1])
    t = torch.randn(*shape, generator=gen)
    r = torch.randn(*row, generator=gen)
    lt, lr = lucid.from_numpy(t.numpy()).clone(), lucid.from_numpy(r.numpy()).clone()
    for a, b, ta, tb in ((lt, lr, t, r), (lr, lt, r, t)):
        got = getattr(lucid, op)(a, b)
        want = getattr(torch, op)(ta, tb)
        assert got.shape == tuple(want.shape)
        assert got.tolist() == want.tolist()


@pytest.mark.parametrize("op", ["exp", "sigmoid", "tanh"])
def test_activation_range_edges(op):
    # The float32 activations check four vectors at a time for lanes outside the
    # polynomial's range (|x| > 87, inf, NaN) and recompute those with the scalar
    # function: a sweep through the edge, out of place and in place.
    x = torch.cat([torch.linspace(-100, 100, 100003),
                   torch.tensor([float("nan"), float("inf"), -float("inf"), 88.7, -87.5, 0.0, -0.0])])
    want = getattr(torch, op)(x)
    got = getattr(lucid, op)(lucid.from_numpy(x.numpy()))
    torch.testing.assert_close(to_torch(got), want, rtol=1.3e-6, atol=1e-30, equal_nan=True)
    inplace = lucid.from_numpy(x.numpy().copy())
    getattr(inplace, op + "_")()
    torch.testing.assert_close(to_torch(inplace), want, rtol=1.3e-6, atol=1e-30, equal_nan=True)
