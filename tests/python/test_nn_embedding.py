"""Embedding / EmbeddingBag against torch (outputs, weight gradients, padding_idx,
max_norm renormalisation, scale_grad_by_freq, from_pretrained, errors) and the
channel-wise / alpha dropout variants (statistics, train/eval, exact cases). The
Embedding / EmbeddingBag comparisons run on every device (module, indices and
gradients on the GPU); the dropout statistics are the CPU's."""

import math
import warnings

import pytest
import torch

import lucid
import lucid.nn as lnn
import lucid.nn.functional as LF
import torch.nn.functional as TF
from conftest import raises_by_sync, to_lucid, to_torch


def same(l, t, tol=1e-9, device=None):
    if device is not None:
        assert l.device.type == device, (l.device, device)
    assert tuple(l.shape) == tuple(t.shape)
    assert torch.allclose(to_torch(l.detach()).double(), t.detach().double(), atol=tol, rtol=tol), (l, t)


def pair(tm, lm):
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    return tm, lm


IDX = torch.tensor([[1, 2, 4, 5], [4, 3, 2, 9], [0, 0, 4, 4]])


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 4}, {"padding_idx": -1}, {"scale_grad_by_freq": True},
                                {"scale_grad_by_freq": True, "padding_idx": 0}, {"max_norm": 1.0},
                                {"max_norm": 1.5, "norm_type": 1.0}])
def test_embedding_matches_torch(kw, device):
    tm = torch.nn.Embedding(10, 3, **kw).double()
    lm = lnn.Embedding(10, 3, **kw).double()
    pair(tm, lm)
    lm.to(device)
    assert repr(lm) == repr(tm)
    assert list(lm.state_dict()) == list(tm.state_dict())
    for idx in (IDX, IDX[0], torch.tensor(7)):
        gy = torch.randn(*idx.shape, 3, dtype=torch.float64)
        ty, ly = tm(idx), lm(to_lucid(idx, device))
        same(ly, ty, device=device)
        ty.backward(gy)
        ly.backward(to_lucid(gy, device))
        same(lm.weight.grad, tm.weight.grad, device=device)
        same(lm.weight, tm.weight, device=device)  # max_norm renormalises in place


def test_embedding_padding_row_initialised_to_zero_and_no_grad():
    m = lnn.Embedding(5, 4, padding_idx=2)
    assert (m.weight[2] == 0).all().item()
    m(lucid.tensor([2, 2, 1])).sum().backward()
    assert (m.weight.grad[2] == 0).all().item()
    assert (m.weight.grad[1] == 1).all().item()


def test_embedding_functional_and_gradcheck(device):
    w = torch.randn(6, 2, dtype=torch.float64)
    idx = torch.tensor([[0, 5], [5, 3]], dtype=torch.int32)
    same(LF.embedding(to_lucid(idx, device), to_lucid(w, device)), TF.embedding(idx, w), device=device)
    lw = to_lucid(w, device).requires_grad_()
    li = to_lucid(idx, device)
    assert lucid.autograd.gradcheck(lambda w: LF.embedding(li, w), (lw,))
    # padding_idx and scale_grad_by_freq change the gradient on purpose (no finite-difference
    # check); their backward must still be differentiable
    assert lucid.autograd.gradgradcheck(lambda w: LF.embedding(li, w, scale_grad_by_freq=True), (lw,))
    assert lucid.autograd.gradgradcheck(lambda w: LF.embedding(li, w, padding_idx=5) ** 2, (lw,))


def test_embedding_from_pretrained():
    w = torch.randn(4, 3)
    tm = torch.nn.Embedding.from_pretrained(w, padding_idx=1)
    lm = lnn.Embedding.from_pretrained(to_lucid(w), padding_idx=1)
    assert not lm.weight.requires_grad
    assert repr(lm) == repr(tm)
    same(lm(lucid.tensor([1, 3])), tm(torch.tensor([1, 3])))
    lm2 = lnn.Embedding.from_pretrained(to_lucid(w), freeze=False)
    assert lm2.weight.requires_grad
    with pytest.raises(AssertionError, match="2-dimensional"):
        lnn.Embedding.from_pretrained(lucid.randn(4))


def test_embedding_errors():
    m = lnn.Embedding(5, 2)
    with raises_by_sync(IndexError):
        m(lucid.tensor([5]))
    with pytest.raises(RuntimeError, match="int64 or int32"):
        m(lucid.tensor([1.0]))
    with pytest.raises(NotImplementedError, match="sparse=True"):
        lnn.Embedding(5, 2, sparse=True)(lucid.tensor([1]))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        lnn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(AssertionError):
        torch.nn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(IndexError):
        torch.nn.Embedding(5, 2)(torch.tensor([5]))


