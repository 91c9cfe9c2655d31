"""scatter_reduce / index_reduce (and their in-place forms) against torch: every
reduction with and without include_self, dtypes, NaN and tie handling, zeros in
products, gradients (torch's, and float64 numerical ones), errors; on every device."""

import numpy as np
import pytest
import torch

import lucid
from conftest import to_lucid

REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _case(dtype, seed, shape=(4, 5), src_rows=7, ties=False):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g) * 3
    src = torch.randn(src_rows, *shape[1:], generator=g) * 3
    if ties:  # small integers: many equal values, and zeros for the products
        x, src = x.round().clamp(-2, 2), src.round().clamp(-2, 2)
    idx = torch.randint(0, shape[0], (src_rows, *shape[1:]), generator=g)
    return x.to(dtype), src.to(dtype), idx


def _same(l, t, tol=1e-6):
    assert l.dtype == getattr(lucid, str(t.dtype).split(".")[-1])
    np.testing.assert_allclose(l.detach().cpu().numpy().astype(np.float64), t.detach().numpy().astype(np.float64),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "float16"])
def test_values_match_torch(reduce, include_self, dtype, device):
    x, src, idx = _case(getattr(torch, dtype), 0, ties=dtype.startswith("int"))
    want = x.scatter_reduce(0, idx, src, reduce, include_self=include_self)
    got = to_lucid(x, device).scatter_reduce(0, to_lucid(idx, device), to_lucid(src, device), reduce,
                                             include_self=include_self)
    _same(got, want, 2e-3 if dtype == "float16" else 1e-6)
    # along another dim, and as the function
    x2, src2 = x.t().contiguous(), src.t().contiguous()
    want = torch.scatter_reduce(x2, 1, idx.t().contiguous(), src2, reduce, include_self=include_self)
    got = lucid.scatter_reduce(to_lucid(x2, device), 1, to_lucid(idx.t().contiguous(), device),
                               to_lucid(src2, device), reduce, include_self=include_self)
    _same(got, want, 2e-3 if dtype == "float16" else 1e-6)


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_nan_wins_in_extrema(reduce, device):
    x = torch.tensor([1.0, float("nan"), 3.0, 0.0])
    src = torch.tensor([5.0, 2.0, float("nan"), -1.0, 7.0])
    idx = torch.tensor([0, 1, 2, 3, 3])
    for include_self in (True, False):
        want = x.scatter_reduce(0, idx, src, reduce, include_self=include_self)
        got = to_lucid(x, device).scatter_reduce(0, to_lucid(idx, device), to_lucid(src, device), reduce,
                                                 include_self=include_self)
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


def test_bool(device):
    x = torch.tensor([True, False, False, True])
    src = torch.tensor([False, True, False, False])
    idx = torch.tensor([0, 1, 2, 3])
    for reduce in ("amax", "amin", "sum", "prod"):
        want = x.scatter_reduce(0, idx, src, reduce)
        got = to_lucid(x, device).scatter_reduce(0, to_lucid(idx, device), to_lucid(src, device), reduce)
        assert got.cpu().tolist() == want.tolist(), reduce


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("ties", [False, True])
def test_gradients_match_torch(reduce, include_self, ties, device):
    """With ties, the extrema share their gradient evenly and the products meet zeros."""
    x, src, idx = _case(torch.float64, 1, ties=ties)
    tx, ts = x.clone().requires_grad_(), src.clone().requires_grad_()
    lx, ls = to_lucid(x, device).requires_grad_(), to_lucid(src, device).requires_grad_()
    g = torch.randn(x.shape, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    tx.scatter_reduce(0, idx, ts, reduce, include_self=include_self).backward(g)
    lx.scatter_reduce(0, to_lucid(idx, device), ls, reduce, include_self=include_self).backward(to_lucid(g, device))
    _same(lx.grad, tx.grad, 1e-10)
    _same(ls.grad, ts.grad, 1e-10)


@pytest.mark.parametrize("reduce", REDUCES)
def test_gradcheck(reduce, device):
    # distinct values (no ties: the extrema are differentiable there), no zeros
    x = to_lucid(torch.tensor([[1.5, -2.0, 0.7], [3.1, 0.4, -1.2]], dtype=torch.float64), device).requires_grad_()
    src = to_lucid(torch.tensor([[0.3, 2.2, -0.9], [-1.7, 1.1, 2.6], [0.8, -0.5, 1.9]], dtype=torch.float64),
                   device).requires_grad_()
    idx = to_lucid(torch.tensor([[0, 1, 0], [1, 1, 0], [0, 0, 1]]), device)
    for include_self in (True, False):
        assert lucid.autograd.gradcheck(lambda a, b: a.scatter_reduce(0, idx, b, reduce, include_self=include_self),
                                        (x, src))


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_matches_torch(reduce, include_self, device):
    g = torch.Generator().manual_seed(3)
    x, source = torch.randn(5, 3, generator=g), torch.randn(4, 3, generator=g)
    index = torch.tensor([0, 4, 2, 0])
    want = x.index_reduce(0, index, source, reduce, include_self=include_self)
    got = to_lucid(x, device).index_reduce(0, to_lucid(index, device), to_lucid(source, device), reduce,
                                           include_self=include_self)
    _same(got, want)
    want = x.t().contiguous().index_reduce(1, index, source.t().contiguous(), reduce, include_self=include_self)
    lx = to_lucid(x.t().contiguous(), device)
    lx.index_reduce_(1, to_lucid(index, device), to_lucid(source.t().contiguous(), device), reduce,
                     include_self=include_self)
    _same(lx, want)


def test_in_place_and_errors(device):
    x, src, idx = _case(torch.float32, 4)
    lx = to_lucid(x, device)
    lx.scatter_reduce_(0, to_lucid(idx, device), to_lucid(src, device), "amax", include_self=False)
    _same(lx, x.scatter_reduce(0, idx, src, "amax", include_self=False))
    li, ls = to_lucid(idx, device), to_lucid(src, device)
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, amax or amin"):
        lx.scatter_reduce(0, li, ls, "max")
    with pytest.raises(RuntimeError, match="self.dtype to be equal to src.dtype"):
        lx.scatter_reduce(0, li, ls.double(), "sum")
    with pytest.raises(RuntimeError, match="index 1[0-3] is out of bounds for dimension 0 with size 4"):
        # (the GPU finds it in the kernel and raises at the next wait: Note [Errors found on the device])
        lx.scatter_reduce(0, li + 10, ls, "amax").tolist()
    with pytest.raises(RuntimeError, match="Expected reduce to be one of"):
        lx.index_reduce(0, to_lucid(torch.tensor([0]), device), ls[:1], "sum")
