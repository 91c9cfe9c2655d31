"""Shape and gather/scatter ops against PyTorch: a registry of samples, each a function
f(module, *inputs) run with module=lucid on lucid inputs and module=torch on the same
values as torch tensors. Checked per sample: forward over dtypes, backward against
torch (float64, a random output gradient) and lucid.autograd.gradcheck; errors raise
the exception type torch raises. Every check runs on each device: on the GPU the
results must also be on the GPU and equal lucid's CPU results."""

import zlib

import pytest
import torch

import lucid
import lucid.nn.functional  # noqa: F401
import torch.nn.functional  # noqa: F401
from conftest import DTYPE_NAMES, default_device, dtype_name, raises_by_sync, to_lucid, to_torch

GEN = torch.Generator().manual_seed(0)
pytestmark = pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter:UserWarning")


def mk(dtype, *shape):
    """Random values of `dtype` (small integers, so every dtype holds them exactly)."""
    dt = getattr(torch, dtype)
    if dt == torch.bool:
        return torch.randint(0, 2, shape, generator=GEN).bool()
    if dt.is_floating_point or dt.is_complex:
        return (torch.randn(shape, generator=GEN, dtype=torch.float64) * 3).to(dt)
    return torch.randint(-5 if dt != torch.uint8 else 0, 9, shape, generator=GEN).to(dt)


def idx(high, *shape):
    return torch.randint(0, high, shape, generator=GEN)


def mask(*shape):
    return torch.randint(0, 2, shape, generator=GEN).bool()


def F(m):
    return m.nn.functional


