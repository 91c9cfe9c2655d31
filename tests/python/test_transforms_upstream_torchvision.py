"""Where torchvision is installed: the functions and augmentation tables that
lucid.utils.transforms shares with torchvision checked against torchvision itself."""

import math

import numpy as np
import pytest
import torch

import lucid
import lucid.utils.transforms as T
from lucid.utils.transforms import functional as F
from lucid.utils.transforms._autoaugment import POLICIES, apply_op, magnitudes

tv = pytest.importorskip("torchvision")
from torchvision.transforms import InterpolationMode, functional as TVF  # noqa: E402
from torchvision.transforms import autoaugment as TVA  # noqa: E402


def image(shape=(3, 13, 17), seed=0):
    return torch.rand(shape, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("op, mag", [("ShearX", 0.3), ("ShearY", -0.25), ("TranslateX", 4.6), ("TranslateY", -3.2),
                                     ("Rotate", 27.0), ("Brightness", -0.4), ("Color", 0.5), ("Contrast", 0.3),
                                     ("Sharpness", 0.6), ("Solarize", 0.55), ("AutoContrast", 0.0),
                                     ("Invert", 0.0)])
def test_apply_op_matches_torchvision(op, mag):
    x = image()
    # fill=None: torchvision then samples with zeros outside, as lucid does for fill 0 (given a
    # fill, torchvision multiplies the border pixels by the in-image share twice)
    ref = TVA._apply_op(x, op, mag, interpolation=InterpolationMode.BILINEAR, fill=None)
    out = apply_op(lucid.tensor(x.numpy()), op, mag, T.Interpolation.BILINEAR, 0.0)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=1e-4)


def test_posterize_matches_torchvision_on_uint8():
    x = (image() * 255).to(torch.uint8)
    for bits in range(1, 9):
        np.testing.assert_array_equal(F.posterize(lucid.tensor(x.numpy()), bits).numpy(), TVF.posterize(x, bits).numpy())


def test_magnitude_tables_match_torchvision():
    h, w = 20, 30
    for cls, wide, bins in ((TVA.RandAugment, False, 31), (TVA.TrivialAugmentWide, True, 31),
                            (TVA.AutoAugment, False, 10)):
        # torchvision's forward passes image_size as (height, width); TranslateX scales with the width
        space = cls()._augmentation_space(bins, (h, w)) if cls is not TVA.TrivialAugmentWide else \
            cls()._augmentation_space(bins)
        for op, (values, signed) in space.items():
            ours = magnitudes(op, bins, h, w, wide=wide)
            if values.ndim == 0:
                assert ours is None
            else:
                # torchvision's Solarize thresholds are uint8 levels; lucid's, for float images in [0, 1]
                want = values / 255.0 if op == "Solarize" else values
                np.testing.assert_allclose(ours, want.tolist(), atol=1e-4, err_msg=op)


@pytest.mark.parametrize("name", ["imagenet", "cifar10", "svhn"])
def test_autoaugment_policies_match_torchvision(name):
    policy = TVA.AutoAugment(TVA.AutoAugmentPolicy(name)).policies
    ours = [[(op, prob, mag) for op, prob, mag in sub] for sub in POLICIES[name]]
    assert ours == [[(op, prob, mag) for op, prob, mag in sub] for sub in policy]


def test_sharpness_autocontrast_and_rotate_match_torchvision():
    x = image(seed=1)
    for factor in (0.0, 0.4, 1.7):
        np.testing.assert_allclose(F.adjust_sharpness(lucid.tensor(x.numpy()), factor).numpy(),
                                   TVF.adjust_sharpness(x, factor).numpy(), atol=1e-5)
    np.testing.assert_allclose(F.autocontrast(lucid.tensor(x.numpy())).numpy(), TVF.autocontrast(x).numpy(),
                               atol=1e-5)
    m = F.rotation_matrix(33.0, (17 - 1) / 2, (13 - 1) / 2)
    out = F.warp_affine(lucid.tensor(x.numpy()), m, (13, 17))
    ref = TVF.rotate(x, 33.0, interpolation=InterpolationMode.BILINEAR)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=1e-4)
    assert math.isclose(F.solarize(lucid.tensor(x.numpy()), 0.5).numpy().sum(), TVF.solarize(x, 0.5).numpy().sum(),
                        rel_tol=1e-6)
