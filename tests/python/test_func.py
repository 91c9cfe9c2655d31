"""lucid.func (torch.func's function transforms, upstream Lucid's lucid.func) against
torch.func, in float64, on the CPU and the GPU: grad, grad_and_value, vjp, jvp,
linearize, jacrev, jacfwd, hessian, vmap and functional_call, nested, with pytrees,
auxiliary outputs and the errors torch raises."""

import numpy as np
import pytest
import torch
import torch.func as tf

import lucid
import lucid.func as lf

from conftest import to_lucid


def rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def pair(a, device):
    """The same float64 values as a lucid tensor on `device` and a torch CPU tensor."""
    return to_lucid(torch.tensor(a), device), torch.tensor(a)


def close(got, want, tol=1e-12):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            close(g, w, tol)
    elif isinstance(want, dict):
        assert sorted(got) == sorted(want)
        for k in want:
            close(got[k], want[k], tol)
    else:
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=tol, atol=tol)


def loss(m):
    """The same scalar function for either library (m is lucid or torch)."""
    return lambda x, y: (m.sin(x) * y).sum() + (x ** 3).sum() * 0.1


def test_grad_over_each_argument_and_several(device):
    (lx, tx), (ly, ty) = pair(rand((3, 4), 0), device), pair(rand(4, 1), device)
    close(lf.grad(loss(lucid))(lx, ly), tf.grad(loss(torch))(tx, ty))
    close(lf.grad(loss(lucid), argnums=1)(lx, ly), tf.grad(loss(torch), argnums=1)(tx, ty))
    close(lf.grad(loss(lucid), argnums=(0, 1))(lx, ly), tf.grad(loss(torch), argnums=(0, 1))(tx, ty))
    close(lf.grad(loss(lucid), argnums=-1)(lx, ly), tf.grad(loss(torch), argnums=-1)(tx, ty))
    g = lf.grad(loss(lucid))(lx, ly)
    assert not g.requires_grad and not lx.requires_grad  # the inputs are left as they were


def test_grad_and_value_with_aux_and_kwargs(device):
    (lx, tx) = pair(rand(5, 2), device)

    def f(m):
        return lambda x, scale=1.0: ((x * scale).exp().sum(), x.sum() * 3)

    (lg, (lv, la)) = lf.grad_and_value(f(lucid), has_aux=True)(lx, scale=0.5)
    (tg, (tv, ta)) = tf.grad_and_value(f(torch), has_aux=True)(tx, scale=0.5)
    close([lg, lv, la], [tg, tv, ta])
    lg2, la2 = lf.grad(f(lucid), has_aux=True)(lx, scale=0.5)
    close([lg2, la2], [tg, ta])


def test_grad_of_a_dict_of_parameters_keeps_its_structure():
    w, b, x = rand((3, 2), 3), rand(3, 4), rand((5, 2), 5)
    lp = {"w": lucid.tensor(w), "b": lucid.tensor(b)}
    tp = {"w": torch.tensor(w), "b": torch.tensor(b)}
    lx, tx = lucid.tensor(x), torch.tensor(x)

    def f(m):
        return lambda p, x: m.tanh(x @ p["w"].T + p["b"]).square().sum()

    close(lf.grad(f(lucid))(lp, lx), tf.grad(f(torch))(tp, tx))


def test_nested_grads_give_higher_derivatives(device):
    lx, tx = pair(np.array(0.7), device)
    close(lf.grad(lf.grad(lf.grad(lambda x: lucid.sin(x) * x)))(lx),
          tf.grad(tf.grad(tf.grad(lambda x: torch.sin(x) * x)))(tx))


def test_grad_where_the_output_does_not_depend_on_the_input_is_zero():
    g = lf.grad(lambda x, y: (y * 2).sum(), argnums=(0, 1))(lucid.ones(3), lucid.ones(2))
    assert g[0].tolist() == [0.0, 0.0, 0.0] and g[1].tolist() == [2.0, 2.0]


def test_grad_refuses_an_output_that_is_not_a_scalar():
    with pytest.raises(RuntimeError, match="scalar Tensor"):
        lf.grad(lambda x: x * 2)(lucid.ones(3))
    with pytest.raises(RuntimeError, match="argnums"):
        lf.grad(lambda x: x.sum(), argnums=2)(lucid.ones(3))
    with pytest.raises(RuntimeError, match="tuple: \\(output, aux\\)"):
        lf.grad(lambda x: x.sum(), has_aux=True)(lucid.ones(3))


