"""The bad-input contract: lucid raises the exception type torch raises for the same
mistake, and its message says what was wrong (a key word is matched).

Each case is (name, expected type, key word, fn) where fn(M, ...) makes the mistake
with module M (torch or lucid); the test first confirms torch raises the expected
type, so the table documents torch's behaviour as much as lucid's."""

import re

import numpy as np
import pytest
import torch

import lucid


def _x(M):
    return M.arange(24).reshape(2, 3, 4)


def _consume_twice(M):
    cap = M.arange(4.0).__dlpack__()
    M.from_dlpack(cap)
    M.from_dlpack(cap)


CASES = [
    # ragged nested sequences
    ("ragged_2d", ValueError, "length", lambda M: M.tensor([[1, 2], [3]])),
    ("ragged_3d", ValueError, "length", lambda M: M.tensor([[[1], [2]], [[3]]])),
    ("ragged_empty_row", ValueError, "length", lambda M: M.tensor([[1, 2], []])),
    ("ragged_number_vs_list", TypeError, "sequence", lambda M: M.tensor([[1, 2], 3])),
    # data that is not numbers
    ("str_data", TypeError, "str", lambda M: M.tensor("abc")),
    ("str_in_list", TypeError, "str", lambda M: M.tensor([1, "a"])),
    ("none_in_list", RuntimeError, "NoneType", lambda M: M.tensor([None])),
    # unknown dtype objects
    ("dtype_str", TypeError, "dtype", lambda M: M.zeros(2, dtype="float32")),
    ("dtype_numpy_type", TypeError, "dtype", lambda M: M.zeros(2, dtype=np.float32)),
    ("dtype_int_value", TypeError, "dtype", lambda M: M.ones(2, dtype=3)),
    ("dtype_in_tensor", TypeError, "dtype", lambda M: M.tensor([1], dtype="int64")),
    ("dtype_in_arange", TypeError, "dtype", lambda M: M.arange(3, dtype="int64")),
    ("dtype_in_to", TypeError, "dtype|invalid", lambda M: M.zeros(2).to(dtype="float64")),
    # invalid device strings
    ("device_tpu", RuntimeError, "device", lambda M: M.zeros(2, device="tpu")),
    ("device_bad_index", RuntimeError, "device", lambda M: M.zeros(2, device="cuda:x")),
    ("device_negative_index", RuntimeError, "device", lambda M: M.zeros(2, device="gpu:-1")),
    ("device_empty", RuntimeError, "device", lambda M: M.zeros(2, device="")),
    ("device_object", RuntimeError, "device", lambda M: M.device("tpu")),
    ("device_in_to", RuntimeError, "device", lambda M: M.zeros(2).to("tpu")),
    ("device_with_space", RuntimeError, "device", lambda M: M.zeros(2, device=" cpu")),
    # negative sizes
    ("zeros_negative", RuntimeError, "negative", lambda M: M.zeros(2, -3)),
    ("empty_negative", RuntimeError, "negative", lambda M: M.empty(-1)),
    ("ones_negative", RuntimeError, "negative", lambda M: M.ones((4, -2))),
    ("full_negative", RuntimeError, "negative", lambda M: M.full((-1,), 2.0)),
    ("rand_negative", RuntimeError, "negative", lambda M: M.rand(-1)),
    ("randn_negative", RuntimeError, "negative", lambda M: M.randn(2, -1)),
    ("eye_negative", RuntimeError, "-1", lambda M: M.eye(-1)),
    ("linspace_negative_steps", RuntimeError, "negative", lambda M: M.linspace(0, 1, -2)),
    # out-of-range indices
    ("index_dim0", IndexError, "out of bounds", lambda M: _x(M)[2]),
    ("index_negative", IndexError, "out of bounds", lambda M: _x(M)[-3]),
    ("index_dim1", IndexError, "out of bounds", lambda M: _x(M)[0, 3]),
    ("index_dim2", IndexError, "out of bounds", lambda M: _x(M)[:, :, 4]),
    ("select_out_of_range", IndexError, "out of range|out of bounds",
     lambda M: _x(M).select(1, 3)),
    ("too_many_indices", IndexError, "too many indices", lambda M: _x(M)[0, 0, 0, 0]),
    ("setitem_out_of_range", IndexError, "out of bounds",
     lambda M: _x(M).__setitem__(5, 1)),
    ("narrow_out_of_range", RuntimeError, "exceeds", lambda M: _x(M).narrow(2, 3, 2)),
    # reshapes to incompatible shapes
    ("view_bad_numel", RuntimeError, "invalid", lambda M: _x(M).view(5, 5)),
    ("reshape_bad_numel", RuntimeError, "invalid", lambda M: _x(M).reshape(7)),
    ("reshape_two_minus1", RuntimeError, "one dimension", lambda M: _x(M).reshape(-1, -1)),
    ("view_bad_infer", RuntimeError, "invalid", lambda M: _x(M).view(5, -1)),
    ("unflatten_bad", RuntimeError, "unflatten|invalid", lambda M: _x(M).unflatten(1, (2, 2))),
    # scalars out of multi-element tensors
    ("item_multi", RuntimeError, "elements", lambda M: M.zeros(3).item()),
    ("item_empty", RuntimeError, "elements", lambda M: M.zeros(0).item()),
    ("bool_multi", RuntimeError, "ambiguous", lambda M: bool(M.zeros(3))),
    ("int_multi", ValueError, "one element", lambda M: int(M.zeros(3))),
    ("float_multi", ValueError, "one element", lambda M: float(M.zeros(3))),
    ("len_0d", TypeError, "0-d", lambda M: len(M.tensor(1))),
    # grad-tracking tensors
    ("int_requires_grad", RuntimeError, "floating point",
     lambda M: M.zeros(2, dtype=M.int64).requires_grad_()),
    # DLPack
    ("dlpack_twice", RuntimeError, "consumed only once", _consume_twice),
    ("dlpack_not_capsule", RuntimeError, "capsule", lambda M: M.from_dlpack(5)),
    # views of non-contiguous tensors
    ("view_noncontiguous", RuntimeError, "view size is not compatible",
     lambda M: _x(M).transpose(0, 1).view(24)),
    ("view_noncontiguous_slice", RuntimeError, "view size is not compatible",
     lambda M: _x(M)[:, ::2].view(16)),
    # expand to incompatible shapes
    ("expand_mismatch", RuntimeError, "expanded size", lambda M: _x(M).expand(2, 3, 5)),
    ("expand_fewer_dims", RuntimeError, "number of sizes", lambda M: _x(M).expand(3, 4)),
    ("expand_new_dim_minus1", RuntimeError, "-1", lambda M: M.zeros(3).expand(-1, 3)),
    ("broadcast_to_mismatch", RuntimeError, "expanded size",
     lambda M: M.zeros(3).broadcast_to((2, 4))),
    ("copy_mismatch", RuntimeError, "size|broadcast", lambda M: M.zeros(2, 3).copy_(M.ones(2))),
    # bad dims
    ("transpose_dim", IndexError, "Dimension out of range", lambda M: _x(M).transpose(0, 3)),
    ("squeeze_dim", IndexError, "Dimension out of range", lambda M: _x(M).squeeze(5)),
    ("unsqueeze_dim", IndexError, "Dimension out of range", lambda M: _x(M).unsqueeze(4)),
    ("unsqueeze_neg_dim", IndexError, "Dimension out of range", lambda M: _x(M).unsqueeze(-5)),
    ("permute_dim", IndexError, "Dimension out of range", lambda M: _x(M).permute(0, 1, 3)),
    ("flatten_dim", IndexError, "Dimension out of range", lambda M: _x(M).flatten(3)),
    ("select_dim", IndexError, "Dimension out of range", lambda M: _x(M).select(-4, 0)),
    ("narrow_dim", IndexError, "Dimension out of range", lambda M: _x(M).narrow(3, 0, 1)),
    ("size_dim", IndexError, "Dimension out of range", lambda M: _x(M).size(3)),
    ("stride_dim", IndexError, "Dimension out of range", lambda M: _x(M).stride(-4)),
    ("unbind_dim", IndexError, "Dimension out of range", lambda M: _x(M).unbind(3)),
    ("unflatten_dim", IndexError, "Dimension out of range",
     lambda M: _x(M).unflatten(3, (1, 4))),
    ("squeeze_dim_0d", IndexError, "Dimension out of range", lambda M: M.tensor(1.0).squeeze(1)),
    # default dtype
    ("default_dtype_int", TypeError, "floating", lambda M: M.set_default_dtype(M.int64)),
    ("default_dtype_bool", TypeError, "floating", lambda M: M.set_default_dtype(M.bool)),
    ("default_dtype_str", TypeError, "", lambda M: M.set_default_dtype("float64")),
    # from_numpy on non-arrays
    ("from_numpy_list", TypeError, "ndarray", lambda M: M.from_numpy([1, 2])),
    ("from_numpy_scalar", TypeError, "ndarray", lambda M: M.from_numpy(np.float64(1.0))),
    ("from_numpy_tensor", TypeError, "ndarray", lambda M: M.from_numpy(M.zeros(2))),
    # other argument checks
    ("arange_zero_step", RuntimeError, "nonzero", lambda M: M.arange(0, 5, 0)),
    ("arange_wrong_sign", RuntimeError, "inconsistent", lambda M: M.arange(0, 5, -1)),
    ("randint_empty", RuntimeError, "from", lambda M: M.randint(5, 3, (2,))),
    ("fill_1d_value", RuntimeError, "0-dimension", lambda M: M.zeros(2).fill_(M.zeros(2))),
    ("slice_negative_step", ValueError, "step", lambda M: _x(M)[::-1]),
    ("float_index", IndexError, "only integers", lambda M: _x(M)[1.5]),
    ("float_tensor_index", IndexError, "long, int", lambda M: _x(M)[M.tensor(1.0)]),
    ("size_float", TypeError, "size|tuple of ints", lambda M: M.ones(2.5)),
    ("index_float_tensor", TypeError, "integer tensors", lambda M: [1, 2][M.tensor(1.0)]),
    ("t_3d", RuntimeError, "2 dimensions", lambda M: _x(M).t()),
    ("mT_1d", RuntimeError, "matrices", lambda M: M.zeros(3).mT),
]


