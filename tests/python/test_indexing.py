"""Basic indexing (ints, negative ints, slices with steps, None, Ellipsis, 0-d integer
tensors) and __setitem__ with scalars and tensors, against PyTorch. Advanced indexing
(tensor or list indices) is a later issue and not tested here."""

import pytest
import torch

import lucid
from conftest import assert_same, shares_storage, to_lucid, default_device


def _bases(dtype=torch.int64, device=None):
    device = device or default_device()
    tb = torch.arange(24).reshape(2, 3, 4).to(dtype)
    return to_lucid(tb, device), tb


KEYS = [
    1, -1, -2, 0,
    (1, 2), (1, -1, -2), (0, 0, 0), (-2, -3, -4),
    slice(None), slice(1, None), slice(None, 1), slice(None, None, 2), slice(0, 2, 3),
    (slice(None), slice(None, None, 2)), (Ellipsis, slice(1, None, 2)),
    (slice(None), slice(-2, None)), (slice(None), slice(-10, 2)), (slice(None), slice(1, -1)),
    (slice(None), slice(1, 3), slice(None, None, 3)), (slice(-1, None), slice(None), -1),
    None, (slice(None), None, 1), (Ellipsis, None), (None, Ellipsis, None, 0),
    Ellipsis, (Ellipsis, 0), (0, Ellipsis, 1), (0, Ellipsis), (1, Ellipsis, 2, 3)[:-1],
    (1, None, slice(None, None, 3), Ellipsis, slice(2, None)),
    (None, None, 0, None), (slice(None), slice(None), slice(None)),
    (0, slice(None), None, slice(None, None, 2)),
    (slice(5, None),), (slice(None), slice(5, None)), (slice(None), slice(2, 1)),
    (slice(None), slice(3, 3)), (slice(0, 100, 7),), (slice(None, None, 100),),
]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_getitem(key, device):
    lb, tb = _bases(device=device)
    lv, tv = lb[key], tb[key]
    assert lv.device.type == device
    assert_same(lv, tv, offset=True)
    assert shares_storage(lv, lb)


@pytest.mark.parametrize("key", [(1, 2), (slice(None), 1), (Ellipsis, slice(None, None, 2)),
                                 (None, 0, slice(1, None))], ids=repr)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.complex64, torch.bool,
                                   torch.uint8, torch.float64])
def test_getitem_dtypes(key, dtype, device):
    lb, tb = _bases(dtype, device)
    assert_same(lb[key], tb[key], offset=True)


def test_getitem_of_views(device):
    lb, tb = _bases(device=device)
    for f in [lambda t: t.transpose(0, 2)[1, ::2], lambda t: t[:, ::2][..., 1::2][1],
              lambda t: t.permute(1, 2, 0)[-1][None, 2:, :1],
              lambda t: t[:, :1].expand(2, 3, 4)[1, 2]]:
        assert_same(f(lb), f(tb), offset=True)


def test_chained_indexing_and_0d():
    lb, tb = _bases()
    assert_same(lb[0][1][2], tb[0][1][2], offset=True)
    assert_same(lb[1, 2, 3][None], tb[1, 2, 3][None])
    assert_same(lb[1, 2, 3][...], tb[1, 2, 3][...])
    assert_same(lb[(0, 1)], tb[(0, 1)], offset=True)


def test_getitem_returns_new_object():
    lb, tb = _bases()
    v = lb[...]
    assert v is not lb and shares_storage(v, lb)
    v2 = lb[:]
    assert v2 is not lb and shares_storage(v2, lb)


# (a uint8 tensor index is a deprecated mask in torch: not a basic index)
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8"])
def test_zero_dim_integer_tensor_index(dtype):
    lb, tb = _bases()
    li, ti = lucid.tensor(1, dtype=getattr(lucid, dtype)), torch.tensor(1, dtype=getattr(torch, dtype))
    assert_same(lb[li], tb[ti], offset=True)
    assert_same(lb[0, li], tb[0, ti], offset=True)


def test_float_tensor_index_raises():
    lb, tb = _bases()
    with pytest.raises(IndexError) as te:
        tb[torch.tensor(1.0)]
    with pytest.raises(type(te.value), match="long, int, byte or bool"):
        lb[lucid.tensor(1.0)]


@pytest.mark.parametrize("key", [2, -3, (0, 3), (0, 0, 4), (1, -4), (0, slice(None), 4),
                                 (Ellipsis, -5), (slice(5, None), 7)], ids=repr)
def test_out_of_range_index(key):
    lb, tb = _bases()
    with pytest.raises(IndexError) as te:
        tb[key]
    # same exception type and the same message (which dimension, which size)
    with pytest.raises(type(te.value)) as le:
        lb[key]
    assert str(le.value) == str(te.value)


def test_too_many_indices():
    lb, tb = _bases()
    with pytest.raises(IndexError) as te:
        tb[0, 0, 0, 0]
    with pytest.raises(type(te.value), match="too many indices"):
        lb[0, 0, 0, 0]
    with pytest.raises(IndexError, match="too many indices"):
        lb[1, 2, 3][0]