def test_the_gradient_stays_differentiable_where_its_input_was():
    x = lucid.tensor([0.3, -1.2], dtype=lucid.float64, requires_grad=True)
    g = lf.grad(lambda v: (v ** 3).sum())(x)  # 3 x^2
    assert g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.8, -7.2])


def test_vjp_with_several_outputs_and_aux(device):
    (lx, tx), (lc, tc) = pair(rand(4, 6), device), pair(rand(4, 7), device)

    def f(m):
        return lambda x: ((m.exp(x) * x, x.sum()), x.mean())

    lo, lfn, la = lf.vjp(f(lucid), lx, has_aux=True)
    to, tfn, ta = tf.vjp(f(torch), tx, has_aux=True)
    close([lo, la], [to, ta])
    close(lfn((lc, lc.sum())), tfn((tc, tc.sum())))
    with pytest.raises(RuntimeError, match="shape"):
        lfn((lc[:2], lc.sum()))


def test_jvp_and_linearize(device):
    (lx, tx), (lt, tt) = pair(rand(5, 8), device), pair(rand(5, 9), device)

    def f(m):
        return lambda x: m.sin(x) * x.exp()

    close(lf.jvp(f(lucid), (lx,), (lt,)), tf.jvp(f(torch), (tx,), (tt,)))
    lo, lfn = lf.linearize(f(lucid), lx)
    to, tfn = tf.linearize(f(torch), tx)
    close(lo, to)
    close(lfn(lt), tfn(tt))
    close(lfn(lt * 2), tfn(tt * 2))  # (any number of tangents from one run)
    with pytest.raises(RuntimeError, match="same shape"):
        lf.jvp(f(lucid), (lx,), (lt[:2],))


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians_of_several_arguments_and_outputs(transform, device):
    (lx, tx), (ly, ty) = pair(rand((2, 3), 10), device), pair(rand(3, 11), device)

    def f(m):
        return lambda x, y: (m.tanh(x) @ y, (x * y).sum(1, keepdim=True))

    got = getattr(lf, transform)(f(lucid), argnums=(0, 1))(lx, ly)
    want = getattr(tf, transform)(f(torch), argnums=(0, 1))(tx, ty)
    close(got, want)
    close(getattr(lf, transform)(f(lucid))(lx, ly), getattr(tf, transform)(f(torch))(tx, ty))


def test_hessian(device):
    lx, tx = pair(rand(4, 12), device)
    close(lf.hessian(lambda x: (lucid.sin(x) * x ** 2).sum())(lx),
          tf.hessian(lambda x: (torch.sin(x) * x ** 2).sum())(tx))


def test_vmap_in_dims_and_out_dims(device):
    (la, ta), (lb, tb) = pair(rand((3, 5), 13), device), pair(rand((5, 4), 14), device)
    close(lf.vmap(lambda a, b: a @ b, in_dims=(0, None))(la, lb),
          tf.vmap(lambda a, b: a @ b, in_dims=(0, None))(ta, tb))
    lc, tc = pair(rand((3, 2), 20), device)
    close(lf.vmap(lambda a, c: a * c.sum(), in_dims=(1, 0))(la.T, lc),
          tf.vmap(lambda a, c: a * c.sum(), in_dims=(1, 0))(ta.T, tc))
    close(lf.vmap(lambda a: (a * 2, a.sum()), out_dims=(1, 0))(la),
          tf.vmap(lambda a: (a * 2, a.sum()), out_dims=(1, 0))(ta))
    close(lf.vmap(lambda a: a.exp(), in_dims=-1)(la), tf.vmap(lambda a: a.exp(), in_dims=-1)(ta))
    assert lucid.vmap is lf.vmap


