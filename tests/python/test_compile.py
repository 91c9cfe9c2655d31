"""lucid.compile (python/lucid/compile): compiled functions, modules and training steps
give the eager results (bit for bit: a compiled call runs the same kernels, fused on the
GPU, where fusion is bitwise exact), trace once per signature, and on the GPU run a
step's whole work as one flush of the lazy queue."""

import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

GPU = lucid.gpu.is_available()
DEVICES = ["cpu"] + (["gpu"] if GPU else [])
needs_gpu = pytest.mark.skipif(not GPU, reason="lucid has no GPU here")


def params_of(model):
    return [p.detach().cpu().numpy().copy() for p in model.parameters()]


def assert_same_params(a, b):
    for x, y in zip(params_of(a), params_of(b)):
        np.testing.assert_array_equal(x, y)


# ---- the module is callable, with torch's and upstream's names ------------------------------

def test_lucid_compile_is_a_callable_module_with_upstream_names():
    import lucid.compile as lc

    for name in ["CompiledModule", "DiagnosisReport", "OpInfo", "compile", "compile_optimizer", "compiled_step",
                 "diagnose", "fused_step", "load_compiled", "make_step", "save_compiled"]:
        assert hasattr(lc, name), name
    f = lucid.compile(lambda x: x * 2)
    assert isinstance(f, lc.CompiledFunction)
    assert isinstance(lc.compile(nn.Linear(2, 2)), lc.CompiledModule)


def test_decorator_disable_and_bad_arguments():
    @lucid.compile
    def double(x):
        return x * 2

    @lucid.compile(dynamic=True)
    def triple(x):
        return x * 3

    x = lucid.arange(4.0)
    assert double(x).tolist() == [0, 2, 4, 6] and triple(x).tolist() == [0, 3, 6, 9]
    assert double.__name__ == "double" and triple.dynamic is True
    f = lambda x: x  # noqa: E731
    assert lucid.compile(f, disable=True) is f
    with pytest.raises(TypeError, match="function or a Module"):
        lucid.compile(3)
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        lucid.compile(f, mode="fastest")
    with pytest.raises(RuntimeError, match="both can't be specified"):
        lucid.compile(f, mode="reduce-overhead", options={})
    with pytest.raises(TypeError, match="dynamic"):
        lucid.compile(f, dynamic="yes")


def test_torch_compiler_names():
    seen = []

    def fn(x):
        seen.append(lucid.compiler.is_compiling())
        return x + 1

    cf = lucid.compile(fn)
    x = lucid.zeros(2)
    cf(x), cf(x)
    assert seen == [True, False] and not lucid.compiler.is_compiling()
    lucid.compiler.reset()
    assert cf.stats["traces"] == 0
    cf(x)
    assert cf.stats["traces"] == 1 and seen[-1] is True

    @lucid.compiler.disable
    def plain(x):
        return x * 2

    assert lucid.compile(plain) is plain
    assert lucid.compiler.allow_in_graph(plain) is plain
    assert lucid.compiler.assume_constant_result(plain) is plain


# ---- traces: once per signature -------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_a_signature_traces_once(device):
    calls = []

    def fn(x, scale):
        calls.append(1)  # Python runs at every call: a compiled call means the eager call
        return (x * scale).sin() + x

    cf = lucid.compile(fn, dynamic=False)
    x = lucid.randn(4, 5, device=device)
    want = (x * 2.0).sin() + x
    for _ in range(3):
        np.testing.assert_array_equal(cf(x, 2.0).cpu().numpy(), want.cpu().numpy())
    assert cf.stats == {"calls": 3, "traces": 1, "dynamic": False, "breaks": 0} and len(calls) == 3
    cf(x, 3.0)                                   # a new number: a new signature
    cf(lucid.randn(2, 5, device=device), 2.0)    # a new size
    cf(x.double(), 2.0)                          # a new dtype
    with lucid.no_grad():
        cf(x, 2.0)                               # grad mode
    cf(x.requires_grad_(), 2.0)                  # requires_grad
    assert cf.stats["traces"] == 6
    cf(x, 2.0)
    assert cf.stats["traces"] == 6
    cf.reset()
    cf(x, 2.0)
    assert cf.stats == {"calls": 1, "traces": 1, "dynamic": False, "breaks": 0}


