"""AutoAugment / RandAugment / TrivialAugmentWide (against torchvision's operations, written
here with torch ops since torchvision is not installed) and upstream Lucid's presets."""

import json
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import lucid
import lucid.utils.transforms as T
from lucid.utils.transforms import functional as F
from lucid.utils.transforms._autoaugment import OPS, POLICIES, apply_op, magnitudes


def tv_affine(img, angle=0.0, translate=(0, 0), shear=(0.0, 0.0), center=None, rotate=False):
    """torchvision's tensor affine / rotate (bilinear, zeros outside) for img [C, H, W]."""
    c, h, w = img.shape
    cx, cy = (0.0, 0.0) if center is None else (center[0] - w * 0.5, center[1] - h * 0.5)
    rot, sx, sy = math.radians(-angle if rotate else angle), math.radians(shear[0]), math.radians(shear[1])
    a, b = math.cos(rot - sy) / math.cos(sy), -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    cc, d = math.sin(rot - sy) / math.cos(sy), -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    m = [d, -b, 0.0, -cc, a, 0.0]
    tx, ty = translate
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty) + cx
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty) + cy
    theta = torch.tensor(m, dtype=torch.float64).reshape(1, 2, 3)
    xs = torch.linspace(-w * 0.5 + 0.5, w * 0.5 - 0.5, w, dtype=torch.float64)
    ys = torch.linspace(-h * 0.5 + 0.5, h * 0.5 - 0.5, h, dtype=torch.float64)
    base = torch.stack([xs.expand(h, w), ys[:, None].expand(h, w), torch.ones(h, w, dtype=torch.float64)], -1)
    grid = base.reshape(1, h * w, 3) @ (theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h],
                                                                            dtype=torch.float64))
    out = TF.grid_sample(img[None].double(), grid.reshape(1, h, w, 2), mode="bilinear", padding_mode="zeros",
                         align_corners=False)
    return out[0].float()


@pytest.mark.parametrize("op, mag, ref", [
    ("ShearX", 0.3, lambda x, m: tv_affine(x, shear=(math.degrees(math.atan(m)), 0.0), center=(0, 0))),
    ("ShearY", -0.2, lambda x, m: tv_affine(x, shear=(0.0, math.degrees(math.atan(m))), center=(0, 0))),
    ("TranslateX", 3.7, lambda x, m: tv_affine(x, translate=(int(m), 0))),
    ("TranslateY", -2.2, lambda x, m: tv_affine(x, translate=(0, int(m)))),
    ("Rotate", 25.0, lambda x, m: tv_affine(x, angle=m, rotate=True))])
def test_geometric_ops_match_torchvision(op, mag, ref):
    x = torch.rand(3, 11, 13, generator=torch.Generator().manual_seed(0))
    out = apply_op(lucid.tensor(x.numpy()), op, mag, T.Interpolation.BILINEAR, 0.0)
    np.testing.assert_allclose(out.numpy(), ref(x, mag).numpy(), atol=1e-4)
    # a fill value per channel shows where nothing was sampled
    filled = apply_op(lucid.tensor(x.numpy()), op, mag, T.Interpolation.BILINEAR, [1.0, 2.0, 3.0]).numpy()
    outside = ref(torch.ones(1, 11, 13), mag).numpy()[0] < 1e-6
    if outside.any():
        np.testing.assert_allclose(filled[2][outside], 3.0, atol=1e-4)


def test_colour_ops_are_the_functional_adjustments():
    x = lucid.rand(3, 8, 8)
    for op, fn in (("Brightness", F.adjust_brightness), ("Color", F.adjust_saturation),
                   ("Contrast", F.adjust_contrast), ("Sharpness", F.adjust_sharpness)):
        np.testing.assert_allclose(apply_op(x, op, -0.3, "bilinear", 0).numpy(), fn(x, 0.7).numpy(), atol=1e-6)
    np.testing.assert_allclose(apply_op(x, "Posterize", 4, "bilinear", 0).numpy(), F.posterize(x, 4).numpy())
    np.testing.assert_allclose(apply_op(x, "Solarize", 0.6, "bilinear", 0).numpy(), F.solarize(x, 0.6).numpy())
    for op, fn in (("AutoContrast", F.autocontrast), ("Equalize", F.equalize), ("Invert", F.invert)):
        np.testing.assert_allclose(apply_op(x, op, 0, "bilinear", 0).numpy(), fn(x).numpy())
    assert apply_op(x, "Identity", 0, "bilinear", 0) is x
    with pytest.raises(ValueError, match="unknown augmentation operation 'Blur'"):
        apply_op(x, "Blur", 1, "bilinear", 0)


