"""Sparse tensors (COO and CSR) and lucid.sparse against torch's, on every device:
construction, coalescing, conversions, products with their gradients (dense operand and
values), sum, softmax, the index checks, and a graph convolution's training step."""

import pickle

import pytest
import torch

import lucid
import lucid.sparse
from conftest import to_lucid, to_torch


def _close(l, t, tol=1e-6):
    if isinstance(l, lucid._sparse.SparseTensor):
        l = l.to_dense()
    if t.layout != torch.strided:
        t = t.to_dense()
    assert tuple(l.shape) == tuple(t.shape), (l.shape, t.shape)
    torch.testing.assert_close(to_torch(l.detach().cpu()).to(t.dtype), t.detach(), rtol=tol, atol=tol)


def _coo_pair(device, dtype=torch.float64, coalesced=False, size=(5, 4), nnz=9, seed=0, dense=()):
    """The same COO tensor in torch and lucid (repeated positions unless coalesced)."""
    g = torch.Generator().manual_seed(seed)
    idx = torch.stack([torch.randint(0, s, (nnz,), generator=g) for s in size])
    vals = torch.randn((nnz,) + dense, generator=g, dtype=dtype)
    t = torch.sparse_coo_tensor(idx, vals, size + dense)
    if coalesced:
        t = t.coalesce()
        idx, vals = t.indices(), t.values()
    l = lucid.sparse_coo_tensor(to_lucid(idx, device), to_lucid(vals, device), size + dense,
                                is_coalesced=coalesced or None)
    return l, t


def test_layouts_and_dense_tensors():
    x = lucid.zeros(2)
    assert x.layout is lucid.strided and not x.is_sparse and not x.is_sparse_csr
    assert repr(lucid.sparse_coo) == "lucid.sparse_coo" and pickle.loads(pickle.dumps(lucid.sparse_csr)) is \
        lucid.sparse_csr
    assert x.to_dense() is x


def test_creation_layouts(device):
    """torch's layout= of the creation functions: a sparse zeros/empty has no entries."""
    z = lucid.zeros(3, 4, layout=lucid.sparse_coo, dtype=lucid.float64, device=device)
    assert z.layout is lucid.sparse_coo and z._nnz() == 0 and z.is_coalesced() and z.device.type == device
    assert (z @ lucid.ones(4, 2, dtype=lucid.float64, device=device)).tolist() == [[0.0, 0.0]] * 3
    e = lucid.empty((2, 5), layout=lucid.sparse_csr, device=device)
    assert e.layout is lucid.sparse_csr and e.crow_indices().tolist() == [0, 0, 0] and e.to_dense().sum().item() == 0
    assert lucid.ones(2, layout=lucid.strided).tolist() == [1.0, 1.0]
    assert lucid.zeros_like(lucid.ones(2), layout=lucid.strided).tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="layout=lucid.sparse_coo is not supported"):
        lucid.full((2,), 1.0, layout=lucid.sparse_coo)


def test_legacy_sparse_constructors(device):
    """torch.sparse.FloatTensor(indices, values, size), as pygcn builds its adjacency."""
    i = lucid.tensor([[0, 1], [2, 0]], device=device)
    s = lucid.sparse.FloatTensor(i, lucid.tensor([1.0, 2.0], dtype=lucid.float64, device=device), (2, 3))
    assert s.layout is lucid.sparse_coo and s.dtype == lucid.float32 and s.to_dense().tolist() == [[0, 0, 1], [2, 0, 0]]
    assert lucid.sparse.DoubleTensor(i, [1.0, 2.0], (2, 3)).dtype == lucid.float64


def test_coo_construction_coalesce_and_to_dense(device):
    l, t = _coo_pair(device)
    assert l.is_sparse and not l.is_sparse_csr and l.layout is lucid.sparse_coo
    assert not l.is_coalesced() and l._nnz() == 9 and l.sparse_dim() == 2 and l.dense_dim() == 0
    assert l.device.type == device and l.dtype == lucid.float64 and tuple(l.shape) == (5, 4)
    _close(l.to_dense(), t.to_dense())
    c, tc = l.coalesce(), t.coalesce()
    assert c.is_coalesced() and c.indices().tolist() == tc.indices().tolist()
    _close(c.values(), tc.values())
    with pytest.raises(RuntimeError, match="uncoalesced"):
        l.indices()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        l.values()
    assert l._indices().shape[1] == 9 and l._values().shape[0] == 9
    # size inferred from the indices; lists accepted
    s = lucid.sparse_coo_tensor([[0, 2], [1, 0]], [1.0, 2.0], device=device)
    assert tuple(s.shape) == (3, 2) and s.to_dense().tolist() == [[0, 1], [0, 0], [2, 0]]


