"""upstream Lucid's Module.has_uninitialized_parameters and Optimizer.AUTO_EVAL_AFTER_STEP."""

import warnings

import pytest

import lucid


def test_has_uninitialized_parameters_follows_lazy_layers():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = lucid.nn.Sequential(lucid.nn.Linear(5, 4), lucid.nn.Sequential(lucid.nn.LazyLinear(3)))
    assert m.has_uninitialized_parameters()
    assert not m.has_uninitialized_parameters(recurse=False)  # the lazy layer is a grandchild
    assert not m[0].has_uninitialized_parameters()
    m(lucid.randn(2, 5))
    assert not m.has_uninitialized_parameters()


@pytest.mark.parametrize("auto_eval", [False, True])
def test_auto_eval_after_step_gives_the_same_update(device, auto_eval):
    w = lucid.nn.Parameter(lucid.tensor([1.0, -2.0], device=device))
    opt = lucid.optim.Adam([w], lr=0.1)
    assert lucid.optim.Optimizer.AUTO_EVAL_AFTER_STEP is False and opt.AUTO_EVAL_AFTER_STEP is False
    opt.AUTO_EVAL_AFTER_STEP = auto_eval
    for _ in range(3):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    assert w.tolist() == pytest.approx([0.7015863060951233, -1.7006233930587769], rel=1e-6)  # torch's Adam
