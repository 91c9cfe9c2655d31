"""The first nn layers, functional ops and initialisers against torch: identical
weights and inputs give the same outputs and gradients; repr and state_dict match.
Tests taking `device` run on the GPU too, against torch on "cuda"."""

import math

import pytest
import torch

import lucid
import lucid.nn as lnn
import lucid.nn.functional as LF
import torch.nn.functional as TF
from conftest import to_lucid, to_torch


def tdev(device):
    """torch's name for lucid's device."""
    return "cuda" if device == "gpu" else "cpu"


def same(l, t, tol=1e-9):
    """lucid `l` has torch `t`'s values, and is on its device (gpu for cuda)."""
    assert tuple(l.shape) == tuple(t.shape)
    assert l.device.type == ("gpu" if t.is_cuda else "cpu"), (l.device, t.device)
    t = t.detach().cpu()
    assert torch.allclose(to_torch(l.detach()).double(), t.double(), atol=tol, rtol=tol), (l, t)


def model(nn):
    return nn.Sequential(nn.Flatten(), nn.Linear(6, 5), nn.GELU(), nn.Linear(5, 5, bias=False), nn.SiLU(),
                         nn.LeakyReLU(0.2), nn.Linear(5, 3), nn.Tanh())


def test_mlp_outputs_and_gradients_match_torch(device):
    tm = model(torch.nn).double()
    lm = model(lnn).double()
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    tm, lm = tm.to(tdev(device)), lm.to(device)
    assert repr(lm) == repr(tm)
    x = torch.randn(4, 2, 3, dtype=torch.float64, device=tdev(device))
    target = torch.tensor([0, 2, 1, 2], device=tdev(device))
    tl = torch.nn.CrossEntropyLoss(label_smoothing=0.1)(tm(x), target)
    ll = lnn.CrossEntropyLoss(label_smoothing=0.1)(lm(to_lucid(x, device)), to_lucid(target, device))
    same(ll, tl)
    tl.backward()
    ll.backward()
    for (name, lp), (_, tp) in zip(lm.named_parameters(), tm.named_parameters()):
        same(lp.grad, tp.grad)


@pytest.mark.parametrize("kw", [{}, {"weight": True}, {"ignore_index": 1}, {"reduction": "sum"},
                                {"reduction": "none"}, {"label_smoothing": 0.3, "weight": True},
                                {"label_smoothing": 0.2, "ignore_index": 2, "reduction": "mean"}])
def test_cross_entropy_and_nll_match_torch(kw, device):
    x = torch.randn(6, 4, dtype=torch.float64, device=tdev(device), requires_grad=True)
    target = torch.tensor([0, 3, 1, 1, 2, 2], device=tdev(device))
    w = torch.rand(4, dtype=torch.float64, device=tdev(device))
    tkw = dict(kw, weight=w) if kw.get("weight") else kw
    lkw = dict(kw, weight=to_lucid(w, device)) if kw.get("weight") else kw
    lx = to_lucid(x.detach(), device).requires_grad_()
    tout = TF.cross_entropy(x, target, **tkw)
    lout = LF.cross_entropy(lx, to_lucid(target, device), **lkw)
    same(lout, tout)
    tout.sum().backward()
    lout.sum().backward()
    same(lx.grad, x.grad)
    if "label_smoothing" not in kw:
        same(LF.nll_loss(LF.log_softmax(lx, 1), to_lucid(target, device), **lkw),
             TF.nll_loss(TF.log_softmax(x, 1), target, **tkw))


@pytest.mark.parametrize("bad", [4, -2])
def test_cross_entropy_target_out_of_range_raises(bad, device):
    x = lucid.randn(3, 4, device=device)
    target = lucid.tensor([0, bad, 1], device=device)
    if device == "cpu":  # at once, as torch's CPU
        with pytest.raises(IndexError, match="out of bounds"):
            LF.cross_entropy(x, target)
    else:  # no host wait inside the loss: the kernel's device-side check, at the next sync
        with pytest.raises(IndexError, match="out of bounds"):
            LF.cross_entropy(x, target).item()
    with pytest.raises(IndexError, match="out of bounds"):
        LF.nll_loss(x, target).item()
    assert LF.cross_entropy(x, lucid.tensor([0, 3, 1], device=device)).item() > 0  # still works