# (id, f(module, *inputs), make_inputs(dtype) -> list of torch tensors, differentiable)
SAMPLES = [
    ("cat_dim0", lambda m, a, b: m.cat([a, b]), lambda d: [mk(d, 2, 3), mk(d, 4, 3)], True),
    ("cat_neg", lambda m, a, b: m.cat((a, b), -1), lambda d: [mk(d, 2, 3), mk(d, 2, 1)], True),
    ("cat_three_nc", lambda m, a, b, c: m.cat([a.t(), b, c.t()], 1),
     lambda d: [mk(d, 2, 3), mk(d, 3, 4), mk(d, 1, 3)], True),
    ("concat", lambda m, a, b: m.concat([a, b], 1), lambda d: [mk(d, 2, 3), mk(d, 2, 2)], True),
    ("concatenate", lambda m, a, b: m.concatenate([a, b], axis=0), lambda d: [mk(d, 2), mk(d, 3)], True),
    ("cat_skip_empty", lambda m, a, b: m.cat([a, b, a], 1), lambda d: [mk(d, 0), mk(d, 2, 3)], True),
    ("cat_empty", lambda m, a, b: m.cat([a, b], 0), lambda d: [mk(d, 0, 3), mk(d, 2, 3)], True),
    ("stack", lambda m, a, b: m.stack([a, b]), lambda d: [mk(d, 2, 3), mk(d, 2, 3)], True),
    ("stack_neg", lambda m, a, b: m.stack([a, b], -1), lambda d: [mk(d, 2, 3), mk(d, 2, 3)], True),
    ("hstack", lambda m, a, b: m.hstack([a, b]), lambda d: [mk(d, 2, 3), mk(d, 2, 1)], True),
    ("hstack_1d", lambda m, a, b: m.hstack([a, b]), lambda d: [mk(d, 2), mk(d, 3)], True),
    ("vstack", lambda m, a, b: m.vstack([a, b]), lambda d: [mk(d, 3), mk(d, 2, 3)], True),
    ("split_int", lambda m, a: m.split(a, 2), lambda d: [mk(d, 5, 3)], True),
    ("split_list_neg", lambda m, a: a.split([1, 2], -1), lambda d: [mk(d, 2, 3)], True),
    ("split_empty", lambda m, a: m.split(a, 2, 1), lambda d: [mk(d, 2, 0)], False),
    ("chunk", lambda m, a: m.chunk(a, 3), lambda d: [mk(d, 7, 2)], True),
    ("chunk_more", lambda m, a: a.chunk(4, 1), lambda d: [mk(d, 2, 3)], True),
    ("chunk_empty", lambda m, a: m.chunk(a, 3), lambda d: [mk(d, 0, 2)], False),
    ("tensor_split_int", lambda m, a: m.tensor_split(a, 3), lambda d: [mk(d, 7, 2)], True),
    ("tensor_split_idx", lambda m, a: m.tensor_split(a, [1, 4, -1], dim=0), lambda d: [mk(d, 6, 2)], True),
    ("tensor_split_idx_desc", lambda m, a: a.tensor_split([3, 1], 1), lambda d: [mk(d, 2, 5)], True),
    ("split_partial_use", lambda m, a: m.split(a, [1, 3], 1)[1] * 2, lambda d: [mk(d, 2, 4)], True),
    ("unbind_partial_use", lambda m, a: a.unbind(0)[1] + a.unbind(0)[2], lambda d: [mk(d, 3, 2)], True),
    ("unbind_empty_dim", lambda m, a: a.unbind(1), lambda d: [mk(d, 2, 0)], False),
    ("unbind", lambda m, a: a.unbind(1), lambda d: [mk(d, 2, 3)], True),
    ("unbind_fn_neg", lambda m, a: m.unbind(a, -1), lambda d: [mk(d, 2, 3)], True),
    ("movedim", lambda m, a: m.movedim(a, 0, -1), lambda d: [mk(d, 2, 3, 4)], True),
    ("movedim_multi", lambda m, a: a.movedim((0, 1), (2, 0)), lambda d: [mk(d, 2, 3, 4)], True),
    ("movedim_0d", lambda m, a: m.movedim(a[0, 0], 0, -1), lambda d: [mk(d, 2, 3)], True),
    ("moveaxis", lambda m, a: m.moveaxis(a, [1], [0]), lambda d: [mk(d, 2, 3, 4)], True),
    ("swapaxes", lambda m, a: m.swapaxes(a, 0, 2), lambda d: [mk(d, 2, 3, 4)], True),
    ("swapdims", lambda m, a: m.swapdims(a, -1, 0), lambda d: [mk(d, 2, 3, 4)], True),
    ("flip", lambda m, a: m.flip(a, [0, 2]), lambda d: [mk(d, 2, 3, 4)], True),
    ("flip_method_nc", lambda m, a: a.transpose(0, 1).flip(-1), lambda d: [mk(d, 2, 3, 4)], True),
    ("flip_none", lambda m, a: a.flip([]), lambda d: [mk(d, 2, 3)], True),
    ("fliplr", lambda m, a: m.fliplr(a), lambda d: [mk(d, 2, 3)], True),
    ("flipud", lambda m, a: a.flipud(), lambda d: [mk(d, 2, 3)], True),
    ("roll_flat", lambda m, a: m.roll(a, 2), lambda d: [mk(d, 2, 3)], True),
    ("roll_dims", lambda m, a: m.roll(a, (1, -5), (0, -1)), lambda d: [mk(d, 3, 4)], True),
    ("roll_nc", lambda m, a: a.t().roll(1, 0), lambda d: [mk(d, 3, 4)], True),
    ("repeat", lambda m, a: a.repeat(2, 1, 3), lambda d: [mk(d, 2, 3)], True),
    ("repeat_list", lambda m, a: a.repeat([2, 2]), lambda d: [mk(d, 2, 3)], True),
    ("repeat_ones", lambda m, a: a.repeat(1, 1), lambda d: [mk(d, 2, 3)], True),
    ("repeat_zero", lambda m, a: a.repeat(0, 2), lambda d: [mk(d, 2, 3)], True),
    ("repeat_0d", lambda m, a: a.sum().repeat(3) if a.dtype.is_floating_point else a[0, 0].repeat(3),
     lambda d: [mk(d, 2, 3)], True),
    ("tile", lambda m, a: m.tile(a, (2,)), lambda d: [mk(d, 2, 3)], True),
    ("tile_more", lambda m, a: a.tile(2, 1, 2), lambda d: [mk(d, 2, 3)], True),
    ("expand_as", lambda m, a, b: a.expand_as(b), lambda d: [mk(d, 3, 1), mk(d, 2, 3, 4)], True),
    ("gather", lambda m, a, i: m.gather(a, 1, i), lambda d: [mk(d, 3, 4), idx(4, 3, 5)], True),
    ("gather_dim0_small", lambda m, a, i: a.gather(0, i), lambda d: [mk(d, 3, 4), idx(3, 2, 2)], True),
    ("gather_neg_nc", lambda m, a, i: m.gather(a.t(), -1, i), lambda d: [mk(d, 4, 3), idx(4, 3, 2)], True),
    ("gather_repeat", lambda m, a, i: m.gather(a, 0, i), lambda d: [mk(d, 3), torch.tensor([0, 0, 2, 0])], True),
    ("gather_empty", lambda m, a, i: m.gather(a, 0, i), lambda d: [mk(d, 3, 2), idx(3, 0, 2)], True),
    ("gather_0d", lambda m, a, i: m.gather(a, 0, i), lambda d: [mk(d, 3)[0], torch.tensor(0)], True),
    ("scatter_src", lambda m, a, i, s: m.scatter(a, 0, i, s),
     lambda d: [mk(d, 3, 4), torch.tensor([[0, 1, 2, 0]]), mk(d, 2, 4)], True),
    ("scatter_src_kw_nc", lambda m, a, i, s: a.t().scatter(1, i, src=s),
     lambda d: [mk(d, 3, 4), torch.tensor([[2, 0], [1, 0]]), mk(d, 2, 3)], True),
    ("scatter_src_same_shape", lambda m, a, i, s: m.scatter(a, 1, i, s),
     lambda d: [mk(d, 3, 4), torch.tensor([[3, 1], [0, 2], [1, 0]]), mk(d, 3, 2)], True),
    ("scatter_int32_index", lambda m, a, i, s: m.scatter(a, 0, i.int(), s),
     lambda d: [mk(d, 3, 2), torch.tensor([[2, 0]]), mk(d, 1, 2)], True),
    ("gather_int32_index", lambda m, a, i: m.gather(a, 0, i.int()), lambda d: [mk(d, 3, 2), idx(3, 4, 2)], True),
    ("scatter_value", lambda m, a, i: m.scatter(a, 1, i, value=2), lambda d: [mk(d, 3, 4), idx(4, 2, 2)], True),
    ("scatter_value_method", lambda m, a, i: a.scatter(-1, i, 1), lambda d: [mk(d, 3, 4), idx(4, 3, 2)], True),
    ("scatter_reduce_add", lambda m, a, i, s: a.scatter(0, i, s, reduce="add"),
     lambda d: [mk(d, 3, 4), idx(3, 4, 4), mk(d, 4, 4)], False),
    ("scatter_reduce_mul", lambda m, a, i: a.scatter(0, i, 2, reduce="multiply"),
     lambda d: [mk(d, 3, 4), idx(3, 2, 4)], False),
    ("scatter_add", lambda m, a, i, s: m.scatter_add(a, 0, i, s),
     lambda d: [mk(d, 3, 4), idx(3, 5, 4), mk(d, 5, 4)], True),
    ("scatter_add_small_idx", lambda m, a, i, s: a.scatter_add(1, i, s),
     lambda d: [mk(d, 3, 4), idx(4, 2, 2), mk(d, 3, 3)], True),
    ("index_select", lambda m, a, i: m.index_select(a, 1, i), lambda d: [mk(d, 3, 4), torch.tensor([3, 0, 0])], True),
    ("index_select_neg_nc", lambda m, a, i: a.t().index_select(-2, i), lambda d: [mk(d, 3, 4), idx(4, 5)], True),
    ("index_select_int32", lambda m, a, i: m.index_select(a, 0, i.int()), lambda d: [mk(d, 3, 2), idx(3, 4)], True),
    ("index_select_0d_idx", lambda m, a, i: m.index_select(a, 0, i), lambda d: [mk(d, 3, 2), torch.tensor(1)], True),
    ("index_select_0d_input", lambda m, a, i: m.index_select(a[1], 0, i), lambda d: [mk(d, 3), torch.tensor([0])],
     True),
    ("gather_0d_input", lambda m, a, i: m.gather(a[1], 0, i), lambda d: [mk(d, 3), torch.tensor([0, 0])], True),
    ("index_select_rows", lambda m, a, i: m.index_select(a, 0, i), lambda d: [mk(d, 4, 70), idx(4, 6)], True),
    ("index_select_rows_nc", lambda m, a, i: m.index_select(a.transpose(0, 2), 0, i),
     lambda d: [mk(d, 8, 9, 4), idx(4, 5)], True),
    ("index_select_empty", lambda m, a, i: m.index_select(a, 0, i), lambda d: [mk(d, 3, 2), idx(3, 0)], True),
    ("index_add", lambda m, a, i, s: m.index_add(a, 0, i, s),
     lambda d: [mk(d, 3, 2), torch.tensor([0, 2, 0, 1]), mk(d, 4, 2)], True),
    # slices of 16 elements and more: added a slice at a time (cpu::index_add_slices)
    ("index_add_slices", lambda m, a, i, s: m.index_add(a, 1, i, s),
     lambda d: [mk(d, 3, 5, 40), torch.tensor([4, 0, 4, 2, 4, 1]), mk(d, 3, 6, 40)], True),
    ("index_add_rows_alpha", lambda m, a, i, s: a.index_add(0, i, s, alpha=2),
     lambda d: [mk(d, 6, 20), torch.tensor([5, 5, 0, 3, 5]), mk(d, 5, 20)], True),
    ("masked_fill", lambda m, a, k: m.masked_fill(a, k, 7), lambda d: [mk(d, 3, 4), mask(3, 4)], True),
    ("masked_fill_bcast_mask", lambda m, a, k: a.masked_fill(k, 0), lambda d: [mk(d, 3, 4), mask(4)], True),
    ("masked_fill_bcast_self", lambda m, a, k: m.masked_fill(a, k, 1), lambda d: [mk(d, 4), mask(2, 4)], True),
    ("masked_fill_tensor_value", lambda m, a, k, v: a.masked_fill(k, v),
     lambda d: [mk(d, 3, 4), mask(3, 4), mk(d)], True),
    ("masked_fill_nc", lambda m, a, k: a.t().masked_fill(k, -1), lambda d: [mk(d, 3, 4), mask(4, 3)], True),
    ("take_along_dim", lambda m, a, i: m.take_along_dim(a, i, 1), lambda d: [mk(d, 3, 4), idx(4, 3, 2)], True),
    ("take_along_dim_bcast", lambda m, a, i: m.take_along_dim(a, i, dim=0), lambda d: [mk(d, 3, 4), idx(3, 2, 1)],
     True),
    ("take_along_dim_flat_int32", lambda m, a, i: m.take_along_dim(a, i.int()), lambda d: [mk(d, 3, 4), idx(12, 3)],
     True),
    ("take_along_dim_flat", lambda m, a, i: a.take_along_dim(i), lambda d: [mk(d, 3, 4), idx(12, 5)], True),
    ("tril", lambda m, a: m.tril(a), lambda d: [mk(d, 3, 4)], True),
    ("tril_k", lambda m, a: a.tril(-1), lambda d: [mk(d, 2, 3, 4)], True),
    ("triu_k_nc", lambda m, a: m.triu(a.t(), diagonal=1), lambda d: [mk(d, 4, 3)], True),
    ("triu_big_k", lambda m, a: a.triu(5), lambda d: [mk(d, 3, 4)], True),
    ("tril_neg_big", lambda m, a: a.tril(-7), lambda d: [mk(d, 3, 4)], True),
    ("diag_1d", lambda m, a: m.diag(a), lambda d: [mk(d, 3)], True),
    ("diag_1d_k", lambda m, a: m.diag(a, 2), lambda d: [mk(d, 3)], True),
    ("diag_1d_negk", lambda m, a: a.diag(-1), lambda d: [mk(d, 3)], True),
    ("diag_2d", lambda m, a: m.diag(a), lambda d: [mk(d, 3, 4)], True),
    ("diag_2d_k", lambda m, a: m.diag(a, -1), lambda d: [mk(d, 3, 4)], True),
    ("diagonal", lambda m, a: m.diagonal(a), lambda d: [mk(d, 3, 4)], True),
    ("diagonal_args", lambda m, a: a.diagonal(1, -1, 0), lambda d: [mk(d, 3, 2, 4)], True),
    ("diagonal_neg_off", lambda m, a: m.diagonal(a, offset=-2, dim1=1, dim2=2), lambda d: [mk(d, 2, 4, 3)], True),
    ("diagonal_out_of_range", lambda m, a: m.diagonal(a, 9), lambda d: [mk(d, 3, 4)], True),
    ("trace", lambda m, a: m.trace(a), lambda d: [mk(d, 3, 4)], True),
    ("trace_method_nc", lambda m, a: a.t().trace(), lambda d: [mk(d, 4, 3)], True),
    ("pad_constant", lambda m, a: F(m).pad(a, (1, 2)), lambda d: [mk(d, 2, 3)], True),
    ("pad_constant_value", lambda m, a: F(m).pad(a, (1, 0, 0, 2), value=3), lambda d: [mk(d, 2, 3)], True),
    ("pad_constant_neg", lambda m, a: F(m).pad(a, (-1, 1, 1, -1)), lambda d: [mk(d, 2, 3)], True),
    ("pad_constant_3d", lambda m, a: F(m).pad(a, (0, 1, 1, 0, 2, 1)), lambda d: [mk(d, 2, 2, 2)], True),
]