@pytest.mark.parametrize("name,exc,word,fn", CASES, ids=[c[0] for c in CASES])
def test_bad_input(name, exc, word, fn):
    with pytest.raises(Exception) as te:
        fn(torch)
    assert type(te.value) is exc, f"torch raises {type(te.value).__name__}: the table is wrong"
    with pytest.raises(Exception) as le:
        fn(lucid)
    assert type(le.value) is exc, \
        f"lucid raises {type(le.value).__name__} ({le.value}) where torch raises {exc.__name__}"
    if word:
        assert re.search(word, str(le.value)), f"message {str(le.value)!r} lacks {word!r}"


def test_lucid_only_contract():
    """Bad inputs torch accepts but lucid cannot (no wide unsigned ints)."""
    for dt in ["uint16", "uint32", "uint64"]:
        with pytest.raises(TypeError):
            lucid.tensor(np.zeros(2, dtype=dt))
    with pytest.raises(TypeError, match="dtype"):
        lucid.from_dlpack(torch.zeros(2, dtype=torch.uint16))
    with pytest.raises(TypeError, match="generator"):
        lucid.rand(2, generator=torch.Generator())


def test_out_of_memory_error_is_a_runtime_error():
    # torch.OutOfMemoryError / torch.cuda.OutOfMemoryError: RuntimeError subclasses
    assert issubclass(lucid.gpu.OutOfMemoryError, RuntimeError)
    assert lucid.OutOfMemoryError is lucid.gpu.OutOfMemoryError
    assert issubclass(torch.OutOfMemoryError, RuntimeError)
