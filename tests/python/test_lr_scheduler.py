"""lucid.optim.lr_scheduler against torch.optim.lr_scheduler: the same scheduler built on a
lucid and a torch optimizer, stepped side by side, every group's lr (and momentum/betas)
compared at every step; state_dict keys and round trips; torch's errors and warnings."""

import copy
import warnings

import pytest
import torch
import torch.optim.lr_scheduler as tsched

import lucid
import lucid.optim.lr_scheduler as lsched

REL = 1e-12
# Param-group entries a scheduler reads or writes.
GROUP_KEYS = ("lr", "initial_lr", "momentum", "betas", "max_lr", "min_lr", "max_momentum", "base_momentum")


def make_opts(kind="SGD", lrs=(0.1,), **kwargs):
    """A lucid and a torch optimizer of the same kind, one param group per entry of lrs."""
    lparams = [dict(params=[lucid.nn.Parameter(lucid.zeros(2))], lr=lr) for lr in lrs]
    tparams = [dict(params=[torch.nn.Parameter(torch.zeros(2))], lr=lr) for lr in lrs]
    return getattr(lucid.optim, kind)(lparams, **kwargs), getattr(torch.optim, kind)(tparams, **kwargs)


def assert_same_groups(lopt, topt):
    assert len(lopt.param_groups) == len(topt.param_groups)
    for lg, tg in zip(lopt.param_groups, topt.param_groups):
        for key in GROUP_KEYS:
            if key not in tg:
                continue
            assert key in lg, key
            if key == "betas":
                assert list(lg[key]) == pytest.approx(list(tg[key]), rel=REL)
            else:
                assert lg[key] == pytest.approx(tg[key], rel=REL), key


def assert_same_last_lr(ls, ts):
    assert ls.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=REL)


def run_side_by_side(lopt, topt, ls, ts, steps, metrics=None):
    assert_same_groups(lopt, topt)
    assert_same_last_lr(ls, ts)
    for i in range(steps):
        lopt.step()
        topt.step()
        if metrics is None:
            ls.step()
            ts.step()
        else:
            ls.step(metrics[i])
            ts.step(metrics[i])
        assert_same_groups(lopt, topt)
        assert_same_last_lr(ls, ts)


class ScaledExp:
    """A callable object: its attributes are saved in the state_dict, unlike a lambda's."""

    def __init__(self, base):
        self.base = base

    def __call__(self, epoch):
        return self.base ** epoch


def triangle_scale(x):
    return 1.0 / (1.0 + 0.1 * x)