def test_dynamic_none_turns_dynamic_when_only_sizes_change():
    cf = lucid.compile(lambda x: x + 1)
    cf(lucid.zeros(3))
    assert not cf.dynamic
    cf(lucid.zeros(4))          # only a size changed: traced again, symbolically
    assert cf.dynamic and cf.stats["traces"] == 2
    for n in (5, 6, 7):
        cf(lucid.zeros(n))
    assert cf.stats["traces"] == 2
    cf(lucid.zeros(2, 2))       # a new number of dimensions is a new signature
    assert cf.stats["traces"] == 3

    always = lucid.compile(lambda x: x + 1, dynamic=True)
    for n in (1, 2, 3):
        always(lucid.zeros(n))
    assert always.stats["traces"] == 1


# ---- modules ------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_compiled_module_is_the_model(device):
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Dropout(0.5), nn.ReLU(), nn.Linear(16, 3)).to(device)
    cm = lucid.compile(model)
    x = lucid.randn(8, 6, device=device)
    model.eval()
    np.testing.assert_array_equal(cm(x).cpu().numpy(), model(x).cpu().numpy())
    assert [id(p) for p in cm.parameters()] == [id(p) for p in model.parameters()]
    assert list(cm.state_dict()) == ["_orig_mod." + k for k in model.state_dict()]
    model.note = "kept"
    assert cm._orig_mod is model and cm.note == "kept"  # what the wrapper lacks is the model's
    cm.train()
    assert model.training
    cm(x)
    assert cm.stats["traces"] == 2  # train and eval are two signatures
    assert "CompiledModule" in repr(cm)
    with pytest.raises(TypeError, match="nn.Module"):
        lucid.compile.CompiledModule(lambda x: x)


@pytest.mark.parametrize("device", DEVICES)
def test_module_compile_in_place(device):
    model = nn.Linear(4, 2).to(device)
    x = lucid.randn(3, 4, device=device)
    want = model(x).detach().cpu().numpy()
    model.compile()
    np.testing.assert_array_equal(model(x).detach().cpu().numpy(), want)
    assert model._compiled_call_impl.stats["traces"] == 1
    model(x)
    assert model._compiled_call_impl.stats == {"calls": 2, "traces": 1, "dynamic": False, "breaks": 0}


# ---- training steps: 50 compiled steps give the eager parameters ----------------------------

def mlp():
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 5))


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.head = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.head(x.flatten(1))


class SmallTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        return self.head(self.encoder(x).mean(1))


MODELS = {"mlp": (mlp, (16, 20)), "cnn": (SmallCNN, (4, 3, 8, 8)), "transformer": (SmallTransformer, (4, 6, 16))}


def twin(make, device):
    lucid.manual_seed(1)
    a = make().to(device)
    lucid.manual_seed(1)
    b = make().to(device)
    assert_same_params(a, b)
    return a, b


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("model_name", list(MODELS))
def test_fused_step_matches_eager_over_50_steps(device, model_name):
    make, shape = MODELS[model_name]
    eager_model, compiled_model = twin(make, device)
    eager_opt = lucid.optim.Adam(eager_model.parameters(), lr=1e-2)
    compiled_opt = lucid.optim.Adam(compiled_model.parameters(), lr=1e-2)
    step = lucid.compile.fused_step(compiled_model, F.cross_entropy, compiled_opt)
    lucid.manual_seed(2)
    batches = [(lucid.randn(*shape, device=device), lucid.randint(0, 5, (shape[0],), device=device))
               for _ in range(5)]
    for i in range(50):
        x, y = batches[i % 5]
        eager_opt.zero_grad()
        loss = F.cross_entropy(eager_model(x), y)
        loss.backward()
        eager_opt.step()
        got = step(x, y)
        assert not got.requires_grad
        assert got.item() == loss.item()
    assert_same_params(eager_model, compiled_model)
    assert step.stats["traces"] == 1 and step.stats["calls"] == 50
    # on the GPU, calls 4 to 50 replay the third call's kernels (Note [Replayed steps]),
    # with laziness on or off: a compiled region records its call either way
    assert step.stats["replays"] == (47 if device == "gpu" else 0)