NONCONST_PADS = [
    ("pad_reflect_1d", lambda m, a: F(m).pad(a, (2, 1), mode="reflect"), lambda d: [mk(d, 2, 4)], True),
    ("pad_reflect_2d", lambda m, a: F(m).pad(a, (1, 2, 2, 1), mode="reflect"), lambda d: [mk(d, 1, 3, 4)], True),
    ("pad_replicate_1d", lambda m, a: F(m).pad(a, (3, 1), mode="replicate"), lambda d: [mk(d, 1, 2, 3)], True),
    ("pad_replicate_3d", lambda m, a: F(m).pad(a, (1, 1, 2, 0, 0, 1), mode="replicate"),
     lambda d: [mk(d, 1, 2, 2, 3)], True),
    ("pad_circular_2d", lambda m, a: F(m).pad(a, (1, 2, 3, 0), mode="circular"), lambda d: [mk(d, 1, 1, 3, 4)],
     True),
    ("pad_circular_1d", lambda m, a: F(m).pad(a, (2, 2), mode="circular"), lambda d: [mk(d, 2, 3)], True),
    # negative pads: reflect and replicate read through the uncropped input, circular wraps
    # around what the crop leaves (torch's rules)
    ("pad_circular_crop", lambda m, a: F(m).pad(a, (-2, 3, 1, -1), mode="circular"), lambda d: [mk(d, 1, 1, 4, 7)], True),
    ("pad_reflect_crop", lambda m, a: F(m).pad(a, (3, -1), mode="reflect"), lambda d: [mk(d, 2, 7)], True),
    ("pad_replicate_crop", lambda m, a: F(m).pad(a, (-2, 3), mode="replicate"), lambda d: [mk(d, 2, 7)], True),
]
SAMPLES += NONCONST_PADS
# torch's non-constant padding has kernels for floating dtypes only.
FLOAT_ONLY = {s[0] for s in NONCONST_PADS} | {"trace", "trace_method_nc"}
BY_ID = {s[0]: s for s in SAMPLES}


