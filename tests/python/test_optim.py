"""lucid.optim against torch.optim: the same parameters and gradients, 20+ steps, and
the parameters and every state tensor compared; state_dicts in torch's layout."""

import copy
import importlib
import math

import numpy as np
import pytest
import torch

import lucid
from conftest import default_device

STEPS = 24

# (name, kwargs): each configuration the fused step has a branch for.
CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True, eps=1e-6)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.9))),  # the other form of lerp (weight > 0.5)
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("Adamax", dict(lr=0.02, weight_decay=0.05)),
    ("Adamax", dict(lr=0.02, maximize=True)),
    ("NAdam", dict(lr=0.02)),
    ("NAdam", dict(lr=0.02, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.02, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, maximize=True)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-4, 0.05), maximize=True)),
    ("ASGD", dict(lr=0.01)),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1)),
]


def config_id(c):
    return c[0] + "-" + ",".join(f"{k}={v}" for k, v in c[1].items())


def torch_device(device):
    return "cuda" if device == "gpu" else "cpu"


def make_pair(name, kwargs, shapes, dtype, groups=None, device=None):
    """lucid and torch optimizers over parameters with the same values, on `device`
    (torch on CUDA for lucid's GPU)."""
    device = device or default_device()
    gen = torch.Generator().manual_seed(1)
    tps = [torch.nn.Parameter(torch.randn(s, generator=gen, dtype=dtype).to(torch_device(device))) for s in shapes]
    lps = [lucid.nn.Parameter(lucid.tensor(p.detach().cpu().numpy(), device=device)) for p in tps]
    if groups:
        tparams = [dict(params=[tps[i] for i in idx], **extra) for idx, extra in groups]
        lparams = [dict(params=[lps[i] for i in idx], **extra) for idx, extra in groups]
    else:
        tparams, lparams = tps, lps
    return getattr(lucid.optim, name)(lparams, **kwargs), getattr(torch.optim, name)(tparams, **kwargs), lps, tps


def set_grads(lps, tps, gen, skip=None):
    for i, (lp, tp) in enumerate(zip(lps, tps)):
        if skip is not None and i == skip:
            lp.grad = tp.grad = None
            continue
        g = torch.randn(tp.shape, generator=gen, dtype=tp.dtype)
        tp.grad = g.to(tp.device)
        lp.grad = lucid.tensor(g.numpy(), device=lp.device)


def assert_close(l, t, tol):
    a = np.asarray(l.detach().cpu().numpy(), dtype=np.float64)
    b = np.asarray(t.detach().cpu().numpy(), dtype=np.float64)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def assert_same_state(lopt, topt, tol):
    ls, ts = lopt.state_dict(), topt.state_dict()
    assert ls["param_groups"] == [{k: v for k, v in g.items()} for g in ts["param_groups"]]
    assert ls["state"].keys() == ts["state"].keys()
    for key, tstate in ts["state"].items():
        assert ls["state"][key].keys() == tstate.keys()
        for name, tv in tstate.items():
            lv = ls["state"][key][name]
            if isinstance(tv, torch.Tensor):
                assert lv.shape == tuple(tv.shape), name
                assert_close(lv, tv, tol)
            else:
                assert lv == tv, name


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
def test_matches_torch_step_by_step(config, dtype, device):
    name, kwargs = config
    # a tensor over several chunks of the fused dispatch, a small one and a scalar
    shapes = [(300, 257), (7,), ()]
    lopt, topt, lps, tps = make_pair(name, kwargs, shapes, dtype, device=device)
    gen = torch.Generator().manual_seed(2)
    tol = 1e-12 if dtype == torch.float64 else 2e-5
    # torch's CUDA steps are its foreach kernels, some with their scalars on the device in
    # float32 (ASGD's eta and mu, measured 5e-8 off in float64): looser there; lucid's CPU
    # (below, and the CPU leg against torch's CPU) is the tight check
    torch_tol = tol if device == "cpu" else (1e-9 if dtype == torch.float64 else 5e-5)
    if device == "gpu" and name == "ASGD":
        torch_tol = max(torch_tol, 2e-7)
    for step in range(STEPS):
        set_grads(lps, tps, gen, skip=1 if step == 3 else None)  # a parameter without a gradient
        lopt.step()
        topt.step()
    for lp, tp in zip(lps, tps):
        assert lp.is_cuda == (device == "gpu")
        assert_close(lp, tp, torch_tol)
    assert_same_state(lopt, topt, torch_tol)
    if device == "gpu":
        # the same steps on lucid's CPU
        copt, _, cps, _ = make_pair(name, kwargs, shapes, dtype, device="cpu")
        gen = torch.Generator().manual_seed(2)
        for step in range(STEPS):
            set_grads(cps, tps, gen, skip=1 if step == 3 else None)
            copt.step()
        for lp, cp in zip(lps, cps):
            assert_close(lp, cp, tol)


@pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")
def test_gpu_step_over_many_tensors_and_mixed_dtypes():
    """More parameters than one launch takes, float32 and float64 in one group, sizes
    that end on and off a chunk's boundary, an empty one, one of more chunks than one
    launch runs, and views one element into their storage (not 16-byte aligned: the
    kernel's element-wise path; the others take 16 bytes a load): against lucid's CPU."""
    shapes = [(5,), (16384,), (16385,), (0,), (3, 7), ()] * 4 + [(2300, 2300), (4,), (16391,), (16391,)]
    gen = torch.Generator().manual_seed(9)
    base = [torch.randn(s, generator=gen, dtype=torch.float64 if i % 3 else torch.float32)
            for i, s in enumerate(shapes)]
    offset = {len(base) - 2, len(base) - 1}  # (float64 and float32)
    for name, kwargs in [("Adam", dict(lr=0.01, amsgrad=True)), ("SGD", dict(lr=0.1, momentum=0.9)),
                         ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True))]:
        runs = {}
        for device in ("gpu", "cpu"):
            ps = [lucid.nn.Parameter(lucid.tensor(b.numpy(), device=device)[1:] if i in offset
                                     else lucid.tensor(b.numpy(), device=device)) for i, b in enumerate(base)]
            opt = getattr(lucid.optim, name)(ps, **kwargs)
            g2 = torch.Generator().manual_seed(10)
            for _ in range(5):
                for p in ps:
                    g = torch.randn(tuple(p.shape), generator=g2, dtype=torch.float64 if p.dtype == lucid.float64
                                    else torch.float32)
                    p.grad = lucid.tensor(g.numpy(), device=device)
                opt.step()
            runs[device] = ps
        for a, b in zip(runs["gpu"], runs["cpu"]):
            assert a.dtype == b.dtype
            assert_close(a, b, 1e-12 if a.dtype == lucid.float64 else 1e-5)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop"])
def test_param_groups_with_their_own_options(name):
    kwargs = dict(lr=0.01) if name != "SGD" else dict(lr=0.1, momentum=0.9)
    groups = [([0], dict(lr=0.05)), ([1, 2], dict(weight_decay=0.1))]
    lopt, topt, lps, tps = make_pair(name, kwargs, [(4, 3), (5,), (2, 2)], torch.float64, groups)
    gen = torch.Generator().manual_seed(3)
    for _ in range(STEPS):
        set_grads(lps, tps, gen)
        lopt.step()
        topt.step()
    for lp, tp in zip(lps, tps):
        assert_close(lp, tp, 1e-12)
    assert_same_state(lopt, topt, 1e-12)


def test_resume_from_a_state_dict_continues_identically():
    lopt, _, lps, _ = make_pair("Adam", dict(lr=0.01, amsgrad=True), [(6, 5), (3,)], torch.float64)
    gen = torch.Generator().manual_seed(4)
    grads = [[lucid.tensor(torch.randn(p.shape, generator=gen, dtype=torch.float64).numpy()) for p in lps]
             for _ in range(10)]

    def run(opt, params, steps):
        for gs in steps:
            for p, g in zip(params, gs):
                p.grad = g.clone()
            opt.step()

    run(lopt, lps, grads[:5])
    saved_params = [p.detach().clone() for p in lps]
    saved = copy.deepcopy(lopt.state_dict())
    run(lopt, lps, grads[5:])

    fresh = [lucid.nn.Parameter(p.clone()) for p in saved_params]
    resumed = lucid.optim.Adam(fresh, lr=0.5)  # the loaded groups bring lr back
    resumed.load_state_dict(saved)
    assert resumed.param_groups[0]["lr"] == 0.01
    run(resumed, fresh, grads[5:])
    for a, b in zip(fresh, lps):
        assert a.tolist() == b.tolist()