# ---- EmbeddingBag ------------------------------------------------------------------------------

FLAT = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 7])
OFFS = torch.tensor([0, 2, 2, 6])  # bag 1 is empty


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("kw", [{}, {"padding_idx": 4}, {"include_last_offset": True}, {"max_norm": 1.0},
                                {"scale_grad_by_freq": True}])
@pytest.mark.parametrize("two_d", [False, True])
def test_embedding_bag_matches_torch(mode, kw, two_d, device):
    if kw.get("scale_grad_by_freq") and mode == "max":
        with pytest.raises(ValueError, match="max mode does not support scaling"):
            lnn.EmbeddingBag(10, 3, mode=mode, **kw).to(device)(to_lucid(IDX, device))
        return
    tm = torch.nn.EmbeddingBag(10, 3, mode=mode, **kw).double()
    lm = lnn.EmbeddingBag(10, 3, mode=mode, **kw).double()
    pair(tm, lm)
    lm.to(device)
    assert repr(lm) == repr(tm)
    if two_d:
        if kw.get("include_last_offset"):
            return
        args = (IDX,)
    else:
        args = (FLAT, torch.cat([OFFS, torch.tensor([10])]) if kw.get("include_last_offset") else OFFS)
    ty = tm(*args)
    ly = lm(*[to_lucid(a, device) for a in args])
    same(ly, ty, device=device)
    gy = torch.randn(*ty.shape, dtype=torch.float64)
    ty.backward(gy)
    ly.backward(to_lucid(gy, device))
    if kw.get("scale_grad_by_freq"):
        # torch 2.11 scales sum/mean bags' gradients otherwise (2.15 as lucid): compare with the
        # definition, an unscaled bag's gradient divided by each index's count in the input
        plain = torch.nn.EmbeddingBag(10, 3, mode=mode).double()
        plain(*args).backward(gy)
        counts = torch.bincount(args[0].reshape(-1), minlength=10).clamp(min=1).double()
        same(lm.weight.grad, plain.weight.grad / counts[:, None], device=device)
    else:
        same(lm.weight.grad, tm.weight.grad, device=device)
    same(lm.weight, tm.weight, device=device)


def test_embedding_bag_per_sample_weights(device):
    tm = torch.nn.EmbeddingBag(10, 3, mode="sum").double()
    lm = lnn.EmbeddingBag(10, 3, mode="sum").double()
    pair(tm, lm)
    lm.to(device)
    psw = torch.rand(10, dtype=torch.float64, requires_grad=True)
    lpsw = to_lucid(psw.detach(), device).requires_grad_()
    ty = tm(FLAT, OFFS, per_sample_weights=psw)
    ly = lm(to_lucid(FLAT, device), to_lucid(OFFS, device), per_sample_weights=lpsw)
    same(ly, ty, device=device)
    ty.sum().backward()
    ly.sum().backward()
    same(lpsw.grad, psw.grad, device=device)
    same(lm.weight.grad, tm.weight.grad, device=device)


def test_embedding_bag_functional_gradcheck(device):
    w = lucid.randn(10, 3, dtype=lucid.float64, requires_grad=True, device=device)
    i, o = to_lucid(FLAT, device), to_lucid(OFFS, device)
    for mode in ("sum", "mean", "max"):
        assert lucid.autograd.gradcheck(lambda w: LF.embedding_bag(i, w, o, mode=mode), (w,))
    same(LF.embedding_bag(i, to_lucid(torch.ones(10, 3), device), o), TF.embedding_bag(FLAT, torch.ones(10, 3), OFFS),
         device=device)


def test_embedding_bag_from_pretrained_and_errors():
    w = torch.randn(10, 2)
    tm = torch.nn.EmbeddingBag.from_pretrained(w, mode="sum")
    lm = lnn.EmbeddingBag.from_pretrained(to_lucid(w), mode="sum")
    assert not lm.weight.requires_grad
    same(lm(to_lucid(IDX)), tm(IDX))
    with pytest.raises(ValueError, match="offsets has to be None"):
        lm(to_lucid(IDX), to_lucid(OFFS))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        lm(to_lucid(FLAT))
    with pytest.raises(ValueError, match="1D or 2D"):
        lm(lucid.zeros(2, 2, 2, dtype=lucid.int64))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        LF.embedding_bag(to_lucid(IDX), to_lucid(w), mode="min")
    with pytest.raises(NotImplementedError, match="per_sample_weights"):
        LF.embedding_bag(to_lucid(IDX), to_lucid(w), mode="mean", per_sample_weights=lucid.ones(3, 4))
    with pytest.raises(ValueError, match="same shape as the input"):
        LF.embedding_bag(to_lucid(IDX), to_lucid(w), mode="sum", per_sample_weights=lucid.ones(3, 3))
    with pytest.raises(ValueError):
        tm(IDX, OFFS)
    with pytest.raises(ValueError):
        tm(FLAT)


