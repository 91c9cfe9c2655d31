"""Views with more elements than memory: printing reads only what is shown, and sizes
that overflow raise instead of wrapping around."""

import pytest
import torch

import lucid


@pytest.mark.usefixtures("cpu_default")  # torch's CPU repr: a GPU tensor's adds its device
def test_repr_of_huge_expanded_view_matches_torch():
    lt, tt = lucid.zeros(1).expand(2 ** 62), torch.zeros(1).expand(2 ** 62)
    assert repr(lt) == repr(tt)
    lt, tt = lucid.arange(3.0).expand(2 ** 40, 3), torch.arange(3.0).expand(2 ** 40, 3)
    assert repr(lt) == repr(tt)


@pytest.mark.usefixtures("cpu_default")  # torch's CPU repr: a GPU tensor's adds its device
def test_repr_of_summarized_strided_view_matches_torch():
    base_l = lucid.arange(30000.0).reshape(10, 30, 100)
    base_t = torch.arange(30000.0).reshape(10, 30, 100)
    lt, tt = base_l.transpose(0, 2)[:, ::3], base_t.transpose(0, 2)[:, ::3]
    assert repr(lt) == repr(tt).replace("torch.", "lucid.")


@pytest.mark.parametrize("size,stride,offset", [((2 ** 62,), (2 ** 62,), None), ((2,), (1,), 2 ** 62)])
def test_as_strided_overflow_raises(size, stride, offset):
    with pytest.raises(RuntimeError, match="overflow"):
        lucid.zeros(3).as_strided(size, stride, offset)


def test_reading_out_a_huge_view_raises():
    big = lucid.zeros(1).expand(2 ** 62)
    with pytest.raises(RuntimeError):
        big.tolist()
    with pytest.raises(RuntimeError):
        big.clone()
