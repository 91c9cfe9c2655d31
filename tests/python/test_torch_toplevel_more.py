"""torch's view-copy functions (*_copy), unsafe_ splits, narrow_copy, gradient, the
deprecated norms and range, the process flags and the eager cond / while_loop against
PyTorch (python/lucid/_toplevel_copies.py, _toplevel_misc.py)."""

import warnings

import pytest
import torch

import lucid
from conftest import assert_close, assert_same, shares_storage, to_lucid


def randn(*shape, seed=0):
    return torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


def grads_agree(lout, tout, lx, tx):
    w = randn(*tout.shape, seed=7)
    (tout * w).sum().backward()
    (lout * to_lucid(w, lout.device.type)).sum().backward()
    assert_close(lx.grad.cpu(), tx.grad, rtol=1e-12, atol=1e-12)


RAW = randn(4, 3, 2)
BASE = RAW.permute(2, 0, 1)  # a non-contiguous input: the copies must be contiguous


def lucid_base(device):
    """BASE in lucid, with BASE's (non-contiguous) strides."""
    return to_lucid(RAW, device).permute(2, 0, 1)

COPIES = [
    ("alias_copy", ()), ("detach_copy", ()), ("view_copy", ((2, 12),)), ("permute_copy", ((2, 0, 1),)),
    ("transpose_copy", (0, 2)), ("diagonal_copy", (0, 1, 2)), ("diagonal_copy", (-1, 0, 2)), ("select_copy", (1, -1)),
    ("slice_copy", (1, 1, None, 2)), ("slice_copy", (2, -10, 100, 1)), ("slice_copy", ()), ("squeeze_copy", ()),
    ("unsqueeze_copy", (1,)), ("unfold_copy", (1, 2, 1)), ("as_strided_copy", ((2, 2), (1, 3), 1)),
    ("narrow_copy", (1, 1, 2)), ("expand_copy", ((2, 2, 4, 3),)),
]


@pytest.mark.parametrize("name,args", COPIES)
def test_view_copies(name, args, device):
    contiguous = name in ("view_copy", "as_strided_copy")  # (these read the layout itself)
    base = BASE.contiguous() if contiguous else BASE
    lx = lucid_base(device).contiguous() if contiguous else lucid_base(device)
    assert lx.stride() == base.stride()
    expected = getattr(torch, name)(base, *args)
    out = getattr(lucid, name)(lx, *args)
    assert not shares_storage(out, lx)
    assert_same(out.cpu(), expected)  # values, dtype, shape and (contiguous) strides


def test_copies_keep_the_graph(device):
    for name, args in COPIES:
        if name in ("detach_copy", "as_strided_copy"):
            continue
        tx = BASE.detach().clone().requires_grad_(True)
        lx = to_lucid(BASE, device).requires_grad_(True)
        # (torch 2.11, the GPU machine's, has no derivative for narrow_copy: its view's is the same)
        ref = torch.narrow if name == "narrow_copy" else getattr(torch, name)
        grads_agree(getattr(lucid, name)(lx, *args), ref(tx, *args), lx, tx)
    assert not lucid.detach_copy(lucid.randn(2, requires_grad=True)).requires_grad


def test_squeeze_t_and_dtype_copies():
    x = torch.zeros(1, 2, 1)
    assert_same(lucid.squeeze_copy(to_lucid(x), (0, 2)), torch.squeeze_copy(x, (0, 2)))
    assert_same(lucid.squeeze_copy(to_lucid(x), 0), torch.squeeze_copy(x, 0))
    m = randn(2, 3)
    assert_same(lucid.t_copy(to_lucid(m)), torch.t_copy(m))
    assert_same(lucid.view_copy(lucid.arange(6.0), lucid.int32), torch.view_copy(torch.arange(6.0), torch.int32))
    # strides that no view of the new size has: a reshaped copy, as ATen's
    tt = torch.arange(6.0, dtype=torch.float64).view(2, 3).t().requires_grad_(True)
    lt = lucid.arange(6.0, dtype=lucid.float64).view(2, 3).t().requires_grad_(True)
    lout = lucid.view_copy(lt, (6,))
    assert not shares_storage(lout, lt)
    tout = torch.view_copy(tt, (6,))
    assert_same(lout.detach(), tout.detach())
    grads_agree(lout, tout, lt, tt)
    c = torch.randn(3, 2, dtype=torch.complex128)
    assert_same(lucid.view_as_real_copy(to_lucid(c)), torch.view_as_real_copy(c))
    r = torch.randn(3, 2, dtype=torch.float64)
    assert_same(lucid.view_as_complex_copy(to_lucid(r)), torch.view_as_complex_copy(r))