def test_magnitude_tables_are_torchvisions():
    def lin(top, n):
        return torch.linspace(0.0, top, n).tolist()
    np.testing.assert_allclose(magnitudes("ShearX", 31, 20, 30), lin(0.3, 31), atol=1e-7)
    np.testing.assert_allclose(magnitudes("TranslateX", 31, 20, 30), lin(150.0 / 331.0 * 30, 31), atol=1e-5)
    np.testing.assert_allclose(magnitudes("TranslateY", 10, 20, 30), lin(150.0 / 331.0 * 20, 10), atol=1e-5)
    np.testing.assert_allclose(magnitudes("Rotate", 31, 1, 1, wide=True), lin(135.0, 31), atol=1e-5)
    np.testing.assert_allclose(magnitudes("Solarize", 31, 1, 1), torch.linspace(1.0, 0.0, 31).tolist(), atol=1e-7)
    for bins, wide, steps in ((10, False, 4), (31, False, 4), (31, True, 6)):
        ref = (8 - (torch.arange(bins) / ((bins - 1) / steps)).round().int()).tolist()
        assert magnitudes("Posterize", bins, 1, 1, wide=wide) == ref
    assert magnitudes("Equalize", 31, 1, 1) is None
    assert len(OPS) == 14 and "Invert" not in OPS


def test_autoaugment_policies():
    assert sorted(POLICIES) == ["cifar10", "imagenet", "svhn"]
    assert all(len(table) == 25 and all(len(sub) == 2 for sub in table) for table in POLICIES.values())
    assert POLICIES["imagenet"][0] == [("Posterize", 0.4, 8), ("Rotate", 0.6, 9)]
    assert POLICIES["cifar10"][14] == [("Solarize", 0.5, 2), ("Invert", 0.0, None)]
    assert POLICIES["svhn"][-1] == [("ShearX", 0.7, 2), ("Invert", 0.1, None)]
    x = lucid.rand(3, 16, 16)
    lucid.manual_seed(0)
    tf = T.AutoAugment("svhn")
    seen = set()
    for _ in range(100):
        ops = tf.make_params(x)
        assert len(ops) <= 2
        for op, mag in ops:
            seen.add(op)
            table = magnitudes(op, 10, 16, 16)
            assert table is None or abs(mag) in [pytest.approx(v) for v in table]
        tf(x)
    assert {"Invert", "ShearY", "TranslateY", "Equalize"} <= seen
    with pytest.raises(ValueError, match="unknown policy 'coco'"):
        T.AutoAugment("coco")
    with pytest.raises(ValueError, match="uses magnitude bin 9, so num_magnitude_bins should be more than that"):
        T.AutoAugment("imagenet", num_magnitude_bins=5)


def test_randaugment_and_trivialaugment_draws():
    x = lucid.rand(3, 16, 16)
    lucid.manual_seed(1)
    ra = T.RandAugment(num_ops=3, magnitude=10)
    for _ in range(50):
        ops = ra.make_params(x)
        assert len(ops) == 3
        for op, mag in ops:
            table = magnitudes(op, 31, 16, 16)
            assert table is None and mag == 0.0 or abs(mag) == pytest.approx(table[10])
    ta = T.TrivialAugmentWide()
    signs = set()
    for _ in range(200):
        (op, mag), = ta.make_params(x)
        table = magnitudes(op, 31, 16, 16, wide=True)
        assert table is None or any(abs(mag) == pytest.approx(v) for v in table)
        if op == "Rotate" and mag != 0:
            signs.add(mag > 0)
    assert signs == {True, False}
    assert T.RandAugment(p=0.0)(x) is x
    with pytest.raises(ValueError, match="magnitude should be an int in \\[0, 31\\), got 31"):
        T.RandAugment(magnitude=31)
    with pytest.raises(TypeError, match="fill should be a number or one number per channel"):
        T.TrivialAugmentWide(fill="black")
    mask = T.Mask(lucid.ones(16, 16))
    out = T.RandAugment(num_ops=4, magnitude=20)({"image": T.Image(x), "mask": mask})
    assert out["mask"].data is mask.data  # image only, as torchvision


