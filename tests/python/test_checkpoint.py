"""Activation checkpointing (lucid.utils.checkpoint, torch.utils.checkpoint's): the same
values and gradients as running the function plainly (inputs and the parameters it closes
over), dropout's random draws replayed, autocast replayed, tuples of outputs and
non-tensor arguments, both variants' rules and torch's errors and warnings,
checkpoint_sequential, and upstream Lucid's spellings."""

import warnings

import pytest

import lucid
import lucid.nn as nn
from lucid.utils.checkpoint import checkpoint, checkpoint_sequential


def net(device, dropout=0.0):
    lucid.manual_seed(11)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Dropout(dropout), nn.Linear(16, 3)).to(device)


def grads_of(model, run, x):
    for p in model.parameters():
        p.grad = None
    lucid.manual_seed(5)
    out = run(x)
    (out * out).sum().backward()
    return out.detach(), [p.grad.clone() for p in model.parameters()], (x.grad.clone() if x.grad is not None else None)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_same_values_and_gradients_as_a_plain_run(use_reentrant, device):
    model = net(device, dropout=0.4)  # (random draws: replayed in the recomputation)
    x = lucid.randn(5, 6, device=device, requires_grad=True)
    plain = grads_of(model, model, x)
    x.grad = None
    ckpt = grads_of(model, lambda t: checkpoint(model, t, use_reentrant=use_reentrant), x)
    assert bool((plain[0] == ckpt[0]).all())
    for a, b in zip(plain[1], ckpt[1]):
        assert bool(lucid.allclose(a, b, rtol=1e-6, atol=1e-7))
    assert bool(lucid.allclose(plain[2], ckpt[2], rtol=1e-6, atol=1e-7))


def test_non_reentrant_trains_parameters_behind_plain_inputs(device):
    model = net(device)
    x = lucid.randn(5, 6, device=device)  # (no input requires grad: a first layer)
    plain = grads_of(model, model, x)
    ckpt = grads_of(model, lambda t: checkpoint(model, t, use_reentrant=False), x)
    for a, b in zip(plain[1], ckpt[1]):
        assert bool(lucid.allclose(a, b, rtol=1e-6, atol=1e-7))
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = checkpoint(model, x, use_reentrant=True)
    assert not out.requires_grad  # (torch's reentrant variant records nothing then)


def test_tuples_keywords_and_non_tensor_arguments(device):
    a = lucid.randn(4, device=device, requires_grad=True)
    b = lucid.randn(4, device=device, requires_grad=True)

    def f(x, scale, y, shift=0.0):
        return x.sin() * scale + shift, (x * y).exp()

    u, v = checkpoint(f, a, 3.0, b, shift=1.0, use_reentrant=False)
    (u.sum() + v.sum()).backward()
    ga, gb = a.grad.clone(), b.grad.clone()
    a.grad = b.grad = None
    u, v = f(a, 3.0, b, shift=1.0)
    (u.sum() + v.sum()).backward()
    assert bool(lucid.allclose(ga, a.grad)) and bool(lucid.allclose(gb, b.grad))
    with pytest.raises(ValueError, match="Unexpected keyword arguments: shift"):
        checkpoint(f, a, 3.0, b, shift=1.0, use_reentrant=True)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(f, a, 3.0, b, use_reentrant=True, debug=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(lambda x: x * 2, a)


def test_autocast_is_replayed_in_the_recomputation():
    model = net("cpu")
    x = lucid.randn(5, 6, requires_grad=True, device="cpu")
    with lucid.autocast("cpu", dtype=lucid.bfloat16):
        plain = model(x)
        ckpt = checkpoint(model, x, use_reentrant=False)
    assert plain.dtype == ckpt.dtype == lucid.bfloat16
    ckpt.float().sum().backward()  # (recomputed in bfloat16: the saved forward's dtypes match)
    g = x.grad.clone()
    x.grad = None
    plain.float().sum().backward()
    assert bool(lucid.allclose(g, x.grad, rtol=1e-2, atol=1e-2))


def test_checkpoint_sequential_and_upstream_names(device):
    model = net(device)
    x = lucid.randn(5, 6, device=device, requires_grad=True)
    plain = grads_of(model, model, x)
    x.grad = None
    seq = grads_of(model, lambda t: checkpoint_sequential(model, 2, t, use_reentrant=False), x)
    for a, b in zip(plain[1], seq[1]):
        assert bool(lucid.allclose(a, b, rtol=1e-6, atol=1e-7))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = lucid.utils.checkpoint(model, x, use_reentrant=False)  # (upstream Lucid calls the module's name)
        out2 = lucid.autograd.checkpoint(model, x, use_reentrant=False)
    assert bool(lucid.allclose(out, out2))