def test_cross_entropy_with_probabilities_and_spatial_targets(device):
    x = torch.randn(3, 4, 2, dtype=torch.float64, device=tdev(device))
    p = torch.softmax(torch.randn(3, 4, 2, dtype=torch.float64, device=tdev(device)), 1)
    same(LF.cross_entropy(to_lucid(x, device), to_lucid(p, device)), TF.cross_entropy(x, p))
    t = torch.tensor([[0, 1], [3, 2], [1, 1]], device=tdev(device))
    same(LF.cross_entropy(to_lucid(x, device), to_lucid(t, device)), TF.cross_entropy(x, t))


def test_losses_and_activations_match_torch(device):
    a, b = (torch.randn(3, 4, dtype=torch.float64, device=tdev(device)) for _ in range(2))
    la, lb = to_lucid(a, device), to_lucid(b, device)
    for red in ("mean", "sum", "none"):
        same(LF.mse_loss(la, lb, reduction=red), TF.mse_loss(a, b, reduction=red))
        same(LF.l1_loss(la, lb, reduction=red), TF.l1_loss(a, b, reduction=red))
    same(LF.gelu(la, approximate="tanh"), TF.gelu(a, approximate="tanh"))
    same(LF.softmax(la, 1), TF.softmax(a, 1))
    same(lnn.LogSoftmax(dim=0)(la), torch.nn.LogSoftmax(dim=0)(a))
    same(lnn.ReLU()(la), torch.relu(a))
    same(lnn.Sigmoid()(la), torch.sigmoid(a))


def test_dropout_train_and_eval(device):
    x = lucid.ones(10000, device=device)
    d = lnn.Dropout(0.25)
    y = d(x)
    assert y.device.type == device
    kept = (y != 0).float().mean().item()
    assert abs(kept - 0.75) < 0.03 and abs(y.max().item() - 1 / 0.75) < 1e-6
    d.eval()
    assert d(x) is x
    with pytest.raises(ValueError):
        lnn.Dropout(1.5)


def test_bad_targets_raise(device):
    if device == "cpu":  # the GPU's check reports at the next sync (test_cross_entropy_target_out_of_range_raises)
        with pytest.raises(IndexError):
            LF.cross_entropy(lucid.randn(2, 3), lucid.tensor([0, 3]))
    with pytest.raises(ValueError):
        LF.cross_entropy(lucid.randn(2, 3, device=device), lucid.tensor([0, 1, 2], device=device))


def test_init_statistics_match_torch_definitions(device):
    w = lucid.empty(256, 128, device=device)
    lnn.init.kaiming_uniform_(w, a=math.sqrt(5))
    assert w.device.type == device
    assert w.abs().max().item() <= 1 / math.sqrt(128) + 1e-6
    lnn.init.xavier_normal_(w)
    assert abs(w.std().item() - math.sqrt(2 / 384)) < 0.005
    lnn.init.trunc_normal_(w, a=-1.0, b=1.0)
    assert w.min().item() >= -1.0 and w.max().item() <= 1.0
    q = lnn.init.orthogonal_(lucid.empty(4, 6, device=device))
    same(q @ q.t(), torch.eye(4, dtype=torch.float64, device=tdev(device)), tol=1e-5)
    assert lnn.init.calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain("leaky_relu", 0.2)
    assert lnn.init.calculate_gain("tanh") == torch.nn.init.calculate_gain("tanh")
    lnn.init.zeros_(w)
    assert w.abs().sum().item() == 0
    with pytest.raises(ValueError):
        lnn.init.xavier_uniform_(lucid.empty(3, device=device))


ACTIVATIONS = [("ReLU6", {}), ("ELU", {"alpha": 0.7}), ("SELU", {}), ("CELU", {"alpha": 1.3}), ("Mish", {}),
               ("Softplus", {"beta": 2.0, "threshold": 3.0}), ("Softsign", {}), ("Softshrink", {"lambd": 0.3}),
               ("Hardshrink", {}), ("Hardtanh", {"min_val": -0.5, "max_val": 0.8}), ("Hardswish", {}),
               ("Hardsigmoid", {}), ("Tanhshrink", {}), ("Threshold", {"threshold": 0.1, "value": 2.0}),
               ("LogSigmoid", {}), ("Softmin", {"dim": 1}), ("GLU", {"dim": 1}), ("PReLU", {}),
               ("RReLU", {}), ("Softmax2d", {}), ("ReLU", {}), ("LeakyReLU", {"negative_slope": 0.3}),
               ("GELU", {"approximate": "tanh"}), ("SiLU", {}), ("Sigmoid", {}), ("Tanh", {}),
               ("Softmax", {"dim": 0}), ("LogSoftmax", {"dim": 2})]


