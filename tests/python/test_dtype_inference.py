"""lucid.tensor's dtype inference from Python data and NumPy arrays, against torch.tensor;
the default dtype; explicit dtype= conversions of the data; on every device (device=
puts the same values on the GPU)."""

import numpy as np
import pytest
import torch

import lucid
from conftest import DEVICES, DTYPE_NAMES, assert_same, default_device_as, dtype_name


def on(device, lt):
    """lt, after checking that it was made on `device`."""
    assert lt.device.type == device, (lt.device, device)
    return lt

DATA = [
    [1, 2, 3],
    [1.0, 2, 3],
    [True, False],
    [True, 2],
    [True, 2.5],
    [1, 2j],
    [1.5 + 0.5j, True, 3],
    3,
    -3.5,
    True,
    1j,
    [],
    [[]],
    [[], []],
    [[1, 2], [3, 4]],
    [[[1.0], [2.0]], [[3.0], [4.0]]],
    (1, 2, 3),
    [(1, 2), (3, 4)],
    ((1.5,), [2.5]),
    range(4),
    [2 ** 63 - 1, -2 ** 63],
    float("nan"),
    [float("inf"), -float("inf")],
    [-0.0],
    [1e-45, 1e300],
]


@pytest.mark.parametrize("data", DATA, ids=repr)
def test_infers_like_torch(data, device):
    assert_same(on(device, lucid.tensor(data, device=device)), torch.tensor(data))


@pytest.mark.parametrize("data", [[1, 2], [1.5, 2.5], [True], [1j], 2.5, [[1, 2]]], ids=repr)
def test_default_dtype_float64(data, device):
    lucid.set_default_dtype(lucid.float64)
    torch.set_default_dtype(torch.float64)
    assert lucid.get_default_dtype() is lucid.float64
    assert_same(on(device, lucid.tensor(data, device=device)), torch.tensor(data))


def test_default_dtype_float64_affects_factories(device):
    lucid.set_default_dtype(lucid.float64)
    torch.set_default_dtype(torch.float64)
    d = {"device": device}
    assert_same(on(device, lucid.zeros(2, **d)), torch.zeros(2))
    assert_same(on(device, lucid.full((2,), 1.5, **d)), torch.full((2,), 1.5))
    assert_same(on(device, lucid.full((2,), 1, **d)), torch.full((2,), 1))
    assert_same(on(device, lucid.arange(0.5, 2.5, **d)), torch.arange(0.5, 2.5))
    assert_same(on(device, lucid.arange(3, **d)), torch.arange(3))
    assert_same(on(device, lucid.linspace(0, 1, 3, **d)), torch.linspace(0, 1, 3))
    assert_same(on(device, lucid.eye(2, **d)), torch.eye(2))
    assert dtype_name(on(device, lucid.rand(2, **d)).dtype) == dtype_name(torch.rand(2).dtype) == "float64"
    assert dtype_name(on(device, lucid.randn(2, **d)).dtype) == "float64"
    lucid.set_default_dtype(lucid.float32)
    assert lucid.zeros(2, **d).dtype is lucid.float32 and lucid.tensor(1.5, **d).dtype is lucid.float32


def test_default_dtype_half_types(device):
    for name in ["float16", "bfloat16"]:
        lucid.set_default_dtype(getattr(lucid, name))
        torch.set_default_dtype(getattr(torch, name))
        assert_same(on(device, lucid.tensor([1.5, 2], device=device)), torch.tensor([1.5, 2]))
        assert_same(on(device, lucid.tensor([1, 2], device=device)), torch.tensor([1, 2]))


@pytest.mark.parametrize("name", DTYPE_NAMES)
@pytest.mark.parametrize("data", [[0, 1, 2], [[1.25, -2.75]], [True, False], 5, -2.5],
                         ids=repr)
def test_explicit_dtype_converts_data(name, data, device):
    try:
        tt = torch.tensor(data, dtype=getattr(torch, name))
    except Exception as e:  # torch refuses (e.g. -2.5 into uint8): lucid must too
        with pytest.raises(type(e)):
            lucid.tensor(data, dtype=getattr(lucid, name), device=device)
        return
    assert_same(on(device, lucid.tensor(data, dtype=getattr(lucid, name), device=device)), tt)


def test_explicit_dtype_float_rounding(device):
    assert_same(on(device, lucid.tensor([0.1, 1 / 3, 70000.0], dtype=lucid.float16, device=device)),
                torch.tensor([0.1, 1 / 3, 70000.0], dtype=torch.float16))
    assert_same(on(device, lucid.tensor([1.1, 3e38], dtype=lucid.bfloat16, device=device)),
                torch.tensor([1.1, 3e38], dtype=torch.bfloat16))
    assert_same(on(device, lucid.tensor([1e300], dtype=lucid.float32, device=device)),
                torch.tensor([1e300], dtype=torch.float32))
    assert_same(on(device, lucid.tensor([-1], dtype=lucid.uint8, device=device)),
                torch.tensor([-1], dtype=torch.uint8))


@pytest.mark.parametrize("value,name", [(300, "uint8"), (2 ** 40, "int32"), (-129, "int8"),
                                        (float("inf"), "int32"), (40000, "int16")])
def test_explicit_dtype_overflow_raises(value, name, device):
    with pytest.raises(RuntimeError) as te:
        torch.tensor([value], dtype=getattr(torch, name))
    with pytest.raises(type(te.value), match="overflow"):
        lucid.tensor([value], dtype=getattr(lucid, name), device=device)