def _run(m, fn, inputs):
    out = fn(m, *inputs)
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


@pytest.fixture(autouse=True)
def _seed(request):
    """Each test draws the same values whatever runs before it."""
    GEN.manual_seed(zlib.crc32(request.node.name.encode()))


def _check_same(lo, to, loose=False, device=None):
    device = device or default_device()
    assert len(lo) == len(to)
    for a, b in zip(lo, to):
        assert isinstance(a, lucid.Tensor)
        assert a.device.type == device, (a.device, device)
        assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
        assert dtype_name(a.dtype) == dtype_name(b.dtype), (a.dtype, b.dtype)
        tol = {"rtol": 2e-2, "atol": 7e-2} if loose else {}
        torch.testing.assert_close(to_torch(a), b, equal_nan=True, **tol)


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("sid", list(BY_ID))
def test_forward(sid, dtype, device):
    _, fn, make, _ = BY_ID[sid]
    if sid in FLOAT_ONLY and dtype not in ("float32", "float64"):
        pytest.skip("torch has no kernel for this dtype")
    tin = make(dtype)
    lin = [to_lucid(t, device) for t in tin]
    try:
        texp = _run(torch, fn, tin)
    except (RuntimeError, NotImplementedError) as e:  # torch has no kernel for the dtype: neither must work silently
        with pytest.raises(type(e) if not isinstance(e, NotImplementedError) else Exception):
            _run(lucid, fn, lin)
        return
    # Reductions into one element round after every step, in an order of their own.
    loose = sid.startswith(("scatter_reduce", "scatter_add", "index_add")) and dtype in ("float16", "bfloat16")
    lout = _run(lucid, fn, lin)
    _check_same(lout, texp, loose, device)
    if device != "cpu" and not loose:  # the GPU computes what the CPU computes (sums in its own order)
        for a, b in zip(lout, _run(lucid, fn, [to_lucid(t, "cpu") for t in tin])):
            torch.testing.assert_close(to_torch(a), to_torch(b), equal_nan=True)