# (id, optimizer kind, group lrs, optimizer kwargs, factory(module, optimizer), steps)
CASES = [
    ("LambdaLR", "SGD", (0.1, 0.05), {}, lambda m, o: m.LambdaLR(o, lambda e: 0.9 ** e + 0.01 * e), 40),
    ("LambdaLR-list", "SGD", (0.1, 0.05), {},
     lambda m, o: m.LambdaLR(o, [lambda e: 1.0 / (e + 1), ScaledExp(0.97)]), 40),
    ("MultiplicativeLR", "SGD", (0.1, 0.05), {}, lambda m, o: m.MultiplicativeLR(o, lambda e: 0.95), 40),
    ("StepLR", "SGD", (0.1, 0.03), {}, lambda m, o: m.StepLR(o, step_size=3, gamma=0.5), 40),
    ("MultiStepLR", "SGD", (0.1, 0.03), {}, lambda m, o: m.MultiStepLR(o, [3, 7, 7, 12], gamma=0.3), 30),
    ("ConstantLR", "SGD", (0.1, 0.03), {}, lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=6), 30),
    ("LinearLR", "SGD", (0.1, 0.03), {}, lambda m, o: m.LinearLR(o, start_factor=0.1, total_iters=12), 30),
    ("LinearLR-down", "SGD", (0.1,), {},
     lambda m, o: m.LinearLR(o, start_factor=1.0, end_factor=0.05, total_iters=20), 30),
    ("ExponentialLR", "SGD", (0.1, 0.03), {}, lambda m, o: m.ExponentialLR(o, gamma=0.93), 40),
    ("PolynomialLR", "SGD", (0.1, 0.03), {}, lambda m, o: m.PolynomialLR(o, total_iters=25, power=2.0), 35),
    ("CosineAnnealingLR", "SGD", (0.1, 0.03), {}, lambda m, o: m.CosineAnnealingLR(o, T_max=10, eta_min=0.001), 60),
    ("SequentialLR", "SGD", (0.1, 0.03), {},
     lambda m, o: m.SequentialLR(o, [m.LinearLR(o, start_factor=0.2, total_iters=5), m.ExponentialLR(o, 0.9)],
                                 milestones=[5]), 40),
    ("SequentialLR-3", "SGD", (0.1,), {},
     lambda m, o: m.SequentialLR(o, [m.ConstantLR(o, factor=0.5, total_iters=4), m.CosineAnnealingLR(o, 8),
                                     m.StepLR(o, 4, 0.5)], milestones=[4, 20]), 40),
    ("ChainedScheduler", "SGD", (0.1, 0.03), {},
     lambda m, o: m.ChainedScheduler([m.ConstantLR(o, factor=0.1, total_iters=3), m.ExponentialLR(o, 0.9)]), 30),
    ("ChainedScheduler-optimizer", "SGD", (0.1,), {},
     lambda m, o: m.ChainedScheduler([m.LinearLR(o, total_iters=8), m.MultiStepLR(o, [5, 15])], optimizer=o), 30),
    ("CyclicLR-triangular", "SGD", (0.1, 0.05), dict(momentum=0.9),
     lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4, step_size_down=6), 50),
    ("CyclicLR-triangular2", "SGD", (0.1, 0.05), dict(momentum=0.9),
     lambda m, o: m.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.2], step_size_up=5, mode="triangular2",
                             base_momentum=[0.8, 0.7], max_momentum=[0.9, 0.95]), 50),
    ("CyclicLR-exp_range", "SGD", (0.1,), dict(momentum=0.9),
     lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.97), 50),
    ("CyclicLR-scale_fn", "SGD", (0.1,), dict(momentum=0.9),
     lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=4, scale_fn=triangle_scale, scale_mode="iterations"), 40),
    ("CyclicLR-adam", "Adam", (0.1, 0.05), {},
     lambda m, o: m.CyclicLR(o, 0.001, 0.01, step_size_up=5, base_momentum=0.85, max_momentum=0.95), 40),
    ("CyclicLR-no-momentum", "SGD", (0.1,), {},
     lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=4, cycle_momentum=False), 30),
    ("OneCycleLR-cos", "SGD", (0.1, 0.05), dict(momentum=0.9),
     lambda m, o: m.OneCycleLR(o, max_lr=[0.5, 0.2], total_steps=60), 60),
    ("OneCycleLR-linear", "SGD", (0.1,), dict(momentum=0.9),
     lambda m, o: m.OneCycleLR(o, max_lr=0.5, epochs=5, steps_per_epoch=10, anneal_strategy="linear",
                               div_factor=10.0, final_div_factor=100.0, pct_start=0.25), 50),
    ("OneCycleLR-three_phase", "Adam", (0.1, 0.05), {},
     lambda m, o: m.OneCycleLR(o, max_lr=0.01, total_steps=45, three_phase=True, base_momentum=[0.8, 0.85]), 45),
    ("OneCycleLR-no-momentum", "SGD", (0.1,), {},
     lambda m, o: m.OneCycleLR(o, max_lr=0.3, total_steps=30, cycle_momentum=False), 30),
    ("CosineAnnealingWarmRestarts", "SGD", (0.1, 0.03), {},
     lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.002), 60),
    ("CosineAnnealingWarmRestarts-1", "SGD", (0.1,), {},
     lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=7), 40),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(case):
    _, kind, lrs, kwargs, factory, steps = case
    lopt, topt = make_opts(kind, lrs, **kwargs)
    ls, ts = factory(lsched, lopt), factory(tsched, topt)
    assert set(ls.state_dict()) == set(ts.state_dict())
    run_side_by_side(lopt, topt, ls, ts, steps)
    assert set(ls.state_dict()) == set(ts.state_dict())


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_state_dict_round_trip(case):
    """Saved mid-run and loaded into a fresh optimizer and scheduler, the run continues as
    the uninterrupted torch run (and so as the uninterrupted lucid run)."""
    _, kind, lrs, kwargs, factory, steps = case
    lopt, topt = make_opts(kind, lrs, **kwargs)
    ls, ts = factory(lsched, lopt), factory(tsched, topt)
    half = steps // 2
    run_side_by_side(lopt, topt, ls, ts, half)
    saved_opt = copy.deepcopy(lopt.state_dict())
    saved = copy.deepcopy(ls.state_dict())
    lopt2, _ = make_opts(kind, lrs, **kwargs)
    ls2 = factory(lsched, lopt2)  # before the optimizer's state, which it would overwrite
    lopt2.load_state_dict(saved_opt)
    ls2.load_state_dict(saved)
    run_side_by_side(lopt2, topt, ls2, ts, steps - half)


