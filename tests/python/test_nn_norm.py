"""BatchNorm / SyncBatchNorm / InstanceNorm / GroupNorm / LocalResponseNorm against torch:
outputs, input and parameter gradients, running statistics after several training steps, eval
mode, state_dict keys, float64 gradcheck / gradgradcheck, bad-input errors. Tests taking
`device` run on the GPU too (the kernels of csrc/backend/cuda/norm_*.cu), against torch
on "cuda"."""

import warnings

import numpy as np
import pytest
import torch

import lucid
import lucid.nn as lnn
import lucid.nn.functional as LF
import torch.nn.functional as TF
from conftest import to_lucid, to_torch, default_device


def tdev(device):
    """torch's name for lucid's device."""
    return "cuda" if device == "gpu" else "cpu"


def same(l, t, tol=1e-9):
    assert tuple(l.shape) == tuple(t.shape)
    t = t.detach().cpu()
    assert torch.allclose(to_torch(l.detach()).double(), t.double(), atol=tol, rtol=tol), \
        (to_torch(l.detach()).double() - t.double()).abs().max()


def same_repr(lm, tm):
    # recent torch shows bias= (BatchNorm/InstanceNorm/GroupNorm(bias=False)); older torch does not
    r = repr(tm)
    assert repr(lm) == r or repr(lm).replace(", bias=True", "").replace(", bias=False", "") == r


def pair(tm, lm, device=None):
    device = device or default_device()
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    return tm.to(tdev(device)), lm.to(device)


def randomize_affine(tm):
    with torch.no_grad():
        if getattr(tm, "weight", None) is not None:
            tm.weight.uniform_(0.5, 1.5)
            if tm.bias is not None:
                tm.bias.uniform_(-0.5, 0.5)


def run_steps(tm, lm, shape, steps=3, dtype=torch.float64, tol=1e-9, device=None):
    """Forward + backward `steps` times in both (on `device`, torch on its twin); compare
    outputs, input/param grads and buffers (the running statistics)."""
    device = device or default_device()
    for step in range(steps):
        x = (torch.randn(*shape, dtype=dtype) * 2 + step).to(tdev(device)).requires_grad_()
        lx = to_lucid(x.detach(), device).requires_grad_()
        gy = torch.randn(*shape, dtype=dtype)
        ty, ly = tm(x), lm(lx)
        assert ly.device == lx.device
        same(ly, ty, tol)
        ty.backward(gy.to(tdev(device)))
        ly.backward(to_lucid(gy, device))
        assert lx.grad.device == lx.device
        same(lx.grad, x.grad, tol)
    for (n, lp), (_, tp) in zip(lm.named_parameters(), tm.named_parameters()):
        same(lp.grad, tp.grad, tol * 10)
    for (n, lb), (_, tb) in zip(lm.named_buffers(), tm.named_buffers()):
        same(lb, tb, tol)


# spatial size < 32 runs the column kernels, >= 32 the row kernels (csrc/ops/norm.cpp)
BN_CASES = [("BatchNorm1d", (8, 5)), ("BatchNorm1d", (4, 3, 7)), ("BatchNorm2d", (4, 3, 5, 6)),
            ("BatchNorm3d", (2, 3, 2, 3, 4)), ("BatchNorm1d", (3, 2, 40)), ("BatchNorm2d", (3, 4, 6, 7))]


@pytest.mark.parametrize("name,shape", BN_CASES)
@pytest.mark.parametrize("kw", [{}, {"affine": False}, {"momentum": None}, {"momentum": 0.3, "eps": 1e-3},
                                {"track_running_stats": False}, {"bias": False}])
