"""NumPy and DLPack interoperability: zero-copy in both directions (writes visible on
both sides), __array__, DLPack exchange with torch, capsule rules, and that
`import lucid` does not import NumPy."""

import gc
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import lucid
from conftest import DTYPE_NAMES, assert_same, to_lucid

# Tests of host memory (NumPy arrays, DLPack with torch's CPU tensors): the CPU is the
# default device here; DLPack with torch.cuda is test_gpu.py's.
pytestmark = pytest.mark.usefixtures("cpu_default")

NP_NAMES = [n for n in DTYPE_NAMES if n != "bfloat16"]


def _np(name, shape=(2, 3)):
    a = np.arange(int(np.prod(shape))).reshape(shape)
    return (a % 2 == 0) if name == "bool" else a.astype(name)


# ---- NumPy -> lucid -------------------------------------------------------------------
@pytest.mark.parametrize("name", NP_NAMES)
def test_from_numpy_zero_copy(name):
    a = _np(name)
    t = lucid.from_numpy(a)
    assert_same(t, torch.from_numpy(a))
    assert t.data_ptr() == a.ctypes.data
    one = True if name == "bool" else 1
    t[0, 0] = one          # lucid -> numpy
    assert a[0, 0] == one
    a[1, 2] = 0            # numpy -> lucid
    assert t[1, 2].item() == 0


def test_from_numpy_strided():
    base = np.arange(24.0).reshape(4, 6)
    for a in [base[:, ::2], base.T, base[1:3, 2:5], base[::2]]:
        t, tt = lucid.from_numpy(a), torch.from_numpy(a)
        assert_same(t, tt, offset=False)
        t[0, 0] = -1.0
        assert a[0, 0] == -1.0


def test_from_numpy_zero_dim_and_empty():
    assert_same(lucid.from_numpy(np.array(3.5)), torch.from_numpy(np.array(3.5)))
    e = np.zeros((0, 3), dtype=np.float32)
    assert lucid.from_numpy(e).shape == torch.from_numpy(e).shape


def test_from_numpy_negative_strides():
    a = np.arange(6, dtype=np.int16)[::-1]
    with pytest.raises(ValueError) as te:
        torch.from_numpy(a)
    with pytest.raises(type(te.value), match="negative"):
        lucid.from_numpy(a)


def test_from_numpy_keeps_array_alive():
    a = np.zeros(3)
    t = lucid.from_numpy(a)
    del a
    gc.collect()
    t[0] = 1.0
    assert t.tolist() == [1.0, 0.0, 0.0]


@pytest.mark.parametrize("fn", ["as_tensor", "asarray"])
def test_as_tensor_shares_numpy_memory(fn):
    a = np.arange(3.0)
    t = getattr(lucid, fn)(a)
    t[0] = 5.0
    assert a.tolist() == [5.0, 1.0, 2.0]
    b = np.arange(3.0)
    c = getattr(lucid, fn)(b, dtype=lucid.float32)  # a cast cannot share
    c[0] = 5.0
    assert b.tolist() == [0.0, 1.0, 2.0] and c.dtype is lucid.float32


def test_tensor_copies_numpy():
    a = np.arange(3.0)
    t = lucid.tensor(a)
    t[0] = 5.0
    assert a[0] == 0.0


# ---- lucid -> NumPy -------------------------------------------------------------------
@pytest.mark.parametrize("name", NP_NAMES)
def test_numpy_zero_copy(name):
    tt = torch.arange(6).reshape(2, 3).to(getattr(torch, name))
    lt = to_lucid(tt)
    a, ta = lt.numpy(), tt.numpy()
    assert a.dtype == ta.dtype and a.shape == ta.shape and a.strides == ta.strides
    assert a.tolist() == ta.tolist()
    assert a.ctypes.data == lt.data_ptr()
    one = True if name == "bool" else 1
    a[0, 0] = one
    assert lt[0, 0].item() == one
    lt[1, 1] = 0
    assert a[1, 1] == 0


def test_numpy_of_views():
    tb = torch.arange(24).reshape(2, 3, 4)
    lb = to_lucid(tb)
    for f in [lambda t: t.transpose(0, 2), lambda t: t[:, ::2, 1:], lambda t: t[1, 2],
              lambda t: t[0, 0, 0], lambda t: t[:, :1].expand(2, 3, 4)]:
        a, ta = f(lb).numpy(), f(tb).numpy()
        assert a.strides == ta.strides and a.tolist() == ta.tolist()
    v = lb[:, 1].numpy()
    v[0, 0] = -3
    assert lb[0, 1, 0].item() == -3


def test_numpy_keeps_tensor_alive():
    t = lucid.ones(3)
    a = t.numpy()
    del t
    gc.collect()
    assert a.tolist() == [1.0, 1.0, 1.0]