def test_noam_formula_and_torch_lambda():
    """NoamLR against its formula and against torch's LambdaLR with the same function (lr 1.0)."""
    d, warmup, factor = 512, 10, 2.0

    def noam(epoch):
        step = epoch + 1
        return factor * d ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)

    lopt, topt = make_opts("Adam", (1.0, 1.0))
    ls = lsched.NoamLR(lopt, model_size=d, warmup_steps=warmup, factor=factor)
    ts = tsched.LambdaLR(topt, noam)
    run_side_by_side(lopt, topt, ls, ts, 50)
    assert ls.get_last_lr()[0] == pytest.approx(factor * d ** -0.5 * 51 ** -0.5, rel=REL)
    # The peak is at step == warmup_steps (epoch warmup - 1).
    lopt, _ = make_opts("Adam", (0.5,))
    ls = lsched.NoamLR(lopt, model_size=d, warmup_steps=warmup)
    seen = [ls.get_last_lr()[0]]
    for _ in range(30):
        lopt.step()
        ls.step()
        seen.append(ls.get_last_lr()[0])
    assert seen.index(max(seen)) == warmup - 1
    assert seen[0] == pytest.approx(d ** -0.5 * warmup ** -1.5, rel=REL)
    assert ls.base_lrs == [0.5]


def test_noam_state_dict_round_trip():
    lopt, _ = make_opts("SGD", (1.0,))
    ls = lsched.NoamLR(lopt, 64, 8)
    for _ in range(5):
        lopt.step()
        ls.step()
    saved = copy.deepcopy(ls.state_dict())
    assert {"model_size", "warmup_steps", "factor", "last_epoch", "base_lrs"} <= set(saved)
    lopt2, _ = make_opts("SGD", (1.0,))
    ls2 = lsched.NoamLR(lopt2, 64, 8)
    ls2.load_state_dict(saved)
    for _ in range(10):
        ls.step()
        ls2.step()
        assert ls2.get_last_lr() == ls.get_last_lr()


@pytest.mark.parametrize("mode,threshold_mode,kwargs", [
    ("min", "rel", dict(patience=2)),
    ("min", "abs", dict(patience=1, threshold=0.05, cooldown=2, factor=0.5)),
    ("max", "rel", dict(patience=0, threshold=0.01, factor=0.3, min_lr=[0.01, 0.002])),
    ("max", "abs", dict(patience=1, cooldown=1, factor=0.5, min_lr=0.02, eps=0.004)),
])
def test_reduce_lr_on_plateau(mode, threshold_mode, kwargs):
    sign = 1.0 if mode == "min" else -1.0
    # Improves, stalls, improves a little (below some thresholds), stalls long.
    base = [5.0, 4.0, 3.5, 3.5, 3.6, 3.49, 3.48, 3.0, 3.0, 3.0, 3.0, 2.9, 2.95, 2.99, 3.1, 2.0, 2.0, 2.0]
    metrics = [sign * v for v in base] + [sign * 2.0] * 30
    lopt, topt = make_opts("SGD", (0.1, 0.05), momentum=0.9)
    ls = lsched.ReduceLROnPlateau(lopt, mode=mode, threshold_mode=threshold_mode, **kwargs)
    ts = tsched.ReduceLROnPlateau(topt, mode=mode, threshold_mode=threshold_mode, **kwargs)
    assert set(ls.state_dict()) == set(ts.state_dict())
    half = 20
    run_side_by_side(lopt, topt, ls, ts, half, metrics)
    assert lopt.param_groups[0]["lr"] < 0.1  # it did reduce
    ls2 = lsched.ReduceLROnPlateau(lopt, mode="max" if mode == "min" else "min")
    ls2.load_state_dict(copy.deepcopy(ls.state_dict()))
    assert ls2.mode_worse == ts.mode_worse
    run_side_by_side(lopt, topt, ls2, ts, len(metrics) - half, metrics[half:])
    for key, value in ts.state_dict().items():
        if isinstance(value, str) or value is None:
            assert ls2.state_dict()[key] == value, key
        else:
            assert ls2.state_dict()[key] == pytest.approx(value, rel=REL), key


