"""lucid.optim.swa_utils against torch.optim.swa_utils: AveragedModel (SWA and EMA, per
tensor and per list, with and without averaging the buffers), SWALR's learning rates
epoch by epoch, and update_bn's recomputed BatchNorm statistics, from the same weights
and data in float64."""

import warnings

import numpy as np
import pytest
import torch
import torch.optim.swa_utils as tswa

import lucid
import lucid.optim.swa_utils as lswa

TOL = 1e-12


def to_lucid(t):
    return lucid.tensor(t.detach().cpu().numpy())


def assert_close(l, t, tol=TOL):
    a = np.asarray(l.detach().cpu().numpy(), dtype=np.float64)
    b = np.asarray(t.detach().cpu().numpy(), dtype=np.float64)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def assert_same_state_dict(lmodule, tmodule, tol=TOL):
    lsd, tsd = lmodule.state_dict(), tmodule.state_dict()
    assert list(lsd.keys()) == list(tsd.keys())
    for key, tv in tsd.items():
        assert tuple(lsd[key].shape) == tuple(tv.shape), key
        assert_close(lsd[key], tv, tol)


def make_models(seed=0):
    """A torch model and a lucid one with the same float64 weights: two linear layers
    around a BatchNorm1d (parameters, float buffers and an integer buffer)."""
    torch.manual_seed(seed)
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.ReLU(),
                                 torch.nn.Linear(6, 3)).double()
    lmodel = lucid.nn.Sequential(lucid.nn.Linear(4, 6), lucid.nn.BatchNorm1d(6), lucid.nn.ReLU(),
                                 lucid.nn.Linear(6, 3)).double()
    lmodel.load_state_dict({k: to_lucid(v) for k, v in tmodel.state_dict().items()})
    return lmodel, tmodel


def train_a_little(lmodel, tmodel, gen):
    """The same change to both models: every parameter moves by the same random amount and
    one training-mode forward moves the BatchNorm statistics."""
    with torch.no_grad():
        for (name, tp), lp in zip(tmodel.named_parameters(), lmodel.parameters()):
            delta = torch.randn(tp.shape, generator=gen, dtype=tp.dtype)
            tp.add_(delta)
            with lucid.no_grad():
                lp.add_(to_lucid(delta))
    x = torch.randn(8, 4, generator=gen, dtype=torch.float64)
    tmodel.train()
    lmodel.train()
    with torch.no_grad():
        tmodel(x)
    with lucid.no_grad():
        lmodel(to_lucid(x))


AVERAGINGS = {
    "swa-default": lambda m: dict(),
    "swa-avg_fn": lambda m: dict(avg_fn=m.get_swa_avg_fn()),
    "swa-multi": lambda m: dict(multi_avg_fn=m.get_swa_multi_avg_fn()),
    "ema-avg_fn": lambda m: dict(avg_fn=m.get_ema_avg_fn(0.9)),
    "ema-multi": lambda m: dict(multi_avg_fn=m.get_ema_multi_avg_fn(0.7)),
}


# (torch's get_swa_multi_avg_fn fails on integer buffers: test_swa_multi_averages_integer_buffers)
AVERAGED_MODEL_CASES = [(averaging, use_buffers) for averaging in AVERAGINGS for use_buffers in (False, True)
                        if not (averaging == "swa-multi" and use_buffers)]


@pytest.mark.parametrize("averaging,use_buffers", AVERAGED_MODEL_CASES,
                         ids=[f"{a}-{'buffers' if b else 'params'}" for a, b in AVERAGED_MODEL_CASES])
