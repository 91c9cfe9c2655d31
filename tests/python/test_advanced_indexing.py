"""Advanced indexing (integer tensors, lists, bool masks, mixed with basic parts),
index_put_, nonzero, masked_select and argwhere, against PyTorch: values, shapes,
dtypes, errors, and gradients (against torch and lucid.autograd.gradcheck). nonzero,
argwhere, masked_select and mask reads also run on the GPU (against torch's CUDA)."""

import warnings

import pytest
import torch

import lucid
from conftest import DTYPE_NAMES, assert_close, raises_by_sync, to_lucid, to_torch


def conv(key):
    """The lucid form of a key written with torch tensors (lists stay lists)."""
    if isinstance(key, tuple):
        return tuple(conv(k) for k in key)
    if isinstance(key, torch.Tensor):
        return to_lucid(key)
    return key


def same(lt, tt):
    """Same shape, dtype and values (advanced results are fresh contiguous tensors)."""
    assert tuple(lt.shape) == tuple(tt.shape), (lt.shape, tt.shape)
    assert str(lt.dtype).split(".")[-1] == str(tt.dtype).split(".")[-1]
    assert lt.tolist() == tt.tolist()


def base(dtype="float32"):
    t = torch.arange(120).reshape(4, 5, 6) % 17 - 5
    t = t.to(getattr(torch, dtype))
    return to_lucid(t), t


T = torch.tensor
MASK2 = (torch.arange(20).reshape(4, 5) % 3) == 0
MASK3 = (torch.arange(120).reshape(4, 5, 6) % 7) < 3

READ_KEYS = [
    [0, 2],
    [[0, 2], [1, 3]],  # a list holding lists is a tuple of indices (PyTorch's rule)
    [[[0, 1]]],
    T([0, -1, 2]),
    T([[0, 1], [2, 3]]),
    (T([0, 1]), T([1, 2])),
    (T([0, 1]), slice(None), T([1, 2])),  # separated: the index dims go first
    (slice(None), T([0, 1]), T([1, 2])),  # adjacent: they stay in place
    (slice(None), T([[0], [1]]), T([1, 2, 3])),  # broadcast index tensors
    (T([[0, 1]]), slice(None), 0),
    (0, slice(None), [1, 2]),  # ints are selects (PyTorch, not NumPy)
    (1, [0, 1], slice(None)),
    (T(1), [0, 1]),
    (slice(1, 3), [0, 2]),
    (slice(None), slice(None), [5, -6]),
    (None, [0, 1], None, [1, 2]),
    (Ellipsis, [0, 1]),
    ([0, 1], Ellipsis, [1, 2]),
    ([0, 1], [1, 2], [2, 3]),
    (T([1, 2], dtype=torch.int32), slice(None), T([0, 5], dtype=torch.int32)),
    MASK3,
    MASK2,
    T([True, False, True, True]),
    [True, False, True, False],
    (slice(None), T([True, False, True, False, True])),
    (MASK2, slice(1, 3)),
    (Ellipsis, T([True, False, True, True, False, False])),
    (slice(None), MASK2[0], [0, 2, 3, 1][:2]),
    True, False, (Ellipsis, True), T(True), T(False), (0, True, slice(1, 2)),
    [], T([], dtype=torch.long), (slice(None), []), T([False] * 4),
    ([[0]], [[1], [2]]),
    ((0, 1),), ((0, 1), (2, 3)), [(1, 2)],  # tuples inside a key are index sequences
]


@pytest.mark.parametrize("key", READ_KEYS, ids=repr)
def test_read(key):
    lb, tb = base()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecation of list-as-tuple keys
        expected = tb[key]
    same(lb[conv(key)], expected)


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("key", [T([3, 0, 3]), (slice(None), [1, 1], T([[0], [5]])), MASK3], ids=repr)
def test_read_dtypes(dtype, key):
    lb, tb = base(dtype)
    same(lb[conv(key)], tb[key])


def test_read_non_contiguous_source_and_index():
    tb = torch.arange(60.).reshape(5, 12)[:, ::2].t()  # (6, 5), strided
    lb = to_lucid(torch.arange(60.).reshape(5, 12))[:, ::2].t()
    ti = (torch.arange(10).reshape(2, 5) % 5)[:, ::2]  # strided index
    li = to_lucid(torch.arange(10).reshape(2, 5) % 5)[:, ::2]
    assert not li.is_contiguous()
    same(lb[li], tb[ti])
    same(lb[:, li], tb[:, ti])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64", "complex128"])
