"""upstream Lucid's smaller names: Module.has_uninitialized_parameters,
Optimizer.AUTO_EVAL_AFTER_STEP, distributions.constraints.open_unit_interval."""

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


def test_open_unit_interval_excludes_its_ends():
    from lucid.distributions import biject_to, constraints, transform_to
    x = lucid.tensor([0.0, 1e-6, 0.5, 1.0, -0.1])
    assert constraints.open_unit_interval.check(x).tolist() == [False, True, True, False, False]
    assert constraints.unit_interval.check(x).tolist() == [True, True, True, True, False]
    assert constraints.open_interval(-1.0, 2.0).check(lucid.tensor([-1.0, 0.0, 2.0])).tolist() == \
        [False, True, False]
    assert repr(constraints.open_unit_interval) == "OpenInterval(lower_bound=0.0, upper_bound=1.0)"
    # the transforms onto it are the closed interval's (sigmoid, then an affine map)
    y = transform_to(constraints.open_interval(-1.0, 2.0))(lucid.tensor([-3.0, 0.0, 3.0]))
    assert all(-1.0 < v < 2.0 for v in y.tolist()) and y[1].item() == pytest.approx(0.5)
    assert type(biject_to(constraints.open_unit_interval)).__name__ == "SigmoidTransform"