def test_a_torch_state_dict_loads_and_continues():
    """state_dicts move between torch and lucid: same keys, same numbering."""
    lopt, topt, lps, tps = make_pair("AdamW", dict(lr=0.01), [(4, 4), (2,)], torch.float64)
    gen = torch.Generator().manual_seed(5)
    for _ in range(5):
        set_grads(lps, tps, gen)
        topt.step()
    tsd = topt.state_dict()
    converted = {"state": {k: {n: lucid.tensor(v.cpu().numpy()) for n, v in s.items()} for k, s in tsd["state"].items()},
                 "param_groups": copy.deepcopy(tsd["param_groups"])}
    for lp, tp in zip(lps, tps):
        with lucid.no_grad():
            lp.copy_(lucid.tensor(tp.detach().cpu().numpy()))
    lopt.load_state_dict(converted)
    for _ in range(5):
        set_grads(lps, tps, gen)
        lopt.step()
        topt.step()
    for lp, tp in zip(lps, tps):
        assert_close(lp, tp, 1e-12)


def test_scalar_counters_live_on_the_cpu_in_float32():
    """The step counters the step ops read on the host: made on the CPU whatever the
    default device, and loaded there in float32 from a checkpoint that holds them in
    another dtype (or, from torch's capturable steps, on its GPU)."""
    lopt, _, lps, _ = make_pair("Adam", dict(lr=0.01), [(3,)], torch.float64)
    lps[0].grad = lucid.ones(3, dtype=lucid.float64)
    lopt.step()
    sd = lopt.state_dict()
    assert sd["state"][0]["step"].device.type == "cpu" and sd["state"][0]["step"].dtype == lucid.float32
    sd["state"][0]["step"] = lucid.tensor(4.0, dtype=lucid.float64)
    lopt.load_state_dict(sd)
    step = lopt.state[lps[0]]["step"]
    assert step.dtype == lucid.float32 and step.device.type == "cpu" and step.item() == 4.0
    lopt.step()
    assert lopt.state[lps[0]]["step"].item() == 5.0


@pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")
def test_optimizers_step_with_the_gpu_as_the_default_device():
    before = lucid.get_default_device()
    lucid.set_default_device("gpu")
    try:
        for name in ("Adam", "AdamW", "NAdam", "RAdam", "ASGD", "Rprop", "RMSprop", "Adagrad", "Adadelta", "Adamax"):
            p = lucid.nn.Parameter(lucid.ones(4))
            opt = getattr(lucid.optim, name)([p], lr=0.01)
            for _ in range(2):
                p.grad = lucid.full((4,), 0.5)
                opt.step()
            assert p.device.type == "gpu" and opt.state[p]["step"].device.type == "cpu", name
            assert p.detach().cpu().tolist() != [1.0] * 4, name
    finally:
        lucid.set_default_device(before)


def test_loading_copies_the_state():
    lopt, _, lps, _ = make_pair("SGD", dict(lr=0.1, momentum=0.9), [(3,)], torch.float64)
    lps[0].grad = lucid.ones(3, dtype=lucid.float64)
    lopt.step()
    sd = lopt.state_dict()
    other = lucid.optim.SGD(lps, lr=0.1, momentum=0.9)
    other.load_state_dict(sd)
    before = sd["state"][0]["momentum_buffer"].tolist()
    other.step()
    assert sd["state"][0]["momentum_buffer"].tolist() == before