def test_reduce_lr_on_plateau_tensor_metric_and_epoch_warning():
    lopt, topt = make_opts("SGD", (0.1,))
    ls, ts = lsched.ReduceLROnPlateau(lopt, patience=0), tsched.ReduceLROnPlateau(topt, patience=0)
    for v in [1.0, 2.0, 3.0]:
        ls.step(lucid.tensor(v))
        ts.step(torch.tensor(v))
    assert ls.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=REL)
    with pytest.warns(UserWarning, match="epoch parameter"):
        ls.step(4.0, epoch=10)
    assert ls.last_epoch == 10


@pytest.mark.parametrize("factory,epochs", [
    (lambda m, o: m.StepLR(o, 3, 0.5), [0, 4, 9, 2, 15]),
    (lambda m, o: m.MultiStepLR(o, [2, 5, 5, 9], 0.5), [1, 5, 10, 3]),
    (lambda m, o: m.ConstantLR(o, 0.5, 4), [1, 4, 7, 2]),
    (lambda m, o: m.LinearLR(o, 0.25, 1.0, 6), [1, 3, 8, 0]),
    (lambda m, o: m.ExponentialLR(o, 0.9), [3, 1, 8]),
    (lambda m, o: m.PolynomialLR(o, 8, 1.5), [2, 5, 12]),
    (lambda m, o: m.CosineAnnealingLR(o, 10, 0.01), [3, 10, 17, 4]),
    (lambda m, o: m.LambdaLR(o, lambda e: 1.0 / (1 + e)), [3, 7]),
    (lambda m, o: m.CosineAnnealingWarmRestarts(o, 4, 2, 0.001), [0.5, 3.7, 4.0, 9.25, 13.0, 30.5, 2.2]),
    (lambda m, o: m.CosineAnnealingWarmRestarts(o, 4), [0.5, 3.7, 4.0, 9.25, 13.0]),
])
def test_step_with_epoch(factory, epochs):
    """step(epoch): the deprecated form warns and uses the closed form where there is one;
    CosineAnnealingWarmRestarts takes fractional epochs without a warning, as torch."""
    lopt, topt = make_opts("SGD", (0.1, 0.04))
    ls, ts = factory(lsched, lopt), factory(tsched, topt)
    for epoch in epochs:
        lopt.step()
        topt.step()
        with warnings.catch_warnings(record=True) as lw:
            warnings.simplefilter("always")
            ls.step(epoch)
        with warnings.catch_warnings(record=True) as tw:
            warnings.simplefilter("always")
            ts.step(epoch)
        assert [str(w.message)[:40] for w in lw] == [str(w.message)[:40] for w in tw]
        assert_same_groups(lopt, topt)
        assert_same_last_lr(ls, ts)
        assert ls.last_epoch == ts.last_epoch
        # and carries on in the chainable form
        lopt.step()
        topt.step()
        ls.step()
        ts.step()
        assert_same_groups(lopt, topt)


@pytest.mark.parametrize("factory", [
    lambda m, o: m.CosineAnnealingLR(o, T_max=10, eta_min=0.001, last_epoch=4),
    lambda m, o: m.StepLR(o, 3, 0.5, last_epoch=5),
    lambda m, o: m.ExponentialLR(o, 0.9, last_epoch=2),
])
def test_resume_with_last_epoch(factory):
    """A scheduler built with last_epoch >= 0 reads initial_lr from the groups."""
    lopt, topt = make_opts("SGD", (0.1, 0.05))
    for opt in (lopt, topt):
        for group in opt.param_groups:
            group["initial_lr"] = group["lr"] * 2
    ls, ts = factory(lsched, lopt), factory(tsched, topt)
    run_side_by_side(lopt, topt, ls, ts, 30)