def test_averaged_model_matches_torch(averaging, use_buffers):
    lmodel, tmodel = make_models()
    lavg = lswa.AveragedModel(lmodel, use_buffers=use_buffers, **AVERAGINGS[averaging](lswa))
    tavg = tswa.AveragedModel(tmodel, use_buffers=use_buffers, **AVERAGINGS[averaging](tswa))
    gen = torch.Generator().manual_seed(1)
    for _ in range(5):
        train_a_little(lmodel, tmodel, gen)
        lavg.update_parameters(lmodel)
        tavg.update_parameters(tmodel)
    assert int(lavg.n_averaged.item()) == int(tavg.n_averaged.item()) == 5
    assert lavg.n_averaged.dtype == lucid.int64
    # parameters, buffers (averaged or copied, integer num_batches_tracked included) and n_averaged
    assert_same_state_dict(lavg, tavg)
    x = torch.randn(5, 4, dtype=torch.float64)
    lavg.eval()
    tavg.eval()
    assert_close(lavg(to_lucid(x)), tavg(x))


@pytest.mark.parametrize("averaging", ["swa-default", "swa-multi", "ema-multi"])
def test_bfloat16_averages_round_as_torch(averaging):
    """16-bit averages: the list averages lerp in float32 and round once, as torch's foreach
    lerp does (lucid's own 16-bit lerp_ rounds its weight first and drifts by an ulp in a
    third of the elements); at most a stray element differs, by an ulp or two."""
    torch.manual_seed(0)
    tmodel = torch.nn.Linear(20, 30).bfloat16()
    lmodel = lucid.nn.Linear(20, 30).to(lucid.bfloat16)
    lmodel.load_state_dict({k: to_lucid(v.float()).to(lucid.bfloat16) for k, v in tmodel.state_dict().items()})
    lavg = lswa.AveragedModel(lmodel, **AVERAGINGS[averaging](lswa))
    tavg = tswa.AveragedModel(tmodel, **AVERAGINGS[averaging](tswa))
    gen = torch.Generator().manual_seed(1)
    for _ in range(6):
        with torch.no_grad():
            for tp, lp in zip(tmodel.parameters(), lmodel.parameters()):
                value = torch.randn(tp.shape, generator=gen).bfloat16()
                tp.copy_(value)
                with lucid.no_grad():
                    lp.copy_(to_lucid(value.float()).to(lucid.bfloat16))
        lavg.update_parameters(lmodel)
        tavg.update_parameters(tmodel)
    differing = 0
    for lp, tp in zip(lavg.parameters(), tavg.parameters()):
        assert lp.dtype == lucid.bfloat16
        a, b = np.asarray(lp.to(lucid.float32).detach().numpy()), tp.float().detach().numpy()
        differing += int((a != b).sum())
        np.testing.assert_allclose(a, b, rtol=2 ** -6, atol=0)  # two ulps: an early ulp carries on
    assert differing <= 2


def test_swa_average_is_the_mean_of_the_models():
    lmodel, tmodel = make_models()
    lavg = lswa.AveragedModel(lmodel)
    gen = torch.Generator().manual_seed(2)
    seen = []
    for _ in range(4):
        train_a_little(lmodel, tmodel, gen)
        lavg.update_parameters(lmodel)
        seen.append(np.array(lmodel[0].weight.detach().numpy()))  # a copy: numpy() shares memory
    np.testing.assert_allclose(np.asarray(lavg.module[0].weight.detach().numpy()), np.mean(seen, axis=0),
                               rtol=1e-13, atol=1e-13)
    # without use_buffers the buffers are the model's latest, not averaged
    assert_close(lavg.module[1].running_mean, to_lucid_model_buffer(lmodel))


def to_lucid_model_buffer(lmodel):
    """The lucid model's running mean as a torch tensor, to compare with assert_close."""
    return torch.from_numpy(np.asarray(lmodel[1].running_mean.detach().numpy()))


