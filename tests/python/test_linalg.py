"""Matrix products (matmul, mm, bmm, mv, dot, vdot, outer, addmm, addmv, baddbmm,
einsum, tensordot, nn.functional.linear) against PyTorch: values, dtypes, every
rank/broadcast case, strided inputs, empty dims, errors, and gradients (against torch
and by lucid.autograd.gradcheck in float64), on every device: on the GPU each result is on
the GPU and agrees with lucid's CPU result, and gradients are checked against torch's
CUDA."""

import numpy as np
import pytest
import torch

import lucid
import lucid.nn.functional as LF
from conftest import to_lucid, to_torch, default_device

# Tolerances per dtype: half types round once at the end (PyTorch and lucid both
# accumulate in float), so they differ by at most a rounding of the output.
TOL = {"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10), "float16": (2e-3, 2e-3),
       "bfloat16": (1.6e-2, 1e-2), "complex64": (1e-4, 1e-4)}


def rand(shape, dtype="float32", seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape) * 7 + len(shape))
    dt = getattr(torch, dtype)
    if dtype in ("uint8",):
        return torch.randint(0, 5, shape, generator=g, dtype=dt)
    if dtype in ("int8", "int16", "int32", "int64"):
        return torch.randint(-5, 6, shape, generator=g, dtype=dt)
    if dtype == "complex64":
        return torch.randn(shape, generator=g, dtype=torch.complex64)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dt)


def _torch_device(device):
    return "cuda" if device == "gpu" else "cpu"


def check(lt, tt, dtype=None):
    tt = tt.detach().cpu()
    dtype = dtype or str(tt.dtype).split(".")[-1]
    assert tuple(lt.shape) == tuple(tt.shape), (lt.shape, tt.shape)
    assert str(lt.dtype).split(".")[-1] == str(tt.dtype).split(".")[-1]
    if dtype in TOL:
        rtol, atol = TOL[dtype]
        torch.testing.assert_close(to_torch(lt), tt, rtol=rtol, atol=atol)
    else:
        assert to_torch(lt).tolist() == tt.tolist()


def check_on(device, make, tt, dtype=None):
    """make(d), lucid ops on inputs made on device d, run on `device` matches torch's tt; on
    the GPU the result is on the GPU and matches make("cpu") too."""
    lt = make(device)
    assert lt.device.type == device, (lt.device, device)
    check(lt, tt, dtype)
    if device != "cpu":
        check(lt, to_torch(make("cpu")), dtype)


# ---- matmul: every rank case ---------------------------------------------------------

MATMUL_SHAPES = [
    ((3,), (3,)),                  # dot
    ((2, 3), (3,)),                # mv
    ((3,), (3, 4)),                # vector @ matrix
    ((2, 3), (3, 4)),              # mm
    ((5, 2, 3), (5, 3, 4)),        # bmm
    ((5, 2, 3), (3, 4)),           # batch @ matrix (rows merged into one gemm)
    ((2, 3), (5, 3, 4)),           # matrix @ batch
    ((5, 2, 3), (3,)),             # N-D @ vector
    ((3,), (5, 3, 4)),             # vector @ N-D
    ((2, 1, 2, 3), (5, 3, 4)),     # broadcast batch dims
    ((1, 5, 2, 3), (4, 1, 3, 2)),  # broadcast both ways
    ((2, 5, 2, 3), (3, 1)),
    ((1, 3), (3, 1)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_shapes(sa, sb, dtype, device):
    a, b = rand(sa, dtype), rand(sb, dtype, 1)
    check_on(device, lambda d: lucid.matmul(to_lucid(a, d), to_lucid(b, d)), torch.matmul(a, b))
    check_on(device, lambda d: to_lucid(a, d) @ to_lucid(b, d), a @ b)
    check_on(device, lambda d: to_lucid(a, d).matmul(to_lucid(b, d)), a.matmul(b))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64",
                                   "uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((4, 5), (5, 6)),
                                   ((3, 4, 5), (3, 5, 2)), ((3, 4, 5), (5, 2))])
def test_matmul_dtypes(dtype, sa, sb, device):
    a, b = rand(sa, dtype), rand(sb, dtype, 1)
    check_on(device, lambda d: lucid.matmul(to_lucid(a, d), to_lucid(b, d)), torch.matmul(a, b), dtype)


def test_large_gemm_against_torch(device):
    # Large enough to take OpenBLAS's threaded, blocked path.
    a, b = rand((300, 257)), rand((257, 190), seed=3)
    check_on(device, lambda d: lucid.mm(to_lucid(a, d), to_lucid(b, d)), a @ b)
    a64, b64 = a.double(), b.double()
    check_on(device, lambda d: lucid.mm(to_lucid(a64, d), to_lucid(b64, d)), a64 @ b64)
    ai, bi = rand((70, 80), "int32"), rand((80, 90), "int32", 2)
    check_on(device, lambda d: lucid.mm(to_lucid(ai, d), to_lucid(bi, d)), ai @ bi)