DIFF = [s[0] for s in SAMPLES if s[3]]
TORCH_NO_BACKWARD = {"scatter_src", "scatter_src_kw_nc", "scatter_add_small_idx"}


def _grad_inputs(make, device=None):
    device = device or default_device()
    tin = make("float64")
    diff = [t.is_floating_point() for t in tin]
    tl = [t.clone().requires_grad_(d) for t, d in zip(tin, diff)]
    ll = [to_lucid(t, device).requires_grad_(d) for t, d in zip(tin, diff)]
    return tl, ll, diff


@pytest.mark.parametrize("sid", DIFF)
def test_backward_vs_torch(sid, device):
    _, fn, make, _ = BY_ID[sid]
    tl, ll, diff = _grad_inputs(make, device)
    tout = _run(torch, fn, tl)
    lout = _run(lucid, fn, ll)
    gs = [torch.randn(o.shape, generator=GEN, dtype=torch.float64) for o in tout]
    pairs = [(o, g) for o, g in zip(tout, gs) if o.requires_grad]
    if not pairs:
        pytest.skip("no differentiable output")
    try:
        torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
    except RuntimeError as e:
        # torch has no backward for a scatter src larger than its index; lucid has
        # (zeros where src is not read), checked by test_gradcheck.
        assert sid in TORCH_NO_BACKWARD, e
        pytest.skip("torch has no backward here")
    lpairs = [(o, to_lucid(g, device)) for o, g in zip(lout, gs) if o.requires_grad]
    assert len(lpairs) == len(pairs)
    lucid.autograd.backward([o for o, _ in lpairs], [g for _, g in lpairs])
    for t, lt, d in zip(tl, ll, diff):
        if not d:
            continue
        if t.grad is None:
            assert lt.grad is None or not to_torch(lt.grad).any()
            continue
        assert lt.grad.device.type == device
        torch.testing.assert_close(to_torch(lt.grad), t.grad)


@pytest.mark.parametrize("sid", DIFF)
def test_gradcheck(sid, device):
    _, fn, make, _ = BY_ID[sid]
    _, ll, _ = _grad_inputs(make, device)

    def f(*xs):
        out = _run(lucid, fn, xs)
        return out if len(out) > 1 else out[0]
    assert lucid.autograd.gradcheck(f, tuple(ll))


@pytest.mark.parametrize("sid", ["gather", "scatter_add", "index_select", "flip", "roll_dims", "repeat", "tril",
                                 "diagonal", "cat_three_nc", "masked_fill", "pad_reflect_2d", "index_add",
                                 "pad_constant_neg"])
def test_double_backward(sid, device):
    """The VJPs are written with ops: gradients of gradients match torch's."""
    _, fn, make, _ = BY_ID[sid]
    tl, ll, diff = _grad_inputs(make, device)
    tout, lout = _run(torch, fn, tl)[0], _run(lucid, fn, ll)[0]
    g = torch.randn(tout.shape, generator=GEN, dtype=torch.float64, requires_grad=True)
    lg = to_lucid(g.detach(), device).requires_grad_()
    tx = [t for t, d in zip(tl, diff) if d]
    lx = [t for t, d in zip(ll, diff) if d]
    tgr = torch.autograd.grad(tout, tx, g, create_graph=True)
    lgr = lucid.autograd.grad(lout, lx, lg, create_graph=True)
    w = [torch.randn(t.shape, generator=GEN, dtype=torch.float64) for t in tgr]
    torch.autograd.backward(list(tgr), w)
    lucid.autograd.backward(list(lgr), [to_lucid(x, device) for x in w])
    torch.testing.assert_close(to_torch(lg.grad), g.grad)


