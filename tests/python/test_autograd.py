"""Autograd behaviours, each mirroring PyTorch's documented semantics and checked
against torch running the same program. The tests that compute take the `device`
fixture: on the GPU the graph runs on GPU tensors and every value and gradient that
close() compares must be on the GPU. Grad modes, threads, garbage collection and graph
metadata are device-free and run on the CPU only."""

import gc
import threading
import weakref

import pytest
import torch

import lucid
from conftest import to_lucid, to_torch, default_device


_DEVICE = "cpu"  # the running test's device (set by _device_of_test)


@pytest.fixture(autouse=True)
def _device_of_test(request):
    global _DEVICE
    callspec = getattr(request.node, "callspec", None)
    _DEVICE = callspec.params.get("device", "cpu") if callspec else "cpu"
    yield
    _DEVICE = "cpu"


def pair(data, requires_grad=True, dtype="float64", device=None):
    device = device or default_device()
    return (lucid.tensor(data, dtype=getattr(lucid, dtype), requires_grad=requires_grad, device=device),
            torch.tensor(data, dtype=getattr(torch, dtype), requires_grad=requires_grad))


def close(lt, tt, tol=1e-9):
    """lucid lt (on the running test's device) has torch tt's shape and values."""
    assert lt is not None and tt is not None
    assert lt.device.type == _DEVICE, (lt.device, _DEVICE)
    assert tuple(lt.shape) == tuple(tt.shape)
    ref = tt.detach().to(torch.float64).reshape(-1).tolist()
    got = lt.detach().double().reshape(-1).tolist()
    assert all(abs(a - b) <= tol * max(1.0, abs(b)) for a, b in zip(got, ref)), (got, ref)


# ---- the graph ------------------------------------------------------------------------

def test_leaf_and_non_leaf_flags():
    x = lucid.ones(3, requires_grad=True)
    y = x * 2
    assert x.is_leaf and x.grad_fn is None and x.requires_grad
    assert not y.is_leaf and y.requires_grad and y.grad_fn.name() == "MulBackward0"
    z = lucid.ones(3)
    assert z.is_leaf and not (z * 2).requires_grad and (z * 2).grad_fn is None


def test_next_functions_mirror_torch():
    x = lucid.ones(2, requires_grad=True)
    y = (x * x).sum()
    (fn, nr), = y.grad_fn.next_functions
    assert fn.name() == "MulBackward0" and nr == 0
    acc = fn.next_functions[0][0]
    assert acc.name() == "AccumulateGrad" and acc.variable is x
    assert fn.next_functions[1][0] is acc  # one accumulator per leaf


def test_repr_shows_grad_fn():
    x = lucid.ones(2, requires_grad=True)
    assert repr(x * 2).endswith("grad_fn=<MulBackward0>)")
    assert repr(x).endswith("requires_grad=True)")


def test_chain_of_ops_matches_torch(device):
    lx, tx = pair([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], device=device)
    lw, tw = pair([0.3, -0.2, 0.1], device=device)

    def f(m, x, w):
        h = m.tanh(x * w + 1.0) / (m.exp(x) + 2.0)
        return (m.sigmoid(h) * m.sin(x) - m.sqrt(m.abs(x) + 1)).mean(dim=0).sum()

    f(lucid, lx, lw).backward()
    f(torch, tx, tw).backward()
    close(lx.grad, tx.grad)
    close(lw.grad, tw.grad)


def test_gradients_accumulate_across_backward_calls(device):
    x = lucid.tensor([1.0, 2.0], requires_grad=True, device=device)
    (x * 3).sum().backward()
    (x * x).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]


def test_shared_input_and_diamond(device):
    lx, tx = pair([1.0, -2.0, 3.0], device=device)
    for m, x in ((lucid, lx), (torch, tx)):
        a = x * 2
        b = m.exp(a) + a * a
        (b * a).sum().backward()
    close(lx.grad, tx.grad)


