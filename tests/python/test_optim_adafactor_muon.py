"""lucid.optim.Adafactor and lucid.optim.Muon against torch's: the same parameters and
gradients, several steps in float64, parameters and every state tensor compared; their
state_dicts in torch's layout, moving both ways; and the argument errors."""

import copy
import inspect

import numpy as np
import pytest
import torch

import lucid

TOL = 1e-10
STEPS = 8
HAS_MUON = hasattr(torch.optim, "Muon")


def to_lucid(t):
    return lucid.tensor(t.detach().cpu().numpy())


def to_torch(l):
    return torch.from_numpy(np.array(l.detach().cpu().numpy()))


def assert_close(l, t, tol=TOL):
    a = np.asarray(l.detach().cpu().numpy(), dtype=np.float64)
    b = np.asarray(t.detach().cpu().numpy(), dtype=np.float64)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def make_pair(name, kwargs, shapes, dtype=torch.float64, groups=None, seed=1):
    gen = torch.Generator().manual_seed(seed)
    tps = [torch.nn.Parameter(torch.randn(s, generator=gen, dtype=dtype)) for s in shapes]
    lps = [lucid.nn.Parameter(to_lucid(p)) for p in tps]
    if groups:
        tparams = [dict(params=[tps[i] for i in idx], **extra) for idx, extra in groups]
        lparams = [dict(params=[lps[i] for i in idx], **extra) for idx, extra in groups]
    else:
        tparams, lparams = tps, lps
    return getattr(lucid.optim, name)(lparams, **kwargs), getattr(torch.optim, name)(tparams, **kwargs), lps, tps


def set_grads(lps, tps, gen, skip=None):
    for i, (lp, tp) in enumerate(zip(lps, tps)):
        if i == skip:
            lp.grad = tp.grad = None
            continue
        g = torch.randn(tp.shape, generator=gen, dtype=tp.dtype)
        tp.grad = g
        lp.grad = to_lucid(g)


def assert_same_state(lopt, topt, tol=TOL):
    ls, ts = lopt.state_dict(), topt.state_dict()
    assert ls["param_groups"] == ts["param_groups"]
    assert ls["state"].keys() == ts["state"].keys()
    for key, tstate in ts["state"].items():
        assert ls["state"][key].keys() == tstate.keys()
        for name, tv in tstate.items():
            lv = ls["state"][key][name]
            assert tuple(lv.shape) == tuple(tv.shape), name
            assert str(lv.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], name
            assert_close(lv, tv, tol)


def run_side_by_side(name, kwargs, shapes, groups=None, steps=STEPS, dtype=torch.float64, tol=TOL):
    lopt, topt, lps, tps = make_pair(name, kwargs, shapes, dtype, groups)
    gen = torch.Generator().manual_seed(2)
    for step in range(steps):
        set_grads(lps, tps, gen, skip=1 if step == 2 else None)  # a parameter without a gradient
        lopt.step()
        topt.step()
    for lp, tp in zip(lps, tps):
        assert_close(lp, tp, tol)
    assert_same_state(lopt, topt, tol)
    return lopt, topt, lps, tps


def torch_state_dict_from(lopt):
    sd = lopt.state_dict()
    return {"state": {k: {n: to_torch(v) for n, v in s.items()} for k, s in sd["state"].items()},
            "param_groups": copy.deepcopy(sd["param_groups"])}


def lucid_state_dict_from(topt):
    sd = topt.state_dict()
    return {"state": {k: {n: to_lucid(v) for n, v in s.items()} for k, s in sd["state"].items()},
            "param_groups": copy.deepcopy(sd["param_groups"])}


def check_state_dicts_move_both_ways(name, kwargs, shapes):
    """torch's state loaded into lucid, and lucid's into torch, continue identically."""
    lopt, topt, lps, tps = make_pair(name, kwargs, shapes)
    gen = torch.Generator().manual_seed(3)
    for _ in range(3):
        set_grads(lps, tps, gen)
        lopt.step()
        topt.step()
    lfresh, tfresh, lps2, tps2 = make_pair(name, kwargs, shapes)
    with torch.no_grad():
        for lp2, tp2, lp, tp in zip(lps2, tps2, lps, tps):
            tp2.copy_(tp)
            with lucid.no_grad():
                lp2.copy_(lp)
    lfresh.load_state_dict(lucid_state_dict_from(topt))
    tfresh.load_state_dict(torch_state_dict_from(lopt))
    assert_same_state(lfresh, tfresh)
    for _ in range(3):
        set_grads(lps2, tps2, gen)
        lfresh.step()
        tfresh.step()
    for lp, tp in zip(lps2, tps2):
        assert_close(lp, tp)
    assert_same_state(lfresh, tfresh)