def test_grad_fn_names():
    x = lucid.randn(3, 4, requires_grad=True)
    i = lucid.tensor([[0, 1, 2, 0]])
    assert x.gather(0, i).grad_fn.name() == "GatherBackward0"
    assert x.flip(0).grad_fn.name() == "FlipBackward0"
    assert x.roll(1).grad_fn.name() == "RollBackward0"
    assert x.repeat(2, 1).grad_fn.name() == "RepeatBackward0"
    assert x.tril().grad_fn.name() == "TrilBackward0"
    assert lucid.cat([x, x]).grad_fn.name() == "CatBackward0"
    assert x.diagonal().grad_fn.name() == "DiagonalBackward0"
    assert x.index_select(0, lucid.tensor([1])).grad_fn.name() == "IndexSelectBackward0"
    assert x.split(2)[0].grad_fn.name() == "SplitBackward0"
    assert x.chunk(2)[0].grad_fn.name() == "SplitBackward0"
    assert x.split([1, 2])[1].grad_fn.name() == "SplitWithSizesBackward0"
    assert x.unbind()[2].grad_fn.name() == "UnbindBackward0"
    assert x.scatter_add(0, i, x).grad_fn.name() == "ScatterAddBackward0"
    assert x.masked_fill(x > 0, 1.0).grad_fn.name() == "MaskedFillBackward0"


def test_diagonal_is_a_view():
    x = lucid.zeros(3, 4)
    d = x.diagonal(1)
    d.fill_(5)
    t = torch.zeros(3, 4)
    t.diagonal(1).fill_(5)
    assert x.tolist() == t.tolist()
    assert d.stride() == t.diagonal(1).stride() and d.storage_offset() == t.diagonal(1).storage_offset()


def test_outputs_do_not_alias():
    x = lucid.arange(6).reshape(2, 3)
    for out in (x.repeat(1, 1), x.flip([]), x.roll(0), lucid.tile(x, (1,)), lucid.cat([x])):
        out.fill_(0)
        assert x.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_split_views():
    x = lucid.arange(6)
    a, b = x.split(3)
    b.fill_(0)
    assert x.tolist() == [0, 1, 2, 0, 0, 0]


def test_cat_type_promotion():
    for a, b in [("int32", "float16"), ("uint8", "int8"), ("bool", "int64"), ("bfloat16", "float16"),
                 ("float32", "complex64")]:
        ta, tb = mk(a, 2), mk(b, 3)
        out = lucid.cat([to_lucid(ta), to_lucid(tb)])
        exp = torch.cat([ta, tb])
        assert dtype_name(out.dtype) == dtype_name(exp.dtype)
        torch.testing.assert_close(to_torch(out), exp)


# on the CPU: scatter_'s repeated indices, where the last write wins there alone
# (Note [Writes to repeated indices on the GPU])
@pytest.mark.usefixtures("cpu_default")
@pytest.mark.parametrize("name", ["masked_fill_", "scatter_", "scatter_add_", "index_add_", "tril_", "triu_"])
def test_inplace_variants(name):
    x = mk("float64", 3, 4)
    args = {
        "masked_fill_": (mask(3, 4), 2.0), "scatter_": (0, idx(3, 2, 4), mk("float64", 2, 4)),
        "scatter_add_": (0, idx(3, 2, 4), mk("float64", 2, 4)),
        "index_add_": (0, torch.tensor([2, 0]), mk("float64", 2, 4)), "tril_": (), "triu_": (1,),
    }[name]
    la = [to_lucid(a) if isinstance(a, torch.Tensor) else a for a in args]
    lx = to_lucid(x)
    # Through a graph: the gradient of the unchanged elements flows back.
    tw = x.clone().requires_grad_()
    lw = to_lucid(x).requires_grad_()
    ty, ly = tw * 1, lw * 1
    assert getattr(lx, name)(*la) is lx
    getattr(x, name)(*args)
    torch.testing.assert_close(to_torch(lx), x)
    getattr(ty, name)(*args)
    getattr(ly, name)(*la)
    ty.sum().backward()
    ly.sum().backward()
    torch.testing.assert_close(to_torch(lw.grad), tw.grad)


# ---- errors: the exception type torch raises ---------------------------------------------------

