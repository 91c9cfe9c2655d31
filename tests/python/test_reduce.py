"""sum and mean against PyTorch: every dtype, dims as int / tuple / None / negative,
keepdim, dtype=, non-contiguous and expanded inputs, empty and 0-d tensors, errors; on
every device (the GPU leg against torch's CUDA)."""

import pytest
import torch

import lucid

from conftest import DTYPE_NAMES
from test_elementwise import _check, _pair

DIMS = [None, 0, -1, (0, 2), (-1, 0), (1,), ()]


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("keepdim", [False, True])
def test_reduce_dims(op, dtype, keepdim, device):
    la, ta = _pair(dtype, (2, 3, 4), 31, device)
    for dim in DIMS:
        if dim is None:
            _check(lambda: getattr(lucid, op)(la), lambda: getattr(torch, op)(ta))
            continue
        _check(lambda: getattr(lucid, op)(la, dim, keepdim),
               lambda: getattr(torch, op)(ta, dim, keepdim))
        _check(lambda: getattr(la, op)(dim=dim, keepdim=keepdim),
               lambda: getattr(ta, op)(dim=dim, keepdim=keepdim))


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("out", ["float64", "float32", "int64", "complex64"])
def test_reduce_dtype_argument(op, out, device):
    la, ta = _pair("int32", (3, 5), 32, device)
    _check(lambda: getattr(lucid, op)(la, 1, dtype=getattr(lucid, out)),
           lambda: getattr(torch, op)(ta, 1, dtype=getattr(torch, out)))


@pytest.mark.parametrize("op", ["sum", "mean"])
def test_reduce_strided_and_expanded(op, device):
    la, ta = _pair("float32", (4, 6, 5), 33, device)
    for lv, tv in [(la.transpose(0, 2), ta.transpose(0, 2)), (la[::2, 1::2], ta[::2, 1::2]),
                   (la[:, :1].expand(4, 6, 5), ta[:, :1].expand(4, 6, 5))]:
        for dim in [None, 0, 1, (0, 2), (1, 2)]:
            args = () if dim is None else (dim,)
            _check(lambda: getattr(lucid, op)(lv, *args), lambda: getattr(torch, op)(tv, *args))


@pytest.mark.parametrize("op", ["sum", "mean"])
def test_reduce_empty_and_zero_dim(op, device):
    for shape, dims in [((0, 3), [None, 0, 1]), ((2, 0), [None, 0, 1]), ((), [None, 0, -1])]:
        la, ta = _pair("float32", shape, 34, device)
        for dim in dims:
            args = () if dim is None else (dim,)
            _check(lambda: getattr(lucid, op)(la, *args), lambda: getattr(torch, op)(ta, *args))


def test_float16_sums_accumulate_in_higher_precision():
    la, ta = lucid.full((4096,), 0.1, dtype=lucid.float16), torch.full((4096,), 0.1, dtype=torch.float16)
    assert abs(la.sum().item() - ta.float().sum().item()) <= 1.0


@pytest.mark.parametrize("bad", [
    lambda m: m.zeros(2, 3).sum(2),
    lambda m: m.zeros(2, 3).sum((0, 0)),
    lambda m: m.zeros(2, 3).sum((0, -2)),
    lambda m: m.arange(4).mean(),
    lambda m: m.zeros(2).sum(0.5),
])
def test_bad_reductions_raise_like_torch(bad):
    # (a str dim is left out: torch reads it as a dimension name, and how it fails
    # depends on the torch version; lucid has no named tensors and raises TypeError)
    with pytest.raises(Exception) as te:
        bad(torch)
    with pytest.raises(type(te.value)):
        bad(lucid)


def test_str_dim_is_a_type_error():
    with pytest.raises(TypeError, match="dim"):
        lucid.zeros(2).sum("a")