def test_broadcast_gradients_sum_to_input_shapes(device):
    la = lucid.randn(4, 1, 3, requires_grad=True, dtype=lucid.float64, device=device)
    lb = lucid.randn(5, 1, requires_grad=True, dtype=lucid.float64, device=device)
    ta, tb = to_torch(la).requires_grad_(), to_torch(lb).requires_grad_()
    (la * lb - lb / (la * la + 1)).sum().backward()
    (ta * tb - tb / (ta * ta + 1)).sum().backward()
    close(la.grad, ta.grad)
    close(lb.grad, tb.grad)


def test_mixed_dtype_gradient_comes_back_in_input_dtype(device):
    a = lucid.ones(3, dtype=lucid.float32, requires_grad=True, device=device)
    b = lucid.ones(3, dtype=lucid.float64, requires_grad=True, device=device)
    (a * b).sum().backward()
    assert a.grad.dtype == lucid.float32 and b.grad.dtype == lucid.float64


def test_views_are_differentiable(device):
    lx, tx = pair([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)
    for x in (lx, tx):
        y = x.t().reshape(6)[1:5].unsqueeze(0).expand(3, 4) * x.reshape(-1)[2]
        z = y.permute(1, 0).select(1, 2) + x[1].flip(0)[0] if hasattr(x, "flip") and False else y.permute(1, 0)[:, 2]
        z.sum().backward()
    close(lx.grad, tx.grad)


def test_sum_and_mean_backward(device):
    lx, tx = pair([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)
    for x in (lx, tx):
        (x.sum(dim=1, keepdim=True) * x.mean(dim=0).sum() + x.mean()).sum().backward()
    close(lx.grad, tx.grad)


# ---- backward and grad API ---------------------------------------------------------------

def test_backward_needs_gradient_for_non_scalar(device):
    x = lucid.ones(3, requires_grad=True, device=device)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(lucid.tensor([1.0, 2.0, 3.0], device=device))
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_backward_gradient_shape_mismatch(device):
    x = lucid.ones(3, requires_grad=True, device=device)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(lucid.ones(2, device=device))


def test_backward_of_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        lucid.ones(2).sum().backward()


def test_second_backward_raises_unless_retained(device):
    x = lucid.ones(2, requires_grad=True, device=device)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 4.0]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_graph_without_saved_tensors_can_run_twice(device):
    x = lucid.ones(2, requires_grad=True, device=device)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_autograd_grad_returns_without_accumulating(device):
    x = lucid.tensor([1.0, 2.0], requires_grad=True, device=device)
    w = lucid.tensor([3.0, 4.0], requires_grad=True, device=device)
    gx, gw = lucid.autograd.grad((x * w).sum(), (x, w))
    assert gx.tolist() == [3.0, 4.0] and gw.tolist() == [1.0, 2.0]
    assert x.grad is None and w.grad is None


def test_grad_of_intermediate_and_unused(device):
    x = lucid.tensor([1.0, 2.0], requires_grad=True, device=device)
    u = lucid.tensor([1.0], requires_grad=True, device=device)
    h = x * 2
    (gh,) = lucid.autograd.grad((h * h).sum(), h, retain_graph=True)
    assert gh.tolist() == [4.0, 8.0]
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        lucid.autograd.grad((h * h).sum(), (x, u), retain_graph=True)
    gx, gu = lucid.autograd.grad((h * h).sum(), (x, u), allow_unused=True)
    assert gu is None and gx.tolist() == [8.0, 16.0]
    gx, gu = lucid.autograd.grad((x * x).sum(), (x, u), materialize_grads=True)
    assert gu.tolist() == [0.0]


def test_grad_input_that_does_not_require_grad(device):
    x = lucid.ones(2, requires_grad=True, device=device)
    with pytest.raises(RuntimeError, match="does not require grad"):
        lucid.autograd.grad((x * 2).sum(), lucid.ones(2, device=device))


def test_backward_inputs_limits_accumulation(device):
    a = lucid.ones(2, requires_grad=True, device=device)
    b = lucid.ones(2, requires_grad=True, device=device)
    (a * b * 3).sum().backward(inputs=[a])
    assert a.grad.tolist() == [3.0, 3.0] and b.grad is None
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (a * 2).sum().backward(inputs=[])


def test_create_graph_higher_derivatives_match_torch(device):
    lx, tx = pair([0.7, -1.3, 2.1], device=device)
    results = []
    for m, x in ((lucid, lx), (torch, tx)):
        y = (m.sin(x) * x * x).sum()
        (g,) = (lucid.autograd.grad if m is lucid else torch.autograd.grad)(y, x, create_graph=True)
        assert g.requires_grad
        (g2,) = (lucid.autograd.grad if m is lucid else torch.autograd.grad)(g.sum(), x, create_graph=True)
        (g3,) = (lucid.autograd.grad if m is lucid else torch.autograd.grad)((g2 * g2).sum(), x)
        results.append((g, g2, g3))
    for l, t in zip(*results):
        close(l, t)


def test_hessian_vector_product_with_create_graph(device):
    lx, tx = pair([1.0, 2.0, 3.0], device=device)
    lv, tv = pair([0.5, -1.0, 2.0], requires_grad=False, device=device)
    out = []
    for m, x, v, grad in ((lucid, lx, lv, lucid.autograd.grad), (torch, tx, tv, torch.autograd.grad)):
        f = (x * x * x).sum() + (m.exp(x) * x[0]).sum()
        (g,) = grad(f, x, create_graph=True)
        (hv,) = grad((g * v).sum(), x)
        out.append(hv)
    close(*out)


def test_backward_create_graph_leaves_grad_with_history(device):
    x = lucid.tensor([2.0], requires_grad=True, device=device)
    (x * x * x).sum().backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.tolist() == [12.0]
    (g2,) = lucid.autograd.grad(x.grad.sum(), x)
    assert g2.tolist() == [12.0]


# ---- saved tensors and in-place ---------------------------------------------------------------

def test_inplace_on_saved_tensor_raises_naming_op_and_versions(device):
    a = lucid.ones(3, requires_grad=True, device=device)
    b = a * 2
    c = b * b
    b.add_(1)
    with pytest.raises(RuntimeError) as e:
        c.sum().backward()
    msg = str(e.value)
    assert "modified by an inplace operation" in msg and "MulBackward0" in msg
    assert "version 1" in msg and "expected version 0" in msg


def test_inplace_on_leaf_requiring_grad_raises(device):
    x = lucid.ones(3, requires_grad=True, device=device)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x += 1
    with lucid.no_grad():
        x.mul_(2)  # allowed without grad mode, as in PyTorch
    assert x.tolist() == [2.0, 2.0, 2.0] and x._version == 1


def test_inplace_ops_record_and_match_torch(device):
    lx, tx = pair([0.5, 1.5, -2.0], device=device)
    lw, tw = pair([2.0, -1.0, 0.5], device=device)
    for x, w in ((lx, lw), (tx, tw)):
        y = x * 1
        y.mul_(w)
        y.add_(x)
        y.exp_()
        y.sum().backward()
    close(lx.grad, tx.grad)
    close(lw.grad, tw.grad)


def test_inplace_version_counter_bumps(device):
    x = lucid.zeros(3, device=device)
    v = x._version
    x.add_(1)
    x += 1
    x.fill_(2)
    assert x._version == v + 3


def test_augmented_assignment_keeps_identity(device):
    x = lucid.zeros(3, device=device)
    y = x
    x += 2
    assert y is x and x.tolist() == [2.0, 2.0, 2.0]


def test_inplace_result_type_must_cast(device):
    x = lucid.zeros(3, dtype=lucid.int64, device=device)
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.add_(1.5)


def test_inplace_broadcast_must_not_grow_self(device):
    x = lucid.zeros(3, device=device)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        x.add_(lucid.ones(2, 3, device=device))


def test_inplace_reads_overlapping_source_before_writing(device):
    x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    t = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    x.add_(x.t())
    t.add_(t.t().clone())
    assert x.tolist() == t.tolist()


def test_inplace_on_expanded_tensor_raises(device):
    x = lucid.zeros(1, device=device).expand(3)
    with pytest.raises(RuntimeError, match="more than one element"):
        x.add_(1)


def test_inplace_through_views_rewrites_base_history_like_torch(device):
    def run(m, dev):
        x = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True, device=dev)
        w = m.tensor([0.5, -1.0], dtype=m.float64, requires_grad=True, device=dev)
        y = x * 2
        y[1:3] = w * w          # a value with history written into a graph tensor
        y[0].mul_(3)            # in place through a view
        v = y.view(2, 2)
        v[:, 1] += v[:, 0].exp()
        z = m.zeros(3, dtype=m.float64, device=dev)
        z[0] = (x * x).sum()    # into a tensor that did not require grad
        z[2:].fill_(1.5)
        (y * y).sum().backward(retain_graph=True)
        (z * z).sum().backward()
        return x.grad, w.grad, y, z

    for l, t in zip(run(lucid, device), run(torch, "cpu")):
        close(l, t)


