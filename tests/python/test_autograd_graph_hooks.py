"""torch.autograd.graph's register_multi_grad_hook and increment_version, and which
tensor hooks a backward calls (only those of nodes it runs, and of its inputs), each
side by side with torch."""

import pytest
import torch

import lucid


def _multi_grad_calls(m):
    a = m.rand(2, 3, requires_grad=True)
    b = m.rand(2, 3, requires_grad=True)
    c = a * b
    d = a * b
    calls = []
    handle = m.autograd.graph.register_multi_grad_hook(
        (a, b, c, d), lambda grads: calls.append([g is not None for g in grads]))
    c.sum().backward(retain_graph=True)                 # d is outside this graph
    c.sum().backward(inputs=(a,), retain_graph=True)    # b's gradient is not needed
    m.autograd.grad(c.sum(), [c], retain_graph=True)    # only c
    (c.sum() + d.sum()).backward(retain_graph=True)     # all four
    handle.remove()
    (c.sum() + d.sum()).backward()
    return calls


def test_multi_grad_hook_all_waits_for_what_each_backward_computes():
    got = _multi_grad_calls(lucid)
    assert got == _multi_grad_calls(torch)
    assert got == [[True, True, True, False], [True, False, True, False], [False, False, True, False],
                   [True, True, True, True]]


def test_multi_grad_hook_all_passes_the_gradients(device):
    w = lucid.tensor([1.0, 2.0], device=device, requires_grad=True)
    v = lucid.tensor([3.0, -1.0], device=device, requires_grad=True)
    got = []
    lucid.autograd.graph.register_multi_grad_hook((w, v), lambda grads: got.append([g.tolist() for g in grads]))
    (w * v * 2).sum().backward()
    assert got == [[[6.0, -2.0], [2.0, 4.0]]]


def _any_calls(m):
    x = m.rand(2, requires_grad=True)
    y = m.rand(2, requires_grad=True)
    z = m.rand(2)  # no grad: left out in "any" mode
    calls = []
    m.autograd.graph.register_multi_grad_hook((x, y, z), lambda g: calls.append(tuple(g.shape)), mode="any")
    (x * y).sum().backward()
    (x * 3).sum().backward()
    return calls


def test_multi_grad_hook_any_runs_once_a_backward():
    assert _any_calls(lucid) == _any_calls(torch) == [(2,), (2,)]


def test_multi_grad_hook_errors():
    x = lucid.rand(2, requires_grad=True)
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        lucid.autograd.graph.register_multi_grad_hook((x,), print, mode="some")
    with pytest.raises(RuntimeError, match="does not require gradients"):
        lucid.autograd.graph.register_multi_grad_hook((x, lucid.rand(2)), print)
    with pytest.raises(RuntimeError, match="only be called during the backward pass"):
        lucid._C._weak_gradient_node(x).will_execute()
    assert lucid._C._current_graph_task_id() == -1


def _hook_calls(m):
    a = m.rand(2, requires_grad=True)
    b = m.rand(2, requires_grad=True)
    c = a * b
    calls = []
    a.register_hook(lambda g: calls.append("a"))
    b.register_hook(lambda g: calls.append("b"))
    c.register_hook(lambda g: calls.append("c"))
    c.sum().backward(inputs=(a,), retain_graph=True)
    calls.append("|")
    m.autograd.grad(c.sum(), [a], retain_graph=True)
    calls.append("|")
    c.sum().backward()
    return calls


def test_tensor_hooks_run_only_where_the_backward_needs_the_gradient():
    # b's gradient is not needed for inputs=(a,): torch calls no hook of b
    assert _hook_calls(lucid) == _hook_calls(torch)


def test_increment_version_makes_a_saved_tensor_stale(device):
    for m in (lucid, torch):
        x = (lucid.rand(3, device=device) if m is lucid else torch.rand(3)).requires_grad_()
        y = x * 1
        z = y.sin()  # saves y
        before = y._version
        m.autograd.graph.increment_version(y)
        assert y._version == before + 1
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
    a, b = lucid.rand(2), lucid.rand(2)
    lucid.autograd.graph.increment_version([a, b])
    assert a._version == 1 and b._version == 1


def _mutated_after_save(m, device=None):
    x = (lucid.tensor([0.3, -1.2, 2.0], device=device) if m is lucid else torch.tensor([0.3, -1.2, 2.0]))
    x.requires_grad_()
    with m.autograd.graph.allow_mutation_on_saved_tensors():
        y = x * 1
        z = y.sin()  # saves y
        with m.no_grad():
            y.add_(1.0)  # written after it was saved
        z.sum().backward()
    return x.grad.tolist(), y.tolist()


def test_allow_mutation_on_saved_tensors_uses_the_saved_values(device):
    got, want = _mutated_after_save(lucid, device), _mutated_after_save(torch)
    assert got[0] == pytest.approx(want[0]) and got[1] == pytest.approx(want[1])
    # outside the context the same program is an error, in both
    x = lucid.tensor([0.3], device=device, requires_grad=True)
    y = x * 1
    z = y.sin()
    with lucid.no_grad():
        y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