# ---- presets -------------------------------------------------------------------------------------------
def test_image_classification_preset_is_resize_crop_normalize():
    x = torch.rand(3, 30, 40, generator=torch.Generator().manual_seed(2))
    out = T.ImageClassification(20, resize_size=24)(lucid.tensor(x.numpy()))
    ref = TF.interpolate(x[None], size=(24, 32), mode="bilinear", align_corners=False)[0][:, 2:22, 6:26]
    mean, std = torch.tensor([0.485, 0.456, 0.406])[:, None, None], torch.tensor([0.229, 0.224, 0.225])[:, None, None]
    np.testing.assert_allclose(out.numpy(), ((ref - mean) / std).numpy(), atol=1e-5)


def test_presets_round_trip_through_json():
    presets = [T.ImageClassification(224), T.ImageClassificationAugment(176, auto_augment="ta_wide", random_erasing=0.1),
               T.Detection(max_size=1000, min_size=600), T.Segmentation(480, stretch=True), T.Pose(192, resize_size=256)]
    for preset in presets:
        cfg = json.loads(json.dumps(preset.to_dict()))
        back = T.AutoTransformsPreset.from_dict(cfg)
        assert type(back) is type(preset) and back.to_dict() == preset.to_dict()
        assert isinstance(back, T.TransformsPreset) and isinstance(back, T.Transform)
    assert T.AutoTransformsPreset.registered() == ["Detection", "ImageClassification", "ImageClassificationAugment",
                                                   "Pose", "Segmentation"]
    with pytest.raises(KeyError, match="unknown preset type 'Other'"):
        T.AutoTransformsPreset.from_dict({"preprocessor_type": "Other", "init_kwargs": {}})
    with pytest.raises(ValueError, match="Segmentation.from_dict got a config for Pose"):
        T.Segmentation.from_dict(T.Pose(8).to_dict())
    with pytest.raises(ValueError, match="expected \\{'preprocessor_type'"):
        T.TransformsPreset.from_dict({"init_kwargs": {}})
    with pytest.raises(ValueError, match="auto_augment should be None or one of"):
        T.ImageClassificationAugment(224, auto_augment="augmix")


def test_task_presets_move_targets():
    x = lucid.rand(3, 40, 60)
    boxes = T.BoundingBoxes([[0.0, 0.0, 30.0, 20.0], [50.0, 30.0, 50.5, 30.5]], "xyxy", (40, 60), labels=[1, 2])
    out = T.Detection(min_size=20, max_size=100, min_area=1.0)({"image": T.Image(x), "boxes": boxes})
    assert out["image"].data.shape == (3, 20, 30) and out["boxes"].labels.tolist() == [1]  # the tiny box is gone
    np.testing.assert_allclose(out["boxes"].data.numpy(), [[0.0, 0.0, 15.0, 10.0]])
    assert T.Detection(min_size=80, max_size=100)(x).shape == (3, 67, 100)  # 80 / 40 would make 120 > 100 wide
    mask = lucid.randint(0, 5, (40, 60))
    out = T.Segmentation(16, resize_size=20)({"image": T.Image(x), "mask": T.Mask(mask)})
    assert out["mask"].data.shape == (16, 16) and out["mask"].data.dtype == mask.dtype
    assert set(np.unique(out["mask"].data.numpy())) <= set(np.unique(mask.numpy()))
    assert T.Segmentation(16, stretch=True)(x).shape == (3, 16, 16)
    kps = T.Keypoints([[30.0, 20.0, 1.0]], (40, 60))
    out = T.Pose(16, resize_size=20)({"image": T.Image(x), "kps": kps})
    np.testing.assert_allclose(out["kps"].data.numpy(), [[15.0 - 7.0, 10.0 - 2.0, 1.0]], atol=1e-5)
    lucid.manual_seed(0)
    augment = T.ImageClassificationAugment(24, auto_augment="imagenet", random_erasing=1.0)
    assert augment(x).shape == (3, 24, 24)
    assert [type(t).__name__ for t in augment.pipeline.transforms] == [
        "RandomResizedCrop", "HorizontalFlip", "AutoAugment", "Normalize", "RandomErasing"]