def test_swa_multi_averages_integer_buffers():
    """torch's get_swa_multi_avg_fn fails on integer buffers; lucid's gives them what the
    default (per-tensor) average gives them, and the float tensors the same averages to
    float32-weight precision."""
    lmodel, tmodel = make_models()
    lmulti = lswa.AveragedModel(lmodel, multi_avg_fn=lswa.get_swa_multi_avg_fn(), use_buffers=True)
    tdefault = tswa.AveragedModel(tmodel, use_buffers=True)
    gen = torch.Generator().manual_seed(3)
    for _ in range(4):
        train_a_little(lmodel, tmodel, gen)
        lmulti.update_parameters(lmodel)
        tdefault.update_parameters(tmodel)
    assert int(lmulti.module[1].num_batches_tracked.item()) == int(tdefault.module[1].num_batches_tracked.item())
    assert_same_state_dict(lmulti, tdefault, tol=1e-7)


def test_swa_multi_avg_fn_uses_torchs_float32_weight():
    """1 / (n + 1) of the count tensor is float32 in torch: the lerp weight is that value,
    not the exact third, which is what makes this agree with torch to 1e-12 above."""
    a = [lucid.tensor([0.0, 3.0], dtype=lucid.float64)]
    b = [lucid.tensor([1.0, 6.0], dtype=lucid.float64)]
    lswa.get_swa_multi_avg_fn()(a, b, lucid.tensor(2))
    ta = [torch.tensor([0.0, 3.0], dtype=torch.float64)]
    tswa.get_swa_multi_avg_fn()(ta, [torch.tensor([1.0, 6.0], dtype=torch.float64)], torch.tensor(2))
    assert_close(a[0], ta[0], 0)
    assert float(a[0][0].item()) != 1 / 3
    # a Python int count: the exact weight
    c = [lucid.tensor([0.0], dtype=lucid.float64)]
    lswa.get_swa_multi_avg_fn()(c, [lucid.tensor([1.0], dtype=lucid.float64)], 2)
    assert float(c[0][0].item()) == 1 / 3


@pytest.mark.parametrize("fn", ["get_ema_avg_fn", "get_swa_avg_fn"])
def test_single_tensor_avg_fns(fn):
    args = (0.8,) if fn == "get_ema_avg_fn" else ()
    x = torch.randn(3, 2, dtype=torch.float64)
    y = torch.randn(3, 2, dtype=torch.float64)
    out = getattr(lswa, fn)(*args)(to_lucid(x), to_lucid(y), lucid.tensor(3))
    assert_close(out, getattr(tswa, fn)(*args)(x, y, torch.tensor(3)))
    assert not out.requires_grad


def test_multi_avg_fn_sees_one_list_per_dtype():
    """As torch, a multi_avg_fn is called once per device and dtype, with the count on that device."""
    calls = {"lucid": [], "torch": []}

    def recorder(name, mod):
        inner = mod.get_ema_multi_avg_fn(0.5)

        def fn(avg, cur, n):
            calls[name].append((len(avg), str(avg[0].dtype).split(".")[-1], int(n.item())))
            inner(avg, cur, n)
        return fn

    tnn, lnn = torch.nn, lucid.nn
    tmodel = tnn.ModuleList([tnn.Linear(2, 3).double(), tnn.Linear(3, 1), tnn.Linear(1, 2).double()])
    lmodel = lnn.ModuleList([lnn.Linear(2, 3).double(), lnn.Linear(3, 1), lnn.Linear(1, 2).double()])
    lmodel.load_state_dict({k: to_lucid(v) for k, v in tmodel.state_dict().items()})
    lavg = lswa.AveragedModel(lmodel, multi_avg_fn=recorder("lucid", lswa))
    tavg = tswa.AveragedModel(tmodel, multi_avg_fn=recorder("torch", tswa))
    for _ in range(3):
        lavg.update_parameters(lmodel)
        tavg.update_parameters(tmodel)
    # the same calls; their order within an update is torch's hash-map order, lucid's the
    # order of first appearance
    assert calls["lucid"] == [(4, "float64", 1), (2, "float32", 1), (4, "float64", 2), (2, "float32", 2)]
    assert sorted(calls["lucid"]) == sorted(calls["torch"])


