"""nn.utils against torch.nn.utils: gradient clipping, parameter vectors, weight_norm and
spectral_norm (hook and parametrization forms, state_dict keys included), parametrize,
and Conv/Linear + BatchNorm fusion (on stand-in modules with torch's attribute names).
Tests taking `device` run on the GPU too, against torch on "cuda" or lucid's own values."""

import math
import warnings

import pytest
import torch

import lucid
import lucid.nn as lnn
from conftest import to_lucid, to_torch, default_device
from test_nn_resample import same as _same


def tdev(device):
    """torch's name for lucid's device."""
    return "cuda" if device == "gpu" else "cpu"


def ldev(t):
    """lucid's name for torch tensor t's device."""
    return "gpu" if t.is_cuda else "cpu"


def same(l, t, tol=1e-9):
    """lucid `l` matches `t`: torch's (on cuda for lucid's gpu) or lucid's own (on l's device)."""
    if isinstance(t, lucid.Tensor):
        assert l.device == t.device, (l.device, t.device)
        t = to_torch(t.detach())  # on the CPU now
    else:
        assert l.device.type == ldev(t), (l.device, t.device)
    _same(l, t.cpu(), tol)


def twin_models(seed=0, device=None):
    device = device or default_device()
    torch.manual_seed(seed)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2)).double()
    lm = lnn.Sequential(lnn.Linear(4, 3), lnn.Tanh(), lnn.Linear(3, 2)).double()
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    tm, lm = tm.to(tdev(device)), lm.to(device)
    x = torch.randn(5, 4, dtype=torch.float64, device=tdev(device))
    (tm(x) ** 2).sum().backward()
    (lm(to_lucid(x, device)) ** 2).sum().backward()
    return tm, lm


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5, float("inf"), "inf"])
@pytest.mark.parametrize("max_norm", [0.1, 1e3])
def test_clip_grad_norm(norm_type, max_norm, device):
    tm, lm = twin_models(device=device)
    tt = torch.nn.utils.clip_grad_norm_(tm.parameters(), max_norm, norm_type=norm_type)
    lt = lnn.utils.clip_grad_norm_(lm.parameters(), max_norm, norm_type=norm_type)
    same(lt, tt)
    for lp, tp in zip(lm.parameters(), tm.parameters()):
        same(lp.grad, tp.grad)
        assert lp.grad.grad_fn is None


def test_clip_grad_norm_edge_cases(device):
    p = lnn.Parameter(lucid.tensor([3.0, 4.0], device=device))
    p.grad = lucid.tensor([3.0, 4.0], device=device)
    assert float(lnn.utils.clip_grad_norm_(p, 1.0)) == 5.0     # a single tensor
    assert abs(float(p.grad.norm()) - 1.0) < 1e-5 and p.grad.device.type == device
    q = lnn.Parameter(lucid.zeros(2, device=device))            # no grad: ignored
    out = lnn.utils.clip_grad_norm_([q], 1.0)
    assert float(out) == 0.0 and q.grad is None
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        lnn.utils.clip_grad_norm_((x for x in []), 1.0)
    assert any("empty generator" in str(x.message) for x in w)
    p.grad = lucid.tensor([float("nan"), 1.0], device=device)
    with pytest.raises(RuntimeError, match="non-finite"):
        lnn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    lnn.utils.clip_grad_norm_([p], 1.0, foreach=True)             # accepted, ignored
    tp = torch.nn.Parameter(torch.tensor([3.0, 4.0]))
    tp.grad = torch.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError):
        torch.nn.utils.clip_grad_norm_([tp], 1.0, error_if_nonfinite=True)


def test_total_norm_clip_with_norm_and_clip_value(device):
    tm, lm = twin_models(1, device)
    tgrads = [p.grad for p in tm.parameters()]
    lgrads = [p.grad for p in lm.parameters()]
    for nt in (2.0, 1.0, float("inf")):
        same(lnn.utils.get_total_norm(lgrads, nt), torch.nn.utils.get_total_norm(tgrads, nt))
    total_t = torch.nn.utils.get_total_norm(tgrads)
    total_l = lnn.utils.get_total_norm(lgrads)
    torch.nn.utils.clip_grads_with_norm_(tm.parameters(), 0.3, total_t)
    lnn.utils.clip_grads_with_norm_(lm.parameters(), 0.3, total_l)
    for lp, tp in zip(lm.parameters(), tm.parameters()):
        same(lp.grad, tp.grad)
    torch.nn.utils.clip_grad_value_(tm.parameters(), 0.01)
    lnn.utils.clip_grad_value_(lm.parameters(), 0.01)
    for lp, tp in zip(lm.parameters(), tm.parameters()):
        same(lp.grad, tp.grad)
        assert float(lp.grad.abs().max()) <= 0.01


