"""one_hot, normalize, cosine_similarity, pairwise_distance, pdist, bilinear and the
CosineSimilarity / PairwiseDistance / Bilinear layers against torch, on every device
(outputs and input gradients on the GPU)."""

import pytest
import torch

import lucid
import lucid.nn as lnn
import lucid.nn.functional as LF
import torch.nn.functional as TF
from conftest import to_lucid
from test_nn_resample import same


def run_both(device, lfn, tfn, *tensors, tol=1e-9):
    """test_nn_resample.run_both with the lucid inputs on `device`: outputs and the gradients
    of a random weighting of the output against torch's, all on the device."""
    tt = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in tensors]
    lt = [to_lucid(t.detach(), device).requires_grad_(t.is_floating_point()) for t in tensors]
    tout, lout = tfn(*tt), lfn(*lt)
    assert lout.device.type == device
    same(lout, tout, tol)
    if any(t.is_floating_point() for t in tensors) and tout.is_floating_point():
        w = torch.randn(tout.shape, dtype=tout.dtype)
        (tout * w).sum().backward()
        (lout * to_lucid(w, device)).sum().backward()
        for a, b in zip(lt, tt):
            if b.grad is not None:
                assert a.grad.device.type == device
                same(a.grad, b.grad, tol)
    return lout, tout


def test_one_hot(device):
    t = torch.tensor([[0, 3], [2, 1]])
    same(LF.one_hot(to_lucid(t, device)), TF.one_hot(t))
    same(LF.one_hot(to_lucid(t, device), 6), TF.one_hot(t, 6))
    same(LF.one_hot(lucid.tensor(2, device=device), 3), TF.one_hot(torch.tensor(2), 3))
    same(LF.one_hot(lucid.zeros(0, dtype=lucid.int64, device=device), 4),
         TF.one_hot(torch.zeros(0, dtype=torch.int64), 4))
    assert LF.one_hot(to_lucid(t, device)).device.type == device
    with pytest.raises(RuntimeError, match="LongTensor"):
        LF.one_hot(lucid.tensor([0.0, 1.0], device=device))
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        LF.one_hot(lucid.tensor([0, 4], device=device), 3)
    with pytest.raises(RuntimeError, match="non-negative"):
        LF.one_hot(lucid.tensor([0, -1], device=device), 3)
    with pytest.raises(RuntimeError, match="empty"):
        LF.one_hot(lucid.zeros(0, dtype=lucid.int64))
    with pytest.raises(RuntimeError):
        TF.one_hot(torch.tensor([0, 4]), 3)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf")])
def test_normalize(p, device):
    x = torch.randn(3, 4, 5, dtype=torch.float64)
    for dim in (0, 1, -1):
        run_both(device, lambda a: LF.normalize(a, p=p, dim=dim), lambda a: TF.normalize(a, p=p, dim=dim), x)
    z = torch.zeros(2, 3, dtype=torch.float64)   # eps keeps the zero rows finite
    run_both(device, lambda a: LF.normalize(a, eps=1e-3), lambda a: TF.normalize(a, eps=1e-3), z)
    lx = lucid.randn(3, 4, dtype=lucid.float64, requires_grad=True, device=device)
    assert lucid.autograd.gradcheck(lambda a: LF.normalize(a, p=p, dim=1), (lx,))


def test_cosine_similarity(device):
    a, b = torch.randn(4, 5, 3, dtype=torch.float64), torch.randn(4, 5, 3, dtype=torch.float64)
    for dim in (0, 1, -1):
        run_both(device, lambda x, y: LF.cosine_similarity(x, y, dim=dim),
                 lambda x, y: TF.cosine_similarity(x, y, dim=dim),
                 a, b)
    run_both(device, lambda x, y: LF.cosine_similarity(x, y, dim=-1), lambda x, y: TF.cosine_similarity(x, y, dim=-1),
             a, torch.randn(1, 5, 3, dtype=torch.float64))            # broadcast
    z = torch.zeros(2, 3, dtype=torch.float64)
    run_both(device, lambda x, y: LF.cosine_similarity(x, y, eps=0.5), lambda x, y: TF.cosine_similarity(x, y, eps=0.5),
             torch.randn(2, 3, dtype=torch.float64) * 0.1, z + 0.2)
    m, tm = lnn.CosineSimilarity(dim=2, eps=1e-6), torch.nn.CosineSimilarity(dim=2, eps=1e-6)
    run_both(device, m, tm, a, b)
    la, lb = (lucid.randn(3, 4, dtype=lucid.float64, requires_grad=True, device=device) for _ in range(2))
    assert lucid.autograd.gradcheck(lambda x, y: LF.cosine_similarity(x, y), (la, lb))
    with pytest.raises(RuntimeError):
        LF.cosine_similarity(lucid.randn(2, 3), lucid.randn(4, 3))