@needs_gpu
def test_compiled_steps_replay_with_laziness_off():
    # LUCID_LAZY=0 / set_lazy(False) makes eager GPU code run op by op; a compiled step
    # still records its call, fuses it and replays it (csrc/core/pending.h).
    eager_model, compiled_model = twin(mlp, "gpu")
    eager_opt = lucid.optim.Adam(eager_model.parameters(), lr=1e-2)
    compiled_opt = lucid.optim.Adam(compiled_model.parameters(), lr=1e-2)
    step = lucid.compile.fused_step(compiled_model, F.cross_entropy, compiled_opt)
    x, y = lucid.randn(16, 20, device="gpu"), lucid.randint(0, 5, (16,), device="gpu")
    was = lucid.gpu.is_lazy()
    lucid.gpu.set_lazy(False)
    try:
        for _ in range(6):
            eager_opt.zero_grad()
            loss = F.cross_entropy(eager_model(x), y)
            loss.backward()
            eager_opt.step()
            assert step(x, y).item() == loss.item()
    finally:
        lucid.gpu.set_lazy(was)
    assert_same_params(eager_model, compiled_model)
    assert step.stats["replays"] == 3


@pytest.mark.parametrize("device", DEVICES)
def test_make_step_compiled_step_and_compile_optimizer(device):
    eager_model, compiled_model = twin(mlp, device)
    x, y = lucid.randn(16, 20, device=device), lucid.randn(16, 5, device=device)
    eager_opt = lucid.optim.SGD(eager_model.parameters(), lr=0.1, momentum=0.9)
    opt = lucid.optim.SGD(compiled_model.parameters(), lr=0.1, momentum=0.9)
    assert lucid.compile.compile_optimizer(opt) is opt
    for segments in (1, 2, 3):
        step = lucid.compile.make_step(compiled_model, F.mse_loss, segments=segments)
        for _ in range(3):
            eager_opt.zero_grad()
            F.mse_loss(eager_model(x), y).backward()
            eager_opt.step()
            opt.zero_grad()
            step(x, y)
            opt.step()
    assert opt.step.stats["traces"] == 1 and opt.step.stats["calls"] == 9
    assert_same_params(eager_model, compiled_model)
    # compiled_step: forward, loss and backward; gradients accumulate as loss.backward()'s
    for m in (eager_model, compiled_model):
        m.zero_grad()
    F.mse_loss(eager_model(x), y).backward()
    loss = lucid.compile.compiled_step(compiled_model, x, lambda out: F.mse_loss(out, y))
    assert not loss.requires_grad
    for a, b in zip(eager_model.parameters(), compiled_model.parameters()):
        np.testing.assert_array_equal(a.grad.cpu().numpy(), b.grad.cpu().numpy())


def test_step_arguments_are_checked():
    model = mlp()
    with pytest.raises(TypeError, match="optimizer must be a lucid.optim.Optimizer"):
        lucid.compile.fused_step(model, F.mse_loss, object())
    with pytest.raises(TypeError, match="model must be an nn.Module"):
        lucid.compile.make_step(lambda x: x, F.mse_loss)
    with pytest.raises(TypeError, match="loss_fn must be callable"):
        lucid.compile.make_step(model, 3)
    with pytest.raises(ValueError, match="segments must be a positive int"):
        lucid.compile.make_step(model, F.mse_loss, segments=0)
    with pytest.raises(ValueError, match="more than the model's 5 layers"):
        lucid.compile.make_step(model, F.mse_loss, segments=6)
    with pytest.raises(ValueError, match="not one"):
        lucid.compile.make_step(SmallCNN(), F.mse_loss, segments=2)
    with pytest.raises(TypeError, match="compile_optimizer"):
        lucid.compile.compile_optimizer(model)
    step = lucid.compile.make_step(model, F.mse_loss)
    with lucid.no_grad(), pytest.raises(RuntimeError, match="does not require grad"):
        step(lucid.randn(2, 20), lucid.randn(2, 5))