def test_integer_matmul_wraps_like_torch(device):
    a = torch.full((2, 40), 100, dtype=torch.int8)
    b = torch.full((40, 3), 7, dtype=torch.int8)
    check_on(device, lambda d: lucid.mm(to_lucid(a, d), to_lucid(b, d)), a @ b)


# ---- strided and transposed inputs ----------------------------------------------------

STRIDED_CASES = [  # (name, view of a [6, 8, 10] base, shape of the right operand)
    ("transposed", lambda x: x[0].t(), (8, 3)),
    ("row-sliced", lambda x: x[0, ::2], (10, 4)),           # row stride 20
    ("col-step", lambda x: x[0, :, ::2], (5, 3)),           # column stride 2: copied
    ("batch-transposed", lambda x: x.transpose(1, 2), (6, 8, 3)),
    ("permuted", lambda x: x.permute(1, 0, 2), (10, 2)),    # rows don't merge with batch
    ("expanded", lambda x: x[0, :1].expand(5, 10), (10, 3)),  # row stride 0
    ("offset", lambda x: x[2, 3:, 4:], (6, 2)),
]


@pytest.mark.parametrize("name,view,sb", STRIDED_CASES, ids=[c[0] for c in STRIDED_CASES])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int64", "bfloat16"])
def test_non_contiguous_inputs(name, view, sb, dtype, device):
    base, b = rand((6, 8, 10), dtype), rand(sb, dtype, 1)
    a = view(base)
    assert tuple(view(to_lucid(base, device)).stride()) == tuple(a.stride())
    check_on(device, lambda d: lucid.matmul(view(to_lucid(base, d)), to_lucid(b, d)), torch.matmul(a, b), dtype)
    # and as the right operand
    bt = b.transpose(-1, -2).contiguous()
    check_on(device, lambda d: lucid.matmul(to_lucid(bt, d), view(to_lucid(base, d)).transpose(-1, -2)),
             torch.matmul(bt, a.transpose(-1, -2)), dtype)


def test_transposed_views_are_read_in_place(device):
    a, b = rand((7, 5)), rand((6, 7), seed=1)
    check_on(device, lambda d: lucid.mm(to_lucid(a, d).t(), to_lucid(b, d).t()), a.t() @ b.t())
    check_on(device, lambda d: lucid.mm(to_lucid(a, d).t(), to_lucid(a, d)), a.t() @ a)
    x = rand((4, 6, 5))
    check_on(device, lambda d: lucid.bmm(to_lucid(x, d).transpose(1, 2), to_lucid(x, d)), x.transpose(1, 2) @ x)
    check_on(device, lambda d: lucid.matmul(to_lucid(x, d)[:, ::2], to_lucid(x, d).transpose(1, 2)[:, :, 1:4]),
             x[:, ::2] @ x.transpose(1, 2)[:, :, 1:4])
    check_on(device, lambda d: lucid.matmul(to_lucid(x, d)[:, :, ::2], to_lucid(rand((3, 2)), d)),
             x[:, :, ::2] @ rand((3, 2)))


# ---- empty dims --------------------------------------------------------------------------

@pytest.mark.parametrize("sa,sb", [((2, 0), (0, 3)), ((0, 3), (3, 4)), ((2, 3), (3, 0)),
                                   ((0,), (0,)), ((4, 2, 0), (4, 0, 3)), ((0, 2, 3), (3, 4))])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_empty(sa, sb, dtype, device):
    a, b = rand(sa, dtype), rand(sb, dtype)
    check_on(device, lambda d: lucid.matmul(to_lucid(a, d), to_lucid(b, d)), torch.matmul(a, b))


def test_addmm_k0_is_beta_input(device):
    inp = rand((2, 3))
    m1, m2 = torch.zeros(2, 0), torch.zeros(0, 3)
    check_on(device, lambda d: lucid.addmm(to_lucid(inp, d), to_lucid(m1, d), to_lucid(m2, d), beta=2.5),
             torch.addmm(inp, m1, m2, beta=2.5))


