"""Reliability: memory does not leak (RSS over training steps, graphs freed after
backward, hook cycles collected), threads (grad mode per thread, concurrent inference
and autograd on one model, the GIL released around long kernels), and NaN/inf
propagating through ops and their gradients exactly as in PyTorch."""

import gc
import math
import os
import threading
import time
import weakref

import numpy as np
import pytest
import torch

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from conftest import TORCH_VERSION, to_lucid, to_torch

NAN, INF = math.nan, math.inf


# ---- memory: RSS over training steps ---------------------------------------------------------

def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _mlp():
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))


def _cnn():
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 7 * 7, 10))


@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="AddressSanitizer holds freed memory in quarantine: resident memory grows by design")
@pytest.mark.parametrize("which", ["mlp", "cnn"])
def test_training_steps_do_not_grow_rss(which):
    # Leaking one activation per step would be 64 KiB (MLP: 64 x 256 floats) or
    # 392 KiB (CNN: the first conv's 16 x 8 x 28 x 28 floats): 19 or 115 MiB over 300
    # steps, far above the 4 MiB allowed for allocator noise.
    lucid.manual_seed(0)
    model = _mlp() if which == "mlp" else _cnn()
    batch, shape = (64, (784,)) if which == "mlp" else (16, (1, 28, 28))
    opt = lucid.optim.Adam(model.parameters(), lr=1e-3)
    data = [(lucid.randn(batch, *shape), lucid.randint(0, 10, (batch,))) for _ in range(4)]

    def steps(n):
        for i in range(n):
            x, y = data[i % len(data)]
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            loss.item()

    steps(100)  # warm-up: optimizer state, allocator caches
    gc.collect()
    before = rss_bytes()
    steps(300)
    gc.collect()
    grown = rss_bytes() - before
    assert grown < 4 * 2**20, f"RSS grew by {grown / 2**20:.1f} MiB over 300 {which} steps"


# ---- memory: the graph is freed after backward ------------------------------------------------
# The probes are tensors over NumPy memory (CPU tensors), used with the tests' other
# tensors: these tests take the CPU as the default device.

class _Probe:
    """A callable whose death shows that what held it (a graph node) died."""

    def __call__(self, *args):
        return None


class _Seen(list):
    """A list that can be weakly referenced."""


def _external(shape, seed=0, dtype=np.float64):
    """A lucid tensor over a numpy array's memory, and a weakref to the array: the
    weakref dies when the last lucid storage referencing the memory is freed."""
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    ref = weakref.ref(a)
    t = lucid.from_numpy(a)
    del a
    assert ref() is not None
    return t, ref


def _graph():
    x = lucid.randn(8, 5, dtype=lucid.float64, requires_grad=True)
    mask, mask_ref = _external((8, 5))            # saved by mul for x's gradient
    w, w_ref = _external((5, 3), seed=1)
    h = x * mask                                  # an intermediate
    z = lucid.tanh(h @ w)                         # matmul saves h, tanh its output
    loss = (z * z).sum()
    refs = {"h": weakref.ref(h), "z": weakref.ref(z), "mask": mask_ref, "w": w_ref}
    probes = []
    for t in (h, z, loss):                        # a probe in each node
        p = _Probe()
        t.grad_fn.register_hook(p)
        probes.append(weakref.ref(p))
        del p
    del h, z, mask, w
    return x, loss, refs, probes


@pytest.mark.usefixtures("cpu_default")  # NumPy-backed probes
def test_graph_is_freed_by_backward():
    gc.collect()
    was = gc.isenabled()
    gc.disable()  # freed by reference counting alone, no collector pass needed
    try:
        x, loss, refs, probes = _graph()
        assert refs["mask"]() is not None and refs["w"]() is not None  # saved by the graph
        loss.backward()
        assert x.grad is not None
        # Without retain_graph the saved tensors go with the backward pass ...
        assert refs["mask"]() is None and refs["w"]() is None
        assert refs["h"]() is None and refs["z"]() is None
        # ... and the nodes with the output that holds them.
        del loss
        assert all(p() is None for p in probes)
    finally:
        if was:
            gc.enable()


@pytest.mark.usefixtures("cpu_default")  # NumPy-backed probes
def test_retained_graph_is_freed_with_its_output():
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        # retain_graph, then the output dropped: everything goes with it
        x, loss, refs, probes = _graph()
        loss.backward(retain_graph=True)
        assert refs["mask"]() is not None and refs["w"]() is not None  # retained
        assert all(p() is not None for p in probes)
        del loss
        assert refs["mask"]() is None and refs["w"]() is None
        assert all(p() is None for p in probes)
        # retain_graph, then a last backward without it: that one frees the saved tensors
        x, loss, refs, probes = _graph()
        loss.backward(retain_graph=True)
        loss.backward()
        assert refs["mask"]() is None and refs["w"]() is None
        del loss
        assert all(p() is None for p in probes)
    finally:
        if was:
            gc.enable()


@pytest.mark.usefixtures("cpu_default")  # NumPy-backed probes
def test_graph_of_a_model_is_freed_after_backward():
    # A model's forward: everything but the parameters and their grads is released.
    model = _cnn()
    x = lucid.randn(4, 1, 28, 28, requires_grad=True)
    mask, mask_ref = _external((4, 1, 28, 28), dtype=np.float32)
    probes = []
    handles = [m.register_forward_hook(lambda mod, inp, out: probes.append(_hook_on(out)))
               for m in model]
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        loss = model(x * mask).square().mean()
        del mask
        for h in handles:
            h.remove()
        assert len(probes) == len(model) and all(p() is not None for p in probes)
        assert mask_ref() is not None
        loss.backward()
        assert mask_ref() is None
        del loss
        assert all(p() is None for p in probes)
        assert x.grad is not None and all(p.grad is not None for p in model.parameters())
    finally:
        if was:
            gc.enable()


def _hook_on(out):
    p = _Probe()
    out.grad_fn.register_hook(p)
    return weakref.ref(p)


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.usefixtures("cpu_default")  # a NumPy-backed input
def test_no_grad_forward_keeps_nothing(grad):
    # With grad, linear saves its input for the weight's gradient; under no_grad the
    # input is free as soon as the caller drops it.
    model = _mlp()
    x, ref = _external((4, 784), dtype=np.float32)
    with lucid.set_grad_enabled(grad):
        y = model(x)
    del x
    assert (ref() is not None) == grad
    assert (y.grad_fn is not None) == grad
    del y
    assert ref() is None


# ---- memory: cycles through hooks are collected -----------------------------------------------
# Each hook's closure refers back to what holds it (a cycle through the C++ graph) and
# to a sentinel and a numpy-backed tensor: they die only if the cycle is collected
# (a lucid tensor's Python wrapper may die while its C++ tensor lives on, so a
# weakref to the wrapper alone would not show it).

def _cycle_refs(*objs):
    return [weakref.ref(o) for o in objs]


def _all_dead(refs):
    gc.collect()
    return [i for i, r in enumerate(refs) if r() is not None]


@pytest.mark.usefixtures("cpu_default")  # NumPy-backed probes
def test_tensor_hook_cycle_is_collected():
    token = _Probe()
    ext, ext_ref = _external((3,))
    x = lucid.randn(3, dtype=lucid.float64, requires_grad=True)
    x.register_hook(lambda g: g + x.detach() * 0 + ext * 0 + (token is None))   # x -> hook -> x
    y = x * 2
    y.register_hook(lambda g: g * y.detach().sign().abs() + (token is None))    # a non-leaf's hook
    y.sum().backward(retain_graph=True)
    refs = _cycle_refs(x, y, token) + [ext_ref]
    del x, y, token, ext
    assert _all_dead(refs) == []