def test_complex_into_real_dtype_raises():
    with pytest.raises(TypeError) as te:
        torch.tensor([1 + 2j], dtype=torch.float32)
    with pytest.raises(type(te.value)):
        lucid.tensor([1 + 2j], dtype=lucid.float32)


def test_int_too_large_for_int64():
    with pytest.raises(Exception) as te:
        torch.tensor([2 ** 63])
    with pytest.raises(type(te.value), match="[Oo]verflow"):
        lucid.tensor([2 ** 63])


# ---- NumPy input -------------------------------------------------------------------------
NP_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
             "float64", "complex64"]


def _np_array(name, shape=(2, 3)):
    a = np.arange(int(np.prod(shape))).reshape(shape)
    if name == "bool":
        return a % 2 == 0
    if name == "complex64":
        return (a + 1j * a[::-1]).astype(np.complex64)
    return a.astype(name)


@pytest.mark.parametrize("name", NP_DTYPES)
def test_numpy_array_dtype(name, device):
    a = _np_array(name)
    assert_same(on(device, lucid.tensor(a, device=device)), torch.tensor(a))
    assert_same(on(device, lucid.as_tensor(a, device=device)), torch.as_tensor(a))


@pytest.mark.parametrize("default", DEVICES)
def test_arrays_go_to_the_default_device(default):
    # as torch's default device: tensor() and as_tensor() of an array (shared memory on
    # the CPU, a copy under a GPU default); from_numpy() always shares, on the CPU
    a = _np_array("float32")
    with default_device_as(default):
        made = [lucid.tensor(a), lucid.as_tensor(a), lucid.asarray(a)]
        assert all(t.device.type == default and t.tolist() == a.tolist() for t in made)
        shared = [lucid.from_numpy(a), lucid.as_tensor(a, device="cpu")]
        assert all(t.device.type == "cpu" for t in shared)
    a[0, 0] = 7.0
    assert [t[0, 0].item() for t in shared] == [7.0, 7.0]
    assert [t[0, 0].item() for t in made] == [0.0, 7.0 if default == "cpu" else 0.0, 7.0 if default == "cpu" else 0.0]


@pytest.mark.parametrize("name", NP_DTYPES)
def test_numpy_scalar_dtype(name, device):
    s = _np_array(name, (1,))[0]
    assert_same(on(device, lucid.tensor(s, device=device)), torch.tensor(s))


@pytest.mark.parametrize("name", NP_DTYPES)
def test_numpy_zero_dim_array(name, device):
    a = np.array(_np_array(name, (1,))[0])
    assert a.ndim == 0
    assert_same(on(device, lucid.tensor(a, device=device)), torch.tensor(a))


def test_numpy_non_contiguous_is_copied_in_order(device):
    base = np.arange(24, dtype=np.int32).reshape(4, 6)
    for a in [base[:, ::2], base.T, base[1:3, 2:5], base[::2, ::-1]]:
        t = on(device, lucid.tensor(a, device=device))
        assert_same(t, torch.tensor(a.copy()))
        t[0, 0] = -100  # a copy: the array is untouched
        assert a[0, 0] != -100


def test_numpy_scalars_in_lists(device):
    for data in [[np.float32(1.5), np.float32(2)], [np.int32(1), 2],
                 [np.float64(1.5), 2], [np.int16(3), np.int16(4)]]:
        assert_same(on(device, lucid.tensor(data, device=device)), torch.tensor(data))


def test_list_of_tensors_and_arrays(device):
    assert_same(on(device, lucid.tensor([lucid.tensor(1), lucid.tensor(2)], device=device)),
                torch.tensor([torch.tensor(1), torch.tensor(2)]))
    assert_same(on(device, lucid.tensor([lucid.tensor(1.5), lucid.tensor(2.0)], device=device)),
                torch.tensor([torch.tensor(1.5), torch.tensor(2.0)]))
    arrs = np.arange(4).reshape(2, 2)
    assert_same(on(device, lucid.tensor(list(arrs), device=device)), torch.tensor(arrs))


def test_numpy_explicit_dtype(device):
    a = np.array([1.7, -2.2, 3.0])
    assert_same(on(device, lucid.tensor(a, dtype=lucid.int32, device=device)), torch.tensor(a, dtype=torch.int32))
    assert_same(on(device, lucid.tensor(a, dtype=lucid.float16, device=device)),
                torch.tensor(a, dtype=torch.float16))
    assert_same(on(device, lucid.as_tensor(a, dtype=lucid.float32, device=device)),
                torch.as_tensor(a, dtype=torch.float32))


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
def test_numpy_dtypes_lucid_lacks_raise_typeerror(name):
    a = np.zeros(3, dtype=name)
    with pytest.raises(TypeError, match="supported"):
        lucid.tensor(a)
    with pytest.raises(TypeError):
        lucid.from_numpy(a)


def test_bytearray_is_a_sequence_of_ints():
    assert_same(lucid.tensor(bytearray(b"ab")), torch.tensor(bytearray(b"ab")))


def test_python_types_as_dtype():
    # torch accepts the builtin types float, int, bool, complex as dtype arguments.
    for py, name in [(float, "float64"), (int, "int64"), (bool, "bool")]:
        assert_same(lucid.tensor([1, 0], dtype=py), torch.tensor([1, 0], dtype=py))
        assert dtype_name(lucid.zeros(2, dtype=py).dtype) == name