def test_batchnorm_train_and_eval_match_torch(name, shape, kw, device):
    try:
        tm = getattr(torch.nn, name)(shape[1], **kw).double()
    except TypeError:  # bias= is new in torch
        pytest.skip("this torch has no bias= for BatchNorm")
    lm = getattr(lnn, name)(shape[1], **kw).double()
    randomize_affine(tm)
    tm, lm = pair(tm, lm, device)
    assert list(lm.state_dict()) == list(tm.state_dict())
    same_repr(lm, tm)
    run_steps(tm, lm, shape, device=device)
    if kw.get("track_running_stats", True):
        assert lm.num_batches_tracked.item() == tm.num_batches_tracked.item() == 3
    tm.eval(), lm.eval()
    run_steps(tm, lm, shape, steps=2, device=device)


def test_batchnorm_loads_state_dict_without_num_batches_tracked():
    tm, lm = torch.nn.BatchNorm1d(3), lnn.BatchNorm1d(3)
    sd = {k: v for k, v in tm.state_dict().items() if k != "num_batches_tracked"}
    tm.load_state_dict(sd)  # torch accepts it (no version metadata in a plain dict)
    lm.load_state_dict({k: to_lucid(v) for k, v in sd.items()})
    assert lm.num_batches_tracked.item() == 0
    with pytest.raises(RuntimeError, match="Missing key"):
        lm.load_state_dict({k: to_lucid(v) for k, v in sd.items() if k != "running_mean"})


@pytest.mark.parametrize("name,shape", BN_CASES)
def test_batchnorm_float32_matches_torch(name, shape, device):
    tm, lm = pair(getattr(torch.nn, name)(shape[1]), getattr(lnn, name)(shape[1]), device)
    run_steps(tm, lm, shape, dtype=torch.float32, tol=2e-5, device=device)


def test_long_rows_float32(device):
    # rows longer than the kernels' 4096-element lane block, not a multiple of 16 (on the
    # GPU: rows split over several blocks, then combined in order)
    tm, lm = pair(torch.nn.BatchNorm1d(3), lnn.BatchNorm1d(3), device)
    run_steps(tm, lm, (2, 3, 9001), steps=2, dtype=torch.float32, tol=1e-4, device=device)
    tg, lg = pair(torch.nn.GroupNorm(1, 2), lnn.GroupNorm(1, 2), device)
    run_steps(tg, lg, (2, 2, 5003), steps=1, dtype=torch.float32, tol=1e-4, device=device)


def test_batchnorm2d_large_float32(device):
    shape = (8, 16, 28, 28)
    tm, lm = pair(torch.nn.BatchNorm2d(16), lnn.BatchNorm2d(16), device)
    run_steps(tm, lm, shape, steps=2, dtype=torch.float32, tol=1e-4, device=device)


def test_batchnorm_noncontiguous_and_half_input(device):
    base = torch.randn(3, 4, 5, 6, dtype=torch.float64)
    x, lx = base.permute(0, 1, 3, 2), to_lucid(base, device).permute(0, 1, 3, 2)
    assert not lx.is_contiguous()
    rm, rv = torch.rand(4, dtype=torch.float64), torch.rand(4, dtype=torch.float64) + 0.5
    lrm, lrv = to_lucid(rm, device), to_lucid(rv, device)
    same(LF.batch_norm(lx, lrm, lrv, training=True), TF.batch_norm(x, rm, rv, training=True))
    same(lrm, rm), same(lrv, rv)
    h = torch.randn(4, 3, 5).half()
    lh = LF.batch_norm(to_lucid(h, device), None, None, training=True)
    assert lh.dtype == lucid.float16
    same(lh, TF.batch_norm(h.float(), None, None, training=True), 2e-3)


def test_empty_batch_keeps_running_stats(device):
    tm, lm = pair(torch.nn.BatchNorm2d(3), lnn.BatchNorm2d(3), device)
    x = torch.randn(0, 3, 4, 4, requires_grad=True, device=tdev(device))
    lx = to_lucid(x.detach(), device).requires_grad_()
    ly = lm(lx)
    same(ly, tm(x))
    ly.sum().backward()
    assert tuple(lx.grad.shape) == (0, 3, 4, 4)
    for (n, lb), (_, tb) in zip(lm.named_buffers(), tm.named_buffers()):
        same(lb, tb)
    same(lnn.GroupNorm(1, 3).to(device)(lucid.randn(0, 3, 2, device=device)),
         torch.nn.GroupNorm(1, 3)(torch.randn(0, 3, 2)))