def test_state_dict_has_the_module_prefix_and_round_trips():
    lmodel, tmodel = make_models()
    lavg = lswa.AveragedModel(lmodel, avg_fn=lswa.get_ema_avg_fn(0.5), use_buffers=True)
    tavg = tswa.AveragedModel(tmodel)
    gen = torch.Generator().manual_seed(4)
    for _ in range(3):
        train_a_little(lmodel, tmodel, gen)
        lavg.update_parameters(lmodel)
    sd = lavg.state_dict()
    assert list(sd.keys()) == list(tavg.state_dict().keys())
    assert list(sd)[0] == "n_averaged" and all(key.startswith("module.") for key in list(sd)[1:])
    fresh = lswa.AveragedModel(make_models(seed=5)[0])
    fresh.load_state_dict(sd)
    assert int(fresh.n_averaged.item()) == 3
    for key, value in sd.items():
        np.testing.assert_array_equal(np.asarray(fresh.state_dict()[key].numpy()), np.asarray(value.numpy()))
    # and a lucid state_dict loads into torch's AveragedModel
    tavg.load_state_dict({k: torch.from_numpy(np.array(v.numpy())) for k, v in sd.items()})
    assert_same_state_dict(fresh, tavg, 0)


def test_averaged_model_copies_and_does_not_track_gradients():
    lmodel, _ = make_models()
    lavg = lswa.AveragedModel(lmodel, device="cpu")
    assert lavg.module is not lmodel
    assert lavg.module[0].weight is not lmodel[0].weight
    assert lavg.n_averaged.device.type == "cpu"
    lavg.update_parameters(lmodel)
    with lucid.no_grad():
        lmodel[0].weight.add_(1.0)
    # the first update copied; the copy does not follow the model afterwards
    assert not np.allclose(np.asarray(lavg.module[0].weight.detach().numpy()),
                           np.asarray(lmodel[0].weight.detach().numpy()))
    lavg.update_parameters(lmodel)
    assert lavg.module[0].weight.grad is None and lavg.module[0].weight.requires_grad


def test_averaging_errors_match_torch():
    lmodel, tmodel = make_models()
    for mod, model in ((lswa, lmodel), (tswa, tmodel)):
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
            mod.AveragedModel(model, avg_fn=mod.get_swa_avg_fn(), multi_avg_fn=mod.get_swa_multi_avg_fn())
        for bad in (-0.1, 1.5):
            with pytest.raises(ValueError, match="Invalid decay value"):
                mod.get_ema_avg_fn(bad)
            with pytest.raises(ValueError, match="Invalid decay value"):
                mod.get_ema_multi_avg_fn(bad)


# ---- update_bn -----------------------------------------------------------------------

def bn_models():
    torch.manual_seed(6)
    tmodel = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3, momentum=0.3), torch.nn.ReLU(),
                                 torch.nn.Flatten(), torch.nn.Linear(12, 5), torch.nn.BatchNorm1d(5)).double()
    lmodel = lucid.nn.Sequential(lucid.nn.Conv2d(2, 3, 3), lucid.nn.BatchNorm2d(3, momentum=0.3), lucid.nn.ReLU(),
                                 lucid.nn.Flatten(), lucid.nn.Linear(12, 5), lucid.nn.BatchNorm1d(5)).double()
    lmodel.load_state_dict({k: to_lucid(v) for k, v in tmodel.state_dict().items()})
    return lmodel, tmodel