# ---- the named ops -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32"])
def test_mm_bmm_mv_dot(dtype, device):
    a, b = rand((3, 4), dtype), rand((4, 5), dtype, 1)
    check_on(device, lambda d: lucid.mm(to_lucid(a, d), to_lucid(b, d)), torch.mm(a, b))
    check_on(device, lambda d: to_lucid(a, d).mm(to_lucid(b, d)), a.mm(b))
    x, y = rand((2, 3, 4), dtype), rand((2, 4, 5), dtype, 1)
    check_on(device, lambda d: lucid.bmm(to_lucid(x, d), to_lucid(y, d)), torch.bmm(x, y))
    check_on(device, lambda d: to_lucid(x, d).bmm(to_lucid(y, d)), x.bmm(y))
    v = rand((4,), dtype, 2)
    check_on(device, lambda d: lucid.mv(to_lucid(a, d), to_lucid(v, d)), torch.mv(a, v))
    check_on(device, lambda d: to_lucid(a, d).mv(to_lucid(v, d)), a.mv(v))
    w = rand((4,), dtype, 3)
    check_on(device, lambda d: lucid.dot(to_lucid(v, d), to_lucid(w, d)), torch.dot(v, w))
    check_on(device, lambda d: to_lucid(v, d).dot(to_lucid(w, d)), v.dot(w))
    check_on(device, lambda d: lucid.vdot(to_lucid(v, d), to_lucid(w, d)), torch.vdot(v, w))
    check_on(device, lambda d: lucid.outer(to_lucid(v, d), to_lucid(w, d)), torch.outer(v, w))
    check_on(device, lambda d: to_lucid(v, d).outer(to_lucid(w, d)), v.outer(w))


def test_outer_promotes(device):
    a, b = torch.arange(3, dtype=torch.int32), rand((4,))
    check_on(device, lambda d: lucid.outer(to_lucid(a, d), to_lucid(b, d)), torch.outer(a, b))


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1), (2, 0)])
@pytest.mark.parametrize("inp_shape", [(3, 5), (5,), (1, 5), (3, 1), ()])
def test_addmm(beta, alpha, inp_shape, device):
    inp, a, b = rand(inp_shape), rand((3, 4), seed=1), rand((4, 5), seed=2)
    check_on(device, lambda d: lucid.addmm(to_lucid(inp, d), to_lucid(a, d), to_lucid(b, d), beta=beta, alpha=alpha),
             torch.addmm(inp, a, b, beta=beta, alpha=alpha))
    check_on(device, lambda d: to_lucid(inp, d).addmm(to_lucid(a, d), to_lucid(b, d), beta=beta, alpha=alpha),
             inp.addmm(a, b, beta=beta, alpha=alpha))


def test_addmm_beta0_ignores_nan(device):
    inp = torch.full((2, 2), float("nan"))
    a, b = rand((2, 3)), rand((3, 2))
    check_on(device, lambda d: lucid.addmm(to_lucid(inp, d), to_lucid(a, d), to_lucid(b, d), beta=0),
             torch.addmm(inp, a, b, beta=0))


def test_addmm_integer(device):
    inp, a, b = rand((3, 5), "int64"), rand((3, 4), "int64", 1), rand((4, 5), "int64", 2)
    check_on(device, lambda d: lucid.addmm(to_lucid(inp, d), to_lucid(a, d), to_lucid(b, d), beta=2, alpha=3),
             torch.addmm(inp, a, b, beta=2, alpha=3))


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, -2.0), (0, 1)])
def test_addmv_baddbmm(beta, alpha, device):
    inp, m, v = rand((3,)), rand((3, 4), seed=1), rand((4,), seed=2)
    check_on(device, lambda d: lucid.addmv(to_lucid(inp, d), to_lucid(m, d), to_lucid(v, d), beta=beta, alpha=alpha),
             torch.addmv(inp, m, v, beta=beta, alpha=alpha))
    inp, x, y = rand((2, 1, 5)), rand((2, 3, 4), seed=1), rand((2, 4, 5), seed=2)
    check_on(device, lambda d: lucid.baddbmm(to_lucid(inp, d), to_lucid(x, d), to_lucid(y, d), beta=beta, alpha=alpha),
             torch.baddbmm(inp, x, y, beta=beta, alpha=alpha))


def test_gradients_keep_column_major_layouts(device):
    # As torch's: a product's gradient for a transposed contiguous operand is computed
    # as a transposed product, so a linear weight's gradient arrives contiguous (and
    # complex operands get the conjugate gradients either way).
    for dtype in ("float32", "complex64"):
        a, b = rand((4, 3), dtype), rand((5, 4), dtype, seed=1)
        g = rand((3, 5), dtype, seed=2)
        ta, tb = a.clone().requires_grad_(), b.clone().requires_grad_()
        la, lb = to_lucid(a, device).requires_grad_(), to_lucid(b, device).requires_grad_()
        torch.mm(ta.t(), tb.t()).backward(g)
        lucid.mm(la.t(), lb.t()).backward(to_lucid(g, device))
        for lt, tt in ((la.grad, ta.grad), (lb.grad, tb.grad)):
            assert lt.stride() == tt.stride() == (tt.shape[1], 1)
            np.testing.assert_allclose(lt.cpu().numpy(), tt.numpy(), rtol=1e-5, atol=1e-5)
    x, w = rand((2, 6, 3), "float32"), rand((5, 3), "float32", seed=1)
    lw = to_lucid(w, device).requires_grad_()
    LF.linear(to_lucid(x, device), lw).sum().backward()
    assert lw.grad.is_contiguous()