def check_same_error(name, kwargs, params_shape=(3, 4)):
    tparam = torch.nn.Parameter(torch.zeros(params_shape))
    lparam = lucid.nn.Parameter(lucid.zeros(params_shape))
    with pytest.raises(Exception) as terr:
        getattr(torch.optim, name)([tparam], **kwargs)
    with pytest.raises(type(terr.value)) as lerr:
        getattr(lucid.optim, name)([lparam], **kwargs)
    return str(lerr.value), str(terr.value)


# ---- Adafactor ----------------------------------------------------------------------

ADAFACTOR_SHAPES = [(6, 5), (7,), (3, 4, 2), (), (1, 9)]

ADAFACTOR_CONFIGS = [
    dict(),
    dict(lr=0.05, weight_decay=0.1),
    dict(lr=0.5, maximize=True, d=1.5),
    dict(eps=(1e-20, 1e-2), beta2_decay=-0.5),
    dict(eps=(1e-3, 1e-3), d=4.0, beta2_decay=0.0),  # a large eps1: the clamps bite
    dict(lr=0.02, foreach=True, weight_decay=0.05),  # torch's multi-tensor path
]


@pytest.mark.parametrize("kwargs", ADAFACTOR_CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items())
                         or "defaults")
def test_adafactor_matches_torch(kwargs):
    lopt, _, lps, _ = run_side_by_side("Adafactor", kwargs, ADAFACTOR_SHAPES)
    # factored moments for the parameters of 2 or more dims, a full one for the others
    assert set(lopt.state[lps[0]]) == {"step", "row_var", "col_var"}
    assert tuple(lopt.state[lps[2]]["row_var"].shape) == (3, 4, 1)
    assert tuple(lopt.state[lps[2]]["col_var"].shape) == (3, 1, 2)
    assert set(lopt.state[lps[1]]) == {"step", "variance"}
    assert lopt.state[lps[0]]["step"].dtype == lucid.float32
    assert float(lopt.state[lps[1]]["step"].item()) == STEPS - 1  # (it had no gradient once)


def test_adafactor_param_groups_with_their_own_options():
    groups = [([0, 1], dict(lr=0.2, weight_decay=0.1)), ([2, 3], dict(d=2.0, eps=(None, 1e-1)))]
    run_side_by_side("Adafactor", dict(lr=0.01), [(4, 3), (5,), (2, 2), (6,)], groups=groups)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
def test_adafactor_default_eps1_with_tiny_gradients(dtype):
    """eps1=None is the epsilon of the parameters' dtype (2.2e-16, 1.2e-7): gradients this
    small put the factored moments' mean under it, and in float32 the squared gradients
    under eps1 squared, so both clamps decide the step."""
    scale = 1e-9 if dtype == torch.float64 else 1e-8
    lopt, topt, lps, tps = make_pair("Adafactor", dict(), [(5, 4), (3,), (2, 3, 3)], dtype=dtype)
    gen = torch.Generator().manual_seed(6)
    for _ in range(4):
        for lp, tp in zip(lps, tps):
            g = torch.randn(tp.shape, generator=gen, dtype=dtype) * scale
            tp.grad, lp.grad = g, to_lucid(g)
        lopt.step()
        topt.step()
    tol = TOL if dtype == torch.float64 else 1e-6
    for lp, tp in zip(lps, tps):
        assert str(lp.dtype).split(".")[-1] == str(tp.dtype).split(".")[-1]
        assert_close(lp, tp, tol)
    assert_same_state(lopt, topt, tol)


def test_adafactor_state_dicts_move_both_ways():
    check_state_dicts_move_both_ways("Adafactor", dict(lr=0.05, weight_decay=0.01), ADAFACTOR_SHAPES)


def test_adafactor_closure_and_schedulers():
    lparam = lucid.nn.Parameter(lucid.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=lucid.float64))
    tparam = torch.nn.Parameter(torch.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=torch.float64))
    lopt, topt = lucid.optim.Adafactor([lparam], lr=0.1), torch.optim.Adafactor([tparam], lr=0.1)
    lsched = lucid.optim.lr_scheduler.StepLR(lopt, step_size=2, gamma=0.5)
    tsched = torch.optim.lr_scheduler.StepLR(topt, step_size=2, gamma=0.5)

    def closure(param, opt):
        def f():
            opt.zero_grad()
            loss = (param * param).sum()
            loss.backward()
            return loss
        return f

    for _ in range(5):
        lloss = lopt.step(closure(lparam, lopt))
        tloss = topt.step(closure(tparam, topt))
        assert float(lloss.item()) == pytest.approx(float(tloss.item()), rel=1e-12)
        lsched.step()
        tsched.step()
    assert_close(lparam, tparam)