@pytest.mark.parametrize("with_targets", [False, True], ids=["tensors", "input-target"])
def test_update_bn_matches_torch(with_targets):
    lmodel, tmodel = bn_models()
    gen = torch.Generator().manual_seed(7)
    batches = [torch.randn(n, 2, 4, 4, generator=gen, dtype=torch.float64) * 3 + 1 for n in (4, 6, 3)]
    if with_targets:
        tloader = [(x, torch.zeros(len(x))) for x in batches]
        lloader = [(to_lucid(x), lucid.zeros(len(x))) for x in batches]
    else:
        tloader, lloader = batches, [to_lucid(x) for x in batches]
    # statistics from earlier training, which update_bn must discard
    train_gen = torch.Generator().manual_seed(8)
    x = torch.randn(5, 2, 4, 4, generator=train_gen, dtype=torch.float64) * 10
    tmodel(x)
    lmodel(to_lucid(x))
    tmodel.eval()
    lmodel.eval()
    tswa.update_bn(tloader, tmodel)
    lswa.update_bn(lloader, lmodel)
    assert_same_state_dict(lmodel, tmodel)
    assert int(lmodel[1].num_batches_tracked.item()) == 3
    # momenta and the training mode are restored
    assert lmodel[1].momentum == 0.3 and lmodel[5].momentum == 0.1
    assert not lmodel.training and not lmodel[1].training


def test_update_bn_statistics_are_the_average_over_batches():
    """momentum=None during the pass: the running mean is the plain mean of the batch means."""
    bn = lucid.nn.BatchNorm1d(2).double()
    batches = [lucid.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lucid.float64),
               lucid.tensor([[5.0, 0.0], [7.0, 0.0]], dtype=lucid.float64)]
    bn.train()
    lswa.update_bn(batches, bn)
    np.testing.assert_allclose(np.asarray(bn.running_mean.numpy()), [4.0, 1.5])
    assert bn.training and bn.momentum == 0.1


def test_update_bn_through_an_averaged_model_and_without_batchnorm():
    lmodel, tmodel = bn_models()
    lavg, tavg = lswa.AveragedModel(lmodel), tswa.AveragedModel(tmodel)
    lavg.update_parameters(lmodel)
    tavg.update_parameters(tmodel)
    batches = [torch.randn(3, 2, 4, 4, dtype=torch.float64) for _ in range(2)]
    tswa.update_bn(batches, tavg)
    lswa.update_bn([to_lucid(b) for b in batches], lavg, device=next(lavg.parameters()).device)
    assert_same_state_dict(lavg, tavg)

    class Counting(lucid.nn.Module):
        calls = 0

        def forward(self, x):
            Counting.calls += 1
            return x

    plain = Counting()
    plain.eval()
    lswa.update_bn([lucid.zeros(2, 2)], plain)
    assert Counting.calls == 0 and not plain.training  # no BatchNorm: nothing runs, nothing changes


# ---- SWALR --------------------------------------------------------------------------

def optimizer_pair(lrs=(0.5,)):
    tparams = [torch.nn.Parameter(torch.zeros(2)) for _ in lrs]
    lparams = [lucid.nn.Parameter(lucid.zeros(2)) for _ in lrs]
    topt = torch.optim.SGD([dict(params=[p], lr=lr) for p, lr in zip(tparams, lrs)], lr=0.5)
    lopt = lucid.optim.SGD([dict(params=[p], lr=lr) for p, lr in zip(lparams, lrs)], lr=0.5)
    return lopt, topt


SWALR_CONFIGS = [
    dict(swa_lr=0.05),
    dict(swa_lr=0.05, anneal_epochs=3, anneal_strategy="linear"),
    dict(swa_lr=0.2, anneal_epochs=0),
    dict(swa_lr=0.2, anneal_epochs=1, anneal_strategy="linear"),
    dict(swa_lr=[0.01, 0.3], anneal_epochs=4),
    dict(swa_lr=(0.01, 0.3), anneal_epochs=5, anneal_strategy="linear"),
]


