"""quantile, nanquantile, mode, cov and corrcoef (python/lucid/_stats.py) against torch
on each device: every interpolation, NaN rows, keepdim, weights, and torch's errors."""

import pytest
import torch

import lucid
from conftest import to_lucid, to_torch
from test_elementwise import _torch_device as tdev


def _same(got, want, tol=1e-12):
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    torch.testing.assert_close(to_torch(got.detach().cpu()), want.detach().cpu(), rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_quantile_matches_torch(fn, interpolation, device):
    g = torch.Generator().manual_seed(0)
    t = torch.randn(4, 7, generator=g, dtype=torch.float64)
    t[1, 3] = float("nan")
    t[2] = float("nan")
    x, td = to_lucid(t, device), t.to(tdev(device))
    qs = torch.tensor([0.0, 0.1, 0.5, 0.75, 1.0], dtype=torch.float64)
    tf, lf = getattr(torch, fn), getattr(lucid, fn)
    for q in (0.3, to_lucid(qs, device)):
        tq = q if isinstance(q, float) else qs.to(tdev(device))
        for dim, keepdim in ((None, False), (None, True), (1, False), (0, True), (-1, True)):
            _same(lf(x, q, dim, keepdim, interpolation=interpolation),
                  tf(td, tq, dim, keepdim, interpolation=interpolation))
    _same(getattr(x[0].float(), fn)(0.5), getattr(td[0].float(), fn)(0.5), 1e-6)
    with pytest.raises(RuntimeError, match="q values must be in the range \\[0, 1\\]"):
        lf(x, 1.5)
    with pytest.raises(RuntimeError, match="input tensor must be either float or double dtype"):
        lf(lucid.tensor([1, 2], device=device), 0.5)
    with pytest.raises(RuntimeError, match="input tensor must be non-empty"):
        lf(lucid.zeros(0, device=device), 0.5)


def test_quantile_gradient_matches_torch(device):
    t = torch.tensor([[3.0, 1.0, 4.0, 1.5, 9.0], [2.0, 7.0, 1.0, 8.0, 2.5]], dtype=torch.float64)
    tx = t.clone().to(tdev(device)).requires_grad_()
    lx = to_lucid(t, device).requires_grad_()
    torch.quantile(tx, torch.tensor([0.3, 0.8], dtype=torch.float64, device=tdev(device)), dim=1).sum().backward()
    lucid.quantile(lx, lucid.tensor([0.3, 0.8], dtype=lucid.float64, device=device), dim=1).sum().backward()
    _same(lx.grad, tx.grad)


def test_mode_matches_torch(device):
    t = torch.tensor([[1.0, 2.0, 2.0, 1.0, 3.0], [5.0, 5.0, 4.0, 4.0, 4.0], [7.0, 6.0, 7.0, 6.0, 6.0]])
    x, td = to_lucid(t, device), t.to(tdev(device))
    for dim, keepdim in ((-1, False), (1, True), (0, False)):
        lv, li = lucid.mode(x, dim, keepdim)
        tv, ti = torch.mode(td, dim, keepdim)
        _same(lv, tv)
        _same(li, ti)
    r = x[0].mode()
    assert r.values.item() == 1.0 and r.indices.item() == 3
    i = to_lucid(torch.tensor([3, 1, 1, 3, 2]), device)
    assert tuple(v.item() for v in lucid.mode(i)) == tuple(v.item() for v in torch.mode(torch.tensor([3, 1, 1, 3, 2])))


def test_cov_and_corrcoef_match_torch(device):
    g = torch.Generator().manual_seed(1)
    t = torch.randn(3, 6, generator=g, dtype=torch.float64)
    fw = torch.tensor([1, 2, 1, 3, 1, 1])
    aw = torch.tensor([0.5, 1.0, 2.0, 1.0, 0.25, 1.0], dtype=torch.float64)
    x, td = to_lucid(t, device), t.to(tdev(device))
    _same(lucid.cov(x), torch.cov(td))
    _same(x.cov(correction=0), td.cov(correction=0))
    _same(lucid.cov(x, fweights=to_lucid(fw, device)), torch.cov(td, fweights=fw.to(tdev(device))))
    _same(lucid.cov(x, aweights=to_lucid(aw, device)), torch.cov(td, aweights=aw.to(tdev(device))))
    _same(lucid.cov(x, fweights=to_lucid(fw, device), aweights=to_lucid(aw, device), correction=2),
          torch.cov(td, fweights=fw.to(tdev(device)), aweights=aw.to(tdev(device)), correction=2))
    _same(lucid.cov(x[0]), torch.cov(td[0]))
    _same(lucid.corrcoef(x), torch.corrcoef(td))
    _same(x[1].corrcoef(), td[1].corrcoef())
    _same(lucid.cov(to_lucid(torch.tensor([[1, 2, 4], [3, 1, 0]]), device)),
          torch.cov(torch.tensor([[1, 2, 4], [3, 1, 0]], device=tdev(device))), 1e-6)
    with pytest.raises(ValueError, match="expected input to have two or fewer dimensions"):
        lucid.cov(lucid.zeros(2, 2, 2, device=device))
    with pytest.raises(ValueError, match="expected fweights to have one dimension and 6 elements"):
        lucid.cov(x, fweights=lucid.tensor([1, 2], device=device))
    with pytest.warns(RuntimeWarning, match="degrees of freedom is <= 0"):
        lucid.cov(x[:, :1])


def test_special_functions_match_torch(device):
    t = torch.tensor([-2.5, -0.5, 0.0, 0.3, 1.0, 4.0], dtype=torch.float64)
    p = torch.tensor([0.0, 0.025, 0.5, 0.9, 1.0], dtype=torch.float64)
    x, td = to_lucid(t, device), t.to(tdev(device))
    for name in ("erf", "erfc", "exp2", "expm1", "expit", "sinc", "ndtr", "entr"):
        _same(getattr(lucid.special, name)(x), getattr(torch.special, name)(td), 1e-13)
    _same(lucid.special.ndtri(to_lucid(p, device)), torch.special.ndtri(p.to(tdev(device))), 1e-12)
    _same(lucid.special.erfinv(to_lucid(p, device)), torch.special.erfinv(p.to(tdev(device))), 1e-12)
    _same(lucid.special.logit(to_lucid(p, device), eps=0.1), torch.special.logit(p.to(tdev(device)), eps=0.1), 1e-13)
    _same(lucid.special.log1p(x.abs()), torch.special.log1p(td.abs()), 1e-13)
    _same(lucid.special.round(x * 1.37, decimals=1), torch.special.round(td * 1.37, decimals=1))
    y = to_lucid(torch.tensor([float("nan"), 1.0, 0.5, 2.0, 0.0, 3.0], dtype=torch.float64), device)
    ty = torch.tensor([float("nan"), 1.0, 0.5, 2.0, 0.0, 3.0], dtype=torch.float64, device=tdev(device))
    z = to_lucid(torch.tensor([0.0, 0.0, 2.0, -1.0, 3.0, 1.5], dtype=torch.float64), device)
    tz = torch.tensor([0.0, 0.0, 2.0, -1.0, 3.0, 1.5], dtype=torch.float64, device=tdev(device))
    _same(lucid.special.xlog1py(z, y), torch.special.xlog1py(tz, ty), 1e-13)
    _same(lucid.special.xlogy(z, y), torch.special.xlogy(tz, ty), 1e-13)
    m = to_lucid(torch.tensor([[1.0, 2.0], [3.0, 0.5]], dtype=torch.float64), device)
    tm = torch.tensor([[1.0, 2.0], [3.0, 0.5]], dtype=torch.float64, device=tdev(device))
    _same(lucid.special.logsumexp(m, 1), torch.special.logsumexp(tm, 1), 1e-13)
    _same(lucid.special.softmax(m, 0), torch.special.softmax(tm, 0), 1e-13)
    _same(lucid.special.log_softmax(m, 1), torch.special.log_softmax(tm, 1), 1e-13)


@pytest.mark.parametrize("fn", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_cummax_cummin_match_torch(fn, dtype, device):
    g = torch.Generator().manual_seed(5)
    t = torch.randint(-3, 4, (3, 11), generator=g)  # ties: the later position wins, as torch's
    t = t.to(getattr(torch, dtype)) if dtype != "bool" else t > 0
    if dtype == "float64":
        t[1, 4] = float("nan")  # NaN wins, then stays
    x, td = to_lucid(t, device), t.to(tdev(device))
    for dim in (1, 0, -1):
        lv, li = getattr(lucid, fn)(x, dim)
        tv, ti = getattr(torch, fn)(td, dim)
        _same(lv, tv, 0.0)
        _same(li, ti, 0.0)
    r = getattr(x, fn)(0)
    assert r.values is r[0]
    if dtype == "float64":
        lx = to_lucid(t.nan_to_num(0.5), device).requires_grad_()
        tx = t.nan_to_num(0.5).to(tdev(device)).requires_grad_()
        getattr(lucid, fn)(lx, 1).values.sum().backward()
        getattr(torch, fn)(tx, 1).values.sum().backward()
        _same(lx.grad, tx.grad, 0.0)


def test_logcumsumexp_matches_torch(device):
    t = torch.tensor([[0.5, -1.0, 800.0, 2.0, -float("inf")], [-float("inf")] * 5], dtype=torch.float64)
    x, td = to_lucid(t, device), t.to(tdev(device))
    for dim in (1, 0):
        _same(lucid.logcumsumexp(x, dim), torch.logcumsumexp(td, dim), 1e-12)
    s = torch.randn(4, 9, dtype=torch.float64, generator=torch.Generator().manual_seed(6))
    lx, tx = to_lucid(s, device).requires_grad_(), s.clone().to(tdev(device)).requires_grad_()
    lx.logcumsumexp(1).sum().backward()
    tx.logcumsumexp(1).sum().backward()
    _same(lx.grad, tx.grad, 1e-12)
