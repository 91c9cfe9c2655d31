"""AdaptiveLogSoftmaxWithLoss against torch's: the same weights (through state_dict, whose keys
match) give the same output, loss, gradients (batched and not), log_prob and predict; bad
cutoffs, shapes and targets raise as torch's. Tests taking `device` run on the GPU too (torch's
twin on "cuda", except where lucid must raise: torch's stays on the CPU)."""

import pytest
import torch

import lucid
from conftest import default_device


def tdev(device):
    """torch's name for lucid's device."""
    return "cuda" if device == "gpu" else "cpu"


def twins(in_features=8, n_classes=10, cutoffs=(3, 6), div_value=2.0, head_bias=False, seed=0, device=None):
    """lucid's module on `device` and torch's on its twin, with the same weights."""
    device = device or default_device()
    torch.manual_seed(seed)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs), div_value, head_bias)
    ours = lucid.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs), div_value, head_bias)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: lucid.tensor(v.tolist()).reshape(tuple(v.shape)) for k, v in theirs.state_dict().items()})
    return ours.to(device), theirs.to(tdev(device))


def close(a, b, tol=1e-5):
    assert tuple(a.shape) == tuple(b.shape)
    assert a.device.type == ("gpu" if b.is_cuda else "cpu"), (a.device, b.device)
    assert a.flatten().tolist() == pytest.approx(b.detach().flatten().tolist(), abs=tol)


@pytest.mark.parametrize("head_bias", [False, True])
@pytest.mark.parametrize("target", [[0, 9, 4, 2, 7, 5], [1, 2, 0, 1, 0, 2], [8, 9, 6, 7, 8, 9]],
                         ids=["mixed", "shortlist-only", "last-cluster-only"])
def test_forward_and_backward_match_torch(target, head_bias, device):
    ours, theirs = twins(head_bias=head_bias, device=device)
    torch.manual_seed(1)
    x = torch.randn(6, 8).to(tdev(device)).requires_grad_()
    lx = lucid.tensor(x.tolist(), device=device, requires_grad=True)
    out, tout = ours(lx, lucid.tensor(target, device=device)), theirs(x, torch.tensor(target, device=tdev(device)))
    close(out.output, tout.output)
    close(out.loss, tout.loss)
    out.loss.backward()
    tout.loss.backward()
    close(lx.grad, x.grad)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        assert (p.grad is None) == (tp.grad is None)  # a cluster no target falls in gets none
        if tp.grad is not None:
            close(p.grad, tp.grad)


def test_unbatched_input_and_one_row_match_torch(device):
    ours, theirs = twins(device=device)
    x = torch.randn(8).to(tdev(device))
    lx = lucid.tensor(x.tolist(), device=device)
    out, tout = ours(lx, lucid.tensor(7, device=device)), theirs(x, torch.tensor(7, device=tdev(device)))
    close(out.output, tout.output)
    close(out.loss, tout.loss)
    out = ours(lx[None], lucid.tensor([4], device=device))
    tout = theirs(x[None], torch.tensor([4], device=tdev(device)))
    close(out.output, tout.output)


def test_log_prob_and_predict_match_torch(device):
    ours, theirs = twins(in_features=6, n_classes=12, cutoffs=(2, 5, 9), device=device)
    torch.manual_seed(3)
    x = (torch.randn(40, 6) * 3).to(tdev(device))
    lx = lucid.tensor(x.tolist(), device=device)
    close(ours.log_prob(lx), theirs.log_prob(x))
    pred = ours.predict(lx)
    assert pred.device.type == device
    assert pred.tolist() == theirs.predict(x).tolist()
    assert ours.predict(lx[:3]).tolist() == theirs.predict(x[:3]).tolist()
    with pytest.raises(IndexError):
        theirs.log_prob(x[0])
    with pytest.raises(IndexError):
        ours.log_prob(lx[0])  # as torch's: [N, in_features] only
    assert ours.log_prob(lx).exp().sum(1).tolist() == pytest.approx([1.0] * 40, abs=1e-5)


@pytest.mark.parametrize("cutoffs", [[], [6, 3], [0, 3], [3, 10], [3, 3], [2.5]])
def test_bad_cutoffs_raise_as_torchs(cutoffs):
    with pytest.raises(ValueError) as theirs:
        torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs)
    with pytest.raises(ValueError) as ours:
        lucid.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shape, target, message", [
    ((4, 8), [1, 2, 3], "same size in the batch dimension"),
    ((4, 2, 8), [1, 2, 3, 4], "1D target tensor expects 2D input"),
    ((2, 8), 3, "0D target tensor expects 1D input"),
    ((2, 8), [[1, 2]], "multi-target not supported"),
    ((2, 8), [1, 10], r"Target values should be in \[0, 9\]"),
    ((2, 8), [-1, 3], r"Target values should be in \[0, 9\]"),
])
def test_bad_inputs_raise_as_torchs(shape, target, message, device):
    ours, theirs = twins(device=device)
    theirs.cpu()  # no out-of-range targets on torch's GPU (a device-side assert would end the session's CUDA)
    with pytest.raises(RuntimeError, match=message):
        theirs(torch.zeros(shape), torch.tensor(target))
    with pytest.raises(RuntimeError, match=message):
        ours(lucid.zeros(shape, device=device), lucid.tensor(target, device=device))


@pytest.mark.parametrize("column", [0, 3], ids=["all-in-shortlist", "all-in-a-cluster"])
def test_predict_when_every_row_picks_the_same_head_column(column, device):
    ours, theirs = twins(head_bias=True, device=device)
    bias = [0.0] * 5
    bias[column] = 100.0
    with torch.no_grad():
        theirs.head.bias.copy_(torch.tensor(bias))
    ours.head.bias.data = lucid.tensor(bias, device=device)
    x = torch.randn(7, 8).to(tdev(device))
    assert ours.predict(lucid.tensor(x.tolist(), device=device)).tolist() == theirs.predict(x).tolist()
    assert (theirs.predict(x) >= 3).all() == (column == 3)
