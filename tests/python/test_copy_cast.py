"""copy_, fill_, zero_, the version counter, and dtype casts (.to / .float() / ...),
against PyTorch, on every device (copies between the CPU and the GPU too); the results
stay on the input's device."""

import pytest
import torch

import lucid
from conftest import DTYPE_NAMES, assert_same, shares_storage, to_lucid, default_device

# Sources for casts: every value exactly representable in float32, with signs,
# fractions, zeros and specials where the source dtype has them.
CAST_SOURCES = {
    "float32": [[-2.75, -1.5, -0.5, -0.0], [0.0, 0.5, 1.5, 2.75], [100.25, -100.75, 65504.0, 1e-3]],
    "float64": [[-2.7, 2.7, 1e10, -1e10], [0.1, 1 / 3, 255.9, -128.9]],
    "float16": [[-2.5, 0.0, 1.5, 65504.0], [0.333251953125, -7.0, 1024.0, -0.0]],
    "bfloat16": [[-2.5, 0.0, 1.5, 3.0e38], [0.333984375, -7.0, 1024.0, 1e-3]],
    "int64": [[-300, -129, -1, 0], [1, 127, 255, 2 ** 40]],
    "int32": [[-70000, -1, 0, 1], [127, 128, 255, 256]],
    "int16": [[-32768, -1, 0, 32767]],
    "int8": [[-128, -1, 0, 127]],
    "uint8": [[0, 1, 127, 255]],
    "bool": [[True, False, True, True]],
    "complex64": [[1.5 + 2j, -3.5 - 1j], [0j, -0.5 + 0.25j]],
}
FLOAT_SPECIALS = [float("nan"), float("inf"), -float("inf"), 0.0]


def _pair(name, data, device=None):
    device = device or default_device()
    return (lucid.tensor(data, dtype=getattr(lucid, name), device=device),
            torch.tensor(data, dtype=getattr(torch, name)))


def _same(lt, tt, device):
    assert lt.device.type == device, (lt.device, device)
    assert_same(lt, tt)


def _cast_is_defined(src, dst, data):
    """Float -> integer casts of out-of-range values are undefined behaviour in C++ (and
    torch's results depend on the platform); only compare in-range values."""
    if not (src.startswith(("float", "bfloat", "complex")) and dst in
            ("uint8", "int8", "int16", "int32", "int64")):
        return True
    info = torch.iinfo(getattr(torch, dst))
    flat = [v for row in data for v in row]
    vals = [v.real if isinstance(v, complex) else v for v in flat]
    return all(info.min < v < info.max + 1 for v in vals)


@pytest.mark.filterwarnings("ignore:Casting complex values to real:UserWarning")
@pytest.mark.parametrize("dst", DTYPE_NAMES)
@pytest.mark.parametrize("src", list(CAST_SOURCES))
def test_to_dtype(src, dst, device):
    for data in CAST_SOURCES[src]:
        if not _cast_is_defined(src, dst, [data]):
            continue
        lt, tt = _pair(src, data, device)
        _same(lt.to(getattr(lucid, dst)), tt.to(getattr(torch, dst)), device)
        _same(lt.to(dtype=getattr(lucid, dst)), tt.to(dtype=getattr(torch, dst)), device)
        if device != "cpu":  # a move and a cast in one call, both ways
            _same(lt.to("cpu", getattr(lucid, dst)), tt.to(getattr(torch, dst)), "cpu")
            _same(lucid.tensor(data, dtype=getattr(lucid, src)).to(device, getattr(lucid, dst)),
                  tt.to(getattr(torch, dst)), device)


@pytest.mark.parametrize("dst", ["float16", "bfloat16", "float64", "bool", "complex64"])
def test_cast_float_specials(dst, device):
    lt, tt = _pair("float32", FLOAT_SPECIALS, device)
    _same(lt.to(getattr(lucid, dst)), tt.to(getattr(torch, dst)), device)


@pytest.mark.parametrize("method,name", [("float", "float32"), ("double", "float64"),
                                         ("half", "float16"), ("bfloat16", "bfloat16"),
                                         ("long", "int64"), ("int", "int32"), ("short", "int16"),
                                         ("char", "int8"), ("byte", "uint8"), ("bool", "bool"),
                                         ("cfloat", "complex64")])
def test_cast_methods(method, name, device):
    data = [[-2.75, 0.0, 0.5, 3.9], [1.0, -1.0, 7.5, 100.0]]
    if name == "uint8":  # negative float -> uint8 is undefined behaviour
        data = [[2.75, 0.0, 0.5, 3.9], [1.0, 1.0, 7.5, 100.0]]
    lt, tt = _pair("float32", data, device)
    _same(getattr(lt, method)(), getattr(tt, method)(), device)