def test_read_whole_rows(dtype):
    # one 1-d index on the first dim of a tensor with rows of 64+ elements copies whole
    # rows: negative and repeated indices, int32 and bool indices, a strided source,
    # an output large enough to be streamed, out-of-bounds errors, the gradient
    g = torch.Generator().manual_seed(0)
    t = (torch.randn(300, 5, 40, generator=g) * 4).to(getattr(torch, dtype))
    lt = to_lucid(t)
    for idx in [torch.tensor([0, -1, 5, 5, 299, -300]), torch.tensor([2, 7], dtype=torch.int32),
                torch.arange(300) % 3 == 0, torch.tensor([], dtype=torch.int64)]:
        same(lt[to_lucid(idx)], t[idx])
    strided = t.transpose(1, 2)[::2]
    same(to_lucid(t).transpose(1, 2)[::2][to_lucid(torch.tensor([1, 0, -2]))], strided[torch.tensor([1, 0, -2])])
    big = torch.randn(1100, 2048, generator=g)  # 8.6 MiB selected: streamed stores
    rows = torch.randint(-1100, 1100, (1100,), generator=g)
    same(to_lucid(big)[to_lucid(rows)], big[rows])
    with raises_by_sync(IndexError, match="out of bounds"):
        lt[to_lucid(torch.tensor([300]))]
    if dtype == "float64":
        x = t.clone().requires_grad_()
        lx = to_lucid(t).requires_grad_()
        idx = torch.tensor([3, 3, -1])
        x[idx].sum().backward()
        lx[to_lucid(idx)].sum().backward()
        same(lx.grad, x.grad)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_uint8_mask():
    lb, tb = base()
    m = (torch.arange(20).reshape(4, 5) % 2).to(torch.uint8)
    same(lb[to_lucid(m)], tb[m])
    v = -torch.arange(6.0)
    tb[m] = v
    lb[to_lucid(m)] = to_lucid(v)
    same(lb, tb)


def test_advanced_read_is_a_copy():
    lb, _ = base()
    r = lb[[0, 1]]
    r[0, 0, 0] = 100.0
    assert lb[0, 0, 0].item() != 100.0


def test_zero_dim_tensors():
    tt = torch.tensor(5.0)
    lt = to_lucid(tt)
    for key in [None, True, False, (Ellipsis, None), T(True), T(False), (None, True)]:
        same(lt[conv(key)], tt[key])
    with pytest.raises(IndexError, match="too many indices"):
        lt[[0]]


def test_empty_tensor_indexing():
    tt = torch.ones(0, 3)
    lt = to_lucid(tt)
    idx = torch.zeros(0, dtype=torch.long)
    same(lt[to_lucid(idx)], tt[idx])
    same(lt[:, [0, 2]], tt[:, [0, 2]])
    with raises_by_sync(IndexError):
        lt[[0]]


# ---- writing ------------------------------------------------------------------------------
WRITE_CASES = [
    ([0, 2], 7.0),
    ([0, 2], torch.arange(30.).reshape(5, 6)),
    ([0, 2], torch.arange(6.)),
    ((slice(None), [1, 3]), torch.arange(2.).reshape(2, 1)),
    ((T([0, 1]), slice(None), T([1, 2])), torch.arange(10.).reshape(2, 5)),
    ((slice(None), T([[0], [1]]), T([1, 2, 3])), -1.5),
    (MASK3, 0.0),
    (MASK3, torch.arange(float(int(MASK3.sum())))),
    (MASK2, torch.arange(6.) + 100),
    ((Ellipsis, [0, -1]), torch.arange(40.).reshape(1, 1, 4, 5, 2)),  # leading 1s dropped
    ((slice(1, 3), [0, 2]), torch.arange(12.).reshape(2, 6)),  # through a view (no graph)
    (True, torch.zeros(4, 5, 6)),
    ([], 3.0),
    (T([False] * 4), 3.0),
    ((0, [1, 1, 1], [2, 2, 2]), 9.0),  # duplicates writing one value
    ([True, False, True, False], 1),
]