def test_initial_lr_and_base_lrs():
    lopt, _ = make_opts("SGD", (0.1, 0.05))
    lopt.param_groups[1]["initial_lr"] = 0.5  # an existing initial_lr is kept
    s = lsched.StepLR(lopt, 2)
    assert [g["initial_lr"] for g in lopt.param_groups] == [0.1, 0.5]
    assert s.base_lrs == [0.1, 0.5]
    assert s.last_epoch == 0 and s.get_last_lr() == [0.1, 0.05]


def test_lambda_state_dict_saves_callable_objects_only():
    lopt, topt = make_opts("SGD", (0.1, 0.05))
    lam = lambda e: 0.5  # noqa: E731
    ls = lsched.LambdaLR(lopt, [lam, ScaledExp(0.9)])
    ts = tsched.LambdaLR(topt, [lam, ScaledExp(0.9)])
    assert ls.state_dict()["lr_lambdas"] == ts.state_dict()["lr_lambdas"] == [None, {"base": 0.9}]
    saved = ls.state_dict()
    saved["lr_lambdas"][1]["base"] = 0.8
    fn = ScaledExp(0.9)
    ls2 = lsched.LambdaLR(lopt, [lam, fn])
    ls2.load_state_dict(saved)
    assert fn.base == 0.8
    assert "lr_lambdas" in saved  # the caller's dict is left whole
    mult = lsched.MultiplicativeLR(lopt, ScaledExp(1.0))
    assert mult.state_dict()["lr_lambdas"] == [{"base": 1.0}, {"base": 1.0}]


def test_cyclic_state_dict_scale_fn():
    lopt, topt = make_opts("SGD", (0.1,), momentum=0.9)
    ls = lsched.CyclicLR(lopt, 0.01, 0.1, mode="exp_range", gamma=0.9)
    ts = tsched.CyclicLR(topt, 0.01, 0.1, mode="exp_range", gamma=0.9)
    lstate, tstate = ls.state_dict(), ts.state_dict()
    assert set(lstate) == set(tstate) and "_scale_fn_ref" not in lstate
    assert lstate["_scale_fn_custom"] is None
    fn = ScaledExp(0.99)
    ls = lsched.CyclicLR(lopt, 0.01, 0.1, scale_fn=fn)
    assert ls.state_dict()["_scale_fn_custom"] == {"base": 0.99}
    ls2 = lsched.CyclicLR(lopt, 0.01, 0.1, scale_fn=ScaledExp(0.5))
    ls2.load_state_dict(ls.state_dict())
    assert ls2._scale_fn_custom.base == 0.99


def test_sequential_nested_state_dict():
    lopt, topt = make_opts("SGD", (0.1,))

    def build(m, o):
        return m.SequentialLR(o, [m.ConstantLR(o, 0.5, 3), m.ExponentialLR(o, 0.9)], [3])

    ls, ts = build(lsched, lopt), build(tsched, topt)
    lstate, tstate = ls.state_dict(), ts.state_dict()
    assert set(lstate) == set(tstate)
    assert [set(s) for s in lstate["_schedulers"]] == [set(s) for s in tstate["_schedulers"]]


# ---- errors: the same exception type and message as torch ------------------------------