def test_batchnorm_functional_eval_uses_running_stats(device):
    x = torch.randn(5, 3, 4, dtype=torch.float64)
    rm, rv = torch.randn(3, dtype=torch.float64), torch.rand(3, dtype=torch.float64) + 0.1
    w, b = torch.randn(3, dtype=torch.float64), torch.randn(3, dtype=torch.float64)
    lr = LF.batch_norm(*(to_lucid(t, device) for t in (x, rm, rv, w, b)), False, 0.1, 1e-3)
    same(lr, TF.batch_norm(x, rm, rv, w, b, False, 0.1, 1e-3))


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape", [(4, 3, 5), (2, 3, 33), (40, 3)])
def test_batch_norm_gradcheck(training, affine, shape, device):
    x = lucid.randn(*shape, dtype=lucid.float64, requires_grad=True, device=device)
    w = lucid.rand(3, dtype=lucid.float64, device=device) + 0.5
    b = lucid.randn(3, dtype=lucid.float64, device=device)
    inputs = (x, w.requires_grad_(), b.requires_grad_()) if affine else (x,)

    def f(x, w=None, b=None):
        rm = lucid.zeros(3, dtype=lucid.float64, device=device)
        rv = lucid.ones(3, dtype=lucid.float64, device=device) * 2
        return LF.batch_norm(x, rm, rv, w, b, training=training, eps=1e-3)

    assert lucid.autograd.gradcheck(f, inputs)
    assert lucid.autograd.gradgradcheck(f, inputs)


def test_batchnorm_double_backward_matches_torch():
    x = torch.randn(6, 3, 4, dtype=torch.float64, requires_grad=True)
    w = torch.rand(3, dtype=torch.float64, requires_grad=True)
    lx, lw = to_lucid(x.detach()).requires_grad_(), to_lucid(w.detach()).requires_grad_()
    ty = TF.batch_norm(x, None, None, w, None, training=True)
    ly = LF.batch_norm(lx, None, None, lw, None, training=True)
    (tgx,) = torch.autograd.grad((ty ** 3).sum(), x, create_graph=True)
    (lgx,) = lucid.autograd.grad((ly ** 3).sum(), lx, create_graph=True)
    same(lgx, tgx)
    tg2 = torch.autograd.grad((tgx ** 2).sum(), (x, w))
    lg2 = lucid.autograd.grad((lgx ** 2).sum(), (lx, lw))
    for a, b in zip(lg2, tg2):
        same(a, b, 1e-8)


def test_batchnorm_grad_fn_and_no_grad():
    m = lnn.BatchNorm2d(3)
    y = m(lucid.randn(2, 3, 4, 4))
    assert y.grad_fn.name() == "NativeBatchNormBackward0"
    with lucid.no_grad():
        assert m(lucid.randn(2, 3, 4, 4)).grad_fn is None


