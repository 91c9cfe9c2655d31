"""tolist() and item() for every dtype, the Python protocols (__len__, __iter__,
__bool__, __int__, __float__, __index__, __complex__) and the metadata accessors
(size, stride, numel, element_size, nbytes, dim), against PyTorch, on every device
(on the GPU each read-out is a copy to the host)."""

import operator

import pytest
import torch

import lucid
from conftest import DTYPE_NAMES, _values_equal, dtype_name, to_lucid, default_device

VALUES = {
    "bool": [True, False],
    "uint8": [0, 1, 127, 255],
    "int8": [-128, -1, 0, 127],
    "int16": [-32768, -7, 0, 32767],
    "int32": [-2 ** 31, -5, 0, 2 ** 31 - 1],
    "int64": [-2 ** 63, -9, 0, 2 ** 63 - 1],
    "float16": [-65504.0, -1.099609375, 0.0, 6.103515625e-05, 5.960464477539063e-08, 65504.0,
                float("inf"), float("nan"), -0.0],
    "bfloat16": [-3.3895313892515355e38, 1.1015625, 0.0, 1e-3, float("-inf"), float("nan")],
    "float32": [-3.4028234663852886e38, 1.100000023841858, 1e-45, 0.1, float("inf"), float("nan")],
    "float64": [1.7976931348623157e308, 0.1, 5e-324, -1 / 3, float("-inf"), float("nan")],
    "complex64": [1.100000023841858 + 2.200000047683716j, -0.5 - 0j, complex(float("inf"), 1),
                  complex(0, float("nan"))],
    "complex128": [1.1 + 2.2j, -0.5 - 0j, complex(5e-324, -1.7976931348623157e308), complex(float("-inf"), float("nan"))],
}


def _pair(name, data, device=None):
    device = device or default_device()
    tt = torch.tensor(data, dtype=getattr(torch, name))
    lt = to_lucid(tt, device)
    assert lt.device.type == device
    return lt, tt


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_tolist_1d(name, device):
    lt, tt = _pair(name, VALUES[name], device)
    got, want = lt.tolist(), tt.tolist()
    assert _values_equal(got, want), (got, want)


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_item_each_value(name, device):
    for v in VALUES[name]:
        lt, tt = _pair(name, v, device)
        assert lt.shape == ()
        got, want = lt.item(), tt.item()
        assert type(got) is type(want)
        assert _values_equal(got, want), (got, want)
        assert _values_equal(lt.tolist(), tt.tolist())


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_item_of_one_element_tensors(name, device):
    v = VALUES[name][1]
    for shape in [(1,), (1, 1), (1, 1, 1)]:
        tt = torch.tensor(v, dtype=getattr(torch, name)).reshape(shape)
        lt = to_lucid(tt, device)
        assert _values_equal(lt.item(), tt.item())


@pytest.mark.parametrize("name", ["int64", "float32", "float16", "bool", "complex64"])
def test_tolist_nested_and_views(name, device):
    tt = torch.arange(24).reshape(2, 3, 4).to(getattr(torch, name))
    lt = to_lucid(tt, device)
    for f in [lambda t: t, lambda t: t.transpose(0, 2), lambda t: t[:, ::2, 1:],
              lambda t: t[1, 2], lambda t: t[0, 0, 0], lambda t: t.unsqueeze(1)[:, :, 1:],
              lambda t: t[:, :1].expand(2, 3, 4), lambda t: t[:, 3:]]:
        assert _values_equal(f(lt).tolist(), f(tt).tolist())


def test_tolist_empty(device):
    for shape in [(0,), (2, 0), (0, 3), (2, 0, 3)]:
        assert lucid.zeros(*shape, device=device).tolist() == torch.zeros(*shape).tolist()


@pytest.mark.parametrize("n", [0, 2, 24])
def test_item_on_non_single_raises(n, device):
    with pytest.raises(RuntimeError) as te:
        torch.zeros(n).item()
    with pytest.raises(type(te.value), match=f"{n} elements"):
        lucid.zeros(n, device=device).item()


def test_item_and_tolist_with_requires_grad(device):
    lt = lucid.tensor([1.5], requires_grad=True, device=device)
    tt = torch.tensor([1.5], requires_grad=True)
    assert lt.item() == tt.item() and lt.tolist() == tt.tolist()


# ---- Python protocols -------------------------------------------------------------------
def test_len(device):
    for shape in [(3,), (2, 5), (0, 4), (1,)]:
        assert len(lucid.zeros(*shape, device=device)) == len(torch.zeros(*shape))
    with pytest.raises(TypeError) as te:
        len(torch.tensor(5))
    with pytest.raises(type(te.value), match="0-d"):
        len(lucid.tensor(5, device=device))


def test_iter(device):
    tt = torch.arange(12).reshape(3, 4)
    lt = to_lucid(tt, device)
    rows_l, rows_t = list(lt), list(tt)
    assert len(rows_l) == len(rows_t)
    for a, b in zip(rows_l, rows_t):
        assert isinstance(a, lucid.Tensor) and a.device.type == device
        assert a.tolist() == b.tolist() and a.stride() == b.stride()
        assert a.storage_offset() == b.storage_offset()
    cols = list(lt.t())
    assert [c.tolist() for c in cols] == [c.tolist() for c in tt.t()]
    cols[0][0] = -1  # iteration yields views
    assert lt[0, 0].item() == -1
    assert [x.item() for x in lucid.tensor([4, 5], device=device)] == [4, 5]
    assert list(lucid.zeros(0, device=device)) == []
    with pytest.raises(TypeError) as te:
        iter(torch.tensor(5))
    with pytest.raises(type(te.value), match="0-d"):
        iter(lucid.tensor(5, device=device))