@needs_gpu
def test_fused_step_with_a_grad_scaler_matches_eager():
    eager_model, compiled_model = twin(mlp, "gpu")
    scalers = [lucid.amp.GradScaler("cuda", init_scale=1024.0) for _ in range(2)]
    opts = [lucid.optim.AdamW(m.parameters(), lr=1e-2) for m in (eager_model, compiled_model)]
    step = lucid.compile.fused_step(compiled_model, F.mse_loss, opts[1], grad_scaler=scalers[1])
    x, y = lucid.randn(16, 20, device="gpu"), lucid.randn(16, 5, device="gpu")
    for _ in range(10):
        opts[0].zero_grad()
        scalers[0].scale(F.mse_loss(eager_model(x), y)).backward()
        scalers[0].step(opts[0])
        scalers[0].update()
        step(x, y)
    assert_same_params(eager_model, compiled_model)
    assert scalers[0].get_scale() == scalers[1].get_scale()
    assert step.stats["replays"] == 0  # the scaler reads its inf check on the host: a break, never captured


# ---- the GPU: one flush per compiled call ---------------------------------------------------

@needs_gpu
def test_a_compiled_training_step_is_one_flush_replayed_as_a_graph():
    model = mlp().to("gpu")
    opt = lucid.optim.Adam(model.parameters())
    step = lucid.compile.fused_step(model, F.cross_entropy, opt, replay=False)
    x, y = lucid.randn(16, 20, device="gpu"), lucid.randint(0, 5, (16,), device="gpu")
    lazy, graphs = lucid.gpu.is_lazy(), lucid.gpu.is_graph_replay()
    lucid.gpu.set_lazy(True)
    lucid.gpu.set_graph_replay(True)
    try:
        for _ in range(3):
            step(x, y)
        lucid.gpu.flush()
        before = lucid.gpu.pending_stats()
        for _ in range(5):
            step(x, y)
        after = lucid.gpu.pending_stats()
        # eager code flushes at the end of backward and of optimizer.step(): twice a step
        assert after["flushes"] - before["flushes"] == 5
        assert after["graph_runs"] - before["graph_runs"] == 5
        assert after["region_breaks"] == before["region_breaks"]
    finally:
        lucid.gpu.set_graph_replay(graphs)
        lucid.gpu.set_lazy(lazy)


@needs_gpu
def test_a_host_read_inside_breaks_the_region_and_fullgraph_raises():
    def fn(x):
        y = x * 2
        if y.sum().item() > 0:  # a host read: the work so far must run
            y = y + 1
        return y.exp()

    x = lucid.ones(8, device="gpu")
    cf = lucid.compile(fn)
    np.testing.assert_array_equal(cf(x).cpu().numpy(), fn(x).cpu().numpy())
    assert cf.stats["breaks"] == 1
    with pytest.raises(RuntimeError, match="fullgraph=True.*1 time"):
        lucid.compile(fn, fullgraph=True)(x)
    report = lucid.compile.diagnose(fn, x)
    assert len(report.breaks) == 1
    assert "test_compile.py" in report.breaks[0] and ".item()" in report.breaks[0]
    assert "host read" in report.recommendation


@needs_gpu
def test_replays_follow_what_changes_outside_the_step():
    """A replay is used only under the guard it was captured with: a new learning rate,
    a parameter replaced, gradients set to None between steps and new input values all
    give the eager results."""
    eager_model, compiled_model = twin(mlp, "gpu")
    opts = [lucid.optim.Adam(m.parameters(), lr=1e-2) for m in (eager_model, compiled_model)]
    step = lucid.compile.fused_step(compiled_model, F.cross_entropy, opts[1])
    lucid.manual_seed(3)
    xs = [lucid.randn(16, 20, device="gpu") for _ in range(3)]
    y = lucid.randint(0, 5, (16,), device="gpu")

    def both(i):
        x = xs[i % 3]
        opts[0].zero_grad()
        loss = F.cross_entropy(eager_model(x), y)
        loss.backward()
        opts[0].step()
        got = step(x, y)
        assert got.item() == loss.item(), i
        assert_same_params(eager_model, compiled_model)

    for i in range(6):
        both(i)
    kept = xs[0].clone()
    assert step.stats["replays"] == 3
    np.testing.assert_array_equal(xs[0].cpu().numpy(), kept.cpu().numpy())  # the caller's inputs untouched
    losses = [step(xs[1], y) for _ in range(2)]  # a loss a replay returned is the caller's: later replays keep it
    assert losses[0].item() != losses[1].item()
    for _ in range(2):  # the eager twin takes the same two steps
        opts[0].zero_grad()
        F.cross_entropy(eager_model(xs[1]), y).backward()
        opts[0].step()
    # an eager step of the compiled model between replays: its state (step counts too) is the replay's
    for m, o in zip((eager_model, compiled_model), opts):
        o.zero_grad()
        F.cross_entropy(m(xs[2]), y).backward()
        o.step()
    both(0)
    for o in opts:
        for group in o.param_groups:
            group["lr"] = 5e-3  # a scheduler's change
    for i in range(6):
        both(i)
    with lucid.no_grad():
        for m in (eager_model, compiled_model):
            m[0].weight.data = m[0].weight.data * 0.5  # a parameter's storage replaced
    for i in range(6):
        both(i)
    for p in compiled_model.parameters():
        p.grad = None
    both(0)
    assert all(p.grad is not None for p in compiled_model.parameters())  # the replay's gradients
    assert step.stats["replays"] > 6


