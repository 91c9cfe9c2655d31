"""lucid.nn.utils.prune against torch.nn.utils.prune: the same masks for the deterministic
methods (alone, iterated through a PruningContainer, and global), counts for the random
ones, the module's parameters, buffers, state_dict, forward and gradients, remove, and
torch's errors; and nn.utils.skip_init."""

import numpy as np
import pytest
import torch
import torch.nn.utils.prune as TP

import lucid
import lucid.nn as nn
import lucid.nn.utils.prune as P
from conftest import assert_close, to_lucid, to_torch


def pair(device, seed=0, shape=(6, 5)):
    w = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    lm, tm = nn.Linear(shape[1], shape[0]).to(device), torch.nn.Linear(shape[1], shape[0])
    with lucid.no_grad():
        lm.weight.copy_(lucid.tensor(w, device=device))
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(w))
        tm.bias.copy_(to_torch(lm.bias.detach().cpu()))
    return lm, tm


STEPS = {
    "l1 fraction": lambda m, p: m.l1_unstructured(p, "weight", 0.3),
    "l1 count": lambda m, p: m.l1_unstructured(p, "weight", 7),
    "ln 2 rows": lambda m, p: m.ln_structured(p, "weight", 2, 2, 0),
    "ln 1 columns": lambda m, p: m.ln_structured(p, "weight", 0.4, 1, -1),
    "ln fro": lambda m, p: m.ln_structured(p, "weight", 1, "fro", 0),
    "identity": lambda m, p: m.identity(p, "weight"),
}


@pytest.mark.parametrize("steps", [["l1 fraction"], ["l1 count"], ["ln 2 rows"], ["ln fro"],
                                   ["l1 fraction", "ln 2 rows"], ["ln 1 columns", "l1 count", "identity"]],
                         ids=lambda s: "+".join(s))
def test_masks_forward_and_gradients_match_torch(steps, device):
    lm, tm = pair(device)
    for step in steps:
        STEPS[step](P, lm)
        STEPS[step](TP, tm)
    assert_close(lm.weight_mask, tm.weight_mask, rtol=0, atol=0)
    assert sorted(n for n, _ in lm.named_parameters()) == sorted(n for n, _ in tm.named_parameters())
    assert sorted(lm.state_dict()) == sorted(tm.state_dict())
    assert isinstance(lm._forward_pre_hooks[next(iter(lm._forward_pre_hooks))],
                      P.PruningContainer if len(steps) > 1 else P.BasePruningMethod)
    x = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)
    ly, ty = lm(lucid.tensor(x, device=device)), tm(torch.tensor(x))
    assert_close(ly.detach(), ty.detach(), rtol=1e-5, atol=1e-6)
    ly.sum().backward()
    ty.sum().backward()
    assert_close(lm.weight_orig.grad, tm.weight_orig.grad, rtol=1e-5, atol=1e-6)  # (zero where pruned)
    P.remove(lm, "weight")
    TP.remove(tm, "weight")
    assert_close(lm.weight.detach(), tm.weight.detach(), rtol=0, atol=0)
    assert not P.is_pruned(lm) and [n for n, _ in lm.named_buffers()] == []


def test_global_and_custom_masks_match_torch(device):
    (l1, t1), (l2, t2) = pair(device, 2), pair(device, 3, (4, 5))
    P.global_unstructured([(l1, "weight"), (l2, "weight")], P.L1Unstructured, amount=20)
    TP.global_unstructured([(t1, "weight"), (t2, "weight")], TP.L1Unstructured, amount=20)
    assert_close(l1.weight_mask, t1.weight_mask, rtol=0, atol=0)
    assert_close(l2.weight_mask, t2.weight_mask, rtol=0, atol=0)
    mask = (torch.arange(30).reshape(6, 5) % 3 == 0).float()
    lm, tm = pair(device, 4)
    P.custom_from_mask(lm, "bias", to_lucid(mask[:, 0], device))
    TP.custom_from_mask(tm, "bias", mask[:, 0])
    assert_close(lm.bias.detach(), tm.bias.detach(), rtol=0, atol=0)
    with pytest.raises(TypeError, match="Only \"unstructured\" PRUNING_TYPE"):
        P.global_unstructured([(l1, "bias")], P.LnStructured, amount=1, n=2, dim=0)


def test_random_methods_prune_the_asked_amount(device):
    lm, _ = pair(device, 5, (8, 10))
    P.random_unstructured(lm, "weight", 0.25)
    assert int((lm.weight_mask == 0).sum()) == 20
    P.random_structured(lm, "weight", 3, dim=0)  # (iterated: the new rows among the kept entries)
    rows_gone = int((lm.weight_mask.sum(1) == 0).sum())
    assert rows_gone >= 3 and int((lm.weight_mask == 0).sum()) >= 20
    assert bool(((lm.weight == 0) | (lm.weight_mask == 1)).all())


def test_errors_are_torchs(device):
    lm, _ = pair(device)
    with pytest.raises(ValueError, match="should either be a float in the range"):
        P.l1_unstructured(lm, "weight", 1.5)
    with pytest.raises(TypeError, match="Invalid type for amount"):
        P.l1_unstructured(lm, "weight", "half")
    with pytest.raises(ValueError, match="should be smaller than the number of parameters to prune=30"):
        P.l1_unstructured(lm, "weight", 31)
    assert "weight" in dict(lm.named_parameters())  # (a failed pruning leaves the module as it was)
    with pytest.raises(ValueError, match="Structured pruning can only be applied to multidimensional"):
        P.ln_structured(lm, "bias", 1, 2, 0)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        P.remove(lm, "weight")


def test_skip_init(device):
    m = nn.utils.skip_init(nn.Linear, 4, 3, device=device)
    assert tuple(m.weight.shape) == (3, 4) and m.weight.device.type == lucid.device(device).type

    class NoDevice(nn.Module):
        def __init__(self, n):
            super().__init__()

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        nn.utils.skip_init(NoDevice, 3)
