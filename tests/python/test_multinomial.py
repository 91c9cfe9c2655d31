"""lucid.multinomial against torch.multinomial: shapes, dtypes, errors, and the sampled
distribution (the values differ: the generators differ)."""

import pytest
import torch

import lucid

PROBS = [[0.2, 0.0, 0.5, 0.3], [1.0, 1.0, 0.0, 2.0]]  # unnormalised rows, with zero weights


def _freqs(samples, n):
    flat = samples.reshape(-1).tolist()
    return [flat.count(k) / len(flat) for k in range(n)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("replacement", [True, False])
@pytest.mark.parametrize("rows", [1, 2])
def test_shape_dtype_and_device_match_torch(dtype, replacement, rows):
    probs = PROBS[0] if rows == 1 else PROBS
    ours = lucid.multinomial(lucid.tensor(probs, dtype=getattr(lucid, dtype)), 3, replacement)
    theirs = torch.multinomial(torch.tensor(probs, dtype=getattr(torch, dtype)), 3, replacement)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == "lucid.int64" and ours.device.type == lucid.get_default_device().type


def test_draws_with_replacement_follow_the_weights():
    lucid.manual_seed(0)
    samples = lucid.multinomial(lucid.tensor(PROBS), 20000, replacement=True)
    for row, got in zip(PROBS, (samples[0], samples[1])):
        want = [w / sum(row) for w in row]
        assert all(abs(g - w) < 0.015 for g, w in zip(_freqs(got, 4), want)), (_freqs(got, 4), want)


def test_draws_without_replacement_are_distinct_and_follow_the_remaining_weights():
    p = [0.5, 0.3, 0.2]
    lucid.manual_seed(1)
    samples = lucid.multinomial(lucid.tensor([p] * 6000), 2)
    pairs = samples.tolist()
    assert all(a != b for a, b in pairs)
    first = _freqs(lucid.tensor([a for a, _ in pairs]), 3)
    second = _freqs(lucid.tensor([b for _, b in pairs]), 3)
    # P(second = j) = sum over i != j of p_i * p_j / (1 - p_i)
    want_second = [sum(p[i] * p[j] / (1 - p[i]) for i in range(3) if i != j) for j in range(3)]
    assert all(abs(g - w) < 0.02 for g, w in zip(first, p)), first
    assert all(abs(g - w) < 0.02 for g, w in zip(second, want_second)), second


def test_zero_weights_are_never_drawn_and_a_full_draw_is_a_permutation():
    lucid.manual_seed(2)
    samples = lucid.multinomial(lucid.tensor([[0.0, 1.0, 0.0, 3.0]] * 50), 7, replacement=True)
    assert set(samples.reshape(-1).tolist()) <= {1, 3}
    perm = lucid.multinomial(lucid.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), 5)
    assert sorted(perm.tolist()) == [0, 1, 2, 3, 4]
    # past the positive weights, torch goes on with the zero-weight categories (in an order
    # of its top-k's making) instead of raising; so does lucid
    rows = [[0.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 0.0]]
    for drawn in (lucid.multinomial(lucid.tensor(rows), 4).tolist(),
                  torch.multinomial(torch.tensor(rows), 4).tolist()):
        assert [r[0] for r in drawn] == [2, 1] and all(sorted(r) == [0, 1, 2, 3] for r in drawn)


def test_generator_and_method_form():
    a = lucid.multinomial(lucid.tensor(PROBS), 5, True, generator=lucid.Generator().manual_seed(7))
    b = lucid.tensor(PROBS).multinomial(5, True, generator=lucid.Generator().manual_seed(7))
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("make, num_samples, replacement", [
    (lambda m: m.tensor([[[1.0]]]), 1, True),                # 3-d
    (lambda m: m.tensor([1, 2]), 1, True),                   # integer weights
    (lambda m: m.tensor([1.0, 2.0]), 0, True),               # no samples
    (lambda m: m.tensor([1.0, 2.0]), 3, False),              # more samples than categories
    (lambda m: m.tensor([-1.0, 2.0]), 1, True),              # negative weight
    (lambda m: m.tensor([float("nan"), 2.0]), 1, True),      # nan
    (lambda m: m.tensor([float("inf"), 2.0]), 1, True),      # inf
    (lambda m: m.tensor([[0.0, 0.0], [1.0, 1.0]]), 1, True),  # a row summing to 0
])
def test_bad_inputs_raise_as_torch(make, num_samples, replacement):
    with pytest.raises(Exception) as theirs:
        torch.multinomial(make(torch), num_samples, replacement)
    with pytest.raises(type(theirs.value)) as ours:
        lucid.multinomial(make(lucid), num_samples, replacement)
    # torch names dtypes its own way ("Long"); the rest of each message is the same
    expected = str(theirs.value).split(", got:")[0]
    assert str(ours.value).startswith(expected), (str(ours.value), str(theirs.value))


def test_bad_argument_types():
    with pytest.raises(TypeError, match="num_samples"):
        lucid.multinomial(lucid.tensor([1.0]), 1.5)
    with pytest.raises(TypeError, match="input"):
        lucid.multinomial([1.0], 1)
    with pytest.raises(TypeError, match="generator"):
        lucid.multinomial(lucid.tensor([1.0]), 1, generator=0)