ERRORS = [
    (lambda m, o: m.StepLR(object(), 3), TypeError),
    (lambda m, o: m.LambdaLR(o, [lambda e: 1.0]), ValueError),
    (lambda m, o: m.MultiplicativeLR(o, 0.9), TypeError),
    (lambda m, o: m.ConstantLR(o, factor=1.5), ValueError),
    (lambda m, o: m.ConstantLR(o, factor=-0.1), ValueError),
    (lambda m, o: m.LinearLR(o, start_factor=0), ValueError),
    (lambda m, o: m.LinearLR(o, end_factor=1.5), ValueError),
    (lambda m, o: m.SequentialLR(o, [], []), ValueError),
    (lambda m, o: m.SequentialLR(o, [m.StepLR(o, 2), m.StepLR(o, 3)], [2, 4]), ValueError),
    (lambda m, o: m.SequentialLR(o, [m.StepLR(o, 2), m.ReduceLROnPlateau(o)], [2]), ValueError),
    (lambda m, o: m.SequentialLR(o, [m.StepLR(o, 2), "x"], [2]), TypeError),
    (lambda m, o: m.ChainedScheduler([]), ValueError),
    (lambda m, o: m.ChainedScheduler([m.StepLR(o, 2), m.ReduceLROnPlateau(o)]), ValueError),
    (lambda m, o: m.ReduceLROnPlateau(o, factor=1.0), ValueError),
    (lambda m, o: m.ReduceLROnPlateau(o, mode="mid"), ValueError),
    (lambda m, o: m.ReduceLROnPlateau(o, threshold_mode="ratio"), ValueError),
    (lambda m, o: m.ReduceLROnPlateau(o, min_lr=[0.1, 0.2, 0.3]), ValueError),
    (lambda m, o: m.CyclicLR(o, 0.01, 0.1, mode="square"), ValueError),
    (lambda m, o: m.CyclicLR(o, [0.01], 0.1), ValueError),
    (lambda m, o: m.CyclicLR(o, 0.01, 0.1, base_momentum=[0.8, 0.8, 0.8]), ValueError),
    (lambda m, o: m.OneCycleLR(o, 0.1), ValueError),
    (lambda m, o: m.OneCycleLR(o, 0.1, total_steps=0), ValueError),
    (lambda m, o: m.OneCycleLR(o, 0.1, total_steps=2.5), ValueError),
    (lambda m, o: m.OneCycleLR(o, 0.1, epochs=0, steps_per_epoch=3), ValueError),
    (lambda m, o: m.OneCycleLR(o, 0.1, epochs=2, steps_per_epoch=-3), ValueError),
    (lambda m, o: m.OneCycleLR(o, 0.1, total_steps=10, pct_start=1.5), ValueError),
    (lambda m, o: m.OneCycleLR(o, 0.1, total_steps=10, pct_start=0), ValueError),
    (lambda m, o: m.OneCycleLR(o, 0.1, total_steps=10, anneal_strategy="exp"), ValueError),
    (lambda m, o: m.OneCycleLR(o, [0.1], total_steps=10), ValueError),
    (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0), ValueError),
    (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2.5), ValueError),
    (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=0), ValueError),
    (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=1.5), ValueError),
    (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5, eta_min="0"), ValueError),
    (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5).step(-1), ValueError),
    (lambda m, o: m.StepLR(o, 3, last_epoch=4), KeyError),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    factory, exc = ERRORS[i]
    lopt, topt = make_opts("SGD", (0.1, 0.05), momentum=0.9)
    with pytest.raises(exc) as lerr:
        factory(lsched, lopt)
    with pytest.raises(exc) as terr:
        factory(tsched, topt)
    assert str(lerr.value) == str(terr.value)


def test_error_cycle_momentum_needs_momentum():
    lopt, topt = make_opts("Adagrad", (0.1,))
    for m, o in ((lsched, lopt), (tsched, topt)):
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            m.CyclicLR(o, 0.01, 0.1)
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            m.OneCycleLR(o, 0.1, total_steps=10)


def test_error_different_optimizer():
    (lopt, topt), (lopt2, topt2) = make_opts(), make_opts()
    for m, o, o2 in ((lsched, lopt, lopt2), (tsched, topt, topt2)):
        with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
            m.SequentialLR(o, [m.StepLR(o, 2), m.StepLR(o2, 3)], [2])
        with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
            m.ChainedScheduler([m.StepLR(o, 2), m.StepLR(o2, 3)])


def test_error_onecycle_past_total_steps():
    lopt, topt = make_opts("SGD", (0.1,), momentum=0.9)
    ls, ts = lsched.OneCycleLR(lopt, 0.5, total_steps=10), tsched.OneCycleLR(topt, 0.5, total_steps=10)
    run_side_by_side(lopt, topt, ls, ts, 10)
    with pytest.raises(ValueError) as lerr:
        ls.step()
    with pytest.raises(ValueError) as terr:
        ts.step()
    assert str(lerr.value) == str(terr.value) == "Tried to step 11 times. The specified number of total steps is 10"