def test_batchnorm_errors():
    with pytest.raises(ValueError, match="expected 4D input"):
        lnn.BatchNorm2d(3)(lucid.randn(2, 3, 4))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        lnn.BatchNorm1d(3)(lucid.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match="expected 5D input"):
        lnn.BatchNorm3d(3)(lucid.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        lnn.BatchNorm1d(3)(lucid.randn(1, 3))
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        LF.batch_norm(lucid.randn(2, 3, 5), lucid.zeros(4), lucid.ones(3), training=True)
    with pytest.raises(RuntimeError, match="weight should contain 3 elements not 2"):
        LF.batch_norm(lucid.randn(2, 3, 5), None, None, lucid.ones(2), training=True)
    with pytest.raises(RuntimeError, match="floating point"):
        LF.batch_norm(lucid.ones(2, 3, dtype=lucid.int64), None, None, training=True)
    with pytest.raises(RuntimeError, match="evaluation mode"):
        LF.batch_norm(lucid.randn(2, 3), None, None, training=False)
    # and torch agrees on the exception types
    with pytest.raises(ValueError):
        torch.nn.BatchNorm2d(3)(torch.randn(2, 3, 4))
    with pytest.raises(RuntimeError):
        TF.batch_norm(torch.randn(2, 3, 5), torch.zeros(4), torch.ones(3), training=True)


# ---- InstanceNorm ------------------------------------------------------------------------------

IN_CASES = [("InstanceNorm1d", (4, 3, 7)), ("InstanceNorm1d", (3, 7)), ("InstanceNorm2d", (2, 3, 5, 6)),
            ("InstanceNorm2d", (3, 4, 5)), ("InstanceNorm3d", (2, 3, 2, 3, 4))]


@pytest.mark.parametrize("name,shape", IN_CASES)
@pytest.mark.parametrize("kw", [{}, {"affine": True}, {"track_running_stats": True},
                                {"affine": True, "track_running_stats": True, "momentum": 0.4}])
def test_instancenorm_matches_torch(name, shape, kw, device):
    c = shape[1] if len(shape) == {"InstanceNorm1d": 3, "InstanceNorm2d": 4, "InstanceNorm3d": 5}[name] else shape[0]
    tm = getattr(torch.nn, name)(c, **kw).double()
    lm = getattr(lnn, name)(c, **kw).double()
    randomize_affine(tm)
    tm, lm = pair(tm, lm, device)
    assert list(lm.state_dict()) == list(tm.state_dict())
    same_repr(lm, tm)
    run_steps(tm, lm, shape, device=device)
    tm.eval(), lm.eval()
    run_steps(tm, lm, shape, steps=1, device=device)


def test_instance_norm_functional_and_gradcheck(device):
    x = torch.randn(2, 3, 6, dtype=torch.float64)
    same(LF.instance_norm(to_lucid(x, device)), TF.instance_norm(x))
    lx = lucid.randn(2, 3, 5, dtype=lucid.float64, requires_grad=True, device=device)
    w = (lucid.rand(3, dtype=lucid.float64, device=device) + 0.5).requires_grad_()
    assert lucid.autograd.gradcheck(lambda x, w: LF.instance_norm(x, weight=w), (lx, w))
    assert lucid.autograd.gradgradcheck(lambda x, w: LF.instance_norm(x, weight=w), (lx, w))


def test_instancenorm_errors():
    with pytest.raises(ValueError, match="expected 3D or 4D input"):
        lnn.InstanceNorm2d(3)(lucid.randn(2, 3, 4, 5, 6))
    with pytest.raises(ValueError, match="to match num_features"):
        lnn.InstanceNorm1d(4, affine=True)(lucid.randn(2, 3, 5))
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        LF.instance_norm(lucid.randn(2, 3, 1))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        lnn.InstanceNorm1d(4)(lucid.randn(2, 3, 5))
    assert any("num_features" in str(x.message) for x in w)


# ---- GroupNorm ---------------------------------------------------------------------------------

@pytest.mark.parametrize("groups,shape", [(2, (4, 6, 5)), (3, (2, 6, 4, 5)), (1, (3, 4, 2, 2, 3)), (4, (2, 4)),
                                          (4, (3, 4, 7))])
@pytest.mark.parametrize("affine", [True, False])
def test_groupnorm_matches_torch(groups, shape, affine, device):
    tm = torch.nn.GroupNorm(groups, shape[1], affine=affine).double()
    lm = lnn.GroupNorm(groups, shape[1], affine=affine).double()
    randomize_affine(tm)
    tm, lm = pair(tm, lm, device)
    assert list(lm.state_dict()) == list(tm.state_dict())
    same_repr(lm, tm)
    run_steps(tm, lm, shape, device=device)


def test_groupnorm_float32_large(device):
    tm, lm = torch.nn.GroupNorm(8, 32), lnn.GroupNorm(8, 32)
    randomize_affine(tm)
    tm, lm = pair(tm, lm, device)
    run_steps(tm, lm, (4, 32, 20, 20), steps=1, dtype=torch.float32, tol=1e-4, device=device)


def test_group_norm_gradcheck_and_double_backward(device):
    x = lucid.randn(3, 4, 5, dtype=lucid.float64, requires_grad=True, device=device)
    w = (lucid.rand(4, dtype=lucid.float64, device=device) + 0.5).requires_grad_()
    b = lucid.randn(4, dtype=lucid.float64, requires_grad=True, device=device)
    assert lucid.autograd.gradcheck(lambda x, w, b: LF.group_norm(x, 2, w, b), (x, w, b))
    assert lucid.autograd.gradgradcheck(lambda x, w, b: LF.group_norm(x, 2, w, b), (x, w, b))
    assert lucid.autograd.gradgradcheck(lambda x: LF.group_norm(x, 4), (x,))
    tx = to_torch(x.detach()).to(tdev(device)).requires_grad_()
    (tg,) = torch.autograd.grad((TF.group_norm(tx, 2) ** 3).sum(), tx, create_graph=True)
    (lg,) = lucid.autograd.grad((LF.group_norm(x, 2) ** 3).sum(), x, create_graph=True)
    same(lg, tg)
    same(lucid.autograd.grad((lg ** 2).sum(), x)[0], torch.autograd.grad((tg ** 2).sum(), tx)[0], 1e-8)


def test_groupnorm_errors():
    with pytest.raises(ValueError, match="divisible"):
        lnn.GroupNorm(4, 6)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        LF.group_norm(lucid.randn(2, 6, 3), 4)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        LF.group_norm(lucid.randn(6), 2)
    with pytest.raises(RuntimeError, match="vector of size equal to the number of channels"):
        LF.group_norm(lucid.randn(2, 6, 3), 2, lucid.ones(5))
    with pytest.raises(RuntimeError):
        TF.group_norm(torch.randn(2, 6, 3), 4)


# ---- LocalResponseNorm -------------------------------------------------------------------------

@pytest.mark.parametrize("size", [1, 2, 3, 5])
@pytest.mark.parametrize("shape", [(2, 6, 5), (2, 4, 3, 3), (1, 5, 2, 2, 3)])
def test_local_response_norm_matches_torch(size, shape, device):
    tm, lm = torch.nn.LocalResponseNorm(size, alpha=0.5, beta=0.7, k=1.5), lnn.LocalResponseNorm(size, 0.5, 0.7, 1.5)
    same_repr(lm, tm)
    run_steps(tm, lm, shape, steps=1, device=device)


def test_local_response_norm_gradcheck_and_errors():
    x = lucid.randn(2, 5, 3, dtype=lucid.float64, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda x: LF.local_response_norm(x, 3, alpha=0.3), (x,))
    with pytest.raises(ValueError, match="Expected 3D or higher"):
        LF.local_response_norm(lucid.randn(2, 3), 2)


def test_half_group_norm(device):
    x = torch.randn(2, 4, 6, 7)
    for dt in (lucid.float16, lucid.bfloat16):
        lx = to_lucid(x, device).to(dt).requires_grad_()
        y = LF.group_norm(lx, 2)
        assert y.dtype == dt
        y.sum().backward()
        assert lx.grad.dtype == dt
        same(y, TF.group_norm(to_torch(lx.detach()).float(), 2), 3e-2)


def test_thread_independence():
    # every row/column is summed in a fixed order: results do not depend on the thread count
    big = lucid.randn(4, 8, 40, 40)
    n = lucid.get_num_threads()
    try:
        lucid.set_num_threads(1)
        a = LF.batch_norm(big, None, None, training=True)
        a2 = LF.batch_norm(big.reshape(4, 8 * 1600)[:, :64].contiguous(), None, None, training=True)
        lucid.set_num_threads(2)
        b = LF.batch_norm(big, None, None, training=True)
        b2 = LF.batch_norm(big.reshape(4, 8 * 1600)[:, :64].contiguous(), None, None, training=True)
    finally:
        lucid.set_num_threads(n)
    assert (a == b).all().item() and (a2 == b2).all().item()


# ---- SyncBatchNorm ------------------------------------------------------------------------


def test_sync_batch_norm_without_process_groups_is_the_batch_norm_of_its_input():
    x0 = np.random.default_rng(7).standard_normal((4, 3, 5)).astype(np.float32)
    x, tx = lucid.tensor(x0), torch.tensor(x0)
    m, tm = lnn.SyncBatchNorm(3), torch.nn.SyncBatchNorm(3)
    np.testing.assert_allclose(m(x).detach().numpy(), tm(tx).detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.running_var.numpy(), tm.running_var.numpy(), rtol=1e-6)
    # (torch 2.15's norms show a bias flag in their repr; 2.11's had none)
    assert repr(m) == repr(tm) or ("bias=" not in repr(tm) and repr(m).replace(" bias=True,", "") == repr(tm))
    with pytest.raises(ValueError, match="expected at least 2D input \\(got 1D input\\)"):
        m(lucid.randn(3))
    with pytest.raises(ValueError, match="number of input channels should be non-zero"):
        lnn.SyncBatchNorm(0)(lucid.randn(2, 0))


def test_convert_sync_batchnorm_replaces_every_batch_norm_sharing_its_state():
    def build(lib):
        return lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.ReLU(),
                                 lib.nn.Sequential(lib.nn.Flatten(), lib.nn.BatchNorm1d(4 * 3 * 3, affine=False)))
    net = build(lucid)
    net.eval()
    bn = net[1]
    out = lnn.SyncBatchNorm.convert_sync_batchnorm(net)
    tout = torch.nn.SyncBatchNorm.convert_sync_batchnorm(build(torch))
    assert [type(m).__name__ for m in out.modules()] == [type(m).__name__ for m in tout.modules()]
    assert out[1].weight is bn.weight and out[1].running_mean is bn.running_mean and not out[1].training
    assert out[3][1].weight is None and type(out[3][1]) is lnn.SyncBatchNorm
    assert type(lnn.SyncBatchNorm.convert_sync_batchnorm(lnn.BatchNorm1d(2))) is lnn.SyncBatchNorm