@pytest.mark.parametrize("name,args", [("unbind_copy", (1,)), ("split_copy", (2, 1)), ("split_copy", (1,)),
                                       ("split_with_sizes_copy", ([1, 3], 1))])
def test_multi_output_copies(name, args, device):
    lx = lucid_base(device)
    outs = getattr(lucid, name)(lx, *args)
    expected = getattr(torch, name)(BASE, *args)
    assert type(outs) is tuple and len(outs) == len(expected)
    for o, e in zip(outs, expected):
        assert_same(o.cpu(), e)
    buffers = [lucid.empty(0, dtype=lucid.float64, device=device) for _ in expected]
    assert getattr(lucid, name)(lx, *args, out=buffers) is None
    for o, e in zip(buffers, expected):
        assert_close(o.cpu(), e)


def test_copy_out_arguments():
    x = lucid.randn(2, 3)
    out = lucid.empty(0)
    assert lucid.t_copy(x, out=out) is out
    assert out.tolist() == x.t().tolist()
    with pytest.raises(RuntimeError, match="dtype"):
        lucid.t_copy(x, out=lucid.empty(0, dtype=lucid.float64))
    with pytest.raises(RuntimeError, match="expected an out= argument of size 2, got size 1"):
        lucid.unbind_copy(x, out=[lucid.empty(3)])
    with pytest.raises(TypeError, match="out"):
        lucid.alias_copy(x, out=[1])


