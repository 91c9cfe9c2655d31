"""torch.autograd.graph.saved_tensors_hooks, save_on_cpu and disable_saved_tensors_hooks
(Note [Saved tensor hooks]): what the hooks see and return, the gradients through them
against torch's with the same hooks, nesting, errors, freeing, threads and double backward."""

import gc
import threading
import weakref

import pytest
import torch

import lucid
from conftest import assert_close, to_lucid

X = [0.3, -1.2, 2.5, 0.7]


def _leaf(m, device=None):
    if m is torch:
        return torch.tensor(X, dtype=torch.float64, requires_grad=True)
    return lucid.tensor(X, dtype=lucid.float64, device=device, requires_grad=True)


def _grad_under(m, pack, unpack, fn, device=None):
    x = _leaf(m, device)
    with m.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = fn(m, x)
    y.sum().backward()
    return x.grad


@pytest.mark.parametrize("name,fn", [
    ("sin (saves its input)", lambda m, x: m.sin(x)),
    ("exp (saves its result)", lambda m, x: m.exp(x)),
    ("a product of two non-leaves", lambda m, x: (x * 2) * (x + 1)),
    ("tanh of a non-leaf", lambda m, x: m.tanh(x * 3)),
])
def test_gradients_through_identity_hooks_are_the_plain_gradients(device, name, fn):
    seen = []

    def pack(t):
        seen.append(t)
        return t

    got = _grad_under(lucid, pack, lambda t: t, fn, device)
    assert seen, f"{name}: no tensor was packed"
    x = _leaf(torch)
    fn(torch, x).sum().backward()
    assert_close(got, x.grad, rtol=1e-12, atol=1e-12)


def test_what_unpack_returns_is_what_backward_uses_as_in_torch(device):
    # sin saves its input: backward computes cos(saved) * grad, so a pack that shifts the
    # saved input by 1 gives cos(x + 1), in torch as in lucid.
    def shift(t):
        return t + 1

    got = _grad_under(lucid, shift, lambda t: t, lambda m, x: m.sin(x), device)
    want = _grad_under(torch, shift, lambda t: t, lambda m, x: m.sin(x))
    assert_close(got, want, rtol=1e-12, atol=1e-12)
    assert_close(got, torch.cos(torch.tensor(X, dtype=torch.float64) + 1), rtol=1e-12, atol=1e-12)


def test_unpack_receives_what_pack_returned_and_runs_on_each_read(device):
    packed, unpacked = [], []

    def pack(t):
        token = ("box", t.clone())
        packed.append(token)
        return token

    def unpack(token):
        unpacked.append(token)
        return token[1]

    x = _leaf(lucid, device)
    with lucid.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = lucid.sin(x).sum()
    assert len(packed) == 1 and not unpacked  # nothing is read before backward
    y.backward(retain_graph=True)
    assert unpacked and all(u is packed[0] for u in unpacked)
    reads = len(unpacked)
    y.backward()
    assert len(unpacked) == 2 * reads  # read again by the second backward
    assert_close(x.grad, 2 * torch.cos(torch.tensor(X, dtype=torch.float64)), rtol=1e-12, atol=1e-12)


def test_hooks_apply_only_inside_the_context(device):
    calls = []
    x = _leaf(lucid, device)
    with lucid.autograd.graph.saved_tensors_hooks(lambda t: calls.append(1) or t, lambda t: t):
        pass
    lucid.sin(x).sum().backward()
    assert calls == []


def test_nested_hooks_the_innermost_applies(device):
    outer, inner = [], []
    x = _leaf(lucid, device)
    with lucid.autograd.graph.saved_tensors_hooks(lambda t: outer.append(1) or t, lambda t: t):
        with lucid.autograd.graph.saved_tensors_hooks(lambda t: inner.append(1) or t, lambda t: t):
            a = lucid.sin(x)
        b = lucid.cos(x)
    (a + b).sum().backward()
    assert len(inner) == 1 and len(outer) == 1


def test_a_custom_function_s_saved_tensors_go_through_the_hooks(device):
    class Cube(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

    packed = []
    x = _leaf(lucid, device)
    with lucid.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t * 2, lambda t: t):
        y = Cube.apply(x)
    y.sum().backward()
    assert len(packed) == 1
    assert_close(x.grad, 3 * (2 * torch.tensor(X, dtype=torch.float64)) ** 2, rtol=1e-12, atol=1e-12)


