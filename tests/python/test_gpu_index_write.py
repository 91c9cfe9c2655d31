"""The writing index ops on the GPU (backend/cuda/index_write.cu): scatter (src, value,
reduce add/multiply), scatter_add, index_add, index_put / index_put_ and x[idx] = v,
forward over every dtype against lucid's CPU result (the specification) and torch's
(on CUDA where torch has it), backward against torch, atomics under heavy contention,
repeated indices, and out-of-range indices (the CPU's error at the next sync, after
which the GPU keeps working). Skipped entirely where lucid has no GPU.

Values are small integers in every dtype, so that sums and products are exact and the
order in which the atomics combine them cannot change a result."""

import pytest
import torch

import lucid
from conftest import DTYPE_NAMES, to_lucid, to_torch

pytestmark = [pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here"),
              pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter:UserWarning")]

TDEV = "cuda" if torch.cuda.is_available() else "cpu"
GEN = torch.Generator()


@pytest.fixture(autouse=True)
def _seed():
    GEN.manual_seed(5)


def mk(dtype, *shape):
    """Small integers of `dtype`."""
    dt = getattr(torch, dtype)
    if dt == torch.bool:
        return torch.randint(0, 2, shape, generator=GEN).bool()
    lo = 0 if dt == torch.uint8 else -4
    if dt.is_complex:
        return torch.complex(torch.randint(lo, 9, shape, generator=GEN).float(),
                             torch.randint(lo, 9, shape, generator=GEN).float())
    return torch.randint(lo, 9, shape, generator=GEN).to(dt)


def factors(dtype, *shape):
    """Values whose products stay exact: +-1 and +-2 (1 and 2 unsigned, bools as they come)."""
    dt = getattr(torch, dtype)
    if dt == torch.bool:
        return mk(dtype, *shape)
    v = torch.tensor([1, 2] if dt == torch.uint8 else [-2, -1, 1, 2])
    return v[torch.randint(0, len(v), shape, generator=GEN)].to(dt)


def idx(high, *shape):
    return torch.randint(0, high, shape, generator=GEN)


def unique_idx(high, *shape, dim=0):
    """Indices in [0, high) that never repeat along `dim` (assign is then deterministic)."""
    n = shape[dim]
    rows = torch.stack([torch.randperm(high, generator=GEN)[:n] for _ in range(int(torch.tensor(shape).prod()) // n)])
    return rows.reshape(*[s for d, s in enumerate(shape) if d != dim], n).movedim(-1, dim).contiguous()


def setitem(key):
    def f(m, a, *args):
        a = a.clone()
        a[key(*args[:-1])] = args[-1]
        return a
    return f


# (id, f(module, *inputs), make(dtype) -> torch inputs)
CASES = [
    ("scatter_src_larger_than_index", lambda m, a, i, s: m.scatter(a, 0, i, s),
     lambda d: [mk(d, 5, 4), unique_idx(5, 3, 4), mk(d, 4, 6)]),
    ("scatter_src_nc", lambda m, a, i, s: a.t().scatter(1, i, s.t()),
     lambda d: [mk(d, 6, 3), unique_idx(6, 3, 4, dim=1), mk(d, 4, 3)]),
    ("scatter_value_repeats", lambda m, a, i: a.scatter(-1, i, 1), lambda d: [mk(d, 4, 6), idx(6, 4, 9)]),
    ("scatter_0d", lambda m, a, i: m.scatter(a, 0, i, value=1), lambda d: [mk(d), torch.tensor(0)]),
    ("scatter_empty_index", lambda m, a, i, s: m.scatter(a, 0, i, s), lambda d: [mk(d, 3, 4), idx(3, 0, 4), mk(d, 2, 4)]),
    ("scatter_add_repeats", lambda m, a, i, s: m.scatter_add(a, 0, i, s),
     lambda d: [mk(d, 3, 4), idx(3, 40, 4), mk(d, 40, 4)]),
    ("scatter_add_nc_index_neg_dim", lambda m, a, i, s: a.scatter_add(-1, i.t(), s),
     lambda d: [mk(d, 3, 5), idx(5, 7, 3), mk(d, 3, 7)]),
    ("scatter_add_3d_middle", lambda m, a, i, s: a.scatter_add(1, i, s),
     lambda d: [mk(d, 2, 3, 4), idx(3, 2, 9, 4), mk(d, 2, 9, 5)]),
    ("scatter_reduce_add_src", lambda m, a, i, s: a.scatter(0, i, s, reduce="add"),
     lambda d: [mk(d, 3, 4), idx(3, 8, 4), mk(d, 8, 4)]),
    ("scatter_reduce_add_value", lambda m, a, i: a.scatter(1, i, 2, reduce="add"),
     lambda d: [mk(d, 3, 4), idx(4, 3, 6)]),
    ("scatter_reduce_multiply_src", lambda m, a, i, s: a.scatter(0, i, s, reduce="multiply"),
     lambda d: [factors(d, 3, 4), idx(3, 6, 4), factors(d, 6, 4)]),
    ("scatter_reduce_multiply_value", lambda m, a, i: a.t().scatter(1, i, -1, reduce="multiply"),
     lambda d: [factors(d, 4, 3), idx(4, 3, 5)]),
    ("index_add_repeats", lambda m, a, i, s: a.index_add(0, i, s),
     lambda d: [mk(d, 4, 3), torch.tensor([0, 3, 0, 0, 2, 0]), mk(d, 6, 3)]),
    ("index_add_dim1_alpha", lambda m, a, i, s: m.index_add(a, 1, i, s, alpha=2),
     lambda d: [mk(d, 3, 5), torch.tensor([4, 1, 4]), mk(d, 3, 3)]),
    ("index_add_nc", lambda m, a, i, s: a.t().index_add(0, i, s.t()),
     lambda d: [mk(d, 3, 5), idx(5, 7), mk(d, 3, 7)]),
    ("index_add_int32_index_0d", lambda m, a, i, s: m.index_add(a, 0, i.int(), s),
     lambda d: [mk(d), torch.tensor([0, 0, 0]), mk(d, 3)]),
    ("index_put_rows_negative", lambda m, a, i, v: a.index_put((i,), v),
     lambda d: [mk(d, 5, 3), torch.tensor([4, -5, 2]), mk(d, 3, 3)]),
    ("index_put_accumulate_repeats", lambda m, a, i, v: a.index_put((i,), v, accumulate=True),
     lambda d: [mk(d, 5, 3), torch.tensor([1, -4, 1, 1, 0, 4]), mk(d, 6, 3)]),
    ("index_put_two_broadcast_accumulate", lambda m, a, i, j, v: a.index_put((i, j), v, accumulate=True),
     lambda d: [mk(d, 4, 5), torch.tensor([[0], [3], [0]]), torch.tensor([1, 4, 1, -1]), mk(d, 3, 4)]),
    ("index_put_three_accumulate", lambda m, a, i, j, k, v: a.index_put((i, j, k), v, accumulate=True),
     lambda d: [mk(d, 3, 4, 5), idx(3, 30), idx(4, 30), idx(5, 30) - 5, mk(d, 30)]),
    ("index_put_four_values_broadcast", lambda m, a, i, j, k, l, v: a.index_put((i, j, k, l), v, accumulate=True),
     lambda d: [mk(d, 2, 3, 2, 3), idx(2, 8), idx(3, 8), idx(2, 8), idx(3, 8), mk(d, 1)]),
    ("index_put_nc_index", lambda m, a, i, v: a.index_put((i[::2],), v, accumulate=True),
     lambda d: [mk(d, 4, 3), idx(4, 10), mk(d, 3)]),
    ("index_put_0d_index", lambda m, a, i, v: a.index_put((i,), v), lambda d: [mk(d, 4, 3), torch.tensor(-2), mk(d, 3)]),
    ("index_put_empty", lambda m, a, i, v: a.index_put((i,), v, accumulate=True),
     lambda d: [mk(d, 4, 3), idx(4, 0), mk(d, 0, 3)]),
    ("setitem_middle_dim", setitem(lambda i: (slice(None), i)), lambda d: [mk(d, 3, 6, 2), unique_idx(6, 4), mk(d, 3, 4, 2)]),
    ("setitem_separated_dims", setitem(lambda i, j: (i, slice(None), j)),
     lambda d: [mk(d, 4, 3, 5), torch.tensor([0, 3, 1]), torch.tensor([4, 4, -1]), mk(d, 3, 3)]),
    ("setitem_number", setitem(lambda i: i), lambda d: [mk(d, 5, 2), torch.tensor([3, 0, 3]), 1]),
    ("setitem_through_transposed_view", lambda m, a, i, v: _put_through_t(a, i, v),
     lambda d: [mk(d, 3, 5), unique_idx(5, 3), mk(d, 3, 3)]),
]
BY_ID = {c[0]: c for c in CASES}


def _put_through_t(a, i, v):
    a = a.clone()
    a.t()[i] = v  # writes into a through a non-contiguous view
    return a


def _lucid(t, device):
    return to_lucid(t, device) if isinstance(t, torch.Tensor) else t


def _torch(t):
    return t.to(TDEV) if isinstance(t, torch.Tensor) else t


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("cid", list(BY_ID))
def test_forward_on_gpu_matches_cpu_and_torch(cid, dtype):
    _, fn, make = BY_ID[cid]
    tin = make(dtype)
    try:
        want = fn(lucid, *[_lucid(t, "cpu") for t in tin])
    except Exception as e:  # not for this dtype on the CPU: not on the GPU either
        with pytest.raises(type(e)):
            fn(lucid, *[_lucid(t, "gpu") for t in tin]).tolist()
        return
    got = fn(lucid, *[_lucid(t, "gpu") for t in tin])
    assert got.device.type == "gpu" and tuple(got.shape) == tuple(want.shape) and got.dtype == want.dtype
    assert got.cpu().tolist() == want.tolist()
    try:
        texp = fn(torch, *[_torch(t) for t in tin])
    except (RuntimeError, NotImplementedError):  # no torch kernel for this dtype here
        return
    torch.testing.assert_close(to_torch(got.cpu()), texp.cpu(), rtol=0, atol=0)


def test_inplace_forms_write_the_gpu_tensor():
    t = mk("float32", 4, 3)
    for name, args in [("scatter_", (0, unique_idx(4, 2, 3), mk("float32", 2, 3))),
                       ("scatter_add_", (1, idx(3, 4, 5), mk("float32", 4, 5))),
                       ("index_add_", (0, torch.tensor([3, 3, 1]), mk("float32", 3, 3))),
                       ("index_put_", ((torch.tensor([2, 2]),), mk("float32", 2, 3), True))]:
        g = to_lucid(t, "gpu")
        la = [tuple(_lucid(x, "gpu") for x in a) if isinstance(a, tuple) else _lucid(a, "gpu") for a in args]
        assert getattr(g, name)(*la) is g
        ta = [tuple(_torch(x) for x in a) if isinstance(a, tuple) else _torch(a) for a in args]
        torch.testing.assert_close(to_torch(g.cpu()), getattr(_torch(t), name)(*ta).cpu(), rtol=0, atol=0)


def test_assign_with_repeated_indices_writes_one_of_the_values():
    # as torch on CUDA: which of the repeated writes wins is not defined, but each
    # element holds one of the values written there
    v = lucid.arange(15.0).reshape(5, 3)
    out = lucid.zeros(4, 3, device="gpu").index_put((lucid.tensor([1, 1, 1, 2, 2], device="gpu"),), v.to("gpu"))
    rows = out.cpu().tolist()
    assert rows[0] == rows[3] == [0.0] * 3
    for c in range(3):
        assert rows[1][c] in (v[0, c].item(), v[1, c].item(), v[2, c].item())
        assert rows[2][c] in (v[3, c].item(), v[4, c].item())
    s = lucid.zeros(2, 3, device="gpu").scatter(0, lucid.tensor([[1, 1, 0], [1, 1, 0]], device="gpu"),
                                                 lucid.tensor([[1.0, 2, 3], [4, 5, 6]], device="gpu"))
    got = s.cpu().tolist()
    assert got[0][:2] == [0.0, 0.0] and got[1][2] == 0.0
    assert got[1][0] in (1.0, 4.0) and got[1][1] in (2.0, 5.0) and got[0][2] in (3.0, 6.0)


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_accumulation_under_heavy_contention_matches_the_cpu(dtype):
    # 2^20 writes into 5 adjacent elements at an odd offset: 1- and 2-byte elements share
    # 32-bit words (the compare-and-swap must leave the neighbours alone), float16 and
    # bfloat16 saturate (2048, 256) whatever the order, integers wrap
    n = 1 << 20
    dt = getattr(lucid, dtype)
    i = lucid.randint(0, 5, (n,))
    results = {}
    for device in ("cpu", "gpu"):
        ones = lucid.ones(n, dtype=dt, device=device)
        gi = i.to(device)
        base = lucid.zeros(8, dtype=dt, device=device)
        base[1:6].index_put_((gi,), ones, accumulate=True)
        a = lucid.zeros(8, dtype=dt, device=device)
        a[1:6].scatter_add_(0, gi, ones)
        b = lucid.zeros(8, dtype=dt, device=device)
        b[1:6].index_add_(0, gi, ones)
        results[device] = [base.cpu().tolist(), a.cpu().tolist(), b.cpu().tolist()]
    assert results["gpu"] == results["cpu"]
    zero = lucid.zeros(1, dtype=dt).item()
    for r in results["gpu"]:
        assert r[0] == r[6] == r[7] == zero


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
                                   "complex64"])
def test_multiply_under_heavy_contention_matches_the_cpu(dtype):
    n = 1 << 18
    dt = getattr(lucid, dtype)
    i = lucid.randint(0, 5, (n,))
    want = lucid.full((5,), 3, dtype=dt).scatter(0, i, -1, reduce="multiply")
    got = lucid.full((5,), 3, dtype=dt, device="gpu").scatter(0, i.to("gpu"), -1, reduce="multiply")
    assert got.cpu().tolist() == want.tolist()


def test_large_accumulation_matches_torch():
    # an embedding-style backward: 64k rows of 64 gathered with repeats, summed back
    i = torch.randint(0, 1000, (65536,), generator=GEN)
    g = torch.randn(65536, 64, generator=GEN)
    want = torch.zeros(1000, 64, dtype=torch.float64).index_put_((i,), g.double(), accumulate=True)
    li, lg = lucid.from_numpy(i.numpy()).to("gpu"), lucid.from_numpy(g.numpy()).to("gpu")
    for got in (lucid.zeros(1000, 64, device="gpu").index_put_((li,), lg, accumulate=True),
                lucid.zeros(1000, 64, device="gpu").index_add_(0, li, lg),
                lucid.zeros(1000, 64, device="gpu").scatter_add_(0, li.reshape(-1, 1).expand(-1, 64), lg)):
        torch.testing.assert_close(torch.from_numpy(got.cpu().numpy()).double(), want, rtol=1e-5, atol=1e-4)


# ---- backward ---------------------------------------------------------------------------------------
GRAD_CASES = [
    ("read_rows_repeats", lambda m, x: x[torch_or_lucid(m, [3, 0, 3, -1])], [(5, 4)]),
    ("read_two_indices", lambda m, x: x[:, torch_or_lucid(m, [[0], [2]]), torch_or_lucid(m, [1, 1, 3])], [(2, 3, 4)]),
    ("index_select_repeats", lambda m, x: x.index_select(1, torch_or_lucid(m, [2, 2, 0])), [(3, 4)]),
    ("gather_repeats", lambda m, x: m.gather(x, 1, torch_or_lucid(m, [[0, 0, 3], [1, 1, 1]])), [(2, 4)]),
    ("scatter_src", lambda m, x, s: x.scatter(0, torch_or_lucid(m, [[2, 0, 1]]), s), [(3, 3), (1, 3)]),
    ("scatter_add", lambda m, x, s: m.scatter_add(x, 1, torch_or_lucid(m, [[0, 0, 2, 0]] * 2), s), [(2, 3), (2, 4)]),
    ("index_add_alpha", lambda m, x, s: x.index_add(0, torch_or_lucid(m, [1, 1, 0]), s, alpha=3), [(2, 3), (3, 3)]),
    ("index_put_accumulate", lambda m, x, v: x.index_put((torch_or_lucid(m, [0, 0, 2]),), v, accumulate=True),
     [(3, 2), (3, 2)]),
    ("index_put_assign", lambda m, x, v: x.index_put((torch_or_lucid(m, [2, 0]),), v), [(3, 2), (2, 2)]),
    ("setitem_non_leaf", lambda m, x, v: _set_rows(x * 2, torch_or_lucid(m, [1, -1]), v), [(4, 3), (2, 3)]),
]


def torch_or_lucid(m, values):
    return torch.tensor(values, device=TDEV) if m is torch else lucid.tensor(values, device="gpu")


def _set_rows(y, i, v):
    y[i] = v
    return y


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_backward_on_gpu_matches_torch(case, dtype):
    _, fn, shapes = case
    dt = getattr(torch, dtype)
    tin = [torch.randn(s, generator=GEN, dtype=dt).to(TDEV).requires_grad_() for s in shapes]
    lin = [to_lucid(t.detach().cpu(), "gpu").requires_grad_() for t in tin]
    tout, lout = fn(torch, *tin), fn(lucid, *lin)
    gout = torch.randn(tout.shape, generator=GEN, dtype=dt)
    tout.backward(gout.to(TDEV))
    lout.backward(to_lucid(gout, "gpu"))
    tol = 1e-10 if dtype == "float64" else 2e-5  # float sums by atomics, in any order
    for lt, tt in zip(lin, tin):
        assert lt.grad is not None and lt.grad.device.type == "gpu"
        torch.testing.assert_close(to_torch(lt.grad.cpu()), tt.grad.cpu(), rtol=tol, atol=tol)


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradcheck_on_gpu(case):
    _, fn, shapes = case
    lin = [to_lucid(torch.randn(s, generator=GEN, dtype=torch.float64), "gpu").requires_grad_() for s in shapes]
    assert lucid.autograd.gradcheck(lambda *xs: fn(lucid, *xs), tuple(lin))


def test_half_gradient_of_repeated_rows_matches_the_cpu():
    x = lucid.zeros(4, 3, dtype=lucid.float16, requires_grad=True)
    gx = lucid.zeros(4, 3, dtype=lucid.float16, device="gpu", requires_grad=True)
    i = [0, 3, 0, 0, 1]
    x[lucid.tensor(i)].sum().backward()
    gx[lucid.tensor(i, device="gpu")].sum().backward()
    assert gx.grad.cpu().tolist() == x.grad.tolist() == [[3.0] * 3, [1.0] * 3, [0.0] * 3, [1.0] * 3]


# ---- out-of-range indices -----------------------------------------------------------------------------
ERRORS = [
    ("scatter", lambda m, d: m.zeros(3, 4, device=d).scatter(0, m.tensor([[5, 0, 0, 0]], device=d), 1.0)),
    ("scatter_negative", lambda m, d: m.zeros(3, 4, device=d).scatter(1, m.tensor([[0, -1]], device=d),
                                                                      m.ones(1, 2, device=d))),
    ("scatter_add", lambda m, d: m.zeros(3, 4, device=d).scatter_add(1, m.tensor([[4]], device=d),
                                                                     m.ones(1, 1, device=d))),
    ("scatter_multiply", lambda m, d: m.ones(3, device=d).scatter(0, m.tensor([0, 3], device=d), 2.0,
                                                                  reduce="multiply")),
    ("index_add", lambda m, d: m.zeros(3, 4, device=d).index_add(0, m.tensor([0, 3], device=d), m.ones(2, 4, device=d))),
    ("index_add_negative", lambda m, d: m.zeros(3, 4, device=d).index_add(1, m.tensor([-1], device=d),
                                                                          m.ones(3, 1, device=d))),
    ("index_put", lambda m, d: m.zeros(3, 4, device=d).index_put((m.tensor([3], device=d),), m.ones(4, device=d))),
    ("index_put_negative_accumulate", lambda m, d: m.zeros(3, 4, device=d).index_put(
        (m.tensor([0], device=d), m.tensor([-5], device=d)), m.ones(1, device=d), accumulate=True)),
    ("setitem", lambda m, d: _set_rows(m.zeros(3, 4, device=d), m.tensor([0, 7], device=d), 1.0)),
]


@pytest.mark.parametrize("eid", [e[0] for e in ERRORS])
def test_out_of_range_index_raises_the_cpus_error_at_the_next_sync_and_the_gpu_keeps_working(eid):
    fn = dict(ERRORS)[eid]
    with pytest.raises(Exception) as cpu_error:
        fn(lucid, "cpu")
    with pytest.raises(type(cpu_error.value)) as gpu_error:
        fn(lucid, "gpu").tolist()  # queued; raised when the result is read
    # the CPU's words, then the op whose kernel found it (found on the device, raised at a read)
    assert str(gpu_error.value).startswith(str(cpu_error.value) + " (found on the GPU by "), str(gpu_error.value)
    g = lucid.zeros(3, device="gpu")
    g.index_put_((lucid.tensor([2, 2], device="gpu"),), lucid.ones(2, device="gpu"), accumulate=True)
    g.scatter_add_(0, lucid.tensor([0], device="gpu"), lucid.ones(1, device="gpu"))
    assert g.tolist() == [1.0, 0.0, 2.0]  # the error was raised once, and the GPU still works


def test_too_many_index_tensors_on_the_gpu_name_the_op():
    g = lucid.zeros(2, 2, 2, 2, 2, device="gpu")
    i = lucid.tensor([1], device="gpu")
    with pytest.raises(NotImplementedError, match="index_put_ on the GPU takes 1 to 4 index tensors; got 5"):
        g.index_put_((i, i, i, i, i), lucid.ones(1, device="gpu"))
