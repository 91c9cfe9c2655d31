"""lucid.utils.make_grid / save_image against torchvision.utils': the same grid, and the
same pixels written."""

import pytest
import torch

import lucid
from conftest import to_lucid, to_torch

tv_utils = pytest.importorskip("torchvision.utils")
Image = pytest.importorskip("PIL.Image")


def _images(*shape):
    torch.manual_seed(0)
    return torch.rand(*shape) * 3 - 1  # outside [0, 1], so normalize has work to do


@pytest.mark.parametrize("shape", [(5, 3, 4, 6), (3, 1, 5, 5), (1, 3, 4, 4), (3, 4, 4), (1, 7, 6), (6, 5)])
@pytest.mark.parametrize("kwargs", [{}, {"nrow": 2, "padding": 1, "pad_value": 0.5}, {"normalize": True},
                                    {"normalize": True, "scale_each": True},
                                    {"normalize": True, "value_range": (-0.5, 0.5), "padding": 0}])
def test_make_grid_matches_torchvision(shape, kwargs):
    images = _images(*shape)
    want = tv_utils.make_grid(images, **kwargs)
    got = lucid.utils.make_grid(to_lucid(images), **kwargs)
    assert tuple(got.shape) == tuple(want.shape)
    assert (to_torch(got) - want).abs().max().item() < 1e-6


def test_make_grid_takes_a_list_and_leaves_its_input_alone():
    images = _images(3, 3, 4, 4)
    ours = to_lucid(images)
    before = ours.tolist()
    got = lucid.utils.make_grid([ours[0], ours[1], ours[2]], normalize=True)
    assert ours.tolist() == before
    assert (to_torch(got) - tv_utils.make_grid(list(images), normalize=True)).abs().max().item() < 1e-6


@pytest.mark.parametrize("shape", [(4, 3, 5, 5), (2, 1, 6, 4), (3, 6, 6)])
def test_save_image_writes_torchvision_pixels(shape, tmp_path):
    pytest.importorskip("numpy")
    images = _images(*shape).clamp(0, 1)
    tv_utils.save_image(images, tmp_path / "want.png", nrow=3)
    lucid.utils.save_image(to_lucid(images), tmp_path / "got.png", nrow=3)
    want, got = Image.open(tmp_path / "want.png"), Image.open(tmp_path / "got.png")
    assert (got.mode, got.size) == (want.mode, want.size)
    assert got.tobytes() == want.tobytes()


def test_bad_arguments():
    with pytest.raises(TypeError, match="tensor or list of tensors expected"):
        lucid.utils.make_grid([[0.0]])
    with pytest.raises(TypeError, match="tensor or list of tensors expected"):
        lucid.utils.make_grid(3)
    with pytest.raises(TypeError, match="value_range has to be a tuple"):
        lucid.utils.make_grid(lucid.rand(2, 3, 4, 4), normalize=True, value_range=[0, 1])
    with pytest.raises(ValueError, match="2-, 3- or 4-dimensional"):
        lucid.utils.make_grid(lucid.rand(1, 2, 3, 4, 4))
