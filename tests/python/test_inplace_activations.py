"""In-place activations (inplace=True) against PyTorch: the result is the input object
with its data overwritten; outputs and gradients (input, weight, bias) equal torch's
after a convolution, a linear layer and elementwise ops; and backward raises exactly
where torch's does (a leaf that requires grad, a tensor an earlier op saved, a result
modified again, a negative slope). Note [In-place activations] in
python/lucid/nn/activations_more.py explains the design. The comparisons with torch
run on every device (on the GPU: the outputs, the written input and the gradients are
GPU tensors)."""

import pytest
import torch

import lucid
from conftest import to_lucid, to_torch, default_device


# name -> (functional form, module form); each gets the library and inplace
ACTIVATIONS = {
    "relu": (lambda L, x, ip: L.nn.functional.relu(x, inplace=ip), lambda L, ip: L.nn.ReLU(inplace=ip)),
    "relu6": (lambda L, x, ip: L.nn.functional.relu6(x, inplace=ip), lambda L, ip: L.nn.ReLU6(inplace=ip)),
    "leaky_relu": (lambda L, x, ip: L.nn.functional.leaky_relu(x, 0.2, inplace=ip),
                   lambda L, ip: L.nn.LeakyReLU(0.2, inplace=ip)),
    "leaky_relu_zero_slope": (lambda L, x, ip: L.nn.functional.leaky_relu(x, 0.0, inplace=ip),
                              lambda L, ip: L.nn.LeakyReLU(0.0, inplace=ip)),
    "hardtanh": (lambda L, x, ip: L.nn.functional.hardtanh(x, -0.5, 0.7, inplace=ip),
                 lambda L, ip: L.nn.Hardtanh(-0.5, 0.7, inplace=ip)),
    "elu": (lambda L, x, ip: L.nn.functional.elu(x, 0.7, inplace=ip), lambda L, ip: L.nn.ELU(0.7, inplace=ip)),
    "selu": (lambda L, x, ip: L.nn.functional.selu(x, inplace=ip), lambda L, ip: L.nn.SELU(inplace=ip)),
    "celu": (lambda L, x, ip: L.nn.functional.celu(x, 1.3, inplace=ip), lambda L, ip: L.nn.CELU(1.3, inplace=ip)),
    "silu": (lambda L, x, ip: L.nn.functional.silu(x, inplace=ip), lambda L, ip: L.nn.SiLU(inplace=ip)),
    "mish": (lambda L, x, ip: L.nn.functional.mish(x, inplace=ip), lambda L, ip: L.nn.Mish(inplace=ip)),
    "hardsigmoid": (lambda L, x, ip: L.nn.functional.hardsigmoid(x, inplace=ip),
                    lambda L, ip: L.nn.Hardsigmoid(inplace=ip)),
    "hardswish": (lambda L, x, ip: L.nn.functional.hardswish(x, inplace=ip),
                  lambda L, ip: L.nn.Hardswish(inplace=ip)),
    "threshold": (lambda L, x, ip: L.nn.functional.threshold(x, 0.1, -2.0, inplace=ip),
                  lambda L, ip: L.nn.Threshold(0.1, -2.0, inplace=ip)),
    # a replacement above the threshold: torch differentiates through the input here
    "threshold_high_value": (lambda L, x, ip: L.nn.functional.threshold(x, 0.1, 5.0, inplace=ip),
                             lambda L, ip: L.nn.Threshold(0.1, 5.0, inplace=ip)),
    "rrelu_eval": (lambda L, x, ip: L.nn.functional.rrelu(x, 0.1, 0.3, False, inplace=ip),
                   lambda L, ip: L.nn.RReLU(0.1, 0.3, inplace=ip).eval()),
}


def _data(seed):
    g = torch.Generator().manual_seed(seed)
    return {
        "x2": torch.randn(4, 6, generator=g) * 3,
        "w2": torch.randn(5, 6, generator=g),
        "b2": torch.randn(5, generator=g),
        "r2": torch.randn(4, 5, generator=g),
        "x4": torch.randn(2, 3, 5, 5, generator=g) * 2,
        "w4": torch.randn(4, 3, 3, 3, generator=g),
        "b4": torch.randn(4, generator=g),
        "r4": torch.randn(2, 4, 5, 5, generator=g),
        "r4_pooled": torch.randn(2, 4, 1, 1, generator=g),
    }