@pytest.mark.parametrize("p", [2.0, 1.0, 0.5, float("inf")])
def test_pairwise_distance_and_pdist(p, device):
    a, b = torch.randn(4, 5, dtype=torch.float64), torch.randn(4, 5, dtype=torch.float64)
    for keepdim in (False, True):
        run_both(device, lambda x, y: LF.pairwise_distance(x, y, p=p, keepdim=keepdim),
                 lambda x, y: TF.pairwise_distance(x, y, p=p, keepdim=keepdim), a, b)
    run_both(device, lambda x, y: LF.pairwise_distance(x, y, p), lambda x, y: TF.pairwise_distance(x, y, p),
             torch.randn(5, dtype=torch.float64), torch.randn(5, dtype=torch.float64))
    run_both(device, lnn.PairwiseDistance(p, eps=1e-3), torch.nn.PairwiseDistance(p, eps=1e-3), a, b)
    run_both(device, lambda x: LF.pdist(x, p), lambda x: TF.pdist(x, p), torch.randn(5, 3, dtype=torch.float64))
    la = lucid.randn(4, 3, dtype=lucid.float64, requires_grad=True, device=device)
    assert lucid.autograd.gradcheck(lambda x: LF.pdist(x, p), (la,))


def test_pdist_bad_input_and_small():
    same(LF.pdist(lucid.randn(1, 3, dtype=lucid.float64)), TF.pdist(torch.randn(1, 3, dtype=torch.float64)))
    with pytest.raises(RuntimeError, match="2D"):
        LF.pdist(lucid.randn(2, 3, 4))
    with pytest.raises(RuntimeError, match="non-negative"):
        LF.pdist(lucid.randn(2, 3), -1)


def test_bilinear(device):
    x1, x2 = torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(2, 3, 5, dtype=torch.float64)
    w, b = torch.randn(6, 4, 5, dtype=torch.float64), torch.randn(6, dtype=torch.float64)
    run_both(device, LF.bilinear, TF.bilinear, x1, x2, w, b)
    run_both(device, lambda a, c, d: LF.bilinear(a, c, d), lambda a, c, d: TF.bilinear(a, c, d), x1[0], x2[0], w)
    tm = torch.nn.Bilinear(4, 5, 6).double()
    lm = lnn.Bilinear(4, 5, 6, dtype=lucid.float64)
    assert repr(lm) == repr(tm)
    assert lm.weight.shape == tm.weight.shape and float(lm.weight.abs().max()) <= 0.5
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    lm.to(device)
    lx1, lx2 = to_lucid(x1, device), to_lucid(x2, device)
    tout, lout = tm(x1, x2), lm(lx1, lx2)
    same(lout, tout)
    tout.sum().backward()
    lout.sum().backward()
    assert lout.device.type == device
    for (_, lp), (_, tp) in zip(lm.named_parameters(), tm.named_parameters()):
        assert lp.grad.device.type == device
        same(lp.grad, tp.grad)
    assert lnn.Bilinear(2, 3, 4, bias=False).bias is None
    args = [lucid.randn(*s, dtype=lucid.float64, requires_grad=True, device=device)
            for s in ((2, 3), (2, 2), (4, 3, 2), (4,))]
    assert lucid.autograd.gradcheck(LF.bilinear, tuple(args))


def test_bilinear_bad_input():
    w = lucid.randn(6, 4, 5)
    with pytest.raises(RuntimeError, match="input1 size"):
        LF.bilinear(lucid.randn(2, 3), lucid.randn(2, 5), w)
    with pytest.raises(RuntimeError, match="input2 size"):
        LF.bilinear(lucid.randn(2, 4), lucid.randn(2, 3), w)
    with pytest.raises(RuntimeError, match="batch dimensions"):
        LF.bilinear(lucid.randn(2, 4), lucid.randn(3, 5), w)
    with pytest.raises(RuntimeError, match="bias"):
        LF.bilinear(lucid.randn(2, 4), lucid.randn(2, 5), w, lucid.randn(5))
    with pytest.raises(ValueError, match="in1_features"):
        lnn.Bilinear(0, 2, 3)
    with pytest.raises(RuntimeError):
        TF.bilinear(torch.randn(2, 3), torch.randn(2, 5), torch.randn(6, 4, 5))