def test_no_version_check_under_hooks_the_packed_copy_is_used(device):
    # torch: a tensor saved under hooks is not version-checked; a pack that clones keeps
    # the value at save time, so a later in-place write does not change the gradient.
    for m in (lucid, torch):
        x = _leaf(m, device) if m is lucid else _leaf(m)
        z = x * 1
        with m.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            y = m.sin(z)
        with m.no_grad():
            z.mul_(0)
        y.sum().backward()
        assert_close(x.grad if m is lucid else to_lucid(x.grad), torch.cos(torch.tensor(X, dtype=torch.float64)),
                     rtol=1e-12, atol=1e-12)
    # without hooks, the same write is an error in both
    x = _leaf(lucid, device)
    z = x * 1
    y = lucid.sin(z)
    with lucid.no_grad():
        z.mul_(0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_a_pack_hook_that_writes_its_input_in_place_raises(device):
    x = _leaf(lucid, device)
    z = x * 1
    with lucid.autograd.graph.saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
        with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input in place"):
            lucid.sin(z)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
        with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input in place"):
            torch.sin(_leaf(torch) * 1)


def test_an_unpack_hook_must_return_a_tensor(device):
    x = _leaf(lucid, device)
    with lucid.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: "not a tensor"):
        y = lucid.sin(x).sum()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor but got result of type str"):
        y.backward()


def test_errors_raised_by_the_hooks_reach_the_caller(device):
    def bad_pack(t):
        raise ValueError("pack says no")

    def bad_unpack(t):
        raise KeyError("unpack says no")

    x = _leaf(lucid, device)
    with lucid.autograd.graph.saved_tensors_hooks(bad_pack, lambda t: t):
        with pytest.raises(ValueError, match="pack says no"):
            lucid.sin(x)
    with lucid.autograd.graph.saved_tensors_hooks(lambda t: t, bad_unpack):
        y = lucid.sin(x).sum()
    with pytest.raises(KeyError, match="unpack says no"):
        y.backward()
    # the hooks were popped on the way out: plain saving works again
    x.grad = None
    lucid.sin(x).sum().backward()
    assert x.grad is not None


def test_hooks_must_be_callables():
    with pytest.raises(TypeError, match="two callables"):
        lucid.autograd.graph.saved_tensors_hooks(lambda t: t, 3)


def test_what_pack_returned_is_freed_with_the_graph(device):
    class Box:
        def __init__(self, t):
            self.t = t

    boxes = []

    def pack(t):
        b = Box(t)
        boxes.append(weakref.ref(b))
        return b

    x = _leaf(lucid, device)
    with lucid.autograd.graph.saved_tensors_hooks(pack, lambda b: b.t):
        y = lucid.sin(x).sum()
    gc.collect()
    assert boxes and all(r() is not None for r in boxes)
    y.backward()
    gc.collect()
    assert all(r() is None for r in boxes)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_hooks_are_per_thread(device):
    calls = []
    x = _leaf(lucid, device)
    seen_in_thread = []

    def other():
        with lucid.enable_grad():
            y = lucid.sin(x)
        seen_in_thread.append(len(calls))
        y.sum().backward()

    with lucid.autograd.graph.saved_tensors_hooks(lambda t: calls.append(1) or t, lambda t: t):
        th = threading.Thread(target=other)
        th.start()
        th.join()
    assert seen_in_thread == [0] and calls == []


def test_double_backward_through_hooked_saved_tensors_matches_torch(device):
    def second_derivative(m, x):
        with m.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            y = m.sin(x * 2) * x  # saves a leaf (x) and non-leaves (x * 2, sin)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        g.sum().backward()
        return g, x.grad

    g_l, gg_l = second_derivative(lucid, _leaf(lucid, device))
    g_t, gg_t = second_derivative(torch, _leaf(torch))
    assert_close(g_l.detach(), g_t.detach(), rtol=1e-12, atol=1e-12)
    assert_close(gg_l, gg_t, rtol=1e-12, atol=1e-12)


def test_save_on_cpu_keeps_the_gradients(device):
    w_t = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    x_t = torch.randn(5, 4, dtype=torch.float64)
    w = to_lucid(w_t.detach(), device).requires_grad_()
    x = to_lucid(x_t, device)
    with lucid.autograd.graph.save_on_cpu():
        loss = lucid.tanh(x @ w).pow(2).sum()
    with torch.autograd.graph.save_on_cpu():
        loss_t = torch.tanh(x_t @ w_t).pow(2).sum()
    loss.backward()
    loss_t.backward()
    assert_close(w.grad, w_t.grad, rtol=1e-12, atol=1e-12)
    assert w.grad.device.type == w.device.type


def test_save_on_cpu_moves_what_is_saved_to_the_cpu(device):
    seen = []
    hooks = lucid.autograd.graph.save_on_cpu(pin_memory=(device != "cpu"))
    pack = hooks.pack_hook

    def spying_pack(t):
        packed = pack(t)
        seen.append((t.device.type, packed[1].device.type))
        return packed

    hooks.pack_hook = spying_pack
    x = _leaf(lucid, device)
    with hooks:
        y = lucid.exp(lucid.sin(x)).sum()
    y.backward()
    assert seen and all(src == x.device.type and dst == "cpu" for src, dst in seen)
    want = torch.exp(torch.sin(torch.tensor(X, dtype=torch.float64))) * torch.cos(torch.tensor(X, dtype=torch.float64))
    assert_close(x.grad, want, rtol=1e-12, atol=1e-12)