# what produces the activation's input: (function of (lib, leaves), leaf names, weight of the loss)
PRODUCERS = {
    "linear": (lambda L, t: L.nn.functional.linear(t["x2"], t["w2"], t["b2"]), ("x2", "w2", "b2"), "r2"),
    "conv2d": (lambda L, t: L.nn.functional.conv2d(t["x4"], t["w4"], t["b4"], padding=1), ("x4", "w4", "b4"), "r4"),
    # DCGAN's discriminator block: convolution, batch norm (training), activation
    "conv2d_batch_norm": (lambda L, t: L.nn.functional.batch_norm(
        L.nn.functional.conv2d(t["x4"], t["w4"], t["b4"], padding=1), None, None, training=True),
        ("x4", "w4", "b4"), "r4"),
    "conv2d_max_pool": (lambda L, t: L.nn.functional.max_pool2d(L.nn.functional.conv2d(t["x4"], t["w4"], t["b4"]), 2),
                        ("x4", "w4", "b4"), "r4_pooled"),
    "mul_add": (lambda L, t: t["x2"][:, :5] * 2.0 + t["b2"], ("x2", "b2"), "r2"),
    "add_tensors": (lambda L, t: t["r2"] + t["b2"] * t["b2"], ("b2",), "r2"),
    # a view of a tensor with history: the write must reach the base's gradient
    "view_of_linear": (lambda L, t: L.nn.functional.linear(t["x2"], t["w2"], t["b2"])[:, 1:4], ("x2", "w2", "b2"),
                       None),
}


def _run(L, name, producer, inplace, module, seed=0, device=None):
    device = device or default_device()
    data = _data(seed)
    make, leaves, weight_name = PRODUCERS[producer]
    t = {k: (v if L is torch else to_lucid(v, device)) for k, v in data.items()}
    for k in leaves:
        t[k].requires_grad_(True)
    y = make(L, t)
    functional, module_form = ACTIVATIONS[name]
    out = module_form(L, inplace)(y) if module else functional(L, y, inplace)
    is_same = out is y
    r = t[weight_name] if weight_name is not None else t["r2"][:, :3]
    (out * r).sum().backward()
    grads = [t[k].grad for k in leaves]
    return out, y, is_same, grads


def _close(a, b, tol=1e-4, device=None):
    if device is not None:
        assert a.device.type == device, (a.device, device)
    torch.testing.assert_close(to_torch(a.detach()) if isinstance(a, lucid.Tensor) else a, b, rtol=tol, atol=tol,
                               equal_nan=True)


@pytest.mark.parametrize("module", [False, True], ids=["functional", "module"])
@pytest.mark.parametrize("inplace", [False, True], ids=["out_of_place", "inplace"])
@pytest.mark.parametrize("producer", list(PRODUCERS))
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_matches_torch(name, producer, inplace, module, device):
    lo, ly, l_same, lg = _run(lucid, name, producer, inplace, module, device=device)
    to, ty, t_same, tg = _run(torch, name, producer, inplace, module)
    assert l_same == t_same == inplace
    _close(lo, to.detach(), device=device)
    if inplace:  # the input's data is the result
        _close(ly, to.detach(), device=device)
    for a, b in zip(lg, tg):
        _close(a, b, device=device)


def _outcome(fn):
    """None when fn runs, else the exception type."""
    try:
        fn()
    except RuntimeError as e:
        return type(e), str(e)
    return None


def _same_outcome(make):
    """make(lib) must raise a RuntimeError in lucid exactly when it does in torch."""
    t = _outcome(lambda: make(torch))
    l_ = _outcome(lambda: make(lucid))
    assert (t is None) == (l_ is None), (t, l_)
    return t, l_


def _leaf(L):
    return (torch.tensor if L is torch else lucid.tensor)([-1.5, -0.2, 0.3, 2.5], requires_grad=True)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_leaf_requiring_grad_raises(name):
    t, _ = _same_outcome(lambda L: ACTIVATIONS[name][0](L, _leaf(L), True))
    assert t is not None
    t, _ = _same_outcome(lambda L: ACTIVATIONS[name][0](L, _leaf(L)[1:], True))  # a view of such a leaf
    assert t is not None


@pytest.mark.parametrize("saver", ["exp", "sigmoid", "tanh"])
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_input_saved_by_an_earlier_op_raises_in_backward(name, saver):
    def make(L):
        y = getattr(_leaf(L), saver)()  # these save their output
        ACTIVATIONS[name][0](L, y, True).sum().backward()
    t, _ = _same_outcome(make)
    assert t is not None


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_result_modified_again_raises_as_torch(name):
    # torch's leaky_relu_/elu_/selu_/celu_/rrelu_ differentiate through their result,
    # the others through a copy of their input: lucid raises for the same ones
    def make(L):
        y = _leaf(L) * 1.0
        ACTIVATIONS[name][0](L, y, True)
        y.mul_(2.0)
        y.sum().backward()
    _same_outcome(make)