@pytest.mark.parametrize("kwargs", [dict(lr=-1.0), dict(beta2_decay=0.5), dict(eps=(-1.0, 1e-3)),
                                    dict(eps=(None, -1.0)), dict(d=0.5), dict(weight_decay=-0.1)],
                         ids=["lr", "beta2_decay", "eps1", "eps2", "d", "weight_decay"])
def test_adafactor_errors_match_torch(kwargs):
    lmsg, tmsg = check_same_error("Adafactor", kwargs)
    assert lmsg == tmsg


def test_adafactor_defaults_match_torch():
    lparam, tparam = lucid.nn.Parameter(lucid.zeros(2, 2)), torch.nn.Parameter(torch.zeros(2, 2))
    assert lucid.optim.Adafactor([lparam]).defaults == torch.optim.Adafactor([tparam]).defaults


# ---- Muon ---------------------------------------------------------------------------

muon_only = pytest.mark.skipif(not HAS_MUON, reason="the installed torch has no torch.optim.Muon")
# The comparisons hold to float64 precision on lucid's CPU, whose bfloat16 products round
# as torch's CPU ones; the GPU's cuBLAS products sum in another order (bfloat16-close).
muon_on_cpu = pytest.mark.usefixtures("cpu_default")

MUON_SHAPES = [(6, 9), (12, 4), (5, 5)]  # wide, tall (the iteration runs on its transpose), square

MUON_CONFIGS = [
    dict(lr=0.02),
    dict(lr=0.02, nesterov=False),
    dict(lr=0.05, momentum=0.8, weight_decay=0.0, adjust_lr_fn="match_rms_adamw"),
    pytest.param(dict(lr=0.05, adjust_lr_fn="spectral_unclamped"), marks=pytest.mark.skipif(
        HAS_MUON and "spectral_unclamped" not in inspect.getsource(inspect.getmodule(torch.optim.Muon)),
        reason="the installed torch's Muon has no adjust_lr_fn='spectral_unclamped' (2.11's)")),
    dict(lr=0.05, adjust_lr_fn="original", ns_steps=3, ns_coefficients=(2.0, -1.5, 0.5), eps=1e-3),
    dict(lr=0.01, momentum=0.0, weight_decay=0.3),
]