@pytest.mark.parametrize("in_shape,w_shape,bias", [
    ((4, 3), (5, 3), True), ((4, 3), (5, 3), False), ((2, 4, 3), (5, 3), True),
    ((3,), (5, 3), True), ((2, 4, 3), (3,), False), ((2, 4, 3), (3,), True)])
def test_linear(in_shape, w_shape, bias, device):
    x, w = rand(in_shape), rand(w_shape, seed=1)
    b = rand(w_shape[:1] if len(w_shape) == 2 else (), seed=2) if bias else None
    check_on(device, lambda d: LF.linear(to_lucid(x, d), to_lucid(w, d), to_lucid(b, d) if bias else None),
             torch.nn.functional.linear(x, w, b))


def test_out_argument(device):
    a, b = rand((3, 4)), rand((4, 5), seed=1)
    la, lb = to_lucid(a, device), to_lucid(b, device)
    out = lucid.empty(3, 5, device=device)
    r = lucid.mm(la, lb, out=out)
    assert r is out and out.device.type == device
    check(out, a @ b)
    out = lucid.empty(0, device=device)  # resized like PyTorch does
    assert lucid.matmul(la, lb, out=out) is out
    check(out, a @ b)
    x, y = rand((2, 3, 4)), rand((2, 4, 5))
    out = lucid.empty(2, 3, 5, device=device)
    lucid.bmm(to_lucid(x, device), to_lucid(y, device), out=out)
    check(out, x @ y)
    with pytest.raises(RuntimeError):
        lucid.mm(la, lb, out=lucid.empty(3, 5, dtype=lucid.float64, device=device))
    with pytest.raises(RuntimeError):
        lucid.mm(to_lucid(a, device).requires_grad_(), lb, out=lucid.empty(3, 5, device=device))


def test_threads():
    n = lucid.get_num_threads()
    assert n >= 1
    lucid.set_num_threads(1)
    assert lucid.get_num_threads() == 1
    a, b = rand((64, 64)), rand((64, 64), seed=1)
    check(lucid.mm(to_lucid(a), to_lucid(b)), a @ b)
    lucid.set_num_threads(n)
    assert lucid.get_num_threads() == n
    with pytest.raises(RuntimeError):
        lucid.set_num_threads(0)


