"""View operations against PyTorch: shape, strides, storage_offset, contiguity, values,
and storage sharing in both directions (writes to the base show in the view and back),
on every device (a view of a GPU tensor is a GPU tensor sharing its storage)."""

import pytest
import torch

import lucid
from conftest import assert_same, shares_storage, to_lucid, to_torch, default_device

SHAPE = (2, 3, 4)
# torch warns that .T on a 3-d tensor is deprecated; lucid follows the current behaviour.
pytestmark = pytest.mark.filterwarnings("ignore:The use of `x.T`:UserWarning")


def _bases(dtype="int64", device=None):
    device = device or default_device()
    lb = lucid.arange(24, device=device).reshape(*SHAPE).to(getattr(lucid, dtype))
    assert lb.device.type == device
    tb = torch.arange(24).reshape(*SHAPE).to(getattr(torch, dtype))
    return lb, tb


def _torch_shares(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _root(t):
    return t if t._base is None else t._base


def check_base(lv, lb, tv, tb):
    """lv is a view (_is_view(), _base) exactly when torch's tv is, and its _base is
    the root of lb's views exactly when tv's is tb's root (a view of a view has the
    first tensor of the chain as its _base, as torch's)."""
    assert lv._is_view() == tv._is_view()
    assert (lv._base is None) == (tv._base is None)
    if tv._base is not None:
        assert (lv._base is _root(lb)) == (tv._base is _root(tb))


def check(op, *, dtype="int64", write_view=True, device=None):
    """op(lucid base) matches op(torch base), shares storage exactly when torch's does,
    and aliasing works both ways when it does; the results stay on the base's device."""
    device = device or default_device()
    lb, tb = _bases(dtype, device)
    lv, tv = op(lb), op(tb)
    if isinstance(tv, tuple):
        assert len(lv) == len(tv)
        for a, b in zip(lv, tv):
            assert a.device.type == device
            assert_same(a, b, offset=True)
            check_base(a, lb, b, tb)
        return
    assert lv.device.type == device
    assert_same(lv, tv, offset=True)
    check_base(lv, lb, tv, tb)
    sharing = _torch_shares(tv, tb)
    assert shares_storage(lv, lb) == sharing
    lb.copy_(lucid.arange(100, 124, device=device).reshape(*SHAPE))
    tb.copy_(torch.arange(100, 124).reshape(*SHAPE))
    assert_same(lv, tv)  # a view sees the base's new values, a copy keeps the old ones
    if write_view and lv.numel():
        lv.fill_(-7)
        tv.fill_(-7)
        assert_same(lb, tb)  # writes through a view land in the base


VIEWS = {
    "view_2d": lambda t: t.view(6, 4),
    "view_flat": lambda t: t.view(24),
    "view_minus1": lambda t: t.view(-1),
    "view_infer": lambda t: t.view(4, -1),
    "view_tuple": lambda t: t.view((3, 8)),
    "view_extra1": lambda t: t.view(2, 3, 4, 1),
    "view_of_slice": lambda t: t[:, 1:, :].view(2, 8),
    "view_of_narrow_last": lambda t: t[:, :, 1:3].view(6, 2),
    "view_transposed_ok": lambda t: t.transpose(0, 1).view(3, 2, 4),
    "view_scalar": lambda t: t[0, 0, :1].view(()),
    "view_as": lambda t: t.view_as(t.new_zeros(4, 6)),
    "reshape_viewable": lambda t: t.reshape(4, 3, 2),
    "reshape_infer": lambda t: t.reshape(2, -1, 2),
    "reshape_as": lambda t: t.reshape_as(t.new_zeros(24)),
    "reshape_same": lambda t: t.reshape(2, 3, 4),
    "permute": lambda t: t.permute(2, 0, 1),
    "permute_tuple": lambda t: t.permute((1, 2, 0)),
    "permute_neg": lambda t: t.permute(-1, 0, 1),
    "transpose": lambda t: t.transpose(0, 2),
    "transpose_neg": lambda t: t.transpose(-1, -3),
    "transpose_same": lambda t: t.transpose(1, 1),
    "swapaxes": lambda t: t.swapaxes(0, 1),
    "swapdims": lambda t: t.swapdims(1, 2),
    "t_2d": lambda t: t[0].t(),
    "t_1d": lambda t: t[0, 0].t(),
    "t_0d": lambda t: t[0, 0, 0].t(),
    "mT": lambda t: t.mT,
    "T_3d": lambda t: t.T,
    "T_2d": lambda t: t[1].T,
    "squeeze_all": lambda t: t[:, :1, :].squeeze(),
    "squeeze_dim": lambda t: t[:, :1, :].squeeze(1),
    "squeeze_nonsingleton": lambda t: t[:, :1, :].squeeze(0),
    "squeeze_neg": lambda t: t[:, :1, :].squeeze(-2),
    "squeeze_tuple": lambda t: t[:, :1, :1].squeeze((1, 2)),
    "squeeze_0d": lambda t: t[0, 0, 0].squeeze(),
    "unsqueeze_front": lambda t: t.unsqueeze(0),
    "unsqueeze_back": lambda t: t.unsqueeze(3),
    "unsqueeze_neg": lambda t: t.unsqueeze(-1),
    "unsqueeze_mid_of_slice": lambda t: t[:, ::2].unsqueeze(2),
    "flatten_all": lambda t: t.flatten(),
    "flatten_from1": lambda t: t.flatten(1),
    "flatten_01": lambda t: t.flatten(0, 1),
    "flatten_1d": lambda t: t[0, 0].flatten(),
    "flatten_0d": lambda t: t[0, 0, 0].flatten(),
    "flatten_viewable_transposed": lambda t: t.permute(1, 0, 2).flatten(2),
    "unflatten": lambda t: t.unflatten(2, (2, 2)),
    "unflatten_infer": lambda t: t.unflatten(-1, (2, -1)),
    "unflatten_first": lambda t: t.unflatten(0, (1, 2)),
    "narrow": lambda t: t.narrow(2, 1, 2),
    "narrow_neg": lambda t: t.narrow(-1, -2, 2),
    "narrow_empty": lambda t: t.narrow(1, 3, 0),
    "select": lambda t: t.select(1, 2),
    "select_neg": lambda t: t.select(-1, -1),
    "as_strided": lambda t: t.as_strided((2, 2), (1, 2)),
    "as_strided_offset": lambda t: t.as_strided((3,), (2,), 5),
    "as_strided_of_view": lambda t: t[1].as_strided((2,), (1,)),
    "as_strided_overlap": lambda t: t.as_strided((3, 3), (1, 1)),
    "unbind": lambda t: t.unbind(1),
    "unbind_last": lambda t: t.unbind(-1),
    "chain": lambda t: t.permute(2, 0, 1)[1:, :, ::2].transpose(0, 2).unsqueeze(1).narrow(0, 1, 1),
    "detach": lambda t: t.detach(),
}

EXPANDS = {
    "expand": lambda t: t[:, :1, :].expand(2, 3, 4),
    "expand_minus1": lambda t: t[:, :1, :].expand(-1, 5, -1),
    "expand_new_dims": lambda t: t[0].expand(2, 2, 3, 4),
    "expand_list": lambda t: t[:, :1].expand([2, 2, 4]),
    "expand_scalar": lambda t: t[0, 0, 0].expand(3, 2),
    "expand_same": lambda t: t.expand(2, 3, 4),
    "expand_as": lambda t: t[:1].expand_as(t),
    "broadcast_to": lambda t: t[:, :1].broadcast_to((2, 2, 4)),
}

COPIES = {
    "reshape_nonviewable": lambda t: t.transpose(0, 1).reshape(-1),
    "reshape_nonviewable_2": lambda t: t[:, ::2].reshape(16),
    "reshape_nonviewable_3": lambda t: t.transpose(1, 2).reshape(2, 12),
    "flatten_nonviewable": lambda t: t.transpose(1, 2).flatten(),
    "flatten_nonviewable_partial": lambda t: t.transpose(1, 2).flatten(0, 1),
    "contiguous_of_transposed": lambda t: t.transpose(0, 1).contiguous(),
    "contiguous_of_slice": lambda t: t[..., ::2].contiguous(),
    "clone": lambda t: t.clone(),
    "clone_of_slice": lambda t: t[:, ::2].clone(),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_views(name, device):
    check(VIEWS[name], device=device)


@pytest.mark.parametrize("name", list(EXPANDS))
def test_expand(name, device):
    check(EXPANDS[name], write_view=False, device=device)  # an expanded view has aliased elements


@pytest.mark.parametrize("name", list(COPIES))
def test_copies(name, device):
    check(COPIES[name], device=device)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "complex64", "bool", "uint8", "float64"])