def test_other_views_of_a_written_base_see_the_write_like_torch(device):
    """Note [Views learn of writes]: after a recorded write into a base (directly or
    through one view), its other views' gradients include the write."""
    def run(m, dev):
        w = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True, device=dev)
        x = (w * 1).view(2, 2)
        x[0, 1] = 0.0                 # through a view of x's base: x itself must learn of it
        a = w * 2
        v = a[:2]
        a.mul_(3)                     # the base written: its view v must learn of it
        b = w * 1.5
        t = b.view(2, 2).t()
        b[1:3] = w[:2] * w[:2]        # advanced write through another view of t's base
        o = m.zeros(2, 2, dtype=m.float64, device=dev).t()
        o[0] = w[2:] * 2              # into a view of a base that did not require grad
        parts = (w * 1).chunk(2)
        out = (x * x).sum() + (v * v).sum() + (t * t.exp()).sum() + (o * o).sum() + parts[1].sum()
        out.backward()
        return w.grad, x, v, t, o, m.tensor(float(o.requires_grad), device=dev)

    for l, t in zip(run(lucid, device), run(torch, "cpu")):
        close(l, t)


def test_a_write_into_a_non_contiguous_base_with_live_views_still_runs(device):
    w = lucid.ones(2, 3, requires_grad=True, device=device)
    y = (w * 1).t().clone()  # a non-contiguous tensor that is no view
    keep = y[0]
    y.mul_(2)                 # (its views keep their history: as_strided's gradient needs a contiguous base)
    (y.sum() + keep.sum()).backward()
    assert w.grad is not None