def test_a_replay_guard_sees_every_change_outside_the_step():
    """The guard a replay is captured under (compile/_replay.py's _Guard, which does not
    walk the model) fails after each change a replay would not see, and holds again
    once recaptured. Pure Python: it runs on every machine."""
    from lucid.compile._replay import _Guard

    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
    opt = lucid.optim.Adam(model.parameters(), lr=1e-2)
    F.cross_entropy(model(lucid.randn(6, 4)), lucid.randint(0, 3, (6,))).backward()
    opt.step()  # the optimizer's state exists

    def extra_group():
        model.add_module("head", nn.Linear(3, 3))
        opt.add_param_group({"params": model.head.parameters()})

    def new_state():
        opt.load_state_dict(opt.state_dict())

    changes = {
        "a new learning rate": lambda: opt.param_groups[0].__setitem__("lr", 5e-3),
        "new betas": lambda: opt.param_groups[0].__setitem__("betas", (0.8, 0.99)),
        "a parameter's storage replaced": lambda: setattr(model[0].weight, "data", model[0].weight.data * 2),
        "a parameter replaced": lambda: setattr(model[2], "bias", nn.Parameter(lucid.zeros(3))),
        "a buffer replaced": lambda: setattr(model[1], "running_mean", lucid.zeros(8)),
        "a buffer removed": lambda: delattr(model[1], "running_var"),
        "a parameter removed": lambda: model[0].register_parameter("bias", None),
        "a submodule replaced": lambda: model.__setitem__(1, nn.Identity()),
        "an optimizer state entry replaced": lambda: opt.state[model[0].weight].__setitem__(
            "exp_avg", lucid.zeros(8, 4)),
        "the optimizer's state reloaded": new_state,
        "a parameter group added": extra_group,
    }
    for what, change in changes.items():
        guard = _Guard(model, opt)
        assert guard.holds(), what
        change()
        assert not guard.holds(), what
    assert _Guard(model, opt).holds()


@needs_gpu
def test_steps_drawing_random_numbers_are_not_replayed():
    model = nn.Sequential(nn.Linear(20, 32), nn.Dropout(0.3), nn.Linear(32, 5)).to("gpu")
    step = lucid.compile.fused_step(model, F.cross_entropy, lucid.optim.SGD(model.parameters(), lr=0.1))
    x, y = lucid.randn(8, 20, device="gpu"), lucid.randint(0, 5, (8,), device="gpu")
    losses = {step(x, y).item() for _ in range(8)}
    assert step.stats["replays"] == 0 and len(losses) > 1


@needs_gpu
def test_replayed_steps_are_one_graph():
    model = mlp().to("gpu")
    step = lucid.compile.fused_step(model, F.cross_entropy, lucid.optim.Adam(model.parameters()))
    x, y = lucid.randn(16, 20, device="gpu"), lucid.randint(0, 5, (16,), device="gpu")
    graphs = lucid.gpu.is_graph_replay()
    lucid.gpu.set_graph_replay(True)
    try:
        for _ in range(5):
            step(x, y)
        before = lucid.gpu.pending_stats()
        for _ in range(5):
            step(x, y)
        after = lucid.gpu.pending_stats()
    finally:
        lucid.gpu.set_graph_replay(graphs)
    assert after["replays"] - before["replays"] == 5
    assert after["graph_runs"] - before["graph_runs"] >= 5