def test_slice_copy_step_and_input_errors():
    with pytest.raises(RuntimeError, match="slice step must be positive"):
        lucid.slice_copy(lucid.arange(5.0), 0, 0, 5, 0)
    with pytest.raises(RuntimeError, match="slice step must be positive"):
        lucid.slice_copy(lucid.arange(5.0), 0, 0, 5, -1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        lucid.slice_copy(lucid.arange(5.0), 1)
    with pytest.raises(TypeError, match="must be Tensor"):
        lucid.t_copy([[1.0]])


def test_sparse_member_copies():
    i = torch.tensor([[0, 1, 1], [2, 0, 2]])
    v = torch.tensor([3.0, 4.0, 5.0])
    ls = lucid.sparse_coo_tensor(to_lucid(i), to_lucid(v), (2, 3)).coalesce()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = torch.sparse_coo_tensor(i, v, (2, 3)).coalesce()
        tc = ts.to_sparse_csr()
    # (torch 2.15's indices_copy / values_copy have no sparse COO kernel: its members, copied)
    assert_same(lucid.indices_copy(ls), ts.indices().clone())
    assert_same(lucid.values_copy(ls), ts.values().clone())
    assert not shares_storage(lucid.values_copy(ls), ls.values())
    lc = ls.to_sparse_csr()
    assert_same(lucid.crow_indices_copy(lc), torch.crow_indices_copy(tc))
    assert_same(lucid.col_indices_copy(lc), torch.col_indices_copy(tc))
    assert_same(lucid.values_copy(lc), torch.values_copy(tc))
    out = lucid.empty(0)
    assert lucid.values_copy(ls, out=out) is out and out.tolist() == [3.0, 4.0, 5.0]
    with pytest.raises(RuntimeError, match="uncoalesced"):
        lucid.indices_copy(lucid.sparse_coo_tensor([[1, 0]], [1.0, 2.0], (2,)))
    with pytest.raises(RuntimeError, match="crow_indices"):
        lucid.crow_indices_copy(ls)


@pytest.mark.parametrize("name,args", [("unsafe_chunk", (3,)), ("unsafe_chunk", (2, 1)), ("unsafe_split", (3,)),
                                       ("unsafe_split_with_sizes", ([1, 4, 5],))])
def test_unsafe_splits_are_views(name, args):
    t = torch.arange(20.0).reshape(10, 2)
    lx = to_lucid(t)
    outs, expected = getattr(lucid, name)(lx, *args), getattr(torch, name)(t, *args)
    assert type(outs) is tuple and len(outs) == len(expected)
    for o, e in zip(outs, expected):
        assert_same(o, e)
        assert shares_storage(o, lx)
    method = getattr(lx, name)(*args)
    assert [m.tolist() for m in method] == [e.tolist() for e in expected]
    with pytest.raises(RuntimeError, match="split_with_sizes"):
        lucid.unsafe_split_with_sizes(lx, [3, 6])
    with pytest.raises(RuntimeError, match="chunk"):
        lucid.unsafe_chunk(lx, 0)
    for fn in (lucid.unsafe_split, lucid.split_copy):
        with pytest.raises(TypeError, match="'split_size' \\(position 2\\) must be int, not list"):
            fn(lx, [2, 8])


def test_narrow_copy_method():
    t = torch.arange(6.0).reshape(2, 3)
    assert_same(to_lucid(t).narrow_copy(1, 1, 2), t.narrow_copy(1, 1, 2))
    assert not shares_storage(lucid.narrow_copy(to_lucid(t), 0, 0, 1), to_lucid(t))


# ---- gradient -------------------------------------------------------------------------------
GRADIENT_CASES = [
    ((5,), {}), ((5,), {"spacing": 2.0}), ((5,), {"spacing": [0.5]}), ((4, 5), {}), ((4, 5), {"dim": 1}),
    ((4, 5), {"dim": [0, 1], "spacing": [1.0, 3.0]}), ((4, 5), {"dim": -1, "spacing": 2}), ((4, 5), {"edge_order": 2}),
    ((3, 4, 5), {"dim": (2, 0), "edge_order": 2, "spacing": 0.25}),
]


@pytest.mark.parametrize("shape,kwargs", GRADIENT_CASES)
def test_gradient_uniform_spacing(shape, kwargs, device):
    t = randn(*shape)
    lx, tx = to_lucid(t, device).requires_grad_(True), t.clone().requires_grad_(True)
    louts, touts = lucid.gradient(lx, **kwargs), torch.gradient(tx, **kwargs)
    assert type(louts) is tuple and len(louts) == len(touts)
    for lo, to in zip(louts, touts):
        assert_close(lo.cpu(), to, rtol=1e-12, atol=1e-12)
    grads_agree(sum(o.sum() for o in louts), sum(o.sum() for o in touts), lx, tx)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_coordinates(edge_order, device):
    t = randn(3, 5)
    xs = torch.tensor([0.0, 1.0, 3.0, 4.0, 7.0], dtype=torch.float64)
    ys = torch.tensor([0.0, 0.5, 2.0], dtype=torch.float64)
    louts = lucid.gradient(to_lucid(t, device), spacing=[to_lucid(ys, device), to_lucid(xs, device)],
                           edge_order=edge_order)
    touts = torch.gradient(t, spacing=[ys, xs], edge_order=edge_order)
    for lo, to in zip(louts, touts):
        assert_close(lo.cpu(), to, rtol=1e-12, atol=1e-12)
    one = lucid.gradient(to_lucid(t, device), spacing=(to_lucid(xs, device),), dim=1, edge_order=edge_order)
    assert_close(one[0].cpu(), torch.gradient(t, spacing=(xs,), dim=1, edge_order=edge_order)[0])


def test_gradient_integer_input_and_zero_dim():
    t = torch.tensor([1, 2, 4, 7, 11])
    for kwargs in ({}, {"spacing": 2}):
        assert_same(lucid.gradient(to_lucid(t), **kwargs)[0], torch.gradient(t, **kwargs)[0])
    assert lucid.gradient(lucid.tensor(3.0)) == ()


@pytest.mark.parametrize("call,error,words", [
    (lambda x: lucid.gradient(x, spacing=[1.0]), RuntimeError, "list of length equal to 'self.dim() = 2'"),
    (lambda x: lucid.gradient(x, dim=0, spacing=[1.0, 2.0]), RuntimeError, "spacing and dim arguments"),
    (lambda x: lucid.gradient(x, edge_order=3), RuntimeError, "only supports edge_order=1 and edge_order=2"),
    (lambda x: lucid.gradient(x[:2], edge_order=2), RuntimeError, "at least edge_order+1"),
    (lambda x: lucid.gradient(x, dim=(0, 0)), RuntimeError, "dim 0 appears multiple times"),
    (lambda x: lucid.gradient(x, dim=2), IndexError, "Dimension out of range"),
    (lambda x: lucid.gradient(x.to(lucid.uint8)), NotImplementedError, "does not support uint8"),
    (lambda x: lucid.gradient(x[0], spacing=(lucid.zeros(2, 2),)), RuntimeError, "one dimension"),
    (lambda x: lucid.gradient(x, spacing=lucid.arange(4.0)), TypeError, "spacing"),
])
def test_gradient_errors(call, error, words):
    with pytest.raises(error, match=pytest.importorskip("re").escape(words)):
        call(lucid.randn(3, 4))


# ---- deprecated norms and range ----------------------------------------------------------------
@pytest.mark.parametrize("dim,keepdim", [((0, 1), False), (1, False), ((0,), True), ((), False), ((1, 2), True)])
def test_frobenius_norm(dim, keepdim):
    t = randn(2, 3, 4)
    lx, tx = to_lucid(t).requires_grad_(True), t.clone().requires_grad_(True)
    with pytest.warns(UserWarning, match="deprecated"):
        lout = lucid.frobenius_norm(lx, dim, keepdim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tout = torch.frobenius_norm(tx, dim, keepdim)
    assert_close(lout, tout, rtol=1e-12, atol=1e-12)
    grads_agree(lout, tout, lx, tx)


@pytest.mark.parametrize("args", [(), (True,), ((1, 2),), ((0, 2), True)])
def test_nuclear_norm(args):
    t = randn(2, 3, 4)
    with pytest.warns(UserWarning, match="deprecated"):
        lout = lucid.nuclear_norm(to_lucid(t if args and not isinstance(args[0], bool) else t[0]), *args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tout = torch.nuclear_norm(t if args and not isinstance(args[0], bool) else t[0], *args)
    assert_close(lout, tout, rtol=1e-10, atol=1e-10)


def test_deprecated_norm_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="Expected at most 2 dimensions, but got 3"):
            lucid.frobenius_norm(lucid.randn(2, 3, 4), (0, 1, 2))
        with pytest.raises(NotImplementedError, match="floating point or complex"):
            lucid.frobenius_norm(lucid.arange(6).view(2, 3), (0, 1))
        with pytest.raises(RuntimeError, match="dim must be a 2-tuple"):
            lucid.nuclear_norm(lucid.randn(2, 3), (1,))
        with pytest.raises(NotImplementedError, match="floating point or complex"):
            lucid.nuclear_norm(lucid.arange(6).view(2, 3))


@pytest.mark.parametrize("args,kwargs", [((1, 4), {}), ((0, 1, 0.3), {}), ((4, 1, -1), {}), ((1, 4), {"dtype": "int64"}),
                                         ((0, 5, 2), {"dtype": "int32"}), ((-1.5, 2.5, 0.5), {"dtype": "float64"}),
                                         ((0, 1, 0.1), {})])
def test_range_is_end_inclusive(args, kwargs):
    ld = {k: getattr(lucid, v) for k, v in kwargs.items()}
    td = {k: getattr(torch, v) for k, v in kwargs.items()}
    with pytest.warns(UserWarning, match="lucid.range is deprecated"):
        out = lucid.range(*args, **ld)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(out, torch.range(*args, **td))


def test_range_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="step must be nonzero"):
            lucid.range(1, 4, 0)
        with pytest.raises(RuntimeError, match="inconsistent with step sign"):
            lucid.range(1, 4, -1)
        with pytest.raises(RuntimeError, match="unsupported range"):
            lucid.range(0, float("inf"))
        with pytest.raises(RuntimeError, match="unsupported range"):
            lucid.range(float("nan"), 3, dtype=lucid.int64)
        assert lucid.range(0, 2, requires_grad=True).requires_grad


# ---- predicates and flags ----------------------------------------------------------------------
@pytest.mark.usefixtures("cpu_default")  # get_device of a CPU tensor is -1
def test_get_device_and_is_inference():
    x = lucid.randn(2)
    assert lucid.get_device(x) == torch.get_device(torch.randn(2)) == -1
    assert lucid.is_inference(x) is False and x.is_inference() is False
    with lucid.inference_mode():
        y = lucid.randn(2) * 2
    assert lucid.is_inference(y) is False
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        lucid.get_device(3)
    with pytest.raises(TypeError, match="must be Tensor"):
        lucid.is_inference([1.0])


def test_set_flush_denormal_reports_unsupported():
    assert lucid.set_flush_denormal(True) is False
    assert lucid.set_flush_denormal(False) is False
    with pytest.raises(RuntimeError, match="expects a bool, but got int"):
        lucid.set_flush_denormal(1)


def test_warn_always_flag():
    assert lucid.is_warn_always_enabled() is False
    try:
        lucid.set_warn_always(True)
        assert lucid.is_warn_always_enabled() is True
    finally:
        lucid.set_warn_always(False)
    assert lucid.is_warn_always_enabled() is False
    with pytest.raises(RuntimeError, match="expects a bool, but got str"):
        lucid.set_warn_always("yes")


# ---- cond and while_loop ------------------------------------------------------------------------
@pytest.mark.parametrize("pred", [True, False, 1, 0.0])
def test_cond_python_predicate(pred):
    x = lucid.ones(3)
    out = lucid.cond(pred, lambda a: a + 1, lambda a: a - 1, (x,))
    assert out.tolist() == ([2.0] * 3 if pred else [0.0] * 3)


def test_cond_tensor_predicate_and_gradient():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    out = lucid.cond(x.sum() > 2, lambda a, b: (a * b).sum(), lambda a, b: a.sum(), (x, x * 3))
    out.backward()
    assert x.grad.tolist() == [6.0, 12.0]  # d/dx sum(x * 3x) = 6x, through both operands
    out = lucid.cond(lucid.tensor(False), lambda: lucid.ones(1), lambda: lucid.zeros(1))
    assert out.tolist() == [0.0]


@pytest.mark.parametrize("pred,true_fn,operands,words", [
    (lucid.tensor([True, False]), lambda a: a, (lucid.ones(1),), "single-element tensor"),
    ("a", lambda a: a, (lucid.ones(1),), "Expected pred to be bool or tensor"),
    (lucid.tensor(True), 1, (lucid.ones(1),), "Expect both branches to be callable"),
    (lucid.tensor(True), lambda a: a, (1,), "only consists of tensor leaves"),
    (lucid.tensor(True), lambda a: a, lucid.ones(1), "only consists of tensor leaves"),
])
def test_cond_errors(pred, true_fn, operands, words):
    with pytest.raises(RuntimeError, match=words):
        lucid.cond(pred, true_fn, lambda a: a, operands)


def test_while_loop():
    out = lucid.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (lucid.tensor(0), lucid.ones(2)))
    assert out[0].item() == 3 and out[1].tolist() == [8.0, 8.0]
    x = lucid.ones(2)
    never = lucid.while_loop(lambda i, x: i < 0, lambda i, x: (i + 1, x), (lucid.tensor(0), x))
    assert type(never) is tuple and never[1] is not x and never[1].tolist() == [1.0, 1.0]
    ints = lucid.while_loop(lambda n: n < 5, lambda n: (n + 2,), (0,))
    assert ints == (6,)


def test_while_loop_errors():
    with pytest.raises(RuntimeError, match="callable"):
        lucid.while_loop(1, lambda i: (i,), (lucid.ones(1),))
    with pytest.raises(AssertionError, match="can only be of"):
        lucid.while_loop(lambda i: i < 1, lambda i: (i,), ("a",))
    with pytest.raises(RuntimeError, match="boolean scalar tensor or a boolean"):
        lucid.while_loop(lambda i: (i < 3).float(), lambda i: (i + 1,), (lucid.tensor(0),))
    with pytest.raises(RuntimeError, match="same number of elements"):
        lucid.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1,), (lucid.tensor(0), lucid.ones(1)))
    with pytest.raises(RuntimeError, match="tuple or list"):
        lucid.while_loop(lambda i: i < 3, lambda i: i + 1, lucid.tensor(0))