def test_many_views_of_a_long_lived_base_do_not_pile_up(device):
    w = lucid.ones(4, requires_grad=True, device=device)
    y = w * 1
    for _ in range(1000):
        y[:2].sum()                   # views that die at once
    keep = [y[i:i + 1] for i in range(3)]
    y.mul_(2)
    assert all(k.grad_fn is not None for k in keep)
    (keep[0] + keep[1] + keep[2]).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0, 0.0]


def test_view_of_leaf_cannot_be_written_in_place(device):
    x = lucid.ones(3, requires_grad=True, device=device)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[0].mul_(2)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[1:] = 0.0


def test_write_with_history_into_untracked_view_raises(device):
    base = lucid.zeros(3, device=device)
    with lucid.no_grad():
        v = base[:2]
    with pytest.raises(RuntimeError, match="memory another tensor shares"):
        v.copy_(lucid.ones(2, requires_grad=True, device=device) * 2)


def test_copy_is_differentiable(device):
    src = lucid.tensor([1.0, 2.0], requires_grad=True, device=device)
    dst = lucid.zeros(2, dtype=lucid.float64, device=device)
    dst.copy_(src)
    assert dst.grad_fn is not None
    (dst * 3).sum().backward()
    assert src.grad.tolist() == [3.0, 3.0]