@pytest.mark.parametrize("key,value", WRITE_CASES, ids=repr)
def test_write(key, value):
    lb, tb = base()
    lv = to_lucid(value) if isinstance(value, torch.Tensor) else value
    tb[key] = value
    lb[conv(key)] = lv
    same(lb, tb)


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_write_dtypes(dtype):
    lb, tb = base(dtype)
    val = torch.ones(6).to(getattr(torch, dtype))
    tb[[1, 3]] = val
    lb[[1, 3]] = to_lucid(val)
    tb[MASK3] = 0
    lb[to_lucid(MASK3)] = 0
    same(lb, tb)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_methods(accumulate):
    lb, tb = base()
    idx = (T([0, 0, 3, 0]), T([1, 1, 2, 4]))
    vals = torch.arange(24.).reshape(4, 6)
    if not accumulate:
        idx = (T([0, 2, 3, 0]), T([1, 1, 2, 4]))
    lidx, lvals = conv(idx), to_lucid(vals)
    same(lb.index_put(lidx, lvals, accumulate), tb.index_put(idx, vals, accumulate))
    same(lb, tb)  # out of place left self alone
    r = lb.index_put_(lidx, lvals, accumulate=accumulate)
    assert r is lb
    tb.index_put_(idx, vals, accumulate=accumulate)
    same(lb, tb)


def test_accumulate_duplicates_and_broadcast():
    for dtype in ["float32", "float64", "int64", "int32", "float16", "bfloat16", "complex64", "bool", "uint8"]:
        lb, tb = base(dtype)
        idx = (T([0, 0, 0, 3]), T([[1], [1]]))  # result (2, 4, 6); values broadcast from (6,)
        vals = torch.ones(6).to(getattr(torch, dtype))
        tb.index_put_(idx, vals, accumulate=True)
        lb.index_put_(conv(idx), to_lucid(vals), accumulate=True)
        same(lb, tb)


def test_write_value_dtype():
    lb, tb = base()
    with pytest.raises(RuntimeError) as te:
        tb[[0]] = torch.tensor(1)
    with pytest.raises(type(te.value), match="dtypes match"):
        lb[[0]] = lucid.tensor(1)
    # a bool mask with a 0-d value is masked_fill_ in PyTorch: the value is cast
    tb[MASK3] = torch.tensor(2.5, dtype=torch.float64)
    lb[to_lucid(MASK3)] = lucid.tensor(2.5, dtype=lucid.float64)
    same(lb, tb)


def test_write_value_aliasing_self():
    lb, tb = base()
    tb[[1, 0]] = tb[[0, 1]].clone()
    lb[[1, 0]] = lb[0:2]  # the value is a view of the tensor written
    same(lb, tb)
    li = lucid.tensor([2, 1, 0])
    li[li] = lucid.tensor([7, 8, 9])  # the index is the tensor written
    ti = torch.tensor([2, 1, 0])
    ti[ti.clone()] = torch.tensor([7, 8, 9])
    same(li, ti)


# ---- nonzero, argwhere, masked_select ---------------------------------------------------------
def _cuda(t, device):
    return t.cuda() if device == "gpu" else t


def _on_device(lt, device):
    assert lt.device.type == device
    return lt


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_nonzero_dtypes(dtype, device):
    t = _cuda((torch.arange(24).reshape(2, 3, 4) % 5 == 0).to(getattr(torch, dtype)), device)
    same(_on_device(lucid.nonzero(to_lucid(t.cpu(), device)), device), torch.nonzero(t))
    same(to_lucid(t.cpu(), device).argwhere(), torch.argwhere(t))


@pytest.mark.parametrize("t", [torch.tensor(3.0), torch.tensor(0.0), torch.zeros(0, 3), torch.zeros(2, 0),
                               torch.tensor([0.0, -0.0, float("nan"), 1.0]),
                               torch.tensor([0j, 1j, 1 + 0j]), torch.zeros(3, 4), torch.ones(2, 1, 3)])
def test_nonzero_shapes(t, device):
    lt, t = to_lucid(t, device), _cuda(t, device)
    same(lt.nonzero(), t.nonzero())
    same(lucid.argwhere(lt), torch.argwhere(t))
    lo, to = lucid.nonzero(lt, as_tuple=True), t.nonzero(as_tuple=True)
    assert len(lo) == len(to)
    for a, b in zip(lo, to):
        same(a, b)


@pytest.mark.parametrize("tshape,mshape", [((3, 4), (3, 4)), ((3, 1), (2, 3, 4)), ((4,), (3, 4)), ((), ()),
                                           ((), (3,)), ((2, 3), ()), ((0, 3), (0, 3))])
