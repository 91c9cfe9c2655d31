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


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int8", "bool"])
def test_sort_of_rows_shared_by_threads(dtype, threads, device):
    """Rows too long and too few to go one per thread (the CPU's radix sort then shares
    each row's passes out): ties, NaN, both zeros and infinities, both directions, and
    int64 values of a narrow and of the full range (passes skipped, and every pass)."""
    cases = [_data(dtype, (1, 200_003)), _data(dtype, (2, 70_001), seed=3)]
    if dtype == "int64":
        g = torch.Generator().manual_seed(5)
        cases.append(torch.randint(-2 ** 62, 2 ** 62, (1, 100_000), generator=g))
    for t in cases:
        for descending in (False, True):
            tv, ti = torch.sort(t.to(tdev(device)), descending=descending, stable=True)
            lv, li = lucid.sort(to_lucid(t, device), descending=descending, stable=True)
            _same(lv, tv)
            _same(li, ti)


@pytest.mark.parametrize("n", [9, 3000, 100_000])
def test_sorted_values_are_the_inputs_own(n, threads, device):
    """sort's and topk's values come with the sort (decoded from its keys, not gathered):
    still the input's bits, -0.0 and 0.0 in their stable order (they compare equal), as
    torch's; a differentiable input's values carry the gradient."""
    t = torch.tensor([0.0, -0.0, 1.0, -0.0, float("nan"), 0.0, -1.0, -0.0, 0.0] * (n // 9 + 1))[:n]
    k = n // 9 + 5  # (past the -1.0s into the zeros)
    for descending in (False, True):
        tv, _ = torch.sort(t.to(tdev(device)), descending=descending, stable=True)
        lv, _ = lucid.sort(to_lucid(t, device), descending=descending)
        assert to_torch(lv.cpu()).signbit().tolist() == tv.cpu().signbit().tolist()
        lv, _ = lucid.topk(to_lucid(t, device), k, largest=descending)
        assert to_torch(lv.cpu()).signbit().tolist() == tv.cpu()[:k].signbit().tolist()
    x = to_lucid(t[:4], device).requires_grad_()  # (no NaN: its gradient would be NaN)
    v, i = lucid.sort(x)
    (v * lucid.arange(4.0, device=device)).sum().backward()
    want = torch.zeros(4)
    want[to_torch(i.cpu())] = torch.arange(4.0)
    assert to_torch(x.grad.cpu()).tolist() == want.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int8", "bool"])
def test_sort_and_topk_of_each_row_length(dtype, device):
    """Row lengths either side of the GPU's path boundaries (the segmented sort below 512;
    one block per row up to 4096, in blocks of 1024, 2048 and 4096 keys; beyond, the radix
    sort, and topk's selection for k up to 4096): positions and values of the stable sort
    and topk's first k, with ties, NaN, both zeros, in both directions."""
    for shape in ((3, 511), (5, 512), (4, 1024), (3, 1025), (2, 2049), (2, 4096), (2, 4097), (1, 9000)):
        t = _data(dtype, shape)
        x = to_lucid(t, device)
        for descending in (False, True):
            tv, ti = torch.sort(t, descending=descending, stable=True)
            lv, li = lucid.sort(x, descending=descending)
            _same(lv, tv)
            _same(li, ti)
            for k in sorted({1, 100, shape[1] // 2, shape[1] - 1, min(4096, shape[1]), min(4097, shape[1])}):
                lv, li = lucid.topk(x, k, largest=descending)
                _same(li, ti[:, :k])
                _same(lv, tv[:, :k])


def test_sort_of_one_row_of_64_bit_keys_in_few_bits(device):
    """One long row of 64-bit keys sorts only the bits in which its keys differ: a narrow
    range, one value (no bit differs), and values that differ only in their low bit."""
    g = torch.Generator().manual_seed(6)
    cases = [torch.randint(0, 1000, (50_000,), generator=g), torch.full((50_000,), -7),
             torch.randint(0, 2, (50_000,), generator=g) + 2 ** 40,
             torch.randint(-3, 3, (50_000,), generator=g).double() * 2 ** -30 + 1]
    for t in cases:
        for descending in (False, True):
            tv, ti = torch.sort(t, descending=descending, stable=True)
            lv, li = lucid.sort(to_lucid(t, device), descending=descending)
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


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int8", "uint8", "bool"])
def test_topk_is_the_stable_sorts_first_k(dtype, threads, device):
    """topk's positions are the first k of the stable sort (ties in position order) where
    the CPU selects them without sorting (k a small part of the row): rows one per task,
    one long row shared by threads, along another dim; where it partitions each row (k up
    to a quarter of it, half of a short one); NaN, infinities and both zeros."""
    for shape, k, dim in (((3, 5000), 7, -1), ((1, 200_003), 100, -1), ((5000, 3), 2, 0), ((2, 70_001), 1, 1),
                          ((40, 64), 32, -1), ((30, 700), 175, 1), ((600, 5), 150, 0)):
        t = _data(dtype, shape)
        for largest in (False, True):
            ti = torch.sort(t, dim=dim, descending=largest, stable=True).indices.narrow(dim, 0, k)
            lv, li = lucid.topk(to_lucid(t, device), k, dim, largest=largest)
            _same(li, ti)
            _same(lv, t.gather(dim, ti))


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
    """The lower median, its position (the stable sort's, as torch's on the CPU: torch's CUDA
    median may name another of equal values), NaN rows as torch."""
    t = _data(dtype, (5, 8), seed=4)
    if dtype != "int64":
        t[1] = float("nan")  # an all-NaN row
    x = to_lucid(t, device)
    tf, lf = getattr(torch, fn), getattr(lucid, fn)
    for dim, keepdim in ((1, False), (0, True), (-1, True)):
        tv, ti = tf(t, dim, keepdim)
        lv, li = lf(x, dim, keepdim)
        _same(lv, tv)
        if fn == "nanmedian" and dtype != "int64" and dim != 0:
            # the all-NaN row's position is left open (torch's is whichever NaN its selection meets)
            keep = torch.ones(li.shape, dtype=torch.bool)
            keep[1] = False
            _same(li[lucid.tensor(keep.tolist(), device=device)], ti[keep])
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


# ---- searching, unique, counting ---------------------------------------------------------

@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_and_bucketize_match_torch(right, device):
    g = torch.Generator().manual_seed(7)
    seq = torch.randint(-4, 5, (13,), generator=g).double().sort().values / 2
    vals = torch.tensor([[-3.0, -0.0, 0.0, 1.5, 2.0], [float("nan"), float("inf"), 0.5, -1.0, 9.0]])
    rows = torch.randint(-4, 5, (2, 6), generator=g).float().sort().values
    td = lambda t: t.to(tdev(device))  # noqa: E731
    # (NaN values go last; NaN among the boundaries is torch's undefined case)
    cases = [(seq, vals), (rows, vals.float()), (seq.long(), torch.tensor([0, 3, -7])),
             (seq.float(), torch.tensor([1, 2])),  # promoted: float boundaries, int values
             (torch.zeros(0), torch.tensor([1.0]))]
    for s, v in cases:
        _same(lucid.searchsorted(to_lucid(s, device), to_lucid(v, device), right=right),
              torch.searchsorted(td(s), td(v), right=right))
    _same(lucid.searchsorted(to_lucid(seq, device), 1.25, side="right" if right else "left"),
          torch.searchsorted(td(seq), 1.25, side="right" if right else "left"))
    _same(lucid.searchsorted(to_lucid(seq, device), to_lucid(vals, device), out_int32=True, right=right),
          torch.searchsorted(td(seq), td(vals), out_int32=True, right=right))
    unsorted = torch.tensor([3.0, 1.0, 2.0])
    sorter = unsorted.argsort()
    _same(lucid.searchsorted(to_lucid(unsorted, device), to_lucid(torch.tensor([2.5]), device),
                             sorter=to_lucid(sorter, device), right=right),
          torch.searchsorted(td(unsorted), td(torch.tensor([2.5])), sorter=td(sorter), right=right))
    _same(lucid.bucketize(to_lucid(vals, device), to_lucid(seq, device), right=right),
          torch.bucketize(td(vals), td(seq), right=right))
    with pytest.raises(RuntimeError, match="boundaries tensor should be 1 dimension or the first N-1"):
        lucid.searchsorted(to_lucid(rows, device), lucid.zeros(3, 1, device=device))
    with pytest.raises(RuntimeError, match="side can only be 'left' or 'right'"):
        lucid.searchsorted(to_lucid(seq, device), 1.0, side="middle")


def test_isin_matches_torch(device):
    e = torch.tensor([[1.0, 2.0, float("nan")], [4.0, -0.0, 7.0]])
    t = torch.tensor([7.0, 0.0, float("nan"), 1.0])
    td = lambda x: x.to(tdev(device))  # noqa: E731
    for invert in (False, True):
        _same(lucid.isin(to_lucid(e, device), to_lucid(t, device), invert=invert),
              torch.isin(td(e), td(t), invert=invert))
    _same(lucid.isin(to_lucid(e, device), 2.0), torch.isin(td(e), 2.0))
    _same(lucid.isin(to_lucid(e, device), lucid.zeros(0, device=device)), torch.isin(td(e), td(torch.zeros(0))))
    _same(lucid.isin(to_lucid(torch.arange(6), device), to_lucid(torch.tensor([5, 1]), device)),
          torch.isin(td(torch.arange(6)), td(torch.tensor([5, 1]))))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_unique_matches_torch(dtype, device):
    t = _data(dtype, (4, 6), seed=8)
    if dtype == "float32":
        t = t.nan_to_num(nan=9.0)  # (torch's NaNs: each its own value on one device, merged on another)
    x = to_lucid(t, device)
    td = t.to(tdev(device))
    for inv in (False, True):
        for counts in (False, True):
            got = lucid.unique(x, return_inverse=inv, return_counts=counts)
            want = torch.unique(td, return_inverse=inv, return_counts=counts)
            for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                _same(a, b)
            for dim in (0, 1):
                got = lucid.unique(x, dim=dim, return_inverse=inv, return_counts=counts)
                want = torch.unique(td, dim=dim, return_inverse=inv, return_counts=counts)
                for a, b in zip(got if isinstance(got, tuple) else (got,),
                                want if isinstance(want, tuple) else (want,)):
                    _same(a, b)
    run = to_lucid(torch.tensor([1, 1, 2, 2, 3, 1, 1, 2]), device)
    for a, b in zip(run.unique_consecutive(return_inverse=True, return_counts=True),
                    torch.tensor([1, 1, 2, 2, 3, 1, 1, 2]).to(tdev(device)).unique_consecutive(
                        return_inverse=True, return_counts=True)):
        _same(a, b)
    _same(lucid.unique(lucid.zeros(0, device=device)), torch.unique(torch.zeros(0, device=tdev(device))))


def test_bincount_and_histc_match_torch(device):
    td = lambda x: x.to(tdev(device))  # noqa: E731
    x = torch.tensor([0, 1, 1, 4, 1])
    w = torch.tensor([0.5, 1.0, 2.0, 3.0, 0.25])
    _same(lucid.bincount(to_lucid(x, device)), torch.bincount(td(x)))
    _same(lucid.bincount(to_lucid(x, device), minlength=8), torch.bincount(td(x), minlength=8))
    _same(lucid.bincount(to_lucid(x, device), to_lucid(w, device)), torch.bincount(td(x), td(w)))
    _same(to_lucid(x, device).bincount(to_lucid(w.double(), device)), td(x).bincount(td(w.double())))
    _same(lucid.bincount(to_lucid(torch.zeros(0, dtype=torch.long), device)),
          torch.bincount(td(torch.zeros(0, dtype=torch.long))))
    for bad, err, msg in ((torch.tensor([-1, 2]), RuntimeError, "non-negative integral"),
                          (torch.tensor([[1]]), RuntimeError, "non-negative integral"),
                          (torch.tensor([1.5]), NotImplementedError, "not implemented for 'Float'")):
        with pytest.raises(err, match=msg):
            lucid.bincount(to_lucid(bad, device))
    with pytest.raises(RuntimeError, match="weights should be 1-d and have the same length as input"):
        lucid.bincount(to_lucid(x, device), lucid.ones(3, device=device))
    h = torch.tensor([1.0, 2.0, 1.0, 2.5, 4.0, float("nan"), -1.0])
    for kw in (dict(bins=4, min=0, max=3), dict(bins=7, min=-1, max=4)):
        _same(lucid.histc(to_lucid(h, device), **kw), torch.histc(td(h), **kw))
    _same(lucid.histc(to_lucid(h[:5], device), 4), torch.histc(td(h[:5]), 4))  # the data's range
    with pytest.raises(RuntimeError, match="is not finite"):  # ... which a NaN leaves undefined
        lucid.histc(to_lucid(h, device), 4)
    _same(lucid.histc(lucid.tensor([2.0, 2.0], device=device), 3), torch.histc(td(torch.tensor([2.0, 2.0])), 3))
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        lucid.histc(to_lucid(h, device), 2, min=3, max=1)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        lucid.histc(to_lucid(x, device), 3)


def test_nansum_and_nanmean_match_torch(device):
    t = torch.tensor([[1.0, float("nan"), 2.5], [float("nan"), float("nan"), float("nan")]])
    x, td = to_lucid(t, device), t.to(tdev(device))
    for dim, keepdim in ((None, False), (1, False), (0, True)):
        kw = {} if dim is None else dict(dim=dim, keepdim=keepdim)
        _same(lucid.nansum(x, **kw), torch.nansum(td, **kw))
        _same(lucid.nanmean(x, **kw), torch.nanmean(td, **kw))
    _same(x.nansum(), td.nansum())
    _same(lucid.nansum(lucid.tensor([1, 2], device=device)), torch.nansum(td.new_tensor([1, 2]).long()))


def test_out_arguments_are_filled_as_torchs(device):
    t = torch.tensor([[3.0, 1.0, 2.0], [0.5, 0.25, 9.0]])
    x, td = to_lucid(t, device), t.to(tdev(device))
    v, i = lucid.empty(0, device=device), lucid.empty(0, dtype=lucid.int64, device=device)
    r = lucid.sort(x, 1, out=(v, i))
    assert r.values is v and r.indices is i
    _same(v, torch.sort(td, 1).values)
    _same(i, torch.sort(td, 1).indices)
    v, i = lucid.empty(0, device=device), lucid.empty(0, dtype=lucid.int64, device=device)
    lucid.topk(x, 2, out=(v, i))
    _same(v, torch.topk(td, 2).values)
    o = lucid.empty(0, dtype=lucid.int64, device=device)
    assert lucid.searchsorted(x[0].sort().values, x, out=o) is o
    _same(o, torch.searchsorted(td[0].sort().values, td))
    m = lucid.empty(0, device=device)
    assert lucid.median(x, out=m) is m
    _same(m, torch.median(td))


def test_histogram_matches_torch(device):
    x = torch.tensor([1.0, 2.0, 1.0, 4.0, 2.5, float("nan"), -3.0])
    w = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    lx, lw = to_lucid(x, device), to_lucid(w, device)
    # torch's histogram is CPU-only: its results on the CPU are the reference for both devices
    cases = [dict(bins=4, range=(0.0, 4.0)), dict(bins=3, range=(0.0, 3.0), weight=True, density=True),
             dict(bins=torch.tensor([0.0, 1.5, 3.0, 4.0])), dict(bins=torch.tensor([-5.0, 0.0, 2.0]), weight=True)]
    for kw in cases:
        tkw = {k: (w if k == "weight" else v) for k, v in kw.items()}
        lkw = {k: (lw if k == "weight" else to_lucid(v, device) if isinstance(v, torch.Tensor) else v)
               for k, v in kw.items()}
        lh, le = lucid.histogram(lx, **lkw)
        th, te = torch.histogram(x, **tkw)
        torch.testing.assert_close(to_torch(lh.cpu()), th, rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(to_torch(le.cpu()), te, rtol=1e-6, atol=1e-6)
    finite = x[:5]
    for bins in (4, 1):
        lh, le = to_lucid(finite, device).histogram(bins)
        th, te = torch.histogram(finite, bins)
        torch.testing.assert_close(to_torch(lh.cpu()), th)
        torch.testing.assert_close(to_torch(le.cpu()), te)
    th, te = torch.histogram(torch.tensor([2.0, 2.0]), 2)  # one value: widened by 0.5 each side
    lh, le = lucid.histogram(lucid.tensor([2.0, 2.0], device=device), 2)
    torch.testing.assert_close(to_torch(lh.cpu()), th)
    torch.testing.assert_close(to_torch(le.cpu()), te)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        lucid.histogram(lucid.tensor([1, 2], device=device), 3)


def test_histogramdd_matches_torch(device):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(40, 3, generator=g)
    x[4, 1] = float("nan")
    w = torch.rand(40, generator=g)
    lx, lw = to_lucid(x, device), to_lucid(w, device)
    edges = [torch.tensor([-2.0, -0.5, 0.0, 2.0]), torch.tensor([-1.0, 1.0]), torch.tensor([-3.0, 0.0, 0.5, 1.0, 3.0])]
    # torch's histogramdd is CPU-only: its results are the reference for both devices
    cases = [dict(bins=3, range=[-2.0, 2.0, -1.0, 1.0, -3.0, 3.0]), dict(bins=[2, 3, 4], weight=True, density=True,
             range=[-2.0, 2.0, -2.0, 2.0, -2.0, 2.0]), dict(bins=edges), dict(bins=edges, weight=True, density=True)]
    for kw in cases:
        tkw = {k: (w if k == "weight" else v) for k, v in kw.items()}
        lkw = {k: (lw if k == "weight" else [to_lucid(e, device) for e in v] if k == "bins" and isinstance(v, list)
                   and isinstance(v[0], torch.Tensor) else v) for k, v in kw.items()}
        lh, le = lucid.histogramdd(lx, **lkw)
        th, te = torch.histogramdd(x, **tkw)
        torch.testing.assert_close(to_torch(lh.cpu()), th, rtol=1e-5, atol=1e-6)
        assert len(le) == len(te)
        for a, b in zip(le, te):
            torch.testing.assert_close(to_torch(a.cpu()), b)
    finite = x[5:, :2]
    lh, le = lucid.histogramdd(to_lucid(finite, device), [3, 2])  # ranges from the data
    th, te = torch.histogramdd(finite, [3, 2])
    torch.testing.assert_close(to_torch(lh.cpu()), th)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        lucid.histogramdd(lx[:, 0], 3)
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        lucid.histogramdd(lx, 0)