@pytest.mark.parametrize("name", ["permute", "narrow", "select", "flatten_01", "view_infer"])
def test_views_other_dtypes(name, dtype, device):
    check(VIEWS[name], dtype=dtype, device=device)


def test_clone_preserves_strides(device):
    # torch's clone() keeps the layout of a dense non-contiguous tensor (preserve_format)
    check(lambda t: t.transpose(0, 1).clone(), device=device)
    check(lambda t: t.permute(2, 0, 1).clone(), device=device)


def test_contiguous_returns_self_when_contiguous(device):
    lb, tb = _bases(device=device)
    assert tb.contiguous() is tb
    assert lb.contiguous() is lb


def test_contiguous_flags(device):
    lb, tb = _bases(device=device)
    cases = [lambda t: t, lambda t: t.t() if t.ndim == 2 else t.transpose(0, 1),
             lambda t: t[:, :1], lambda t: t[:, :, :1], lambda t: t[..., ::2], lambda t: t[:1],
             lambda t: t[:, :1, :].expand(2, 3, 4), lambda t: t.unsqueeze(1),
             lambda t: t[:, 1:2].transpose(1, 2), lambda t: t.narrow(1, 3, 0)]
    for f in cases:
        assert f(lb).is_contiguous() == f(tb).is_contiguous()