def test_to_and_clone_are_differentiable(device):
    x = lucid.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = x.to(lucid.float64).clone()
    assert y.grad_fn.name() == "CloneBackward0"
    (y * y).sum().backward()
    assert x.grad.dtype == lucid.float32 and x.grad.tolist() == [2.0, 4.0]


# ---- flags, detach, hooks -------------------------------------------------------------------------

def test_requires_grad_only_on_float_and_only_changed_on_leaves():
    with pytest.raises(RuntimeError, match="floating point and complex"):
        lucid.ones(2, dtype=lucid.int64).requires_grad_()
    y = lucid.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad = False


def test_detach_shares_memory_and_drops_history(device):
    x = lucid.ones(2, requires_grad=True, device=device)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d.add_(1)
    assert y.tolist() == [3.0, 3.0]
    y.detach_()
    assert y.grad_fn is None and not y.requires_grad


def test_data_property(device):
    x = lucid.ones(2, requires_grad=True, device=device)
    assert not x.data.requires_grad
    x.data = lucid.zeros(3, device=device)
    assert x.tolist() == [0.0, 0.0, 0.0] and x.requires_grad


def test_retain_grad_on_intermediate(device):
    x = lucid.tensor([1.0, 2.0], requires_grad=True, device=device)
    h = x * 3
    h.retain_grad()
    assert h.retains_grad
    (h * h).sum().backward()
    assert h.grad.tolist() == [6.0, 12.0]
    z = x * 3
    (z * z).sum().backward()
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert z.grad is None


def test_tensor_hooks_modify_gradients_like_torch(device):
    seen = []
    lx, tx = pair([1.0, 2.0], device=device)
    for x in (lx, tx):
        h = x * 2
        h.register_hook(lambda g: g * 10)
        handle = x.register_hook(lambda g: seen.append(g.tolist()))
        (h * h).sum().backward()
        handle.remove()
        (h.detach() * x).sum().backward()
    assert seen[0] == seen[1]
    close(lx.grad, tx.grad)


def test_hook_must_keep_shape(device):
    x = lucid.ones(2, requires_grad=True, device=device)
    y = x * 2
    y.register_hook(lambda g: lucid.ones(3, device=device))
    with pytest.raises(RuntimeError, match="hook has changed the size"):
        y.sum().backward()


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        lucid.ones(2).register_hook(lambda g: g)


def test_node_hooks(device):
    x = lucid.ones(2, requires_grad=True, device=device)
    y = x * 2
    calls = []
    y.grad_fn.register_prehook(lambda go: calls.append(("pre", go[0].tolist())))
    y.grad_fn.register_hook(lambda gi, go: calls.append(("post", gi[0].tolist())))
    y.sum().backward()
    assert calls == [("pre", [1.0, 1.0]), ("post", [2.0, 2.0])]


# ---- grad modes ------------------------------------------------------------------------------------

def test_no_grad_enable_grad_nesting_and_decorators():
    x = lucid.ones(2, requires_grad=True)
    with lucid.no_grad():
        assert not (x * 2).requires_grad
        with lucid.enable_grad():
            assert (x * 2).requires_grad
        assert not lucid.is_grad_enabled()
    assert lucid.is_grad_enabled()

    @lucid.no_grad()
    def f():
        return x * 2

    assert not f().requires_grad

    @lucid.no_grad()
    def gen():
        yield x * 2

    assert not next(gen()).requires_grad


def test_set_grad_enabled_as_function_and_context():
    x = lucid.ones(2, requires_grad=True)
    with lucid.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert lucid.is_grad_enabled()
    lucid.set_grad_enabled(False)
    try:
        assert not lucid.is_grad_enabled()
    finally:
        lucid.set_grad_enabled(True)