# ---- dropout variants --------------------------------------------------------------------------

@pytest.mark.parametrize("name,shape", [("dropout1d", (40, 50, 6)), ("dropout2d", (40, 50, 3, 4)),
                                        ("dropout3d", (40, 50, 2, 2, 3))])
def test_channel_dropout_statistics(name, shape):
    fn = getattr(LF, name)
    x = lucid.ones(*shape)
    y = fn(x, p=0.3, training=True)
    flat = to_torch(y).reshape(shape[0], shape[1], -1)
    # every channel is either all zero or all 1 / (1 - p)
    first = flat[:, :, :1]
    assert torch.all(flat == first)
    vals = first.unique().tolist()
    assert len(vals) == 2 and vals[0] == 0.0 and vals[1] == pytest.approx(1 / 0.7)
    dropped = (first == 0).double().mean().item()
    assert abs(dropped - 0.3) < 0.05  # 2000 channels: sd ~ 0.01
    assert abs(flat.mean().item() - 1.0) < 0.1


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"])
def test_dropout_variants_exact_cases(name):
    fn = getattr(LF, name)
    tfn = getattr(TF, name)
    shape = {"dropout1d": (2, 3, 4), "dropout3d": (2, 3, 2, 2, 2)}.get(name, (2, 3, 4, 4))
    x = torch.randn(*shape)
    lx = to_lucid(x)
    assert fn(lx, 0.5, training=False) is lx
    same(fn(lx, 0.0, training=True), tfn(x, 0.0, training=True))
    same(fn(lx, 1.0, training=True), tfn(x, 1.0, training=True))
    with pytest.raises(ValueError, match="between 0 and 1"):
        fn(lx, 1.5)


def test_dropout_modules_train_eval_and_repr():
    for name in ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]:
        lm, tm = getattr(lnn, name)(0.2), getattr(torch.nn, name)(0.2)
        assert repr(lm) == repr(tm)
        shape = {"Dropout1d": (4, 8, 5), "Dropout3d": (2, 4, 2, 3, 3)}.get(name, (4, 8, 5, 5))
        x = lucid.randn(*shape)
        assert not (lm(x) == x).all().item()  # training
        lm.eval()
        assert lm(x) is x
        with pytest.raises(ValueError):
            getattr(lnn, name)(-0.1)


def test_dropout_unbatched_and_inplace_and_grad():
    x = lucid.ones(5, 7)  # [C, L] for dropout1d
    y = LF.dropout1d(x, 0.5)
    t = to_torch(y)
    assert torch.all(t == t[:, :1])
    z = lucid.ones(4, 6, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = LF.dropout2d(z, 0.5, inplace=True)
    assert r is z
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        LF.dropout1d(lucid.ones(2, 3, 4, 5))
    with pytest.warns(UserWarning, match="dropout2d"):
        LF.dropout2d(lucid.ones(2, 3, 4, 5, 6), 0.5)
    a = lucid.randn(6, 8, 5, requires_grad=True)
    out = LF.dropout1d(a, 0.4)
    out.sum().backward()
    mask = to_torch(out.detach()) != 0
    assert torch.allclose(to_torch(a.grad), mask.float() / 0.6)


def test_alpha_dropout_statistics():
    lucid.manual_seed(0)
    x = lucid.randn(400000)
    y = LF.alpha_dropout(x, 0.2, training=True)
    t = to_torch(y)
    assert abs(t.mean().item()) < 0.01
    assert abs(t.std().item() - 1.0) < 0.01
    # the dropped elements all share one value: a * (-alpha) + b = -a * alpha * (1 - p)
    alpha = 1.7580993408473766
    a = 1 / math.sqrt((alpha * alpha * 0.2 + 1) * 0.8)
    dropped = -a * alpha * (1 - 0.2)
    frac = (abs(t - dropped) < 1e-5).double().mean().item()
    assert abs(frac - 0.2) < 0.01
    # feature version: one value per channel
    f = to_torch(LF.feature_alpha_dropout(lucid.zeros(200, 30, 4), 0.5, training=True))
    assert torch.all(f == f[:, :, :1])
    assert abs((f[:, :, 0] == f[:, :, 0].min()).double().mean().item() - 0.5) < 0.05


def test_dropout_uses_lucid_generator():
    lucid.manual_seed(123)
    a = LF.dropout2d(lucid.ones(8, 16, 2, 2), 0.5)
    lucid.manual_seed(123)
    b = LF.dropout2d(lucid.ones(8, 16, 2, 2), 0.5)
    assert (a == b).all().item()