def test_numpy_bfloat16_raises():
    with pytest.raises(TypeError) as te:
        torch.ones(2, dtype=torch.bfloat16).numpy()
    with pytest.raises(type(te.value), match="BFloat16"):
        lucid.ones(2, dtype=lucid.bfloat16).numpy()


def test_numpy_of_a_tensor_that_requires_grad_gives_its_data():
    # upstream Lucid's and the engine contract's choice; torch raises here
    with pytest.raises(RuntimeError):
        torch.ones(2, requires_grad=True).numpy()
    x = lucid.ones(2, requires_grad=True, device="cpu")
    a = x.numpy()
    assert a.tolist() == [1.0, 1.0] and x.requires_grad
    a[0] = 5.0  # a view of the data, as detach().numpy() is
    assert x.tolist() == [5.0, 1.0]
    if lucid.gpu.is_available():  # a GPU tensor's data is downloaded, detached
        g = lucid.ones(2, requires_grad=True, device="gpu")
        assert g.numpy().tolist() == [1.0, 1.0] and g.requires_grad


def test_array_protocol():
    lt = lucid.tensor([1.0, 2.0])
    a = np.asarray(lt)
    assert a.dtype == np.float32 and a.tolist() == [1.0, 2.0]
    a[0] = 7.0  # np.asarray shares memory, as with torch
    assert lt.tolist() == [7.0, 2.0]
    b = np.array(lt, dtype=np.float64)
    assert b.dtype == np.float64 and b.tolist() == [7.0, 2.0]
    c = np.array(lucid.tensor([[1, 2], [3, 4]], dtype=lucid.int16))
    assert c.dtype == np.int16 and c.tolist() == [[1, 2], [3, 4]]


def test_array_protocol_of_a_tensor_that_requires_grad():
    # numpy()'s choice (upstream Lucid's): the data, where torch raises
    with pytest.raises(RuntimeError):
        np.asarray(torch.ones(2, requires_grad=True))
    assert np.asarray(lucid.ones(2, requires_grad=True)).tolist() == [1.0, 1.0]


# ---- DLPack with torch --------------------------------------------------------------------
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dlpack_lucid_to_torch(name):
    tt = torch.arange(6).reshape(2, 3).to(getattr(torch, name))
    lt = to_lucid(tt)
    u = torch.from_dlpack(lt)
    assert u.dtype == tt.dtype and u.shape == tt.shape and u.stride() == tt.stride()
    assert u.tolist() == tt.tolist()
    assert u.data_ptr() == lt.data_ptr()
    u[0, 0] = True if name == "bool" else 1
    assert lt[0, 0].item() == u[0, 0].item()
    lt[1, 2] = 0
    assert u[1, 2].item() == 0


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dlpack_torch_to_lucid(name):
    u = torch.arange(6).reshape(2, 3).to(getattr(torch, name))
    lt = lucid.from_dlpack(u)
    assert_same(lt, u)
    assert lt.data_ptr() == u.data_ptr()
    lt[0, 0] = True if name == "bool" else 1
    assert u[0, 0].item() == lt[0, 0].item()
    u[1, 2] = 0
    assert lt[1, 2].item() == 0


def test_dlpack_strided_views_both_ways():
    lt = lucid.arange(12).reshape(3, 4).t()[1:]
    u = torch.from_dlpack(lt)
    assert u.tolist() == lt.tolist() and u.stride() == lt.stride()
    assert u.data_ptr() == lt.data_ptr()
    tv = torch.arange(24.0).reshape(2, 3, 4).transpose(0, 2)[:, 1:]
    lv = lucid.from_dlpack(tv)
    assert_same(lv, tv)
    assert lv.data_ptr() == tv.data_ptr()


def test_dlpack_zero_dim_and_empty():
    assert torch.from_dlpack(lucid.tensor(3.5)).item() == 3.5
    assert lucid.from_dlpack(torch.tensor(2.5)).shape == ()
    assert lucid.from_dlpack(torch.zeros(0, 3)).shape == (0, 3)
    assert torch.from_dlpack(lucid.zeros(0, 3)).shape == (0, 3)


def test_dlpack_capsules_and_lifetimes():
    u = torch.arange(6.0)
    t = lucid.from_dlpack(u.__dlpack__())  # a bare capsule
    del u
    gc.collect()
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    lt = lucid.arange(6.0)
    v = torch.from_dlpack(lt.__dlpack__(max_version=(1, 0)))  # versioned capsule
    del lt
    gc.collect()
    assert v.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert lucid.arange(2.0).__dlpack_device__() == torch.arange(2.0).__dlpack_device__()


@pytest.mark.parametrize("producer,consumer", [("torch", "lucid"), ("lucid", "torch"),
                                               ("lucid", "lucid")])