@pytest.mark.usefixtures("cpu_default")  # NumPy-backed probes
def test_node_hook_cycle_is_collected():
    token = _Probe()
    ext, ext_ref = _external((3,))
    x = lucid.randn(3, dtype=lucid.float64, requires_grad=True)
    y = (x * ext).exp()
    node = y.grad_fn
    seen = _Seen()
    node.register_hook(lambda gi, go: seen.append((y.shape, node, token)))   # node -> hook -> node, y
    node.register_prehook(lambda go: seen.append((y.shape, token)))
    y.sum().backward(retain_graph=True)
    assert len(seen) == 2
    refs = _cycle_refs(x, y, token, seen) + [ext_ref]
    del x, y, node, token, ext, seen
    assert _all_dead(refs) == []


def test_node_hook_referring_to_its_own_node_is_collected():
    # The smallest cycle: a node whose hook refers to the node itself.
    token = _Probe()
    x = lucid.randn(3, requires_grad=True)
    node = (x * 2).grad_fn
    node.register_prehook(lambda go: (node, token) and None)
    refs = _cycle_refs(token)
    del node, token
    assert _all_dead(refs) == []


@pytest.mark.usefixtures("cpu_default")  # NumPy-backed probes
def test_output_held_by_its_own_node_hook_is_collected():
    # out -> grad_fn -> hook -> out
    token = _Probe()
    ext, ext_ref = _external((5,))
    x = lucid.randn(5, dtype=lucid.float64, requires_grad=True)
    out = x.exp() * ext
    out.grad_fn.register_prehook(lambda go: (out, token) and None)
    refs = _cycle_refs(out, token) + [ext_ref]
    del out, ext, token
    assert _all_dead(refs) == []


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x).relu()


@pytest.mark.parametrize("kind", ["forward", "forward_pre", "full_backward", "full_backward_pre",
                                  "parameter_tensor_hook", "output_tensor_hook", "output_node_hook"])
def test_module_hook_cycle_is_collected(kind):
    model = _Net()
    seen = _Seen()
    if kind == "forward":
        model.register_forward_hook(lambda m, i, o: seen.append(model.fc.out_features))
    elif kind == "forward_pre":
        model.register_forward_pre_hook(lambda m, i: seen.append(model.fc.in_features))
    elif kind == "full_backward":
        model.register_full_backward_hook(lambda m, gi, go: seen.append(model.fc.weight.shape))
    elif kind == "full_backward_pre":
        model.register_full_backward_pre_hook(lambda m, go: seen.append(model.fc.weight.shape))
    elif kind == "parameter_tensor_hook":
        model.fc.weight.register_hook(lambda g: seen.append(model) or g)
    elif kind == "output_tensor_hook":
        model.register_forward_hook(
            lambda m, i, o: o.register_hook(lambda g: seen.append(model) or g) and None)
    else:
        model.register_forward_hook(
            lambda m, i, o: o.grad_fn.register_hook(lambda gi, go: seen.append(model)) and None)
    x = lucid.randn(2, 4, requires_grad=True)
    out = model(x)
    out.sum().backward()
    assert seen
    refs = _cycle_refs(model, model.fc, model.fc.weight, seen)
    del model, out, seen
    assert _all_dead(refs) == []


# ---- threads: grad mode -----------------------------------------------------------------------

@pytest.mark.parametrize("how", ["no_grad", "set_grad_enabled", "set_grad_enabled_call", "inference_mode"])
def test_grad_mode_is_per_thread(how):
    x = lucid.ones(2, requires_grad=True)
    tx = torch.ones(2, requires_grad=True)
    step = threading.Barrier(2, timeout=30)
    seen = {}

    def disabled(m):
        if how == "no_grad":
            return m.no_grad()
        if how == "inference_mode":
            return m.inference_mode()
        return m.set_grad_enabled(False)

    def thread_a(m, t, key):
        if how == "set_grad_enabled_call":
            m.set_grad_enabled(False)  # the function form: lasts for this thread
            step.wait()                # 1: A has disabled grad
            seen[key + "a_off"] = (m.is_grad_enabled(), (t * 2).requires_grad)
            step.wait()                # 2: B has checked
            step.wait()                # 3: B has disabled its own
            m.set_grad_enabled(True)
            step.wait()                # 4: A re-enabled
            seen[key + "a_on"] = (m.is_grad_enabled(), (t * 2).requires_grad)
            step.wait()                # 5
            return
        with disabled(m):
            step.wait()
            seen[key + "a_off"] = (m.is_grad_enabled(), (t * 2).requires_grad)
            step.wait()
            step.wait()
        step.wait()
        seen[key + "a_on"] = (m.is_grad_enabled(), (t * 2).requires_grad)
        step.wait()

    def thread_b(m, t, key):
        step.wait()  # 1: A is inside its disabled region
        seen[key + "b_while_a_off"] = (m.is_grad_enabled(), (t * 2).requires_grad)
        step.wait()  # 2
        with m.no_grad():
            step.wait()  # 3: B disabled, A still disabled
            step.wait()  # 4: A has re-enabled, B still disabled
            seen[key + "b_off_while_a_on"] = (m.is_grad_enabled(), (t * 2).requires_grad)
            step.wait()  # 5
        seen[key + "b_end"] = (m.is_grad_enabled(), (t * 2).requires_grad)

    for m, t, key in ((lucid, x, "lucid_"), (torch, tx, "torch_")):
        a = threading.Thread(target=thread_a, args=(m, t, key))
        b = threading.Thread(target=thread_b, args=(m, t, key))
        a.start(), b.start()
        a.join(), b.join()
        assert m.is_grad_enabled()  # the main thread was never affected
    expect = {"a_off": (False, False), "b_while_a_off": (True, True), "b_off_while_a_on": (False, False),
              "a_on": (True, True), "b_end": (True, True)}
    for k, v in expect.items():
        assert seen["torch_" + k] == v, k  # the test itself is right
        assert seen["lucid_" + k] == v, k


@pytest.mark.parametrize("value, expected", [("1", 1), ("3", 3), ("0", None), ("two", None)])
def test_omp_num_threads_sets_the_default_thread_count(value, expected):
    # as torch: OMP_NUM_THREADS, when a positive number, is the default; else one a core
    import subprocess
    import sys
    code = "import os, lucid; print(lucid.get_num_threads(), os.cpu_count(), float((lucid.ones(300, 300) @ lucid.ones(300, 300)).sum()))"
    env = dict(os.environ, OMP_NUM_THREADS=value,
               PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(lucid.__file__))))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    threads, cores, total = out.stdout.split()
    assert int(threads) == (expected or int(cores)) and float(total) == 300.0 ** 3


def test_new_thread_starts_with_grad_enabled():
    result = {}
    with lucid.no_grad():
        t = threading.Thread(target=lambda: result.setdefault("on", lucid.is_grad_enabled()))
        t.start()
        t.join()
    lucid.set_grad_enabled(False)
    try:
        t = threading.Thread(target=lambda: result.setdefault("on2", lucid.is_grad_enabled()))
        t.start()
        t.join()
    finally:
        lucid.set_grad_enabled(True)
    assert result == {"on": True, "on2": True}


# ---- threads: concurrent use of one model ------------------------------------------------------