@muon_only
@muon_on_cpu
@pytest.mark.parametrize("kwargs", MUON_CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_muon_matches_torch(kwargs):
    """The Newton-Schulz iteration runs in bfloat16 in both, and lucid's bfloat16 matmuls
    round as torch's: the steps agree to float64 precision, not merely bfloat16's."""
    lopt, _, lps, _ = run_side_by_side("Muon", kwargs, MUON_SHAPES)
    assert set(lopt.state[lps[0]]) == {"momentum_buffer"}


@muon_only
@muon_on_cpu
def test_muon_orthogonalises():
    """One step from zero momentum with no weight decay moves a square parameter by lr
    times a matrix whose singular values all lie in the iteration's band around 1."""
    param = lucid.nn.Parameter(lucid.zeros(8, 8, dtype=lucid.float64))
    opt = lucid.optim.Muon([param], lr=1.0, weight_decay=0.0, momentum=0.0, nesterov=False)
    param.grad = to_lucid(torch.randn(8, 8, dtype=torch.float64))
    opt.step()
    singular = np.linalg.svd(-np.asarray(param.detach().numpy()), compute_uv=False)
    assert singular.min() > 0.5 and singular.max() < 1.3


@muon_only
@muon_on_cpu
def test_muon_param_groups_and_state_dicts():
    groups = [([0], dict(lr=0.1, adjust_lr_fn="match_rms_adamw")), ([1, 2], dict(momentum=0.5))]
    run_side_by_side("Muon", dict(lr=0.02), MUON_SHAPES, groups=groups)
    check_state_dicts_move_both_ways("Muon", dict(lr=0.03), MUON_SHAPES)


@muon_only
@muon_on_cpu
@pytest.mark.parametrize("shape", [(4,), (2, 3, 4), ()], ids=["1d", "3d", "0d"])
def test_muon_refuses_parameters_that_are_not_matrices(shape):
    lmsg, tmsg = check_same_error("Muon", dict(), shape)
    assert lmsg == tmsg.replace("torch.Size", "lucid.Size")


@muon_only
@muon_on_cpu
@pytest.mark.parametrize("kwargs", [dict(lr=-1.0), dict(momentum=-0.5), dict(weight_decay=-0.1),
                                    dict(adjust_lr_fn="sqrt")], ids=["lr", "momentum", "weight_decay", "adjust"])
def test_muon_argument_errors_match_torch(kwargs):
    lmsg, tmsg = check_same_error("Muon", kwargs)
    assert lmsg == tmsg


@muon_only
@muon_on_cpu
@pytest.mark.parametrize("kwargs", [dict(ns_steps=100), dict(ns_coefficients=(1.0, 2.0))], ids=["steps", "coeffs"])
def test_muon_step_errors_match_torch(kwargs):
    """Bad iteration settings are found by the first step, as torch finds them."""
    lopt, topt, lps, tps = make_pair("Muon", kwargs, [(3, 4)])
    set_grads(lps, tps, torch.Generator().manual_seed(5))
    with pytest.raises(Exception) as terr:
        topt.step()
    with pytest.raises(type(terr.value)) as lerr:
        lopt.step()
    assert str(lerr.value) == str(terr.value)


@muon_only
@muon_on_cpu
def test_muon_defaults_match_torch():
    lparam, tparam = lucid.nn.Parameter(lucid.zeros(2, 2)), torch.nn.Parameter(torch.zeros(2, 2))
    assert lucid.optim.Muon([lparam]).defaults == torch.optim.Muon([tparam]).defaults


BF16_CASES = [("Adafactor", dict(lr=0.05, weight_decay=0.1), [(5, 7), (8,), (2, 3, 3)])]
if HAS_MUON:
    BF16_CASES.append(("Muon", dict(lr=0.02), [(5, 7), (8, 3)]))


@pytest.mark.parametrize("case", BF16_CASES, ids=lambda c: c[0])
def test_bfloat16_parameters_step_in_float32(case):
    """16-bit parameters and state stay 16-bit, and each step is computed in float32 and
    rounded once (as lucid's fused optimizers do): the trajectory stays within about a
    bfloat16 ulp of float64 steps from the same start, where rounding every op (or
    lucid's 16-bit scalar ops: 1 - lr * wd = 0.995 becomes 0.996) drifts further."""
    name, kwargs, shapes = case
    gen = torch.Generator().manual_seed(7)
    start = [torch.randn(s, generator=gen).bfloat16() for s in shapes]
    grads = [[torch.randn(s, generator=gen).bfloat16() for s in shapes] for _ in range(6)]
    lps = [lucid.nn.Parameter(to_lucid(p.float()).to(lucid.bfloat16)) for p in start]
    tps = [torch.nn.Parameter(p.double()) for p in start]
    lopt, topt = getattr(lucid.optim, name)(lps, **kwargs), getattr(torch.optim, name)(tps, **kwargs)
    for gs in grads:
        for lp, tp, g in zip(lps, tps, gs):
            lp.grad, tp.grad = to_lucid(g.float()).to(lucid.bfloat16), g.double()
        lopt.step()
        topt.step()
    for lp, tp in zip(lps, tps):
        assert lp.dtype == lucid.bfloat16
        assert all(v.dtype in (lucid.bfloat16, lucid.float32) for v in lopt.state[lp].values())
        assert_close(lp.to(lucid.float64), tp, 1.5e-2)


@pytest.mark.parametrize("name", ["Adafactor"] + (["Muon"] if HAS_MUON else []))
def test_bfloat16_weight_decay_step_matches_torch(name):
    """A step of weight decay alone (zero gradient, zero update) is one rounding in torch
    and in lucid: the same bfloat16 values. (lucid's own 16-bit mul_ would round
    1 - lr * wd = 0.998 to 0.996 and decay twice as fast.)"""
    values = torch.tensor([[1.5, 3.0, -2.5], [0.75, -3.0, 2.0]]).bfloat16()
    lp = lucid.nn.Parameter(to_lucid(values.float()).to(lucid.bfloat16))
    tp = torch.nn.Parameter(values.clone())
    lopt = getattr(lucid.optim, name)([lp], lr=0.02, weight_decay=0.1)
    topt = getattr(torch.optim, name)([tp], lr=0.02, weight_decay=0.1)
    for _ in range(3):
        lp.grad, tp.grad = lucid.zeros(2, 3, dtype=lucid.bfloat16), torch.zeros(2, 3, dtype=torch.bfloat16)
        lopt.step()
        topt.step()
    assert_close(lp.to(lucid.float64), tp.double(), 0)
    assert not np.array_equal(np.asarray(lp.to(lucid.float64).detach().numpy()), values.double().numpy())


def test_new_names_are_exported():
    expected = {"Adafactor", "swa_utils"} | ({"Muon"} if HAS_MUON else set())
    assert expected <= set(lucid.optim.__all__)
    for name in expected:
        assert hasattr(lucid.optim, name)
    assert issubclass(lucid.optim.Adafactor, lucid.optim.Optimizer)