def test_module_level_functions(device):
    lb, tb = _bases(device=device)
    pairs = [
        (lucid.reshape(lb, (4, 6)), torch.reshape(tb, (4, 6))),
        (lucid.permute(lb, (1, 0, 2)), torch.permute(tb, (1, 0, 2))),
        (lucid.transpose(lb, 0, 1), torch.transpose(tb, 0, 1)),
        (lucid.swapaxes(lb, 0, 2), torch.swapaxes(tb, 0, 2)),
        (lucid.t(lb[0]), torch.t(tb[0])),
        (lucid.squeeze(lb[:1]), torch.squeeze(tb[:1])),
        (lucid.unsqueeze(lb, 1), torch.unsqueeze(tb, 1)),
        (lucid.flatten(lb), torch.flatten(tb)),
        (lucid.unflatten(lb, 1, (3, 1)), torch.unflatten(tb, 1, (3, 1))),
        (lucid.narrow(lb, 1, 1, 1), torch.narrow(tb, 1, 1, 1)),
        (lucid.select(lb, 0, 1), torch.select(tb, 0, 1)),
        (lucid.as_strided(lb, (2,), (3,)), torch.as_strided(tb, (2,), (3,))),
        (lucid.broadcast_to(lb[:1], (3, 3, 4)), torch.broadcast_to(tb[:1], (3, 3, 4))),
        (lucid.clone(lb), torch.clone(tb)),
    ]
    for lt, tt in pairs:
        assert lt.device.type == device
        assert_same(lt, tt, offset=True)
    for a, b in zip(lucid.unbind(lb, 2), torch.unbind(tb, 2)):
        assert a.device.type == device
        assert_same(a, b, offset=True)


@pytest.mark.parametrize("f", [
    lambda t: t.view(-1), lambda t: t.view(3, -1), lambda t: t.reshape(3, 0, 5), lambda t: t.t(),
    lambda t: t.unsqueeze(0), lambda t: t[:, 1:], lambda t: t.flatten()])
def test_empty_tensor_views(f, device):
    lv = f(lucid.empty(0, 3, device=device))
    assert lv.device.type == device
    assert_same(lv, f(torch.empty(0, 3)))


@pytest.mark.parametrize("op", [
    lambda t: t.transpose(0, 1).view(24),
    lambda t: t.transpose(1, 2).view(2, 12),
    lambda t: t[:, ::2].view(16),
    lambda t: t.permute(2, 1, 0).view(24),
])
def test_view_of_non_contiguous_raises(op, device):
    lb, tb = _bases(device=device)
    with pytest.raises(RuntimeError) as te:
        op(tb)
    with pytest.raises(type(te.value), match="view size is not compatible"):
        op(lb)


@pytest.mark.parametrize("op", [
    lambda t: t.view(5, 5), lambda t: t.reshape(7), lambda t: t.view(-1, -1),
    lambda t: t.view(2, -1, 5), lambda t: t.reshape(0, -1),
])
def test_incompatible_shape_raises(op, device):
    lb, tb = _bases(device=device)
    with pytest.raises(RuntimeError) as te:
        op(tb)
    with pytest.raises(type(te.value), match="invalid|infer|shape"):
        op(lb)


@pytest.mark.parametrize("op,word", [
    (lambda t: t.expand(2, 3, 5), "expanded size"),
    (lambda t: t.expand(3, 4), "number of sizes"),
    (lambda t: t[:, :1].expand(-1, -1, -1, -1), "-1"),
    (lambda t: t.unflatten(1, (2, 2)), "2, 2"),
    (lambda t: t.narrow(1, 2, 2), "exceeds"),
    (lambda t: t.as_strided((2,), (1,), 100), "storage"),
    (lambda t: t.as_strided((2, 2), (1,)), "mismatch"),
    (lambda t: t.as_strided((2,), (-1,)), "[Nn]egative"),
    (lambda t: t.permute(0, 0, 1), "duplicate"),
    (lambda t: t.permute(2, 1), "number of dimensions"),
    (lambda t: t.t(), "2 dimensions"),
    (lambda t: t[0, 0].mT, "matrices"),
])
def test_bad_view_arguments(op, word, device):
    lb, tb = _bases(device=device)
    with pytest.raises(Exception) as te:
        op(tb)
    with pytest.raises(type(te.value), match=word):
        op(lb)