def test_masked_select(tshape, mshape, device):
    t = torch.randn(tshape)
    m = torch.rand(mshape) > 0.4
    lt, lm, t, m = to_lucid(t, device), to_lucid(m, device), _cuda(t, device), _cuda(m, device)
    lo = _on_device(lucid.masked_select(lt, lm), device)
    same(lo, torch.masked_select(t, m))
    same(lt.masked_select(lm), t.masked_select(m))
    if mshape == tshape:  # a bool mask read is nonzero's too
        same(_on_device(lt[lm], device), t[m])


@pytest.mark.parametrize("device", ["gpu"] if lucid.gpu.is_available() else [])
@pytest.mark.parametrize("shape", [(5000,), (3, 70001), (2, 3, 4, 5, 6), (4097,), (1, 1)])
@pytest.mark.parametrize("density", [0.0, 0.01, 0.5, 1.0])
def test_nonzero_sizes_on_the_gpu(shape, density, device):
    # tiles of 4096 flags: several tiles, ragged ends, all-false and all-true
    g = torch.Generator().manual_seed(7)
    t = torch.rand(shape, generator=g) < density
    lt = to_lucid(t, device)
    same(_on_device(lt.nonzero(), device), t.cuda().nonzero())
    same(lucid.nonzero(to_lucid(t.float(), device)), t.nonzero())  # the cast to bool on the GPU first


# ---- errors --------------------------------------------------------------------------------
ERROR_KEYS = [
    [5], [-5], (slice(None), [7]), (0, 0, [6]), T([0, 4]), (T([1]), T([9])), [[0], [0], [0], [0]],
    T([1.0]), T([1], dtype=torch.int16), T([1j]), T([True, False, True]), (MASK2[:3],),
    (slice(None), torch.ones(5, 5, dtype=torch.bool)), (T([[0, 1]]), T([0, 1, 2])), (MASK3, 0),
]


@pytest.mark.parametrize("key", ERROR_KEYS, ids=repr)
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_read_errors(key):
    lb, tb = base()
    with pytest.raises(IndexError):
        tb[key]
    with raises_by_sync(IndexError):
        lb[conv(key)]
    with raises_by_sync(IndexError):
        lb[conv(key)] = 1.0


def test_error_messages():
    lb, _ = base()
    with raises_by_sync(IndexError, match="index 5 is out of bounds for dimension 0 with size 4"):
        lb[[5]]
    with raises_by_sync(IndexError, match="index -7 is out of bounds for dimension 2 with size 6"):
        lb[:, :, [-7]]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        lb[lucid.tensor([0.0])]
    with pytest.raises(IndexError, match="shape of the mask"):
        lb[lucid.tensor([True, False])]
    with pytest.raises(IndexError, match="could not be broadcast"):
        lb[lucid.tensor([0, 1]), lucid.tensor([0, 1, 2])]


@pytest.mark.usefixtures("cpu_default")  # the GPU writes the good indices (Note [Bad indices in writes on the GPU])
def test_failed_write_leaves_tensor_unchanged():
    lb, tb = base()
    with pytest.raises(IndexError):
        lb[[0, 9]] = 100.0
    same(lb, tb)


def test_write_errors():
    lb, tb = base()
    with pytest.raises(RuntimeError) as te:
        tb[[0, 1]] = torch.ones(3)
    with pytest.raises(type(te.value), match="shape mismatch"):
        lb[[0, 1]] = lucid.ones(3)
    with pytest.raises(RuntimeError) as te:
        tb.index_put_((T([0]),), torch.ones(6, dtype=torch.float64))
    with pytest.raises(type(te.value), match="dtypes match"):
        lb.index_put_((lucid.tensor([0]),), lucid.ones(6, dtype=lucid.float64))
    with pytest.raises(RuntimeError):
        torch.masked_select(torch.ones(3), torch.ones(3, dtype=torch.uint8))
    with pytest.raises(RuntimeError, match="BoolTensor"):
        lucid.masked_select(lucid.ones(3), lucid.ones(3, dtype=lucid.uint8))
    with pytest.raises(TypeError):
        lb.index_put_([[0]], lucid.ones(6))
    same(lb, tb)


# ---- autograd --------------------------------------------------------------------------------
GRAD_KEYS = [
    T([0, 2, 0, 0]),
    (slice(None), T([[0], [1]]), T([1, 1, 3])),
    (T([0, 1]), slice(None), T([1, 2])),
    (1, [0, 0], slice(1, 4)),
    MASK3[:, :, :3].clone(),
    (slice(1, 3), [4, 4]),
    (None, Ellipsis, [2, -1]),
]