def test_error_plateau_new_group_with_min_lr_list():
    lopt, _ = make_opts("SGD", (0.1,))
    s = lsched.ReduceLROnPlateau(lopt, patience=0, min_lr=[0.0])
    lopt.add_param_group(dict(params=[lucid.nn.Parameter(lucid.zeros(2))], lr=0.1))
    s.step(1.0)
    with pytest.raises(RuntimeError, match="differs from when `ReduceLROnPlateau` was initialized"):
        s.step(2.0)


@pytest.mark.parametrize("build,match", [
    (lambda o: lsched.StepLR(o, step_size=0), "positive step_size"),
    (lambda o: lsched.CosineAnnealingLR(o, T_max=0), "positive T_max"),
    (lambda o: lsched.CyclicLR(o, 0.01, 0.1, step_size_up=0), "positive step_size_up"),
    (lambda o: lsched.CyclicLR(o, 0.01, 0.1, step_size_down=-1), "non-negative step_size_down"),
    (lambda o: lsched.CyclicLR(o, 0.01, 0.1, scale_fn=triangle_scale, scale_mode="epoch"), "scale_mode"),
    (lambda o: lsched.LambdaLR(o, 0.5), "lr_lambda should be a function"),
    (lambda o: lsched.LambdaLR(object(), lambda e: 1.0), "object is not an Optimizer"),
    (lambda o: lsched.NoamLR(o, 0, 10), "positive integer model_size"),
    (lambda o: lsched.NoamLR(o, 512, 2.5), "positive integer warmup_steps"),
    (lambda o: lsched.NoamLR(o, 512, 10, factor=0), "positive number factor"),
    (lambda o: lsched.NoamLR(o, 512, 10).step(-2), "counts steps from 1"),
])
def test_lucid_only_checks(build, match):
    """Inputs torch accepts only to fail later (dividing by zero, calling a number) or that
    only lucid has: rejected at once, saying what was expected."""
    lopt, _ = make_opts("SGD", (0.1,), momentum=0.9)
    with pytest.raises((ValueError, TypeError), match=match):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            build(lopt)


# ---- warnings ---------------------------------------------------------------------------

def test_warns_scheduler_step_before_optimizer_step():
    lopt, topt = make_opts()
    for m, o in ((lsched, lopt), (tsched, topt)):
        s = m.StepLR(o, 2)
        with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before"):
            s.step()
    lopt, _ = make_opts()
    s = lsched.StepLR(lopt, 2)
    lopt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.step()


def test_warns_get_lr_outside_step():
    lopt, _ = make_opts()
    s = lsched.ExponentialLR(lopt, 0.5)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s.get_lr()


def test_epoch_deprecation_warning():
    lopt, _ = make_opts()
    s = lsched.StepLR(lopt, 2)
    lopt.step()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
        s.step(3)


def test_import_does_not_pull_torch_or_numpy():
    import subprocess
    import sys

    code = ("import sys, lucid.optim.lr_scheduler; "
            "assert 'torch' not in sys.modules and 'numpy' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_upstream_lucid_names():
    """Upstream Lucid keeps the schedulers at lucid.optim and names Noam's NoamScheduler
    (d_model, warmup_steps): the same classes and schedule."""
    for name in lsched.__all__:
        assert getattr(lucid.optim, name) is getattr(lsched, name)
    lopt, _ = make_opts("SGD", (1.0,))
    ls = lucid.optim.NoamScheduler(lopt, d_model=256, warmup_steps=6, verbose=False)
    lrs = []
    for _ in range(10):
        lopt.step()
        ls.step()
        lrs.append(ls.get_last_lr()[0])
    want = [256 ** -0.5 * min(s ** -0.5, s * 6 ** -1.5) for s in range(2, 12)]
    assert lrs == pytest.approx(want, rel=REL)
    assert isinstance(ls, lsched.NoamLR) and ls.d_model == 256