def test_parameters_to_vector_and_back(device):
    tm, lm = twin_models(device=device)
    tv = torch.nn.utils.parameters_to_vector(tm.parameters())
    lv = lnn.utils.parameters_to_vector(lm.parameters())
    same(lv, tv)
    (lv * lv).sum().backward()   # differentiable
    new = torch.randn(tv.numel(), dtype=torch.float64, device=tdev(device))
    torch.nn.utils.vector_to_parameters(new, tm.parameters())
    lnn.utils.vector_to_parameters(to_lucid(new, device), lm.parameters())
    for lp, tp in zip(lm.parameters(), tm.parameters()):
        same(lp, tp)
        assert isinstance(lp, lnn.Parameter) and lp.requires_grad
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        lnn.utils.vector_to_parameters([1.0, 2.0], lm.parameters())


def _check_step(lm, tm, x, names, device=None):
    """Forward, backward (torch with input x, lucid on `device`, by default x's); compare the
    output and the gradients of the named parameters."""
    device = device or ldev(x)
    tout, lout = tm(x), lm(to_lucid(x, device))
    assert lout.device.type == device
    _same(lout, tout.cpu())
    w = torch.randn(tout.shape, dtype=torch.float64, device=x.device)
    (tout * w).sum().backward()
    (lout * to_lucid(w, device)).sum().backward()
    lp, tp = dict(lm.named_parameters()), dict(tm.named_parameters())
    for n in names:
        assert lp[n].grad.device.type == device
        _same(lp[n].grad, tp[n].grad.cpu())


# torch's fused CUDA weight norm (dim 0 or the last) takes its norm's square root in float32
# even for float64 (measured 2.4e-8 off): the weight_norm tests' reference is torch's CPU.
@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_hook(dim, device):
    with pytest.warns(FutureWarning):
        tm = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3).double(), dim=dim)
    with pytest.warns(FutureWarning, match="deprecated"):
        lm = lnn.utils.weight_norm(lnn.Linear(4, 3).double(), dim=dim)
    assert list(lm.state_dict()) == list(tm.state_dict())
    assert tuple(lm.weight_g.shape) == tuple(tm.weight_g.shape)
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    lm = lm.to(device)
    _check_step(lm, tm, torch.randn(5, 4, dtype=torch.float64), ["weight_g", "weight_v", "bias"], device)
    with pytest.raises(RuntimeError, match="two weight_norm"):
        lnn.utils.weight_norm(lm, dim=dim)
    lnn.utils.remove_weight_norm(lm)
    torch.nn.utils.remove_weight_norm(tm)
    assert list(lm.state_dict()) == list(tm.state_dict())
    assert lm.weight.device.type == device
    _same(lm.weight, tm.weight)
    assert isinstance(lm.weight, lnn.Parameter)
    with pytest.raises(ValueError, match="not found"):
        lnn.utils.remove_weight_norm(lm)


def test_weight_norm_hook_on_conv_shaped_weight(device):
    class Stand(lnn.Module):   # a conv-shaped weight without a conv layer
        def __init__(self):
            super().__init__()
            self.weight = lnn.Parameter(lucid.randn(4, 3, 2, 2, dtype=lucid.float64))

        def forward(self, x):
            return (x.unsqueeze(1) * self.weight).sum((2, 3, 4))

    lm = lnn.utils.weight_norm(Stand().to(device), dim=2)
    tw = to_torch(lm.weight_v.detach()).to(tdev(device))
    same(lm.weight_g, torch.norm_except_dim(tw, 2, 2))
    x = lucid.randn(5, 3, 2, 2, dtype=lucid.float64, device=device)
    same(lm(x), (x.unsqueeze(1) * lm.weight_v).sum((2, 3, 4)))  # g = ||v|| initially