def _leaf_pair(shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g, dtype=torch.float64)
    # (lucid.tensor straight from the nested list: a fresh leaf, not a view of one)
    return lucid.tensor(t.tolist(), dtype=lucid.float64).requires_grad_(), t.clone().requires_grad_()


@pytest.mark.parametrize("key", GRAD_KEYS, ids=repr)
def test_read_backward_vs_torch(key):
    la, ta = _leaf_pair((4, 5, 6) if not (isinstance(key, torch.Tensor) and key.dtype == torch.bool) else (4, 5, 3))
    tout = ta[key]
    w = torch.randn(tout.shape, dtype=torch.float64)
    (tout * w).sum().backward()
    lout = la[conv(key)]
    assert lout.grad_fn.name() == "IndexBackward0"
    (lout * to_lucid(w)).sum().backward()
    assert_close(la.grad, ta.grad)


@pytest.mark.parametrize("key", GRAD_KEYS[:4] + GRAD_KEYS[5:], ids=repr)
def test_read_gradcheck(key):
    la, _ = _leaf_pair((3, 5, 4))
    key = conv(key if not isinstance(key, torch.Tensor) else T([0, 2, 0, -1]))
    assert lucid.autograd.gradcheck(lambda x: x[key], (la,))
    assert lucid.autograd.gradgradcheck(lambda x: x[key], (la,))


def test_setitem_on_non_leaf_backward_vs_torch():
    la, ta = _leaf_pair((4, 5))
    lv, tv = _leaf_pair((7,), seed=1)
    mask = torch.arange(20).reshape(4, 5) % 3 == 0
    tx = ta * 2.0
    tx[mask] = tv
    tx[T([3, 0]), T([4, 4])] = tv[:2] * 3.0
    lx = la * 2.0
    lx[to_lucid(mask)] = lv
    lx[lucid.tensor([3, 0]), lucid.tensor([4, 4])] = lv[:2] * 3.0
    assert lx.grad_fn.name() == "IndexPutBackward0"
    w = torch.randn(4, 5, dtype=torch.float64)
    (tx * w).sum().backward()
    (lx * to_lucid(w)).sum().backward()
    assert_close(lx.detach(), tx.detach())
    assert_close(la.grad, ta.grad)
    assert_close(lv.grad, tv.grad)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_gradcheck(accumulate):
    la, _ = _leaf_pair((4, 3))
    lv, _ = _leaf_pair((3, 3), seed=2)
    idx = (lucid.tensor([0, 0, 2]) if accumulate else lucid.tensor([0, 3, 2]),)
    fn = lambda x, v: x.index_put(idx, v, accumulate)  # noqa: E731
    assert lucid.autograd.gradcheck(fn, (la, lv))
    assert lucid.autograd.gradgradcheck(fn, (la, lv))
    lb, _ = _leaf_pair((3,), seed=3)  # values broadcast along the index result
    assert lucid.autograd.gradcheck(fn, (la, lb))


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_backward_vs_torch(accumulate):
    la, ta = _leaf_pair((4, 3))
    lv, tv = _leaf_pair((3,), seed=2)
    idx = (T([0, 0, 2]) if accumulate else T([1, 3, 2]), T([1, 1, 0]))
    tout = ta.index_put(idx, tv, accumulate)
    lout = la.index_put(conv(idx), lv, accumulate)
    w = torch.randn(4, 3, dtype=torch.float64)
    (tout * w).sum().backward()
    (lout * to_lucid(w)).sum().backward()
    assert_close(lout.detach(), tout.detach())
    assert_close(la.grad, ta.grad)
    assert_close(lv.grad, tv.grad)


@pytest.mark.parametrize("tshape,mshape", [((3, 4), (3, 4)), ((3, 1), (2, 3, 4)), ((), (3,))])
def test_masked_select_backward(tshape, mshape):
    la, ta = _leaf_pair(tshape)
    m = torch.rand(mshape, generator=torch.Generator().manual_seed(5)) > 0.4
    tout = torch.masked_select(ta, m)
    lout = lucid.masked_select(la, to_lucid(m))
    assert lout.grad_fn.name() == "MaskedSelectBackward0"
    w = torch.randn(tout.shape, dtype=torch.float64)
    (tout * w).sum().backward()
    (lout * to_lucid(w)).sum().backward()
    assert_close(la.grad, ta.grad)
    lm = to_lucid(m)
    assert lucid.autograd.gradcheck(lambda x: lucid.masked_select(x, lm), (la,))
    assert lucid.autograd.gradgradcheck(lambda x: lucid.masked_select(x, lm), (la,))