@pytest.mark.parametrize("name,kw", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_modules_match_torch(name, kw, device):
    # torch's CUDA hardswish and hardsigmoid take 1/6 in float32 even for float64
    # (one_sixth(1.0f / 6.0f)): their float64 reference is torch's CPU, moved to cuda
    tref = "cpu" if name in ("Hardswish", "Hardsigmoid") else tdev(device)
    tmod = getattr(torch.nn, name)(**kw).double().to(tref)
    lmod = getattr(lnn, name)(**kw).double().to(device)
    tmod.eval()
    lmod.eval()  # RReLU is deterministic in eval
    assert repr(lmod) == repr(tmod)
    x = torch.randn(2, 4, 3, 2, dtype=torch.float64, device=tdev(device)) * 3
    x[0, 0, 0, 0] = 25.0  # past softplus's threshold
    lx = to_lucid(x, device).requires_grad_()
    tx = x.clone().to(tref).requires_grad_()
    tout, lout = tmod(tx), lmod(lx)
    same(lout, tout.to(tdev(device)))
    g = torch.randn(tout.shape, dtype=torch.float64, device=tdev(device))
    tout.backward(g.to(tref))
    lout.backward(to_lucid(g, device))
    same(lx.grad, tx.grad.to(tdev(device)), tol=1e-7)


def _pos(*shape):
    return torch.rand(*shape, dtype=torch.float64) * 0.9 + 0.05


def _sign(*shape):
    return (torch.rand(*shape) > 0.5).double() * 2 - 1


LOSSES = [
    ("binary_cross_entropy", lambda: (_pos(3, 4), torch.rand(3, 4, dtype=torch.float64)), {}),
    ("binary_cross_entropy", lambda: (_pos(3, 4), torch.rand(3, 4, dtype=torch.float64)),
     {"weight": torch.rand(4, dtype=torch.float64)}),
    ("binary_cross_entropy_with_logits", lambda: (torch.randn(3, 4, dtype=torch.float64) * 5,
                                                  torch.rand(3, 4, dtype=torch.float64)),
     {"pos_weight": torch.rand(4, dtype=torch.float64) + 0.5}),
    ("kl_div", lambda: (torch.log_softmax(torch.randn(3, 4, dtype=torch.float64), 1),
                        torch.softmax(torch.randn(3, 4, dtype=torch.float64), 1)), {"reduction": "batchmean"}),
    ("kl_div", lambda: (torch.log_softmax(torch.randn(3, 4, dtype=torch.float64), 1),
                        torch.log_softmax(torch.randn(3, 4, dtype=torch.float64), 1)), {"log_target": True}),
    ("huber_loss", lambda: (torch.randn(5, dtype=torch.float64) * 2, torch.randn(5, dtype=torch.float64)),
     {"delta": 0.7}),
    ("smooth_l1_loss", lambda: (torch.randn(5, dtype=torch.float64) * 2, torch.randn(5, dtype=torch.float64)),
     {"beta": 0.5, "reduction": "sum"}),
    ("soft_margin_loss", lambda: (torch.randn(6, dtype=torch.float64), _sign(6)), {}),
    ("multilabel_soft_margin_loss", lambda: (torch.randn(3, 4, dtype=torch.float64),
                                             (torch.rand(3, 4) > 0.5).double()), {}),
    ("multilabel_margin_loss", lambda: (torch.randn(3, 4, dtype=torch.float64),
                                        torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [0, -1, 2, 2]])), {}),
    ("multi_margin_loss", lambda: (torch.randn(3, 4, dtype=torch.float64), torch.tensor([1, 0, 3])),
     {"p": 2, "margin": 0.5, "weight": torch.rand(4, dtype=torch.float64)}),
    ("margin_ranking_loss", lambda: (torch.randn(5, dtype=torch.float64), torch.randn(5, dtype=torch.float64),
                                     _sign(5)), {"margin": 0.2}),
    ("hinge_embedding_loss", lambda: (torch.randn(6, dtype=torch.float64), _sign(6)), {"margin": 0.5}),
    ("cosine_embedding_loss", lambda: (torch.randn(4, 3, dtype=torch.float64), torch.randn(4, 3, dtype=torch.float64),
                                       _sign(4)), {"margin": 0.1}),
    ("triplet_margin_loss", lambda: (torch.randn(4, 3, dtype=torch.float64), torch.randn(4, 3, dtype=torch.float64),
                                     torch.randn(4, 3, dtype=torch.float64)), {"swap": True}),
    ("poisson_nll_loss", lambda: (torch.randn(5, dtype=torch.float64), torch.rand(5, dtype=torch.float64) * 4),
     {"full": True}),
    ("poisson_nll_loss", lambda: (_pos(5), torch.rand(5, dtype=torch.float64) * 4), {"log_input": False}),
    ("gaussian_nll_loss", lambda: (torch.randn(4, 2, dtype=torch.float64), torch.randn(4, 2, dtype=torch.float64),
                                   _pos(4, 2)), {"full": True}),
]