def test_float_to_int_truncates_toward_zero(device):
    lt, tt = _pair("float32", [-2.7, -0.5, 0.5, 2.7, 1e9], device)
    _same(lt.long(), tt.long(), device)
    assert lt.long().tolist() == [-2, 0, 0, 2, 1000000000]
    _same(lt.int(), tt.int(), device)


def test_integer_wraparound_casts(device):
    lt, tt = _pair("int64", [-1, 300, 128, 65536 + 5], device)
    for name in ["uint8", "int8", "int16"]:
        _same(lt.to(getattr(lucid, name)), tt.to(getattr(torch, name)), device)


def test_same_dtype_returns_self(device):
    lt, tt = _pair("float32", [1.0, 2.0], device)
    assert (lt.float() is lt) == (tt.float() is tt) is True
    assert lt.to(lucid.float32) is lt
    assert lt.to(device) is lt and lt.to(lucid.device(device)) is lt
    if device == "cpu":
        assert lt.cpu() is lt
    else:
        assert lt.gpu() is lt and lt.cuda() is lt and lt.to("cuda:0") is lt
        moved = lt.cpu()  # a copy on the host, the device tensor untouched
        assert moved.device.type == "cpu" and moved.tolist() == lt.tolist() and lt.device.type == device
    assert lt.to(lt) is lt
    c = lt.to(lucid.float32, copy=True)
    assert c is not lt and not shares_storage(c, lt) and c.tolist() == lt.tolist()
    assert c.device.type == device


def test_to_other_tensor_and_type(device):
    lt, tt = _pair("float32", [1.5, -2.5], device)
    _same(lt.to(lucid.zeros(1, dtype=lucid.int8, device=device)), tt.to(torch.zeros(1, dtype=torch.int8)), device)
    _same(lt.type(lucid.int32), tt.type(torch.int32), device)
    assert lt.type() == tt.type().replace("torch.", "lucid.cuda." if device != "cpu" else "lucid.")
    if device != "cpu":  # to(other) takes the other tensor's device too, as torch's does
        _same(lt.to(lucid.zeros(1, dtype=lucid.int8, device="cpu")), tt.to(torch.zeros(1, dtype=torch.int8)), "cpu")


def test_cast_of_non_contiguous_keeps_layout(device):
    lb = lucid.arange(24, device=device).reshape(2, 3, 4)
    tb = torch.arange(24).reshape(2, 3, 4)
    _same(lb.transpose(0, 2).float(), tb.transpose(0, 2).float(), device)  # preserve_format
    _same(lb[:, ::2].double(), tb[:, ::2].double(), device)


def test_cast_result_is_independent(device):
    lt = lucid.tensor([1, 2, 3], device=device)
    f = lt.float()
    f.fill_(0)
    assert lt.tolist() == [1, 2, 3]


# ---- copy_ -----------------------------------------------------------------------------
@pytest.mark.parametrize("src_shape", [(3,), (1, 3), (2, 1), (), (2, 3), (1,)])
def test_copy_broadcasts(src_shape, device):
    tsrc = torch.arange(1, 1 + torch.Size(src_shape).numel()).reshape(src_shape)
    lsrc = to_lucid(tsrc, device)
    ld, td = lucid.zeros(2, 3, device=device), torch.zeros(2, 3)
    assert ld.copy_(lsrc) is ld
    td.copy_(tsrc)
    _same(ld, td, device)
    if device != "cpu":  # across devices, both ways: the destination keeps its device
        ld = lucid.zeros(2, 3, device=device)
        assert ld.copy_(to_lucid(tsrc, "cpu")) is ld
        _same(ld, td, device)
        lh = lucid.zeros(2, 3, device="cpu")
        assert lh.copy_(lsrc) is lh
        _same(lh, td, "cpu")


@pytest.mark.filterwarnings("ignore:Casting complex values to real:UserWarning")
@pytest.mark.parametrize("dst", DTYPE_NAMES)
@pytest.mark.parametrize("src", ["float32", "int64", "bool", "complex64", "float16"])
def test_copy_casts(src, dst, device):
    data = CAST_SOURCES[src][0]
    if not _cast_is_defined(src, dst, [data]):
        data = [abs(v) for v in data]
    ls, ts = _pair(src, data, device)
    ld = lucid.zeros(len(data), dtype=getattr(lucid, dst), device=device)
    td = torch.zeros(len(data), dtype=getattr(torch, dst))
    ld.copy_(ls)
    td.copy_(ts)
    _same(ld, td, device)
    if device != "cpu":  # a cast and a move in one copy
        lh = lucid.zeros(len(data), dtype=getattr(lucid, dst), device="cpu")
        lh.copy_(ls)
        _same(lh, td, "cpu")