# ---- einsum and tensordot ------------------------------------------------------------------

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ii->", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->ji", [(3, 3, 2)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->j", [(2, 3)]),
    ("...ij,...jk->...ik", [(2, 5, 2, 3), (5, 3, 4)]),
    ("...ij,jk", [(2, 2, 3), (3, 4)]),
    ("b...,b...->b", [(3, 2, 4), (3, 2, 4)]),
    ("i...->...", [(3, 2, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ab,cd,bd->ac", [(2, 3), (4, 5), (3, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ij,ij->", [(2, 3), (2, 3)]),
    ("i,jk->", [(3,), (2, 4)]),
    ("ij,kj->ik", [(2, 1), (4, 3)]),   # size-1 label broadcasts
    ("Ab,bC->AC", [(2, 3), (3, 4)]),
    ("ba", [(2, 3)]),
    (" i j , j k -> i k ", [(2, 3), (3, 4)]),
    ("ij,jk->ik", [(2, 0), (0, 4)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum(eq, shapes, device):
    ts = [rand(s, "float64", i) for i, s in enumerate(shapes)]
    check_on(device, lambda d: lucid.einsum(eq, *[to_lucid(t, d) for t in ts]), torch.einsum(eq, *ts))
    check_on(device, lambda d: lucid.einsum(eq, [to_lucid(t, d) for t in ts]), torch.einsum(eq, ts))


@pytest.mark.parametrize("eq,shapes", [("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("ij,jk", [(2, 3), (3, 4)]),
                                       ("ij", [(2, 3)])])
@pytest.mark.parametrize("dtype", ["int32", "bool"])
def test_einsum_dtypes(eq, shapes, dtype, device):
    ts = [rand(s, "int32", i).to(getattr(torch, dtype)) for i, s in enumerate(shapes)]
    try:
        want = torch.einsum(eq, *ts)
    except Exception as e:  # torch has no bool bmm: lucid raises the same type
        with pytest.raises(type(e)):
            lucid.einsum(eq, *[to_lucid(t, device) for t in ts])
        return
    check_on(device, lambda d: lucid.einsum(eq, *[to_lucid(t, d) for t in ts]), want)


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(2, 3)]),            # fewer operands
    ("ij->ik", [(2, 3)]),               # output subscript not in input
    ("ii->i", [(2, 3)]),                # repeated subscript sizes differ
    ("i,i->", [(3,), (4,)]),            # sizes don't broadcast
    ("ijk", [(2, 3)]),                  # too many subscripts
    ("ij", [(2, 3, 4)]),                # too few subscripts
    ("i,i", [(3,), (3,), (3,)]),        # more operands
    ("ij->ii", [(2, 2)]),               # output repeats
    ("i1", [(2, 2)]),                   # invalid subscript
    ("i.j", [(2, 2)]),                  # lone dot
])
def test_einsum_errors(eq, shapes, device):
    ts = [rand(s) for s in shapes]
    with pytest.raises((RuntimeError, ValueError)):  # torch 2.11 raises ValueError for some
        torch.einsum(eq, *ts)
    with pytest.raises(RuntimeError):
        lucid.einsum(eq, *[to_lucid(t, device) for t in ts])


@pytest.mark.parametrize("sa,sb,dims", [
    ((3, 4, 5), (4, 5, 6), 2), ((3, 4), (4, 5), 1), ((3, 4), (5, 6), 0),
    ((3, 4, 5), (5, 4, 2), ([1, 2], [1, 0])), ((3, 4, 5), (6, 3), ([0], [1])),
    ((2, 3), (2, 3), 2)])
def test_tensordot(sa, sb, dims, device):
    a, b = rand(sa, "float64"), rand(sb, "float64", 1)
    check_on(device, lambda d: lucid.tensordot(to_lucid(a, d), to_lucid(b, d), dims=dims),
             torch.tensordot(a, b, dims=dims))


def test_tensordot_errors(device):
    a, b = to_lucid(rand((3, 4)), device), to_lucid(rand((4, 5)), device)
    with pytest.raises(RuntimeError):
        lucid.tensordot(a, b, dims=-1)
    with pytest.raises(RuntimeError):
        lucid.tensordot(a, b, dims=([1], [1]))
    with pytest.raises(RuntimeError):
        lucid.tensordot(a, b.double(), dims=1)


# ---- errors ------------------------------------------------------------------------------

def _err(fn_l, fn_t, exc):
    with pytest.raises(exc):
        fn_t()
    with pytest.raises(exc) as info:
        fn_l()
    return str(info.value)


def test_shape_errors(device):
    a, b = rand((2, 3)), rand((4, 5))
    msg = _err(lambda: lucid.mm(to_lucid(a, device), to_lucid(b, device)), lambda: torch.mm(a, b), RuntimeError)
    assert "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)" in msg
    _err(lambda: lucid.matmul(to_lucid(a, device), to_lucid(b, device)), lambda: torch.matmul(a, b), RuntimeError)
    _err(lambda: lucid.mm(to_lucid(rand((3,)), device), to_lucid(b, device)),
         lambda: torch.mm(rand((3,)), b), RuntimeError)
    x, y = rand((2, 3, 4)), rand((3, 4, 5))
    _err(lambda: lucid.bmm(to_lucid(x, device), to_lucid(y, device)), lambda: torch.bmm(x, y), RuntimeError)
    _err(lambda: lucid.bmm(to_lucid(a, device), to_lucid(y, device)), lambda: torch.bmm(a, y), RuntimeError)
    _err(lambda: lucid.matmul(to_lucid(x, device), to_lucid(y, device)), lambda: torch.matmul(x, y), RuntimeError)
    s = torch.tensor(1.0)
    _err(lambda: lucid.matmul(to_lucid(s, device), to_lucid(a, device)), lambda: torch.matmul(s, a), RuntimeError)
    v = rand((4,))
    _err(lambda: lucid.mv(to_lucid(a, device), to_lucid(v, device)), lambda: torch.mv(a, v), RuntimeError)
    _err(lambda: lucid.mv(to_lucid(a, device), to_lucid(a, device)), lambda: torch.mv(a, a), RuntimeError)
    _err(lambda: lucid.dot(to_lucid(a, device), to_lucid(a, device)), lambda: torch.dot(a, a), RuntimeError)
    _err(lambda: lucid.dot(to_lucid(v, device), to_lucid(rand((3,)), device)),
         lambda: torch.dot(v, rand((3,))), RuntimeError)
    _err(lambda: lucid.outer(to_lucid(a, device), to_lucid(v, device)), lambda: torch.outer(a, v), RuntimeError)
    _err(lambda: lucid.addmm(to_lucid(rand((3, 5)), device), to_lucid(a, device), to_lucid(rand((3, 5)), device)),
         lambda: torch.addmm(rand((3, 5)), a, rand((3, 5))), RuntimeError)
    _err(lambda: lucid.addmm(to_lucid(rand((3, 5)), device), to_lucid(a, device), to_lucid(rand((3, 5)), device)),
         lambda: torch.addmm(rand((3, 5)), a, rand((3, 5))), RuntimeError)


def test_dtype_errors(device):
    a, b = rand((2, 3)), rand((3, 4), "float64")
    msg = _err(lambda: lucid.mm(to_lucid(a, device), to_lucid(b, device)), lambda: torch.mm(a, b), RuntimeError)
    assert "expected m1 and m2 to have the same dtype" in msg
    _err(lambda: lucid.matmul(to_lucid(a, device), to_lucid(b, device)), lambda: torch.matmul(a, b), RuntimeError)
    _err(lambda: lucid.dot(to_lucid(rand((3,)), device), to_lucid(rand((3,), "float64"), device)),
         lambda: torch.dot(rand((3,)), rand((3,), "float64")), RuntimeError)
    _err(lambda: lucid.addmm(to_lucid(rand((2, 4), "float64"), device), to_lucid(a, device), to_lucid(a.t(), device)),
         lambda: torch.addmm(rand((2, 4), "float64"), a, a.t()), RuntimeError)
    _err(lambda: lucid.addmm(to_lucid(rand((2, 2)), device), to_lucid(a, device), to_lucid(a.t(), device), beta=1j),
         lambda: torch.addmm(rand((2, 2)), a, a.t(), beta=1j), RuntimeError)
    ab = torch.ones(2, 2, dtype=torch.bool)
    _err(lambda: lucid.mm(to_lucid(ab, device), to_lucid(ab, device)), lambda: torch.mm(ab, ab), NotImplementedError)
    vb = torch.ones(2, dtype=torch.bool)
    _err(lambda: lucid.matmul(to_lucid(vb, device), to_lucid(vb, device)),
         lambda: torch.matmul(vb, vb), NotImplementedError)
    with pytest.raises(TypeError):
        to_lucid(a, device) @ 2
    with pytest.raises(TypeError):
        lucid.mm(to_lucid(a, device), [[1.0]])


# ---- gradients -----------------------------------------------------------------------------

def _grads_vs_torch(fn_l, fn_t, shapes, dtype="float64", seed=0, device=None):
    """Values and gradients of fn_l on `device` against fn_t on torch's matching device; on
    the GPU the gradients also match lucid's CPU gradients."""
    device = device or default_device()
    ts = [rand(s, dtype, seed + i).to(_torch_device(device)).requires_grad_() for i, s in enumerate(shapes)]
    ls = [to_lucid(t.detach().cpu(), device).requires_grad_() for t in ts]
    out_t = fn_t(*ts)
    out_l = fn_l(*ls)
    assert out_l.device.type == device
    check(out_l, out_t.detach())
    g = rand(tuple(out_t.shape), dtype, 99)
    out_t.backward(g.to(_torch_device(device)))
    out_l.backward(to_lucid(g, device))
    for lt, tt in zip(ls, ts):
        assert lt.grad is not None and lt.grad.device.type == device
        check(lt.grad, tt.grad)
    if device != "cpu":
        for lt, lc in zip(ls, _grads_vs_torch(fn_l, fn_t, shapes, dtype, seed, "cpu")):
            check(lt.grad, to_torch(lc.grad))
    return ls


GRAD_CASES = [
    ("mm", lucid.mm, torch.mm, [(3, 4), (4, 5)]),
    ("bmm", lucid.bmm, torch.bmm, [(2, 3, 4), (2, 4, 5)]),
    ("mv", lucid.mv, torch.mv, [(3, 4), (4,)]),
    ("dot", lucid.dot, torch.dot, [(4,), (4,)]),
    ("vdot", lucid.vdot, torch.vdot, [(4,), (4,)]),
    ("outer", lucid.outer, torch.outer, [(3,), (4,)]),
    ("matmul_1x2", lucid.matmul, torch.matmul, [(3,), (3, 4)]),
    ("matmul_nd1", lucid.matmul, torch.matmul, [(2, 3, 4), (4,)]),
    ("matmul_1nd", lucid.matmul, torch.matmul, [(3,), (2, 3, 4)]),
    ("matmul_b2", lucid.matmul, torch.matmul, [(2, 5, 3, 4), (4, 2)]),
    ("matmul_2b", lucid.matmul, torch.matmul, [(3, 4), (2, 4, 2)]),
    ("matmul_bcast", lucid.matmul, torch.matmul, [(2, 1, 3, 4), (5, 4, 2)]),
    ("addmm", lambda i, a, b: lucid.addmm(i, a, b, beta=0.5, alpha=2.0),
     lambda i, a, b: torch.addmm(i, a, b, beta=0.5, alpha=2.0), [(5,), (3, 4), (4, 5)]),
    ("addmv", lambda i, a, b: lucid.addmv(i, a, b, beta=-1.5, alpha=0.5),
     lambda i, a, b: torch.addmv(i, a, b, beta=-1.5, alpha=0.5), [(3,), (3, 4), (4,)]),
    ("baddbmm", lambda i, a, b: lucid.baddbmm(i, a, b, beta=2, alpha=3),
     lambda i, a, b: torch.baddbmm(i, a, b, beta=2, alpha=3), [(1, 3, 5), (2, 3, 4), (2, 4, 5)]),
    # column-major operands (a weight.T): their gradients are computed transposed
    ("mm_transposed", lambda a, b: lucid.mm(a.t(), b.t()), lambda a, b: torch.mm(a.t(), b.t()), [(4, 3), (5, 4)]),
    ("matmul_b2_transposed", lambda a, b: lucid.matmul(a, b.t()), lambda a, b: torch.matmul(a, b.t()),
     [(2, 3, 4), (5, 4)]),
    ("linear", LF.linear, torch.nn.functional.linear, [(2, 4, 3), (5, 3), (5,)]),
    ("linear2d", LF.linear, torch.nn.functional.linear, [(4, 3), (5, 3), (5,)]),
    ("einsum_bmm", lambda a, b: lucid.einsum("bij,bjk->bik", a, b),
     lambda a, b: torch.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 5)]),
    ("einsum_trace", lambda a: lucid.einsum("ii", a), lambda a: torch.einsum("ii", a), [(4, 4)]),
    ("einsum_diag", lambda a, b: lucid.einsum("iij,jk->ik", a, b),
     lambda a, b: torch.einsum("iij,jk->ik", a, b), [(3, 3, 4), (4, 2)]),
    ("einsum_3", lambda a, b, c: lucid.einsum("ij,jk,kl->li", a, b, c),
     lambda a, b, c: torch.einsum("ij,jk,kl->li", a, b, c), [(2, 3), (3, 4), (4, 5)]),
    ("einsum_ell", lambda a, b: lucid.einsum("...ij,...j->...i", a, b),
     lambda a, b: torch.einsum("...ij,...j->...i", a, b), [(2, 3, 4), (1, 4)]),
    ("tensordot", lambda a, b: lucid.tensordot(a, b, dims=([1, 2], [1, 0])),
     lambda a, b: torch.tensordot(a, b, dims=([1, 2], [1, 0])), [(3, 4, 5), (5, 4, 2)]),
]