def test_zero_grad():
    p = lucid.nn.Parameter(lucid.ones(3))
    opt = lucid.optim.SGD([p], lr=0.1)
    (p * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_closure_is_called_with_grad_enabled():
    p = lucid.nn.Parameter(lucid.tensor([1.0, 2.0]))
    opt = lucid.optim.SGD([p], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with lucid.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 5.0
    assert p.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_parameters_are_stepped_in_float32(dtype):
    """16-bit parameters keep their dtype and their state's, and step like float32
    ones (the reference is torch in float32: torch's own half step rounds every
    intermediate to half, where a tiny second moment can flush to zero)."""
    half = getattr(torch, dtype)
    t = torch.randn(64, 3, dtype=torch.float64).to(half)
    lp = lucid.nn.Parameter(lucid.tensor(t.float().numpy()).to(getattr(lucid, dtype)))
    tp = torch.nn.Parameter(t.float())
    lopt, topt = lucid.optim.Adam([lp], lr=0.01), torch.optim.Adam([tp], lr=0.01)
    gen = torch.Generator().manual_seed(6)
    for _ in range(5):
        g = torch.randn(64, 3, generator=gen).to(half)
        tp.grad = g.float()
        lp.grad = lucid.tensor(g.float().numpy()).to(getattr(lucid, dtype))
        lopt.step()
        topt.step()
    assert lp.dtype == getattr(lucid, dtype)
    assert lopt.state[lp]["exp_avg"].dtype == getattr(lucid, dtype)
    tol = 1e-2 if dtype == "float16" else 3e-2
    np.testing.assert_allclose(lp.float().detach().numpy(), tp.detach().numpy(), rtol=tol, atol=tol)


def test_non_contiguous_parameter():
    base = torch.randn(4, 6, dtype=torch.float64)
    tp = torch.nn.Parameter(base.clone())
    lp = lucid.nn.Parameter(lucid.tensor(base.numpy()).t().contiguous().t())  # a transposed layout
    assert not lp.is_contiguous()
    lopt, topt = lucid.optim.RMSprop([lp], lr=0.01, momentum=0.9), torch.optim.RMSprop([tp], lr=0.01, momentum=0.9)
    gen = torch.Generator().manual_seed(7)
    for _ in range(6):
        g = torch.randn(4, 6, generator=gen, dtype=torch.float64)
        tp.grad, lp.grad = g, lucid.tensor(g.numpy())
        lopt.step()
        topt.step()
    assert_close(lp, tp, 1e-12)


def test_step_bumps_the_version_saved_tensors_check():
    p = lucid.nn.Parameter(lucid.ones(3))
    opt = lucid.optim.Adam([p], lr=0.1)
    y = (p * p).sum()  # saves p for backward
    p.grad = lucid.ones(3)
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_lbfgs_matches_torch_on_rosenbrock(device):
    def rosenbrock(x):
        return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2

    for search in (None, "strong_wolfe"):
        tx = torch.nn.Parameter(torch.tensor([-1.5, 2.0], dtype=torch.float64))
        lx = lucid.nn.Parameter(lucid.tensor([-1.5, 2.0], dtype=lucid.float64, device=device))
        topt = torch.optim.LBFGS([tx], lr=1 if search else 0.05, max_iter=30, history_size=7, line_search_fn=search)
        lopt = lucid.optim.LBFGS([lx], lr=1 if search else 0.05, max_iter=30, history_size=7, line_search_fn=search)

        def closure(opt, x):
            def f():
                opt.zero_grad()
                loss = rosenbrock(x)
                loss.backward()
                return loss
            return f

        for _ in range(3):
            tl = topt.step(closure(topt, tx))
            ll = lopt.step(closure(lopt, lx))
            # the same iterates up to the rounding of a different summation order
            assert float(ll.detach()) == pytest.approx(float(tl.detach()), rel=1e-6, abs=1e-12)
        assert lx.device.type == device
        np.testing.assert_allclose(lx.detach().numpy(), tx.detach().numpy(), rtol=1e-6, atol=1e-9)
    assert lx.tolist() == pytest.approx([1.0, 1.0], abs=1e-4)  # strong Wolfe converges


def test_sparse_adam_updates_only_rows_with_a_gradient(device):
    weight = torch.randn(10, 4, dtype=torch.float64)
    temb = torch.nn.Embedding(10, 4, sparse=True, _weight=weight.clone())
    lw = lucid.nn.Parameter(lucid.tensor(weight.numpy()).to(device))
    topt = torch.optim.SparseAdam(temb.parameters(), lr=0.1)
    lopt = lucid.optim.SparseAdam([lw], lr=0.1)
    gen = torch.Generator().manual_seed(8)
    scale = torch.arange(1, 5, dtype=torch.float64)
    for _ in range(STEPS):
        ids = torch.randint(1, 10, (3,), generator=gen)  # row 0 is never looked up
        topt.zero_grad()
        lopt.zero_grad()
        (temb(ids) * scale).sum().backward()
        (lucid.nn.functional.embedding(lucid.tensor(ids.numpy(), device=device), lw)
         * lucid.tensor(scale.numpy(), device=device)).sum().backward()
        topt.step()
        lopt.step()
    assert lw.device.type == device and lopt.state[lw]["exp_avg"].device.type == device
    np.testing.assert_allclose(lw.detach().numpy(), temb.weight.detach().numpy(), rtol=1e-12, atol=1e-12)
    tstate = topt.state[temb.weight]
    for name in ("exp_avg", "exp_avg_sq"):
        assert_close(lopt.state[lw][name], tstate[name], 1e-12)
    assert lopt.state[lw]["step"].item() == float(tstate["step"]) == STEPS
    assert lw[0].tolist() == weight[0].tolist()  # never looked up: untouched


@pytest.mark.parametrize("make, message", [
    (lambda p: lucid.optim.SGD(p, lr=-1), "Invalid learning rate: -1"),
    (lambda p: lucid.optim.SGD(p, lr=0.1, momentum=-0.5), "Invalid momentum value: -0.5"),
    (lambda p: lucid.optim.SGD(p, lr=0.1, nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
    (lambda p: lucid.optim.Adam(p, betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (lambda p: lucid.optim.Adam(p, eps=-1e-8), "Invalid epsilon value: -1e-08"),
    (lambda p: lucid.optim.AdamW(p, weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    (lambda p: lucid.optim.Rprop(p, etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    (lambda p: lucid.optim.Adadelta(p, rho=1.5), "Invalid rho value: 1.5"),
    (lambda p: lucid.optim.Adam(p, capturable=True), "capturable"),
])
def test_bad_hyperparameters(make, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        make([lucid.nn.Parameter(lucid.ones(2))])


def test_bad_parameter_lists():
    p = lucid.nn.Parameter(lucid.ones(2))
    with pytest.raises(ValueError, match="empty parameter list"):
        lucid.optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        lucid.optim.SGD(p, lr=0.1)
    with pytest.warns(FutureWarning, match="ordering of tensors in sets"):
        lucid.optim.SGD({p}, lr=0.1)
    with pytest.raises(TypeError, match="ordering of tensors in sets"):
        lucid.optim.SGD([{"params": {p}}], lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        lucid.optim.SGD([p, 3.0], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        lucid.optim.SGD([p * 2], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        lucid.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with pytest.raises(ValueError, match="per-parameter options"):
        lucid.optim.LBFGS([{"params": [p]}, {"params": [lucid.nn.Parameter(lucid.ones(1))]}])


def test_bad_state_dicts():
    p = lucid.nn.Parameter(lucid.ones(2))
    opt = lucid.optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict({"state": {}, "param_groups": [{"lr": 0.1, "params": [0, 1]}]})


def test_gradient_of_the_wrong_shape_or_dtype_is_refused():
    p = lucid.nn.Parameter(lucid.ones(2))
    opt = lucid.optim.Adam([p])
    p.grad = lucid.ones(2)
    opt.step()
    opt.state[p]["exp_avg"] = lucid.ones(3)
    with pytest.raises(RuntimeError, match="exp_avg of parameter 0 has shape \\[3\\]"):
        opt.step()
    q = lucid.nn.Parameter(lucid.ones(2, dtype=lucid.int64).float().to(lucid.complex64))
    q.grad = lucid.ones(2, dtype=lucid.complex64)
    with pytest.raises(TypeError, match="float32 or float64"):
        lucid.optim.SGD([q], lr=0.1).step()


def test_training_reduces_the_loss():
    lucid.manual_seed(0)
    model = lucid.nn.Sequential(lucid.nn.Linear(4, 16), lucid.nn.Tanh(), lucid.nn.Linear(16, 1))
    x = lucid.randn(64, 4)
    y = (x.sum(1, keepdim=True) > 0).float()
    opt = lucid.optim.AdamW(model.parameters(), lr=0.02)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = lucid.nn.functional.binary_cross_entropy_with_logits(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    assert math.isfinite(losses[-1])


def test_step_and_state_dict_hooks_run_as_torchs():
    def run(m):
        calls = []
        p = m.nn.Parameter(m.ones(2))
        opt = m.optim.SGD([p], lr=0.5)
        h_pre = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", a[0] is o, len(a), sorted(k))))
        opt.register_step_post_hook(lambda o, a, k: calls.append(("post", a[0] is o, len(a), sorted(k))))
        optimizer_module = importlib.import_module(m.optim.Optimizer.__module__)  # (torch.optim.optimizer)
        g = optimizer_module.register_optimizer_step_pre_hook(lambda o, a, k: calls.append("global pre"))
        opt.register_state_dict_pre_hook(lambda o: calls.append("sd pre"))
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
        opt.register_load_state_dict_pre_hook(lambda o, sd: {k: v for k, v in sd.items() if k != "extra"})
        opt.register_load_state_dict_post_hook(lambda o: calls.append("load post"))
        p.grad = m.ones(2)
        opt.step()
        h_pre.remove()
        g.remove()
        opt.step()
        sd = opt.state_dict()
        opt.load_state_dict(sd)
        return calls, sorted(sd), p.tolist()

    assert run(lucid) == run(torch)