def test_inplace_rules():
    la, ta = _leaf_pair((4, 5))
    with pytest.raises(RuntimeError) as te:
        ta[[0]] = 1.0
    with pytest.raises(type(te.value), match="leaf Variable"):
        la[[0]] = 1.0
    with pytest.raises(RuntimeError) as te:
        ta[1:3, [0]] = 1.0
    with pytest.raises(type(te.value), match="leaf Variable"):
        la[1:3, [0]] = 1.0  # through a view of the leaf
    with lucid.no_grad():
        la[[0]] = 5.0  # allowed without grad mode
    assert la[0].tolist() == [5.0] * 5


@pytest.mark.usefixtures("cpu_default")  # x[[3, 3], ...]: the last write wins on the CPU only
def test_writes_into_graph_tensors_vs_torch():
    # x[:, idx] writes into x itself (`:` is no view); x[1:3, idx] and x[0] write
    # through views, which rewrite x's history (CopySlices).
    grads = []
    for M, conv_t in ((torch, lambda t: t), (lucid, to_lucid)):
        g = torch.Generator().manual_seed(7)
        a = conv_t(torch.randn(4, 5, dtype=torch.float64, generator=g)).requires_grad_()
        v = conv_t(torch.randn(2, 2, dtype=torch.float64, generator=g)).requires_grad_()
        w = conv_t(torch.randn(4, 5, dtype=torch.float64, generator=g))
        x = a * 2.0
        x[:, [4]] = 1.0
        x[1:3, [0, 2]] = v * v
        x[0] = 3.0
        x[x > 1.5] = 0.5
        x[[3, 3], [1, 1]] = v[0] * 2.0
        (x * w).sum().backward()
        grads.append((x.detach(), a.grad, v.grad))
    (tx, ta, tv), (lx, la, lv) = grads
    assert_close(lx, tx)
    assert_close(la, ta)
    assert_close(lv, tv)


def test_saved_index_version_check():
    la, _ = _leaf_pair((4,))
    idx = lucid.tensor([0, 1])
    y = la[idx]
    idx[0] = 3
    with pytest.raises(RuntimeError):
        y.sum().backward()


def test_no_grad_for_integer_results():
    la, _ = _leaf_pair((4,))
    assert not lucid.nonzero(la).requires_grad
    y = la[[1, 2]]
    assert y.requires_grad and y.grad_fn is not None
    with lucid.no_grad():
        assert la[[1, 2]].grad_fn is None


def test_write_grad_into_plain_tensor_and_augmented_assignment():
    lv, tv = _leaf_pair((2, 3))
    tz, lz = torch.zeros(4, 3, dtype=torch.float64), lucid.zeros(4, 3, dtype=lucid.float64)
    tz[[3, 1]] = tv
    lz[[3, 1]] = lv
    tz[[1, 0]] += 2.0 * tv  # x[idx] += v: a gather, an add and a write back
    lz[[1, 0]] += 2.0 * lv
    assert lz.grad_fn.name() == "IndexPutBackward0"
    w = torch.randn(4, 3, dtype=torch.float64)
    (tz * w).sum().backward()
    (lz * to_lucid(w)).sum().backward()
    assert_close(lz.detach(), tz.detach())
    assert_close(lv.grad, tv.grad)


def test_write_bumps_version_for_saved_tensors():
    la, _ = _leaf_pair((4,))
    x = la * 1.0
    y = x * x  # saves x
    x[[0]] = 0.0
    with pytest.raises(RuntimeError, match="version"):
        y.sum().backward()


def test_where_with_only_a_condition_is_nonzero_as_a_tuple():
    for values in ([0, 3, 0, 4], [[1, 0], [0, 1]], 5):
        want = torch.where(torch.tensor(values) > 0)
        got = lucid.where(lucid.tensor(values) > 0)
        assert isinstance(got, tuple) and [g.tolist() for g in got] == [w.tolist() for w in want]
    with pytest.raises(TypeError, match="condition"):
        lucid.where([1, 0])
