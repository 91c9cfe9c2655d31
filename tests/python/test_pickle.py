"""Tensors through pickle: bytes, dtype, shape, device and autograd flags survive;
a payload that does not match its shape is refused."""

import pickle

import pytest

import lucid
from lucid._pickle import _rebuild_tensor

DTYPES = [lucid.float16, lucid.bfloat16, lucid.float32, lucid.float64, lucid.complex64, lucid.int8,
          lucid.uint8, lucid.int16, lucid.int32, lucid.int64, lucid.bool]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_round_trip_keeps_values_of_a_strided_view(dtype):
    t = (lucid.arange(12).reshape(3, 4) % 3).to(dtype).t()  # not contiguous
    u = pickle.loads(pickle.dumps(t))
    assert u.dtype == dtype and u.shape == t.shape and u.is_contiguous()
    assert u.tolist() == t.tolist()


def test_empty_and_scalar():
    assert pickle.loads(pickle.dumps(lucid.empty(0, 3))).shape == (0, 3)
    s = pickle.loads(pickle.dumps(lucid.tensor(2.5)))
    assert s.shape == () and s.item() == 2.5


def test_parameter_stays_a_parameter_and_a_leaf():
    p = lucid.nn.Parameter(lucid.randn(3))
    q = pickle.loads(pickle.dumps(p))
    assert isinstance(q, lucid.nn.Parameter) and q.requires_grad and q.is_leaf
    assert q.tolist() == p.tolist()


def test_history_does_not_travel():
    x = lucid.randn(2, requires_grad=True)
    y = pickle.loads(pickle.dumps(x * 2))
    assert y.requires_grad and y.is_leaf and y.grad_fn is None
    assert y.tolist() == (x * 2).tolist()


def test_the_copy_owns_its_memory():
    t = lucid.zeros(4)
    u = pickle.loads(pickle.dumps(t))
    u[0] = 1.0
    assert t[0].item() == 0.0


def test_payload_of_the_wrong_size_is_refused():
    with pytest.raises(ValueError, match="from 8 bytes"):
        _rebuild_tensor(b"\0" * 8, "float32", (3,), "cpu", False, False)
    with pytest.raises(ValueError, match="unknown dtype"):
        _rebuild_tensor(b"", "os.system", (0,), "cpu", False, False)