def test_vmap_of_nested_inputs_nested_vmaps_and_per_sample_gradients(device):
    (lw, tw), (lx, tx) = pair(rand(4, 15), device), pair(rand((6, 4), 16), device)

    def f(m):
        return lambda d: (d["w"] * d["x"]).sum()

    close(lf.vmap(f(lucid), in_dims=({"w": None, "x": 0},))({"w": lw, "x": lx}),
          tf.vmap(f(torch), in_dims=({"w": None, "x": 0},))({"w": tw, "x": tx}))
    close(lf.vmap(lf.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(lx, lw),
          tf.vmap(tf.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(tx, tw))
    per_sample = lf.vmap(lf.grad(lambda w, x: (w * x).sum() ** 2), in_dims=(None, 0))(lw, lx)
    close(per_sample, tf.vmap(tf.grad(lambda w, x: (w * x).sum() ** 2), in_dims=(None, 0))(tw, tx))


def test_vmap_errors_as_torch_raises_them():
    a, b = lucid.ones(3, 2), lucid.ones(4, 2)
    with pytest.raises(ValueError, match="same size"):
        lf.vmap(lambda x, y: x + y)(a, b)
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        lf.vmap(lambda x, y: x, in_dims=(0,))(a, a)
    with pytest.raises(ValueError, match="in_dim"):
        lf.vmap(lambda x: x, in_dims=2)(a)
    with pytest.raises(ValueError, match="at least one input"):
        lf.vmap(lambda x: x, in_dims=None)(a)
    with pytest.raises(ValueError, match="only return Tensors"):
        lf.vmap(lambda x: 3)(a)
    with pytest.raises(RuntimeError, match="randomness"):
        lf.vmap(lambda x: x, randomness="sometimes")


def test_vmap_randomness_error_same_and_different():
    x = lucid.zeros(4, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        lf.vmap(lambda r: r + lucid.rand(3))(x)
    same = lf.vmap(lambda r: r + lucid.rand(3), randomness="same")(x)
    assert all(same[i].equal(same[0]) for i in range(4))
    different = lf.vmap(lambda r: r + lucid.rand(3), randomness="different")(x)
    assert not different[1].equal(different[0])


def test_functional_call_swaps_parameters_and_buffers_for_one_call():
    lucid.manual_seed(0)
    m = lucid.nn.Sequential(lucid.nn.Linear(3, 2), lucid.nn.BatchNorm1d(2)).double().eval()
    x = lucid.tensor(rand((5, 3), 17))
    before = {k: v.clone() for k, v in m.state_dict().items()}
    new = {"0.weight": lucid.tensor(rand((2, 3), 18)), "1.running_mean": lucid.tensor([1.0, -1.0], dtype=lucid.float64)}
    got = lf.functional_call(m, new, (x,))
    h = x @ new["0.weight"].T + m[0].bias
    want = (h - new["1.running_mean"]) / (m[1].running_var + m[1].eps).sqrt() * m[1].weight + m[1].bias
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    assert all(v.equal(before[k]) for k, v in m.state_dict().items())  # restored
    with pytest.raises(RuntimeError, match="missing keys"):
        lf.functional_call(m, new, (x,), strict=True)
    with pytest.raises(AttributeError, match="no parameter or buffer"):
        lf.functional_call(m, {"0.nothing": x}, (x,))
    assert all(v.equal(before[k]) for k, v in m.state_dict().items())


def test_grad_through_functional_call_is_torch_s():
    lm, tm = lucid.nn.Linear(4, 3).double(), torch.nn.Linear(4, 3).double()
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(lm.weight.detach().numpy()))
        tm.bias.copy_(torch.tensor(lm.bias.detach().numpy()))
    x = rand((6, 4), 19)
    lp = {k: v.detach() for k, v in lm.named_parameters()}
    tp = {k: v.detach() for k, v in tm.named_parameters()}
    lg = lf.grad(lambda p, x: lf.functional_call(lm, p, (x,)).tanh().sum())(lp, lucid.tensor(x))
    tg = tf.grad(lambda p, x: tf.functional_call(tm, p, (x,)).tanh().sum())(tp, torch.tensor(x))
    close(lg, tg)


def test_tied_weights_are_replaced_under_every_name():
    m = lucid.nn.Module()
    m.a = lucid.nn.Linear(2, 2, bias=False)
    m.b = lucid.nn.Linear(2, 2, bias=False)
    m.b.weight = m.a.weight
    m.forward = lambda x: m.b(m.a(x))
    w = lucid.eye(2) * 3
    out = lf.functional_call(m, {"a.weight": w}, (lucid.ones(1, 2),))
    assert out.tolist() == [[9.0, 9.0]]
    assert lf.functional_call(m, {"a.weight": w}, (lucid.ones(1, 2),), tie_weights=False).tolist() != [[9.0, 9.0]]
