"""The vectorised, threaded float32/float64 reductions, softmax and scans
(backend/cpu/reduce_fast*.cpp): shapes big enough to cross their blocks and tiles,
each axis, NaN and tie rules across lanes and blocks, and the same bits for any
thread count."""

import pytest
import torch

import lucid

SHAPES_DIMS = [((70001,), None), ((3, 70001), 1), ((3, 70001), 0), ((300, 2051), 0), ((300, 2051), 1),
               ((5, 600, 1100), 1), ((5, 600, 1100), (1, 2)), ((2, 40000, 3), 1), ((7, 33), 0),
               # tall columns: more row tiles than the cap, so tiles grow taller
               ((2000, 4100), 0), ((5000, 1030), 0)]


def _pair(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g, dtype=dtype) * 3 + 1
    return lucid.from_dlpack(t.clone()), t


def _torch(x):
    return torch.from_dlpack(x) if x.numel() else torch.tensor(x.tolist())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
def test_moments_match_torch(shape, dim, dtype, threads):
    lx, tx = _pair(shape, dtype)
    ref = tx.double()
    args = () if dim is None else (dim,)
    tol = dict(rtol=1e-5, atol=1e-4) if dtype == torch.float32 else dict(rtol=1e-12, atol=1e-9)
    for name in ["sum", "mean", "var", "std"]:
        got = _torch(getattr(lucid, name)(lx, *args))
        want = getattr(torch, name)(ref, *args).to(dtype)
        torch.testing.assert_close(got, want, **tol, msg=name)
    for p in [1, 2]:
        got = _torch(lucid.norm(lx, p, dim))
        want = torch.linalg.vector_norm(ref, p, dim).to(dtype)
        torch.testing.assert_close(got, want, **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,dim", [s for s in SHAPES_DIMS if not isinstance(s[1], tuple)])
def test_extremum_match_torch(shape, dim, dtype, threads):
    lx, tx = _pair(shape, dtype, 1)
    for name in ["max", "min", "argmax", "argmin", "amax"]:
        if dim is None:
            got, want = getattr(lucid, name)(lx), getattr(torch, name)(tx)
        else:
            got, want = getattr(lucid, name)(lx, dim), getattr(torch, name)(tx, dim)
        if name in ("max", "min") and dim is not None:
            assert torch.equal(_torch(got[0]), want[0]) and torch.equal(_torch(got[1]), want[1]), name
        else:
            assert torch.equal(_torch(got), want), name


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_extremum_ties_and_nans_across_blocks(dtype, threads):
    t = torch.zeros(3, 50000, dtype=dtype)
    t[0, [5, 17, 20000, 40000]] = 7       # ties in different lanes and blocks: first wins
    t[1, [3, 30001]] = float("nan")       # first NaN wins, over a larger value
    t[1, 2] = 100
    t[2, 49999] = float("nan")            # NaN in the scalar tail
    lx = lucid.from_dlpack(t.clone())
    for name in ["argmax", "argmin"]:
        assert torch.equal(_torch(getattr(lucid, name)(lx, 1)), getattr(torch, name)(t, 1))
    v, i = lucid.max(lx, 1)
    tv, ti = torch.max(t, 1)
    assert torch.equal(_torch(i), ti)
    torch.testing.assert_close(_torch(v), tv, equal_nan=True)
    # along dim 0 (columns): the same rules down the rows
    c = t.t().contiguous()
    lc = lucid.from_dlpack(c.clone())
    assert torch.equal(_torch(lucid.argmax(lc, 0)), torch.argmax(c, 0))
    assert torch.equal(_torch(lucid.argmin(lc, 0)), torch.argmin(c, 0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_column_amax_amin_nans_and_tails(dtype, threads):
    # The values-only column walk (amax/amin): a NaN anywhere down a column wins,
    # in whole vectors, in the tail columns and in every row tile.
    g = torch.Generator().manual_seed(3)
    t = torch.randn(5000, 1037, generator=g, dtype=dtype)
    t[4999, 0] = float("nan")
    t[1, 5] = float("nan")
    t[2600, 1036] = float("nan")
    t[3, 1033] = float("nan")
    t[:, 9] = -float("inf")
    t[777, 10] = float("inf")
    lx = lucid.from_dlpack(t.clone())
    for name in ["amax", "amin"]:
        torch.testing.assert_close(_torch(getattr(lucid, name)(lx, 0)), getattr(torch, name)(t, 0),
                                   rtol=0, atol=0, equal_nan=True)


def test_same_bits_for_any_thread_count():
    before = lucid.get_num_threads()
    lx, _ = _pair((1 << 20) + 3, torch.float32, 5)
    lm, _ = _pair((700, 3001), torch.float32, 6)
    fns = [lambda: lucid.sum(lx), lambda: lucid.var(lx), lambda: lucid.sum(lm, 0), lambda: lucid.std(lm, 1),
           lambda: lucid.norm(lm), lambda: lucid.softmax(lm, 1), lambda: lucid.cumsum(lx, 0),
           lambda: lucid.argmax(lm, 0)]
    try:
        results = []
        for n in [1, 2, 3]:
            lucid.set_num_threads(n)
            results.append([_torch(f()).clone() for f in fns])
        for r in results[1:]:
            for a, b in zip(results[0], r):
                assert torch.equal(a, b)
    finally:
        lucid.set_num_threads(before)


@pytest.mark.parametrize("shape,dim", [((64, 1000), -1), ((64, 1000), 0), ((300, 37), 1), ((3, 5, 700), 1),
                                       ((2, 70, 3000), 1), ((5,), 0)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_float32(shape, dim, log, threads):
    lx, tx = _pair(shape, torch.float32, 2)
    tx = tx * 8
    lx = lucid.from_dlpack(tx.clone())
    name = "log_softmax" if log else "softmax"
    got = _torch(getattr(lucid, name)(lx, dim))
    want = getattr(torch, name)(tx.double(), dim).float()
    torch.testing.assert_close(got, want, rtol=2e-6, atol=2e-6 if not log else 1e-5)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_float32_special_values(log, dim):
    t = torch.randn(6, 40)
    t[1] = float("-inf")
    t[2, 7] = float("nan")
    t[3, 5] = float("-inf")
    t[4, 9] = -200.0
    t[:, 3] = float("-inf")
    name = "log_softmax" if log else "softmax"
    got = _torch(getattr(lucid, name)(lucid.from_dlpack(t.clone()), dim))
    want = getattr(torch, name)(t, dim)
    torch.testing.assert_close(got, want, rtol=2e-6, atol=2e-6, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,dim", [((300000,), 0), ((2, 300000), 1), ((300, 2051), 0), ((3, 40, 5), 1)])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scans_match_torch(shape, dim, op, dtype, threads):
    lx, tx = _pair(shape, dtype, 3)
    if op == "cumprod":
        tx = 1 + tx / 1000
        lx = lucid.from_dlpack(tx.clone())
    got = _torch(getattr(lucid, op)(lx, dim))
    want = getattr(torch, op)(tx.double(), dim).to(dtype)
    torch.testing.assert_close(got, want, rtol=1e-5 if dtype == torch.float32 else 1e-10, atol=1e-3)
