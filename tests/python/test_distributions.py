"""lucid.distributions.Categorical against torch.distributions.Categorical: log_prob,
entropy and their gradients, shapes, the sampled distribution, and validation errors."""

import pytest
import torch
from torch.distributions import Categorical as TorchCategorical

import lucid
from lucid.distributions import Categorical
from conftest import to_lucid

PROBS = [[0.1, 0.6, 0.3], [0.5, 0.0, 1.5]]  # unnormalised, with a zero
LOGITS = [[0.2, -1.0, 2.0], [0.0, 0.0, -3.0]]


def _flat(t):
    return t.reshape(-1).tolist()


def _pair(kind, values):
    t = torch.tensor(values, requires_grad=True)
    ours = to_lucid(t.detach()).requires_grad_()
    return (TorchCategorical(**{kind: t}), t), (Categorical(**{kind: ours}), ours)


@pytest.mark.parametrize("kind, values", [("probs", PROBS), ("logits", LOGITS), ("probs", PROBS[0])])
def test_log_prob_entropy_and_gradients_match_torch(kind, values):
    (theirs, t), (ours, o) = _pair(kind, values)
    idx = [2, 0] if isinstance(values[0], list) else [1]
    value_t, value_o = torch.tensor(idx).squeeze(), lucid.tensor(idx).squeeze()
    lp_t, lp_o = theirs.log_prob(value_t), ours.log_prob(value_o)
    assert _flat(lp_o) == pytest.approx(_flat(lp_t), rel=1e-6)
    assert _flat(ours.entropy()) == pytest.approx(_flat(theirs.entropy()), rel=1e-6)
    assert _flat(ours.probs) == pytest.approx(_flat(theirs.probs), rel=1e-6)
    assert _flat(ours.logits) == pytest.approx(_flat(theirs.logits), rel=1e-6, abs=1e-6)
    (lp_t.sum() + theirs.entropy().sum()).backward()
    (lp_o.sum() + ours.entropy().sum()).backward()
    assert _flat(o.grad) == pytest.approx(_flat(t.grad), rel=1e-5, abs=1e-6)


def test_shapes_match_torch():
    (theirs, _), (ours, _) = _pair("probs", PROBS)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape) == (2,)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape) == ()
    for shape in [(), (4,), (2, 3)]:
        assert tuple(ours.sample(shape).shape) == tuple(theirs.sample(shape).shape)
    assert str(ours.sample().dtype) == "lucid.int64"
    assert ours.enumerate_support().tolist() == theirs.enumerate_support().tolist()
    assert ours.mode.tolist() == theirs.mode.tolist()
    # log_prob broadcasts a value against the batch, as torch's
    assert tuple(ours.log_prob(lucid.tensor([[0], [1]])).shape) == \
        tuple(theirs.log_prob(torch.tensor([[0], [1]])).shape) == (2, 2)
    assert repr(ours) == repr(theirs).replace("torch.", "lucid.")


def test_samples_follow_the_probabilities():
    lucid.manual_seed(0)
    samples = Categorical(lucid.tensor([0.2, 0.0, 0.8])).sample((20000,)).tolist()
    freqs = [samples.count(k) / len(samples) for k in range(3)]
    assert freqs[1] == 0 and freqs[0] == pytest.approx(0.2, abs=0.015)


@pytest.mark.parametrize("make", [
    lambda m, C: C(),
    lambda m, C: C(probs=m.tensor([0.5, 0.5]), logits=m.tensor([0.0, 0.0])),
    lambda m, C: C(m.tensor(0.5)),
    lambda m, C: C(m.tensor([-0.5, 1.5])),
    lambda m, C: C(logits=m.tensor([float("nan"), 0.0])),
    lambda m, C: C(m.tensor([0.5, 0.5])).log_prob(m.tensor(2)),
    lambda m, C: C(m.tensor([0.5, 0.5])).log_prob(m.tensor(0.5)),
    lambda m, C: C(m.tensor([[0.5, 0.5]] * 3)).log_prob(m.tensor([0, 1])),
    lambda m, C: C(m.tensor([0.5, 0.5])).log_prob(1),
])
def test_invalid_arguments_raise_as_torch(make):
    with pytest.raises(Exception) as theirs:
        make(torch, TorchCategorical)
    with pytest.raises(type(theirs.value)) as ours:
        make(lucid, Categorical)
    # the messages end with the offending tensor, printed each library's way
    head = str(theirs.value).split("found invalid values")[0].replace("torch.", "lucid.")
    assert str(ours.value).startswith(head), (str(ours.value), str(theirs.value))


def test_validation_can_be_turned_off():
    m = Categorical(lucid.tensor([0.5, 0.5]), validate_args=False)
    assert tuple(m.log_prob(lucid.tensor(1)).shape) == ()
    with pytest.raises(TypeError, match="floating-point"):
        Categorical(lucid.tensor([1, 2]))