def test_copy_non_contiguous_both_sides(device):
    tb = torch.arange(24.0).reshape(2, 3, 4)
    lb = to_lucid(tb, device)
    ld, td = lucid.zeros(4, 3, 2, device=device).transpose(0, 2), torch.zeros(4, 3, 2).transpose(0, 2)
    ld.copy_(lb[:, :, :])
    td.copy_(tb)
    _same(ld, td, device)
    ld2, td2 = lucid.zeros(6, 4, device=device), torch.zeros(6, 4)
    ld2[::3].copy_(lb.transpose(0, 1)[1:3, 0])
    td2[::3].copy_(tb.transpose(0, 1)[1:3, 0])
    _same(ld2, td2, device)
    if device != "cpu":  # a strided host source into a strided device destination
        ld3 = lucid.zeros(4, 3, 2, device=device).transpose(0, 2)
        ld3.copy_(to_lucid(tb).transpose(1, 2).transpose(1, 2))
        _same(ld3, td, device)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "float64"])
@pytest.mark.parametrize("shift", [1, 3, 7, 16, 40])
def test_copy_rows_a_few_bytes_along(dtype, shift, device):
    # Rows copied a few bytes past where they are read modulo 4096 take another route on
    # the CPU (Note [4K aliasing], core/copy.cpp): rows of 4 KiB and of 10 KiB, both
    # directions, and roll, whose halves are such copies.
    for cols in (1024, 2560):
        t = (torch.randn(6, cols, generator=torch.Generator().manual_seed(shift)) * 100).to(getattr(torch, dtype))
        lt = to_lucid(t, device)
        for ahead in (True, False):  # the destination `shift` elements after its source, or before
            dst, src = (slice(shift, None), slice(None, cols - shift)) if ahead else \
                (slice(None, cols - shift), slice(shift, None))
            lo_out, to_out = lucid.zeros(6, cols, dtype=lt.dtype, device=device), torch.zeros(6, cols, dtype=t.dtype)
            lo_out[:, dst].copy_(lt[:, src])
            to_out[:, dst].copy_(t[:, src])
            _same(lo_out, to_out, device)
        _same(lt.roll(shift, -1), t.roll(shift, -1), device)
        _same(lt.flip(-1), t.flip(-1), device)


def test_copy_into_view_writes_base(device):
    lb, tb = lucid.zeros(3, 4, device=device), torch.zeros(3, 4)
    lb[:, 1].copy_(lucid.tensor([1.0, 2.0, 3.0], device=device))
    tb[:, 1].copy_(torch.tensor([1.0, 2.0, 3.0]))
    _same(lb, tb, device)


def test_copy_shape_mismatch(device):
    with pytest.raises(RuntimeError) as te:
        torch.zeros(2, 3).copy_(torch.ones(2))
    with pytest.raises(type(te.value), match="broadcast|size"):
        lucid.zeros(2, 3, device=device).copy_(lucid.ones(2, device=device))


def test_copy_from_non_tensor():
    with pytest.raises(TypeError) as te:
        torch.zeros(2).copy_([1, 2])
    with pytest.raises(type(te.value), match="Tensor"):
        lucid.zeros(2).copy_([1, 2])


# ---- fill_ / zero_ ---------------------------------------------------------------------
@pytest.mark.parametrize("name", DTYPE_NAMES)
@pytest.mark.parametrize("value", [3, 2.9, True, 0, -1.5])
def test_fill(name, value, device):
    if name == "uint8" and value == -1.5:
        pytest.skip("negative float to uint8 is undefined behaviour")
    lt = lucid.zeros(2, 3, dtype=getattr(lucid, name), device=device)
    tt = torch.zeros(2, 3, dtype=getattr(torch, name))
    assert lt.fill_(value) is lt
    tt.fill_(value)
    _same(lt, tt, device)


def test_fill_views_and_tensors(device):
    lb, tb = lucid.arange(12, device=device).reshape(3, 4), torch.arange(12).reshape(3, 4)
    lb[:, 1:3].fill_(-1)
    tb[:, 1:3].fill_(-1)
    _same(lb, tb, device)
    lb.t()[0].fill_(lucid.tensor(7, device=device))
    tb.t()[0].fill_(torch.tensor(7))
    _same(lb, tb, device)
    lb[2].fill_(lucid.tensor(-3))  # a 0-d CPU value fills a tensor on any device, as in torch
    tb[2].fill_(torch.tensor(-3))
    _same(lb, tb, device)
    lc, tc = lucid.zeros(2, dtype=lucid.complex64, device=device), torch.zeros(2, dtype=torch.complex64)
    _same(lc.fill_(1 - 2j), tc.fill_(1 - 2j), device)
    with pytest.raises(RuntimeError, match="0-dimension"):
        lb.fill_(lucid.tensor([4], device=device))