def test_save_on_cpu_rejects_an_unknown_device_type():
    with pytest.raises(ValueError, match="device_type"):
        lucid.autograd.graph.save_on_cpu(device_type="tpu")


def test_disable_saved_tensors_hooks(device):
    with lucid.autograd.graph.disable_saved_tensors_hooks("this feature does not work with hooks"):
        with pytest.raises(RuntimeError, match="this feature does not work with hooks"):
            with lucid.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    # restored: hooks work again
    calls = []
    x = _leaf(lucid, device)
    with lucid.autograd.graph.saved_tensors_hooks(lambda t: calls.append(1) or t, lambda t: t):
        lucid.sin(x).sum().backward()
        # disabling while hooks are in use raises the message, as torch does
        with pytest.raises(RuntimeError, match="cannot disable now"):
            with lucid.autograd.graph.disable_saved_tensors_hooks("cannot disable now"):
                pass
    assert len(calls) == 1
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="cannot disable now"):
            with torch.autograd.graph.disable_saved_tensors_hooks("cannot disable now"):
                pass
    # and the failed attempt left nothing disabled
    with lucid.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass


def test_torch_and_lucid_name_the_same_api():
    for name in ("saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"):
        assert hasattr(torch.autograd.graph, name) and hasattr(lucid.autograd.graph, name)


# ---- Tensor.register_post_accumulate_grad_hook --------------------------------------------

def _accumulations(m, device=None):
    w = (m.tensor([1.0, -2.0, 0.5], requires_grad=True) if m is torch
         else lucid.tensor([1.0, -2.0, 0.5], device=device, requires_grad=True))
    seen = []
    handle = w.register_post_accumulate_grad_hook(lambda t: seen.append((t is w, t.grad.tolist())))
    (w * 3).sum().backward()
    (w * w).sum().backward()
    m.autograd.grad((w * 2).sum(), w)  # grad() accumulates nothing: no call
    handle.remove()
    (w * 3).sum().backward()  # removed: no call
    return seen


def test_post_accumulate_grad_hooks_see_the_accumulated_grad_as_torch(device):
    assert _accumulations(lucid, device) == _accumulations(torch)


def test_post_accumulate_grad_hook_steps_an_optimizer_inside_backward(device):
    # torch's recipe: each parameter is updated as soon as its gradient is ready
    def train(m, make):
        model = make()
        opts = {p: m.optim.SGD([p], lr=0.1) for p in model.parameters()}
        for p in model.parameters():
            def step(t):
                opts[t].step()
                opts[t].zero_grad()
            p.register_post_accumulate_grad_hook(step)
        x = m.arange(12, dtype=m.float64).reshape(4, 3) / 10
        if m is lucid:
            x = x.to(device)
        for _ in range(3):
            model(x).pow(2).sum().backward()
        return [p.detach() for p in model.parameters()]

    torch.manual_seed(0)
    ref = torch.nn.Linear(3, 2).double()
    state = {k: v.clone() for k, v in ref.state_dict().items()}

    def make_torch():
        net = torch.nn.Linear(3, 2).double()
        net.load_state_dict(state)
        return net

    def make_lucid():
        net = lucid.nn.Linear(3, 2).double().to(device)
        net.load_state_dict({k: to_lucid(v, device) for k, v in state.items()})
        return net

    for got, want in zip(train(lucid, make_lucid), train(torch, make_torch)):
        assert_close(got.cpu() if hasattr(got, "cpu") else got, want, rtol=1e-12, atol=1e-12)


def test_post_accumulate_grad_hook_errors():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        lucid.ones(2).register_post_accumulate_grad_hook(lambda t: None)
    w = lucid.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (w * 2).register_post_accumulate_grad_hook(lambda t: None)
    w.register_post_accumulate_grad_hook(lambda t: 1)
    with pytest.raises(RuntimeError, match="should return None"):
        w.sum().backward()


def test_post_accumulate_grad_hook_cycles_are_collected():
    # the optimizer-in-backward recipe: each parameter's hook holds its optimizer, which
    # holds the parameter
    w = lucid.ones(3, requires_grad=True)
    opt = lucid.optim.SGD([w], lr=0.1)
    w.register_post_accumulate_grad_hook(lambda t: opt.step())
    (w * 2).sum().backward()
    assert w.tolist() == pytest.approx([0.8, 0.8, 0.8])
    alive = weakref.ref(w)
    del w, opt
    gc.collect()
    assert alive() is None
