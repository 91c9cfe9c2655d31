"""cross_entropy with class indices and nll_loss, one engine op each (csrc/ops/cross_entropy.cpp): values
and gradients against torch over shapes (the GPU's three row kernels: a warp a row up to
1024 classes, a block a row beyond, a thread a row for strided classes), dtypes,
reductions, weights, ignore_index and label smoothing; float64 numerical gradients,
second derivatives (create_graph), thread-count independence, the GPU against the CPU,
and every bad argument."""

import pytest
import torch
import torch.nn.functional as TF

import lucid
import lucid.nn.functional as LF
from conftest import to_lucid, to_torch


def tdev(device):
    return "cuda" if device == "gpu" else "cpu"


TOL = {"float64": 1e-10, "float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}


def case(shape, dtype, device, ignore=None, seed=0):
    """Logits of `shape` ([N, C, ...]) and targets, some set to `ignore`."""
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(*shape, generator=g, dtype=torch.float64) * 3).to(getattr(torch, dtype))
    t_shape = (shape[0],) + tuple(shape[2:])
    t = torch.randint(0, shape[1], t_shape, generator=g)
    if ignore is not None and t.numel():
        t.view(-1)[::3] = ignore
    w = torch.rand(shape[1], generator=g, dtype=torch.float64).add(0.1).to(x.dtype)
    return x.to(tdev(device)), t.to(tdev(device)), w.to(tdev(device))


def check(x, t, w, device, tol, fn="cross_entropy", **kw):
    """lucid's loss and gradient (for a random incoming gradient) are torch's."""
    xt = x.detach().clone().requires_grad_()
    xl = to_lucid(x.detach(), device).requires_grad_()
    tl = to_lucid(t, device)
    wl = to_lucid(w, device) if w is not None else None
    ref = getattr(TF, fn)(xt.float() if x.dtype in (torch.float16, torch.bfloat16) else xt, t,
                          None if w is None else w.to(torch.float32 if x.dtype.itemsize == 2 else x.dtype), **kw)
    out = getattr(LF, fn)(xl, tl, wl, **kw)
    assert out.dtype == xl.dtype and tuple(out.shape) == tuple(ref.shape)
    assert out.device.type == device
    torch.testing.assert_close(to_torch(out.detach().cpu()).double(), ref.detach().cpu().double(), rtol=tol, atol=tol,
                               equal_nan=True)
    gout = torch.rand(ref.shape, dtype=torch.float64, device=x.device)
    (ref * gout.to(ref.dtype)).sum().backward()
    (out * to_lucid(gout.to(x.dtype), device)).sum().backward()
    torch.testing.assert_close(to_torch(xl.grad.cpu()).double(), xt.grad.cpu().double(), rtol=tol, atol=tol)


