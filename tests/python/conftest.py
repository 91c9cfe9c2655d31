"""Shared fixtures and helpers for checking lucid against PyTorch.

Test modules import the helpers with `from conftest import ...` (pytest puts this
directory on sys.path, and the module is the same object pytest loaded).
"""

import atexit
import contextlib
import math
import os
import shutil
import tempfile

import pytest
import torch

# Kernels lucid generates at run time are cached on disk (Note [Generated kernels]): the
# tests' go to a folder of their own, not the user's ~/.cache.
if "LUCID_CACHE_DIR" not in os.environ:
    os.environ["LUCID_CACHE_DIR"] = tempfile.mkdtemp(prefix="lucid-test-cache-")
    atexit.register(shutil.rmtree, os.environ["LUCID_CACHE_DIR"], ignore_errors=True)

import lucid  # noqa: E402

# Several pytest-xdist workers share the machine: each takes its share of the cores
# (at least 2, so that threaded code paths still run) instead of a thread per core for
# both lucid and torch (16 workers x 16 threads spun for minutes on a 16-core host).
_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _workers > 1:
    _share = max(2, (os.cpu_count() or 2) // _workers)
    lucid.set_num_threads(_share)
    torch.set_num_threads(_share)

# LUCID_TEST_DEFAULT_DEVICE=gpu runs the suite with the GPU as lucid's default device
# (issue 22: tensors a test makes without naming a device are lazy GPU tensors), e.g.
#   LUCID_TEST_DEFAULT_DEVICE=gpu python -m pytest python
if os.environ.get("LUCID_TEST_DEFAULT_DEVICE"):
    if os.environ["LUCID_TEST_DEFAULT_DEVICE"].startswith("gpu") and not lucid.gpu.is_available():
        raise pytest.UsageError("LUCID_TEST_DEFAULT_DEVICE asks for the GPU, and lucid has none here")
    lucid.set_default_device(os.environ["LUCID_TEST_DEFAULT_DEVICE"])



def default_device():
    """lucid's default device type ("cpu", or "gpu" under LUCID_TEST_DEFAULT_DEVICE=gpu):
    what the helpers that take a `device` use when a test names none."""
    return lucid.get_default_device().type


@pytest.fixture
def cpu_default():
    """The CPU as lucid's default device for one test, whatever LUCID_TEST_DEFAULT_DEVICE
    says: for tests of the CPU itself (compiled CPU chains, the legacy CPU tensor types).
    Modules take it with `pytestmark = pytest.mark.usefixtures("cpu_default")`."""
    with default_device_as("cpu"):
        yield


@contextlib.contextmanager
def default_device_as(name):
    """lucid's default device is `name` inside, and what it was after."""
    before = lucid.get_default_device()
    lucid.set_default_device(name)
    try:
        yield
    finally:
        lucid.set_default_device(before)


@contextlib.contextmanager
def raises_by_sync(expected, match=None):
    """pytest.raises for an error that a GPU kernel may find (an index out of range): the
    GPU reports it at the next read or wait (Note [Errors found on the device]), so the
    block ends with one. Where the block runs on the CPU, the call itself raises."""
    with pytest.raises(expected, match=match) as info:
        yield info
        if lucid.gpu.is_available():
            lucid.gpu.synchronize()


# Every dtype lucid has, by name; torch has all of them too.
DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
               "float32", "float64", "complex64", "complex128"]
INT_NAMES = ["uint8", "int8", "int16", "int32", "int64"]
FLOAT_NAMES = ["float16", "bfloat16", "float32", "float64"]

DEVICES = ["cpu"] + (["gpu"] if lucid.gpu.is_available() else [])

# (major, minor) of the reference torch: CI's is 2.15, the GPU machine's 2.11, and a few
# of torch's own answers changed between them.
TORCH_VERSION = tuple(int(v) for v in torch.__version__.split("+")[0].split(".")[:2])


def dtype_name(d):
    """'float32' for lucid.float32 and torch.float32 alike."""
    return str(d).split(".")[-1]


def lucid_dtype(d):
    return getattr(lucid, dtype_name(d))


def torch_dtype(d):
    return getattr(torch, dtype_name(d))


def to_torch(t):
    """A torch tensor with the values, shape and dtype of lucid tensor `t` (a copy)."""
    dt = torch_dtype(t.dtype)
    return torch.tensor(t.tolist(), dtype=dt).reshape(tuple(t.shape))


def to_lucid(t, device=None):
    """A lucid tensor with the values, shape and dtype of torch tensor `t` (a copy), on
    `device` (default: lucid's default device, LUCID_TEST_DEFAULT_DEVICE)."""
    return lucid.tensor(t.tolist(), dtype=lucid_dtype(t.dtype), device=device).reshape(
        tuple(t.shape))


def _values_equal(a, b):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(
            _values_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, complex) or isinstance(b, complex):
        a, b = complex(a), complex(b)
        return _values_equal(a.real, b.real) and _values_equal(a.imag, b.imag)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b and type(a) is type(b)


def assert_same(lt, tt, *, strides=True, offset=False):
    """lucid tensor `lt` matches torch tensor `tt`: shape, dtype name, strides, values
    (exactly, Python types included: tolist() of both must agree)."""
    assert isinstance(lt, lucid.Tensor), type(lt)
    assert tuple(lt.shape) == tuple(tt.shape), (lt.shape, tt.shape)
    assert dtype_name(lt.dtype) == dtype_name(tt.dtype), (lt.dtype, tt.dtype)
    if strides:
        assert lt.stride() == tt.stride(), (lt.stride(), tt.stride())
    if offset:
        assert lt.storage_offset() == tt.storage_offset()
    assert lt.is_contiguous() == tt.is_contiguous()
    lv = lt.cpu().tolist()
    tv = tt.cpu().tolist()
    assert _values_equal(lv, tv), (lv, tv)


def assert_close(lt, tt, rtol=1e-6, atol=1e-6):
    """Like assert_same, for computed floating-point values (no stride check)."""
    assert tuple(lt.shape) == tuple(tt.shape)
    assert dtype_name(lt.dtype) == dtype_name(tt.dtype)
    torch.testing.assert_close(to_torch(lt.cpu()), tt, rtol=rtol, atol=atol)


def shares_storage(a, b):
    """Both lucid tensors view the same storage."""
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


@pytest.fixture(params=DEVICES)
def device(request):
    """'cpu', and 'gpu' when lucid has a GPU. A test's CPU leg is a test of the CPU: the
    tensors it makes without naming a device (its operands' partners, its expected
    values) stay on the CPU under LUCID_TEST_DEFAULT_DEVICE=gpu too. Its GPU leg keeps
    the default it runs under, so both defaults meet the GPU."""
    if request.param != "cpu":
        yield request.param
        return
    with default_device_as("cpu"):
        yield request.param


@pytest.fixture
def devices():
    return list(DEVICES)


@pytest.fixture(params=[1, 2])
def threads(request):
    """lucid's pool at 1 and at 2 threads (the kernels split work differently)."""
    before = lucid.get_num_threads()
    lucid.set_num_threads(request.param)
    yield request.param
    lucid.set_num_threads(before)


@pytest.fixture(autouse=True)
def _restore_default_dtype():
    """A test that changes the default dtype cannot leak it into the next one."""
    before_l, before_t = lucid.get_default_dtype(), torch.get_default_dtype()
    yield
    lucid.set_default_dtype(before_l)
    torch.set_default_dtype(before_t)