@pytest.mark.parametrize("data", [0, 1, -1, 0.0, 0.5, float("nan"), True, False, [0], [[3]],
                                  0j, 1j, [False]], ids=repr)
def test_bool(data, device):
    assert bool(lucid.tensor(data, device=device)) == bool(torch.tensor(data))


@pytest.mark.parametrize("data,word", [([1, 2], "more than one value"), ([], "no values")])
def test_bool_ambiguous(data, word, device):
    with pytest.raises(RuntimeError) as te:
        bool(torch.tensor(data))
    with pytest.raises(type(te.value), match=word):
        bool(lucid.tensor(data, device=device))


@pytest.mark.parametrize("name", ["bool", "uint8", "int8", "int32", "int64", "float16",
                                  "bfloat16", "float32", "float64"])
def test_int_float_conversions(name, device):
    values = [0, 1, 2.9, 100] + ([] if name in ("uint8", "bool") else [-2.9])  # -2.9 -> uint8: UB
    for v in values:
        tt = torch.tensor([v]).to(getattr(torch, name))
        lt = lucid.tensor([v], device=device).to(getattr(lucid, name))
        for conv in (int, float, complex):
            got, want = conv(lt), conv(tt)
            assert type(got) is type(want) and got == want


def test_int_float_of_complex(device):
    assert complex(lucid.tensor(1 + 2j, device=device)) == complex(torch.tensor(1 + 2j))
    with pytest.raises(Exception) as te:
        float(torch.tensor(1 + 2j))
    with pytest.raises(type(te.value)):
        float(lucid.tensor(1 + 2j, device=device))


@pytest.mark.parametrize("conv", [int, float])
def test_int_float_of_multi_element_raises(conv, device):
    with pytest.raises(Exception) as te:
        conv(torch.tensor([1, 2]))
    with pytest.raises(type(te.value), match="one element|elements"):
        conv(lucid.tensor([1, 2], device=device))


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64", "bool"])
def test_index_protocol(name, device):
    tt = torch.tensor(2, dtype=getattr(torch, name))
    lt = lucid.tensor(2, dtype=getattr(lucid, name), device=device)
    assert operator.index(lt) == operator.index(tt)
    assert [10, 11, 12][lt] == [10, 11, 12][tt]
    assert operator.index(lucid.tensor([[2]], dtype=getattr(lucid, name), device=device)) == \
        operator.index(torch.tensor([[2]], dtype=getattr(torch, name)))
    assert "abcd"[lucid.tensor(1, device=device):lucid.tensor(3, device=device)] == "bc"


@pytest.mark.parametrize("bad", [lambda m: m.tensor(2.0), lambda m: m.tensor([1, 2]),
                                 lambda m: m.tensor(1j)])
def test_index_protocol_rejects(bad):
    with pytest.raises(TypeError) as te:
        operator.index(bad(torch))
    with pytest.raises(type(te.value), match="integer tensors of a single element"):
        operator.index(bad(lucid))


# ---- metadata ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_metadata(name, device):
    tb = torch.zeros(2, 3, 4, dtype=getattr(torch, name))
    lb = lucid.zeros(2, 3, 4, dtype=getattr(lucid, name), device=device)
    for f in [lambda t: t, lambda t: t.transpose(0, 2), lambda t: t[:, ::2], lambda t: t[1, 2, 3],
              lambda t: t[:, :1].expand(2, 5, 4), lambda t: t[:, 3:]]:
        lt, tt = f(lb), f(tb)
        assert lt.size() == tt.size() and isinstance(lt.size(), lucid.Size)
        assert lt.shape == tt.shape and tuple(lt.shape) == tuple(tt.shape)
        assert lt.stride() == tt.stride() and isinstance(lt.stride(), tuple)
        assert (lt.numel(), lt.nelement(), lt.dim(), lt.ndim, lt.ndimension()) == \
            (tt.numel(), tt.nelement(), tt.dim(), tt.ndim, tt.ndimension())
        assert (lt.element_size(), lt.itemsize, lt.nbytes) == \
            (tt.element_size(), tt.itemsize, tt.nbytes)
        for d in range(-lt.dim(), lt.dim()):
            assert lt.size(d) == tt.size(d) and lt.stride(d) == tt.stride(d)
        assert lt.is_floating_point() == tt.is_floating_point()
        assert lt.is_complex() == tt.is_complex()
        assert dtype_name(lt.dtype) == dtype_name(tt.dtype)
        assert lt.device.type == device and lt.is_cuda == (device != "cpu")


def test_size_object():
    s = lucid.zeros(2, 3, 4).size()
    ts = torch.zeros(2, 3, 4).size()
    assert s == ts and s.numel() == ts.numel() and len(s) == len(ts)
    assert isinstance(s[1:], lucid.Size) and s[1:] == ts[1:]
    assert s[-1] == 4 and repr(s) == repr(ts).replace("torch", "lucid")
    assert lucid.Size([2, 3]) == (2, 3)


@pytest.mark.parametrize("method", ["size", "stride"])
@pytest.mark.parametrize("dim", [3, -4, 10])
def test_metadata_bad_dim(method, dim):
    with pytest.raises(IndexError) as te:
        getattr(torch.zeros(2, 3, 4), method)(dim)
    with pytest.raises(type(te.value), match="Dimension out of range"):
        getattr(lucid.zeros(2, 3, 4), method)(dim)
