"""The GPU kernels of the scans and the row statistics at the sizes that pick their
paths (backend/cuda/scan.cu, reduce_rows.cu): cumsum/cumprod over short rows, block
rows, few long rows cut into chunks, and columns; prod, var/std, logsumexp and norms of
rows long enough to be split over blocks; complex and int64 running totals; nonzero's
count; conj. Against torch's CUDA and lucid's CPU, and the same bits on every run."""

import pytest
import torch

import lucid
from conftest import to_lucid

pytestmark = pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")


def _pair(shape, dtype, seed, lo=-1.0, hi=1.0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.complex64:
        t = torch.randn(shape, generator=g, dtype=torch.complex64)
    elif dtype == torch.int64:
        t = torch.randint(-5, 6, shape, generator=g)
    else:
        t = (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
    return lucid.from_dlpack(t.cuda()), t.cuda()


def _torch(lt):
    return torch.from_dlpack(lt).clone()


def _close(got, want, tol):
    torch.testing.assert_close(got, want, rtol=tol, atol=tol, equal_nan=True)


# (shape, dim): one short row per thread, block rows (one tile, several tiles), few long
# rows in chunks (ragged last chunk), columns (inner > 1), one-element dims.
SCAN_CASES = [((1000, 7), 1), ((37, 33), 1), ((5, 5000), 1), ((300007,), 0), ((3, 200000), 1),
              ((300, 2051), 0), ((3, 40, 5), 1), ((4, 1, 6), 1), ((1,), 0), ((2, 3), 0)]


@pytest.mark.parametrize("shape,dim", SCAN_CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_float_scans_match_torch_cuda(shape, dim, dtype, op):
    lx, tx = _pair(shape, dtype, 1, 0.999, 1.001) if op == "cumprod" else _pair(shape, dtype, 1)
    got = _torch(getattr(lucid, op)(lx, dim))
    assert got.dtype == dtype
    want = getattr(torch, op)(tx.double(), dim).to(dtype)
    _close(got, want, 1e-5 if dtype == torch.float32 else 1e-10)
    cpu = getattr(lucid, op)(lx.cpu(), dim)
    _close(got.cpu(), torch.tensor(cpu.tolist(), dtype=dtype).reshape(shape), 1e-5 if dtype == torch.float32 else 1e-10)


@pytest.mark.parametrize("shape,dim", SCAN_CASES)
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_int64_scans_are_exact_and_wrap(shape, dim, op):
    lx, tx = _pair(shape, torch.int64, 2)
    if op == "cumsum":  # big values: the sums wrap past 2^63 as torch's
        tx = tx * (1 << 60)
        lx = lucid.from_dlpack(tx.clone())
    got = _torch(getattr(lucid, op)(lx, dim))
    assert torch.equal(got, getattr(torch, op)(tx, dim))
    assert got.cpu().tolist() == getattr(lucid, op)(lx.cpu(), dim).tolist()


@pytest.mark.parametrize("dtype", ["int32", "bool", "uint8", "float16", "bfloat16"])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scans_in_place_of_other_dtypes(dtype, op):
    g = torch.Generator().manual_seed(3)
    t = torch.randint(0, 3, (6, 70), generator=g).to(getattr(torch, dtype)).cuda()
    lt = lucid.from_dlpack(t.clone())
    for dim in (0, 1):
        got, want = getattr(lucid, op)(lt, dim), getattr(torch, op)(t, dim)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        tol = 0 if dtype in ("int32", "bool", "uint8") else 1e-2
        _close(_torch(got).double(), want.double(), tol)


@pytest.mark.parametrize("shape,dim", [((4, 300), 1), ((2, 140000), 1), ((30, 5), 0)])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_complex_scans(shape, dim, op):
    lx, tx = _pair(shape, torch.complex64, 4)
    if op == "cumprod":  # unit-modulus steps keep the products finite
        tx = tx / tx.abs()
        lx = lucid.from_dlpack(tx.clone())
    got = _torch(getattr(lucid, op)(lx, dim))
    want = getattr(torch, op)(tx.to(torch.complex128), dim).to(torch.complex64)
    _close(got, want, 2e-3 if shape[dim] > 1000 else 1e-4)


def test_scans_are_deterministic():
    lx, _ = _pair((2, 500000), torch.float32, 5)
    for op in (lucid.cumsum, lucid.cumprod):
        a, b = _torch(op(lx, 1)), _torch(op(lx, 1))
        assert torch.equal(a, b)


def test_scan_backward_on_the_gpu():
    for shape, dim in [((3, 200), 1), ((40, 3), 0)]:
        tx = torch.rand(shape, dtype=torch.float64, device="cuda") + 0.5
        tx[1, 2] = 0.0  # cumprod's zero path
        for op in ("cumsum", "cumprod"):
            ta = tx.clone().requires_grad_()
            la = to_lucid(tx.cpu(), "gpu").requires_grad_()
            w = torch.rand(shape, dtype=torch.float64, device="cuda")
            (getattr(torch, op)(ta, dim) * w).sum().backward()
            (getattr(lucid, op)(la, dim) * to_lucid(w.cpu(), "gpu")).sum().backward()
            assert la.grad.device.type == "gpu"
            _close(torch.tensor(la.grad.tolist(), dtype=torch.float64), ta.grad.cpu(), 1e-9)


# ---- prod and the row statistics ------------------------------------------------------------
# (shape, dims): many short rows, few long rows (split over blocks), a reduction over
# non-adjacent dims (rows copied first), all of it.
STAT_CASES = [((500, 6), 1), ((3, 100000), 1), ((2, 3000, 3), (0, 2)), ((7, 9, 11), None)]


def _dims(dims):
    return () if dims is None else (dims,)


@pytest.mark.parametrize("shape,dims", [((500, 6), 1), ((3, 100000), 1), ((2, 3000, 3), 1), ((7, 9, 11), None)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64, torch.int64])
def test_prod_matches_torch_cuda(shape, dims, dtype):
    lx, tx = _pair(shape, dtype, 6, 0.9995, 1.0005) if dtype != torch.complex64 else _pair(shape, dtype, 6)
    if dtype == torch.complex64:
        tx = tx / tx.abs()
        lx = lucid.from_dlpack(tx.clone())
    got = _torch(lucid.prod(lx, *_dims(dims)))
    want = torch.prod(tx, *_dims(dims))
    if dtype == torch.int64:
        assert torch.equal(got, want)  # wraps as torch's
    else:
        _close(got, want, 1e-3 if dtype == torch.complex64 else 1e-4)


@pytest.mark.parametrize("shape,dims", STAT_CASES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64])
@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_match_torch_cuda(shape, dims, dtype, op):
    lx, tx = _pair(shape, dtype, 7)
    for correction in (0, 1):
        got = _torch(getattr(lucid, op)(lx, *_dims(dims), correction=correction))
        want = getattr(torch, op)(tx.to(torch.complex128 if dtype == torch.complex64 else torch.float64),
                                  *_dims(dims), correction=correction).to(got.dtype)
        tol = {torch.float16: 2e-3, torch.bfloat16: 1e-2}.get(dtype, 1e-5 if dtype != torch.float64 else 1e-10)
        _close(got.double(), want.double(), tol)


@pytest.mark.parametrize("shape,dims", STAT_CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
def test_logsumexp_matches_torch_cuda(shape, dims, dtype):
    lx, tx = _pair(shape, dtype, 8, -20.0, 20.0)
    d = tuple(range(len(shape))) if dims is None else dims
    got = _torch(lucid.logsumexp(lx, d))
    want = torch.logsumexp(tx.double(), d)
    _close(got.double(), want, 1e-10 if dtype == torch.float64 else 1e-5)


def test_logsumexp_special_rows():
    nan, inf = float("nan"), float("inf")
    rows = [[1.0, nan, 3.0], [inf, 1.0, -inf], [-inf, -inf, -inf], [inf, nan, 0.0], [2.0, inf, inf]]
    t = torch.tensor(rows, dtype=torch.float64).repeat(1, 3000).cuda()  # long rows: split blocks too
    for x in (t, t[:, :3]):
        got = _torch(lucid.logsumexp(lucid.from_dlpack(x.contiguous()), 1))
        _close(got, torch.logsumexp(x, 1), 1e-12)


@pytest.mark.parametrize("shape,dims", STAT_CASES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64, torch.complex64])
@pytest.mark.parametrize("p", [0, 1, 2, 3.5, -1.5, float("inf"), float("-inf")])
def test_norms_match_torch_cuda(shape, dims, dtype, p):
    lx, tx = _pair(shape, dtype, 9)
    got = _torch(lucid.norm(lx, p, dims))
    ref = tx.to(torch.complex128 if dtype == torch.complex64 else torch.float64)
    want = torch.linalg.vector_norm(ref, p, dims).to(got.dtype)  # (a float16 count of 100000 is inf)
    tol = 2e-3 if dtype == torch.float16 else 1e-5 if dtype != torch.float64 else 1e-10
    _close(got.double(), want.double(), tol)


def test_norm_of_nan_and_inf_rows():
    nan, inf = float("nan"), float("inf")
    t = torch.tensor([[1.0, nan, -3.0], [inf, 1.0, -2.0], [0.0, 0.0, 0.0]], dtype=torch.float64).cuda()
    for p in [0, 1, 2, 3.5, float("inf"), float("-inf")]:
        _close(_torch(lucid.norm(lucid.from_dlpack(t.clone()), p, 1)), torch.linalg.vector_norm(t, p, 1), 1e-12)


def test_row_statistics_are_deterministic():
    lx, _ = _pair((3, 1 << 20), torch.float64, 10)
    fns = [lambda: lucid.prod(lx, 1), lambda: lucid.logsumexp(lx, 1), lambda: lucid.norm(lx, 3, 1),
           lambda: lucid.var(lx.t(), 0), lambda: lucid.nonzero(lx > 0.9)]
    for f in fns:
        assert torch.equal(_torch(f()), _torch(f()))


def test_row_statistics_backward_on_the_gpu():
    tx = torch.rand(3, 50, dtype=torch.float64, device="cuda") + 0.5
    for name, fn in [("prod", lambda m, x: m.prod(x, 1)), ("logsumexp", lambda m, x: m.logsumexp(x, 1)),
                     ("norm3", lambda m, x: m.norm(x, 3, 1)), ("var", lambda m, x: m.var(x.t(), 0))]:
        ta = tx.clone().requires_grad_()
        la = to_lucid(tx.cpu(), "gpu").requires_grad_()
        fn(torch, ta).sum().backward()
        fn(lucid, la).sum().backward()
        _close(torch.tensor(la.grad.tolist(), dtype=torch.float64), ta.grad.cpu(), 1e-9)
        small = to_lucid(tx[:2, :4].cpu(), "gpu").requires_grad_()
        assert lucid.autograd.gradcheck(lambda x: fn(lucid, x), (small,)), name


# ---- nonzero's count, conj ------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 4095, 4097, 1 << 20])
def test_nonzero_counts(n):
    g = torch.Generator().manual_seed(11)
    t = (torch.rand(n, generator=g) < 0.3).cuda()
    lt = lucid.from_dlpack(t.clone())
    assert lt.nonzero().shape[0] == int(t.sum())
    assert lucid.masked_select(lucid.from_dlpack(t.float()), lt).shape[0] == int(t.sum())


def test_conj_through_vdot_and_complex_gradients():
    g = torch.Generator().manual_seed(12)
    ta, tb = (torch.randn(1000, generator=g, dtype=torch.complex64).cuda() for _ in range(2))
    la, lb = lucid.from_dlpack(ta.clone()), lucid.from_dlpack(tb.clone())
    got = lucid.vdot(la, lb).item()
    want = torch.vdot(ta, tb).item()
    assert abs(got - want) <= 1e-3 * abs(want)
    # complex gradients conjugate (ops::conj on the GPU)
    data_a, data_b = [1 + 2j, -0.5 + 0.25j], [0.3 - 1j, 2 + 0.5j]
    grads = []
    for m, dev in ((lucid, "gpu"), (torch, "cuda")):
        a = m.tensor(data_a, dtype=m.complex64, device=dev, requires_grad=True)
        b = m.tensor(data_b, dtype=m.complex64, device=dev, requires_grad=True)
        y = (a * b - b) * (1 - 2j)
        y.backward(m.tensor([1 + 1j, 0.5 - 2j], dtype=m.complex64, device=dev))
        grads.append((a.grad.tolist(), b.grad.tolist()))
    for l, t in zip(*grads):
        assert all(abs(complex(x) - complex(y)) < 1e-5 for x, y in zip(l, t)), (l, t)