@needs_gpu
def test_a_fault_in_a_replayed_step_names_its_op_and_the_step_goes_on():
    """A replay launches graphs captured once (Note [Fixed replays]): the cross
    entropy's kernel reports a bad target into a kept device error slot, which every
    check reads, however many launches came between the capture and the fault."""
    model = mlp().to("gpu")
    step = lucid.compile.fused_step(model, F.cross_entropy, lucid.optim.Adam(model.parameters()))
    x, y = lucid.randn(16, 20, device="gpu"), lucid.randint(0, 5, (16,), device="gpu")
    fixed = lucid.gpu.pending_stats()["fixed_replays"]
    for _ in range(6):
        step(x, y)
    assert step.stats["replays"] == 3
    # launched from graphs captured once, not re-captured: no call of the step allocates
    assert lucid.gpu.pending_stats()["fixed_replays"] - fixed == 3
    bad = y.clone()
    bad[3] = 7
    for _ in range(2):
        with pytest.raises(IndexError, match=r"Target 7 is out of bounds.*cross_entropy"):
            step(x, bad).item()
        for _ in range(300):  # other launches and checks, each handing out ordinary slots
            lucid.ones(3, device="gpu").add_(1).sum().item()
    assert step.stats["replays"] == 5
    assert math.isfinite(step(x, y).item())
    assert all(bool(lucid.isfinite(p).all()) for p in model.parameters())


# ---- diagnose ---------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_diagnose_counts_ops_and_gradient_sinks(device):
    model = mlp().to(device)
    x, y = lucid.randn(4, 20, device=device), lucid.randn(4, 5, device=device)

    def step(x, y):
        F.mse_loss(model(x), y).backward()

    report = lucid.compile.diagnose(step, x, y)
    assert isinstance(report, lucid.compile.DiagnosisReport)
    assert report.grad_sinks == len(list(model.parameters()))
    names = {o.name: o for o in report.ops}
    assert names["matmul"].count >= 3 and isinstance(names["matmul"], lucid.compile.OpInfo)
    assert sum(o.count for o in report.ops) == report.total_ops > 10
    assert report.breaks == []
    if device == "gpu":
        assert report.registered == report.total_ops and report.uncovered == []
        assert "nothing to change" in report.recommendation
    else:
        assert report.registered == 0 and "CPU" in report.recommendation
    assert "op calls" in str(report)
    with pytest.raises(TypeError, match="callable"):
        lucid.compile.diagnose(3)


# ---- save_compiled / load_compiled --------------------------------------------------------------

def test_save_and_load_compiled_in_a_new_process(tmp_path):
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
    cm = lucid.compile(model)
    x = lucid.randn(2, 3)
    want = cm(x).detach().numpy()
    path = tmp_path / "model.lucid"
    lucid.compile.save_compiled(cm, path)
    lucid.save(x, tmp_path / "x.pt")
    code = textwrap.dedent(f"""
        import lucid, numpy as np
        cm = lucid.compile.load_compiled({str(path)!r})
        out = cm(lucid.load({str(tmp_path / 'x.pt')!r}))
        assert isinstance(cm, lucid.compile.CompiledModule)
        assert cm.stats["traces"] == 1 and cm.stats["calls"] == 1, cm.stats  # the saved signature: no new trace
        np.save({str(tmp_path / 'out.npy')!r}, out.detach().numpy())
    """)
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "LUCID_LAZY": "1"})
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), want)


def test_save_and_load_compiled_refuse_what_they_cannot_keep(tmp_path):
    with pytest.raises(ValueError, match="lambda or a nested function"):
        lucid.compile.save_compiled(lucid.compile(lambda x: x), tmp_path / "f")
    with pytest.raises(TypeError, match="CompiledModule or a CompiledFunction"):
        lucid.compile.save_compiled(nn.Linear(2, 2), tmp_path / "f")
    lucid.save({"weights": lucid.zeros(2)}, tmp_path / "other")
    with pytest.raises(ValueError, match="not a file written by lucid.compile.save_compiled"):
        lucid.compile.load_compiled(tmp_path / "other")
    (tmp_path / "garbage").write_bytes(b"not a checkpoint at all")
    with pytest.raises(Exception, match=".+"):
        lucid.compile.load_compiled(tmp_path / "garbage")