def test_hybrid_coo(device):
    l, t = _coo_pair(device, size=(4, 3), dense=(2,), nnz=7)
    assert l.sparse_dim() == 2 and l.dense_dim() == 1 and tuple(l.shape) == (4, 3, 2)
    _close(l.to_dense(), t.to_dense())
    _close(l.coalesce().values(), t.coalesce().values())
    x = torch.zeros(3, 4, 2, dtype=torch.float64)
    x[1, 2] = torch.tensor([1.0, 0.0])
    x[2, 0, 1] = 3.0
    ls = to_lucid(x, device).to_sparse(2)
    ts = x.to_sparse(2)
    assert ls.indices().tolist() == ts.indices().tolist()
    _close(ls.values(), ts.values())


def test_csr_and_conversions(device):
    x = torch.tensor([[0.0, 1.5, 0, 0], [0, 0, 0, 0], [2.0, 0, -1.0, 0.5]], dtype=torch.float64)
    lx = to_lucid(x, device)
    csr, tcsr = lx.to_sparse_csr(), x.to_sparse_csr()
    assert csr.is_sparse_csr and csr.layout is lucid.sparse_csr
    assert csr.crow_indices().tolist() == tcsr.crow_indices().tolist()
    assert csr.col_indices().tolist() == tcsr.col_indices().tolist()
    _close(csr.values(), tcsr.values())
    _close(csr.to_dense(), x)
    coo = csr.to_sparse_coo()
    assert coo.is_coalesced() and coo.indices().tolist() == x.to_sparse().indices().tolist()
    assert lx.to_sparse().indices().tolist() == x.to_sparse().indices().tolist()
    assert lx.to_sparse(layout=lucid.sparse_csr).crow_indices().tolist() == tcsr.crow_indices().tolist()
    made = lucid.sparse_csr_tensor([0, 1, 1, 4], [1, 0, 2, 3], [1.5, 2.0, -1.0, 0.5], (3, 4), dtype=lucid.float64,
                                   device=device)
    _close(made, x)
    l, t = _coo_pair(device)
    _close(l.to_sparse_csr(), t.to_sparse_csr())
    assert l.to_sparse_csr().to_sparse_coo().indices().tolist() == t.coalesce().indices().tolist()


def test_bad_indices_raise(device):
    v = lucid.ones(2, device=device)
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 1, size is 3 but found index 3"):
        lucid.sparse_coo_tensor([[0, 1], [3, 0]], v, (2, 3))
    with pytest.raises(RuntimeError, match="negative index -1"):
        lucid.sparse_coo_tensor([[0, -1], [0, 0]], v, (2, 3))
    with pytest.raises(RuntimeError, match="same number of entries"):
        lucid.sparse_coo_tensor([[0, 1, 1], [0, 0, 2]], v, (2, 3))
    with pytest.raises(RuntimeError, match="number of dimensions"):
        lucid.sparse_coo_tensor([[0, 1], [0, 0]], v, (2, 3, 4))
    with pytest.raises(RuntimeError, match="not sorted and distinct"):
        lucid.sparse_coo_tensor([[1, 0], [0, 0]], v, (2, 3), is_coalesced=True)
    with pytest.raises(RuntimeError, match="crow_indices.shape"):
        lucid.sparse_csr_tensor([0, 2], [0, 1], v, (2, 3))
    with pytest.raises(RuntimeError, match=r"crow_indices\[0\] must be 0"):
        lucid.sparse_csr_tensor([1, 1, 2], [0, 1], v, (2, 3))
    with pytest.raises(RuntimeError, match=r"crow_indices\[-1\] must be nnz"):
        lucid.sparse_csr_tensor([0, 1, 3], [0, 1], v, (2, 3))
    with pytest.raises(RuntimeError, match="non-decreasing"):
        lucid.sparse_csr_tensor([0, 2, 1, 2], [0, 1], v, (3, 3))
    with pytest.raises(RuntimeError, match=r"col_indices must lie in \[0, 3\), but found 5"):
        lucid.sparse_csr_tensor([0, 1, 2], [0, 5], v, (2, 3))
    with pytest.raises(RuntimeError, match="sorted and distinct within each row"):
        lucid.sparse_csr_tensor([0, 2], [2, 1], v, (1, 3))
    with pytest.raises(RuntimeError, match="int64"):
        lucid.sparse_coo_tensor(lucid.tensor([[0.0, 1.0]]), v, (2,))
    # an index written in place after the checks is caught before any kernel reads it
    s = lucid.sparse_coo_tensor([[0, 1], [0, 2]], v, (2, 3)).coalesce()
    s.indices()[1, 1] = 7
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        s @ lucid.ones(3, 2, device=device)
    c = lucid.sparse_csr_tensor([0, 1, 2], [0, 2], v, (2, 3))
    c.col_indices()[0] = -4
    with pytest.raises(RuntimeError, match="col_indices must lie"):
        lucid.sparse.mm(c, lucid.ones(3, 2, device=device))