def test_zero(device):
    lb, tb = lucid.arange(12.0, device=device).reshape(3, 4), torch.arange(12.0).reshape(3, 4)
    assert lb[1].zero_() is not None
    tb[1].zero_()
    _same(lb, tb, device)
    z = lb.zero_()
    assert z is lb and lb.tolist() == [[0.0] * 4] * 3


# ---- version counter -------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda m: m.zeros(3), lambda m: m.ones(3), lambda m: m.full((3,), 2.0),
    lambda m: m.tensor([1.0, 2.0, 3.0]), lambda m: m.arange(3.0), lambda m: m.empty(3),
    lambda m: m.tensor([1.0, 2.0, 3.0]).clone(), lambda m: m.eye(3)[0],
    lambda m: m.tensor([1, 2, 3]).float(), lambda m: m.rand(3),
])
def test_fresh_tensor_version_is_zero(make):
    assert make(lucid)._version == make(torch)._version == 0


def test_version_increments_on_each_inplace_write(device):
    lt, tt = lucid.zeros(2, 3, device=device), torch.zeros(2, 3)
    seq_l, seq_t = [lt._version], [tt._version]
    for op in [lambda t, m: t.fill_(1), lambda t, m: t.zero_(),
               lambda t, m: t.__setitem__(0, 3), lambda t, m: t.copy_(m.ones(2, 3, device=t.device)),
               lambda t, m: t.__setitem__((slice(None), 1), m.tensor([5.0, 6.0], device=t.device)),
               lambda t, m: t.uniform_(), lambda t, m: t.normal_()]:
        op(lt, lucid)
        op(tt, torch)
        seq_l.append(lt._version - seq_l[0])
        seq_t.append(tt._version - seq_t[0])
    assert seq_l[1:] == seq_t[1:]


def test_version_is_shared_by_views(device):
    lb, tb = lucid.zeros(2, 3, 4, device=device), torch.zeros(2, 3, 4)
    lviews = [lb[0], lb.view(24), lb.transpose(0, 1), lb.detach(), lb[:, ::2]]
    tviews = [tb[0], tb.view(24), tb.transpose(0, 1), tb.detach(), tb[:, ::2]]
    lviews[0].fill_(1)
    tviews[0].fill_(1)
    lviews[2][0].zero_()
    tviews[2][0].zero_()
    assert [v._version - lb._version for v in lviews] == [0] * len(lviews)
    assert lb._version - lviews[0]._version == tb._version - tviews[0]._version
    # a clone has its own counter
    lc, tc = lb.clone(), tb.clone()
    before_l, before_t = lc._version, tc._version
    lb.fill_(2)
    tb.fill_(2)
    assert lc._version - before_l == tc._version - before_t == 0


@pytest.mark.parametrize("n", [7, 8, 1001, 100_003])  # tails, one vector, many, split over threads
def test_half_casts_of_long_rows_match_torch_bit_for_bit(n, device):
    # Every kind of float32 -> float16 rounding case: random bit patterns (normals,
    # subnormals, overflow to inf, NaN), exact ties (odd and even), -0, the largest
    # half, and values just past it; then back to float32.
    gen = torch.Generator().manual_seed(n)
    bits = torch.randint(-2 ** 31, 2 ** 31, (n,), generator=gen, dtype=torch.int64).to(torch.int32)
    t = bits.view(torch.float32).clone()
    special = torch.tensor([0.0, -0.0, 65504.0, 65520.0, 65519.99, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 2 ** -24,
                            2 ** -25, 3 * 2 ** -25, 2 ** -14 - 2 ** -25, float("inf"), -float("inf"), float("nan")])
    t[:min(n, len(special))] = special[:n]
    lt = lucid.from_numpy(t.numpy()).clone().to(device)
    # contiguous (the vectorised cast), strided, a contiguous view one element off the
    # alignment of a vector, and bfloat16's rounding
    makes = [(lambda x: x.half(), lambda x: x.half()), (lambda x: x[::2].half(), lambda x: x[::2].half()),
             (lambda x: x[1:].half(), lambda x: x[1:].half()), (lambda x: x.bfloat16(), lambda x: x.bfloat16())]
    for make_l, make_t in makes:
        lh, th = make_l(lt), make_t(t)
        assert lh.device.type == device
        l_bits = torch.frombuffer(bytearray(lh.cpu().contiguous().to_bytes()), dtype=torch.int16)
        t_nan = th.isnan()
        assert torch.equal(l_bits[~t_nan], th.view(torch.int16)[~t_nan])
        assert torch.tensor(lucid.isnan(lh).tolist(), dtype=torch.bool).equal(t_nan)
        back = lh.float()
        tb = th.float()
        lb = torch.frombuffer(bytearray(back.cpu().contiguous().to_bytes()), dtype=torch.float32)
        assert torch.equal(lb[~t_nan], tb[~t_nan]) and bool(lb[t_nan].isnan().all())