ERRORS = [
    ("cat_empty_list", lambda m: m.cat([])),
    ("cat_0d", lambda m: m.cat([m.tensor(1.0), m.tensor(2.0)])),
    ("cat_ndim", lambda m: m.cat([m.zeros(2, 3), m.zeros(2, 3, 1)])),
    ("cat_size", lambda m: m.cat([m.zeros(2, 3), m.zeros(3, 3)], 1)),
    ("cat_dim", lambda m: m.cat([m.zeros(2, 3)], 2)),
    ("cat_not_seq", lambda m: m.cat(m.zeros(2, 3))),
    ("stack_size", lambda m: m.stack([m.zeros(2), m.zeros(3)])),
    ("stack_empty", lambda m: m.stack([])),
    ("split_sizes", lambda m: m.zeros(5).split([2, 2])),
    ("split_neg", lambda m: m.zeros(5).split(-1)),
    ("split_zero", lambda m: m.zeros(5).split(0)),
    ("chunk_zero", lambda m: m.zeros(5).chunk(0)),
    ("tensor_split_zero", lambda m: m.zeros(5).tensor_split(0)),
    ("unbind_0d", lambda m: m.tensor(1.0).unbind()),
    ("unbind_fn_0d", lambda m: m.unbind(m.tensor(1.0), -1)),
    ("roll_0d_dim", lambda m: m.tensor(1.0).roll(1, 0)),
    ("repeat_no_args", lambda m: m.zeros(2).repeat()),
    ("index_select_scalar_many", lambda m: m.tensor(5.0).index_select(0, m.tensor([0, 0]))),
    ("index_add_source_shape", lambda m: m.zeros(3, 2).index_add(0, m.tensor([0, 0]), m.ones(2, 3))),
    ("index_add_count", lambda m: m.zeros(3, 2).index_add(0, m.tensor([0, 0]), m.ones(3, 2))),
    ("take_along_dim_dtype", lambda m: m.take_along_dim(m.zeros(3), m.tensor([0], dtype=m.int16))),
    ("take_along_dim_int32_dim", lambda m: m.take_along_dim(m.zeros(3), m.tensor([0], dtype=m.int32), 0)),
    ("pad_replicate_empty", lambda m: m.nn.functional.pad(m.ones(1, 0, 2), (1, 1), mode="replicate")),
    ("pad_bad_mode", lambda m: m.nn.functional.pad(m.ones(1, 2), (1, 1), mode="foo")),
    ("unbind_dim", lambda m: m.zeros(2, 3).unbind(2)),
    ("movedim_len", lambda m: m.zeros(2, 3).movedim([0, 1], [0])),
    ("movedim_dup", lambda m: m.zeros(2, 3).movedim([0, 0], [0, 1])),
    ("movedim_range", lambda m: m.zeros(2, 3).movedim(2, 0)),
    ("flip_dup", lambda m: m.zeros(2, 3).flip(0, 0)),
    ("flip_range", lambda m: m.zeros(2, 3).flip(2)),
    ("roll_align", lambda m: m.zeros(2, 3).roll((1, 2), 0)),
    ("roll_range", lambda m: m.zeros(2, 3).roll(1, 3)),
    ("repeat_few", lambda m: m.zeros(2, 3).repeat(2)),
    ("repeat_neg", lambda m: m.zeros(2, 3).repeat(2, -1)),
    ("gather_dtype", lambda m: m.zeros(3).gather(0, m.tensor([0], dtype=m.int16))),
    ("gather_oob", lambda m: m.zeros(3).gather(0, m.tensor([3]))),
    ("gather_neg_index", lambda m: m.zeros(3).gather(0, m.tensor([-1]))),
    ("gather_ndim", lambda m: m.zeros(3, 2).gather(0, m.tensor([0]))),
    ("gather_shape", lambda m: m.zeros(3, 2).gather(0, m.zeros(2, 3, dtype=m.int64))),
    ("gather_dim", lambda m: m.zeros(3, 2).gather(2, m.zeros(2, 2, dtype=m.int64))),
    ("scatter_oob", lambda m: m.zeros(3).scatter(0, m.tensor([5]), m.ones(1))),
    ("scatter_dtype_src", lambda m: m.zeros(3).scatter(0, m.tensor([1]), m.ones(1, dtype=m.float64))),
    ("scatter_index_dtype_int8", lambda m: m.zeros(3).scatter(0, m.tensor([1], dtype=m.int8), 1.0)),
    ("scatter_index_dtype", lambda m: m.zeros(3).scatter(0, m.tensor([1.0]), 1.0)),
    ("scatter_src_small", lambda m: m.zeros(3, 3).scatter(0, m.zeros(2, 2, dtype=m.int64), m.ones(1, 1))),
    ("scatter_bad_reduce", lambda m: m.zeros(3).scatter(0, m.tensor([1]), m.ones(1), reduce="max")),
    ("scatter_add_oob", lambda m: m.zeros(3).scatter_add(0, m.tensor([-1]), m.ones(1))),
    ("index_select_oob", lambda m: m.zeros(3).index_select(0, m.tensor([3]))),
    ("index_select_neg", lambda m: m.zeros(3).index_select(0, m.tensor([-1]))),
    ("index_select_2d_index", lambda m: m.zeros(3).index_select(0, m.zeros(1, 1, dtype=m.int64))),
    ("index_select_float_index", lambda m: m.zeros(3).index_select(0, m.tensor([0.0]))),
    ("index_add_oob", lambda m: m.zeros(3).index_add(0, m.tensor([3]), m.ones(1))),
    ("index_add_dtype", lambda m: m.zeros(3).index_add(0, m.tensor([0]), m.ones(1, dtype=m.float64))),
    ("masked_fill_mask_dtype", lambda m: m.zeros(3).masked_fill(m.ones(3), 1.0)),
    ("masked_fill_value_dim", lambda m: m.zeros(3).masked_fill(m.ones(3, dtype=m.bool), m.ones(1))),
    ("masked_fill_bcast", lambda m: m.zeros(3).masked_fill(m.ones(2, dtype=m.bool), 1.0)),
    ("take_along_dim_ndim", lambda m: m.take_along_dim(m.zeros(3, 2), m.zeros(2, dtype=m.int64), 0)),
    ("tril_1d", lambda m: m.zeros(3).tril()),
    ("triu_0d", lambda m: m.tensor(1.0).triu()),
    ("diag_3d", lambda m: m.zeros(2, 2, 2).diag()),
    ("diagonal_same_dims", lambda m: m.zeros(2, 2).diagonal(0, 1, 1)),
    ("diagonal_1d", lambda m: m.zeros(2).diagonal()),
    ("trace_3d", lambda m: m.zeros(2, 2, 2).trace()),
    ("pad_odd", lambda m: m.nn.functional.pad(m.zeros(2, 3), (1,))),
    ("pad_too_long", lambda m: m.nn.functional.pad(m.zeros(3), (1, 1, 1, 1))),
    ("pad_reflect_big", lambda m: m.nn.functional.pad(m.zeros(1, 3), (3, 0), mode="reflect")),
    ("pad_reflect_1d_input", lambda m: m.nn.functional.pad(m.zeros(3), (1, 1), mode="reflect")),
    ("pad_circular_big", lambda m: m.nn.functional.pad(m.zeros(1, 1, 3), (4, 0), mode="circular")),
    ("pad_negative_size", lambda m: m.nn.functional.pad(m.zeros(2, 3), (-2, -2))),
]