def test_spectral_norm_hook(device):
    torch.manual_seed(0)
    tm = torch.nn.utils.spectral_norm(torch.nn.Linear(5, 4).double(), n_power_iterations=2)
    lm = lnn.utils.spectral_norm(lnn.Linear(5, 4).double(), n_power_iterations=2)
    assert list(lm.state_dict()) == list(tm.state_dict())
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    tm, lm = tm.to(tdev(device)), lm.to(device)
    for _ in range(2):   # training: power iterations update u and v
        _check_step(lm, tm, torch.randn(3, 5, dtype=torch.float64, device=tdev(device)), ["weight_orig", "bias"])
        same(lm.weight_u, tm.weight_u)
        same(lm.weight_v, tm.weight_v)
    tm.eval()
    lm.eval()
    _check_step(lm, tm, torch.randn(3, 5, dtype=torch.float64, device=tdev(device)), ["weight_orig", "bias"])
    lnn.utils.remove_spectral_norm(lm)
    torch.nn.utils.remove_spectral_norm(tm)
    assert list(lm.state_dict()) == list(tm.state_dict())
    same(lm.weight, tm.weight)
    with pytest.raises(ValueError, match="n_power_iterations"):
        lnn.utils.spectral_norm(lnn.Linear(2, 2), n_power_iterations=0)


def test_spectral_norm_dim_and_conv_transpose_default(device):
    class ConvTranspose2d(lnn.Module):   # named like the layer: dim defaults to 1
        def __init__(self):
            super().__init__()
            # (seeded: a random matrix whose top two singular values lie close would need
            # more than 50 power iterations for the 1e-6 below)
            lucid.manual_seed(0)
            self.weight = lnn.Parameter(lucid.randn(3, 4, 2, 2, dtype=lucid.float64))

    m = lnn.utils.spectral_norm(ConvTranspose2d().to(device))
    assert tuple(m.weight_u.shape) == (4,) and tuple(m.weight_v.shape) == (12,)
    assert m.weight_u.device.type == m.weight_v.device.type == device
    # sigma of the normalised weight (as a dim-1 matrix) is about 1 after many power iterations
    m = lnn.utils.spectral_norm(ConvTranspose2d().to(device), n_power_iterations=50)
    m._forward_pre_hooks[next(iter(m._forward_pre_hooks))](m, ())
    assert m.weight.device.type == device
    mat = to_torch(m.weight.detach()).permute(1, 0, 2, 3).reshape(4, -1)
    assert abs(torch.linalg.matrix_norm(mat, 2).item() - 1.0) < 1e-6


class Symmetric(lnn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(-1, -2)

    def right_inverse(self, a):
        return a.triu()


class TSymmetric(torch.nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(-1, -2)

    def right_inverse(self, a):
        return a.triu()


class Scale(lnn.Module):
    def forward(self, x):
        return 2 * x


def test_parametrize_register_and_remove(device):
    P = lnn.utils.parametrize
    m = lnn.Linear(3, 3).double().to(device)
    w0 = m.weight.detach().clone()
    P.register_parametrization(m, "weight", Symmetric())
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight") and not P.is_parametrized(m, "bias")
    assert type(m).__name__ == "ParametrizedLinear" and P.type_before_parametrizations(m) is lnn.Linear
    assert isinstance(m, lnn.Linear)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert bool((m.weight == m.weight.T).all())
    same(m.parametrizations.weight.original, w0.triu())
    # gradients flow to the original
    x = lucid.randn(2, 3, dtype=lucid.float64, device=device)
    m(x).sum().backward()
    g = m.parametrizations.weight.original.grad
    assert g is not None and float(g.tril(-1).abs().sum()) == 0.0
    # assignment goes through right_inverse
    s = lucid.randn(3, 3, dtype=lucid.float64, device=device)
    s = s + s.T
    m.weight = s
    same(m.weight, s)
    # chaining
    P.register_parametrization(m, "weight", Scale())
    same(m.weight, 2 * s)
    with P.cached():
        assert m.weight is m.weight
    assert m.weight is not m.weight
    P.remove_parametrizations(m, "weight", leave_parametrized=True)
    assert type(m) is lnn.Linear and not hasattr(m, "parametrizations")
    assert isinstance(m.weight, lnn.Parameter)
    same(m.weight, 2 * s)
    assert list(m.state_dict()) == ["bias", "weight"]   # re-registered last, as torch
    with pytest.raises(ValueError, match="does not have a parametrization"):
        P.remove_parametrizations(m, "weight")
    with pytest.raises(ValueError, match="does not have a parameter"):
        P.register_parametrization(m, "nothing", Symmetric())
    P.register_parametrization(m, "bias", Scale())
    P.remove_parametrizations(m, "bias", leave_parametrized=False)


def test_parametrize_matches_torch_state_dict_and_grads(device):
    tm = torch.nn.Linear(3, 3).double()
    lm = lnn.Linear(3, 3).double()
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    tm, lm = tm.to(tdev(device)), lm.to(device)
    torch.nn.utils.parametrize.register_parametrization(tm, "weight", TSymmetric())
    lnn.utils.parametrize.register_parametrization(lm, "weight", Symmetric())
    assert list(lm.state_dict()) == list(tm.state_dict())
    _check_step(lm, tm, torch.randn(4, 3, dtype=torch.float64, device=tdev(device)),
                ["parametrizations.weight.original", "bias"])
    lm2 = lnn.Linear(3, 3).double().to(device)
    lnn.utils.parametrize.register_parametrization(lm2, "weight", Symmetric())
    lm2.load_state_dict({k: to_lucid(v.cpu()) for k, v in tm.state_dict().items()})  # CPU values, GPU module
    same(lm2.weight, tm.weight)


def test_parametrize_shape_check():
    class Bad(lnn.Module):
        def forward(self, x):
            return x[0]

    with pytest.raises(ValueError, match="may not change the shape"):
        lnn.utils.parametrize.register_parametrization(lnn.Linear(3, 3), "weight", Bad())
    lnn.utils.parametrize.register_parametrization(lnn.Linear(3, 3), "weight", Bad(), unsafe=True)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrizations_weight_norm(dim, device):
    tm = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 3).double(), dim=dim)
    lm = lnn.utils.parametrizations.weight_norm(lnn.Linear(4, 3).double(), dim=dim)
    assert list(lm.state_dict()) == list(tm.state_dict())
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    lm = lm.to(device)
    _check_step(lm, tm, torch.randn(5, 4, dtype=torch.float64),
                ["parametrizations.weight.original0", "parametrizations.weight.original1", "bias"], device)
    # a classic (weight_g / weight_v) checkpoint loads into the parametrized form
    with pytest.warns(FutureWarning):
        old = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3).double(), dim=dim)
    lm.load_state_dict({k: to_lucid(v, device) for k, v in old.state_dict().items()})
    assert lm.weight.device.type == device
    _same(lm.weight, old.weight)
    lnn.utils.parametrize.remove_parametrizations(lm, "weight")
    assert lm.weight.device.type == device
    _same(lm.weight, old.weight)