@pytest.mark.parametrize("config", SWALR_CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_swalr_learning_rates_match_torch(config):
    groups = 2 if isinstance(config["swa_lr"], (list, tuple)) else 1
    lopt, topt = optimizer_pair((0.5, 0.1)[:groups])
    lsched, tsched = lswa.SWALR(lopt, **config), tswa.SWALR(topt, **config)
    assert lsched.get_last_lr() == tsched.get_last_lr()
    assert [g["swa_lr"] for g in lopt.param_groups] == [g["swa_lr"] for g in topt.param_groups]
    history = []
    for _ in range(12):
        lopt.step()
        topt.step()
        lsched.step()
        tsched.step()
        history.append(lsched.get_last_lr())
        assert lsched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-15, abs=0)
        assert [g["lr"] for g in lopt.param_groups] == lsched.get_last_lr()
    assert history[-1] == pytest.approx([g["swa_lr"] for g in lopt.param_groups], rel=1e-12)


def test_swalr_after_another_scheduler_matches_torch():
    """SWALR anneals from wherever the learning rate is when it starts stepping."""
    lopt, topt = optimizer_pair()
    lcos = lucid.optim.lr_scheduler.CosineAnnealingLR(lopt, T_max=10)
    tcos = torch.optim.lr_scheduler.CosineAnnealingLR(topt, T_max=10)
    lswalr, tswalr = lswa.SWALR(lopt, swa_lr=0.02, anneal_epochs=4), tswa.SWALR(topt, swa_lr=0.02, anneal_epochs=4)
    for epoch in range(14):
        lopt.step()
        topt.step()
        if epoch < 5:
            lcos.step()
            tcos.step()
        else:
            lswalr.step()
            tswalr.step()
        assert lopt.param_groups[0]["lr"] == pytest.approx(topt.param_groups[0]["lr"], rel=1e-14, abs=0)


def test_swalr_state_dict_round_trip():
    lopt, topt = optimizer_pair()
    lsched = lswa.SWALR(lopt, swa_lr=0.05, anneal_epochs=6, anneal_strategy="linear")
    tsched = tswa.SWALR(topt, swa_lr=0.05, anneal_epochs=6, anneal_strategy="linear")
    for _ in range(2):
        lopt.step()
        topt.step()
        lsched.step()
        tsched.step()
    sd = lsched.state_dict()
    assert set(sd) == set(tsched.state_dict())
    assert "anneal_func" not in sd and "optimizer" not in sd
    resumed = lswa.SWALR(lopt, swa_lr=0.05, anneal_epochs=6, anneal_strategy="cos")
    resumed.load_state_dict(sd)
    assert resumed._anneal_strategy == "linear" and resumed.anneal_func(0.25) == 0.25
    lopt.param_groups[0]["lr"] = sd["_last_lr"][0]
    for _ in range(5):
        topt.step()
        tsched.step()
        resumed.step()
        assert resumed.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-15, abs=0)


def test_swalr_get_lr_outside_step_warns_as_torch():
    lopt, _ = optimizer_pair()
    sched = lswa.SWALR(lopt, swa_lr=0.05)
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lopt.step()
        sched.step()


@pytest.mark.parametrize("kwargs", [dict(swa_lr=0.1, anneal_strategy="exp"), dict(swa_lr=0.1, anneal_epochs=-1),
                                    dict(swa_lr=0.1, anneal_epochs=2.5), dict(swa_lr=[0.1, 0.2])],
                         ids=["strategy", "negative-epochs", "float-epochs", "lr-list-length"])
def test_swalr_errors_match_torch(kwargs):
    lopt, topt = optimizer_pair()
    with pytest.raises(Exception) as terr:
        tswa.SWALR(topt, **kwargs)
    with pytest.raises(type(terr.value)) as lerr:
        lswa.SWALR(lopt, **kwargs)
    # (torch 2.11 spelled one message "must by one of"; 2.15 has it right)
    assert str(lerr.value) == str(terr.value).replace("must by one of", "must be one of")


def test_module_is_reachable_both_ways():
    import importlib

    assert importlib.import_module("lucid.optim.swa_utils") is lucid.optim.swa_utils
    assert set(lswa.__all__) == set(tswa.__all__)
    assert issubclass(lswa.SWALR, lucid.optim.lr_scheduler.LRScheduler)
    assert issubclass(lswa.AveragedModel, lucid.nn.Module)