@pytest.mark.parametrize("form", ["coo", "coalesced", "csr"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_products_match_torch(device, form, dtype):
    l, t = _coo_pair(device, dtype=dtype, coalesced=form != "coo", size=(6, 5), nnz=11)
    if form == "csr":
        l, t = l.to_sparse_csr(), t.to_sparse_csr()
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    d = torch.randn(5, 3, dtype=dtype, generator=torch.Generator().manual_seed(1))
    v = torch.randn(5, dtype=dtype, generator=torch.Generator().manual_seed(2))
    ld, lv = to_lucid(d, device), to_lucid(v, device)
    want = t.to_dense() @ d
    for got in (lucid.sparse.mm(l, ld), lucid.spmm(l, ld), lucid.mm(l, ld), lucid.matmul(l, ld), l @ ld, l.mm(ld)):
        _close(got, want, tol)
    _close(l @ lv, t.to_dense() @ v, tol)
    e = torch.randn(4, 6, dtype=dtype, generator=torch.Generator().manual_seed(3))
    _close(to_lucid(e, device) @ l, e @ t.to_dense(), tol)
    _close(lucid.matmul(to_lucid(e, device), l), e @ t.to_dense(), tol)
    m = torch.randn(6, 3, dtype=dtype, generator=torch.Generator().manual_seed(4))
    lm = to_lucid(m, device)
    _close(lucid.addmm(lm, l, ld, beta=0.5, alpha=2.0), torch.addmm(m, t.to_dense(), d, beta=0.5, alpha=2.0), tol)
    _close(lucid.sparse.addmm(lm, l, ld), m + t.to_dense() @ d, tol)
    out = lucid.empty(6, 3, dtype=l.dtype, device=device)
    assert lucid.mm(l, ld, out=out) is out
    _close(out, want, tol)
    _close(lucid.sparse.mm(l, l.t()), t.to_dense() @ t.to_dense().T, tol)


def test_product_errors(device):
    l, _ = _coo_pair(device, size=(4, 3))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        l @ lucid.ones(4, 2, dtype=lucid.float64, device=device)
    with pytest.raises(RuntimeError, match="same dtype"):
        l @ lucid.ones(3, 2, device=device)
    with pytest.raises(TypeError, match="must be Tensor"):
        lucid.mm(l, [[1.0]])
    with pytest.raises(TypeError, match="must be Tensor"):
        lucid.mm("x", l)
    h, _ = _coo_pair(device, size=(4, 3), dense=(2,))
    with pytest.raises(RuntimeError, match="sparse matrix"):
        h @ lucid.ones(3, 2, dtype=lucid.float64, device=device)
    other = "cpu" if device != "cpu" else None
    if other:
        with pytest.raises(RuntimeError, match="same device"):
            l @ lucid.ones(3, 2, dtype=lucid.float64, device=other)


def test_empty_and_zero_rows(device):
    s = lucid.sparse_coo_tensor(lucid.zeros(2, 0, dtype=lucid.int64), lucid.zeros(0, dtype=lucid.float64), (3, 4),
                                device=device)
    d = lucid.ones(4, 2, dtype=lucid.float64, device=device)
    assert (s @ d).tolist() == [[0.0, 0.0]] * 3
    c = lucid.sparse_csr_tensor([0, 0, 2, 2], [1, 3], [1.0, 2.0], (3, 4), dtype=lucid.float64, device=device)
    assert (c @ d).tolist() == [[0.0, 0.0], [3.0, 3.0], [0.0, 0.0]]
    assert (c.t() @ lucid.ones(3, 1, dtype=lucid.float64, device=device)).tolist() == [[0.0], [1.0], [0.0], [2.0]]
    assert (s @ s.t()).to_dense().tolist() == [[0.0] * 3] * 3 and (c @ s.t())._nnz() == 0


@pytest.mark.parametrize("form", ["coo", "coalesced", "csr"])
def test_product_gradients_match_torch(device, form):
    """d(S @ D) w.r.t. D and S's values as torch's (S a leaf: S.grad holds its values'),
    and against float64 numerical gradients."""
    l, t = _coo_pair(device, coalesced=form != "coo", size=(6, 5), nnz=12)
    if form == "csr":
        l, t = l.to_sparse_csr(), t.to_sparse_csr()
    l.requires_grad_()
    t = t.detach().requires_grad_()
    d = torch.randn(5, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    ld, td = to_lucid(d, device).requires_grad_(), d.clone().requires_grad_()
    g = torch.randn(6, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    (lucid.sparse.mm(l, ld) * to_lucid(g, device)).sum().backward()
    (torch.sparse.mm(t, td) * g).sum().backward()
    _close(ld.grad, td.grad, 1e-12)
    assert l.grad is not None and l.grad.layout is l.layout
    _close(l.grad, t.grad, 1e-12)
    # numerical: the values and the dense operand together, and a second product
    indices = l._coo()._ind
    f = lambda v, x: (lucid.sparse_coo_tensor(indices, v, (6, 5)) @ x).sin()  # noqa: E731
    v0 = l._val.detach().clone().requires_grad_()
    assert lucid.autograd.gradcheck(f, (v0, ld.detach().clone().requires_grad_()))
    assert lucid.autograd.gradgradcheck(f, (v0, ld.detach().clone().requires_grad_()))


@pytest.mark.parametrize("forms", [("coo", "coo"), ("coalesced", "csr"), ("csr", "csr")])
def test_sparse_times_sparse_matches_torch(device, forms):
    """S1 @ S2 sparse, never dense: its values as torch's product (duplicate entries and
    rows of B with no entries included), CSR when both are, and the gradients of both
    value sets as torch's sparse.mm's; shape and dtype errors."""
    a, ta = _coo_pair(device, coalesced=forms[0] != "coo", size=(6, 5), nnz=12)
    b, tb = _coo_pair(device, coalesced=True, size=(5, 7), nnz=8, seed=3)
    if forms[0] == "csr":
        a, ta = a.to_sparse_csr(), ta.to_sparse_csr()
    if forms[1] == "csr":
        b, tb = b.to_sparse_csr(), tb.to_sparse_csr()
    a.requires_grad_()
    b.requires_grad_()
    ta, tb = ta.detach().coalesce().requires_grad_() if ta.layout == torch.sparse_coo else ta.detach(), tb.detach()
    for got in (lucid.sparse.mm(a, b), a @ b, lucid.mm(a, b), lucid.matmul(a, b)):
        assert isinstance(got, lucid._sparse.SparseTensor)
        assert got.layout is (lucid.sparse_csr if forms == ("csr", "csr") else lucid.sparse_coo)
        _close(got.to_dense(), ta.detach().to_dense() @ tb.to_dense(), 1e-12)
    g = torch.randn(6, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    (lucid.sparse.mm(a, b).to_dense() * to_lucid(g, device)).sum().backward()
    ta_d, tb_d = ta.detach().to_dense().requires_grad_(), tb.to_dense().requires_grad_()
    (ta_d @ tb_d * g).sum().backward()
    # (each stored entry's gradient is the dense gradient at its index)
    _close(a.grad.to_dense(), ta_d.grad * (ta.detach().to_dense() != 0), 1e-12)
    _close(b.grad.to_dense(), tb_d.grad * (tb.to_dense() != 0), 1e-12)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        a @ a
    with pytest.raises(RuntimeError, match="same dtype"):
        lucid.sparse.mm(a.detach(), b.detach().float())


def test_dense_times_sparse_gradients(device):
    l, t = _coo_pair(device, coalesced=True, size=(5, 4))
    e = torch.randn(3, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    le, te = to_lucid(e, device).requires_grad_(), e.clone().requires_grad_()
    (le @ l).square().sum().backward()
    (te @ t.to_dense()).square().sum().backward()
    _close(le.grad, te.grad, 1e-12)


def test_sum(device):
    l, t = _coo_pair(device, size=(4, 3), dense=(2,), nnz=8)
    _close(lucid.sparse.sum(l), torch.sparse.sum(t), 1e-12)
    for dim in (0, 1, 2, (0, 1), (0, 2), (1, 2), -1):
        _close(lucid.sparse.sum(l, dim), torch.sparse.sum(t, dim), 1e-12)
    assert isinstance(lucid.sparse.sum(l, 0), lucid._sparse.SparseTensor)
    assert isinstance(lucid.sparse.sum(l, (0, 1)), lucid.Tensor)
    assert lucid.sparse.sum(l, dtype=lucid.float32).dtype == lucid.float32
    l.requires_grad_()
    lucid.sparse.sum(l, 0).to_dense().square().sum().backward()
    t = t.detach().requires_grad_()
    torch.sparse.sum(t, 0).to_dense().square().sum().backward()
    _close(l.grad, t.grad, 1e-12)
    _close(l.sum(), t.to_dense().sum(), 1e-12)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax(device, fn):
    l, t = _coo_pair(device, size=(5, 6), nnz=14, seed=3)
    for dim in (0, 1, -1):
        got, want = getattr(lucid.sparse, fn)(l, dim), getattr(torch.sparse, fn)(t.coalesce(), dim)
        assert got.indices().tolist() == want.coalesce().indices().tolist()
        _close(got.values(), want.coalesce().values(), 1e-12)
    h, th = _coo_pair(device, size=(4, 3), dense=(2,), nnz=6, seed=4)
    for dim in (0, 2):
        _close(getattr(lucid.sparse, fn)(h, dim).values(), getattr(torch.sparse, fn)(th.coalesce(), dim).values(),
               1e-12)
    l = l.coalesce().requires_grad_()
    t = t.coalesce().detach().requires_grad_()
    w = torch.randn(l._nnz(), dtype=torch.float64, generator=torch.Generator().manual_seed(6))
    (getattr(lucid.sparse, fn)(l, 1).values() * to_lucid(w, device)).sum().backward()
    (getattr(torch.sparse, fn)(t, 1).coalesce().values() * w).sum().backward()
    _close(l.grad, t.grad, 1e-12)
    csr = getattr(lucid.sparse, fn)(l.detach().to_sparse_csr(), 1)
    assert csr.layout is lucid.sparse_csr


def test_sampled_addmm(device):
    c = torch.tensor([[0.0, 2.0, 0.0], [1.0, 0.0, -1.0]], dtype=torch.float64).to_sparse_csr()
    a = torch.randn(2, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(7))
    b = torch.randn(4, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(8))
    lc = to_lucid(c.to_dense(), device).to_sparse_csr()
    got = lucid.sparse.sampled_addmm(lc, to_lucid(a, device), to_lucid(b, device), beta=0.5, alpha=2.0)
    want = torch.sparse.sampled_addmm(c, a, b, beta=0.5, alpha=2.0)
    assert got.layout is lucid.sparse_csr
    _close(got, want, 1e-12)
    out = lucid.zeros(2, 3, layout=lucid.sparse_csr, dtype=lucid.float64, device=device)
    assert lucid.sparse.sampled_addmm(lc, to_lucid(a, device), to_lucid(b, device), beta=0.5, alpha=2.0, out=out) is out
    _close(out, want, 1e-12)
    with pytest.raises(RuntimeError, match="sparse CSR"):
        lucid.sparse.sampled_addmm(lc.to_sparse_coo(), to_lucid(a, device), to_lucid(b, device))


def test_elementwise_transpose_and_conversions(device):
    l, t = _coo_pair(device, size=(4, 5))
    o, to = _coo_pair(device, size=(4, 5), seed=9)
    _close(l * 2, t * 2, 1e-12)
    _close(3 * l, t * 3, 1e-12)
    _close(l / 4, t / 4, 1e-12)
    _close(-l, -t, 1e-12)
    _close(l + o, t + to, 1e-12)
    _close(l - o, t - to, 1e-12)
    _close(l * o, (t * to), 1e-12)
    dense = torch.randn(4, 5, dtype=torch.float64)
    _close(l + to_lucid(dense, device), t.to_dense() + dense, 1e-12)
    _close(l.t(), t.t(), 1e-12)
    _close(l.transpose(0, 1), t.transpose(0, 1), 1e-12)
    _close(l.abs(), t.abs(), 1e-12)
    f = l.float()
    assert f.dtype == lucid.float32 and f.layout is lucid.sparse_coo
    assert l.to(lucid.float32).dtype == lucid.float32
    assert l.cpu().device.type == "cpu" and l.cpu().to(device).device.type == device
    c = l.clone()
    c._val.add_(1)
    _close(l, t, 1e-12)
    assert "layout=lucid.sparse_coo" in repr(l) and "nnz=" in repr(l)
    assert "crow_indices" in repr(l.to_sparse_csr())
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(l)
    with pytest.raises(AttributeError, match="Tensor.exp is not supported for the lucid.sparse_coo layout"):
        l.exp()
    assert not hasattr(l, "no_such_thing")
    mask = to_lucid(dense, device).sparse_mask(l.coalesce())
    _close(mask, dense.sparse_mask(t.coalesce()), 1e-12)


def test_save_and_load_keep_sparse_tensors(device, tmp_path):
    l, t = _coo_pair(device, coalesced=True)
    c = l.to_sparse_csr()
    path = tmp_path / "s.pt"
    lucid.save({"coo": l, "csr": c}, path)
    back = lucid.load(path)
    assert back["coo"].layout is lucid.sparse_coo and back["csr"].layout is lucid.sparse_csr
    _close(back["coo"], t, 0)
    _close(back["csr"], t, 0)


def _gcn_data(nodes=40, edges=120, features=12, classes=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    src, dst = torch.randint(0, nodes, (edges,), generator=g), torch.randint(0, nodes, (edges,), generator=g)
    idx = torch.cat([torch.stack([src, dst]), torch.stack([dst, src]), torch.arange(nodes).repeat(2, 1)], 1)
    adj = torch.sparse_coo_tensor(idx, torch.ones(idx.shape[1], dtype=torch.float64), (nodes, nodes)).coalesce()
    deg = torch.sparse.sum(adj, 1).to_dense()
    r, c = adj.indices()
    adj = torch.sparse_coo_tensor(adj.indices(), adj.values() / (deg[r] * deg[c]).sqrt(), adj.shape).coalesce()
    x = torch.randn(nodes, features, generator=g, dtype=torch.float64)
    y = torch.randint(0, classes, (nodes,), generator=g)
    w1 = torch.randn(features, 8, generator=g, dtype=torch.float64) * 0.3
    w2 = torch.randn(8, classes, generator=g, dtype=torch.float64) * 0.3
    return adj, x, y, w1, w2


def test_graph_convolution_training_step_matches_torch(device):
    """Two GCN layers (Kipf and Welling): loss and weight gradients as torch's."""
    adj, x, y, w1, w2 = _gcn_data()
    la = lucid.sparse_coo_tensor(to_lucid(adj.indices(), device), to_lucid(adj.values(), device), adj.shape)
    lx, ly = to_lucid(x, device), to_lucid(y, device)
    lw1, lw2 = to_lucid(w1, device).requires_grad_(), to_lucid(w2, device).requires_grad_()
    tw1, tw2 = w1.clone().requires_grad_(), w2.clone().requires_grad_()
    lh = lucid.spmm(la, lucid.mm(lx, lw1)).relu()
    lloss = lucid.nn.functional.cross_entropy(lucid.spmm(la, lucid.mm(lh, lw2)), ly)
    th = torch.spmm(adj, x @ tw1).relu()
    tloss = torch.nn.functional.cross_entropy(torch.spmm(adj, th @ tw2), y)
    lloss.backward()
    tloss.backward()
    _close(lloss, tloss, 1e-12)
    _close(lw1.grad, tw1.grad, 1e-12)
    _close(lw2.grad, tw2.grad, 1e-12)


def test_spdiags_legacy_types_and_invariant_checks(device):
    """spdiags as torch's (offsets above, below and past the edge, COO and CSR); the legacy
    typed constructors; check_sparse_tensor_invariants as a context and a decorator (lucid
    checks always)."""
    diags = torch.arange(12.0).reshape(3, 4)
    # (torch's own spdiags writes out of bounds for diagonals wider than the matrix or
    # offsets past it, so the reference cases keep within both)
    for offsets, shape in (([0, -1, 2], (4, 4)), ([1, -3, 0], (3, 5)), ([0, -2, 3], (6, 4))):
        want = torch.sparse.spdiags(diags, torch.tensor(offsets), shape).to_dense()
        got = lucid.sparse.spdiags(to_lucid(diags, device), lucid.tensor(offsets, device=device), shape)
        _close(got.to_dense(), want)
        csr = lucid.sparse.spdiags(to_lucid(diags, device), lucid.tensor(offsets), shape, layout=lucid.sparse_csr)
        assert csr.layout is lucid.sparse_csr
        _close(csr.to_dense(), want)
    wide = lucid.sparse.spdiags(to_lucid(diags, device), lucid.tensor([0, 5, -2]), (5, 3))  # (scipy's meaning)
    assert wide.to_dense().tolist() == [[0, 0, 0], [0, 1, 0], [8, 0, 2], [0, 9, 0], [0, 0, 10]]
    with pytest.raises(RuntimeError, match="duplicate"):
        lucid.sparse.spdiags(to_lucid(diags, device), lucid.tensor([0, 0, 1]), (4, 4))
    with pytest.raises(RuntimeError, match="does not match"):
        lucid.sparse.spdiags(to_lucid(diags, device), lucid.tensor([0, 1]), (4, 4))
    for name, dtype in (("LongTensor", lucid.int64), ("ByteTensor", lucid.uint8), ("HalfTensor", lucid.float16)):
        s = getattr(lucid.sparse, name)(lucid.tensor([[0, 1], [1, 0]]), lucid.tensor([3, 4]), (2, 2))
        assert s.dtype == dtype and s.to_dense().tolist() == [[0, 3], [4, 0]]

    @lucid.sparse.check_sparse_tensor_invariants()
    def make():
        return lucid.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (2,))
    with pytest.raises(RuntimeError, match="inconsistent with indices"):
        make()
    with lucid.sparse.check_sparse_tensor_invariants():
        assert lucid.sparse.check_sparse_tensor_invariants.is_enabled()


def test_coo_index_select_and_mv_as_torch(device):
    ti = torch.tensor([[0, 2, 1, 2, 0], [1, 0, 2, 2, 0]])
    tv = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    ts = torch.sparse_coo_tensor(ti, tv, (3, 3))
    s = lucid.sparse_coo_tensor(to_lucid(ti, device), to_lucid(tv, device), (3, 3))
    for sparse, tsparse in ((s, ts), (s.coalesce(), ts.coalesce())):
        for dim, index in ((0, [2, 0, 2]), (1, [2, 0]), (-1, [1]), (0, [-1, 0]), (0, [])):
            got = sparse.index_select(dim, lucid.tensor(index, dtype=lucid.int64, device=device))
            want = tsparse.index_select(dim, torch.tensor(index, dtype=torch.int64))
            # the same entries in the same order, not coalesced
            assert got.is_coalesced() == want.is_coalesced() and got.shape == tuple(want.shape)
            assert got._indices().tolist() == want._indices().tolist()
            assert got._values().tolist() == want._values().tolist()
        assert s.mv(lucid.ones(3, device=device)).tolist() == ts.mv(torch.ones(3)).tolist()
    # a dense dim selects from the values
    hybrid = lucid.sparse_coo_tensor(lucid.tensor([[0, 1]], device=device), lucid.ones(2, 3, device=device), (2, 3))
    assert hybrid.index_select(1, lucid.tensor([2, 2], device=device))._values().shape == (2, 2)
    # differentiable through the values
    v = to_lucid(tv, device).requires_grad_()
    lucid.sparse_coo_tensor(to_lucid(ti, device), v, (3, 3)).index_select(0, lucid.tensor([2, 2], device=device)) \
        .to_dense().sum().backward()
    assert v.grad.tolist() == [0.0, 2.0, 0.0, 2.0, 0.0]
    with pytest.raises(IndexError, match="index contains 3 that is out of range"):
        s.index_select(0, lucid.tensor([3], device=device))
    with pytest.raises(IndexError, match="must be 1-D"):
        s.index_select(0, lucid.tensor([[0]], device=device))
    with pytest.raises(NotImplementedError, match="COO only"):
        s.to_sparse_csr().index_select(0, lucid.tensor([0], device=device))
    with pytest.raises(RuntimeError, match=r"mv: expected self.size\(-1\) == vec.size\(-1\)"):
        s.mv(lucid.ones(2, device=device))
    with pytest.raises(RuntimeError, match="mv: two tensor dim should be 2 and 1"):
        s.mv(lucid.ones(3, 1, device=device))