@pytest.mark.parametrize("size, stride, offset", [((3, 3), (1, 1), 0), ((4, 2), (2, 1), 1), ((2, 3), (0, 2), 0),
                                                  ((5,), (0,), 3), ((2, 2, 2), (1, 2, 1), 2), ((3, 2), (2, 4), 0)])
def test_as_strided_gradient_adds_up_where_elements_overlap(size, stride, offset, device):
    """Each element of t gets the sum of the gradients of every view element at it (torch's)."""
    t = torch.arange(12, dtype=torch.float64).requires_grad_()
    lt = to_lucid(t.detach(), device).requires_grad_()
    g = torch.randn(size, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    torch.as_strided(t, size, stride, offset).backward(g)
    lt.as_strided(size, stride, offset).backward(to_lucid(g, device))
    torch.testing.assert_close(to_torch(lt.grad.cpu()), t.grad, rtol=1e-14, atol=1e-14)  # (sums in another order)


def test_unfold_is_a_view_with_summed_gradients(device):
    t = torch.randn(3, 10, generator=torch.Generator().manual_seed(1), dtype=torch.float64).requires_grad_()
    lt = to_lucid(t.detach(), device).requires_grad_()
    tv, lv = t.unfold(1, 4, 2), lt.unfold(1, 4, 2)
    assert shares_storage(lv, lt) and tuple(lv.stride()) == tuple(tv.stride())
    g = torch.randn(tv.shape, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    tv.backward(g)
    lv.backward(to_lucid(g, device))
    torch.testing.assert_close(to_torch(lt.grad.cpu()), t.grad, rtol=1e-14, atol=1e-14)


# views torch makes outside VIEWS' base: of other dtypes, complex parts, indexing, splits
MORE_VIEWS = {
    "getitem_int": lambda m, t: t[1],
    "getitem_slices": lambda m, t: t[:, 1:, ::2],
    "getitem_none_ellipsis": lambda m, t: t[None, ..., 0],
    "getitem_bool_mask": lambda m, t: t[t > 0],  # (a copy)
    "getitem_index_list": lambda m, t: t[[0, 1]],  # (a copy)
    "split": lambda m, t: t.split(1, 0)[1],
    "chunk": lambda m, t: t.chunk(3, 1)[2],
    "tensor_split": lambda m, t: t.tensor_split(2, 2)[0],
    "movedim": lambda m, t: t.movedim(0, 2),
    "diagonal": lambda m, t: t.diagonal(0, 1, 2),
    "unfold": lambda m, t: t.unfold(2, 2, 1),
    "view_dtype_same_size": lambda m, t: t.view(m.int32),  # (torch's: no _base)
    "view_dtype_smaller": lambda m, t: t.view(m.int16),
    "view_as_real": lambda m, t: m.view_as_real(t.to(m.complex64)),
    "real": lambda m, t: t.to(m.complex64).real,
    "imag": lambda m, t: t.to(m.complex64).imag,
    "float_plus_one": lambda m, t: t.float() + 1,  # (a new tensor)
}


@pytest.mark.parametrize("name", list(MORE_VIEWS))
def test_base_of_views(name, device):
    """Tensor._base / _is_view() as torch's: set by every view op (whatever the grad
    mode), None for copies and new tensors."""
    t = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0))
    lt = to_lucid(t, device)
    tv, lv = MORE_VIEWS[name](torch, t), MORE_VIEWS[name](lucid, lt)
    check_base(lv, lt, tv, t)
    for m, base in ((lucid, lt), (torch, t)):  # and the same under no_grad
        with m.no_grad():
            v = MORE_VIEWS[name](m, base)
        assert v._is_view() == tv._is_view()


def test_base_is_the_root_of_a_chain_of_views(device):
    x = lucid.randn(4, 6, device=device)
    with lucid.no_grad():
        a = x[1:]  # (made without grad: _base all the same)
    b = a.t()
    c = b.reshape(-1, 1, 3)  # (a view of a non-contiguous view)
    assert a._base is x and b._base is x and c._base is x
    assert x._base is None and not x._is_view()
    d = b.contiguous()  # (a copy)
    assert d._base is None
    e = x.detach()  # torch's detach is no view: no _base
    assert e._base is None and not e._is_view()
    v = lucid.ones(3, device=device)[:2]
    v.requires_grad_()  # (a view made a leaf keeps its _base, as in torch)
    assert v._is_view() and v._base.shape == (3,)
    y = x[0]
    del x
    assert y._base.shape == (4, 6)  # _base keeps the base alive
    y._base.fill_(2)
    assert y.tolist() == [2.0] * 6