def test_bad_slice_steps():
    lb, tb = _bases()
    for key in [slice(None, None, -1), slice(None, None, 0), (0, slice(3, 0, -1))]:
        with pytest.raises(ValueError) as te:
            tb[key]
        with pytest.raises(type(te.value), match="step"):
            lb[key]


def test_bad_index_types():
    lb, tb = _bases()
    with pytest.raises(IndexError) as te:
        tb[1.5]
    with pytest.raises(type(te.value), match="only integers"):
        lb[1.5]


# ---- __setitem__ ----------------------------------------------------------------------
SET_CASES = [
    (0, 5), (-1, -1), ((slice(None), 1), 9), ((Ellipsis, slice(None, None, 2)), 0),
    ((0, 0, 0), 2.7), ((1, slice(1, None)), True), (Ellipsis, 3), ((None, 0), 4),
    ((slice(None), None, 2, slice(1, 3)), -8), ((slice(None, None, 2),), 1.5),
    ((1, -1, -1), 100), ((slice(2, 1),), 5),
]


@pytest.mark.parametrize("key,value", SET_CASES, ids=repr)
@pytest.mark.parametrize("dtype", [torch.int64, torch.float32, torch.float16, torch.complex64,
                                   torch.bool])
def test_setitem_scalar(key, value, dtype, device):
    lb, tb = _bases(dtype, device)
    lb[key] = value
    tb[key] = value
    assert_same(lb, tb)


TENSOR_SET_CASES = [
    (0, torch.tensor(9)),
    ((Ellipsis, slice(None, None, 2)), torch.tensor([7, 8])),
    ((1, slice(1, None)), torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8]])),
    (0, torch.tensor([1.5, 2.5, 3.5, 4.5])),
    ((slice(None), 0), torch.tensor([[True], [False]])),
    ((0, slice(None), 1), torch.arange(3, dtype=torch.int16)),
    (Ellipsis, torch.arange(4)),
    ((slice(None), slice(None, None, 2), 3), torch.tensor([[-1, -2], [-3, -4]])),
]


@pytest.mark.parametrize("key,value", TENSOR_SET_CASES, ids=repr)
@pytest.mark.parametrize("dtype", [torch.int64, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("value_device", ["same", "cpu"])
def test_setitem_tensor(key, value, dtype, device, value_device):
    lb, tb = _bases(dtype, device)
    lb[key] = to_lucid(value, device if value_device == "same" else "cpu")  # a CPU value copies across
    tb[key] = value
    assert lb.device.type == device
    assert_same(lb, tb)


def test_setitem_from_non_contiguous_tensor(device):
    lb, tb = _bases(torch.float32, device)
    tsrc = torch.arange(100.0, 112.0).reshape(4, 3).t()
    lsrc = to_lucid(torch.arange(100.0, 112.0).reshape(4, 3), device).t()
    lb[1] = lsrc
    tb[1] = tsrc
    assert_same(lb, tb)


def test_setitem_through_view_reaches_base(device):
    lb, tb = _bases(device=device)
    lv, tv = lb[:, 1], tb[:, 1]
    lv[0] = 100
    tv[0] = 100
    assert_same(lb, tb)
    lb.transpose(0, 2)[1] = -5
    tb.transpose(0, 2)[1] = -5
    assert_same(lb, tb)


def test_setitem_nan_and_complex(device):
    lb, tb = _bases(torch.float32, device)
    lb[1, 2] = float("nan")
    tb[1, 2] = float("nan")
    assert_same(lb, tb)
    lc, tc = _bases(torch.complex64, device)
    lc[0, 0, 1] = 2 - 3j
    tc[0, 0, 1] = 2 - 3j
    assert_same(lc, tc)


def test_setitem_shape_mismatch(device):
    lb, tb = _bases(device=device)
    with pytest.raises(RuntimeError) as te:
        tb[0] = torch.tensor([1, 2, 3])
    with pytest.raises(type(te.value), match="3"):
        lb[0] = lucid.tensor([1, 2, 3], device=device)


def test_setitem_out_of_range(device):
    lb, tb = _bases(device=device)
    with pytest.raises(IndexError) as te:
        tb[2] = 0
    with pytest.raises(type(te.value), match="out of bounds"):
        lb[2] = 0


def test_integer_keys_select_as_torch():
    """t[i] and t[i, j] (the fast path of plain ints): views, negative positions, torch's errors."""
    x = torch.arange(24.0).reshape(2, 3, 4)
    t = lucid.tensor(x.numpy())
    for key in (1, -1, (1, 2), (-2, -1, 3), (0, 0, -4)):
        got = t[key]
        assert got.tolist() == x[key].tolist()
    assert shares_storage(t[1], t) and shares_storage(t[0, 2], t)  # views, no copy
    assert t[()] is not t and t[()].shape == t.shape
    for key, msg in ((2, "index 2 is out of bounds for dimension 0 with size 2"),
                     ((0, 3), "index 3 is out of bounds for dimension 1 with size 3"),
                     ((0, 0, 0, 0), "too many indices for tensor of dimension 3")):
        with pytest.raises(IndexError, match=msg):
            t[key]
        with pytest.raises(IndexError, match=msg):
            x[key]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 0"):
        lucid.tensor(1.0)[0]
