"""sort, argsort, msort, topk, kthvalue, median and nanmedian (python/lucid/_sort.py on
the engine's SortRows) against torch on each device: values, positions (stable: equal
values keep their order), NaN as the largest value, -0.0 equal to 0.0, every real dtype,
gradients, and torch's errors."""

import pytest
import torch

import lucid
from conftest import to_lucid, to_torch
from test_elementwise import _torch_device as tdev

REAL_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _data(dtype, shape, seed=0):
    """Values with ties (a small range), and for floats NaN, inf and both zeros."""
    g = torch.Generator().manual_seed(seed)
    if dtype == "bool":
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype == "uint8":
        return torch.randint(0, 6, shape, generator=g).to(torch.uint8)
    t = torch.randint(-5, 6, shape, generator=g).to(getattr(torch, dtype))
    if t.is_floating_point():
        t = t / 2
        flat = t.view(-1)
        for i, v in zip(range(0, flat.numel(), 7), [float("nan"), float("inf"), -0.0, float("-inf"), 0.0]):
            flat[i] = v
    return t


def _same(lt, tt):
    assert lt.shape == tuple(tt.shape) and str(lt.dtype).split(".")[-1] == str(tt.dtype).split(".")[-1]
    torch.testing.assert_close(to_torch(lt.cpu()), tt.cpu(), rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", REAL_DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort_matches_torch(dtype, descending, device):
    t = _data(dtype, (4, 9, 6))
    x = to_lucid(t, device)
    for dim in (-1, 0, 1):
        tv, ti = torch.sort(t.to(tdev(device)), dim=dim, descending=descending, stable=True)
        lv, li = lucid.sort(x, dim=dim, descending=descending, stable=True)
        assert lv.device.type == device
        _same(lv, tv)
        _same(li, ti)
        _same(x.argsort(dim, descending=descending, stable=True), ti)
    _same(lucid.msort(x), torch.msort(t.to(tdev(device))))
    # the method, named results
    r = x.sort(descending=descending)
    assert r.values is r[0] and r.indices is r[1]


def test_sort_of_a_long_row_and_of_many_short_ones(device):
    # (the GPU's segmented sort takes other paths for long and short segments)
    for shape in ((3, 50_000), (20_000, 3)):
        t = torch.randn(*shape, generator=torch.Generator().manual_seed(1)).round(decimals=1)
        tv, ti = torch.sort(t.to(tdev(device)), stable=True)
        lv, li = lucid.sort(to_lucid(t, device), stable=True)
        _same(lv, tv)
        _same(li, ti)


def test_sort_edge_shapes_and_errors(device):
    for shape in ((0,), (3, 0), (0, 4), ()):
        t = torch.rand(shape)
        tv, ti = torch.sort(t.to(tdev(device)))
        lv, li = lucid.sort(to_lucid(t, device))
        _same(lv, tv)
        _same(li, ti)
    x = lucid.zeros(2, 3, device=device)
    with pytest.raises(IndexError, match="Dimension out of range"):
        lucid.sort(x, 2)
    with pytest.raises(TypeError, match="complex"):
        lucid.sort(lucid.zeros(3, dtype=lucid.complex64, device=device))


@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_torch(largest, device):
    # distinct values: torch leaves the order of tied entries open
    t = torch.randperm(60, generator=torch.Generator().manual_seed(2)).float().reshape(5, 12) / 4
    x = to_lucid(t, device)
    for k, dim in ((3, -1), (12, 1), (0, 1), (2, 0), (5, 0)):
        tv, ti = torch.topk(t.to(tdev(device)), k, dim, largest=largest)
        lv, li = lucid.topk(x, k, dim, largest=largest)
        _same(lv, tv)
        _same(li, ti)
    _same(x.topk(4).values, t.to(tdev(device)).topk(4).values)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        lucid.topk(x, 13)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(-1)
    # NaN is the largest value
    n = lucid.tensor([1.0, float("nan"), 3.0], device=device)
    assert n.topk(1).indices.tolist() == [1] and n.topk(1, largest=False).values.tolist() == [1.0]


def test_kthvalue_matches_torch(device):
    t = torch.randperm(40, generator=torch.Generator().manual_seed(3)).double().reshape(4, 10)
    x = to_lucid(t, device)
    for k, dim, keepdim in ((1, -1, False), (10, 1, True), (3, 0, False), (4, 0, True)):
        tv, ti = torch.kthvalue(t.to(tdev(device)), k, dim, keepdim)
        lv, li = lucid.kthvalue(x, k, dim, keepdim)
        _same(lv, tv)
        _same(li, ti)
    for k in (0, 11):
        with pytest.raises(RuntimeError, match="kthvalue\\(\\): selected number k out of range for dimension 1"):
            x.kthvalue(k)
    s = torch.kthvalue(torch.tensor(2.5), 1)
    _same(lucid.kthvalue(lucid.tensor(2.5, device=device), 1).values, s.values.to(tdev(device)))


@pytest.mark.parametrize("fn", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_median_matches_torch(fn, dtype, device):
    """The lower median, its position (torch's: the stable sort's), NaN rows as torch."""
    t = _data(dtype, (5, 8), seed=4)
    if dtype != "int64":
        t[1] = float("nan")  # an all-NaN row
    x = to_lucid(t, device)
    tf, lf = getattr(torch, fn), getattr(lucid, fn)
    for dim, keepdim in ((1, False), (0, True), (-1, True)):
        tv, ti = tf(t.to(tdev(device)), dim, keepdim)
        lv, li = lf(x, dim, keepdim)
        _same(lv, tv)
        if fn == "nanmedian" and dtype != "int64" and dim != 0:
            # the all-NaN row's position is left open (torch's is whichever NaN its selection meets)
            keep = torch.ones(li.shape, dtype=torch.bool)
            keep[1] = False
            _same(li[lucid.tensor(keep.tolist(), device=device)], ti.cpu()[keep])
        else:
            _same(li, ti)
    _same(lf(x), tf(t.to(tdev(device))))
    _same(getattr(x, fn)(), tf(t.to(tdev(device))))
    _same(lf(lucid.zeros(0, device=device)), tf(torch.zeros(0, device=tdev(device))))
    with pytest.raises(IndexError, match=f"{fn}\\(\\): Expected reduction dim 1 to have non-zero size"):
        lf(lucid.zeros(2, 0, device=device), 1)


@pytest.mark.parametrize("op", [
    lambda m, x: m.sort(x, 1, descending=True).values,
    lambda m, x: m.topk(x, 3, 0).values,
    lambda m, x: m.kthvalue(x, 2, 1).values,
    lambda m, x: m.median(x, 0).values,
    lambda m, x: m.msort(x),
])
def test_gradients_flow_to_the_selected_entries(op, device):
    t = torch.randperm(24, generator=torch.Generator().manual_seed(5)).double().reshape(4, 6)
    tx = t.clone().to(tdev(device)).requires_grad_()
    lx = to_lucid(t, device).requires_grad_()
    w = torch.randn(*op(torch, t).shape, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    (op(torch, tx) * w.to(tdev(device))).sum().backward()
    (op(lucid, lx) * to_lucid(w, device)).sum().backward()
    _same(lx.grad, tx.grad)
    assert lucid.autograd.gradcheck(lambda a: op(lucid, a), (lx.detach().requires_grad_(),))