# ---- CrossMapLRN2d (torch's legacy cross-channel LRN) -------------------------------------


@pytest.mark.parametrize("size", [2, 3, 5, 8])
@pytest.mark.parametrize("channels", [1, 3, 7])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_map_lrn2d_matches_torch_forward_and_backward(size, channels, dtype):
    rng = np.random.default_rng(size * 10 + channels)
    x0, g0 = rng.standard_normal((2, channels, 4, 3)).astype(dtype), rng.standard_normal((2, channels, 4, 3))
    tx, lx = torch.tensor(x0, requires_grad=True), lucid.tensor(x0).requires_grad_()
    tm, lm = torch.nn.CrossMapLRN2d(size, 1e-2, 0.75, 1), lnn.CrossMapLRN2d(size, 1e-2, 0.75, 1)
    ty, ly = tm(tx), lm(lx)
    ty.backward(torch.tensor(g0.astype(dtype)))
    ly.backward(lucid.tensor(g0.astype(dtype)))
    tol = 1e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)
    assert repr(lm) == repr(tm)


def test_cross_map_lrn2d_refuses_what_torch_refuses():
    with pytest.raises(ValueError, match="CrossMapLRN2d: Expected input to be 4D, got 3D instead."):
        lnn.CrossMapLRN2d(3)(lucid.randn(3, 4, 4))
    x = lucid.randn(1, 3, 2, 2).requires_grad_()
    y = lnn.CrossMapLRN2d(1)(x)  # (the forward runs; torch's backward fails for size 1, lucid's says why)
    with pytest.raises(RuntimeError, match="the gradient needs size >= 2"):
        y.sum().backward()