@pytest.mark.parametrize("name,fl,ft,shapes", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_backward_vs_torch(name, fl, ft, shapes, device):
    _grads_vs_torch(fl, ft, shapes, device=device)


@pytest.mark.parametrize("name,fl,ft,shapes", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradcheck(name, fl, ft, shapes, device):
    ls = [to_lucid(rand(s, "float64", i), device).requires_grad_() for i, s in enumerate(shapes)]
    # .contiguous(): lucid's gradcheck seeds outputs with zeros_like(out).view(-1),
    # which fails on a permuted output (einsum's "->li").
    assert lucid.autograd.gradcheck(lambda *xs: fl(*xs).contiguous(), tuple(ls))


# linear and tensordot are left out: their first derivatives are transposed views, and
# lucid's gradcheck seeds with zeros_like(out).view(-1), which needs a contiguous
# output. test_double_backward_vs_torch covers them.
GRADGRAD_CASES = [c for c in GRAD_CASES if c[0] in ("mm", "mv", "dot", "vdot", "matmul_bcast", "addmm",
                                                      "baddbmm", "einsum_3", "einsum_diag")]


@pytest.mark.parametrize("name,fl,ft,shapes", GRADGRAD_CASES, ids=[c[0] for c in GRADGRAD_CASES])
def test_gradgradcheck(name, fl, ft, shapes, device):
    ls = [to_lucid(rand(s, "float64", i), device).requires_grad_() for i, s in enumerate(shapes)]
    assert lucid.autograd.gradgradcheck(lambda *xs: fl(*xs).contiguous(), tuple(ls))


@pytest.mark.parametrize("name,fl,ft,shapes", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_double_backward_vs_torch(name, fl, ft, shapes, device):
    # Second derivatives through create_graph, compared with torch's (on its matching device).
    tdev = _torch_device(device)
    ts = [rand(s, "float64", i).to(tdev).requires_grad_() for i, s in enumerate(shapes)]
    ls = [to_lucid(t.detach().cpu(), device).requires_grad_() for t in ts]
    out_t, out_l = ft(*ts), fl(*ls)
    g = rand(tuple(out_t.shape), "float64", 7)
    gt = torch.autograd.grad(out_t, ts, g.to(tdev), create_graph=True)
    gl = lucid.autograd.grad(out_l, ls, to_lucid(g, device), create_graph=True)
    weights = [rand(tuple(x.shape), "float64", 11 + i) for i, x in enumerate(gt)]
    total_t = sum(((x * w.to(tdev)).sum() for x, w in zip(gt, weights)))
    total_l = sum(((x * to_lucid(w, device)).sum() for x, w in zip(gl, weights)))
    if not total_t.requires_grad:  # the gradient is constant (a trace): nothing to compare
        return
    total_t.backward()
    total_l.backward()
    for lt, tt in zip(ls, ts):
        if tt.grad is None:  # linear in this input: no second derivative
            assert lt.grad is None or to_torch(lt.grad).abs().max() == 0
        else:
            assert lt.grad.device.type == device
            check(lt.grad, tt.grad)


def test_backward_float32_and_complex(device):
    _grads_vs_torch(lucid.matmul, torch.matmul, [(2, 3, 4), (4, 5)], dtype="float32", device=device)
    _grads_vs_torch(lucid.matmul, torch.matmul, [(2, 3, 4), (2, 4, 5)], dtype="complex64", device=device)
    _grads_vs_torch(lucid.dot, torch.dot, [(4,), (4,)], dtype="complex64", device=device)


def test_grad_fn_names(device):
    a = lucid.ones(2, 3, requires_grad=True, device=device)
    b = lucid.ones(3, 4, device=device)
    assert lucid.mm(a, b).grad_fn.name() == "MmBackward0"
    assert (a @ b).grad_fn.name() == "MmBackward0"
    assert lucid.bmm(a[None], b[None]).grad_fn.name() == "BmmBackward0"
    assert lucid.mv(a, b[:, 0]).grad_fn.name() == "MvBackward0"
    assert lucid.dot(a[0], a[1]).grad_fn.name() == "DotBackward0"
    assert lucid.addmm(b[0], a, b).grad_fn.name() == "AddmmBackward0"
    assert lucid.baddbmm(b[None, :2], a[None], b[None]).grad_fn.name() == "BaddbmmBackward0"


def test_transposed_input_gradients(device):
    w = rand((5, 3), "float64").requires_grad_()
    lw = to_lucid(w.detach(), device).requires_grad_()
    x = rand((4, 3), "float64")
    (x @ w.t()).sum().backward()
    (to_lucid(x, device) @ lw.t()).sum().backward()
    assert lw.grad.device.type == device
    check(lw.grad, w.grad)


def test_ger_is_outer(device):
    a, b = rand((3,), "float64"), rand((4,), "float64", 1)
    check_on(device, lambda d: lucid.ger(to_lucid(a, d), to_lucid(b, d)), torch.outer(a, b))


@pytest.mark.parametrize("n", [3, 8, 40])
def test_unmergeable_batch_times_matrix(n, device):
    # [S, B, D] seen as [B, S, D] (a transposed batch) times a 2-D matrix: copied to
    # contiguous rows and run as one product when n >= 8, a loop of products below.
    # Values and both gradients against torch.
    g = torch.Generator().manual_seed(n)
    x = torch.randn(6, 5, 7, generator=g, dtype=torch.float64).transpose(0, 1)
    w = torch.randn(7, n, generator=g, dtype=torch.float64)
    lx = to_lucid(x.transpose(0, 1).contiguous(), device).transpose(0, 1).requires_grad_()
    lw = to_lucid(w, device).requires_grad_()
    tx, tw = x.clone().requires_grad_(), w.clone().requires_grad_()
    out, want = lucid.matmul(lx, lw), torch.matmul(tx, tw)
    assert out.device.type == device
    torch.testing.assert_close(to_torch(out.detach()), want.detach())
    gout = torch.randn(*want.shape, generator=g, dtype=torch.float64)
    out.backward(to_lucid(gout, device))
    want.backward(gout)
    assert lx.grad.device.type == lw.grad.device.type == device
    torch.testing.assert_close(to_torch(lx.grad), tx.grad)
    torch.testing.assert_close(to_torch(lw.grad), tw.grad)
    assert lucid.matmul(lx.detach().float(), lw.detach().float()).shape == (5, 6, n)


def test_column_stepped_operands_large(device):
    # Sizes the own float32 GEMM takes: operands with a column step (a[:, ::2]) are
    # read in place there (BLAS needs them copied), against torch.
    g = torch.Generator().manual_seed(7)
    a, b = torch.randn(70, 300, generator=g), torch.randn(300, 90, generator=g)
    la, lb = to_lucid(a, device), to_lucid(b, device)
    for x, y, tx, ty in ((la[:, ::2], lb[::2, ::3], a[:, ::2], b[::2, ::3]),
                         (la[::2, ::3].t()[:50], lb[:35, ::2], a[::2, ::3].t()[:50], b[:35, ::2])):
        torch.testing.assert_close(to_torch(lucid.mm(x, y)), tx @ ty, rtol=1e-4, atol=1e-4)