def test_parametrizations_spectral_norm(device):
    torch.manual_seed(1)
    tm = torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(5, 4).double())
    lm = lnn.utils.parametrizations.spectral_norm(lnn.Linear(5, 4).double())
    assert list(lm.state_dict()) == list(tm.state_dict())
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    tm, lm = tm.to(tdev(device)), lm.to(device)
    names = ["parametrizations.weight.original", "bias"]
    for _ in range(2):
        _check_step(lm, tm, torch.randn(3, 5, dtype=torch.float64, device=tdev(device)), names)
        same(lm.parametrizations.weight[0]._u, tm.parametrizations.weight[0]._u)
    tm.eval()
    lm.eval()
    _check_step(lm, tm, torch.randn(3, 5, dtype=torch.float64, device=tdev(device)), names)
    # after its 15 initial iterations, sigma(weight) is about 1 (a fixed seed: how close
    # depends on the random start vector and the matrix)
    lucid.manual_seed(0)
    m = lnn.utils.parametrizations.spectral_norm(lnn.Linear(6, 3).double().to(device), n_power_iterations=30)
    assert m.weight.device.type == device
    assert abs(torch.linalg.matrix_norm(to_torch(m.weight.detach()), 2).item() - 1.0) < 1e-6
    with pytest.raises(ValueError, match="no parameter or buffer"):
        lnn.utils.parametrizations.spectral_norm(lnn.Linear(2, 2), name="nothing")


class StandConv(lnn.Module):
    """Attributes of a Conv layer (weight [out, in, k, k], bias), no convolution."""

    def __init__(self, out_c, in_c, k, bias=True, transpose=False):
        super().__init__()
        shape = (in_c, out_c, k, k) if transpose else (out_c, in_c, k, k)
        self.weight = lnn.Parameter(lucid.randn(*shape, dtype=lucid.float64))
        self.bias = lnn.Parameter(lucid.randn(out_c, dtype=lucid.float64)) if bias else None


class StandBN(lnn.Module):
    def __init__(self, n, affine=True):
        super().__init__()
        self.num_features, self.eps = n, 1e-5
        self.weight = lnn.Parameter(lucid.rand(n, dtype=lucid.float64) + 0.5) if affine else None
        self.bias = lnn.Parameter(lucid.randn(n, dtype=lucid.float64)) if affine else None
        self.register_buffer("running_mean", lucid.randn(n, dtype=lucid.float64))
        self.register_buffer("running_var", lucid.rand(n, dtype=lucid.float64) + 0.1)