# (2000, 5) and (2, 3, 700): many blocks of the GPU's rows kernels, whose last sums the rows
@pytest.mark.parametrize("shape", [(6, 4), (37, 10), (2000, 5), (5, 1000), (3, 3000), (4, 5, 3), (2, 7, 3, 5),
                                   (2, 3, 700), (0, 4)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_values_and_gradients_match_torch(shape, reduction, device):
    x, t, w = case(shape, "float64", device, ignore=-100)
    check(x, t, None, device, TOL["float64"], reduction=reduction)
    check(x, t, w, device, TOL["float64"], reduction=reduction)


@pytest.mark.parametrize("shape", [(6, 4), (37, 10), (3, 3000), (4, 5, 3), (0, 4)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_matches_torch(shape, reduction, device):
    """nll_loss of log-probabilities (and of any scores: it only picks), -inf included."""
    x, t, w = case(shape, "float64", device, ignore=-100)
    logp = torch.log_softmax(x, 1)
    if logp.numel():
        logp.view(-1)[5::7] = float("-inf")
    t1 = torch.where(t == -100, 1, t)
    for data in (logp, x):
        check(data, t, None, device, TOL["float64"], fn="nll_loss", reduction=reduction)
        check(data, t1, w, device, TOL["float64"], fn="nll_loss", reduction=reduction, ignore_index=1)
    for dtype in ("float32", "bfloat16"):
        check(logp.to(getattr(torch, dtype)), t, None, device, TOL[dtype], fn="nll_loss", reduction=reduction)


def test_nll_loss_second_derivatives_and_numerical_gradients(device):
    x, t, w = case((5, 4), "float64", device, ignore=-100)
    xt = x.clone().requires_grad_()
    xl = to_lucid(x, device).requires_grad_()
    gt, = torch.autograd.grad(TF.nll_loss(TF.log_softmax(xt, 1), t, w).sum(), xt, create_graph=True)
    gl, = lucid.autograd.grad(LF.nll_loss(LF.log_softmax(xl, 1), to_lucid(t, device), to_lucid(w, device)).sum(), xl,
                              create_graph=True)
    torch.testing.assert_close(to_torch(gl.detach().cpu()), gt.detach().cpu(), rtol=1e-10, atol=1e-12)
    (gt * gt).sum().backward()
    (gl * gl).sum().backward()
    torch.testing.assert_close(to_torch(xl.grad.cpu()), xt.grad.cpu(), rtol=1e-9, atol=1e-12)
    if device == "cpu":
        lt = to_lucid(t)
        assert lucid.autograd.gradcheck(lambda a: LF.nll_loss(a, lt, reduction="sum"),
                                        (to_lucid(x).requires_grad_(),))


@pytest.mark.parametrize("kw", [{"ignore_index": 2}, {"label_smoothing": 0.25}, {"label_smoothing": 1.0},
                                {"label_smoothing": 0.1, "ignore_index": 0, "weight": True}])
@pytest.mark.parametrize("shape", [(9, 5), (4, 1500), (3, 5, 4)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_options_match_torch(kw, shape, reduction, device):
    kw = dict(kw)
    use_weight = kw.pop("weight", False)
    x, t, w = case(shape, "float64", device, ignore=kw.get("ignore_index"))
    check(x, t, w if use_weight else None, device, TOL["float64"], reduction=reduction, **kw)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(33, 10), (6, 2000), (3, 6, 5)])
def test_dtypes_match_torch(dtype, shape, device):
    x, t, w = case(shape, dtype, device, ignore=-100)
    check(x, t, None, device, TOL[dtype])
    check(x, t, w, device, TOL[dtype], reduction="none", label_smoothing=0.1)


def test_one_sample_without_batch_dim(device):
    x = torch.randn(7, dtype=torch.float64)
    for red in ("mean", "sum", "none"):
        check(x.to(tdev(device)), torch.tensor(3, device=tdev(device)), None, device, 1e-12, reduction=red)


def test_float64_numerical_gradients():
    x = lucid.randn(5, 4, 3, dtype=lucid.float64, requires_grad=True)
    t = lucid.tensor([[0, 1, 3], [2, 2, -100], [3, 0, 1], [1, 1, 1], [0, 2, 3]])
    w = lucid.rand(4, dtype=lucid.float64) + 0.5
    for kw in ({}, {"reduction": "sum", "weight": w}, {"reduction": "none", "label_smoothing": 0.3, "weight": w}):
        assert lucid.autograd.gradcheck(lambda a: LF.cross_entropy(a, t, **kw), (x,))


def test_second_derivatives_match_torch(device):
    """create_graph: the gradient is itself differentiable (MAML's inner step)."""
    x, t, w = case((6, 5), "float64", device, ignore=-100)
    for kw in ({}, {"weight": w, "label_smoothing": 0.2}, {"reduction": "none"}):
        xt = x.clone().requires_grad_()
        xl = to_lucid(x, device).requires_grad_()
        lkw = dict(kw, weight=to_lucid(w, device)) if "weight" in kw else kw
        gt, = torch.autograd.grad(TF.cross_entropy(xt, t, **kw).sum(), xt, create_graph=True)
        gl, = lucid.autograd.grad(LF.cross_entropy(xl, to_lucid(t, device), **lkw).sum(), xl, create_graph=True)
        torch.testing.assert_close(to_torch(gl.detach().cpu()), gt.detach().cpu(), rtol=1e-10, atol=1e-12)
        (gt * gt).sum().backward()
        (gl * gl).sum().backward()
        torch.testing.assert_close(to_torch(xl.grad.cpu()), xt.grad.cpu(), rtol=1e-9, atol=1e-12)


def test_float64_numerical_second_derivatives():
    x = lucid.randn(4, 3, dtype=lucid.float64, requires_grad=True)
    t = lucid.tensor([0, 2, -100, 1])
    w = lucid.rand(3, dtype=lucid.float64) + 0.5
    assert lucid.autograd.gradgradcheck(lambda a: LF.cross_entropy(a, t, w, label_smoothing=0.2), (x,))


def test_results_do_not_depend_on_threads(threads):
    x, t, w = case((301, 77), "float32", "cpu", ignore=-100, seed=threads)
    xl, tl, wl = to_lucid(x), to_lucid(t), to_lucid(w)
    before = lucid.get_num_threads()
    outs = []
    for n in (1, 2):
        lucid.set_num_threads(n)
        xg = xl.detach().requires_grad_()
        loss = LF.cross_entropy(xg, tl, wl, label_smoothing=0.1)
        loss.backward()
        outs.append((to_torch(loss.detach()), to_torch(xg.grad)))
    lucid.set_num_threads(before)
    assert torch.equal(outs[0][0], outs[1][0]) and torch.equal(outs[0][1], outs[1][1])


def test_gpu_matches_cpu(devices):
    if "gpu" not in devices:
        pytest.skip("no GPU")
    for shape in ((64, 10), (8, 5000), (4, 9, 6)):
        x, t, w = case(shape, "float32", "cpu", ignore=-100)
        res = {}
        for dev in ("cpu", "gpu"):
            xl = to_lucid(x, dev).requires_grad_()
            loss = LF.cross_entropy(xl, to_lucid(t, dev), to_lucid(w, dev), label_smoothing=0.05)
            loss.backward()
            res[dev] = (to_torch(loss.detach().cpu()), to_torch(xl.grad.cpu()))
        for a, b in zip(res["cpu"], res["gpu"]):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_repeated_losses_give_the_same_bits(device):
    """The GPU's last block takes a ticket from a ring of 4096 counters a device and
    returns it to zero (Note [The last block's ticket]): past a lap of the ring, a
    counter left behind would pick the wrong block to sum the rows."""
    x, t, _ = case((300, 7), "float32", device)
    xl, tl = to_lucid(x, device), to_lucid(t, device)
    first = LF.cross_entropy(xl, tl)
    losses = [LF.cross_entropy(xl, tl, reduction=("mean", "sum")[i % 2]) for i in range(4200)]
    total = to_torch(lucid.stack(losses[1::2]).cpu())
    assert torch.equal(to_torch(lucid.stack(losses[::2]).cpu()), to_torch(first.cpu()).expand(2100))
    assert torch.equal(total, total[:1].expand(2100))


def test_module_and_extreme_logits(device):
    x = lucid.tensor([[0.0, float("-inf"), 1.0], [1e30, -1e30, 0.0], [float("-inf")] * 3], device=device)
    t = lucid.tensor([2, 0, -100], device=device)
    xt = torch.tensor([[0.0, float("-inf"), 1.0], [1e30, -1e30, 0.0], [float("-inf")] * 3])
    ref = TF.cross_entropy(xt, torch.tensor([2, 0, -100]), reduction="none")
    out = lucid.nn.CrossEntropyLoss(reduction="none")(x, t)
    torch.testing.assert_close(to_torch(out.cpu()), ref)
    assert LF.cross_entropy(x[:0], t[:0]).isnan().item()  # mean over nothing: 0 / 0
    assert LF.cross_entropy(x[:0], t[:0], reduction="sum").item() == 0


def test_bad_arguments_raise(device):
    x = lucid.randn(4, 3, device=device)
    t = lucid.tensor([0, 1, 2, 1], device=device)
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 3 classes"):
        LF.cross_entropy(x, t, lucid.ones(4, device=device))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found"):
        LF.cross_entropy(x, t.int())
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        LF.cross_entropy(x, t, label_smoothing=1.5)
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        LF.cross_entropy(x, t, reduction="avg")
    with pytest.raises(ValueError, match="to match target batch_size"):
        LF.cross_entropy(x, t[:3])
    with pytest.raises(RuntimeError, match=r"Expected target size \[4, 5\], got \[4, 6\]"):
        LF.cross_entropy(lucid.randn(4, 3, 5, device=device), lucid.zeros(4, 6, dtype=lucid.int64, device=device))
    with pytest.raises(RuntimeError, match="expected a floating point input"):
        LF.cross_entropy(lucid.ones(4, 3, dtype=lucid.int64, device=device), t)
    if device == "gpu":
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            LF.cross_entropy(x, t.cpu())


@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("bad", [3, -1, 1000])
def test_out_of_range_targets_raise_and_the_device_stays_usable(bad, fn, device):
    x = lucid.randn(5, 3, device=device, requires_grad=True)
    t = lucid.tensor([0, 1, bad, 2, 1], device=device)
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
        getattr(LF, fn)(x, t).item()
    assert getattr(LF, fn)(x, lucid.tensor([0, 1, 2, 2, 1], device=device)).isfinite().item()