@pytest.mark.parametrize("make_act", [
    lambda L, y: L.nn.functional.leaky_relu(y, -0.2, inplace=True),
    lambda L, y: L.nn.functional.elu(y, -1.0, inplace=True),
    lambda L, y: L.nn.functional.celu(y, -1.0, inplace=True),
    lambda L, y: L.nn.functional.rrelu(y, -0.5, -0.1, False, inplace=True),
], ids=["leaky_relu", "elu", "celu", "rrelu"])
def test_negative_slope_in_place_raises_in_backward_as_torch(make_act):
    def make(L):
        y = _leaf(L) * 1.0
        make_act(L, y)
        y.sum().backward()
    t, l_ = _same_outcome(make)
    assert t is not None and t[1] == l_[1]


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_no_grad_writes_in_place(name, device):
    # without a gradient a leaf that requires grad may be written, as in torch
    outs = {}
    for L in (torch, lucid):
        x = _leaf(L) if L is torch else _leaf(L).detach().to(device).requires_grad_()
        with L.no_grad():
            out = ACTIVATIONS[name][0](L, x, True)
        assert out is x
        outs[L] = out
    _close(outs[lucid], outs[torch].detach(), device=device)


def test_no_grad_in_place_does_not_record_or_copy():
    x = lucid.tensor([-1.0, 2.0])
    before = x._version
    out = lucid.nn.functional.leaky_relu(x, 0.5, inplace=True)
    assert out is x and out.grad_fn is None and x.tolist() == [-0.5, 2.0]
    assert x._version == before + 1  # one write into x


def _random_forms():
    """name -> (form, kind, scale): the random in-place forms (lucid draws the masks)."""
    F, nn = lucid.nn.functional, lucid.nn
    return {
        "dropout": (lambda x, ip: F.dropout(x, 0.4, True, ip), "mask", 1 / 0.6),
        "dropout_module": (lambda x, ip: nn.Dropout(0.4, inplace=ip)(x), "mask", 1 / 0.6),
        "dropout_p1": (lambda x, ip: F.dropout(x, 1.0, True, ip), "mask", 0.0),
        "dropout1d": (lambda x, ip: F.dropout1d(x, 0.4, True, ip), "mask", 1 / 0.6),
        # a 4-D view of the linear output: written through the view into its base
        "dropout2d": (lambda x, ip: F.dropout2d(x[..., None, None], 0.4, True, ip)[..., 0, 0], "mask", 1 / 0.6),
        "alpha_dropout": (lambda x, ip: F.alpha_dropout(x, 0.4, True, ip), "alpha", None),
        "alpha_dropout_module": (lambda x, ip: nn.AlphaDropout(0.4, inplace=ip)(x), "alpha", None),
        "rrelu_train": (lambda x, ip: F.rrelu(x, 0.1, 0.3, True, ip), "slope", None),
        "rrelu_module_train": (lambda x, ip: nn.RReLU(0.1, 0.3, inplace=ip)(x), "slope", None),
    }


@pytest.mark.parametrize("inplace", [False, True], ids=["out_of_place", "inplace"])
@pytest.mark.parametrize("name", list(_random_forms()))
def test_random_forms_in_place_after_linear(name, inplace, device):
    # the masks (and rrelu's slopes) are lucid's own, so torch's reference multiplies by
    # what lucid drew, read off the output
    data = _data(1)
    fn, kind, scale = _random_forms()[name]
    x, w, b, r = (to_lucid(data[k], device) for k in ("x2", "w2", "b2", "r2"))
    x.requires_grad_(True), w.requires_grad_(True)
    y = lucid.nn.functional.linear(x, w, b)
    y_before = to_torch(y.detach()).double()
    out = fn(y, inplace)
    assert (out is y) == (inplace and name != "dropout2d")
    (out * r).sum().backward()
    o = to_torch(out.detach()).double()
    if kind == "alpha":  # kept: a * y + c; dropped: the constant -alpha * a + c
        alpha, p = 1.7580993408473766, 0.4
        gain = 1.0 / ((alpha * alpha * p + 1) * (1 - p)) ** 0.5
        mult = ((o - (-alpha * gain + alpha * gain * p)).abs() > 1e-6).double() * gain
    elif kind == "slope":  # y for y >= 0, y * slope below
        mult = torch.where(y_before >= 0, torch.ones_like(o), o / y_before)
        assert ((mult >= 0.1 - 1e-6) & (mult <= 0.3 + 1e-6) | (y_before >= 0)).all()
    else:
        mult = (o != 0).double() * scale
    tx, tw = data["x2"].double().requires_grad_(True), data["w2"].double().requires_grad_(True)
    ty = torch.nn.functional.linear(tx, tw, data["b2"].double())
    (ty * mult * data["r2"].double()).sum().backward()
    _close(x.grad, tx.grad.float(), 1e-4, device)
    _close(w.grad, tw.grad.float(), 1e-4, device)


def test_dropout_in_place_leaf_raises():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        lucid.nn.functional.dropout(x, 0.5, True, True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        torch.nn.functional.dropout(torch.tensor([1.0, 2.0], requires_grad=True), 0.5, True, True)