@pytest.mark.parametrize("name,make,kw", LOSSES, ids=[f"{c[0]}{i}" for i, c in enumerate(LOSSES)])
def test_losses_match_torch(name, make, kw, device):
    args = [a.to(tdev(device)) for a in make()]
    kw = {k: v.to(tdev(device)) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    for reduction in ({"reduction": kw["reduction"]} if "reduction" in kw else {}), {"reduction": "none"}:
        tkw = dict(kw, **reduction)
        lkw = {k: to_lucid(v, device) if isinstance(v, torch.Tensor) else v for k, v in tkw.items()}
        targs = [a.clone().requires_grad_(a.is_floating_point() and i == 0) for i, a in enumerate(args)]
        largs = [to_lucid(a, device).requires_grad_(a.is_floating_point() and i == 0) for i, a in enumerate(args)]
        tout = getattr(TF, name)(*targs, **tkw)
        lout = getattr(LF, name)(*largs, **lkw)
        same(lout, tout, tol=1e-7)
        tout.sum().backward()
        lout.sum().backward()
        same(largs[0].grad, targs[0].grad, tol=1e-7)


def test_distance_functions_match_torch(device):
    a, b = (torch.randn(4, 3, dtype=torch.float64, device=tdev(device)) for _ in range(2))
    la, lb = to_lucid(a, device), to_lucid(b, device)
    same(LF.cosine_similarity(la, lb), TF.cosine_similarity(a, b))
    same(LF.pairwise_distance(la, lb, p=3.0), TF.pairwise_distance(a, b, p=3.0))


LOSS_MODULES = [("BCELoss", {}, lambda: (_pos(3, 4), torch.rand(3, 4, dtype=torch.float64))),
                ("BCEWithLogitsLoss", {"pos_weight": True}, lambda: (torch.randn(3, 4, dtype=torch.float64),
                                                                     torch.rand(3, 4, dtype=torch.float64))),
                ("HuberLoss", {"delta": 0.5, "reduction": "sum"},
                 lambda: (torch.randn(5, dtype=torch.float64), torch.randn(5, dtype=torch.float64))),
                ("MultiMarginLoss", {"margin": 0.7}, lambda: (torch.randn(3, 4, dtype=torch.float64),
                                                             torch.tensor([0, 3, 1]))),
                ("TripletMarginLoss", {"margin": 0.3}, lambda: tuple(torch.randn(4, 3, dtype=torch.float64)
                                                                     for _ in range(3))),
                ("GaussianNLLLoss", {}, lambda: (torch.randn(4, dtype=torch.float64),
                                                 torch.randn(4, dtype=torch.float64), _pos(4)))]


@pytest.mark.parametrize("name,kw,make", LOSS_MODULES, ids=[c[0] for c in LOSS_MODULES])
def test_loss_modules_match_torch(name, kw, make, device):
    args = [a.to(tdev(device)) for a in make()]
    tkw, lkw = dict(kw), dict(kw)
    if kw.get("pos_weight"):
        pw = torch.rand(4, dtype=torch.float64) + 0.5
        tkw["pos_weight"], lkw["pos_weight"] = pw, to_lucid(pw)
    tmod, lmod = getattr(torch.nn, name)(**tkw).to(tdev(device)), getattr(lnn, name)(**lkw).to(device)
    assert [k for k, _ in lmod.named_buffers()] == [k for k, _ in tmod.named_buffers()]
    assert all(b.device.type == device for b in lmod.buffers())
    same(lmod(*[to_lucid(a, device) for a in args]), tmod(*args), tol=1e-7)