@pytest.mark.parametrize("eid", [e[0] for e in ERRORS])
def test_errors(eid):
    fn = dict(ERRORS)[eid]
    with pytest.raises(Exception) as te:
        fn(torch)
    with raises_by_sync(Exception) as le:
        fn(lucid)
    assert isinstance(le.value, type(te.value)) or type(le.value) is type(te.value), (te.value, le.value)


def test_scatter_reduce_backward_raises():
    x = lucid.zeros(3, requires_grad=True)
    y = x.scatter(0, lucid.tensor([1]), lucid.ones(1), reduce="add")
    with pytest.raises(RuntimeError):
        y.sum().backward()


def test_inplace_through_diagonal_view():
    """A write through diagonal() rewrites the base's history (CopySlices), as in torch."""
    x = mk("float64", 3, 4)
    w = mk("float64", 3, 4)
    tx, lx = x.clone().requires_grad_(), to_lucid(x).requires_grad_()
    ty, ly = tx * 2, lx * 2
    ty.diagonal(1).mul_(3)
    ly.diagonal(1).mul_(3)
    torch.testing.assert_close(to_torch(ly.detach()), ty.detach())
    (ty * w).sum().backward()
    (ly * to_lucid(w)).sum().backward()
    torch.testing.assert_close(to_torch(lx.grad), tx.grad)


@pytest.mark.parametrize("pieces", ["split", "unbind"])
def test_inplace_through_split_pieces(pieces):
    """torch refuses in-place writes to the outputs of multi-view ops; lucid records
    them like any view write, so the gradient is that of the out-of-place version."""
    x, w = mk("float64", 4, 3), mk("float64", 4, 3)
    lx = to_lucid(x).requires_grad_()
    ly = lx * 2
    part = ly.split(2)[1] if pieces == "split" else ly.unbind(0)[2]
    part.mul_(3)
    (ly * to_lucid(w)).sum().backward()
    tx = x.clone().requires_grad_()
    scale = torch.ones(4, 3, dtype=torch.float64)
    if pieces == "split":
        scale[2:] = 3
    else:
        scale[2] = 3
    (tx * 2 * scale * w).sum().backward()
    torch.testing.assert_close(to_torch(lx.grad), tx.grad)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_atleast_nd_match_torch(shape):
    t = torch.arange(int(torch.tensor(shape).prod().item()) if shape else 1, dtype=torch.float64).reshape(shape)
    for name in ("atleast_1d", "atleast_2d"):
        lt = getattr(lucid, name)(lucid.tensor(t.tolist(), dtype=lucid.float64).reshape(shape))
        tt = getattr(torch, name)(t)
        assert tuple(lt.shape) == tuple(tt.shape) and lt.tolist() == tt.tolist()


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int32"])
@pytest.mark.usefixtures("cpu_default")  # the CPU's order (the GPU's, like torch's, adds by atomics)
def test_index_add_by_slices_gives_the_element_loop_bits(dtype, dim):
    # Slices of a contiguous source are added a slice at a time; a transposed source takes
    # the element loop (scatter). Both add each index's slices in order: the same bits,
    # whatever the thread count.
    d = getattr(lucid, dtype)
    lucid.manual_seed(4)
    base = (lucid.randn(7, 300) * 50).to(d)
    src = (lucid.randn(40, 300) * 50).to(d)
    index = lucid.randint(0, 7, (40,))
    if dim == 1:  # slices of one element (the element loop of the same function)
        base, src = base.t().contiguous(), src.t().contiguous()
    strided = src.t().contiguous().t()  # src's values, not contiguous
    before = lucid.get_num_threads()
    try:
        got = []
        for threads in (1, 2):
            lucid.set_num_threads(threads)
            got.append(base.index_add(dim, index, src).tolist())
        want = base.index_add(dim, index, strided).tolist()
    finally:
        lucid.set_num_threads(before)
    assert got[0] == want and got[1] == want