def test_dlpack_capsule_consumed_twice(producer, consumer):
    src = torch.arange(4.0) if producer == "torch" else lucid.arange(4.0)
    cap = src.__dlpack__()
    cons = torch.from_dlpack if consumer == "torch" else lucid.from_dlpack
    cons(cap)
    with pytest.raises(RuntimeError, match="consumed only once|already"):
        cons(cap)


def test_dlpack_requires_grad_raises():
    with pytest.raises(RuntimeError, match="requires grad"):
        torch.from_dlpack(lucid.ones(2, requires_grad=True))


def test_dlpack_numpy_both_ways():
    a = np.arange(4.0)
    t = lucid.from_dlpack(a)
    t[0] = 7.0
    assert a[0] == 7.0
    t2 = lucid.arange(4.0)
    b = np.from_dlpack(t2)
    b[1] = 7.0
    assert t2[1].item() == 7.0


def test_complex128_through_dlpack_and_numpy():
    t = torch.tensor([1 + 2j, -3.5e-300j], dtype=torch.complex128)
    x = lucid.from_dlpack(t)
    assert x.dtype == lucid.complex128 and x.tolist() == t.tolist()
    assert torch.from_dlpack(x).tolist() == t.tolist()
    assert lucid.from_numpy(t.numpy()).tolist() == t.tolist() and x.numpy().dtype == np.complex128


@pytest.mark.parametrize("bad", [5, [1, 2], "abc"])
def test_from_dlpack_bad_input(bad):
    with pytest.raises(Exception) as te:
        torch.from_dlpack(bad)
    with pytest.raises(type(te.value), match="capsule|dlpack|DLPack"):  # not "std::bad_cast"
        lucid.from_dlpack(bad)


def test_import_lucid_does_not_import_numpy():
    code = "import sys, lucid; t = lucid.tensor([1.0]); t.tolist(); print('numpy' in sys.modules)"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(lucid.__file__))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd="/", timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_numpy_conversion_then_imports_numpy():
    code = ("import sys, lucid; lucid.tensor([1.0]).numpy(); print('numpy' in sys.modules)")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(lucid.__file__))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd="/", timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


def test_the_extension_exports_only_its_entry_point():
    """lucid's internals (and the CUB and C++ library templates they instantiate) stay
    inside its extension: an exported definition can be bound by another library in the
    process (torch, cuDNN), which on the H200 crashed both (csrc/bindings/exports.map)."""
    import ctypes
    lib = ctypes.CDLL(lucid._C.__file__)
    assert lib.PyInit__C
    with pytest.raises(AttributeError):
        lib._ZN5lucid10dtype_nameENS_5DtypeE  # lucid::dtype_name(lucid::Dtype), defined inside


def test_numpy_numbers_and_functions_on_tensors_give_tensors_as_torch():
    # NumPy defers to the tensor (__array_priority__): a NumPy number on either side is a number, and the
    # gradient flows (it was an ndarray that dropped it: a KL weight from np.linspace left out of the loss)
    w, tw = lucid.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    beta = np.linspace(0, 1, 11)[5]
    for m, v in ((lucid, w), (torch, tw)):
        ((v ** 2).sum() + beta * v.sum() + np.float32(0.25) * v.sum()).backward()
    assert w.grad.tolist() == tw.grad.tolist() == [2.75, 2.75, 2.75]
    t, tt = lucid.ones(2), torch.ones(2)
    cases = ["np.float32(2) * {}", "np.int64(3) + {}", "{} + np.float32(1)", "np.bool_(True) * {}",
             "{} < np.float32(3)", "{} * np.ones(2)", "np.exp({})", "{}.add(np.float32(2))",
             "{}.long() * np.int32(2)"]
    for case in cases:
        got, want = eval(case.format("t")), eval(case.format("tt"))
        assert isinstance(got, lucid.Tensor), case
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], case
        assert got.tolist() == want.tolist(), case
    for case in ["np.ones(2) * {}", "np.array(2.0) * {}"]:  # (an array on the left: torch's TypeError too)
        with pytest.raises(TypeError):
            eval(case.format("t"))
    assert lucid.full((2,), np.int64(3)).dtype == lucid.int64
    assert (+t) is t


def test_numpy_arrays_index_tensors_as_torch():
    x, tx = lucid.arange(20.).reshape(10, 2), torch.arange(20.).reshape(10, 2)
    perm = np.random.default_rng(0).permutation(10)[:3]
    mask = np.arange(10) % 3 == 0
    for key in (perm, mask, (slice(None), np.array([1, 0])), (np.array([1, 2], dtype=np.int32), 1)):
        assert x[key].tolist() == tx[key].tolist()
    x[perm] = 0
    tx[perm] = 0
    assert x.tolist() == tx.tolist()
    with pytest.raises(IndexError, match="must be long, int, byte or bool"):
        x[np.array([0.5])]