@pytest.mark.parametrize("bias,affine,transpose", [(True, True, False), (False, True, False), (True, False, False),
                                                   (True, True, True)])
def test_fuse_conv_bn(bias, affine, transpose, device):
    conv, bn = StandConv(4, 3, 2, bias, transpose).eval().to(device), StandBN(4, affine).eval().to(device)
    args = [conv.weight, conv.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias]
    targs = [to_torch(a.detach()).to(tdev(device)) if isinstance(a, lucid.Tensor) else a for a in args]
    lw, lb = lnn.utils.fuse_conv_bn_weights(*args, transpose=transpose)
    tw, tb = torch.nn.utils.fuse_conv_bn_weights(*targs, transpose=transpose)
    same(lw, tw)
    same(lb, tb)
    assert isinstance(lw, lnn.Parameter) and lw.requires_grad
    fused = lnn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
    same(fused.weight, tw)
    same(fused.bias, tb)
    assert fused is not conv and fused.weight is not conv.weight and type(fused) is StandConv
    with pytest.raises(AssertionError, match="eval"):
        lnn.utils.fuse_conv_bn_eval(conv.train(), bn)


def test_fuse_linear_bn(device):
    tl, tbn = torch.nn.Linear(3, 4).double().eval(), torch.nn.BatchNorm1d(4).double().eval()
    tbn.running_mean.normal_()
    tbn.running_var.uniform_(0.5, 2)
    tbn.weight.data.uniform_(0.5, 1.5)
    ll, lbn = lnn.Linear(3, 4).double().eval(), StandBN(4).eval()
    ll.load_state_dict({k: to_lucid(v) for k, v in tl.state_dict().items()})
    lbn.load_state_dict({k: to_lucid(v) for k, v in tbn.state_dict().items() if k != "num_batches_tracked"})
    tl, tbn, ll, lbn = tl.to(tdev(device)), tbn.to(tdev(device)), ll.to(device), lbn.to(device)
    tf, lf = torch.nn.utils.fuse_linear_bn_eval(tl, tbn), lnn.utils.fuse_linear_bn_eval(ll, lbn)
    same(lf.weight, tf.weight)
    same(lf.bias, tf.bias)
    x = torch.randn(5, 3, dtype=torch.float64, device=tdev(device))
    same(lf(to_lucid(x, device)), tbn(tl(x)))
    with pytest.raises(AssertionError, match="num_features"):
        lnn.utils.fuse_linear_bn_eval(ll, StandBN(3).eval().to(device))


@pytest.mark.parametrize("shape,omap", [((4, 4), None), ((5, 3), None), ((3, 5), None), ((4, 4), "householder"),
                                        ((5, 3), "matrix_exp"), ((4, 4), "cayley"), ((3, 5), "cayley")])
def test_parametrizations_orthogonal(shape, omap, device):
    tm, lm = torch.nn.Linear(shape[1], shape[0]).double(), lnn.Linear(shape[1], shape[0]).double()
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    tm, lm = tm.to(tdev(device)), lm.to(device)
    torch.nn.utils.parametrizations.orthogonal(tm, orthogonal_map=omap)
    lnn.utils.parametrizations.orthogonal(lm, orthogonal_map=omap)
    assert list(lm.state_dict()) == list(tm.state_dict())
    same(lm.weight, tm.weight)                       # the QR of the initial weight, as torch
    with torch.no_grad():
        # off the diagonal: householder's diagonal holds the signs (+-1) and is not trained
        off = 1 - torch.eye(*shape, dtype=torch.float64)
        tm.parametrizations.weight.original.add_((torch.randn(shape, dtype=torch.float64) * 0.3 * off).to(tdev(device)))
    lm.load_state_dict({k: to_lucid(v, device) for k, v in tm.state_dict().items()})
    _check_step(lm, tm, torch.randn(2, shape[1], dtype=torch.float64, device=tdev(device)),
                ["parametrizations.weight.original", "bias"])
    w = to_torch(lm.weight.detach())
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    assert torch.allclose(gram, torch.eye(min(shape), dtype=torch.float64), atol=1e-12)


def test_orthogonal_bad_input():
    with pytest.raises(ValueError, match="matrix or batch"):
        lnn.utils.parametrizations.orthogonal(lnn.Linear(3, 3), name="bias")
    with pytest.raises(ValueError, match="orthogonal_map"):
        lnn.utils.parametrizations.orthogonal(lnn.Linear(3, 3), orthogonal_map="qr")
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        lnn.utils.parametrizations.orthogonal(lnn.Linear(3, 3), orthogonal_map="householder", use_trivialization=False)