def test_inference_mode():
    x = lucid.ones(2, requires_grad=True)
    with lucid.inference_mode():
        assert lucid.is_inference_mode_enabled() and not (x * 2).requires_grad
    assert not lucid.is_inference_mode_enabled()
    with lucid.inference_mode(False):
        assert (x * 2).requires_grad


def test_grad_mode_is_thread_local():
    x = lucid.ones(2, requires_grad=True)
    result = {}

    def worker():
        result["enabled"] = lucid.is_grad_enabled()
        result["requires"] = (x * 2).requires_grad

    with lucid.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert result == {"enabled": True, "requires": True}


# ---- memory ------------------------------------------------------------------------------------------

def test_graph_is_freed_with_its_output():
    x = lucid.ones(1000, requires_grad=True)
    y = lucid.exp(x * 2)
    ref = weakref.ref(y)
    node = y.grad_fn
    del y
    gc.collect()
    assert ref() is None
    del node


def test_dropped_leaf_does_not_break_backward():
    x = lucid.ones(2, requires_grad=True)
    y = (x * 2).sum()
    del x
    y.backward()  # the accumulator has nowhere to write: fine


# ---- custom Function -----------------------------------------------------------------------------

class Cube(lucid.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x * x * x * scale

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x * ctx.scale, None


def test_custom_function_forward_backward(device):
    x = lucid.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]


def test_custom_function_needs_input_grad_and_non_differentiable(device):
    seen = {}

    class Split(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            seen["needs"] = ctx.needs_input_grad
            idx = a > 0
            ctx.mark_non_differentiable(idx)
            return a * 2, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            return g * 2, None

    a = lucid.tensor([1.0, -1.0], requires_grad=True, device=device)
    out, idx = Split.apply(a, lucid.ones(2, device=device))
    assert seen["needs"] == (True, False)
    assert not idx.requires_grad
    out.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0]