class _ConvNet(nn.Module):
    """Large enough that its kernels split work over lucid's pool (and so run with the
    GIL released): the threads really overlap."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16 * 16 * 16, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(x.flatten(1)).log_softmax(1)


def _run_threads(n, target):
    errors = []

    def wrapped(i):
        try:
            target(i)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("which", ["mlp", "conv"])
def test_concurrent_inference_on_one_model(which, threads):
    lucid.manual_seed(0)
    model = _mlp() if which == "mlp" else _ConvNet()
    model.eval()
    shape = (64, 784) if which == "mlp" else (16, 3, 32, 32)
    inputs = [lucid.randn(*shape) for _ in range(4)]
    with lucid.no_grad():
        expected = [model(x).tolist() for x in inputs]
    start = threading.Barrier(4, timeout=60)
    mismatches = []

    def work(i):
        start.wait()
        with lucid.no_grad():
            for k in range(20):
                j = (i + k) % 4
                got = model(inputs[j])
                if got.requires_grad or got.tolist() != expected[j]:
                    mismatches.append((i, k))

    _run_threads(4, work)
    assert not mismatches
    assert lucid.is_grad_enabled()


def test_concurrent_backward_through_a_shared_model(threads):
    lucid.manual_seed(0)
    model = _ConvNet().double()
    model.eval()  # batch norm with running statistics: samples independent
    inputs = [lucid.randn(8, 3, 32, 32, dtype=lucid.float64) for _ in range(4)]

    def input_grad(x):
        x = x.clone().requires_grad_(True)
        (model(x) * lucid.arange(5, dtype=lucid.float64)).sum().backward()
        return x.grad.tolist()

    expected = [input_grad(x) for x in inputs]
    model.zero_grad()
    single_weight_grads = []
    for x in inputs:
        model.zero_grad()
        input_grad(x)
        single_weight_grads.append(model.conv.weight.grad.clone())
    model.zero_grad()
    rounds = 5
    start = threading.Barrier(4, timeout=60)
    got = {}

    def work(i):
        start.wait()
        results = []
        for _ in range(rounds):
            results.append(input_grad(inputs[i]))
        got[i] = results

    _run_threads(4, work)
    # bit for bit on the CPU; on the GPU to rounding, as from one thread (cuDNN's
    # convolution gradients add with atomics: two runs differ in the last bits)
    tol = 0 if lucid.get_default_device().type == "cpu" else 1e-12
    for i in range(4):
        for r in got[i]:
            torch.testing.assert_close(torch.tensor(r), torch.tensor(expected[i]), rtol=tol, atol=tol)
    # The shared parameters accumulated every thread's gradient (order aside).
    total = sum(single_weight_grads[1:], single_weight_grads[0]) * rounds
    torch.testing.assert_close(to_torch(model.conv.weight.grad), to_torch(total), rtol=1e-9, atol=1e-9)


# ---- threads: the GIL is released around long kernels ----------------------------------------

def _largest_gil_gap(fn):
    """Run `fn` in this thread while another Python thread spins, stamping the time of
    each iteration: the largest gap between stamps inside fn's run, as a fraction of
    the run. A kernel that holds the GIL stops the spinner for all its time (about 1);
    one that releases it leaves it running (gaps of a switch interval or so)."""
    stamps = []
    stop, running = threading.Event(), threading.Event()

    def spin():
        now, add = time.perf_counter, stamps.append
        running.set()
        while not stop.is_set():
            add(now())

    t = threading.Thread(target=spin)
    t.start()
    running.wait()
    while len(stamps) < 1000:  # the spinner is really going
        time.sleep(0.001)
    t0 = time.perf_counter()
    fn()
    t1 = time.perf_counter()
    stop.set()
    t.join()
    inside = [t0] + [s for s in stamps if t0 <= s <= t1] + [t1]
    return max(b - a for a, b in zip(inside, inside[1:])) / (t1 - t0), t1 - t0


def _gil_released(make, attempts=4):
    """(True, runs) if, in one of a few runs of the callable that make() returns, the
    other thread was never stopped for more than half of its time (a loaded machine
    may deschedule the spinner now and then: hence the attempts). A single kernel that
    holds the GIL stops it for all of its time, every time."""
    make()()  # warm: caches, first-touch pages
    runs = []
    for _ in range(attempts):
        gap, took = _largest_gil_gap(make())
        runs.append((round(gap, 2), round(took * 1e3)))
        if gap < 0.5:
            return True, runs
    return False, runs


@pytest.fixture
def one_kernel_thread():
    """The kernel on one core, the spinner on the other."""
    before = lucid.get_num_threads()
    lucid.set_num_threads(1)
    yield
    lucid.set_num_threads(before)


def test_gil_probe_sees_held_and_released_gil(one_kernel_thread):
    # The measuring stick itself: sleep releases the GIL, a long C loop holds it.
    released, runs = _gil_released(lambda: lambda: time.sleep(0.2))
    assert released, runs
    held, runs = _gil_released(lambda: lambda: sum(range(8_000_000)), attempts=2)
    assert not held, runs


def _long_kernel(op):
    """A callable making one call into lucid's engine that runs one long kernel (about
    0.1-0.3 s on one core): the setup happens outside it."""
    g = lucid.Generator().manual_seed(0)
    if op in ("matmul", "backward"):
        a = lucid.randn(2048, 2048, generator=g)
        b = lucid.randn(2048, 2048, generator=g)
        if op == "matmul":
            return lambda: lambda: a @ b
        leaf = a.requires_grad_(True)

        def make():
            loss = (leaf @ b).sum()  # the forward outside the timed call
            return loss.backward
        return make
    if op in ("conv2d", "max_pool2d"):
        img = lucid.randn(16, 64, 96, 96, generator=g)
        w = lucid.randn(64, 64, 3, 3, generator=g)
        if op == "conv2d":
            return lambda: lambda: F.conv2d(img, w, padding=1)
        return lambda: lambda: F.max_pool2d(img, 3, stride=1, padding=1)
    x = lucid.rand(12_000_000, dtype=lucid.float64, generator=g)
    fn = {"tanh": lambda: lucid.tanh(x),
          "atan2": lambda: lucid.atan2(x, x),
          "softmax": lambda: lucid.softmax(x.view(1000, 12000), 1),
          "logsumexp": lambda: lucid.logsumexp(x.view(1000, 12000), 1)}[op]
    return lambda: fn


@pytest.mark.parametrize("op", ["matmul", "conv2d", "max_pool2d", "tanh", "atan2", "softmax", "logsumexp",
                                "backward"])
@pytest.mark.usefixtures("cpu_default")  # CPU kernels (a GPU call returns once its work is queued)
def test_gil_released_around_long_kernels(op, one_kernel_thread):
    released, runs = _gil_released(_long_kernel(op))
    assert released, f"{op} held the GIL: (longest stop of the other thread / op time, op ms) per run: {runs}"


# ---- numerics: NaN and inf as in PyTorch ------------------------------------------------------

VALUES = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 2.5, -3.0, 0.5, 1e30, -1e-30]
DTYPES = ["float32", "float64"]


def _pair(values, dtype):
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    return to_lucid(t), t


def same(lt, tt, rtol=None, atol=None):
    """lucid result(s) == torch result(s): shapes, dtypes, NaN positions, inf signs;
    finite values to rounding."""
    if isinstance(tt, (tuple, list)):
        assert len(lt) == len(tt)
        for a, b in zip(lt, tt):
            same(a, b, rtol, atol)
        return
    assert isinstance(lt, lucid.Tensor), type(lt)
    assert tuple(lt.shape) == tuple(tt.shape), (lt.shape, tt.shape)
    assert str(lt.dtype).split(".")[-1] == str(tt.dtype).split(".")[-1], (lt.dtype, tt.dtype)
    got = to_torch(lt.detach())
    if not tt.is_floating_point():
        assert got.tolist() == tt.tolist(), (got.tolist(), tt.tolist())
        return
    nan_l, nan_t = torch.isnan(got), torch.isnan(tt)
    assert torch.equal(nan_l, nan_t), f"NaN positions differ:\nlucid {got.tolist()}\ntorch {tt.tolist()}"
    assert torch.equal(torch.isposinf(got), torch.isposinf(tt)), f"+inf differs:\nlucid {got.tolist()}\ntorch {tt.tolist()}"
    assert torch.equal(torch.isneginf(got), torch.isneginf(tt)), f"-inf differs:\nlucid {got.tolist()}\ntorch {tt.tolist()}"
    if rtol is None:
        rtol, atol = (1e-5, 1e-6) if tt.dtype == torch.float32 else (1e-10, 1e-12)
    torch.testing.assert_close(got, tt.detach(), rtol=rtol, atol=atol, equal_nan=True)


UNARY = {
    "abs": lambda m, x: m.abs(x), "neg": lambda m, x: m.neg(x), "exp": lambda m, x: m.exp(x),
    "exp2": lambda m, x: m.exp2(x), "expm1": lambda m, x: m.expm1(x), "log": lambda m, x: m.log(x),
    "log2": lambda m, x: m.log2(x), "log10": lambda m, x: m.log10(x), "log1p": lambda m, x: m.log1p(x),
    "sqrt": lambda m, x: m.sqrt(x), "rsqrt": lambda m, x: m.rsqrt(x), "reciprocal": lambda m, x: m.reciprocal(x),
    "square": lambda m, x: m.square(x), "sin": lambda m, x: m.sin(x), "cos": lambda m, x: m.cos(x),
    "tan": lambda m, x: m.tan(x), "tanh": lambda m, x: m.tanh(x), "sigmoid": lambda m, x: m.sigmoid(x),
    "relu": lambda m, x: m.relu(x), "sign": lambda m, x: m.sign(x), "floor": lambda m, x: m.floor(x),
    "ceil": lambda m, x: m.ceil(x), "round": lambda m, x: m.round(x), "trunc": lambda m, x: m.trunc(x),
    "frac": lambda m, x: m.frac(x), "erf": lambda m, x: m.erf(x), "erfc": lambda m, x: m.erfc(x),
    "asin": lambda m, x: m.asin(x), "acos": lambda m, x: m.acos(x), "atan": lambda m, x: m.atan(x),
    "sinh": lambda m, x: m.sinh(x), "cosh": lambda m, x: m.cosh(x), "asinh": lambda m, x: m.asinh(x),
    "acosh": lambda m, x: m.acosh(x), "atanh": lambda m, x: m.atanh(x), "logit": lambda m, x: m.logit(x),
    "erfinv": lambda m, x: m.erfinv(x),
    "nan_to_num": lambda m, x: m.nan_to_num(x),
    "nan_to_num_args": lambda m, x: m.nan_to_num(x, nan=0.0, posinf=1.0, neginf=-1.0),
    "isnan": lambda m, x: m.isnan(x), "isinf": lambda m, x: m.isinf(x), "isfinite": lambda m, x: m.isfinite(x),
    "isposinf": lambda m, x: m.isposinf(x), "isneginf": lambda m, x: m.isneginf(x),
    "clamp": lambda m, x: m.clamp(x, -1.0, 2.0), "clamp_min": lambda m, x: m.clamp_min(x, 0.0),
    "clamp_max": lambda m, x: m.clamp_max(x, 0.0), "clamp_inf": lambda m, x: m.clamp(x, min=-INF, max=INF),
    "pow2": lambda m, x: m.pow(x, 2), "pow_half": lambda m, x: m.pow(x, 0.5), "pow0": lambda m, x: m.pow(x, 0),
    "pow_neg1": lambda m, x: m.pow(x, -1), "pow_inf": lambda m, x: m.pow(x, INF),
    "pow_nan": lambda m, x: m.pow(x, NAN), "rpow": lambda m, x: 2.0 ** x, "rpow1": lambda m, x: 1.0 ** x,
    "add_inf": lambda m, x: x + INF, "mul_zero": lambda m, x: x * 0.0, "div_zero": lambda m, x: x / 0.0,
    "mul_nan": lambda m, x: x * NAN, "sub_self": lambda m, x: x - x,
    "gelu": lambda m, x: m.nn.functional.gelu(x), "gelu_tanh": lambda m, x: m.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda m, x: m.nn.functional.silu(x), "softplus": lambda m, x: m.nn.functional.softplus(x),
    "elu": lambda m, x: m.nn.functional.elu(x), "selu": lambda m, x: m.nn.functional.selu(x),
    "celu": lambda m, x: m.nn.functional.celu(x), "leaky_relu": lambda m, x: m.nn.functional.leaky_relu(x, 0.1),
    "hardtanh": lambda m, x: m.nn.functional.hardtanh(x), "relu6": lambda m, x: m.nn.functional.relu6(x),
    "logsigmoid": lambda m, x: m.nn.functional.logsigmoid(x), "mish": lambda m, x: m.nn.functional.mish(x),
    "softsign": lambda m, x: m.nn.functional.softsign(x), "hardsigmoid": lambda m, x: m.nn.functional.hardsigmoid(x),
    "hardswish": lambda m, x: m.nn.functional.hardswish(x), "tanhshrink": lambda m, x: m.nn.functional.tanhshrink(x),
    "softshrink": lambda m, x: m.nn.functional.softshrink(x), "hardshrink": lambda m, x: m.nn.functional.hardshrink(x),
    "threshold": lambda m, x: m.nn.functional.threshold(x, 0.5, -7.0),
    "F_relu": lambda m, x: m.nn.functional.relu(x), "F_sigmoid": lambda m, x: m.nn.functional.sigmoid(x),
    "to_float16": lambda m, x: x.half().float(), "to_bfloat16": lambda m, x: x.bfloat16().float(),
    "to_int_is_nan_free": lambda m, x: m.isnan(x.double()),
}


# torch's float32 GELU (a vectorised erf) gives NaN at +inf and is off by 1e-4 at -3,
# where its float64 GELU gives inf and the right value: float64 is the reference there.
TORCH_FLOAT32_QUIRKS = {"gelu"}


def _reference(fn, op, tx):
    if tx.dtype == torch.float32 and op in TORCH_FLOAT32_QUIRKS:
        return fn(torch, tx.double()).float()
    return fn(torch, tx)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_nan_inf_like_torch(op, dtype):
    lx, tx = _pair(VALUES, dtype)
    same(UNARY[op](lucid, lx), _reference(UNARY[op], op, tx))


BINARY = {
    "add": lambda m, a, b: m.add(a, b), "sub": lambda m, a, b: m.sub(a, b), "mul": lambda m, a, b: m.mul(a, b),
    "div": lambda m, a, b: m.div(a, b), "pow": lambda m, a, b: m.pow(a, b),
    "maximum": lambda m, a, b: m.maximum(a, b), "minimum": lambda m, a, b: m.minimum(a, b),
    "fmax": lambda m, a, b: m.fmax(a, b), "fmin": lambda m, a, b: m.fmin(a, b),
    "atan2": lambda m, a, b: m.atan2(a, b), "hypot": lambda m, a, b: m.hypot(a, b),
    "remainder": lambda m, a, b: m.remainder(a, b), "fmod": lambda m, a, b: m.fmod(a, b),
    "div_floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "floor_divide": lambda m, a, b: m.floor_divide(a, b),
    "logaddexp": lambda m, a, b: m.logaddexp(a, b), "logaddexp2": lambda m, a, b: m.logaddexp2(a, b),
    "xlogy": lambda m, a, b: m.xlogy(a, b),
    "eq": lambda m, a, b: m.eq(a, b), "ne": lambda m, a, b: m.ne(a, b), "lt": lambda m, a, b: m.lt(a, b),
    "le": lambda m, a, b: m.le(a, b), "gt": lambda m, a, b: m.gt(a, b), "ge": lambda m, a, b: m.ge(a, b),
    "where": lambda m, a, b: m.where(b > 0, a, b), "where_nan_cond": lambda m, a, b: m.where(a == a, a, b),
    "lerp": lambda m, a, b: m.lerp(a, b, 0.5), "lerp_tensor": lambda m, a, b: m.lerp(a, b, m.full_like(a, 0.75)),
    "addcmul": lambda m, a, b: m.addcmul(a, a, b, value=0.5), "addcdiv": lambda m, a, b: m.addcdiv(a, a, b),
    "isclose": lambda m, a, b: m.isclose(a, b), "isclose_equal_nan": lambda m, a, b: m.isclose(a, b, equal_nan=True),
    "clamp_tensor": lambda m, a, b: m.clamp(a, min=b), "clamp_max_tensor": lambda m, a, b: m.clamp(a, max=b),
    "add_alpha": lambda m, a, b: m.add(a, b, alpha=2.0), "sub_alpha0": lambda m, a, b: m.sub(a, b, alpha=0.0),
    "masked_fill": lambda m, a, b: a.masked_fill(b < 0, NAN),
}


@pytest.mark.parametrize("dtype", DTYPES)
def test_atan2_dense_rows_of_special_values(dtype):
    # Dense rows run the vector kernel (SLEEF's, as torch's CPU kernel), the broadcast
    # pairs above the scalar loop: every pair again, flattened into dense rows (a full
    # vector and a padded tail).
    v = torch.tensor(VALUES, dtype=getattr(torch, dtype))
    ta, tb = v.repeat_interleave(len(VALUES)), v.repeat(len(VALUES))
    same(lucid.atan2(to_lucid(ta), to_lucid(tb)), torch.atan2(ta, tb))


def test_logsumexp_float32_rows_of_special_values():
    # float32 on the CPU is torch's formula from the vector ops: a max of +-inf is taken
    # as 0, so an all -inf row gives -inf, a +inf gives inf, a NaN NaN
    rows = [[-INF, -INF, -INF], [1.0, INF, 2.0], [1.0, NAN, 2.0], [-INF, 0.5, -1.0], [1e30, 1e30, -1e30],
            [-1e-30, 0.0, -0.0]]
    lt, tt = _pair(rows, "float32")
    for dims, keepdim in (((1,), False), ((0,), True), ((0, 1), False)):
        same(lucid.logsumexp(lt, dims, keepdim), torch.logsumexp(tt, dims, keepdim))


def _except(lt, tt, skip):
    """lt and tt with the positions `skip` (a torch bool tensor) zeroed in both: the
    documented differences from torch (docs/RELIABILITY.md, "Known differences")."""
    skip = skip.expand(tt.shape)
    lt = lt.detach().clone()
    lt[to_lucid(skip)] = 0.0
    return lt, tt.detach().masked_fill(skip, 0.0)


def _pow_tensor_half(ta, tb):
    # A tensor exponent of 0.5 takes lucid's sqrt shortcut, torch's std::pow:
    # they differ at -inf (nan vs inf) and -0 (-0 vs 0).
    return (tb == 0.5) & ((ta == -INF) | ((ta == 0) & ta.signbit()))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_nan_inf_like_torch(op, dtype):
    # Every pair of special values: a down the rows, b across the columns.
    la, ta = _pair([[v] for v in VALUES], dtype)
    lb, tb = _pair([VALUES], dtype)
    if op == "isclose_equal_nan" and TORCH_VERSION < (2, 15):
        # torch 2.11's isclose(equal_nan=True) cannot broadcast (pytorch#174985, fixed
        # later): its operands are broadcast first
        ta, tb = torch.broadcast_tensors(ta, tb)
    lr, tr = BINARY[op](lucid, la, lb), BINARY[op](torch, ta, tb)
    if op == "pow":
        lr, tr = _except(lr, tr, _pow_tensor_half(ta, tb))
    same(lr, tr)


def test_binary_nan_inf_mixed_dtypes_and_scalars():
    la, ta = _pair([[v] for v in VALUES], "float32")
    lb, tb = _pair([VALUES], "float64")
    for op in ("add", "mul", "div", "maximum", "minimum", "pow"):
        lr, tr = BINARY[op](lucid, la, lb), BINARY[op](torch, ta, tb)
        if op == "pow":
            lr, tr = _except(lr, tr, _pow_tensor_half(ta.double(), tb))
        same(lr, tr)
    for s in (NAN, INF, -INF, 0.0):
        same(la.expand(12, 12) * s, ta.expand(12, 12) * s)
        same(lucid.maximum(la, lucid.tensor(s)), torch.maximum(ta, torch.tensor(s)))
        same(s - la, s - ta)
        same(s / la, s / ta)


# Rows with NaN and inf in different places (reduced along dim 1 each row is a case).
ROWS = [
    [1.0, 2.0, 3.0, 4.0],
    [NAN, 1.0, 2.0, 3.0],
    [1.0, 2.0, NAN, 3.0],
    [1.0, NAN, 5.0, NAN],
    [1.0, INF, 2.0, 3.0],
    [-INF, 1.0, 2.0, 3.0],
    [INF, -INF, 1.0, 2.0],
    [NAN, INF, -INF, 0.0],
    [INF, 4.0, INF, 2.0],
    [-INF, -INF, -INF, -INF],
    [INF, INF, INF, INF],
    [0.0, 0.0, 0.0, 0.0],
    [-1.0, 0.0, -2.0, 0.5],
]

REDUCTIONS = {
    "sum": lambda m, x, d: x.sum() if d is None else x.sum(d),
    "mean": lambda m, x, d: x.mean() if d is None else x.mean(d),
    "mean_keepdim": lambda m, x, d: x.mean() if d is None else x.mean(d, keepdim=True),
    "prod": lambda m, x, d: x.prod() if d is None else x.prod(d),
    "amax": lambda m, x, d: m.amax(x) if d is None else m.amax(x, d),
    "amin": lambda m, x, d: m.amin(x) if d is None else m.amin(x, d),
    "max": lambda m, x, d: m.max(x) if d is None else m.max(x, d).values,
    "min": lambda m, x, d: m.min(x) if d is None else m.min(x, d).values,
    "argmax": lambda m, x, d: m.argmax(x) if d is None else m.argmax(x, d),
    "argmin": lambda m, x, d: m.argmin(x) if d is None else m.argmin(x, d),
    "var": lambda m, x, d: m.var(x) if d is None else m.var(x, d),
    "var_biased": lambda m, x, d: m.var(x, correction=0) if d is None else m.var(x, d, correction=0),
    "std": lambda m, x, d: m.std(x) if d is None else m.std(x, d),
    # torch.var_mean's mean is NaN for a row holding inf (its Welford update), where
    # torch.mean gives inf: the pair (var, mean) is the reference.
    "var_mean": lambda m, x, d: (m.var_mean(x) if d is None else m.var_mean(x, d)) if m is lucid else (
        (m.var(x), m.mean(x)) if d is None else (m.var(x, d), m.mean(x, d))),
    "std_mean": lambda m, x, d: (m.std_mean(x) if d is None else m.std_mean(x, d)) if m is lucid else (
        (m.std(x), m.mean(x)) if d is None else (m.std(x, d), m.mean(x, d))),
    "logsumexp": lambda m, x, d: m.logsumexp(x, (0, 1) if d is None else d),
    "softmax": lambda m, x, d: m.softmax(x, 1 if d is None else d),
    "log_softmax": lambda m, x, d: m.log_softmax(x, 1 if d is None else d),
    "F_softmax": lambda m, x, d: m.nn.functional.softmax(x, dim=1 if d is None else d),
    "softmin": lambda m, x, d: m.nn.functional.softmin(x, dim=1 if d is None else d),
    "norm": lambda m, x, d: m.norm(x) if d is None else m.norm(x, dim=d),
    "norm1": lambda m, x, d: m.norm(x, p=1) if d is None else m.norm(x, p=1, dim=d),
    "norm3": lambda m, x, d: m.norm(x, p=3) if d is None else m.norm(x, p=3, dim=d),
    "norm_inf": lambda m, x, d: m.norm(x, p=INF) if d is None else m.norm(x, p=INF, dim=d),
    "norm_neginf": lambda m, x, d: m.norm(x, p=-INF) if d is None else m.norm(x, p=-INF, dim=d),
    "norm0": lambda m, x, d: m.norm(x, p=0) if d is None else m.norm(x, p=0, dim=d),
    "cumsum": lambda m, x, d: m.cumsum(x.flatten(), 0) if d is None else m.cumsum(x, d),
    "cumprod": lambda m, x, d: m.cumprod(x.flatten(), 0) if d is None else m.cumprod(x, d),
    "count_nonzero": lambda m, x, d: m.count_nonzero(x) if d is None else m.count_nonzero(x, d),
    "all": lambda m, x, d: m.all(x) if d is None else m.all(x, d),
    "any": lambda m, x, d: m.any(x) if d is None else m.any(x, d),
    "normalize": lambda m, x, d: m.nn.functional.normalize(x, dim=1 if d is None else d),
    "layer_norm": lambda m, x, d: m.nn.functional.layer_norm(x, (4,)),
    "trace": lambda m, x, d: m.trace(x[:4]),
}

# max/min along a dim: the indices too, on rows whose extreme is unique (torch leaves
# the index of tied extremes unspecified) -- NaN counts as the extreme.
UNIQUE_ROWS = [r for r in ROWS if r not in ([INF, 4.0, INF, 2.0], [-INF] * 4, [INF] * 4, [0.0] * 4)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [None, 0, 1])
@pytest.mark.parametrize("op", sorted(REDUCTIONS))
def test_reduction_nan_inf_like_torch(op, dim, dtype):
    lx, tx = _pair(ROWS, dtype)
    same(REDUCTIONS[op](lucid, lx, dim), REDUCTIONS[op](torch, tx, dim))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_indices_with_nan_like_torch(op, dtype):
    lx, tx = _pair(UNIQUE_ROWS, dtype)
    lr, tr = getattr(lucid, op)(lx, 1), getattr(torch, op)(tx, 1)
    same(lr.values, tr.values)
    same(lr.indices, tr.indices)


MATRICES = {
    "a": [[1.0, 2.0, 3.0], [NAN, 0.0, 0.0], [INF, 0.0, 1.0], [INF, -INF, 0.0], [-INF, 1.0, 2.0], [0.0, 0.0, 0.0]],
    "b": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
    "b_inf": [[INF, 0.0], [1.0, -INF], [0.0, 0.0]],
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ["mm", "matmul_inf", "mv", "dot", "bmm", "linear", "linear_nan_weight",
                                  "addmm_beta0", "addmm", "einsum", "tensordot", "outer", "matmul_large"])
def test_matmul_nan_inf_like_torch(case, dtype):
    def run(m, conv):
        a, b, bi = (conv(torch.tensor(MATRICES[k], dtype=getattr(torch, dtype))) for k in ("a", "b", "b_inf"))
        if case == "mm":
            return m.mm(a, b)
        if case == "matmul_inf":
            return a @ bi
        if case == "mv":
            return m.mv(a, b[:, 0])
        if case == "dot":
            return [m.dot(a[i], b[:, 1]) for i in range(a.shape[0])]
        if case == "bmm":
            return m.bmm(a.unsqueeze(0).expand(2, 6, 3), bi.unsqueeze(0).expand(2, 3, 2))
        if case == "linear":
            return m.nn.functional.linear(a, b.t(), m.tensor([0.0, INF], dtype=a.dtype))
        if case == "linear_nan_weight":
            return m.nn.functional.linear(b.t(), a)
        if case == "addmm_beta0":  # beta=0 ignores input, NaN and inf included (torch's docs)
            return m.addmm(m.full((6, 2), NAN, dtype=a.dtype), a, b, beta=0.0)
        if case == "addmm":
            return m.addmm(m.full((6, 2), INF, dtype=a.dtype), a, b)
        if case == "einsum":
            return m.einsum("ij,jk->ik", a, bi)
        if case == "tensordot":
            return m.tensordot(a, b, dims=1)
        if case == "outer":
            return m.outer(a[:, 0], b[:, 1])
        # a large product, through the blocked path: one NaN and one inf inside
        g = torch.Generator().manual_seed(0)
        x = torch.randn(70, 90, generator=g, dtype=getattr(torch, dtype))
        y = torch.randn(90, 80, generator=g, dtype=getattr(torch, dtype))
        x[3, 5], x[10, 7], y[8, 20], y[40, 2] = NAN, INF, -INF, 0.0
        return conv(x) @ conv(y)
    same(run(lucid, to_lucid), run(torch, lambda t: t), rtol=1e-4 if dtype == "float32" else 1e-9, atol=1e-4)


def _image(dtype):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 8, 8, generator=g, dtype=getattr(torch, dtype))
    x[0, 0, 1, 1], x[0, 1, 5, 6], x[1, 2, 0, 0], x[1, 0, 7, 7] = NAN, INF, -INF, NAN
    x[1, 1, 3, 3], x[1, 1, 3, 4] = INF, -INF
    return x


SPATIAL = {
    "conv2d": lambda m, x: m.nn.functional.conv2d(x, m.ones(4, 3, 3, 3, dtype=x.dtype) * 0.5, padding=1),
    "conv2d_zero_weight": lambda m, x: m.nn.functional.conv2d(x, m.zeros(2, 3, 3, 3, dtype=x.dtype)),
    "conv2d_stride": lambda m, x: m.nn.functional.conv2d(
        x, m.arange(54, dtype=x.dtype).reshape(2, 3, 3, 3) - 27, stride=2, padding=1, bias=m.tensor([INF, 0.0], dtype=x.dtype)),
    "conv1d": lambda m, x: m.nn.functional.conv1d(x.flatten(2), m.ones(2, 3, 5, dtype=x.dtype)),
    "conv_transpose2d": lambda m, x: m.nn.functional.conv_transpose2d(x, m.ones(3, 2, 2, 2, dtype=x.dtype), stride=2),
    "max_pool2d": lambda m, x: m.nn.functional.max_pool2d(x, 2),
    "max_pool2d_overlap": lambda m, x: m.nn.functional.max_pool2d(x, 3, stride=1, padding=1),
    "max_pool2d_indices": lambda m, x: m.nn.functional.max_pool2d(x, 2, return_indices=True)[1],
    "max_pool1d": lambda m, x: m.nn.functional.max_pool1d(x.flatten(2), 4),
    "avg_pool2d": lambda m, x: m.nn.functional.avg_pool2d(x, 2),
    "adaptive_avg_pool2d": lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 1),
    "adaptive_max_pool2d": lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 3),
    "batch_norm_train": lambda m, x: m.nn.functional.batch_norm(x, None, None, training=True),
    "batch_norm_eval": lambda m, x: m.nn.functional.batch_norm(
        x, m.zeros(3, dtype=x.dtype), m.ones(3, dtype=x.dtype), training=False),
    "group_norm": lambda m, x: m.nn.functional.group_norm(x, 3),
    "layer_norm": lambda m, x: m.nn.functional.layer_norm(x, (8, 8)),
    "interpolate_bilinear": lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode="bilinear"),
    "interpolate_nearest": lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode="nearest"),
    "pad_reflect": lambda m, x: m.nn.functional.pad(x, (1, 1, 1, 1), mode="reflect"),
    "dropout_eval": lambda m, x: m.nn.functional.dropout(x, 0.5, training=False),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(SPATIAL))
def test_spatial_nan_inf_like_torch(op, dtype):
    tx = _image(dtype)
    same(SPATIAL[op](lucid, to_lucid(tx)), SPATIAL[op](torch, tx),
         rtol=1e-4 if dtype == "float32" else 1e-9, atol=1e-5)


LOSSES = {
    "cross_entropy": lambda m, x, t: m.nn.functional.cross_entropy(x, t, reduction="none"),
    "cross_entropy_mean": lambda m, x, t: m.nn.functional.cross_entropy(x, t),
    "nll_loss": lambda m, x, t: m.nn.functional.nll_loss(x, t, reduction="none"),
    "mse_loss": lambda m, x, t: m.nn.functional.mse_loss(x, m.zeros_like(x), reduction="none"),
    "l1_loss": lambda m, x, t: m.nn.functional.l1_loss(x, m.ones_like(x), reduction="none"),
    "smooth_l1_loss": lambda m, x, t: m.nn.functional.smooth_l1_loss(x, m.zeros_like(x), reduction="none"),
    "huber_loss": lambda m, x, t: m.nn.functional.huber_loss(x, m.zeros_like(x), reduction="none"),
    "bce_with_logits": lambda m, x, t: m.nn.functional.binary_cross_entropy_with_logits(
        x, m.ones_like(x) * 0.5, reduction="none"),
    "bce": lambda m, x, t: m.nn.functional.binary_cross_entropy(  # NaN input raises in torch
        m.nn.functional.sigmoid(m.nan_to_num(x, nan=0.0, posinf=INF, neginf=-INF)), m.ones_like(x) * 0.25,
        reduction="none"),
    "kl_div": lambda m, x, t: m.nn.functional.kl_div(x, m.full_like(x, 0.25), reduction="none"),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(LOSSES))
def test_loss_nan_inf_like_torch(op, dtype):
    tx = torch.tensor(ROWS, dtype=getattr(torch, dtype))
    target = torch.tensor([0, 1, 0, 2, 1, 0, 1, 3, 1, 0, 2, 1, 3])
    lr, tr = LOSSES[op](lucid, to_lucid(tx), to_lucid(target)), LOSSES[op](torch, tx, target)
    if op == "bce_with_logits":  # a -inf logit: lucid's loss is the limit (inf), torch's formula gives nan
        lr, tr = _except(lr, tr, tx == -INF)
    same(lr, tr)


def test_inplace_ops_keep_nan_inf_like_torch():
    for dtype in DTYPES:
        lx, tx = _pair(VALUES, dtype)
        for m, x in ((lucid, lx), (torch, tx)):
            x.add_(1.0).mul_(2.0).div_(x.clone()).clamp_(min=-5.0)
        same(lx, tx)
        lx, tx = _pair(VALUES, dtype)
        lx.nan_to_num_(nan=3.0)
        tx.nan_to_num_(nan=3.0)
        same(lx, tx)


# ---- gradients through NaN, inf and the edges of ops' domains ---------------------------------

G = [0.0, -0.0, 1.0, -1.0, 4.0, INF, -INF, NAN]

GRADS = {
    "sqrt": (lambda m, x: m.sqrt(x), G),
    "rsqrt": (lambda m, x: m.rsqrt(x), G),
    "relu": (lambda m, x: m.relu(x), G),
    "F_relu": (lambda m, x: m.nn.functional.relu(x), G),
    "leaky_relu": (lambda m, x: m.nn.functional.leaky_relu(x, 0.1), G),
    "abs": (lambda m, x: m.abs(x), G),
    "log": (lambda m, x: m.log(x), G),
    "exp": (lambda m, x: m.exp(x), G + [1000.0]),
    "tanh": (lambda m, x: m.tanh(x), G),
    "sigmoid": (lambda m, x: m.sigmoid(x), G),
    "reciprocal": (lambda m, x: m.reciprocal(x), G),
    "pow_half": (lambda m, x: m.pow(x, 0.5), G),
    "pow2": (lambda m, x: m.pow(x, 2), G),
    "pow0": (lambda m, x: m.pow(x, 0), G),
    "pow_neg1": (lambda m, x: m.pow(x, -1), G),
    "rpow": (lambda m, x: m.pow(2.0, x), G),
    "rpow0": (lambda m, x: m.pow(0.0, x), G),
    "sign": (lambda m, x: m.sign(x), G),
    "clamp": (lambda m, x: m.clamp(x, 0.0, 1.0), G),
    "hardtanh": (lambda m, x: m.nn.functional.hardtanh(x, -1.0, 1.0), G),
    "nan_to_num": (lambda m, x: m.nan_to_num(x), G),
    "div_self": (lambda m, x: x / x, G),
    "mul_zero": (lambda m, x: x * 0.0, G),
    "div_zero": (lambda m, x: x / 0.0, G),
    "square": (lambda m, x: m.square(x), G),
    "atanh": (lambda m, x: m.atanh(x), G),
    "acos": (lambda m, x: m.acos(x), G),
    "log1p": (lambda m, x: m.log1p(x), G),
    "softplus": (lambda m, x: m.nn.functional.softplus(x), G),
    "gelu": (lambda m, x: m.nn.functional.gelu(x), G),
    "silu": (lambda m, x: m.nn.functional.silu(x), G),
    "elu": (lambda m, x: m.nn.functional.elu(x), G),
    "logsigmoid": (lambda m, x: m.nn.functional.logsigmoid(x), G),
    "where_sqrt": (lambda m, x: m.where(x > 0, m.sqrt(x), m.zeros_like(x)), G),
    "maximum_self": (lambda m, x: m.maximum(x, x), G),
    "maximum_zero": (lambda m, x: m.maximum(x, m.zeros_like(x)), G),
    "minimum_nan": (lambda m, x: m.minimum(x, m.full_like(x, NAN)), G),
    "fmax_nan": (lambda m, x: m.fmax(x, m.full_like(x, NAN)), G),
    "atan2_zero": (lambda m, x: m.atan2(x, m.zeros_like(x)), G),
    "hypot_zero": (lambda m, x: m.hypot(x, m.zeros_like(x)), G),
    "xlogy_x": (lambda m, x: m.xlogy(x, m.zeros_like(x)), G),
    "xlogy_y": (lambda m, x: m.xlogy(m.zeros_like(x), x), G),
    "pow_base_zero": (lambda m, x: m.pow(m.zeros_like(x), x), G),
    "logit": (lambda m, x: m.logit(x), [0.0, 1.0, 0.5, -1.0, 2.0, NAN, INF]),
    # reductions (each row one case)
    "sum": (lambda m, x: x.sum(1), ROWS),
    "mean": (lambda m, x: x.mean(1), ROWS),
    "prod": (lambda m, x: x.prod(1), ROWS + [[0.0, 2.0, 3.0, 4.0], [0.0, 0.0, 3.0, 4.0], [0.0, INF, 1.0, 1.0]]),
    "prod_all": (lambda m, x: x.prod(), [[0.0, 2.0], [3.0, 4.0]]),
    "amax": (lambda m, x: m.amax(x, 1), ROWS),
    "amin": (lambda m, x: m.amin(x, 1), ROWS),
    "amax_all": (lambda m, x: m.amax(x), [[1.0, 3.0], [3.0, 2.0]]),
    "max_all": (lambda m, x: m.max(x), [[1.0, 3.0], [NAN, 2.0]]),
    "max_dim": (lambda m, x: m.max(x, 1).values, UNIQUE_ROWS),
    "var": (lambda m, x: m.var(x, 1), ROWS),
    "std": (lambda m, x: m.std(x, 1), ROWS),
    "norm": (lambda m, x: m.norm(x, dim=1), ROWS),
    "norm1": (lambda m, x: m.norm(x, p=1, dim=1), ROWS),
    "norm_inf": (lambda m, x: m.norm(x, p=INF, dim=1), UNIQUE_ROWS),
    "logsumexp": (lambda m, x: m.logsumexp(x, 1), ROWS),
    "softmax": (lambda m, x: m.softmax(x, 1), ROWS),
    "log_softmax": (lambda m, x: m.log_softmax(x, 1), ROWS),
    "cumsum": (lambda m, x: m.cumsum(x, 1), ROWS),
    "cumprod": (lambda m, x: m.cumprod(x, 1), ROWS + [[2.0, 0.0, 3.0, 4.0], [0.0, 0.0, 3.0, 4.0]]),
    "normalize": (lambda m, x: m.nn.functional.normalize(x, dim=1), ROWS),
    "layer_norm": (lambda m, x: m.nn.functional.layer_norm(x, (4,)), ROWS),
    "cross_entropy": (lambda m, x: m.nn.functional.cross_entropy(
        x, m.tensor([0, 1, 0, 2, 1, 0, 1, 3, 1, 0, 2, 1, 3]), reduction="none"), ROWS),
    "mse_loss": (lambda m, x: m.nn.functional.mse_loss(x, m.zeros_like(x)), ROWS),
    "matmul": (lambda m, x: x @ m.tensor([[1.0], [0.0], [2.0], [0.0]], dtype=x.dtype), ROWS),
    "max_pool2d": (lambda m, x: m.nn.functional.max_pool2d(x.reshape(1, 1, 13, 4), 2, ceil_mode=True), ROWS),
    "avg_pool2d": (lambda m, x: m.nn.functional.avg_pool2d(x.reshape(1, 1, 13, 4), 2), ROWS),
    "conv2d": (lambda m, x: m.nn.functional.conv2d(
        x.reshape(1, 1, 13, 4), m.tensor([[[[1.0, 0.0], [0.0, -1.0]]]], dtype=x.dtype)), ROWS),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(GRADS))
def test_gradient_nan_inf_like_torch(op, dtype):
    fn, values = GRADS[op]
    ref_dtype = "float64" if dtype == "float32" and op in TORCH_FLOAT32_QUIRKS else dtype
    tx = torch.tensor(values, dtype=getattr(torch, ref_dtype), requires_grad=True)
    lx = to_lucid(tx.detach().to(getattr(torch, dtype))).requires_grad_(True)
    ty, ly = fn(torch, tx), fn(lucid, lx)
    same(ly, ty.detach().to(getattr(torch, dtype)))
    # an upstream gradient of small integers (zeros and negatives among them)
    gen = torch.Generator().manual_seed(1)
    tg = torch.randint(-2, 3, ty.shape, generator=gen).to(ty.dtype)
    ty.backward(tg)
    ly.backward(to_lucid(tg.to(getattr(torch, dtype))))
    lg, tgrad = lx.grad, tx.grad.to(getattr(torch, dtype))
    if op in ("prod", "cumprod"):
        # Rows holding inf or NaN: lucid's exact-with-zeros formula and torch's
        # exclusive products give different non-finite values (nan vs +-inf).
        lg, tgrad = _except(lg, tgrad, ~tx.detach().isfinite().all(-1, keepdim=True))
    if op in ("hardtanh", "elu"):
        # torch's hardtanh gradient at NaN is 1 in its scalar loop and 0 in its vector
        # loop (so it depends on the position); lucid's is 1. Its elu gradient at NaN
        # depends on the CPU: the upstream gradient (its scalar formula, and lucid's)
        # on AVX-512 machines, NaN from its AVX2 float64 loop.
        lg, tgrad = _except(lg, tgrad, tx.detach().isnan())
    if op == "clamp" and TORCH_VERSION < (2, 15):
        # torch before 2.15 passes clamp's gradient at the bounds (x == min or x == max);
        # 2.15, which lucid follows, does not
        lg, tgrad = _except(lg, tgrad, (tx.detach() == 0.0) | (tx.detach() == 1.0))
    same(lg, tgrad)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_gradient_flows_back_like_torch(dtype):
    # A NaN upstream gradient reaches the leaves through every kind of node.
    def f(m, x, w):
        h = m.nn.functional.relu(x @ w) + m.tanh(x).sum(1, keepdim=True)
        return (h.softmax(1) * m.full_like(h, NAN)).sum() + x.sum() * 0

    gen = torch.Generator().manual_seed(0)
    tx = torch.randn(3, 4, generator=gen, dtype=getattr(torch, dtype), requires_grad=True)
    tw = torch.randn(4, 2, generator=gen, dtype=getattr(torch, dtype), requires_grad=True)
    lx = to_lucid(tx.detach()).requires_grad_(True)
    lw = to_lucid(tw.detach()).requires_grad_(True)
    f(torch, tx, tw).backward()
    f(lucid, lx, lw).backward()
    same(lx.grad, tx.grad)
    same(lw.grad, tw.grad)


# A NaN upstream gradient must not reach inputs where the op's derivative is zero:
# torch selects (where(mask, grad, 0)) rather than multiplies (grad * mask).
X_SIGNED = [[-1.0, 2.0, 0.5, -3.0], [4.0, -0.5, 1.5, 0.25]]

ZERO_DERIVATIVE_REGIONS = {
    "relu": lambda m, x: m.relu(x),
    "F_relu": lambda m, x: m.nn.functional.relu(x),
    "threshold": lambda m, x: m.nn.functional.threshold(x, 0.0, 0.0),
    "hardtanh": lambda m, x: m.nn.functional.hardtanh(x),
    "relu6": lambda m, x: m.nn.functional.relu6(x),
    "clamp": lambda m, x: m.clamp(x, 0.0, 1.0),
    "leaky_relu0": lambda m, x: m.nn.functional.leaky_relu(x, 0.0),
    "hardshrink": lambda m, x: m.nn.functional.hardshrink(x, 1.0),
    "softshrink": lambda m, x: m.nn.functional.softshrink(x, 1.0),
    "hardsigmoid": lambda m, x: m.nn.functional.hardsigmoid(x * 4),
    "hardswish": lambda m, x: m.nn.functional.hardswish(x * 4),
    "maximum": lambda m, x: m.maximum(x, m.zeros_like(x)),
    "minimum": lambda m, x: m.minimum(x, m.zeros_like(x)),
    "where": lambda m, x: m.where(x > 0, x, m.zeros_like(x)),
    "masked_fill": lambda m, x: x.masked_fill(x < 0, 0.0),
    "amax": lambda m, x: m.amax(x, 1),
    "max_dim": lambda m, x: m.max(x, 1).values,
    "min_dim": lambda m, x: m.min(x, 1).values,
    "max_all": lambda m, x: m.max(x),
    "min_all": lambda m, x: m.min(x),
    "sign": lambda m, x: m.sign(x),
    "floor": lambda m, x: m.floor(x),
    "ceil": lambda m, x: m.ceil(x),
    "round": lambda m, x: m.round(x),
    "trunc": lambda m, x: m.trunc(x),
    "slice": lambda m, x: x[:, :2],
    "gather": lambda m, x: m.gather(x, 1, m.tensor([[0], [1]])),
    "index_select": lambda m, x: m.index_select(x, 1, m.tensor([0])),
    "max_pool1d": lambda m, x: m.nn.functional.max_pool1d(x.unsqueeze(0), 2).squeeze(0),
    "max_pool2d": lambda m, x: m.nn.functional.max_pool2d(x.reshape(1, 1, 2, 4), 2),
    "adaptive_max_pool1d": lambda m, x: m.nn.functional.adaptive_max_pool1d(x.unsqueeze(0), 1),
    "nan_to_num": lambda m, x: m.nan_to_num(x),
}


@pytest.mark.parametrize("upstream", ["all_nan", "nan_at_zero_derivative"])
@pytest.mark.parametrize("op", sorted(ZERO_DERIVATIVE_REGIONS))
def test_nan_upstream_gradient_stops_where_derivative_is_zero(op, upstream):
    fn = ZERO_DERIVATIVE_REGIONS[op]
    tx = torch.tensor(X_SIGNED, dtype=torch.float64, requires_grad=True)
    lx = to_lucid(tx.detach()).requires_grad_(True)
    ty, ly = fn(torch, tx), fn(lucid, lx)
    if upstream == "all_nan":
        tg = torch.full_like(ty, NAN)
    else:  # ones, NaN where the output does not depend on the input
        probe = torch.autograd.grad(fn(torch, tx).sum(), tx)[0]
        tg = torch.ones_like(ty)
        if ty.shape == tx.shape:
            tg = torch.where(probe == 0, torch.full_like(ty, NAN), tg)
    ty.backward(tg)
    ly.backward(to_lucid(tg))
    same(lx.grad, tx.grad, rtol=1e-6, atol=1e-12)  # torch's hardsigmoid slope is a float32 1/6