def test_custom_function_mark_dirty(device):
    class AddOneInPlace(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = lucid.ones(2, requires_grad=True, device=device)
    y = x * 1
    z = AddOneInPlace.apply(y)
    assert z is y and y.grad_fn.name() == "AddOneInPlaceBackward"
    (z * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_custom_function_saved_tensors_freed_and_checked(device):
    x = lucid.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = Cube.apply(x, 1.0)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.sum().backward()


def test_custom_function_wrong_number_of_grads(device):
    class Bad(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g

    a = lucid.ones(2, requires_grad=True, device=device)
    b = lucid.ones(2, requires_grad=True, device=device)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Bad.apply(a, b).sum().backward()


def test_custom_function_double_backward(device):
    class Square(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = lucid.tensor([3.0], requires_grad=True, device=device)
    (g,) = lucid.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    (g2,) = lucid.autograd.grad(g.sum(), x)
    assert g.tolist() == [6.0] and g2.tolist() == [2.0]


# ---- gradcheck and functional -------------------------------------------------------------------

def test_gradcheck_passes_and_catches_a_wrong_gradient(device):
    x = lucid.randn(3, dtype=lucid.float64, requires_grad=True, device=device)
    assert lucid.autograd.gradcheck(lambda t: (lucid.tanh(t) * t).sum(dim=0, keepdim=True), (x,))

    class Wrong(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * t

        @staticmethod
        def backward(ctx, g):
            return g  # should be 2 t g

    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        lucid.autograd.gradcheck(Wrong.apply, (x,))
    assert not lucid.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)


def test_gradgradcheck(device):
    x = lucid.randn(3, dtype=lucid.float64, requires_grad=True, device=device)
    assert lucid.autograd.gradgradcheck(lambda t: lucid.sin(t) * lucid.exp(t), (x,))


def test_functional_vjp_jvp_match_torch(device):
    import torch.autograd.functional as TF
    import lucid.autograd.functional as LF
    data = [0.3, -0.7, 1.1]
    lx, tx = pair(data, requires_grad=False, device=device)
    lv, tv = pair([1.0, 2.0, -1.0], requires_grad=False, device=device)

    def f(m):
        return lambda x: m.sin(x) * x

    for name in ("vjp", "jvp"):
        lo, lr = getattr(LF, name)(f(lucid), lx, lv)
        to, tr = getattr(TF, name)(f(torch), tx, tv)
        close(lo, to)
        close(lr, tr)


def test_functional_hvp_matches_torch(device):
    import torch.autograd.functional as TF
    import lucid.autograd.functional as LF
    lx, tx = pair([0.3, -0.7, 1.1], requires_grad=False, device=device)
    lv, tv = pair([1.0, 2.0, -1.0], requires_grad=False, device=device)
    _, lr = LF.hvp(lambda x: (lucid.exp(x) * x * x).sum(), lx, lv)
    _, tr = TF.hvp(lambda x: (torch.exp(x) * x * x).sum(), tx, tv)
    close(lr, tr)


def test_functional_jacobian_and_hessian_match_torch(device):
    import torch.autograd.functional as TF
    import lucid.autograd.functional as LF
    lx, tx = pair([0.3, -0.7, 1.1], requires_grad=False, device=device)
    close(LF.jacobian(lambda x: lucid.sin(x) * x[0], lx), TF.jacobian(lambda x: torch.sin(x) * x[0], tx))
    close(LF.hessian(lambda x: (lucid.exp(x) * x * x).sum(), lx),
          TF.hessian(lambda x: (torch.exp(x) * x * x).sum(), tx))


def test_very_deep_graphs_free_and_backward_without_recursion():
    # Freeing or walking a graph must not recurse once per node (Note [Deep graphs]).
    x = lucid.ones(1, requires_grad=True)
    y = x
    for _ in range(200_000):
        y = y * y  # each node saves its input twice
    del y
    y = x
    for _ in range(200_000):
        y = y + 1.0
    y.backward()
    assert x.grad.tolist() == [1.0]


def test_complex_gradients_use_the_conjugate_like_torch(device):
    data_a, data_b = [1 + 2j, -0.5 + 0.25j], [0.3 - 1j, 2 + 0.5j]
    grads = []
    for m in (lucid, torch):
        a = m.tensor(data_a, dtype=m.complex64, requires_grad=True)
        b = m.tensor(data_b, dtype=m.complex64, requires_grad=True)
        y = (a * b + a / b - b) * (1 - 2j)
        y.backward(m.tensor([1 + 1j, 0.5 - 2j], dtype=m.complex64))
        grads.append((a.grad.tolist(), b.grad.tolist()))
    for l, t in zip(*grads):
        assert all(abs(complex(x) - complex(y)) < 1e-5 for x, y in zip(l, t)), (l, t)


def test_complex_gradient_without_conjugate_support_raises():
    # (exp, pow and the other holomorphic ops have theirs now: test_complex.py)
    z = lucid.tensor([1 + 1j], requires_grad=True)
    with pytest.raises(NotImplementedError, match="complex"):
        lucid.remainder(z, 2.0)


def test_hook_cycles_are_collected():
    # tensor -> hook node -> hook -> tensor: a cycle through C++ (Note [Hook cycles]).
    x = lucid.randn(3, requires_grad=True)
    handle = x.register_hook(lambda g: x.detach() * 0 + g)
    y = lucid.randn(3, requires_grad=True) * 2
    y.register_hook(lambda g: y.detach() * 0 + g)
    refs = [weakref.ref(x), weakref.ref(y)]
    del x, y
    gc.collect()
    assert all(r() is None for r in refs)
    handle.remove()  # the node is gone: a no-op


def test_hook_handle_remove_and_context_manager():
    x = lucid.ones(2, requires_grad=True)
    calls = []
    with x.register_hook(lambda g: calls.append(1)):
        (x * 2).sum().backward()
    (x * 2).sum().backward()
    assert calls == [1]
